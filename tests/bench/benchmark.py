"""`make bench`: print build and render timings as figures (no pass/fail: machines are noisy).

Measured in one run so ratios compare like with like:
  * four builds side by side, each split by step (figures, derivations, site, PDF) and summed: a
    clean build (the virtual environment excluded; build/ and its caches removed), a no-op build,
    a build after one page's prose is edited and one after a figure script is edited; then a
    whole no-op `make`;
  * each figure's own draw time, and the clean render set against the floor
    (one Matplotlib import + the sum of the draw times);
  * the derivation registry's total proof time;
  * the explainer's input-to-readout time per slider, measured in headless Chromium;
  * the test suite's time from start to end and its slowest files and tests, from the JUnit report
    of the last `make test` (each test's time includes setting up what it is the first to use on its
    worker: the browser, the page visits);
  * the test tiers beside the builds: `make test-lib` and `make test-site` timed in this run, and
    the last `make test` from its report, each also as a multiple of the clean build, so a suite
    that grows slower than the site shows as a ratio that grows.
"""

from __future__ import annotations

import argparse
import collections
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

ROOT = pathlib.Path(__file__).resolve().parents[2]
PY = ROOT / ".venv" / "bin" / "python"
# The build's steps, each a make target, in the order `make` runs them.
STEPS = (("figures", "figures"), ("derivations", "verify"), ("site (mkdocs)", "site"), ("pdf", "pdf"))
PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] (\S+)\s+([0-9.]+) s$", re.M)


def run(*command: str) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode:
        sys.exit(f"benchmark step failed: {' '.join(command)}\n{result.stdout}\n{result.stderr}")
    return elapsed, result.stdout


def make(*targets: str) -> tuple[float, str]:
    return run("make", "--no-print-directory", *targets)


def matplotlib_import_seconds() -> float:
    bare, _ = run(str(PY), "-c", "pass")
    with_mpl, _ = run(str(PY), "-c", "import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot")
    return with_mpl - bare


def print_test_report(report: pathlib.Path, slowest: int = 15) -> float | None:
    """The suite's time by test file and its slowest tests, from a pytest JUnit XML report; returns
    the run's time from start to end (None without a report)."""
    if not report.is_file():
        print(f"\ntest suite: no report at {report} (`make test` writes it)")
        return None
    tree = ElementTree.parse(report)
    cases = [
        (case.get("classname", ""), case.get("name", ""), float(case.get("time", 0))) for case in tree.iter("testcase")
    ]
    by_file: collections.Counter[str] = collections.Counter()
    for classname, _, seconds in cases:
        by_file[classname] += seconds
    total = sum(by_file.values())
    # The run's own time: with the tests in several workers it is less than the sum of their times.
    wall = sum(float(suite.get("time", 0)) for suite in tree.iter("testsuite"))
    print(
        f"\ntest suite: {len(cases)} tests, {wall:.1f} s from start to end, {total:.1f} s in tests "
        f"(added up over the workers; last `make test`, {report})"
    )
    for classname, seconds in by_file.most_common(12):
        print(f"  {classname:<44} {seconds:7.1f}  {100 * seconds / total:4.1f} %")
    print(f"slowest {slowest} tests (setup included)")
    for classname, name, seconds in sorted(cases, key=lambda case: -case[2])[:slowest]:
        print(f"  {seconds:7.1f}  {classname}::{name}")
    return wall


