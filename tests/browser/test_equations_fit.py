"""Every display equation fits its column on a phone (390 x 844) and on a laptop (1280 x 800), or is
one of the few named here that scroll on a phone, and those show that they continue.

Each page with display math is loaded once and read at both sizes, the laptop's first (the layout
does not depend on the colour scheme, so in the light one). An equation fits when its box does not
scroll and nothing of it lies left of the box (a centred line wider than its box would be cut
there, out of reach of the scroll bar). An equation that scrolls must be named in
SCROLLS_ON_A_PHONE and must show the cue: with its glyphs hidden, the box's own background is
darker at the edge that has more to show than at the other edge, at both ends of the scroll. It
is a tab stop with a name. Inline formulas stay inside the column, and a short one is never split
over two lines.
"""

from __future__ import annotations

import io

import pytest
from support.browser import new_context
from site_build.katex import SHORT_INLINE
from support.site_visits import AFTER_DRAWING, DRAW_SKIPPED, PHONE

LAPTOP = {"width": 1280, "height": 800}
# The statements a phone's column cannot hold even broken over lines: a case of each is one
# formula (a floor or ceiling of a fraction) wider than the column. By derivation ID.
SCROLLS_ON_A_PHONE = frozenset({"t5-bucket-monotone", "deberta-bucket-symmetry"})

# Every display equation of the article, after the fonts have arrived and every skipped block is
# drawn: the derivation it states (from the "Proved as" link under it, or the derivation page it
# heads), else the start of its TeX; whether it overflows its box, sideways or to the left; and
# what makes it reachable from the keyboard.
EQUATIONS = """() => {
  const page = location.pathname.match(/\\/derivations\\/([a-z0-9-]+)\\/$/);
  return Array.from(document.querySelectorAll('article .posenc-math')).map((box, index) => {
    const link = box.nextElementSibling && box.nextElementSibling.matches('.posenc-eq-ref')
      ? box.nextElementSibling.querySelector('a[href*="derivations/"]') : null;
    const tex = (box.querySelector('annotation') || {}).textContent || '';
    const id = link ? link.getAttribute('href').replace(/\\/$/, '').split('/').pop()
      : page && index === 0 ? page[1] : tex.trim().slice(0, 60);
    const left = box.getBoundingClientRect().left;
    const drawn = Array.from(box.querySelectorAll('.katex-html > *'));
    return {
      index, id,
      scrolls: box.scrollWidth > box.clientWidth + 1,
      cutLeft: drawn.some((part) => part.getBoundingClientRect().left < left - 1),
      tabindex: box.getAttribute('tabindex'),
      role: box.getAttribute('role'),
      label: box.getAttribute('aria-label') || '',
    };
  });
}"""

# Every inline formula of the article outside a box that scrolls (a table's, a code block's): the
# ones that reach past the column, and the short ones (no more than SHORT_INLINE drawn characters,
# which site_build.katex never breaks) that are split over lines anyway.
INLINE = """(short) => {
  const column = document.querySelector('.md-content__inner').getBoundingClientRect();
  const text = (math) => (math.querySelector('annotation') || {}).textContent || '';
  const scrolls = (math) => {
    for (let node = math.parentElement; node && !node.matches('article'); node = node.parentElement) {
      if (/auto|scroll/.test(getComputedStyle(node).overflowX)) return true;
    }
    return false;
  };
  const found = {beyond: [], split: []};
  for (const math of document.querySelectorAll('article .katex')) {
    if (math.closest('.katex-display') || scrolls(math)) continue;
    const html = math.querySelector('.katex-html');
    const rects = Array.from(html.getClientRects());
    const lines = new Set(rects.map((rect) => Math.round(rect.top)));
    if (rects.some((rect) => rect.right > column.right + 1 || rect.left < column.left - 1)) {
      found.beyond.push(text(math));
    }
    if (html.textContent.length <= short && lines.size > 1) found.split.push(text(math));
  }
  return found;
}"""

# How dark an edge strip of the box's background is (mean of 255 minus each pixel's grey level),
# with the box's glyphs hidden so that only the background is measured.
EDGE = 6


