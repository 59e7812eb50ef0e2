"""Results one build keeps for the next, each under a key of everything it was made from.

A :class:`Kept` store is one JSON file in ``paths.CACHE/<folder>/``, named for a digest of what
every entry depends on besides its own inputs (the versions and the code that make it); each
entry is named for a digest of its own inputs. A change to either makes a new name, so a stale
entry is never read: it is only left unused, and :meth:`Kept.save` writes back only the entries
the build that just succeeded used.

The stores here hold what profiling showed to cost most in a one-page edit after KaTeX (which
keeps its formulas in a store too, in ``katex``): Pygments' highlighting of every code block,
the API page's signatures as the code formatter lays them out, the search plugin's index entries
of every page, the values of the pages' ``calc`` markers, the colours the panels name (which
would otherwise import Matplotlib), where each page's first-paint marker goes, the theme's
templates as Jinja compiles them and each page's Markdown converted to HTML (``rendered_pages``).
Each is a pure function of its key; ``tests/hooks/test_build_caches.py`` plants a wrong entry
under each key, sees it served, then changes each input and sees the right result, and
``tests/builds/test_cached_builds.py`` holds a build from the caches to the bytes of one without.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import sysconfig
import tempfile
from collections.abc import Callable, Iterable
from importlib import metadata

from . import paths


def digest(parts: Iterable[str | bytes]) -> str:
    """One SHA-256 over ``parts``, each hashed on its own first so no two lists collide."""
    total = hashlib.sha256()
    for part in parts:
        total.update(hashlib.sha256(part.encode() if isinstance(part, str) else part).digest())
    return total.hexdigest()


def source_texts(folder: pathlib.Path) -> list[str]:
    """Every Python file under ``folder`` as "its path under the folder NUL its text", sorted: a
    store maker's reading of the code that makes its entries."""
    return [
        f"{source.relative_to(folder)}\0{source.read_text(encoding='utf-8')}" for source in sorted(folder.rglob("*.py"))
    ]


# A header field's name as the e-mail parser reads one: printable ASCII, no space and no colon.
FIELD_NAME = re.compile(r"[!-9;-~]+")


def installed_release(dist: metadata.Distribution) -> str:
    """ "NAME==VERSION" of an installed distribution, as ``dist.metadata["Name"]`` and ``dist.version`` say.

    Those parse the whole metadata file as an e-mail message, which took 0.15 s of every build for
    the hundred-odd distributions installed; the two fields are read here from the plain header
    lines, and a header this reading is not sure to read as the e-mail parser does (a field
    missing or continued on the next line, a carriage return, a line that is not a field) is
    left to that parser.
    """
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    fields: dict[str, str] = {}
    previous = None  # the field of the line before, in lower case
    for line in text.split("\n\n", 1)[0].split("\n"):
        if line[:1] in (" ", "\t"):
            if previous in ("name", "version"):
                break  # one of the two is continued: the parser joins the lines
            continue  # another field continued (a long licence text): not read here
        name, colon, value = line.partition(":")
        if "\r" in line or not colon or not FIELD_NAME.fullmatch(name):
            break  # not a plain field line
        previous = name.lower()
        if previous in ("name", "version"):
            fields.setdefault(previous, value.lstrip(" \t"))
    else:
        if len(fields) == 2:
            return f"{fields['name']}=={fields['version']}"
    return f"{dist.metadata['Name']}=={dist.version}"


def installed_releases() -> list[str]:
    """ "NAME==VERSION" of every distribution installed in this environment, sorted: what a store's
    maker names for the code that makes its entries. Those installed where this interpreter
    installs, wherever the process was started from (its own sys.path may hold more)."""
    installed = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    return sorted(installed_release(dist) for dist in metadata.distributions(path=installed))


# Every store made, so one hook starts and saves them all (``forget_builds``, ``save_all``).
STORES: list[Kept] = []


def forget_builds() -> None:
    for store in STORES:
        store.forget_build()


def save_all() -> None:
    """Save every store: called after a build that succeeded, so a failed one keeps what the last
    good one used."""
    for store in STORES:
        store.save()


class Kept:
    """Entries ``{key: JSON value}`` kept in ``paths.CACHE/folder/<maker digest>.json``.

    ``maker`` returns what every entry depends on besides its own key (read once per build)."""

    def __init__(self, folder: str, maker: Callable[[], Iterable[str | bytes]]) -> None:
        STORES.append(self)
        self.folder = folder
        self.maker = maker
        self._maker_digest: str | None = None
        self.stored: dict[str, object] | None = None  # read from disk on first use
        self.used: dict[str, object] = {}

    def file(self) -> pathlib.Path:
        if self._maker_digest is None:
            self._maker_digest = digest(self.maker())
        return paths.CACHE / self.folder / f"{self._maker_digest}.json"

    def _stored(self) -> dict[str, object]:
        if self.stored is None:
            try:
                self.stored = json.loads(self.file().read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self.stored = {}
            if not isinstance(self.stored, dict):
                self.stored = {}
        return self.stored

    def get(self, key: str) -> object | None:
        """The value kept under ``key`` (marked used by this build), or None."""
        value = self._stored().get(key)
        if value is not None:
            self.used[key] = value
        return value

    def put(self, key: str, value: object) -> None:
        self.used[key] = value

    def save(self) -> None:
        """Keep what this build used (only that: an entry no page needs any more goes)."""
        if self.used == self._stored():
            return
        target = self.file()
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=target.parent, suffix=".tmp", delete=False, encoding="utf-8") as part:
            json.dump(self.used, part, ensure_ascii=False, sort_keys=True)
        os.replace(part.name, target)  # atomic: a build running beside this one never reads half a file
        self.stored = dict(self.used)

    def forget_build(self) -> None:
        """Start a build's record afresh (``mkdocs serve`` builds again in the same process), and
        read the maker again: an edit to what makes the entries takes effect on the next build."""
        self.used = {}
        self.stored = None
        self._maker_digest = None
