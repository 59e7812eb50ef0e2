"""Figures on the pages: ``{{ figure: NAME }}``, each figure's generated page, and failed renders.

A page's Markdown gets a placeholder where the SVG goes (the caption is Markdown, the SVG must
not be); :func:`inline_figures` puts the SVG itself there once MkDocs has made the page's HTML.
A figure with a narrow layout (drawn for a phone's column, ``NAME.narrow.svg``) is both SVGs, the
wide one first; posenc.css shows one of them by the width of the screen (the wide one in print).
"""

from __future__ import annotations

import html
import json
import logging
import re
import subprocess
import textwrap

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

from posenc.site.figure_files import NARROW, WIDE, FigureMeta, figure_files, figure_name

from . import paths
from .state import BUILD

log = logging.getLogger("mkdocs.hooks.posenc")


def figures_in_docs() -> str:
    """The figure folder as a path inside ``docs/`` (and so in the site)."""
    return paths.FIGURES.relative_to(paths.DOCS).as_posix()


def figure_meta(name: str, layout: str = WIDE) -> FigureMeta:
    """The sidecar of figure ``name``'s ``layout``, refused unless the layout's SVG is there too."""
    meta_path, svg_path = figure_files(name, paths.FIGURES, layout)
    if not meta_path.is_file():
        if layout != WIDE:
            raise PluginError(f"figure {name!r} has a {layout} layout but no {meta_path.name} (run make)")
        raise PluginError(f"unknown figure {name!r}: no figures_src/{name}.py has been rendered (run make)")
    if not svg_path.is_file():
        raise PluginError(f"figure {name!r} has a description but no {svg_path.name} (run make)")
    return FigureMeta.read(meta_path)


def read_failures() -> None:
    """Note which figure scripts failed in the last render (``build/figure-errors.json``)."""
    errors = paths.FIGURE_ERRORS
    BUILD.failed_figures = json.loads(errors.read_text()) if errors.is_file() else {}


def refresh_for_preview() -> None:
    """While previewing, bring stale figures and the derivation report up to date first."""
    result = subprocess.run(["make", "--no-print-directory", "figures", "verify"], cwd=paths.ROOT)
    if result.returncode:
        log.error(
            "make figures verify failed (see above); the preview shows the last good figures "
            "and names the failed scripts on their pages"
        )


def failure_note(name: str) -> str:
    """While previewing, a note under a figure whose script failed; otherwise that failure stops the build."""
    if name not in BUILD.failed_figures:
        return ""
    if not BUILD.serving:
        raise PluginError(f"figure {name!r} is stale: figures_src/{name}.py failed in its last render (run make)")
    last_line = [line for line in BUILD.failed_figures[name].splitlines() if line.strip()][-1:] or ["(no message)"]
    error = textwrap.indent(last_line[0], "        ")
    return (
        f'\n!!! failure "figures_src/{name}.py failed"\n\n'
        "    The preview shows the last good figure, if there is one. The error (the terminal running "
        "`make serve` has the whole traceback):\n\n"
        f"    ```text\n{error}\n    ```\n"
    )


# Where a figure's SVG goes: the Markdown holds this placeholder, and inline_figures puts the SVG in its place.
FIGURE_PLACEHOLDER = re.compile(r'<span data-posenc-figure="(?P<name>[A-Za-z0-9_-]+)"></span>')


def figure_markdown(name: str, page_src: str, page_url: str) -> str:
    """What ``{{ figure: NAME }}`` becomes on the page ``page_src``: the figure with its caption.

    A figure's own page does not link itself as the figure's source.
    """
    failure = failure_note(name)
    if failure and not figure_files(name, paths.FIGURES)[0].is_file():
        return failure  # a new figure whose first render failed: the note stands in for it
    meta = figure_meta(name)
    folder = figures_in_docs()
    # MkDocs does not rewrite raw HTML, so the address is made relative to the page's URL
    # here, as MkDocs makes a Markdown link's.
    full_size = html.escape(get_relative_url(f"{folder}/{name}.svg", page_url))
    link_source = not page_src.startswith(folder + "/")
    source = f" [Source: `{meta.script}`]({paths.relative(page_src, f'{folder}/{name}.md')})" if link_source else ""
    return (
        f'\n<figure class="posenc-figure" id="fig-{name}" markdown="span">\n'
        f'<span data-posenc-figure="{name}"></span>\n'
        f'<figcaption markdown="span">**{meta.title}** {meta.caption}{source} '
        f'<a class="posenc-figure__enlarge" href="{full_size}">Full size</a></figcaption>\n'
        "</figure>\n" + failure
    )


#: The class of each SVG of a figure that has two layouts: posenc.css shows one by the screen's width.
LAYOUT_CLASSES = {WIDE: "posenc-figure__wide", NARROW: "posenc-figure__narrow"}


def figure_svgs(name: str) -> str:
    """The SVG of figure ``name`` as it sits on a page: its wide layout, then its narrow one if it
    has one, each marked with its layout's class (:data:`LAYOUT_CLASSES`).

    The SVGs are kept out of the search index (``data-search-exclude``, read by Material's
    search): their text is tick labels and legends, which the caption already describes.
    """
    layouts = [WIDE, NARROW] if figure_meta(name).narrow else [WIDE]
    svgs = []
    for layout in layouts:
        figure_meta(name, layout)  # both files are there
        svg_path = figure_files(name, paths.FIGURES, layout)[1]
        text = svg_path.read_text(encoding="utf-8").strip()
        if not text.startswith("<svg "):
            raise PluginError(f"figure {name!r}: {svg_path.name} does not start with <svg (run make)")
        marks = f'class="{LAYOUT_CLASSES[layout]}" ' if len(layouts) > 1 else ""
        svgs.append("<svg data-search-exclude " + marks + text[len("<svg ") :])
    return "\n".join(svgs)


def inline_figures(page_html: str) -> str:
    """``page_html`` with each figure placeholder replaced by the figure's SVGs (:func:`figure_svgs`)."""
    return FIGURE_PLACEHOLDER.sub(lambda match: figure_svgs(match["name"]), page_html)


def figure_page(name: str) -> str:
    """The Markdown of figure ``name``'s own page: the figure, then the script that draws it."""
    meta = figure_meta(name)
    code = (paths.ROOT / meta.script).read_text()
    # The description is plain text (search snippets, link previews): the alt text's first
    # sentence, which is written in words, not the caption, which may hold TeX.
    first = meta.alt.split(". ")[0].rstrip(".")
    title = meta.title.rstrip(".")
    return (
        f"---\ntitle: {json.dumps('Figure: ' + title)}\ndescription: {json.dumps(first + '.')}\n"
        "search:\n  exclude: true\n---\n\n"
        f"# {title}\n\n{{{{ figure: {name} }}}}\n\n"
        f"## Script {{ #script }}\n\n`{meta.script}` draws this figure; `make` runs it again whenever it "
        "or the posenc helper changes.\n\n"
        f"```python\n{code}```\n"
    )


def figure_page_files(config) -> list[File]:
    """The generated page of each rendered figure, ``figures/NAME/``."""
    folder = figures_in_docs()
    names = sorted({figure_name(meta_path) for meta_path in paths.FIGURES.glob("*.json")})
    return [File.generated(config, f"{folder}/{name}.md", content=figure_page(name)) for name in names]


def figure_of_page(page_src: str) -> str | None:
    """The figure whose generated page is ``page_src``, or None for any other page."""
    prefix = figures_in_docs() + "/"
    return page_src.removeprefix(prefix).removesuffix(".md") if page_src.startswith(prefix) else None
