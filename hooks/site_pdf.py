"""Print the built site's articles into one PDF: ``python hooks/site_pdf.py --site site --out site/posenc.pdf``.

The articles of the nav's Learn and Implement sections (each derivation's page after the
Derivations index), then the References page, in nav order. Each page's ``<article>`` is read
from the finished site, where math and figures are already rendered. Headless Chromium
(Playwright) prints the cover, each article (a derivation's page goes with the Derivations index)
and the contents as PDFs of their own, which pikepdf (qpdf) joins into one with bookmarks and named
destinations; the page numbers are stamped on the joined pages and the contents is printed last,
when every part's length is known. Each part is cached under build/ by a digest of everything
that decides its bytes (its HTML, every file Chromium loaded for it, Chromium's version and this
script), so a rebuild after one page's edit prints that page and perhaps the contents only.
Chromium runs on a thread of its own: it starts while the pages are read, and the parts already
printed or kept are copied into the joined PDF while it prints the next (``Joiner``).
Ids are prefixed per page, links to unprinted pages go to the cited release, and scripts and
source code are left out.
Design history: docs/design-notes.md#pdf
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import html
import importlib.metadata
import io
import json
import os
import pathlib
import posixpath
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import yaml
from bs4 import BeautifulSoup, Comment
from mkdocs.structure.files import File

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hooks"))
# The build's own reading of CITATION.cff, of the address to cite and of the derivation pages.
from site_build import citations, derivation_pages  # noqa: E402
from site_build.citations import ARTICLE_SECTIONS  # noqa: E402 - the nav sections whose pages are articles

# After the articles, the back matter.
BACK_MATTER = ("references.md",)
CHROMIUM = os.environ.get("POSENC_CHROMIUM", "/usr/bin/chromium")
CACHE = ROOT / "build" / "pdf-parts"
# What decides a part's bytes besides its HTML and the files it loads: this script (its print
# options and its scripts run in the page) and the versions of Playwright and Chromium.
SCRIPT_DIGEST = hashlib.sha256(pathlib.Path(__file__).read_bytes()).hexdigest()
# The print document is served to Chromium from memory under this origin, the site's files
# beside it; Playwright answers every request, so nothing leaves the machine.
PRINT_ORIGIN = "http://print.invalid"
PRINT_PATH = "/posenc-print.html"
# A link to a place in another part cannot be a fragment (Chromium drops a link whose target is
# not in the page it prints), so every link inside the PDF is printed to this address plus the
# destination's name, and becomes a link to the named destination when the parts are joined.
DESTINATION = "http://destination.invalid/"
PAGE_WIDTH_MM, PAGE_HEIGHT_MM = 210, 297  # A4
MARGIN_MM = {"top": 16, "bottom": 18, "left": 16, "right": 16}
MM = 72 / 25.4  # PDF points per millimetre
FOOTER_PT, FOOTER_BASELINE_MM = 6, 8  # the footer's size and its baseline's height above the sheet's bottom edge
# Removed from every printed article: permalink symbols, buttons, the API's links to its source
# pages (which are not printed) and the SymPy source on each derivation's page.
# The References' BibTeX records are left out too: in print the formatted entries are the
# bibliography, and each record is one click away on the site.
DROPPED = (
    "a.headerlink, a.anchor-link, a.posenc-figure__enlarge, a.md-content__button, "
    f".posenc-source-link, .{derivation_pages.SOURCE_CLASS}, details.{citations.BIBTEX_CLASS}, script"
)

PRINT_CSS = f"""
@page {{ size: A4; margin: {MARGIN_MM["top"]}mm {MARGIN_MM["right"]}mm {MARGIN_MM["bottom"]}mm {MARGIN_MM["left"]}mm; }}
html {{ font-size: 125%; }}
body {{ display: block; }}
.posenc-print-nested {{ margin-top: 2em; }}
.posenc-print-cover {{ padding-top: 30%; }}
.posenc-print-cover h1 {{ font-size: 2.4em; color: inherit; margin-bottom: .6em; }}
.posenc-print-cover__what {{ font-size: 1.15em; }}
.posenc-print-contents ol {{ list-style: none; padding: 0; margin: 0; }}
.posenc-print-contents li {{ display: flex; gap: .5em; margin: .2em 0; }}
.posenc-print-contents li .leader {{ flex: 1; border-bottom: 1px dotted currentColor; margin-bottom: .35em; }}
.posenc-print-contents .part {{ font-weight: 700; margin-top: 1em; }}
.md-typeset figure, .md-typeset .posenc-math {{ break-inside: avoid; }}
.md-typeset h1, .md-typeset h2, .md-typeset h3, .md-typeset h4 {{ break-after: avoid; }}
.md-typeset pre > code {{ white-space: pre-wrap; overflow-wrap: anywhere; }}
.md-typeset details > summary::after {{ display: none; }}
"""

# Content wider than the page would be cut off on paper (the site scrolls it sideways):
# scale each such block down to the column's width.
FIT_WIDE_BLOCKS = """() => {
  const blocks = document.querySelectorAll('.posenc-math, .md-typeset__table, .highlight, svg, .jp-OutputArea');
  let scaled = 0;
  for (const block of blocks) {
    const column = block.parentElement.clientWidth;
    if (block.scrollWidth > column + 1) { block.style.zoom = column / block.scrollWidth; scaled += 1; }
  }
  return scaled;
}"""
# Chromium's print options, part of every part's cache key.
PDF_OPTIONS = {
    "format": "A4",
    "print_background": True,
    "outline": True,
    "tagged": True,
    "margin": {side: f"{mm}mm" for side, mm in MARGIN_MM.items()},
}


@dataclass
class Article:
    section: str
    title: str  # as the nav names it
    src: str  # the Markdown (or notebook) file under docs/
    url: str  # its address in the site, such as "guide/"
    dest: str  # its built file, such as "guide/index.html"
    # A page printed as a section of the article before it (a derivation after the index):
    # no new sheet, no line in the contents, headings one level down.
    nested: bool = False

    @property
    def key(self) -> str:
        """The page's id in the print document and the prefix of its own ids."""
        # The home page's address is "./" (or ""): a key of "." would make a link to it end in
        # "/.", which Chromium's URL parser drops, leaving a link to no destination.
        return self.url.removeprefix("./").strip("/").replace("/", "-") or "home"


