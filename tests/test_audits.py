"""Site-wide audits of the built site: accessibility, layout stability, page weight, links,
offline assets, reproducible builds and the 404 page.

The browser checks (marked ``browser``) open every page of the sitemap in both colour schemes,
as ``test_site_browser.py`` does; the others read the built files and need no browser. Each
failure names the page (and the rule, element, link or file) so it can be fixed where it lives.
Lighthouse's figures are not tests (they vary by machine): ``make audit`` prints them.
"""

from __future__ import annotations

import gzip
import html.parser
import os
import pathlib
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from urllib.parse import unquote, urljoin, urlparse

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
MISSING_PAGE = "/no/such/page/"  # served with the site's 404 page, audited like the others

# --- page weight ---------------------------------------------------------------------------
KB = 1000
ARTICLE_BUDGET = 300 * KB
NOTEBOOK_BUDGET = 250 * KB
# The theme's shared assets: loaded once and cached across pages, so not charged to a page.
# Everything else a page loads counts, site-wide files of this site included (posenc.css,
# explainer.js and .css, mkdocstrings' CSS).
SHARED_ASSETS = re.compile(
    r"^/assets/(?:javascripts/bundle\.[^/]*\.js"  # Material's script
    r"|stylesheets/(?:main|palette)\.[^/]*\.css"  # Material's stylesheets
    r"|katex/"  # KaTeX's stylesheet and fonts
    r"|javascripts/workers/search\.[^/]*\.js|javascripts/lunr/"  # the search worker
    r"|images/favicon\.png)"  # Material's default icon
    r"|^/search/search_index\.json$"  # the search index
    r"|^/sitemap\.xml$"  # fetched once by Material's instant navigation
)

# --- reproducible builds -------------------------------------------------------------------
# Files that legitimately differ between two builds, and what is compared in them instead.
# Every other file must be byte-identical.
BUILD_DATE = re.compile(rb"<lastmod>[^<]*</lastmod>")
VOLATILE_FILES = {
    # <lastmod> holds the build date (mkdocs writes the day of the build for every page).
    "sitemap.xml": lambda data: BUILD_DATE.sub(b"<lastmod/>", data),
    # The same XML gzipped; the gzip header holds that date as a timestamp.
    "sitemap.xml.gz": lambda data: BUILD_DATE.sub(b"<lastmod/>", gzip.decompress(data)),
}

# --- shared browser plumbing ---------------------------------------------------------------


def _open(context, url: str, *, expect_missing: bool = False):
    page = context.new_page()
    response = page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    expected = 404 if expect_missing else 200
    assert response is not None and response.status == expected, f"{url} answered {response and response.status}"
    return page


# Every violation axe reports, flattened to one line per element.
AXE_RUN = """async () => {
  const result = await axe.run(document, { resultTypes: ['violations'] });
  return result.violations.flatMap((v) => v.nodes.map((n) => ({
    rule: v.id, impact: v.impact, target: n.target.join(' '),
    summary: (n.failureSummary || '').replace(/\\s+/g, ' ').slice(0, 240),
  })));
}"""


def _axe(page) -> list[dict]:
    page.add_script_tag(path=str(AXE))
    return page.evaluate(AXE_RUN)


def _axe_lines(where: str, violations: list[dict]) -> list[str]:
    """One line per rule broken on a page: how many elements, the first few, the first reason."""
    by_rule: dict[str, list[dict]] = defaultdict(list)
    for violation in violations:
        by_rule[violation["rule"]].append(violation)
    lines = []
    for rule, found in by_rule.items():
        targets = "; ".join(v["target"][-90:] for v in found[:3]) + ("; ..." if len(found) > 3 else "")
        lines.append(f"{where} [{rule}, {found[0]['impact']}] {len(found)} element(s): {targets} -- {found[0]['summary']}")
    return lines


@pytest.fixture(scope="session")
def axe_script() -> pathlib.Path:
    if not AXE.is_file():
        pytest.fail("axe-core is not installed: run `npm ci` (or `make`)")
    return AXE


# --- accessibility -------------------------------------------------------------------------


@pytest.mark.browser
def test_axe_finds_no_violations_on_any_page(context, base_url, site_paths, scheme, axe_script):
    """axe-core's default rules (WCAG 2 A/AA and best practices) on every page, collapsed
    blocks opened so their content is checked too."""
    problems: list[str] = []
    for path in site_paths + [MISSING_PAGE]:
        page = _open(context, base_url + path, expect_missing=path == MISSING_PAGE)
        page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
        problems += _axe_lines(f"{scheme} {path}", _axe(page))
        page.close()
    assert not problems, f"{len(problems)} axe violation(s):\n" + "\n".join(problems)


