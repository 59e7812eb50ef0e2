"""Print the built site's articles into one PDF: ``python hooks/site_pdf.py --site site --out site/posenc.pdf``.

The articles of the nav's Learn and Implement sections (each derivation's page after the
Derivations index), then the References page, in nav order. Each page's ``<article>`` is read
from the finished site, where math and figures are already rendered, and joined behind a cover
and a table of contents; headless Chromium (Playwright) prints it with bookmarks, tags and page
numbers. Ids are prefixed per page, links to unprinted pages go to the cited release, and
scripts and source code are left out.
Design history: docs/design-notes.md#pdf
"""

from __future__ import annotations

import argparse
import datetime
import html
import io
import os
import pathlib
import posixpath
import sys
from dataclasses import dataclass
from urllib.parse import unquote, urljoin, urlsplit

import yaml
from bs4 import BeautifulSoup, Comment
from mkdocs.structure.files import File

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hooks"))
# The build's own reading of CITATION.cff, of the address to cite and of the derivation pages.
from site_build import citations, derivation_pages  # noqa: E402
from site_build.citations import ARTICLE_SECTIONS  # noqa: E402 - the nav sections whose pages are articles

from posenc.site.derivations import ordered  # noqa: E402

# After the articles, the back matter.
BACK_MATTER = ("references.md",)
CHROMIUM = os.environ.get("POSENC_CHROMIUM", "/usr/bin/chromium")
# The print document is served to Chromium from memory under this origin, the site's files
# beside it; Playwright answers every request, so nothing leaves the machine.
PRINT_ORIGIN = "http://print.invalid"
PRINT_PATH = "/posenc-print.html"
PAGE_WIDTH_MM, PAGE_HEIGHT_MM = 210, 297  # A4
MARGIN_MM = {"top": 16, "bottom": 18, "left": 16, "right": 16}
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
.posenc-print-article, .posenc-print-contents {{ break-before: page; }}
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
        return self.url.strip("/").replace("/", "-") or "home"


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
                        for derivation in ordered()
                    ]
        elif value in BACK_MATTER:
            back.append(article("", name, value))
    return articles + back


def _page_soup(site: pathlib.Path, page: Article) -> BeautifulSoup:
    return BeautifulSoup((site / page.dest).read_text(encoding="utf-8"), "html.parser")


def _outside_svg(tag) -> bool:
    return tag.name != "svg" and tag.find_parent("svg") is None


def _print_article(soup: BeautifulSoup, page: Article, keys: dict[str, str], cited_root: str) -> str:
    """The page's article as a section of the print document, its ids and links rewritten."""
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
            link["href"] = f"#{key}--{fragment}"
        else:
            link["href"] = f"#{key}"
    kind = "posenc-print-nested" if page.nested else "posenc-print-article"
    return f'<section class="{kind}" id="{page.key}">{article.decode_contents()}</section>'


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
    the page numbers are known; the line keeps its height, so no page moves when they are filled in)."""
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
            f'<li><a href="#{page.key}">{html.escape(page.title)}</a>'
            f'<span class="leader"></span><span>{number}&nbsp;</span></li>'
        )
    lines.append("</ol></section>")
    return "".join(lines)


@dataclass
class PrintDocument:
    """The print document's parts: everything but the page numbers of the contents."""

    release: dict
    cited_root: str
    built: datetime.date
    articles: list[Article]
    stylesheets: list[str]  # site-relative
    sections: list[str]

    @classmethod
    def of_site(cls, site: pathlib.Path, articles: list[Article], built: datetime.date) -> PrintDocument:
        config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
        cited_root = citations.cited_root(config["site_url"])
        keys = {page.url: page.key for page in articles}
        stylesheets: list[str] = []
        sections = []
        for page in articles:
            soup = _page_soup(site, page)
            stylesheets += [sheet for sheet in _stylesheets(soup, page) if sheet not in stylesheets]
            sections.append(_print_article(soup, page, keys, cited_root))
        return cls(citations.release(), cited_root, built, articles, stylesheets, sections)

    def html(self, pages: dict[str, int] | None = None) -> str:
        """The document, its contents numbered with ``pages`` (each article's first page)."""
        links = "".join(f'<link rel="stylesheet" href="/{sheet}">' for sheet in self.stylesheets)
        return (
            '<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(self.release['title'])}</title>{links}<style>{PRINT_CSS}</style></head>"
            '<body dir="ltr" data-md-color-scheme="default" data-md-color-primary="indigo" '
            'data-md-color-accent="indigo"><div class="md-typeset">'
            + _cover(self.release, self.built, self.cited_root, self.articles)
            + _contents(self.articles, pages or {})
            + "".join(self.sections)
            + "</div></body></html>"
        )


