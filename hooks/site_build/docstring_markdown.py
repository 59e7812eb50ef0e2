"""Griffe extension of the posenc site: the docstrings made safe to render as Markdown.

Not a MkDocs hook: mkdocs.yml names it in the python handler's ``extensions:`` by its dotted name,
``site_build.docstring_markdown``, so griffe imports it from the package the hooks have already
imported (a path would load a second copy under another name), and runs it on every object it
loads for the API reference. The docstrings are written as plain text that
``help()`` shows and the doctests run, and mkdocstrings renders them as Markdown, which misreads
two things in them:

* a doctest's ``>>>`` prompt is three nested quote markers, and its output lines are joined into
  the quote's paragraph. Each run of doctest lines (a ``>>>`` line and every line after it up to a
  blank line or a smaller indent: ``...`` continuations, more prompts, the output) becomes a fenced
  ``pycon`` block, so it is highlighted, keeps its lines and gets Material's copy button;
* Python-Markdown reads ``*`` inside words as emphasis, so ``2**53 ... 2**27`` bolds the words
  between. An asterisk run between two operands (a letter, digit or bracket on its left, one of
  those or a sign on its right) is escaped. Emphasis proper (``*word*``) has a space or
  punctuation outside each marker and is left as it is, and so is everything in a code span
  (``x``, ````x````) or a fenced block.

Only griffe's copy of each docstring changes, never the library's source, and the change is
idempotent (an escaped asterisk and a fence are not matched again).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

# A line opening or closing a fenced block; the text inside one is left as written.
FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")
# A code span: a run of backticks up to a run of the same length, within one paragraph.
CODE_SPAN = re.compile(r"(`+)(?:(?!\n[ \t]*\n).)+?(?<!`)\1(?!`)", re.S)
# An asterisk run between operands, as in 2**53, a*b*c, |i - j|**r2, x**-1. A backslash on its left
# is not an operand, so an escaped asterisk is not escaped again; nor is a stop on its right, so
# the closing marker of **bold**. stays one.
MATH_STARS = re.compile(r"(?<=[\w)\]}|])\*+(?=[\w(\[{|+-])")


def _is_prompt(line: str) -> bool:
    stripped = line.lstrip()
    return stripped == ">>>" or stripped.startswith(">>> ")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _literal_stars(prose: str) -> str:
    """``prose`` with its math-like asterisks escaped, outside its code spans."""
    pieces, last = [], 0
    for span in CODE_SPAN.finditer(prose):
        pieces += [MATH_STARS.sub(lambda m: "\\*" * len(m[0]), prose[last : span.start()]), span[0]]
        last = span.end()
    pieces.append(MATH_STARS.sub(lambda m: "\\*" * len(m[0]), prose[last:]))
    return "".join(pieces)


def markdown_safe(text: str) -> str:
    """``text`` (a docstring) with its doctests fenced and its math-like asterisks escaped."""
    lines = text.split("\n")
    out: list[str] = []
    prose: list[str] = []  # the lines since the last block, escaped together (a code span may wrap)

    def flush_prose() -> None:
        if prose:
            out.extend(_literal_stars("\n".join(prose)).split("\n"))
            prose.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:  # an existing fenced block, copied as written up to its closing fence
            flush_prose()
            end = i + 1
            while end < len(lines) and not lines[end].lstrip().startswith(fence[1]):
                end += 1
            out.extend(lines[i : end + 1])
            i = end + 1
        elif _is_prompt(line):
            flush_prose()
            indent = _indent(line)
            end = i + 1
            while end < len(lines) and lines[end].strip() and _indent(lines[end]) >= indent:
                end += 1
            # Blank lines around the fence: Markdown would otherwise glue it to the paragraph
            # before it, or the text after a dedent to the fence.
            if out and out[-1].strip():
                out.append("")
            out += [" " * indent + "```pycon", *lines[i:end], " " * indent + "```"]
            if end < len(lines) and lines[end].strip():
                out.append("")
            i = end
        else:
            prose.append(line)
            i += 1
    flush_prose()
    return "\n".join(out)


class DocstringMarkdown(griffe.Extension):
    """Runs :func:`markdown_safe` on each object's docstring as griffe creates the object.

    ``on_instance`` runs once per object (the module itself included), before anything parses the
    docstring (``Docstring.parsed`` is computed when the page is rendered).
    """

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_safe(obj.docstring.value)
