"""Every figure script: it runs, its output meets the quality bar, it is deterministic, it is used."""

from __future__ import annotations

import ast
import io
import json
import pathlib
import re
import subprocess
import sys
import tokenize
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser

import pytest

from posenc.site import plotting, render
from posenc.site.figure_files import FIGURE_DIR, NARROW, WIDE, FigureMeta, figure_files

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "figures_src").glob("*.py"))
FIGURE_MARKER = re.compile(r"\{\{\s*figure:\s*([\w-]+)\s*\}\}")
MAX_BYTES = 150 * 1024
SVG = "{http://www.w3.org/2000/svg}"


def make_variable(name: str) -> str:
    """The value of one of the Makefile's variables, as make reads it."""
    shown = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-s",
            "-C",
            str(ROOT),
            "--eval",
            f"show-variable: ; @echo $({name})",
            "show-variable",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return shown.stdout.strip()


@pytest.fixture(scope="module")
def built() -> pathlib.Path:
    """The render `make` made: the figures the site shows, refused if any is stale by make's own rule."""
    folder = ROOT / FIGURE_DIR
    depends = [ROOT / name for name in make_variable("FIGURE_INPUTS").split() + [make_variable("VENV_STAMP")]]
    stale = render.stale(SCRIPTS, folder, depends)
    if stale:
        pytest.fail(f"figures older than their scripts or inputs: {[s.stem for s in stale]}; run `make`")
    return folder


