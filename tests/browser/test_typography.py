"""Reading at first sight, on a phone (390x844) and a laptop (1280x800), in both colour schemes:
headings that outrank the text and its bold lead-ins, captions that read as notes to their
figure, tables that fit their column or say that they scroll, and a home page whose first
screen holds the ways in and the signature figure.

The hierarchy is read on every page by conftest's shared visit (``visits``: a desktop window,
then a phone's width); the tables and the home page are loaded here at the two sizes readers
were watched at.
"""

from __future__ import annotations

import re

import pytest
from support.browser import new_context
from support.site_visits import NEXT_FRAME, draw_skipped_blocks, read_on_every_page

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
MUTED_CONTRAST = 4.5  # WCAG AA for text under 18 pt

# Colours as the reader sees them: a colour with transparency is laid over the backgrounds
# under it (the nearest ancestors' colours, down to the first opaque one; the canvas is white).
CONTRAST = """
const rgba = (text) => {
  const parts = text.match(/[\\d.]+/g).map(Number);
  return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
};
const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat(1);
const backdrop = (el) => {
  const layers = [];
  for (let node = el; node; node = node.parentElement) {
    const colour = rgba(getComputedStyle(node).backgroundColor);
    if (colour[3] > 0) layers.push(colour);
    if (colour[3] >= 1) break;
  }
  return layers.reverse().reduce((under, top) => over(top, under), [255, 255, 255, 1]);
};
const luminance = (c) => {
  const [r, g, b] = c.slice(0, 3).map((v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const contrast = (el) => {
  const back = backdrop(el);
  const text = over(rgba(getComputedStyle(el).color), back);
  const [light, dark] = [luminance(text), luminance(back)].sort((a, b) => b - a);
  return (light + 0.05) / (dark + 0.05);
};
"""

# The article's body text (its paragraphs), its bold lead-ins (bold text that opens a
# paragraph), each heading, and each caption, with the computed weight, size and contrast.
HIERARCHY = f"""() => {{
  {CONTRAST}
  const article = document.querySelector('article.md-content__inner');
  if (!article) return null;
  const font = (el) => {{
    const style = getComputedStyle(el);
    return {{weight: Number(style.fontWeight), size: parseFloat(style.fontSize)}};
  }};
  const text = (el) => el.textContent.replace(/\\s+/g, ' ').trim().slice(0, 50);
  const paragraph = article.querySelector(':scope > p');
  const leadIn = Array.from(article.querySelectorAll(':scope > p > strong:first-child'))
    .find((strong) => !strong.previousSibling || !strong.previousSibling.textContent.trim());
  return {{
    body: paragraph && font(paragraph),
    leadIn: leadIn ? {{...font(leadIn), text: text(leadIn)}} : null,
    headings: Array.from(article.querySelectorAll('h1, h2, h3, h4, h5, h6'))
      .filter((h) => h.getClientRects().length)
      .map((h) => ({{...font(h), tag: h.tagName.toLowerCase(), text: text(h)}})),
    captions: Array.from(article.querySelectorAll('figcaption'))
      .filter((c) => c.getClientRects().length)
      .map((c) => ({{...font(c), contrast: contrast(c), text: text(c)}})),
  }};
}}"""
READ_HIERARCHY = read_on_every_page("hierarchy", HIERARCHY, phone=True)

# Each table of the article: does it fit the column, and if not, does it show the scroll cue
# (posenc.css: gradients fixed to the scrolling box's edges under covers that travel with the
# content, as for wide equations)?
TABLES = """async () => {
  await document.fonts.ready;
  const article = document.querySelector('article.md-content__inner');
  const column = article.getBoundingClientRect();
  const scroller = (el) => {
    for (let node = el; node && node !== article; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (/auto|scroll/.test(style.overflowX) && node.scrollWidth > node.clientWidth + 1) return node;
    }
    return null;
  };
  const hasCue = (el) => {
    const style = getComputedStyle(el);
    const attachments = style.backgroundAttachment.split(',').map((a) => a.trim());
    return /gradient/.test(style.backgroundImage) && attachments.includes('local') && attachments.includes('scroll');
  };
  return Array.from(article.querySelectorAll('table')).filter((t) => t.getClientRects().length).map((table) => {
    const box = table.getBoundingClientRect();
    const scrolls = scroller(table);
    return {
      head: Array.from(table.querySelectorAll('th')).map((th) => th.textContent.trim()).join(' | ').slice(0, 80),
      fits: !scrolls && box.right <= column.right + 1 && box.left >= column.left - 1,
      cued: scrolls !== null && hasCue(scrolls),
    };
  });
}"""

