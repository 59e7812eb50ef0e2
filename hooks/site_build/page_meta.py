"""What each page tells reference managers, link previews and its readers about itself.

* Citation metadata in the page head, read by reference managers and scholarly search engines:
  Highwire Press ``citation_*`` tags and their Dublin Core equivalents, on every article (the
  pages the Cite page lists, the Derivations page among them) and on the home page, which
  stands for the site as a whole. Title, authors, release date and the URL to cite come from
  the same functions as the Cite page's BibTeX records (``citations``, fed by CITATION.cff),
  so a reference manager saves what the Cite page prints. ``citation_pdf_url`` names
  ``posenc.pdf`` in the cited release's folder, the PDF of the whole site that ``make pdf`` adds.
* Link previews on every page: Open Graph and Twitter card tags with the page's title,
  description, canonical URL and a card image. The card (a PNG with the title and the site's
  name over a few sinusoids) is drawn by Matplotlib while the site is built, with its bundled
  font, so the build needs no network; a page never loads it, only link-preview crawlers do.
* A line under every page saying when it last changed: the date of the latest commit to the
  files the page is made from (``git log``). Where that date does not describe the page (no
  git, a shallow clone, or a source file with changes not yet committed) the line says so
  and gives the build date instead (``SOURCE_DATE_EPOCH`` when set, as for MkDocs' sitemap).

:func:`describe_page` puts all of this in ``page.meta`` (``posenc_head`` and ``posenc_last_changed``);
``overrides/main.html`` writes it into the page.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import pathlib
import shutil
import subprocess
import tempfile
from importlib import metadata
from typing import NamedTuple

import numpy as np
from mkdocs.utils import get_build_datetime

from . import api_source, citations, derivation_pages, figures, paths, peer_tests

# Cards already drawn, by a hash of what is drawn on them, so a rebuild draws only new titles.
CARD_CACHE = paths.ROOT / "build" / "cards"
CARD_DIR = "assets/cards"  # in the site
CARD_SIZE = (1200, 630)  # pixels: the size link previews ask for (1.91:1)
PDF_NAME = "posenc.pdf"  # in the cited release's folder (make pdf)


# Why a page shows its build date instead of the date of its last change.
HISTORY_MISSING = "the repository history that dates the last change to this page's sources ({files}) " \
    "was not available to this build"
NOT_COMMITTED = "this page's sources ({files}) have changes not yet committed, so no commit dates their last change"


class LastChanged(NamedTuple):
    """When a page's sources last changed, or why the build date stands in for it."""

    date: str  # ISO date
    sources: tuple[str, ...]  # repository paths the page is made from
    committed: bool  # False: the date is the build date, for ``reason``
    reason: str = ""  # HISTORY_MISSING or NOT_COMMITTED


# ---------------------------------------------------------------------------------------
# Citation metadata


def _title(page) -> str:
    """The page's own title, as the theme's <title> and the Cite page name it (not its nav label)."""
    return page.meta.get("title") or page.title


def _citable_urls(config) -> dict[str, str]:
    """{docs path: URL to cite} for the home page and every article the Cite page lists."""
    root = citations.cited_root(config["site_url"])
    articles = citations.articles(config) if config["nav"] else []  # a site without a nav lists none
    urls = {path: root + url_path for path, url_path, _ in articles}
    urls["index.md"] = root
    return urls


def citation_tags(page, config) -> list[tuple[str, str, str]]:
    """(attribute, name, content) of the citation meta tags of ``page``; none if it is not citable."""
    url = _citable_urls(config).get(page.file.src_uri)
    if url is None:
        return []
    release = citations.release()
    root = citations.cited_root(config["site_url"])
    # The home page stands for the site: it is saved as the site's record on the Cite page.
    title = release["title"] if page.file.src_uri == "index.md" else _title(page)
    date = release["date"]
    tags = [("name", "citation_title", title)]
    tags += [("name", "citation_author", name) for name, _ in release["authors"]]
    tags += [
        ("name", "citation_publication_date", date.strftime("%Y/%m/%d")),
        ("name", "citation_public_url", url),
        ("name", "citation_pdf_url", root + PDF_NAME),
        ("name", "citation_language", "en"),
        ("name", "DC.title", title),
    ]
    tags += [("name", "DC.creator", name) for name, _ in release["authors"]]
    tags += [
        ("name", "DC.date", date.isoformat()),
        ("name", "DC.identifier", url),
        ("name", "DC.language", "en"),
    ]
    return tags


# ---------------------------------------------------------------------------------------
# Link previews


def card_path(page) -> str:
    """The card of ``page`` in the site: assets/cards/guide.png for guide/, index.png for the home page."""
    stem = page.url.strip("/") or "index"
    return f"{CARD_DIR}/{stem.removesuffix('.html')}.png"


