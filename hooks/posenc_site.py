"""MkDocs hook of the posenc site: page markers, generated pages, and build-time math.

Markers in a page's Markdown, expanded before MkDocs parses it (an unknown marker, figure
or derivation ID stops the build):

``{{ figure: NAME }}``
    The figure ``docs/figures/NAME.svg`` with its size, alt text and caption (all from the
    ``.json`` that ``posenc.plotting.save`` wrote) and a link to the page of its script.
``{{ ref: ID }}``
    A link to derivation ``ID`` on the Derivations page.
``{{ eq: ID }}``
    Derivation ``ID``'s statement as a display equation, followed by a link to its proof.
``{{ calc FORMAT: EXPRESSION }}``
    ``EXPRESSION`` evaluated with ``posenc`` and ``np`` in scope, formatted with ``FORMAT``
    (a format spec such as ``.4f``; arrays are formatted element by element).
``{{ bibtex: ID }}``
    Derivation ``ID``'s BibTeX record as a code block (the one its Derivations entry shows).
``{{ cite: site }}``, ``{{ cite: articles }}``
    The BibTeX record of the whole site; a table of the articles (the pages under the nav's
    "Learn" section) followed by one record per article.
``{{ release }}``
    The release the records describe, as "version X, released D Month YYYY".
``{{ url: PATH }}``
    The address to cite for ``PATH`` (for example ``derivations/#kernel``), in code format.
``{{ derivations }}``
    Every registered derivation: statement, assumptions, proof steps, source and BibTeX.

Generated pages (never files in ``docs/``): ``figures/NAME/`` for each rendered figure and
``derivations/source/`` with the SymPy source of every proof.

After each page is rendered, TeX in ``\\(...\\)``/``\\[...\\]`` (from pymdownx.arithmatex)
and ``$...$``/``$$...$$`` in notebook Markdown cells is rendered to HTML by KaTeX in one
Node process, so pages ship no math JavaScript and need no network.
"""

from __future__ import annotations

import datetime
import html
import inspect
import json
import logging
import pathlib
import posixpath
import re
import shutil
import subprocess
import textwrap
from urllib.parse import urlsplit

import numpy as np
import yaml
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from mkdocs.utils.meta import get_data

import posenc
from posenc import derivations as _derivations  # noqa: F401 - registers every derivation
from posenc.registry import GENERAL, REGISTRY

log = logging.getLogger("mkdocs.hooks.posenc")

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures"
VERIFY_REPORT = ROOT / "build" / "verify.json"
CITATION = ROOT / "CITATION.cff"
KATEX_DIST = ROOT / "node_modules" / "katex" / "dist"
MARKER = re.compile(r"\{\{\s*(?P<kind>[a-z]+)(?:\s+(?P<spec>[^:}]*?))?\s*(?::\s*(?P<arg>.*?))?\s*\}\}")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def _relative(page_src: str, target: str) -> str:
    """Path from the Markdown file ``page_src`` to the docs file ``target``."""
    return posixpath.relpath(target, posixpath.dirname(page_src) or ".")


def _figure_meta(name: str) -> dict:
    path = FIGURES / f"{name}.json"
    if not path.is_file():
        raise PluginError(f"unknown figure {name!r}: no figures_src/{name}.py has been rendered (run make)")
    return json.loads(path.read_text())


def _figure(name: str, page_src: str, *, link_source: bool = True) -> str:
    meta = _figure_meta(name)
    alt = meta["alt"].replace("[", "(").replace("]", ")")
    image = _relative(page_src, f"figures/{name}.svg")
    source = f' [Source: `{meta["script"]}`]({_relative(page_src, f"figures/{name}.md")})' if link_source else ""
    return (
        f'\n<figure class="posenc-figure" id="fig-{name}" markdown="span">\n'
        f'![{alt}]({image}){{ width="{meta["width"]}" height="{meta["height"]}" }}\n'
        f'<figcaption markdown="span">**{meta["title"]}** {meta["caption"]}{source}</figcaption>\n'
        "</figure>\n"
    )


