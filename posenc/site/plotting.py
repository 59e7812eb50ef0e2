"""The figure helper shared by every script in ``figures_src/``: style, sizes, colours, save.

A figure script calls :func:`new_figure`, draws, and ends with :func:`save`. Scripts are run
by :mod:`posenc.site.render`, which says which script it is running (:func:`rendering`): the saved
figure is named after that script (``figures_src/kernel.py`` writes ``kernel.svg``), so a
script and its figure cannot drift apart. Beside the SVG, :func:`save` writes the figure's
``FigureMeta`` (see ``posenc.site.figure_files``: pixel size, title, caption, alt text), which the
site reads to give every figure its size and description.

Figures are drawn for the column they are shown in, never shrunk to it: every text is at least
11 CSS pixels (:data:`MIN_FONT_SIZE`) at the drawn size, and the page shows a figure at its
drawn size or larger. A figure wider than a phone's column (:data:`NARROW_WIDTH`) would shrink
there, so its script is run a second time to draw its narrow layout (:func:`layout` says which
one is being drawn; :func:`new_figure` sizes the figure for it and stacks a row of panels into a
column), saved beside the wide one as ``kernel.narrow.svg``. The page carries both and its CSS
shows the one for the reader's screen.

The SVG is written to be placed inside the page's HTML (see :func:`page_svg`): its text is
text in the site's typeface, and black, white and :data:`GREY` stand for the page's own
foreground, background and secondary text colours, so a figure follows the reader's colour
scheme. An artist passed to :func:`literal` keeps its colours as drawn (a label printed on an
opaque heatmap cell is read against the cell, not the page); :data:`INK` is the scheme's
strongest text colour, for a label on a translucent cell, which the page shows through.

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
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before pyplot is imported: figures are files; never open a window
import matplotlib.pyplot as plt
from matplotlib import cbook
from matplotlib.figure import Figure
from matplotlib.text import Text

from . import svg_rewrite
from .figure_files import LAYOUTS, NARROW, WIDE, FigureMeta, figure_files

STYLE_FILE = pathlib.Path(__file__).with_name("posenc.mplstyle")

#: Width of the page's text column in inches (672 CSS pixels at 96 px per inch).
FULL_WIDTH = 7.0
#: Width for a figure meant to sit at half the column.
HALF_WIDTH = 3.4
#: Width of a figure's narrow layout in inches: 360 CSS pixels, the column of the narrowest
#: common phones. On a phone a figure takes the screen's whole width (posenc.css), so the narrow
#: layout is shown at its drawn size or a little larger (at most NARROW_MAX_SCALE times).
NARROW_WIDTH = 3.75
#: How far the page may enlarge a narrow layout on a wider phone before centring it instead.
NARROW_MAX_SCALE = 1.25
#: CSS pixels per inch; the recorded figure size uses it.
PX_PER_INCH = 96
#: The smallest text in a figure, in points: 11 CSS px at the drawn size, at which (or larger)
#: the page shows each layout: the wide one in the column of a desktop page (672 px or wider),
#: the narrow one on a phone. save() raises any smaller text to it, and the whole of a math text
#: whose sub- or superscripts would be smaller, so that they keep their size relative to it.
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
#: The scheme's strongest ink: black on the light page, white on the dark one (posenc.css sets
#: ``--posenc-ink``). A value printed on a translucent heatmap cell takes it: the cell is a
#: different colour in each scheme, and the page's own text colour, a little translucent, falls
#: short of 4.5:1 on some of them.
INK = "#010101"
#: What each colour standing for the page becomes in the SVG (style values, lower case).
PAGE_COLOURS = {
    FOREGROUND: "currentColor",
    BACKGROUND: "var(--md-default-bg-color, #ffffff)",
    GREY: "var(--md-default-fg-color--light, #6b6b6b)",
    INK: "var(--posenc-ink, #000000)",
}
#: The page's background in its two colour schemes: white, and Material's dark slate
#: (hsl(225deg 15% 14%)). Cell labels and data colours are checked against both.
PAGE_BACKGROUNDS = {"default": "#ffffff", "slate": "#1e2129"}
#: The SVG group id (matplotlib's gid) that marks an artist drawn in literal colours; in the
#: saved SVG it becomes a class of the same name.
LITERAL = "posenc-literal"
#: Colormaps: sequential data and signed data (diverging, centred at zero by the caller).
#: Viridis runs from dark purple to yellow and is opaque: it has no white end to glare on the
#: dark page. The diverging map is :func:`diverging_colormap`, whose zero is the page itself.
SEQUENTIAL = "viridis"
#: The diverging map that :func:`diverging_colormap` makes translucent.
DIVERGING_BASE = "RdBu_r"


@functools.cache
def diverging_colormap() -> Any:
    """Red-blue for signed data, with zero transparent: the page's background shows through.

    Each colour of ``RdBu_r`` (its middle, a very light grey, made white) becomes the least
    opaque colour that, laid over white, gives it back: opacity ``1 - min(r, g, b)``. Over the
    light page the map looks as ``RdBu_r`` does (to the rounding of 8-bit channels); on the dark
    page zero is the dark background and a cell grows redder or bluer with ``|value|``. Opacity
    rises from 0 at zero to 0.98 at the blue end and 1 at the red end.
    """
    import numpy as np
    from matplotlib.colors import ListedColormap

    from matplotlib.colors import LinearSegmentedColormap

    # RdBu_r's eleven colours with its middle one (#f7f7f7) white, so that zero is the page's
    # background exactly; an odd number of entries puts one at zero itself.
    nodes = matplotlib.colormaps[DIVERGING_BASE](np.linspace(0.0, 1.0, 11))[:, :3]
    nodes[5] = 1.0
    base = LinearSegmentedColormap.from_list("", nodes, N=257)(np.linspace(0.0, 1.0, 257))[:, :3]
    alpha = 1.0 - base.min(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rgb = np.where(alpha[:, None] > 0, 1.0 - (1.0 - base) / alpha[:, None], 1.0)
    colours = np.column_stack([np.clip(rgb, 0.0, 1.0), alpha])
    return ListedColormap(colours, name="posenc-diverging")


@dataclasses.dataclass(frozen=True)
class _Rendering:
    script: pathlib.Path  # the figure script being run
    namespace: dict[str, Any]  # its module globals, where its docstring and ALT are
    directory: pathlib.Path  # where save() writes
    layout: str  # which of the figure's layouts is being drawn


_rendering: _Rendering | None = None


@contextlib.contextmanager
def rendering(
    script: os.PathLike[str] | str,
    namespace: dict[str, Any],
    directory: os.PathLike[str] | str,
    layout: str = WIDE,
) -> Iterator[None]:
    """Within this block, :func:`save` saves the ``layout`` of ``script``'s figure into ``directory``.

    ``namespace`` is the dictionary the script runs in: by the time the script calls
    :func:`save`, its docstring and ``ALT`` are there.
    """
    global _rendering
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    previous = _rendering
    _rendering = _Rendering(pathlib.Path(script), namespace, pathlib.Path(directory), layout)
    try:
        yield
    finally:
        _rendering = previous


def layout() -> str:
    """The layout being drawn: :data:`WIDE` (also outside the renderer) or :data:`NARROW`."""
    return WIDE if _rendering is None else _rendering.layout


def narrow() -> bool:
    """Whether the figure being drawn is its narrow layout (for a phone's column)."""
    return layout() == NARROW


def wrap(*parts: str) -> str:
    """``parts`` on one line in the wide layout and one per line in the narrow one (a long title)."""
    return ("\n" if narrow() else " ").join(parts)


def new_figure(
    width: float = FULL_WIDTH, aspect: float = 0.45, *, narrow: dict[str, Any] | None = None, **subplots: Any
) -> tuple[Figure, Any]:
    """Apply the posenc style and return ``(figure, axes)`` sized ``width`` x ``width * aspect`` inches
    (to the nearest CSS pixel).

    Extra keyword arguments go to :func:`matplotlib.pyplot.subplots` (``ncols``, ``sharey``...).

    In the narrow layout (:func:`layout`) the figure is :data:`NARROW_WIDTH` wide (``width`` if
    that is narrower), and ``narrow`` says what else changes there: ``aspect`` (the height over
    the width) and any keyword of ``subplots`` (``nrows``, ``ncols``, ``height_ratios``...), which
    replace the wide layout's. Without a grid of its own there, a single row of panels is stacked
    into a column, top to bottom in the row's order (its ``width_ratios`` become
    ``height_ratios``). When the narrow grid holds as many panels as the wide one, the axes come
    back in the wide layout's shape, in reading order, so the script draws into them alike.
    Without an ``aspect`` each row of panels is as high as in the wide layout.
    """
    if not (0 < width <= 2 * FULL_WIDTH):
        raise ValueError(f"width must be in (0, {2 * FULL_WIDTH}] inches, got {width}")
    if not (0.1 <= aspect <= 3):
        raise ValueError(f"aspect must be in [0.1, 3], got {aspect}")
    narrow = dict(narrow or {})
    narrow_aspect = narrow.pop("aspect", None)
    if narrow_aspect is not None and not (0.1 <= narrow_aspect <= 4):
        raise ValueError(f"the narrow layout's aspect must be in [0.1, 4], got {narrow_aspect}")
    plt.style.use(STYLE_FILE)
    height = width * aspect
    wide_grid = (subplots.get("nrows", 1), subplots.get("ncols", 1))
    if layout() == NARROW:
        if "nrows" not in narrow and "ncols" not in narrow and wide_grid[0] == 1 and wide_grid[1] > 1:
            narrow |= {"nrows": wide_grid[1], "ncols": 1}
            ratios = subplots.get("width_ratios", subplots.get("gridspec_kw", {}).get("width_ratios"))
            if ratios is not None:
                narrow.setdefault("height_ratios", ratios)
        own = set(narrow) | set(narrow.get("gridspec_kw", {}))  # what the narrow layout says itself
        subplots = subplots | narrow
        gridspec = dict(subplots.pop("gridspec_kw", {}))
        # Ratios of the wide grid's rows or columns mean nothing in a grid of other rows or columns.
        for key, count, index in (("height_ratios", "nrows", 0), ("width_ratios", "ncols", 1)):
            if key not in own and subplots.get(count, 1) != wide_grid[index]:
                subplots.pop(key, None)
                gridspec.pop(key, None)
            if key in subplots:
                gridspec.pop(key, None)
        if gridspec:
            subplots["gridspec_kw"] = gridspec
        rows = subplots.get("nrows", 1)
        width = min(width, NARROW_WIDTH)
        height = width * narrow_aspect if narrow_aspect is not None else height * rows / wide_grid[0]
        # The narrow layout fills a phone's screen edge to edge: a little more room at its sides.
        plt.rcParams["figure.constrained_layout.w_pad"] = 6 / 72
    # Whole CSS pixels, so the page shows the figure at exactly the scale it was drawn at.
    size = tuple(round(inches * PX_PER_INCH) / PX_PER_INCH for inches in (width, height))
    fig, axes = plt.subplots(figsize=size, **subplots)
    grid = (subplots.get("nrows", 1), subplots.get("ncols", 1))
    if grid != wide_grid and grid[0] * grid[1] == wide_grid[0] * wide_grid[1] > 1:
        import numpy as np

        shape = wide_grid if not subplots.get("squeeze", True) else tuple(n for n in wide_grid if n > 1)
        axes = np.asarray(axes).reshape(shape)
    return fig, axes


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


@functools.cache
def _math_parser() -> Any:
    from matplotlib.mathtext import MathTextParser

    return MathTextParser("path")


def _script_scale(text: Text) -> float:
    """The size of the smallest glyph of ``text`` as a fraction of its font size.

    1 for plain text; for math text with a sub- or superscript, Matplotlib's script size (0.7 of
    the text around it, 0.49 for a script's script), found by laying the math out.
    """
    if text.get_usetex() or not text.get_parse_math():
        return 1.0
    # Matplotlib lays a text out line by line, each line math or not.
    sizes = [
        glyph[1]
        for line in text.get_text().split("\n")
        if cbook.is_math_text(line)
        for glyph in _math_parser().parse(line, 72, text.get_fontproperties()).glyphs
    ]
    return min(sizes) / text.get_fontsize() if sizes else 1.0


def _drawn_texts(fig: Figure) -> list[Text]:
    return [text for text in fig.findobj(Text) if text.get_visible() and text.get_text().strip()]


def _make_legible(fig: Figure) -> float:
    """Raise every text of ``fig`` whose smallest glyph is under :data:`MIN_FONT_SIZE` so that it
    is not, and return the smallest glyph's size in points.

    A math text is raised whole, so its sub- and superscripts stay at a script size below the
    text around them. The figure is laid out first (tick labels get their text when the figure
    is drawn) and again after a change, until no text is raised.
    """
    for _ in range(4):
        fig.draw_without_rendering()
        raised = False
        for text in _drawn_texts(fig):
            least = MIN_FONT_SIZE / _script_scale(text)
            # Matplotlib's hints allow a size name, but a drawn text's size is in points.
            if float(text.get_fontsize()) < least - 1e-9:
                text.set_fontsize(least)
                raised = True
        if not raised:
            sizes = (float(text.get_fontsize()) * _script_scale(text) for text in _drawn_texts(fig))
            return min(sizes, default=MIN_FONT_SIZE)
    raise RuntimeError("texts kept shrinking below the smallest size after being raised")  # pragma: no cover


def _needs_narrow(width_px: int, smallest: float) -> bool:
    """Whether a figure drawn ``width_px`` wide whose smallest text is ``smallest`` points needs a
    narrow layout: on a phone (:data:`NARROW_WIDTH`) it would be shrunk below :data:`MIN_FONT_SIZE`."""
    scale = min(1.0, NARROW_WIDTH * PX_PER_INCH / width_px)
    return smallest * scale < MIN_FONT_SIZE - 1e-6


def save(fig: Figure) -> pathlib.Path:
    """Write ``fig`` as ``<script name>.svg`` plus its ``.json`` description; return the SVG path.

    The narrow layout is written as ``<script name>.narrow.svg`` and ``.narrow.json``. Text smaller
    than :data:`MIN_FONT_SIZE` is raised first (:func:`_make_legible`). The wide layout's sidecar
    says whether the figure needs a narrow layout (:func:`_needs_narrow`); the renderer then runs
    the script again to draw it. The SVG is the one :func:`page_svg` makes of Matplotlib's, and
    deterministic (fixed id salt, no date or creator metadata); both files are written
    atomically, so an interrupted script never leaves a partial figure behind.
    """
    if _rendering is None:
        raise RuntimeError(
            "save() knows which figure it saves only under the renderer: "
            "run python -m posenc.site.render figures_src/<name>.py (or make)"
        )
    script, drawn_layout = _rendering.script, _rendering.layout
    meta_path, svg_path = figure_files(script.stem, _rendering.directory, drawn_layout)
    smallest = _make_legible(fig)
    width, height = (round(v * PX_PER_INCH) for v in fig.get_size_inches())
    if drawn_layout == NARROW and width > round(NARROW_WIDTH * PX_PER_INCH):
        raise ValueError(
            f"the narrow layout is {width} px wide, wider than a phone's column "
            f"({round(NARROW_WIDTH * PX_PER_INCH)} px): draw it with new_figure()"
        )
    meta = FigureMeta(
        **describe(_rendering.namespace),
        width=width,
        height=height,
        script=f"figures_src/{script.name}",
        narrow=drawn_layout == NARROW or _needs_narrow(width, smallest),
    )

    def write_svg(file: Any) -> None:
        drawn = io.BytesIO()
        fig.savefig(drawn, format="svg", metadata={"Date": None, "Creator": None})
        file.write(page_svg(drawn.getvalue(), script.stem, meta, drawn_layout))

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


def page_svg(drawn: bytes, name: str, meta: FigureMeta, layout: str = WIDE) -> bytes:
    """Matplotlib's SVG of figure ``name``'s ``layout`` made ready to sit inside a page, as bytes.

    - Text is ``<text>`` (``svg.fonttype: none``) in the site's typeface (:data:`SITE_FONT`
      on the root; the page sets the same font), math text joined into words.
    - Black, white and :data:`GREY` become the page's colours (:data:`PAGE_COLOURS`) outside
      :func:`literal` artists; text without a colour takes the page's text colour.
    - Ids are those referenced (clip paths, markers, hatches), numbered in order and prefixed
      with ``fig-<name>-`` (``fig-<name>.narrow-`` in the narrow layout, which shares a page with
      the wide one), so two figures on one page never share one; the others are dropped.
    - Width and height are CSS pixels (those of ``meta``); the alt text is the accessible name.
    - Coordinates are rounded to hundredths of a point (transforms excepted), path data written
      relative and short, runs of alike shapes drawn as one path and every definition in one
      ``<defs>`` (:mod:`posenc.site.svg_rewrite` does the work).
    - No XML declaration, metadata, invisible backgrounds or stylesheet (whose ``*`` rule
      would reach the whole page): the stroke defaults it set are attributes of the root.
    - No text is under :data:`MIN_FONT_SIZE` (:func:`save` raised it): finding one is an error.
    """
    prefix = f"fig-{name}-" if layout == WIDE else f"fig-{name}.{layout}-"
    attributes = {
        "width": str(meta.width),
        "height": str(meta.height),
        "role": "img",
        "aria-label": meta.alt,
        "fill": "currentColor",
        "font-family": SITE_FONT,
        "stroke-linejoin": "round",
        "stroke-linecap": "butt",
    }
    root = svg_rewrite.rewrite(
        drawn, prefix, attributes, colours=PAGE_COLOURS, literal=LITERAL, foreground=FOREGROUND, smallest=MIN_FONT_SIZE
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

    Signed data uses the diverging colormap centred at zero (symmetric limits), whose zero is
    transparent (:func:`diverging_colormap`): white on the light page, dark on the dark one;
    other data the sequential one. The image is embedded as a raster inside the SVG, which keeps dense
    heatmaps small, at the data's own resolution: one pixel per cell, which the SVG asks to be
    scaled up without smoothing (``image-rendering: pixelated``). Chromium draws the cells with
    sharp edges (checked at device pixel ratios 1 and 2; other browsers document the property
    but were not checked), and its PDF of the site embeds the same image without asking for
    smoothing. Resampled at the figure's resolution instead, the 128 by 50 encoding's image
    took 19 kB of PNG instead of 9 kB. With ``colorbar_label`` a labelled colour bar is added
    beside ``ax`` (below it in the narrow layout, which has no width to spare).
    """
    # Design history: docs/design-notes.md#figures
    import numpy as np

    array = np.asarray(values, dtype=float)
    if array.ndim != 2:
        raise ValueError(f"values must be a 2-D array, got shape {array.shape}")
    if signed:
        limit = float(np.max(np.abs(array[np.isfinite(array)]))) or 1.0
        options = {"cmap": diverging_colormap(), "vmin": -limit, "vmax": limit}
    else:
        options = {"cmap": SEQUENTIAL}
    image = ax.imshow(array, aspect="auto", interpolation="none", extent=extent, **options)
    if colorbar_label is not None:
        where = {"location": "bottom", "shrink": 0.8, "aspect": 30} if narrow() else {}
        ax.figure.colorbar(image, ax=ax, label=colorbar_label, **where)
    return image


def _luminance(rgba: Any, background: str = BACKGROUND) -> float:
    """Relative luminance (sRGB, 0 = black, 1 = white) of a colour laid over ``background``."""
    from matplotlib.colors import to_rgb, to_rgba

    red, green, blue, alpha = to_rgba(rgba)
    linear = []
    for channel, under in zip((red, green, blue), to_rgb(background)):
        channel = alpha * channel + (1.0 - alpha) * under  # a translucent cell shows the page behind it
        linear.append(channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4)
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


#: What each ink a cell label may take looks like in each colour scheme.
_INKS = {
    "black": {"default": "#000000", "slate": "#000000"},
    "white": {"default": "#ffffff", "slate": "#ffffff"},
    INK: {"default": "#000000", "slate": "#ffffff"},
}


def _cell_ink(rgba: Any) -> str:
    """The ink of a label on a cell of colour ``rgba``, seen over the page in either scheme: of
    black, white and :data:`INK`, the one whose lower contrast (WCAG's) of the two is highest."""

    def lowest(ink: str) -> float:
        pairs = (
            (_luminance(rgba, PAGE_BACKGROUNDS[scheme]), _luminance(shown)) for scheme, shown in _INKS[ink].items()
        )
        return min((max(a, b) + 0.05) / (min(a, b) + 0.05) for a, b in pairs)

    return max(_INKS, key=lowest)  # the first of equals: black or white before INK


def annotate_cells(
    ax: Any, image: Any, values: Any, fmt: str = "{:.2f}", *, mask: Any = None, fontsize: float = MIN_FONT_SIZE
) -> list[Any]:
    """Print each value in its cell of ``image``, in the ink that reads on it; return the texts.

    Used by figures shift-rotation, position-only-score, binary-analogy, pytorch-table and
    attention-permutation. ``image`` is what :func:`heatmap` (or ``imshow``) returned; cell
    centres follow its extent and origin, so row 0 is at the top as :func:`heatmap` draws it.
    The text colour is read off the cell's colour (its colormap at ``image.norm(value)``), so
    call this after any ``set_clim``: black or white, whichever contrasts more, on an opaque
    cell, and the scheme's :data:`INK` on a translucent one (near zero of the diverging map),
    which each scheme shows over its own background. Cells where ``mask`` is False, and cells
    whose value is NaN (drawn blank), get no text. A value that prints as a negative zero
    ("-0.00") is printed without its sign. Black and white labels are :func:`literal`: they are
    read against their cell in both colour schemes.
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
        ink = _cell_ink(image.cmap(image.norm(value)))
        x = left + (col + 0.5) * (right - left) / cols
        y = first_row + (row + 0.5) * (last_row - first_row) / rows
        text = ax.text(x, y, label, ha="center", va="center", fontsize=fontsize, color=ink)
        texts.append(text if ink == INK else literal(text))
    return texts


def place_legend(ax: Any, loc: str = "upper left") -> Any:
    """Add the legend of ``ax`` where the layout being drawn has room for it, and return it.

    Used by figures rope-base-bound and long-context-entropy. In the wide layout it sits inside
    ``ax`` at ``loc`` (a location Matplotlib's ``Axes.legend`` takes, such as "upper left"); in the
    narrow one (:func:`narrow`) it goes below the plot, centred across the figure, since a
    phone's plot has no corner to spare. That one is the figure's legend, so it lists what every
    axes of the figure labelled. A ``loc`` Matplotlib does not know is refused in both layouts.
    """
    from matplotlib.legend import Legend

    if loc not in Legend.codes:
        raise ValueError(f"loc must be one of {', '.join(Legend.codes)}, got {loc!r}")
    if narrow():
        return ax.figure.legend(loc="outside lower center")
    return ax.legend(loc=loc)


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
# width, a wave, an encoding family, a method or a figure's own series has the same colour
# wherever it appears. The palette is Okabe-Ito without its black, which is the foreground (text, axes,
# reference lines: the page may recolour it for its dark scheme), and without its yellow, too
# pale to read on white. Blue, vermillion, green and reddish purple keep a contrast of at least
# 3:1 against white and against a dark slate page; orange and sky blue do only against the dark
# one, so they go to things drawn thick or dense.
_OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
_BLUE, _VERMILLION, _GREEN, _PURPLE, _ORANGE, _SKY = _OKABE_ITO  # the palette's only definition
# Methods are drawn as thin lines, six in one figure, so they need six colours of 3:1 against
# both pages: the four above and two more in the same band of luminance, chosen to stay apart
# from them and from each other for readers with red-green or blue-yellow colour blindness.
_VIOLET, _CRIMSON = "#903CFC", "#E40048"
#: Methods that may share a colour: never drawn in one figure (a test holds every figure to it).
#: Long-context scalings and relative schemes are drawn on pages of their own; within a group,
#: LongRoPE shares with the raised base, and CoPE, FIRE and NoPE with T5, DeBERTa and Shaw.
METHOD_GROUPS = {
    "long context": ("pi", "ntk", "dynamic", "yarn", "llama3", "base", "longrope"),
    "relative": ("shaw", "transformer-xl", "t5", "deberta", "alibi", "kerple", "fire", "cope", "nope"),
}
_CONCEPT_COLOURS: dict[str, dict[Any, str]] = {
    # Model widths d, smallest first; 512 is always drawn dense, so it can take orange.
    "width": {8: _VERMILLION, 20: _BLUE, 50: _GREEN, 128: _PURPLE, 512: _ORANGE},
    # The sine and the cosine channel of a pair.
    "wave": {"sin": _BLUE, "cos": _VERMILLION},
    # Encoding families.
    "family": {"sinusoidal": _BLUE, "rope": _VERMILLION, "alibi": _GREEN},
    # The two sides of an attention score.
    "side": {"query": _BLUE, "key": _VERMILLION},
    # Named methods, by the short names the long-context panel also uses.
    "method": {
        # RoPE's long-context scalings; "base" is a raised base (such as 500000).
        "pi": _BLUE,  # position interpolation, transformers' "linear"
        "ntk": _GREEN,
        "dynamic": _PURPLE,
        "yarn": _VERMILLION,
        "llama3": _VIOLET,
        "base": _CRIMSON,
        "longrope": _CRIMSON,
        # Relative schemes; ALiBi keeps its family's colour.
        "shaw": _PURPLE,
        "transformer-xl": _VIOLET,
        "t5": _BLUE,
        "deberta": _VERMILLION,
        "alibi": _GREEN,
        "kerple": _CRIMSON,
        "fire": _VERMILLION,
        "cope": _BLUE,
        "nope": _PURPLE,
    },
}
#: Other names of a method: transformers calls position interpolation "linear".
_ALIASES = {"method": {"linear": "pi"}}
#: Concepts a panel may take from the mapping (its description's ``palette``), as CSS properties;
#: "diverging" is the diverging colormap, for a panel that draws signed values.
PALETTE_CONCEPTS = ("width", "wave", "family", "side", "method", "diverging")
#: How many colours of the diverging map a panel gets, evenly spaced from -1 to 1 (odd: one at 0).
DIVERGING_STOPS = 33


def colour_of(**concept: Any) -> str:
    """The colour of one concept, named by one keyword: ``colour_of(width=128)``.

    Keywords: ``width`` (a model width d), ``wave`` ("sin" or "cos"), ``family``
    ("sinusoidal", "rope", "alibi"), ``side`` ("query", "key"), ``method`` (a named method:
    "pi" or "linear", "ntk", "dynamic", "yarn", "llama3", "base", "longrope", "shaw",
    "transformer-xl", "t5", "deberta", "alibi", "kerple", "fire", "cope", "nope"), ``series``
    (the n-th of a figure's own categories, such as its start positions or dtypes, counted from
    0) and ``reference=True`` (the foreground, read from the style at call time, for reference
    lines). A value the mapping does not know is an error, so a figure cannot invent a colour.
    """
    if len(concept) != 1:
        raise TypeError(f"colour_of takes exactly one concept keyword, got {sorted(concept)}")
    ((kind, value),) = concept.items()
    if kind == "reference":
        if value is not True:
            raise ValueError("write colour_of(reference=True)")
        return str(matplotlib.rcParams["axes.edgecolor"])
    if kind == "series":
        if not isinstance(value, int) or not 0 <= value < len(_OKABE_ITO):
            raise ValueError(f"series must be an int in [0, {len(_OKABE_ITO)}), got {value!r}")
        return _OKABE_ITO[value]
    if kind not in _CONCEPT_COLOURS:
        raise TypeError(f"unknown concept {kind!r}; known: {sorted(_CONCEPT_COLOURS) + ['reference', 'series']}")
    key = value.lower() if isinstance(value, str) else value
    key = _ALIASES.get(kind, {}).get(key, key)
    if key not in _CONCEPT_COLOURS[kind]:
        raise ValueError(f"no colour for {kind}={value!r}; known: {sorted(_CONCEPT_COLOURS[kind], key=str)}")
    return _CONCEPT_COLOURS[kind][key]


def palette_css(concept: str) -> dict[str, str]:
    """The colours of ``concept`` as CSS custom properties, ``--posenc-<concept>-<key>``.

    The build writes them on a panel that names the concept (``palette`` in its description), so
    a page script draws a method in :func:`colour_of`'s colour without typing it again. For
    "diverging" it is one property, ``--posenc-diverging``: :data:`DIVERGING_STOPS` colours of
    :func:`diverging_colormap` from -1 to 1, each ``#rrggbbaa``, separated by commas.
    """
    if concept not in PALETTE_CONCEPTS:
        raise ValueError(f"no palette for {concept!r}; known: {', '.join(PALETTE_CONCEPTS)}")
    if concept == "diverging":
        import numpy as np
        from matplotlib.colors import to_hex

        stops = diverging_colormap()(np.linspace(0.0, 1.0, DIVERGING_STOPS))
        return {"--posenc-diverging": ", ".join(to_hex(stop, keep_alpha=True) for stop in stops)}
    return {f"--posenc-{concept}-{key}": colour.lower() for key, colour in _CONCEPT_COLOURS[concept].items()}
