"""The References page: every citation on the site resolves, every entry is well-formed, and each
formatted entry says what its BibTeX record says.

Reads the Markdown sources and the page as the hook writes it (no build, no browser). A citation is
a link to ``references.md#KEY`` from any page, notebook or text a hook generates; each must name an
entry's anchor. In the source an entry is its BibTeX record alone (a fenced ``bibtex`` block)
followed by at least one paragraph saying what the site takes from the work; the hook writes the
entry's heading ``### TITLE { #KEY }`` and its formatted entry from the record, and folds the
record under "BibTeX". The checks read the records with this file's own simple reading, not the
hook's parser, so a parser that dropped or invented a field would be caught.
"""

from __future__ import annotations

import pathlib
import re
import unicodedata

import pytest
from mkdocs.exceptions import PluginError
from mkdocs.utils.meta import get_data
from site_build import citations

from site_build import paths
from support.hooks import fake_page, markers_hook

ROOT = pathlib.Path(__file__).resolve().parents[2]
REFERENCES = ROOT / "docs" / "references.md"
# Everything that can put a citation on a page: the pages, the notebooks, and the code that
# generates page text (hooks, derivation statements and proofs, figure captions).
CITING_SOURCES = ("docs/**/*.md", "docs/**/*.ipynb", "hooks/**/*.py", "posenc/*.py", "figures_src/*.py")

CITATION = re.compile(r"references\.md#([\w-]+)")
ENTRY_HEADING = re.compile(r"^### (?P<title>.+?) \{ #(?P<key>[A-Za-z0-9_-]+) \}$", re.M)
ANY_ANCHOR = re.compile(r"\{ #([\w-]+) \}")
LOCAL_LINK = re.compile(r"\]\(#([\w-]+)\)")
BIBTEX = re.compile(r"^```bibtex\n(?P<record>.*?)^```$", re.S | re.M)
RECORD_HEAD = re.compile(r"^@(?P<type>[a-z]+)\{(?P<key>[^,\s]+),\n")
FIELD = re.compile(r"^  (?P<name>[A-Za-z]+)\s*=\s*", re.M)
YEAR = re.compile(r"\b(?:19|20)\d\d\b")
REQUIRED_FIELDS = {"author", "title", "year", "url"}
LINK = re.compile(r"\]\((?P<href>[^)\s]+)\)")
# The list the build writes under an entry, and a sentence of an entry's own text that types one.
CITED_ON = re.compile(r"^Cited on: (?P<pages>.+)\n\{ \.posenc-cited-on \}$", re.M)
TITLED_LINK = re.compile(r"\[(?P<title>[^]]+)\]\((?P<href>[^)\s]+)\)")
TYPED_CITED_ON = re.compile(r"\bcited (?:on|in)\b", re.I)


def citations_in(sources: dict[str, str]) -> dict[str, set[str]]:
    """Cited key -> the sources that cite it."""
    cited: dict[str, set[str]] = {}
    for name, text in sources.items():
        for key in CITATION.findall(text):
            cited.setdefault(key, set()).add(name)
    return cited


def citing_sources() -> dict[str, str]:
    files = sorted({path for pattern in CITING_SOURCES for path in ROOT.glob(pattern)})
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in files}


def citing_pages(docs: pathlib.Path) -> dict[str, dict[str, str]]:
    """Cited key -> {docs path: title} of every Markdown page under ``docs`` that cites it (this
    file's own reading: the citation pattern above, each title from the page's front matter)."""
    cited: dict[str, dict[str, str]] = {}
    for path in sorted(docs.rglob("*.md")):
        src = path.relative_to(docs).as_posix()
        if src == "references.md":
            continue
        text = path.read_text(encoding="utf-8")
        for key in CITATION.findall(text):
            cited.setdefault(key, {})[src] = get_data(text)[1]["title"]
    return cited


def written_page(source: str) -> str:
    """The References page's Markdown as the hooks hand it to MkDocs."""
    markdown, meta = get_data(source)
    page = fake_page("references.md")
    page.meta = meta
    return markers_hook.on_page_markdown(markdown, page, {"site_url": "https://example.org/"}, None)


def unresolved(sources: dict[str, str], page: str) -> dict[str, set[str]]:
    """Citations whose key is not an anchor of the written References page."""
    anchors = set(ANY_ANCHOR.findall(page))
    return {key: where for key, where in citations_in(sources).items() if key not in anchors}


