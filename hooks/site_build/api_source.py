"""The API reference's source pages, and its links to them.

The API reference (``docs/api.md``) shows no source listings: mkdocstrings would give each class
its whole source and then each of its methods its own source again, highlighted token by token,
which was most of the page's weight on a phone. Instead each module the page documents (each
``::: posenc.NAME`` line) gets one generated page, ``api/source/NAME/``, holding the module's file
highlighted once with an anchor on every line, and the heading of each object the page documents
is followed by a link to the lines of its definition there, found in the module's syntax tree (as
``inspect.getsourcelines`` counts them: from the first decorator to the last line of the body). The
modules are read, never imported: importing ``posenc.site.plotting`` imports Matplotlib, a second
of every build.
"""

from __future__ import annotations

import ast
import functools
import html
import importlib.util
import json
import pathlib
import re

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url
from pymdownx.highlight import Highlight

from . import paths

API_PAGE = "api.md"
SOURCE_FOLDER = "api/source"
DOCUMENTED_MODULE = re.compile(r"^:::[ \t]+(posenc(?:\.\w+)+)[ \t]*$", re.M)
# An object's heading as mkdocstrings writes it: its id is the object's dotted path.
OBJECT_HEADING = re.compile(
    r'<h(?P<level>[1-6]) id="(?P<path>posenc\.[\w.]+)" class="doc doc-heading".*?</h(?P=level)>', re.S
)
# Line N of a source page's listing has the id f"{LINE_ANCHORS}-0-{N}" (pymdownx.highlight adds the
# listing's number, 0). The line numbers themselves are not links: a page of a few hundred lines
# would otherwise put a few hundred tab stops between a keyboard reader and the footer.
LINE_ANCHORS = "line"
PART_CLASS = "posenc-source-part"


def line_anchor(line: int) -> str:
    return f"{LINE_ANCHORS}-0-{line}"


def documented_modules() -> list[str]:
    """The modules the API page documents, in its order (none in a site without an API page)."""
    page = paths.DOCS / API_PAGE
    return DOCUMENTED_MODULE.findall(page.read_text(encoding="utf-8")) if page.is_file() else []


def module_file(module_name: str) -> str:
    """The repository path of a module's file, such as ``posenc/encodings.py``, found without
    running the module (its packages' ``__init__`` files run)."""
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None:
        raise PluginError(f"{API_PAGE}: no module {module_name} to document")
    return pathlib.Path(spec.origin).resolve().relative_to(paths.ROOT).as_posix()


def source_pages() -> dict[str, str]:
    """{docs path of each source page: the repository file it shows}."""
    return {f"{SOURCE_FOLDER}/{name.rsplit('.', 1)[1]}.md": module_file(name) for name in documented_modules()}


# Where a source page's listing goes: it is put in the page's HTML (on_page_content), not in its
# Markdown, where page markers in the code (a format string's braces) would be read as markers.
LISTING_PLACEHOLDER = "<div data-posenc-source-listing></div>"


# A listing is cut into parts of about this many lines, each a block of its own, so that the browser
# can skip the parts a reader has not scrolled near (posenc.css): one block of five hundred
# highlighted lines was laid out whole before a phone could respond.
PART_LINES = 40


def _parts(code: str) -> list[tuple[int, str]]:
    """``code`` cut between top-level statements into runs of at least PART_LINES lines, as
    (first line number, text). A top-level statement starts on a line of its own outside any
    string, so each part highlights as it does in the whole file."""
    lines = code.splitlines(keepends=True)
    # The tree the API page's links are found in too: each module is parsed once per build.
    starts = sorted(
        {min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) for node in _parsed(code).body}
    )
    cuts, first = [], 1
    for start in starts:
        if start - first >= PART_LINES:
            cuts.append(start)
            first = start
    bounds = [1, *cuts, len(lines) + 1]
    return [(a, "".join(lines[a - 1 : b - 1])) for a, b in zip(bounds, bounds[1:]) if b > a]


