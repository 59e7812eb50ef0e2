"""The files a rendered figure consists of, shared by the figure helper, the renderer and the site.

Figure ``NAME`` (drawn by ``figures_src/NAME.py``) is two files in :data:`FIGURE_DIR`:
``NAME.svg`` and ``NAME.json``, the sidecar :class:`FigureMeta` that the site reads to give
the SVG its size and alt text and the figure its title and caption. A figure too wide to be
legible on a phone has a second layout drawn for a phone's column by the same script,
``NAME.narrow.svg`` with its own sidecar ``NAME.narrow.json``; the page carries both and its CSS
shows one. This module is the one definition of these names; it imports nothing outside the
standard library, so the site can read figures without importing Matplotlib.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib

# The Makefile reads this line with sed (see FIGURE_DIR there), so it stays one plain string
# on one line; a test holds make's value to this one.
FIGURE_DIR = "docs/figures"

#: The layout drawn for the text column of a desktop page (and for print).
WIDE = "wide"
#: The layout drawn for a phone's column, stacking what the wide layout sets side by side.
NARROW = "narrow"
#: Every layout, in the order the renderer draws them.
LAYOUTS = (WIDE, NARROW)


def figure_files(name: str, directory: pathlib.Path, layout: str = WIDE) -> tuple[pathlib.Path, pathlib.Path]:
    """The sidecar and the SVG of figure ``name``'s ``layout`` in ``directory``, in the order they are written."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    stem = name if layout == WIDE else f"{name}.{layout}"
    return directory / f"{stem}.json", directory / f"{stem}.svg"


def figure_name(path: pathlib.Path) -> str:
    """The figure that a file of :func:`figure_files` belongs to (``kernel.narrow.svg`` -> ``kernel``)."""
    return path.name.partition(".")[0]


@dataclasses.dataclass(frozen=True)
class FigureMeta:
    """What the site needs to know about one rendered layout of a figure (its ``.json`` sidecar)."""

    title: str  # the first line of the script's docstring
    caption: str  # the rest of the docstring, on one line
    alt: str  # the script's ALT, on one line
    width: int  # CSS pixels, of this layout
    height: int  # CSS pixels, of this layout
    script: str  # the script's path from the project root, figures_src/NAME.py
    narrow: bool  # whether the figure has a narrow layout (the same in both layouts' sidecars)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> FigureMeta:
        """Parse a sidecar; refuse one whose fields or types are not those of :class:`FigureMeta`."""
        data = json.loads(text)
        fields = {field.name: field.type for field in dataclasses.fields(cls)}
        if not isinstance(data, dict) or set(data) != set(fields):
            found = sorted(data) if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"a figure sidecar holds exactly the fields {sorted(fields)}, got {found}")
        wrong = [name for name, kind in fields.items() if type(data[name]).__name__ != kind]
        if wrong:
            raise ValueError(f"figure sidecar fields of the wrong type: {', '.join(wrong)}")
        return cls(**data)

    @classmethod
    def read(cls, path: pathlib.Path) -> FigureMeta:
        return cls.from_json(path.read_text(encoding="utf-8"))