def printed_articles(config_path: pathlib.Path = ROOT / "mkdocs.yml") -> list[Article]:
    """The articles of the nav's Learn and Implement sections, then the back matter, in nav order."""
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    docs = config_path.parent / config.get("docs_dir", "docs")

    def article(section: str, title: str, src: str, nested: bool = False) -> Article:
        # A notebook page (mkdocs-jupyter) is addressed as a Markdown page of the same name.
        page_src = str(pathlib.PurePosixPath(src).with_suffix(".md"))
        file = File(page_src, str(docs), "", use_directory_urls=config.get("use_directory_urls", True))
        return Article(section, title, src, file.url, file.dest_uri, nested)

    articles: list[Article] = []
    back: list[Article] = []
    # A site without a nav (mkdocs then lists the pages itself) has no article sections: its
    # PDF is its home page alone, so `make` still leaves a PDF beside the pages that link it.
    if not config.get("nav"):
        return [article("", "Home", "index.md")]
    for item in config["nav"]:
        ((name, value),) = item.items()
        if name in ARTICLE_SECTIONS:
            for entry in value:
                ((title, src),) = entry.items()
                articles.append(article(name, title, src))
                if src == derivation_pages.INDEX_SRC:
                    articles += [
                        article(name, derivation.title, derivation_pages.derivation_src(derivation.id), True)
                        for derivation in derivation_pages.derivations()
                    ]
        elif value in BACK_MATTER:
            back.append(article("", name, value))
    return articles + back


def _outside_svg(tag) -> bool:
    return tag.name != "svg" and tag.find_parent("svg") is None


def _print_article(soup: BeautifulSoup, page: Article, keys: dict[str, str], cited_root: str) -> tuple[str, list[str]]:
    """The page's article as a section of the print document, its ids and links rewritten, and its ids."""
    article = soup.select_one("article.md-content__inner")
    if article is None:
        raise SystemExit(f"{page.dest}: no <article> in the built page")
    for tag in article.select(DROPPED):
        tag.decompose()
    for comment in article.find_all(string=lambda text: isinstance(text, Comment)):
        comment.extract()
    for details in article.find_all("details"):
        details["open"] = ""
    if page.nested:
        for heading in article.find_all(["h1", "h2", "h3", "h4", "h5"]):
            heading.name = f"h{int(heading.name[1]) + 1}"
    # Ids inside SVGs are the figures' own (clip paths), referenced by url(#...) in the SVG.
    ids = set()
    for tag in article.find_all(id=True):
        if _outside_svg(tag):
            ids.add(tag["id"])
            tag["id"] = f"{page.key}--{tag['id']}"
    page_address = "http://site.invalid/" + page.url
    for link in article.find_all("a", href=True):
        if not _outside_svg(link):
            continue
        target = urlsplit(urljoin(page_address, link["href"]))
        if target.netloc != "site.invalid":
            continue  # another site's address
        fragment = unquote(target.fragment)
        key = keys.get(target.path.lstrip("/"))
        if key is None:
            # A page or file that is not printed: its address in the release to cite.
            link["href"] = cited_root + target.path.lstrip("/") + (f"#{target.fragment}" if fragment else "")
        elif fragment and fragment != "top":
            link["href"] = DESTINATION + f"{key}--{fragment}"
        else:
            link["href"] = DESTINATION + key
    kind = "posenc-print-nested" if page.nested else "posenc-print-article"
    section = f'<section class="{kind}" id="{page.key}">{article.decode_contents()}</section>'
    return section, [page.key, *(f"{page.key}--{name}" for name in sorted(ids))]


def _stylesheets(soup: BeautifulSoup, page: Article) -> list[str]:
    """The site-relative addresses of the page's stylesheets."""
    return [
        posixpath.normpath(posixpath.join(posixpath.dirname(page.dest), link["href"]))
        for link in soup.select('link[rel="stylesheet"][href]')
    ]


def _cover(release: dict, built: datetime.date, cited_root: str, articles: list[Article]) -> str:
    """The first page: the title, what the document is, the release, the build's date, the address to cite."""
    date = release["date"]
    chapters = sum(1 for page in articles if not page.nested and page.section)
    derivations = sum(1 for page in articles if page.nested)
    return (
        '<section class="posenc-print-cover">'
        f"<h1>{html.escape(release['title'])}</h1>"
        f'<p class="posenc-print-cover__what">The posenc site on transformer positional encoding, printed as one '
        f"document: its {chapters} chapters in the order of the site's menu, with all {derivations} derivations "
        "and their proof steps, then the references. Every figure is the output of its script and every "
        "derivation passed its SymPy proof, for the sources this document was built from.</p>"
        f"<p>Version {html.escape(release['version'])}, released {date.day} {date:%B} {date.year}. "
        f"This PDF was built on {built.day} {built:%B} {built.year} from the same sources as the site.</p>"
        f'<p>Address to cite: <a href="{cited_root}">{cited_root}</a>. Each derivation is cited by its '
        f"page, <code>{cited_root}derivations/ID/</code>; the "
        f'<a href="{cited_root}cite/">Cite this site</a> page there has BibTeX for the site, '
        "each article and each derivation.</p>"
        "</section>"
    )


