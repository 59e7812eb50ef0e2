"""The figure helper shared by every script in ``figures_src/``: style, sizes, colours, save.

A figure script calls :func:`new_figure`, draws, and ends with :func:`save`. Scripts are run
by :mod:`posenc.site.render`, which says which script it is running (:func:`rendering`): the saved
figure is named after that script (``figures_src/kernel.py`` writes ``kernel.svg``), so a
script and its figure cannot drift apart. Beside the SVG, :func:`save` writes the figure's
``FigureMeta`` (see ``posenc.site.figure_files``: pixel size, title, caption, alt text), which the
site reads to give every figure its size and description.

The SVG is written to be placed inside the page's HTML (see :func:`page_svg`): its text is
text in the site's typeface, and black, white and :data:`GREY` stand for the page's own
foreground, background and secondary text colours, so a figure follows the reader's colour
scheme. An artist passed to :func:`literal` keeps its colours as drawn (a label printed on a
heatmap cell is read against the cell, not the page).

Importing this module does not change Matplotlib's state; :func:`new_figure` applies the
style file ``posenc.mplstyle`` that lives next to it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import io
import os
import pathlib
import re
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before pyplot is imported: figures are files; never open a window
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.text import Text

from .figure_files import FigureMeta, figure_files

STYLE_FILE = pathlib.Path(__file__).with_name("posenc.mplstyle")

#: Width of the page's text column in inches (672 CSS pixels at 96 px per inch).
FULL_WIDTH = 7.0
#: Width for a figure meant to sit at half the column.
HALF_WIDTH = 3.4
#: CSS pixels per inch; the recorded figure size uses it.
PX_PER_INCH = 96
#: The smallest text in a figure, in points: 11 CSS px when the figure is shown at its drawn
#: size (a full-width figure is, in the text column of a desktop page). save() raises any
#: smaller text to it.
MIN_FONT_SIZE = 11 * 72 / PX_PER_INCH
#: The site's typeface: Material's system font stack (mkdocs.yml sets ``font: false``), the
#: fallback of its ``--md-text-font-family``. The page sets the same variable on inline figures.
SITE_FONT = "-apple-system, BlinkMacSystemFont, Helvetica, Arial, sans-serif"

#: Colours that stand for the page's own: in the saved SVG, black becomes the page's text
#: colour, white its background and GREY its secondary text colour (each a CSS value that
#: follows the reader's colour scheme; the SVG opened on its own shows them as drawn).
FOREGROUND = "#000000"
BACKGROUND = "#ffffff"
GREY = "#6b6b6b"
#: What each colour standing for the page becomes in the SVG (style values, lower case).
PAGE_COLOURS = {
    FOREGROUND: "currentColor",
    BACKGROUND: "var(--md-default-bg-color, #ffffff)",
    GREY: "var(--md-default-fg-color--light, #6b6b6b)",
}
#: The SVG group id (matplotlib's gid) that marks an artist drawn in literal colours; in the
#: saved SVG it becomes a class of the same name.
LITERAL = "posenc-literal"
#: Colormaps: sequential data and signed data (diverging, centred at zero by the caller).
SEQUENTIAL = "viridis"
DIVERGING = "RdBu_r"


@dataclasses.dataclass(frozen=True)
class _Rendering:
    script: pathlib.Path  # the figure script being run
    namespace: dict[str, Any]  # its module globals, where its docstring and ALT are
    directory: pathlib.Path  # where save() writes


_rendering: _Rendering | None = None


@contextlib.contextmanager
def rendering(
    script: os.PathLike[str] | str, namespace: dict[str, Any], directory: os.PathLike[str] | str
) -> Iterator[None]:
    """Within this block, :func:`save` saves the figure of ``script`` into ``directory``.

    ``namespace`` is the dictionary the script runs in: by the time the script calls
    :func:`save`, its docstring and ``ALT`` are there.
    """
    global _rendering
    previous, _rendering = _rendering, _Rendering(pathlib.Path(script), namespace, pathlib.Path(directory))
    try:
        yield
    finally:
        _rendering = previous


def new_figure(width: float = FULL_WIDTH, aspect: float = 0.45, **subplots: Any) -> tuple[Figure, Any]:
    """Apply the posenc style and return ``(figure, axes)`` sized ``width`` x ``width * aspect`` inches
    (to the nearest CSS pixel).

    Extra keyword arguments go to :func:`matplotlib.pyplot.subplots` (``ncols``, ``sharey``...).
    """
    if not (0 < width <= 2 * FULL_WIDTH):
        raise ValueError(f"width must be in (0, {2 * FULL_WIDTH}] inches, got {width}")
    if not (0.1 <= aspect <= 3):
        raise ValueError(f"aspect must be in [0.1, 3], got {aspect}")
    plt.style.use(STYLE_FILE)
    # Whole CSS pixels, so the page shows the figure at exactly the scale it was drawn at.
    size = tuple(round(inches * PX_PER_INCH) / PX_PER_INCH for inches in (width, width * aspect))
    return plt.subplots(figsize=size, **subplots)


def _atomic_write(path: pathlib.Path, write: Any) -> None:
    """Call ``write(file)`` on a temporary file beside ``path``, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            write(file)
        os.chmod(temporary, 0o644)  # mkstemp creates 0600; the site is served to everyone
        os.replace(temporary, path)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise


