"""MkDocs hook: the math of every page rendered to HTML by KaTeX at build time (``site_build.katex``).

Math in notebook Markdown cells is the ``notebook_pages`` hook's; both use the one KaTeX process.
"""

from __future__ import annotations

from site_build import katex
from site_build.state import BUILD


def on_config(config):
    katex.require_node_and_katex()
    return config


def on_pre_build(config):
    BUILD.forget_math()


def on_post_page(output, page, config):
    output = katex.render_arithmatex(output, page.file.src_uri)
    # A notebook's math is rendered after this, by notebook_pages, which preloads its fonts.
    return output if page.file.src_uri.endswith(".ipynb") else katex.with_font_preloads(output, page.url)


def on_post_template(output, template_name, config):
    # A theme page of its own (the 404 page) has no rendered math, so nothing to preload: the mark goes.
    return output.replace(katex.FONT_PRELOADS_MARK, "")


def on_post_build(config):
    katex.KATEX.close()
    katex.ship_katex(config["site_dir"])


def on_shutdown():
    katex.KATEX.close()
