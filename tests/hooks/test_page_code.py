"""Every Python block shown on a page runs, in order, so no code on the site is stale.

Blocks of one page share one namespace, as a reader running them top to bottom would. A block
that imports torch runs where torch is installed (it is an optional extra, not needed by make).
"""

from __future__ import annotations

import importlib.util
import pathlib
import re
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md") if "figures" not in p.parts)
BLOCK = re.compile(r"^(?P<indent>[ \t]*)```python[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.S | re.M)
HAS_TORCH = importlib.util.find_spec("torch") is not None


def python_blocks(page: pathlib.Path) -> list[tuple[int, str]]:
    """(line number, dedented code) of every ```python block of a page, tabs included."""
    text = page.read_text()
    return [(text.count("\n", 0, match.start()) + 1, textwrap.dedent(match["body"])) for match in BLOCK.finditer(text)]


def test_the_block_finder_sees_indented_blocks_in_tabs(tmp_path):
    page = tmp_path / "page.md"
    page.write_text('=== "NumPy"\n\n    ```python\n    x = 1\n    ```\n\n```python\ny = 2\n```\n')
    assert python_blocks(page) == [(3, "x = 1\n"), (7, "y = 2\n")]


@pytest.mark.parametrize(
    "page", [p for p in PAGES if python_blocks(p)], ids=lambda p: str(p.relative_to(ROOT / "docs"))
)
def test_page_code_runs(page):
    namespace: dict = {"__name__": f"page_{page.stem}"}
    for line, code in python_blocks(page):
        if "import torch" in code and not HAS_TORCH:
            continue  # the PyTorch tab; checked against NumPy where torch is installed
        try:
            exec(compile(code, f"{page.relative_to(ROOT)}:{line}", "exec"), namespace)
        except Exception as error:  # any error: report the page and line of the failing block
            pytest.fail(f"{page.relative_to(ROOT)} line {line}: {type(error).__name__}: {error}")
