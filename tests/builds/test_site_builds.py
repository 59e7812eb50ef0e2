"""Whole builds of the real site with mkdocs: two clean builds give the same bytes, and the
versioned build deployed with mike cites its own address. (``test_build.py`` covers what
``make`` does, on a small site.)"""

from __future__ import annotations

import gzip
import json
import pathlib
import re
import subprocess

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Files that legitimately differ between two builds, and what is compared in them instead.
# Every other file must be byte-identical.
BUILD_DATE = re.compile(rb"<lastmod>[^<]*</lastmod>")
VOLATILE_FILES = {
    # <lastmod> holds the build date (mkdocs writes the day of the build for every page).
    "sitemap.xml": lambda data: BUILD_DATE.sub(b"<lastmod/>", data),
    # The same XML gzipped; the gzip header holds that date as a timestamp.
    "sitemap.xml.gz": lambda data: BUILD_DATE.sub(b"<lastmod/>", gzip.decompress(data)),
}


def _files(directory: pathlib.Path) -> dict[str, pathlib.Path]:
    return {file.relative_to(directory).as_posix(): file for file in sorted(directory.rglob("*")) if file.is_file()}


# `mkdocs build` run in a Python process that then reports, as JSON on its last line of output,
# which module objects hold each file under hooks/ (by their names in sys.modules), whether every
# site_build module a hook refers to is the one in sys.modules, and the KaTeX faces that the
# build's state recorded for the pages.
CENSUS_BUILD = """
import json, pathlib, sys, types
from mkdocs.__main__ import cli

cli(["build", "--quiet", "--site-dir", sys.argv[1]], standalone_mode=False)
hooks = pathlib.Path("hooks").resolve()
copies, strays = {}, []
for name, module in list(sys.modules.items()):
    file = getattr(module, "__file__", None)
    if file and pathlib.Path(file).resolve().is_relative_to(hooks):
        copies.setdefault(pathlib.Path(file).resolve().relative_to(hooks).as_posix(), []).append(name)
    if name.startswith("hooks/"):  # a hook, as MkDocs names it: its site_build modules must be the shared ones
        strays += [f"{name}: {value.__name__}" for value in vars(module).values()
                   if isinstance(value, types.ModuleType) and value.__name__.startswith("site_build")
                   and sys.modules.get(value.__name__) is not value]
faces = sorted(sys.modules["site_build.state"].BUILD.math_faces)
print(json.dumps({"copies": copies, "strays": strays, "faces": faces}))
"""


