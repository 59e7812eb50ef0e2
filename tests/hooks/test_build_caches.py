"""What the build keeps between builds (``paths.CACHE``): each kept result is served again only
while everything it was made from is unchanged. Each test plants a wrong result under the current
key, sees it served (so the cache is read), then changes one input and sees the right result.
``tests/builds/test_cached_builds.py`` compares whole builds with and without the caches."""

from __future__ import annotations

import base64
import json
import logging
import pathlib
import shutil
import subprocess
import types

import jinja2
import pytest
from mkdocs.exceptions import PluginError
from site_build import (
    citations,
    first_paint,
    highlighting,
    katex,
    kept,
    last_change,
    markers,
    notebooks,
    panels,
    paths,
    rendered_pages,
    search_entries,
    signatures,
    templates,
)
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
    before = kept.digest(katex.renderer_parts())
    edited = {"package": katex_copy / "package.json", "script": katex_copy / main, "server": server}[changed]
    text = edited.read_text(encoding="utf-8")
    edited.write_text(
        text.replace('"version": "', '"version": "9') if changed == "package" else text + "\n// changed\n"
    )
    assert kept.digest(katex.renderer_parts()) != before
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


def test_installed_releases_read_each_distribution_as_the_e_mail_parser_does(tmp_path):
    """The quick reading of "Name==Version" (the stores' and the notebooks' keys) gives what
    ``importlib.metadata`` gives, for every installed distribution and for headers it must leave
    to the e-mail parser."""
    installed = sorted({kept.sysconfig.get_paths()[key] for key in ("purelib", "platlib")})
    found = list(kept.metadata.distributions(path=installed))
    assert kept.installed_releases() == sorted(f"{dist.metadata['Name']}=={dist.version}" for dist in found)
    assert found
    headers = {
        "plain": "Metadata-Version: 2.1\nName: plain\nVersion: 1.0\n\nBody: not a field\n",
        "lower": "metadata-version: 2.1\nname:lower\nversion: \t2.0 \nName: second\n\n",
        "continued-name": "Metadata-Version: 2.1\nName: first\n  part\nVersion: 1\n\n",
        "continued-other": "Metadata-Version: 2.1\nLicense: a\n  long text\nName: lic\nVersion: 3\n\n",
        "returns": "Metadata-Version: 2.1\r\nName: crlf\r\nVersion: 4\r\n\r\n",
        "not-a-field": "Metadata-Version: 2.1\nNot a field: x\nName: late\nVersion: 5\n\n",
        "no-body": "Metadata-Version: 2.1\nName: nobody\nVersion: 6\n",
    }
    for folder, text in headers.items():
        info = tmp_path / f"{folder}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(text, encoding="utf-8", newline="")
        found.append(kept.metadata.PathDistribution(info))
    for dist in found:
        assert kept.installed_release(dist) == f"{dist.metadata['Name']}=={dist.version}", dist


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


# --- the stores of kept.py: highlighted code, search entries, calc values -------------------


def test_a_store_keeps_only_what_the_last_build_used_and_reads_its_maker_again(cache):
    made_by = ["one"]
    store = kept.Kept("test", lambda: made_by)
    store.put("a", "A")
    store.save()
    assert json.loads(store.file().read_text(encoding="utf-8")) == {"a": "A"}
    store.forget_build()
    store.put("b", "B")
    store.save()  # "a" was not used by this build, so it goes
    assert json.loads(store.file().read_text(encoding="utf-8")) == {"b": "B"}
    first = store.file()
    made_by[0] = "two"  # a new maker (another version, edited code): another file, nothing read from the old
    store.forget_build()
    assert store.file() != first and store.get("b") is None


def _highlighted(code: str, language: str = "python", **options) -> str:
    from pymdownx.highlight import Highlight

    return Highlight(None, **options).highlight(code, language)


