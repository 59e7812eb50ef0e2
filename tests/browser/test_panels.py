"""Every interactive panel, through the one panel module (``docs/javascripts/panels.js``).

A panel is a description ``docs/panels/NAME.yml`` that a page shows with ``{{ panel: NAME }}``
and a script that registers ``NAME``. These tests hold every panel to that: each description is
shown by a page and registered there; in Chromium every control of every panel moves from the
keyboard and the pointer, and after each move the readouts, the texts and the slider values are
what the registration computes for the controls' values, with no console error; the controls
are labelled, grouped and focusable and the readouts announced; the numbers the built page
shows before any script runs are the ones the script writes; and every page with panels, reached
by Material's instant navigation, brings its scripts and wires each panel exactly once. What the
numbers should be is ``test_explainer_math.py``'s and ``test_long_context_math.py``'s concern. On
a phone and a desktop, in both colour schemes, every control is a touch target of 44 x 44 CSS px,
the drawings' text is at least 11 px as displayed, and every text reaches 4.5:1 contrast with what
it sits on.
"""

from __future__ import annotations

import html
import json
import pathlib
import re
import urllib.parse

import pytest
import yaml
from site_build import panels
from support import PAGE_SCRIPTS, explainer, long_context
from support.browser import new_context, open_page_with_errors
from support.explainer import Controls

ROOT = pathlib.Path(__file__).resolve().parents[2]
PANEL_ATTRIBUTE = re.compile(r'data-panel="([a-z0-9-]+)"')


def source_panel_pages() -> dict[str, list[str]]:
    """Page path -> the panels it shows, from the Markdown sources (known before the site is read)."""
    found = {}
    for source in sorted((ROOT / "docs").rglob("*.md")):
        names = panels.panels_of(source.read_text(encoding="utf-8"))
        if names:
            parts = source.relative_to(ROOT / "docs").with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "index" else parts
            found["/".join(("", *parts, "")).replace("//", "/")] = names
    return found


def page_panels(site_dir: pathlib.Path) -> dict[str, list[str]]:
    """Built page path -> the panels it shows, in page order."""
    found = {}
    for path in sorted(site_dir.rglob("index.html")):
        names = PANEL_ATTRIBUTE.findall(path.read_text(encoding="utf-8"))
        if names:
            found["/".join(("", *path.parent.relative_to(site_dir).parts, ""))] = names
    return found


def controls(name: str) -> dict:
    """Panel ``name``'s controls as its description writes them (sliders, choices, starting values)."""
    parser = Controls()
    parser.feed(panels.panel_template(name))
    return parser.steps[name]


def test_every_description_is_shown_by_a_page_and_built_from_its_markers(site_dir):
    shown = page_panels(site_dir)
    built = sorted(name for names in shown.values() for name in names)
    assert built == panels.panel_names(), "each description is shown once, and only descriptions are shown"
    for page, names in shown.items():
        source = ROOT / "docs" / (page.strip("/") + ".md")
        assert panels.panels_of(source.read_text(encoding="utf-8")) == names, page
    # The navigation test below is parametrized from the sources: they must name the same pages.
    assert source_panel_pages() == shown
    # Descriptions are page input, not files of the site.
    assert not (site_dir / "panels").exists()


