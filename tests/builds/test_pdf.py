"""The PDF of the whole site (``make pdf`` prints it into site/posenc.pdf; ``make test`` runs it first).

Every article of the nav's Learn and Implement sections in nav order, math set by KaTeX rather
than left as TeX, figures as vector text, bookmarks, links inside the PDF that land on their
targets, and the release, build date and address to cite on the cover. The bookmarks, links and
destinations are read with pypdf; the text of the pages with PDFium (pypdfium2), the engine of
Chromium's PDF viewer, which read the 159 pages in 0.9 s where pypdf's pure-Python extraction
took 46 s on the 2-core machine the suite is timed on.
"""

from __future__ import annotations

import datetime
import html
import re

import pypdf
import pypdfium2
import pytest
import yaml

import posenc.site.derivations  # registers every derivation, which the cover counts
from posenc.site.registry import REGISTRY
from support import ROOT, SITE

PDF = SITE / "posenc.pdf"
NAV = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
CITATION = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
# TeX that would mean a formula reached the PDF unrendered.
RAW_TEX = re.compile(r"\\\(|\\\[|\$\$|\\frac|\\omega|\\sum|\\theta|\\mathrm|\\left")
H1 = re.compile(r"<h1[^>]*>(.*?)</h1>", re.S)
HEADERLINK = re.compile(r'<a class="(?:headerlink|anchor-link)"[^>]*>.*?</a>', re.S)  # permalink symbols, not printed


def _built_page(src: str) -> str:
    stem = re.sub(r"\.(md|ipynb)$", "", src)
    folder = stem[: -len("index")] if stem.endswith("index") else stem + "/"
    return (SITE / folder / "index.html").read_text(encoding="utf-8")