@pytest.fixture(scope="module")
def clean_build(tmp_path_factory) -> tuple[pathlib.Path, dict]:
    """A clean build of the real site by `mkdocs build` (its folder), and the census of its process."""
    python = ROOT / ".venv" / "bin" / "python"
    if not python.is_file():
        pytest.fail("the virtual environment is not built: run `make`")
    out = tmp_path_factory.mktemp("clean") / "second"
    build = subprocess.run(
        [str(python), "-c", CENSUS_BUILD, str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert build.returncode == 0, f"mkdocs build failed:\n{build.stderr[-3000:]}"
    return out, json.loads(build.stdout.strip().splitlines()[-1])


def test_two_clean_builds_are_identical(clean_build, site_dir):
    """Two builds from the same sources give the same bytes (the notebook is executed in both),
    except the files named in VOLATILE_FILES, whose build dates are masked before comparing.
    The first build is site/, which `make test` builds from these sources just before the tests."""
    out = clean_build[0]
    first, second = _files(site_dir), _files(out)
    # make prints the PDF into site/ after mkdocs has built it; tests/builds/test_pdf.py checks it.
    first.pop("posenc.pdf", None)
    differing = sorted(set(first) ^ set(second))
    for name in sorted(set(first) & set(second)):
        a, b = first[name].read_bytes(), second[name].read_bytes()
        normalise = VOLATILE_FILES.get(name)
        if normalise is not None:
            a, b = normalise(a), normalise(b)
        if a != b:
            differing.append(name)
    assert not differing, (
        "files that differ between site/ and a clean build (if the sources changed after "
        "site/ was built, run `make` first):\n" + "\n".join(differing)
    )


def test_the_hooks_share_one_copy_of_the_build_package(clean_build):
    """MkDocs loads each hook by its path under the name it has in mkdocs.yml, with hooks/ on sys.path
    meanwhile; a hook importing another hook's file by module name would load it a second time, with
    state of its own. After a real build every file under hooks/ is one module object, every
    site_build module a hook holds is that object, and state set by one hook reached another: the math
    faces the pages recorded (build_math's and notebook_pages's on_post_page) are the faces that
    build_math's on_post_build cut down, each smaller in the site than in KaTeX's own."""
    out, census = clean_build
    twice = {file: names for file, names in census["copies"].items() if len(names) > 1}
    assert not twice, f"files under hooks/ loaded as more than one module: {twice}"
    hooks = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["hooks"]
    assert {file: [f"hooks/{file}"] for file in (path.removeprefix("hooks/") for path in hooks)}.items() <= census[
        "copies"
    ].items(), "each hook is loaded once, under the name mkdocs.yml gives it"
    assert census["copies"]["site_build/state.py"] == ["site_build.state"]
    assert not census["strays"], census["strays"]
    assert "Main-Regular" in census["faces"]
    katex_fonts = ROOT / "node_modules" / "katex" / "dist" / "fonts"
    for face in census["faces"]:
        name = f"KaTeX_{face}.woff2"
        assert (out / "assets" / "katex" / "fonts" / name).stat().st_size < (katex_fonts / name).stat().st_size, name


# --- the versioned deploy ------------------------------------------------------------------


# mike's plugin (mike/mkdocs_plugin.py) sets site_url = urljoin(site_url, version) after the
# configuration is validated, so the hooks see it without a trailing slash. This builds
# mkdocs-deploy.yml the same way, for a version 9.9, without needing mike installed.
MIKE_LIKE_BUILD = """
import sys
from urllib.parse import urljoin
from mkdocs.commands.build import build
from mkdocs.config import load_config

config = load_config("mkdocs-deploy.yml", site_dir=sys.argv[1])
config["site_url"] = urljoin(config["site_url"], "9.9")
config.plugins.on_startup(command="build", dirty=False)
try:
    build(config)
finally:
    config.plugins.on_shutdown()
"""


def test_versioned_build_cites_its_own_address(tmp_path, site_dir):
    """What .github/workflows/deploy.yml publishes with mike for a version 9.9. Canonical
    links, the BibTeX of every derivation and the 404 page's links must name /9.9/, so that a
    cited /9.9/derivations/ID/ keeps its text; only this build asks for the version list."""
    out = tmp_path / "site"
    build = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), "-c", MIKE_LIKE_BUILD, str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, f"building mkdocs-deploy.yml failed:\n{build.stderr[-3000:]}"
    for identifier in ("kernel", "rope-relative"):
        page = (out / "derivations" / identifier / "index.html").read_text(encoding="utf-8")
        canonical = re.search(r'<link rel="canonical" href="([^"]+)"', page)[1]
        assert canonical == f"https://posenc.github.io/9.9/derivations/{identifier}/"
        assert re.findall(r"\\url\{([^}]*)\}", page) == [canonical], identifier
    links = [
        href
        for href in re.findall(r'<a href="([^"]+)"', (out / "404.html").read_text(encoding="utf-8"))
        if href.startswith("/")
    ]
    assert links and all(href.startswith("/9.9/") for href in links), links
    assert '"provider": "mike"' in (out / "index.html").read_text(encoding="utf-8")
    assert '"version": null' in (site_dir / "index.html").read_text(encoding="utf-8"), (
        "the local build (mkdocs.yml) must not ask for versions.json"
    )