# The panel as the page holds it, and as its registration computes it for those control values.
READ_PANEL = """root => {
  const panel = window.posencPanels.get(root.dataset.panel);
  const params = window.posencPanels.readParams(root);
  const read = (attribute) => Object.fromEntries(Array.from(root.querySelectorAll(`[${attribute}]`),
    (node) => [node.getAttribute(attribute), node.textContent]));
  const described = panel.valueTexts ? panel.valueTexts(params) : {};
  const sliders = Array.from(root.querySelectorAll('input[data-param]'), (input) => ({
    param: input.dataset.param, valuetext: input.getAttribute('aria-valuetext'),
    shown: Array.from(root.querySelectorAll(`[data-value-of="${input.dataset.param}"]`), (n) => n.textContent),
  }));
  const expected = panel.readouts(params);
  const expectedTexts = panel.texts ? panel.texts(params) : {};
  return {
    params, readouts: read('data-readout'), texts: read('data-text'), sliders,
    expected: Object.fromEntries(Object.keys(read('data-readout')).map((k) => [k, expected[k]])),
    expectedTexts: Object.fromEntries(Object.keys(read('data-text')).map((k) => [k, expectedTexts[k]])),
    described: Object.fromEntries(sliders.map((s) => [s.param, s.param in described ? described[s.param] : null])),
    pressed: Array.from(root.querySelectorAll('button[data-param]'),
      (b) => [b.dataset.value, b.getAttribute('aria-pressed')]),
  };
}"""


def check(page, name: str) -> dict:
    """The panel's readouts, texts and slider texts are its registration's, for the values it holds."""
    state = page.locator(f'[data-panel="{name}"]').evaluate(READ_PANEL)
    where = (name, state["params"])
    assert state["readouts"] == state["expected"], where
    assert state["texts"] == state["expectedTexts"], where
    for slider in state["sliders"]:
        text = state["described"][slider["param"]]
        assert slider["valuetext"] == text, where  # none where the bare number says it all
        assert slider["shown"] == [text if text is not None else str(state["params"][slider["param"]])], where
    for param, values in controls(name)["choices"].items():
        assert [value for value, pressed in state["pressed"] if pressed == "true"] == [state["params"][param]], where
        assert {value for value, _ in state["pressed"]} >= set(values), where
    return state


def wait_until_live(page):
    page.wait_for_function(
        "() => document.querySelectorAll('[data-panel]').length > 0 && "
        "document.querySelectorAll('[data-panel]:not([data-live])').length === 0"
    )


@pytest.mark.browser
def test_every_control_of_every_panel_updates_its_readouts(context, base_url, site_dir):
    registered = set()
    for path, names in page_panels(site_dir).items():
        page, errors = open_page_with_errors(context, base_url + path, wait_until_live)
        registered |= set(page.evaluate("() => window.posencPanels.registered()"))
        for name in names:
            spec = controls(name)
            root = page.locator(f'[data-panel="{name}"]')
            assert check(page, name)["params"] == spec["initial"], name
            for param, (low, high, size, _) in spec["sliders"].items():
                control = root.locator(f'input[data-param="{param}"]')
                control.scroll_into_view_if_needed()
                seen = []
                control.focus()
                moves = (("Home", low), ("ArrowRight", low + size), ("End", high), ("ArrowLeft", high - size))
                for key, target in moves:
                    page.keyboard.press(key)
                    state = check(page, name)
                    assert state["params"][param] == target, (name, param, key)
                    seen.append(state["readouts"])
                # A click at the middle of the track.
                box = control.bounding_box()
                page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                middle = check(page, name)["params"][param]
                assert abs(middle - (low + high) / 2) <= 0.15 * (high - low) + size, (name, param, middle)
                assert len({repr(readouts) for readouts in seen}) > 1, f"{name}: {param} moves no readout"
            for param, values in spec["choices"].items():
                seen = []
                for value in (*values[1:], values[0]):
                    root.locator(f'button[data-param="{param}"][data-value="{value}"]').click()
                    state = check(page, name)
                    assert state["params"][param] == value, (name, param)
                    seen.append(state["readouts"])
                # And from the keyboard.
                root.locator(f'button[data-param="{param}"][data-value="{values[-1]}"]').focus()
                page.keyboard.press("Enter")
                assert check(page, name)["params"][param] == values[-1], (name, param)
                assert len({repr(readouts) for readouts in seen}) > 1, f"{name}: {param} moves no readout"
        assert not errors, (path, errors)
        page.close()
    assert registered == set(panels.panel_names()), "every description has a registration, and no more"


