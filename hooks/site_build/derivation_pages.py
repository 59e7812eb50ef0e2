"""The derivations on the site: ``{{ ref: ID }}`` and ``{{ eq: ID }}``, each derivation's own page
``derivations/ID/`` (statement, proof steps, SymPy source and BibTeX) and the index of them all.

The pages say "proved", so they are made only from a derivation report (``make verify``) that is
present, newer than posenc's sources and proves every ID. The report also holds all the pages show
of each derivation, in the index's order (``posenc.site.verify.shown``): the build reads the
registry there, without importing the proofs, which import SymPy (a second of every build, and
of every print of the PDF).
"""

from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass

import yaml
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

import posenc
from posenc.site.registry import GENERAL, Stated

from . import citations, paths

# The class of a derivation page's SymPy source: its heading and the block under it.
SOURCE_CLASS = "posenc-derivation-source"
INDEX_SRC = "derivations/index.md"


@dataclass(frozen=True)
class Shown(Stated):
    """A derivation as the report gives it: what its page, its index line and its markers show."""

    topic: str
    topic_title: str
    source_file: str  # the module that proves it, such as posenc/site/derivations/rope.py
    code: str  # the source of its proof, then of its numeric check
    checked: bool  # whether it has a numeric check


# The last report read: (its path, modification time and size) and its derivations.
_read: dict[tuple[str, int, int], dict[str, Shown]] = {}


def _derivations_in(report_path: pathlib.Path) -> dict[str, Shown]:
    """The report's derivations, in its order; a report that does not prove every one is refused."""
    status = report_path.stat()
    stamp = (str(report_path), status.st_mtime_ns, status.st_size)
    if stamp not in _read:
        report = json.loads(report_path.read_text(encoding="utf-8"))
        failed = [identifier for identifier, record in report.items() if record.get("status") != "proved"]
        if failed:
            raise PluginError(f"derivations not proved in the last `make verify`: {', '.join(failed)}")
        fields = [name for name in Shown.__dataclass_fields__ if name != "id"]
        try:
            # JSON has lists where the entry has tuples (its assumptions and steps).
            entries = {
                identifier: Shown(
                    identifier,
                    **{name: tuple(value) if isinstance(value := record[name], list) else value for name in fields},
                )
                for identifier, record in report.items()
            }
        except KeyError as error:
            raise PluginError(
                f"{report_path}: written by an older `make verify` (no {error}): run `make verify`"
            ) from error
        _read.clear()
        _read[stamp] = entries
    return _read[stamp]


def verify_report() -> dict[str, Shown]:
    """The derivations of the report ``python -m posenc.site.verify --report`` wrote; a missing or
    stale report, or one that does not prove them all, stops the build."""
    report_path = paths.VERIFY_REPORT
    if not report_path.is_file():
        raise PluginError("no derivation report: run `make verify` (or `make`) before building the site")
    sources = sorted(pathlib.Path(posenc.__file__).parent.rglob("*.py"))  # as the Makefile's LIBRARY
    if any(source.stat().st_mtime > report_path.stat().st_mtime for source in sources):
        raise PluginError("the derivation report is older than posenc's sources: run `make verify`")
    return _derivations_in(report_path)


def _current() -> dict[str, Shown]:
    """The report's derivations (checked fresh by ``verify_report`` once per build, when the
    derivation pages are made)."""
    report_path = paths.VERIFY_REPORT
    return _derivations_in(report_path) if report_path.is_file() else verify_report()


def derivations() -> list[Shown]:
    """Every derivation, in the index's order."""
    return list(_current().values())


def derivation(identifier: str) -> Shown:
    """The derivation ``identifier``; an unknown ID stops the build."""
    known = _current()
    if identifier not in known:
        raise PluginError(f"unknown derivation ID {identifier!r} (known: {', '.join(known)})")
    return known[identifier]


def derivation_src(identifier: str) -> str:
    """The generated page of derivation ``identifier``, served at ``derivations/ID/``."""
    return f"derivations/{identifier}.md"


def ref(identifier: str, page_src: str) -> str:
    """``{{ ref: ID }}``: a link to the derivation's page, titled with its title."""
    entry = derivation(identifier)
    return f'[`{identifier}`]({paths.relative(page_src, derivation_src(identifier))} "{entry.title}")'


def eq(identifier: str, page_src: str) -> str:
    """``{{ eq: ID }}``: the statement as a display equation, then its scope and a link to its proof."""
    entry = derivation(identifier)
    scope = f'<span class="posenc-scope">{entry.scope_label}</span>'
    return (
        f"\n$$\n{entry.statement}\n$$\n\n"
        f'<p class="posenc-eq-ref" markdown="span">Proved as {ref(identifier, page_src)} ({scope})</p>\n'
    )


