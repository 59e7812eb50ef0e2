"""What each page says about itself (hooks/site_build/page_meta.py), read from the built HTML without a
browser: citation tags that agree with the Cite page's BibTeX, link-preview tags and their card
images, the line saying when the page last changed, and a BibTeX block under every derivation.
The hook's date rule is also tried on small repositories of its own (a commit, uncommitted
changes, a shallow clone, no git at all)."""

from __future__ import annotations

import datetime
import functools
import inspect
import html.parser
import io
import os
import pathlib
import re
import subprocess
from collections import defaultdict

import pytest
import yaml
from PIL import Image
from support.cite import RECORD, articles, citation, field, record_key
from site_build import citations, last_change, link_previews, page_meta, paths
from support.hooks import fake_page

import posenc
import posenc.site.derivations  # fills REGISTRY: the build reads the report, not the registry
from posenc.site.registry import REGISTRY

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
SITE_URL = CONFIG["site_url"]
SITE_NAME = CONFIG["site_name"]
CARD_MAX_BYTES = 40_000


class _HeadAndCode(html.parser.HTMLParser):
    """The meta tags, <title>, canonical link, last-changed lines and code blocks' texts of a page."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.meta: dict[str, list[str]] = defaultdict(list)
        self.title = ""
        self.canonical = None
        self.last_changed: list[str] = []
        self.codes: list[str] = []  # the text of each <pre> ... <code>
        self._reading: str | None = None  # "title", "line", "pre" or "code"
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        key = attributes.get("name") or attributes.get("property")
        if tag == "meta" and key and "content" in attributes:
            self.meta[key].append(attributes["content"])
        elif tag == "link" and attributes.get("rel") == "canonical":
            self.canonical = attributes["href"]
        elif tag == "title":
            self._reading = "title"
        elif tag == "p" and attributes.get("class") == "posenc-last-changed":
            self._reading = "line"
            self.last_changed.append("")
        elif tag == "pre":
            self._reading = "pre"
        elif tag == "code" and self._reading == "pre":
            self._reading = "code"
            self.codes.append("")

    def handle_endtag(self, tag):
        if (tag, self._reading) in {("title", "title"), ("p", "line"), ("pre", "pre"), ("code", "code")}:
            self._reading = None

    def handle_data(self, data):
        if self._reading == "title":
            self.title += data
        elif self._reading == "line":
            self.last_changed[-1] += data
        elif self._reading == "code":
            self.codes[-1] += data


@functools.cache  # each page is read once by all the tests
def parse(site_dir: pathlib.Path, path: str) -> _HeadAndCode:
    return _HeadAndCode((site_dir / path.lstrip("/") / "index.html").read_text(encoding="utf-8"))


def one(page: _HeadAndCode, key: str, path: str) -> str:
    values = page.meta.get(key, [])
    assert len(values) == 1, f"{path}: {len(values)} <meta> {key} (one expected)"
    return values[0]


def bibtex_records(page: _HeadAndCode) -> dict[str, str]:
    return {match["key"]: match["body"] for code in page.codes for match in RECORD.finditer(code)}


def braces_off(value: str) -> str:
    return value.strip().strip("{}").replace("{", "").replace("}", "")


# --- the built pages -----------------------------------------------------------------------


def test_every_page_has_link_preview_tags_and_its_card(site_dir, site_paths):
    for path in site_paths:
        page = parse(site_dir, path)
        title = one(page, "og:title", path)
        assert title == page.title.strip() and title.endswith(f" - {SITE_NAME}"), path
        assert one(page, "og:description", path) == one(page, "description", path) != "", path
        assert one(page, "og:url", path) == page.canonical == SITE_URL.rstrip("/") + path, path
        assert one(page, "og:type", path) == ("website" if path == "/" else "article"), path
        assert one(page, "og:site_name", path) == SITE_NAME
        card = "assets/cards/" + (path.strip("/") or "index") + ".png"
        assert one(page, "og:image", path) == SITE_URL + card, path
        assert one(page, "twitter:card", path) == "summary_large_image"
        for name in ("title", "description", "image"):
            assert one(page, f"twitter:{name}", path) == one(page, f"og:{name}", path), (path, name)
        data = (site_dir / card).read_bytes()
        assert len(data) <= CARD_MAX_BYTES, f"{card} is {len(data)} bytes"
        with Image.open(io.BytesIO(data)) as image:
            assert image.format == "PNG" and image.size == (1200, 630), card
        assert one(page, "og:image:width", path) == "1200" and one(page, "og:image:height", path) == "630"


def test_articles_and_the_home_page_carry_the_cite_pages_record(site_dir, site_paths):
    """Saving a page with a reference manager gives what the Cite page's BibTeX says."""
    cff = citation()
    released = datetime.date.fromisoformat(str(cff["date-released"]))
    cite_records = bibtex_records(parse(site_dir, "/cite/"))
    site_record = cite_records[f"posenc{released.year}"]
    root = braces_off(field(site_record, "url"))
    citable = {"/": (site_record, cff["title"])}
    for path in articles():
        stem = path.rsplit(".", 1)[0]
        url_path = "/" + (stem.removesuffix("index") if stem.endswith("index") else stem + "/")
        record = cite_records[record_key(path)]
        citable[url_path] = (record, braces_off(field(record, "title")))
    assert set(citable) <= set(site_paths)
    authors = [author["name"] for author in cff["authors"]]
    for path in site_paths:
        page = parse(site_dir, path)
        if path not in citable:
            assert "citation_title" not in page.meta and "DC.title" not in page.meta, f"{path} is not an article"
            continue
        record, title = citable[path]
        assert one(page, "citation_title", path) == one(page, "DC.title", path) == title, path
        assert page.meta["citation_author"] == page.meta["DC.creator"] == authors, path
        assert one(page, "citation_publication_date", path) == released.strftime("%Y/%m/%d"), path
        assert one(page, "DC.date", path) == released.isoformat(), path
        url = braces_off(field(record, "url"))
        assert one(page, "citation_public_url", path) == one(page, "DC.identifier", path) == url, path
        assert one(page, "citation_pdf_url", path) == root + "posenc.pdf", path
    assert "/derivations/" in citable


