"""The figure helper shared by every script in ``figures_src/``: style, sizes, colours, save.

A figure script calls :func:`new_figure`, draws, and ends with :func:`save`. Scripts are run
by :mod:`posenc.render`, which says which script it is running (:func:`rendering`): the saved
figure is named after that script (``figures_src/kernel.py`` writes ``kernel.svg``), so a
script and its figure cannot drift apart. Beside the SVG, :func:`save` writes the figure's
``FigureMeta`` (see ``posenc.figure_files``: pixel size, title, caption, alt text), which the
site reads to give every ``<img>`` its size and description.

Importing this module does not change Matplotlib's state; :func:`new_figure` applies the
style file ``posenc.mplstyle`` that lives next to it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import os
import pathlib
import tempfile
from collections.abc import Iterator
from typing import Any

import matplotlib

matplotlib.use("Agg")  # figures are files; never open a window
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from .figure_files import FigureMeta, figure_files  # noqa: E402

STYLE_FILE = pathlib.Path(__file__).with_name("posenc.mplstyle")

#: Width of the page's text column in inches (672 CSS pixels at 96 px per inch).
FULL_WIDTH = 7.0
#: Width for a figure meant to sit at half the column.
HALF_WIDTH = 3.4
#: CSS pixels per inch; the recorded <img> size uses it.
PX_PER_INCH = 96

#: Named colours (Okabe-Ito, safe for the common colour-vision deficiencies). They read on
#: the white figure background in both of the site's colour schemes.
BLUE = "#0072B2"
VERMILLION = "#D55E00"
GREEN = "#009E73"
PURPLE = "#CC79A7"
ORANGE = "#E69F00"
SKY = "#56B4E9"
GREY = "#6b6b6b"
#: Sine channels are drawn in BLUE and cosine channels in VERMILLION on every figure.
SINE = BLUE
COSINE = VERMILLION
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
def rendering(script: os.PathLike[str] | str, namespace: dict[str, Any],
              directory: os.PathLike[str] | str) -> Iterator[None]:
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
    """Apply the posenc style and return ``(figure, axes)`` sized ``width`` x ``width * aspect`` inches.

    Extra keyword arguments go to :func:`matplotlib.pyplot.subplots` (``ncols``, ``sharey``...).
    """
    if not (0 < width <= 2 * FULL_WIDTH):
        raise ValueError(f"width must be in (0, {2 * FULL_WIDTH}] inches, got {width}")
    if not (0.1 <= aspect <= 3):
        raise ValueError(f"aspect must be in [0.1, 3], got {aspect}")
    plt.style.use(STYLE_FILE)
    return plt.subplots(figsize=(width, width * aspect), **subplots)


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

    The SVG is deterministic (fixed id salt, no date or creator metadata) and both files are
    written atomically, so an interrupted script never leaves a partial figure behind.
    """
    if _rendering is None:
        raise RuntimeError("save() knows which figure it saves only under the renderer: "
                           "run python -m posenc.render figures_src/<name>.py (or make)")
    script = _rendering.script
    meta_path, svg_path = figure_files(script.stem, _rendering.directory)
    width, height = (round(v * PX_PER_INCH) for v in fig.get_size_inches())
    meta = FigureMeta(**describe(_rendering.namespace), width=width, height=height,
                      script=f"figures_src/{script.name}")
    meta_bytes = meta.to_json().encode()
    _atomic_write(meta_path, lambda file: file.write(meta_bytes))
    _atomic_write(svg_path, lambda file: fig.savefig(file, format="svg", metadata={"Date": None, "Creator": None}))
    plt.close(fig)
    return svg_path


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
    the sequential one. The image is embedded as a raster inside the SVG, which keeps dense
    heatmaps small. With ``colorbar_label`` a labelled colour bar is added beside ``ax``.
    """
    import numpy as np

    array = np.asarray(values, dtype=float)
    if array.ndim != 2:
        raise ValueError(f"values must be a 2-D array, got shape {array.shape}")
    if signed:
        limit = float(np.max(np.abs(array[np.isfinite(array)]))) or 1.0
        options = {"cmap": DIVERGING, "vmin": -limit, "vmax": limit}
    else:
        options = {"cmap": SEQUENTIAL}
    image = ax.imshow(array, aspect="auto", interpolation="nearest", extent=extent, **options)
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


def annotate_cells(ax: Any, image: Any, values: Any, fmt: str = "{:.2f}", *, mask: Any = None,
                   fontsize: float = 7) -> list[Any]:
    """Print each value in its cell of ``image``, black on light cells and white on dark; return the texts.

    Used by figures shift-rotation, position-only-score, binary-analogy, pytorch-table and
    attention-permutation. ``image`` is what :func:`heatmap` (or ``imshow``) returned; cell
    centres follow its extent and origin, so row 0 is at the top as :func:`heatmap` draws it.
    The text colour is the one of the two with the higher contrast against the cell's colour
    (its colormap at ``image.norm(value)``), so call this after any ``set_clim``. Cells where
    ``mask`` is False, and cells whose value is NaN (drawn blank), get no text. A value that
    prints as a negative zero ("-0.00") is printed without its sign.
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
        texts.append(ax.text(x, y, label, ha="center", va="center", fontsize=fontsize,
                             color="black" if light else "white"))
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
    return figure.add_subplot(grid[rows.start:rows.stop, cols.start:cols.stop])


# One colour per concept. Every figure script takes its data colours from colour_of(), so a
# width, a wave, an encoding family or a figure's own series has the same colour wherever it
# appears. The palette is Okabe-Ito without its black, which is the foreground (text, axes,
# reference lines: the page may recolour it for its dark scheme), and without its yellow, too
# pale to read on white. Blue, vermillion, green and reddish purple keep a contrast of at least
# 3:1 against white and against a dark slate page; orange and sky blue do only against the dark
# one, so they go to things drawn thick or dense.
_OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
_BLUE, _VERMILLION, _GREEN, _PURPLE, _ORANGE, _SKY = _OKABE_ITO
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
    (kind, value), = concept.items()
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
