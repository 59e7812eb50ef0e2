"""The built HTML read as files, without a browser: every link and anchor resolves, every asset
comes from the site itself, and the 404 page offers a way back. Each failure names the page and
the link or file so it can be fixed where it lives."""

from __future__ import annotations

import html.parser
import pathlib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from urllib.parse import unquote, urljoin, urlparse

import pytest
from site_build import first_paint

ROOT = pathlib.Path(__file__).resolve().parents[2]


@dataclass
class ParsedPage:
    url: str  # the path the page is served at, e.g. /derivations/
    anchors: set[str] = field(default_factory=set)  # id of any element, name of <a>
    links: list[str] = field(default_factory=list)  # href of every <a>
    assets: list[tuple[str, str]] = field(default_factory=list)  # (what, URL) the page loads
    math_text: set[str] = field(default_factory=set)  # the characters KaTeX's drawn HTML holds
    expects: list[str] = field(default_factory=list)  # href of every <link rel=expect>
    # The article's child elements in order, each as its id, else its tag and classes; None
    # when the page has no article (md-content__inner).
    article_children: list[str] | None = None


CSS_URL = re.compile(r"""url\(\s*(['"]?)(.*?)\1\s*\)|@import\s+(['"])(.*?)\3""", re.S)
LOADED_LINK_RELS = {
    "stylesheet",
    "icon",
    "shortcut",
    "apple-touch-icon",
    "mask-icon",
    "preload",
    "modulepreload",
    "prefetch",
    "manifest",
}
ASSET_ATTRIBUTES = {
    "script": ("src",),
    "img": ("src", "srcset"),
    "source": ("src", "srcset"),
    "iframe": ("src",),
    "frame": ("src",),
    "video": ("src", "poster"),
    "audio": ("src",),
    "track": ("src",),
    "object": ("data",),
    "embed": ("src",),
    "image": ("href", "xlink:href"),
    "feimage": ("href", "xlink:href"),
}


def _css_urls(css: str) -> list[str]:
    return [match[2] or match[4] for match in CSS_URL.finditer(css)]


# Elements that have no end tag in HTML.
VOID_ELEMENTS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Parser(html.parser.HTMLParser):
    def __init__(self, page: ParsedPage) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.in_style = False
        self.math_depth = 0  # elements open inside a formula's drawn HTML (span.katex-html)
        self.article_depth = 0  # elements open inside the article, the article itself included

    def handle_starttag(self, tag, attrs):
        attributes = {name: value for name, value in attrs if value is not None}
        if tag not in VOID_ELEMENTS and (self.math_depth or "katex-html" in attributes.get("class", "").split()):
            self.math_depth += 1
        if "id" in attributes:
            self.page.anchors.add(attributes["id"])
        if self.article_depth == 1:
            self.page.article_children.append(attributes.get("id") or f"{tag}.{attributes.get('class', '')}")
        opens_article = not self.article_depth and "md-content__inner" in attributes.get("class", "").split()
        if opens_article:
            self.page.article_children = []
        if tag not in VOID_ELEMENTS and (self.article_depth or opens_article):
            self.article_depth += 1
        if tag == "link" and "expect" in attributes.get("rel", "").lower().split():
            self.page.expects.append(attributes.get("href", ""))
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
        if self.article_depth and tag not in VOID_ELEMENTS:
            self.article_depth -= 1
        if self.math_depth and tag not in VOID_ELEMENTS:
            self.math_depth -= 1

    def handle_data(self, data):
        if self.math_depth:
            self.page.math_text.update(data)
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


def test_each_derivation_has_its_own_page_and_an_anchored_entry_in_the_index(site_dir):
    """``derivations/ID/`` shows the statement, then every numbered proof step, then the SymPy code
    that proves it; the index's entry for the ID carries the anchor ``#ID`` and links to that page."""
    import posenc.site.derivations  # noqa: F401  (registers every derivation)
    from posenc.site.registry import REGISTRY

    index = (site_dir / "derivations" / "index.html").read_text(encoding="utf-8")
    for entry in REGISTRY.values():
        assert f'<a href="{entry.id}/" id="{entry.id}">' in index, entry.id
        page = (site_dir / "derivations" / entry.id / "index.html").read_text(encoding="utf-8")
        article = page[page.index("<article") : page.index("</article>")]
        positions = [article.find(mark) for mark in ('class="posenc-math', 'id="proof"', 'id="source"', 'id="cite"')]
        assert -1 < positions[0] < positions[1] < positions[2] < positions[3], (entry.id, positions)
        steps = re.search(r'<h2 id="proof">Proof in (\d+) steps?.*?<ol>(.*?)</ol>', article, re.S)
        assert steps and int(steps[1]) == len(entry.steps) == steps[2].count("<li>"), entry.id


