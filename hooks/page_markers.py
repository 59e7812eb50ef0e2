"""MkDocs hook of the posenc site: page markers and the pages generated beside them.

Markers in a page's Markdown, expanded before MkDocs parses it (an unknown marker, figure
or derivation ID stops the build):

``{{ figure: NAME }}``
    The figure ``NAME.svg``, inline in the page (its text is page text, in the page's
    typeface and colours; its size and accessible name are in it), with the caption of its
    ``posenc.figure_files.FigureMeta`` (``posenc.plotting.save`` wrote both), a link to the
    page of its script and a link to the SVG at full size (``docs/javascripts/figures.js``
    opens that in an enlarged view).
``{{ ref: ID }}``
    A link to derivation ``ID``'s own page, ``derivations/ID/``.
``{{ eq: ID }}``
    Derivation ``ID``'s statement as a display equation, followed by a link to its proof.
``{{ calc FORMAT: EXPRESSION }}``
    ``EXPRESSION`` evaluated with ``posenc`` and ``np`` in scope, formatted with ``FORMAT``
    (a format spec such as ``.4f``; arrays are formatted element by element).
``{{ bibtex: ID }}``
    Derivation ``ID``'s BibTeX record as a code block (the one its own page shows).
``{{ cite: site }}``, ``{{ cite: articles }}``
    The BibTeX record of the whole site; a table of the articles (the pages under the nav's
    "Learn" section) followed by one record per article.
``{{ release }}``
    The release the records describe, as "version X, released D Month YYYY".
``{{ url: PATH }}``
    The address to cite for ``PATH`` (for example ``derivations/kernel/``), in code format.
``{{ derivations }}``
    The index of the derivations: one item per ID, anchored ``#ID``, linking to the ID's page.
``{{ peers }}``
    What ``make test-peers`` compares, read from ``tests/peers/test_*.py``: one item per file
    (its path and its module docstring's summary) holding one item per test (its docstring's summary,
    followed by the values of its ``pytest.mark.parametrize`` decorators). A test without a
    docstring stops the build.

Markers are not expanded inside code: fenced blocks, indented code blocks and inline code
spans show them as written. In prose, a backslash before the braces shows a marker literally:
``\\{{ ref: kernel }}`` reads as ``{{ ref: kernel }}`` on the page (Markdown drops the
backslash that escapes the first brace).

Generated pages (never files in ``docs/``): ``figures/NAME/`` for each rendered figure and
``derivations/ID/`` for each derivation (statement, proof steps, SymPy source and BibTeX).

Every page needs a ``description`` in its front matter (a warning, so ``--strict`` fails).
The math on the pages is rendered by the ``build_math`` hook; notebooks are the
``notebook_pages`` hook's.
"""

from __future__ import annotations

import ast
import datetime
import html
import inspect
import json
import logging
import pathlib
import posixpath
import re
import subprocess
import textwrap
from urllib.parse import urlsplit

import numpy as np
import yaml
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url
from mkdocs.utils.meta import get_data

import posenc
import posenc.derivations  # registers every derivation in REGISTRY
from posenc import explainer_demo
from posenc.figure_files import FIGURE_DIR, FigureMeta, figure_files
from posenc.registry import GENERAL, REGISTRY

log = logging.getLogger("mkdocs.hooks.posenc")

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FIGURES = ROOT / FIGURE_DIR
VERIFY_REPORT = ROOT / "build" / "verify.json"
CITATION = ROOT / "CITATION.cff"
PEER_TESTS = ROOT / "tests" / "peers"
# Written by ``python -m posenc.render --update --errors``: why each failing figure script failed.
FIGURE_ERRORS = ROOT / "build" / "figure-errors.json"
# A backslash before the braces escapes a marker (see the module docstring).
MARKER = re.compile(r"(?<!\\)\{\{\s*(?P<kind>[a-z]+)(?:\s+(?P<spec>[^:}]*?))?\s*(?::\s*(?P<arg>.*?))?\s*\}\}")
UNESCAPED_OPENING = re.compile(r"(?<!\\)\{\{")


