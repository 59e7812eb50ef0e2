"""MkDocs hook: keep notebook pages light and self-contained.

mkdocs-jupyter inlines nbconvert's whole JupyterLab stylesheet (about 570 KB) into every
notebook page, plus a MathJax configuration and a Mermaid loader that imports from a CDN when
a page has diagrams. This hook, run after the page is rendered:

* keeps only the CSS rules whose class selectors all occur on the page, and only the custom
  properties those rules use (directly or through other properties);
* removes the MathJax configuration (math is rendered by KaTeX at build time), the Mermaid
  loader (no notebook here draws diagrams, and the site must not reach a CDN) and an empty
  ``<script src="">``.
"""

from __future__ import annotations

import re

import tinycss2

STYLE = re.compile(r"<style[^>]*>(?P<css>.*?)</style>", re.S)
CLASS_ATTRIBUTE = re.compile(r'class="([^"]*)"')
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
            selectors = [
                selector
                for selector in _selectors(rule.prelude)
                if _may_match(selector, classes)
            ]
            if selectors:
                declarations = tinycss2.parse_declaration_list(rule.content, skip_whitespace=True, skip_comments=True)
                kept.append((",".join(selectors), [d for d in declarations if d.type == "declaration"]))
        elif rule.type == "at-rule" and rule.lower_at_keyword in ("media", "supports") and rule.content:
            nested = _used_rules(tinycss2.parse_rule_list(rule.content, skip_whitespace=True, skip_comments=True), classes)
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
    """The part of ``css`` that can apply to ``page_html`` (class-based pruning)."""
    classes = {name for attribute in CLASS_ATTRIBUTE.findall(page_html) for name in attribute.split()}
    tree = _used_rules(tinycss2.parse_stylesheet(css, skip_whitespace=True, skip_comments=True), classes)
    return _serialize(tree, _needed_variables(tree))


def on_post_page(output, page, config):
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    for pattern in UNWANTED_SCRIPTS:
        output = pattern.sub("", output)

    def slim(match: re.Match) -> str:
        if len(match["css"]) < BUNDLE_MIN_CHARS:
            return match[0]
        return f"<style>{slim_stylesheet(match['css'], output)}</style>"

    return STYLE.sub(slim, output)