def _page_sources(path: str) -> list[str]:
    """The repository files a page is built from, as the test knows them."""
    name = path.strip("/")
    if name.startswith("figures/"):
        return [f"figures_src/{name.removeprefix('figures/')}.py"]
    if name.startswith("derivations/"):
        # A derivation's page is generated from its entry, in the module of its topic.
        proof = REGISTRY[name.removeprefix("derivations/")].prove
        return [pathlib.Path(inspect.getsourcefile(proof)).resolve().relative_to(ROOT).as_posix()]
    if name.startswith("api/source/"):
        # A source page is named for the last part of a module the API page documents
        # (posenc/site/plotting.py for plotting).
        api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
        documented = re.findall(r"^::: (posenc(?:\.\w+)+)$", api, re.M)
        (module,) = (m for m in documented if m.rsplit(".", 1)[1] == name.removeprefix("api/source/"))
        return [module.replace(".", "/") + ".py"]
    candidates = [f"docs/{name}.md", f"docs/{name}.ipynb", f"docs/{name}/index.md"] if name else ["docs/index.md"]
    own = [candidate for candidate in candidates if (ROOT / candidate).is_file()]
    assert len(own) == 1, (path, own)
    # The Conventions page lists the peer comparisons, read from the peer tests themselves.
    generated_from = {"derivations": ["posenc/site/derivations"], "conventions": ["tests/peers"]}
    # A page's panels are written from their descriptions, in the order the page shows them.
    panels = re.findall(r"\{\{ panel: ([a-z-]+) \}\}", (ROOT / own[0]).read_text(encoding="utf-8"))
    return own + generated_from.get(name, []) + [f"docs/panels/{panel}.yml" for panel in dict.fromkeys(panels)]


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def test_every_page_says_when_its_sources_last_changed(site_dir, site_paths):
    shallow = _git("rev-parse", "--is-shallow-repository") == "true"
    for path in site_paths:
        page = parse(site_dir, path)
        assert len(page.last_changed) == 1, f"{path}: {len(page.last_changed)} last-changed lines"
        line = " ".join(page.last_changed[0].split())
        sources = _page_sources(path)
        named = " and ".join(sources)
        date = _git("log", "-1", "--format=%cs", "--", *sources)
        pending = _git("status", "--porcelain", "--untracked-files=all", "--", *sources)
        if not shallow and date and not pending:
            day = datetime.date.fromisoformat(date)
            expected = f"Last changed {day.day} {day:%B} {day.year}, the date of the latest commit to {named}."
            assert line == expected, path
        else:
            assert line.startswith("Built ") and named in line and ("not yet committed" in line or shallow), path


def test_every_derivation_page_ends_with_its_bibtex_under_a_copy_button(site_dir):
    assert "content.code.copy" in CONFIG["theme"]["features"], "Material adds the copy button to code blocks"
    for identifier, entry in REGISTRY.items():
        text = (site_dir / "derivations" / identifier / "index.html").read_text(encoding="utf-8")
        block = re.search(r'<h2 id="cite">Cite this derivation.*?</h2>(.*?)</article>', text, re.S)
        assert block, f"{identifier}: no 'Cite this derivation' section"
        parser = _HeadAndCode(block[1])
        assert "no-copy" not in block[1]
        assert len(parser.codes) == 1, identifier
        # What the copy button copies: the record itself, as the Cite page prints it, without indentation.
        expected = citations.bibtex(entry, SITE_URL)
        assert parser.codes[0].strip("\n") == expected, identifier


# --- the hook's rules ----------------------------------------------------------------------


def _repository(directory: pathlib.Path, commits: dict[str, str]) -> None:
    """A git repository in ``directory`` with one commit per file, each on its date."""
    subprocess.run(["git", "init", "-q", str(directory)], check=True)
    for name, day in commits.items():
        (directory / name).write_text(name, encoding="utf-8")
        stamp = f"{day}T12:00:00+00:00"
        environment = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        for command in (
            ["add", name],
            ["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", name],
        ):
            subprocess.run(["git", *command], cwd=directory, env=environment, check=True)