def _contents(articles: list[Article], pages: dict[str, int]) -> str:
    """The table of contents: one linked line per article with its page number (blank before
    the page numbers are known; the line keeps its height, so the contents' length is the same)."""
    lines = ['<section class="posenc-print-contents" id="contents"><h1>Contents</h1><ol>']
    section = None
    for page in articles:
        if page.nested:
            continue
        if page.section != section:
            section = page.section
            # The back matter has no section name: a blank line sets it apart from the last one.
            lines.append(f'<li class="part">{html.escape(section) or "&nbsp;"}</li>')
        number = pages.get(page.key, "")
        lines.append(
            f'<li><a href="{DESTINATION}{page.key}">{html.escape(page.title)}</a>'
            f'<span class="leader"></span><span>{number}&nbsp;</span></li>'
        )
    lines.append("</ol></section>")
    return "".join(lines)


def _document(title: str, stylesheets: list[str], body: str, ids: list[str]) -> str:
    """A part's print document. Chromium names a destination only for an element that some link of
    the page points at, so a hidden list links every id of the part: each becomes a destination
    that links from the other parts can reach once the parts are joined."""
    links = "".join(f'<link rel="stylesheet" href="/{sheet}">' for sheet in stylesheets)
    anchors = "".join(f'<a href="#{html.escape(name)}"></a>' for name in ids)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>{links}<style>{PRINT_CSS}</style></head>"
        '<body dir="ltr" data-md-color-scheme="default" data-md-color-primary="indigo" '
        f'data-md-color-accent="indigo"><div class="md-typeset">{body}</div>'
        f"<nav hidden>{anchors}</nav></body></html>"
    )


@dataclass
class Part:
    """One PDF printed on its own: the cover, the contents, or an article with the pages nested in it."""

    name: str  # for messages and counts
    html: str
    pdf: bytes = b""
    pages: int = 0
    printed: bool = False  # printed by this run rather than taken from the cache
    # A digest of everything that decides the PDF's bytes (its cache key and the loaded files'
    # digests), the same in every build, unlike the PDF, which holds the time it was printed.
    source: str = ""


@dataclass
class PrintDocument:
    """The print document's parts but the contents, whose page numbers wait for the others' lengths."""

    release: dict
    title: str
    cited_root: str
    built: datetime.date
    articles: list[Article]
    stylesheets: list[str]  # site-relative: every printed page's, loaded by every part
    cover: Part
    chapters: list[Part]

    @classmethod
    def of_site(
        cls, site: pathlib.Path, articles: list[Article], built: datetime.date, cache: PartCache
    ) -> PrintDocument:
        config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
        cited_root = citations.cited_root(config["site_url"])
        release = citations.release()
        keys = {page.url: page.key for page in articles}
        stylesheets: list[str] = []
        groups: list[tuple[list[str], list[str], list[str]]] = []  # (stylesheets, sections, ids) per chapter
        for page in articles:
            sheets, section, ids = cache.extract(site, page, keys, cited_root)
            # Every part loads every printed page's stylesheets, in the order they are first met, as
            # the one print document did: a page's own sheet may style what other pages hold too.
            stylesheets += [sheet for sheet in sheets if sheet not in stylesheets]
            if page.nested and groups:
                groups[-1][0].extend(sheet for sheet in sheets if sheet not in groups[-1][0])
                groups[-1][1].append(section)
                groups[-1][2].extend(ids)
            else:
                groups.append((list(sheets), [section], list(ids)))
        title = release["title"]
        cover = Part("cover", _document(title, stylesheets, _cover(release, built, cited_root, articles), []))
        chapters = [
            Part(page.key, _document(title, stylesheets, "".join(sections), ids))
            for page, (_, sections, ids) in zip([page for page in articles if not page.nested], groups, strict=True)
        ]
        return cls(release, title, cited_root, built, articles, stylesheets, cover, chapters)

    def contents(self, pages: dict[str, int]) -> Part:
        body = _contents(self.articles, pages)
        return Part("contents", _document(self.title, self.stylesheets, body, ["contents"]))


def chromium_version() -> str:
    try:
        answer = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, check=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        raise SystemExit(
            f"Chromium at {CHROMIUM} does not run ({error}): install Debian's chromium or set POSENC_CHROMIUM"
        ) from error
    return answer.stdout.strip()