def _braces_balance(text: str) -> bool:
    depth = 0
    for char in text.replace("\\{", "").replace("\\}", ""):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def field_value(record: str, name: str) -> str | None:
    """A field's value as written, its outer braces removed (this test's own reading)."""
    match = re.search(rf"^  {name}\s*=\s*", record, re.M | re.I)
    if match is None:
        return None
    rest = record[match.end() :]
    if not rest.startswith("{"):
        return re.match(r"\w+", rest)[0]
    depth = 0
    for index, char in enumerate(rest):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            return rest[1:index]
    raise AssertionError(f"unbalanced field {name}")


def skeleton(text: str) -> str:
    """Letters and digits only, accents and LaTeX commands dropped: "Fran{\\c{c}}ois" and "François" agree."""
    text = re.sub(r"\\url\{[^}]*\}", "", text)
    text = re.sub(r"\\([A-Za-z]+|.)", lambda m: "" if m[1] in "'`^\"~=.cvuHrk" else m[1], text)
    text = unicodedata.normalize("NFKD", text)
    return "".join(char for char in text if char.isascii() and char.isalnum()).lower()


def order_year(record: str) -> int:
    """The year a work first appeared, as the page orders it: its year, or an earlier one its note names."""
    years = [int(field_value(record, "year"))] + [int(y) for y in YEAR.findall(field_value(record, "note") or "")]
    return min(years)


def entry_problems(source: str) -> list[str]:
    """Everything that keeps the page's source from following the entry format described above."""
    problems = []
    problems += [f"hand-written entry heading: {line!r}" for line in source.splitlines() if line.startswith("### ")]
    records = list(BIBTEX.finditer(source))
    keys = [RECORD_HEAD.match(m["record"])["key"] if RECORD_HEAD.match(m["record"]) else None for m in records]
    problems += [f"key {key!r} is used by two records" for key in sorted({k for k in keys if k and keys.count(k) > 1})]
    group_starts = [m.start() for m in re.finditer(r"^## ", source, re.M)]
    last_year: dict[int, int] = {}
    for index, match in enumerate(records):
        record = match["record"]
        head = RECORD_HEAD.match(record)
        if head is None:
            problems.append(f"record {index + 1} does not open with @type{{key,")
            continue
        key = head["key"]
        following = [m.start() for m in records[index + 1 :]] + [g for g in group_starts if g > match.end()]
        prose = source[match.end() : min(following, default=len(source))].strip()
        if not prose:
            problems.append(f"{key}: needs a paragraph saying what the site takes from it")
        if not record.rstrip().endswith("}") or not _braces_balance(record):
            problems.append(f"{key}: unbalanced braces in the BibTeX record")
            continue
        fields = FIELD.findall(record)
        missing = REQUIRED_FIELDS - set(fields)
        if missing:
            problems.append(f"{key}: BibTeX record lacks {', '.join(sorted(missing))}")
        repeated = sorted({f for f in fields if fields.count(f) > 1})
        if repeated:
            problems.append(f"{key}: BibTeX fields given twice: {', '.join(repeated)}")
        if not re.search(r"^  year\s*=\s*\{(\d{4})\},?$", record, re.M):
            problems.append(f"{key}: the BibTeX year must be four digits in braces")
            continue
        group = sum(1 for start in group_starts if start <= match.start())
        year = order_year(record)
        if year < last_year.get(group, 0):
            problems.append(f"{key}: out of order (oldest first within each group)")
        last_year[group] = year
    return problems


def written_entries(page: str) -> dict[str, dict[str, str]]:
    """Each written entry by key: its heading's title, its formatted paragraph and its folded record."""
    entries = {}
    headings = list(ENTRY_HEADING.finditer(page))
    for index, heading in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else len(page)
        body = page[heading.end() : end]
        formatted = re.search(r"^(?P<text>\S.*)\n\{ \.posenc-reference \}$", body, re.M)
        folded = re.search(
            r'<details class="posenc-bibtex" markdown>\n<summary>BibTeX</summary>\n\n```bibtex\n(?P<record>.*?)\n```'
            r"\n\n</details>",
            body,
            re.S,
        )
        entries[heading["key"]] = {
            "title": heading["title"],
            "formatted": formatted["text"] if formatted else "",
            "record": folded["record"] if folded else "",
        }
    return entries


