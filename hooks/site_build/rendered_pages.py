"""Each page's Markdown converted to HTML, kept between builds (see ``kept``).

MkDocs converts every page's Markdown on every build, although a one-page edit changes one page's
Markdown: converting the other 140 pages was the largest part of the site's build after KaTeX and
highlighting had their stores. :func:`install` wraps ``Page.render`` so that a page whose
conversion inputs are all unchanged takes back what the conversion left: the HTML, the table of
contents, the title found in it, the ids it holds, its links to other pages' anchors (which
MkDocs checks once every page is converted) and the anchors it registered with the autorefs
plugin, which resolves cross-references between pages.

An entry is keyed on the page's Markdown as the hooks leave it (every ``calc`` value and
generated block is in it), its place in the site, and every file's place and whether it is
built (links are resolved against those); the store is named for ``mkdocs.yml``, every installed
distribution's version, Python's version and the source of every hook, which decide the rest.
A conversion that logged anything is not kept, so its messages (a warning fails a strict build)
come again in every build; nor is a page whose Markdown calls mkdocstrings (``::: name``), whose
handlers keep state of their own for the object inventory.
"""

from __future__ import annotations

import logging
import re
import sys
from importlib import metadata

from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc

from . import paths
from .kept import Kept, digest

_MKDOCSTRINGS_BLOCK = re.compile(r"^\s*::: ", re.MULTILINE)


def _maker() -> tuple[str, ...]:
    distributions = sorted(f"{dist.metadata['Name']}=={dist.version}" for dist in metadata.distributions())
    hooks = sorted((paths.ROOT / "hooks").rglob("*.py"))
    return (
        sys.version,
        "\n".join(distributions),
        (paths.ROOT / "mkdocs.yml").read_text(encoding="utf-8"),
        *(f"{path.relative_to(paths.ROOT)}\n{path.read_text(encoding='utf-8')}" for path in hooks),
    )


RENDERED = Kept("rendered-pages", _maker)

# The digest of the build's files, made on the first page's conversion (every plugin has added
# its files by then) and forgotten at the start of the next build (``forget_files``).
_files_digest: dict[int, str] = {}


def forget_files() -> None:
    _files_digest.clear()


def files_digest(files) -> str:
    if id(files) not in _files_digest:
        _files_digest.clear()
        described = sorted(f"{file.src_uri}\0{file.dest_uri}\0{file.url}\0{file.inclusion.name}" for file in files)
        _files_digest[id(files)] = digest(described)
    return _files_digest[id(files)]


def _toc_tokens(toc) -> list[dict]:
    """The tokens ``get_toc`` was made from, read back from the table of contents."""
    return [
        {"level": item.level, "id": item.id, "name": item.title, "children": _toc_tokens(item.children)} for item in toc
    ]


class _Logged(logging.Handler):
    """Notes that something was logged (at INFO or above) while a page was converted."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.any = False

    def emit(self, record: logging.LogRecord) -> None:
        self.any = True


def _autorefs(config):
    return config.plugins.get("autorefs")


def install() -> None:
    """Put :func:`kept_render` in the place of ``Page.render`` (once per process)."""
    if getattr(Page.render, "kept", False):
        return
    convert = Page.render

    def kept_render(page: Page, config, files) -> None:
        if page.markdown is None or _MKDOCSTRINGS_BLOCK.search(page.markdown):
            convert(page, config, files)
            return
        links_checked = logging.getLogger("mkdocs.structure.pages").getEffectiveLevel() > logging.DEBUG
        key = digest(
            [
                page.markdown,
                page.file.src_uri,
                page.file.dest_uri,
                page.file.url,
                files_digest(files),
                str(links_checked),
            ]
        )
        autorefs = _autorefs(config)
        found = RENDERED.get(key)
        if isinstance(found, dict):
            page.content = found["content"]
            page.toc = get_toc(found["toc"])
            page._title_from_render = found["title"]
            page.present_anchor_ids = set(found["anchors"])
            if found["links"] is not None:
                page.links_to_anchors = {
                    files.get_file_from_path(src): dict(links) for src, links in found["links"].items()
                }
            for arguments in found["registered"]:
                autorefs.register_anchor(page, *arguments["args"], **arguments["kwargs"])
            return

        registered: list[dict] = []
        logged = _Logged()
        loggers = [logging.getLogger(), logging.getLogger("mkdocs")]
        if autorefs is not None:
            register = autorefs.register_anchor

            def recording(anchor_page, *args, **kwargs):
                registered.append({"page": anchor_page is page, "args": list(args), "kwargs": kwargs})
                return register(anchor_page, *args, **kwargs)

            autorefs.register_anchor = recording
        for logger in loggers:
            logger.addHandler(logged)
        try:
            convert(page, config, files)
        finally:
            for logger in loggers:
                logger.removeHandler(logged)
            if autorefs is not None:
                del autorefs.register_anchor
        if logged.any or not all(entry.pop("page") for entry in registered):
            return
        links = page.links_to_anchors if links_checked else None
        RENDERED.put(
            key,
            {
                "content": page.content,
                "toc": _toc_tokens(page.toc),
                "title": page._title_from_render,
                "anchors": sorted(page.present_anchor_ids or ()),
                "links": None if links is None else {target.src_uri: dict(by) for target, by in links.items()},
                "registered": registered,
            },
        )

    kept_render.kept = True  # type: ignore[attr-defined]
    Page.render = kept_render  # type: ignore[method-assign]
