"""The derivations on the site: ``{{ ref: ID }}`` and ``{{ eq: ID }}``, each derivation's own page
``derivations/ID/`` (statement, proof steps, SymPy source and BibTeX) and the index of them all.

The pages say "proved", so they are made only from a derivation report (``make verify``) that is
present, newer than posenc's sources and proves every ID.
"""

from __future__ import annotations

import inspect
import json
import pathlib

import yaml
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

import posenc
from posenc.site.derivations import TOPICS, ordered  # importing it registers every derivation in REGISTRY
from posenc.site.registry import GENERAL, REGISTRY

from . import citations, paths

# The class of a derivation page's SymPy source: its heading and the block under it.
SOURCE_CLASS = "posenc-derivation-source"
INDEX_SRC = "derivations/index.md"


def derivation(identifier: str):
    """The registry entry of ``identifier``; an unknown ID stops the build."""
    if identifier not in REGISTRY:
        raise PluginError(f"unknown derivation ID {identifier!r} (known: {', '.join(REGISTRY)})")
    return REGISTRY[identifier]


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


def verify_report() -> dict:
    """The report ``python -m posenc.site.verify --report`` wrote; refuse a missing or stale one."""
    report_path = paths.VERIFY_REPORT
    if not report_path.is_file():
        raise PluginError("no derivation report: run `make verify` (or `make`) before building the site")
    sources = sorted(pathlib.Path(posenc.__file__).parent.rglob("*.py"))  # as the Makefile's LIBRARY
    if any(source.stat().st_mtime > report_path.stat().st_mtime for source in sources):
        raise PluginError("the derivation report is older than posenc's sources: run `make verify`")
    report = json.loads(report_path.read_text())
    failed = [i for i in REGISTRY if report.get(i, {}).get("status") != "proved"]
    if failed:
        raise PluginError(f"derivations not proved in the last `make verify`: {', '.join(failed)}")
    return report


def index_markdown(page_src: str) -> str:
    """``{{ derivations }}``, the Derivations index: a heading per topic, then one item per ID, whose ID
    link carries the anchor ``#ID`` and leads to the derivation's own page, so that ``derivations/#ID``
    leads there too. A list rather than a table: on a phone a table's narrow ID column broke the IDs in
    the middle."""
    verify_report()  # refuses a missing, stale or failing report before the index claims "proved"
    groups: dict[str, list[str]] = {}
    for entry in ordered():
        status = f"proved {entry.scope_label}" if entry.scope == GENERAL else entry.scope_label
        page = paths.relative(page_src, derivation_src(entry.id))
        groups.setdefault(entry.topic, []).append(
            f"- [`{entry.id}`]({page}){{ #{entry.id} }} **{entry.title}.** {entry.summary} *Scope: {status}.*"
        )
    # Each heading's anchor is prefixed, so that it can never take an ID's anchor.
    sections = [
        f"## {TOPICS[topic]} {{ #topic-{topic.replace('_', '-')} }}\n\n" + "\n".join(items)
        for topic, items in groups.items()
    ]
    return '<div class="posenc-derivation-index" markdown>\n\n' + "\n\n".join(sections) + "\n\n</div>\n"


def source_file(entry) -> str:
    """The repository path of the module that holds ``entry``'s proof (posenc/site/derivations/<topic>.py)."""
    return pathlib.Path(inspect.getsourcefile(entry.prove)).resolve().relative_to(paths.ROOT).as_posix()


def derivation_page(identifier: str, site_url: str) -> str:
    """Derivation ``identifier``'s own page: statement, scope, assumptions, proof steps, the SymPy
    code that proves it and its BibTeX record; the address its BibTeX record cites."""
    entry = REGISTRY[identifier]
    record = citations.bibtex(entry, site_url)
    entry_text = citations.reference_block(citations.parse_record(record), own=True)
    ids = [other.id for other in ordered()]
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
    code = inspect.getsource(entry.prove)
    checked = ""
    if entry.check is not None:
        code += "\n\n" + inspect.getsource(entry.check)
        checked = ", then the numeric cross-check against the posenc NumPy functions"
    neighbours = [
        f"[{label}: {REGISTRY[ids[at]].title}]({ids[at]}.md)"
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
        f"from `{source_file(entry)}`:\n\n```python\n{code}```\n\n</div>\n\n"
        f"## Cite this derivation {{ #cite }}\n\n{entry_text}\n\n"
        f"```bibtex\n{record}\n```\n\n" + " · ".join(neighbours) + "\n"
    )


def derivation_page_files(config) -> list[File]:
    """The page of each derivation, refused if an ID would take the address of a page in docs/."""
    taken = [identifier for identifier in REGISTRY if (paths.DOCS / derivation_src(identifier)).exists()]
    if taken:
        raise PluginError(
            f"derivation ID {taken[0]!r} would be served at the address of docs/{derivation_src(taken[0])}"
        )
    verify_report()  # the pages say "proved": refuse a missing, stale or failing report
    return [
        File.generated(config, derivation_src(identifier), content=derivation_page(identifier, config["site_url"]))
        for identifier in REGISTRY
    ]
