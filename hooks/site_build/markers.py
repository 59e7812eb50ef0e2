"""The page markers: ``{{ ... }}`` in a page's Markdown, expanded before MkDocs parses it (an
unknown marker, figure or derivation ID stops the build).

``{{ figure: NAME }}``
    The figure ``NAME.svg``, inline in the page (its text is page text, in the page's
    typeface and colours; its size and accessible name are in it), with the caption of its
    ``posenc.site.figure_files.FigureMeta`` (``posenc.site.plotting.save`` wrote both), a link to the
    page of its script and a link to the SVG at full size (``docs/javascripts/figures.js``
    opens that in an enlarged view). See ``figures``.
``{{ ref: ID }}``
    A link to derivation ``ID``'s own page, ``derivations/ID/``.
``{{ eq: ID }}``
    Derivation ``ID``'s statement as a display equation, followed by a link to its proof.
``{{ calc FORMAT: EXPRESSION }}``
    ``EXPRESSION`` evaluated with ``posenc`` and ``np`` in scope, formatted with ``FORMAT``
    (a format spec such as ``.4f``; arrays are formatted element by element).
``{{ bibtex: ID }}``
    Derivation ``ID``'s BibTeX record as a code block (the one its own page shows).
``{{ cite: site }}``, ``{{ cite: articles }}``
    The BibTeX record of the whole site; a table of the articles (the pages under the nav's
    "Learn" section) followed by one record per article. See ``citations``.
``{{ release }}``
    The release the records describe, as "version X, released D Month YYYY".
``{{ url: PATH }}``
    The address to cite for ``PATH`` (for example ``derivations/kernel/``), in code format.
``{{ derivations }}``
    The index of the derivations: one item per ID, anchored ``#ID``, linking to the ID's page.
``{{ peers }}``
    What ``make test-peers`` compares, read from ``tests/peers/test_*.py`` (see ``peer_tests``).
``{{ panel: NAME }}``
    The interactive panel ``NAME``, written from its description ``docs/panels/NAME.yml`` with the
    description's own markers expanded (``calc`` markers give its starting numbers). See ``panels``.

Markers are not expanded inside code: fenced blocks, indented code blocks and inline code
spans show them as written (:func:`split_code` finds them). In prose, a backslash before the
braces shows a marker literally: ``\\{{ ref: kernel }}`` reads as ``{{ ref: kernel }}`` on the
page (Markdown drops the backslash that escapes the first brace).

A new marker is one more branch of :func:`expand_marker`, calling the module of its concern.
"""

from __future__ import annotations

import pathlib
import re
import sys

import numpy as np
from mkdocs.exceptions import PluginError

import posenc

from . import citations, derivation_pages, figures, panels, peer_tests
from .kept import Kept, source_texts

# A backslash before the braces escapes a marker (see the module docstring).
MARKER = re.compile(r"(?<!\\)\{\{\s*(?P<kind>[a-z]+)(?:\s+(?P<spec>[^:}]*?))?\s*(?::\s*(?P<arg>.*?))?\s*\}\}")
UNESCAPED_OPENING = re.compile(r"(?<!\\)\{\{")


# The library's sources, read at call time so a test can point it at a copy.
LIBRARY = pathlib.Path(posenc.__file__).parent


def _calculator() -> list[str]:
    """What a ``calc`` value depends on besides its expression and format: the library's code,
    NumPy and Python (an expression sees ``posenc`` and ``np`` only)."""
    return [np.__version__, sys.version, *source_texts(LIBRARY)]


# A calc value takes up to a second to compute (a RoPE base bound scans thousands of bases), and
# a page edit leaves nearly all of them as they were.
CALCS = Kept("calc", _calculator)


def calc(expression: str, spec: str | None, marker: str) -> str:
    """``expression``'s value formatted with ``spec``; errors name the ``marker`` they come from.

    A value computed by an earlier build from the same library is served again (``CALCS``)."""
    key = f"{spec or ''}\0{expression}"
    kept = CALCS.get(key)
    if isinstance(kept, str):
        return kept
    text = _calculated(expression, spec, marker)
    CALCS.put(key, text)
    return text


def _calculated(expression: str, spec: str | None, marker: str) -> str:
    try:
        # Page text is trusted source, like the figure scripts; NumPy needs the real builtins.
        value = eval(expression, {"posenc": posenc, "np": np})
    except Exception as error:  # any error: name the marker that failed
        raise PluginError(f"calc marker {marker!r} failed: {type(error).__name__}: {error}") from error
    array = np.asarray(value)
    values = [array.item()] if array.ndim == 0 else array.ravel().tolist()
    if any(v is None for v in values):
        raise PluginError(f"calc marker {marker!r} gave None: the expression returns no number to show")
    try:
        texts = [format(v, spec or "") for v in values]
    except (TypeError, ValueError) as error:
        raise PluginError(
            f"calc marker {marker!r}: format spec {spec!r} does not apply to "
            f"{type(values[0]).__name__} {values[0]!r}: {error}"
        ) from error
    return texts[0] if array.ndim == 0 else "[" + ", ".join(texts) + "]"


