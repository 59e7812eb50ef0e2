"""Notebook pages (rendered by mkdocs-jupyter) made to fit the site.

* A notebook has no front matter: its page takes ``description`` from the notebook's metadata.
* Its page opens with a link to download the notebook (mkdocs-jupyter copies it beside the page).
* ``$...$`` and ``$$...$$`` in its Markdown cells, which mkdocs-jupyter leaves for MathJax, are
  rendered by KaTeX at build time (the one process of ``katex``), outside code.
  mkdocs-jupyter (0.26.3, as locked) has no option of its own for processing Markdown cells.
* mkdocs-jupyter inlines nbconvert's whole JupyterLab stylesheet (about 570 KB) into every
  notebook page, plus a MathJax configuration and a Mermaid loader that imports from a CDN when
  a page has diagrams. Only the CSS rules whose class selectors all occur on the page are kept,
  with the custom properties those rules use (directly or through other properties); the
  MathJax configuration, the Mermaid loader (no notebook here draws diagrams, and the site must
  not reach a CDN) and an empty ``<script src="">`` are removed.
* A notebook runs at every build (``execute: true``), which takes seconds: its executed page is
  kept (:func:`keep_executed_notebooks`) under a digest of everything its cells can see.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import pathlib
import posixpath
import re
import shutil
import sys
import tempfile
from importlib import metadata

import tinycss2

from . import paths
from .kept import installed_releases
from .katex import CLASS_ATTRIBUTE, math_html, with_font_preloads

STYLE = re.compile(r"<style[^>]*>(?P<css>.*?)</style>", re.S)
CLASS_SELECTOR = re.compile(r"\.([\w-]+)")
VARIABLE_USE = re.compile(r"var\(\s*(--[\w-]+)")
PARENTHESES = re.compile(r"\([^()]*\)")
UNWANTED_SCRIPTS = (
    re.compile(r'<script type="text/x-mathjax-config">.*?</script>', re.S),
    re.compile(r'<script type="module">(?:(?!</script>).)*?mermaid.*?</script>', re.S),
    re.compile(r'<script src="">\s*</script>'),
)
# Only stylesheets this large are nbconvert's bundle; the small ones (Pygments) stay as they are.
BUNDLE_MIN_CHARS = 100_000
MARKDOWN_CELL = re.compile(r'(<div class="[^"]*jp-RenderedMarkdown[^"]*"[^>]*>)(.*?)(</div>)', re.S)
# Display or inline math, and after inline math the text glued to it (up to a space, a tag or a $).
CELL_MATH = re.compile(r"\$\$(?P<display>.+?)\$\$|(?<![\\$])\$(?P<inline>[^$\n]+?)\$(?P<tail>[^\s<$]*)", re.S)
CODE = re.compile(r"(<(pre|code)\b.*?</\2>)", re.S)


def is_notebook(page) -> bool:
    return page.file.src_uri.endswith(".ipynb")


def _render_cell_math(cell_html: str, where: str) -> str:
    """Render ``$...$`` and ``$$...$$`` in a notebook Markdown cell, leaving code alone."""
    pieces = CODE.split(cell_html)
    out = []
    for index, piece in enumerate(pieces):
        if index % 3 == 1:
            out.append(piece)
        elif index % 3 == 0:
            out.append(
                CELL_MATH.sub(
                    lambda m: math_html(
                        html.unescape(m["display"] if m["display"] is not None else m["inline"]),
                        m["display"] is not None,
                        where,
                        m["tail"] or "",
                    ),
                    piece,
                )
            )
    return "".join(out)


def _selectors(prelude) -> list[str]:
    """Split a selector list at its top-level commas (not those inside :is(...) or :not(...))."""
    selectors, current = [], []
    for token in prelude:
        if token.type == "literal" and token.value == ",":
            selectors.append(tinycss2.serialize(current).strip())
            current = []
        else:
            current.append(token)
    selectors.append(tinycss2.serialize(current).strip())
    return [selector for selector in selectors if selector]


def _may_match(selector: str, classes: set[str]) -> bool:
    """False only when the selector needs a class the page does not have.

    Classes inside :is()/:not()/:where()/:has() are ignored, which keeps a rule that might
    apply rather than risk dropping one that does.
    """
    outer = selector
    while PARENTHESES.search(outer):
        outer = PARENTHESES.sub("", outer)
    return all(name in classes for name in CLASS_SELECTOR.findall(outer))


def _used_rules(rules, classes: set[str]) -> list:
    """(selector, declarations) or (at-rule prelude, nested list) for rules that can match."""
    kept = []
    for rule in rules:
        if rule.type == "qualified-rule":
            selectors = [selector for selector in _selectors(rule.prelude) if _may_match(selector, classes)]
            if selectors:
                declarations = tinycss2.parse_declaration_list(rule.content, skip_whitespace=True, skip_comments=True)
                kept.append((",".join(selectors), [d for d in declarations if d.type == "declaration"]))
        elif rule.type == "at-rule" and rule.lower_at_keyword in ("media", "supports") and rule.content:
            inner = tinycss2.parse_rule_list(rule.content, skip_whitespace=True, skip_comments=True)
            nested = _used_rules(inner, classes)
            if nested:
                kept.append(("@" + rule.at_keyword + tinycss2.serialize(rule.prelude), nested))
    return kept


def _declarations(tree):
    for head, body in tree:
        if head.startswith("@"):
            yield from _declarations(body)
        else:
            yield from body


def _needed_variables(tree) -> set[str]:
    """Custom properties reachable from the ordinary declarations that were kept."""
    definitions: dict[str, list[str]] = {}
    frontier: set[str] = set()
    for declaration in _declarations(tree):
        value = tinycss2.serialize(declaration.value)
        if declaration.name.startswith("--"):
            definitions.setdefault(declaration.name, []).append(value)
        else:
            frontier.update(VARIABLE_USE.findall(value))
    needed: set[str] = set()
    while frontier:
        name = frontier.pop()
        if name not in needed:
            needed.add(name)
            for value in definitions.get(name, []):
                frontier.update(VARIABLE_USE.findall(value))
    return needed


def _serialize(tree, needed: set[str]) -> str:
    out = []
    for head, body in tree:
        if head.startswith("@"):
            inner = _serialize(body, needed)
            if inner:
                out.append(f"{head}{{{inner}}}")
            continue
        declarations = [
            f"{d.name}:{tinycss2.serialize(d.value).strip()}{'!important' if d.important else ''}"
            for d in body
            if not d.name.startswith("--") or d.name in needed
        ]
        if declarations:
            out.append(f"{head}{{{';'.join(declarations)}}}")
    return "".join(out)


def slim_stylesheet(css: str, page_html: str) -> str:
    """The part of ``css`` that can apply to ``page_html`` (class-based pruning).

    Parsing nbconvert's stylesheet takes about a second, so the result is kept (``paths.CACHE``)
    under a digest of the stylesheet, the page's classes (all it reads of the page), tinycss2's
    version and this module (how it cuts).
    """
    classes = {name for attribute in CLASS_ATTRIBUTE.findall(page_html) for name in attribute.split()}
    digest = hashlib.sha256()
    for part in (css, " ".join(sorted(classes)), metadata.version("tinycss2"), pathlib.Path(__file__).read_text()):
        digest.update(hashlib.sha256(part.encode()).digest())
    kept = paths.CACHE / "stylesheets" / f"{digest.hexdigest()}.css"
    if kept.is_file():
        return kept.read_text(encoding="utf-8")
    tree = _used_rules(tinycss2.parse_stylesheet(css, skip_whitespace=True, skip_comments=True), classes)
    slim = _serialize(tree, _needed_variables(tree))
    kept.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=kept.parent, suffix=".tmp", delete=False, encoding="utf-8") as part:
        part.write(slim)
    os.replace(part.name, kept)  # atomic: a build running beside this one never reads half a file
    return slim


def take_description(page) -> None:
    """Take a notebook's description from its metadata (notebooks have no front matter)."""
    if is_notebook(page):
        notebook = json.loads(pathlib.Path(page.file.abs_src_path).read_text())
        page.meta.setdefault("description", notebook.get("metadata", {}).get("description"))


