"""The interactive explainer (/explainer/) in headless Chromium.

``tests/javascript/test_explainer_math.py`` holds the arithmetic (``docs/javascripts/explainer-math.js``)
to ``posenc`` over every setting, in Node. These tests check the page that uses it: the module
it runs is that one, every readout after pointer and keyboard input, the time an input takes to
reach its readouts (printed, not asserted), the size of the page's own assets, its steps'
ranges, axe-core and reduced motion, and the page without JavaScript.
``tests/browser/test_panels.py`` checks what every panel shares: the wiring of each control to the
registration's readouts, labels, live regions and focus, and instant navigation away and back.
"""

from __future__ import annotations

import json
import pathlib
import re
import statistics

import numpy as np
import pytest
from support.browser import new_context, open_page_with_errors
from support import PAGE_SCRIPTS
from support.explainer import (
    MODULE,
    STARTING_READOUTS,
    expected_readouts,
    expected_texts,
    initial,
    orders,
    sliders,
    steps,
)

from posenc.site import explainer_demo

pytestmark = pytest.mark.browser

ROOT = pathlib.Path(__file__).resolve().parents[2]
PATH = "/explainer/"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SIZE_BUDGET = 150 * 1024

# The page's controls, read from its markup (docs/explainer.md).
STEPS = steps()
ORDERS = orders()
SLIDERS = sliders()  # step -> parameter -> (min, max, step, starting value)
INITIAL = {step: initial(step) for step in STEPS}
FIGURES = (
    "attention-permutation",
    "heatmap-20x50",
    "frequency-bands",
    "dot-product-16",
    "rope-rotation",
    "sinusoidal-vs-rope",
)


# ---------------------------------------------------------------------------------------
# Helpers


def wait_until_live(page):
    """Every step of the explainer is wired to its controls."""
    page.wait_for_function(
        "n => document.querySelectorAll('[data-panel][data-live]').length === n"
        " && document.querySelectorAll('[data-panel]').length === n",
        arg=len(STEPS),
    )


def step_locator(page, step: str):
    return page.locator(f'[data-panel="{step}"]')


def params_on_page(page, step: str) -> dict:
    """The control values as the page holds them."""
    return step_locator(page, step).evaluate(
        """root => {
          const params = {};
          for (const c of root.querySelectorAll('[data-param]')) {
            if (c.tagName === 'INPUT') params[c.dataset.param] = Number(c.value);
            else if (c.getAttribute('aria-pressed') === 'true') params[c.dataset.param] = c.dataset.value;
          }
          return params;
        }"""
    )


def texts_on_page(page, step: str, kind: str = "readout") -> dict[str, str]:
    """The text of every [data-readout] (or [data-text], with kind="text") of a step, by key."""
    return step_locator(page, step).evaluate(
        "(root, kind) => Object.fromEntries(Array.from(root.querySelectorAll(`[data-${kind}]`),"
        " node => [node.getAttribute(`data-${kind}`), node.textContent]))",
        kind,
    )


def check_readouts(page, step: str, params: dict | None = None) -> dict:
    on_page = params_on_page(page, step)
    if params is not None:
        assert on_page == params, f"{step}: controls hold {on_page}, expected {params}"
    assert texts_on_page(page, step) == expected_readouts(step, on_page), f"{step} at {on_page}"
    assert texts_on_page(page, step, "text") == expected_texts(step, on_page), f"{step} at {on_page}"
    return on_page


def slider(page, step: str, name: str):
    return page.locator(f'[data-panel="{step}"] input[data-param="{name}"]')


# ---------------------------------------------------------------------------------------
# (1) The page runs the module that test_explainer_math.py checks in Node


def test_the_page_runs_the_module_checked_in_node(browser, base_url):
    context = new_context(browser)
    page, errors = open_page_with_errors(context, base_url + PATH, wait_until_live)
    scripts = page.evaluate("() => Array.from(document.scripts, (s) => s.getAttribute('src') || '')")
    ours = [src.rsplit("/", 1)[-1] for src in scripts if "javascripts/explainer" in src]
    # The data first, then the math that reads it, then the page code that uses both (after the
    # panel module it registers its steps with).
    assert ours == ["explainer-demo.js", "explainer-math.js", "explainer.js"]
    names = [src.rsplit("/", 1)[-1] for src in scripts]
    assert names.index("panels.js") < names.index("explainer.js")
    assert page.evaluate("() => window.posencExplainerDemo") == json.loads(explainer_demo.DATA_FILE.read_text())
    served = page.evaluate("async () => (await fetch('../javascripts/explainer-math.js')).text()")
    assert served == MODULE.read_text()
    # A spot check of the module as the page holds it, at the far end of every control.
    far = {step: {name: spec[1] for name, spec in params.items()} for step, params in SLIDERS.items()}
    far["order"] = {"order": ORDERS[-1]}
    in_page = page.evaluate(
        "far => Object.fromEntries(Object.entries(far).map(([step, params]) =>"
        " [step, [posencExplainerMath.readouts(step, params), posencExplainerMath.texts(step, params)]]))",
        far,
    )
    assert in_page == {step: [expected_readouts(step, p), expected_texts(step, p)] for step, p in far.items()}
    assert not errors
    context.close()


