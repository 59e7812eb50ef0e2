"""MkDocs hook: each page's citation and link-preview tags, card image and last-changed line
(``site_build.page_meta`` says what and why)."""

from __future__ import annotations

from site_build import page_meta


def on_pre_build(config):
    page_meta.forget_build()


def on_page_context(context, page, config, nav):
    page_meta.describe_page(page, config)
    return context
