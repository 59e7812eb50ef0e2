"""The docstrings on the API reference as Markdown renders them (hooks/site_build/docstring_markdown.py): each
doctest a code block with its lines kept, no quote block, and math such as 2**53 left literal.
The transformation is tested on its own, then the built page against the docstrings' sources."""

from __future__ import annotations

import collections
import html
import html.parser
import pathlib
import re

import griffe
from site_build import docstring_markdown as extension  # as mkdocs.yml names it to griffe

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEADING = re.compile(r'<h[1-6] id="(posenc\.[\w.]+)" class="doc doc-heading"')


markdown_safe = extension.markdown_safe


# --- the transformation ---------------------------------------------------------------------------


def test_a_doctest_run_becomes_one_pycon_fence_and_the_text_after_it_stays_prose():
    text = (
        "Returns the pair.\n"
        ">>> inv, scale = f(4, short=[1, 1],\n"
        "...     long=[1, 4])\n"
        ">>> inv.tolist(), round(scale, 6)\n"
        "([1.0, 0.0025], 1.190238)\n"
        "\n"
        "Text after the example.\n"
        ">>> g()\n"
        "  indented output\n"
        "\n"
        "Last paragraph."
    )
    assert markdown_safe(text).split("\n") == [
        "Returns the pair.",
        "",
        "```pycon",
        ">>> inv, scale = f(4, short=[1, 1],",
        "...     long=[1, 4])",
        ">>> inv.tolist(), round(scale, 6)",
        "([1.0, 0.0025], 1.190238)",
        "```",
        "",
        "Text after the example.",
        "",
        "```pycon",
        ">>> g()",
        "  indented output",
        "```",
        "",
        "Last paragraph.",
    ]


def test_an_indented_doctest_ends_at_a_smaller_indent_and_keeps_its_indent():
    text = "* item:\n\n  >>> x = 1\n  >>> x\n  1\n* next item"
    assert markdown_safe(text) == "* item:\n\n  ```pycon\n  >>> x = 1\n  >>> x\n  1\n  ```\n\n* next item"


def test_math_like_asterisks_in_prose_are_escaped():
    assert markdown_safe("below 2**53 in magnitude, 2**63 - 1 and a*b*c") == (
        r"below 2\*\*53 in magnitude, 2\*\*63 - 1 and a\*b\*c"
    )
    assert markdown_safe("|i - j|**r2 and 2**-27 and (t)*(s)") == r"|i - j|\*\*r2 and 2\*\*-27 and (t)\*(s)"


def test_code_spans_fences_and_doctests_keep_their_asterisks():
    text = "``t * omega`` and `2**53`, ``a*b`` wrapped ``a*b\nc**d`` then 2**8\n\n```python\nz = 2**53\n```"
    assert markdown_safe(text) == text.replace("then 2**8", r"then 2\*\*8")
    doctest = ">>> 2**53 - 1\n9007199254740991"
    assert markdown_safe(doctest) == f"```pycon\n{doctest}\n```"


def test_text_without_doctests_or_math_asterisks_is_unchanged():
    for text in (
        "One line.",
        "A paragraph\nover two lines.\n\nAnother, with *emphasis*, a (*parenthesised* one) and **bold**.",
        "* a list item\n* another, ``with code``\n\n  indented continuation",
        "a * b and x ** 2, spaced as operators",
        "quoted > not a prompt, >>>inline is not one either",
        "",
    ):
        assert markdown_safe(text) == text


def test_the_transformation_is_idempotent():
    text = "2**53 and a*b\n>>> f(*args)\n1\n\nafter"
    once = markdown_safe(text)
    assert markdown_safe(once) == once


def test_the_extension_rewrites_the_docstrings_griffe_loads():
    loader = griffe.GriffeLoader(extensions=griffe.load_extensions(extension.DocstringMarkdown))
    sinusoidal = loader.load("posenc.encodings")["sinusoidal"]
    assert "```pycon\n>>> sinusoidal([2], 8)" in sinusoidal.docstring.value
    assert r"below 2\*\*31" in sinusoidal.docstring.value


# --- the built page -------------------------------------------------------------------------------