def test_highlighted_code_is_kept_per_code_language_and_options(cache, monkeypatch):
    highlighting.install()
    highlighting.HIGHLIGHTS.forget_build()
    right = _highlighted("x = 1")
    assert "x" in right
    highlighting.HIGHLIGHTS.save()
    (key,) = highlighting.HIGHLIGHTS.used
    highlighting.HIGHLIGHTS.file().write_text(json.dumps({key: "wrong"}), encoding="utf-8")
    highlighting.HIGHLIGHTS.forget_build()
    assert _highlighted("x = 1") == "wrong"  # read back: the cache is used
    # Each input makes its own key: the code, the language, a formatter option, a lexer option.
    assert _highlighted("x = 2") != "wrong" and "2" in _highlighted("x = 2")
    assert _highlighted("x = 1", "javascript") != "wrong"
    assert _highlighted("x = 1", linenums=True) != "wrong"
    assert _highlighted("x = 1\n", stripnl=False) != "wrong"
    # pymdownx's block formatter rewrites its 'pymdownx-inline' option to 'inline' in place; the key
    # still tells the two apart, as their HTML differs.
    inline = _highlighted("x = 1\ny = 2", linenums=True, linenums_style="inline")
    highlighting.HIGHLIGHTS.save()
    highlighting.HIGHLIGHTS.forget_build()
    assert _highlighted("x = 1\ny = 2", linenums=True, linenums_style="inline") == inline  # served
    pymdownx_inline = _highlighted("x = 1\ny = 2", linenums=True, linenums_style="pymdownx-inline")
    assert pymdownx_inline != inline and "data-linenos" in pymdownx_inline


def test_formatted_signatures_are_kept_per_code_length_and_formatter_settings(cache, tmp_path, monkeypatch):
    from mkdocstrings_handlers.python._internal import rendering

    signatures.install()
    signatures.SIGNATURES.forget_build()
    signature = "(positions: ArrayLike, width: int, *, base: float = 10000.0, layout: str = 'interleaved')"
    right = rendering._format_signature("posenc.sinusoidal", signature, 60)
    assert right.count("\n") > 1  # laid out over several lines by the formatter
    signatures.SIGNATURES.save()
    (key,) = signatures.SIGNATURES.used
    signatures.SIGNATURES.file().write_text(json.dumps({key: "def xxxxxxxxxxxxxxxxx(wrong): pass"}), encoding="utf-8")
    signatures.SIGNATURES.forget_build()
    assert "wrong" in rendering._format_signature("posenc.sinusoidal", signature, 60)
    assert "wrong" not in rendering._format_signature("posenc.sinusoidal", signature, 70)  # another length
    assert "wrong" not in rendering._format_signature("posenc.sinusoidal", signature.replace("base", "b"), 60)
    # The formatter's settings live in pyproject.toml: an edit there formats everything again.
    root = tmp_path / "root"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        (paths.ROOT / "pyproject.toml").read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8"
    )
    monkeypatch.setattr(paths, "ROOT", root)
    signatures.SIGNATURES.forget_build()
    assert rendering._format_signature("posenc.sinusoidal", signature, 60) == right


def _search_page(content: str, url: str = "page/", title: str = "Page", toc=()):
    return types.SimpleNamespace(content=content, url=url, title=title, meta={}, toc=list(toc))


def _indexed(page) -> list[dict]:
    from material.plugins.search.plugin import SearchIndex

    index = SearchIndex(lang=["en"], separator="[\\s]+", pipeline=[], fields={})
    index.add_entry_from_context(page)
    return index.entries


def test_search_entries_are_kept_per_page_html_address_title_and_contents(cache):
    search_entries.install()
    search_entries.ENTRIES.forget_build()
    html_text = '<h1 id="t">Title</h1><p>Some text</p><h2 id="s">Part</h2><p>More</p>'
    right = _indexed(_search_page(html_text))
    assert [entry["title"] for entry in right] == ["Title", "Part"]
    # Material's own order of an entry's fields is kept through the store (the index's bytes show it).
    assert list(right[0]) == ["location", "title", "text"]
    search_entries.ENTRIES.save()
    (key,) = search_entries.ENTRIES.used
    wrong = [[["location", "x"], ["title", "wrong"], ["text", ""]]]
    search_entries.ENTRIES.file().write_text(json.dumps({key: wrong}), encoding="utf-8")
    search_entries.ENTRIES.forget_build()
    assert _indexed(_search_page(html_text)) == [{"location": "x", "title": "wrong", "text": ""}]
    assert list(_indexed(_search_page(html_text))[0]) == ["location", "title", "text"]
    for changed in (
        _search_page(html_text.replace("Some", "Other")),
        _search_page(html_text, url="elsewhere/"),
        _search_page(html_text.replace('<h1 id="t">Title</h1>', ""), title="Another"),
        _search_page(html_text, toc=[types.SimpleNamespace(id="s", url="#moved", children=[])]),
    ):
        assert _indexed(changed) != [{"location": "x", "title": "wrong", "text": ""}]