class PartCache:
    """Printed parts by a digest of what decides their bytes.

    An entry's name is the digest of the part's HTML, the print options, this script and the
    versions of Chromium and Playwright; beside its PDF it records every file Chromium loaded
    while printing it, with each file's digest. It is used only while each of those files still
    has that digest (a file that was missing must still be missing), so an edited stylesheet,
    font or figure reprints exactly the parts that loaded it."""

    def __init__(self, folder: pathlib.Path, site: pathlib.Path, chromium: str) -> None:
        self.folder = folder
        self.site = site.resolve()
        self.versions = f"{chromium}\nplaywright {importlib.metadata.version('playwright')}"
        self._digests: dict[str, str] = {}
        self.used: set[str] = set()

    def file_digest(self, path: str) -> str:
        if path not in self._digests:
            file = (self.site / path).resolve()
            inside = file.is_relative_to(self.site) and file.is_file()
            self._digests[path] = hashlib.sha256(file.read_bytes()).hexdigest() if inside else "missing"
        return self._digests[path]

    def key(self, part: Part) -> str:
        options = json.dumps([PDF_OPTIONS, FIT_WIDE_BLOCKS, SCRIPT_DIGEST, self.versions], sort_keys=True)
        return hashlib.sha256(options.encode() + b"\0" + part.html.encode()).hexdigest()

    def get(self, part: Part) -> bytes | None:
        key = self.key(part)
        self.used.add(key)
        try:
            loaded = json.loads((self.folder / f"{key}.json").read_text(encoding="utf-8"))
            pdf = (self.folder / f"{key}.pdf").read_bytes()
        except (OSError, ValueError):
            return None
        if hashlib.sha256(pdf).hexdigest() != loaded.get("pdf"):
            return None  # an entry cut short
        if any(self.file_digest(path) != digest for path, digest in loaded["files"].items()):
            return None
        part.source = self.source(key, loaded["files"])
        return pdf

    def put(self, part: Part, pdf: bytes, loaded: list[str]) -> None:
        key = self.key(part)
        self.folder.mkdir(parents=True, exist_ok=True)
        record = {"part": part.name, "pdf": hashlib.sha256(pdf).hexdigest()}
        record["files"] = {path: self.file_digest(path) for path in sorted(set(loaded))}
        part.source = self.source(key, record["files"])
        for suffix, data in ((".pdf", pdf), (".json", json.dumps(record, indent=1).encode())):
            temporary = self.folder / f"{key}{suffix}.tmp"
            temporary.write_bytes(data)
            temporary.replace(self.folder / f"{key}{suffix}")

    def extract(
        self, site: pathlib.Path, page: Article, keys: dict[str, str], cited_root: str
    ) -> tuple[list[str], str, list[str]]:
        """The page's stylesheets, its print section and its ids, kept by a digest of the built page
        and of what the section is made with: parsing every page took most of a no-op's time."""
        built = (site / page.dest).read_bytes()
        made_with = json.dumps([SCRIPT_DIGEST, vars(page), keys, cited_root], sort_keys=True).encode()
        key = hashlib.sha256(made_with + b"\0" + built).hexdigest()
        self.used.add(key)
        entry = self.folder / f"{key}.page.json"
        try:
            found = json.loads(entry.read_text(encoding="utf-8"))
            return found["stylesheets"], found["section"], found["ids"]
        except (OSError, ValueError, KeyError):
            pass
        soup = BeautifulSoup(built.decode("utf-8"), "html.parser")
        sheets = _stylesheets(soup, page)
        section, ids = _print_article(soup, page, keys, cited_root)
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = entry.with_suffix(".tmp")
        temporary.write_text(json.dumps({"stylesheets": sheets, "section": section, "ids": ids}), encoding="utf-8")
        temporary.replace(entry)
        return sheets, section, ids

    @staticmethod
    def source(key: str, files: dict[str, str]) -> str:
        return hashlib.sha256(json.dumps([key, files], sort_keys=True).encode()).hexdigest()

    def prune(self) -> None:
        """Delete the entries this run did not use, so the cache holds one print's parts."""
        for file in self.folder.glob("*"):
            if file.name.split(".")[0] not in self.used:
                file.unlink()


class Printer:
    """Headless Chromium printing HTML documents to PDF, driven from a thread of its own: Playwright's
    objects belong to the thread that made them, and so Chromium starts (``start``) and opens the
    first print's page while the main thread reads the site."""

    def __init__(self, site: pathlib.Path) -> None:
        self.site = site.resolve()
        self._thread = ThreadPoolExecutor(max_workers=1)
        self._playwright = None
        self._browser = None
        self._ready = None  # (context, page) opened for the next print
        self._closing: Future | None = None
        self._submitted: list[Future] = []

    def __enter__(self) -> Printer:
        return self

    def __exit__(self, kind, *exc) -> None:
        if kind is not None:  # a failure: the prints not yet started are not needed
            for future in self._submitted:
                future.cancel()
        try:
            self.stop().result()
        finally:
            self._thread.shutdown()

    def stop(self) -> Future:
        """Close Chromium in the background (what is left to do, such as joining, goes on meanwhile)."""
        if self._closing is None:
            self._closing = self._thread.submit(self._close)
        return self._closing

    def start(self) -> None:
        """Launch Chromium and open a page for the first print, in the background. A launch that
        fails there is tried again, and its error raised, by the first print."""
        self._thread.submit(self._start)

    def submit(self, document: str) -> Future:
        """Print ``document`` after the documents submitted before it: the future of Chromium's PDF
        of it, the site's files served beside it, and the site files it asked for."""
        future = self._thread.submit(self._print, document)
        self._submitted.append(future)
        return future

    def _start(self):
        if self._browser is None:
            from playwright.sync_api import sync_playwright

            if self._playwright is None:
                self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(
                executable_path=CHROMIUM,
                args=["--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP * ~NOTFOUND"],
            )
            self._ready = self._open()
        return self._browser

    def _open(self):
        width_px = round((PAGE_WIDTH_MM - MARGIN_MM["left"] - MARGIN_MM["right"]) / 25.4 * 96)
        context = self._start().new_context(color_scheme="light", viewport={"width": width_px, "height": 1000})
        page = context.new_page()
        page.emulate_media(media="print")
        return context, page

    def _close(self) -> None:
        if self._browser is not None:
            self._browser.close()
        if self._playwright is not None:
            self._playwright.stop()

    def _print(self, document: str) -> tuple[bytes, list[str]]:
        site = self.site
        loaded: list[str] = []

        def answer(route) -> None:
            url = urlsplit(route.request.url)
            if f"{url.scheme}://{url.netloc}" != PRINT_ORIGIN:
                route.abort()
                return
            if url.path == PRINT_PATH:
                route.fulfill(body=document, content_type="text/html; charset=utf-8")
                return
            path = posixpath.normpath(unquote(url.path).lstrip("/"))
            loaded.append(path)
            file = (site / path).resolve()
            if file.is_relative_to(site) and file.is_file():
                route.fulfill(path=file)
            else:
                route.fulfill(status=404, body="")

        self._start()
        # Each document is printed in a context of its own, so nothing one loads is cached for another.
        (context, page), self._ready = self._ready or self._open(), None
        try:
            page.route("**/*", answer)
            page.goto(PRINT_ORIGIN + PRINT_PATH, wait_until="load")
            page.evaluate("document.fonts.ready.then(() => true)")
            page.evaluate(FIT_WIDE_BLOCKS)
            return page.pdf(**PDF_OPTIONS), loaded
        finally:
            context.close()


