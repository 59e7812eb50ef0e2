"""The Makefile, run in scratch copies of the project (the real venv and node_modules are reused).

The figure tests copy only what `make figures` needs and two figure scripts. The site tests
share one clean build of a small site (two figures, two pages, the Derivations page) and each
works on its own copy of it; they take about two minutes together.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import signal
import subprocess
import time

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOOD = (ROOT / "figures_src" / "vector-width8.py").read_text()
FAILING = GOOD.replace("plotting.save(fig)", "raise ValueError('the data file is corrupt')")
# The figure's only extra artist takes a minute to draw into the SVG (save() lays the figure out
# once before, without drawing), so the render is caught half-written.
SLOW = GOOD.replace(
    "    plotting.save(fig)",
    (
        "    import time\n    from matplotlib.artist import Artist\n\n"
        "    class Slow(Artist):\n        def draw(self, renderer):\n"
        "            if not hasattr(renderer.draw_path, '__wrapped__'):\n                time.sleep(60)\n\n"
        "    fig.add_artist(Slow())\n    plotting.save(fig)"
    ),
)
PAGE = "---\ntitle: {title}\ndescription: A page of the build tests.\n---\n\n# {title}\n\n{body}\n"
# The date mkdocs writes into the sitemap for every page (as in test_site_builds.py's comparison).
BUILD_DATE = re.compile(rb"<lastmod>[^<]*</lastmod>")


def copy_basics(target: pathlib.Path) -> None:
    """The Makefile with its inputs, the posenc package, the shared venv and two figure scripts."""
    if not (ROOT / ".venv" / ".installed").is_file():
        pytest.fail("the virtual environment is not built: run `make`")
    for name in ("Makefile", "requirements.lock", "pyproject.toml", "package-lock.json", "CITATION.cff"):
        shutil.copy2(ROOT / name, target / name)
    shutil.copytree(
        ROOT / "posenc", target / "posenc", ignore=shutil.ignore_patterns("__pycache__"), copy_function=shutil.copy2
    )
    (target / ".venv").symlink_to(ROOT / ".venv")
    (target / "venv.stamp").touch()
    (target / "figures_src").mkdir()
    for name in ("first", "second"):
        (target / "figures_src" / f"{name}.py").write_text(GOOD)


@pytest.fixture
def project(tmp_path) -> pathlib.Path:
    """A copy of what `make figures` needs, with two figure scripts."""
    copy_basics(tmp_path)
    return tmp_path


def start_make(project: pathlib.Path, *targets: str, **env: str) -> subprocess.Popen:
    # The copy's own stamps stand in for the shared venv's and node_modules', so these runs
    # never reinstall them; PYTHONPATH makes the copy's posenc win over the venv's editable one.
    # Its own session lets a test signal or stop make together with everything it started.
    return subprocess.Popen(
        [
            "make",
            "--no-print-directory",
            "-C",
            str(project),
            "VENV_STAMP=venv.stamp",
            "NODE_STAMP=node.stamp",
            *targets,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # The PDF is dated by its build's day: a fixed day, so a build just after midnight compares too.
        env=os.environ | {"PYTHONPATH": str(project), "SOURCE_DATE_EPOCH": "1767225600"} | env,
        start_new_session=True,
    )


def make(project: pathlib.Path, *targets: str, timeout: float = 600, **env: str) -> subprocess.CompletedProcess:
    process = start_make(project, *targets, **env)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # a hanging render must not outlive the test
        process.communicate()
        pytest.fail(f"make {' '.join(targets)} did not finish within {timeout} s")
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def settle() -> None:
    """Let the clock move past the last build's timestamps (file times are coarse-grained)."""
    time.sleep(0.05)


def rendered_names(output: str) -> list[str]:
    """The figures a make run rendered, from the renderer's progress lines."""
    return sorted(line.split()[1] for line in output.splitlines() if line.startswith("[") and "/" in line.split()[0])


def contents(directory: pathlib.Path) -> dict[str, bytes]:
    """Every file under ``directory`` by relative path, the sitemap's build dates masked."""
    files = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            if path.name == "sitemap.xml":
                data = BUILD_DATE.sub(b"<lastmod/>", data)
            elif path.name == "sitemap.xml.gz":
                continue  # the same XML, gzipped with the build time in its header
            files[path.relative_to(directory).as_posix()] = data
    return files