def listed_pages(page: str) -> dict[str, dict[str, str]]:
    """Key -> {linked path: link text} of the "Cited on" list the hook wrote under each entry."""
    listed = {}
    headings = list(ENTRY_HEADING.finditer(page))
    for index, heading in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else len(page)
        found = CITED_ON.findall(page[heading.end() : end])
        assert len(found) <= 1, f"{heading['key']}: more than one list of citing pages"
        if found:
            listed[heading["key"]] = {m["href"]: m["title"] for m in TITLED_LINK.finditer(found[0])}
    return listed


def typed_citation_notes(source: str) -> list[str]:
    """The keys of the entries whose own text says where the site cites the work (the build lists that)."""
    records = list(BIBTEX.finditer(source))
    typed = []
    for index, match in enumerate(records):
        end = records[index + 1].start() if index + 1 < len(records) else len(source)
        heading = re.search(r"^#", source[match.end() : end], re.M)
        prose = source[match.end() : match.end() + heading.start() if heading else end]
        if TYPED_CITED_ON.search(prose):
            typed.append(RECORD_HEAD.match(match["record"])["key"])
    return typed


def _one_group(name: str) -> bool:
    """Whether ``name`` is one braced group (an entity's name, kept whole)."""
    depth = 0
    for index, char in enumerate(name):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            return index == len(name) - 1 and index > 0
    return False


def formatted_disagreements(record: str, formatted: str) -> list[str]:
    """What a formatted entry says that its record does not, or leaves out of what it must say."""
    key = RECORD_HEAD.match(record)["key"]
    year = field_value(record, "year")
    problems = []
    shown = skeleton(re.sub(r"\]\([^)]*\)", "]", formatted))  # the text, without link targets
    if skeleton(field_value(record, "title")) not in shown:
        problems.append(f"{key}: the title is not the record's")
    date = re.search(rf"\. (?:[A-Z][a-z]+ )?{year}\. ", formatted)
    if date is None:
        return problems + [f"{key}: the authors are not followed by the record's year {year}"]
    authors = formatted[: date.start()]
    names = [name.strip() for name in re.split(r"\s+and\s+", " ".join(field_value(record, "author").split()))]
    listed = [name for name in names if name != "others"]
    named = listed if len(listed) <= citations.MAX_NAMED_AUTHORS else listed[:3]
    for name in named:
        family = name[1:-1] if _one_group(name) else name.split(",")[0]
        if skeleton(family) not in skeleton(authors):
            problems.append(f"{key}: author {name!r} is missing")
    if authors.endswith("et al") != (len(named) < len(names)):
        problems.append(f"{key}: 'et al.' does not match the record's author list")
    allowed = {field_value(record, "url")} | set(re.findall(r"\\url\{([^}]*)\}", record))
    if field_value(record, "doi"):
        allowed.add(f"https://doi.org/{field_value(record, 'doi')}")
    links = set(LINK.findall(formatted)) - set(re.findall(r"\[\*[^]]*\*\]\(([^)]+)\)", formatted))
    if not links <= allowed:
        problems.append(f"{key}: links to {sorted(links - allowed)}, which the record does not name")
    if field_value(record, "url") not in links:
        problems.append(f"{key}: does not link the record's url")
    return problems


# --- the site's own sources -----------------------------------------------------------------


def test_every_citation_names_an_entry_of_the_references_page():
    missing = unresolved(citing_sources(), written_page(REFERENCES.read_text(encoding="utf-8")))
    assert not missing, "cited but not on the References page: " + "; ".join(
        f"{key} (in {', '.join(sorted(where))})" for key, where in sorted(missing.items())
    )


def test_the_site_cites_the_references_page_at_all():
    """Guards the scan itself: if the pattern or the globs broke, the test above would pass empty."""
    cited = citations_in(citing_sources())
    assert {"vaswani2017", "su2021", "press2021"} <= set(cited)


def test_every_entry_of_the_references_page_is_well_formed():
    assert entry_problems(REFERENCES.read_text(encoding="utf-8")) == []


def test_every_formatted_entry_says_what_its_record_says():
    """One entry per record, in the record's order; its heading, its formatted entry and the record
    folded under it all come from that record, which is shown exactly as written."""
    source = REFERENCES.read_text(encoding="utf-8")
    records = [m["record"].rstrip("\n") for m in BIBTEX.finditer(source)]
    entries = written_entries(written_page(source))
    assert len(records) > 50 and list(entries) == [RECORD_HEAD.match(r)["key"] for r in records]
    problems = []
    for record in records:
        entry = entries[RECORD_HEAD.match(record)["key"]]
        assert entry["record"] == record, "the folded record is not the record as written"
        heading = field_value(record, "shorttitle") or field_value(record, "title")
        if skeleton(entry["title"]) != skeleton(heading):
            problems.append(f"heading {entry['title']!r} is not the record's title")
        problems += formatted_disagreements(record, entry["formatted"])
    assert problems == []