def test_calc_values_are_kept_per_expression_format_and_library(cache, tmp_path, monkeypatch):
    markers.CALCS.forget_build()
    assert markers.calc("posenc.alibi_slopes(4)[0]", ".3f", "m") == "0.250"
    markers.CALCS.save()
    markers.CALCS.file().write_text(json.dumps({".3f\0posenc.alibi_slopes(4)[0]": "wrong"}), encoding="utf-8")
    markers.CALCS.forget_build()
    assert markers.calc("posenc.alibi_slopes(4)[0]", ".3f", "m") == "wrong"
    assert markers.calc("posenc.alibi_slopes(4)[0]", ".2f", "m") == "0.25"
    assert markers.calc("posenc.alibi_slopes(4)[1]", ".3f", "m") == "0.062"
    # An edit anywhere in the library's code makes every value be computed again.
    library = tmp_path / "posenc"
    shutil.copytree(markers.LIBRARY, library, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(markers, "LIBRARY", library)
    markers.CALCS.forget_build()
    assert markers.calc("posenc.alibi_slopes(4)[0]", ".3f", "m") == "wrong"  # the same code: the same values
    with (library / "encodings.py").open("a", encoding="utf-8") as source:
        source.write("\n# an edit\n")
    markers.CALCS.forget_build()
    assert markers.calc("posenc.alibi_slopes(4)[0]", ".3f", "m") == "0.250"


def test_panel_colours_are_kept_per_concept_and_the_site_machinery(cache, tmp_path, monkeypatch):
    panels.PALETTES.forget_build()
    right = panels.panel_template("rope")  # its palette: [side]
    panels.PALETTES.save()
    (key,) = panels.PALETTES.used
    assert key == "side"
    panels.PALETTES.file().write_text(json.dumps({"side": [["--posenc-side-query", "#wrong"]]}), encoding="utf-8")
    panels.PALETTES.forget_build()
    assert 'style="--posenc-side-query: #wrong"' in panels.panel_template("rope")
    # Another Matplotlib, or an edit to the site's machinery (the plotting helper), draws again.
    real_version = panels.metadata.version
    monkeypatch.setattr(
        panels,
        "metadata",
        types.SimpleNamespace(version=lambda name: "0" if name == "matplotlib" else real_version(name)),
    )
    panels.PALETTES.forget_build()
    assert panels.panel_template("rope") == right
    monkeypatch.setattr(panels, "metadata", types.SimpleNamespace(version=real_version))
    shutil.copytree(
        ROOT / "posenc" / "site", tmp_path / "posenc" / "site", ignore=shutil.ignore_patterns("__pycache__")
    )
    monkeypatch.setattr(paths, "ROOT", tmp_path)
    panels.PALETTES.forget_build()
    assert "#wrong" in panels.panel_template("rope")  # the same machinery: the same colours
    with (tmp_path / "posenc" / "site" / "plotting.py").open("a", encoding="utf-8") as source:
        source.write("\n# an edit\n")
    panels.PALETTES.forget_build()
    assert panels.panel_template("rope") == right


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


def test_the_first_paint_marker_is_kept_per_page_html(cache):
    first_paint.MARKS.forget_build()
    blocks = first_paint.FIRST_SCREEN_BLOCKS
    page = f"<body>{first_paint.ARTICLE_OPENING}" + "<p>a</p>" * (blocks + 2) + "</article></body>"
    right = first_paint.marked(page, "page.md")
    assert right == first_paint.mark_first_screen(page)
    first_paint.MARKS.save()
    (key,) = first_paint.MARKS.used
    first_paint.MARKS.file().write_text(json.dumps({key: 6}), encoding="utf-8")
    first_paint.MARKS.forget_build()
    assert first_paint.marked(page, "page.md") == page[:6] + first_paint.FIRST_SCREEN_MARKER + page[6:]
    # Another page's HTML is scanned afresh; a page without an article is left as it is.
    other = page.replace("<p>a</p>", "<p>b</p>", 1)
    assert first_paint.marked(other, "page.md") == first_paint.mark_first_screen(other)
    assert first_paint.marked("<body>no article</body>", "page.md") == "<body>no article</body>"
    assert first_paint.marked("<body>no article</body>", "page.md") == "<body>no article</body>"  # kept as -1
    with pytest.raises(PluginError, match="page.md: the page's article is never closed"):
        first_paint.marked(f"<body>{first_paint.ARTICLE_OPENING}<p>open", "page.md")


def _templates_env(source: str, **settings) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.DictLoader({"page.html": source}), **settings)
    return templates.install(env)