def listing(source_file: str) -> str:
    code = (paths.ROOT / source_file).read_text(encoding="utf-8")
    # stripnl=False keeps blank lines at a part's ends, so the listing is the whole file, line for line.
    highlighter = Highlight(None, linenums=True, line_anchors=LINE_ANCHORS, stripnl=False)
    return "\n".join(
        highlighter.highlight(text, "python", linestart=first, classes=[PART_CLASS]) for first, text in _parts(code)
    )


def source_page(source_file: str) -> str:
    title = f"Source of {source_file}"
    description = (
        f"The file {source_file} that the site was built from, with numbered lines: "
        "the API reference links each object it documents to the lines of its definition here."
    )
    return (
        f"---\ntitle: {json.dumps(title)}\ndescription: {json.dumps(description)}\n"
        "search:\n  exclude: true\n---\n\n"
        f"# Source of `{source_file}`\n\n"
        f"The whole file, as this build of the site read it. The [API reference](../../{API_PAGE}) "
        "documents its objects.\n\n"
        f"{LISTING_PLACEHOLDER}\n"
    )


@functools.lru_cache(maxsize=32)
def _parsed(code: str) -> ast.Module:
    """The syntax tree of ``code``, parsed once for its source page and all the objects of its module."""
    return ast.parse(code)


def _definitions(body: list[ast.stmt]) -> dict[str, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef]:
    """The classes and functions a block defines, by name; a later definition of a name replaces an
    earlier one, as it does when the block runs. (A property with a setter would take the setter's
    lines: tests/built_site/test_api_source.py holds every link to what ``inspect`` finds.)"""
    return {node.name: node for node in body if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)}


def definition_lines(path: str, modules: list[str]) -> tuple[str, int, int]:
    """(module, first line, last line) of the definition of the object with dotted path ``path``,
    one of those of the documented ``modules``."""
    # The longest documented module the path starts with (posenc.encodings, posenc.site.plotting).
    module_name = max(
        (name for name in modules if path == name or path.startswith(name + ".")),
        key=len,
        default=".".join(path.split(".")[:2]),
    )
    source_file = module_file(module_name)
    body = _parsed((paths.ROOT / source_file).read_text(encoding="utf-8")).body
    node: ast.AST | None = None
    for name in path[len(module_name) + 1 :].split("."):
        node = _definitions(body).get(name)
        if node is None:
            raise PluginError(f"{API_PAGE}: {path} is not a class or function defined in {source_file}")
        body = node.body
    assert isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
    return module_name, first, node.end_lineno or node.lineno


def with_source_links(page_html: str, page_url: str, files) -> str:
    """The API page's HTML with a link after each object's heading to its lines on its module's source page."""

    modules = documented_modules()  # read once for the page's objects

    def linked(match: re.Match) -> str:
        module_name, first, last = definition_lines(match["path"], modules)
        page_file = files.get_file_from_path(f"{SOURCE_FOLDER}/{module_name.rsplit('.', 1)[1]}.md")
        if page_file is None:
            raise PluginError(f"{API_PAGE}: {match['path']} has no source page (no `::: {module_name}` line)")
        href = html.escape(f"{get_relative_url(page_file.url, page_url)}#{line_anchor(first)}")
        return (
            f'{match[0]}\n<p class="posenc-source-link"><a href="{href}">Source: '
            f"<code>{module_file(module_name)}</code>, lines {first}–{last}</a></p>"
        )

    return OBJECT_HEADING.sub(linked, page_html)


def source_page_files(config) -> list[File]:
    """The generated source page of each module the API page documents."""
    return [
        File.generated(config, src, content=source_page(source_file)) for src, source_file in source_pages().items()
    ]


def with_source(html_content: str, page, files) -> str:
    """The API page with its source links, a source page with its listing; any other page as it is."""
    src = page.file.src_uri
    if src == API_PAGE:
        return with_source_links(html_content, page.url, files)
    if not src.startswith(SOURCE_FOLDER + "/"):
        return html_content  # every other page: no need to read the API page's modules
    shown = source_pages().get(src)
    if shown:
        if html_content.count(LISTING_PLACEHOLDER) != 1:
            raise PluginError(f"{src}: the page must hold its listing's placeholder once")
        return html_content.replace(LISTING_PLACEHOLDER, listing(shown))
    return html_content
