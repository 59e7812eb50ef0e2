"""Every cell of the model atlas is computed, sourced or explained.

The atlas (``docs/model-atlas.md``) is three Markdown tables (the scheme, the RoPE details, the
context) whose first column is the model and whose last, "Source", cites the row. The rule the
page states and these tests hold, read from the Markdown alone:

1. Every row's Source cell links at least one entry of the References page, and every link of it
   does (a row's values rest on what its Source cites, unless a cell carries a note).
2. A cell holding a dash carries a note (``[^name]``, a footnote defined on the page) saying why
   the value is missing, unless the column concerns RoPE (Scaling) and the row's scheme has no
   RoPE: a bare dash means "does not apply", and only there.
3. Every note a cell uses is defined, and every note defined is used.
4. The per-layer pattern of each model whose schedule posenc implements is a ``calc`` marker
   calling that schedule, and every ``calc`` marker of the tables evaluates to what the page
   means it to say.
5. The scheme and context tables list the same models in the same order, the RoPE table the
   rotating ones among them, and no cell is empty.
6. The number of models the page states in words (its description and its opening) is the number
   of rows.
"""

from __future__ import annotations

import pathlib
import re

import pytest
from site_build import markers

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "model-atlas.md"
REFERENCES = ROOT / "docs" / "references.md"

DASH = "—"
ROPE_COLUMNS = {"Scaling"}
NOTE_USE = re.compile(r"\[\^([\w-]+)\](?!:)")
NOTE_DEFINITION = re.compile(r"^\[\^([\w-]+)\]:", re.M)
CITATION = re.compile(r"\]\(references\.md#([\w-]+)\)")
RECORD_KEY = re.compile(r"^@[a-z]+\{([^,\s]+),$", re.M)
# The schedule function each interleaved model's Layers cell must call, and what it must print.
SCHEDULES = {
    "Llama 4": ("posenc.llama4_layers", "3 RoPE (chunked) : 1 NoPE"),
    "Gemma 2": ("posenc.layer_schedule", "1 sliding : 1 global"),
    "Gemma 3": ("posenc.gemma3_layers", "5 sliding : 1 global"),
    "gpt-oss": ("posenc.layer_schedule", "1 window of 128 : 1 full"),
    "SmolLM3": ("posenc.smollm3_layers", "3 RoPE : 1 NoPE"),
    "Command A": ("posenc.cohere2_layers", "3 RoPE (sliding) : 1 NoPE"),
    "EXAONE 4": ("posenc.exaone4_layers", "3 RoPE (sliding) : 1 NoPE"),
}


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def atlas_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """The page's tables whose header starts with Model and ends with Source: (header, rows)."""
    tables, lines = [], text.splitlines()
    for index, line in enumerate(lines):
        header = cells(line) if line.startswith("| Model |") else []
        if header and header[-1] == "Source":
            rows = []
            for body in lines[index + 2 :]:
                if not body.startswith("|"):
                    break
                rows.append(cells(body))
            tables.append((header, rows))
    return tables


@pytest.fixture(scope="module")
def page() -> str:
    return PAGE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def tables(page):
    found = atlas_tables(page)
    assert len(found) == 3, "the atlas is three tables: position scheme, RoPE details and long context"
    return found


def schemes(tables) -> dict[str, str]:
    header, rows = tables[0]
    return {row[0]: row[header.index("Scheme")] for row in rows}


def test_the_tables_list_the_same_models_and_no_cell_is_empty(tables):
    (_, scheme_rows), (_, rope_rows), (_, context_rows) = tables
    for header, rows in tables:
        for row in rows:
            assert len(row) == len(header), f"row {row[0]!r} has {len(row)} cells for {len(header)} columns"
            assert all(row), f"row {row[0]!r} has an empty cell"
    # The long-context table may name the variant it describes ("Llama 4 Scout", "Phi-3 mini").
    for first, second in zip([r[0] for r in scheme_rows], [r[0] for r in context_rows], strict=True):
        assert second.startswith(first), (first, second)
    rotating = [model for model, scheme in schemes(tables).items() if "RoPE" in scheme]
    assert [row[0] for row in rope_rows] == rotating, "the RoPE table lists every rotating model, in order"


