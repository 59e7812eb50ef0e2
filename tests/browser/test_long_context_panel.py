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
from support.browser import new_context, open_page_with_errors
from support.long_context import MODULE, expected_readouts, expected_table, expected_value_texts, panel

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
    state = page.locator(PANEL).evaluate(READ_PANEL)
    held = state["params"]
    if params is not None:
        assert held == params
    assert state["readouts"] == expected_readouts(held), held
    assert state["table"] == expected_table(held), held
    assert state["valueTexts"] == state["shown"] == expected_value_texts(held), held
    assert state["pressed"] == [str(m == held["method"]).lower() for m in METHODS]
    return held


def test_the_page_runs_the_module_checked_in_node(browser, base_url):
    context = new_context(browser)
    page, errors = open_page_with_errors(context, base_url + PATH, wait_until_live)
    scripts = [
        src.rsplit("/", 1)[-1]
        for src in page.evaluate("() => Array.from(document.scripts, (s) => s.src)")
        if "/javascripts/" in src
    ]
    # Each module before the code that uses it: the explainer's arithmetic, the panel's, the panel
    # module, the panel; the explainer's page code is not needed.
    assert (
        scripts.index("explainer-math.js")
        < scripts.index("long-context-math.js")
        < scripts.index("panels.js")
        < scripts.index("long-context.js")
    )
    assert "explainer.js" not in scripts
    served = page.evaluate("async () => (await fetch('../javascripts/long-context-math.js')).text()")
    assert served == MODULE.read_text()
    check_panel(page, INITIAL)
    assert not errors
    context.close()


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


def test_without_javascript_the_panel_is_hidden_and_the_figure_stays(browser, base_url):
    context = new_context(browser, java_script_enabled=False)
    page = context.new_page()
    page.goto(base_url + PATH, wait_until="load")
    assert not page.locator(PANEL).is_visible()
    figure = page.locator("#fig-long-context-ratios svg").first
    assert figure.is_visible() and figure.evaluate("svg => svg.getBoundingClientRect().width > 0")
    context.close()