@pytest.fixture(scope="module")
def rendered(built, tmp_path_factory) -> tuple[pathlib.Path, pathlib.Path]:
    """Two renders of every figure: the one `make` made and a fresh one into a new folder (every
    script run again: `make test-site` leaves the one test that needs it to `make test`)."""
    fresh = tmp_path_factory.mktemp("fresh")
    # In a process of its own, as make renders: this worker's earlier tests may have changed
    # Matplotlib's settings, which the renderer's children would inherit.
    run = subprocess.run(
        [sys.executable, "-m", "posenc.site.render", "--out", str(fresh), *map(str, SCRIPTS)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, f"a figure script failed:\n{run.stderr[-3000:]}"
    return built, fresh


def test_make_reads_the_figure_folder_that_python_defines():
    """The Makefile reads FIGURE_DIR from posenc/site/figure_files.py with sed; both readings agree."""
    assert make_variable("FIGURE_DIR") == FIGURE_DIR


def test_there_are_figure_scripts():
    assert len(SCRIPTS) >= 1


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_script_follows_the_conventions(script):
    source = script.read_text()
    tree = ast.parse(source)
    docstring = ast.get_docstring(tree)
    assert docstring and docstring.splitlines()[0].endswith("."), "docstring's first line is the title"
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert "main" in functions
    assert "plt.show" not in source and "os.chdir" not in source and "os.environ" not in source
    assert "from posenc.site import plotting" in source and "plotting.save(" in source
    # Counted in logical lines (statements), so the formatter's line breaks do not count against it.
    logical_lines = sum(
        1 for token in tokenize.generate_tokens(io.StringIO(source).readline) if token.type == tokenize.NEWLINE
    )
    assert logical_lines <= 80, "a figure script stays short; move shared code to posenc.site.plotting"


def layouts_of(name: str, directory: pathlib.Path) -> list[str]:
    """The layouts figure ``name`` has in ``directory``, as its wide sidecar says."""
    return [WIDE, NARROW] if FigureMeta.read(figure_files(name, directory)[0]).narrow else [WIDE]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_output_is_small_described_and_deterministic(rendered, script):
    first, second = rendered
    layouts = layouts_of(script.stem, first)
    assert layouts == layouts_of(script.stem, second)
    for layout in layouts:
        meta_path, svg = figure_files(script.stem, first, layout)
        assert svg.stat().st_size <= MAX_BYTES, f"{svg.name} is {svg.stat().st_size} bytes"
        assert svg.read_bytes() == (second / svg.name).read_bytes(), f"two renders of {svg.name} differ"
        meta = json.loads(meta_path.read_text())
        assert meta["script"] == f"figures_src/{script.name}"
        assert 200 <= meta["width"] <= 1400 and 100 <= meta["height"] <= 1400
        assert len(meta["alt"].split()) >= 8, "alt text says what the figure shows"
        assert meta["caption"] and meta["title"]
    assert sorted(path.name for path in first.glob(f"{script.stem}.*")) == sorted(
        path.name for layout in layouts for path in figure_files(script.stem, first, layout)
    ), "no file of a layout the figure does not have"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_every_layout_is_legible_where_the_page_shows_it(built, script):
    """Text of 11 px or more at the drawn size, and a figure wider than a phone's column has a
    narrow layout no wider than that column: the page never shows a layout shrunk."""
    phone = round(plotting.NARROW_WIDTH * plotting.PX_PER_INCH)
    for layout in layouts_of(script.stem, built):
        meta_path, svg_path = figure_files(script.stem, built, layout)
        root = ElementTree.parse(svg_path).getroot()
        sizes = [
            float(size.removesuffix("px"))
            for element in root.iter()
            for size in re.findall(r"font-size: ([\d.]+px)", element.get("style", ""))
        ]
        _, _, view_width, _ = (float(v) for v in root.get("viewBox").split())
        pixels = min(sizes) * int(root.get("width")) / view_width
        assert pixels >= 11 - 1e-3, f"{svg_path.name}: text of {pixels:.2f} px at the drawn size"
        width = FigureMeta.read(meta_path).width
        if layout == NARROW:
            assert width <= phone, f"{svg_path.name} is {width} px wide, wider than a phone's column"
        else:
            assert FigureMeta.read(meta_path).narrow == (width > phone), "a narrow layout exactly when needed"


def figure_uses() -> dict[str, list[str]]:
    uses: dict[str, list[str]] = {}
    for page in (ROOT / "docs").rglob("*.md"):
        for name in FIGURE_MARKER.findall(page.read_text()):
            uses.setdefault(name, []).append(str(page.relative_to(ROOT)))
    return uses


def test_every_figure_is_used_by_a_page():
    unused = sorted({s.stem for s in SCRIPTS} - set(figure_uses()))
    assert not unused, f"figures no page shows: {unused}"


def test_every_figure_a_page_shows_has_a_script():
    orphans = {
        name: pages for name, pages in figure_uses().items() if not (ROOT / "figures_src" / f"{name}.py").is_file()
    }
    assert not orphans, f"pages show figures that no script draws: {orphans}"


def test_every_image_in_the_built_site_comes_from_a_script(site_dir):
    """Figures are inline SVG (checked below); any <img> a page still has must be a figure too."""
    images = set()
    for page in site_dir.rglob("*.html"):
        for src in re.findall(r'<img [^>]*src="([^"]+)"', page.read_text()):
            images.add((page.parent / src).resolve())
    for image in images:
        where = image.relative_to(site_dir.resolve())
        assert where.parent == pathlib.Path("figures") and where.suffix == ".svg", (
            f"image outside the figure pipeline: {where}"
        )
        assert (ROOT / "figures_src" / f"{where.stem}.py").is_file(), f"no script draws {where}"


# One colour per concept: scripts name concepts, posenc.site.plotting.colour_of gives their colours.
COLOUR_KEYWORDS = {"color", "colors", "c", "facecolor", "edgecolor", "markerfacecolor", "markeredgecolor"}
# Marks drawn on a heatmap's cells ("white") and "no fill" name no concept; black is the foreground.
PLAIN_COLOURS = {"white", "none"}
NAMED_COLOUR_CONSTANTS = {"BLUE", "VERMILLION", "GREEN", "PURPLE", "ORANGE", "SKY", "GREY", "SINE", "COSINE"}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_script_takes_its_colours_from_the_concept_mapping(script):
    """No colour literal and no named palette constant: every data colour is a colour_of(...)."""
    tree = ast.parse(script.read_text())
    problems = []
    for node in ast.walk(tree):
        is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if is_text and re.search(r"#[0-9a-fA-F]{3,8}\b", node.value):
            problems.append(f"line {node.lineno}: colour literal {node.value!r}")
        if isinstance(node, ast.Attribute) and node.attr in NAMED_COLOUR_CONSTANTS:
            problems.append(f"line {node.lineno}: plotting.{node.attr} instead of plotting.colour_of(...)")
        pairs = []
        if isinstance(node, ast.keyword):
            pairs.append((node.arg, node.value))
        if isinstance(node, ast.Dict):
            pairs += [(k.value, v) for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant)]
        for name, value in pairs:
            if name in COLOUR_KEYWORDS and isinstance(value, ast.Constant) and value.value not in PLAIN_COLOURS:
                problems.append(f"line {value.lineno}: {name}={value.value!r}")
    assert not problems, f"{script.name} picks colours itself: {problems}"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_script_text_is_at_least_the_tick_size(script):
    """A hard-coded font size is never below the style's tick labels."""
    import matplotlib

    style = ROOT / "posenc" / "site" / "posenc.mplstyle"
    smallest = matplotlib.rc_params_from_file(str(style), use_default_template=True)
    smallest = min(float(smallest["xtick.labelsize"]), float(smallest["ytick.labelsize"]))
    small = [
        (node.lineno, node.value.value)
        for node in ast.walk(ast.parse(script.read_text()))
        if isinstance(node, ast.keyword)
        and node.arg in {"fontsize", "title_fontsize", "size"}
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, (int, float))
        and node.value.value < smallest
    ]
    assert not small, f"{script.name}: font sizes below {smallest} (line, size): {small}"