def test_each_entry_lists_exactly_the_pages_that_cite_it():
    """The list under each entry is the pages whose Markdown cites it, each linked by its title: a
    citation added to or removed from a page changes the list, so it cannot go stale."""
    cited = citing_pages(ROOT / "docs")
    keys = [RECORD_HEAD.match(m["record"])["key"] for m in BIBTEX.finditer(REFERENCES.read_text(encoding="utf-8"))]
    listed = listed_pages(written_page(REFERENCES.read_text(encoding="utf-8")))
    assert {key: cited[key] for key in keys if key in cited} == listed
    assert {"shaw2018", "haviv2022"} <= set(listed)  # the two lists the typed notes had left short


def test_no_entry_types_where_it_is_cited():
    assert typed_citation_notes(REFERENCES.read_text(encoding="utf-8")) == []


def test_links_inside_the_references_page_resolve():
    page = written_page(REFERENCES.read_text(encoding="utf-8"))
    anchors = set(ANY_ANCHOR.findall(page))
    assert set(LOCAL_LINK.findall(page)) <= anchors


# --- the checks themselves catch what they are for ----------------------------------------------

GOOD_ENTRY = """---
title: T
bibliography: true
---

## Papers { #papers }

```bibtex
@article{doe2020,
  author  = {Doe, Jane and M{\\"u}ller, Hans},
  title   = {A Paper},
  journal = {A Journal},
  year    = {2020},
  url     = {https://example.org/}
}
```

What the site takes from it.
"""


def test_a_citation_of_a_missing_key_is_reported():
    sources = {"docs/page.md": "as [Doe (2020)](references.md#doe2020) and [X](../references.md#nobody2024) show"}
    assert unresolved(sources, written_page(GOOD_ENTRY)) == {"nobody2024": {"docs/page.md"}}