def is_noop(result: subprocess.CompletedProcess) -> bool:
    """Whether a make run succeeded without building anything (no step, no render)."""
    return result.returncode == 0 and "==>" not in result.stdout and rendered_names(result.stdout) == []


def differing(first: dict[str, bytes], second: dict[str, bytes]) -> list[str]:
    return sorted(name for name in set(first) | set(second) if first.get(name) != second.get(name))


# --- figures ---------------------------------------------------------------------------------


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
    os.utime(project / "posenc" / "site" / "posenc.mplstyle")
    restyled = make(project, "figures")
    assert rendered_names(restyled.stdout) == ["first", "second"]

    (project / "docs" / "figures" / "first.svg").unlink()
    deleted = make(project, "figures")
    assert rendered_names(deleted.stdout) == ["first"], "a figure deleted by hand is rendered again"

    # The figure is wider than a phone's column, so it has a narrow layout too: each of its files
    # deleted by hand makes it stale, as its SVG does.
    for name in ("second.narrow.svg", "second.narrow.json", "second.json"):
        (project / "docs" / "figures" / name).unlink()
        again = make(project, "figures")
        assert again.returncode == 0 and rendered_names(again.stdout) == ["second"], name
        assert (project / "docs" / "figures" / name).is_file()


def test_a_failing_script_keeps_the_last_good_figure_and_stays_stale(project):
    assert make(project, "figures").returncode == 0
    svg = project / "docs" / "figures" / "second.svg"
    good = svg.read_bytes()
    broken = project / "figures_src" / "second.py"
    broken.write_text(FAILING)
    failed = make(project, "figures")
    assert failed.returncode != 0
    assert "FAILED figures_src/second.py" in failed.stderr
    assert "the data file is corrupt" in failed.stderr
    assert svg.read_bytes() == good, "the last good figure is kept for the preview"
    assert (project / "docs" / "figures" / "second.narrow.svg").is_file(), "and its narrow layout"
    assert '"second": "Traceback' in (project / "build" / "figure-errors.json").read_text()

    still_failing = make(project, "figures")
    assert still_failing.returncode != 0, "a later make must retry the failed figure, not take it as fresh"

    broken.write_text(GOOD)
    fixed = make(project, "figures")
    assert fixed.returncode == 0 and rendered_names(fixed.stdout) == ["second"]
    assert (project / "build" / "figure-errors.json").read_text() == "{}\n"


def test_a_deleted_script_takes_its_figure_with_it(project):
    assert make(project, "figures").returncode == 0
    settle()
    (project / "figures_src" / "second.py").unlink()
    result = make(project, "figures")
    assert result.returncode == 0
    assert not (project / "docs" / "figures" / "second.svg").exists()
    assert not (project / "docs" / "figures" / "second.json").exists()


def test_a_new_script_that_failed_and_was_deleted_leaves_no_trace(project):
    assert make(project, "figures").returncode == 0
    (project / "figures_src" / "third.py").write_text(FAILING)
    assert make(project, "figures").returncode != 0
    (project / "figures_src" / "third.py").unlink()
    result = make(project, "figures")
    assert result.returncode == 0, result.stderr
    assert make(project, "figures").returncode == 0


def test_a_script_name_with_a_space_is_refused_by_name_and_forgotten_once_removed(project):
    assert make(project, "figures").returncode == 0
    spaced = project / "figures_src" / "with space.py"
    spaced.write_text(GOOD)
    refused = make(project, "figures")
    assert refused.returncode != 0
    assert "'figures_src/with space.py'" in refused.stderr and "only letters, digits" in refused.stderr
    spaced.unlink()
    result = make(project, "figures")
    assert result.returncode == 0, result.stderr


def test_a_script_that_never_returns_is_stopped_and_named(project):
    (project / "figures_src" / "second.py").write_text("import time\nwhile True:\n    time.sleep(1)\n")
    start = time.monotonic()
    result = make(project, "figures", FIGURE_TIMEOUT="2", timeout=90)
    assert result.returncode != 0
    assert "figures_src/second.py did not finish within 2 s" in result.stderr
    assert time.monotonic() - start < 60
    assert (project / "docs" / "figures" / "first.svg").exists()


