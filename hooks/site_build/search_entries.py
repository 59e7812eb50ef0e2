"""The search index's entries of each page, kept between builds (see ``kept``).

Material's search plugin parses every page's HTML into sections for its index; on a built
checkout most pages have not changed, and parsing them again was a large part of a one-page edit.
:func:`install` wraps ``SearchIndex.add_entry_from_context`` so that a page whose HTML, address,
table of contents and search settings are those of a page indexed before gets the entries made
then, with the same Material and the same search configuration.
"""

from __future__ import annotations

import copy
import json
import pathlib
from importlib import metadata

from material.plugins.search import plugin as search_plugin

from .kept import Kept, digest

_INDEX_PAGE = search_plugin.SearchIndex.add_entry_from_context


def _maker() -> tuple[str, ...]:
    return (
        metadata.version("mkdocs-material"),
        # Material splits Chinese text with jieba when it is installed.
        str(search_plugin.jieba is not None),
        pathlib.Path(__file__).read_text(encoding="utf-8"),
    )


ENTRIES = Kept("search", _maker)


def _toc(items) -> list:
    return [[item.id, item.url, _toc(item.children)] for item in items]


def _page_key(index, page) -> str:
    # Everything add_entry_from_context reads: the HTML, the address, the table of contents, the
    # title and the page's search settings and tags, with the index's own configuration.
    settings = [
        page.url,
        str(page.meta.get("title", page.title)),
        page.meta.get("search"),
        page.meta.get("tags"),
        _toc(page.toc),
        index.config,
    ]
    return digest([page.content or "", json.dumps(settings, sort_keys=True, default=repr)])


def kept_index_page(index, page) -> None:
    """``SearchIndex.add_entry_from_context``, served from the kept entries when the page is unchanged."""
    key = _page_key(index, page)
    entries = ENTRIES.get(key)
    if isinstance(entries, list):
        index.entries.extend({field: copy.deepcopy(value) for field, value in entry} for entry in entries)
        return
    before = len(index.entries)
    _INDEX_PAGE(index, page)
    # Each entry as its (field, value) pairs: the store writes objects with sorted keys, and the
    # index lists an entry's fields in the order Material gave them.
    ENTRIES.put(key, [list(map(list, entry.items())) for entry in copy.deepcopy(index.entries[before:])])


def install() -> None:
    search_plugin.SearchIndex.add_entry_from_context = kept_index_page