def test_the_list_of_citing_pages_follows_the_pages(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    (docs / "deep").mkdir(parents=True)
    monkeypatch.setattr(paths, "DOCS", docs)
    (docs / "references.md").write_text(GOOD_ENTRY, encoding="utf-8")
    (docs / "b.md").write_text("---\ntitle: B page\n---\n\nSee [Doe](references.md#doe2020).\n", encoding="utf-8")
    assert listed_pages(written_page(GOOD_ENTRY)) == {"doe2020": {"b.md": "B page"}} == citing_pages(docs)
    # A new citing page, in a folder, is listed (by title, linked from the References page's place).
    (docs / "deep" / "a.md").write_text("---\ntitle: A page\n---\n\n[Doe](../references.md#doe2020)\n")
    assert listed_pages(written_page(GOOD_ENTRY)) == {"doe2020": {"deep/a.md": "A page", "b.md": "B page"}}
    # A page that no longer cites it is dropped, and with no citing page there is no list.
    (docs / "b.md").write_text("---\ntitle: B page\n---\n\nNo citation.\n", encoding="utf-8")
    (docs / "deep" / "a.md").unlink()
    assert listed_pages(written_page(GOOD_ENTRY)) == {} == citing_pages(docs)


def test_a_typed_citation_note_is_found():
    assert typed_citation_notes(GOOD_ENTRY) == []
    typed = GOOD_ENTRY.replace("What the site takes from it.", "What the site takes. Cited on the [B page](b.md).")
    assert typed_citation_notes(typed) == ["doe2020"]
    assert typed_citation_notes(GOOD_ENTRY.replace("takes from it.", "takes; cited in [B](b.md).")) == ["doe2020"]


def test_a_well_formed_entry_passes_and_each_defect_is_named():
    assert entry_problems(GOOD_ENTRY) == []
    defects = {
        "@article{doe2020,": ("@article doe2020,", "does not open with @type{key,"),
        "  url     = {https://example.org/}\n": ("", "lacks url"),
        "\nWhat the site takes from it.\n": ("", "needs a paragraph"),
        "  title   = {A Paper},": ("  title   = {A {Paper},", "unbalanced braces"),
        "## Papers { #papers }\n": (
            "## Papers { #papers }\n\n### A Paper { #doe2020 }\n",
            "hand-written entry heading",
        ),
        "  year    = {2020},": ("  year    = {2020},\n  year    = {2021},", "given twice"),
    }
    for old, (new, words) in defects.items():
        assert old in GOOD_ENTRY, old
        problems = entry_problems(GOOD_ENTRY.replace(old, new))
        assert any(words in p for p in problems), (old, problems)
    older = GOOD_ENTRY.split("## Papers { #papers }\n", 1)[1].replace("2020", "2019").replace("doe2019", "roe2019")
    assert any("out of order" in p for p in entry_problems(GOOD_ENTRY + older))


def test_the_written_entry_reads_its_record():
    (entry,) = written_entries(written_page(GOOD_ENTRY)).values()
    assert entry["title"] == "A Paper"
    assert entry["formatted"] == (
        "Jane Doe and Hans Müller. 2020. *A Paper*. A Journal. [example.org](https://example.org/)"
    )
    assert entry["record"] == BIBTEX.search(GOOD_ENTRY)["record"].rstrip("\n")
    assert formatted_disagreements(entry["record"], entry["formatted"]) == []


def test_a_formatted_entry_that_drifts_from_its_record_is_caught():
    (entry,) = written_entries(written_page(GOOD_ENTRY)).values()
    record, formatted = entry["record"], entry["formatted"]
    drifts = {
        "*A Paper*": ("*A Different Paper*", "title is not the record's"),
        "Hans Müller": ("Hans Meier", "author 'M{\\\\\"u}ller, Hans' is missing"),
        " 2020.": (" 2021.", "not followed by the record's year"),
        "(https://example.org/)": ("(https://example.com/)", "which the record does not name"),
        "Jane Doe and Hans Müller.": ("Jane Doe, Hans Müller et al.", "'et al.' does not match"),
    }
    for old, (new, words) in drifts.items():
        assert old in formatted, old
        problems = formatted_disagreements(record, formatted.replace(old, new))
        assert any(words in p for p in problems), (old, problems)


def test_bad_records_and_entries_stop_the_build_with_a_named_reason():
    cases = {
        "  title   = {A Paper},": ("  title   = {A \\textbf{Paper}},", r"doe2020.*unknown LaTeX command \\textbf"),
        "  year    = {2020},": ("  year    = {2020},\n  Year    = {2021},", r"doe2020.*'year' given twice"),
        "  journal = {A Journal},": ("  journal = {A {Journal},", r"doe2020.*never closed"),
        "@article{doe2020,": ("@book{doe2020,", r"doe2020.*@book is not one of"),
        '  author  = {Doe, Jane and M{\\"u}ller, Hans},\n': ("", r"doe2020.*lacks author"),
        "\nWhat the site takes from it.\n": ("", r"references\.md: entry 'doe2020' needs a paragraph"),
        "## Papers { #papers }\n": ("## Papers { #papers }\n\n### A Paper\n", r"written from its record"),
    }
    for old, (new, message) in cases.items():
        assert old in GOOD_ENTRY, old
        with pytest.raises(PluginError, match=message):
            written_page(GOOD_ENTRY.replace(old, new))
    twice = GOOD_ENTRY + GOOD_ENTRY.split("## Papers { #papers }\n", 1)[1]
    with pytest.raises(PluginError, match="two entries have the key 'doe2020'"):
        written_page(twice)


def test_names_dates_pages_and_latex_read_as_a_reader_expects():
    record = citations.parse_record(
        "@inproceedings{x,\n"
        "  author = {{The Lab} and van der Walt, St{\\'e}fan J. and Kaiser, {\\L}ukasz and others},\n"
        "  title = {{BERT} -- a {\\c{c}}ase},\n  booktitle = {Proc.\\ of X},\n  pages = {5--9},\n"
        "  year = {2021},\n  month = may,\n  doi = {10.1/x},\n  url = {https://doi.org/10.1/x}\n}"
    )
    assert citations.authors_text(record) == "The Lab, Stéfan J. van der Walt, Łukasz Kaiser et al."
    assert citations.record_date(record) == "May 2021"
    assert citations.formatted_entry(record) == (
        "The Lab, Stéfan J. van der Walt, Łukasz Kaiser et al. May 2021. *BERT – a çase*. In Proc. of X, "
        "pages 5–9. [doi:10.1/x](https://doi.org/10.1/x)"
    )
    many = citations.parse_record(
        "@misc{y,\n  author = {"
        + " and ".join(f"P{n}, Q" for n in range(11))
        + "},\n  title = {T},\n  year = {2020}\n}"
    )
    assert citations.authors_text(many) == "Q P0, Q P1, Q P2 et al."
