"""The MkDocs hooks and the site_build package under them: page markers, build-time KaTeX, notebook pages."""

from __future__ import annotations

import ast
import inspect
import json
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest
import yaml
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from site_build import derivation_pages, figures, first_paint, katex, last_change, notebooks, paths, peer_tests
from site_build.state import BUILD
from support.hooks import expand, fake_page, first_paint_hook, markers_hook, math_hook, notebook_hook

import posenc
from posenc.site.figure_files import FIGURE_DIR

ROOT = pathlib.Path(__file__).resolve().parents[2]
HOOKS = ROOT / "hooks"


def test_ref_links_the_derivation_page_relative_to_the_page():
    assert expand("see {{ ref: kernel }}", "deep/page.md") == (
        'see [`kernel`](../derivations/kernel.md "The dot product of two position vectors depends only '
        'on their offset")'
    )


def test_each_derivation_page_holds_its_statement_proof_source_and_record():
    from posenc.site.derivations import ordered
    from posenc.site.registry import REGISTRY

    ids = [entry.id for entry in ordered()]
    for position, identifier in enumerate(ids):
        entry = REGISTRY[identifier]
        page = derivation_pages.derivation_page(identifier, "https://example.org/")
        front, body = page.split("\n---\n", 1)
        assert yaml.safe_load(front.removeprefix("---\n"))["title"] == entry.title
        assert f"\n# {entry.title}\n" in body and f"$$\n{entry.statement}\n$$" in body
        assert all(f"{n}. {step}\n" in body for n, step in enumerate(entry.steps, 1)), identifier
        assert inspect.getsource(entry.prove) in body
        assert entry.check is None or inspect.getsource(entry.check) in body
        assert f"derivations/{identifier}/}}" in body and f"@misc{{posenc-{identifier}," in body
        # Previous and next in the index's order, so a reader can page through them.
        neighbours = {ids[at] for at in (position - 1, position + 1) if 0 <= at < len(ids)}
        assert set(re.findall(r"\]\(([a-z0-9-]+)\.md\)", body)) == neighbours, identifier


def test_a_derivation_id_that_would_take_a_pages_address_stops_the_build(tmp_path, monkeypatch):
    from posenc.site.registry import REGISTRY

    (tmp_path / "derivations").mkdir()
    (tmp_path / "derivations" / "kernel.md").write_text("# A page of its own\n")
    monkeypatch.setattr(paths, "DOCS", tmp_path)
    with pytest.raises(
        PluginError, match="derivation ID 'kernel' would be served at the address of docs/derivations/kernel.md"
    ):
        derivation_pages.derivation_page_files({"site_url": "https://example.org/", "docs_dir": str(tmp_path)})
    assert "kernel" in REGISTRY


def test_eq_shows_the_registry_statement():
    from posenc.site.registry import REGISTRY

    out = expand("{{ eq: distance }}")
    assert REGISTRY["distance"].statement in out
    assert "derivations/distance.md" in out


def test_calc_formats_scalars_and_arrays():
    assert expand("{{ calc .2f: posenc.kernel(6, 8) }}") == "3.78"
    assert expand("{{ calc .2f: posenc.wavelengths(8) }}") == "[6.28, 62.83, 628.32, 6283.19]"


@pytest.mark.parametrize(
    ("markdown", "words"),
    [
        ("{{ ref: no-such-id }}", "unknown derivation ID 'no-such-id'"),
        ("{{ eq: kernels }}", "unknown derivation ID 'kernels'"),
        ("{{ figure: no-such-figure }}", "unknown figure 'no-such-figure'"),
        ("{{ calc .2f: posenc.kernel(6, 7) }}", "width must be a positive even integer"),
        ("{{ bogus: x }}", "unknown marker"),
        ("{{ calc .2f: posenc.kernel(6,\n 8) }}", "unexpanded marker"),
    ],
)
def test_bad_markers_stop_the_build_with_a_named_error(markdown, words):
    with pytest.raises(PluginError, match=words):
        expand(markdown)


def test_markers_inside_code_fences_are_shown_not_expanded():
    text = "```text\n{{ ref: no-such-id }}\n```\n"
    assert expand(text) == text


def test_a_page_without_description_is_reported(caplog):
    markers_hook.on_page_context({}, fake_page("guide.md", description=None), {"site_url": "/"}, None)
    assert "guide.md has no description" in caplog.text