def _edges(page, index: int, to_end: bool) -> tuple[float, float]:
    from PIL import Image

    box = page.locator("article .posenc-math").nth(index)
    box.evaluate("(box, end) => { box.scrollLeft = end ? box.scrollWidth : 0; }", to_end)
    box.scroll_into_view_if_needed()
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    image = Image.open(io.BytesIO(box.screenshot())).convert("L")
    width, height = image.size

    def darkness(x0: int) -> float:
        strip = image.crop((x0, 0, x0 + EDGE, height)).getdata()
        return sum(255 - value for value in strip) / len(strip)

    return darkness(0), darkness(width - EDGE)


def _check_page(page, path: str, viewport: str) -> tuple[list[str], set[str]]:
    """Problems with the equations of ``path``, loaded in ``page``, in the page's current window,
    and the IDs that scroll."""
    page.evaluate(AFTER_DRAWING)  # the page's resize handlers have measured the boxes in this window
    problems, scrolling = [], set()
    inline = page.evaluate(INLINE, SHORT_INLINE)
    if inline["beyond"]:
        problems.append(f"{viewport} {path}: inline formulas past the column: {inline['beyond']}")
    if inline["split"]:
        problems.append(f"{viewport} {path}: short inline formulas split over lines: {inline['split']}")
    for found in page.evaluate(EQUATIONS):
        where = f"{viewport} {path} equation {found['index'] + 1} ({found['id']})"
        if found["cutLeft"]:
            problems.append(f"{where}: cut at the left edge of its box")
        if not found["scrolls"]:
            continue
        scrolling.add(found["id"])
        if viewport != "phone" or found["id"] not in SCROLLS_ON_A_PHONE:
            problems.append(f"{where}: wider than the column")
            continue
        if found["tabindex"] != "0" or found["role"] != "group" or not found["label"]:
            problems.append(f"{where}: scrolls but is no named tab stop: {found}")
        hidden = page.add_style_tag(content="article .posenc-math .katex { visibility: hidden; }")
        start_left, start_right = _edges(page, found["index"], to_end=False)
        end_left, end_right = _edges(page, found["index"], to_end=True)
        hidden.evaluate("(style) => style.remove()")
        if not start_right > start_left + 10:
            problems.append(
                f"{where}: no cue at the right edge before scrolling ({start_left:.0f} vs {start_right:.0f})"
            )
        if not end_left > end_right + 10:
            problems.append(f"{where}: no cue at the left edge once scrolled ({end_left:.0f} vs {end_right:.0f})")
    return problems, scrolling


@pytest.mark.browser
def test_every_equation_fits_or_scrolls_with_a_cue(browser, base_url, site_dir, site_paths):
    pages = [
        path for path in site_paths if 'class="posenc-math' in (site_dir / path.strip("/") / "index.html").read_text()
    ]
    assert len(pages) > 40, "the site shows display math on its articles and on every derivation's page"
    problems: list[str] = []
    scrolling: set[str] = set()
    # Each page is loaded once, checked in the laptop's window and then narrowed to the phone's
    # (the layout follows the window's width through the CSS and the page's resize handlers, which
    # _check_page lets run): the phone's check goes last, as it scrolls the boxes that scroll.
    context = new_context(browser, "light", viewport=LAPTOP)
    page = context.new_page()
    try:
        for path in pages:
            page.goto("about:blank")  # the last page, narrowed, is not laid out again in the laptop's window
            page.set_viewport_size(LAPTOP)
            page.goto(base_url + path, wait_until="load")
            page.evaluate("() => document.fonts.ready")
            page.evaluate(DRAW_SKIPPED)
            for viewport, window in (("laptop", LAPTOP), ("phone", PHONE)):
                page.set_viewport_size(window)
                found, ids = _check_page(page, path, viewport)
                problems += found
                scrolling |= ids if viewport == "phone" else set()
    finally:
        context.close()
    assert not problems, "\n".join(problems)
    # The list names only equations that do scroll, so it cannot outlive a statement that was fixed.
    assert scrolling == SCROLLS_ON_A_PHONE, f"allowed to scroll but fits: {sorted(SCROLLS_ON_A_PHONE - scrolling)}"