def test_make_clean_removes_the_package_metadata(project):
    (project / "posenc.egg-info").mkdir()
    (project / "posenc.egg-info" / "PKG-INFO").write_text("Name: posenc\n")
    assert make(project, "clean").returncode == 0
    assert not (project / "posenc.egg-info").exists()
    assert (ROOT / ".venv" / ".installed").is_file(), "clean removed the link, never the shared venv"


# A stand-in for python3.11 that makes a "venv" holding only itself, so the venv rule runs in a
# second without installing anything.
FAKE_PYTHON = """#!/bin/sh
if [ "$1" = -m ] && [ "$2" = venv ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; fi
"""


def test_a_changed_lock_recreates_the_environment(project):
    fake = project / "fake-python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)

    def build_venv() -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                "make",
                "--no-print-directory",
                "-C",
                str(project),
                "VENV=fake-venv",
                f"PYTHON={fake}",
                "fake-venv/.installed",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert build_venv().returncode == 0
    removed_package = project / "fake-venv" / "lib" / "dropped_from_the_lock"
    removed_package.mkdir(parents=True)
    settle()
    (project / "requirements.lock").write_text("# the lock without that package\n")
    rebuilt = build_venv()
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert not removed_package.exists(), "a package dropped from the lock stayed installed"


# --- the site --------------------------------------------------------------------------------