def test_a_page_names_only_scripts_the_site_has():
    script = File(
        "javascripts/explainer.js", src_dir=str(ROOT / "docs"), dest_dir=str(ROOT / "site"), use_directory_urls=True
    )
    files, config, page = Files([script]), {"site_url": "https://example.org/"}, fake_page("explainer.md")
    page.meta["scripts"] = ["javascripts/explainer.js"]
    assert markers_hook.on_page_markdown("Text.", page, config, files) == "Text."
    page.meta["scripts"] = ["javascripts/explainer.js", "javascripts/explainr.js"]
    with pytest.raises(PluginError, match=r"explainer\.md: .*'scripts' names javascripts/explainr\.js, which"):
        markers_hook.on_page_markdown("Text.", page, config, files)
    page.meta["scripts"] = "javascripts/explainer.js"
    with pytest.raises(PluginError, match="'scripts' must be a list of file names"):
        markers_hook.on_page_markdown("Text.", page, config, files)


def test_a_notebook_takes_its_description_from_its_metadata_in_hook_order(caplog):
    """mkdocs.yml runs notebook_pages's on_page_markdown before page_markers checks the description."""
    hooks = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["hooks"]
    assert hooks.index("hooks/notebook_pages.py") > hooks.index("hooks/build_math.py"), "math before CSS slimming"
    source = "notebooks/explicit-position-ids.ipynb"
    page = fake_page(source, description=None)
    notebook_hook.on_page_markdown("", page, {}, None)
    markers_hook.on_page_context({}, page, {}, None)
    metadata = json.loads((ROOT / "docs" / source).read_text(encoding="utf-8"))["metadata"]
    assert page.meta["description"] == metadata["description"] and "no description" not in caplog.text


HEAD = f"<head>{katex.FONT_PRELOADS_MARK}</head>"
FONT = '<link rel="preload" href="{}assets/katex/fonts/KaTeX_{}.woff2" as="font" type="font/woff2" crossorigin>'


def test_katex_renders_arithmatex_output_and_rejects_bad_tex():
    page = fake_page("guide.md")
    html = HEAD + '<p><span class="arithmatex">\\(x^2 &lt; 1\\)</span></p>'
    html += '<div class="arithmatex">\\[\\frac{a}{b}\\]</div>'
    out = math_hook.on_post_page(html, page, {})
    assert out.count('class="katex"') == 2 and "katex-display" in out and "arithmatex" not in out
    # The faces this math is drawn in are preloaded, with URLs relative to the page.
    assert out.startswith("<head>" + FONT.format("../", "Main-Regular") + FONT.format("../", "Math-Italic") + "</head>")
    with pytest.raises(PluginError, match="guide.md: math does not render"):
        math_hook.on_post_page(HEAD + '<span class="arithmatex">\\(\\frac{1}{\\)</span>', page, {})
    with pytest.raises(PluginError, match="guide/: the theme's head has no place for the math font preloads"):
        math_hook.on_post_page('<span class="arithmatex">\\(x\\)</span>', page, {})
    # A page without math preloads nothing; the theme's own 404 page loses the mark.
    assert math_hook.on_post_page(HEAD + "<p>text</p>", page, {}) == "<head></head><p>text</p>"
    assert math_hook.on_post_template(HEAD, "404.html", {}) == "<head></head>"
    katex.KATEX.close()


@pytest.mark.parametrize(
    ("tex", "display", "faces"),
    [
        ("2 + 2", False, ["Main-Regular"]),
        ("x_i", False, ["Main-Regular", "Math-Italic"]),
        (r"\mathbf{x} \in \mathbb{R}^d", False, ["Main-Regular", "Main-Bold", "Math-Italic", "AMS-Regular"]),
        (r"\sum_i", False, ["Main-Regular", "Math-Italic", "Size1-Regular"]),
        (r"\sum_i", True, ["Main-Regular", "Math-Italic", "Size2-Regular"]),
        (r"\Bigg( \mathtt{id} \Bigg)", False, ["Main-Regular", "Size4-Regular", "Typewriter-Regular"]),
    ],
)
def test_the_faces_a_formula_is_drawn_in_are_read_from_katex_classes(tex, display, faces):
    assert katex.math_faces(katex.KATEX.render(tex, display, "test")) == faces


