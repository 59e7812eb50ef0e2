"""The MkDocs hooks: page markers, build-time KaTeX, and notebook stylesheet slimming."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import re
import types

import pytest
from mkdocs.exceptions import PluginError

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_hook(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


site_hook = load_hook("posenc_site")
notebook_hook = load_hook("notebook_pages")


def fake_page(src: str, description: str | None = "A page.") -> types.SimpleNamespace:
    file = types.SimpleNamespace(src_uri=src, abs_src_path=str(ROOT / "docs" / src))
    return types.SimpleNamespace(file=file, meta={"description": description} if description else {})


def expand(markdown: str, src: str = "guide.md") -> str:
    return site_hook.on_page_markdown(markdown, fake_page(src), {"site_url": "https://example.org/"}, None)


def test_ref_links_the_derivation_anchor_relative_to_the_page():
    assert expand("see {{ ref: kernel }}", "deep/page.md") == (
        'see [`kernel`](../derivations/index.md#kernel "The dot product of two position vectors depends only on their offset")'
    )


def test_eq_shows_the_registry_statement():
    from posenc.registry import REGISTRY

    out = expand("{{ eq: distance }}")
    assert REGISTRY["distance"].statement in out
    assert "derivations/index.md#distance" in out


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
    site_hook.on_page_markdown("text", fake_page("guide.md", description=None), {"site_url": "/"}, None)
    assert "has no description" in caplog.text


def test_katex_renders_arithmatex_output_and_rejects_bad_tex():
    page = fake_page("guide.md")
    html = '<p><span class="arithmatex">\\(x^2 &lt; 1\\)</span></p><div class="arithmatex">\\[\\frac{a}{b}\\]</div>'
    out = site_hook.on_post_page(html, page, {})
    assert out.count('class="katex"') == 2 and "katex-display" in out and "arithmatex" not in out
    with pytest.raises(PluginError, match="guide.md: math does not render"):
        site_hook.on_post_page('<span class="arithmatex">\\(\\frac{1}{\\)</span>', page, {})
    site_hook.KATEX.close()


def test_notebook_math_is_rendered_outside_code_only():
    page = fake_page("notebooks/n.ipynb")
    html = '<div class="jp-RenderedMarkdown x">width $d = 8$ and <code>$HOME</code></div>'
    out = site_hook.on_post_page(html, page, {})
    assert 'class="katex"' in out and "<code>$HOME</code>" in out
    site_hook.KATEX.close()


def test_slim_stylesheet_keeps_rules_for_present_classes_and_their_variables():
    css = (
        ":root{--used:1px;--chain:var(--used);--unused:2px}"
        ".a{margin:var(--chain)}.b{color:red}.a .c{padding:0}"
        ".x :is(.a,.b){display:none}.a,.b{top:0}"
        "@media (max-width:10px){.a{left:0}.b{left:1px}}"
    )
    out = notebook_hook.slim_stylesheet(css, '<div class="a"><i class="x"></i></div>')
    assert ".a{margin:var(--chain)}" in out
    assert "--used:1px" in out and "--chain:var(--used)" in out and "--unused" not in out
    assert ".b{" not in out and ".a .c" not in out
    assert ".x :is(.a,.b){display:none}" in out, "commas inside :is() do not split selectors"
    assert ".a{top:0}" in out
    assert "@media (max-width:10px){.a{left:0}}" in out


def test_notebook_pages_drop_cdn_loaders_and_mathjax_config():
    page = fake_page("notebooks/n.ipynb")
    html = (
        '<script type="text/x-mathjax-config">MathJax.Hub.Config({})</script>'
        '<script type="module">import("https://cdn.example/mermaid.esm.min.mjs")</script>'
        '<script src=""> </script><p>kept</p>'
    )
    assert notebook_hook.on_post_page(html, page, {}) == "<p>kept</p>"


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


def test_the_derivations_page_holds_nothing_measured_at_build_time(tmp_path, monkeypatch):
    from posenc.registry import REGISTRY

    pages = []
    for seconds in (0.12, 3.45):
        report = tmp_path / f"verify-{seconds}.json"
        report.write_text(json.dumps({i: {"status": "proved", "seconds": seconds} for i in REGISTRY}))
        monkeypatch.setattr(site_hook, "VERIFY_REPORT", report)
        pages.append(site_hook._derivations("derivations/index.md", "https://example.org/"))
    assert pages[0] == pages[1]
    assert "0.12" not in pages[0]


def test_a_missing_node_is_named_with_how_to_install_it_before_building(monkeypatch):
    monkeypatch.setattr(site_hook.shutil, "which", lambda name: None)
    with pytest.raises(PluginError, match="node is not installed or not on PATH: install Node.js"):
        site_hook.on_config({})


def test_the_preview_keeps_a_failed_figure_and_names_its_error(tmp_path, monkeypatch):
    meta = {"alt": "A line.", "caption": "Caption.", "title": "Title.", "width": 10, "height": 5,
            "script": "figures_src/drawn.py"}
    (tmp_path / "drawn.json").write_text(json.dumps(meta))
    monkeypatch.setattr(site_hook, "FIGURES", tmp_path)
    failures = {name: "Traceback (most recent call last):\n  ...\nValueError: the data file is corrupt\n"
                for name in ("drawn", "new")}
    monkeypatch.setattr(site_hook, "_failed_figures", failures)
    monkeypatch.setattr(site_hook, "_serving", True)
    page = expand("{{ figure: drawn }}")
    assert "![A line.](figures/drawn.svg)" in page, "the last good figure stays on the page"
    assert '!!! failure "figures_src/drawn.py failed"' in page and "ValueError: the data file is corrupt" in page
    new = expand("{{ figure: new }}")
    assert "figures_src/new.py failed" in new and "<figure" not in new, "a new figure that never rendered"
    monkeypatch.setattr(site_hook, "_serving", False)
    with pytest.raises(PluginError, match="figure 'drawn' is stale: figures_src/drawn.py failed"):
        expand("{{ figure: drawn }}")
