"""The API reference without source listings, its source pages, and the links between them
(hooks/site_build/api_source.py), read from the built site."""

from __future__ import annotations

import ast
import html
import importlib
import inspect
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
LINE_ANCHOR = re.compile(r'<a id="line-0-(\d+)" name="line-0-\1"></a>')
HEADING = re.compile(r'<h([1-6]) id="(posenc\.[\w.]+)" class="doc doc-heading".*?</h\1>\s*', re.S)
SOURCE_LINK = re.compile(
    r'<p class="posenc-source-link"><a href="(?P<href>[^"]+)">'
    r"Source: <code>(?P<file>[^<]+)</code>, lines (?P<first>\d+)–(?P<last>\d+)</a></p>"
)


def _documented_modules() -> list[str]:
    return re.findall(r"^::: (posenc(?:\.\w+)+)$", (ROOT / "docs" / "api.md").read_text(encoding="utf-8"), re.M)


def _module_of(path: str) -> str:
    """The documented module an object's dotted path is in (posenc.encodings, posenc.site.plotting)."""
    return max((name for name in _documented_modules() if path == name or path.startswith(name + ".")), key=len)


def _listing_lines(page: str) -> dict[int, str]:
    """{line number: text} of the listing on a source page (its parts joined), cut at its line anchors."""
    code = "".join(re.findall(r'<td class="code">.*?<code>(.*?)</code>', page, re.S))
    pieces = LINE_ANCHOR.split(code)
    assert pieces[0] == "", "text before the first line's anchor"
    numbers, texts = pieces[1::2], pieces[2::2]
    return {int(n): html.unescape(re.sub(r"<[^>]+>", "", text)) for n, text in zip(numbers, texts, strict=True)}


def _definition(path: str) -> tuple[str, int, int]:
    """(file, first line, last line) of the object with dotted path ``path``, from inspect."""
    module_name = _module_of(path)
    obj = importlib.import_module(module_name)
    for name in path[len(module_name) + 1 :].split("."):
        obj = getattr(obj, name)
    obj = inspect.unwrap(obj.fget if isinstance(obj, property) else obj)
    lines, first = inspect.getsourcelines(obj)
    return pathlib.Path(inspect.getsourcefile(obj)).relative_to(ROOT).as_posix(), first, first + len(lines) - 1


def test_the_api_page_shows_no_source_listings(site_dir):
    page = (site_dir / "api" / "index.html").read_text(encoding="utf-8")
    assert "doc-heading" in page  # the page still documents the objects
    assert "Source code in" not in page
    assert 'class="highlighttable"' not in page


def test_each_documented_module_has_a_source_page_with_its_whole_file(site_dir):
    modules = _documented_modules()
    assert {"posenc.encodings", "posenc.long_context"} <= set(modules)
    pages = sorted(path.name for path in (site_dir / "api" / "source").iterdir())
    # A page is named for the module's last part: api/source/plotting/ shows posenc/site/plotting.py.
    assert pages == sorted(name.rsplit(".", 1)[1] for name in modules)
    for module_name in modules:
        name = module_name.rsplit(".", 1)[1]
        page = (site_dir / "api" / "source" / name / "index.html").read_text(encoding="utf-8")
        text = (ROOT / (module_name.replace(".", "/") + ".py")).read_text(encoding="utf-8")
        lines = _listing_lines(page)
        assert list(lines) == list(range(1, len(lines) + 1)), name
        assert "".join(lines.values()) == text, f"{name}: the listing is not the module's file"
        # A long file is listed in parts, each from a top-level statement (a line that starts a
        # definition, an assignment or a decorator, never inside a string), so each highlights alone.
        firsts = [
            int(n) for n in re.findall(r'<div class="posenc-source-part highlight">.*?<a id="line-0-(\d+)"', page, re.S)
        ]
        assert firsts[0] == 1 and (len(firsts) > 1) == (len(lines) > 2 * 40), (name, firsts)
        tops = {node.lineno for node in ast.parse(text).body} | {
            decorator.lineno for node in ast.parse(text).body for decorator in getattr(node, "decorator_list", [])
        }
        assert set(firsts[1:]) <= tops, (name, firsts)


def test_each_object_links_to_the_lines_of_its_definition(site_dir):
    api = site_dir / "api" / "index.html"
    page = api.read_text(encoding="utf-8")
    headings = list(HEADING.finditer(page))
    documented = set(_documented_modules())
    assert {_module_of(heading[2]) for heading in headings} == documented, "a module without objects"
    assert len(SOURCE_LINK.findall(page)) == len(headings), "links that follow no object's heading"
    listings: dict[pathlib.Path, dict[int, str]] = {}
    for heading in headings:
        path = heading[2]
        link = SOURCE_LINK.match(page, heading.end())
        assert link, f"{path}: no source link after its heading"
        file, first, last = _definition(path)
        assert (link["file"], int(link["first"]), int(link["last"])) == (file, first, last), path
        target, anchor = link["href"].split("#")
        assert anchor == f"line-0-{first}", path
        target_page = (api.parent / target / "index.html").resolve()
        assert target_page == site_dir / "api" / "source" / _module_of(path).rsplit(".", 1)[1] / "index.html", path
        if target_page not in listings:
            listings[target_page] = _listing_lines(target_page.read_text(encoding="utf-8"))
        shown = "".join(listings[target_page][n] for n in range(first, last + 1))
        name = re.escape(path.rsplit(".", 1)[1])
        assert re.search(rf"^[ \t]*(?:def|class)[ \t]+{name}\b", shown, re.M), f"{path}: the lines do not define it"