def index_markdown(page_src: str) -> str:
    """``{{ derivations }}``, the Derivations index: a heading per topic, then one item per ID, whose ID
    link carries the anchor ``#ID`` and leads to the derivation's own page, so that ``derivations/#ID``
    leads there too. A list rather than a table: on a phone a table's narrow ID column broke the IDs in
    the middle."""
    groups: dict[str, list[str]] = {}
    titles: dict[str, str] = {}
    # verify_report refuses a missing, stale or failing report before the index claims "proved".
    for entry in verify_report().values():
        titles[entry.topic] = entry.topic_title
        status = f"proved {entry.scope_label}" if entry.scope == GENERAL else entry.scope_label
        page = paths.relative(page_src, derivation_src(entry.id))
        groups.setdefault(entry.topic, []).append(
            f"- [`{entry.id}`]({page}){{ #{entry.id} }} **{entry.title}.** {entry.summary} *Scope: {status}.*"
        )
    # Each heading's anchor is prefixed, so that it can never take an ID's anchor.
    sections = [
        f"## {titles[topic]} {{ #topic-{topic.replace('_', '-')} }}\n\n" + "\n".join(items)
        for topic, items in groups.items()
    ]
    return '<div class="posenc-derivation-index" markdown>\n\n' + "\n\n".join(sections) + "\n\n</div>\n"


def derivation_page(identifier: str, site_url: str) -> str:
    """Derivation ``identifier``'s own page: statement, scope, assumptions, proof steps, the SymPy
    code that proves it and its BibTeX record; the address its BibTeX record cites."""
    entry = derivation(identifier)
    record = citations.bibtex(entry, site_url)
    entry_text = citations.reference_block(citations.parse_record(record), own=True)
    ids = [other.id for other in derivations()]
    position = ids.index(identifier)
    front = yaml.safe_dump(
        {"title": entry.title, "description": f"posenc derivation {identifier}, proved by SymPy: {entry.title}."},
        allow_unicode=True,
        sort_keys=False,
        width=1000,
    )
    steps = "\n".join(f"{n}. {step}" for n, step in enumerate(entry.steps, 1))
    count = f"{len(entry.steps)} step{'s' if len(entry.steps) != 1 else ''}"
    if entry.scope == GENERAL:
        scope = "proved in general, for every size the assumptions allow."
    else:
        scope = f"{entry.scope_label}; other sizes are only spot-checked numerically."
    checked = ", then the numeric cross-check against the posenc NumPy functions" if entry.checked else ""
    neighbours = [
        f"[{label}: {derivation(ids[at]).title}]({ids[at]}.md)"
        for label, at in (("Previous", position - 1), ("Next", position + 1))
        if 0 <= at < len(ids)
    ]
    return (
        f"---\n{front}---\n\n"
        f"# {entry.title}\n\n"
        f"**ID** `{identifier}` · proved by SymPy at build time · "
        f"[all derivations](index.md#{identifier})\n\n"
        f"$$\n{entry.statement}\n$$\n\n"
        f"{entry.summary}\n\n"
        f"**Scope:** {scope}\n\n"
        f"**Assumptions:** {'; '.join(entry.assumptions)}.\n\n"
        f"## Proof in {count} {{ #proof }}\n\n{steps}\n\n"
        # The code is left out of search, as the figure scripts are (readers search for statements),
        # and out of the PDF, which prints what a reader reads (hooks/site_pdf.py drops the class).
        f"## SymPy source {{ #source .{SOURCE_CLASS} data-search-exclude }}\n\n"
        f'<div class="{SOURCE_CLASS}" markdown>\n\n'
        f"The proof that `python -m posenc.site.verify` runs for `{identifier}`{checked}, "
        f"from `{entry.source_file}`:\n\n```python\n{entry.code}```\n\n</div>\n\n"
        f"## Cite this derivation {{ #cite }}\n\n{entry_text}\n\n"
        f"```bibtex\n{record}\n```\n\n" + " · ".join(neighbours) + "\n"
    )


def derivation_page_files(config) -> list[File]:
    """The page of each derivation, refused if an ID would take the address of a page in docs/."""
    # The pages say "proved": refuse a missing, stale or failing report.
    identifiers = list(verify_report())
    taken = [identifier for identifier in identifiers if (paths.DOCS / derivation_src(identifier)).exists()]
    if taken:
        raise PluginError(
            f"derivation ID {taken[0]!r} would be served at the address of docs/{derivation_src(taken[0])}"
        )
    return [
        File.generated(config, derivation_src(identifier), content=derivation_page(identifier, config["site_url"]))
        for identifier in identifiers
    ]