def describe(script_globals: dict[str, Any]) -> dict[str, str]:
    """Title, caption and alt text of a figure script: docstring line 1, the rest, and ``ALT``."""
    doc = inspect.cleandoc(script_globals.get("__doc__") or "")
    title, _, caption = doc.partition("\n")
    alt = script_globals.get("ALT", "")
    if not title.strip() or not caption.strip():
        raise ValueError("a figure script needs a docstring: the figure's title, a blank line, then its caption")
    if not isinstance(alt, str) or len(alt.split()) < 5:
        raise ValueError("a figure script needs ALT: a sentence (5+ words) saying what the figure shows")
    return {"title": title.strip(), "caption": " ".join(caption.split()), "alt": " ".join(alt.split())}


def save(fig: Figure) -> pathlib.Path:
    """Write ``fig`` as ``<script name>.svg`` plus its ``.json`` description; return the SVG path.

    Text smaller than :data:`MIN_FONT_SIZE` is raised to it first. The SVG is the one
    :func:`page_svg` makes of Matplotlib's, and deterministic (fixed id salt, no date or
    creator metadata); both files are written atomically, so an interrupted script never
    leaves a partial figure behind.
    """
    if _rendering is None:
        raise RuntimeError(
            "save() knows which figure it saves only under the renderer: "
            "run python -m posenc.site.render figures_src/<name>.py (or make)"
        )
    script = _rendering.script
    meta_path, svg_path = figure_files(script.stem, _rendering.directory)
    width, height = (round(v * PX_PER_INCH) for v in fig.get_size_inches())
    meta = FigureMeta(**describe(_rendering.namespace), width=width, height=height, script=f"figures_src/{script.name}")
    for text in fig.findobj(Text):
        if text.get_fontsize() < MIN_FONT_SIZE:
            text.set_fontsize(MIN_FONT_SIZE)

    def write_svg(file: Any) -> None:
        drawn = io.BytesIO()
        fig.savefig(drawn, format="svg", metadata={"Date": None, "Creator": None})
        file.write(page_svg(drawn.getvalue(), script.stem, meta))

    meta_bytes = meta.to_json().encode()
    _atomic_write(meta_path, lambda file: file.write(meta_bytes))
    _atomic_write(svg_path, write_svg)
    plt.close(fig)
    return svg_path


def literal(*artists: Any) -> Any:
    """Keep the colours of ``artists`` as drawn in the saved SVG; return the first one.

    For what is read against the data rather than the page (a value printed on a heatmap
    cell): black and white there are meant as black and white in both colour schemes.
    """
    for artist in artists:
        artist.set_gid(LITERAL)
    return artists[0] if artists else None


# --- the SVG as the page shows it ---------------------------------------------------------