ACCESSIBILITY = """root => ({
  title: (() => {
    const t = document.getElementById(root.getAttribute('aria-labelledby'));
    return root.getAttribute('role') === 'group' && t && root.contains(t) ? t.textContent.trim() : '';
  })(),
  sliders: Array.from(root.querySelectorAll('input[data-param]'), (input) => ({
    param: input.dataset.param, type: input.type, disabled: input.disabled, labels: input.labels.length,
    text: input.labels.length ? Array.from(input.labels[0].childNodes)
      .filter((n) => !(n.nodeType === 1 && n.getAttribute('aria-hidden') === 'true'))
      .map((n) => n.textContent).join('').trim() : '',
  })),
  buttons: Array.from(root.querySelectorAll('button[data-param]'), (b) => {
    const group = b.closest('[role=group]');
    const label = group && document.getElementById(group.getAttribute('aria-labelledby'));
    return { value: b.dataset.value, type: b.type, disabled: b.disabled, pressed: b.getAttribute('aria-pressed'),
             group: group !== root && label !== null && label.textContent.trim() !== '' };
  }),
  readouts: Array.from(root.querySelectorAll('[data-readout]'), (node) => {
    const live = node.closest('[aria-live]');
    return live !== null && root.contains(live) && live.getAttribute('aria-live') === 'polite';
  }),
})"""


@pytest.mark.browser
def test_every_panel_is_labelled_announced_and_focusable(browser, base_url, site_dir):
    context = new_context(browser)
    for path, names in page_panels(site_dir).items():
        page, errors = open_page_with_errors(context, base_url + path, wait_until_live)
        for name in names:
            report = page.locator(f'[data-panel="{name}"]').evaluate(ACCESSIBILITY)
            assert report["title"], f"{name}: a group named by a title inside it"
            for slider in report["sliders"]:
                assert slider["type"] == "range" and not slider["disabled"], (name, slider)
                assert slider["labels"] == 1 and slider["text"], (name, slider)
            for button in report["buttons"]:
                assert button["type"] == "button" and not button["disabled"], (name, button)
                assert button["pressed"] in ("true", "false") and button["group"], (name, button)
            assert report["readouts"] and all(report["readouts"]), f"{name}: readouts in a polite live region"
            # Keyboard focus is visible on every control.
            for control in page.locator(f'[data-panel="{name}"] [data-param]').all():
                control.focus()
                outline = control.evaluate(
                    "c => ({ visible: c.matches(':focus-visible'),"
                    " style: getComputedStyle(c).outlineStyle,"
                    " width: parseFloat(getComputedStyle(c).outlineWidth) })"
                )
                assert outline["visible"] and outline["style"] != "none" and outline["width"] > 0, (name, outline)
        assert not errors, (path, errors)
        page.close()
    context.close()


READ_NUMBERS = """() => Object.fromEntries(Array.from(document.querySelectorAll('[data-panel]'), (root) => [
  root.dataset.panel, Array.from(root.querySelectorAll('[data-readout], [data-text], [data-value-of]'),
    (node) => node.textContent)]))"""


@pytest.mark.browser
def test_the_page_without_javascript_shows_the_numbers_the_script_writes(browser, base_url, site_dir):
    """The starting numbers are computed by posenc at build time; the script must agree with them."""
    shown = {}
    for enabled in (True, False):
        context = new_context(browser, java_script_enabled=enabled)
        for path in page_panels(site_dir):
            page = context.new_page()
            page.goto(base_url + path, wait_until="load")
            if enabled:
                wait_until_live(page)
            else:
                assert page.locator("[data-panel] [data-param]:not([disabled])").count() == 0, path
            shown[path, enabled] = page.evaluate(READ_NUMBERS)
            page.close()
        context.close()
    for path in page_panels(site_dir):
        assert shown[path, False] == shown[path, True], path


