"""The PDF's cache of printed parts (hooks/site_pdf.py): a part is printed again exactly when
something that decides its bytes changed, and the joined PDF is the same as a clean print's.

Each test prints a copy of the built site, cut to two articles and the References so that a
reprint of every part takes seconds, into a cache of its own, and counts the parts printed."""

from __future__ import annotations

import concurrent.futures
import datetime
import hashlib
import io
import pathlib
import re
import shutil

import pypdf
import pypdfium2
import pytest

import site_pdf
from support import SITE

BUILT = datetime.date(2026, 1, 2)
KEPT = ("guide", "rope", "references")


@pytest.fixture
def site(tmp_path):
    if not (SITE / "index.html").is_file():
        pytest.fail("site/ is not built: run `make` first")
    copy = tmp_path / "site"
    shutil.copytree(SITE, copy, ignore=shutil.ignore_patterns("posenc.pdf"))
    return copy


@pytest.fixture
def articles():
    kept = [page for page in site_pdf.printed_articles() if page.key in KEPT]
    assert [page.key for page in kept] == list(KEPT)
    return kept


def build(site, articles, cache, name="out.pdf"):
    out = site.parent / name
    # Printed in a thread of its own: a worker that also runs the browser tests has Playwright's
    # event loop in this thread, beside which Playwright's sync API refuses to start.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as thread:
        printed = thread.submit(site_pdf.build_pdf, site, out, BUILT, cache=cache, articles=articles).result()
    return printed, out.read_bytes()


def texts(pdf: bytes) -> list[str]:
    document = pypdfium2.PdfDocument(pdf)
    try:
        return [document[number].get_textpage().get_text_bounded() for number in range(len(document))]
    finally:
        document.close()


def test_an_unchanged_rebuild_prints_nothing_and_two_clean_prints_agree(site, articles, tmp_path):
    printed, first = build(site, articles, tmp_path / "cache")
    # The cover, each article and the contents twice (blank, then numbered).
    assert sorted(printed) == sorted(["cover", *KEPT, "contents", "contents"])
    again, second = build(site, articles, tmp_path / "cache")
    assert again == [] and second == first
    clean, third = build(site, articles, tmp_path / "another-cache")
    assert len(clean) == len(printed) and third == first, "two clean prints differ"


def test_an_edited_article_reprints_that_article_and_renumbers(site, articles, tmp_path):
    cache = tmp_path / "cache"
    _, before = build(site, articles, cache)
    guide = site / "guide" / "index.html"
    marker = "Inserted paragraph for the cache test"
    # Enough paragraphs to push the guide onto more pages, so the articles after it move.
    inserted = "".join(f"<p>{marker} {number}.</p>" for number in range(120))
    guide.write_text(guide.read_text(encoding="utf-8").replace("</h1>", "</h1>" + inserted, 1), encoding="utf-8")
    printed, after = build(site, articles, cache)
    assert "guide" in printed and "rope" not in printed and "references" not in printed and "cover" not in printed
    assert printed.count("contents") == 1, "the contents' length did not change, so its blank print is cached"
    assert after != before and marker in " ".join(texts(after))
    starts_before, starts_after = _starts(before), _starts(after)
    assert starts_after["rope"] > starts_before["rope"], "the article after the edited one did not move"
    assert _contents_numbers(texts(after)) == [starts_after[key] for key in KEPT]
    # The parts kept and the parts printed again join into the bytes a clean print of the edited pages gives.
    _, clean = build(site, articles, tmp_path / "clean-cache", name="clean.pdf")
    assert clean == after, "a print from the cache differs from a clean print of the same pages"


def _starts(pdf: bytes) -> dict[str, int]:
    """The first page of each kept article."""
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    return {
        name.removeprefix("/"): reader.get_destination_page_number(dest) + 1
        for name, dest in reader.named_destinations.items()
        if name.removeprefix("/") in KEPT
    }


def _contents_numbers(page_texts: list[str]) -> list[int]:
    """The page numbers printed on the contents page, in order."""
    lines = page_texts[1].splitlines()
    # Every line that ends in a number but the footer's "page / pages".
    return [
        int(line.split()[-1]) for line in lines if re.search(r"\d\s*$", line) and not re.search(r"\d+ / \d+\s*$", line)
    ]


def test_an_edited_stylesheet_reprints_every_part_that_loads_it(site, articles, tmp_path):
    cache = tmp_path / "cache"
    _, before = build(site, articles, cache)
    sheet = next((site / "assets" / "stylesheets").glob("main.*.min.css"))
    # Important, or the theme's more specific rule keeps the headings' colour and the bytes the same.
    sheet.write_text(sheet.read_text(encoding="utf-8") + "\nh1{color:#b00000!important}\n", encoding="utf-8")
    printed, after = build(site, articles, cache)
    assert sorted(printed) == sorted(["cover", *KEPT, "contents", "contents"]), printed
    assert after != before


def test_an_edited_script_or_chromium_reprints_everything(site, articles, tmp_path, monkeypatch):
    # The digest is the script file's: editing the file changes it, as the patch below does.
    assert site_pdf.SCRIPT_DIGEST == hashlib.sha256(pathlib.Path(site_pdf.__file__).read_bytes()).hexdigest()
    cache = tmp_path / "cache"
    build(site, articles, cache)
    monkeypatch.setattr(site_pdf, "SCRIPT_DIGEST", hashlib.sha256(b"another script").hexdigest())
    printed, _ = build(site, articles, cache)
    assert len(printed) == len(KEPT) + 3
    version = site_pdf.chromium_version()
    monkeypatch.setattr(site_pdf, "chromium_version", lambda: version + " (another build)")
    printed, _ = build(site, articles, cache)
    assert len(printed) == len(KEPT) + 3


def _part_files(cache) -> list:
    return sorted(file for file in cache.glob("*.pdf") if not file.name.endswith(".joined.pdf"))


def test_a_damaged_cache_entry_is_printed_again(site, articles, tmp_path):
    cache = tmp_path / "cache"
    _, before = build(site, articles, cache)
    for damaged in [_part_files(cache)[0], *cache.glob("*.joined.pdf")]:
        damaged.write_bytes(damaged.read_bytes()[:100])
    printed, after = build(site, articles, cache)
    assert len(printed) == 1 and after == before
    # The cache keeps only what the last print used: its parts and one joined PDF.
    assert len(_part_files(cache)) == len(KEPT) + 3 and len(list(cache.glob("*.joined.pdf"))) == 1