def with_download_link(html_content: str, page) -> str:
    """Offer every notebook page's source for download (mkdocs-jupyter copies it beside the page)."""
    if is_notebook(page):
        name = posixpath.basename(page.file.src_uri)
        link = f'<p class="posenc-download"><a href="{name}" download>Download this notebook ({name})</a></p>'
        return link + html_content
    return html_content


def finish_page(output: str, page) -> str:
    """A notebook's written page with its math rendered, its fonts preloaded, the unwanted scripts
    gone and nbconvert's stylesheet cut down to what the page uses; any other page as it is."""
    if not is_notebook(page):
        return output
    # The math first: the stylesheet is cut down to the classes of the finished page.
    output = MARKDOWN_CELL.sub(lambda m: m[1] + _render_cell_math(m[2], page.file.src_uri) + m[3], output)
    output = with_font_preloads(output, page.url)
    for pattern in UNWANTED_SCRIPTS:
        output = pattern.sub("", output)

    def slim(match: re.Match) -> str:
        if len(match["css"]) < BUNDLE_MIN_CHARS:
            return match[0]
        return f"<style>{slim_stylesheet(match['css'], output)}</style>"

    return STYLE.sub(slim, output)


def execution_key() -> str:
    """A digest of what an executed notebook depends on besides the notebook and mkdocs-jupyter's
    options: the files of the ``posenc`` package its cells import, the kernels Jupyter can find
    (their specs, in its search order) and the environment the kernel runs in (this Python and
    every installed distribution's version, nbconvert and mkdocs-jupyter among them)."""
    from jupyter_core.paths import jupyter_path

    digest = hashlib.sha256()

    def add(*parts: str | bytes) -> None:
        for part in parts:
            digest.update(hashlib.sha256(part.encode() if isinstance(part, str) else part).digest())

    package = paths.ROOT / "posenc"
    for file in sorted(package.rglob("*")):
        if file.is_file() and "__pycache__" not in file.parts and not file.name.startswith("."):
            add(file.relative_to(package).as_posix(), file.read_bytes())
    for folder in jupyter_path("kernels"):
        for spec in sorted(pathlib.Path(folder).glob("*/kernel.json")):
            add(str(spec), spec.read_bytes())
    add(sys.version)
    add(*installed_releases())
    return digest.hexdigest()


def keep_executed_notebooks(config) -> None:
    """Turn on mkdocs-jupyter's cache, in a folder named for :func:`execution_key`.

    Its own key covers the notebook's bytes and the plugin's options alone, so on its own it
    would serve a page run against an older library; in a folder of its own for each execution
    key, an entry is found only when nothing the run depends on has changed. The folders of
    other keys are removed (mkdocs-jupyter removes its unused entries within the folder).
    """
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None or not plugin.config["execute"]:
        return
    folder = paths.CACHE / "notebooks" / execution_key()
    for other in folder.parent.glob("*") if folder.parent.is_dir() else ():
        if other != folder:
            shutil.rmtree(other, ignore_errors=True)
    plugin.config["cache"] = True
    plugin.config["cache_dir"] = str(folder)