EMPTY_LINK = re.compile(r"<a\s(?![^>]*\baria-label=)[^>]*\bhref=[^>]*>\s*</a>")


def test_no_page_has_a_link_without_content(site_dir):
    """A link with nothing in it is still a tab stop, an invisible one with no name. (Line anchors on
    every code line once put thousands of them on the API and SymPy-source pages.)"""
    found = {
        str(path.relative_to(site_dir)): len(EMPTY_LINK.findall(path.read_text(encoding="utf-8")))
        for path in site_dir.rglob("*.html")
    }
    assert {page: count for page, count in found.items() if count} == {}


# Text katex.min.css generates: equation numbers, "(" counter(...) ")".
KATEX_GENERATED_TEXT = set("()0123456789")
PRELOADED_FACE = re.compile(r"assets/katex/fonts/KaTeX_([\w-]+)\.woff2$")


def test_each_math_face_keeps_every_character_the_math_draws(site_dir, parsed_pages):
    """The build cuts each face the pages preload down to the characters their math draws
    (hooks/site_build/katex.py). Every character of a formula's drawn HTML is still in each face its
    page preloads, wherever KaTeX's full face has it (a character missing there would be drawn
    in a fallback font), and each of these faces is shipped smaller than KaTeX's."""
    from fontTools.ttLib import TTFont

    full_dir = ROOT / "node_modules" / "katex" / "dist" / "fonts"
    shipped_dir = site_dir / "assets" / "katex" / "fonts"
    cmaps: dict[str, tuple[set[int], set[int]]] = {}  # characters of the full face and of the cut one
    missing: list[str] = []
    for page in parsed_pages.values():
        for what, url in page.assets:
            face = PRELOADED_FACE.search(url)
            if what != "<link rel=preload>" or not face:
                continue
            if face[1] not in cmaps:
                cmaps[face[1]] = tuple(
                    set(TTFont(folder / f"KaTeX_{face[1]}.woff2").getBestCmap()) for folder in (full_dir, shipped_dir)
                )
            full, shipped = cmaps[face[1]]
            lost = sorted(c for c in page.math_text | KATEX_GENERATED_TEXT if ord(c) in full and ord(c) not in shipped)
            if lost:
                missing.append(f"{page.url}: KaTeX_{face[1]} lacks {''.join(lost)!r}")
    assert cmaps, "no page preloads a math face"
    assert not missing, "\n".join(missing)
    sizes = {
        face: tuple((folder / f"KaTeX_{face}.woff2").stat().st_size for folder in (full_dir, shipped_dir))
        for face in cmaps
    }
    assert all(shipped < full for full, shipped in sizes.values()), f"(KaTeX's bytes, shipped bytes): {sizes}"


FIRST_SCREEN_MARKER_ID = "posenc-first-screen-end"


def test_the_first_paint_waits_for_the_blocks_always_drawn_and_no_more(parsed_pages):
    """Each page holds its first paint (rel=expect) for one marker among its article's children,
    placed after the blocks posenc.css always draws (those before its content-visibility rule's
    first block), or after all of them when the article has fewer."""
    css = (ROOT / "docs" / "stylesheets" / "posenc.css").read_text(encoding="utf-8")
    always_drawn = first_paint.always_drawn_blocks(css)
    problems, long_pages = [], 0
    for url, page in parsed_pages.items():
        if page.article_children is None:
            continue
        if page.expects != [f"#{FIRST_SCREEN_MARKER_ID}"]:
            problems.append(f"{url}: rel=expect links {page.expects}")
        children = page.article_children
        if children.count(FIRST_SCREEN_MARKER_ID) != 1:
            problems.append(f"{url}: {children.count(FIRST_SCREEN_MARKER_ID)} markers among the article's children")
            continue
        before = children.index(FIRST_SCREEN_MARKER_ID)
        content = [child for child in children if child != FIRST_SCREEN_MARKER_ID]
        long_pages += len(content) > always_drawn
        if before != min(always_drawn, len(content)):
            problems.append(
                f"{url}: the marker follows {before} of the article's {len(content)} blocks, "
                f"not {min(always_drawn, len(content))}"
            )
    assert not problems, "\n".join(problems)
    assert long_pages >= 10, "the articles should include pages longer than their first screen"
