"""One Node process running KaTeX for the whole build, shared by the hooks that render math.

Not a hook itself: ``build_math`` (arithmatex output on every page) and ``notebook_pages``
(math in notebook Markdown cells) import it, so both use the same process and cache, and
:func:`math_html` wraps their math the same way. MkDocs puts a hook's folder on ``sys.path``
while loading the hook, which is how they find it.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess

from mkdocs.exceptions import PluginError

ROOT = pathlib.Path(__file__).resolve().parents[1]
KATEX_DIST = ROOT / "node_modules" / "katex" / "dist"
NODE_HELP = "install Node.js 20 with npm (Debian: apt-get install nodejs npm); KaTeX runs on it to render the math"


def require_node_and_katex() -> None:
    """Stop before building when Node.js or KaTeX is missing, saying how to install it."""
    if shutil.which("node") is None:
        raise PluginError(f"node is not installed or not on PATH: {NODE_HELP}")
    if not KATEX_DIST.is_dir():
        raise PluginError("KaTeX is not installed: run `npm ci` (or `make`)")


class KaTeX:
    """A KaTeX renderer in one Node process (``katex_server.js``), started on first use."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.cache: dict[tuple[str, bool], str] = {}

    def render(self, tex: str, display: bool, where: str) -> str:
        """``tex`` as HTML; an error names the page ``where`` it is."""
        key = (tex, display)
        if key not in self.cache:
            if self.process is None:
                if not KATEX_DIST.is_dir():
                    raise PluginError("KaTeX is not installed: run `npm ci` (or `make`)")
                self.process = subprocess.Popen(
                    ["node", str(pathlib.Path(__file__).with_name("katex_server.js"))],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
                )
            self.process.stdin.write(json.dumps({"tex": tex, "display": display}) + "\n")
            self.process.stdin.flush()
            answer = json.loads(self.process.stdout.readline())
            if "error" in answer:
                raise PluginError(f"{where}: math does not render: {answer['error']}")
            self.cache[key] = answer["html"]
        return self.cache[key]

    def close(self) -> None:
        if self.process is not None:
            self.process.stdin.close()
            self.process.wait(timeout=10)
            self.process = None


KATEX = KaTeX()
# How KaTeX (as locked in package-lock.json) opens each part of an inline formula; lines may
# break only between parts.
KATEX_PART = '<span class="katex-base">'


def math_html(tex: str, display: bool, where: str, tail: str = "") -> str:
    """``tex`` rendered by KaTeX and wrapped as every page shows math (posenc.css styles both wrappers).

    A display equation sits in a ``posenc-math`` box that scrolls sideways, with a cue, when the
    column is narrower than the equation. Inline math is followed by ``tail``, the text glued
    to it in the source (a comma, a full stop, a closing parenthesis). Browsers may break a line
    between a formula and the character after it, so a formula that KaTeX draws as one
    unbreakable part (one ``katex-base`` span) goes into a ``posenc-nowrap`` span with its tail. A formula
    of several parts keeps its own break points (after relations and operators) instead:
    Chromium ignores the span's nowrap after a part that may break, and a nowrap formula
    longer than a phone's line would widen the page.
    """
    rendered = KATEX.render(tex, display, where)
    if display:
        return f'<div class="posenc-math">{rendered}</div>'
    if tail and rendered.count(KATEX_PART) == 1:
        return f'<span class="posenc-nowrap">{rendered}{tail}</span>'
    return rendered + tail