def preview_tags(page, config) -> list[tuple[str, str, str]]:
    """(attribute, name, content) of the Open Graph and Twitter card tags of ``page``."""
    base = config["site_url"].rstrip("/") + "/"
    title = f"{_title(page)} - {config['site_name']}"  # as the theme's <title>
    description = page.meta.get("description") or config["site_description"]
    image = base + card_path(page)
    alt = f"{config['site_name']}: {_title(page)}"
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
    # (set when posenc.plotting has been imported) would only warn that there is no grid to lay out.
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
        text = axes.text(0.06, 0.58, "\n".join(_wrap(title, characters)), color="white", fontsize=size,
                         fontweight="bold", family="DejaVu Sans", va="center", ha="left", linespacing=1.15)
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


def write_card(page, config) -> None:
    """Write the card of ``page`` into the site, drawing it only if no earlier build has."""
    # An edit to the drawing or another Matplotlib or Pillow draws every card again.
    drawer = [pathlib.Path(__file__).read_text(encoding="utf-8"), metadata.version("matplotlib"),
              metadata.version("pillow")]
    key = hashlib.sha256("\0".join([*drawer, _title(page), config["site_name"]]).encode()).hexdigest()
    cached = CARD_CACHE / f"{key}.png"
    if not cached.is_file():
        CARD_CACHE.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=CARD_CACHE, suffix=".tmp", delete=False) as partial:
            partial.write(draw_card(_title(page), config["site_name"]))
        os.replace(partial.name, cached)  # atomic: two builds at once never read half a card
    target = pathlib.Path(config["site_dir"]) / card_path(page)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(cached, target)


# ---------------------------------------------------------------------------------------
# Last changed


def _git(*args: str) -> str | None:
    """``git args`` run in the repository: its output, or None if git is missing or fails."""
    try:
        result = subprocess.run(["git", *args], cwd=paths.ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None


@functools.cache
def _history_available() -> bool:
    """True when git can read the repository's whole history (a shallow clone's dates would be wrong)."""
    return (_git("rev-parse", "--is-shallow-repository") or "").strip() == "false"


def page_sources(page) -> tuple[str, ...]:
    """The repository paths ``page`` is made from: its Markdown or notebook, or what generates it."""
    src = page.file.src_uri
    figure = figures.figure_of_page(src)
    if figure is not None:
        return (figures.figure_meta(figure).script,)
    # An API source page shows one module's file (only those pages need the API page read).
    shown = api_source.source_pages().get(src) if src.startswith(api_source.SOURCE_FOLDER + "/") else None
    if shown:
        return (shown,)
    registry = "posenc/derivations.py"  # the statements, proofs and sources of the derivation pages
    own = "docs/" + src
    if src == derivation_pages.INDEX_SRC:
        return (own, registry)
    if src.startswith("derivations/"):
        return (registry,)  # a derivation's page, generated from the registry alone
    if src.endswith(".md") and peer_tests.uses_peer_tests((paths.DOCS / src).read_text(encoding="utf-8")):
        return (own, peer_tests.PEER_TESTS_SOURCE)  # the list of peer comparisons is read from the tests
    return (own,)


def last_changed(sources: tuple[str, ...]) -> LastChanged:
    """When ``sources`` last changed in the repository, or the build date and why it stands in."""
    build_date = get_build_datetime().date().isoformat()
    pending = _git("status", "--porcelain", "--untracked-files=all", "--", *sources)
    date = _git("log", "-1", "--format=%cs", "--", *sources)
    if not _history_available() or pending is None or date is None:
        return LastChanged(build_date, sources, False, HISTORY_MISSING)
    if pending.strip() or not date.strip():
        return LastChanged(build_date, sources, False, NOT_COMMITTED)
    return LastChanged(date.strip(), sources, True)


def _long_date(iso: str) -> str:
    year, month, day = (int(part) for part in iso.split("-"))
    months = ("January February March April May June July August September October November December").split()
    return f"{day} {months[month - 1]} {year}"


def last_changed_html(change: LastChanged) -> str:
    """The line under a page: its date in a <time> element, and what that date is."""
    files = " and ".join(f"<code>{source}</code>" for source in change.sources)
    when = f'<time datetime="{change.date}">{_long_date(change.date)}</time>'
    if change.committed:
        return f"Last changed {when}, the date of the latest commit to {files}."
    return f"Built {when}; " + change.reason.format(files=files) + "."


# ---------------------------------------------------------------------------------------


def describe_page(page, config) -> None:
    """Put the page's head tags and last-changed line in ``page.meta``; write its card into the site."""
    page.meta["posenc_head"] = citation_tags(page, config) + preview_tags(page, config)
    page.meta["posenc_last_changed"] = last_changed_html(last_changed(page_sources(page)))
    write_card(page, config)