def test_compiled_templates_are_kept_per_template_source_and_environment(cache):
    templates.COMPILED.forget_build()
    assert _templates_env("B{{ x }}").get_template("page.html").render(x=1) == "B1"
    templates.COMPILED.save()
    (key,) = templates.COMPILED.used
    # Another template's code planted under the key, with this source's checksum: it is what loads.
    env = _templates_env("B{{ x }}")
    planted = jinja2.bccache.Bucket(env, key, jinja2.BytecodeCache().get_source_checksum("B{{ x }}"))
    planted.code = env.compile("wrong {{ x }}", "page.html", None)
    templates.COMPILED.file().write_text(
        json.dumps({key: base64.b64encode(planted.bytecode_to_string()).decode("ascii")}), encoding="utf-8"
    )
    templates.COMPILED.forget_build()
    assert _templates_env("B{{ x }}").get_template("page.html").render(x=1) == "wrong 1"
    # An edited template, or an environment that compiles differently, is compiled again.
    templates.COMPILED.forget_build()
    assert _templates_env("C{{ x }}").get_template("page.html").render(x=1) == "C1"
    templates.COMPILED.forget_build()
    assert _templates_env("B{{ x }}", trim_blocks=True).get_template("page.html").render(x=1) == "B1"


# --- each page's Markdown converted to HTML -----------------------------------------------


@pytest.fixture
def project(tmp_path, cache, monkeypatch):
    """A two-page MkDocs project with the autorefs plugin, its files and a way to convert a page
    as a build does (the plugin's page hook first, which tells it the page being converted)."""
    from mkdocs.config import load_config
    from mkdocs.structure.files import get_files
    from mkdocs.structure.pages import Page

    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "hooks").mkdir()
    (root / "hooks" / "hook.py").write_text("# a hook\n", encoding="utf-8")
    (root / "mkdocs.yml").write_text(
        "site_name: test\nplugins: [autorefs, {mkdocstrings: {handlers: {python: {paths: [.]}}}}]\n"
        "markdown_extensions: [toc]\nvalidation: {links: {anchors: warn}}\n",
        encoding="utf-8",
    )
    (root / "posenc").mkdir()
    (root / "posenc" / "__init__.py").write_text(
        'def angle(p):\n    """The angle of position p."""\n', encoding="utf-8"
    )
    (root / "docs" / "api.md").write_text("# API\n\n::: posenc.angle\n", encoding="utf-8")
    (root / "docs" / "index.md").write_text("# Home\n\nSee [the section](other.md#part).\n", encoding="utf-8")
    (root / "docs" / "other.md").write_text("# Other\n\n## Part\n\nText.\n", encoding="utf-8")
    monkeypatch.setattr(paths, "ROOT", root)
    rendered_pages.RENDERED.forget_build()
    rendered_pages.forget_build()
    rendered_pages.install()
    config = load_config(str(root / "mkdocs.yml"))
    config.plugins.on_config(config)
    files = get_files(config)
    autorefs = config.plugins["autorefs"]

    def convert(src: str, markdown: str | None = None, files=files) -> Page:
        page = Page(None, files.get_file_from_path(src), config)
        page.read_source(config)
        page.markdown = autorefs.on_page_markdown(markdown or page.markdown, page=page)
        page.render(config, files)
        return page

    # The site's files as a new build would list them.
    return types.SimpleNamespace(
        config=config, files=files, convert=convert, listed=lambda: get_files(config), root=root
    )


