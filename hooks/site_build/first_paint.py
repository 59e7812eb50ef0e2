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
import pathlib
import re

from mkdocs.exceptions import PluginError

from . import paths
from .kept import Kept, digest

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


# The markup that moves the depth count, tokenised as html.parser reads it (html.parser was the
# first way this was read; a test holds this scan to it on every built page): comments,
# declarations and processing instructions, which hold no elements, then end and start tags, a
# start tag's attributes quoted or not (a quoted ">" does not end it). The content of a script or
# style element is text up to its end tag.
TAG = re.compile(
    r"<!--.*?--\s*>|<![^>]*>|<\?[^>]*>"
    r"|</(?P<end>[a-zA-Z][^\t\n\r\f />\x00]*)[^>]*>"
    r"|<(?P<start>[a-zA-Z][^\t\n\r\f />\x00]*)(?:[^>\"']|\"[^\"]*\"|'[^']*')*>",
    re.S,
)
RAW_TEXT_END = {name: re.compile(rf"</\s*{name}\s*>", re.I) for name in ("script", "style")}


def _self_closed(start_tag: str) -> bool:
    """Whether html.parser reads ``start_tag`` (ending in "/>") as self-closed: not when an unquoted
    attribute value ends there and takes the "/" (``<p a=b/>``). Its own patterns read the attributes."""
    position = html.parser.tagfind_tolerant.match(start_tag, 1).end()
    while attribute := html.parser.attrfind_tolerant.match(start_tag, position):
        if attribute.end() == position:
            break
        position = attribute.end()
    return start_tag[position:].strip().endswith("/>")


def child_ends(inside: str, wanted: int) -> tuple[list[int], int | None]:
    """Where each of the first ``wanted`` children of an element ends in ``inside`` (the text
    after its opening tag): the offset just past the tag that ends the child (its closing tag,
    or its own tag when it is void or self-closed), and where the element's own closing tag
    starts if it comes first (else None)."""
    depth, ends, position = 0, [], 0
    while len(ends) < wanted:
        tag = TAG.search(inside, position)
        if tag is None:
            return ends, None
        position = tag.end()
        if tag["start"]:
            name = tag["start"].lower()
            self_closed = tag[0].endswith("/>") and _self_closed(tag[0])
            if name not in VOID_ELEMENTS and not self_closed:
                depth += 1
                if name in RAW_TEXT_END:
                    raw_end = RAW_TEXT_END[name].search(inside, position)
                    position = raw_end.start() if raw_end else len(inside)
            elif depth == 0:
                ends.append(position)
        elif tag["end"]:
            if tag["end"].lower() in VOID_ELEMENTS:
                continue
            if depth == 0:
                return ends, tag.start()
            depth -= 1
            if depth == 0:
                ends.append(position)
    return ends, None


def _marker_offset(page_html: str, blocks: int) -> int | None:
    """Where FIRST_SCREEN_MARKER goes in ``page_html`` (see :func:`mark_first_screen`), or None
    when the page has no article."""
    start = page_html.find(ARTICLE_OPENING)
    if start < 0:
        return None
    inside = page_html[start + len(ARTICLE_OPENING) :]
    ends, closed = child_ends(inside, blocks)
    if len(ends) >= blocks:
        at = ends[blocks - 1]
    elif closed is not None:
        at = closed
    else:
        raise ValueError("the page's article is never closed")
    return at + start + len(ARTICLE_OPENING)


def _with_marker(page_html: str, at: int | None) -> str:
    return page_html if at is None else page_html[:at] + FIRST_SCREEN_MARKER + page_html[at:]


def mark_first_screen(page_html: str, blocks: int = FIRST_SCREEN_BLOCKS) -> str:
    """``page_html`` with FIRST_SCREEN_MARKER after its article's first ``blocks`` children, or
    at the article's end when it has no more; unchanged when it has no article."""
    return _with_marker(page_html, _marker_offset(page_html, blocks))


# The scan reads every tag up to the marker, a figure's SVG included: a few tenths of a second a
# build, for pages that a one-page edit leaves as they were. Kept per page HTML and block count.
MARKS = Kept("first-paint", lambda: [pathlib.Path(__file__).read_text(encoding="utf-8")])


def marked(output: str, name: str) -> str:
    """``output``, the written page ``name``, with the marker; an error names the page."""
    key = digest([output, str(FIRST_SCREEN_BLOCKS)])
    at = MARKS.get(key)
    if not isinstance(at, int):
        try:
            found = _marker_offset(output, FIRST_SCREEN_BLOCKS)
        except ValueError as error:
            raise PluginError(f"{name}: {error}") from error
        at = -1 if found is None else found  # -1: no article, nothing to mark
        MARKS.put(key, at)
    return _with_marker(output, None if at < 0 else at)
