"""The pages name only what posenc has: its functions and modules, and its ``rope_scaling`` types.

Read are every ``docs/**/*.md`` (prose and code), the notebooks' cells (not their outputs) and
the list of peer tests that ``{{ peers }}`` puts on the Conventions page. Three rules:

1. ``posenc.NAME`` (``posenc.module.NAME``, ...) resolves, attribute by attribute, importing a
   submodule where the package has no such attribute; so does each name of a
   ``from posenc[.module] import ...``. After a word character, ``/``, ``.``, ``"`` or ``-`` it is
   part of a file name or an address (``../posenc.pdf``, ``posenc.github.io``) and is skipped.
2. A ``rope_scaling`` type named on a page is in ``posenc.conventions.ROPE_TYPES``, or is one a
   page says posenc lacks. A type is named by ``"rope_type": "X"`` or ``rope_type="X"`` (in code
   or prose), or in prose as a backticked lowercase word within ``WINDOW`` characters of
   ``rope_type``, ``rope_scaling``, ``rope_parameters``, ``ROPE_INIT_FUNCTIONS``, ``ROPE_TYPES`` or
   "scaling" in one paragraph; the parameter names of the types (``factor``, ``mscale``, ...) and
   the trigger words themselves are not types. A paragraph says posenc lacks the types it names
   when one of its sentences names posenc together with a negation (``NEGATION``).
3. No sentence says posenc does not support a type it has: a sentence naming posenc, a negation
   and a verb of support (``SUPPORT``: supports, reproduces, implements, has, ...) must not name a
   type of ``ROPE_TYPES``. A sentence that names a type posenc has and one it lacks around one
   negation is refused too; say them in two sentences.

Sentences are cut after ``.``, ``!`` or ``?`` followed by a space, paragraphs at blank lines and
list items; the rules are patterns, not grammar, and a failure quotes the sentence it read.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import pathlib
import re
import types

import pytest
from site_build import markers, peer_tests

import posenc
from posenc import conventions

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


REFERENCE = re.compile(r"(?<![\w/.\"-])posenc((?:\.[A-Za-z_]\w*)+)")
FROM_IMPORT = re.compile(r"\bfrom[ \t]+posenc((?:\.\w+)*)[ \t]+import[ \t]+\(?([\w \t,\n]+)")
CODE_TYPE = re.compile(r"""rope_type["']?\s*[:=]\s*["']([^"']+)["']""")
TRIGGER = re.compile(r"rope_type|rope_scaling|rope_parameters|ROPE_INIT_FUNCTIONS|ROPE_TYPES|\bscaling\b")
BACKTICKED_WORD = re.compile(r"`([a-z][a-z0-9]*)`")
WINDOW = 200  # characters between a backticked word and the trigger that makes it a type
NEGATION = re.compile(r"\b(?:not|no|neither|nor|never|without|unsupported|lacks?)\b|n't\b", re.I)
SUPPORT = re.compile(r"\b(?:support|reproduc|implement|cover|handl|provid|offer|includ|comput)\w*|\bha(?:s|ve)\b", re.I)
POSENC = re.compile(r"\bposenc\b")
# The keys a rope_scaling dictionary may hold (factor, beta_fast, ...): parameters, not types.
PARAMETERS = set().union(*conventions._SCALING_KEYS.values())
PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*(?:[-*+]|\d+[.)])[ \t])")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

Runs = list[tuple[bool, str]]  # (is code, text), as site_build.markers splits a page


def markdown_runs(text: str) -> Runs:
    """A page's fenced and indented code blocks, and its prose (inline code stays in the prose)."""
    return markers.split_blocks(text)


def notebook_runs(path: pathlib.Path) -> Runs:
    runs: Runs = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        runs += markdown_runs(source + "\n") if cell["cell_type"] == "markdown" else [(True, source + "\n")]
    return runs


def site_pages() -> dict[str, Runs]:
    pages = {
        path.relative_to(ROOT).as_posix(): markdown_runs(path.read_text(encoding="utf-8"))
        for path in sorted(DOCS.rglob("*.md"))
    }
    pages |= {path.relative_to(ROOT).as_posix(): notebook_runs(path) for path in sorted(DOCS.rglob("*.ipynb"))}
    pages["the {{ peers }} list (tests/peers)"] = markdown_runs(peer_tests.peer_test_list())
    return pages