def _relative(page_src: str, target: str) -> str:
    """Path from the Markdown file ``page_src`` to the docs file ``target``."""
    return posixpath.relpath(target, posixpath.dirname(page_src) or ".")


def _figures_in_docs() -> str:
    """The figure folder as a path inside ``docs/`` (and so in the site)."""
    return FIGURES.relative_to(DOCS).as_posix()


def _figure_meta(name: str) -> FigureMeta:
    meta_path, svg_path = figure_files(name, FIGURES)
    if not meta_path.is_file():
        raise PluginError(f"unknown figure {name!r}: no figures_src/{name}.py has been rendered (run make)")
    if not svg_path.is_file():
        raise PluginError(f"figure {name!r} has a description but no {svg_path.name} (run make)")
    return FigureMeta.read(meta_path)


# {figure name: why its script failed}, as the last render recorded it (read before each build).
_failed_figures: dict[str, str] = {}


def _read_figure_errors() -> dict[str, str]:
    return json.loads(FIGURE_ERRORS.read_text()) if FIGURE_ERRORS.is_file() else {}


def _figure_failure(name: str) -> str:
    """While previewing, a note under a figure whose script failed; otherwise that failure stops the build."""
    if name not in _failed_figures:
        return ""
    if not _serving:
        raise PluginError(f"figure {name!r} is stale: figures_src/{name}.py failed in its last render (run make)")
    last_line = [line for line in _failed_figures[name].splitlines() if line.strip()][-1:] or ["(no message)"]
    error = textwrap.indent(last_line[0], "        ")
    return (
        f'\n!!! failure "figures_src/{name}.py failed"\n\n'
        "    The preview shows the last good figure, if there is one. The error (the terminal running "
        "`make serve` has the whole traceback):\n\n"
        f"    ```text\n{error}\n    ```\n"
    )


# Where a figure's SVG goes: the Markdown holds this placeholder (its caption is Markdown, the
# SVG must not be), and on_page_content puts the SVG in its place.
FIGURE_PLACEHOLDER = re.compile(r'<span data-posenc-figure="(?P<name>[A-Za-z0-9_-]+)"></span>')


def _figure(name: str, page_src: str, page_url: str, *, link_source: bool = True) -> str:
    failure = _figure_failure(name)
    if failure and not figure_files(name, FIGURES)[0].is_file():
        return failure  # a new figure whose first render failed: the note stands in for it
    meta = _figure_meta(name)
    folder = _figures_in_docs()
    # MkDocs does not rewrite raw HTML, so the address is made relative to the page's URL
    # here, as MkDocs makes a Markdown link's.
    full_size = html.escape(get_relative_url(f"{folder}/{name}.svg", page_url))
    source = f' [Source: `{meta.script}`]({_relative(page_src, f"{folder}/{name}.md")})' if link_source else ""
    return (
        f'\n<figure class="posenc-figure" id="fig-{name}" markdown="span">\n'
        f'<span data-posenc-figure="{name}"></span>\n'
        f'<figcaption markdown="span">**{meta.title}** {meta.caption}{source} '
        f'<a class="posenc-figure__enlarge" href="{full_size}">Full size</a></figcaption>\n'
        "</figure>\n" + failure
    )


def _inline_figures(page_html: str) -> str:
    """``page_html`` with each figure placeholder replaced by the figure's SVG.

    The SVG is kept out of the search index (``data-search-exclude``, read by Material's
    search): its text is tick labels and legends, which the caption already describes.
    """

    def svg(match: re.Match) -> str:
        text = figure_files(match["name"], FIGURES)[1].read_text(encoding="utf-8").strip()
        if not text.startswith("<svg "):
            raise PluginError(f"figure {match['name']!r}: {match['name']}.svg does not start with <svg (run make)")
        return "<svg data-search-exclude " + text[len("<svg "):]

    return FIGURE_PLACEHOLDER.sub(svg, page_html)


