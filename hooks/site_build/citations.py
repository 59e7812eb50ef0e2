"""What readers cite: the release in CITATION.cff, the address to cite, and the BibTeX records.

CITATION.cff is the one source of title, authors and release date, and ``posenc.__version__``
(which pyproject.toml reads too) the one source of the version: the records of the site, of each
article and of each derivation, the Cite page and the pages' citation tags (``page_meta``) are
all derived from them here.
"""

from __future__ import annotations

import datetime
import posixpath
import re
import textwrap
from urllib.parse import urlsplit

import yaml
from mkdocs.exceptions import PluginError
from mkdocs.utils.meta import get_data

import posenc

from . import paths


def release() -> dict:
    """Title, version, date and authors of the release the citations describe."""
    data = yaml.safe_load(paths.CITATION.read_text(encoding="utf-8"))
    released = data["date-released"]
    if isinstance(released, str):
        released = datetime.date.fromisoformat(released)
    authors = [cff_author(author) for author in data["authors"]]
    return {"title": data["title"], "version": posenc.__version__, "date": released, "authors": authors}


def cff_author(author: dict) -> tuple[str, bool]:
    """(name, whether it names an entity) of one CITATION.cff author; a person reads "Family, Given"."""
    if "name" in author:
        return author["name"], True
    return f"{author['family-names']}, {author['given-names']}", False


def release_text() -> str:
    """``{{ release }}``: "version X, released D Month YYYY"."""
    described = release()
    date = described["date"]
    return f"version {described['version']}, released {date.day} {date:%B} {date.year}"


RELEASE_NUMBER = re.compile(r"\d+(?:\.\d+)*")
# Folders that mike fills with something other than one fixed release (.github/workflows/deploy.yml).
MIKE_ALIASES = {"dev", "latest"}


def cited_root(site_url: str) -> str:
    """Root of the address to cite, following the Cite page's rule: a numbered release's folder.

    mike builds release X with site_url ``.../X``, which is already that folder. Any other build
    (a local one, or the ``dev`` alias, which the Cite page says not to cite) names the folder
    of the release CITATION.cff describes.
    """
    root = site_url.rstrip("/")
    last = urlsplit(root).path.rsplit("/", 1)[-1]
    if RELEASE_NUMBER.fullmatch(last):
        return root + "/"
    if last in MIKE_ALIASES:
        root = root[: -len(last)].rstrip("/")
    return f"{root}/{release()['version']}/"


def record(key: str, title: str, url: str, note: str) -> str:
    """One BibTeX record of posenc; ``title`` is the field's content, braces included."""
    described = release()
    # An entity's name is braced so that BibTeX does not split it into given and family names.
    authors = " and ".join(f"{{{name}}}" if entity else name for name, entity in described["authors"])
    return textwrap.dedent(
        f"""\
        @misc{{{key},
          title        = {{{title}}},
          author       = {{{authors}}},
          year         = {{{described["date"].year}}},
          month        = {described["date"].strftime("%b").lower()},
          version      = {{{described["version"]}}},
          howpublished = {{\\url{{{url}}}}},
          url          = {{{url}}},
          note         = {{{note}}}
        }}"""
    )


def bibtex(entry, site_url: str) -> str:
    """The record of derivation ``entry`` (a registry entry), citing its own page."""
    return record(
        f"posenc-{entry.id}",
        f"{{{entry.title}}} (posenc derivation {entry.id})",
        f"{cited_root(site_url)}derivations/{entry.id}/",
        f"Statement proved with SymPy; stable ID {entry.id}",
    )


# The nav sections whose pages are articles a reader may cite; a page opts out with
# ``cite: false`` in its front matter (the API reference, generated from docstrings).
ARTICLE_SECTIONS = ("Learn", "Implement")


def articles(config) -> list[tuple[str, str, str]]:
    """(docs path, URL path, title) of every citable page in the nav's article sections."""
    items = [
        (label, path)
        for section in config["nav"]
        if isinstance(section, dict)
        for name, entries in section.items()
        if name in ARTICLE_SECTIONS
        for item in entries
        for label, path in item.items()
    ]
    if not items:
        raise PluginError(f"the nav has none of the article sections {ARTICLE_SECTIONS} to cite")
    found = []
    for label, path in items:
        meta = get_data((paths.DOCS / path).read_text(encoding="utf-8"))[1] if path.endswith(".md") else {}
        if meta.get("cite", True) is False:
            continue
        stem = posixpath.splitext(path)[0]
        url_path = stem[: -len("index")] if stem.endswith("index") else stem + "/"
        found.append((path, url_path, meta.get("title", label)))
    return found


def cite_markdown(what: str, page_src: str, config) -> str:
    """``{{ cite: site }}`` (the site's record) or ``{{ cite: articles }}`` (a table and a record per article)."""
    described = release()
    root = cited_root(config["site_url"])
    if what == "site":
        site = record(
            f"posenc{described['date'].year}", f"{{{described['title']}}}", root, f"Version {described['version']}"
        )
        return f"```bibtex\n{site}\n```"
    if what == "articles":
        table = ["| article | URL | key |", "| --- | --- | --- |"]
        records = []
        for path, url_path, title in articles(config):
            url = f"{root}{url_path}"
            key = "posenc-" + url_path.rstrip("/").rsplit("/", 1)[-1]
            table.append(f"| [{title}]({paths.relative(page_src, path)}) | `{url}` | `{key}` |")
            records.append(
                record(key, f"{{{title}}}", url, f"Article of the posenc site, version {described['version']}")
            )
        return "\n".join(table) + "\n\n```bibtex\n" + "\n\n".join(records) + "\n```"
    raise PluginError(f"unknown cite marker {what!r} (known: site, articles)")
