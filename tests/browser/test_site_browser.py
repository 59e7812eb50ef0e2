"""The built site in headless Chromium, in both colour schemes: every page loads offline with its
images and math, and the scheme toggle, instant navigation, search and the 404 page work."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlparse

import posenc.site.derivations  # noqa: F401 - registers every derivation in REGISTRY
import pytest
from support.browser import new_context
from posenc.site.registry import REGISTRY


pytestmark = pytest.mark.browser


@dataclass
class Visit:
    """What one page load did: every response, failure and error message."""

    responses: list[tuple[str, int]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def open_page(context, url: str):
    page = context.new_page()
    visit = Visit()
    page.on("response", lambda response: visit.responses.append((response.url, response.status)))
    page.on("requestfailed", lambda request: visit.failures.append(f"{request.url} ({request.failure})"))
    page.on("console", lambda message: message.type == "error" and visit.errors.append(message.text))
    page.on("pageerror", lambda error: visit.errors.append(str(error)))
    response = page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    return page, response, visit


# The page-wide checks read conftest's ``visits``: one load of every page in this scheme.


def test_every_page_loads_offline_without_errors(visits, site_paths):
    """Each page answers 200 and loads everything from the site itself, each request answered
    200, with no failed request, console error or uncaught exception, and has a <title>."""
    problems: list[str] = []
    for path in site_paths:
        visit = visits[path]
        if visit.status != 200:
            problems.append(f"{path}: answered {visit.status}")
        for transfer in visit.transfers:
            if transfer.url.startswith("data:"):
                continue
            if urlparse(transfer.url).hostname != "127.0.0.1":
                problems.append(f"{path}: request left the machine: {transfer.url}")
            elif transfer.status != 200:
                problems.append(f"{path}: {transfer.url} answered {transfer.status}")
        problems += [f"{path}: request failed: {failure}" for failure in visit.failures]
        problems += [f"{path}: console or page error: {error}" for error in visit.errors]
        if not visit.title.strip():
            problems.append(f"{path}: empty <title>")
    assert not problems, "\n".join(problems)


def test_every_image_is_loaded_sized_and_described(visits, site_paths):
    problems: list[str] = []
    for path in site_paths:
        for image in visits[path].images:
            if not image["loaded"]:
                problems.append(f"{path}: image did not load: {image['src']}")
            if not (image["alt"] or "").strip():
                problems.append(f"{path}: image without alt text: {image['src']}")
            if not (image["width"] and image["height"]):
                problems.append(f"{path}: image without width and height: {image['src']}")
    assert not problems, "\n".join(problems)


def test_math_is_rendered_on_every_page(visits, site_paths):
    """No KaTeX error element, and no TeX left as text outside code."""
    problems: list[str] = []
    for path in site_paths:
        visit = visits[path]
        if visit.katex_errors:
            problems.append(f"{path}: {visit.katex_errors} KaTeX error element(s)")
        if visit.raw_tex:
            problems.append(f"{path}: unrendered TeX: {visit.raw_tex[:3]}")
    assert not problems, "\n".join(problems)


def test_pages_use_the_requested_colour_scheme(visits, site_paths, scheme):
    expected = "slate" if scheme == "dark" else "default"
    wrong = {path: visits[path].color_scheme for path in site_paths if visits[path].color_scheme != expected}
    assert not wrong, f"pages not in the {expected} palette: {wrong}"


def test_the_toggle_switches_scheme(browser, base_url):
    context = browser.new_context(color_scheme="light", service_workers="block")
    page = context.new_page()
    page.goto(base_url + "/")
    assert page.get_attribute("body", "data-md-color-scheme") == "default"
    page.locator("label[for='__palette_1']").click()
    page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'slate'")
    # Figures follow the toggle, not only the system setting: their text takes the page's colour.
    colours = page.locator(".posenc-figure svg text").first.evaluate(
        "text => [getComputedStyle(text).fill, getComputedStyle(text.closest('.md-typeset')).color]"
    )
    assert colours[0] == colours[1] != "rgb(0, 0, 0)"
    context.close()


def test_math_is_rendered_at_build_time_without_math_javascript(context, base_url):
    page, _, visit = open_page(context, base_url + "/derivations/kernel/")
    assert page.locator(".katex-display").count() == 1 and page.locator(".katex").count() > 1
    assert page.locator("mjx-container").count() == 0
    scripts = [url for url, _ in visit.responses if url.endswith(".js")]
    assert not [url for url in scripts if "katex" in url or "mathjax" in url.lower()]


def test_instant_navigation_keeps_math_and_figures(context, base_url):
    page, _, visit = open_page(context, base_url + "/derivations/")
    page.evaluate("window.__sameDocument = true")
    # Material pushes the new address as soon as the link is clicked and swaps the content in
    # only once it has fetched the page; the load state stays that of the first load. So
    # neither says the home page is shown: wait for the derivations' content to be replaced.
    derivations = page.locator("[data-md-component=container]").element_handle()
    page.locator("nav.md-nav--primary").get_by_role("link", name="Home", exact=True).first.click()
    page.wait_for_url(base_url + "/")
    page.wait_for_function("container => !container.isConnected", arg=derivations)
    assert page.evaluate("window.__sameDocument") is True, "the click reloaded the page instead of swapping it"
    assert page.locator("article h1").inner_text().startswith("Positional encoding, proved and drawn from code")
    assert page.locator(".katex").count() > 0
    assert page.locator(".posenc-figure svg text").count() > 0
    assert not visit.errors


def _index_requests(visit: Visit) -> int:
    return sum(urlparse(url).path == "/search/search_index.json" for url, _ in visit.responses)


def test_search_works_offline_and_loads_its_index_only_when_used(context, base_url):
    """The search index is not loaded with a page (overrides/main.html holds it) but as soon as
    the reader goes to search, once; a page opened from a search result (?h=) loads it at once to
    mark the terms, and one opened with a query (?q=) to show its results."""
    page, _, visit = open_page(context, base_url + "/")
    assert _index_requests(visit) == 0, "the search index loaded before the reader searched"
    search = page.locator("input.md-search__input")
    search.click()
    # Typed key by key: Material's search reacts to keyboard events, as for a reader.
    search.press_sequentially("kernel", delay=30)
    page.wait_for_selector(".md-search-result__item", timeout=10_000)
    assert page.locator(".md-search-result__item").count() > 0
    assert _index_requests(visit) == 1
    assert not visit.errors

    # The keyboard shortcut opens search too, on a page of its own.
    page, _, visit = open_page(context, base_url + "/guide/")
    page.keyboard.press("s")
    page.keyboard.type("rotation", delay=30)
    page.wait_for_selector(".md-search-result__item", timeout=10_000)
    assert _index_requests(visit) == 1

    page, _, visit = open_page(context, base_url + "/guide/?h=kernel")
    assert _index_requests(visit) == 1
    page.wait_for_selector("article mark", timeout=10_000)
    assert not visit.errors

    # A link with a query opens search with it.
    page, _, visit = open_page(context, base_url + "/?q=rotation")
    page.wait_for_selector(".md-search-result__item", timeout=10_000)
    assert _index_requests(visit) == 1
    assert not visit.errors


def test_unknown_address_gets_a_helpful_404(context, base_url):
    page, response, visit = open_page(context, base_url + "/no/such/page/")
    assert response.status == 404
    assert "Page not found" in page.inner_text("article")
    links = page.locator("article a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    # Material's instant navigation may rewrite hrefs to absolute URLs; compare paths.
    assert "/derivations/" in {urlparse(link).path for link in links}
    assert "/" in {urlparse(link).path for link in links}
    assert page.locator("input.md-search__input").count() == 1
    loaded = [url for url, status in visit.responses if status == 200 and url.endswith(".css")]
    assert loaded, "the 404 page loaded no stylesheet"


def test_one_click_copies_a_derivations_bibtex(browser, base_url):
    """A derivation's page has one BibTeX block, with one copy button once the reader has come
    to it (Material sets up a code block as it comes into view), and clicking it puts the record,
    without indentation, on the clipboard."""
    context = new_context(browser, "light")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
    try:
        page, _, visit = open_page(context, base_url + "/derivations/rope-norm/")
        block = page.locator("h2#cite ~ .highlight")
        assert block.count() == 1
        block.scroll_into_view_if_needed()
        button = block.locator("button[data-md-type=copy]")
        button.wait_for(timeout=5000)
        assert button.count() == 1
        shown = block.locator("code").inner_text()
        assert shown.startswith("@misc{posenc-rope-norm,\n  title") and "/derivations/rope-norm/}" in shown
        button.click()
        assert page.evaluate("navigator.clipboard.readText()") == shown.rstrip("\n")
        assert not visit.errors
    finally:
        context.close()


def test_an_index_anchor_marks_its_derivation_and_leads_to_its_page(context, base_url):
    """derivations/#ID, the index's anchor for an ID, lands on that ID's item, marked apart from the
    others, whose link opens the derivation's own page."""
    page, _, visit = open_page(context, base_url + "/derivations/#rope-relative")
    backgrounds = page.locator(".posenc-derivation-index li").evaluate_all(
        "items => items.map(item => [item.querySelector(':scope > a').id, getComputedStyle(item).backgroundColor])"
    )
    marked = [identifier for identifier, colour in backgrounds if colour != "rgba(0, 0, 0, 0)"]
    assert marked == ["rope-relative"], marked
    page.locator("a#rope-relative").click()
    page.wait_for_url(base_url + "/derivations/rope-relative/")
    # Instant navigation changes the address before it swaps the content in: wait for the heading.
    page.locator("article h1", has_text=REGISTRY["rope-relative"].title).wait_for(timeout=10_000)
    assert not visit.errors