_SVG = "http://www.w3.org/2000/svg"
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_REFERENCE = re.compile(r"url\(#([^)]+)\)")
#: Matplotlib's no-op rotation of unrotated text.
_NO_ROTATION = re.compile(r"rotate\(-?0 [-0-9.e]+ [-0-9.e]+\)")
# Positions and shapes are kept to a hundredth of a point (about a hundredth of a CSS pixel),
# transforms to Matplotlib's six decimals. Design history: docs/design-notes.md#figures
_GEOMETRY = frozenset({"d", "x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "width", "height", "points"})
_LONG_DECIMAL = re.compile(r"\d+\.\d{3,}")


def _hundredths(match: re.Match) -> str:
    return f"{float(match[0]):.2f}".rstrip("0").rstrip(".")


def _tag(element: ElementTree.Element) -> str:
    return element.tag.rpartition("}")[2]


def _parse_style(style: str) -> dict[str, str]:
    pairs = (item.partition(":") for item in style.split(";") if item.strip())
    return {key.strip(): value.strip() for key, _, value in pairs}


def _restyle(style: dict[str, str], literal_colours: bool) -> dict[str, str]:
    """``style`` with the typeface left to the page, tiny text raised, page colours mapped."""
    style = {key: value for key, value in style.items() if key != "font-family"}
    if "font-size" in style and float(style["font-size"].removesuffix("px")) < MIN_FONT_SIZE:
        style["font-size"] = f"{MIN_FONT_SIZE:g}px"  # a sub- or superscript of math text
    if not literal_colours:
        for key in ("fill", "stroke"):
            if key in style:
                style[key] = PAGE_COLOURS.get(style[key].lower(), style[key])
    return style


@functools.cache
def _advance(character: str, size: float, oblique: bool) -> float:
    """Width of ``character`` at ``size`` points in the font Matplotlib laid math text out with."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font, LoadFlags

    font = FT2Font(
        font_manager.findfont(
            font_manager.FontProperties(family="DejaVu Sans", style="oblique" if oblique else "normal")
        )
    )
    font.set_size(size, 72)
    glyph = font.load_char(ord(character), flags=LoadFlags.NO_HINTING)
    return glyph.linearHoriAdvance / 65536


def _join_glyphs(text: ElementTree.Element) -> None:
    """Make math text (one ``<tspan>`` per glyph) read and search as words.

    The glyphs are put in reading order (left to right) and each run of glyphs that sit
    side by side in one style becomes one ``<tspan>``; a gap wider than the glyph (math
    spacing around ``=``) starts a new run, so the page's typeface keeps Matplotlib's spacing.
    """
    spans = [child for child in text if _tag(child) == "tspan"]
    if len(spans) < 2 or len(spans) != len(text):
        return
    spans.sort(key=lambda span: float(span.get("x", "0")))
    runs: list[ElementTree.Element] = []
    end = None  # where the previous glyph ends
    for span in spans:
        glyphs, style, x = span.text or "", span.get("style", ""), float(span.get("x", "0"))
        parsed = _parse_style(style)
        size = float(parsed.get("font-size", "10").removesuffix("px"))
        last = runs[-1] if runs else None
        if (
            last is not None
            and end is not None
            and last.get("y") == span.get("y")
            and last.get("style") == style
            and abs(x - end) < 0.1 * size
        ):
            last.text = (last.text or "") + glyphs
        else:
            runs.append(span)
        oblique = parsed.get("font-style") in ("oblique", "italic")
        end = x + sum(_advance(character, size, oblique) for character in glyphs)
    text.text = None
    text[:] = runs
    for run in runs:
        run.tail = None


def _flatten(parent: ElementTree.Element) -> None:
    """Replace every ``<g>`` without attributes by its children (they mean nothing left bare)."""
    children = []
    for child in parent:
        _flatten(child)
        if _tag(child) == "g" and not child.attrib:
            children.extend(child)
        else:
            children.append(child)
    parent[:] = children


def page_svg(drawn: bytes, name: str, meta: FigureMeta) -> bytes:
    """Matplotlib's SVG of figure ``name`` made ready to sit inside a page, as bytes.

    - Text is ``<text>`` (``svg.fonttype: none``) in the site's typeface (:data:`SITE_FONT`
      on the root; the page sets the same font), math text joined into words.
    - Black, white and :data:`GREY` become the page's colours (:data:`PAGE_COLOURS`) outside
      :func:`literal` artists; text without a colour takes the page's text colour.
    - Ids are those referenced (clip paths, markers, hatches), prefixed with ``fig-<name>-``
      so two figures on one page never share one; the others are dropped.
    - Width and height are CSS pixels (those of ``meta``); the alt text is the accessible name.
    - Coordinates are rounded to hundredths of a point (transforms excepted).
    - No XML declaration, metadata, invisible backgrounds or stylesheet (whose ``*`` rule
      would reach the whole page): the stroke defaults it set are attributes of the root.
    """
    ElementTree.register_namespace("", _SVG)
    ElementTree.register_namespace("xlink", _XLINK_HREF[1:].partition("}")[0])
    root = ElementTree.fromstring(drawn)
    referenced = set()
    for element in root.iter():
        href = element.get(_XLINK_HREF, "")
        if href.startswith("#"):
            referenced.add(href[1:])
        for value in element.attrib.values():
            referenced.update(_REFERENCE.findall(value))

    prefix = f"fig-{name}-"

    def rename(value: str) -> str:
        return _REFERENCE.sub(lambda m: f"url(#{prefix}{m[1]})", value)

    def visit(element: ElementTree.Element, literal_colours: bool) -> None:
        identifier = element.attrib.pop("id", None)
        if identifier == LITERAL:
            element.set("class", LITERAL)
            literal_colours = True
        elif identifier in referenced:
            element.set("id", prefix + identifier)
        # A colour given as an attribute (a hatch's background) joins the style: the page's
        # colours are CSS values, which only a style can hold.
        colours = {key: element.attrib.pop(key) for key in ("fill", "stroke") if key in element.attrib}
        if colours:
            element.set("style", "; ".join([element.get("style", "")] + [f"{k}: {v}" for k, v in colours.items()]))
        for key, value in list(element.attrib.items()):
            value = rename(value)
            # Still xlink:href, not SVG 2's plain href: Material's instant navigation rewrites every
            # [href] of a page it loads, and an SVG element's href cannot be assigned.
            if key == _XLINK_HREF and value.startswith("#"):
                element.set(key, "#" + prefix + value[1:])
            elif key == "style":
                style = _restyle(_parse_style(value), literal_colours)
                if literal_colours and _tag(element) == "text":
                    style.setdefault("fill", FOREGROUND)  # Matplotlib leaves black text unstated
                if style:
                    element.set("style", "; ".join(f"{k}: {v}" for k, v in style.items()))
                else:
                    del element.attrib["style"]
            elif key == "transform" and _NO_ROTATION.fullmatch(value):
                del element.attrib[key]
            elif key in _GEOMETRY:
                element.set(key, _LONG_DECIMAL.sub(_hundredths, value))
            else:
                element.set(key, value)
        if _tag(element) == "text":
            _join_glyphs(element)
        elif _tag(element) != "tspan" and not (element.text or "").strip():
            element.text = None
        for child in element:
            child.tail = child.tail if child.tail and child.tail.strip() else None
            visit(child, literal_colours)

    for child in list(root):
        if _tag(child) == "metadata" or (_tag(child) == "defs" and all(_tag(c) == "style" for c in child)):
            root.remove(child)
    for parent in list(root.iter()):
        for child in list(parent):
            if _tag(child) == "path" and child.get("style") == "fill: none":  # draws nothing (a transparent background)
                parent.remove(child)
    visit(root, False)
    _flatten(root)
    view_box = root.get("viewBox")
    root.attrib.clear()
    root.attrib.update(
        {
            "width": str(meta.width),
            "height": str(meta.height),
            "viewBox": view_box,
            "role": "img",
            "aria-label": meta.alt,
            "fill": "currentColor",
            "font-family": SITE_FONT,
            "stroke-linejoin": "round",
            "stroke-linecap": "butt",
        }
    )
    return ElementTree.tostring(root, encoding="unicode").encode() + b"\n"


def heatmap(
    ax: Any,
    values: Any,
    *,
    signed: bool = True,
    colorbar_label: str | None = None,
    extent: tuple[float, float, float, float] | None = None,
) -> Any:
    """Draw a matrix as an image on ``ax`` (row 0 at the top) and return the image.

    Signed data uses the diverging colormap centred at zero (symmetric limits); other data
    the sequential one. The SVG embeds the image as a raster of one pixel per cell, enlarged
    without smoothing (``image-rendering: pixelated``). With ``colorbar_label`` a labelled
    colour bar is added beside ``ax``.
    """
    # Design history: docs/design-notes.md#figures
    import numpy as np

    array = np.asarray(values, dtype=float)
    if array.ndim != 2:
        raise ValueError(f"values must be a 2-D array, got shape {array.shape}")
    if signed:
        limit = float(np.max(np.abs(array[np.isfinite(array)]))) or 1.0
        options = {"cmap": DIVERGING, "vmin": -limit, "vmax": limit}
    else:
        options = {"cmap": SEQUENTIAL}
    image = ax.imshow(array, aspect="auto", interpolation="none", extent=extent, **options)
    if colorbar_label is not None:
        ax.figure.colorbar(image, ax=ax, label=colorbar_label)
    return image


def _luminance(rgba: Any) -> float:
    """Relative luminance (sRGB, 0 = black, 1 = white) of a colour, seen over a white background."""
    red, green, blue, alpha = (float(c) for c in rgba)
    linear = []
    for channel in (red, green, blue):
        channel = alpha * channel + (1.0 - alpha)  # a translucent cell shows the white figure behind it
        linear.append(channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4)
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


#: Above this luminance black text contrasts more than white: (L + 0.05) / 0.05 = 1.05 / (L + 0.05).
_DARK_TEXT_ABOVE = (1.05 * 0.05) ** 0.5 - 0.05


def annotate_cells(
    ax: Any, image: Any, values: Any, fmt: str = "{:.2f}", *, mask: Any = None, fontsize: float = MIN_FONT_SIZE
) -> list[Any]:
    """Print each value in its cell of ``image``, black on light cells and white on dark; return the texts.

    Used by figures shift-rotation, position-only-score, binary-analogy, pytorch-table and
    attention-permutation. ``image`` is what :func:`heatmap` (or ``imshow``) returned; cell
    centres follow its extent and origin, so row 0 is at the top as :func:`heatmap` draws it.
    The text colour is the one of the two with the higher contrast against the cell's colour
    (its colormap at ``image.norm(value)``), so call this after any ``set_clim``. Cells where
    ``mask`` is False, and cells whose value is NaN (drawn blank), get no text. A value that
    prints as a negative zero ("-0.00") is printed without its sign. The texts are
    :func:`literal`: they are read against their cell in both colour schemes.
    """
    import numpy as np

    cells = np.shape(image.get_array())
    numbers = np.asarray(values, dtype=float)
    if len(cells) != 2:
        raise ValueError(f"image must hold a 2-D array of cells, got shape {cells}")
    if numbers.shape != cells:
        raise ValueError(f"values must have the image's shape {cells}, got shape {numbers.shape}")
    if mask is None:
        keep = np.ones(cells, dtype=bool)
    else:
        keep = np.asarray(mask)
        if keep.shape != cells:
            raise ValueError(f"mask must have the image's shape {cells}, got shape {keep.shape}")
        if keep.dtype != bool:
            raise ValueError(f"mask must be an array of booleans, got dtype {keep.dtype}")
    if not isinstance(fmt, str) or "{" not in fmt:
        raise ValueError(f"fmt must be a format string such as '{{:.2f}}', got {fmt!r}")
    if not fontsize > 0:
        raise ValueError(f"fontsize must be positive, got {fontsize}")
    zero = fmt.format(0.0)

    left, right, bottom, top = image.get_extent()
    rows, cols = cells
    first_row, last_row = (top, bottom) if image.origin == "upper" else (bottom, top)
    texts = []
    for (row, col), value in np.ndenumerate(numbers):
        if not keep[row, col] or np.isnan(value):
            continue
        label = fmt.format(value)
        if label != zero and fmt.format(abs(value)) == zero:  # e.g. -0.001 at two decimals
            label = zero
        light = _luminance(image.cmap(image.norm(value))) > _DARK_TEXT_ABOVE
        x = left + (col + 0.5) * (right - left) / cols
        y = first_row + (row + 0.5) * (last_row - first_row) / rows
        texts.append(
            literal(
                ax.text(x, y, label, ha="center", va="center", fontsize=fontsize, color="black" if light else "white")
            )
        )
    return texts


def span_axes(axes: Any) -> Any:
    """Remove ``axes`` (cells of one subplot grid) and return a single axes over the same cells.

    Used by figures sin-cos-dimensions and alibi-bias, which replace a column or row of
    subplots with one wide panel. The cells must form a filled rectangle of one grid.
    """
    import numpy as np

    panels = list(dict.fromkeys(np.ravel(np.asarray(axes, dtype=object))))  # each once, in order
    if not panels:
        raise ValueError("axes must hold at least one axes")
    specs = []
    for panel in panels:
        spec = panel.get_subplotspec() if hasattr(panel, "get_subplotspec") else None
        if spec is None:
            raise ValueError(f"axes must be subplots of a grid; {panel!r} is not")
        specs.append(spec)
    grid = specs[0].get_gridspec()
    if any(spec.get_gridspec() is not grid for spec in specs) or len({p.figure for p in panels}) != 1:
        raise ValueError("axes must all belong to one subplot grid of one figure")
    covered = {(r, c) for spec in specs for r in spec.rowspan for c in spec.colspan}
    rows = range(min(r for r, _ in covered), max(r for r, _ in covered) + 1)
    cols = range(min(c for _, c in covered), max(c for _, c in covered) + 1)
    if len(covered) != len(rows) * len(cols):
        raise ValueError("axes must cover a filled rectangle of grid cells (a row or column)")
    figure = panels[0].figure
    for panel in panels:
        panel.remove()
    return figure.add_subplot(grid[rows.start : rows.stop, cols.start : cols.stop])


# One colour per concept. Every figure script takes its data colours from colour_of(), so a
# width, a wave, an encoding family or a figure's own series has the same colour wherever it
# appears. The palette is Okabe-Ito without its black, which is the foreground (text, axes,
# reference lines: the page may recolour it for its dark scheme), and without its yellow, too
# pale to read on white. Blue, vermillion, green and reddish purple keep a contrast of at least
# 3:1 against white and against a dark slate page; orange and sky blue do only against the dark
# one, so they go to things drawn thick or dense.
_OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
_BLUE, _VERMILLION, _GREEN, _PURPLE, _ORANGE, _SKY = _OKABE_ITO  # the palette's only definition
_CONCEPT_COLOURS: dict[str, dict[Any, str]] = {
    # Model widths d, smallest first; 512 is always drawn dense, so it can take orange.
    "width": {8: _VERMILLION, 20: _BLUE, 50: _GREEN, 128: _PURPLE, 512: _ORANGE},
    # The sine and the cosine channel of a pair.
    "wave": {"sin": _BLUE, "cos": _VERMILLION},
    # Encoding families.
    "family": {"sinusoidal": _BLUE, "rope": _VERMILLION, "alibi": _GREEN},
    # The two sides of an attention score.
    "side": {"query": _BLUE, "key": _VERMILLION},
}


def colour_of(**concept: Any) -> str:
    """The colour of one concept, named by one keyword: ``colour_of(width=128)``.

    Keywords: ``width`` (a model width d), ``wave`` ("sin" or "cos"), ``family``
    ("sinusoidal", "rope", "alibi"), ``side`` ("query", "key"), ``series`` (the n-th of a
    figure's own categories, such as its start positions or dtypes, counted from 0) and
    ``reference=True`` (the foreground, read from the style at call time, for reference lines).
    A value the mapping does not know is an error, so a figure cannot invent a colour.
    """
    if len(concept) != 1:
        raise TypeError(f"colour_of takes exactly one concept keyword, got {sorted(concept)}")
    ((kind, value),) = concept.items()
    if kind == "reference":
        if value is not True:
            raise ValueError("write colour_of(reference=True)")
        return matplotlib.rcParams["axes.edgecolor"]
    if kind == "series":
        if not isinstance(value, int) or not 0 <= value < len(_OKABE_ITO):
            raise ValueError(f"series must be an int in [0, {len(_OKABE_ITO)}), got {value!r}")
        return _OKABE_ITO[value]
    if kind not in _CONCEPT_COLOURS:
        raise TypeError(f"unknown concept {kind!r}; known: {sorted(_CONCEPT_COLOURS) + ['reference', 'series']}")
    key = value.lower() if isinstance(value, str) else value
    if key not in _CONCEPT_COLOURS[kind]:
        raise ValueError(f"no colour for {kind}={value!r}; known: {sorted(_CONCEPT_COLOURS[kind], key=str)}")
    return _CONCEPT_COLOURS[kind][key]