def _plain(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def _squeezed(text: str) -> str:
    """Text without white space: a PDF's extracted text breaks lines where the page did. PDFium
    reports a hyphen at which a line broke as U+0002, which is put back as the hyphen it was."""
    return re.sub(r"\s+", "", text).replace("\x02", "-")


@pytest.fixture(scope="module")
def reader():
    if not PDF.is_file():
        pytest.fail(f"{PDF.relative_to(ROOT)} is not built: run `make pdf` (or `make test`, which prints it first)")
    return pypdf.PdfReader(PDF)


@pytest.fixture(scope="module")
def page_texts(reader) -> list[str]:
    document = pypdfium2.PdfDocument(PDF)
    try:
        texts = [document[number].get_textpage().get_text_bounded() for number in range(len(document))]
    finally:
        document.close()
    assert len(texts) == len(reader.pages)
    return texts


@pytest.fixture(scope="module")
def destinations(reader) -> dict[str, int]:
    """The 0-based page of each named destination (Chromium names them after the element ids)."""
    return {
        name.removeprefix("/"): reader.get_destination_page_number(dest)
        for name, dest in reader.named_destinations.items()
    }


def _articles() -> list[tuple[str, str]]:
    """(nav title, source) of every page under Learn and Implement, in nav order."""
    return [
        next(iter(entry.items()))
        for item in NAV
        for name, value in item.items()
        if name in ("Learn", "Implement")
        for entry in value
    ]


def test_every_article_is_bookmarked_in_nav_order_and_starts_its_pages(reader, page_texts):
    articles = _articles()
    assert len(articles) >= 10, "the nav's Learn and Implement sections were not found"
    titles = [_plain(HEADERLINK.sub("", H1.search(_built_page(src))[1])) for _, src in articles]
    top_level = [entry for entry in reader.outline if not isinstance(entry, list)]
    # Chromium joins a heading's wrapped lines into its bookmark without a space.
    outline_titles = [_squeezed(entry.title) for entry in top_level]
    assert outline_titles[:2] == [_squeezed(CITATION["title"]), "Contents"]
    assert outline_titles[2 : 2 + len(titles)] == [_squeezed(title) for title in titles]
    starts = [reader.get_destination_page_number(entry) for entry in top_level[2 : 2 + len(titles)]]
    assert starts == sorted(set(starts)), "two articles share a first page, or the order is not the nav's"
    for title, start in zip(titles, starts, strict=True):
        assert _squeezed(title) in _squeezed(page_texts[start]), f"{title!r} is not on its first page {start + 1}"
    assert any(isinstance(entry, list) for entry in reader.outline), "no article has its sections bookmarked"
    assert "Derivations" in titles and len(reader.pages) > 2 * len(titles)
    assert len(reader.pages) < 1000


def test_cover_names_release_build_date_and_address_to_cite(page_texts):
    cover = " ".join(page_texts[0].split())
    assert cover.startswith(" ".join(CITATION["title"].split()))
    # What the document is, with its counts taken from the nav and the derivation registry.
    what = re.search(
        r"The posenc site on transformer positional encoding, printed as one document: (.*?) Version", cover
    )
    assert what, "the cover does not say what the document is"
    assert f"its {len(_articles())} chapters" in what[1] and f"all {len(REGISTRY)} derivations" in what[1]
    released = datetime.date.fromisoformat(str(CITATION["date-released"]))
    assert f"Version {posenc.__version__}, released {released.day} {released:%B} {released.year}" in cover
    built = re.search(r"built on (\d{1,2} [A-Z][a-z]+ \d{4})", cover)
    assert built, "the cover does not say when the PDF was built"
    built_date = datetime.datetime.strptime(built[1], "%d %B %Y").date()
    assert abs(built_date - datetime.date.fromtimestamp(PDF.stat().st_mtime)) <= datetime.timedelta(days=1)
    assert f"{CITATION['url'].rstrip('/')}/{posenc.__version__}/" in _squeezed(page_texts[0])


def test_math_is_set_by_katex_and_no_tex_is_left(reader, page_texts):
    raw = [(number + 1, match[0]) for number, text in enumerate(page_texts) for match in RAW_TEX.finditer(text)]
    assert not raw, f"unrendered TeX on pages (page, text): {raw[:10]}"
    with_katex = 0
    for page in reader.pages:
        fonts = page.get("/Resources", {}).get("/Font", {})
        names = [str(font.get_object().get("/BaseFont", "")) for font in fonts.values()]
        with_katex += any("KaTeX" in name for name in names)
    assert with_katex > len(reader.pages) / 2, f"only {with_katex} pages use KaTeX's fonts"


def test_figures_are_vector_text(page_texts):
    """Each figure's SVG is in the PDF: the tick labels of the home page's figure are PDF text."""
    svg = (SITE / "figures" / "vector-width8.svg").read_text(encoding="utf-8")
    labels = [_plain(label) for label in re.findall(r"<text\b[^>]*>(.*?)</text>", svg, re.S)]
    words = [label for label in labels if re.fullmatch(r"[A-Za-z]{4,}(?: [A-Za-z]{2,})*", label)]
    assert words, "the figure has no word in its text"
    document = _squeezed(" ".join(page_texts))
    assert all(_squeezed(word) in document for word in words), words


def test_internal_links_land_inside_the_pdf(reader, destinations):
    internal = external = 0
    problems = []
    for number, page in enumerate(reader.pages, start=1):
        for annotation in page.get("/Annots", []) or []:
            annotation = annotation.get_object()
            if annotation.get("/Subtype") != "/Link":
                continue
            action = annotation.get("/A", {})
            target = annotation.get("/Dest", action.get("/D"))
            if target is not None:
                internal += 1
                if str(target).removeprefix("/") not in destinations:
                    problems.append(f"page {number}: link to missing destination {target}")
            else:
                external += 1
                uri = str(action.get("/URI", ""))
                if not uri.startswith(("https://", "http://", "mailto:")) or ".invalid" in uri:
                    problems.append(f"page {number}: link to {uri!r} leaves the PDF for nowhere")
    assert not problems, "\n".join(problems[:20])
    assert internal > 200 and external > 0, (internal, external)


def test_derivation_links_land_on_the_derivations_pages(reader, destinations):
    """Each derivation's page is printed after the Derivations index, before the References; a link
    such as {{ ref: kernel }} lands on it, and the index's anchors (#kernel) stay destinations too."""
    first, last = destinations["derivations"], destinations["references"]
    pages = [f"derivations-{identifier}" for identifier in REGISTRY]
    rows = [f"derivations--{identifier}" for identifier in REGISTRY]
    assert all(first <= destinations[name] < last for name in pages + rows)
    assert [destinations[name] for name in pages] == sorted(destinations[name] for name in pages)
    linked = set()
    for page in reader.pages:
        for annotation in page.get("/Annots", []) or []:
            annotation = annotation.get_object()
            target = annotation.get("/Dest", annotation.get("/A", {}).get("/D"))
            if target is not None:
                linked.add(str(target).removeprefix("/"))
    assert "derivations-kernel" in linked and "derivations-rope-relative" in linked


MM = 72 / 25.4  # PDF points per millimetre
MARGIN_TOP, MARGIN_BOTTOM = 16 * MM, 18 * MM  # hooks/site_pdf.py's MARGIN_MM


def _filled(page) -> float:
    """How far down its text area a page's content reaches, from 0 (empty) to 1 (to the bottom margin).

    The lowest edge of any text, path or image on the page, leaving out the footer (in the bottom
    margin) and the page's background (a box as tall as the whole text area)."""
    _, height = page.get_size()
    area = height - MARGIN_TOP - MARGIN_BOTTOM
    bottoms = []
    for item in page.get_objects(max_depth=8):
        left, bottom, right, top = item.get_bounds()
        if bottom < MARGIN_BOTTOM - 1 or top - bottom > 0.9 * area or (top - bottom < 0.01 and right - left < 0.01):
            continue
        bottoms.append(bottom)
    return (height - MARGIN_TOP - min(bottoms)) / area if bottoms else 0.0


def test_no_page_is_left_half_empty_before_a_table(reader, page_texts):
    """A table that does not fit where it falls breaks between rows instead of moving whole to the
    next page, so no page inside a chapter (the cover and the contents are chapters of their own)
    is left more than half blank before a page that opens with a table."""
    starts = {reader.get_destination_page_number(entry) for entry in reader.outline if not isinstance(entry, list)}
    last_pages = {start - 1 for start in starts if start > 0} | {len(reader.pages) - 1}
    document = pypdfium2.PdfDocument(PDF)
    try:
        fills = [_filled(document[number]) for number in range(len(document))]
    finally:
        document.close()
    assert max(fills) > 0.9 and min(fills) < 0.5, "the measure of a page's fill is off: no full page or no short one"
    headers = {header[:30] for _, src in _articles() for header, _ in _table_rows(src)}
    assert headers, "no article has a table: the headers are not read"
    squeezed = [_squeezed(text) for text in page_texts]
    opens_with_table = {
        number for number, text in enumerate(squeezed) if any(key in text[: len(key) + 40] for key in headers)
    }
    half_empty = [
        (number + 1, round(fill, 2))
        for number, fill in enumerate(fills)
        if fill < 0.5 and number not in last_pages and number + 1 in opens_with_table
    ]
    assert not half_empty, f"pages (page, fill) less than half filled before a table: {half_empty}"


def _table_rows(src: str) -> list[tuple[str, list[str]]]:
    """(header, body rows) of each table of an article, as squeezed text."""
    # The build gives a wide table's parts attributes (its roles and labels for a phone's cards).
    tables = re.findall(r"<table\b[^>]*>(.*?)</table>", _built_page(src), re.S)
    found = []
    for table in tables:
        head = re.search(r"<thead\b[^>]*>(.*?)</thead>", table, re.S)
        rows = re.findall(r"<tr\b[^>]*>(.*?)</tr>", table.split("</thead>")[-1], re.S)
        if head and rows:
            found.append((_squeezed(_plain(head[1])), [_squeezed(_plain(row)) for row in rows]))
    return found


def test_a_table_that_runs_onto_the_next_page_repeats_its_header_there(page_texts):
    """A long table breaks between rows instead of moving whole to the next page, and each page it
    runs onto starts with its header row again. Rows are found by their first cell's text."""
    squeezed = [_squeezed(text) for text in page_texts]
    spanning = 0
    for _, src in _articles():
        tables = _table_rows(src)
        for index, (header, rows) in enumerate(tables):
            key = header[:30]
            first = next((number for number, text in enumerate(squeezed) if key in text), None)
            if first is None:
                continue  # the table's header wraps differently in print; nothing to locate it by
            # A row is looked for only before the article's next table, which may share first cells.
            following = tables[index + 1][0][:30] if index + 1 < len(tables) else None
            own = []
            for number in range(first, len(squeezed)):
                text = squeezed[number][squeezed[number].index(key) :] if number == first else squeezed[number]
                if following and following in text:
                    own.append(text.split(following)[0])
                    break
                own.append(text)
            cells = [row[:12] for row in rows]
            pages = [next((first + n for n, text in enumerate(own) if cell and cell in text), None) for cell in cells]
            last = max((page for page in pages if page is not None), default=first)
            if last > first:
                spanning += 1
                for page in range(first + 1, last + 1):
                    assert key in squeezed[page], (
                        f"{src}: the table headed {header[:40]!r} runs onto page {page + 1} without its header"
                    )
    assert spanning, "no table runs over a page break: this test checked nothing"


def _article_starts(reader) -> list[int]:
    """The 0-based first page of each top-level bookmark (cover, contents, then the articles)."""
    return [reader.get_destination_page_number(entry) for entry in reader.outline if not isinstance(entry, list)]


def test_every_page_is_numbered_in_the_footer(page_texts):
    """The parts are printed one by one and joined, so the numbers are the joined document's."""
    total = len(page_texts)
    for number, text in enumerate(page_texts, start=1):
        footer = re.search(rf"posenc {re.escape(posenc.__version__)}\s+(?<!\d)(\d+) / (\d+)\s*$", text)
        assert footer and (int(footer[1]), int(footer[2])) == (number, total), (number, text[-80:])


def test_the_contents_gives_the_page_each_article_starts_on(reader, page_texts):
    starts = _article_starts(reader)
    contents_pages = [number for number in range(starts[1], starts[2])]
    listed = []
    for number in contents_pages:
        for line in page_texts[number].splitlines():
            found = re.search(r"(\d+)\s*$", line)
            if found and not re.search(r"\d+ / \d+\s*$", line):
                listed.append(int(found[1]))
    assert listed == [start + 1 for start in starts[2:]], "the contents' page numbers are not where the articles start"


def test_each_article_has_its_sections_bookmarked_within_its_pages(reader):
    outline = reader.outline
    starts = _article_starts(reader) + [len(reader.pages)]
    top = [index for index, entry in enumerate(outline) if not isinstance(entry, list)]
    with_sections = 0
    for position, index in enumerate(top):
        children = outline[index + 1] if index + 1 < len(outline) and isinstance(outline[index + 1], list) else []
        first, end = starts[position], starts[position + 1]

        def pages(entries):
            for entry in entries:
                if isinstance(entry, list):
                    yield from pages(entry)
                else:
                    yield reader.get_destination_page_number(entry)

        inside = list(pages(children))
        assert all(first <= page < max(end, first + 1) for page in inside), (outline[index].title, first, end, inside)
        with_sections += bool(inside)
    assert with_sections >= len(_articles()), "an article has no section bookmarked"


def test_links_between_articles_land_in_the_other_article(reader, destinations):
    """Each article is printed on its own, so a link into another article is made when they are joined."""
    starts = _article_starts(reader) + [len(reader.pages)]

    def article_of(page: int) -> int:
        return max(index for index, start in enumerate(starts) if start <= page)

    across = 0
    for number, page in enumerate(reader.pages):
        for annotation in page.get("/Annots", []) or []:
            annotation = annotation.get_object()
            target = annotation.get("/Dest", annotation.get("/A", {}).get("/D"))
            if target is None:
                continue
            landing = destinations[str(target).removeprefix("/")]
            across += article_of(landing) != article_of(number)
    assert across > 50, f"only {across} links land in another article"


def test_metadata_names_the_release_and_the_build_day(reader, page_texts):
    info = reader.metadata
    assert " ".join(str(info.title).split()) == " ".join(CITATION["title"].split())
    built = re.search(r"built on (\d{1,2} [A-Z][a-z]+ \d{4})", " ".join(page_texts[0].split()))
    day = datetime.datetime.strptime(built[1], "%d %B %Y").date()
    assert str(info["/CreationDate"]).startswith(f"D:{day:%Y%m%d}")


def test_the_joined_pdf_is_tagged_with_one_structure_tree(reader):
    """Each part's structure tree is joined into one: every page's marked content and every link
    finds its structure elements under its own key of the one parent tree."""
    root = reader.trailer["/Root"]
    assert root["/MarkInfo"]["/Marked"] and root["/Lang"]
    tree = root["/StructTreeRoot"]
    assert tree["/K"].get_object()["/S"] == "/Document"
    keys = [int(key) for key in tree["/ParentTree"]["/Nums"][::2]]
    assert len(keys) == len(set(keys)) and max(keys) < tree["/ParentTreeNextKey"]
    wanted = {}  # each key by the object that holds it: pages, links and the figures' forms
    holders = list(reader.pages)
    while holders:
        holder = holders.pop()
        for name in ("/StructParents", "/StructParent"):
            if name in holder:
                wanted[id(holder)] = int(holder[name])
        holders += [annotation.get_object() for annotation in holder.get("/Annots", []) or []]
        forms = holder.get("/Resources", {}).get("/XObject", {})
        holders += [form.get_object() for form in forms.values() if id(form.get_object()) not in wanted]
    # Every holder finds its key. The converse need not hold: Chromium's own print of a page whose
    # table links break across pages already lists parent-tree keys that no annotation holds (the
    # model atlas's part does), and such a key points at nothing a reader meets.
    assert len(set(wanted.values())) == len(wanted), "two holders share a parent-tree key"
    assert set(wanted.values()) <= set(keys), sorted(set(wanted.values()) - set(keys))[:20]
