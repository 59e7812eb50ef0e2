"""The Makefile's figure rules, run in a scratch copy of the project (the real venv is reused)."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
GOOD = (ROOT / "figures_src" / "vector-width8.py").read_text()


@pytest.fixture
def project(tmp_path) -> pathlib.Path:
    """A copy of what `make figures` needs, with two figure scripts."""
    if not (ROOT / ".venv" / ".installed").is_file():
        pytest.fail("the virtual environment is not built: run `make`")
    for name in ("Makefile", "requirements.lock", "pyproject.toml", "package-lock.json"):
        shutil.copy2(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "posenc", tmp_path / "posenc", ignore=shutil.ignore_patterns("__pycache__"),
                    copy_function=shutil.copy2)
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    (tmp_path / "venv.stamp").touch()
    (tmp_path / "figures_src").mkdir()
    for name in ("first", "second"):
        (tmp_path / "figures_src" / f"{name}.py").write_text(GOOD)
    return tmp_path


def make(project: pathlib.Path, *targets: str) -> subprocess.CompletedProcess:
    # The copy's own stamp stands in for the shared venv's, so these runs never reinstall it.
    return subprocess.run(["make", "--no-print-directory", "-C", str(project), "VENV_STAMP=venv.stamp", *targets],
                          capture_output=True, text=True, timeout=300)


def settle() -> None:
    """Let the clock move past the last build's timestamps (file times are coarse-grained)."""
    time.sleep(0.05)


def rendered_names(output: str) -> list[str]:
    """The figures a make run rendered, from the renderer's progress lines."""
    return sorted(line.split()[1] for line in output.splitlines() if line.startswith("[") and "/" in line.split()[0])


def test_figures_render_once_and_only_when_stale(project):
    first = make(project, "figures")
    assert first.returncode == 0, first.stderr
    assert rendered_names(first.stdout) == ["first", "second"]
    assert "rendering 2 stale figure(s)" in first.stdout

    again = make(project, "figures")
    assert again.returncode == 0 and rendered_names(again.stdout) == []

    settle()
    os.utime(project / "figures_src" / "second.py")
    edited = make(project, "figures")
    assert rendered_names(edited.stdout) == ["second"]

    settle()
    os.utime(project / "posenc" / "posenc.mplstyle")
    restyled = make(project, "figures")
    assert rendered_names(restyled.stdout) == ["first", "second"]


def test_a_failing_script_stops_the_build_by_name_and_stays_stale(project):
    assert make(project, "figures").returncode == 0
    broken = project / "figures_src" / "second.py"
    broken.write_text(GOOD.replace("plotting.save(fig)", "raise ValueError('the data file is corrupt')"))
    failed = make(project, "figures")
    assert failed.returncode != 0
    assert "FAILED figures_src/second.py" in failed.stderr
    assert "the data file is corrupt" in failed.stderr
    assert not (project / "docs" / "figures" / "second.svg").exists(), "no output is left to look fresh"
    assert (project / "docs" / "figures" / "first.svg").exists()

    still_failing = make(project, "figures")
    assert still_failing.returncode != 0, "a later make must retry the failed figure, not take it as fresh"

    broken.write_text(GOOD)
    fixed = make(project, "figures")
    assert fixed.returncode == 0 and rendered_names(fixed.stdout) == ["second"]


def test_a_deleted_script_takes_its_figure_with_it(project):
    assert make(project, "figures").returncode == 0
    settle()
    (project / "figures_src" / "second.py").unlink()
    result = make(project, "figures")
    assert result.returncode == 0
    assert not (project / "docs" / "figures" / "second.svg").exists()
    assert not (project / "docs" / "figures" / "second.json").exists()
