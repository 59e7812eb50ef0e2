"""Colours as each scheme shows them, in headless Chromium: a heatmap's zero is the page's
background, values printed on clear cells take the scheme's ink, and the panels draw every
method, family and side in the colour the figures give it (posenc.site.plotting.colour_of)."""

from __future__ import annotations

import io

import pytest
from matplotlib.colors import to_rgb
from support.browser import open_page_with_errors

from posenc.site import plotting

pytestmark = pytest.mark.browser

# The shift matrix T_1 at width 8: 2x2 rotation blocks on the diagonal, zero elsewhere.
SHIFT = "#fig-shift-rotation svg.posenc-figure__wide"
SHIFT_CELLS = 8

RESOLVE = """css => {
  const probe = document.createElement('div');
  probe.style.color = css;
  document.body.appendChild(probe);
  const colour = getComputedStyle(probe).color;
  probe.remove();
  return colour;
}"""


def rgb_of(colour: str) -> tuple[int, int, int]:
    """An ``rgb(r, g, b)`` or hex colour as three 0-255 channels."""
    if colour.startswith("#"):
        return tuple(round(255 * channel) for channel in to_rgb(colour))
    return tuple(int(float(part)) for part in colour[colour.index("(") + 1 : colour.index(")")].split(",")[:3])


def page_background(page) -> tuple[int, int, int]:
    return rgb_of(page.evaluate(RESOLVE, "var(--md-default-bg-color)"))


def heatmap_shot(page):
    """The shift matrix's cells (the figure's square raster) as the screen shows them, taken as one
    element screenshot: its pixels are read in the raster's own coordinates, so nothing that moves
    the page between measuring and capturing (a late font, a block drawn on scroll) shifts them."""
    from PIL import Image

    images = page.locator(SHIFT).locator("image")
    boxes = images.evaluate_all(
        "images => images.map((image) => { const r = image.getBoundingClientRect(); return [r.width, r.height]; })"
    )
    square = [index for index, (width, height) in enumerate(boxes) if abs(width / height - 1) < 0.2]
    assert len(square) == 1, f"one square raster (the matrix) beside its colour bar: {boxes}"
    raster = images.nth(square[0])
    raster.scroll_into_view_if_needed()
    return Image.open(io.BytesIO(raster.screenshot())).convert("RGB")


def test_a_heatmaps_zero_cells_show_the_page_background(context, base_url, scheme):
    page, errors = open_page_with_errors(context, base_url + "/deep-dive/")
    shot = heatmap_shot(page)
    size = shot.width / SHIFT_CELLS

    def cell(row: int, col: int) -> tuple[int, int, int]:
        return shot.getpixel((int((col + 0.5) * size), int((row + 0.5) * size)))

    background = page_background(page)
    assert background == ((255, 255, 255) if scheme == "light" else (30, 33, 41)), background
    for row, col in ((0, 7), (7, 0), (2, 5)):  # off the diagonal blocks: T_1 is zero there
        shown = cell(row, col)
        assert max(abs(a - b) for a, b in zip(shown, background)) <= 2, (row, col, shown, background)
    # cos 1 = 0.54 is a coloured cell in both schemes, not the page.
    shown = cell(0, 0)
    assert max(abs(a - b) for a, b in zip(shown, background)) > 40, shown
    assert not errors


def test_values_on_clear_cells_take_the_schemes_ink(context, base_url, scheme):
    page, errors = open_page_with_errors(context, base_url + "/deep-dive/")
    fills = page.locator(SHIFT).evaluate(
        "svg => Array.from(svg.querySelectorAll('text'))"
        "  .filter((t) => (t.getAttribute('style') || '').includes('--posenc-ink'))"
        "  .map((t) => [t.textContent, getComputedStyle(t).fill])"
    )
    # The slow pairs' entries near zero are clear; the fast pair's 1.00 and 0.84 are opaque.
    assert {"0.00", "0.01", "0.10"} <= {text for text, _ in fills}, fills
    assert not {"1.00", "0.84", "-0.84"} & {text for text, _ in fills}, fills
    ink = (0, 0, 0) if scheme == "light" else (255, 255, 255)
    assert {rgb_of(fill) for _, fill in fills} == {ink}
    assert not errors


def test_the_long_context_panel_draws_each_method_in_its_figure_colour(context, base_url):
    page, errors = open_page_with_errors(
        context, base_url + "/long-context/", lambda p: p.wait_for_selector('[data-panel="long-context"][data-live]')
    )
    root = page.locator('[data-panel="long-context"]')
    methods = root.locator('button[data-param="method"]').evaluate_all("buttons => buttons.map((b) => b.dataset.value)")
    assert methods == ["pi", "ntk", "dynamic", "yarn", "llama3"]
    for method in methods:
        root.locator(f'button[data-param="method"][data-value="{method}"]').click()
        stroke = root.locator(f'polyline[data-method="{method}"]').evaluate("line => getComputedStyle(line).stroke")
        assert rgb_of(stroke) == rgb_of(plotting.colour_of(method=method)), method
    assert not errors


def test_the_explainer_draws_families_and_sides_in_their_figure_colours(context, base_url):
    page, errors = open_page_with_errors(
        context, base_url + "/explainer/", lambda p: p.wait_for_selector('[data-panel="compare"][data-live]')
    )
    strokes = page.locator('[data-panel="compare"] svg .posenc-svg__legend line').evaluate_all(
        "lines => lines.map((line) => getComputedStyle(line).stroke)"
    )
    wanted = [plotting.colour_of(family="sinusoidal"), plotting.colour_of(family="rope")]
    assert [rgb_of(stroke) for stroke in strokes] == [rgb_of(colour) for colour in wanted]
    page.wait_for_selector('[data-panel="rope"][data-live]')
    for side in ("query", "key"):
        arrow = page.locator(f'[data-panel="rope"] .posenc-svg__arrow--{side}').first
        stroke = arrow.locator("line").evaluate("line => getComputedStyle(line).stroke")
        fill = arrow.locator("polygon").evaluate("head => getComputedStyle(head).fill")
        assert rgb_of(stroke) == rgb_of(fill) == rgb_of(plotting.colour_of(side=side)), side
    kernel = page.locator('[data-panel="distance"] svg polyline.posenc-svg__curve').first
    stroke = kernel.evaluate("line => getComputedStyle(line).stroke")
    assert rgb_of(stroke) == rgb_of(plotting.colour_of(family="sinusoidal"))
    assert not errors
