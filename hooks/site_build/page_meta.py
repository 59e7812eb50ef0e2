"""What each page tells reference managers, link previews and its readers about itself.

* Citation metadata in the page head, read by reference managers and scholarly search engines:
  Highwire Press ``citation_*`` tags and their Dublin Core equivalents, on every article (the
  pages the Cite page lists, the Derivations page among them) and on the home page, which
  stands for the site as a whole. Title, authors, release date and the URL to cite come from
  the same functions as the Cite page's BibTeX records (``citations``, fed by CITATION.cff),
  so a reference manager saves what the Cite page prints. ``citation_pdf_url`` names
  ``posenc.pdf`` in the cited release's folder, the PDF of the whole site that ``make pdf`` adds.
* Link previews on every page: Open Graph and Twitter card tags with the page's title,
  description, canonical URL and a card image. The card (a PNG with the title and the site's
  name over a few sinusoids) is drawn by Matplotlib while the site is built, with its bundled
  font, so the build needs no network; a page never loads it, only link-preview crawlers do.
* A line under every page saying when it last changed: the date of the latest commit to the
  files the page is made from (``git log``). Where that date does not describe the page (no
  git, a shallow clone, or a source file with changes not yet committed) the line says so
  and gives the build date instead (``SOURCE_DATE_EPOCH`` when set, as for MkDocs' sitemap).

The citation tags are made here, the link previews in ``link_previews`` and the line in
``last_change``; :func:`describe_page` puts all of this in ``page.meta`` (``posenc_head`` and
``posenc_last_changed``), and ``overrides/main.html`` writes it into the page.
"""

from __future__ import annotations

from . import citations, last_change, link_previews
from .front_matter import page_title

PDF_NAME = "posenc.pdf"  # in the cited release's folder (make pdf)


def _citable_urls(config) -> dict[str, str]:
    """{docs path: URL to cite} for the home page and every article the Cite page lists."""
    root = citations.cited_root(config["site_url"])
    articles = citations.articles(config) if config["nav"] else []  # a site without a nav lists none
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


def describe_page(page, config) -> None:
    """Put the page's head tags and last-changed line in ``page.meta``; write its card into the site."""
    page.meta["posenc_head"] = citation_tags(page, config) + link_previews.preview_tags(page, config)
    change = last_change.last_changed(last_change.page_sources(page))
    page.meta["posenc_last_changed"] = last_change.last_changed_html(change)
    link_previews.write_card(page, config)