# Every KaTeX face the page's document loaded, once all of it is laid out (skipped blocks drawn,
# folded proofs opened), and every face its head preloads; named as the font files are.
MATH_FACES = """async () => {
  const style = document.createElement('style');
  style.textContent = '* { content-visibility: visible !important; }';
  document.head.append(style);
  document.querySelectorAll('details').forEach((details) => { details.open = true; });
  document.body.getBoundingClientRect();
  await document.fonts.ready;
  const file = (face) => {
    const family = face.family.replace(/^["']?KaTeX_|["']$/g, '');
    const bold = ['700', 'bold'].includes(face.weight), italic = face.style === 'italic';
    if (family === 'Main') {
      return 'Main-' + (bold && italic ? 'BoldItalic' : bold ? 'Bold' : italic ? 'Italic' : 'Regular');
    }
    if (family === 'Math') return 'Math-' + (bold ? 'BoldItalic' : 'Italic');
    return family + '-' + (bold ? 'Bold' : 'Regular');
  };
  const loaded = [...document.fonts].filter((face) => face.status === 'loaded' && face.family.includes('KaTeX_'));
  const preloaded = [...document.querySelectorAll('link[rel=preload][as=font]')].map(
    (link) => link.href.match(/KaTeX_([\\w-]+)\\.woff2$/)[1]);
  return { loaded: [...new Set(loaded.map(file))].sort(), preloaded: preloaded.sort() };
}"""


@pytest.mark.parametrize(
    "path",
    # Between them these pages use every face the site's math uses, in a notebook too, and none.
    ["/", "/guide/", "/relative/", "/conventions/", "/notebooks/explicit-position-ids/", "/api/"],
)
def test_a_page_preloads_exactly_the_math_faces_it_draws_in(browser, base_url, path):
    """The build reads the faces from KaTeX's classes (hooks/site_build/katex.py); Chromium says which
    faces the laid-out page needs. One missing from the preloads would show its math in the
    fallback font on a first visit (font-display: optional); one too many is a wasted download."""
    context = new_context(browser, "light")
    try:
        page = context.new_page()
        page.goto(base_url + path, wait_until="load")
        faces = page.evaluate(MATH_FACES)
    finally:
        context.close()
    assert faces["loaded"] == faces["preloaded"], path
