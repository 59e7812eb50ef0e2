"""MkDocs hook: what is kept from one build for the next besides KaTeX's math (``site_build.kept``):
highlighted code, the API page's formatted signatures, the search index's entries and the
``calc`` markers' values."""

from __future__ import annotations

from site_build import highlighting, markers, search_entries, signatures

STORES = (highlighting.HIGHLIGHTS, signatures.SIGNATURES, search_entries.ENTRIES, markers.CALCS)


def on_config(config):
    highlighting.install()
    signatures.install()
    search_entries.install()
    return config


def on_pre_build(config):
    for store in STORES:
        store.forget_build()


def on_post_build(config):
    # Only after a build that succeeded: a failed one keeps what the last good one used.
    for store in STORES:
        store.save()
