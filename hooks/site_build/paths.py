"""Where the site's build reads from. Read as ``paths.NAME`` at call time, so a test can move one."""

from __future__ import annotations

import pathlib
import posixpath

from posenc.site.figure_files import FIGURE_DIR

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FIGURES = ROOT / FIGURE_DIR
VERIFY_REPORT = ROOT / "build" / "verify.json"
CITATION = ROOT / "CITATION.cff"
PEER_TESTS = ROOT / "tests" / "peers"
# Written by ``python -m posenc.site.render --update --errors``: why each failing figure script failed.
FIGURE_ERRORS = ROOT / "build" / "figure-errors.json"
# What a build keeps for the next one, each entry under a key of everything it was made from.
CACHE = ROOT / "build" / "cache"


def relative(page_src: str, target: str) -> str:
    """Path from the Markdown file ``page_src`` to the docs file ``target``."""
    return posixpath.relpath(target, posixpath.dirname(page_src) or ".")
