"""How the first-paint marker's place was first found, with html.parser: the faster scan in
``site_build.first_paint`` must put it in the same place, which the hook and build tests check."""

from __future__ import annotations

import html.parser

from site_build import first_paint


class ReferenceChildEnds(html.parser.HTMLParser):
    """How the marker's place was first found, with html.parser: the scan must agree with it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.depth, self.ends, self.closed = 0, [], None

    def _offset(self, length=None):
        line, column = self.getpos()
        return (self.line_starts[line - 1] + column, length)

    def handle_starttag(self, tag, attrs):
        if self.closed:
            return
        if tag not in first_paint.VOID_ELEMENTS:
            self.depth += 1
        elif self.depth == 0:
            self.ends.append(self._offset(len(self.get_starttag_text())))

    def handle_startendtag(self, tag, attrs):
        if not self.closed and self.depth == 0:
            self.ends.append(self._offset(len(self.get_starttag_text())))

    def handle_endtag(self, tag):
        if self.closed or tag in first_paint.VOID_ELEMENTS:
            return
        if self.depth == 0:
            self.closed = self._offset()[0]
            return
        self.depth -= 1
        if self.depth == 0:
            self.ends.append(self._offset())


def reference_mark(page_html: str, blocks: int) -> str:
    start = page_html.find(first_paint.ARTICLE_OPENING)
    if start < 0:
        return page_html
    inside = page_html[start + len(first_paint.ARTICLE_OPENING) :]
    parser = ReferenceChildEnds()
    parser.line_starts = [0] + [index + 1 for index, char in enumerate(inside) if char == "\n"]
    parser.feed(inside)
    if len(parser.ends) >= blocks:
        tag_start, length = parser.ends[blocks - 1]
        at = tag_start + length if length is not None else inside.index(">", tag_start) + 1
    else:
        at = parser.closed
    at += start + len(first_paint.ARTICLE_OPENING)
    return page_html[:at] + first_paint.FIRST_SCREEN_MARKER + page_html[at:]