def test_notebook_math_is_rendered_outside_code_only():
    page = fake_page("notebooks/n.ipynb")
    html = HEAD + '<div class="jp-RenderedMarkdown x">width $d = 8$ and <code>$HOME</code></div>'
    out = notebook_hook.on_post_page(html, page, {})
    assert 'class="katex"' in out and "<code>$HOME</code>" in out
    assert 'assets/katex/fonts/KaTeX_Math-Italic.woff2" as="font"' in out
    # Rendered once the cells' math is in: the arithmatex hook leaves a notebook's mark alone.
    assert math_hook.on_post_page(html, page, {}) == html
    katex.KATEX.close()


def test_slim_stylesheet_keeps_rules_for_present_classes_and_their_variables():
    css = (
        ":root{--used:1px;--chain:var(--used);--unused:2px}"
        ".a{margin:var(--chain)}.b{color:red}.a .c{padding:0}"
        ".x :is(.a,.b){display:none}.a,.b{top:0}"
        "@media (max-width:10px){.a{left:0}.b{left:1px}}"
    )
    out = notebooks.slim_stylesheet(css, '<div class="a"><i class="x"></i></div>')
    assert ".a{margin:var(--chain)}" in out
    assert "--used:1px" in out and "--chain:var(--used)" in out and "--unused" not in out
    assert ".b{" not in out and ".a .c" not in out
    assert ".x :is(.a,.b){display:none}" in out, "commas inside :is() do not split selectors"
    assert ".a{top:0}" in out
    assert "@media (max-width:10px){.a{left:0}}" in out


def test_notebook_pages_drop_cdn_loaders_and_mathjax_config():
    page = fake_page("notebooks/n.ipynb")
    html = HEAD + (
        '<script type="text/x-mathjax-config">MathJax.Hub.Config({})</script>'
        '<script type="module">import("https://cdn.example/mermaid.esm.min.mjs")</script>'
        '<script src=""> </script><p>kept</p>'
    )
    assert notebook_hook.on_post_page(html, page, {}) == "<head></head><p>kept</p>"


def test_markers_in_inline_code_and_indented_code_blocks_are_shown_not_expanded():
    shown = [
        "Write `{{ calc .2f: posenc.kernel(6, 8) }}` in a page.\n",
        "Write ``a `{{ ref: kernel }}` b`` in a page.\n",
        "A paragraph.\n\n    {{ calc .2f: posenc.kernel(6, 8) }}\n",
        "!!! note\n\n    Text.\n\n        {{ ref: kernel }}\n",
        "!!! note\n\n    ~~~\n    {{ ref: kernel }}\n    ~~~\n",
    ]
    for text in shown:
        assert expand(text) == text
    # Indented text inside an admonition or under a list item is prose, and is expanded.
    assert expand("!!! note\n\n    It is {{ calc .2f: posenc.kernel(6, 8) }}.\n") == "!!! note\n\n    It is 3.78.\n"
    assert expand("- item\n\n    It is {{ calc .2f: posenc.kernel(6, 8) }}.\n") == "- item\n\n    It is 3.78.\n"
    assert expand("`code` then {{ calc .2f: posenc.kernel(6, 8) }}") == "`code` then 3.78"


def test_a_backslash_shows_a_marker_literally():
    text = "Write \\{{ calc .2f: posenc.kernel(6, 8) }} to show a number."
    assert expand(text) == text, "left for Markdown, whose escape drops the backslash"


@pytest.mark.parametrize(
    ("marker", "words"),
    [
        ("{{ calc .2z: posenc.kernel(6, 8) }}", "format spec '.2z' does not apply to float"),
        ("{{ calc d: posenc.wavelengths(8) }}", "format spec 'd' does not apply to float"),
        ("{{ calc .2f: None }}", "gave None"),
        ("{{ calc: print('x') }}", "gave None"),
        ("{{ calc: [1.0, None] }}", "gave None"),
    ],
)
def test_calc_errors_name_the_page_and_the_marker(marker, words):
    with pytest.raises(PluginError, match=re.escape(f"guide.md: calc marker {marker!r}") + ".*" + re.escape(words)):
        expand(f"The value is {marker}.")


