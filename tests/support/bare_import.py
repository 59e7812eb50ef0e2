"""A module of an installed package, imported without running the ``__init__`` of any package
above it. The peer tests use it where a package's ``__init__`` imports something this environment
cannot load (timm's imports torchvision; fla-core's imports Triton) while the module compared
needs only torch: each parent package is registered as an empty package that searches its
installed folder, so the module and its relative imports load from the files as they are."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path


def installed_folder(package: str) -> Path:
    """The folder of the installed ``package``, found without executing its ``__init__``."""
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, f"{package} is not installed in this environment"
    return Path(next(iter(spec.submodule_search_locations)))


def import_without_inits(module: str) -> types.ModuleType:
    """``module`` (dotted), with every package above it registered empty over its installed folder."""
    parts = module.split(".")
    folder = installed_folder(parts[0])
    for depth in range(1, len(parts)):
        package = ".".join(parts[:depth])
        if package not in sys.modules:
            spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
            spec.submodule_search_locations = [str(folder.joinpath(*parts[1:depth]))]
            sys.modules[package] = importlib.util.module_from_spec(spec)
    return importlib.import_module(module)