# ---------------------------------------------------------------------------------------
# Instant navigation: Material swaps the content without loading a new document, so a page's
# scripts arrive with it, and a panel must be wired again each time it comes back, yet only once.


def page_links(site_dir: pathlib.Path, path: str) -> list[str]:
    """The site pages the article of built page ``path`` links to, in order (no fragments)."""
    text = (site_dir / path.strip("/") / "index.html").read_text(encoding="utf-8")
    article = re.search(r"<article\b.*?</article>", text, re.S)
    found = []
    for href in re.findall(r'<a\b[^>]*\bhref="([^"]+)"', article[0] if article else ""):
        target = urllib.parse.urlsplit(urllib.parse.urljoin(path, html.unescape(href)))
        if not target.scheme and not target.fragment and not target.query and target.path.endswith("/"):
            if (site_dir / target.path.strip("/") / "index.html").is_file() and target.path not in found:
                found.append(target.path)
    return found


def heading(site_dir: pathlib.Path, path: str) -> str:
    """The text of built page ``path``'s first heading, as the document's textContent reads it."""
    text = (site_dir / path.strip("/") / "index.html").read_text(encoding="utf-8")
    return html.unescape(re.sub(r"<[^>]+>", "", re.search(r"<h1\b[^>]*>(.*?)</h1>", text, re.S)[1]))


# The panel's state as a reader meets it: every text in it (readouts, texts, slider values, table
# cells, labels of the drawing), every control and how many elements the drawing holds.
SNAPSHOT = """root => ({
  text: root.textContent,
  controls: Array.from(root.querySelectorAll('[data-param]'), (c) => [c.dataset.param, c.value,
    c.getAttribute('aria-pressed'), c.getAttribute('aria-valuetext'), c.disabled]),
  drawn: root.querySelector('[data-drawing]').querySelectorAll('*').length,
})"""

# Counts the writes to each readout until window.__panelWrites() is called.
COUNT_WRITES = """root => {
  const counts = {};
  const tally = (records) => {
    for (const record of records) {
      const node = record.target.nodeType === 1 ? record.target : record.target.parentElement;
      const readout = node && node.closest('[data-readout]');
      if (readout) counts[readout.dataset.readout] += 1;
    }
  };
  const observer = new MutationObserver(tally);
  for (const node of root.querySelectorAll('[data-readout]')) {
    observer.observe(node, { childList: true, characterData: true, subtree: true });
    counts[node.dataset.readout] = 0;
  }
  window.__panelWrites = () => { tally(observer.takeRecords()); observer.disconnect(); return counts; };
}"""


def reference_readouts(name: str, params: dict) -> dict[str, str] | None:
    """What posenc says the panel's readouts should read, for the panels the tests hold a reference of."""
    if name == "long-context":
        return long_context.expected_readouts(params)
    if name in explainer.STARTING_READOUTS:
        return explainer.expected_readouts(name, params)
    return None


def moves(name: str) -> list[tuple[str, str, object]]:
    """One move of every control: each slider one step from its start, each other choice clicked."""
    found = []
    for param, (_, high, _, start) in controls(name)["sliders"].items():
        found.append(("key", param, "ArrowLeft" if start == high else "ArrowRight"))
    for param, values in controls(name)["choices"].items():
        start = controls(name)["initial"][param]
        found += [("click", param, value) for value in values if value != start]
        found.append(("click", param, start))
    return found


def make_move(page, name: str, move: tuple[str, str, object]) -> None:
    kind, param, value = move
    root = page.locator(f'[data-panel="{name}"]')
    if kind == "key":
        root.locator(f'input[data-param="{param}"]').focus()
        page.keyboard.press(value)
    else:
        root.locator(f'button[data-param="{param}"][data-value="{value}"]').click()


def wait_for_panels(page, count: int) -> None:
    page.wait_for_function(
        "n => document.querySelectorAll('[data-panel][data-live]').length === n"
        " && document.querySelectorAll('[data-panel]').length === n",
        arg=count,
    )