def _derivation(identifier: str):
    if identifier not in REGISTRY:
        raise PluginError(f"unknown derivation ID {identifier!r} (known: {', '.join(REGISTRY)})")
    return REGISTRY[identifier]


def _ref(identifier: str, page_src: str) -> str:
    entry = _derivation(identifier)
    return f'[`{identifier}`]({_relative(page_src, _derivation_src(identifier))} "{entry.title}")'


def _eq(identifier: str, page_src: str) -> str:
    entry = _derivation(identifier)
    scope = f'<span class="posenc-scope">{entry.scope_label}</span>'
    return (
        f"\n$$\n{entry.statement}\n$$\n\n"
        f'<p class="posenc-eq-ref" markdown="span">Proved as {_ref(identifier, page_src)} ({scope})</p>\n'
    )


def _calc(expression: str, spec: str | None, marker: str) -> str:
    """``expression``'s value formatted with ``spec``; errors name the ``marker`` they come from."""
    try:
        # Page text is trusted source, like the figure scripts; NumPy needs the real builtins.
        value = eval(expression, {"posenc": posenc, "np": np})
    except Exception as error:  # any error: name the marker that failed
        raise PluginError(f"calc marker {marker!r} failed: {type(error).__name__}: {error}") from error
    array = np.asarray(value)
    values = [array.item()] if array.ndim == 0 else array.ravel().tolist()
    if any(v is None for v in values):
        raise PluginError(f"calc marker {marker!r} gave None: the expression returns no number to show")
    try:
        texts = [format(v, spec or "") for v in values]
    except (TypeError, ValueError) as error:
        raise PluginError(f"calc marker {marker!r}: format spec {spec!r} does not apply to "
                          f"{type(values[0]).__name__} {values[0]!r}: {error}") from error
    return texts[0] if array.ndim == 0 else "[" + ", ".join(texts) + "]"


def _verify_report() -> dict:
    """The report ``python -m posenc.verify --report`` wrote; refuse a missing or stale one."""
    if not VERIFY_REPORT.is_file():
        raise PluginError("no derivation report: run `make verify` (or `make`) before building the site")
    sources = sorted(pathlib.Path(posenc.__file__).parent.glob("*.py"))  # as the Makefile's LIBRARY
    if any(source.stat().st_mtime > VERIFY_REPORT.stat().st_mtime for source in sources):
        raise PluginError("the derivation report is older than posenc's sources: run `make verify`")
    report = json.loads(VERIFY_REPORT.read_text())
    failed = [i for i in REGISTRY if report.get(i, {}).get("status") != "proved"]
    if failed:
        raise PluginError(f"derivations not proved in the last `make verify`: {', '.join(failed)}")
    return report


def _release() -> dict:
    """Title, version and date of the release the citations describe.

    CITATION.cff is their one source: the BibTeX records, the Cite page and the release URLs
    are derived from it, and the tests hold pyproject.toml and ``posenc.__version__`` to it.
    """
    data = yaml.safe_load(CITATION.read_text(encoding="utf-8"))
    released = data["date-released"]
    if isinstance(released, str):
        released = datetime.date.fromisoformat(released)
    authors = [_cff_author(author) for author in data["authors"]]
    return {"title": data["title"], "version": str(data["version"]), "date": released, "authors": authors}


def _cff_author(author: dict) -> tuple[str, bool]:
    """(name, whether it names an entity) of one CITATION.cff author; a person reads "Family, Given"."""
    if "name" in author:
        return author["name"], True
    return f"{author['family-names']}, {author['given-names']}", False


RELEASE_NUMBER = re.compile(r"\d+(?:\.\d+)*")
# Folders that mike fills with something other than one fixed release (.github/workflows/deploy.yml).
MIKE_ALIASES = {"dev", "latest"}


