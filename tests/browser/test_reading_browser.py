"""Every page read on a desktop (1350x940) and on a phone (390x844), in both colour schemes.

What a reader would take for a broken page: a display equation cut off at the column's edge,
a page that scrolls sideways, a comma alone at the start of a line after a formula, a heading's
permalink on a line of its own, a step of the explainer shown twice. Everything is measured by
one ``page.evaluate`` of ``READING``, run for this module by conftest's shared visit of each page
(``visits``): in the desktop window as the page loads, and again at the end of the visit with the
window narrowed to the phone's width (skipped blocks drawn and folded blocks open, so the phone
reading covers the proofs too).
"""

from __future__ import annotations

import json

import pytest
from support.browser import new_context
from support.site_visits import DESKTOP, PHONE, read_on_every_page

# Measured after the fonts have arrived (the layout they give is the one readers see).
# A display equation is "wide" when its content overflows its KaTeX box; the element that
# scrolls it is its nearest ancestor with overflow-x auto or scroll. The scroll cue is the one
# posenc.css draws: gradients, some fixed to the box's edges (background-attachment scroll)
# and some travelling with the content (local), which hide a shadow once its end is reached.
READING = """async () => {
  await document.fonts.ready;
  const name = (el) => {
    const anchor = el.closest('[id]');
    const text = (el.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 40);
    return (anchor ? '#' + anchor.id + ' ' : '') + JSON.stringify(text);
  };
  const scroller = (el) => {
    for (let node = el.parentElement; node && node !== document.body; node = node.parentElement) {
      if (/auto|scroll/.test(getComputedStyle(node).overflowX)) return node;
    }
    return null;
  };
  const hasCue = (el) => {
    const style = getComputedStyle(el);
    const attachments = style.backgroundAttachment.split(',').map((a) => a.trim());
    return /gradient/.test(style.backgroundImage) && attachments.includes('local') && attachments.includes('scroll');
  };
  const visible = (el) => el.getClientRects().length > 0;
  const root = document.documentElement;
  const result = {width: window.innerWidth, sideways: root.scrollWidth > root.clientWidth + 1, wide: [], uncued: [],
                  punctuation: [], permalinks: [], explainer: {static: 0, shown: []}, smallCode: []};

  for (const display of document.querySelectorAll('article .katex-display')) {
    if (display.scrollWidth <= display.clientWidth + 1) continue;
    result.wide.push(name(display));
    const box = scroller(display);
    if (!box || !hasCue(box)) result.uncued.push(name(display));
  }

  // Inline math directly followed by punctuation: the punctuation sits on the line of the
  // formula's last line. (A long formula may break inside, after a relation or an operator.)
  for (const math of document.querySelectorAll('article .katex')) {
    if (math.closest('.katex-display')) continue;
    const next = math.nextSibling;
    if (!next || next.nodeType !== Node.TEXT_NODE || !/^[.,;:!?)]/.test(next.data)) continue;
    const lines = math.getClientRects();
    if (!lines.length) continue;
    const last = lines[lines.length - 1];
    const range = document.createRange();
    range.setStart(next, 0);
    range.setEnd(next, 1);
    const mark = range.getBoundingClientRect();
    if (mark.top >= last.bottom - 1 || mark.left < last.right - 1) {
      result.punctuation.push(name(math.parentElement) + ' then ' + JSON.stringify(next.data[0]));
    }
  }

  // A heading's permalink shares the last line of the heading's text.
  for (const link of document.querySelectorAll('article .headerlink')) {
    const heading = link.parentElement;
    const range = document.createRange();
    range.setStart(heading, 0);
    range.setEndBefore(link);
    const lines = Array.from(range.getClientRects()).filter((r) => r.width > 0);
    if (!lines.length || !visible(link)) continue;
    const lastBottom = Math.max(...lines.map((r) => r.bottom));
    if (link.getBoundingClientRect().top >= lastBottom - 1) result.permalinks.push(name(heading));
  }

  // Code (inline and in blocks) in a font of at least 12 px, as a phone needs.
  result.smallCode = [...new Set(Array.from(document.querySelectorAll('article code'))
    .filter((code) => visible(code) && parseFloat(getComputedStyle(code).fontSize) < 12)
    .map((code) => getComputedStyle(code).fontSize))];

  // The explainer: a static figure stands right after each interactive panel.
  for (const figure of document.querySelectorAll('.posenc-widget + .posenc-figure')) {
    result.explainer.static += 1;
    if (visible(figure)) result.explainer.shown.push(figure.id);
  }
  return result;
}"""
READ_ON_EVERY_VISIT = read_on_every_page("reading", READING, phone=True)


