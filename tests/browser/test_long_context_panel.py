"""The long-context panel (/long-context/#panel) in headless Chromium.

``tests/javascript/test_long_context_math.py`` holds the arithmetic (``docs/javascripts/long-context-math.js``)
to ``posenc`` at every setting, in Node. These tests check the page that uses it: the module it
runs is that one, the readouts, slider texts and table after pointer and keyboard input in both
colour schemes, a phone's width, axe-core, the page without JavaScript and other pages.
``tests/browser/test_panels.py`` checks what every panel shares: the wiring of each control to the
registration's readouts, labels, live regions and focus, and instant navigation away and back.
"""

from __future__ import annotations

import pytest
from support.browser import new_context, open_page_with_errors, read_panel_checking_readouts
from support.long_context import expected_readouts, expected_table, expected_value_texts, panel

pytestmark = pytest.mark.browser

PATH = "/long-context/"
PANEL = '[data-panel="long-context"]'
SLIDERS = panel()["sliders"]  # param -> (min, max, step, start)
METHODS = panel()["choices"]["method"]
INITIAL = panel()["initial"]


def wait_until_live(page):
    """The panel is wired to its controls."""
    page.wait_for_selector(f"{PANEL}[data-live]", state="attached")


READ_PANEL = """root => ({
  params: Object.fromEntries(Array.from(root.querySelectorAll('[data-param]'))
    .filter((c) => c.tagName === 'INPUT' || c.getAttribute('aria-pressed') === 'true')
    .map((c) => [c.dataset.param, c.tagName === 'INPUT' ? Number(c.value) : c.dataset.value])),
  readouts: Object.fromEntries(Array.from(root.querySelectorAll('[data-readout]'),
    (n) => [n.dataset.readout, n.textContent])),
  table: Array.from(root.querySelectorAll('[data-table] tr'), (row) => Object.fromEntries(
    Array.from(row.querySelectorAll('[data-cell]'), (cell) => [cell.dataset.cell, cell.textContent]))),
  valueTexts: Object.fromEntries(Array.from(root.querySelectorAll('input[data-param]'),
    (input) => [input.dataset.param, input.getAttribute('aria-valuetext')])),
  shown: Object.fromEntries(Array.from(root.querySelectorAll('[data-value-of]'),
    (node) => [node.dataset.valueOf, node.textContent])),
  pressed: Array.from(root.querySelectorAll('button[data-param]'), (b) => b.getAttribute('aria-pressed')),
})"""


def check_panel(page, params: dict | None = None) -> dict:
    """The panel shows what posenc computes for the values its controls hold."""
    state = read_panel_checking_readouts(page, PANEL, READ_PANEL, expected_readouts, params)
    held = state["params"]
    assert state["table"] == expected_table(held), held
    assert state["valueTexts"] == state["shown"] == expected_value_texts(held), held
    assert state["pressed"] == [str(m == held["method"]).lower() for m in METHODS]
    return held


def test_the_panel_reacts_to_pointer_and_keyboard(context, base_url, scheme):
    page, errors = open_page_with_errors(context, base_url + PATH, wait_until_live)
    check_panel(page, INITIAL)
    # Every method, clicked, at the starting lengths.
    for method in (*METHODS, INITIAL["method"]):
        page.locator(f'{PANEL} button[data-value="{method}"]').click()
        check_panel(page, INITIAL | {"method": method})
    # The sliders from the keyboard, under two methods pressed from the keyboard.
    for method, key in (("dynamic", "Enter"), ("llama3", "Space")):
        page.locator(f'{PANEL} button[data-value="{method}"]').focus()
        page.keyboard.press(key)
        assert check_panel(page)["method"] == method
        for name, (low, high, size, _) in SLIDERS.items():
            page.locator(f'{PANEL} input[data-param="{name}"]').focus()
            for key, target in (("Home", low), ("ArrowRight", low + size), ("End", high), ("ArrowLeft", high - size)):
                page.keyboard.press(key)
                assert check_panel(page)[name] == target, (name, key)
    # A click along the scale slider's track.
    control = page.locator(f'{PANEL} input[data-param="scale"]')
    box = control.bounding_box()
    page.mouse.click(box["x"] + 0.25 * box["width"], box["y"] + box["height"] / 2)
    low, high, _, _ = SLIDERS["scale"]
    assert abs(check_panel(page)["scale"] - (low + 0.25 * (high - low))) <= 0.1 * (high - low)
    # The drawing follows: its curve has a point for every pair, and ink follows the colour scheme.
    assert page.locator(f"{PANEL} polyline").get_attribute("points").count(",") == 64
    fill = page.locator(f"{PANEL} svg text").first.evaluate("t => getComputedStyle(t).fill")
    channels = [float(v) for v in fill[fill.index("(") + 1 : -1].split(",")[:3]]
    assert (sum(channels) / 3 > 128) == (scheme == "dark"), fill
    assert not errors


def test_the_panel_fits_a_phone_and_axe_finds_nothing(browser, base_url, axe_script):
    context = new_context(browser, viewport={"width": 390, "height": 844})
    page, errors = open_page_with_errors(context, base_url + PATH, wait_until_live)
    for name, (_, high, _, _) in SLIDERS.items():
        page.locator(f'{PANEL} input[data-param="{name}"]').fill(str(high))  # the widest numbers
    check_panel(page)
    page.locator(PANEL).scroll_into_view_if_needed()
    sizes = page.evaluate(f"""() => {{
      const root = document.querySelector('{PANEL}');
      const box = root.getBoundingClientRect();
      return {{ page: document.documentElement.scrollWidth, view: document.documentElement.clientWidth,
               right: box.right, overflowing: Array.from(root.querySelectorAll('*'))
                 .filter((n) => n.getBoundingClientRect().right > box.right + 0.5).map((n) => n.tagName) }};
    }}""")
    assert sizes["page"] <= sizes["view"] and sizes["right"] <= sizes["view"], sizes
    assert sizes["overflowing"] == [], sizes
    page.add_script_tag(path=str(axe_script))
    violations = page.evaluate(
        f"""async () => (await axe.run({{ include: [['{PANEL}']] }},
              {{ runOnly: {{ type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }} }}))
            .violations.map((v) => v.id)"""
    )
    assert violations == []
    assert not errors
    context.close()