def _cited_root(site_url: str) -> str:
    """Root of the address to cite, following the Cite page's rule: a numbered release's folder.

    mike builds release X with site_url ``.../X``, which is already that folder. Any other build
    (a local one, or the ``dev`` alias, which the Cite page says not to cite) names the folder
    of the release CITATION.cff describes.
    """
    root = site_url.rstrip("/")
    last = urlsplit(root).path.rsplit("/", 1)[-1]
    if RELEASE_NUMBER.fullmatch(last):
        return root + "/"
    if last in MIKE_ALIASES:
        root = root[: -len(last)].rstrip("/")
    return f"{root}/{_release()['version']}/"


def _record(key: str, title: str, url: str, note: str) -> str:
    """One BibTeX record of posenc; ``title`` is the field's content, braces included."""
    release = _release()
    # An entity's name is braced so that BibTeX does not split it into given and family names.
    authors = " and ".join(f"{{{name}}}" if entity else name for name, entity in release["authors"])
    return textwrap.dedent(
        f"""\
        @misc{{{key},
          title        = {{{title}}},
          author       = {{{authors}}},
          year         = {{{release["date"].year}}},
          month        = {release["date"].strftime("%b").lower()},
          version      = {{{release["version"]}}},
          howpublished = {{\\url{{{url}}}}},
          url          = {{{url}}},
          note         = {{{note}}}
        }}"""
    )


def _bibtex(entry, site_url: str) -> str:
    return _record(
        f"posenc-{entry.id}",
        f"{{{entry.title}}} (posenc derivation {entry.id})",
        f"{_cited_root(site_url)}derivations/{entry.id}/",
        f"Statement proved with SymPy; stable ID {entry.id}",
    )


# The nav sections whose pages are articles a reader may cite; a page opts out with
# ``cite: false`` in its front matter (the API reference, generated from docstrings).
ARTICLE_SECTIONS = ("Learn", "Implement")


def _articles(config) -> list[tuple[str, str, str]]:
    """(docs path, URL path, title) of every citable page in the nav's article sections."""
    items = [
        (label, path)
        for section in config["nav"]
        if isinstance(section, dict)
        for name, entries in section.items()
        if name in ARTICLE_SECTIONS
        for item in entries
        for label, path in item.items()
    ]
    if not items:
        raise PluginError(f"the nav has none of the article sections {ARTICLE_SECTIONS} to cite")
    articles = []
    for label, path in items:
        meta = get_data((DOCS / path).read_text(encoding="utf-8"))[1] if path.endswith(".md") else {}
        if meta.get("cite", True) is False:
            continue
        stem = posixpath.splitext(path)[0]
        url_path = stem[: -len("index")] if stem.endswith("index") else stem + "/"
        articles.append((path, url_path, meta.get("title", label)))
    return articles


def _cite(what: str, page_src: str, config) -> str:
    release = _release()
    root = _cited_root(config["site_url"])
    if what == "site":
        record = _record(f"posenc{release['date'].year}", f"{{{release['title']}}}", root,
                         f"Version {release['version']}")
        return f"```bibtex\n{record}\n```"
    if what == "articles":
        table = ["| article | URL | key |", "| --- | --- | --- |"]
        records = []
        for path, url_path, title in _articles(config):
            url = f"{root}{url_path}"
            key = "posenc-" + url_path.rstrip("/").rsplit("/", 1)[-1]
            table.append(f"| [{title}]({_relative(page_src, path)}) | `{url}` | `{key}` |")
            records.append(_record(key, f"{{{title}}}", url,
                                   f"Article of the posenc site, version {release['version']}"))
        return "\n".join(table) + "\n\n```bibtex\n" + "\n\n".join(records) + "\n```"
    raise PluginError(f"unknown cite marker {what!r} (known: site, articles)")


def _summary(docstring: str) -> str:
    """A docstring's first paragraph on one line, its ``code`` in Markdown's single backticks."""
    return " ".join(docstring.split("\n\n", 1)[0].split()).replace("``", "`")


# A parameter list longer than this is counted rather than shown (a list of whole configurations).
PARAMETERS_SHOWN = 100


