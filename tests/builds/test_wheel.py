"""posenc as a library others install: ``python -m build`` makes an sdist and, from that sdist, a
wheel; the wheel installs with pip into a fresh environment that has NumPy and nothing else of
the site's, where ``import posenc`` works and the library's doctests and the README's example pass.

The build uses the pinned setuptools of the project's environment (``--no-isolation``), so only
installing NumPy into the fresh environment needs the package index (or pip's cache).
"""

from __future__ import annotations

import ast
import doctest
import importlib
import json
import pathlib
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile

import pytest

import posenc

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
# The version's one home is the package, which pyproject.toml's dynamic version reads.
NAME, VERSION = PROJECT["name"], posenc.__version__
# The files of the package: its modules and the site's (posenc/site/), the figure style, the
# explainer's data and the PEP 561 marker of its type hints.
PACKAGE_FILES = sorted(
    [path.relative_to(ROOT).as_posix() for path in (ROOT / "posenc").rglob("*.py")]
    + ["posenc/site/posenc.mplstyle", "posenc/site/explainer_demo.json", "posenc/py.typed"]
)
# The modules that need an optional dependency (pyproject's extras): they are left out of a
# NumPy-only environment, and nothing else may be.
NEEDS_EXTRA = {
    "posenc.site.plotting": "matplotlib",
    "posenc.site.render": "matplotlib",
    "posenc.site.derivations": "sympy",
    "posenc.site.verify": "sympy",
}

# Run inside the fresh environment: import posenc, then every module of the installed package
# with its doctests; print what happened as JSON.
IN_FRESH_ENVIRONMENT = """
import doctest, importlib, importlib.util, json, pkgutil
import posenc
report = {"posenc": posenc.__file__, "version": posenc.__version__, "modules": {},
          "absent": [name for name in ("matplotlib", "sympy", "mkdocs", "pytest")
                     if importlib.util.find_spec(name) is None]}
for module in pkgutil.walk_packages(posenc.__path__, "posenc."):
    try:
        imported = importlib.import_module(module.name)
    except ModuleNotFoundError as error:
        report["modules"][module.name] = {"missing": error.name}
        continue
    result = doctest.testmod(imported, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report["modules"][module.name] = {"attempted": result.attempted, "failed": result.failed}
print(json.dumps(report))
"""


# The README's example of using the library without the site, run as a doctest there too.
README_EXAMPLE = re.search(
    r"^## Using the library without the site\n.*?^```python\n(.*?)^```",
    (ROOT / "README.md").read_text(encoding="utf-8"),
    re.S | re.M,
)[1]
RUN_README_EXAMPLE = """
import doctest, json, sys
test = doctest.DocTestParser().get_doctest(sys.stdin.read(), {}, "README", "README.md", 0)
runner = doctest.DocTestRunner()
runner.run(test)
print(json.dumps(runner.summarize(verbose=False)._asdict()))
"""


def _run(*command: str | pathlib.Path, cwd: pathlib.Path, timeout: float = 300, stdin: str | None = None) -> str:
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=timeout, input=stdin
    )
    shown = " ".join(str(part) for part in command)
    assert result.returncode == 0, f"{shown} failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> pathlib.Path:
    """The sdist and the wheel, built by ``python -m build`` (the wheel from the sdist)."""
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT, cwd=out)
    return out


def _wheel(dist: pathlib.Path) -> pathlib.Path:
    wheels = sorted(dist.glob("*.whl"))
    assert [wheel.name for wheel in wheels] == [f"{NAME}-{VERSION}-py3-none-any.whl"]
    return wheels[0]


def test_the_wheel_holds_the_package_and_nothing_else(dist):
    with zipfile.ZipFile(_wheel(dist)) as wheel:
        names = wheel.namelist()
    info = f"{NAME}-{VERSION}.dist-info/"
    assert sorted(name for name in names if not name.startswith(info)) == PACKAGE_FILES
    with zipfile.ZipFile(_wheel(dist)) as wheel:
        metadata = wheel.read(info + "METADATA").decode()
    assert "Requires-Dist: numpy>=1.26" in metadata.splitlines()
    assert all(
        not line.startswith("Requires-Dist:") or "numpy" in line or "extra ==" in line for line in metadata.splitlines()
    ), "only NumPy may be required; Matplotlib and SymPy are extras"


