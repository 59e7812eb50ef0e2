"""Math rendered by KaTeX at build time, in one Node process for the whole build.

After each page is rendered, TeX in ``\\(...\\)`` and ``\\[...\\]`` (what pymdownx.arithmatex
writes) is replaced by KaTeX's HTML (:func:`render_arithmatex`), so pages ship no math JavaScript
and need no network; the ``notebook_pages`` hook renders the math of notebook Markdown cells with
the same process and cache, and :func:`math_html` wraps both the same way. KaTeX's stylesheet
and fonts are copied into the site (:func:`ship_katex`), the faces the pages use cut down to the
characters their math draws.
"""

from __future__ import annotations

import hashlib
import html
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from importlib import metadata

from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

from . import paths
from .kept import Kept
from .state import BUILD

KATEX_DIST = paths.ROOT / "node_modules" / "katex" / "dist"
KATEX_SERVER = pathlib.Path(__file__).with_name("katex_server.js")
NODE_HELP = "install Node.js 20 with npm (Debian: apt-get install nodejs npm); KaTeX runs on it to render the math"


def require_node_and_katex() -> None:
    """Stop before building when Node.js or KaTeX is missing, saying how to install it."""
    if shutil.which("node") is None:
        raise PluginError(f"node is not installed or not on PATH: {NODE_HELP}")
    if not KATEX_DIST.is_dir():
        raise PluginError("KaTeX is not installed: run `npm ci` (or `make`)")


def renderer_parts() -> list[bytes]:
    """What KaTeX's HTML depends on besides the formula and its mode: the KaTeX that Node loads
    (its package file names the version and the script; the script's bytes) and the options,
    which live in ``katex_server.js``."""
    package = KATEX_DIST.parent / "package.json"
    return [
        package.read_bytes(),
        (KATEX_DIST.parent / json.loads(package.read_text(encoding="utf-8"))["main"]).read_bytes(),
        KATEX_SERVER.read_bytes(),
    ]


