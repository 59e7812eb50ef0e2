"""Link previews on every page: Open Graph and Twitter card tags with the page's title,
description, canonical URL and a card image. The card (a PNG with the title and the site's name
over a few sinusoids) is drawn by Matplotlib while the site is built, with its bundled font, so
the build needs no network; a page never loads it, only link-preview crawlers do.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import pathlib
import shutil
import tempfile
from importlib import metadata

import numpy as np

from . import paths
from .front_matter import page_title

# Cards already drawn, by a hash of what is drawn on them, so a rebuild draws only new titles.
CARD_CACHE = paths.ROOT / "build" / "cards"
CARD_DIR = "assets/cards"  # in the site
CARD_SIZE = (1200, 630)  # pixels: the size link previews ask for (1.91:1)


def card_path(page) -> str:
    """The card of ``page`` in the site: assets/cards/guide.png for guide/, index.png for the home page."""
    stem = page.url.strip("/") or "index"
    return f"{CARD_DIR}/{stem.removesuffix('.html')}.png"


def preview_tags(page, config) -> list[tuple[str, str, str]]:
    """(attribute, name, content) of the Open Graph and Twitter card tags of ``page``."""
    base = config["site_url"].rstrip("/") + "/"
    title = f"{page_title(page)} - {config['site_name']}"  # as the theme's <title>
    description = page.meta.get("description") or config["site_description"]
    image = base + card_path(page)
    alt = f"{config['site_name']}: {page_title(page)}"
    return [
        ("property", "og:type", "website" if page.is_homepage else "article"),
        ("property", "og:site_name", config["site_name"]),
        ("property", "og:title", title),
        ("property", "og:description", description),
        ("property", "og:url", page.canonical_url),
        ("property", "og:image", image),
        ("property", "og:image:type", "image/png"),
        ("property", "og:image:width", str(CARD_SIZE[0])),
        ("property", "og:image:height", str(CARD_SIZE[1])),
        ("property", "og:image:alt", alt),
        ("name", "twitter:card", "summary_large_image"),
        ("name", "twitter:title", title),
        ("name", "twitter:description", description),
        ("name", "twitter:image", image),
        ("name", "twitter:image:alt", alt),
    ]


def _wrap(title: str, width: int) -> list[str]:
    """``title`` in lines of at most ``width`` characters where it can break (words longer stay whole)."""
    lines: list[str] = []
    for word in title.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def draw_card(title: str, site_name: str) -> bytes:
    """The link-preview card: ``title`` and ``site_name`` over sinusoids of four frequencies, as a small PNG.

    The same arguments give the same bytes (no date or version is written into the PNG).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from PIL import Image

    dpi = 100
    # No layout engine: the one axes fills the card, and the figure style's constrained layout
    # (set when posenc.site.plotting has been imported) would only warn that there is no grid to lay out.
    figure = Figure(figsize=(CARD_SIZE[0] / dpi, CARD_SIZE[1] / dpi), dpi=dpi, facecolor="#283593", layout="none")
    FigureCanvasAgg(figure)
    axes = figure.add_axes((0, 0, 1, 1))
    axes.set_axis_off()
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1)
    # Four channels of a sinusoidal position encoding along the bottom, as on the site's figures.
    x = np.linspace(0, 1, 400)
    for channel, colour in enumerate(("#7986cb", "#5c6bc0", "#9fa8da", "#c5cae9")):
        axes.plot(x, 0.16 + 0.07 * np.sin(2 * np.pi * x * 6 / 2**channel + channel), color=colour, lw=3)
    axes.text(0.06, 0.88, site_name, color="#c5cae9", fontsize=30, family="DejaVu Sans Mono", va="center")
    # The largest type at which the wrapped title fits its box (the last size is used in any case).
    renderer = figure.canvas.get_renderer()
    box_width, box_height = 0.88 * CARD_SIZE[0], 0.5 * CARD_SIZE[1]
    sizes = (54, 46, 40, 34, 28)
    for size in sizes:
        characters = int(box_width / (0.62 * size * dpi / 72))  # the average width of a bold character
        text = axes.text(
            0.06,
            0.58,
            "\n".join(_wrap(title, characters)),
            color="white",
            fontsize=size,
            fontweight="bold",
            family="DejaVu Sans",
            va="center",
            ha="left",
            linespacing=1.15,
        )
        extent = text.get_window_extent(renderer)
        if (extent.width <= box_width and extent.height <= box_height) or size == sizes[-1]:
            break
        text.remove()
    figure.canvas.draw()
    pixels = np.asarray(figure.canvas.buffer_rgba())[:, :, :3]
    # A few colours are enough for flat text and lines; a palette image keeps the file small.
    image = Image.fromarray(pixels).quantize(colors=32, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


@functools.cache
def _drawer() -> tuple[str, ...]:
    """What draws every card: an edit to the drawing or another Matplotlib or Pillow draws them all again.

    Read once per build: looking up an installed version reads its metadata from disk, and doing
    that for every page cost more than the rest of the cards' work."""
    return (
        pathlib.Path(__file__).read_text(encoding="utf-8"),
        metadata.version("matplotlib"),
        metadata.version("pillow"),
    )


def write_card(page, config) -> None:
    """Write the card of ``page`` into the site, drawing it only if no earlier build has."""
    key = hashlib.sha256("\0".join([*_drawer(), page_title(page), config["site_name"]]).encode()).hexdigest()
    cached = CARD_CACHE / f"{key}.png"
    if not cached.is_file():
        CARD_CACHE.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=CARD_CACHE, suffix=".tmp", delete=False) as partial:
            partial.write(draw_card(page_title(page), config["site_name"]))
        os.replace(partial.name, cached)  # atomic: two builds at once never read half a card
    target = pathlib.Path(config["site_dir"]) / card_path(page)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(cached, target)