LOADED = """names => names.map((name) => document.querySelectorAll(
  `script[src="${new URL(name, __md_scope).href}"]`).length)"""


def click_link_to(page, base_url: str, target: str) -> None:
    """Clicks the first link of the article to ``target``, as a reader would (Material intercepts it)."""
    page.evaluate(
        """url => { const link = Array.from(document.querySelectorAll('article a[href]'))
          .find((a) => a.href === url); link.setAttribute('data-test-link', ''); }""",
        base_url + target,
    )
    page.locator("[data-test-link]").click()


@pytest.mark.browser
@pytest.mark.parametrize("path", sorted(source_panel_pages()))
def test_instant_navigation_brings_the_scripts_and_wires_every_panel_exactly_once(browser, base_url, site_dir, path):
    shown = page_panels(site_dir)
    names = shown[path]
    every = [
        "/" + "".join(f"{part}/" for part in p.parent.relative_to(site_dir).parts) for p in site_dir.rglob("index.html")
    ]
    plain = sorted(other for other in every if other not in shown)
    # A page without panels that links here, and one without panels this page links to.
    start = next(other for other in plain if path in page_links(site_dir, other))
    away = next(other for other in page_links(site_dir, path) if other in plain)
    built = (site_dir / path.strip("/") / "index.html").read_text(encoding="utf-8")
    scripts = [name for found in PAGE_SCRIPTS.findall(built) for name in json.loads(found)]
    assert scripts, f"{path}: a page with panels names its scripts"

    context = new_context(browser)
    # The page loaded afresh: what the panels must look like after each of the same moves.
    fresh, fresh_errors = open_page_with_errors(context, base_url + path, lambda p: wait_for_panels(p, len(names)))
    page, errors = open_page_with_errors(context, base_url + start)
    page.wait_for_load_state("networkidle")  # the sitemap is in: clicks are intercepted from now on
    # The start page has no panel and loads none of the page's scripts, nor the panel module ...
    assert page.evaluate(LOADED, scripts) == [0] * len(scripts), start
    assert page.evaluate("() => typeof window.posencPanels") == "undefined", start
    page.evaluate("window.__sameDocument = true")
    # ... which instant navigation brings with the page; then away and back, twice.
    click_link_to(page, base_url, path)
    page.wait_for_url(base_url + path)
    wait_for_panels(page, len(names))
    for _ in range(2):
        click_link_to(page, base_url, away)
        page.wait_for_url(base_url + away)
        page.wait_for_function(
            "text => document.querySelector('article h1')?.textContent === text", arg=heading(site_dir, away)
        )
        assert page.locator("[data-panel]").count() == 0, away
        page.go_back()
        page.wait_for_url(base_url + path)
        wait_for_panels(page, len(names))
    # Still the same document: Material swapped the content instead of reloading the page.
    assert page.evaluate("window.__sameDocument") is True
    assert page.evaluate(LOADED, scripts) == [1] * len(scripts), "each script is loaded once"

    for name in names:
        root, fresh_root = page.locator(f'[data-panel="{name}"]'), fresh.locator(f'[data-panel="{name}"]')
        state = check(page, name)
        assert state["params"] == controls(name)["initial"], name
        assert root.evaluate(SNAPSHOT) == fresh_root.evaluate(SNAPSHOT), name
        for move in moves(name):
            # One listener per control: one move writes every readout exactly once.
            root.evaluate(COUNT_WRITES)
            make_move(page, name, move)
            page.wait_for_timeout(20)
            counts = page.evaluate("() => window.__panelWrites()")
            assert counts == dict.fromkeys(state["readouts"], 1), (name, move, counts)
            make_move(fresh, name, move)
            state = check(page, name)
            expected = reference_readouts(name, state["params"])
            assert expected is None or state["readouts"] == expected, (name, move)
            assert root.evaluate(SNAPSHOT) == fresh_root.evaluate(SNAPSHOT), (name, move)
    assert not errors and not fresh_errors, (errors, fresh_errors)