def test_every_width_has_one_colour_in_every_figure(monkeypatch, tmp_path):
    """Each drawn series labelled "d = N" (lines, tick rows) has colour_of(width=N), in every figure."""
    import runpy

    import matplotlib.colors

    from posenc.site import plotting

    figures = []
    monkeypatch.setattr(plotting, "save", figures.append)  # keep the figure instead of writing it
    seen: dict[int, set[tuple[str, str]]] = {}
    for script in SCRIPTS:
        namespace = runpy.run_path(str(script))  # defines main() without running it
        with plotting.rendering(script, namespace, tmp_path):
            namespace["main"]()
        figure = figures.pop()
        for artist in figure.findobj(
            lambda a: re.match(r"d = \d+\b", str(a.get_label()) if hasattr(a, "get_label") else "")
        ):
            if not hasattr(artist, "get_color"):
                continue
            width = int(re.match(r"d = (\d+)", artist.get_label()).group(1))
            colours = artist.get_color()
            colour = matplotlib.colors.to_hex(colours[0] if getattr(colours, "ndim", 1) == 2 else colours)
            seen.setdefault(width, set()).add((script.stem, colour))
        plotting.plt.close(figure)
    assert {8, 20, 50, 128, 512} <= set(seen), f"widths drawn with a label: {sorted(seen)}"
    for width, uses in seen.items():
        wanted = matplotlib.colors.to_hex(plotting.colour_of(width=width))
        wrong = sorted(use for use in uses if use[1] != wanted)
        assert not wrong, f"d = {width} should be {wanted} everywhere; differs in {wrong}"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_output_is_drawn_for_the_page(built, script):
    """Text is text in the site's typeface, black and white are the page's colours, ids are the figure's own
    (each layout's: the narrow layout shares the page with the wide one)."""
    for layout in layouts_of(script.stem, built):
        text = figure_files(script.stem, built, layout)[1].read_text()
        root = ElementTree.fromstring(text)
        assert root.get("font-family") == plotting.SITE_FONT and root.get("fill") == "currentColor"
        assert any(element.tag == f"{SVG}text" and "".join(element.itertext()).strip() for element in root.iter())
        assert "font-family:" not in text and 'id="DejaVu' not in text, "no other typeface, no glyphs as paths"
        literal = {e for g in root.iter() if g.get("class") == plotting.LITERAL for e in g.iter()}
        for element in set(root.iter()) - literal:
            style = element.get("style", "")
            assert not re.search(r"(fill|stroke): (#000000|#ffffff)", style), f"a literal black or white: {style}"
        ids = [element.get("id") for element in root.iter() if element.get("id")]
        prefix = f"fig-{script.stem}-" if layout == WIDE else f"fig-{script.stem}.{layout}-"
        assert len(ids) == len(set(ids)) and all(i.startswith(prefix) for i in ids)
        assert set(re.findall(r'(?:url\(#|href="#)([^)"]+)', text)) <= set(ids), "every reference finds its target"