def _parameters(test: ast.FunctionDef, constants: dict[str, ast.expr]) -> str:
    """" Parametrised over ..." from the test's ``parametrize`` decorators, read from the source."""
    parts = []
    for decorator in test.decorator_list:
        if not (isinstance(decorator, ast.Call) and getattr(decorator.func, "attr", "") == "parametrize"):
            continue
        given = dict(zip(("argnames", "argvalues"), decorator.args)) | {k.arg: k.value for k in decorator.keywords}
        names, values_node = ast.literal_eval(given["argnames"]), given["argvalues"]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        label = names[0] if len(names) == 1 else f"({', '.join(names)})"
        # A list named by a module-level constant (CONFIGS) is read where it is assigned.
        values_node = constants.get(getattr(values_node, "id", None), values_node)
        try:
            shown = repr(list(ast.literal_eval(values_node)))
        except (ValueError, TypeError):  # pytest.param(...) and the like: counted, not shown
            shown = ""
        if shown and len(shown) <= PARAMETERS_SHOWN:
            parts.append(f"`{label}` in `{shown}`")
        elif isinstance(values_node, (ast.List, ast.Tuple)):
            parts.append(f"{len(values_node.elts)} values of `{label}`")
        else:
            parts.append(f"values of `{label}`")
    return f" Parametrised over {' × '.join(parts)}." if parts else ""


PEERS_MARKER = re.compile(r"(?<!\\)\{\{\s*peers\s*\}\}")
PEER_TESTS_SOURCE = PEER_TESTS.relative_to(ROOT).as_posix()


def uses_peer_tests(markdown: str) -> bool:
    """Whether a page's Markdown lists the peer tests, so that they are among its sources."""
    return PEERS_MARKER.search(markdown) is not None


