"""The References page: every citation on the site resolves, and every entry is well-formed.

Reads the Markdown sources only (no build, no browser). A citation is a link to
``references.md#KEY`` from any page, notebook or text a hook generates; each must name the
anchor ``{ #KEY }`` of an entry. An entry is a ``### Title { #KEY }`` heading, a paragraph naming
the authors, venue and year, at least one paragraph saying what the site takes from the work, and
one BibTeX record whose key is KEY and whose year the first paragraph states.
"""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
REFERENCES = ROOT / "docs" / "references.md"
# Everything that can put a citation on a page: the pages, the notebooks, and the code that
# generates page text (hooks, derivation statements and proofs, figure captions).
CITING_SOURCES = ("docs/**/*.md", "docs/**/*.ipynb", "hooks/**/*.py", "posenc/*.py", "figures_src/*.py")

CITATION = re.compile(r"references\.md#([\w-]+)")
ENTRY_HEADING = re.compile(r"^### (?P<title>.+?) \{ #(?P<key>[a-z0-9-]+) \}$", re.M)
ANY_ANCHOR = re.compile(r"\{ #([\w-]+) \}")
LOCAL_LINK = re.compile(r"\]\(#([\w-]+)\)")
BIBTEX = re.compile(r"^```bibtex\n(?P<record>.*?)^```$", re.S | re.M)
RECORD_HEAD = re.compile(r"^@(?P<type>[a-z]+)\{(?P<key>[^,\s]+),\n")
FIELD = re.compile(r"^  (?P<name>[A-Za-z]+)\s*=\s*", re.M)
YEAR = re.compile(r"\b(?:19|20)\d\d\b")
REQUIRED_FIELDS = {"author", "title", "year", "url"}


def citations(sources: dict[str, str]) -> dict[str, set[str]]:
    """Cited key -> the sources that cite it."""
    cited: dict[str, set[str]] = {}
    for name, text in sources.items():
        for key in CITATION.findall(text):
            cited.setdefault(key, set()).add(name)
    return cited


def citing_sources() -> dict[str, str]:
    files = sorted({path for pattern in CITING_SOURCES for path in ROOT.glob(pattern)})
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in files}


def unresolved(sources: dict[str, str], references: str) -> dict[str, set[str]]:
    """Citations whose key is not an anchor of the references page."""
    anchors = set(ANY_ANCHOR.findall(references))
    return {key: where for key, where in citations(sources).items() if key not in anchors}


def _braces_balance(text: str) -> bool:
    depth = 0
    for char in text.replace("\\{", "").replace("\\}", ""):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def entry_problems(references: str) -> list[str]:
    """Everything that keeps the page from following the entry format described above."""
    problems = []
    headings = list(ENTRY_HEADING.finditer(references))
    keys = [h["key"] for h in headings]
    problems += [f"key {key!r} is used by two entries" for key in sorted({k for k in keys if keys.count(k) > 1})]
    stray = [line for line in references.splitlines() if line.startswith("### ") and not ENTRY_HEADING.match(line)]
    problems += [f"entry heading without a {{ #key }} anchor: {line!r}" for line in stray]
    group_ends = [m.start() for m in re.finditer(r"^## ", references, re.M)] + [len(references)]
    last_year: dict[int, int] = {}
    for index, heading in enumerate(headings):
        key = heading["key"]
        end = min([h.start() for h in headings[index + 1 :]] + [e for e in group_ends if e > heading.start()])
        body = references[heading.end() : end]
        records = list(BIBTEX.finditer(body))
        if len(records) != 1:
            problems.append(f"{key}: {len(records)} BibTeX blocks, expected 1")
            continue
        prose = [p.strip() for p in body[: records[0].start()].split("\n\n") if p.strip()]
        if len(prose) < 2:
            problems.append(f"{key}: needs a paragraph of authors, venue and year and one saying what it is cited for")
            continue
        record = records[0]["record"]
        head = RECORD_HEAD.match(record)
        if head is None or head["key"] != key:
            problems.append(f"{key}: the BibTeX record must open with @type{{{key},")
            continue
        if not record.rstrip().endswith("}") or not _braces_balance(record):
            problems.append(f"{key}: unbalanced braces in the BibTeX record")
        fields = FIELD.findall(record)
        missing = REQUIRED_FIELDS - set(fields)
        if missing:
            problems.append(f"{key}: BibTeX record lacks {', '.join(sorted(missing))}")
        repeated = sorted({f for f in fields if fields.count(f) > 1})
        if repeated:
            problems.append(f"{key}: BibTeX fields given twice: {', '.join(repeated)}")
        year = re.search(r"^  year\s*=\s*\{(\d{4})\},?$", record, re.M)
        if year is None:
            problems.append(f"{key}: the BibTeX year must be four digits in braces")
            continue
        if year[1] not in prose[0]:
            problems.append(f"{key}: the first paragraph does not state the BibTeX year {year[1]}")
        first = YEAR.search(prose[0])
        group = sum(1 for e in group_ends if e <= heading.start())
        if first is not None:
            if int(first[0]) < last_year.get(group, 0):
                problems.append(f"{key}: out of order (oldest first within each group)")
            last_year[group] = int(first[0])
    return problems