@pytest.mark.browser
def test_axe_finds_no_violations_in_open_controls(context, base_url, scheme, axe_script):
    """The states controls create: the search dialog with results; a page reached by instant
    navigation, the pointer still over the (hovered, focused) link; and on a phone-sized screen
    the navigation drawer."""
    problems: list[str] = []
    page = _open(context, base_url + "/")
    search = page.locator("input.md-search__input")
    search.click()
    search.press_sequentially("kernel", delay=30)  # Material's search reacts to key events
    page.wait_for_selector(".md-search-result__item", timeout=10_000)
    problems += _axe_lines(f"{scheme} / (search open)", _axe(page))
    page.close()

    page = _open(context, base_url + "/")
    page.locator("nav.md-nav--primary a.md-nav__link:visible", has_text="Derivations").first.click()
    page.wait_for_url(base_url + "/derivations/")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)  # Material's instant navigation swaps the page in
    problems += _axe_lines(f"{scheme} /derivations/ (instant navigation from /, link hovered)", _axe(page))
    page.close()

    page = _open(context, base_url + "/derivations/")
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator("label.md-header__button[for='__drawer']").click()
    page.wait_for_function("document.getElementById('__drawer').checked")
    page.wait_for_timeout(400)  # the drawer slides in over 250 ms
    problems += _axe_lines(f"{scheme} /derivations/ (phone, drawer open)", _axe(page))
    page.close()
    assert not problems, f"{len(problems)} axe violation(s):\n" + "\n".join(problems)


# --- layout stability ----------------------------------------------------------------------

LAYOUT_SHIFTS = """() => new Promise((resolve) => {
  const shifts = [];
  const describe = (node) => !node ? '(removed node)' : node.nodeType !== 1 ? node.nodeName
    : node.tagName.toLowerCase() + (node.id ? '#' + node.id : '')
      + (node.className && typeof node.className === 'string' ? '.' + node.className.trim().split(/\\s+/).join('.') : '');
  const rect = (r) => `(${Math.round(r.x)},${Math.round(r.y)} ${Math.round(r.width)}x${Math.round(r.height)})`;
  const take = (entries) => entries.forEach((e) => {
    if (!e.hadRecentInput) shifts.push({ value: e.value, at: Math.round(e.startTime),
      sources: (e.sources || []).map((s) => describe(s.node) + ' ' + rect(s.previousRect) + '->' + rect(s.currentRect)) });
  });
  const observer = new PerformanceObserver((list) => take(list.getEntries()));
  observer.observe({ type: 'layout-shift', buffered: true });
  requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => {
    take(observer.takeRecords());
    observer.disconnect();
    resolve(shifts);
  }, 250)));
})"""


LAYOUT_ATTEMPTS = 3


def _layout_shifts(context, url: str) -> list[dict]:
    page = _open(context, url)
    shifts = page.evaluate(LAYOUT_SHIFTS)
    page.close()
    return shifts


@pytest.mark.browser
def test_no_layout_shift_on_any_page(context, base_url, site_paths, scheme):
    """Cumulative layout shift 0.0: images are sized and math is rendered before first paint.

    overrides/main.html holds the first paint until the article is parsed (rel=expect) and
    preloads the KaTeX fonts, which posenc.css declares font-display: optional, so Chromium
    holds the paint for them too; only a font server slower than that hold (a loaded test
    machine) can still let a font arrive after it. A page that shifts is therefore loaded
    again, up to LAYOUT_ATTEMPTS times, and fails only if every load shifts: an unsized image
    or content inserted by a script shifts every time.
    """
    problems: list[str] = []
    for path in site_paths:
        for _ in range(LAYOUT_ATTEMPTS):
            shifts = _layout_shifts(context, base_url + path)
            if not shifts:
                break
        else:
            total = sum(shift["value"] for shift in shifts)
            detail = "; ".join(f"{s['value']:.4f} at {s['at']} ms by {', '.join(s['sources']) or '?'}" for s in shifts)
            problems.append(f"{scheme} {path}: cumulative layout shift {total:.4f} in each of "
                            f"{LAYOUT_ATTEMPTS} loads; the last: {detail}")
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
        return (f"{self.path:<36} {self.total / KB:7.1f} KB (gzip {self.gzipped / KB:5.1f} KB; "
                f"budget {self.budget // KB} KB; largest KB: {parts})")