def _peer_tests() -> str:
    """The ``{{ peers }}`` list. The files are parsed, never imported: they import torch, which
    only ``.venv-peers`` has, and the site is built without it."""
    groups = []
    for path in sorted(PEER_TESTS.glob("test_*.py")):
        name = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=name)
        constants = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                     for target in node.targets if isinstance(target, ast.Name)}
        # What pytest collects: test functions, and the test methods of Test classes.
        tests = [node for parent in [tree, *(n for n in tree.body if isinstance(n, ast.ClassDef)
                                             and n.name.startswith("Test"))]
                 for node in parent.body
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")]
        items = []
        for test in tests:
            docstring = ast.get_docstring(test)
            if not docstring:
                raise PluginError(f"{name}: {test.name} has no docstring; its first line says on the Conventions "
                                  "page what the test compares with what")
            items.append(f"    - {_summary(docstring)}{_parameters(test, constants)}")
        lead = _summary(ast.get_docstring(tree) or "")
        if not lead:
            raise PluginError(f"{name} has no module docstring; its first line leads the file's tests on the page")
        groups.append(f"- `{name}`: {lead}\n" + "\n".join(items))
    if not groups:
        raise PluginError(f"no peer tests in {PEER_TESTS.relative_to(ROOT).as_posix()}/")
    return "\n".join(groups) + "\n"


def _release_text() -> str:
    release = _release()
    date = release["date"]
    return f"version {release['version']}, released {date.day} {date:%B} {date.year}"


def _derivations_page(page_src: str, site_url: str) -> str:
    """The Derivations index: one item per ID, whose ID link carries the anchor ``#ID`` and leads to
    the derivation's own page, so that ``derivations/#ID`` leads there too. A list rather than a
    table: on a phone a table's narrow ID column broke the IDs in the middle."""
    _verify_report()  # refuses a missing, stale or failing report before the index claims "proved"
    items = []
    for entry in REGISTRY.values():
        status = f"proved {entry.scope_label}" if entry.scope == GENERAL else entry.scope_label
        page = _relative(page_src, _derivation_src(entry.id))
        items.append(f"- [`{entry.id}`]({page}){{ #{entry.id} }} **{entry.title}.** {entry.summary} "
                     f"*Scope: {status}.*")
    return '<div class="posenc-derivation-index" markdown>\n\n' + "\n".join(items) + "\n\n</div>\n"


# The class of a derivation page's SymPy source: its heading and the block under it.
SOURCE_CLASS = "posenc-derivation-source"


def _derivation_src(identifier: str) -> str:
    """The generated page of derivation ``identifier``, served at ``derivations/ID/``."""
    return f"derivations/{identifier}.md"


def _derivation_page(identifier: str, site_url: str) -> str:
    """Derivation ``identifier``'s own page: statement, scope, assumptions, proof steps, the SymPy
    code that proves it and its BibTeX record; the address its BibTeX record cites."""
    entry = REGISTRY[identifier]
    ids = list(REGISTRY)
    position = ids.index(identifier)
    front = yaml.safe_dump({"title": entry.title,
                            "description": f"posenc derivation {identifier}, proved by SymPy: {entry.title}."},
                           allow_unicode=True, sort_keys=False, width=1000)
    steps = "\n".join(f"{n}. {step}" for n, step in enumerate(entry.steps, 1))
    count = f"{len(entry.steps)} step{'s' if len(entry.steps) != 1 else ''}"
    if entry.scope == GENERAL:
        scope = "proved in general, for every size the assumptions allow."
    else:
        scope = f"{entry.scope_label}; other sizes are only spot-checked numerically."
    code = inspect.getsource(entry.prove)
    checked = ""
    if entry.check is not None:
        code += "\n\n" + inspect.getsource(entry.check)
        checked = ", then the numeric cross-check against the posenc NumPy functions"
    neighbours = [f"[{label}: {REGISTRY[ids[at]].title}]({ids[at]}.md)"
                  for label, at in (("Previous", position - 1), ("Next", position + 1)) if 0 <= at < len(ids)]
    return (
        f"---\n{front}---\n\n"
        f"# {entry.title}\n\n"
        f"**ID** `{identifier}` · proved by SymPy at build time · "
        f"[all derivations](index.md#{identifier})\n\n"
        f"$$\n{entry.statement}\n$$\n\n"
        f"{entry.summary}\n\n"
        f"**Scope:** {scope}\n\n"
        f"**Assumptions:** {'; '.join(entry.assumptions)}.\n\n"
        f"## Proof in {count} {{ #proof }}\n\n{steps}\n\n"
        # The code is left out of search, as the figure scripts are (readers search for statements),
        # and out of the PDF, which prints what a reader reads (hooks/site_pdf.py drops the class).
        f"## SymPy source {{ #source .{SOURCE_CLASS} data-search-exclude }}\n\n"
        f'<div class="{SOURCE_CLASS}" markdown>\n\n'
        f"The proof that `python -m posenc.verify` runs for `{identifier}`{checked}, "
        f"from `posenc/derivations.py`:\n\n```python\n{code}```\n\n</div>\n\n"
        f"## Cite this derivation {{ #cite }}\n\n```bibtex\n{_bibtex(entry, site_url)}\n```\n\n"
        + " · ".join(neighbours) + "\n"
    )


def _derivation_files(config) -> list[File]:
    """The page of each derivation, refused if an ID would take the address of a page in docs/."""
    taken = [identifier for identifier in REGISTRY if (DOCS / _derivation_src(identifier)).exists()]
    if taken:
        raise PluginError(f"derivation ID {taken[0]!r} would be served at the address of "
                          f"docs/{_derivation_src(taken[0])}")
    _verify_report()  # the pages say "proved": refuse a missing, stale or failing report
    return [File.generated(config, _derivation_src(identifier),
                           content=_derivation_page(identifier, config["site_url"])) for identifier in REGISTRY]


def _figure_page(name: str) -> str:
    meta = _figure_meta(name)
    code = (ROOT / meta.script).read_text()
    # The description is plain text (search snippets, link previews): the alt text's first
    # sentence, which is written in words, not the caption, which may hold TeX.
    first = meta.alt.split(". ")[0].rstrip(".")
    title = meta.title.rstrip(".")
    return (
        f"---\ntitle: {json.dumps('Figure: ' + title)}\ndescription: {json.dumps(first + '.')}\n"
        "search:\n  exclude: true\n---\n\n"
        f"# {title}\n\n{{{{ figure: {name} }}}}\n\n"
        f"## Script {{ #script }}\n\n`{meta.script}` draws this figure; `make` runs it again whenever it "
        "or the posenc helper changes.\n\n"
        f"```python\n{code}```\n"
    )


# ---------------------------------------------------------------------------------------
# Where code is in a page's Markdown (markers there are shown, not expanded)

FENCE_OPENING = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})")
# Lines that open a block whose content is indented by four more spaces (Python-Markdown's
# tab length): list items, admonitions and collapsible blocks, content tabs, footnotes,
# definitions. An indented line inside such a block is prose, not code.
CONTAINER_OPENING = re.compile(r"^[ \t]*(?:[-*+][ \t]|\d+[.)][ \t]|!!!|\?\?\?|===|\[\^[^\]]+\]:|:[ \t])")
# A code span: a run of backticks, then text up to the same run (within one paragraph).
INLINE_CODE = re.compile(r"(?<![\\`])(?P<ticks>`+)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)(?P=ticks)(?!`)", re.S)


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" "))


