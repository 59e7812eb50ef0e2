"""Every page of the built site audited in headless Chromium, in both colour schemes:
accessibility (axe-core), layout stability and page weight.

Each page is loaded once per scheme (conftest's ``site_visits``) and each test reads its own
observation of that load, so each fails on its own kind of defect. Each failure names the page
(and the rule, element or file) so it can be fixed where it lives. Lighthouse's figures are not
tests (they vary by machine): ``make audit`` prints them.
"""

from __future__ import annotations

import gzip
import re
from collections import defaultdict
from dataclasses import dataclass, field
from urllib.parse import urlparse

import pytest
from support.browser import CHROMIUM, CHROMIUM_ARGS, new_context
from support.site_visits import (
    AXE_RUN,
    LAYOUT_ATTEMPTS,
    MISSING_PAGE,
    PageVisit,
    draw_skipped_blocks,
    layout_shifts_of_a_load,
)

pytestmark = pytest.mark.browser

KB = 1000
ARTICLE_BUDGET = 300 * KB
NOTEBOOK_BUDGET = 250 * KB


def _open(context, url: str):
    page = context.new_page()
    response = page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    assert response is not None and response.status == 200, f"{url} answered {response and response.status}"
    return page


def _axe(page, axe_script) -> list[dict]:
    draw_skipped_blocks(page)  # axe judges every block as drawn, as a reader scrolling there sees it
    page.add_script_tag(path=str(axe_script))
    return page.evaluate(AXE_RUN)["violations"]  # axe's default rules


def _axe_lines(where: str, violations: list[dict]) -> list[str]:
    """One line per rule broken on a page: how many elements, the first few, the first reason."""
    by_rule: dict[str, list[dict]] = defaultdict(list)
    for violation in violations:
        by_rule[violation["rule"]].append(violation)
    lines = []
    for rule, found in by_rule.items():
        targets = "; ".join(v["target"][-90:] for v in found[:3]) + ("; ..." if len(found) > 3 else "")
        lines.append(
            f"{where} [{rule}, {found[0]['impact']}] {len(found)} element(s): {targets} -- {found[0]['summary']}"
        )
    return lines


# --- accessibility -------------------------------------------------------------------------


# The rules of axe's default set that judge colours, run on every page in both schemes.
COLOUR_RULES = {"color-contrast", "link-in-text-block"}


def test_axe_finds_no_violations_on_any_page(visits, scheme, axe_script):
    """axe-core's default rules (WCAG 2 A/AA and best practices) on every page and on the 404
    page, collapsed blocks opened so their content is checked too: all of them in the light
    scheme, and in the dark one those that judge colours (text contrast, links told apart by
    colour), since only colours differ between the schemes (conftest's ``site_visits``). The
    colour rules run in a phone's width as well, on the page as loaded, skipped blocks not drawn,
    as Lighthouse's mobile audit runs them (site_visits._phone_axe): what lies behind a text
    there depends on the phone's layout."""
    problems: list[str] = []
    for path, visit in visits.items():
        expected = 404 if path == MISSING_PAGE else 200
        if visit.status != expected:
            problems.append(f"{scheme} {path}: answered {visit.status}, not {expected}")
        ran = set(visit.axe_rules)
        if not COLOUR_RULES <= ran:
            problems.append(f"{scheme} {path}: axe did not run {sorted(COLOUR_RULES - ran)}")
        if scheme == "light" and not ran - COLOUR_RULES:
            problems.append(f"{scheme} {path}: axe ran only the colour rules {sorted(ran)}")
        problems += _axe_lines(f"{scheme} {path}", visit.axe)
        if visit.phone_axe is None:
            problems.append(f"{scheme} {path}: axe did not run in the phone's width")
        else:
            problems += _axe_lines(f"{scheme} {path} (phone, as loaded)", visit.phone_axe)
    assert not problems, f"{len(problems)} axe violation(s):\n" + "\n".join(problems)


def test_axe_finds_no_violations_in_open_controls(context, base_url, scheme, axe_script):
    """The states controls create: the search dialog with results; a page reached by instant
    navigation, the pointer still over the (hovered, focused) link; and on a phone-sized screen
    the navigation drawer. The page content itself is checked on every page by the visits; the
    pages here are small ones with what instant navigation re-wires (code blocks with copy
    buttons, display equations), since axe's time grows with the page's size."""
    problems: list[str] = []
    page = _open(context, base_url + "/")
    search = page.locator("input.md-search__input")
    search.click()
    search.press_sequentially("kernel", delay=30)  # Material's search reacts to key events
    page.wait_for_selector(".md-search-result__item", timeout=10_000)
    problems += _axe_lines(f"{scheme} / (search open)", _axe(page, axe_script))
    page.close()

    page = _open(context, base_url + "/")
    page.locator("nav.md-nav--primary a.md-nav__link:visible", has_text="Conventions in the wild").first.click()
    page.wait_for_url(base_url + "/conventions/")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)  # Material's instant navigation swaps the page in
    problems += _axe_lines(f"{scheme} /conventions/ (instant navigation from /, link hovered)", _axe(page, axe_script))
    page.close()

    page = _open(context, base_url + "/")
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator("label.md-header__button[for='__drawer']").click()
    page.wait_for_function("document.getElementById('__drawer').checked")
    page.wait_for_timeout(400)  # the drawer slides in over 250 ms
    problems += _axe_lines(f"{scheme} / (phone, drawer open)", _axe(page, axe_script))
    page.close()
    assert not problems, f"{len(problems)} axe violation(s):\n" + "\n".join(problems)


# --- layout stability ----------------------------------------------------------------------


