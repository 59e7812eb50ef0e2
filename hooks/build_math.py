"""MkDocs hook: the math of every page rendered to HTML by KaTeX at build time.

After each page is rendered, TeX in ``\\(...\\)`` and ``\\[...\\]`` (what pymdownx.arithmatex
writes) is replaced by KaTeX's HTML, so pages ship no math JavaScript and need no network.
KaTeX's stylesheet and fonts are copied into the site, the faces the pages use cut down to the
characters their math draws. Math in notebook Markdown cells is the ``notebook_pages`` hook's;
both use the one KaTeX process of ``katex_process``.
"""

from __future__ import annotations

import html
import pathlib
import re
import shutil

from katex_process import (
    FONT_PRELOADS_MARK,
    FONT_USE,
    KATEX,
    KATEX_DIST,
    math_html,
    require_node_and_katex,
    ship_fonts,
    with_font_preloads,
)

# An arithmatex element, and after inline math the text glued to it (up to a space or a tag).
ARITHMATEX = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\s*(?:\\\((?P<inline>.*?)\\\)|\\\[(?P<display>.*?)\\\])\s*</(?P=tag)>'
    r"(?(inline)(?P<tail>[^\s<]*))",
    re.S,
)


def on_config(config):
    require_node_and_katex()
    return config


def on_pre_build(config):
    """Each build ships the faces and characters its own pages draw (``mkdocs serve`` rebuilds)."""
    FONT_USE.clear()


def on_post_page(output, page, config):
    where = page.file.src_uri

    def arithmatex(match: re.Match) -> str:
        display = match["display"] is not None
        tex = html.unescape(match["display"] if display else match["inline"])
        return math_html(tex, display, where, match["tail"] or "")

    output = ARITHMATEX.sub(arithmatex, output)
    # A notebook's math is rendered after this, by notebook_pages, which preloads its fonts.
    return output if page.file.src_uri.endswith(".ipynb") else with_font_preloads(output, page.url)


def on_post_template(output, template_name, config):
    """A theme page of its own (the 404 page) has no rendered math (this hook renders only
    documentation pages), so nothing to preload: the mark goes."""
    return output.replace(FONT_PRELOADS_MARK, "")


def on_post_build(config):
    """Ship KaTeX's stylesheet and fonts with the site (the faces in use cut down to the
    characters drawn); stop the KaTeX process."""
    KATEX.close()
    target = pathlib.Path(config["site_dir"]) / "assets" / "katex"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(KATEX_DIST / "katex.min.css", target / "katex.min.css")
    ship_fonts(target / "fonts")


def on_shutdown():
    KATEX.close()
