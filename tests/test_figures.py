"""Every figure script: it runs, its output meets the quality bar, it is deterministic, it is used."""

from __future__ import annotations

import ast
import json
import pathlib
import re
import subprocess

import pytest

from posenc import render
from posenc.figure_files import FIGURE_DIR

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "figures_src").glob("*.py"))
FIGURE_MARKER = re.compile(r"\{\{\s*figure:\s*([\w-]+)\s*\}\}")
MAX_BYTES = 150 * 1024


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> tuple[pathlib.Path, pathlib.Path]:
    """All figures rendered twice, into two fresh folders."""
    first, second = tmp_path_factory.mktemp("first"), tmp_path_factory.mktemp("second")
    assert render.render(SCRIPTS, first) == [], "a figure script failed (see the output above)"
    assert render.render(SCRIPTS, second) == []
    return first, second


def test_make_reads_the_figure_folder_that_python_defines():
    """The Makefile reads FIGURE_DIR from posenc/figure_files.py with sed; both readings agree."""
    shown = subprocess.run(
        ["make", "--no-print-directory", "-s", "-C", str(ROOT), "--eval", "show-figure-dir: ; @echo $(FIGURE_DIR)",
         "show-figure-dir"], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == FIGURE_DIR


def test_there_are_figure_scripts():
    assert len(SCRIPTS) >= 1


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_script_follows_the_conventions(script):
    source = script.read_text()
    tree = ast.parse(source)
    docstring = ast.get_docstring(tree)
    assert docstring and docstring.splitlines()[0].endswith("."), "docstring's first line is the title"
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert "main" in functions
    assert "plt.show" not in source and "os.chdir" not in source and "os.environ" not in source
    assert "from posenc import plotting" in source and "plotting.save(" in source
    assert len(source.splitlines()) <= 120, "a figure script stays short; move shared code to posenc.plotting"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_output_is_small_described_and_deterministic(rendered, script):
    first, second = rendered
    svg = first / f"{script.stem}.svg"
    assert svg.stat().st_size <= MAX_BYTES, f"{svg.name} is {svg.stat().st_size} bytes"
    assert svg.read_bytes() == (second / svg.name).read_bytes(), "two renders differ"
    meta = json.loads((first / f"{script.stem}.json").read_text())
    assert meta["script"] == f"figures_src/{script.name}"
    assert 200 <= meta["width"] <= 1400 and 100 <= meta["height"] <= 1400
    assert len(meta["alt"].split()) >= 8, "alt text says what the figure shows"
    assert meta["caption"] and meta["title"]


def figure_uses() -> dict[str, list[str]]:
    uses: dict[str, list[str]] = {}
    for page in (ROOT / "docs").rglob("*.md"):
        for name in FIGURE_MARKER.findall(page.read_text()):
            uses.setdefault(name, []).append(str(page.relative_to(ROOT)))
    return uses


def test_every_figure_is_used_by_a_page():
    unused = sorted({s.stem for s in SCRIPTS} - set(figure_uses()))
    assert not unused, f"figures no page shows: {unused}"


def test_every_figure_a_page_shows_has_a_script():
    orphans = {name: pages for name, pages in figure_uses().items() if not (ROOT / "figures_src" / f"{name}.py").is_file()}
    assert not orphans, f"pages show figures that no script draws: {orphans}"


def test_every_image_in_the_built_site_comes_from_a_script(site_dir):
    images = set()
    for page in site_dir.rglob("*.html"):
        for src in re.findall(r'<img [^>]*src="([^"]+)"', page.read_text()):
            images.add((page.parent / src).resolve())
    assert images, "the built site shows no images"
    for image in images:
        where = image.relative_to(site_dir.resolve())
        assert where.parent == pathlib.Path("figures") and where.suffix == ".svg", f"image outside the figure pipeline: {where}"
        assert (ROOT / "figures_src" / f"{where.stem}.py").is_file(), f"no script draws {where}"
