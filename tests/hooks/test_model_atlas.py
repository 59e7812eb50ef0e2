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

The settings of a released model that ``posenc.models`` records are held on every page, not on the
atlas alone:

7. A cell of the atlas that gives a recorded model's base or scaling factor reads it from the
   record (a ``calc`` marker calling ``posenc.models.model``), and shows the record's value.
8. A page's ``calc`` marker or a figure script that calls a model's own function (such as
   ``posenc.smollm3_layers``) passes the record's base and scaling, never leaving them to the
   function's default, which follows the configuration class rather than the released model.
9. Wherever a page's text, as built, names a recorded model in a sentence that states a base
   ("base 5,000,000") or a factor ("factor 32"), the number is one the record holds.
"""

from __future__ import annotations

import ast
import inspect
import pathlib
import re

import posenc
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
# The schedule function each interleaved model's Layers cell must call, and what the cell must print.
SCHEDULES = {
    "ModernBERT": ("posenc.layer_schedule", "1 global : 2 local"),
    "Llama 4": ("posenc.llama4_layers", "3 RoPE (chunked) : 1 NoPE"),
    "Gemma 2": ("posenc.layer_schedule", "1 sliding : 1 global"),
    "Gemma 3": ("posenc.gemma3_layers", "5 sliding : 1 global"),
    "gpt-oss": ("posenc.layer_schedule", "1 sliding : 1 full, window 128"),
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


def shown(text: str) -> str:
    """``text`` with each calc marker replaced by what it shows."""
    return markers.MARKER.sub(lambda m: markers.calc(m["arg"], m["spec"], m[0]) if m["kind"] == "calc" else m[0], text)


def test_the_layer_patterns_are_computed_from_posenc_schedules(tables):
    header, rows = tables[0]
    layers = {row[0]: row[header.index("Layers")] for row in rows}
    assert set(SCHEDULES) <= set(layers)
    for model, (function, expected) in SCHEDULES.items():
        found = list(markers.MARKER.finditer(layers[model]))
        assert found and found[0]["kind"] == "calc" and layers[model].startswith(found[0][0]), (
            f"{model}: its Layers cell does not open with a calc marker"
        )
        assert function + "(" in found[0]["arg"], f"{model}: its pattern does not call {function}"
        assert re.sub(r"\[\^[\w-]+\]", "", shown(layers[model])) == expected


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


# --- the records of posenc.models, held on the atlas and on every page ----------------------

DOCS = ROOT / "docs"
FIGURE_SCRIPTS = ROOT / "figures_src"
# Each model's own function in posenc, by the record whose model it builds.
MODEL_FUNCTIONS = {"smollm3_layers": "smollm3-3b"}
# The settings a call must take from the record (a layer count may be one repeating block).
CALL_SETTINGS = ("rope_theta", "local_rope_theta", "rope_scaling")
# The atlas columns that give a recorded setting, and the fields each reads.
RECORD_COLUMNS = {
    "Base": ("rope_theta", "local_rope_theta"),
    "Scaling": ("rope_scaling",),
    "Trained": ("training_lengths",),
    "Maximum": ("max_position_embeddings",),
}
NUMBER = r"(\d[\d,]*(?:\.\d+)?(?:e\d+)?|\$?10\^\{?\d+\}?\$?)"
STATED_BASE = re.compile(r"\bbase\s+(?:of\s+|at\s+|to\s+|is\s+|=\s*)?" + NUMBER)
STATED_FACTOR = re.compile(r"\bfactor\s+(?:of\s+|to\s+|is\s+|=\s*)?" + NUMBER)
SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z`\[(*])|\n\s*\n|\n(?=\|)|\n(?=\[\^)|\n(?=- )")


def number(text: str) -> float:
    power = re.fullmatch(r"\$?10\^\{?(\d+)\}?\$?", text)
    return 10.0 ** int(power[1]) if power else float(text.replace(",", ""))


def names(family: str, text: str) -> bool:
    """Whether ``text`` names ``family`` ("Kimi K2" in "Kimi-K2-Instruct" too, "BERT" not in "ModernBERT")."""
    spelled = r"[\s-]".join(map(re.escape, family.split()))
    return re.search(rf"(?<![A-Za-z0-9]){spelled}(?![A-Za-z0-9])", text) is not None


def recorded_bases(record: posenc.models.ModelRecord) -> set[float]:
    return {float(record[field]) for field in ("rope_theta", "local_rope_theta") if field in record}


def recorded_factors(record: posenc.models.ModelRecord) -> set[float]:
    scaling = record.get("rope_scaling")
    return {float(scaling["factor"])} if scaling and "factor" in scaling else set()


def sentences(markdown: str) -> list[str]:
    """``markdown`` cut into sentences, table rows and notes, each marker kept whole."""
    held: list[str] = []

    def hold(match: re.Match) -> str:
        held.append(match[0])
        return f"\0{len(held) - 1}\0"

    text = markers.MARKER.sub(hold, markdown)
    restore = re.compile(r"\0(\d+)\0")
    return [restore.sub(lambda m: held[int(m[1])], part) for part in SENTENCE_END.split(text)]


def stated_value_problems(markdown: str, where: str) -> list[str]:
    """Each base or factor stated, as built, in a sentence that names a recorded model, that the
    records of the models it names do not hold."""
    problems, named = [], []
    for sentence in sentences(markdown):
        # Names are looked for outside the markers: a record key inside one names no model. A
        # sentence that opens with "Its" or "It" speaks of the models the one before it named.
        words = markers.MARKER.sub("", sentence)
        if not re.match(r"\s*(?:Its?|Their|They)\b", words):
            named = [r for r in posenc.models.records() if names(r.family, words)]
        if not named:
            continue
        text = shown(sentence)
        for pattern, allowed, what in (
            (STATED_BASE, set().union(*map(recorded_bases, named)), "base"),
            (STATED_FACTOR, set().union(*map(recorded_factors, named)), "factor"),
        ):
            for match in pattern.finditer(text) if allowed else ():
                if number(match[1]) not in allowed:
                    models_named = ", ".join(r.key for r in named)
                    problems.append(
                        f"{where}: {what} {match[1]} beside {models_named}, whose records hold {sorted(allowed)}: "
                        f"{' '.join(text.split())[:160]!r}"
                    )
    return problems


def call_problems(source: str, where: str, evaluate: bool) -> list[str]:
    """Each call of a model's own function in ``source`` (Python) that does not pass its record's
    base and scaling as read from the record; with ``evaluate``, also each whose value differs."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        key = MODEL_FUNCTIONS.get(node.func.attr)
        if key is None:
            continue
        record, given = posenc.models.model(key), {k.arg: k.value for k in node.keywords}
        parameters = inspect.signature(getattr(posenc, node.func.attr)).parameters
        for field in (f for f in CALL_SETTINGS if f in record and f in parameters):
            if field not in given:
                problems.append(f"{where}: {node.func.attr} leaves {field} to its default, not {key}'s record")
                continue
            expression = ast.unparse(given[field])
            if not expression.endswith(f"[{field!r}]") and not expression.endswith(f'["{field}"]'):
                problems.append(f"{where}: {node.func.attr}'s {field} is {expression}, not read from {key}'s record")
            elif evaluate and eval(expression, {"posenc": posenc}) != record[field]:
                problems.append(f"{where}: {node.func.attr}'s {field} is not {key}'s {record[field]!r}")
    return problems