HOME_FIRST_SCREEN = """() => {
  const article = document.querySelector('article.md-content__inner');
  const inView = (el) => {
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.top >= 0 && box.left >= 0
      && box.bottom <= window.innerHeight && box.right <= window.innerWidth;
  };
  const firstLink = (page) => Array.from(article.querySelectorAll('a[href]'))
    .find((a) => new URL(a.href).pathname.replace(/index\\.html$/, '').endsWith(page));
  // The first figure's layout on show: a figure with a narrow layout carries both SVGs.
  const figure = Array.from(article.querySelector('.posenc-figure').querySelectorAll('svg'))
    .find((svg) => svg.getBoundingClientRect().width > 0);
  const pages = ['/guide/', '/deep-dive/', '/explainer/', '/conventions/', '/api/', '/derivations/'];
  return {
    figure: figure ? inView(figure) : null,
    links: Object.fromEntries(pages.map((page) => {
      const link = firstLink(page);
      return [page, link ? inView(link) : null];
    })),
  };
}"""

# A table in an article, other than a code listing's line-number table.
TABLE_TAG = re.compile(r"<table(?![^>]*highlighttable)[\s>]")


def _pages_with_tables(site_dir) -> list[str]:
    pages = []
    for file in sorted(site_dir.rglob("index.html")):
        html = file.read_text(encoding="utf-8")
        article = html.partition('<article class="md-content__inner')[2]
        if TABLE_TAG.search(article):
            relative = file.parent.relative_to(site_dir).as_posix()
            pages.append("/" if relative == "." else f"/{relative}/")
    return pages


@pytest.mark.browser
@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_headings_outrank_the_text_and_captions_are_muted_notes(site_paths, scheme, viewport, visits):
    """Every heading is heavier than the body text and outranks a bold lead-in (heavier or
    larger); every caption is smaller than the body text and its muted colour still reads at
    4.5:1 or more on the page's background."""
    problems: list[str] = []
    captions = 0
    for path in site_paths:
        reads = visits[path].reads if viewport == "desktop" else visits[path].phone_reads
        found = reads[READ_HIERARCHY]
        if not found or not found["body"]:
            continue
        body, lead_in = found["body"], found["leadIn"]
        where = f"{scheme} {viewport} {path}"
        for heading in found["headings"]:
            if heading["weight"] <= body["weight"]:
                problems.append(
                    f"{where}: {heading['tag']} {heading['text']!r} weighs {heading['weight']}, body {body['weight']}"
                )
            if lead_in and heading["weight"] <= lead_in["weight"] and heading["size"] <= lead_in["size"]:
                problems.append(
                    f"{where}: {heading['tag']} {heading['text']!r} ({heading['weight']}, {heading['size']}px) does "
                    f"not outrank the lead-in {lead_in['text']!r} ({lead_in['weight']}, {lead_in['size']}px)"
                )
        for caption in found["captions"]:
            captions += 1
            if caption["size"] >= body["size"]:
                problems.append(
                    f"{where}: caption {caption['text']!r} at {caption['size']}px, body at {body['size']}px"
                )
            if caption["contrast"] < MUTED_CONTRAST:
                problems.append(f"{where}: caption {caption['text']!r} at contrast {caption['contrast']:.2f}:1")
    assert captions, "no page has a caption to check"
    assert not problems, "\n".join(problems)


@pytest.mark.browser
def test_every_table_fits_or_shows_that_it_scrolls(browser, base_url, site_dir, scheme):
    """At 1280x800 and at 390x844 every table of an article either fits its column or scrolls
    with the cue that it goes on; a table that fits must not stick out of the column either."""
    pages = _pages_with_tables(site_dir)
    assert "/relative/" in pages, pages
    context = new_context(browser, scheme, viewport=LAPTOP)
    page = context.new_page()
    problems: list[str] = []
    tables = 0
    try:
        for path in pages:
            page.set_viewport_size(LAPTOP)
            page.goto(base_url + path, wait_until="load")
            for size, viewport in (("1280", LAPTOP), ("390", PHONE)):
                page.set_viewport_size(viewport)
                page.evaluate(NEXT_FRAME)
                draw_skipped_blocks(page)
                for table in page.evaluate(TABLES):
                    tables += 1
                    if not table["fits"] and not table["cued"]:
                        problems.append(f"{scheme} {size} {path}: table cut without a cue: {table['head']}")
    finally:
        context.close()
    assert tables, "no table was measured"
    assert not problems, "\n".join(problems)


@pytest.mark.browser
@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_the_home_page_opens_on_its_ways_in_and_figure(browser, base_url, scheme, size):
    """The first screen of the home page, with nothing scrolled, holds the signature figure and
    the first link to each way in: the learning path (from scratch, the deep dive, the explainer)
    and the implementer's pages (conventions, API, derivations)."""
    context = new_context(browser, scheme, viewport=LAPTOP if size == "laptop" else PHONE)
    try:
        page = context.new_page()
        page.goto(base_url + "/", wait_until="load")
        page.evaluate("() => document.fonts.ready")
        found = page.evaluate(HOME_FIRST_SCREEN)
    finally:
        context.close()
    assert found["figure"] is True, f"{scheme} {size}: the figure is not within the first screen"
    outside = [target for target, shown in found["links"].items() if shown is not True]
    assert not outside, f"{scheme} {size}: ways in missing or below the first screen: {outside}"