def _destination_name(name: str) -> str:
    return name.removeprefix("/")


def _footer_stream(release: dict, number: int, total: int, width: float) -> bytes:
    """The footer's drawing operators: the release at the left margin and "number / total" at the right.

    Marked as a pagination artifact, so that it stays out of the tagged content. Helvetica, one of
    the standard fonts every reader has, needs no embedding; its digits are 0.556 em wide, its
    space and slash 0.278 em, which places the right-aligned number."""
    left = MARGIN_MM["left"] * MM
    numbers = f"{number} / {total}"
    em = sum(0.556 if char.isdigit() else 0.278 for char in numbers)
    right = width - MARGIN_MM["right"] * MM - em * FOOTER_PT
    baseline = FOOTER_BASELINE_MM * MM
    label = f"posenc {release['version']}".replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return (
        f"Q q /Artifact <</Type /Pagination /Subtype /Footer>> BDC 0.333 g BT /PosencFooter {FOOTER_PT} Tf "
        f"{left:.2f} {baseline:.2f} Td ({label}) Tj ET BT /PosencFooter {FOOTER_PT} Tf "
        f"{right:.2f} {baseline:.2f} Td ({numbers}) Tj ET EMC Q\n"
    ).encode("ascii")


def _indirect(pdf, holder, key: str):
    """``holder[key]`` as an indirect object of ``pdf`` (only those can be copied to another PDF)."""
    value = holder[key]
    if not value.is_indirect:
        value = holder[key] = pdf.make_indirect(value)
    return value


def _as_list(value) -> list:
    """A PDF value that may be one object or an array of them, as a list."""
    import pikepdf

    if value is None:
        return []
    return list(value) if isinstance(value, pikepdf.Array) else [value]


def _number_tree_pairs(node) -> list:
    """The (key, value) pairs of a PDF number tree, in order."""
    nums = list(node.get("/Nums", []))
    pairs = list(zip(nums[::2], nums[1::2], strict=True))
    for kid in node.get("/Kids", []):
        pairs += _number_tree_pairs(kid)
    return pairs


def _move_keys(holder, offset: int, moved: set) -> None:
    """Move the parent-tree keys that a page holds, with its links' and the figures' (form XObjects,
    which pages share and forms nest), each object once."""
    import pikepdf

    for name in ("/StructParents", "/StructParent"):
        if name in holder:
            holder[name] = int(holder[name]) + offset
    for annotation in holder.get("/Annots", []):
        if annotation.objgen not in moved and "/StructParent" in annotation:
            moved.add(annotation.objgen)
            annotation.StructParent = int(annotation.StructParent) + offset
    resources = holder.get("/Resources")
    forms = resources.get("/XObject") if resources is not None else None
    for form in forms.values() if forms is not None else []:
        if form.objgen in moved or not isinstance(form, pikepdf.Stream) or form.get("/Subtype") != "/Form":
            continue
        moved.add(form.objgen)
        _move_keys(form, offset, moved)


def _rename_headers(elements: list, renamed: dict[str, str]) -> None:
    """Point the table cells' header references (ids in their attributes) at the renamed ids."""
    import pikepdf

    stack = list(elements)
    while stack:
        element = stack.pop()
        if not isinstance(element, pikepdf.Dictionary):
            continue
        for owner in _as_list(element.get("/A")):
            if isinstance(owner, pikepdf.Dictionary) and "/Headers" in owner:
                owner.Headers = pikepdf.Array([pikepdf.String(renamed.get(str(n), str(n))) for n in owner.Headers])
        stack += _as_list(element.get("/K"))


def destination_pages(pdf) -> dict[str, int]:
    """The 1-based page of each named destination of the joined ``pdf`` (a pikepdf document)."""
    numbers = {page.objgen: number for number, page in enumerate(pdf.pages, start=1)}
    names = list(pdf.Root.Names.Dests.Names) if "/Names" in pdf.Root else []
    return {str(name): numbers[dest[0].objgen] for name, dest in zip(names[::2], names[1::2], strict=True)}


