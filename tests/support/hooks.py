"""The hooks loaded as MkDocs loads them, and a page to run them on, for the hook tests and the
built-site tests that expand markers. Loaded once here, so every test shares one copy of each."""

from __future__ import annotations

import importlib.util
import sys
import types

from mkdocs.structure.files import File

from support import ROOT

HOOKS = ROOT / "hooks"


def load_hook(name: str):
    """The hook ``hooks/<name>.py`` loaded as MkDocs loads it: by path, its folder on sys.path meanwhile."""
    spec = importlib.util.spec_from_file_location(name, HOOKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    saved = sys.path.copy()
    sys.path.insert(0, str(HOOKS))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


markers_hook = load_hook("page_markers")
math_hook = load_hook("build_math")
notebook_hook = load_hook("notebook_pages")
first_paint_hook = load_hook("first_paint")


def fake_page(src: str, description: str | None = "A page.") -> types.SimpleNamespace:
    file = File(src, src_dir=str(ROOT / "docs"), dest_dir=str(ROOT / "site"), use_directory_urls=True)
    return types.SimpleNamespace(file=file, url=file.url, meta={"description": description} if description else {})


def expand(markdown: str, src: str = "guide.md") -> str:
    return markers_hook.on_page_markdown(markdown, fake_page(src), {"site_url": "https://example.org/"}, None)