# The drawing and the controls where the reader sees them. `together`: how tall the band from the
# top of the drawing or the first control to the bottom of the last is, against the window's room
# under the header. `at_once`: with that band's top scrolled just under the header, whether the
# drawing is wholly in view and every control's centre reaches it. `each`: with each control
# scrolled into the middle of the window in turn, whether the drawing is then wholly in view.
IN_VIEW = """async (root) => {
  // A block far down the page is skipped (content-visibility in posenc.css) until it comes into
  // view, and only then laid out at its real size and hit-tested: the panel is scrolled into view
  // first, and after a scroll the measures wait for the next frames.
  const frames = () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  root.scrollIntoView({ block: 'start', behavior: 'instant' });
  await frames();
  const header = () => document.querySelector('.md-header').getBoundingClientRect().bottom;
  const drawing = root.querySelector('[data-drawing] svg');
  const controls = Array.from(root.querySelectorAll('[data-param]'));
  const parts = [drawing, ...root.querySelectorAll('.posenc-control')];
  const band = () => {
    const boxes = parts.map((node) => node.getBoundingClientRect());
    return [Math.min(...boxes.map((b) => b.top)), Math.max(...boxes.map((b) => b.bottom))];
  };
  const drawingInView = () => {
    const d = drawing.getBoundingClientRect();
    return d.top >= header() - 0.5 && d.bottom <= innerHeight + 0.5;
  };
  const reached = (control) => {
    const c = control.getBoundingClientRect();
    return document.elementFromPoint(c.x + c.width / 2, c.y + c.height / 2) === control;
  };
  const [top, bottom] = band();
  const together = bottom - top;
  // Beside: the drawing and the controls share a band of rows, one to the left of the other.
  const d = drawing.getBoundingClientRect();
  const c = root.querySelector('.posenc-widget__controls').getBoundingClientRect();
  const beside = d.top < c.bottom && c.top < d.bottom && (d.left >= c.right || c.left >= d.right);
  scrollBy({ top: band()[0] - header(), behavior: 'instant' });
  await frames();
  const atOnce = drawingInView() && controls.every(reached);
  const each = [];
  for (const control of controls) {
    control.scrollIntoView({ block: 'center', behavior: 'instant' });
    await frames();
    const name = control.dataset.value || control.dataset.param;
    each.push({ control: name, drawing: drawingInView(), reached: reached(control) });
  }
  const box = drawing.parentElement;
  const style = getComputedStyle(box);
  const space = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const drawingWidth = drawing.getBoundingClientRect().width;
  return { together, beside, room: innerHeight - header(), atOnce, each, space, drawingWidth };
}"""


@pytest.mark.parametrize(
    "size", [{"width": 1280, "height": 800}, {"width": 390, "height": 844}], ids=["desktop", "phone"]
)
def test_the_drawing_is_in_view_with_the_controls(browser, base_url, scheme, size):
    context = new_context(browser, scheme, viewport=size)
    page, errors = open_page_with_errors(context, base_url + PATH, wait_until_live)
    report = page.locator(PANEL).evaluate(IN_VIEW)
    # The drawing and every control fit in the window at once, on a desktop and on a phone.
    assert report["together"] <= report["room"] and report["atOnce"], report
    # On a desktop the controls sit beside the drawing; on a phone the drawing is above them.
    assert report["beside"] == (size["width"] >= 1024), report
    if size["width"] < 1024:
        # And on a phone the drawing stays in view above whichever control is scrolled to.
        assert all(item["drawing"] and item["reached"] for item in report["each"]), report
    # The drawing fills the room it has (up to its widest, 560 px) at 1:1, rather than a fixed size.
    assert min(report["space"], 560) - 1 <= report["drawingWidth"] <= report["space"], report
    assert not errors
    context.close()


def test_the_critical_dimension_is_labelled_with_a_subscript(context, base_url):
    page, errors = open_page_with_errors(context, base_url + PATH, wait_until_live)
    texts = page.locator(f"{PANEL} svg text").evaluate_all("ts => ts.map((t) => t.textContent)")
    assert not [text for text in texts if "_" in text], texts
    label = page.locator(f"{PANEL} svg text", has=page.locator("tspan")).first
    parts = label.evaluate("t => [t.firstChild.textContent, t.querySelector('tspan').textContent]")
    assert parts == ["r", "c"]
    # The c is set lower than the r and smaller: a subscript.
    r, c = label.evaluate(
        "t => [0, 1].map((k) => { const b = t.getExtentOfChar(k); return [b.y + b.height, b.height]; })"
    )
    assert c[0] > r[0] and c[1] < r[1], (r, c)
    assert not errors


def test_without_javascript_the_panel_is_hidden_and_the_figure_stays(browser, base_url):
    context = new_context(browser, java_script_enabled=False)
    page = context.new_page()
    page.goto(base_url + PATH, wait_until="load")
    assert not page.locator(PANEL).is_visible()
    figure = page.locator("#fig-long-context-ratios svg").first
    assert figure.is_visible() and figure.evaluate("svg => svg.getBoundingClientRect().width > 0")
    context.close()