def unresolved(dotted: str) -> str | None:
    """Why ``posenc<dotted>`` is not a name posenc has, or None when it is."""
    value, path = posenc, "posenc"
    for part in dotted.strip(".").split("."):
        if hasattr(value, part):
            value, path = getattr(value, part), f"{path}.{part}"
            continue
        if isinstance(value, types.ModuleType):
            try:
                value, path = importlib.import_module(f"{path}.{part}"), f"{path}.{part}"
                continue
            except ModuleNotFoundError as error:
                if error.name != f"{path}.{part}":
                    raise  # a missing dependency, not a missing name
        return f"{path} has no {part!r}"
    return None


def _paragraphs(runs: Runs) -> list[str]:
    """The prose of a page, one paragraph (or list item) per string, on one line."""
    return [
        " ".join(block.split())
        for is_code, text in runs
        if not is_code
        for block in PARAGRAPH_BREAK.split(text)
        if block.strip()
    ]


def _named_types(paragraph: str) -> list[tuple[int, str]]:
    """(offset, name) of each rope type a prose paragraph names in backticks (rule 2)."""
    triggers = [match.start() for match in TRIGGER.finditer(paragraph)]
    return [
        (match.start(), match[1])
        for match in BACKTICKED_WORD.finditer(paragraph)
        if match[1] not in PARAMETERS
        and match[1] != "posenc"
        and not TRIGGER.fullmatch(match[1])
        and any(abs(match.start() - trigger) <= WINDOW for trigger in triggers)
    ]


