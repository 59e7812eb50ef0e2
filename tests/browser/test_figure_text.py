"""Figure text as readers see it: at least 11 CSS pixels on a phone (390 x 844) and on a desktop
(1280 x 800), in both colour schemes, on every page that shows a figure (each figure's own page
included), and no text drawn over other text.

The size of a piece of text is its font size times the scale its SVG is displayed at (the
screen transformation of the element, which holds the viewBox's scale and any rotation), read
from every element that holds text itself: a ``<text>``, or each ``<tspan>`` of one (math text is
one ``<tspan>`` per run of one size, so a subscript is measured at its own size). Only the SVG a
figure displays at that width is measured; a figure that carries a layout for another width has
it hidden (``display: none``), which is what the page's CSS chooses by media query.

One tab per scheme goes from page to page, as a reader's would, with the page's own scripts
running (the explainer's static figures, which stand in for its panels without JavaScript, are
hidden then, and are measured on their own figure pages); each page is measured in the desktop
window, then narrowed to the phone's.
"""

from __future__ import annotations

import pytest
from support.browser import new_context
from support.site_visits import DRAW_SKIPPED, NEXT_FRAME

pytestmark = pytest.mark.browser

#: The smallest text a figure may show, in CSS pixels.
MIN_TEXT_PX = 11
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}

# For every figure of the article: whether it is displayed, how many of its SVGs are, and for
# the displayed one every piece of text with its size as shown and its box on the screen.
FIGURE_TEXT = """() => Array.from(document.querySelectorAll('article .posenc-figure')).map((figure) => {
  const shown = (element) => element.getClientRects().length > 0;
  const svgs = Array.from(figure.querySelectorAll(':scope > svg'));
  const displayed = svgs.filter(shown);
  const result = { figure: figure.id, displayed: shown(figure), svgs: svgs.length, shownSvgs: displayed.length,
                   width: 0, drawnWidth: 0, texts: [] };
  if (displayed.length !== 1) return result;
  const svg = displayed[0];
  result.width = svg.getBoundingClientRect().width;
  result.drawnWidth = Number(svg.getAttribute('width'));
  const ownText = (node) => Array.from(node.childNodes)
    .filter((child) => child.nodeType === Node.TEXT_NODE).map((child) => child.data).join('').trim();
  // The box of a node's own glyphs on the screen: a <text> that also holds <tspan>s (math text,
  // whose first run is the text's own) has a box around them all, so its own characters, which
  // come first, are measured one by one.
  const ownBox = (node) => {
    const count = Array.from(node.childNodes).filter((child) => child.nodeType === Node.TEXT_NODE)
      .map((child) => child.data).join('').length;
    if (node.tagName !== 'text' || !node.querySelector('tspan')) {
      const box = node.getBoundingClientRect();
      return [box.left, box.top, box.right, box.bottom];
    }
    const matrix = node.getScreenCTM();
    const xs = [], ys = [];
    for (let index = 0; index < count; index++) {
      const cell = node.getExtentOfChar(index);
      for (const [x, y] of [[cell.x, cell.y], [cell.x + cell.width, cell.y + cell.height]]) {
        const point = new DOMPoint(x, y).matrixTransform(matrix);
        xs.push(point.x);
        ys.push(point.y);
      }
    }
    return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  };
  // Every element that holds text itself: a <text>, or each <tspan> of math text.
  for (const text of svg.querySelectorAll('text')) {
    const pieces = [text, ...text.querySelectorAll('tspan')].filter((node) => ownText(node));
    for (const node of pieces) {
      const matrix = node.getScreenCTM();
      const box = ownBox(node);
      result.texts.push({ text: ownText(node), of: text.textContent.trim(),
                          px: parseFloat(getComputedStyle(node).fontSize) * Math.hypot(matrix.a, matrix.b),
                          rotated: Math.abs(matrix.b) > 1e-6, box });
    }
  }
  return result;
})"""


@pytest.fixture(scope="module")
def pages_with_figures(site_paths, site_dir) -> list[str]:
    """Every page that shows a figure: the articles and each figure's own page."""
    pages = [
        path
        for path in site_paths
        if 'class="posenc-figure' in (site_dir / path.lstrip("/") / "index.html").read_text(encoding="utf-8")
    ]
    assert len([path for path in pages if path.startswith("/figures/")]) >= 5, "the figure pages show their figure"
    assert len([path for path in pages if not path.startswith("/figures/")]) >= 5, "articles show figures"
    return pages