class KaTeX:
    """A KaTeX renderer in one Node process (``katex_server.js``), started on first use.

    What it renders is kept on disk (``paths.CACHE/katex``, a ``kept.Kept`` store named for the
    renderer's digest), so a later build with the same KaTeX and options starts no Node process
    for the formulas it has seen. :meth:`save` writes the formulas of the build that just succeeded.
    """

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.cache: dict[tuple[str, bool], tuple[str, frozenset[str]]] = {}
        self.kept = Kept("katex", renderer_parts)  # {mode + tex: HTML}

    def cache_file(self) -> pathlib.Path:
        return self.kept.file()

    def render(self, tex: str, display: bool, where: str) -> str:
        """``tex`` as HTML; an error names the page ``where`` it is. Its drawn characters join
        ``BUILD.math_characters``."""
        key = (tex, display)
        stored_key = ("D" if display else "I") + tex
        if key not in self.cache:
            rendered = self.kept.get(stored_key)
            if not isinstance(rendered, str):
                rendered = self._render(tex, display, where)
            self.cache[key] = (rendered, drawn_characters(rendered, where))
        rendered, characters = self.cache[key]
        self.kept.put(stored_key, rendered)
        BUILD.math_characters |= characters
        return rendered

    def _render(self, tex: str, display: bool, where: str) -> str:
        if self.process is None:
            if not KATEX_DIST.is_dir():
                raise PluginError("KaTeX is not installed: run `npm ci` (or `make`)")
            self.process = subprocess.Popen(
                ["node", str(KATEX_SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=paths.ROOT
            )
        self.process.stdin.write(json.dumps({"tex": tex, "display": display}) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        if "error" in answer:
            raise PluginError(f"{where}: math does not render: {answer['error']}")
        return answer["html"]

    def save(self) -> None:
        """Keep the formulas this build rendered (only those: a formula no page shows any more goes)."""
        self.kept.save()

    def forget_build(self) -> None:
        """Start a build's record of the formulas it uses afresh (``mkdocs serve`` builds again)."""
        self.kept.forget_build()

    def close(self) -> None:
        if self.process is not None:
            self.process.stdin.close()
            self.process.wait(timeout=10)
            self.process = None


KATEX = KaTeX()
# Where KaTeX's drawn HTML starts in a formula: after the MathML, which is there for assistive
# technology and never drawn, so its characters need no KaTeX glyph.
KATEX_HTML = '<span class="katex-html"'
# Text that katex.min.css generates (equation numbers from a counter), drawn in KaTeX_Main.
GENERATED_TEXT = frozenset("()0123456789")


def drawn_characters(rendered: str, where: str, distinct: bool = True):
    """The characters of a formula that KaTeX's HTML draws, from KaTeX's output ``rendered``
    for the page ``where``: as a frozenset, or with ``distinct`` false as the drawn text."""
    start = rendered.find(KATEX_HTML)
    if start < 0:
        raise PluginError(f"{where}: KaTeX's output has no {KATEX_HTML}> part: {rendered[:120]!r}")
    text = html.unescape(re.sub(r"<[^>]*>", "", rendered[start:]))
    return frozenset(text) if distinct else text


# How KaTeX (as locked in package-lock.json) opens each part of a formula; lines may break only
# between parts (KaTeX ends a part after a relation, a binary operator or an \\allowbreak, in both
# modes). A formula's HTML ends by closing its last part, then ``katex-html``, then ``katex``.
KATEX_PART = '<span class="katex-base">'
KATEX_END = "</span></span>"
KATEX_HTML_OPEN = '<span class="katex-html" aria-hidden="true">'
# An \\allowbreak in KaTeX's HTML, and the spaces at the end of a part (those after its last atom).
ALLOWBREAK = '<span class="mspace allowbreak"></span>'
TRAILING_SPACES = re.compile(r'(?:<span class="mspace[^"]*"(?: style="[^"]*")?></span>)+$')
# An inline formula that draws at most this many characters is never broken across lines: a
# break inside one as short as "j \le i" splits what is read as one word, and it takes at
# most about half a phone's column (the longest is a sum with its limits, about 180 px).
SHORT_INLINE = 24
SPACE_WIDTH = re.compile(r"margin-right:(-?[0-9.]+)em")
SPAN_TAG = re.compile(r"<span\b[^>]*>|</span>")


def formula_parts(rendered: str, where: str) -> tuple[str, list[str], str]:
    """KaTeX's HTML ``rendered`` cut into what comes before its first part, its parts (each a
    ``katex-base`` span, whole) and what follows the last one."""
    start = rendered.find(KATEX_HTML_OPEN)
    if start < 0:
        raise PluginError(f"{where}: KaTeX's HTML has no {KATEX_HTML_OPEN}: {rendered[:120]!r}")
    position = start + len(KATEX_HTML_OPEN)
    parts = []
    while rendered.startswith(KATEX_PART, position):
        depth = 0
        for tag in SPAN_TAG.finditer(rendered, position):
            depth += 1 if tag[0] != "</span>" else -1
            if depth == 0:
                parts.append(rendered[position : tag.end()])
                position = tag.end()
                break
    if not parts or not rendered.startswith("</span>", position):
        raise PluginError(f"{where}: KaTeX's HTML does not hold its formula parts as expected: {rendered[:120]!r}")
    return rendered[: start + len(KATEX_HTML_OPEN)], parts, rendered[position:]


def display_runs(parts: Sequence[str]) -> tuple[list[str], float]:
    """The parts of a display equation grouped into runs, each ending after an \\allowbreak (the
    last run at the end), and the widest space dropped from the end of a run (in ems), which
    posenc.css puts back between runs that share a line. A space at a line's end would push
    a centred line off centre, so it goes into the flex gap, which is drawn between runs only."""
    runs, run, gap = [], "", 0.0
    for part in parts:
        run += part
        if ALLOWBREAK in part:
            body = run[: -len("</span>")]
            spaces = TRAILING_SPACES.search(body)
            if spaces:
                gap = max(gap, sum(float(em) for em in SPACE_WIDTH.findall(spaces[0])))
                body = body[: spaces.start()]
            runs.append(body + "</span>")
            run = ""
    return runs + ([run] if run else []), gap


# {KaTeX's HTML of a formula: its parts and how many characters it draws}: the site shows the
# same formulas on many pages (and again on each build of ``mkdocs serve``), and cutting a
# formula into its parts is a pure function of its HTML.
_SHAPES: dict[str, tuple[str, tuple[str, ...], str, int]] = {}


def _shape(rendered: str, where: str) -> tuple[str, tuple[str, ...], str, int]:
    """:func:`formula_parts` of ``rendered`` and the number of characters it draws, each found once."""
    shape = _SHAPES.get(rendered)
    if shape is None:
        head, parts, end = formula_parts(rendered, where)
        shape = (head, tuple(parts), end, len(drawn_characters(rendered, where, distinct=False)))
        _SHAPES[rendered] = shape
    return shape


def math_html(tex: str, display: bool, where: str, tail: str = "") -> str:
    """``tex`` rendered by KaTeX and wrapped as every page shows math (posenc.css styles the wrappers).

    A display equation sits in a ``posenc-math`` box that scrolls sideways, with a cue, when the
    column is narrower than the equation. One written with ``\\allowbreak`` between its clauses
    (``a = b, \\qquad\\allowbreak c = d``) is cut there into ``posenc-run`` spans, which stand
    side by side where the column is wide enough and one under another where it is not, so a
    phone gets the lines it needs and a wide screen keeps the equation on one line.

    Inline math is followed by ``tail``, the text glued to it in the source (a comma, a full
    stop, a closing parenthesis). Chromium lets a line break after a KaTeX part (an inline
    block) wherever the element holding that part allows wrapping, even before a comma, and a
    nowrap ancestor further out does not stop it. So the parts that must stay together go
    into a ``posenc-nowrap`` span: all of a short formula's (at most ``SHORT_INLINE`` drawn
    characters), so that it is never split; of a longer one only the last, so that the line
    cannot break between it and the tail, while the formula keeps its break points (after
    relations and operators) before that part and still fits a phone's line.
    """
    rendered = KATEX.render(tex, display, where)
    head, parts, end, drawn = _shape(rendered, where)
    if display:
        if not any(ALLOWBREAK in part for part in parts):
            return f'<div class="posenc-math">{rendered}</div>'
        runs, gap = display_runs(parts)
        spans = "".join(f'<span class="posenc-run">{run}</span>' for run in runs)
        return (
            f'<div class="posenc-math posenc-math--runs" style="--posenc-run-gap:{gap:.4g}em">{head}{spans}{end}</div>'
        )
    short = drawn <= SHORT_INLINE
    if not tail and (len(parts) == 1 or not short):
        return rendered  # nothing to hold together
    kept = 0 if short else len(parts) - 1
    together = "".join(parts[kept:])
    return f'{head}{"".join(parts[:kept])}<span class="posenc-nowrap">{together}</span>{end}{tail}'


# Which of KaTeX's font faces a page's math draws in, read from the classes of KaTeX's HTML as
# katex.min.css assigns the faces: a face is needed when some element has every class of one of
# its entries (a formula's root, class "katex", is in KaTeX_Main). tests/browser/test_site_browser.py
# holds this to the faces Chromium loads for a page laid out in full.
FACE_CLASSES: dict[str, tuple[frozenset[str], ...]] = {
    face: tuple(frozenset(entry.split()) for entry in entries)
    for face, entries in {
        "Main-Regular": ("katex",),
        "Main-Bold": ("mathbf", "textbf"),
        "Main-Italic": ("mathit", "textit"),
        "Math-Italic": ("mathnormal",),
        "Math-BoldItalic": ("boldsymbol",),
        "AMS-Regular": ("amsrm", "mathbb", "textbb"),
        "Size1-Regular": ("delimsizing size1", "delim-size1", "op-symbol small-op"),
        "Size2-Regular": ("delimsizing size2", "op-symbol large-op"),
        "Size3-Regular": ("delimsizing size3",),
        "Size4-Regular": ("delimsizing size4", "delim-size4"),
        "Caligraphic-Regular": ("mathcal",),
        "Fraktur-Regular": ("mathfrak", "textfrak"),
        "Typewriter-Regular": ("mathtt", "texttt"),
        "Script-Regular": ("mathscr", "textscr"),
        "SansSerif-Regular": ("mathsf", "textsf"),
    }.items()
}
# An element's class attribute (also how ``notebooks`` cuts a notebook's stylesheet down).
CLASS_ATTRIBUTE = re.compile(r'class="([^"]*)"')
# Where overrides/main.html wants the page's font preloads, in the head.
FONT_PRELOADS_MARK = "<!-- posenc:math-font-preloads -->"


def math_faces(page_html: str) -> list[str]:
    """The KaTeX faces the math in ``page_html`` is drawn in (none for a page without math)."""
    # A page repeats a few class attributes thousands of times (KaTeX's spans): each distinct one
    # is split once. An entry whose classes are not all on the page somewhere cannot be on one
    # element, so only the entries that pass that cheap test are looked for element by element.
    class_sets = {frozenset(value.split()) for value in set(CLASS_ATTRIBUTE.findall(page_html))}
    present = frozenset().union(*class_sets)
    return [
        face
        for face, entries in FACE_CLASSES.items()
        if any(entry <= present and any(entry <= classes for classes in class_sets) for entry in entries)
    ]


def with_font_preloads(page_html: str, page_url: str) -> str:
    """``page_html`` with a preload for each KaTeX face its math uses, where the head marks them.

    posenc.css declares these faces font-display: optional, and Chromium holds the first paint
    for preloaded optional fonts, so math is drawn in its own fonts from the first paint and
    nothing reflows when they arrive (a face not yet loaded when first needed would stay in the
    fallback font for that view). A face the page does not use is not loaded. The faces are
    noted in ``BUILD.math_faces``: they are the ones ``ship_fonts`` cuts down.
    """
    if FONT_PRELOADS_MARK not in page_html:
        raise PluginError(f"{page_url or 'index'}: the theme's head has no place for the math font preloads")
    faces = math_faces(page_html)
    BUILD.math_faces.update(faces)
    links = "".join(
        f'<link rel="preload" href="{get_relative_url(f"assets/katex/fonts/KaTeX_{face}.woff2", page_url)}"'
        ' as="font" type="font/woff2" crossorigin>'
        for face in faces
    )
    return page_html.replace(FONT_PRELOADS_MARK, links, 1)


def ship_fonts(fonts: pathlib.Path) -> None:
    """KaTeX's fonts into the folder ``fonts``, each face the pages preload cut down to the
    characters the math draws (``BUILD.math_characters``; the text katex.min.css generates too).

    A page's preloaded faces are on its first paint's path (see ``with_font_preloads``), and
    KaTeX's full faces hold every glyph TeX might ask for, most of which the site never draws:
    cut down, the deep dive's six faces came to 39 kB instead of 85 kB when this was written.
    Glyphs reached through a kept glyph (ligatures, variants) and the hinting stay. The other
    faces (and the WOFF and TTF copies that only browsers without WOFF2 would load) ship whole.
    """
    cut = {f"KaTeX_{face}.woff2" for face in BUILD.math_faces}
    shutil.copytree(KATEX_DIST / "fonts", fonts, dirs_exist_ok=True, ignore=lambda folder, names: cut & set(names))
    text = "".join(sorted(BUILD.math_characters | GENERATED_TEXT))
    for name in sorted(cut):
        (fonts / name).write_bytes(cut_font(KATEX_DIST / "fonts" / name, text))


def cut_font(font_file: pathlib.Path, text: str) -> bytes:
    """The WOFF2 face ``font_file`` cut down to the characters of ``text``.

    Cutting takes about a second a face, so each cut face is kept (``paths.CACHE``) under a
    digest of the face's bytes, the characters, the versions of fontTools and Brotli that cut
    and compress it and this module (its options): the same inputs give back the same bytes
    without cutting again.
    """
    source = font_file.read_bytes()
    try:
        versions = [metadata.version(package).encode() for package in ("fonttools", "brotli")]
    except metadata.PackageNotFoundError as error:
        raise PluginError(f"cannot cut the math fonts down: {error} (run make to install requirements.lock)") from error
    digest = hashlib.sha256()
    for part in (source, text.encode(), *versions, pathlib.Path(__file__).read_bytes()):
        digest.update(hashlib.sha256(part).digest())
    kept = paths.CACHE / "fonts" / f"{digest.hexdigest()}.woff2"
    if kept.is_file():
        return kept.read_bytes()
    # Imported only to cut: fontTools' subsetter takes half a second to import, on every build.
    try:
        import brotli  # noqa: F401 (fontTools writes WOFF2 with it, imported only then)
        from fontTools import subset
        from fontTools.ttLib import TTFont
    except ImportError as error:
        raise PluginError(f"cannot cut the math fonts down: {error} (run make to install requirements.lock)") from error
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    # Keeping KaTeX's timestamp keeps the build reproducible (saving would stamp the time).
    font = TTFont(io.BytesIO(source), recalcTimestamp=False)
    cutter = subset.Subsetter(options)
    cutter.populate(text=text)
    cutter.subset(font)
    written = io.BytesIO()
    font.save(written)
    kept.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=kept.parent, suffix=".tmp", delete=False) as part:
        part.write(written.getvalue())
    os.replace(part.name, kept)  # atomic: a build running beside this one never reads half a face
    return written.getvalue()


# An arithmatex element, and after inline math the text glued to it (up to a space or a tag).
ARITHMATEX = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\s*(?:\\\((?P<inline>.*?)\\\)|\\\[(?P<display>.*?)\\\])\s*</(?P=tag)>'
    r"(?(inline)(?P<tail>[^\s<]*))",
    re.S,
)


def render_arithmatex(page_html: str, where: str) -> str:
    """``page_html`` (of the page ``where``) with each arithmatex element rendered by KaTeX."""

    def arithmatex(match: re.Match) -> str:
        display = match["display"] is not None
        tex = html.unescape(match["display"] if display else match["inline"])
        return math_html(tex, display, where, match["tail"] or "")

    return ARITHMATEX.sub(arithmatex, page_html)


def ship_katex(site_dir: str) -> None:
    """KaTeX's stylesheet and fonts into the site (the faces in use cut down to the characters drawn)."""
    target = pathlib.Path(site_dir) / "assets" / "katex"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(KATEX_DIST / "katex.min.css", target / "katex.min.css")
    ship_fonts(target / "fonts")
