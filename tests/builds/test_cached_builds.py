"""A build from an empty cache and one from the cache it left are byte-identical, and every page's
first-paint marker sits where html.parser puts it (``tests/hooks/test_build_caches.py`` tests
each cache's key on its own)."""

from __future__ import annotations

import pathlib
import subprocess

import pytest
from site_build import first_paint
from support.first_paint_reference import reference_mark

ROOT = pathlib.Path(__file__).resolve().parents[2]

# `mkdocs build` with the build's cache in the folder argv[2] (hooks/ first on sys.path, so the
# hooks find the one site_build module with its CACHE moved there).
BUILD_WITH_CACHE = """
import pathlib, sys
sys.path.insert(0, "hooks")
from site_build import paths
paths.CACHE = pathlib.Path(sys.argv[2])
from mkdocs.__main__ import cli
cli(["build", "--strict", "--quiet", "--site-dir", sys.argv[1]], standalone_mode=False)
"""


def _build(site: pathlib.Path, cache: pathlib.Path) -> None:
    python = ROOT / ".venv" / "bin" / "python"
    if not python.is_file():
        pytest.fail("the virtual environment is not built: run `make`")
    build = subprocess.run(
        [str(python), "-c", BUILD_WITH_CACHE, str(site), str(cache)], cwd=ROOT, capture_output=True, text=True
    )
    assert build.returncode == 0, f"mkdocs build failed:\n{build.stderr[-3000:]}"


def _files(directory: pathlib.Path) -> dict[str, bytes]:
    return {
        file.relative_to(directory).as_posix(): file.read_bytes() for file in directory.rglob("*") if file.is_file()
    }


@pytest.fixture(scope="module")
def cold_and_warm(tmp_path_factory) -> tuple[pathlib.Path, pathlib.Path, pathlib.Path]:
    folder = tmp_path_factory.mktemp("caches")
    cache = folder / "cache"
    _build(folder / "cold", cache)
    _build(folder / "warm", cache)
    return folder / "cold", folder / "warm", cache


def test_a_build_from_its_caches_is_the_build_without_them(cold_and_warm):
    cold, warm, cache = cold_and_warm
    # Every cache was written and then read (the KaTeX HTML, the cut fonts and stylesheet, the
    # executed notebook, the commit dates, the highlighted code, the formatted signatures, the
    # search entries, the calc values, the panels' colours, the first-paint markers, the compiled templates,
    # the pages' converted Markdown).
    assert {folder.name for folder in cache.iterdir()} >= {
        "katex",
        "fonts",
        "stylesheets",
        "notebooks",
        "highlight",
        "signatures",
        "search",
        "calc",
        "palettes",
        "first-paint",
        "templates",
        "rendered-pages",
    }
    first, second = _files(cold), _files(warm)
    # The sitemap holds the build date, the same within a day; a build across midnight would differ there.
    assert sorted(first) == sorted(second)
    differing = [name for name in first if first[name] != second[name]]
    assert not differing, f"files a warm cache changed: {differing}"


def test_every_pages_first_paint_marker_is_where_html_parser_puts_it(cold_and_warm):
    cold = cold_and_warm[0]
    pages = sorted(cold.rglob("*.html"))
    assert len(pages) > 50
    for page in pages:
        text = page.read_text(encoding="utf-8")
        if first_paint.FIRST_SCREEN_MARKER not in text:
            continue
        bare = text.replace(first_paint.FIRST_SCREEN_MARKER, "", 1)
        assert first_paint.mark_first_screen(bare) == text
        assert reference_mark(bare, first_paint.FIRST_SCREEN_BLOCKS) == text, page.relative_to(cold)
