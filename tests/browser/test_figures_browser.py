"""The figures as readers see them, in headless Chromium: legible on a desktop page, native to
both colour schemes, and openable at full size on a phone. (tests/browser/test_figure_text.py
measures every figure's text on a phone and on a desktop, with the page's scripts.)"""

from __future__ import annotations

import pytest
from support.site_visits import DESKTOP, DRAW_SKIPPED, PHONE, read_on_every_page

pytestmark = pytest.mark.browser


# For every figure on the page: how many of its SVGs are displayed (one: a figure with a narrow
# layout for phones carries both, and the page's CSS shows one), and for the displayed one the
# smallest text in CSS pixels as drawn on screen (font size times the SVG's scale) and whether
# each text is in the page's typeface.
LEGIBILITY_PROBE = """() => {
  const body = getComputedStyle(document.body).fontFamily;
  return Array.from(document.querySelectorAll('.posenc-figure')).map((figure) => {
    const displayed = Array.from(figure.querySelectorAll(':scope > svg')).filter((svg) => svg.getClientRects().length);
    if (displayed.length !== 1) return { figure: figure.id, displayed: displayed.length };
    const svg = displayed[0];
    const texts = Array.from(svg.querySelectorAll('text'));
    const pixels = texts.flatMap((text) => [text, ...text.querySelectorAll('tspan')]).map((node) => {
      const matrix = node.getScreenCTM();
      return parseFloat(getComputedStyle(node).fontSize) * Math.hypot(matrix.a, matrix.b);
    });
    return {
      figure: figure.id, displayed: 1, texts: texts.length, smallest: Math.min(...pixels),
      otherFonts: texts.filter((text) => getComputedStyle(text).fontFamily !== body).length,
    };
  });
}"""

# In the current scheme: texts drawn in a colour other than the page's text colour (those
# without a colour of their own, outside literal artists), and figure backgrounds that are
# white (the <svg> or <figure> itself, or a shape filling most of the figure), in every SVG of a
# figure (both layouts of one that has two); and how many figures the page has, and how many of
# them are inline SVG.
SCHEME_PROBE = """() => {
  const typeset = document.querySelector('.md-typeset');  // every page of the theme has one
  const foreground = typeset ? getComputedStyle(typeset).color : null;
  const all = Array.from(document.querySelectorAll('.posenc-figure'));
  const figures = all.length, inline = all.filter((figure) => figure.querySelector(':scope > svg')).length;
  return { figures, inline, svgs: Array.from(document.querySelectorAll('.posenc-figure svg')).map((svg) => {
    const box = svg.getBoundingClientRect();
    const plain = Array.from(svg.querySelectorAll('text'))
      .filter((text) => !text.closest('.posenc-literal') && !/fill:/.test(text.getAttribute('style') || ''));
    const white = (colour) => colour === 'rgb(255, 255, 255)';
    const backgrounds = Array.from(svg.querySelectorAll('path, rect')).filter((shape) => {
      const own = shape.getBoundingClientRect();
      return own.width * own.height > 0.8 * box.width * box.height && white(getComputedStyle(shape).fill);
    });
    return {
      figure: svg.closest('figure').id, foreground, plain: plain.length,
      offColour: plain.filter((text) => getComputedStyle(text).fill !== foreground).map((t) => t.textContent),
      white: white(getComputedStyle(svg).backgroundColor)
        || white(getComputedStyle(svg.closest('figure')).backgroundColor) || backgrounds.length > 0,
    };
  }) };
}"""
# Read on conftest's shared visit of every page in each scheme.
SCHEME_READ = read_on_every_page("figure-colours", SCHEME_PROBE)


@pytest.fixture(scope="module")
def figure_pages(site_paths, site_dir) -> list[str]:
    """The articles that show figures (each figure's own page shows it the same way)."""
    pages = [
        path
        for path in site_paths
        if not path.startswith("/figures/")
        and 'class="posenc-figure"' in (site_dir / path.lstrip("/") / "index.html").read_text()
    ]
    assert len(pages) >= 5
    return pages


def open_page(browser, base_url: str, path: str, scheme: str, viewport: dict, **options):
    context = browser.new_context(color_scheme=scheme, service_workers="block", viewport=viewport, **options)
    page = context.new_page()
    page.goto(base_url + path, wait_until="load")
    return context, page


def test_figure_text_is_page_text_of_at_least_11_pixels_on_a_desktop_page(browser, base_url, figure_pages):
    # Without JavaScript every figure is laid out, the explainer's stand-ins for its panels too
    # (with it they are not displayed at all); figures need no script to be drawn.
    problems = []
    # One tab goes from page to page (a new tab would start a renderer for each).
    context, page = open_page(browser, base_url, "/", "light", DESKTOP, java_script_enabled=False)
    for path in figure_pages:
        page.goto(base_url + path, wait_until="load")
        page.evaluate(DRAW_SKIPPED)  # figures far below are drawn at their size once scrolled to
        for figure in page.evaluate(LEGIBILITY_PROBE):
            where = f"{path}#{figure['figure']}"
            if figure["displayed"] != 1:
                problems.append(f"{where}: {figure['displayed']} inline SVGs displayed, not one")
            elif not figure["texts"]:
                problems.append(f"{where}: no <text> elements")
            elif figure["smallest"] < 11 - 1e-6:
                problems.append(f"{where}: text of {figure['smallest']:.2f} px")
            if figure.get("otherFonts"):
                problems.append(f"{where}: {figure['otherFonts']} texts not in the page's typeface")
    context.close()
    assert not problems, "\n".join(problems)


