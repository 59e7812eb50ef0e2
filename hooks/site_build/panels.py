"""Interactive panels on a page: ``{{ panel: NAME }}`` writes the panel's HTML from its template.

A panel's template is ``docs/panels/NAME.html`` (excluded from the built site in mkdocs.yml): the
panel's element, ``data-panel="NAME"``, with its controls, readouts and drawing area, as the page
shows it before any script runs. Its numbers are ``{{ calc ... }}`` markers, computed by posenc at
build time like those of the page, so the page without JavaScript shows correct values.
``docs/javascripts/panels.js`` wires the element once a script registers ``NAME``.
"""

from __future__ import annotations

import re

from mkdocs.exceptions import PluginError

from . import paths

NAME = re.compile(r"[a-z][a-z0-9-]*")
# A panel marker as a page writes it, for finding the panels of a page without expanding it.
PANEL_MARKER = re.compile(r"(?<!\\)\{\{\s*panel\s*:\s*(?P<name>[^}\s]*)\s*\}\}")


def panel_dir():
    return paths.DOCS / "panels"


def panel_names() -> list[str]:
    """Every panel that has a template, sorted."""
    return sorted(path.stem for path in panel_dir().glob("*.html"))


def template_source(name: str) -> str:
    """The repository path of panel ``name``'s template."""
    return f"docs/panels/{name}.html"


def panel_template(name: str) -> str:
    """Panel ``name``'s template, checked to be the panel it is named for."""
    path = panel_dir() / f"{name}.html"
    if not NAME.fullmatch(name) or not path.is_file():
        raise PluginError(f"unknown panel {name!r} (panels: {', '.join(panel_names())}; a panel is a "
                          "template docs/panels/NAME.html)")
    html = path.read_text(encoding="utf-8")
    # The script finds the panel by this attribute: a template naming another panel would be
    # wired as that one.
    if not re.match(rf'<div [^>]*data-panel="{re.escape(name)}"', html):
        raise PluginError(f"panel template {template_source(name)} must start with "
                          f'<div ... data-panel="{name}">')
    # A blank line would end Markdown's HTML block and turn the rest into paragraphs.
    if "\n\n" in html.strip():
        raise PluginError(f"panel template {template_source(name)} has a blank line")
    return html.strip()


def panels_of(markdown: str) -> list[str]:
    """The names of the panels ``markdown`` shows, in page order."""
    return [match["name"] for match in PANEL_MARKER.finditer(markdown)]