# ---------------------------------------------------------------------------------------
# (2) Every control, with the pointer and with the keyboard, in both colour schemes


def test_every_control_works_with_pointer_and_keyboard(context, base_url, scheme):
    page, errors = open_page_with_errors(context, base_url + PATH, wait_until_live)
    for step in STEPS:
        check_readouts(page, step, INITIAL[step])

    # The word-order buttons: clicked, then pressed from the keyboard.
    buttons = page.locator('[data-panel="order"] button[data-param="order"]')
    assert buttons.count() == len(ORDERS)
    for order in (*ORDERS[1:], ORDERS[0]):
        page.locator(f'[data-panel="order"] button[data-value="{order}"]').click()
        check_readouts(page, "order", {"order": order})
        assert buttons.evaluate_all("bs => bs.map(b => b.getAttribute('aria-pressed'))") == [
            str(o == order).lower() for o in ORDERS
        ]
    for order, key in ((ORDERS[2], "Enter"), (ORDERS[1], "Space"), (ORDERS[0], "Enter")):
        page.locator(f'[data-panel="order"] button[data-value="{order}"]').focus()
        page.keyboard.press(key)
        check_readouts(page, "order", {"order": order})

    for step, ranges in SLIDERS.items():
        for name, (low, high, size, _) in ranges.items():
            control = slider(page, step, name)
            control.scroll_into_view_if_needed()
            box = control.bounding_box()
            middle = box["y"] + box["height"] / 2
            # Pointer: clicks along the track, then a drag.
            for fraction in (0.85, 0.2):
                page.mouse.click(box["x"] + fraction * box["width"], middle)
                value = check_readouts(page, step)[name]
                assert abs(value - (low + fraction * (high - low))) <= 0.15 * (high - low) + size, (step, name, value)
            page.mouse.move(box["x"] + 0.1 * box["width"], middle)
            page.mouse.down()
            page.mouse.move(box["x"] + 0.6 * box["width"], middle, steps=6)
            page.mouse.up()
            value = check_readouts(page, step)[name]
            assert abs(value - (low + 0.6 * (high - low))) <= 0.15 * (high - low) + size, (step, name, value)
            # Keyboard: Home, End and the arrows.
            control.focus()
            for key, target in (
                ("Home", low),
                ("ArrowRight", low + size),
                ("ArrowRight", low + 2 * size),
                ("End", high),
                ("ArrowLeft", high - size),
            ):
                page.keyboard.press(key)
                assert check_readouts(page, step)[name] == target, (step, name, key)
            shown = page.locator(f'[data-panel="{step}"] [data-value-of="{name}"]').inner_text()
            assert shown.split()[0] == str(high - size)

    # The RoPE drawing turns pair 0 of the query by m theta_0 = m radians.
    transform = page.locator('[data-panel="rope"] .posenc-svg__arrow--query').first.evaluate("g => g.style.transform")
    m = params_on_page(page, "rope")["m"]
    assert transform.startswith("rotate(") and float(transform[7:-4]) == pytest.approx(np.degrees(m), abs=0.01)

    # Ink follows the colour scheme: dark text on light, light text on dark.
    fill = page.locator('[data-panel="compare"] svg text').first.evaluate("t => getComputedStyle(t).fill")
    channels = [float(v) for v in fill[fill.index("(") + 1 : -1].split(",")[:3]]
    assert (sum(channels) / 3 > 128) == (scheme == "dark"), fill
    assert not errors


# ---------------------------------------------------------------------------------------
# (4) Speed: from an input event to its readouts (printed for `make bench`, never asserted)

