"""MkDocs hook: wide tables labelled for the phone's stacked layout (``site_build.tables``)."""

from __future__ import annotations

from site_build import tables


def on_page_content(html_content, page, config, files):
    return tables.label_cells(html_content)