def _weigh(context, base_url: str, path: str) -> Weight:
    page = context.new_page()
    responses = []
    page.on("response", lambda response: responses.append(response))
    page.goto(base_url + path, wait_until="load")
    page.wait_for_load_state("networkidle")
    weight = Weight(path)
    for response in responses:
        url = urlparse(response.url)
        if url.scheme == "data" or SHARED_ASSETS.search(url.path):
            continue
        try:
            body = response.body()
        except Exception:  # noqa: BLE001 - a redirect or aborted response has no body
            body = b""
        weight.add(response.url, body)
    page.close()
    return weight


@pytest.mark.browser
def test_page_weight_within_budget(context, base_url, site_paths, scheme):
    """Bytes a page transfers (gzip, as served by static hosts) beyond the theme's shared assets
    (SHARED_ASSETS): at most 300 KB for an article, 250 KB for the notebook page. The heaviest pages (and every page over its
    budget, marked OVER) are printed (pytest -s) and make up the failure message."""
    weights = sorted((_weigh(context, base_url, path) for path in site_paths), key=lambda w: -w.total)
    over = [weight for weight in weights if weight.gzipped > weight.budget]
    shown = weights[:10] + [weight for weight in over if weight not in weights[:10]]
    table = "\n".join(("OVER " if weight in over else "     ") + weight.line() for weight in shown)
    print(f"\nHeaviest pages ({scheme} scheme), beyond the theme's shared assets:\n{table}")
    assert len(over) == 0, f"{len(over)} page(s) over budget ({scheme} scheme):\n{table}"


# --- the built HTML, read without a browser ------------------------------------------------


@dataclass
class ParsedPage:
    url: str  # the path the page is served at, e.g. /derivations/
    anchors: set[str] = field(default_factory=set)  # id of any element, name of <a>
    links: list[str] = field(default_factory=list)  # href of every <a>
    assets: list[tuple[str, str]] = field(default_factory=list)  # (what, URL) the page loads


CSS_URL = re.compile(r"""url\(\s*(['"]?)(.*?)\1\s*\)|@import\s+(['"])(.*?)\3""", re.S)
LOADED_LINK_RELS = {"stylesheet", "icon", "shortcut", "apple-touch-icon", "mask-icon", "preload",
                    "modulepreload", "prefetch", "manifest"}
ASSET_ATTRIBUTES = {
    "script": ("src",), "img": ("src", "srcset"), "source": ("src", "srcset"), "iframe": ("src",),
    "frame": ("src",), "video": ("src", "poster"), "audio": ("src",), "track": ("src",),
    "object": ("data",), "embed": ("src",), "image": ("href", "xlink:href"), "feimage": ("href", "xlink:href"),
}


def _css_urls(css: str) -> list[str]:
    return [match[2] or match[4] for match in CSS_URL.finditer(css)]


class _Parser(html.parser.HTMLParser):
    def __init__(self, page: ParsedPage) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.in_style = False

    def handle_starttag(self, tag, attrs):
        attributes = {name: value for name, value in attrs if value is not None}
        if "id" in attributes:
            self.page.anchors.add(attributes["id"])
        if tag == "a":
            if "name" in attributes:
                self.page.anchors.add(attributes["name"])
            if "href" in attributes:
                self.page.links.append(attributes["href"])
        if tag == "link" and LOADED_LINK_RELS & set(attributes.get("rel", "").lower().split()):
            self.page.assets.append((f"<link rel={attributes.get('rel')}>", attributes.get("href", "")))
        if tag == "input" and attributes.get("type", "").lower() == "image" and "src" in attributes:
            self.page.assets.append(("<input type=image>", attributes["src"]))
        for name in ASSET_ATTRIBUTES.get(tag, ()):
            if name in attributes:
                values = attributes[name].split(",") if name == "srcset" else [attributes[name]]
                for value in values:
                    if value.strip():
                        self.page.assets.append((f"<{tag} {name}>", value.strip().split()[0]))
        if "style" in attributes:
            self.page.assets += [(f"<{tag} style>", url) for url in _css_urls(attributes["style"])]
        self.in_style = tag == "style"

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False

    def handle_data(self, data):
        if self.in_style:
            self.page.assets += [("<style>", url) for url in _css_urls(data)]


def _served_at(site: pathlib.Path, file: pathlib.Path) -> str:
    relative = file.relative_to(site).as_posix()
    if relative == "index.html":
        return "/"
    if relative.endswith("/index.html"):
        return "/" + relative[: -len("index.html")]
    return "/" + relative


@pytest.fixture(scope="session")
def parsed_pages(site_dir) -> dict[str, ParsedPage]:
    """Every HTML file of the built site, keyed by the path it is served at."""
    pages = {}
    for file in sorted(site_dir.rglob("*.html")):
        page = ParsedPage(_served_at(site_dir, file))
        parser = _Parser(page)
        parser.feed(file.read_text(encoding="utf-8"))
        parser.close()
        pages[page.url] = page
    return pages