class DocstringParser(html.parser.HTMLParser):
    """What the API page's docstring bodies (``div.doc-contents``) hold: the tags Markdown made of
    the text that are not expected there, and the text of each code block."""

    UNEXPECTED = {"blockquote", "strong", "em"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.divs: list[bool] = []  # for each open div: whether it is a docstring body
        self.unexpected: list[str] = []  # each such tag, with the text that follows it
        self.code_blocks: list[tuple[str, bool]] = []  # (text, highlighted as a doctest)
        self.pending: str | None = None
        self.block: list[str] | None = None
        self.prompt_token = False

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if tag == "div":
            self.divs.append("doc-contents" in classes)
        if not any(self.divs):
            return
        if tag in self.UNEXPECTED:
            self.pending = tag
            self.unexpected.append(f"<{tag}>")
        elif tag == "pre":
            self.block, self.prompt_token = [], False
        elif tag == "span" and self.block is not None and "gp" in classes:
            self.prompt_token = True  # Pygments' pycon lexer marks a prompt "gp"

    def handle_endtag(self, tag):
        if tag == "div" and self.divs:
            self.divs.pop()
        elif tag == "pre" and self.block is not None:
            self.code_blocks.append(("".join(self.block), self.prompt_token))
            self.block = None

    def handle_data(self, data):
        if self.block is not None:
            self.block.append(data)
        if self.pending and data.strip():
            self.unexpected[-1] += " " + " ".join(data.split())[:60]
            self.pending = None


def _doctest_runs(docstring: str) -> list[str]:
    """Each run of doctest lines in a docstring: a ">>>" line and the lines after it up to a blank
    line or a smaller indent, dedented, as the code block showing it holds them."""
    runs: list[list[str]] = []
    indent: int | None = None
    for line in docstring.split("\n"):
        depth = len(line) - len(line.lstrip())
        if indent is not None and line.strip() and depth >= indent:
            runs[-1].append(line[indent:])
            continue
        indent = None
        if line.strip() == ">>>" or line.lstrip().startswith(">>> "):
            indent = depth
            runs.append([line[indent:]])
    return ["\n".join(run) + "\n" for run in runs]


def _rendered_docstrings(page: str) -> dict[str, str]:
    """{dotted path: docstring as written} of each object the API page documents, and of each
    module it documents (shown without a heading), read by griffe without the site's extension."""
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    paths = re.findall(r"^::: (posenc(?:\.\w+)+)$", api, re.M) + HEADING.findall(page)
    package = griffe.load("posenc")
    objects = {path: package[path.removeprefix("posenc.")] for path in paths}
    return {path: obj.docstring.value for path, obj in objects.items() if obj.docstring}


def test_the_api_docstrings_render_no_quote_block_and_no_emphasis(site_dir):
    parser = DocstringParser()
    parser.feed((site_dir / "api" / "index.html").read_text(encoding="utf-8"))
    assert parser.code_blocks, "no code block in the docstrings: is the API page built?"
    assert parser.unexpected == [], "Markdown read docstring text as a quote or emphasis"


def test_every_docstring_example_is_a_doctest_code_block_with_its_lines(site_dir):
    page = (site_dir / "api" / "index.html").read_text(encoding="utf-8")
    parser = DocstringParser()
    parser.feed(page)
    examples = collections.Counter(
        run for docstring in _rendered_docstrings(page).values() for run in _doctest_runs(docstring)
    )
    assert examples, "no example in the docstrings: are they read?"
    shown = [(text, prompt) for text, prompt in parser.code_blocks if ">>>" in text]
    assert all(prompt for _, prompt in shown), "a doctest block not highlighted as pycon"
    assert collections.Counter(text for text, _ in shown) == examples


def test_math_in_docstring_prose_is_shown_as_written(site_dir):
    page = (site_dir / "api" / "index.html").read_text(encoding="utf-8")
    # Each term such as 2**53 is on the page at least as often as the docstrings write it (emphasis
    # would take the asterisks of a pair of them, and the page's other text can only add some).
    math = re.compile(r"\w+\*\*-?\w+")
    shown = collections.Counter(math.findall(html.unescape(re.sub(r"<[^>]+>", "", page))))
    written = collections.Counter(
        term for docstring in _rendered_docstrings(page).values() for term in math.findall(docstring)
    )
    assert written["2**53"] > 1
    assert {term: count for term, count in written.items() if shown[term] < count} == {}