@pytest.fixture(scope="module")
def measured(browser, base_url, pages_with_figures):
    """measured(scheme, width): FIGURE_TEXT on every page with figures, by path. Each page is
    loaded once per scheme, in the desktop window, and measured there and again once the window
    is narrowed to the phone's: the page's CSS picks each figure's layout by the window's width,
    so the narrowed page shows what a phone's load of it shows (a load costs far more than a
    new layout)."""
    cache: dict[tuple[str, str], dict[str, list[dict]]] = {}

    def measure(scheme: str, width: str) -> dict[str, list[dict]]:
        if (scheme, width) not in cache:
            context = new_context(browser, scheme, viewport=VIEWPORTS["desktop"])
            page = context.new_page()
            found: dict[str, dict[str, list[dict]]] = {name: {} for name in VIEWPORTS}
            try:
                for path in pages_with_figures:
                    page.set_viewport_size(VIEWPORTS["desktop"])
                    page.goto(base_url + path, wait_until="load")
                    page.evaluate("() => document.fonts.ready")
                    page.evaluate(DRAW_SKIPPED)  # figures far below are laid out as they are once scrolled to
                    for name in ("desktop", "phone"):
                        page.set_viewport_size(VIEWPORTS[name])
                        page.evaluate(NEXT_FRAME)
                        found[name][path] = page.evaluate(FIGURE_TEXT)
            finally:
                context.close()
            for name, pages in found.items():
                cache[scheme, name] = pages
        return cache[scheme, width]

    return measure


def overlapping(first: dict, second: dict) -> bool:
    """Whether two texts' boxes overlap by more than the space their fonts leave around the glyphs.

    A text's box is its font's whole line: the font's ascent and descent leave a few pixels
    above and below the glyphs, so boxes of neighbouring lines may touch. Boxes are first trimmed
    by a fifth of their height at the top and bottom (of the width, for rotated texts, whose box
    is turned) and by a pixel at the sides.
    """

    def trimmed(text: dict) -> list[float]:
        left, top, right, bottom = text["box"]
        if text["rotated"]:
            inset = (right - left) / 5
            return [left + inset, top + 1, right - inset, bottom - 1]
        inset = (bottom - top) / 5
        return [left + 1, top + inset, right - 1, bottom - inset]

    a, b = trimmed(first), trimmed(second)
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


@pytest.mark.parametrize("width", sorted(VIEWPORTS))
def test_every_figure_shows_one_layout_with_text_of_at_least_11_pixels(measured, scheme, width):
    problems, figures = [], 0
    for path, found in measured(scheme, width).items():
        for figure in found:
            where = f"{path}#{figure['figure']}"
            if not figure["displayed"]:
                continue  # hidden by the page itself (a panel's stand-in): shown on its figure page
            figures += 1
            if figure["shownSvgs"] != 1:
                problems.append(f"{where}: {figure['shownSvgs']} of its {figure['svgs']} SVGs displayed, not one")
                continue
            if not figure["texts"]:
                problems.append(f"{where}: no text")
            small = [
                (text["px"], text["text"], text["of"]) for text in figure["texts"] if text["px"] < MIN_TEXT_PX - 1e-3
            ]
            if small:
                px, piece, whole = min(small)
                problems.append(
                    f"{where}: {len(small)} pieces of text under {MIN_TEXT_PX} px (drawn {figure['drawnWidth']} px "
                    f"wide, shown {figure['width']:.0f}); smallest {px:.2f} px: {piece!r} of {whole!r}"
                )
    assert figures >= 40, f"only {figures} figures were measured"
    assert not problems, f"{scheme}, {width} ({VIEWPORTS[width]['width']} px):\n" + "\n".join(problems)


@pytest.mark.parametrize("width", sorted(VIEWPORTS))
def test_no_figure_draws_text_over_text(measured, scheme, width):
    problems = []
    for path in [path for path in measured(scheme, width) if path.startswith("/figures/")]:
        for figure in measured(scheme, width)[path]:
            texts = figure["texts"]
            clashes = [
                f"{first['text']!r} of {first['of']!r} and {second['text']!r} of {second['of']!r}"
                for number, first in enumerate(texts)
                for second in texts[number + 1 :]
                if overlapping(first, second)
            ]
            if clashes:
                problems.append(f"{path}#{figure['figure']}: {len(clashes)} overlaps: {'; '.join(clashes[:4])}")
    assert not problems, f"{scheme}, {width}:\n" + "\n".join(problems)