@pytest.fixture(scope="session")
def site_host() -> str:
    """The host of site_url: a link to it is a link into this site, checked like a relative one."""
    match = re.search(r"^site_url:\s*(\S+)", (ROOT / "mkdocs.yml").read_text(), re.M)
    return urlparse(match[1]).hostname if match else ""


SITE_ORIGIN = "http://site.invalid"


def _target_file(site: pathlib.Path, path: str) -> pathlib.Path | None:
    """The file a server would send for a URL path, or None."""
    candidate = (site / unquote(path).lstrip("/")).resolve()
    if not candidate.is_relative_to(site.resolve()):
        return None
    if candidate.is_dir():
        candidate = candidate / "index.html"
    return candidate if candidate.is_file() else None


def test_every_link_and_anchor_resolves(site_dir, parsed_pages, site_host):
    """Every <a href> in every built page (notebook pages included) reaches a file of the site
    and, with a #fragment into a page, an element with that id (or an <a> with that name).
    External links are checked for form only, and listed."""
    problems: list[str] = []
    external: dict[str, set[str]] = defaultdict(set)
    for page in parsed_pages.values():
        for href in page.links:
            absolute = urljoin(SITE_ORIGIN + page.url, href.strip())
            url = urlparse(absolute)
            where = f"{page.url}: link {href!r}"
            if f"{url.scheme}://{url.netloc}" != SITE_ORIGIN and url.hostname != site_host:
                if url.scheme in ("http", "https") and url.hostname and "." in url.hostname:
                    external[absolute].add(page.url)
                elif url.scheme == "mailto" and re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", url.path):
                    external[absolute].add(page.url)
                else:
                    problems.append(f"{where} is not a well-formed http(s) or mailto link")
                continue
            target = _target_file(site_dir, url.path or "/")
            if target is None:
                problems.append(f"{where} points to {url.path}, which is not in the built site")
                continue
            fragment = unquote(url.fragment)
            if fragment and fragment != "top" and target.suffix == ".html":
                anchors = parsed_pages[_served_at(site_dir, target)].anchors
                if fragment not in anchors:
                    problems.append(f"{where}: no element with id {fragment!r} on {_served_at(site_dir, target)}")
    listing = "\n".join(
        f"  {url}  (from {', '.join(sorted(pages)) if len(pages) <= 4 else f'{len(pages)} pages'})"
        for url, pages in sorted(external.items())
    )
    print(f"\nExternal links ({len(external)}), checked for form, not fetched:\n{listing}")
    assert not problems, f"{len(problems)} broken link(s):\n" + "\n".join(problems)


def test_no_asset_is_loaded_from_outside_the_site(site_dir, parsed_pages):
    """Scripts, stylesheets, icons, preloads, images, frames, media, objects and the fonts or
    images named in CSS (inline, in <style> and in the site's .css files) all come from the
    site itself; only ordinary <a> links may point elsewhere. Every such asset also exists."""
    problems: list[str] = []

    def check(where: str, what: str, base: str, reference: str) -> None:
        if not reference or reference.startswith(("data:", "blob:", "#")):
            return
        url = urlparse(urljoin(SITE_ORIGIN + base, reference))
        if f"{url.scheme}://{url.netloc}" != SITE_ORIGIN:
            problems.append(f"{where}: {what} loads {reference} from outside the site")
        elif _target_file(site_dir, url.path) is None:
            problems.append(f"{where}: {what} {reference} is not in the built site")

    for page in parsed_pages.values():
        for what, reference in page.assets:
            check(page.url, what, page.url, reference)
    for stylesheet in sorted(site_dir.rglob("*.css")):
        served = _served_at(site_dir, stylesheet)
        for reference in _css_urls(stylesheet.read_text(encoding="utf-8", errors="replace")):
            check(served, "url()", served, reference)
    for svg in sorted(site_dir.rglob("*.svg")):
        served = _served_at(site_dir, svg)
        text = svg.read_text(encoding="utf-8", errors="replace")
        for reference in re.findall(r"<(?:image|script|feImage|use)\b[^>]*?\s(?:xlink:)?href=\"([^\"]*)\"", text):
            check(served, "SVG reference", served, reference)
        for reference in _css_urls(text):
            check(served, "SVG url()", served, reference)
    assert not problems, f"{len(problems)} asset(s) outside the site or missing:\n" + "\n".join(problems)


# --- the 404 page --------------------------------------------------------------------------


