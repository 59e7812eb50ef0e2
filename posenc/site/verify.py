"""Prove every registered derivation: ``python -m posenc.site.verify [ID ...]``.

Prints one line per ID with its status and time and exits with status 1 naming every
derivation that failed or ran past its time budget. ``--report FILE`` (every derivation, no IDs)
also writes, for each ID in the Derivations index's order, its status and time and all the site
shows of it (:func:`shown`), so the site's build reads the derivations without importing SymPy.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import pathlib
import signal
import sys
import time
from collections.abc import Iterator

import numpy as np

import posenc

from .derivations import TOPICS, ordered  # importing the package registers every entry
from .registry import REGISTRY, Derivation


class BudgetExceeded(Exception):
    """A derivation ran longer than its ``budget_seconds``."""


@contextlib.contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Raise :class:`BudgetExceeded` in the main thread once ``seconds`` have passed."""

    def expire(signum: int, frame: object) -> None:
        raise BudgetExceeded(f"exceeded its time budget of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run(entry: Derivation, *, seed: int = 0) -> str | None:
    """Prove and numerically check one derivation; return the failure message or None."""
    if entry.check is None:
        return "has no numeric check"
    try:
        with time_budget(entry.budget_seconds):
            entry.prove()
            rng = np.random.default_rng(seed)
            for _ in range(3):
                entry.check(rng)
    except BudgetExceeded as error:
        return str(error)
    except Exception as error:  # any error is a failed proof, reported by ID
        return f"{type(error).__name__}: {error}"
    return None


def shown(entry: Derivation) -> dict[str, object]:
    """What the site shows of ``entry``: its reader-facing parts, its topic's heading, the repository
    path of the module that proves it and the source of its proof and numeric check."""
    code = inspect.getsource(entry.prove)
    if entry.check is not None:
        code += "\n\n" + inspect.getsource(entry.check)
    proof_file = pathlib.Path(inspect.getsourcefile(entry.prove) or "").resolve()
    # As the repository names it (posenc/site/derivations/rope.py), wherever posenc is installed.
    module_path = proof_file.relative_to(pathlib.Path(posenc.__file__).resolve().parents[1]).as_posix()
    return {
        "title": entry.title,
        "statement": entry.statement,
        "summary": entry.summary,
        "assumptions": list(entry.assumptions),
        "steps": list(entry.steps),
        "scope": entry.scope,
        "topic": entry.topic,
        "topic_title": TOPICS.get(entry.topic, entry.topic),
        "source_file": module_path,
        "code": code,
        "checked": entry.check is not None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="*", help="derivation IDs to run (default: all)")
    parser.add_argument(
        "--report",
        type=pathlib.Path,
        help="write every ID's status, time and what the site shows of it to this JSON file",
    )
    args = parser.parse_args(argv)
    unknown = [i for i in args.ids if i not in REGISTRY]
    if unknown:
        parser.error(f"unknown derivation ID: {', '.join(unknown)} (known: {', '.join(REGISTRY)})")
    if args.ids and args.report is not None:
        # The site is built from the report: one that left derivations out would drop their pages.
        parser.error("--report lists every derivation, so it takes no IDs")
    failed: list[str] = []
    report: dict[str, dict[str, object]] = {}
    start_all = time.perf_counter()
    for entry in [REGISTRY[i] for i in args.ids] if args.ids else ordered(REGISTRY):
        start = time.perf_counter()
        problem = run(entry)
        elapsed = time.perf_counter() - start
        status = "proved" if problem is None else f"FAILED {problem}"
        print(f"  {entry.id:<30} {status}  ({elapsed:.2f} s)", flush=True)
        report[entry.id] = {"status": "proved" if problem is None else "failed", "seconds": round(elapsed, 2)}
        if args.report is not None:
            report[entry.id] |= shown(entry)
        if problem is not None:
            failed.append(entry.id)
    total = time.perf_counter() - start_all
    if args.report is not None:
        # Written even when something failed, so the site build can refuse it by ID.
        args.report.parent.mkdir(parents=True, exist_ok=True)
        temporary = args.report.with_suffix(".part")
        temporary.write_text(json.dumps(report, indent=1) + "\n")
        temporary.replace(args.report)
    if failed:
        print(f"{len(failed)} derivation(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"all {len(args.ids or REGISTRY)} derivations proved in {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
