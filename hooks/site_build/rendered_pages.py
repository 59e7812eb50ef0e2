"""Each page's Markdown converted to HTML, kept between builds (see ``kept``).

MkDocs converts every page's Markdown on every build, although a one-page edit changes one page's
Markdown: converting the other 140 pages (the API page through mkdocstrings most of all) was the
largest part of the site's build after KaTeX and highlighting had their stores. :func:`install`
wraps ``Page.render`` so that a page whose conversion inputs are all unchanged takes back what
the conversion left: the HTML, the table of contents, the title found in it, the ids it holds,
its links to other pages' anchors (which MkDocs checks once every page is converted), the anchors
it registered with the autorefs plugin (which resolves cross-references between pages) and, for
a page that calls mkdocstrings (``::: name``), the objects it added to mkdocstrings' inventory
(``objects.inv``) and the handlers it used (whose stylesheet mkdocstrings writes).

An entry is keyed on the page's Markdown as the hooks leave it (every ``calc`` value and
generated block is in it, the References page's lists of the pages citing each entry too, so a
citation added to another page converts the References page again), its place in the site,
every file's place and whether it is built (links are resolved against those) and, for a page
that calls mkdocstrings, the source of the ``posenc`` package it documents and
``pyproject.toml`` (the formatter's settings for signatures); the store is named for
``mkdocs.yml``, every installed distribution's version, Python's version and the source of every
hook, which decide the rest.
A conversion that logged anything is not kept, so its messages (a warning fails a strict build)
come again in every build.
"""

from __future__ import annotations

import logging
import re
import sys

from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc

from . import paths
from .kept import Kept, digest, installed_releases, source_texts

# A line that asks mkdocstrings for an object's documentation.
_MKDOCSTRINGS_BLOCK = re.compile(r"^\s*::: ", re.MULTILINE)


def _maker() -> tuple[str, ...]:
    return (
        sys.version,
        "\n".join(installed_releases()),
        (paths.ROOT / "mkdocs.yml").read_text(encoding="utf-8"),
        *source_texts(paths.ROOT / "hooks"),
    )


RENDERED = Kept("rendered-pages", _maker)

# Digests made once per build: the build's files (on the first page's conversion, when every
# plugin has added its files) and the documented package's source; forgotten before each build.
_this_build: dict[str, str] = {}


def forget_build() -> None:
    _this_build.clear()


def files_digest(files) -> str:
    if _this_build.get("files of") != str(id(files)):
        described = sorted(f"{file.src_uri}\0{file.dest_uri}\0{file.url}\0{file.inclusion.name}" for file in files)
        _this_build["files of"], _this_build["files"] = str(id(files)), digest(described)
    return _this_build["files"]


def package_digest() -> str:
    """The source of the package mkdocstrings documents (its docstrings, signatures and members),
    and ``pyproject.toml``, whose settings the code formatter lays long signatures out with."""
    if "package" not in _this_build:
        settings = paths.ROOT / "pyproject.toml"
        _this_build["package"] = digest(
            [settings.read_text(encoding="utf-8") if settings.is_file() else "", *source_texts(paths.ROOT / "posenc")]
        )
    return _this_build["package"]


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


def _plugin(config, name: str):
    return config.plugins.get(name)


def _handlers(config):
    """mkdocstrings' handlers of this build, or None without the plugin."""
    plugin = _plugin(config, "mkdocstrings")
    return plugin.handlers if plugin is not None else None


def _taken_back(page: Page, config, files, found: dict) -> bool:
    """Give ``page`` what a conversion left, as ``found`` holds it; False if that cannot be done here."""
    autorefs, handlers = _plugin(config, "autorefs"), _handlers(config)
    if (found["registered"] and autorefs is None) or ((found["inventory"] or found["handlers"]) and handlers is None):
        return False
    page.content = found["content"]
    page.toc = get_toc(found["toc"])
    page._title_from_render = found["title"]
    page.present_anchor_ids = set(found["anchors"])
    if found["links"] is not None:
        page.links_to_anchors = {files.get_file_from_path(src): dict(links) for src, links in found["links"].items()}
    for arguments in found["registered"]:
        autorefs.register_anchor(page, *arguments["args"], **arguments["kwargs"])
    for name in found["handlers"]:
        handlers.get_handler(name)  # so mkdocstrings counts it as used this build
    for item in found["inventory"]:
        handlers.inventory.register(**item)
    return True


def install() -> None:
    """Put :func:`kept_render` in the place of ``Page.render`` (once per process)."""
    if getattr(Page.render, "kept", False):
        return
    convert = Page.render

    def kept_render(page: Page, config, files) -> None:
        if page.markdown is None:
            convert(page, config, files)
            return
        documents = bool(_MKDOCSTRINGS_BLOCK.search(page.markdown))
        links_checked = logging.getLogger("mkdocs.structure.pages").getEffectiveLevel() > logging.DEBUG
        key = digest(
            [
                page.markdown,
                page.file.src_uri,
                page.file.dest_uri,
                page.file.url,
                files_digest(files),
                str(links_checked),
                package_digest() if documents else "",
            ]
        )
        found = RENDERED.get(key)
        if isinstance(found, dict) and _taken_back(page, config, files, found):
            return

        # What the conversion registers elsewhere, recorded as it happens (each recorder is an
        # attribute of the instance, over its class's method, for this conversion only).
        registered: list[dict] = []
        inventory: list[dict] = []
        used_handlers: list[str] = []
        autorefs, handlers = _plugin(config, "autorefs"), _handlers(config) if documents else None
        recorders = []
        if autorefs is not None:
            register_anchor = autorefs.register_anchor

            def record_anchor(anchor_page, *args, **kwargs):
                registered.append({"page": anchor_page is page, "args": list(args), "kwargs": kwargs})
                return register_anchor(anchor_page, *args, **kwargs)

            recorders.append((autorefs, "register_anchor", record_anchor))
        if handlers is not None:
            register_item, get_handler = handlers.inventory.register, handlers.get_handler

            def record_item(*args, **kwargs):
                inventory.append(dict(zip(("name", "domain", "role", "uri", "priority", "dispname"), args)) | kwargs)
                return register_item(*args, **kwargs)

            def record_handler(name, *args, **kwargs):
                if name not in used_handlers:
                    used_handlers.append(name)
                return get_handler(name, *args, **kwargs)

            recorders += [(handlers.inventory, "register", record_item), (handlers, "get_handler", record_handler)]
        logged = _Logged()
        loggers = [logging.getLogger(), logging.getLogger("mkdocs")]
        for owner, name, recorder in recorders:
            setattr(owner, name, recorder)
        for logger in loggers:
            logger.addHandler(logged)
        try:
            convert(page, config, files)
        finally:
            for logger in loggers:
                logger.removeHandler(logged)
            for owner, name, _ in recorders:
                delattr(owner, name)
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
                "inventory": inventory,
                "handlers": used_handlers,
            },
        )

    kept_render.kept = True  # type: ignore[attr-defined]
    Page.render = kept_render  # type: ignore[method-assign]