def test_the_derivation_pages_hold_nothing_measured_at_build_time(tmp_path, monkeypatch):
    from posenc.site import verify
    from posenc.site.registry import REGISTRY

    pages = []
    for seconds in (0.123457, 3.45):
        report = tmp_path / f"verify-{seconds}.json"
        report.write_text(
            json.dumps({i: {"status": "proved", "seconds": seconds} | verify.shown(e) for i, e in REGISTRY.items()})
        )
        monkeypatch.setattr(paths, "VERIFY_REPORT", report)
        pages.append(
            derivation_pages.index_markdown("derivations/index.md")
            + "".join(derivation_pages.derivation_page(i, "https://example.org/") for i in REGISTRY)
        )
    assert pages[0] == pages[1]
    assert "0.123" not in pages[0]


def test_a_missing_node_is_named_with_how_to_install_it_before_building(monkeypatch):
    monkeypatch.setattr(katex.shutil, "which", lambda name: None)
    with pytest.raises(PluginError, match="node is not installed or not on PATH: install Node.js"):
        math_hook.on_config({})


def test_the_preview_keeps_a_failed_figure_and_names_its_error(tmp_path, monkeypatch):
    meta = {
        "alt": "A line.",
        "caption": "Caption.",
        "title": "Title.",
        "width": 10,
        "height": 5,
        "script": "figures_src/drawn.py",
        "narrow": False,
    }
    (tmp_path / "drawn.json").write_text(json.dumps(meta))
    (tmp_path / "drawn.svg").write_text("<svg/>")
    monkeypatch.setattr(paths, "FIGURES", tmp_path)
    monkeypatch.setattr(paths, "DOCS", tmp_path.parent)
    failures = {
        name: "Traceback (most recent call last):\n  ...\nValueError: the data file is corrupt\n"
        for name in ("drawn", "new")
    }
    monkeypatch.setattr(BUILD, "failed_figures", failures)
    monkeypatch.setattr(BUILD, "serving", True)
    page = expand("{{ figure: drawn }}")
    assert '<span data-posenc-figure="drawn"></span>' in page, "the last good figure stays on the page"
    assert '!!! failure "figures_src/drawn.py failed"' in page and "ValueError: the data file is corrupt" in page
    new = expand("{{ figure: new }}")
    assert "figures_src/new.py failed" in new and "<figure" not in new, "a new figure that never rendered"
    monkeypatch.setattr(BUILD, "serving", False)
    with pytest.raises(PluginError, match="figure 'drawn' is stale: figures_src/drawn.py failed"):
        expand("{{ figure: drawn }}")


@pytest.fixture
def one_figure(tmp_path, monkeypatch):
    """A figure folder ``figures`` inside a docs folder, holding figure ``drawn``; returns its sidecar."""
    folder = tmp_path / "figures"
    folder.mkdir()
    meta = {
        "alt": "A line [from a to b] with 'quotes', \"double\" & <angles>.",
        "caption": "Caption.",
        "title": "Title.",
        "width": 10,
        "height": 5,
        "script": "figures_src/drawn.py",
        "narrow": False,
    }
    (folder / "drawn.svg").write_text("<svg/>")
    monkeypatch.setattr(paths, "FIGURES", folder)
    monkeypatch.setattr(paths, "DOCS", tmp_path)
    sidecar = folder / "drawn.json"
    sidecar.write_text(json.dumps(meta))
    return sidecar


def test_a_figure_is_its_svg_inline_with_a_link_to_it_at_full_size(one_figure):
    from html.parser import HTMLParser

    links = []

    class FullSizeLinks(HTMLParser):
        def handle_starttag(self, tag, attrs):
            links.append(dict(attrs)["href"]) if ("class", "posenc-figure__enlarge") in attrs else None

    svg = '<svg width="10" height="5" role="img" aria-label="A line &amp; more."><text>0.5</text></svg>'
    one_figure.with_suffix(".svg").write_text(svg + "\n")
    for src, url in (
        ("guide.md", "../figures/drawn.svg"),
        ("index.md", "figures/drawn.svg"),
        ("figures/drawn.md", "../drawn.svg"),
    ):
        links.clear()
        markdown = expand("{{ figure: drawn }}", src)
        FullSizeLinks().feed(markdown)
        assert links == [url], src
        # MkDocs turns the Markdown into HTML; then the placeholder becomes the SVG itself.
        page = markers_hook.on_page_content(markdown, fake_page(src), {}, None)
        assert '<svg data-search-exclude width="10" height="5" role="img" aria-label="A line &amp; more.">' in page
        assert "data-posenc-figure" not in page and page.count("<svg") == 1