def _footer(release: dict) -> str:
    return (
        '<div style="font-size:8px;width:100%;margin:0 16mm;display:flex;justify-content:space-between;'
        'color:#555;font-family:sans-serif">'
        f"<span>posenc {html.escape(release['version'])}</span>"
        '<span><span class="pageNumber"></span> / <span class="totalPages"></span></span></div>'
    )


def _print(browser, site: pathlib.Path, document: str, footer: str) -> bytes:
    """Chromium's PDF of ``document``, the site's files served beside it."""
    site = site.resolve()

    def answer(route) -> None:
        url = urlsplit(route.request.url)
        if f"{url.scheme}://{url.netloc}" != PRINT_ORIGIN:
            route.abort()
            return
        if url.path == PRINT_PATH:
            route.fulfill(body=document, content_type="text/html; charset=utf-8")
            return
        file = (site / unquote(url.path).lstrip("/")).resolve()
        if file.is_relative_to(site) and file.is_file():
            route.fulfill(path=file)
        else:
            route.fulfill(status=404, body="")

    width_px = round((PAGE_WIDTH_MM - MARGIN_MM["left"] - MARGIN_MM["right"]) / 25.4 * 96)
    context = browser.new_context(color_scheme="light", viewport={"width": width_px, "height": 1000})
    try:
        page = context.new_page()
        page.route("**/*", answer)
        page.emulate_media(media="print")
        page.goto(PRINT_ORIGIN + PRINT_PATH, wait_until="load")
        page.evaluate("document.fonts.ready.then(() => true)")
        page.evaluate(FIT_WIDE_BLOCKS)
        return page.pdf(
            format="A4",
            print_background=True,
            outline=True,
            tagged=True,
            display_header_footer=True,
            header_template="<span></span>",
            footer_template=footer,
            margin={side: f"{mm}mm" for side, mm in MARGIN_MM.items()},
        )
    finally:
        context.close()


def destination_pages(pdf: bytes) -> dict[str, int]:
    """The 1-based page of each named destination of ``pdf``."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    # Chromium names each destination after the id of the element it points at, as a PDF name ("/id").
    return {
        name.removeprefix("/"): reader.get_destination_page_number(dest) + 1
        for name, dest in reader.named_destinations.items()
    }


def build_pdf(site: pathlib.Path, out: pathlib.Path, built: datetime.date) -> None:
    from playwright.sync_api import sync_playwright

    if not os.access(CHROMIUM, os.X_OK):
        raise SystemExit(f"Chromium not found at {CHROMIUM} (install Debian's chromium or set POSENC_CHROMIUM)")
    articles = printed_articles()
    footer = _footer(citations.release())
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP * ~NOTFOUND"],
        )
        try:
            # Twice: the first print tells on which page each article starts, for the contents.
            document = PrintDocument.of_site(site, articles, built)
            first = destination_pages(_print(browser, site, document.html(), footer))
            missing = [page.key for page in articles if page.key not in first]
            if missing:
                raise SystemExit(f"no PDF destination for the articles {missing}")
            pdf = _print(browser, site, document.html({page.key: first[page.key] for page in articles}), footer)
        finally:
            browser.close()
    if destination_pages(pdf) != first:
        raise SystemExit("the page numbers moved when the contents were filled in")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(pdf)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=pathlib.Path, default=ROOT / "site", help="the built site")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="the PDF to write")
    arguments = parser.parse_args()
    build_pdf(arguments.site, arguments.out, datetime.datetime.now(datetime.timezone.utc).date())


if __name__ == "__main__":
    main()