def timed_tier(target: str) -> tuple[float, str]:
    """Run the test tier ``target`` (a make target) and return its time and how it ended: a failing
    tier still has a time, so it is printed, not fatal."""
    start = time.perf_counter()
    result = subprocess.run(["make", "--no-print-directory", target], cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    return elapsed, "passed" if result.returncode == 0 else f"FAILED (exit {result.returncode})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--test-report",
        type=pathlib.Path,
        default=ROOT / "build" / "test-report.xml",
        help="the JUnit XML report `make test` writes",
    )
    args = parser.parse_args()
    print("posenc benchmark (seconds unless stated; 2-core machine, one run)")
    # First: the clean build below removes build/, the report with it.
    suite_seconds = print_test_report(args.test_report)
    print()

    # The same steps timed in four situations: a regression shows as a column growing against the others.
    page = ROOT / "docs" / "guide.md"
    script = sorted((ROOT / "figures_src").glob("*.py"))[0]
    columns: dict[str, dict[str, float]] = {}
    draws: dict[str, float] = {}
    outputs: dict[str, str] = {}

    def steps(column: str) -> None:
        columns[column] = {}
        for step, target in STEPS:
            columns[column][step], outputs[f"{column} {step}"] = make(target)

    for path in (ROOT / "docs" / "figures", ROOT / "build", ROOT / "site"):
        shutil.rmtree(path, ignore_errors=True)
    steps("clean")
    draws = {name: float(seconds) for _, _, name, seconds in PROGRESS.findall(outputs["clean figures"])}
    steps("no-op")
    original = page.read_text(encoding="utf-8")
    try:
        page.write_text(original.replace("\n\n", "\n\nA sentence the benchmark adds.\n\n", 1), encoding="utf-8")
        steps("page edit")
    finally:
        page.write_text(original, encoding="utf-8")
    make()  # the page as it was
    time.sleep(0.05)
    os.utime(script)
    steps("figure edit")
    rerendered = [name for _, _, name, _ in PROGRESS.findall(outputs["figure edit figures"])]
    noop_seconds, noop_out = make()

    print(f"builds by step (page edit: {page.relative_to(ROOT)}; figure edit: {script.relative_to(ROOT)})")
    print(f"  {'':<16}" + "".join(f"{column:>13}" for column in columns))
    for step, _ in STEPS:
        print(f"  {step:<16}" + "".join(f"{columns[column][step]:13.2f}" for column in columns))
    print(f"  {'sum':<16}" + "".join(f"{sum(columns[column].values()):13.2f}" for column in columns))
    clean = sum(columns["clean"].values())
    print(f"  {'/ clean build':<16}" + "".join(f"{sum(columns[c].values()) / clean:13.3f}" for c in columns))
    print("  targets: page edit 10 s, figure edit 15 s (the sums)")
    print(f"figure edit re-rendered {rerendered} (target: that figure alone)")
    print(
        f"\nno-op make          {noop_seconds:7.2f}  (target < 1 s; rendered {len(PROGRESS.findall(noop_out))} figures)"
    )

    # The README's loops: `make test-lib` promises seconds with nothing built, `make test-site` about
    # a minute after `make`, `make test` minutes (timed from its last report: it is not run here).
    print("\ntest tiers (seconds, and as a multiple of the clean build's sum)")
    tiers = [(target, *timed_tier(target)) for target in ("test-lib", "test-site")]
    if suite_seconds is not None:
        tiers.append(("test (last report)", suite_seconds, "as reported"))
    for target, seconds, ended in tiers:
        print(f"  make {target:<20} {seconds:8.1f}  {seconds / clean:7.2f}x  {ended}")
    print("  targets: test-lib 30 s, test-site 60 s, test 450 s (2 cores)")

    import_seconds = matplotlib_import_seconds()
    floor = import_seconds + sum(draws.values())
    figures_seconds = columns["clean"]["figures"]
    print(f"\nfigures: {len(draws)} rendered in one process")
    for name, seconds in sorted(draws.items(), key=lambda item: -item[1]):
        print(f"  {name:<28} {seconds:6.2f}")
    print(f"  matplotlib import  {import_seconds:7.2f}")
    print(
        f"  floor (import + draws) {floor:6.2f}; clean figure step {figures_seconds:.2f} "
        f"= {figures_seconds / floor:.2f}x the floor (target <= 1.5x)"
    )

    total_match = re.search(r"proved in ([0-9.]+) s", outputs["clean derivations"])
    print(f"\nderivations: registry proved in {total_match[1] if total_match else '?'} s (target < 10 s)")

    # The browser test measures and prints it (it asserts no time: the machine is shared).
    _, explainer_out = run(
        str(PY),
        "-m",
        "pytest",
        "-q",
        "-s",
        "-p",
        "no:cacheprovider",
        "tests/browser/test_explainer.py",
        "-k",
        "input_to_readout_time or own_assets",
    )
    print()
    print("\n".join(line for line in explainer_out.splitlines() if line.startswith(("explainer:", "  "))))


if __name__ == "__main__":
    main()
