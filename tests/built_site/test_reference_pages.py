"""The built References, Cite and Derivations pages read as files: formatted entries with their
records folded under them, and the Derivations index grouped under one heading per topic."""

from __future__ import annotations

import html
import re

from site_build import citations

from support import ROOT

BIBTEX_BLOCK = re.compile(r'<details class="posenc-bibtex">\s*<summary>BibTeX</summary>\s*<div class="highlight">')


def _article(site_dir, path: str) -> str:
    page = (site_dir / path / "index.html").read_text(encoding="utf-8")
    return page[page.index("<article") : page.index("</article>")]


def _text(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def test_every_reference_is_a_heading_an_entry_and_a_folded_record(site_dir):
    """Each entry's heading is followed by its formatted entry; its record is folded (closed) under
    "BibTeX", a code block the theme gives a copy button, and holds the record's key."""
    article = _article(site_dir, "references")
    source = (ROOT / "docs" / "references.md").read_text(encoding="utf-8")
    keys = re.findall(r"^```bibtex\n@\w+\{([^,]+),", source, re.M)
    sections = re.split(r"<h3 id=", article)[1:]
    assert [re.match(r'"([^"]+)"', section)[1] for section in sections] == keys
    for key, section in zip(keys, sections, strict=True):
        # (the marker that ends what the first paint waits for may stand between them)
        after_heading = re.sub(
            r"^<span id=\"posenc-first-screen-end\" hidden></span>", "", section.split("</h3>", 1)[1].lstrip()
        )
        after_heading = after_heading.lstrip()
        assert after_heading.startswith(f'<p class="{citations.REFERENCE_CLASS}">'), key
        assert len(BIBTEX_BLOCK.findall(section)) == 1 and "<details open" not in section, key
        folded = section[section.index("<details") :]
        assert f"{{{key}," in _text(folded), key


def test_the_cite_page_folds_each_articles_record_and_shows_the_sites(site_dir):
    article = _article(site_dir, "cite")
    entries = article.count(f'<p class="{citations.REFERENCE_CLASS}">')
    folded = len(BIBTEX_BLOCK.findall(article))
    # the site's entry with its record open, then one entry per article with its record folded
    assert entries == folded + 1 and folded >= 10
    assert "<table" not in article.split('id="one-derivation"')[0].split('id="one-article"')[1]


def test_the_derivations_index_has_a_heading_per_topic_over_that_topics_derivations(site_dir):
    """In the order of TOPICS, each topic's heading (anchored ``topic-NAME``, listed in the page's
    table of contents) stands over exactly the derivations of that topic, in their order."""
    from posenc.site.derivations import TOPICS, ordered

    page = (site_dir / "derivations" / "index.html").read_text(encoding="utf-8")
    article = _article(site_dir, "derivations")
    headings = re.findall(r'<h2 id="([^"]+)">(.*?)<a class="headerlink"', article)
    expected = [(f"topic-{topic.replace('_', '-')}", heading) for topic, heading in TOPICS.items()]
    assert [(anchor, _text(title)) for anchor, title in headings] == expected
    parts = re.split(r'<h2 id="topic-[^"]+">', article)[1:]
    for (topic, _), part in zip(TOPICS.items(), parts, strict=True):
        ids = re.findall(r'<a href="([^"/]+)/" id="\1">', part)
        assert ids == [entry.id for entry in ordered() if entry.topic == topic], topic
    toc = page[page.index('class="md-nav md-nav--secondary"') :]
    for anchor, _ in expected:
        assert f'href="#{anchor}"' in toc, anchor


def _page_url(src: str) -> str:
    """The address of the page built from docs/``src``, relative to the References page."""
    stem = src[: -len(".md")]
    folder = stem[: -len("index")] if stem == "index" or stem.endswith("/index") else stem + "/"
    return "../" + folder


def test_each_built_entry_lists_the_pages_whose_markdown_cites_it(site_dir):
    """The built list under each entry links exactly the pages whose Markdown cites the entry: a
    page that gained or lost a citation since the References page was converted shows here."""
    cited: dict[str, set[str]] = {}
    for path in sorted((ROOT / "docs").rglob("*.md")):
        src = path.relative_to(ROOT / "docs").as_posix()
        if src != "references.md":
            for key in re.findall(r"references\.md#([\w-]+)", path.read_text(encoding="utf-8")):
                cited.setdefault(key, set()).add(_page_url(src))
    sections = re.split(r"<h3 id=", _article(site_dir, "references"))[1:]
    listed = {}
    for section in sections:
        key = re.match(r'"([^"]+)"', section)[1]
        lists = re.findall(rf'<p class="{citations.CITED_ON_CLASS}">(.*?)</p>', section, re.S)
        assert len(lists) <= 1, key
        if lists:
            listed[key] = set(re.findall(r'<a href="([^"]+)">', lists[0]))
    keys = {re.match(r'"([^"]+)"', section)[1] for section in sections}
    assert listed == {key: pages for key, pages in cited.items() if key in keys}
    assert len(listed["shaw2018"]) >= 4