# --- the site's own sources -----------------------------------------------------------------


def test_every_citation_names_an_entry_of_the_references_page():
    missing = unresolved(citing_sources(), REFERENCES.read_text(encoding="utf-8"))
    assert not missing, "cited but not on the References page: " + "; ".join(
        f"{key} (in {', '.join(sorted(where))})" for key, where in sorted(missing.items())
    )


def test_the_site_cites_the_references_page_at_all():
    """Guards the scan itself: if the pattern or the globs broke, the test above would pass empty."""
    cited = citations(citing_sources())
    assert {"vaswani2017", "su2021", "press2021"} <= set(cited)


def test_every_entry_of_the_references_page_is_well_formed():
    assert entry_problems(REFERENCES.read_text(encoding="utf-8")) == []


def test_links_inside_the_references_page_resolve():
    text = REFERENCES.read_text(encoding="utf-8")
    anchors = set(ANY_ANCHOR.findall(text))
    assert set(LOCAL_LINK.findall(text)) <= anchors


# --- the checks themselves catch what they are for ----------------------------------------------

GOOD_ENTRY = """## Papers { #papers }

### A Paper { #doe2020 }

Jane Doe. A venue, 2020.

What the site takes from it.

```bibtex
@article{doe2020,
  author  = {Doe, Jane},
  title   = {A Paper},
  year    = {2020},
  url     = {https://example.org/}
}
```
"""


def test_a_citation_of_a_missing_key_is_reported():
    sources = {"docs/page.md": "as [Doe (2020)](references.md#doe2020) and [X](../references.md#nobody2024) show"}
    assert unresolved(sources, GOOD_ENTRY) == {"nobody2024": {"docs/page.md"}}


def test_a_well_formed_entry_passes_and_each_defect_is_named():
    assert entry_problems(GOOD_ENTRY) == []
    defects = {
        "@article{doe2020,": ("@article{doe,", "must open with @type{doe2020,"),
        "  url     = {https://example.org/}\n": ("", "lacks url"),
        "Jane Doe. A venue, 2020.": ("Jane Doe. A venue, 2021.", "does not state the BibTeX year 2020"),
        "\nWhat the site takes from it.\n": ("", "needs a paragraph"),
        "  title   = {A Paper},": ("  title   = {A {Paper},", "unbalanced braces"),
        "### A Paper { #doe2020 }": ("### A Paper", "without a { #key } anchor"),
    }
    for old, (new, words) in defects.items():
        problems = entry_problems(GOOD_ENTRY.replace(old, new))
        assert any(words in p for p in problems), (old, problems)
    older = GOOD_ENTRY.replace("2020", "2019").replace("doe2019", "roe2019").replace("Doe", "Roe")
    assert any("out of order" in p for p in entry_problems(GOOD_ENTRY + "\n" + older.split("\n", 2)[2]))