def _derivation(identifier: str):
    if identifier not in REGISTRY:
        raise PluginError(f"unknown derivation ID {identifier!r} (known: {', '.join(REGISTRY)})")
    return REGISTRY[identifier]


def _ref(identifier: str, page_src: str) -> str:
    entry = _derivation(identifier)
    target = _relative(page_src, "derivations/index.md")
    return f'[`{identifier}`]({target}#{identifier} "{entry.title}")'


def _eq(identifier: str, page_src: str) -> str:
    entry = _derivation(identifier)
    scope = f'<span class="posenc-scope">{entry.scope_label}</span>'
    return (
        f"\n$$\n{entry.statement}\n$$\n\n"
        f'<p class="posenc-eq-ref" markdown="span">Proved as {_ref(identifier, page_src)} ({scope})</p>\n'
    )


def _calc(expression: str, spec: str | None) -> str:
    try:
        # Page text is trusted source, like the figure scripts; NumPy needs the real builtins.
        value = eval(expression, {"posenc": posenc, "np": np})  # noqa: S307
    except Exception as error:  # noqa: BLE001 - name the marker that failed
        raise PluginError(f"calc marker {expression!r} failed: {type(error).__name__}: {error}") from error
    array = np.asarray(value)
    if array.ndim == 0:
        return format(array.item(), spec or "")
    return "[" + ", ".join(format(v, spec or "") for v in array.ravel().tolist()) + "]"


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
    return {"title": data["title"], "version": str(data["version"]), "date": released}


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
    return textwrap.dedent(
        f"""\
        @misc{{{key},
          title        = {{{title}}},
          author       = {{{{posenc contributors}}}},
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
        f"{_cited_root(site_url)}derivations/#{entry.id}",
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
        meta = get_data((ROOT / "docs" / path).read_text(encoding="utf-8"))[1] if path.endswith(".md") else {}
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
    raise PluginError(f"{page_src}: unknown cite marker {what!r} (known: site, articles)")


def _release_text() -> str:
    release = _release()
    date = release["date"]
    return f"version {release['version']}, released {date.day} {date:%B} {date.year}"


def _derivations(page_src: str, site_url: str) -> str:
    report = _verify_report()
    source_page = _relative(page_src, "derivations/source.md")
    index = ["| ID | What it states | Status |", "| --- | --- | --- |"]
    for entry in REGISTRY.values():
        summary = entry.summary.replace("|", "\\|")  # a bare | would end the table cell
        status = f"proved {entry.scope_label}" if entry.scope == GENERAL else entry.scope_label
        index.append(f"| [`{entry.id}`](#{entry.id}) | {summary} | {status} |")
    parts = ["## Index { #index }\n\n" + "\n".join(index) + "\n"]
    for entry in REGISTRY.values():
        seconds = report[entry.id]["seconds"]
        steps = "\n".join(f"{n}. {step}" for n, step in enumerate(entry.steps, 1))
        assumptions = "; ".join(entry.assumptions)
        bibtex = textwrap.indent(_bibtex(entry, site_url), "        ")
        if entry.scope == GENERAL:
            scope = "proved in general, for every size the assumptions allow."
        else:
            scope = f"{entry.scope_label}; other sizes are only spot-checked numerically."
        parts.append(
            f"## {entry.title} {{ #{entry.id} }}\n\n"
            f"**ID** `{entry.id}` · proved by SymPy in {seconds:.2f} s at build time · "
            f"[SymPy source]({source_page}#{entry.id})\n\n"
            f"$$\n{entry.statement}\n$$\n\n"
            f"{entry.summary}\n\n"
            f"**Scope:** {scope}\n\n"
            f"**Assumptions:** {assumptions}.\n\n"
            f"**Proof.**\n\n{steps}\n\n"
            f'??? quote "Cite this derivation"\n\n    ```bibtex\n{bibtex}\n    ```\n'
        )
    return "\n".join(parts)


def _derivation_sources() -> str:
    parts = [
        "---\ntitle: SymPy sources of the derivations\n"
        "description: The SymPy proof and the NumPy cross-check behind every derivation ID of posenc.\n---\n\n"
        "# SymPy sources of the derivations\n\n"
        "Each section holds the proof that `python -m posenc.verify` runs for one ID, then the numeric "
        "cross-check against the posenc NumPy functions. The code lives in `posenc/derivations.py`.\n"
    ]
    for entry in REGISTRY.values():
        code = inspect.getsource(entry.prove)
        if entry.check is not None:
            code += "\n\n" + inspect.getsource(entry.check)
        parts.append(
            f"\n## `{entry.id}` {{ #{entry.id} }}\n\n[Back to the statement](index.md#{entry.id})\n\n```python\n{code}```\n"
        )
    return "".join(parts)


def _figure_page(name: str) -> str:
    meta = _figure_meta(name)
    code = (ROOT / meta["script"]).read_text()
    first = meta["caption"].split(". ")[0].rstrip(".")
    return (
        f"---\ntitle: {json.dumps('Figure: ' + meta['title'].rstrip('.'))}\ndescription: {json.dumps(first + '.')}\n---\n\n"
        f"# {meta['title'].rstrip('.')}\n\n{{{{ figure: {name} }}}}\n\n"
        f"## Script {{ #script }}\n\n`{meta['script']}` draws this figure; `make` runs it again whenever it "
        "or the posenc helper changes.\n\n"
        f"```python\n{code}```\n"
    )


# ---------------------------------------------------------------------------------------
# MkDocs events

_serving = False


def on_startup(command, dirty):
    global _serving
    _serving = command == "serve"


def on_pre_build(config):
    """While previewing, bring stale figures and the derivation report up to date first."""
    if _serving:
        result = subprocess.run(["make", "--no-print-directory", "figures", "verify"], cwd=ROOT)
        if result.returncode:
            log.error("make figures verify failed; the preview shows the last good figures")


def on_files(files, config):
    """Add the generated pages: one per rendered figure, and the derivations' sources."""
    for meta_path in sorted(FIGURES.glob("*.json")):
        files.append(File.generated(config, f"figures/{meta_path.stem}.md", content=_figure_page(meta_path.stem)))
    files.append(File.generated(config, "derivations/source.md", content=_derivation_sources()))
    return files


def on_page_markdown(markdown, page, config, files):
    src = page.file.src_uri
    if src.endswith(".ipynb"):
        # Notebooks have no front matter; their metadata carries the page description.
        notebook = json.loads(pathlib.Path(page.file.abs_src_path).read_text())
        page.meta.setdefault("description", notebook.get("metadata", {}).get("description"))
    if not page.meta.get("description"):
        log.warning(f"page {src} has no description in its front matter (needed for search results and previews)")

    def expand(match: re.Match) -> str:
        kind, spec, arg = match["kind"], match["spec"], (match["arg"] or "").strip()
        if kind == "figure":
            return _figure(arg, src, link_source=not src.startswith("figures/"))
        if kind == "ref":
            return _ref(arg, src)
        if kind == "eq":
            return _eq(arg, src)
        if kind == "calc":
            return _calc(arg, spec)
        if kind == "bibtex":
            return f"```bibtex\n{_bibtex(_derivation(arg), config['site_url'])}\n```"
        if kind == "derivations":
            return _derivations(src, config["site_url"])
        if kind == "cite":
            return _cite(arg, src, config)
        if kind == "release":
            return _release_text()
        if kind == "url":
            return f"`{_cited_root(config['site_url'])}{arg}`"
        raise PluginError(f"{src}: unknown marker {match[0]!r}")

    def expand_prose(text: str) -> str:
        leftover = MARKER.sub("", text)
        if "{{" in leftover:
            # A marker broken across lines (or mistyped) would otherwise reach readers as raw text.
            line = leftover[leftover.index("{{") :].split("\n", 1)[0]
            raise PluginError(f"{src}: unexpanded marker (markers must sit on one line): {line[:80]!r}")
        return MARKER.sub(expand, text)

    # Markers inside fenced code blocks are shown, not expanded.
    pieces, last = [], 0
    for fence in FENCE.finditer(markdown):
        pieces.append(expand_prose(markdown[last : fence.start()]))
        pieces.append(fence[0])
        last = fence.end()
    pieces.append(expand_prose(markdown[last:]))
    return "".join(pieces)


def on_page_content(html_content, page, config, files):
    """Offer every notebook page's source for download (mkdocs-jupyter copies it beside the page)."""
    if page.file.src_uri.endswith(".ipynb"):
        name = posixpath.basename(page.file.src_uri)
        link = f'<p class="posenc-download"><a href="{name}" download>Download this notebook ({name})</a></p>'
        return link + html_content
    return html_content


class _KaTeX:
    """One Node process running KaTeX for the whole build."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.cache: dict[tuple[str, bool], str] = {}

    def render(self, tex: str, display: bool, where: str) -> str:
        key = (tex, display)
        if key not in self.cache:
            if self.process is None:
                if not KATEX_DIST.is_dir():
                    raise PluginError("KaTeX is not installed: run `npm ci` (or `make`)")
                self.process = subprocess.Popen(
                    ["node", str(pathlib.Path(__file__).with_name("katex_server.js"))],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
                )
            self.process.stdin.write(json.dumps({"tex": tex, "display": display}) + "\n")
            self.process.stdin.flush()
            answer = json.loads(self.process.stdout.readline())
            if "error" in answer:
                raise PluginError(f"{where}: math does not render: {answer['error']}")
            self.cache[key] = answer["html"]
        return self.cache[key]

    def close(self) -> None:
        if self.process is not None:
            self.process.stdin.close()
            self.process.wait(timeout=10)
            self.process = None


KATEX = _KaTeX()
ARITHMATEX = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\s*(?:\\\((?P<inline>.*?)\\\)|\\\[(?P<display>.*?)\\\])\s*</(?P=tag)>', re.S
)
NOTEBOOK_MARKDOWN = re.compile(r'(<div class="[^"]*jp-RenderedMarkdown[^"]*"[^>]*>)(.*?)(</div>)', re.S)
NOTEBOOK_MATH = re.compile(r"\$\$(?P<display>.+?)\$\$|(?<![\\$])\$(?P<inline>[^$\n]+?)\$", re.S)
CODE = re.compile(r"(<(pre|code)\b.*?</\2>)", re.S)


def _notebook_cell(cell_html: str, where: str) -> str:
    """Render ``$...$`` and ``$$...$$`` in a notebook Markdown cell, leaving code alone."""
    pieces = CODE.split(cell_html)
    out = []
    for index, piece in enumerate(pieces):
        if index % 3 == 1:
            out.append(piece)
        elif index % 3 == 0:
            out.append(
                NOTEBOOK_MATH.sub(
                    lambda m: KATEX.render(
                        html.unescape(m["display"] if m["display"] is not None else m["inline"]),
                        m["display"] is not None,
                        where,
                    ),
                    piece,
                )
            )
    return "".join(out)


def on_post_page(output, page, config):
    where = page.file.src_uri

    def arithmatex(match: re.Match) -> str:
        display = match["display"] is not None
        tex = html.unescape(match["display"] if display else match["inline"])
        rendered = KATEX.render(tex, display, where)
        return f'<div class="posenc-math">{rendered}</div>' if display else rendered

    output = ARITHMATEX.sub(arithmatex, output)
    if "jp-RenderedMarkdown" in output:
        output = NOTEBOOK_MARKDOWN.sub(lambda m: m[1] + _notebook_cell(m[2], where) + m[3], output)
    return output


def on_post_build(config):
    """Ship KaTeX's stylesheet and fonts with the site; stop the KaTeX process."""
    KATEX.close()
    target = pathlib.Path(config["site_dir"]) / "assets" / "katex"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(KATEX_DIST / "katex.min.css", target / "katex.min.css")
    shutil.copytree(KATEX_DIST / "fonts", target / "fonts", dirs_exist_ok=True)


def on_shutdown():
    KATEX.close()