# The sizes the panels are held to: a phone's and a small laptop's window.
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
TOUCH = 44  # CSS px, both ways (WCAG 2.5.5)
SMALLEST_TEXT = 11  # CSS px as displayed
CONTRAST = 4.5  # WCAG 1.4.3, for text of any size

# What every panel of the page shows, measured where it is shown: each control's box and whether
# pointer input at its corners and centre reaches it; each drawing text's size on screen (its
# font size times the drawing's scale); each text's colour against what it sits on, backgrounds
# composited from the canvas up (an SVG text on a filled shape sits on that shape's fill).
MEASURE = """async () => {
  const parse = (value) => {
    const m = value.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const [r, g, b, a = 1] = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
    return [r, g, b, a];
  };
  const over = (top, bottom) => top.slice(0, 3).map((c, k) => c * top[3] + bottom[k] * (1 - top[3])).concat(1);
  const luminance = (rgb) => {
    const [r, g, b] = rgb.slice(0, 3).map((c) => {
      const v = c / 255;
      return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const htmlBackground = (element) => {
    const chain = [];
    for (let node = element; node; node = node.parentElement) chain.unshift(node);
    let colour = [255, 255, 255, 1];
    for (const node of chain) {
      const own = parse(getComputedStyle(node).backgroundColor);
      if (own && own[3] > 0) colour = over(own, colour);
    }
    return colour;
  };
  const shapes = new Set(["rect", "circle", "ellipse", "polygon", "path"]);
  const svgBackground = (text) => {
    const box = text.getBoundingClientRect();
    const stack = document.elementsFromPoint(box.x + box.width / 2, box.y + box.height / 2);
    const below = stack.slice(stack.indexOf(text) + 1);
    const svg = text.ownerSVGElement;
    let colour = htmlBackground(svg.parentElement);
    const fills = [];
    for (const node of below) {
      if (!svg.contains(node) || node === svg) break;
      const fill = shapes.has(node.tagName) ? parse(getComputedStyle(node).fill) : null;
      if (fill) fills.unshift(fill);
    }
    for (const fill of fills) colour = over(fill, colour);
    return colour;
  };
  // A block far down the page is skipped (content-visibility in posenc.css) until it comes into
  // view, and only then laid out at its real size and hit-tested: each panel is scrolled into
  // view first, and after a scroll the measures wait for the next frames.
  const frames = () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const show = async (node) => {
    const box = node.getBoundingClientRect();
    if (box.top >= header && box.bottom <= innerHeight) return;
    node.scrollIntoView({ block: "center", behavior: "instant" });
    await frames();
  };
  const header = document.querySelector(".md-header").getBoundingClientRect().bottom;
  const report = { controls: [], sizes: [], contrast: [] };
  for (const root of document.querySelectorAll("[data-panel]")) {
    const name = root.dataset.panel;
    root.scrollIntoView({ block: "start", behavior: "instant" });
    await frames();
    for (const control of root.querySelectorAll("[data-param]")) {
      await show(control);
      const box = control.getBoundingClientRect();
      const inset = 2;
      const [left, right, top, bottom] = [box.x + inset, box.right - inset, box.y + inset, box.bottom - inset];
      const middle = [(left + right) / 2, (top + bottom) / 2];
      const points = [middle, [left, top], [right, top], [left, bottom], [right, bottom]];
      const reached = points.every(([x, y]) => y > header && document.elementFromPoint(x, y) === control);
      report.controls.push({ name, control: control.dataset.value || control.dataset.param,
        width: box.width, height: box.height, reached });
    }
    for (const text of root.querySelectorAll("svg text, svg tspan")) {
      const owner = text.closest("text");
      const matrix = owner.getScreenCTM();
      const size = parseFloat(getComputedStyle(text).fontSize) * Math.hypot(matrix.a, matrix.b);
      if (text.textContent.trim()) report.sizes.push({ name, text: text.textContent, size });
    }
    const texts = Array.from(root.querySelectorAll("*")).filter((node) =>
      Array.from(node.childNodes).some((child) => child.nodeType === 3 && child.textContent.trim()) &&
      node.getClientRects().length > 0 && getComputedStyle(node).visibility === "visible");
    for (const node of texts) {
      const inSvg = node instanceof SVGElement;
      if (inSvg) await show(node);
      const style = getComputedStyle(node);
      const background = inSvg ? svgBackground(node.closest("text")) : htmlBackground(node);
      const ink = over(parse(inSvg ? style.fill : style.color), background);
      report.contrast.push({ name, text: node.textContent.trim().slice(0, 40), ratio: ratio(ink, background),
        ink: ink.map(Math.round).join(","), background: background.map(Math.round).join(",") });
    }
  }
  return report;
}"""