def _plant_content(replace: str, by: str) -> None:
    stored = json.loads(rendered_pages.RENDERED.file().read_text(encoding="utf-8"))
    for entry in stored.values():
        entry["content"] = entry["content"].replace(replace, by)
    rendered_pages.RENDERED.file().write_text(json.dumps(stored), encoding="utf-8")
    rendered_pages.RENDERED.forget_build()
    rendered_pages.forget_build()


def test_a_converted_page_is_kept_with_its_contents_anchors_and_links(project):
    first = project.convert("other.md")
    rendered_pages.RENDERED.save()
    _plant_content("Text.", "Planted.")
    autorefs = project.config.plugins["autorefs"]
    autorefs._primary_url_map.clear()
    again = project.convert("other.md")
    # Served from the store: the planted HTML, with the same contents, title and ids, and the
    # heading anchors registered with autorefs again although nothing was converted.
    assert "Planted." in again.content and "Text." in first.content
    assert [(item.title, item.id, [child.id for child in item.children]) for item in again.toc] == [
        ("Other", "other", ["part"])
    ]
    assert again.title == first.title == "Other" and again.present_anchor_ids == first.present_anchor_ids
    assert autorefs._primary_url_map["part"] == ["other/#part"]
    # The links to other pages' anchors, which MkDocs checks once every page is converted.
    home = project.convert("index.md")
    rendered_pages.RENDERED.save()
    _plant_content("the section", "planted")
    kept_home = project.convert("index.md")
    assert "planted" in kept_home.content
    assert (
        kept_home.links_to_anchors
        == home.links_to_anchors
        == {project.files.get_file_from_path("other.md"): {"part": "other.md#part"}}
    )


def test_a_kept_page_is_converted_again_when_its_markdown_place_or_the_files_change(project):
    project.convert("other.md")
    rendered_pages.RENDERED.save()
    _plant_content("Text.", "Planted.")
    assert "Planted." in project.convert("other.md").content
    # Its Markdown as the hooks leave it.
    assert "Planted." not in project.convert("other.md", "# Other\n\n## Part\n\nText!\n").content
    # The same Markdown at another place in the site.
    (project.root / "docs" / "moved.md").write_text("# Other\n\n## Part\n\nText.\n", encoding="utf-8")
    assert "Planted." not in project.convert("moved.md", files=project.listed()).content
    # Another file in the site: a link that did not resolve may now.
    (project.root / "docs" / "new.md").write_text("# New\n", encoding="utf-8")
    assert "Planted." not in project.convert("other.md", files=project.listed()).content
    assert "Planted." in project.convert("other.md").content


@pytest.mark.parametrize("changed", ["mkdocs.yml", "hook", "distribution", "python", "link checks"])
def test_a_new_configuration_hook_or_package_never_reads_the_old_pages(project, monkeypatch, changed):
    project.convert("other.md")
    rendered_pages.RENDERED.save()
    _plant_content("Text.", "Planted.")
    assert "Planted." in project.convert("other.md").content
    if changed == "mkdocs.yml":
        with (project.root / "mkdocs.yml").open("a", encoding="utf-8") as config:
            config.write("# edited\n")
    elif changed == "hook":
        (project.root / "hooks" / "hook.py").write_text("# an edited hook\n", encoding="utf-8")
    elif changed == "distribution":
        installed = kept.installed_releases()
        monkeypatch.setattr(rendered_pages, "installed_releases", lambda: [*installed, "Markdown==0.0.1"])
    elif changed == "python":
        monkeypatch.setattr(rendered_pages.sys, "version", "3.99.0 (another build)")
    else:
        # MkDocs collects a page's links to other pages' anchors only below its debug level.
        monkeypatch.setattr(logging.getLogger("mkdocs.structure.pages"), "level", logging.DEBUG)
    rendered_pages.RENDERED.forget_build()
    assert "Planted." not in project.convert("other.md").content