def expand_marker(kind: str, spec: str | None, arg: str, marker: str, page, config) -> str:
    """What one marker becomes on ``page``; ``marker`` is its text, for errors."""
    src = page.file.src_uri
    if kind == "figure":
        return figures.figure_markdown(arg, src, page.file.url)
    if kind == "ref":
        return derivation_pages.ref(arg, src)
    if kind == "eq":
        return derivation_pages.eq(arg, src)
    if kind == "calc":
        return calc(arg, spec, marker)
    if kind == "bibtex":
        return f"```bibtex\n{citations.bibtex(derivation_pages.derivation(arg), config['site_url'])}\n```"
    if kind == "derivations":
        return derivation_pages.index_markdown(src)
    if kind == "peers":
        return peer_tests.peer_test_list()
    if kind == "cite":
        return citations.cite_markdown(arg, src, config)
    if kind == "release":
        return citations.release_text()
    if kind == "url":
        return f"`{citations.cited_root(config['site_url'])}{arg}`"
    if kind == "panel":
        # The template's markers are expanded here; a panel inside a panel is refused.
        return MARKER.sub(lambda inner: _expand_in_panel(inner, arg, page, config), panels.panel_template(arg))
    raise PluginError(f"unknown marker {marker!r}")


def _expand_in_panel(match: re.Match, name: str, page, config) -> str:
    if match["kind"] == "panel":
        raise PluginError(f"panel {name!r}: its template holds another panel, {match[0]!r}")
    try:
        return expand_marker(match["kind"], match["spec"], (match["arg"] or "").strip(), match[0], page, config)
    except PluginError as error:
        raise PluginError(f"panel {name!r}: {error}") from error


def expand_markers(markdown: str, page, config) -> str:
    """``markdown`` (the page's) with every marker outside code expanded; errors name the page."""
    src = page.file.src_uri

    def expand(match: re.Match) -> str:
        try:
            return expand_marker(match["kind"], match["spec"], (match["arg"] or "").strip(), match[0], page, config)
        except PluginError as error:
            raise PluginError(f"{src}: {error}") from error

    def expand_prose(text: str) -> str:
        leftover = UNESCAPED_OPENING.search(MARKER.sub("", text))
        if leftover:
            # A marker broken across lines (or mistyped) would otherwise reach readers as raw text.
            line = leftover.string[leftover.start() :].split("\n", 1)[0]
            raise PluginError(f"{src}: unexpanded marker (markers must sit on one line): {line[:80]!r}")
        return MARKER.sub(expand, text)

    return "".join(text if is_code else expand_prose(text) for is_code, text in split_code(markdown))


# ---------------------------------------------------------------------------------------
# Where code is in a page's Markdown (markers there are shown, not expanded)

FENCE_OPENING = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})")
# Lines that open a block whose content is indented by four more spaces (Python-Markdown's
# tab length): list items, admonitions and collapsible blocks, content tabs, footnotes,
# definitions. An indented line inside such a block is prose, not code.
CONTAINER_OPENING = re.compile(r"^[ \t]*(?:[-*+][ \t]|\d+[.)][ \t]|!!!|\?\?\?|===|\[\^[^\]]+\]:|:[ \t])")
# A code span: a run of backticks, then text up to the same run (within one paragraph).
INLINE_CODE = re.compile(r"(?<![\\`])(?P<ticks>`+)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)(?P=ticks)(?!`)", re.S)


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" "))


def split_blocks(markdown: str) -> list[tuple[bool, str]]:
    """``markdown`` cut into ``(is_code, text)`` runs of whole lines: fenced and indented code blocks."""
    runs: list[tuple[bool, str]] = []
    containers: list[int] = []  # content indentation of each open container, innermost last
    fence: str | None = None  # the opening fence of the fenced block we are in
    code_indent: int | None = None  # the indentation of the indented code block we are in
    previous_blank = True
    for line in markdown.splitlines(keepends=True):
        blank = not line.strip()
        indent = _indent(line)
        if fence is not None:
            is_code = True
            closing = FENCE_OPENING.match(line)
            if (
                closing
                and closing["fence"][0] == fence[0]
                and len(closing["fence"]) >= len(fence)
                and not line.strip().strip(fence[0])
            ):
                fence = None
        elif blank:
            is_code = code_indent is not None  # a blank line may sit inside an indented code block
        elif code_indent is not None and indent >= code_indent:
            is_code = True
        else:
            code_indent = None
            if previous_blank:
                while containers and indent < containers[-1]:
                    containers.pop()
            base = containers[-1] if containers else 0
            opening = FENCE_OPENING.match(line)
            if previous_blank and indent >= base + 4:
                code_indent, is_code = base + 4, True
            elif opening:
                fence, is_code = opening["fence"], True
            else:
                is_code = False
                if CONTAINER_OPENING.match(line):
                    while containers and containers[-1] > indent:
                        containers.pop()
                    containers.append(indent + 4)
        previous_blank = blank
        if runs and runs[-1][0] == is_code:
            runs[-1] = (is_code, runs[-1][1] + line)
        else:
            runs.append((is_code, line))
    return runs


def split_code(markdown: str) -> list[tuple[bool, str]]:
    """``markdown`` cut into ``(is_code, text)`` runs: code blocks and inline code spans, and prose."""
    runs: list[tuple[bool, str]] = []
    for is_code, text in split_blocks(markdown):
        if is_code:
            runs.append((True, text))
            continue
        last = 0
        for span in INLINE_CODE.finditer(text):
            runs += [(False, text[last : span.start()]), (True, span[0])]
            last = span.end()
        runs.append((False, text[last:]))
    return runs