def _described(shifts: list[dict]) -> str:
    """One load's layout shifts (site_visits.LAYOUT_SHIFTS), each with when and what moved."""
    return "; ".join(f"{s['value']:.4f} at {s['at']} ms by {', '.join(s['sources']) or '?'}" for s in shifts)


def test_no_layout_shift_on_any_page(visits, site_paths, scheme):
    """Cumulative layout shift 0.0: images are sized and math is rendered before first paint.

    overrides/main.html holds the first paint until the article is parsed (rel=expect) and
    preloads the KaTeX fonts, which posenc.css declares font-display: optional, so Chromium
    holds the paint for them too; only a font server slower than that hold (a loaded test
    machine) can still let a font arrive after it. A page that shifts is therefore loaded
    again, up to site_visits.LAYOUT_ATTEMPTS times, and fails only if every load shifts: an unsized image
    or content inserted by a script shifts every time. The desktop window is Lighthouse's
    (site_visits.DESKTOP): a block the browser skips (posenc.css's content-visibility rules) that
    starts within its first screen is drawn a frame late and moves what follows it.
    """
    problems: list[str] = []
    for path in site_paths:
        loads = visits[path].layout_shifts  # loaded again while it shifted, up to LAYOUT_ATTEMPTS loads
        if all(loads):
            shifts = loads[-1]
            total = sum(shift["value"] for shift in shifts)
            problems.append(
                f"{scheme} {path}: cumulative layout shift {total:.4f} in each of "
                f"{len(loads)} loads; the last: {_described(shifts)}"
            )
    assert not problems, "\n".join(problems)


# A table of contents this long can overflow its sidebar in the desktop window.
LONG_TOC = 10
TOC_LINK = re.compile(r'class="md-nav__link"')


def test_no_layout_shift_where_scrollbars_take_room(browser, base_url, site_dir, site_paths):
    """The sidebars do not move their entries as the page starts: a long table of contents can
    overflow its sidebar for a moment and show a scrollbar, which must not rewrap its entries
    when it comes or goes (posenc.css keeps the scrollbar's room). Checked on every page
    whose table of contents has at least LONG_TOC entries, in one tab of a browser that draws
    scrollbars, in the visits' desktop window (Lighthouse's); a page that shifts is loaded again,
    as test_no_layout_shift_on_any_page does (a font can arrive late on a loaded machine), and
    fails only if every load shifts."""
    pages = []
    for path in site_paths:
        html = (site_dir / path.lstrip("/") / "index.html").read_text(encoding="utf-8")
        toc = html.partition('data-md-type="toc"')[2].partition('class="md-content"')[0]
        if len(TOC_LINK.findall(toc)) >= LONG_TOC:
            pages.append(path)
    assert len(pages) >= 5, pages
    drawing_scrollbars = browser.browser_type.launch(
        executable_path=CHROMIUM, args=CHROMIUM_ARGS, ignore_default_args=["--hide-scrollbars"]
    )
    problems = []
    try:
        page = new_context(drawing_scrollbars, "light").new_page()
        for path in pages:
            for _ in range(LAYOUT_ATTEMPTS):  # loaded again while it shifts, as in the test above
                shifts = layout_shifts_of_a_load(page, base_url + path)
                if not shifts:
                    break
            else:
                problems.append(f"{path}: in each of {LAYOUT_ATTEMPTS} loads; the last: {_described(shifts)}")
    finally:
        drawing_scrollbars.close()
    assert not problems, "\n".join(problems)


# --- page weight ---------------------------------------------------------------------------


@dataclass
class Weight:
    """What one page loads beyond the shared assets. The budget applies to the bytes that cross
    the network: static hosts (GitHub Pages among them) send HTML, CSS, JS and SVG gzipped, and
    Lighthouse counts transfer size the same way. The uncompressed size is printed beside it."""

    path: str
    total: int = 0
    gzipped: int = 0
    by_url: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, visit: PageVisit) -> Weight:
        weight = cls(visit.path)
        for transfer in visit.transfers:
            if transfer.body is not None:
                weight.add(transfer.url, transfer.body)
        return weight

    @property
    def budget(self) -> int:
        return NOTEBOOK_BUDGET if self.path.startswith("/notebooks/") else ARTICLE_BUDGET

    def add(self, url: str, body: bytes) -> None:
        self.by_url[url] = self.by_url.get(url, 0) + len(body)
        self.total += len(body)
        self.gzipped += len(gzip.compress(body, compresslevel=6))

    def line(self) -> str:
        heaviest = sorted(self.by_url.items(), key=lambda item: -item[1])[:3]
        parts = ", ".join(f"{urlparse(url).path} {size / KB:.0f}" for url, size in heaviest)
        return (
            f"{self.path:<36} {self.total / KB:7.1f} KB (gzip {self.gzipped / KB:5.1f} KB; "
            f"budget {self.budget // KB} KB; largest KB: {parts})"
        )


def test_page_weight_within_budget(visits, site_paths, scheme):
    """Bytes a page transfers (gzip, as served by static hosts) beyond the theme's shared assets
    (site_visits.SHARED_ASSETS): at most 300 KB for an article, 250 KB for the notebook page. The
    heaviest pages (and every page over its budget, marked OVER) are printed (pytest -s) and make
    up the failure message."""
    weights = sorted((Weight.of(visits[path]) for path in site_paths), key=lambda w: -w.total)
    over = [weight for weight in weights if weight.gzipped > weight.budget]
    shown = weights[:10] + [weight for weight in over if weight not in weights[:10]]
    table = "\n".join(("OVER " if weight in over else "     ") + weight.line() for weight in shown)
    print(f"\nHeaviest pages ({scheme} scheme), beyond the theme's shared assets:\n{table}")
    assert len(over) == 0, f"{len(over)} page(s) over budget ({scheme} scheme):\n{table}"