def test_404_page_offers_search_and_the_main_pages(parsed_pages, site_dir):
    """The 404 page (served at any depth) links Home, the guide, the deep dive and the
    Derivations with absolute paths, and has the search box."""
    page = parsed_pages["/404.html"]
    linked = {urlparse(urljoin(SITE_ORIGIN + "/404.html", href)).path for href in page.links}
    for target in ("/", "/guide/", "/deep-dive/", "/derivations/"):
        assert target in linked, f"the 404 page does not link {target}"
    relative = [href for href in page.links if not href.startswith(("/", "#", "http:", "https:", "mailto:"))]
    assert not relative, f"the 404 page is served at any depth, but links relative paths: {relative}"
    assert 'class="md-search__input"' in (site_dir / "404.html").read_text(encoding="utf-8")


# --- reproducible builds -------------------------------------------------------------------


def _files(directory: pathlib.Path) -> dict[str, pathlib.Path]:
    return {file.relative_to(directory).as_posix(): file for file in sorted(directory.rglob("*")) if file.is_file()}


def test_two_clean_builds_are_identical(tmp_path):
    """Two builds from the same sources give the same bytes (the notebook is executed in both),
    except the files named in VOLATILE_FILES, whose build dates are masked before comparing."""
    mkdocs = ROOT / ".venv" / "bin" / "mkdocs"
    if not mkdocs.is_file():
        pytest.fail("the virtual environment is not built: run `make`")
    outputs = [tmp_path / "first", tmp_path / "second"]
    # Both builds run at once, so a source edited during the test is less likely to differ.
    builds = [
        subprocess.Popen([str(mkdocs), "build", "--quiet", "--site-dir", str(out)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for out in outputs
    ]
    for build in builds:
        _, stderr = build.communicate(timeout=600)
        assert build.returncode == 0, f"mkdocs build failed:\n{stderr[-3000:]}"
    first, second = (_files(out) for out in outputs)
    differing = sorted(set(first) ^ set(second))
    for name in sorted(set(first) & set(second)):
        a, b = first[name].read_bytes(), second[name].read_bytes()
        normalise = VOLATILE_FILES.get(name)
        if normalise is not None:
            a, b = normalise(a), normalise(b)
        if a != b:
            differing.append(name)
    assert not differing, "files that differ between two clean builds:\n" + "\n".join(differing)


# --- the versioned deploy ------------------------------------------------------------------


# mike's plugin (mike/mkdocs_plugin.py) sets site_url = urljoin(site_url, version) after the
# configuration is validated, so the hooks see it without a trailing slash. This builds
# mkdocs-deploy.yml the same way, for a version 9.9, without needing mike installed.
MIKE_LIKE_BUILD = """
import sys
from urllib.parse import urljoin
from mkdocs.commands.build import build
from mkdocs.config import load_config

config = load_config("mkdocs-deploy.yml", site_dir=sys.argv[1])
config["site_url"] = urljoin(config["site_url"], "9.9")
config.plugins.on_startup(command="build", dirty=False)
try:
    build(config)
finally:
    config.plugins.on_shutdown()
"""


def test_versioned_build_cites_its_own_address(tmp_path, site_dir):
    """What .github/workflows/deploy.yml publishes with mike for a version 9.9. Canonical
    links, the BibTeX of every derivation and the 404 page's links must name /9.9/, so that a
    cited /9.9/derivations/#ID keeps its text; only this build asks for the version list."""
    out = tmp_path / "site"
    build = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-c", MIKE_LIKE_BUILD, str(out)],
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, f"building mkdocs-deploy.yml failed:\n{build.stderr[-3000:]}"
    page = (out / "derivations" / "index.html").read_text(encoding="utf-8")
    canonical = re.search(r'<link rel="canonical" href="([^"]+)"', page)[1]
    assert canonical == "https://posenc.github.io/9.9/derivations/"
    cited = re.findall(r"\\url\{([^}]*)\}", page)
    wrong = sorted({url for url in cited if not url.startswith(canonical + "#")})
    assert cited, "no BibTeX \\url{...} on the Derivations page"
    assert not wrong, f"{len(wrong)} BibTeX URL(s) do not start with {canonical}#, e.g. {wrong[0]}"
    links = [href for href in re.findall(r'<a href="([^"]+)"', (out / "404.html").read_text(encoding="utf-8"))
             if href.startswith("/")]
    assert links and all(href.startswith("/9.9/") for href in links), links
    assert '"provider": "mike"' in (out / "index.html").read_text(encoding="utf-8")
    assert '"version": null' in (site_dir / "index.html").read_text(encoding="utf-8"), \
        "the local build (mkdocs.yml) must not ask for versions.json"
