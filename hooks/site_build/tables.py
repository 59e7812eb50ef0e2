"""Wide tables that a phone reads as a stack of cards.

A Markdown table of more than STACKED_AFTER columns showed about three of them on a phone's screen
and hid the rest behind a sideways scroll. :func:`label_cells` marks such a table
(``data-posenc-stack``) and gives each body cell its column's header as ``data-label``; on a phone
posenc.css then draws each row as a card whose cells are labelled by those headers. Wider screens
keep the table. The table, its rows and its cells also get their ARIA roles: a table drawn as
blocks no longer reads as a table to every screen reader, and the roles keep it one.

Only plain tables are marked (``<table>`` with no attributes, the ones Markdown writes and
Material styles); code listings' line-number tables and mkdocstrings' tables are left alone.
"""

from __future__ import annotations

import html
import re

STACKED_AFTER = 3  # up to three columns fit a phone's column; more are stacked
TABLE = re.compile(r"<table>(.*?)</table>", re.S)
HEADER_CELL = re.compile(r"<th\b[^>]*>(.*?)</th>", re.S)
TAG = re.compile(r"<[^>]*>")
# The opening tags that get a role, and in the body each row start and each cell.
ROLES = {"thead": "rowgroup", "tbody": "rowgroup", "tr": "row", "th": "columnheader", "td": "cell"}
OPENING = re.compile(r"<(thead|tbody|tr|th|td)\b")


def _label(cell_html: str) -> str:
    return html.escape(" ".join(html.unescape(TAG.sub("", cell_html)).split()), quote=True)


def _stacked(match: re.Match[str]) -> str:
    inside = match.group(1)
    head, separator, body = inside.partition("</thead>")
    labels = [_label(cell) for cell in HEADER_CELL.findall(head)]
    if not separator or len(labels) <= STACKED_AFTER:
        return match.group(0)
    column = 0

    def opening(tag: re.Match[str], in_body: bool) -> str:
        nonlocal column
        name = tag.group(1)
        extra = f' role="{ROLES[name]}"'
        if in_body and name == "tr":
            column = 0
        elif in_body and name == "td":
            if column < len(labels):
                extra += f' data-label="{labels[column]}"'
            column += 1
        return tag.group(0) + extra

    head = OPENING.sub(lambda tag: opening(tag, False), head)
    body = OPENING.sub(lambda tag: opening(tag, True), body)
    return f'<table role="table" data-posenc-stack>{head}{separator}{body}</table>'


def label_cells(page_html: str) -> str:
    """``page_html`` with every plain table of more than STACKED_AFTER columns marked for the phone's
    stacked layout: its body cells labelled with their column's header, its parts given their roles."""
    return TABLE.sub(_stacked, page_html)