SPEED_JS = """async ({ sliders, repeats }) => {
  const results = [];
  for (const [step, names] of Object.entries(sliders)) {
    const root = document.querySelector(`[data-panel="${step}"]`);
    for (const [name, [low, high, size]] of Object.entries(names)) {
      const input = root.querySelector(`input[data-param="${name}"]`);
      let resolveWrite = null;
      let writes = 0;
      const observer = new MutationObserver(() => {
        writes += 1;
        if (resolveWrite) { resolveWrite(performance.now()); resolveWrite = null; }
      });
      for (const node of root.querySelectorAll('[data-readout]')) {
        observer.observe(node, { childList: true, characterData: true, subtree: true });
      }
      const toReadout = [];
      const withLayout = [];
      const count = Math.round((high - low) / size) + 1;
      for (let k = 0; k < repeats; k += 1) {
        input.value = String(low + ((k + 1) % count) * size);
        const written = new Promise((resolve) => { resolveWrite = resolve; });
        const start = performance.now();
        input.dispatchEvent(new Event('input', { bubbles: true }));
        const seen = await written;  // the time the first readout changed
        void document.body.offsetHeight;  // then style and layout of the new readouts and drawing
        const laidOut = performance.now();
        toReadout.push(seen - start);
        withLayout.push(laidOut - start);
      }
      observer.disconnect();
      results.push({ step, name, toReadout, withLayout, writes });
    }
  }
  return results;
}"""


def test_input_to_readout_time_is_measured(browser, base_url, capsys, record_property):
    context = new_context(browser)
    page, errors = open_page_with_errors(context, base_url + PATH, wait_until_live)
    repeats = 50
    sliders = {s: {n: list(v[:3]) for n, v in p.items()} for s, p in SLIDERS.items()}
    results = page.evaluate(SPEED_JS, {"sliders": sliders, "repeats": repeats})
    context.close()
    lines = []
    for row in results:
        assert len(row["toReadout"]) == repeats
        assert row["writes"] >= repeats, (
            f"{row['step']}/{row['name']}: {row['writes']} readout writes for {repeats} inputs"
        )
        lines.append(
            f"  {row['step']}/{row['name']}: {statistics.mean(row['toReadout']):.3f} ms to readouts, "
            f"{statistics.mean(row['withLayout']):.3f} ms with layout"
        )
    overall = statistics.mean(t for row in results for t in row["toReadout"])
    slowest = max(statistics.mean(row["withLayout"]) for row in results)
    record_property("explainer_mean_input_to_readout_ms", overall)
    with capsys.disabled():
        print(
            f"\nexplainer: mean input-to-readout time {overall:.3f} ms over {repeats} inputs per slider "
            f"(slowest slider with layout {slowest:.3f} ms; one frame is 16.7 ms)"
        )
        print("\n".join(lines))
    assert not errors


# ---------------------------------------------------------------------------------------
# (5) The page's own scripts and styles stay small


def test_own_scripts_and_styles_stay_under_budget(browser, base_url, site_dir, capsys):
    context = new_context(browser)
    page = context.new_page()
    loaded: list[str] = []
    page.on("response", lambda response: loaded.append(response.url))
    page.goto(base_url + PATH, wait_until="load")
    page.wait_for_load_state("networkidle")
    context.close()
    own = sorted(
        {
            url[len(base_url) + 1 :]
            for url in loaded
            if url.startswith(base_url)
            and url.endswith((".js", ".css"))
            and not url[len(base_url) :].startswith("/assets/")  # the theme and KaTeX, not ours
        }
    )
    assert {
        "javascripts/explainer-demo.js",
        "javascripts/explainer-math.js",
        "javascripts/explainer.js",
        "stylesheets/explainer.css",
    } <= set(own)
    sizes = {name: (site_dir / name).stat().st_size for name in own}
    with capsys.disabled():
        print(
            "\nexplainer: own assets "
            + ", ".join(f"{name} {size / 1024:.1f} KB" for name, size in sizes.items())
            + f"; total {sum(sizes.values()) / 1024:.1f} KB of {SIZE_BUDGET // 1024} KB"
        )
    assert sum(sizes.values()) < SIZE_BUDGET


# ---------------------------------------------------------------------------------------
# (6) The steps' ranges, axe-core, motion (labels, live regions and focus: test_panels.py)