@dataclass
class _Taken:
    """What the joined PDF takes from one part, copied into it and waiting to be put in order."""

    source: Any  # the part's own PDF, open until the joined one is written: copied streams read from it
    pages: list  # its pages, as copied
    destinations: dict[str, Any]
    links: list[tuple[int, Any, str]]  # each link to a destination: its page in the part, its annotation, the name
    top: list  # the top elements of its structure tree
    parent_pairs: list  # its parent tree's (key, value) pairs, keys not yet moved
    next_key: int  # its parent tree's next key: how far the next part's keys move
    ids: list[tuple[str, Any]]  # its structure elements' ids, renamed, and the elements
    outlines: list  # its top bookmarks


class Joiner:
    """The parts joined into one PDF.

    ``take`` copies one part into the joined PDF as soon as it is printed, so that the copying of
    the parts before it goes on while Chromium prints the next; ``finish`` puts them in order:
    their pages, bookmarks and destinations one after another, one structure tree, links inside
    the PDF turned into links to named destinations and every page's footer stamped.

    qpdf numbers the joined PDF's objects (in its object streams) in the order they were made, so
    the parts must be taken in one order in every build, whichever of them the cache held: the
    bytes are those of a clean print."""

    def __init__(self, count: int) -> None:
        import pikepdf

        self.out = pikepdf.new()
        self.taken: list[_Taken | None] = [None] * count

    def take(self, number: int, part: Part) -> None:
        """Copy ``part`` in as the ``number``-th part of the joined PDF (0 is the first)."""
        import pikepdf

        if self.taken[number] is not None:
            raise ValueError(f"part {number} ({part.name}) is taken twice")
        out = self.out
        source = pikepdf.open(io.BytesIO(part.pdf))
        # A page takes what it inherits from its page tree with it when it moves to another PDF;
        # Chromium's page trees hold nothing to inherit, and a copy here would silently lose it.
        nodes, inherited = [source.Root.Pages], set()
        while nodes:
            node = nodes.pop()
            inherited |= {"/Resources", "/MediaBox", "/CropBox", "/Rotate"}.intersection(node.keys())
            nodes += [kid for kid in node.get("/Kids", []) if kid.get("/Type") == "/Pages"]
        if inherited:
            raise SystemExit(f"part {part.name}: its page tree holds {sorted(inherited)} for its pages to inherit")
        # Pages first: qpdf copies a page only as a page, so a destination or structure element
        # copied later points at its page's copy only if that page was copied before it. The pages
        # join the page tree in ``finish``, in order.
        pages = [out.copy_foreign(page.obj) for page in source.pages]
        destinations = {}
        # Chromium names each destination after the id of the element it points at ("/id").
        if "/Dests" in source.Root:
            for name, dest in out.copy_foreign(_indirect(source, source.Root, "/Dests")).items():
                destinations[_destination_name(name)] = dest
        links = []
        for index, page in enumerate(pages):
            for annotation in page.get("/Annots", []):
                action = annotation.get("/A")
                uri = str(action.get("/URI", "")) if action is not None else ""
                if uri.startswith(DESTINATION):
                    links.append((index, annotation, unquote(uri.removeprefix(DESTINATION))))
        top, pairs, next_key, ids = [], [], 0, []
        if "/StructTreeRoot" in source.Root:
            tree = out.copy_foreign(_indirect(source, source.Root, "/StructTreeRoot"))
            top = _as_list(tree.get("/K"))
            if len(top) == 1 and top[0].get("/S") == "/Document":
                top = _as_list(top[0].get("/K"))
            if "/ParentTree" in tree:
                pairs = _number_tree_pairs(tree.ParentTree)
            next_key = int(tree.get("/ParentTreeNextKey", 0))
            if "/IDTree" in tree:
                renamed: dict[str, str] = {}
                stack = [tree.IDTree]
                while stack:
                    node = stack.pop()
                    names = list(node.get("/Names", []))
                    for name, element in zip(names[::2], names[1::2], strict=True):
                        # Chromium's ids count the DOM's nodes, which differ between two prints of one page.
                        renamed[str(name)] = f"part{number}-{len(renamed) + 1}"
                        element.ID = pikepdf.String(renamed[str(name)])
                        ids.append((renamed[str(name)], element))
                    stack += list(node.get("/Kids", []))
                _rename_headers(top, renamed)
        outlines = []
        if "/Outlines" in source.Root and "/First" in source.Root.Outlines:
            entry = out.copy_foreign(_indirect(source, source.Root, "/Outlines")).First
            outlines.append(entry)
            while "/Next" in entry:
                entry = entry.Next
                outlines.append(entry)
        self.taken[number] = _Taken(source, pages, destinations, links, top, pairs, next_key, ids, outlines)

    def finish(self, release: dict, title: str, built: datetime.date) -> tuple[bytes, dict[str, int]]:
        """The joined PDF, dated ``built``, and the 1-based page of each of its named destinations."""
        import pikepdf

        taken = [part for part in self.taken if part is not None]
        if len(taken) != len(self.taken):
            raise ValueError(f"parts {[n for n, part in enumerate(self.taken) if part is None]} were never taken")
        out = self.out
        for part in taken:
            out.pages.extend(pikepdf.Page(page) for page in part.pages)
        destinations = {name: dest for part in taken for name, dest in part.destinations.items()}
        missing, first = [], 1
        for part in taken:
            for index, annotation, name in part.links:
                if name not in destinations:
                    missing.append(f"page {first + index}: {name}")
                    continue
                annotation.A = pikepdf.Dictionary(S=pikepdf.Name.GoTo, D=pikepdf.String(name))
            first += len(part.pages)
        if missing:
            raise SystemExit("links to no destination in the joined PDF:\n" + "\n".join(missing[:20]))
        out.Root.Names = pikepdf.Dictionary(
            Dests=out.make_indirect(
                pikepdf.Dictionary(
                    Names=pikepdf.Array(
                        [item for name in sorted(destinations) for item in (pikepdf.String(name), destinations[name])]
                    )
                )
            )
        )
        self._stamp_footers(release)
        first_source = taken[0].source
        made_by = {key: first_source.docinfo[key] for key in ("/Creator", "/Producer") if key in first_source.docinfo}
        # Dated by the build's day, so that two builds of the same sources on the same day give the same bytes.
        stamp_date = f"D:{built:%Y%m%d}000000Z"
        out.docinfo = out.make_indirect(
            pikepdf.Dictionary(
                {**made_by, "/Title": pikepdf.String(title), "/CreationDate": stamp_date, "/ModDate": stamp_date}
            )
        )
        if "/Lang" in first_source.Root:
            out.Root.Lang = pikepdf.String(str(first_source.Root.Lang))
        if "/ViewerPreferences" in first_source.Root:
            out.Root.ViewerPreferences = out.copy_foreign(
                _indirect(first_source, first_source.Root, "/ViewerPreferences")
            )
        self._join_structure(taken)
        self._join_outlines(taken)
        out.Root.PageMode = pikepdf.Name.UseOutlines
        pages = destination_pages(out)
        buffer = io.BytesIO()
        # The file's id is a digest of its content, not of the time, so the bytes are reproducible. Object
        # streams compress the structure tree's many small objects: half the bytes (12 MB came to 6), and
        # less to write.
        out.save(buffer, deterministic_id=True, object_stream_mode=pikepdf.ObjectStreamMode.generate)
        return buffer.getvalue(), pages

    def _stamp_footers(self, release: dict) -> None:
        import pikepdf

        out = self.out
        font = out.make_indirect(
            pikepdf.Dictionary(
                Type=pikepdf.Name.Font,
                Subtype=pikepdf.Name.Type1,
                BaseFont=pikepdf.Name.Helvetica,
                Encoding=pikepdf.Name.WinAnsiEncoding,
            )
        )
        save = pikepdf.Stream(out, b"q\n")
        total = len(out.pages)
        for number, page in enumerate(out.pages, start=1):
            # The page's own drawing is wrapped in q ... Q, so the footer starts from the default state.
            page.contents_add(save, prepend=True)
            page.contents_add(pikepdf.Stream(out, _footer_stream(release, number, total, float(page.mediabox[2]))))
            if "/Resources" not in page.obj:
                page.obj.Resources = pikepdf.Dictionary()
            resources = page.obj.Resources
            fonts = pikepdf.Dictionary(dict(resources.get("/Font", pikepdf.Dictionary()).items()))
            fonts.PosencFooter = font  # a copy of the fonts: pages may share one font dictionary
            resources.Font = fonts

    def _join_structure(self, taken: list[_Taken]) -> None:
        """One structure tree (the tagged PDF's) for the joined pages: each part's top elements under
        one Document element, and its parent-tree keys, which pages, links and figures hold, moved
        past the keys of the parts before it. Element ids were renumbered per part when it was taken,
        so that they are unique and the same in every print."""
        import pikepdf

        out = self.out
        document = out.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.StructElem, S=pikepdf.Name.Document))
        kids, nums, ids = [], [], []
        offset = 0
        for part in taken:
            for kid in part.top:
                if isinstance(kid, pikepdf.Dictionary):
                    kid.P = document
                kids.append(kid)
            for key, value in part.parent_pairs:
                nums += [int(key) + offset, value]
            moved: set = set()
            for page in part.pages:
                _move_keys(page, offset, moved)
            offset += part.next_key
            ids += part.ids
        document.K = pikepdf.Array(kids)
        root = pikepdf.Dictionary(
            Type=pikepdf.Name.StructTreeRoot,
            K=document,
            ParentTree=out.make_indirect(pikepdf.Dictionary(Nums=pikepdf.Array(nums))),
            ParentTreeNextKey=offset,
        )
        if ids:
            names = [
                item
                for name, element in sorted(ids, key=lambda pair: pair[0])
                for item in (pikepdf.String(name), element)
            ]
            root.IDTree = out.make_indirect(pikepdf.Dictionary(Names=pikepdf.Array(names)))
        document.P = out.Root.StructTreeRoot = out.make_indirect(root)
        out.Root.MarkInfo = pikepdf.Dictionary(Marked=True)

    def _join_outlines(self, taken: list[_Taken]) -> None:
        """The parts' bookmarks one after another, each part's top entries at the top of the joined outline."""
        import pikepdf

        top = [entry for part in taken for entry in part.outlines]
        if not top:
            return
        out = self.out
        root = out.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.Outlines))
        for before, entry, after in zip([None, *top[:-1]], top, [*top[1:], None], strict=True):
            entry.Parent = root
            for key, neighbour in (("/Prev", before), ("/Next", after)):
                if neighbour is None:
                    if key in entry:
                        del entry[key]
                else:
                    entry[key] = neighbour
        root.First, root.Last = top[0], top[-1]
        # Each entry's own count is the open entries under it; the root's, all open entries.
        root.Count = sum(1 + max(int(entry.get("/Count", 0)), 0) for entry in top)
        out.Root.Outlines = root


