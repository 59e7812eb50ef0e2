"""Pygments' highlighting of the site's code, kept between builds (see ``kept``).

Every code block of the pages, the docstrings' examples and the API's source listings goes
through ``pymdownx.highlight``, which calls ``pygments.highlight(code, lexer, formatter)``: on a
built checkout most of those blocks have not changed, and highlighting them again was a large
part of a one-page edit. :func:`install` puts :func:`kept_highlight` in its place, which serves
the HTML of a block highlighted before by the same Pygments, pymdown-extensions and options.
"""

from __future__ import annotations

import json
import pathlib
from importlib import metadata

import pygments
import pymdownx.highlight

from .kept import Kept, digest


def _maker() -> tuple[str, ...]:
    return (
        metadata.version("pygments"),
        metadata.version("pymdown-extensions"),
        pathlib.Path(__file__).read_text(encoding="utf-8"),
    )


HIGHLIGHTS = Kept("highlight", _maker)


def _settings(obj) -> str:
    """What a lexer or formatter does, as text: its class, the options it was made with and its
    plain attributes (pymdownx's block formatter rewrites one option in place and keeps the
    original in an attribute). Any other value is written with ``repr``; one that shows its
    address makes a new key each build, which only costs the highlighting again."""
    plain = {
        name: value for name, value in vars(obj).items() if isinstance(value, str | int | float | bool | type(None))
    }
    kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
    return json.dumps([kind, getattr(obj, "options", {}), plain], sort_keys=True, default=repr)


def kept_highlight(code, lexer, formatter, outfile=None):
    """``pygments.highlight``, served from the kept HTML when the same code was highlighted the same way."""
    if outfile is not None:
        return pygments.highlight(code, lexer, formatter, outfile)
    key = digest([code, _settings(lexer), _settings(formatter)])
    html = HIGHLIGHTS.get(key)
    if not isinstance(html, str):
        html = pygments.highlight(code, lexer, formatter)
        HIGHLIGHTS.put(key, html)
    return html


def install() -> None:
    """Route ``pymdownx.highlight``'s calls to Pygments through :func:`kept_highlight`."""
    pymdownx.highlight.highlight = kept_highlight