def test_the_steps_hold_the_ranges_and_orders_their_text_describes(browser, base_url):
    """The labels, live regions and focus of every panel are test_panels.py's; here, this page's values."""
    context = new_context(browser)
    page, errors = open_page_with_errors(context, base_url + PATH, wait_until_live)
    report = page.evaluate(
        """() => Array.from(document.querySelectorAll('[data-panel]'), (root) => ({
          step: root.dataset.panel,
          ranges: Array.from(root.querySelectorAll('input[data-param]'), (input) => ({
            name: input.dataset.param,
            min: Number(input.min), max: Number(input.max), step: Number(input.step), value: Number(input.value),
          })),
          buttons: Array.from(root.querySelectorAll('button[data-param]'), (b) => ({
            text: b.textContent.trim(), pressed: b.getAttribute('aria-pressed'), value: b.dataset.value,
          })),
          readouts: Array.from(root.querySelectorAll('[data-readout]'), (node) => node.dataset.readout),
        }))"""
    )
    assert [entry["step"] for entry in report] == list(STEPS)
    for entry in report:
        step = entry["step"]
        assert set(entry["readouts"]) == set(STARTING_READOUTS[step])
        assert {r["name"]: (r["min"], r["max"], r["step"], r["value"]) for r in entry["ranges"]} == {
            name: tuple(spec) for name, spec in SLIDERS.get(step, {}).items()
        }
    buttons = report[0]["buttons"]
    assert [b["value"] for b in buttons] == list(ORDERS) == [b["text"] for b in buttons]
    assert [b["pressed"] for b in buttons] == ["true", "false", "false"]
    assert not errors
    context.close()


@pytest.mark.skipif(not AXE.is_file(), reason="axe-core is not installed (npm ci)")
def test_axe_finds_no_violations_in_the_steps(context, base_url):
    page, _ = open_page_with_errors(context, base_url + PATH, wait_until_live)
    page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        """async () => {
          const r = await axe.run({ include: [['[data-panel]']] },
                                  { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
          return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
        }"""
    )
    assert result == []


def test_reduced_motion_turns_transitions_off(browser, base_url):
    durations = {}
    for motion in ("no-preference", "reduce"):
        context = new_context(browser, reduced_motion=motion)
        page, _ = open_page_with_errors(context, base_url + PATH, wait_until_live)
        durations[motion] = page.locator(".posenc-svg__moving, .posenc-svg__turning").evaluate_all(
            "nodes => nodes.map(n => getComputedStyle(n).transitionDuration)"
        )
        context.close()
    assert durations["no-preference"] and all(d != "0s" for d in durations["no-preference"])
    assert durations["reduce"] and all(d == "0s" for d in durations["reduce"])


# ---------------------------------------------------------------------------------------
# (7) Without JavaScript: the figures and the starting numbers carry the page


def test_without_javascript_the_figures_and_numbers_remain(browser, base_url):
    context = new_context(browser, java_script_enabled=False)
    page = context.new_page()
    page.goto(base_url + PATH, wait_until="load")
    page.wait_for_load_state("networkidle")
    for name in FIGURES:
        drawing = page.locator(f"#fig-{name} svg").first  # figures are inline SVG, drawn without scripts
        assert drawing.is_visible(), name
        assert drawing.evaluate(
            "svg => svg.getBoundingClientRect().width > 0 && svg.querySelectorAll('text').length > 0"
        ), name
    for step in STEPS:
        root = step_locator(page, step)
        assert root.get_attribute("data-live") is None
        assert texts_on_page(page, step) == expected_readouts(step, INITIAL[step]) == STARTING_READOUTS[step]
        assert texts_on_page(page, step, "text") == expected_texts(step, INITIAL[step])
        assert root.locator(".posenc-widget__nojs").is_visible()
        assert all(control.is_disabled() for control in root.locator("[data-param]").all())
        assert root.locator("svg").count() == 0
    context.close()


def test_only_the_pages_with_steps_or_the_panel_load_their_scripts(site_dir):
    """The explainer's, the long-context panel's and the grid-scores panel's scripts, and the panel
    module, are on the pages that use them and nowhere else (instant navigation brings them along:
    test_panels.py)."""
    named = re.compile(r"javascripts/((?:explainer|long-context|panels)[^\"/]*\.js)")
    loading = {}
    for path in site_dir.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        listed = [name for found in PAGE_SCRIPTS.findall(text) for name in json.loads(found)]
        assert all(name.startswith("javascripts/") for name in listed), (path, listed)
        loading[str(path.parent.relative_to(site_dir))] = [name.rsplit("/", 1)[-1] for name in listed] + named.findall(
            PAGE_SCRIPTS.sub("", text)
        )
    assert {page: names for page, names in loading.items() if names} == {
        "explainer": ["explainer-demo.js", "explainer-math.js", "panels.js", "explainer.js"],
        "grids": ["explainer-demo.js", "explainer-math.js", "grid-scores-math.js", "panels.js", "grid-scores.js"],
        "long-context": [
            "explainer-demo.js",
            "explainer-math.js",
            "long-context-math.js",
            "panels.js",
            "long-context.js",
        ],
    }