def test_a_conversion_that_logged_is_not_kept(project, caplog):
    project.convert("index.md", "# Home\n\nA [dead link](missing.md).\n")
    assert any("missing.md" in record.getMessage() for record in caplog.records)
    assert rendered_pages.RENDERED.used == {}
    project.convert("index.md")
    assert len(rendered_pages.RENDERED.used) == 1


def test_a_page_documented_by_mkdocstrings_is_kept_with_its_inventory_and_follows_the_package(project):
    handlers = project.config.plugins["mkdocstrings"].handlers
    first = project.convert("api.md")
    assert "The angle of position p." in first.content
    item = handlers.inventory["posenc.angle"]
    assert item.uri == "api/#posenc.angle"
    rendered_pages.RENDERED.save()
    _plant_content("The angle of position p.", "Planted.")
    handlers.inventory.clear()
    handlers._handlers.clear()  # no handler used yet this build
    autorefs = project.config.plugins["autorefs"]
    autorefs._primary_url_map.clear()
    # Served: the inventory's entries, the handler counted as used and the object's anchor come back.
    assert "Planted." in project.convert("api.md").content
    assert handlers.inventory["posenc.angle"].uri == item.uri and handlers.inventory["posenc.angle"].role == item.role
    assert [handler.name for handler in handlers.seen_handlers] == ["python"]
    assert autorefs._primary_url_map["posenc.angle"] == ["api/#posenc.angle"]
    # An edited docstring in the package, or new settings for the formatter that lays out long
    # signatures, convert the page again.
    (project.root / "posenc" / "__init__.py").write_text('def angle(p):\n    """The new angle."""\n', encoding="utf-8")
    rendered_pages.forget_build()
    assert "Planted." not in project.convert("api.md").content
    rendered_pages.RENDERED.save()
    _plant_content("The angle of position p.", "Planted.")
    _plant_content("The new angle.", "Planted.")
    assert "Planted." in project.convert("api.md").content
    (project.root / "pyproject.toml").write_text("[tool.ruff]\nline-length = 60\n", encoding="utf-8")
    rendered_pages.forget_build()
    assert "Planted." not in project.convert("api.md").content


def test_the_references_page_is_converted_again_when_another_page_cites_an_entry(project, monkeypatch):
    """The References page lists the pages citing each entry, read from every page's Markdown: a
    citation added to another page changes the References page's Markdown as the hooks leave it,
    which keys its kept conversion, though the References page's own file is unchanged."""
    from mkdocs.structure.pages import Page

    docs = project.root / "docs"
    monkeypatch.setattr(paths, "DOCS", docs)
    (docs / "references.md").write_text(
        "---\ntitle: References\nbibliography: true\n---\n\n# References\n\n```bibtex\n@misc{doe2020,\n"
        "  author = {Doe, Jane},\n  title = {A Paper},\n  year = {2020},\n  url = {https://example.org/}\n}\n"
        "```\n\nWhat the site takes from it.\n",
        encoding="utf-8",
    )
    files = project.listed()

    def references():
        page = Page(None, files.get_file_from_path("references.md"), project.config)
        page.read_source(project.config)
        return project.convert("references.md", citations.bibliography_markdown(page.markdown, page), files=files)

    assert "Cited on" not in references().content
    rendered_pages.RENDERED.save()
    _plant_content("What the site takes", "Planted")
    assert "Planted" in references().content
    (docs / "other.md").write_text(
        "---\ntitle: Other page\n---\n\n# Other\n\n## Part\n\nAs [Doe](references.md#doe2020) shows.\n",
        encoding="utf-8",
    )
    again = references().content
    assert "Planted" not in again and 'Cited on: <a href="../other/">Other page</a>' in again