@pytest.mark.browser
@pytest.mark.parametrize("size", VIEWPORTS)
def test_every_control_is_a_touch_target_and_every_text_legible(browser, base_url, site_dir, scheme, size):
    context = new_context(browser, scheme, viewport=VIEWPORTS[size])
    for path, names in page_panels(site_dir).items():
        page, errors = open_page_with_errors(context, base_url + path, wait_until_live)
        report = page.evaluate(MEASURE)
        assert {control["name"] for control in report["controls"]} == set(names), path
        small = [c for c in report["controls"] if min(c["width"], c["height"]) < TOUCH or not c["reached"]]
        assert small == [], f"{path}: controls under {TOUCH} x {TOUCH} px or covered"
        assert report["sizes"], path
        tiny = [text for text in report["sizes"] if text["size"] < SMALLEST_TEXT - 0.01]
        assert tiny == [], f"{path}: drawing text under {SMALLEST_TEXT} px"
        faint = [text for text in report["contrast"] if text["ratio"] < CONTRAST]
        assert faint == [], f"{path}: text under {CONTRAST}:1"
        # Every panel's title, its readouts' labels and numbers, and its drawing were measured.
        measured = {text["text"] for text in report["contrast"]}
        for readout in page.locator("[data-panel] [data-readout]").all():
            assert readout.text_content().strip()[:40] in measured, path
        assert not errors, (path, errors)
        page.close()
    context.close()


@pytest.mark.browser
def test_each_panel_page_runs_its_listed_scripts_in_order_as_checked_in_node(browser, base_url):
    """A panel page loads the scripts its front matter lists, in that order (each module before the
    code that uses it) and no other page code, and serves each panel's arithmetic exactly as the
    file Node checks against posenc."""
    context = new_context(browser)
    try:
        for path in source_panel_pages():
            source = ROOT / "docs" / (path.strip("/") + ".md")
            listed = yaml.safe_load(source.read_text(encoding="utf-8").split("---")[1])["scripts"]
            page, errors = open_page_with_errors(context, base_url + path)
            # The site's own scripts (the theme's live under /assets/); figures.js is on every page.
            paths = [
                urllib.parse.urlparse(src).path
                for src in page.evaluate("() => Array.from(document.scripts, (s) => s.src)")
            ]
            loaded = [
                path.removeprefix("/javascripts/")
                for path in paths
                if path.startswith("/javascripts/") and path != "/javascripts/figures.js"
            ]
            assert loaded == [name.removeprefix("javascripts/") for name in listed], path
            for name in listed:
                if name.endswith("-math.js"):
                    served = page.evaluate(f"async () => (await fetch('../{name}')).text()")
                    assert served == (ROOT / "docs" / name).read_text(encoding="utf-8"), (path, name)
            assert not errors, (path, errors)
            page.close()
    finally:
        context.close()