def test_every_row_cites_entries_of_the_references_page(tables):
    entries = set(RECORD_KEY.findall(REFERENCES.read_text(encoding="utf-8")))
    for _, rows in tables:
        for row in rows:
            keys = CITATION.findall(row[-1])
            assert keys, f"row {row[0]!r} cites no entry of the References page in its Source cell"
            assert set(keys) <= entries, f"row {row[0]!r} cites unknown entries {set(keys) - entries}"


def test_a_dash_carries_a_note_unless_the_column_does_not_apply(tables):
    scheme_of = schemes(tables)
    for header, rows in tables:
        for row in rows:
            has_rope = "RoPE" in next(s for m, s in scheme_of.items() if row[0].startswith(m))
            for column, cell in zip(header[1:-1], row[1:-1]):
                noted = bool(NOTE_USE.search(cell))
                if column in ROPE_COLUMNS and not has_rope:
                    assert cell == DASH, f"{row[0]!r} has no RoPE, so its {column} is a bare dash, not {cell!r}"
                elif cell.startswith(DASH):
                    assert noted, f"{row[0]!r}: the dash in {column} needs a note saying why the value is missing"


def test_every_note_used_is_defined_and_every_note_defined_is_used(page, tables):
    defined = NOTE_DEFINITION.findall(page)
    assert len(defined) == len(set(defined)), "a note is defined twice"
    in_tables = {note for _, rows in tables for row in rows for cell in row for note in NOTE_USE.findall(cell)}
    used = set(NOTE_USE.findall(page))
    assert in_tables <= set(defined), f"notes used but not defined: {in_tables - set(defined)}"
    assert set(defined) <= used, f"notes defined but never used: {set(defined) - used}"


def test_the_layer_patterns_are_computed_from_posenc_schedules(tables):
    header, rows = tables[0]
    layers = {row[0]: row[header.index("Layers")] for row in rows}
    assert set(SCHEDULES) <= set(layers)
    for model, (function, expected) in SCHEDULES.items():
        found = list(markers.MARKER.finditer(layers[model]))
        assert len(found) == 1 and found[0]["kind"] == "calc", f"{model}: its Layers cell is not one calc marker"
        assert function + "(" in found[0]["arg"], f"{model}: its pattern does not call {function}"
        assert markers.calc(found[0]["arg"], found[0]["spec"], found[0][0]) == expected


def test_every_calc_marker_of_the_tables_evaluates(tables):
    count = 0
    for _, rows in tables:
        for row in rows:
            for cell in row:
                for marker in markers.MARKER.finditer(cell):
                    assert marker["kind"] == "calc", f"{row[0]!r}: only calc markers belong in the atlas"
                    assert markers.calc(marker["arg"], marker["spec"], marker[0]).strip()
                    count += 1
    assert count > len(SCHEDULES), "the rotated width of GPT-NeoX-20B is computed too"


UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen".split()
UNITS += "sixteen seventeen eighteen nineteen".split()
TENS = {"twenty": 20, "thirty": 30, "forty": 40}
STATED_COUNT = re.compile(r"\b([a-z]+(?:-[a-z]+)?) (?:widely used )?open models\b")


def number_in_words(word: str) -> int:
    tens, _, unit = word.partition("-")
    if tens in TENS:
        return TENS[tens] + (UNITS.index(unit) if unit else 0)
    return UNITS.index(word)


def test_the_stated_number_of_models_is_the_number_of_rows(page, tables):
    stated = STATED_COUNT.findall(page)
    assert len(stated) >= 2, "the description and the opening each say how many models the atlas holds"
    rows = len(tables[0][1])
    for word in stated:
        assert number_in_words(word) == rows, f"the page says {word} open models; its tables have {rows} rows"