def test_the_sdist_holds_what_the_wheel_is_built_from(dist):
    sdists = sorted(dist.glob("*.tar.gz"))
    assert [sdist.name for sdist in sdists] == [f"{NAME}-{VERSION}.tar.gz"]
    with tarfile.open(sdists[0]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md", "PKG-INFO", *PACKAGE_FILES} <= names
    assert not {name for name in names if name.split("/")[0] in {"tests", "docs", "site", "hooks", "figures_src"}}


def test_the_wheel_installs_and_runs_its_doctests_with_numpy_alone(dist, tmp_path):
    environment = tmp_path / "env"
    # Without a pip of its own (seeding one takes longer than the rest): this pip installs into it.
    _run(sys.executable, "-m", "venv", "--without-pip", environment, cwd=tmp_path)
    python = environment / "bin" / "python"
    _run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "--quiet",
        "--disable-pip-version-check",
        _wheel(dist),
        cwd=tmp_path,
    )
    # -I: neither the working directory nor PYTHONPATH can put the repository's posenc/ first.
    report = json.loads(_run(python, "-I", "-c", IN_FRESH_ENVIRONMENT, cwd=tmp_path))
    assert pathlib.Path(report["posenc"]).is_relative_to(environment), report["posenc"]
    assert report["version"] == VERSION
    assert set(report["absent"]) == {"matplotlib", "sympy", "mkdocs", "pytest"}, "the environment is not NumPy alone"
    assert (pathlib.Path(report["posenc"]).parent / "py.typed").is_file()
    modules = report["modules"]
    missing = {name: entry["missing"] for name, entry in modules.items() if "missing" in entry}
    assert missing == NEEDS_EXTRA
    tested = {name: entry for name, entry in modules.items() if "missing" not in entry}
    # The modules of a package that needs an extra (posenc.site.derivations) are not reached either.
    assert set(tested) == {
        name
        for name in (
            _module_name(path) for path in PACKAGE_FILES if path.endswith(".py") and path != "posenc/__init__.py"
        )
        if not any(name == extra or name.startswith(extra + ".") for extra in NEEDS_EXTRA)
    }
    failed = {name: entry["failed"] for name, entry in tested.items() if entry["failed"]}
    assert not failed, f"doctests failed in the installed package: {failed}"
    # Every doctest of the source ran there: as many examples as the modules' docstrings hold.
    assert sum(entry["attempted"] for entry in tested.values()) == _doctest_examples(tested)
    readme_run = _run(python, "-I", "-c", RUN_README_EXAMPLE, cwd=tmp_path, stdin=README_EXAMPLE)
    readme = json.loads(readme_run.splitlines()[-1])  # after the report of any failing example
    examples = len(doctest.DocTestParser().get_examples(README_EXAMPLE))
    assert examples and readme == {"failed": 0, "attempted": examples}, readme


def _module_name(path: str) -> str:
    """``posenc/site/plotting.py`` -> ``posenc.site.plotting``; a package's ``__init__.py`` names the package."""
    parts = path.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _doctest_examples(modules) -> int:
    """How many doctest examples the repository's copy of ``modules`` holds."""
    finder = doctest.DocTestFinder()
    return sum(len(test.examples) for name in modules for test in finder.find(importlib.import_module(name)))


def test_import_posenc_imports_the_library_alone():
    """The site's machinery (posenc.site) and its Matplotlib and SymPy stay out of ``import posenc``."""
    code = (
        "import sys, posenc; print(sorted(name for name in sys.modules if name.split('.')[0] in "
        "{'matplotlib', 'sympy'} or name.startswith('posenc.site')))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def _imports_of(path: pathlib.Path) -> set[str]:
    """The posenc modules that the module at ``path`` imports, anywhere in it (at its end too)."""
    package = _module_name(path.relative_to(ROOT).as_posix())
    if path.name != "__init__.py":
        package = package.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            # ``from . import conventions`` imports a module; ``from .conventions import x`` its module.
            found.update(f"{base}.{alias.name}" for alias in node.names)
            found.add(base)
    return found


def test_no_module_of_posenc_imports_another_in_a_circle():
    modules = {_module_name(path.relative_to(ROOT).as_posix()): path for path in (ROOT / "posenc").rglob("*.py")}
    graph = {
        name: {other for other in _imports_of(path) if other in modules and other != name}
        for name, path in modules.items()
    }
    # A package imports its own modules to re-export them; only edges between modules make a circle.
    graph = {name: {other for other in edges if not other.startswith(name + ".")} for name, edges in graph.items()}
    graph = {name: {other for other in edges if not name.startswith(other + ".")} for name, edges in graph.items()}

    def circle_from(start: str, at: str, seen: tuple[str, ...]) -> tuple[str, ...] | None:
        for other in sorted(graph[at]):
            if other == start:
                return (*seen, other)
            if other not in seen:
                found = circle_from(start, other, (*seen, other))
                if found:
                    return found
        return None

    circles = [circle for name in sorted(graph) if (circle := circle_from(name, name, (name,)))]
    assert not circles, f"posenc's modules import each other in a circle: {' -> '.join(circles[0])}"
