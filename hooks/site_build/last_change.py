"""The line under every page saying when it last changed: the date of the latest commit to the
files the page is made from (``git log``). Where that date does not describe the page (no git, a
shallow clone, or a source file with changes not yet committed) the line says so and gives the
build date instead (``SOURCE_DATE_EPOCH`` when set, as for MkDocs' sitemap).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import tempfile
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
        return (derivation_pages.derivation(src.removeprefix("derivations/")[:-3]).source_file,)
    if not src.endswith(".md"):
        return (own,)
    markdown = (paths.DOCS / src).read_text(encoding="utf-8")
    # The list of peer comparisons is read from the tests; a panel's HTML from its template.
    peers = (peer_tests.PEER_TESTS_SOURCE,) if peer_tests.uses_peer_tests(markdown) else ()
    templates = tuple(dict.fromkeys(panels.template_source(name) for name in panels.panels_of(markdown)))
    return (own, *peers, *templates)


# What one build asks git once rather than once a page: the commit checked out and the status
# of every changed file (:func:`forget_build` clears it before each build).
_THIS_BUILD: dict[str, object] = {}
# The date of the latest commit to each set of sources, kept for the next build in a file named
# for the commit checked out: the history up to a commit never changes, so neither does the date.
DATES_CACHE = "last-change"


def forget_build() -> None:
    """Ask git afresh in the next build (``mkdocs serve`` builds again after a commit or an edit)."""
    _THIS_BUILD.clear()


def _this_repository() -> None:
    """Forget what git said about another repository (a test moves ``paths.ROOT``)."""
    if _THIS_BUILD.get("root") != paths.ROOT:
        _THIS_BUILD.clear()
        _THIS_BUILD["root"] = paths.ROOT


def _head() -> str | None:
    _this_repository()
    if "head" not in _THIS_BUILD:
        _THIS_BUILD["head"] = (_git("rev-parse", "HEAD") or "").strip() or None
    return _THIS_BUILD["head"]  # type: ignore[return-value]


def _changed_paths() -> list[str] | None:
    """Every path ``git status`` names (both names of a rename), or None if git fails."""
    _this_repository()
    if "status" not in _THIS_BUILD:
        status = _git("status", "--porcelain", "-z", "--untracked-files=all")
        paths_named: list[str] | None = None
        if status is not None:
            paths_named = []
            entries = iter(status.split("\0"))
            for entry in entries:
                if entry:
                    paths_named.append(entry[3:])
                    if entry[0] in "RC":  # a rename or copy: its old name follows
                        paths_named.append(next(entries, ""))
        _THIS_BUILD["status"] = paths_named
    return _THIS_BUILD["status"]  # type: ignore[return-value]


def _pending(sources: tuple[str, ...]) -> bool | None:
    """Whether a source (a file, or any file under a folder) has changes not committed; None
    if git fails. The same answer as ``git status -- sources``, from one status of the whole tree."""
    changed = _changed_paths()
    if changed is None:
        return None
    return any(path == source or path.startswith(source.rstrip("/") + "/") for path in changed for source in sources)


def _last_commit_date(sources: tuple[str, ...]) -> str | None:
    """``git log -1 --format=%cs -- sources``, kept per commit checked out (or None if git fails)."""
    head = _head()
    if head is None:
        return _git("log", "-1", "--format=%cs", "--", *sources)
    cache = paths.CACHE / DATES_CACHE / f"{head}.json"
    if _THIS_BUILD.get("dates file") != cache:
        try:
            _THIS_BUILD["dates"] = json.loads(cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            _THIS_BUILD["dates"] = {}
        _THIS_BUILD["dates file"] = cache
    dates: dict[str, str] = _THIS_BUILD["dates"]  # type: ignore[assignment]
    key = "\0".join(sources)
    if key not in dates:
        date = _git("log", "-1", "--format=%cs", "--", *sources)
        if date is None:
            return None
        dates[key] = date
        cache.parent.mkdir(parents=True, exist_ok=True)
        for other in cache.parent.glob("*.json"):
            if other != cache:
                other.unlink(missing_ok=True)  # an earlier commit's dates are never asked for again
        with tempfile.NamedTemporaryFile("w", dir=cache.parent, suffix=".tmp", delete=False, encoding="utf-8") as part:
            json.dump(dates, part, sort_keys=True)
        os.replace(part.name, cache)
    return dates[key]


def last_changed(sources: tuple[str, ...]) -> LastChanged:
    """When ``sources`` last changed in the repository, or the build date and why it stands in."""
    build_date = get_build_datetime().date().isoformat()
    if not history_available():  # without the whole history no date is read (a shallow clone's would be wrong)
        return LastChanged(build_date, sources, False, HISTORY_MISSING)
    pending = _pending(sources)
    date = _last_commit_date(sources)
    if pending is None or date is None:
        return LastChanged(build_date, sources, False, HISTORY_MISSING)
    if pending or not date.strip():
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
