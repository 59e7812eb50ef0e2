"""What a page's front matter holds: its own title, and checks of what it must hold."""

from __future__ import annotations

import logging

from mkdocs.exceptions import PluginError

log = logging.getLogger("mkdocs.hooks.posenc")


def page_title(page) -> str:
    """The page's own title, as the theme's <title> and the Cite page name it (not its nav label)."""
    return page.meta.get("title") or page.title


def check_scripts(page, files) -> None:
    """The front matter's ``scripts:`` must name files of the site: overrides/main.html writes each
    into the page as it is, and a wrong name would only show as a failed request in a browser."""
    scripts = page.meta.get("scripts", [])
    if not isinstance(scripts, list) or not all(isinstance(name, str) for name in scripts):
        raise PluginError(f"page {page.file.src_uri}: front matter 'scripts' must be a list of file names")
    missing = [name for name in scripts if files.get_file_from_path(name) is None]
    if missing:
        raise PluginError(
            f"page {page.file.src_uri}: front matter 'scripts' names {', '.join(missing)}, which the "
            "site does not have (a path under docs/, such as javascripts/explainer.js)"
        )


def warn_without_description(page) -> None:
    """Warn about a page without a description (a warning, so ``--strict`` fails).

    Checked in on_page_context, after every hook's ``on_page_markdown``, because the
    ``notebook_pages`` hook takes a notebook's description from its metadata there.
    """
    if not page.meta.get("description"):
        log.warning(
            f"page {page.file.src_uri} has no description in its front matter (needed for search results and previews)"
        )
