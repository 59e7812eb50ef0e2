"""The grid-scores panel (/grids/) in headless Chromium.

``tests/javascript/test_grid_scores_math.py`` holds the arithmetic (``docs/javascripts/grid-scores-math.js``)
to ``posenc`` at every setting, in Node. These tests check the page that uses it: the module it
runs is that one; a click on a cell moves the query, and the readouts are then posenc's; the
scheme buttons change the picture; the colours fade to the panel's own background at the grid's
mean in both colour schemes, and the legend reads posenc's scores; the drawing's text is at least
12 px as shown; a phone's width holds the panel without scrolling sideways, and axe-core finds
nothing. ``tests/browser/test_panels.py`` checks what every panel shares.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.browser import new_context, open_page_with_errors, read_panel_checking_readouts
from support.grid_scores import COLS, ROWS, expected_readouts, panel, scores

pytestmark = pytest.mark.browser

PATH = "/grids/"
PANEL = '[data-panel="grid-scores"]'
INITIAL = panel()["initial"]
SCHEMES = panel()["choices"]["scheme"]
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}


def wait_until_live(page):
    page.wait_for_selector(f"{PANEL}[data-live]", state="attached")


READ_PANEL = """root => ({
  params: window.posencPanels.readParams(root),
  readouts: Object.fromEntries(Array.from(root.querySelectorAll('[data-readout]'),
    (n) => [n.dataset.readout, n.textContent])),
  shown: Object.fromEntries(Array.from(root.querySelectorAll('[data-value-of]'),
    (n) => [n.dataset.valueOf, n.textContent])),
  cells: Array.from(root.querySelectorAll('rect[data-cell]'),
    (r) => [r.getAttribute('class'), r.getAttribute('style')]),
  // Where the query's outline is moved to, in cells (it glides there, so its target, not where it is now).
  mark: (() => {
    const [x, y] = root.querySelector('.posenc-svg__mark').style.transform.match(/-?[\\d.]+/g).map(Number);
    const size = Number(root.querySelector('rect[data-cell="0"]').getAttribute('width')) + 1;
    return [y / size, x / size];
  })(),
  legend: Array.from(root.querySelectorAll('svg text'), (t) => t.textContent),
})"""


def check_panel(page, params: dict | None = None) -> dict:
    """The panel shows what posenc computes for the values its controls hold, the query outlined."""
    state = read_panel_checking_readouts(page, PANEL, READ_PANEL, expected_readouts, params)
    held = state["params"]
    assert state["shown"] == {"row": str(held["row"]), "col": str(held["col"])}
    assert state["mark"] == [held["row"], held["col"]], held
    # The legend's three numbers: the grid's mean score, less and plus the largest distance from it.
    values = scores(held["scheme"], held["row"], held["col"])
    centre, spread = values.mean(), np.abs(values - values.mean()).max()
    assert [f"{v:.1f}" for v in (centre - spread, centre, centre + spread)] == [
        text for text in state["legend"] if text.replace(".", "").replace("-", "").isdigit() and "." in text
    ], held
    return state


def test_a_click_on_a_cell_moves_the_query(context, base_url, scheme):
    page, errors = open_page_with_errors(context, base_url + PATH, wait_until_live)
    check_panel(page, INITIAL)
    for scheme_value, (row, col) in (("axial", (0, 0)), ("mixed", (ROWS - 1, 2)), ("sincos", (6, COLS - 1))):
        page.locator(f'{PANEL} button[data-value="{scheme_value}"]').click()
        page.locator(f'{PANEL} rect[data-cell="{row * COLS + col}"]').click()
        check_panel(page, {"row": row, "col": col, "scheme": scheme_value})
    # A click outside the grid (on the axis title) leaves the query where it is.
    page.locator(f"{PANEL} svg text", has_text="key column").click()
    check_panel(page, {"row": 6, "col": COLS - 1, "scheme": "sincos"})
    # The sliders from the keyboard move the outline too.
    page.locator(f'{PANEL} input[data-param="row"]').focus()
    page.keyboard.press("Home")
    page.locator(f'{PANEL} input[data-param="col"]').focus()
    page.keyboard.press("ArrowLeft")
    check_panel(page, {"row": 0, "col": COLS - 2, "scheme": "sincos"})
    assert not errors


def test_the_scheme_buttons_change_the_picture(context, base_url, scheme):
    page, errors = open_page_with_errors(context, base_url + PATH, wait_until_live)
    pictures = {}
    for value in SCHEMES:
        page.locator(f'{PANEL} button[data-value="{value}"]').click()
        pictures[value] = check_panel(page, INITIAL | {"scheme": value})["cells"]
    assert len({repr(cells) for cells in pictures.values()}) == len(SCHEMES)
    # Each cell is posenc's score: blue above the grid's mean, vermillion below, as strong as its
    # distance from the mean over the largest distance (to the three decimals drawn).
    for value, cells in pictures.items():
        values = scores(value, INITIAL["row"], INITIAL["col"])
        deviation = (values - values.mean()) / np.abs(values - values.mean()).max()
        blue = ["fill: #0072b2;" in style for _, style in cells]
        assert blue == [bool(d >= 0) for d in deviation], value
        strength = np.array([float(style.rsplit(":", 1)[1]) for _, style in cells])
        np.testing.assert_allclose(strength, np.abs(deviation), rtol=0, atol=5e-4 + 1e-9, err_msg=value)
    assert not errors


COLOURS = """root => {
  const parse = (value) => value.match(/[\\d.]+/g).map(Number);
  const fill = (node) => {
    const style = getComputedStyle(node);
    return parse(style.fill).slice(0, 3).concat(Number(style.fillOpacity));
  };
  const bar = Array.from(root.querySelectorAll('svg > rect:not([data-cell])'));
  const back = (node) => {
    for (let n = node; n; n = n.parentElement) {
      const colour = parse(getComputedStyle(n).backgroundColor);
      if (colour.length < 4 || colour[3] > 0) return colour.slice(0, 3);
    }
    return [255, 255, 255];
  };
  return { middle: fill(bar[(bar.length - 1) / 2]), ends: [fill(bar[0]), fill(bar[bar.length - 1])],
           background: back(root.querySelector('[data-drawing]')),
           page: parse(getComputedStyle(document.body).backgroundColor).slice(0, 3) };
}"""


def test_the_colours_fade_to_the_background_at_the_mean(context, base_url, scheme):
    page, errors = open_page_with_errors(context, base_url + PATH, wait_until_live)
    colours = page.locator(PANEL).evaluate(COLOURS)
    # The middle of the colour bar, the grid's mean, is not painted: the panel's background shows.
    assert colours["middle"][3] == 0, colours
    # The ends are painted in full, vermillion below and blue above, in both schemes.
    below, above = colours["ends"]
    assert below == [213, 94, 0, 1], colours
    assert above == [0, 114, 178, 1], colours
    # And that background is dark in the dark scheme, light in the light one: no white block.
    assert (sum(colours["background"]) / 3 < 128) == (scheme == "dark"), colours
    assert not errors


@pytest.mark.parametrize("size", VIEWPORTS)
def test_the_drawing_s_text_is_12_px_and_fits(browser, base_url, scheme, size):
    context = new_context(browser, scheme, viewport=VIEWPORTS[size])
    page, errors = open_page_with_errors(context, base_url + PATH, wait_until_live)
    page.locator(PANEL).scroll_into_view_if_needed()
    sizes = page.locator(f"{PANEL} svg text").evaluate_all(
        """texts => texts.map((t) => parseFloat(getComputedStyle(t).fontSize)
             * Math.hypot(t.getScreenCTM().a, t.getScreenCTM().b))"""
    )
    assert sizes and min(sizes) >= 12 - 0.01, sizes
    # The grid is drawn at its size, every cell at least 20 px, inside the panel.
    report = page.evaluate(f"""() => {{
      const root = document.querySelector('{PANEL}');
      const box = root.getBoundingClientRect();
      const cell = root.querySelector('rect[data-cell="0"]').getBoundingClientRect();
      return {{ page: document.documentElement.scrollWidth, view: document.documentElement.clientWidth,
               right: box.right, cell: cell.width + 1, overflowing: Array.from(root.querySelectorAll('*'))
                 .filter((n) => n.getBoundingClientRect().right > box.right + 0.5).map((n) => n.tagName) }};
    }}""")
    assert report["page"] <= report["view"] and report["right"] <= report["view"], report
    assert report["overflowing"] == [] and report["cell"] >= 20, report
    assert not errors
    context.close()


def test_the_panel_fits_a_phone_and_axe_finds_nothing(browser, base_url, axe_script):
    context = new_context(browser, viewport=VIEWPORTS["phone"])
    page, errors = open_page_with_errors(context, base_url + PATH, wait_until_live)
    for value in SCHEMES:  # the longest readouts
        page.locator(f'{PANEL} button[data-value="{value}"]').click()
    page.locator(f'{PANEL} input[data-param="row"]').fill(str(ROWS - 1))
    page.locator(f'{PANEL} input[data-param="col"]').fill(str(COLS - 1))
    check_panel(page, {"row": ROWS - 1, "col": COLS - 1, "scheme": SCHEMES[-1]})
    width = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width[0] <= width[1], width
    page.add_script_tag(path=str(axe_script))
    violations = page.evaluate(
        f"""async () => (await axe.run({{ include: [['{PANEL}']] }},
              {{ runOnly: {{ type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }} }}))
            .violations.map((v) => v.id)"""
    )
    assert violations == []
    assert not errors
    context.close()
