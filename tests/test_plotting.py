"""The figure helper (posenc.plotting) and the one-process renderer (posenc.render)."""

import json
import pathlib
import re
import textwrap

import pytest

from posenc import plotting, render

GOOD_SCRIPT = '''
"""A test figure of one line.

The caption says what to read in it.
"""
from posenc import plotting

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
    assert svg.read_bytes().startswith(b"<?xml")
    meta = json.loads((tmp_path / "out" / "rising-line.json").read_text())
    assert meta == {
        "alt": "One straight line rising from zero to one.",
        "caption": "The caption says what to read in it.",
        "height": round(plotting.HALF_WIDTH * 0.5 * 96),
        "script": "figures_src/rising-line.py",
        "title": "A test figure of one line.",
        "width": round(plotting.HALF_WIDTH * 96),
    }


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
    head = (tmp_path / "out" / "rising-line.svg").read_text()[:600]
    meta = json.loads((tmp_path / "out" / "rising-line.json").read_text())
    # Matplotlib states the size in points (72 per inch); the page uses CSS pixels (96 per inch).
    points = dict(re.findall(r'(width|height)="([0-9.]+)pt"', head))
    assert meta["width"] == round(float(points["width"]) * 96 / 72)
    assert meta["height"] == round(float(points["height"]) * 96 / 72)


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
