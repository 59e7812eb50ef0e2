"""MkDocs hook: what is kept from one build for the next (``site_build.kept``): KaTeX's math,
highlighted code, the API page's formatted signatures, the search index's entries, the
``calc`` markers' values, the panels' colours, the theme's compiled templates and each page's
Markdown converted to HTML."""

from __future__ import annotations

from site_build import highlighting, kept, rendered_pages, search_entries, signatures, templates


def on_config(config):
    for wrapped in (highlighting, signatures, search_entries, rendered_pages):
        wrapped.install()
    return config


def on_pre_build(config):
    kept.forget_builds()
    rendered_pages.forget_build()


def on_env(env, config, files):
    return templates.install(env)


def on_post_build(config):
    kept.save_all()