def _sentences(paragraph: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each sentence of a paragraph."""
    spans, start = [], 0
    for end in SENTENCE_END.finditer(paragraph):
        spans.append((start, end.start(), paragraph[start : end.start()]))
        start = end.end()
    return spans + [(start, len(paragraph), paragraph[start:])]


def problems(pages: dict[str, Runs]) -> list[str]:
    """Every rule broken on ``pages``, one line each, naming the page."""
    found: list[str] = []
    lacking: set[str] = set()  # types some page says posenc lacks
    named: list[tuple[str, str, str]] = []  # (page, type, where)
    for page, runs in pages.items():
        text = "".join(run for _, run in runs)
        for match in REFERENCE.finditer(text):
            why = unresolved(match[1])
            if why:
                found.append(f"{page}: `posenc{match[1]}` is not in posenc ({why})")
        for match in FROM_IMPORT.finditer(text):
            for name in (item.split()[0] for item in match[2].split(",") if item.split()):
                why = unresolved(f"{match[1]}.{name}")
                if why:
                    found.append(f"{page}: `from posenc{match[1]} import {name}` imports nothing ({why})")
        named += [(page, match[1], match[0]) for match in CODE_TYPE.finditer(text)]
        for paragraph in _paragraphs(runs):
            types_here = _named_types(paragraph)
            for start, end, sentence in _sentences(paragraph):
                in_sentence = [name for offset, name in types_here if start <= offset < end]
                if not (POSENC.search(sentence) and NEGATION.search(sentence)):
                    continue
                lacking.update(name for _, name in types_here if name not in conventions.ROPE_TYPES)
                if SUPPORT.search(sentence):
                    found += [
                        f"{page}: says posenc does not have `{name}`, but posenc.conventions.ROPE_TYPES "
                        f"has it: {sentence!r}"
                        for name in in_sentence
                        if name in conventions.ROPE_TYPES
                    ]
            named += [(page, name, paragraph) for _, name in types_here]
    for page, name, where in named:
        if name not in conventions.ROPE_TYPES and name not in lacking:
            found.append(
                f"{page}: `{name}` is named as a rope_scaling type, but posenc.conventions.ROPE_TYPES "
                f"does not have it and no page says posenc lacks it: {where[:300]!r}"
            )
    return found


# --- the pages -------------------------------------------------------------------------------


def test_pages_name_only_what_posenc_has():
    pages = site_pages()
    assert "docs/conventions.md" in pages and any(page.endswith(".ipynb") for page in pages)
    assert not (found := problems(pages)), "\n".join(found)


# --- the rules, on sentences written to break them ----------------------------------------------


def check(markdown: str) -> list[str]:
    return problems({"page.md": markdown_runs(markdown)})


def test_the_sentence_that_denied_longrope_is_caught():
    # docs/conventions.md said this while posenc.conventions.ROPE_TYPES had "longrope".
    assert "longrope" in conventions.ROPE_TYPES
    sentence = (
        "- **LLaMA, Hugging Face**: `LlamaRotaryEmbedding` and `apply_rotary_pos_emb` (`rotate_half`).\n"
        "  The base is `rope_theta`; Llama 3 checkpoints set it to 500000. transformers 5.24.0 also lists\n"
        "  `longrope` and `proportional` among its `ROPE_INIT_FUNCTIONS`; posenc reproduces the four named\n"
        "  in the table, not those two.\n"
    )
    found = check(sentence)
    assert len(found) == 1 and "says posenc does not have `longrope`" in found[0], found


@pytest.mark.parametrize(
    "markdown",
    [
        # a type posenc lacks, said so in its own sentence of the paragraph
        "transformers lists `longrope` and `proportional` in `ROPE_INIT_FUNCTIONS`; posenc reproduces `longrope`. "
        "posenc has no function for `proportional`.",
        "transformers' `ROPE_INIT_FUNCTIONS` also has `proportional`. It turns a share of the pairs; posenc has no "
        "function for it.",
        # parameters are not types; files and addresses are not references
        "Its `rope_scaling` takes `factor`, `beta_fast` and `mscale`; see [the PDF](../posenc.pdf) or "
        "https://posenc.github.io/latest/.",
        "```python\nfrom posenc import rope, sinusoidal as s\nposenc.conventions.ROPE_TYPES\n"
        'posenc.rope_scaling_frequencies(64, {"rope_type": "yarn", "factor": 4.0})\n```\n',
    ],
)
def test_what_posenc_has_passes(markdown):
    assert check(markdown) == []


@pytest.mark.parametrize(
    ("markdown", "words"),
    [
        ("Call `posenc.no_such_function` first.", "`posenc.no_such_function` is not in posenc (posenc has no"),
        ("```python\nposenc.conventions.NO_SUCH\n```\n", "posenc.conventions has no 'NO_SUCH'"),
        ("```python\nimport posenc.no_such_module\n```\n", "posenc has no 'no_such_module'"),
        ("```python\nfrom posenc import rope, no_such_name\n```\n", "import no_such_name` imports nothing"),
        ('```python\nposenc.rope_scaling_frequencies(64, {"rope_type": "yarn2"})\n```\n', "`yarn2` is named"),
        ("Set `rope_type` to `llama4` for Llama 4.", "`llama4` is named as a rope_scaling type"),
        ("posenc does not implement the `dynamic` `rope_type`.", "says posenc does not have `dynamic`"),
        (
            "With `rope_scaling` type `yarn`, posenc doesn't reproduce the attention factor.",
            "says posenc does not have `yarn`",
        ),
    ],
)
def test_a_name_posenc_lacks_is_caught(markdown, words):
    found = check(markdown)
    assert len(found) == 1 and words in found[0], found


def test_a_wrong_sentence_in_a_copy_of_a_real_page_is_caught(tmp_path):
    copy = tmp_path / "conventions.md"
    real = (DOCS / "conventions.md").read_text(encoding="utf-8")
    copy.write_text(
        real.replace(
            "\n## rope_scaling:",
            "\nposenc does not support the `longrope` `rope_type`; "
            "see `posenc.longrope_frequencis`.\n\n## rope_scaling:",
            1,
        ),
        encoding="utf-8",
    )
    before = set(problems({"conventions.md": markdown_runs(real)}))
    after = set(problems({"conventions.md": markdown_runs(copy.read_text(encoding="utf-8"))})) - before
    assert len(after) == 2, after
    assert any("says posenc does not have `longrope`" in line for line in after)
    assert any("`posenc.longrope_frequencis` is not in posenc" in line for line in after)


def test_the_peer_versions_the_conventions_page_names_are_the_pinned_ones():
    """The paragraph above the list of peer tests names each library's version; each must be the one
    the peers' requirements pin, so an upgrade of a peer cannot leave the page naming the old one."""
    pins = {}
    for name in ("requirements-peers.txt", "requirements-peers-nodeps.txt"):
        for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
            package, _, version = line.partition("==")
            if version and not line.startswith("#"):
                pins[package.strip().lower()] = version.strip()
    page = (ROOT / "docs" / "conventions.md").read_text(encoding="utf-8")
    paragraph = page.partition("## What the peer tests compare")[2].split("\n\n")[1]
    named = dict(
        re.findall(r"\b(x-transformers|transformers|torchscale|torch|timm|vit-pytorch)\s+(\d+(?:\.\d+)+)", paragraph)
    )
    assert {"transformers", "torch", "torchscale", "x-transformers", "timm", "vit-pytorch"} <= set(named), named
    assert {package: pins.get(package) for package in named} == named
