"""MkDocs hook: the marker that ends what a page's first paint waits for (``site_build.first_paint``)."""

from __future__ import annotations

from site_build import first_paint


def on_post_page(output, page, config):
    return first_paint.marked(output, page.file.src_uri)


def on_post_template(output, template_name, config):
    return first_paint.marked(output, template_name)
