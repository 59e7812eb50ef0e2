"""What each page tells reference managers, link previews and its readers about itself.

:func:`describe_page` puts in ``page.meta`` the page's citation tags (Highwire Press and Dublin
Core, made here from the same ``citations`` functions as the Cite page, on the home page and
every article), its link-preview tags (``link_previews``) and its last-changed line
(``last_change``); ``overrides/main.html`` writes them into the page.
Design history: docs/design-notes.md#page-metadata
"""

from __future__ import annotations

from typing import Any

from . import citations, last_change, link_previews
from .front_matter import page_title

PDF_NAME = "posenc.pdf"  # in the cited release's folder (make pdf)


# The articles of the build under way, listed once: every page's head asks for the same list, and
# listing it reads each article's file (``forget_build`` clears it before each build).
_THIS_BUILD: dict[str, Any] = {}


def _articles(config) -> list[tuple[str, str, str]]:
    """``citations.articles(config)``, listed once for ``config`` (the one object a build passes
    to every page; holding it here keeps another config from being taken for it)."""
    if _THIS_BUILD.get("config") is not config:
        _THIS_BUILD.clear()
        _THIS_BUILD["config"] = config
        _THIS_BUILD["articles"] = citations.articles(config) if config["nav"] else []  # a site without a nav lists none
    return _THIS_BUILD["articles"]


def _citable_urls(config) -> dict[str, str]:
    """{docs path: URL to cite} for the home page and every article the Cite page lists."""
    root = citations.cited_root(config["site_url"])
    articles = _articles(config)
    urls = {path: root + url_path for path, url_path, _ in articles}
    urls["index.md"] = root
    return urls


def citation_tags(page, config) -> list[tuple[str, str, str]]:
    """(attribute, name, content) of the citation meta tags of ``page``; none if it is not citable."""
    url = _citable_urls(config).get(page.file.src_uri)
    if url is None:
        return []
    release = citations.release()
    root = citations.cited_root(config["site_url"])
    # The home page stands for the site: it is saved as the site's record on the Cite page.
    title = release["title"] if page.file.src_uri == "index.md" else page_title(page)
    date = release["date"]
    tags = [("name", "citation_title", title)]
    tags += [("name", "citation_author", name) for name, _ in release["authors"]]
    tags += [
        ("name", "citation_publication_date", date.strftime("%Y/%m/%d")),
        ("name", "citation_public_url", url),
        ("name", "citation_pdf_url", root + PDF_NAME),
        ("name", "citation_language", "en"),
        ("name", "DC.title", title),
    ]
    tags += [("name", "DC.creator", name) for name, _ in release["authors"]]
    tags += [
        ("name", "DC.date", date.isoformat()),
        ("name", "DC.identifier", url),
        ("name", "DC.language", "en"),
    ]
    return tags


def forget_build() -> None:
    """Read the repository afresh for this build (what git said, and the articles, are kept for one build only)."""
    _THIS_BUILD.clear()
    last_change.forget_build()


def describe_page(page, config) -> None:
    """Put the page's head tags and last-changed line in ``page.meta``; write its card into the site."""
    page.meta["posenc_head"] = citation_tags(page, config) + link_previews.preview_tags(page, config)
    change = last_change.last_changed(last_change.page_sources(page))
    page.meta["posenc_last_changed"] = last_change.last_changed_html(change)
    link_previews.write_card(page, config)
