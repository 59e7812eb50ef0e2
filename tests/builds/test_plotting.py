"""The figure helper (posenc.site.plotting) and the one-process renderer (posenc.site.render)."""

import json
import pathlib
import re
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ElementTree

import pytest

from posenc.site import plotting, render, svg_rewrite
from posenc.site.figure_files import FigureMeta, figure_files

GOOD_SCRIPT = '''
"""A test figure of one line.

The caption says what to read in it.
"""
from posenc.site import plotting

ALT = "One straight line rising from zero to one."


def main():
    fig, ax = plotting.new_figure(width=plotting.HALF_WIDTH, aspect=0.5)
    ax.plot([0, 1], [0, 1])
    plotting.save(fig)


if __name__ == "__main__":
    main()
'''


def write_script(directory: pathlib.Path, name: str, body: str) -> pathlib.Path:
    path = directory / "figures_src" / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body))
    return path


def test_save_names_the_figure_after_its_script_and_records_its_description(tmp_path):
    script = write_script(tmp_path, "rising-line", GOOD_SCRIPT)
    assert render.render([script], tmp_path / "out") == []
    svg = tmp_path / "out" / "rising-line.svg"
    assert svg.read_bytes().startswith(b"<svg "), "ready to sit inside a page: no XML declaration"
    meta = json.loads((tmp_path / "out" / "rising-line.json").read_text())
    assert meta == {
        "alt": "One straight line rising from zero to one.",
        "caption": "The caption says what to read in it.",
        "height": round(plotting.HALF_WIDTH * 0.5 * 96),
        "script": "figures_src/rising-line.py",
        "title": "A test figure of one line.",
        "width": round(plotting.HALF_WIDTH * 96),
        "narrow": False,  # narrower than a phone's column, so the one layout serves both
    }


def test_the_figure_is_named_after_the_script_the_renderer_runs(tmp_path):
    """Even when save() is called from a module of the script's own, not from the script itself."""
    (tmp_path / "drawing_aid.py").write_text(
        textwrap.dedent("""
        from posenc.site import plotting


        def draw_and_save():
            fig, ax = plotting.new_figure(width=plotting.HALF_WIDTH, aspect=0.5)
            ax.plot([0, 1], [0, 1])
            plotting.save(fig)
    """)
    )
    script = write_script(
        tmp_path,
        "aided",
        GOOD_SCRIPT.replace(
            "from posenc.site import plotting\n",
            f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
            "import drawing_aid\nfrom posenc.site import plotting\n",
        ).replace("def main():\n", "def main():\n    return drawing_aid.draw_and_save()\n"),
    )
    assert render.render([script], tmp_path / "out") == []
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["aided.json", "aided.svg"]
    meta = FigureMeta.read(tmp_path / "out" / "aided.json")
    assert meta.script == "figures_src/aided.py" and meta.alt == "One straight line rising from zero to one."


def test_save_outside_the_renderer_refuses_and_names_the_command():
    fig, ax = plotting.new_figure()
    with pytest.raises(RuntimeError, match="python -m posenc.site.render figures_src/<name>.py"):
        plotting.save(fig)
    plotting.plt.close(fig)


def test_svg_is_byte_identical_across_runs(tmp_path):
    script = write_script(tmp_path, "rising-line", GOOD_SCRIPT)
    render.render([script], tmp_path / "a")
    render.render([script], tmp_path / "b")
    first = (tmp_path / "a" / "rising-line.svg").read_bytes()
    assert first == (tmp_path / "b" / "rising-line.svg").read_bytes()
    assert b"<dc:date>" not in first


def test_svg_size_attributes_match_the_recorded_pixels(tmp_path):
    script = write_script(tmp_path, "rising-line", GOOD_SCRIPT)
    render.render([script], tmp_path / "out")
    root = ElementTree.parse(tmp_path / "out" / "rising-line.svg").getroot()
    meta = json.loads((tmp_path / "out" / "rising-line.json").read_text())
    assert (root.get("width"), root.get("height")) == (str(meta["width"]), str(meta["height"]))
    # Matplotlib draws in points (72 per inch); the page's size is CSS pixels (96 per inch).
    _, _, width, height = (float(v) for v in root.get("viewBox").split())
    assert (meta["width"], meta["height"]) == (round(width * 96 / 72), round(height * 96 / 72))


def test_positions_are_written_to_hundredths(tmp_path):
    """Coordinates lose Matplotlib's six decimals (a sixth of a figure's compressed bytes)."""
    script = write_script(
        tmp_path,
        "line-and-image",
        GOOD_SCRIPT.replace(
            "    ax.plot([0, 1], [0, 1])\n",
            "    ax.plot([0, 0.3333333, 1], [0, 0.7777777, 1])\n"
            "    ax.imshow([[0, 1], [1, 0]], extent=(0, 0.3, 0, 0.3))\n",
        ),
    )
    render.render([script], tmp_path / "out")
    root = ElementTree.parse(tmp_path / "out" / "line-and-image.svg").getroot()
    geometry = [
        value
        for element in root.iter()
        for key, value in element.attrib.items()
        if key in {"d", "x", "y", "width", "height", "points"}
    ]
    assert any(re.search(r"\d\.\d", value) for value in geometry)
    assert not [value for value in geometry if re.search(r"\d\.\d{3}", value)]


def test_a_failing_script_is_named_and_leaves_no_output(tmp_path, capsys):
    failing = write_script(
        tmp_path,
        "half-drawn",
        GOOD_SCRIPT.replace("plotting.save(fig)", "plotting.save(fig)\n    raise RuntimeError('late failure')"),
    )
    good = write_script(tmp_path, "rising-line", GOOD_SCRIPT)
    out = tmp_path / "out"
    assert render.render([failing, good], out) == [failing]
    assert "FAILED" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["rising-line.json", "rising-line.svg"]