def test_a_figure_with_a_narrow_layout_is_both_svgs_marked_for_the_stylesheet(one_figure):
    meta = json.loads(one_figure.read_text()) | {"narrow": True}
    one_figure.write_text(json.dumps(meta))
    one_figure.with_suffix(".svg").write_text('<svg width="10" height="5"><text>wide</text></svg>\n')
    narrow = one_figure.with_name("drawn.narrow.json")
    narrow.write_text(json.dumps(meta | {"width": 4, "height": 6}))
    with pytest.raises(PluginError, match="figure 'drawn' has a description but no drawn.narrow.svg"):
        markers_hook.on_page_content(expand("{{ figure: drawn }}"), fake_page("guide.md"), {}, None)
    narrow.with_suffix(".svg").write_text('<svg width="4" height="6"><text>narrow</text></svg>\n')
    page = markers_hook.on_page_content(expand("{{ figure: drawn }}"), fake_page("guide.md"), {}, None)
    wide_svg = '<svg data-search-exclude class="posenc-figure__wide" width="10" height="5"><text>wide</text></svg>'
    narrow_svg = '<svg data-search-exclude class="posenc-figure__narrow" width="4" height="6"><text>narrow</text></svg>'
    assert f"{wide_svg}\n{narrow_svg}" in page, "the wide layout first (print shows it), then the narrow one"
    narrow.unlink()
    with pytest.raises(PluginError, match="figure 'drawn' has a narrow layout but no drawn.narrow.json"):
        markers_hook.on_page_content(expand("{{ figure: drawn }}"), fake_page("guide.md"), {}, None)


def test_a_figure_sidecar_that_is_not_a_figure_meta_stops_the_build(one_figure):
    meta = json.loads(one_figure.read_text())
    one_figure.write_text(json.dumps(meta | {"width": "10"}))
    with pytest.raises(ValueError, match="wrong type: width"):
        expand("{{ figure: drawn }}")
    del meta["alt"]
    one_figure.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="exactly the fields"):
        expand("{{ figure: drawn }}")


def test_a_figure_without_its_svg_stops_the_build(one_figure):
    one_figure.with_suffix(".svg").unlink()
    with pytest.raises(PluginError, match="figure 'drawn' has a description but no drawn.svg"):
        expand("{{ figure: drawn }}")


def test_hook_names_do_not_shadow_each_other():
    """No module-level name of a hook or of site_build is bound twice (as ``derivations`` once was,
    import and function)."""
    import ast

    for path in sorted(HOOKS.rglob("*.py")):
        bound: dict[str, int] = {}
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [(alias.asname or alias.name).split(".")[0] for alias in node.names]
            elif isinstance(node, ast.Assign):
                names = [target.id for target in node.targets if isinstance(target, ast.Name)]
            else:
                continue
            for name in names:
                bound[name] = bound.get(name, 0) + 1
        # `import posenc` and `import posenc.site.derivations` bind one module, the package.
        twice = sorted(name for name, count in bound.items() if count > 1 and name != "posenc")
        assert not twice, f"{path.name} binds {twice} more than once"


