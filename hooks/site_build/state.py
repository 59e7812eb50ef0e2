"""What one hook sets and another reads while the site is built: the one place such state lives.

Every hook imports this module through the one ``site_build`` package (see its docstring), so a
value set by one hook is the value the others read.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class BuildState:
    # True under ``mkdocs serve`` (on_startup): a failed figure is shown with its error, not fatal.
    serving: bool = False
    # {figure name: why its script failed}, as the last render recorded it (read before each build).
    failed_figures: dict[str, str] = field(default_factory=dict)
    # The KaTeX faces the pages preload and the characters their math draws: ``katex.ship_fonts``
    # cuts each of those faces down to those characters after the build.
    math_faces: set[str] = field(default_factory=set)
    math_characters: set[str] = field(default_factory=set)

    def forget_math(self) -> None:
        """Each build ships the faces and characters of its own pages (``mkdocs serve`` rebuilds)."""
        self.math_faces.clear()
        self.math_characters.clear()


BUILD = BuildState()