def _split_blocks(markdown: str) -> list[tuple[bool, str]]:
    """``markdown`` cut into ``(is_code, text)`` runs of whole lines: fenced and indented code blocks."""
    runs: list[tuple[bool, str]] = []
    containers: list[int] = []  # content indentation of each open container, innermost last
    fence: str | None = None  # the opening fence of the fenced block we are in
    code_indent: int | None = None  # the indentation of the indented code block we are in
    previous_blank = True
    for line in markdown.splitlines(keepends=True):
        blank = not line.strip()
        indent = _indent(line)
        if fence is not None:
            is_code = True
            closing = FENCE_OPENING.match(line)
            if closing and closing["fence"][0] == fence[0] and len(closing["fence"]) >= len(fence) \
                    and not line.strip().strip(fence[0]):
                fence = None
        elif blank:
            is_code = code_indent is not None  # a blank line may sit inside an indented code block
        elif code_indent is not None and indent >= code_indent:
            is_code = True
        else:
            code_indent = None
            if previous_blank:
                while containers and indent < containers[-1]:
                    containers.pop()
            base = containers[-1] if containers else 0
            opening = FENCE_OPENING.match(line)
            if previous_blank and indent >= base + 4:
                code_indent, is_code = base + 4, True
            elif opening:
                fence, is_code = opening["fence"], True
            else:
                is_code = False
                if CONTAINER_OPENING.match(line):
                    while containers and containers[-1] > indent:
                        containers.pop()
                    containers.append(indent + 4)
        previous_blank = blank
        if runs and runs[-1][0] == is_code:
            runs[-1] = (is_code, runs[-1][1] + line)
        else:
            runs.append((is_code, line))
    return runs


def split_code(markdown: str) -> list[tuple[bool, str]]:
    """``markdown`` cut into ``(is_code, text)`` runs: code blocks and inline code spans, and prose."""
    runs: list[tuple[bool, str]] = []
    for is_code, text in _split_blocks(markdown):
        if is_code:
            runs.append((True, text))
            continue
        last = 0
        for span in INLINE_CODE.finditer(text):
            runs += [(False, text[last : span.start()]), (True, span[0])]
            last = span.end()
        runs.append((False, text[last:]))
    return runs


# ---------------------------------------------------------------------------------------
# MkDocs events

_serving = False


def on_startup(command, dirty):
    global _serving
    _serving = command == "serve"


def on_pre_build(config):
    """While previewing, bring stale figures and the derivation report up to date first."""
    global _failed_figures
    if _serving:
        result = subprocess.run(["make", "--no-print-directory", "figures", "verify"], cwd=ROOT)
        if result.returncode:
            log.error("make figures verify failed (see above); the preview shows the last good figures "
                      "and names the failed scripts on their pages")
    _failed_figures = _read_figure_errors()