def test_the_hooks_are_thin_entry_points_over_site_build():
    """A hook holds only the ``on_*`` functions MkDocs calls, each a few lines, and imports only from
    site_build: the work and its public names are there, so no hook or test reaches into a hook."""
    for path in yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["hooks"]:
        for node in ast.parse((ROOT / path).read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # the docstring
            if isinstance(node, ast.ImportFrom):
                assert node.module == "__future__" or node.module.split(".")[0] == "site_build", (
                    f"{path} imports {node.module}"
                )
                continue
            assert isinstance(node, ast.FunctionDef) and node.name.startswith("on_"), (
                f"{path}: {ast.unparse(node).splitlines()[0]}"
            )
            # Statements, not lines: how the formatter breaks a call does not change what a hook does.
            statements = sum(isinstance(inner, ast.stmt) for inner in ast.walk(node)) - 1
            assert statements <= 3, f"{path}: {node.name} is more than an entry point"


def test_figure_pages_describe_themselves_in_words_from_the_alt_text():
    """A figure page's meta description never carries the caption's TeX."""
    for sidecar in sorted((ROOT / FIGURE_DIR).glob("*.json")):
        page = figures.figure_page(sidecar.stem)
        description = json.loads(page.split("description: ", 1)[1].split("\n", 1)[0])
        assert "$" not in description and "\\" not in description, (sidecar.stem, description)
        assert description.rstrip(".") in json.loads(sidecar.read_text())["alt"]


# --- the list of peer tests ({{ peers }}, read from tests/peers) -----------------------------

PEERS = ROOT / "tests" / "peers"


def _peer_test_docstrings() -> dict[str, dict[str, str | None]]:
    """{file: {test: docstring}} for every test function in tests/peers, found without the hook."""
    found = {}
    for path in sorted(PEERS.glob("test_*.py")):
        source = path.read_text(encoding="utf-8")
        functions = {node.name: node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef)}
        # The names come from the text, so a test the hook's walk of the tree missed is still here.
        names = re.findall(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(test\w*)[ \t]*\(", source, re.M)
        found[path.name] = {name: ast.get_docstring(functions[name]) for name in names}
    return found


def test_every_peer_test_has_a_docstring_and_the_conventions_list_names_it():
    tests = _peer_test_docstrings()
    assert sum(map(len, tests.values())) >= 30, "tests/peers should hold the peer tests"
    missing = [f"{file}::{name}" for file, named in tests.items() for name, doc in named.items() if not doc]
    assert not missing, "peer tests without a docstring (its first line goes on the Conventions page): " + ", ".join(
        missing
    )
    listed = expand("{{ peers }}", "conventions.md")
    items = re.findall(r"^    - (.*)$", listed, re.M)
    assert len(items) == sum(map(len, tests.values()))
    for file, named in tests.items():
        assert f"- `tests/peers/{file}`: " in listed, file
        for name, doc in named.items():
            summary = " ".join(doc.split("\n\n")[0].split()).replace("``", "`")
            assert sum(item.startswith(summary) for item in items) == 1, f"{file}::{name} is not listed once"


def test_the_conventions_page_generates_its_peer_list():
    section = (ROOT / "docs" / "conventions.md").read_text(encoding="utf-8").split("{ #peer-tests }", 1)[1]
    section = section.split("\n## ", 1)[0]
    assert "\n{{ peers }}\n" in section
    assert not re.search(r"^- ", section, re.M), "a typed list beside the generated one"


def test_the_peer_list_shows_parametrisations_and_refuses_a_test_without_docstring(tmp_path, monkeypatch):
    (tmp_path / "test_one.py").write_text(
        textwrap.dedent('''\
        """Things against other things.

        More about them.
        """
        import pytest

        CASES = [(1, "a"), (2, "b")]
        LONG = [{"key": "x" * 40}, {"key": "y" * 40}, {"key": "z" * 40}]


        @pytest.mark.parametrize("width", [4, 8])
        @pytest.mark.parametrize(("n", "s"), CASES)
        def test_small(width, n, s):
            """``posenc.kernel`` against
            its ``twin``.

            Not shown.
            """


        @pytest.mark.parametrize("config", LONG)
        @pytest.mark.parametrize(argvalues=[pytest.param(1), 2], argnames="size")
        def test_big(config, size):
            """Big ones."""


        class TestGroup:
            def test_method(self):
                """A method."""
        ''')
    )
    monkeypatch.setattr(paths, "PEER_TESTS", tmp_path)
    monkeypatch.setattr(paths, "ROOT", tmp_path.parent)
    assert peer_tests.peer_test_list() == (
        f"- `{tmp_path.name}/test_one.py`: Things against other things.\n"
        "    - `posenc.kernel` against its `twin`. Parametrised over `width` in `[4, 8]` × "
        "`(n, s)` in `[(1, 'a'), (2, 'b')]`.\n"
        "    - Big ones. Parametrised over 3 values of `config` × 2 values of `size`.\n"
        "    - A method.\n"
    )
    (tmp_path / "test_two.py").write_text('"""More."""\n\n\ndef test_bare():\n    pass\n')
    with pytest.raises(PluginError, match="test_two.py: test_bare has no docstring"):
        expand("{{ peers }}", "conventions.md")


# --- what the first paint waits for (hooks/site_build/first_paint.py) -----------------------


def _article(children: str) -> str:
    return f"<body><nav><p>menu</p></nav>{first_paint.ARTICLE_OPENING}{children}</article><footer></footer></body>"


def test_the_first_paint_marker_follows_the_articles_first_blocks():
    marker = first_paint.FIRST_SCREEN_MARKER
    children = (
        '<h1 id="t">T</h1>\n<p>a <b>b</b></p><hr>\n<div><div>nested</div></div><svg><path d="M0"/></svg>'
        '<img alt="x > y"><style>p::before { content: "</p>"; }</style><br/>'
        "<p>ninth</p>\n<p>tenth</p>"
    )
    marked = first_paint.mark_first_screen(_article(children), blocks=8)
    # Void, self-closed and style elements count as children, as they do for :nth-child.
    assert marked == _article(children.replace("<br/>", "<br/>" + marker))
    assert first_paint.mark_first_screen(_article(children), blocks=3) == _article(
        children.replace("<hr>", "<hr>" + marker)
    )


def test_the_first_paint_marker_closes_a_short_article_and_leaves_other_pages_alone():
    marker = first_paint.FIRST_SCREEN_MARKER
    short = "<h1>T</h1>\n<p>a</p>\n"
    assert first_paint.mark_first_screen(_article(short)) == _article(short + marker)
    assert first_paint.mark_first_screen(_article("")) == _article(marker)
    sitemap = '<?xml version="1.0"?><urlset><url><loc>/</loc></url></urlset>'
    assert first_paint.mark_first_screen(sitemap) == sitemap
    with pytest.raises(PluginError, match="404.html: the page's article is never closed"):
        first_paint_hook.on_post_template(f"{first_paint.ARTICLE_OPENING}<p>a</p>", "404.html", None)


def test_a_panel_marker_writes_its_template_with_the_starting_numbers_computed():
    html = expand("Before.\n\n{{ panel: long-context }}\n\nAfter.\n", "long-context.md")
    assert html.startswith(
        'Before.\n\n<div class="posenc-widget posenc-widget--scripted posenc-widget--beside" id="panel"'
        ' data-panel="long-context"'
    ) and html.endswith("</div>\n\nAfter.\n")
    assert "{{" not in html
    critical = format(posenc.critical_dimension(128, 4096), ".2f")
    assert f'<dd data-readout="critical">{critical}</dd>' in html


def test_an_unknown_panel_stops_the_build_naming_the_page_and_the_panel():
    with pytest.raises(PluginError, match=r"^explainer\.md: unknown panel 'no-such-panel' \(panels: bands, "):
        expand("{{ panel: no-such-panel }}", "explainer.md")
    with pytest.raises(PluginError, match=r"^explainer\.md: unknown panel '\.\./index'"):
        expand("{{ panel: ../index }}", "explainer.md")


def test_a_page_with_panels_names_their_templates_among_its_sources():
    assert last_change.page_sources(fake_page("long-context.md")) == (
        "docs/long-context.md",
        "docs/panels/long-context.yml",
    )
    sources = last_change.page_sources(fake_page("explainer.md"))
    assert sources[0] == "docs/explainer.md" and sources[1:] == tuple(
        f"docs/panels/{name}.yml" for name in ("order", "heatmap", "bands", "distance", "rope", "compare")
    )


def test_the_always_drawn_count_is_read_from_the_stylesheet():
    rule = ".md-content__inner:not(:has(> .x)) > :nth-child(n+{k}):not(h1) {{ content-visibility: auto }}"
    assert first_paint.always_drawn_blocks(rule.format(k=9) + rule.format(k=9)) == 8
    assert first_paint.always_drawn_blocks(".md-content__inner > :nth-child(n + 4) {}") == 3
    with pytest.raises(PluginError, match="one :nth-child"):
        first_paint.always_drawn_blocks(rule.format(k=9) + rule.format(k=7))
    with pytest.raises(PluginError, match="none"):
        first_paint.always_drawn_blocks("p { color: red }")


def test_the_build_and_the_pdf_script_import_neither_sympy_nor_matplotlib():
    """The hooks read the derivations from the report and the panels' colours from their store, so
    loading them (as mkdocs does, and the PDF script) takes none of the second each import costs."""
    hooks = sorted(path.stem for path in HOOKS.glob("*.py"))
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import importlib, sys; sys.path.insert(0, sys.argv[1]); "
            "[importlib.import_module(name) for name in sys.argv[2:]]; "
            "print(' '.join(sorted(n for n in ('sympy', 'matplotlib', 'fontTools.subset') if n in sys.modules)))",
            str(HOOKS),
            *hooks,
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert "site_pdf" in hooks and "kept_results" in hooks
    assert loaded.stdout.strip() == ""
