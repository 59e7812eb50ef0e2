"""Griffe extension of the posenc site: the API docstrings made safe to render as Markdown.

Not a MkDocs hook: mkdocs.yml names it to mkdocstrings by its dotted name, so griffe imports the
copy of ``site_build`` the hooks loaded. On griffe's copy of each docstring (never the source),
each run of doctest lines becomes a fenced ``pycon`` block and each asterisk run between two
operands (``2**53``) is escaped, outside code; running it twice changes nothing more.
Design history: docs/design-notes.md#api-docstrings
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