def _joined_key(document: PrintDocument, parts: list[Part], built: datetime.date) -> str:
    """The joined PDF's cache key: a digest of its parts' sources, the release and the build day."""
    return hashlib.sha256(
        json.dumps([SCRIPT_DIGEST, document.title, document.release, str(built)], default=str).encode()
        + "".join(part.source for part in parts).encode()
    ).hexdigest()


def build_pdf(
    site: pathlib.Path,
    out: pathlib.Path,
    built: datetime.date,
    cache: pathlib.Path = CACHE,
    articles: list[Article] | None = None,
) -> list[str]:
    """Print the site into ``out`` and return the names of the parts printed (not cached)."""
    import pikepdf

    if not os.access(CHROMIUM, os.X_OK):
        raise SystemExit(f"Chromium not found at {CHROMIUM} (install Debian's chromium or set POSENC_CHROMIUM)")
    articles = printed_articles() if articles is None else articles
    printed: list[str] = []
    with Printer(site) as printer:
        # Chromium starts while its version is read and the pages are read, which takes about as
        # long; a print that finds every part kept has started it for nothing, beside the reading.
        printer.start()
        parts = PartCache(cache, site, chromium_version())
        document = PrintDocument.of_site(site, articles, built, parts)
        printing: dict[int, Future] = {}  # by id(part): the blank and the numbered contents share a name

        def request(part: Part) -> None:
            """Take ``part``'s PDF from the cache, or have it printed after those asked for before it."""
            kept = parts.get(part)
            if kept is None:
                printing[id(part)] = printer.submit(part.html)
            else:
                part.pdf = kept

        def receive(part: Part) -> Part:
            """``part`` with its PDF and length, waiting for its print if it is being printed."""
            if id(part) in printing:
                pdf, loaded = printing.pop(id(part)).result()
                parts.put(part, pdf, loaded)
                part.pdf, part.printed = pdf, True
                printed.append(part.name)
            if not part.pages:
                with pikepdf.open(io.BytesIO(part.pdf)) as opened:
                    part.pages = len(opened.pages)
            return part

        cover, chapters = document.cover, document.chapters
        # The contents' length does not depend on its numbers (each line keeps its height), so a
        # print with blank numbers (kept while the titles stay) says where the articles start.
        blank = document.contents({})
        for part in (cover, *chapters, blank):
            request(part)
        contents: Part | None = None
        pages: dict[str, int] = {}

        def number_the_contents() -> None:
            """Once every article's length is known, ask for the contents with its page numbers."""
            nonlocal contents
            waiting = [printing[id(part)] for part in (cover, blank, *chapters) if id(part) in printing]
            if contents is not None or not all(future.done() for future in waiting):
                return
            start = 1 + receive(cover).pages + receive(blank).pages
            for chapter in chapters:
                pages[chapter.name] = start
                start += receive(chapter).pages
            contents = document.contents(pages)
            request(contents)

        # Every part kept (a rebuild that changed no printed page): the joined PDF may be kept too.
        number_the_contents()
        ordered = [cover, contents, *chapters] if contents is not None and not printing else None
        joined_key = _joined_key(document, ordered, built) if ordered is not None else ""
        joined, record = cache / f"{joined_key}.joined.pdf", cache / f"{joined_key}.joined.json"
        try:
            pdf = joined.read_bytes() if ordered is not None else b""
            if pdf and hashlib.sha256(pdf).hexdigest() != json.loads(record.read_text(encoding="utf-8"))["pdf"]:
                pdf = b""  # a file cut short
        except (OSError, ValueError, KeyError):
            pdf = b""
        if not pdf:
            # The parts are copied into the joined PDF in one order (the cover, the articles, then
            # the contents, which waits for every article's length), each as soon as it and those
            # before it are here: while Chromium prints the others, the contents last of all.
            joiner = Joiner(2 + len(chapters))
            for number, part in [(0, cover), *enumerate(chapters, start=2)]:
                number_the_contents()
                joiner.take(number, receive(part))
            receive(blank)
            number_the_contents()
            assert contents is not None  # every article's length is known by now
            receive(contents)
            printer.stop()
            if contents.pages != blank.pages:
                raise SystemExit("the contents changed length when its page numbers were filled in")
            joiner.take(1, contents)
            pdf, found = joiner.finish(document.release, document.title, built)
            moved = {key: (number, found.get(key)) for key, number in pages.items() if found.get(key) != number}
            if moved:
                raise SystemExit(f"articles not on the pages the contents gives (contents, actual): {moved}")
            joined_key = _joined_key(document, [cover, contents, *chapters], built)
            joined, record = cache / f"{joined_key}.joined.pdf", cache / f"{joined_key}.joined.json"
            joined.write_bytes(pdf)
            record.write_text(json.dumps({"pdf": hashlib.sha256(pdf).hexdigest()}), encoding="utf-8")
        parts.used.add(joined_key)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(pdf)
    parts.prune()
    return printed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=pathlib.Path, default=ROOT / "site", help="the built site")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="the PDF to write")
    parser.add_argument("--cache", type=pathlib.Path, default=CACHE, help="where printed parts are kept")
    arguments = parser.parse_args()
    # The reproducible-builds convention: a build given the sources' time is dated by it, not by today.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    now = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch else None
    built = (now or datetime.datetime.now(datetime.timezone.utc)).date()
    printed = build_pdf(arguments.site, arguments.out, built, arguments.cache)
    print(f"printed {len(printed)} part(s): {', '.join(printed) or 'none, all cached'}")


if __name__ == "__main__":
    main()
