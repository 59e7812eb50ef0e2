"""The table step (hooks/site_build/tables.py): wide tables get their cells labelled for the
phone's stacked layout; narrow tables and tables of other kinds stay as they were."""

from __future__ import annotations

import html.parser

import markdown
from site_build import tables


def _table(columns: int, rows: int = 2) -> str:
    header = "| " + " | ".join(f"Head {c} & *more*" for c in range(columns)) + " |"
    rule = "| " + " | ".join("---" for _ in range(columns)) + " |"
    body = ["| " + " | ".join(f"r{r}c{c} [link](x.md)" for c in range(columns)) + " |" for r in range(rows)]
    return markdown.markdown("\n".join([header, rule, *body]), extensions=["tables"])


class _Cells(html.parser.HTMLParser):
    """Each body cell's data-label and role, row by row, and the table's own attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[tuple[str | None, str | None]]] = []
        self.table: dict[str, str | None] = {}
        self.in_body = False

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        if tag == "table":
            self.table = found
        elif tag == "tbody":
            self.in_body = True
        elif tag == "tr" and self.in_body:
            self.rows.append([])
        elif tag == "td":
            self.rows[-1].append((found.get("data-label"), found.get("role")))


def _cells(page_html: str) -> _Cells:
    parser = _Cells()
    parser.feed(page_html)
    return parser


def test_a_wide_table_labels_every_body_cell_with_its_header():
    columns = tables.STACKED_AFTER + 2
    found = _cells(tables.label_cells("<p>before</p>" + _table(columns, rows=3)))
    assert "data-posenc-stack" in found.table and found.table["role"] == "table"
    # Header text only: markup stripped, the ampersand escaped once and read back as itself.
    assert found.rows == [[(f"Head {c} & more", "cell") for c in range(columns)]] * 3


def test_narrow_tables_and_tables_with_attributes_are_left_alone():
    narrow = _table(tables.STACKED_AFTER)
    assert tables.label_cells(narrow) == narrow
    listing = '<table class="highlighttable"><tr><th>a</th><th>b</th><th>c</th><th>d</th></tr></table>'
    assert tables.label_cells(listing) == listing


def test_every_table_of_a_page_is_treated_on_its_own():
    page = _table(tables.STACKED_AFTER + 1) + "<p>between</p>" + _table(2) + _table(tables.STACKED_AFTER + 3)
    result = tables.label_cells(page)
    assert result.count("data-posenc-stack") == 2
    assert "<p>between</p>" in result
    assert _table(2) in result