def test_main_exits_1_naming_the_failed_script(tmp_path, capsys):
    failing = write_script(tmp_path, "broken", "raise ValueError('bad data')\n")
    assert render.main([str(failing), "--out", str(tmp_path / "out")]) == 1
    errors = capsys.readouterr().err
    assert "FAILED" in errors and "bad data" in errors
    assert errors.strip().splitlines()[-1] == f"figure scripts failed: {failing}"


def test_a_failing_script_keeps_the_last_good_figure_older_than_itself(tmp_path):
    script = write_script(tmp_path, "rising-line", GOOD_SCRIPT)
    out = tmp_path / "out"
    assert render.render([script], out) == []
    good = {path.name: path.read_bytes() for path in out.iterdir()}
    script.write_text(GOOD_SCRIPT.replace("plotting.save(fig)", "plotting.save(fig)\n    raise RuntimeError('late')"))
    assert render.render([script], out) == [script]
    assert {path.name: path.read_bytes() for path in out.iterdir()} == good, "the last good figure is kept"
    assert render.stale([script], out, []) == [script], "and it stays stale, so make tries again"


def test_a_script_setting_rcparams_does_not_change_the_next_figure(tmp_path):
    meddler = write_script(
        tmp_path,
        "meddler",
        GOOD_SCRIPT.replace(
            "from posenc.site import plotting",
            "from posenc.site import plotting\nimport matplotlib\nmatplotlib.rcParams['axes.xmargin'] = 0.4",
        ),
    )
    script = write_script(tmp_path, "rising-line", GOOD_SCRIPT)
    assert render.render([script], tmp_path / "alone") == []
    assert render.render([meddler, script], tmp_path / "batch") == []
    alone = (tmp_path / "alone" / "rising-line.svg").read_bytes()
    assert (tmp_path / "batch" / "rising-line.svg").read_bytes() == alone
    assert (tmp_path / "batch" / "meddler.svg").read_bytes() != alone, "the setting did change its own figure"


def test_a_script_past_the_time_limit_is_stopped_and_named(tmp_path, capsys):
    hanging = write_script(tmp_path, "hanging", "import time\nwhile True:\n    time.sleep(1)\n")
    good = write_script(tmp_path, "rising-line", GOOD_SCRIPT)
    start = time.monotonic()
    assert render.render([hanging, good], tmp_path / "out", timeout=5) == [hanging]
    assert time.monotonic() - start < 30
    assert f"{hanging} did not finish within 5 s" in capsys.readouterr().err
    assert (tmp_path / "out" / "rising-line.svg").exists()


