"""What the first paint of a page waits for.

overrides/main.html holds a page's first paint until FIRST_SCREEN_MARKER is parsed;
:func:`mark_first_screen` puts that marker after the article's first FIRST_SCREEN_BLOCKS children,
the blocks posenc.css always draws (read from its content-visibility rule), or at the article's
end when it has fewer, so those blocks are painted whole and nothing more is waited for. The
``first_paint`` hook runs last, so it counts the children as CSS's :nth-child does.
Design history: docs/design-notes.md#first-paint
"""

from __future__ import annotations

import html.parser
import re

from mkdocs.exceptions import PluginError

from . import paths

# The article rule of posenc.css's content-visibility, with or without the :not(:has(...)) that
# exempts derivation pages: it skips the children from :nth-child(n+K) on.
ALWAYS_DRAWN_RULE = re.compile(r"\.md-content__inner(?::not\(:has\([^)]*\)\))?\s*>\s*:nth-child\(n\s*\+\s*(\d+)\)")


def always_drawn_blocks(css: str) -> int:
    """How many of the article's first children posenc.css always draws, read from its rule.

    The stylesheet is the one place the number is written: the marker follows what it draws.
    """
    first_skipped = {int(number) for number in ALWAYS_DRAWN_RULE.findall(css)}
    if len(first_skipped) != 1:
        raise PluginError(
            f"posenc.css should skip the article's blocks from one :nth-child(n+K), found "
            f"{sorted(first_skipped) or 'none'}"
        )
    return first_skipped.pop() - 1


FIRST_SCREEN_BLOCKS = always_drawn_blocks((paths.DOCS / "stylesheets" / "posenc.css").read_text(encoding="utf-8"))
FIRST_SCREEN_MARKER = '<span id="posenc-first-screen-end" hidden></span>'
ARTICLE_OPENING = '<article class="md-content__inner md-typeset">'
VOID_ELEMENTS = frozenset("area base br col embed hr img input link meta source track wbr".split())


class _ChildEnds(html.parser.HTMLParser):
    """Reads the inside of an element and records where each of its children ends: the
    (line, column) of the tag that ends the child (its closing tag, or its own tag when it is
    void or self-closed) with that tag's length, or None for a closing tag (which ends at its
    first ">"). ``closed`` is where the element's own closing tag starts, once read."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.depth = 0
        self.ends: list[tuple[tuple[int, int], int | None]] = []
        self.closed: tuple[int, int] | None = None

    def handle_starttag(self, tag, attrs):
        if self.closed:
            return
        if tag not in VOID_ELEMENTS:
            self.depth += 1
        elif self.depth == 0:
            self.ends.append((self.getpos(), len(self.get_starttag_text())))

    def handle_startendtag(self, tag, attrs):
        if not self.closed and self.depth == 0:
            self.ends.append((self.getpos(), len(self.get_starttag_text())))

    def handle_endtag(self, tag):
        if self.closed or tag in VOID_ELEMENTS:
            return
        if self.depth == 0:
            self.closed = self.getpos()
            return
        self.depth -= 1
        if self.depth == 0:
            self.ends.append((self.getpos(), None))


def _offset(text: str, line: int, column: int) -> int:
    line_start = 0
    for _ in range(line - 1):  # the parser counts lines by "\n" alone
        line_start = text.index("\n", line_start) + 1
    return line_start + column


def mark_first_screen(page_html: str, blocks: int = FIRST_SCREEN_BLOCKS) -> str:
    """``page_html`` with FIRST_SCREEN_MARKER after its article's first ``blocks`` children, or
    at the article's end when it has no more; unchanged when it has no article."""
    start = page_html.find(ARTICLE_OPENING)
    if start < 0:
        return page_html
    inside = page_html[start + len(ARTICLE_OPENING) :]
    parser = _ChildEnds()
    chunk = 16_384  # only the start of a long article is read
    for begin in range(0, len(inside), chunk):
        parser.feed(inside[begin : begin + chunk])
        if len(parser.ends) >= blocks or parser.closed:
            break
    if len(parser.ends) >= blocks:
        (line, column), length = parser.ends[blocks - 1]
        tag_start = _offset(inside, line, column)
        at = tag_start + length if length is not None else inside.index(">", tag_start) + 1
    elif parser.closed:
        at = _offset(inside, *parser.closed)
    else:
        raise ValueError("the page's article is never closed")
    at += start + len(ARTICLE_OPENING)
    return page_html[:at] + FIRST_SCREEN_MARKER + page_html[at:]


def marked(output: str, name: str) -> str:
    """``output``, the written page ``name``, with the marker; an error names the page."""
    try:
        return mark_first_screen(output)
    except ValueError as error:
        raise PluginError(f"{name}: {error}") from error