def _read_the_explainer(browser, base_url, javascript: bool) -> dict:
    """READING's result for the explainer loaded in a desktop window, with or without scripts."""
    context = new_context(browser, "light", java_script_enabled=javascript)
    page = context.new_page()
    page.goto(base_url + "/explainer/", wait_until="load")
    found = page.evaluate(READING)
    context.close()
    return found


@pytest.mark.browser
@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_every_page_reads_cleanly(site_paths, scheme, viewport, visits):
    """Desktop: no display equation is wider than its column. Phone: the page never scrolls
    sideways, every equation that does not fit shows the scroll cue and code is at least 12 px
    (Lighthouse's legibility audit). Both: punctuation after
    inline math stays on the formula's line, permalinks never wrap onto a line of their own,
    and with JavaScript the explainer shows its panels, not the static figures as well."""
    reads = {path: visits[path].reads if viewport == "desktop" else visits[path].phone_reads for path in site_paths}
    results = {path: read[READ_ON_EVERY_VISIT] for path, read in reads.items()}
    expected_width = (DESKTOP if viewport == "desktop" else PHONE)["width"]
    assert {found["width"] for found in results.values()} == {expected_width}, "a page was read in another window"
    problems: list[str] = []
    for path, found in results.items():
        where = f"{scheme} {viewport} {path}"
        if viewport == "desktop" and found["wide"]:
            problems.append(f"{where}: display equations wider than the column: {found['wide']}")
        if found["sideways"]:
            problems.append(f"{where}: the page scrolls sideways")
        if found["uncued"]:
            problems.append(f"{where}: equations that scroll without a cue: {found['uncued']}")
        if viewport == "phone" and found["smallCode"]:
            problems.append(f"{where}: code set under 12 px: {found['smallCode']}")
        if found["punctuation"]:
            problems.append(f"{where}: punctuation wrapped away from inline math: {found['punctuation']}")
        if found["permalinks"]:
            problems.append(f"{where}: permalinks alone on a line under: {found['permalinks']}")
        if found["explainer"]["shown"]:
            problems.append(f"{where}: static figures shown beside live panels: {found['explainer']['shown']}")
    assert sum(found["explainer"]["static"] for found in results.values()), "no page pairs a panel with a figure"
    assert not problems, "\n".join(problems)


@pytest.mark.browser
def test_the_explainer_shows_each_step_once(browser, base_url):
    """With scripts the live panels stand alone; without them the static figures stand in."""
    steps = {}
    for javascript in (True, False):
        steps[javascript] = _read_the_explainer(browser, base_url, javascript)["explainer"]
    assert steps[True]["static"] > 0
    assert steps[True]["shown"] == [], steps[True]
    assert len(steps[False]["shown"]) == steps[False]["static"], steps[False]


def test_generated_source_is_not_a_search_result(site_dir):
    """Search finds articles and derivations, not the raw source on the figure pages, the API's
    source pages and each derivation's page."""
    import posenc.site.derivations  # noqa: F401  (registers every derivation)
    from posenc.site.registry import REGISTRY

    index = json.loads((site_dir / "search" / "search_index.json").read_text())
    locations = [entry["location"] for entry in index["docs"]]
    assert {f"derivations/{identifier}/" for identifier in REGISTRY} <= set(locations)
    dumps = [loc for loc in locations if loc.startswith(("figures/", "api/source/")) or loc.endswith("#source")]
    assert not dumps, dumps
    code = [
        f"def {function.__name__}("
        for entry in REGISTRY.values()
        for function in (entry.prove, entry.check)
        if function is not None
    ]
    assert not [entry["location"] for entry in index["docs"] if any(line in entry["text"] for line in code)]
