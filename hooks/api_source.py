"""MkDocs hook: the API reference's pages of module source, and its links to them (``site_build.api_source``)."""

from __future__ import annotations

from site_build import api_source


def on_files(files, config):
    for file in api_source.source_page_files(config):
        files.append(file)
    return files


def on_page_content(html_content, page, config, files):
    return api_source.with_source(html_content, page, files)
