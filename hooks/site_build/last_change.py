"""The line under every page saying when it last changed: the date of the latest commit to the
files the page is made from (``git log``). Where that date does not describe the page (no git, a
shallow clone, or a source file with changes not yet committed) the line says so and gives the
build date instead (``SOURCE_DATE_EPOCH`` when set, as for MkDocs' sitemap).
"""

from __future__ import annotations

import functools
import subprocess
from typing import NamedTuple

from mkdocs.utils import get_build_datetime

from . import api_source, derivation_pages, figures, panels, paths, peer_tests

# Why a page shows its build date instead of the date of its last change.
HISTORY_MISSING = (
    "the repository history that dates the last change to this page's sources ({files}) was not available to this build"
)
NOT_COMMITTED = "this page's sources ({files}) have changes not yet committed, so no commit dates their last change"


class LastChanged(NamedTuple):
    """When a page's sources last changed, or why the build date stands in for it."""

    date: str  # ISO date
    sources: tuple[str, ...]  # repository paths the page is made from
    committed: bool  # False: the date is the build date, for ``reason``
    reason: str = ""  # HISTORY_MISSING or NOT_COMMITTED


def _git(*args: str) -> str | None:
    """``git args`` run in the repository: its output, or None if git is missing or fails."""
    try:
        result = subprocess.run(["git", *args], cwd=paths.ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None


@functools.cache
def history_available() -> bool:
    """True when git can read the repository's whole history (a shallow clone's dates would be wrong)."""
    return (_git("rev-parse", "--is-shallow-repository") or "").strip() == "false"


def page_sources(page) -> tuple[str, ...]:
    """The repository paths ``page`` is made from: its Markdown or notebook, or what generates it."""
    src = page.file.src_uri
    figure = figures.figure_of_page(src)
    if figure is not None:
        return (figures.figure_meta(figure).script,)
    # An API source page shows one module's file (only those pages need the API page read).
    shown = api_source.source_pages().get(src) if src.startswith(api_source.SOURCE_FOLDER + "/") else None
    if shown:
        return (shown,)
    registry = "posenc/site/derivations"  # the statements, proofs and sources of the derivation pages
    own = "docs/" + src
    if src == derivation_pages.INDEX_SRC:
        return (own, registry)
    if src.startswith("derivations/"):
        # A derivation's page, generated from its entry alone, in the module of its topic.
        return (derivation_pages.source_file(derivation_pages.derivation(src.removeprefix("derivations/")[:-3])),)
    if not src.endswith(".md"):
        return (own,)
    markdown = (paths.DOCS / src).read_text(encoding="utf-8")
    # The list of peer comparisons is read from the tests; a panel's HTML from its template.
    peers = (peer_tests.PEER_TESTS_SOURCE,) if peer_tests.uses_peer_tests(markdown) else ()
    templates = tuple(dict.fromkeys(panels.template_source(name) for name in panels.panels_of(markdown)))
    return (own, *peers, *templates)


def last_changed(sources: tuple[str, ...]) -> LastChanged:
    """When ``sources`` last changed in the repository, or the build date and why it stands in."""
    build_date = get_build_datetime().date().isoformat()
    pending = _git("status", "--porcelain", "--untracked-files=all", "--", *sources)
    date = _git("log", "-1", "--format=%cs", "--", *sources)
    if not history_available() or pending is None or date is None:
        return LastChanged(build_date, sources, False, HISTORY_MISSING)
    if pending.strip() or not date.strip():
        return LastChanged(build_date, sources, False, NOT_COMMITTED)
    return LastChanged(date.strip(), sources, True)


def _long_date(iso: str) -> str:
    year, month, day = (int(part) for part in iso.split("-"))
    months = ("January February March April May June July August September October November December").split()
    return f"{day} {months[month - 1]} {year}"


def last_changed_html(change: LastChanged) -> str:
    """The line under a page: its date in a <time> element, and what that date is."""
    files = " and ".join(f"<code>{source}</code>" for source in change.sources)
    when = f'<time datetime="{change.date}">{_long_date(change.date)}</time>'
    if change.committed:
        return f"Last changed {when}, the date of the latest commit to {files}."
    return f"Built {when}; " + change.reason.format(files=files) + "."