def test_sigterm_during_a_render_leaves_no_partial_files(tmp_path):
    # The figure's only artist takes a minute to draw, so the SVG is half-written when the signal comes.
    slow = write_script(
        tmp_path,
        "slow",
        GOOD_SCRIPT.replace(
            "    ax.plot([0, 1], [0, 1])\n",
            (
                "    import time\n    from matplotlib.artist import Artist\n"
                "    class Slow(Artist):\n        def draw(self, renderer):\n"
                # Only when drawn into the SVG: save() lays the figure out before that, with drawing
                # disabled (Matplotlib's no-op draw methods wrap the real ones).
                "            if not hasattr(renderer.draw_path, '__wrapped__'):\n                time.sleep(60)\n"
                "    fig.add_artist(Slow())\n"
            ),
        ),
    )
    out = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "posenc.site.render", "--out", str(out), str(slow)])
    deadline = time.monotonic() + 60
    while not list(out.rglob("*.part")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(out.rglob("*.part")), "the render never started writing the SVG"
    process.terminate()
    assert process.wait(timeout=30) != 0
    assert list(out.rglob("*")) == [], "no partial file or scratch folder is left"


def test_a_figure_name_must_be_letters_digits_dashes_underscores(tmp_path, capsys):
    spaced = write_script(tmp_path, "with space", GOOD_SCRIPT)
    with pytest.raises(SystemExit):
        render.main([str(spaced), "--out", str(tmp_path / "out")])
    assert "only letters, digits, '-' and '_'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_script_that_saves_nothing_fails(tmp_path):
    silent = write_script(tmp_path, "silent", '"""T.\n\nC.\n"""\nALT = "nothing at all is drawn here"\n')
    assert render.render([silent], tmp_path / "out") == [silent]


@pytest.mark.parametrize(
    ("doc", "alt", "words"),
    [
        ("", "Five words of alt text here.", "needs a docstring"),
        ("Title only.", "Five words of alt text here.", "needs a docstring"),
        ("Title.\n\nCaption.", "", "needs ALT"),
        ("Title.\n\nCaption.", "Too short", "needs ALT"),
    ],
)
def test_describe_requires_title_caption_and_alt(doc, alt, words):
    with pytest.raises(ValueError, match=words):
        plotting.describe({"__doc__": doc, "ALT": alt})


def test_interrupted_write_leaves_no_partial_file(tmp_path):
    target = tmp_path / "figure.svg"

    def explode(file):
        file.write(b"<svg partial")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        plotting._atomic_write(target, explode)
    assert list(tmp_path.iterdir()) == []


def test_new_figure_checks_its_size_arguments():
    with pytest.raises(ValueError, match="width must be in"):
        plotting.new_figure(width=0)
    with pytest.raises(ValueError, match="aspect must be in"):
        plotting.new_figure(aspect=10)


def test_heatmap_centres_signed_data_at_zero():
    import numpy as np

    fig, ax = plotting.new_figure()
    image = plotting.heatmap(ax, np.array([[-1.0, 3.0]]))
    assert image.get_clim() == (-3.0, 3.0)
    with pytest.raises(ValueError, match="values must be a 2-D array"):
        plotting.heatmap(ax, np.ones(3))
    plotting.plt.close(fig)


def test_annotate_cells_writes_each_unmasked_value_at_its_cell_centre():
    import numpy as np

    fig, ax = plotting.new_figure()
    values = np.array([[0.0, 0.25, 0.5], [0.75, 1.0, -0.001]])
    image = plotting.heatmap(ax, values, signed=False, extent=(-0.5, 2.5, 1.5, -0.5))
    mask = np.array([[True, True, False], [True, True, True]])
    texts = plotting.annotate_cells(ax, image, values, mask=mask)
    assert len(texts) == mask.sum() == len(ax.texts)
    written = {text.get_position(): text.get_text() for text in texts}
    assert written == {(0, 0): "0.00", (1, 0): "0.25", (0, 1): "0.75", (1, 1): "1.00", (2, 1): "0.00"}
    assert all(text.get_fontsize() == plotting.MIN_FONT_SIZE for text in texts)
    plotting.plt.close(fig)


def test_annotate_cells_picks_white_on_dark_cells_black_on_light_and_the_schemes_ink_on_clear_ones():
    import numpy as np

    fig, (sequential, diverging) = plotting.new_figure(ncols=2)
    ramp = np.array([[0.0, 1.0]])  # viridis: dark purple, then light yellow
    texts = plotting.annotate_cells(sequential, plotting.heatmap(sequential, ramp, signed=False), ramp)
    assert [text.get_color() for text in texts] == ["white", "black"]
    assert {text.get_gid() for text in texts} == {plotting.LITERAL}, "read against the cell in both schemes"
    signed = np.array([[-1.0, 0.0, 1.0]])  # dark blue, transparent, dark red
    texts = plotting.annotate_cells(diverging, plotting.heatmap(diverging, signed), signed, fmt="{:+.1f}")
    assert [text.get_color() for text in texts] == ["white", plotting.INK, "white"]
    assert [text.get_gid() for text in texts] == [plotting.LITERAL, None, plotting.LITERAL], "the ink is the page's"
    assert [text.get_text() for text in texts] == ["-1.0", "+0.0", "+1.0"]
    plotting.plt.close(fig)


def _over(rgba, background: str):
    """An RGBA colour laid over an opaque background, as RGB."""
    import numpy as np
    from matplotlib.colors import to_rgb

    return (1 - rgba[3]) * np.array(to_rgb(background)) + rgba[3] * np.array(rgba[:3])


def _relative_luminance(rgb) -> float:
    import numpy as np

    linear = np.where(np.asarray(rgb) <= 0.04045, np.asarray(rgb) / 12.92, ((np.asarray(rgb) + 0.055) / 1.055) ** 2.4)
    return float(linear @ [0.2126, 0.7152, 0.0722])


def _contrast(first, second) -> float:
    light, dark = sorted((_relative_luminance(first), _relative_luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_the_diverging_map_looks_like_rdbu_over_white_and_is_clear_at_zero():
    import matplotlib
    import numpy as np

    diverging = plotting.diverging_colormap()
    values = np.linspace(0.0, 1.0, diverging.N)
    colours = diverging(values)
    reference = matplotlib.colormaps[plotting.DIVERGING_BASE](values)
    over_white = np.array([_over(colour, "#ffffff") for colour in colours])
    # Away from the middle (whose light grey became white) it is RdBu_r over the light page, to
    # the step of RdBu_r's own table of 256 colours.
    away = np.abs(values - 0.5) >= 0.1
    assert np.abs(over_white[away] - reference[away, :3]).max() < 3 / 255
    assert np.abs(over_white - reference[:, :3]).max() < 10 / 255  # white where RdBu_r has #f7f7f7
    alpha = colours[:, 3]
    middle = diverging.N // 2
    assert values[middle] == 0.5 and alpha[middle] == 0.0, "zero shows the page"
    assert alpha[0] > 0.97 and alpha[-1] == 1.0, "the ends are (nearly) opaque"
    assert np.all(np.diff(alpha[middle:]) >= -1e-9) and np.all(np.diff(alpha[: middle + 1]) <= 1e-9)
    fig, ax = plotting.new_figure()
    image = plotting.heatmap(ax, np.array([[-2.0, 0.0, 2.0]]), colorbar_label="value")
    assert image.cmap is diverging and image.cmap(image.norm(0.0))[3] == 0.0
    assert fig.axes[-1].collections[-1].cmap is diverging, "the colour bar shows the same map"
    plotting.plt.close(fig)


@pytest.mark.parametrize("signed", [True, False], ids=["diverging", "sequential"])
def test_cell_labels_contrast_4_5_to_1_with_their_cell_in_both_schemes(signed):
    """Every label on every colour of the map, as each scheme shows cell and label."""
    import numpy as np

    fig, ax = plotting.new_figure()
    values = np.linspace(-1.0 if signed else 0.0, 1.0, 801)[None, :]
    image = plotting.heatmap(ax, values, signed=signed)
    texts = plotting.annotate_cells(ax, image, values)
    inks = {"black": ("#000000", "#000000"), "white": ("#ffffff", "#ffffff"), plotting.INK: ("#000000", "#ffffff")}
    worst = []
    for value, text in zip(values[0], texts):
        cell = image.cmap(image.norm(value))
        for scheme, ink in zip(("default", "slate"), inks[text.get_color()]):
            shown = _over(cell, plotting.PAGE_BACKGROUNDS[scheme])
            worst.append((_contrast(shown, _over((*matplotlib_rgb(ink), 1.0), "#ffffff")), value, scheme))
    assert min(worst)[0] >= 4.5, min(worst)
    plotting.plt.close(fig)


def matplotlib_rgb(colour: str):
    from matplotlib.colors import to_rgb

    return to_rgb(colour)


def test_the_scheme_ink_is_black_on_the_light_page_and_white_on_the_dark_one():
    css = (pathlib.Path(__file__).parents[2] / "docs" / "stylesheets" / "posenc.css").read_text()
    assert plotting.PAGE_COLOURS[plotting.INK] == "var(--posenc-ink, #000000)"
    assert re.search(r":root \{\s*--posenc-ink: #000000;\s*\}", css)
    assert re.search(r'\[data-md-color-scheme="slate"\] \{\s*--posenc-ink: #ffffff;\s*\}', css)


def test_annotate_cells_rejects_values_or_mask_of_the_wrong_shape():
    import numpy as np

    fig, ax = plotting.new_figure()
    image = plotting.heatmap(ax, np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"values must have the image's shape \(2, 3\)"):
        plotting.annotate_cells(ax, image, np.ones((3, 2)))
    with pytest.raises(ValueError, match="mask must have the image's shape"):
        plotting.annotate_cells(ax, image, np.ones((2, 3)), mask=np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="mask must be an array of booleans"):
        plotting.annotate_cells(ax, image, np.ones((2, 3)), mask=np.ones((2, 3)))
    assert len(ax.texts) == 0
    plotting.plt.close(fig)


def test_span_axes_replaces_a_row_or_column_with_one_axes_over_the_same_area():
    import numpy as np

    fig, axes = plotting.new_figure(nrows=3, ncols=2)
    fig.set_layout_engine("none")  # positions straight from the grid, so areas compare exactly

    def area(panels):
        boxes = np.array([panel.get_position().extents for panel in panels])  # x0, y0, x1, y1
        return [*boxes[:, :2].min(axis=0), *boxes[:, 2:].max(axis=0)]

    for removed in (axes[:, 1], axes[1, :1]):  # a column, then what is left of a row
        expected = area(removed)
        spanning = plotting.span_axes(removed)
        assert all(panel not in fig.axes for panel in removed) and spanning in fig.axes
        assert area([spanning]) == pytest.approx(expected)
    assert len(fig.axes) == 4  # axes[0, 0], axes[2, 0] and the two spanning axes
    with pytest.raises(ValueError, match="filled rectangle"):
        plotting.span_axes([axes[0, 0], axes[2, 0]])
    with pytest.raises(ValueError, match="at least one axes"):
        plotting.span_axes([])
    plotting.plt.close(fig)


def test_place_legend_puts_it_in_the_axes_wide_and_below_the_plot_narrow(tmp_path):
    def draw(layout: str):
        with plotting.rendering(tmp_path / "x.py", {}, tmp_path, layout):
            fig, (left, right) = plotting.new_figure(ncols=2, narrow={"nrows": 1, "ncols": 2, "aspect": 1.0})
            left.plot([0, 1], [0, 1], label="rising")
            right.plot([0, 1], [1, 0], label="falling")
            legend = plotting.place_legend(left, "upper left")
            fig.draw_without_rendering()
        return fig, left, legend

    fig, left, legend = draw("wide")
    assert left.get_legend() is legend and fig.legends == []
    assert [text.get_text() for text in legend.get_texts()] == ["rising"], "the axes' own entries"
    box, plot = legend.get_window_extent(), left.get_window_extent()
    assert plot.x0 <= box.x0 and box.x1 < (plot.x0 + plot.x1) / 2, "in the left half of the axes"
    assert (plot.y0 + plot.y1) / 2 < box.y0 and box.y1 <= plot.y1, "in its upper half"
    plotting.plt.close(fig)

    fig, left, legend = draw("narrow")
    assert left.get_legend() is None and fig.legends == [legend]
    assert [text.get_text() for text in legend.get_texts()] == ["rising", "falling"], "every axes' entries"
    box = legend.get_window_extent()
    below = min(ax.get_tightbbox().y0 for ax in fig.axes)  # the plots with their tick labels
    assert box.y1 <= below, "below the plots"
    assert box.x0 + box.x1 == pytest.approx(fig.bbox.width, abs=1), "centred across the figure"
    plotting.plt.close(fig)

    for layout in ("wide", "narrow"):  # a misspelt location fails in the narrow layout too
        with plotting.rendering(tmp_path / "x.py", {}, tmp_path, layout):
            fig, ax = plotting.new_figure()
            with pytest.raises(ValueError, match="loc must be one of best, upper right, .*, got 'top left'"):
                plotting.place_legend(ax, "top left")
            plotting.plt.close(fig)


# --- the SVG as the page shows it ---------------------------------------------------------

SVG = "{http://www.w3.org/2000/svg}"
# A figure with every kind of text and colour the page must adapt: title, labels with math,
# legend, tick labels, a black line, a white label box, GREY, tiny text and a cell label.
PAGE_SCRIPT = GOOD_SCRIPT.replace(
    """    ax.plot([0, 1], [0, 1])
""",
    """    import numpy as np

    ax.plot([0, 1], [0, 1], color="black", label="rising")
    ax.plot([0, 1], [1, 0], color=plotting.GREY, label="falling")
    ax.set_title("Two lines")
    ax.set_xlabel(r"frequency $\\omega_r$ per position")
    ax.text(0.5, 0.8, "boxed note", fontsize=6, bbox=dict(facecolor="white", edgecolor="none"))
    ax.legend()
    image = plotting.heatmap(ax.inset_axes([0.7, 0.1, 0.2, 0.2]), np.array([[0.0, 1.0]]), signed=False)
    plotting.annotate_cells(image.axes, image, np.array([[0.0, 1.0]]))
""",
)


@pytest.fixture(scope="module")
def page_figure(tmp_path_factory) -> ElementTree.Element:
    """The root of the SVG that PAGE_SCRIPT saves as figure ``two-lines``."""
    folder = tmp_path_factory.mktemp("page")
    script = write_script(folder, "two-lines", PAGE_SCRIPT)
    assert render.render([script], folder / "out") == []
    return ElementTree.parse(folder / "out" / "two-lines.svg").getroot()


def styles(element: ElementTree.Element) -> dict[str, str]:
    return svg_rewrite._parse_style(element.get("style", ""))


def test_figure_text_is_text_in_the_site_typeface(page_figure):
    texts = [" ".join("".join(text.itertext()).split()) for text in page_figure.iter(f"{SVG}text")]
    for words in ("Two lines", "rising", "falling", "boxed note", "0.0", "0.2"):
        assert words in texts, f"{words!r} is not the text of a <text> element: {texts}"
    # Math text arrives one glyph per <tspan>; it is joined into words in reading order.
    assert "frequency ωr per position" in texts
    assert page_figure.get("font-family") == plotting.SITE_FONT
    assert not [
        e for e in page_figure.iter() if "font-family" in styles(e) or e.get("font-family") and e is not page_figure
    ]
    assert not [e for e in page_figure.iter() if e.get("id", "").startswith("DejaVu")], "no glyphs drawn as paths"


def test_the_site_typeface_is_materials_system_font_stack():
    """mkdocs.yml has ``font: false``: Material's text font is the fallback of --md-text-font-family."""
    import material

    stylesheets = pathlib.Path(material.__file__).parent / "templates" / "assets" / "stylesheets"
    css = "".join(path.read_text() for path in stylesheets.glob("main.*.min.css"))
    declared = re.search(r"--md-text-font-family:var\(--md-text-font,_\),([^;}]+)", css)
    assert declared, "Material's stylesheet no longer declares --md-text-font-family as expected"
    assert declared[1] == plotting.SITE_FONT.replace(", ", ",")


def test_no_text_is_smaller_than_11_css_pixels_at_the_drawn_size(page_figure):
    sizes = [float(styles(e)["font-size"].removesuffix("px")) for e in page_figure.iter() if "font-size" in styles(e)]
    assert sizes and min(sizes) == pytest.approx(plotting.MIN_FONT_SIZE), "the 6 pt note and the subscript are raised"
    _, _, width, _ = (float(v) for v in page_figure.get("viewBox").split())
    assert min(sizes) * int(page_figure.get("width")) / width == pytest.approx(11)


def test_black_white_and_grey_become_the_page_colours(page_figure):
    """Outside literal artists no black, white or grey is left: the figure follows the page's scheme."""
    assert page_figure.get("fill") == "currentColor", "text without a colour takes the page's text colour"
    page = set(plotting.PAGE_COLOURS.values())
    literal = {e for g in page_figure.iter() if g.get("class") == plotting.LITERAL for e in g.iter()}
    used = {
        (key, value)
        for e in page_figure.iter()
        if e not in literal
        for key, value in styles(e).items()
        if key in ("fill", "stroke")
    }
    drawn = {value for _, value in used if value not in page and not value.startswith("url(")}
    assert drawn and not drawn & {"#000000", "#ffffff", plotting.GREY}, drawn
    assert {
        ("stroke", "currentColor"),
        ("stroke", plotting.PAGE_COLOURS[plotting.GREY]),
        ("fill", plotting.PAGE_COLOURS[plotting.BACKGROUND]),
    } <= used, "line, grey line, white box"
    # A cell label keeps its literal colour: it is read against the cell, not the page.
    assert {styles(e).get("fill") for e in literal if e.tag == f"{SVG}text"} == {"#000000", "#ffffff"}


def test_the_background_is_transparent_and_nothing_styles_the_page(page_figure):
    _, _, width, height = (float(v) for v in page_figure.get("viewBox").split())
    corners = f"M 0 {height:g}  L {width:g} {height:g}"
    assert not [e for e in page_figure.iter() if e.get("d", "").startswith(corners)], "no figure background"
    assert not [e for e in page_figure.iter() if e.tag in (f"{SVG}style", f"{SVG}metadata")]


def test_ids_are_the_figures_own_and_every_reference_finds_one(page_figure):
    ids = [e.get("id") for e in page_figure.iter() if e.get("id")]
    assert ids and len(ids) == len(set(ids))
    assert all(identifier.startswith("fig-two-lines-") for identifier in ids), ids
    references = {
        m
        for e in page_figure.iter()
        for value in e.attrib.values()
        for m in re.findall(r"url\(#([^)]+)\)|^#(.+)$", value)
        for m in m
        if m
    }
    assert references and references <= set(ids)
    # Material's instant navigation assigns to every [href] of a page it swaps in, which an SVG
    # element's plain href refuses: references stay xlink:href.
    assert not [e for e in page_figure.iter() if "href" in e.attrib]


def test_the_svg_has_an_accessible_name(page_figure):
    assert page_figure.get("role") == "img"
    assert page_figure.get("aria-label") == "One straight line rising from zero to one."


# --- the narrow layout --------------------------------------------------------------------

# A figure as wide as the column, two panels side by side, with math text in its labels.
WIDE_SCRIPT = GOOD_SCRIPT.replace(
    """    fig, ax = plotting.new_figure(width=plotting.HALF_WIDTH, aspect=0.5)
    ax.plot([0, 1], [0, 1])
""",
    """    fig, (ax, other) = plotting.new_figure(aspect=0.4, ncols=2)
    ax.plot([0, 1], [0, 1])
    other.set_xscale("log")
    other.set_xlim(1e-4, 1)
    ax.set_xlabel(r"frequency $\\omega_r$ " + plotting.layout())
""",
)


def test_layout_is_wide_outside_the_renderer_and_as_told_within(tmp_path):
    assert plotting.layout() == "wide" and not plotting.narrow()
    with plotting.rendering(tmp_path / "x.py", {}, tmp_path, "narrow"):
        assert plotting.layout() == "narrow" and plotting.narrow()
        assert plotting.wrap("one", "two") == "one\ntwo"
    assert plotting.wrap("one", "two") == "one two"
    with pytest.raises(ValueError, match="layout must be one of"):
        with plotting.rendering(tmp_path / "x.py", {}, tmp_path, "tall"):
            pass


def test_new_figure_draws_the_narrow_layout_for_a_phones_column(tmp_path):
    with plotting.rendering(tmp_path / "x.py", {}, tmp_path, "narrow"):
        fig, axes = plotting.new_figure(aspect=0.4, ncols=3, width_ratios=(1, 2, 1))
        assert tuple(fig.get_size_inches()) == (plotting.NARROW_WIDTH, pytest.approx(3 * 7.0 * 0.4, abs=0.01))
        assert axes.shape == (3,), "the row's panels, in the wide layout's shape"
        tops = [ax.get_position().y0 for ax in axes]
        assert tops == sorted(tops, reverse=True), "stacked top to bottom in the row's order"
        assert axes[0].get_gridspec().get_height_ratios() == (1, 2, 1)
        plotting.plt.close(fig)

        fig, axes = plotting.new_figure(nrows=2, ncols=3, narrow={"nrows": 3, "ncols": 2, "aspect": 1.5})
        assert axes.shape == (2, 3) and axes[0, 0].get_gridspec().get_geometry() == (3, 2)
        assert fig.get_size_inches()[1] == pytest.approx(plotting.NARROW_WIDTH * 1.5, abs=0.01)
        plotting.plt.close(fig)

        fig, axes = plotting.new_figure(
            nrows=2, ncols=2, gridspec_kw={"height_ratios": [2, 1]}, narrow={"nrows": 3, "ncols": 1}
        )
        assert axes.shape == (3,), "a grid of another size comes back as it is"
        assert axes[0].get_gridspec().get_height_ratios() == [1, 1, 1], "the wide rows' ratios are dropped"
        plotting.plt.close(fig)
    fig, axes = plotting.new_figure(aspect=0.4, ncols=3, width_ratios=(1, 2, 1))
    assert tuple(fig.get_size_inches()) == (7.0, pytest.approx(2.8, abs=0.01)) and axes.shape == (3,)
    plotting.plt.close(fig)


def test_a_wide_figure_drawn_after_a_narrow_one_is_laid_out_as_on_its_own(tmp_path):
    # The narrow layout widens constrained layout's padding; a wide figure drawn later in the same
    # process must not keep it (the figures' second render in a test worker once drew other bytes).
    def wide_axes_box():
        fig, ax = plotting.new_figure(aspect=0.4)
        ax.set_ylabel("offset")
        fig.canvas.draw()
        box = tuple(ax.get_position().bounds)
        plotting.plt.close(fig)
        return box

    alone = wide_axes_box()
    with plotting.rendering(tmp_path / "x.py", {}, tmp_path, "narrow"):
        plotting.plt.close(plotting.new_figure(aspect=0.4)[0])
    assert wide_axes_box() == alone


def test_a_figure_wider_than_a_phone_gets_a_narrow_layout_drawn_by_its_script(tmp_path):
    script = write_script(tmp_path, "two-panels", WIDE_SCRIPT)
    out = tmp_path / "out"
    assert render.render([script], out) == []
    assert sorted(path.name for path in out.iterdir()) == [
        "two-panels.json",
        "two-panels.narrow.json",
        "two-panels.narrow.svg",
        "two-panels.svg",
    ]
    wide, narrow = (FigureMeta.read(figure_files("two-panels", out, layout)[0]) for layout in ("wide", "narrow"))
    assert (wide.width, narrow.width) == (672, round(plotting.NARROW_WIDTH * 96))
    assert wide.narrow and narrow.narrow and narrow.alt == wide.alt and narrow.title == wide.title
    texts = [
        "".join(t.itertext()) for t in ElementTree.parse(out / "two-panels.narrow.svg").getroot().iter(f"{SVG}text")
    ]
    assert any(text.endswith("narrow") for text in texts), "the script drew the layout it was told"
    root = ElementTree.parse(out / "two-panels.narrow.svg").getroot()
    ids = [e.get("id") for e in root.iter() if e.get("id")]
    assert ids and all(i.startswith("fig-two-panels.narrow-") for i in ids), "ids apart from the wide layout's"
    assert render.stale([script], out, []) == []
    (out / "two-panels.narrow.svg").unlink()
    assert render.stale([script], out, []) == [script], "a missing narrow layout makes the figure stale"


def test_a_failing_narrow_layout_names_the_figure_and_keeps_the_last_good_files(tmp_path, capsys):
    script = write_script(tmp_path, "two-panels", WIDE_SCRIPT)
    out = tmp_path / "out"
    assert render.render([script], out) == []
    good = {path.name: path.read_bytes() for path in out.iterdir()}
    script.write_text(
        WIDE_SCRIPT.replace(
            "    plotting.save(fig)",
            "    if plotting.narrow():\n        raise ValueError('no room')\n    plotting.save(fig)",
        )
    )
    errors = {}
    assert render.render([script], out, errors=errors) == [script]
    assert f"{script} failed drawing its narrow layout" in errors[script] and "no room" in errors[script]
    assert f"FAILED {script}" in capsys.readouterr().err
    assert {path.name: path.read_bytes() for path in out.iterdir()} == good, "both layouts' last good files"
    assert render.stale([script], out, []) == [script], "and the figure stays stale"


def test_a_figure_that_needs_no_narrow_layout_any_more_loses_it_and_orphans_go(tmp_path):
    script = write_script(tmp_path, "two-panels", WIDE_SCRIPT)
    out = tmp_path / "out"
    assert render.render([script], out) == []
    script.write_text(GOOD_SCRIPT)  # half the column: legible on a phone as it is
    assert render.render([script], out) == []
    assert sorted(path.name for path in out.iterdir()) == ["two-panels.json", "two-panels.svg"]
    assert render.render([write_script(tmp_path, "other", WIDE_SCRIPT)], out) == []
    assert len(render.remove_orphans([script], out)) == 4, "every layout's files of a figure whose script is gone"
    assert sorted(path.name for path in out.iterdir()) == ["two-panels.json", "two-panels.svg"]


def test_a_narrow_layout_wider_than_a_phones_column_is_refused(tmp_path):
    script = write_script(
        tmp_path,
        "too-wide",
        WIDE_SCRIPT.replace("    plotting.save(fig)", "    fig.set_size_inches(5, 3)\n    plotting.save(fig)"),
    )
    errors = {}
    assert render.render([script], tmp_path / "out", errors=errors) == [script]
    assert "the narrow layout is 480 px wide, wider than a phone's column (360 px)" in errors[script]


def runs_of(text: ElementTree.Element) -> list[tuple[str, float, float]]:
    """A math text's runs: each one's text, size and baseline (the first may be the text's own)."""
    pieces = ([text] if (text.text or "").strip() else []) + list(text)
    return [
        (piece.text.replace("\xa0", " "), float(styles(piece)["font-size"][:-2]), float(piece.get("y")))
        for piece in pieces
    ]


def test_sub_and_superscripts_are_script_sized_and_shifted_and_at_least_11_pixels(tmp_path):
    """Math text is laid out whole at a size whose scripts are 11 px: a script is 0.7 of the text
    around it, on its own baseline, and the glyphs around it are words."""
    script = write_script(tmp_path, "two-panels", WIDE_SCRIPT)
    assert render.render([script], tmp_path / "out") == []
    root = ElementTree.parse(tmp_path / "out" / "two-panels.svg").getroot()
    label = next(t for t in root.iter(f"{SVG}text") if "".join(t.itertext()).startswith("frequency"))
    runs = runs_of(label)
    assert [text for text, _, _ in runs] == ["frequency ", "ω", "r", " wide"]
    (_, base, baseline), (_, _, _), (_, small, lowered), _ = runs
    assert small == pytest.approx(plotting.MIN_FONT_SIZE, abs=0.01) and small / base == pytest.approx(0.7, abs=0.01)
    assert lowered > baseline, "a subscript sits below the baseline"
    ticks = [t for t in root.iter(f"{SVG}text") if "".join(t.itertext()).startswith("10") and len(runs_of(t)) == 2]
    assert len(ticks) >= 3, "the log axis's labels, 10 with its power"
    for tick in ticks:
        (_, ten, baseline), (_, power, raised) = runs_of(tick)
        assert power == pytest.approx(plotting.MIN_FONT_SIZE, abs=0.01) and power / ten == pytest.approx(0.7, abs=0.01)
        assert raised < baseline, "a superscript sits above the baseline"


def test_no_text_under_the_smallest_size_reaches_the_page():
    """save() raises every text first; text under the size in Matplotlib's SVG is an error, not raised."""
    drawn = b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><text style="font-size: 6px">a</text></svg>'
    meta = FigureMeta(title="T.", caption="C.", alt="a b c d e", width=10, height=10, script="x", narrow=False)
    with pytest.raises(ValueError, match="text of 6px in the SVG, under the smallest size"):
        plotting.page_svg(drawn, "tiny", meta)


def absolute_points(data: str) -> list[tuple[float, float]]:
    """Every point of SVG path data (the commands svg_rewrite writes), in absolute coordinates."""
    tokens = re.findall(r"[MmLlHhVvCcQqZz]|-?(?:\d+\.?\d*|\.\d+)", data)
    points, x, y, start, command, index = [], 0.0, 0.0, (0.0, 0.0), "", 0
    sizes = {"m": 2, "l": 2, "h": 1, "v": 1, "c": 6, "q": 4, "z": 0}
    while index < len(tokens):
        if tokens[index].isalpha():
            command, index = tokens[index], index + 1
            if command in "zZ":
                x, y = start
                continue
        values = [float(v) for v in tokens[index : index + sizes[command.lower()]]]
        index += len(values)
        relative = command.islower()
        if command.lower() == "h":
            values = [values[0] + (x if relative else 0), y]
        elif command.lower() == "v":
            values = [x, values[0] + (y if relative else 0)]
        elif relative:
            values = [v + (x if n % 2 == 0 else y) for n, v in enumerate(values)]
        pairs = list(zip(values[0::2], values[1::2]))
        points += pairs
        x, y = pairs[-1]
        if command in "mM":
            start = (x, y)
            command = "l" if command == "m" else "L"
    return points


@pytest.mark.parametrize(
    "data",
    [
        "M 45.2 168.75  L 45.85 168.61  L 46.5 168.19  L 46.5 170  L 50.125 170  z "
        "M 1.005 2.994  C 1 2 3 4 5 6  Q 0 0 -7.5 -0.25",
        "M -0 3.54  L 3.54 0  L 0 -3.54  L -3.54 -0  z ",
        "M 0.001 0.5  L 0.5 0.001  L 1000.5 -200.25",
    ],
)
def test_compact_path_data_keeps_every_point_to_the_hundredth(data):
    compact = svg_rewrite._compact_path(data)
    expected = [float(v) for pair in re.findall(r"(-?[\d.]+) (-?[\d.]+)", data) for v in pair]
    assert [v for point in absolute_points(compact) for v in point] == pytest.approx(expected, abs=0.0051)
    assert len(compact) < len(data) * 0.85
    assert svg_rewrite._compact_path("M 0 0 A 1 1 0 0 1 2 2.123456") == "M 0 0 A 1 1 0 0 1 2 2.12", "only rounded"


def test_alike_shapes_are_one_path_and_definitions_one_defs(tmp_path):
    script = write_script(
        tmp_path,
        "many-lines",
        GOOD_SCRIPT.replace(
            "    ax.plot([0, 1], [0, 1])\n",
            "    ax.vlines(range(100), 0, 1)\n    ax.set_xticks(range(0, 100, 10))\n",
        ),
    )
    assert render.render([script], tmp_path / "out") == []
    root = ElementTree.parse(tmp_path / "out" / "many-lines.svg").getroot()
    paths = [e for e in root.iter(f"{SVG}path")]
    assert len(paths) < 10, "a hundred segments, ten tick marks: a few paths"
    assert sum(e.get("d", "").count("M") for e in paths) >= 100
    assert not list(root.iter(f"{SVG}use")), "short markers are written out where they go"
    assert [e.tag for e in root].count(f"{SVG}defs") == 1 and root[0].tag == f"{SVG}defs"


# --- one colour per method -------------------------------------------------------------------

# Each method's name as a figure may write it, and the shared colours that the mapping allows
# (methods never drawn in one figure, written down beside the mapping).
METHODS = [method for group in plotting.METHOD_GROUPS.values() for method in group]
SHARED = {
    frozenset({"longrope", "base"}),
    frozenset({"cope", "t5"}),
    frozenset({"fire", "deberta"}),
    frozenset({"nope", "shaw"}),
}


def _lab(colour: str):
    """CIELAB of an sRGB colour (D65), for the distance between two colours as seen."""
    import numpy as np
    from matplotlib.colors import to_rgb

    rgb = np.array(to_rgb(colour))
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
    f = np.cbrt(np.maximum(xyz / [0.95047, 1.0, 1.08883], 0.008856))
    f = np.where(xyz / [0.95047, 1.0, 1.08883] > 0.008856, f, 7.787 * xyz / [0.95047, 1.0, 1.08883] + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_every_method_has_one_colour_and_only_the_written_down_ones_share():
    assert len(METHODS) == len(set(METHODS))
    colours = {method: plotting.colour_of(method=method) for method in METHODS}
    assert set(plotting.palette_css("method")) == {f"--posenc-method-{method}" for method in METHODS}
    assert plotting.colour_of(method="linear") == colours["pi"] == plotting.colour_of(method="PI")
    assert plotting.colour_of(method="alibi") == plotting.colour_of(family="alibi")
    shared = {frozenset({a, b}) for a in METHODS for b in METHODS if a < b and colours[a] == colours[b]}
    within = {pair for pair in shared if any(pair <= set(group) for group in plotting.METHOD_GROUPS.values())}
    assert within == SHARED, "within a group of methods, only the written-down pairs share a colour"
    with pytest.raises(ValueError, match="no colour for method='rope-xl'"):
        plotting.colour_of(method="rope-xl")


@pytest.mark.parametrize("group", sorted(plotting.METHOD_GROUPS))
def test_method_colours_are_far_apart_and_legible_on_both_pages(group):
    """Distinct colours within a group are far apart (no near-twins), and each is at least 3:1
    against the light and the dark page: they are thin lines there."""
    import itertools

    import numpy as np
    from matplotlib.colors import to_rgb

    colours = sorted({plotting.colour_of(method=method) for method in plotting.METHOD_GROUPS[group]})
    assert len(colours) >= 6, "six methods meet in one long-context figure"
    for first, second in itertools.combinations(colours, 2):
        assert np.linalg.norm(_lab(first) - _lab(second)) > 25, (first, second)
    for colour in colours:
        for scheme, page in plotting.PAGE_BACKGROUNDS.items():
            assert _contrast(to_rgb(colour), to_rgb(page)) >= 3.0, (colour, scheme)


def test_no_figure_draws_two_methods_or_a_method_and_a_series_in_one_colour(monkeypatch, tmp_path):
    """Every figure that names a method, drawn with colour_of watched: each colour it asks for
    names one method, or one series, never two."""
    import runpy

    scripts = [
        path
        for path in sorted((pathlib.Path(__file__).parents[2] / "figures_src").glob("*.py"))
        if "method=" in path.read_text()
    ]
    assert {path.stem for path in scripts} >= {"rope-scaling", "long-context-ratios", "relative-buckets"}
    asked: list[tuple[str, object, str]] = []
    colour_of = plotting.colour_of

    def watched(**concept):
        colour = colour_of(**concept)
        asked.extend((kind, value, colour) for kind, value in concept.items())
        return colour

    monkeypatch.setattr(plotting, "colour_of", watched)
    monkeypatch.setattr(plotting, "save", lambda fig: plotting.plt.close(fig))
    for script in scripts:
        asked.clear()
        namespace = runpy.run_path(str(script))  # defines main() without running it
        with plotting.rendering(script, namespace, tmp_path):
            namespace["main"]()
        named: dict[str, set] = {}
        for kind, value, colour in asked:
            if kind in ("method", "series"):
                key = plotting._ALIASES["method"].get(value, value) if kind == "method" else value
                named.setdefault(colour.lower(), set()).add((kind, key))
        assert any(kind == "method" for kind, _, _ in asked), f"{script.stem} names no method"
        clashes = {colour: sorted(map(str, names)) for colour, names in named.items() if len(names) > 1}
        assert not clashes, f"{script.stem} gives one colour to several methods or series: {clashes}"


def test_panels_get_the_diverging_map_of_the_figures_with_a_clear_zero():
    import numpy as np
    from matplotlib.colors import to_rgba

    ((name, value),) = plotting.palette_css("diverging").items()
    stops = value.split(", ")
    assert name == "--posenc-diverging" and len(stops) == plotting.DIVERGING_STOPS
    assert stops[len(stops) // 2] == "#ffffff00", "zero is the page's background"
    expected = plotting.diverging_colormap()(np.linspace(0.0, 1.0, len(stops)))
    assert np.abs(np.array([to_rgba(stop) for stop in stops]) - expected).max() <= 0.5 / 255 + 1e-9