def write_small_site(target: pathlib.Path) -> None:
    """mkdocs.yml without nav and slow plugins, two pages and the Derivations page, hooks, theme."""
    copy_basics(target)
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    del config["nav"]
    config["plugins"] = ["search"]
    # mkdocs refuses a watched path that is missing; the small site has no tests/peers to watch.
    config["watch"] = [path for path in config.get("watch", []) if not path.startswith("tests/")]
    (target / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    for folder in ("hooks", "overrides", "docs/stylesheets", "docs/javascripts"):
        shutil.copytree(
            ROOT / folder, target / folder, ignore=shutil.ignore_patterns("__pycache__"), copy_function=shutil.copy2
        )
    shutil.copytree(ROOT / "docs" / "derivations", target / "docs" / "derivations", copy_function=shutil.copy2)
    (target / "node_modules").symlink_to(ROOT / "node_modules")
    (target / "node.stamp").touch()
    (target / "docs" / "index.md").write_text(
        PAGE.format(
            title="Home",
            body=(
                "{{ figure: first }}\n\n{{ figure: second }}\n\n"
                "The kernel at offset 6 and width 8 is {{ calc .4f: posenc.kernel(6, 8) }}, "
                "as {{ ref: kernel }} proves."
            ),
        )
    )
    (target / "docs" / "extra.md").write_text(
        PAGE.format(title="Extra", body="The wavelengths are {{ calc .2f: posenc.wavelengths(8) }}.")
    )
    # The Derivations page links the Cite page.
    (target / "docs" / "cite.md").write_text(PAGE.format(title="Cite", body="## One derivation\n\nBy its page."))


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> tuple[pathlib.Path, dict[str, bytes], dict[str, bytes]]:
    """A small site built from nothing: its folder, and the bytes of its site/ and its figures."""
    if not (ROOT / "node_modules" / ".installed").is_file():
        pytest.fail("node_modules is not installed: run `make`")
    template = tmp_path_factory.mktemp("small-site")
    write_small_site(template)
    result = make(template)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return template, contents(template / "site"), contents(template / "docs" / "figures")


@pytest.fixture
def site_copy(built_site, tmp_path) -> pathlib.Path:
    """This test's own copy of the built small site (times kept, so make finds it up to date)."""
    copy = tmp_path / "copy"
    shutil.copytree(built_site[0], copy, symlinks=True, copy_function=shutil.copy2)
    assert is_noop(make(copy))
    return copy


def test_two_clean_builds_give_the_same_bytes(built_site, site_copy):
    """Each build proves the derivations afresh; nothing measured (proof times) may reach a page."""
    for generated in ("build", "site", "docs/figures"):
        shutil.rmtree(site_copy / generated)
    result = make(site_copy)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "proving the derivations" in result.stdout
    _, site, figures = built_site
    assert differing(contents(site_copy / "site"), site) == []
    assert differing(contents(site_copy / "docs" / "figures"), figures) == []


def test_a_failed_site_build_leaves_the_last_good_site_whole(built_site, site_copy):
    (site_copy / "docs" / "extra.md").write_text(PAGE.format(title="Extra", body="{{ ref: no-such-id }}"))
    result = make(site_copy)
    assert result.returncode != 0 and "unknown derivation ID 'no-such-id'" in result.stderr
    assert differing(contents(site_copy / "site"), built_site[1]) == []


def test_a_renamed_page_is_built_under_its_new_name_only(site_copy):
    # What `git mv` does: the file moves, its time does not change.
    os.rename(site_copy / "docs" / "extra.md", site_copy / "docs" / "moved.md")
    result = make(site_copy)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (site_copy / "site" / "moved" / "index.html").is_file()
    assert not (site_copy / "site" / "extra").exists()


def test_a_missing_node_is_named_before_anything_is_built(built_site, site_copy, tmp_path):
    tools = tmp_path / "bin-without-node"
    tools.mkdir()
    for folder in ("/usr/local/bin", "/usr/bin", "/bin"):
        for tool in pathlib.Path(folder).iterdir() if pathlib.Path(folder).is_dir() else []:
            if tool.name not in ("node", "nodejs") and not (tools / tool.name).exists():
                (tools / tool.name).symlink_to(tool)
    settle()
    os.utime(site_copy / "docs" / "extra.md")
    result = make(site_copy, PATH=str(tools))
    assert result.returncode != 0
    assert "node is not installed or not on PATH: install Node.js 20 with npm" in result.stderr
    assert "Traceback" not in result.stderr
    assert differing(contents(site_copy / "site"), built_site[1]) == []


def test_after_an_interrupted_render_a_failed_figure_and_a_failed_page_make_gives_a_clean_builds_bytes(
    built_site, site_copy
):
    _, clean_site, clean_figures = built_site
    first, second = site_copy / "figures_src" / "first.py", site_copy / "figures_src" / "second.py"
    page = site_copy / "docs" / "extra.md"
    good_page = page.read_text()

    # 1. SIGTERM (as from Ctrl-C or a CI timeout) while a figure is being written.
    first.write_text(SLOW)
    interrupted = start_make(site_copy)
    deadline = time.monotonic() + 60
    while not list((site_copy / "build").rglob("*.part")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list((site_copy / "build").rglob("*.part")), "the render never started writing the figure"
    os.killpg(interrupted.pid, signal.SIGTERM)
    interrupted.communicate(timeout=60)
    assert interrupted.returncode != 0
    leftovers = [p for p in (site_copy / "docs").rglob("*") if p.name.startswith(".") or p.suffix == ".part"]
    assert leftovers == [] and not any((site_copy / "build" / "render").rglob("*"))
    assert differing(contents(site_copy / "docs" / "figures"), clean_figures) == [], "the last good figures stay"

    # 2. A figure script that fails.
    first.write_text(GOOD)
    second.write_text(FAILING)
    failed_figure = make(site_copy)
    assert failed_figure.returncode != 0 and "FAILED figures_src/second.py" in failed_figure.stderr

    # 3. A page that fails.
    second.write_text(GOOD)
    page.write_text(PAGE.format(title="Extra", body="{{ calc .2z: 1.0 }}"))
    failed_page = make(site_copy)
    assert failed_page.returncode != 0
    assert "extra.md: calc marker '{{ calc .2z: 1.0 }}'" in failed_page.stderr
    assert differing(contents(site_copy / "site"), clean_site) == [], "the last good site stays whole"

    # Every fault fixed: the next make gives what a clean build gives.
    page.write_text(good_page)
    fixed = make(site_copy)
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert rendered_names(fixed.stdout) == [], "both figures were rendered again on the way"
    assert differing(contents(site_copy / "site"), clean_site) == []
    assert differing(contents(site_copy / "docs" / "figures"), clean_figures) == []
    assert is_noop(make(site_copy))