def test_figure_text_can_be_found_with_the_browsers_page_search(browser, base_url):
    context, page = open_page(browser, base_url, "/guide/", "light", DESKTOP)
    label = page.locator("#fig-addition-diagram svg text", has_text="positional encoding").first
    assert label.count() == 1
    label.scroll_into_view_if_needed()
    # window.find is the script face of Ctrl+F: it searches rendered text, figures included.
    assert page.evaluate(
        "() => window.find('hidden channel i') && "
        "window.getSelection().anchorNode.parentElement.closest('svg') !== null"
    )
    context.close()


def test_figures_take_the_page_colours_and_no_white_background(visits, figure_pages, scheme):
    problems = []
    for path in figure_pages:
        read = visits[path].reads[SCHEME_READ]
        figures = read["svgs"]
        if read["inline"] != read["figures"]:
            problems.append(f"{scheme} {path}: figures that are not inline SVGs")
        for figure in figures:
            where = f"{scheme} {path}#{figure['figure']}"
            if not figure["plain"]:
                problems.append(f"{where}: no text in the page's colour")
            if figure["offColour"]:
                problems.append(
                    f"{where}: text not in the page colour {figure['foreground']}: {figure['offColour'][:3]}"
                )
            if figure["white"]:
                problems.append(f"{where}: a white background")
            if scheme == "dark" and figure["foreground"].startswith("rgba(0, 0, 0"):
                problems.append(f"{where}: the page's text colour is black in the dark scheme")
    assert not problems, "\n".join(problems)


# Every id on the page that is given twice, and every reference inside the dialog (a clip path,
# a marker) that does not find its element inside the dialog.
IDS_AND_REFERENCES = """() => {
  const ids = Array.from(document.querySelectorAll('[id]'), (element) => element.id);
  const dialog = document.querySelector('dialog');
  const references = Array.from(dialog.querySelectorAll('*')).flatMap((element) => [
    (element.getAttributeNS('http://www.w3.org/1999/xlink', 'href') || '').replace(/^[^#].*/, '').slice(1),
    ...Array.from(element.attributes, (attribute) => (attribute.value.match(/url\\(#([^)]+)\\)/) || [])[1] || ''),
  ]).filter(Boolean);
  return { twice: ids.filter((id, index) => ids.indexOf(id) !== index),
           lost: references.filter((id) => !dialog.querySelector(`[id="${id}"]`)), references: references.length };
}"""


def test_a_tapped_figure_opens_at_full_size_on_a_phone(browser, base_url):
    context, page = open_page(browser, base_url, "/guide/", "dark", PHONE, has_touch=True, is_mobile=True)
    figure = page.locator(".posenc-figure").first
    wide, narrow = figure.locator("svg.posenc-figure__wide"), figure.locator("svg.posenc-figure__narrow")
    assert narrow.is_visible() and not wide.is_visible(), "a phone shows the layout drawn for it"
    drawn = int(wide.get_attribute("width"))
    shown = narrow.bounding_box()["width"]
    assert shown < drawn, "the phone shows less than the wide layout (else there is nothing to enlarge)"
    assert shown >= PHONE["width"] - 1, "on a phone the figure uses the whole screen width"
    narrow.tap()
    dialog = page.locator("dialog.posenc-figure-dialog[open]")
    dialog.wait_for()
    enlarged = dialog.locator("svg").bounding_box()["width"]
    assert enlarged >= drawn, "the view shows the wide layout at its drawn width or wider"
    assert dialog.evaluate("d => d.scrollWidth > d.clientWidth"), "the view scrolls sideways to the figure's edge"
    assert dialog.locator("svg text").count() == wide.locator("text").count()
    found = page.evaluate(IDS_AND_REFERENCES)
    assert found["twice"] == [], "no id twice on the page"
    assert found["references"] and found["lost"] == [], "the copy draws with clip paths and markers of its own"
    dialog.get_by_role("button", name="Close").tap()
    # The dialog leaves the page on its "close" event, which the browser queues as a task.
    page.locator("dialog.posenc-figure-dialog").wait_for(state="detached", timeout=5_000)
    context.close()


def test_the_full_size_link_works_from_the_keyboard_after_instant_navigation(browser, base_url):
    context, page = open_page(browser, base_url, "/", "light", PHONE)
    page.wait_for_load_state("networkidle")
    page.evaluate("window.__sameDocument = true")
    page.evaluate("() => document.querySelector('a[href$=\"guide/\"]').click()")  # Material swaps the page
    page.wait_for_url(base_url + "/guide/")
    assert page.evaluate("window.__sameDocument") is True, "the click reloaded the page instead of swapping it"
    # The new page's figure, swapped in: on a phone, its narrow layout.
    page.locator("#fig-addition-diagram svg.posenc-figure__narrow text").first.wait_for()
    link = page.locator("#fig-addition-diagram .posenc-figure__enlarge")
    link.focus()
    page.keyboard.press("Enter")
    dialog = page.locator("dialog.posenc-figure-dialog[open]")
    dialog.wait_for()
    assert page.evaluate("() => document.activeElement.closest('dialog') !== null"), "focus moves into the view"
    page.keyboard.press("Escape")
    # The dialog leaves the page on its "close" event, which the browser queues as a task.
    page.locator("dialog.posenc-figure-dialog").wait_for(state="detached", timeout=5_000)
    assert page.evaluate("() => document.activeElement.classList.contains('posenc-figure__enlarge')"), "focus returns"
    context.close()