def _explainer_demo_script() -> str:
    """The explainer's demo data as a script: the page reads the one JSON file the figures read."""
    data = json.dumps(json.loads(explainer_demo.DATA_FILE.read_text()), separators=(",", ":"))
    header = "// Generated from posenc/explainer_demo.json when the site is built."
    return f"{header}\nwindow.posencExplainerDemo = {data};\n"


def on_files(files, config):
    """Add the generated files: one page per rendered figure and per derivation, the explainer's data."""
    folder = _figures_in_docs()
    for meta_path in sorted(FIGURES.glob("*.json")):
        files.append(File.generated(config, f"{folder}/{meta_path.stem}.md", content=_figure_page(meta_path.stem)))
    for file in _derivation_files(config):
        files.append(file)
    files.append(File.generated(config, "javascripts/explainer-demo.js", content=_explainer_demo_script()))
    return files


def _check_page_scripts(page, files) -> None:
    """The front matter's ``scripts:`` must name files of the site: overrides/main.html writes each
    into the page as it is, and a wrong name would only show as a failed request in a browser."""
    scripts = page.meta.get("scripts", [])
    if not isinstance(scripts, list) or not all(isinstance(name, str) for name in scripts):
        raise PluginError(f"page {page.file.src_uri}: front matter 'scripts' must be a list of file names")
    missing = [name for name in scripts if files.get_file_from_path(name) is None]
    if missing:
        raise PluginError(f"page {page.file.src_uri}: front matter 'scripts' names {', '.join(missing)}, which the "
                          "site does not have (a path under docs/, such as javascripts/explainer.js)")


def on_page_markdown(markdown, page, config, files):
    src = page.file.src_uri
    _check_page_scripts(page, files)

    def expand(match: re.Match) -> str:
        kind, spec, arg = match["kind"], match["spec"], (match["arg"] or "").strip()
        try:
            return expand_marker(kind, spec, arg, match[0])
        except PluginError as error:
            raise PluginError(f"{src}: {error}") from error

    def expand_marker(kind: str, spec: str | None, arg: str, marker: str) -> str:
        if kind == "figure":
            return _figure(arg, src, page.file.url, link_source=not src.startswith(_figures_in_docs() + "/"))
        if kind == "ref":
            return _ref(arg, src)
        if kind == "eq":
            return _eq(arg, src)
        if kind == "calc":
            return _calc(arg, spec, marker)
        if kind == "bibtex":
            return f"```bibtex\n{_bibtex(_derivation(arg), config['site_url'])}\n```"
        if kind == "derivations":
            return _derivations_page(src, config["site_url"])
        if kind == "peers":
            return _peer_tests()
        if kind == "cite":
            return _cite(arg, src, config)
        if kind == "release":
            return _release_text()
        if kind == "url":
            return f"`{_cited_root(config['site_url'])}{arg}`"
        raise PluginError(f"unknown marker {marker!r}")

    def expand_prose(text: str) -> str:
        leftover = UNESCAPED_OPENING.search(MARKER.sub("", text))
        if leftover:
            # A marker broken across lines (or mistyped) would otherwise reach readers as raw text.
            line = leftover.string[leftover.start() :].split("\n", 1)[0]
            raise PluginError(f"{src}: unexpanded marker (markers must sit on one line): {line[:80]!r}")
        return MARKER.sub(expand, text)

    return "".join(text if is_code else expand_prose(text) for is_code, text in split_code(markdown))


def on_page_content(html_content, page, config, files):
    return _inline_figures(html_content)


def on_page_context(context, page, config, nav):
    """Warn about a page without a description.

    Checked here, after every hook's ``on_page_markdown``, because the ``notebook_pages`` hook
    takes a notebook's description from its metadata there.
    """
    if not page.meta.get("description"):
        log.warning(f"page {page.file.src_uri} has no description in its front matter "
                    "(needed for search results and previews)")
    return context
