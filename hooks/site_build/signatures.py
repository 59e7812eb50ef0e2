"""The API page's formatted signatures, kept between builds (see ``kept``).

mkdocstrings-python lays out each long signature by running a code formatter on it (Ruff here,
as a subprocess per signature): dozens of processes on every build, for signatures that change
only when the library does. :func:`install` puts a kept formatter in its place, which serves the
text formatted before for the same code, line length, formatter and formatter settings.
"""

from __future__ import annotations

import importlib.util
import pathlib
from importlib import metadata

from mkdocstrings_handlers.python._internal import rendering

from . import paths
from .kept import Kept, digest

_FORMATTER = rendering._get_formatter


def _installed(package: str) -> str:
    return metadata.version(package) if importlib.util.find_spec(package) else "absent"


def _maker() -> tuple[str, ...]:
    # Black is used when installed, else Ruff, which reads the project's settings from pyproject.toml.
    return (
        _installed("black"),
        _installed("ruff"),
        metadata.version("mkdocstrings-python"),
        (paths.ROOT / "pyproject.toml").read_text(encoding="utf-8"),
        pathlib.Path(__file__).read_text(encoding="utf-8"),
    )


SIGNATURES = Kept("signatures", _maker)


def kept_formatter():
    """mkdocstrings' formatter behind the store: formats only code it has not formatted before."""
    formatter = _FORMATTER()

    def formatted(code: str, line_length: int) -> str:
        key = digest([code, str(line_length)])
        text = SIGNATURES.get(key)
        if not isinstance(text, str):
            text = formatter(code, line_length)
            SIGNATURES.put(key, text)
        return text

    return formatted


def install() -> None:
    rendering._get_formatter = kept_formatter
