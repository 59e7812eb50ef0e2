"""The suite as `make test` runs it, in pytest-xdist workers (conftest.py's part of that): each
colour scheme's tests on one worker, the two schemes on different workers, and the tables
tests leave for the summary printed by the controller. Each test runs a small suite of its own
in a scratch folder, with conftest.py's hooks and fixtures, under ``-n 2 --dist loadgroup``."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The scratch suite's conftest: this project's, loaded under another module name (the scratch
# one is itself imported as "conftest").
SCRATCH_CONFTEST = f"""
import importlib.util
import sys

sys.path.insert(0, {str(ROOT / "tests")!r})
spec = importlib.util.spec_from_file_location("project_conftest", {str(ROOT / "tests" / "conftest.py")!r})
project = importlib.util.module_from_spec(spec)
spec.loader.exec_module(project)
globals().update({{name: value for name, value in vars(project).items()
                  if name.startswith("pytest_") or name in ("scheme", "visits", "report_table")}})
"""


def run_suite(folder: pathlib.Path, tests: str) -> subprocess.CompletedProcess:
    (folder / "conftest.py").write_text(SCRATCH_CONFTEST)
    (folder / "test_scratch.py").write_text(tests)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "--no-loadscope-reorder",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(folder),
            str(folder),
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )


# Tests that read ``visits`` (stood in for here by a fixture that names its worker) among tests
# that do not; each writes down which worker ran it.
VISIT_TESTS = """
import os
import pathlib

import pytest


@pytest.fixture
def visits(scheme):
    return os.environ["PYTEST_XDIST_WORKER"]


def note(name, worker):
    (pathlib.Path(__file__).parent / f"{name}.ran").write_text(worker)

""" + "".join(
    f"""
def test_visit_{number}(visits, scheme):
    note(f"visit_{number}-{{scheme}}", visits)


def test_other_{number}(scheme):
    note(f"other_{number}-{{scheme}}", os.environ["PYTEST_XDIST_WORKER"])
"""
    for number in range(4)
)


def test_each_schemes_visit_tests_run_on_one_worker_and_the_schemes_on_two(tmp_path):
    result = run_suite(tmp_path, VISIT_TESTS)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    ran = {file.stem: file.read_text() for file in tmp_path.glob("*.ran")}
    assert len(ran) == 16, sorted(ran)
    workers = {
        scheme: {worker for name, worker in ran.items() if name.startswith("visit_") and name.endswith(scheme)}
        for scheme in ("light", "dark")
    }
    assert len(workers["light"]) == 1 and len(workers["dark"]) == 1, json.dumps(ran, indent=1)
    assert workers["light"] != workers["dark"], "both schemes' visits on one worker, one after the other"


TABLE_TESTS = """
def test_leaves_a_table(report_table):
    report_table("a table from a worker", "its only row")
"""


def test_a_workers_summary_table_is_printed_by_the_controller(tmp_path):
    result = run_suite(tmp_path, TABLE_TESTS)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "a table from a worker" in result.stdout and "its only row" in result.stdout, result.stdout[-3000:]
