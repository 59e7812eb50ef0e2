"""Every page of the built site, opened in headless Chromium in both colour schemes."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlparse

import pytest

pytestmark = pytest.mark.browser

# Text that would mean TeX reached the reader unrendered (outside code, which may show TeX).
RAW_TEX_PROBE = """() => {
  const walker = document.createTreeWalker(document.querySelector('article') || document.body,
    NodeFilter.SHOW_TEXT, { acceptNode: (node) =>
      node.parentElement.closest('pre, code, script, style, .katex, textarea')
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT });
  const found = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent;
    if (/\\\\\\(|\\\\\\[|\\$\\$|\\\\frac|\\\\omega|\\\\sum/.test(text)) found.push(text.trim().slice(0, 80));
  }
  return found;
}"""

IMAGE_PROBE = """() => Array.from(document.images).map((img) => ({
  src: img.getAttribute('src'), alt: img.getAttribute('alt'),
  width: img.getAttribute('width'), height: img.getAttribute('height'),
  loaded: img.complete && img.naturalWidth > 0,
}))"""


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


def test_every_page_loads_offline_with_sized_described_images_and_rendered_math(context, base_url, site_paths):
    problems: list[str] = []
    for path in site_paths:
        page, response, visit = open_page(context, base_url + path)
        where = f"{path}:"
        if response is None or response.status != 200:
            problems.append(f"{where} answered {response and response.status}")
        for url, status in visit.responses:
            host = urlparse(url).hostname
            if host != "127.0.0.1" and not url.startswith("data:"):
                problems.append(f"{where} request left the machine: {url}")
            elif status != 200 and not url.startswith("data:"):
                problems.append(f"{where} {url} answered {status}")
        problems += [f"{where} request failed: {failure}" for failure in visit.failures]
        problems += [f"{where} console or page error: {error}" for error in visit.errors]
        for image in page.evaluate(IMAGE_PROBE):
            if not image["loaded"]:
                problems.append(f"{where} image did not load: {image['src']}")
            if not (image["alt"] or "").strip():
                problems.append(f"{where} image without alt text: {image['src']}")
            if not (image["width"] and image["height"]):
                problems.append(f"{where} image without width and height: {image['src']}")
        if page.locator(".katex-error").count():
            problems.append(f"{where} KaTeX error element")
        raw = page.evaluate(RAW_TEX_PROBE)
        if raw:
            problems.append(f"{where} unrendered TeX: {raw[:3]}")
        if not page.title().strip():
            problems.append(f"{where} empty <title>")
        page.close()
    assert not problems, "\n".join(problems)


def test_pages_use_the_requested_colour_scheme(context, base_url, scheme):
    page, _, _ = open_page(context, base_url + "/")
    expected = "slate" if scheme == "dark" else "default"
    assert page.get_attribute("body", "data-md-color-scheme") == expected


def test_the_toggle_switches_scheme(browser, base_url):
    context = browser.new_context(color_scheme="light", service_workers="block")
    page = context.new_page()
    page.goto(base_url + "/")
    assert page.get_attribute("body", "data-md-color-scheme") == "default"
    page.locator("label[for='__palette_1']").click()
    page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'slate'")
    # Figures follow the toggle, not only the system setting: their text takes the page's colour.
    colours = page.locator(".posenc-figure svg text").first.evaluate(
        "text => [getComputedStyle(text).fill, getComputedStyle(text.closest('.md-typeset')).color]")
    assert colours[0] == colours[1] != "rgb(0, 0, 0)"
    context.close()


def test_math_is_rendered_at_build_time_without_math_javascript(context, base_url):
    page, _, visit = open_page(context, base_url + "/derivations/")
    assert page.locator(".katex-display").count() >= 2
    assert page.locator("mjx-container").count() == 0
    scripts = [url for url, _ in visit.responses if url.endswith(".js")]
    assert not [url for url in scripts if "katex" in url or "mathjax" in url.lower()]


def test_instant_navigation_keeps_math_and_figures(context, base_url):
    page, _, visit = open_page(context, base_url + "/derivations/")
    page.evaluate("window.__sameDocument = true")
    page.locator("nav.md-nav--primary").get_by_role("link", name="Home", exact=True).first.click()
    page.wait_for_url(base_url + "/")
    page.wait_for_load_state("networkidle")
    assert page.evaluate("window.__sameDocument") is True, "the click reloaded the page instead of swapping it"
    assert page.locator(".katex").count() > 0
    assert page.locator(".posenc-figure svg text").count() > 0
    assert not visit.errors


def test_search_works_offline(context, base_url):
    page, _, visit = open_page(context, base_url + "/")
    search = page.locator("input.md-search__input")
    search.click()
    # Typed key by key: Material's search reacts to keyboard events, as for a reader.
    search.press_sequentially("kernel", delay=30)
    page.wait_for_selector(".md-search-result__item", timeout=10_000)
    assert page.locator(".md-search-result__item").count() > 0
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
