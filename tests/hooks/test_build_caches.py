"""What the build keeps between builds (``paths.CACHE``): each kept result is served again only
while everything it was made from is unchanged. Each test plants a wrong result under the current
key, sees it served (so the cache is read), then changes one input and sees the right result.
``tests/builds/test_cached_builds.py`` compares whole builds with and without the caches."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import types

import pytest
from site_build import first_paint, katex, last_change, notebooks, paths
from support.first_paint_reference import reference_mark

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path, monkeypatch) -> pathlib.Path:
    folder = tmp_path / "cache"
    monkeypatch.setattr(paths, "CACHE", folder)
    return folder


# --- KaTeX's HTML -------------------------------------------------------------------------


def _planted(renderer: katex.KaTeX, entries: dict[str, str]) -> None:
    renderer.cache_file().parent.mkdir(parents=True, exist_ok=True)
    renderer.cache_file().write_text(json.dumps(entries), encoding="utf-8")


def test_katex_html_is_kept_per_formula_and_mode_and_served_without_node(cache):
    first = katex.KaTeX()
    inline = first.render("x^2", False, "test")
    first.save()
    first.close()
    assert json.loads(first.cache_file().read_text(encoding="utf-8")) == {"Ix^2": inline}
    # A wrong entry under the same key is what the next build gets, and no Node process starts.
    wrong = inline.replace(">x<", ">y<")
    _planted(first, {"Ix^2": wrong})
    second = katex.KaTeX()
    assert second.render("x^2", False, "test") == wrong and second.process is None
    # The display mode and the formula are part of the key.
    display = second.render("x^2", True, "test")
    assert display != wrong and "katex-display" in display
    assert "y" not in katex.drawn_characters(second.render("x^3", False, "test"), "test")
    second.close()


def test_katex_save_keeps_only_the_formulas_the_build_used(cache):
    renderer = katex.KaTeX()
    _planted(renderer, {"Igone": "old"})
    renderer.render("a", False, "test")
    renderer.save()
    renderer.close()
    assert set(json.loads(renderer.cache_file().read_text(encoding="utf-8"))) == {"Ia"}


@pytest.mark.parametrize("changed", ["package", "script", "server"])
def test_a_new_katex_or_new_options_never_read_the_old_html(cache, tmp_path, monkeypatch, changed):
    katex_copy = tmp_path / "katex"
    (katex_copy / "dist").mkdir(parents=True)
    real = katex.KATEX_DIST.parent
    shutil.copy(real / "package.json", katex_copy / "package.json")
    main = json.loads((real / "package.json").read_text(encoding="utf-8"))["main"]
    shutil.copy(real / main, katex_copy / main)
    server = tmp_path / "katex_server.js"
    shutil.copy(katex.KATEX_SERVER, server)
    monkeypatch.setattr(katex, "KATEX_DIST", katex_copy / "dist")
    if changed == "server":  # Node still runs the real server for the others (its copy cannot load KaTeX)
        monkeypatch.setattr(katex, "KATEX_SERVER", server)
    renderer = katex.KaTeX()
    wrong = '<span class="katex-html">wrong</span>'
    _planted(renderer, {"Ix": wrong})
    assert renderer.render("x", False, "test") == wrong
    before = katex.renderer_key()
    edited = {"package": katex_copy / "package.json", "script": katex_copy / main, "server": server}[changed]
    text = edited.read_text(encoding="utf-8")
    edited.write_text(
        text.replace('"version": "', '"version": "9') if changed == "package" else text + "\n// changed\n"
    )
    assert katex.renderer_key() != before
    if changed != "server":
        fresh = katex.KaTeX()
        assert fresh.render("x", False, "test") != wrong
        fresh.close()


# --- the cut-down fonts --------------------------------------------------------------------

FONT = katex.KATEX_DIST / "fonts" / "KaTeX_Main-Regular.woff2"


def test_a_cut_font_is_kept_per_face_and_characters(cache, monkeypatch):
    cut = katex.cut_font(FONT, "abc")
    assert 0 < len(cut) < FONT.stat().st_size
    kept = list((cache / "fonts").iterdir())
    assert [file.read_bytes() for file in kept] == [cut]
    kept[0].write_bytes(b"wrong")
    assert katex.cut_font(FONT, "abc") == b"wrong"
    # Other characters, another face or another fontTools or Brotli: cut again.
    assert katex.cut_font(FONT, "abd") not in (b"wrong", cut)
    other_face = katex.KATEX_DIST / "fonts" / "KaTeX_Math-Italic.woff2"
    assert katex.cut_font(other_face, "abc") not in (b"wrong", cut)
    for package in ("fonttools", "brotli"):
        real_version = katex.metadata.version
        monkeypatch.setattr(
            katex,
            "metadata",
            types.SimpleNamespace(version=lambda name, p=package, real=real_version: "0" if name == p else real(name)),
        )
        assert katex.cut_font(FONT, "abc") == cut
        monkeypatch.undo()
        monkeypatch.setattr(paths, "CACHE", cache)


# --- the executed notebook and its stylesheet ----------------------------------------------


def test_the_notebook_execution_key_follows_the_library_the_kernels_and_the_environment(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "posenc", root / "posenc", ignore=shutil.ignore_patterns("__pycache__"))
    kernels = tmp_path / "kernels"
    (kernels / "python3").mkdir(parents=True)
    (kernels / "python3" / "kernel.json").write_text('{"argv": ["python"]}', encoding="utf-8")
    monkeypatch.setattr(paths, "ROOT", root)
    monkeypatch.setattr("jupyter_core.paths.jupyter_path", lambda *parts: [str(kernels)])
    keys = [notebooks.execution_key()]
    assert notebooks.execution_key() == keys[0]  # nothing changed, nothing moved
    (root / "posenc" / "encodings.py").write_text("# edited\n", encoding="utf-8")
    keys.append(notebooks.execution_key())
    (root / "posenc" / "new_module.py").write_text("", encoding="utf-8")
    keys.append(notebooks.execution_key())
    (kernels / "python3" / "kernel.json").write_text('{"argv": ["python3"]}', encoding="utf-8")
    keys.append(notebooks.execution_key())
    monkeypatch.setattr(notebooks.sys, "version", "3.99")
    keys.append(notebooks.execution_key())
    distributions = notebooks.metadata.distributions
    monkeypatch.setattr(
        notebooks.metadata, "distributions", lambda **where: [*distributions(**where)][1:]
    )  # one package fewer
    keys.append(notebooks.execution_key())
    assert len(set(keys)) == len(keys), keys


def test_the_notebook_cache_is_turned_on_in_the_folder_of_the_execution_key(cache):
    plugin = types.SimpleNamespace(config={"execute": True, "cache": False, "cache_dir": ".cache"})
    config = types.SimpleNamespace(plugins={"mkdocs-jupyter": plugin})
    stale = cache / "notebooks" / "an-older-key"
    stale.mkdir(parents=True)
    notebooks.keep_executed_notebooks(config)
    assert plugin.config["cache"] is True
    assert plugin.config["cache_dir"] == str(cache / "notebooks" / notebooks.execution_key())
    assert not stale.exists()


CSS = ".a{color:red}.b{color:var(--x)}.c{--x:blue}:root{--x:green}"


def test_a_cut_stylesheet_is_kept_per_stylesheet_and_classes(cache):
    page = '<p class="a b">'
    slim = notebooks.slim_stylesheet(CSS, page)
    assert ".a{color:red}" in slim and ".c" not in slim
    (kept,) = (cache / "stylesheets").iterdir()
    kept.write_text("wrong", encoding="utf-8")
    assert notebooks.slim_stylesheet(CSS, page) == "wrong"
    assert notebooks.slim_stylesheet(CSS, '<p class="b a">') == "wrong"  # the same classes
    assert notebooks.slim_stylesheet(CSS, '<p class="a">') == ".a{color:red}"
    assert notebooks.slim_stylesheet(CSS + ".a{margin:0}", page) not in ("wrong", slim)


# --- what git says about a page's sources --------------------------------------------------


def _git(repo: pathlib.Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path, cache, monkeypatch) -> pathlib.Path:
    repo = tmp_path / "repo"
    (repo / "docs" / "sub").mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "a@b.c")
    _git(repo, "config", "user.name", "A")
    for name in ("docs/a.md", "docs/b.md", "docs/sub/c.md", "docs/ab.md"):
        (repo / name).write_text(name, encoding="utf-8")
    _git(repo, "add", ".")
    _commit(repo, "one", "2020-01-02T00:00:00")
    monkeypatch.setattr(paths, "ROOT", repo)
    last_change.forget_build()
    yield repo
    last_change.forget_build()


def _commit(repo: pathlib.Path, message: str, date: str) -> None:
    subprocess.run(
        ["git", "commit", "-qam", message],
        cwd=repo,
        check=True,
        env={"GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date, "PATH": "/usr/bin:/bin", "HOME": str(repo)},
    )


SOURCE_SETS = [
    ("docs/a.md",),
    ("docs/b.md",),
    ("docs/sub",),
    ("docs/sub/c.md", "docs/a.md"),
    ("docs/ab.md",),
    ("docs",),
]


def test_pending_sources_read_from_one_status_match_git_status_per_page(repo):
    (repo / "docs" / "a.md").write_text("edited", encoding="utf-8")  # modified
    (repo / "docs" / "sub" / "new.md").write_text("new", encoding="utf-8")  # untracked in a folder
    _git(repo, "mv", "docs/b.md", "docs/renamed.md")  # a staged rename: both names
    for _ in range(2):
        for sources in [*SOURCE_SETS, ("docs/renamed.md",), ("docs/a",)]:
            per_page = _git(repo, "status", "--porcelain", "--untracked-files=all", "--", *sources)
            assert last_change._pending(sources) == bool(per_page.strip()), sources
        _git(repo, "checkout", "-q", "--", "docs/a.md")
        last_change.forget_build()


def test_commit_dates_are_kept_per_commit_and_read_again_after_a_new_one(repo):
    assert (
        last_change._last_commit_date(("docs/a.md",)).strip()
        == _git(repo, "log", "-1", "--format=%cs", "--", "docs/a.md").strip()
    )
    (kept,) = (paths.CACHE / last_change.DATES_CACHE).iterdir()
    kept.write_text(json.dumps({"docs/a.md": "wrong"}), encoding="utf-8")
    last_change.forget_build()
    assert last_change._last_commit_date(("docs/a.md",)) == "wrong"
    (repo / "docs" / "a.md").write_text("edited", encoding="utf-8")
    _commit(repo, "two", "2021-03-04T00:00:00")
    last_change.forget_build()
    assert last_change._last_commit_date(("docs/a.md",)).strip() == "2021-03-04"
    assert [file.name for file in (paths.CACHE / last_change.DATES_CACHE).iterdir()] == [
        _git(repo, "rev-parse", "HEAD").strip() + ".json"
    ]


# --- the first-paint scan ------------------------------------------------------------------


TRICKY_ARTICLES = [
    '<p a=b/>d</p><p a="b"/>e<p a=/>f</p><p a = b />g<br a=b/><p title="x=y"/>h<p a/>i',
    '<p title="a > b">x</p><!-- <p> in a comment --><P>upper</P><br><hr/><div/>t<p>',
    "<script>if (a < b && '</p>') {}</script><style>p>q{}</style><p>1</p><svg><path d='M0'/></svg>",
    "<!DOCTYPE x><?pi x?><p>a</p>< b<p>c</p></br><p a=b/>d</p><img src=x alt='>'>",
    "\n".join(f"<p>{index}</p>" for index in range(12)),
]


@pytest.mark.parametrize("children", TRICKY_ARTICLES)
@pytest.mark.parametrize("blocks", [1, 2, 3, 5, 8, 40])
def test_the_first_paint_scan_agrees_with_html_parser(children, blocks):
    page = f"<body>{first_paint.ARTICLE_OPENING}{children}</article><footer></footer></body>"
    assert first_paint.mark_first_screen(page, blocks) == reference_mark(page, blocks)