class PageIds(HTMLParser):
    """Every id of an HTML page, those inside figures' SVGs apart, the figures shown and each
    figure's SVGs (its layouts' classes, in order)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.figure_ids: list[str] = []
        self.figures: list[str] = []
        self.svgs: dict[str, list[str]] = {}
        self._figure: str | None = None
        self._svg_depth = 0

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "figure" and "posenc-figure" in (attributes.get("class") or "").split():
            self._figure = attributes["id"].removeprefix("fig-")
            self.figures.append(self._figure)
        elif tag == "svg" and self._figure and not self._svg_depth:
            self.svgs.setdefault(self._figure, []).append(attributes.get("class") or "")
            self._svg_depth = 1
        elif self._svg_depth and tag in ("svg", "g", "defs", "pattern", "clippath", "text"):
            self._svg_depth += 1  # the SVG elements that enclose others
        if "id" in attributes:
            (self.figure_ids if self._svg_depth else self.ids).append(attributes["id"])

    def handle_endtag(self, tag):
        if self._svg_depth and tag in ("svg", "g", "defs", "pattern", "clippath", "text"):
            self._svg_depth -= 1
        elif tag == "figure" and not self._svg_depth:
            self._figure = None


def test_every_figure_in_the_built_site_is_its_svg_inline_and_ids_are_unique(site_dir):
    shown, figure_ids = set(), []
    for page in sorted(site_dir.rglob("*.html")):
        html = page.read_text()
        parser = PageIds()
        parser.feed(html)
        ids = parser.figure_ids
        clashes = sorted({i for i in ids if ids.count(i) > 1} | (set(ids) & set(parser.ids)))
        assert not clashes, f"{page.relative_to(site_dir)}: figure ids used twice: {clashes[:5]}"
        assert len(parser.figures) == len(set(parser.figures)), f"{page}: a figure shown twice"
        for name in parser.figures:
            layouts = layouts_of(name, ROOT / FIGURE_DIR)
            # Both layouts, wide first, each marked for posenc.css; a figure of one layout unmarked.
            marks = [f"posenc-figure__{layout}" for layout in layouts] if len(layouts) > 1 else [""]
            assert parser.svgs.get(name) == marks, f"{name} on {page}: SVGs {parser.svgs.get(name)}"
            for layout, mark in zip(layouts, marks):
                svg = figure_files(name, ROOT / FIGURE_DIR, layout)[1].read_text().strip()
                marked = f'class="{mark}" ' if mark else ""
                assert "<svg data-search-exclude " + marked + svg.removeprefix("<svg ") in html, f"{name} on {page}"
            shown.add(name)
        assert not re.search(r'<img [^>]*src="[^"]*figures/', html), f"{page}: a figure as an <img>, not inline"
        figure_ids += ids
    assert shown == {script.stem for script in SCRIPTS}, "every figure is on a page, inline"
    assert figure_ids, "the figures' ids were seen (clip paths, tick marks)"


def test_the_stylesheet_shows_each_layout_at_its_drawn_size_or_larger():
    """posenc.css hides the wide layout exactly where it would be shrunk (a screen narrower than
    its 672 px) and lets the narrow one grow to the helper's NARROW_MAX_SCALE, not beyond."""
    css = (ROOT / "docs" / "stylesheets" / "posenc.css").read_text(encoding="utf-8")
    rule = re.search(
        r"@media screen and \(max-width: ([\d.]+)em\) \{\s*\.posenc-figure svg\.posenc-figure__wide \{\s*"
        r"display: none;\s*\}\s*\.posenc-figure svg\.posenc-figure__narrow \{([^}]*)\}",
        css,
    )
    assert rule, "posenc.css has no rule choosing a figure's narrow layout"
    wide = plotting.FULL_WIDTH * plotting.PX_PER_INCH
    assert wide - 1 < float(rule[1]) * 16 < wide, "the narrow layout below the wide one's width, not at it"
    largest = round(plotting.NARROW_WIDTH * plotting.PX_PER_INCH * plotting.NARROW_MAX_SCALE)
    assert f"max-width: {largest}px" in rule[2] and "width: 100%" in rule[2]
    assert re.search(r"\.posenc-figure svg\.posenc-figure__narrow \{\s*display: none;\s*\}", css), (
        "outside that rule (and in print) the narrow layout is hidden"
    )