@pytest.fixture
def repository(tmp_path, monkeypatch):
    """A small repository as the hook's ROOT, and a fixed build date (SOURCE_DATE_EPOCH)."""
    directory = tmp_path / "repo"
    directory.mkdir()
    _repository(directory, {"a.md": "2024-05-06", "b.md": "2025-01-02"})
    monkeypatch.setattr(paths, "ROOT", directory)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(datetime.datetime(2030, 7, 8, tzinfo=datetime.UTC).timestamp())))
    last_change.history_available.cache_clear()
    yield directory
    last_change.history_available.cache_clear()


def test_the_date_is_the_latest_commit_to_any_source(repository):
    change = last_change.last_changed(("a.md",))
    assert change == last_change.LastChanged("2024-05-06", ("a.md",), True)
    assert last_change.last_changed(("a.md", "b.md")).date == "2025-01-02"
    assert last_change.last_changed_html(change) == (
        'Last changed <time datetime="2024-05-06">6 May 2024</time>, '
        "the date of the latest commit to <code>a.md</code>."
    )


def test_uncommitted_changes_give_the_build_date_and_say_so(repository):
    (repository / "a.md").write_text("edited", encoding="utf-8")
    (repository / "c.md").write_text("new", encoding="utf-8")
    for sources in (("a.md",), ("c.md",), ("b.md", "c.md")):
        change = last_change.last_changed(sources)
        assert change == last_change.LastChanged("2030-07-08", sources, False, last_change.NOT_COMMITTED)
    assert last_change.last_changed(("b.md",)).committed
    line = last_change.last_changed_html(last_change.last_changed(("a.md",)))
    assert line.startswith('Built <time datetime="2030-07-08">8 July 2030</time>; ') and "not yet committed" in line


def test_no_history_gives_the_build_date_and_says_so(repository, tmp_path, monkeypatch):
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repository}", str(shallow)], check=True)
    outside = tmp_path / "plain"
    outside.mkdir()
    (outside / "a.md").write_text("a", encoding="utf-8")
    for root in (shallow, outside):
        monkeypatch.setattr(paths, "ROOT", root)
        last_change.history_available.cache_clear()
        missing = last_change.LastChanged("2030-07-08", ("a.md",), False, last_change.HISTORY_MISSING)
        assert last_change.last_changed(("a.md",)) == missing, root
    monkeypatch.setattr(paths, "ROOT", repository)
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))  # git cannot be found
    last_change.history_available.cache_clear()
    change = last_change.last_changed(("a.md",))
    assert change.reason == last_change.HISTORY_MISSING and change.date == "2030-07-08"
    assert "was not available to this build" in last_change.last_changed_html(change)


def test_citation_authors_and_date_follow_citation_cff_and_the_version_the_package(tmp_path, monkeypatch):
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    people = "authors:\n  - family-names: Noether\n    given-names: Emmy\n  - name: The Example Lab\n"
    text = re.sub(r"^authors:\n(?:  .*\n)+", people, text, flags=re.M)
    text = re.sub(r"^date-released: .*$", 'date-released: "2031-02-03"', text, flags=re.M)
    monkeypatch.setattr(posenc, "__version__", "3.4.5")
    moved = tmp_path / "CITATION.cff"
    moved.write_text(text, encoding="utf-8")
    monkeypatch.setattr(paths, "CITATION", moved)
    page = fake_page("rope.md")
    page.title = "RoPE"  # the nav label; the front matter's title is the one cited
    page.meta["title"] = "Rotary position embedding (RoPE)"
    config = {"site_url": "https://example.org/", "nav": CONFIG["nav"]}
    tags = page_meta.citation_tags(page, config)
    assert [content for _, name, content in tags if name == "citation_author"] == ["Noether, Emmy", "The Example Lab"]
    assert ("name", "citation_title", "Rotary position embedding (RoPE)") in tags
    assert ("name", "citation_publication_date", "2031/02/03") in tags
    assert ("name", "citation_public_url", "https://example.org/3.4.5/rope/") in tags
    assert ("name", "citation_pdf_url", "https://example.org/3.4.5/posenc.pdf") in tags
    assert page_meta.citation_tags(fake_page("references.md"), config) == []


def test_a_card_is_the_same_bytes_every_time_and_small():
    long_title = "Figure: " + " ".join(["a very long title that must still fit on the card"] * 3)
    for title in ("Rotary embeddings (RoPE)", long_title):
        first = link_previews.draw_card(title, SITE_NAME)
        assert first == link_previews.draw_card(title, SITE_NAME)
        assert len(first) <= CARD_MAX_BYTES
        with Image.open(io.BytesIO(first)) as image:
            assert image.size == (1200, 630) and image.mode == "P"
    assert link_previews.draw_card("One title", SITE_NAME) != link_previews.draw_card("Another title", SITE_NAME)
