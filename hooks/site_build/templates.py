"""The theme's compiled templates, kept between builds (see ``kept``).

Jinja compiles each template it loads to Python code: Material's and the overrides' few dozen
templates, compiled again on every build although they change only with the theme. Jinja's own
bytecode cache protocol stores that code per template under the template's name and serves it
only while the template's source has the same checksum (``jinja2.bccache.Bucket``);
:class:`KeptBytecode` keeps it in a store named for the versions of Jinja, MkDocs, Material and
Python (whose marshal format the code is in) and for the environment's settings, which decide
how a source is compiled.
"""

from __future__ import annotations

import base64
import json
import pathlib
import sys
from importlib import metadata

import jinja2

from .kept import Kept

_SETTINGS = (
    "block_start_string",
    "block_end_string",
    "variable_start_string",
    "variable_end_string",
    "comment_start_string",
    "comment_end_string",
    "line_statement_prefix",
    "line_comment_prefix",
    "trim_blocks",
    "lstrip_blocks",
    "newline_sequence",
    "keep_trailing_newline",
    "optimized",
)


def _setting(value) -> str:
    return getattr(value, "__qualname__", None) or repr(value)


def environment_settings(env: jinja2.Environment) -> str:
    """What decides how ``env`` compiles a template besides its source, as text."""
    described = {name: getattr(env, name) for name in _SETTINGS}
    described |= {
        "autoescape": _setting(env.autoescape),
        "finalize": _setting(env.finalize),
        "extensions": sorted(env.extensions),
    }
    return json.dumps(described, sort_keys=True, default=repr)


# The settings of the environment the store serves, set by ``install`` before any template loads.
_settings = {"environment": ""}


def _maker() -> tuple[str, ...]:
    return (
        metadata.version("jinja2"),
        metadata.version("mkdocs"),
        metadata.version("mkdocs-material"),
        sys.version,
        _settings["environment"],
        pathlib.Path(__file__).read_text(encoding="utf-8"),
    )


COMPILED = Kept("templates", _maker)


class KeptBytecode(jinja2.BytecodeCache):
    """Jinja's bytecode cache protocol over :data:`COMPILED` (each entry the code, base64 encoded)."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        code = COMPILED.get(bucket.key)
        if isinstance(code, str):
            bucket.bytecode_from_string(base64.b64decode(code))  # refused there if the checksum differs

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        COMPILED.put(bucket.key, base64.b64encode(bucket.bytecode_to_string()).decode("ascii"))


def install(env: jinja2.Environment) -> jinja2.Environment:
    """``env`` with its compiled templates kept; called once per build, before a template loads."""
    _settings["environment"] = environment_settings(env)
    env.bytecode_cache = KeptBytecode()
    # A build makes its own environment (``mkdocs serve`` too, for each rebuild), so no template
    # changes while one is in use: Jinja need not ask the file system whether each one did, which
    # it does on every include of every page (about 60 a page) while this is on.
    env.auto_reload = False
    return env
