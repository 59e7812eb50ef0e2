"""MkDocs hook: notebook pages made to fit the site (``site_build.notebooks`` says how)."""

from __future__ import annotations

from site_build import notebooks


def on_config(config):
    notebooks.keep_executed_notebooks(config)
    return config


def on_page_markdown(markdown, page, config, files):
    notebooks.take_description(page)
    return markdown


def on_page_content(html_content, page, config, files):
    return notebooks.with_download_link(html_content, page)


def on_post_page(output, page, config):
    return notebooks.finish_page(output, page)