def pages() -> dict[str, str]:
    return {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
        for path in sorted(DOCS.rglob("*.md"))
        if "figures" not in path.relative_to(DOCS).parts
    }


def test_the_atlas_reads_each_recorded_setting_from_its_record(tables):
    checked = 0
    for header, rows in tables:
        for row in rows:
            record = next((r for r in posenc.models.records() if row[0] == r.family), None)
            for column, cell in zip(header, row):
                fields = [f for f in RECORD_COLUMNS.get(column, ()) if record is not None and f in record]
                if not fields:
                    continue
                checked += 1
                reads = [m["arg"] for m in markers.MARKER.finditer(cell) if m["kind"] == "calc"]
                assert any(f'posenc.models.model("{record.key}")' in arg for arg in reads), (
                    f"{row[0]}: its {column} is not read from the record {record.key!r}"
                )
                assert any(f'["{field}"]' in arg for arg in reads for field in fields), (
                    f"{row[0]}: its {column} reads none of {fields} from {record.key!r}"
                )
                text = shown(cell)
                if column == "Base":
                    numbers = {number(n) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", re.sub(r"\[\^[\w-]+\]", "", text))}
                    assert numbers <= recorded_bases(record), f"{row[0]}: its Base {text!r} is not {record.key}'s"
                if column == "Scaling":
                    stated = {number(m[1]) for m in STATED_FACTOR.finditer(text)}
                    assert stated == recorded_factors(record), f"{row[0]}: its Scaling {text!r} is not {record.key}'s"
    assert checked >= 5, "the recorded models' bases, scalings and lengths are among the atlas's cells"


def test_calls_of_a_models_own_function_pass_its_record():
    problems = []
    for where, text in pages().items():
        for marker in markers.MARKER.finditer(text):
            if marker["kind"] == "calc":
                problems += call_problems(marker["arg"], where, evaluate=True)
    for path in sorted(FIGURE_SCRIPTS.glob("*.py")):
        problems += call_problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), evaluate=False)
    assert problems == []


def test_every_base_and_factor_stated_beside_a_recorded_model_is_its_records():
    problems = [problem for where, text in pages().items() for problem in stated_value_problems(text, where)]
    assert problems == []


def test_the_checks_catch_a_base_left_to_a_default():
    # The sentence and the call today.md held before SmolLM3 had a record.
    old = (
        "SmolLM3 follows the same rule (every fourth layer NoPE, the others at base 2,000,000): of its\n"
        "configuration's default 36 layers,\n"
        "{{ calc d: sum(not s.rotates for s in posenc.smollm3_layers()) }} are NoPE."
    )
    assert len(stated_value_problems(old, "old")) == 1
    [call] = [m["arg"] for m in markers.MARKER.finditer(old)]
    assert call_problems(call, "old", evaluate=True) == [
        "old: smollm3_layers leaves rope_theta to its default, not smollm3-3b's record"
    ]
    typed = "posenc.smollm3_layers(4, rope_theta=5e6)"
    assert call_problems(typed, "typed", evaluate=True) == [
        "typed: smollm3_layers's rope_theta is 5000000.0, not read from smollm3-3b's record"
    ]
    right = 'The base of SmolLM3 is {{ calc ,.0f: posenc.models.model("smollm3-3b")["rope_theta"] }}.'
    assert stated_value_problems(right, "right") == []
    assert stated_value_problems("Kimi K2 sets YaRN's factor to 40.", "kimi") != []
