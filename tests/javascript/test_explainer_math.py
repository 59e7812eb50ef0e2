"""The explainer's arithmetic (``docs/javascripts/explainer-math.js``) against ``posenc``, in Node.

One Node process loads the module the page loads and evaluates it over every setting the
controls of /explainer/ offer; each number must agree with ``posenc`` to 1e-12 and each readout
must read as Python formats it. No browser is needed (Node is a build prerequisite);
``tests/browser/test_explainer.py`` checks the page itself in Chromium; both take the reference (what posenc
says each readout should read) from ``tests/support/explainer.py``.

The controls' ranges and starting values are read from the page's panels (``docs/explainer.md``
names them, ``docs/panels/NAME.html`` holds each one's markup) and the demo data (embeddings,
RoPE content, widths) from posenc/site/explainer_demo.json, which the module, the page and the
figures all read: each has one source.
"""

from __future__ import annotations

import json
import pathlib
import runpy

import numpy as np
import pytest
from support.explainer import (
    STARTING_READOUTS,
    TOLERANCE,
    demo,
    expected_readouts,
    expected_texts,
    initial,
    orders,
    rope_rows,
    run_node,
    score_matrix,
    sliders,
    steps,
)

import posenc
from posenc.site import explainer_demo

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_reference_gives_the_numbers_of_the_issue():
    assert steps() == tuple(STARTING_READOUTS)
    for step in steps():
        assert expected_readouts(step, initial(step)) == STARTING_READOUTS[step]


# ---------------------------------------------------------------------------------------
# The module over every setting of every control, in one Node process

GRID_JS = """(math, { sliders, orders, formats }) => {
  const r = (start, stop, step = 1) => {
    const out = [];
    for (let v = start; v <= stop; v += step) out.push(v);
    return out;
  };
  const grid = (ranges) => Object.entries(ranges).reduce(
    (rows, [name, [low, high, step]]) =>
      rows.flatMap((row) => r(low, high, step).map((v) => ({ ...row, [name]: v }))),
    [{}]);
  const rows = [];
  const settings = [['order', orders.map((order) => ({ order }))],
                    ...Object.entries(sliders).map(([step, ranges]) => [step, grid(ranges)])];
  for (const [step, all] of settings) {
    for (const params of all) rows.push([step, params, math.readouts(step, params), math.texts(step, params)]);
  }
  const content8 = math.tile(math.CONTENT, 8);
  return {
    frequencies: [2, 8, 16, 20, 64, 512].map((w) => math.frequencies(w)),
    wavelengths: [2, 8, 16, 20, 64, 512].map((w) => math.wavelengths(w)),
    base500: math.frequencies(16, 500),
    sinusoidal20: r(0, 49).map((t) => math.sinusoidal(t, 20)),
    sinusoidal16: r(0, 19).map((t) => math.sinusoidal(t, 16)),
    sinusoidal8: r(0, 40).map((t) => math.sinusoidal(t, 8)),
    angle20: r(0, 49).map((t) => r(0, 19).map((c) => math.angle(t, c, 20))),
    dot16: r(0, 19).map((i) => r(0, 19).map((j) => math.positionDot(i, j, 16))),
    dot8: r(0, 19).map((m) => r(0, 40).map((n) => math.positionDot(m, n, 8))),
    kernel16: r(-19, 19).map((d) => math.kernel(d, 16)),
    kernel8: r(-40, 40).map((d) => math.kernel(d, 8)),
    rotated8: r(0, 40).map((t) => math.rotate(content8, t)),
    rotatedOther: r(0, 19).map((t) => math.rotate([0.3, -1.2, 2.5, 0.7, -0.4, 0.9], t)),
    rope8: r(0, 19).map((m) => r(0, 40).map((n) => math.ropeScore(m, n, 8))),
    rope16: r(0, 19).map((m) => r(0, 19).map((n) => math.ropeScore(m, n, 16, [1.5, -0.5]))),
    matrices: orders.map((order) => math.dotMatrix(order)),
    formatted: formats.map(([text, digits]) => math.fixed(Number(text), digits)),
    unknown: ['toString', 'cat'].map((word) => {
      try { math.dotMatrix([word]); return null; } catch (error) { return error.name; }
    }),
    rows,
  };
}"""

# Numbers whose formatting differs between JavaScript's toFixed and Python's format: exact ties
# (Python rounds them to even), -0 and tiny negatives (Python keeps the sign), near-ties.
FORMAT_CASES = [
    [text, digits]
    for text in (
        "0.125",
        "0.375",
        "2.5",
        "3.5",
        "-0.125",
        "-2.5",
        "-0",
        "0",
        "1e-17",
        "-1e-17",
        "0.005",
        "1.0049999999999999",
        "6.135",
        "-3.9999999",
        "198.69176531592202",
    )
    for digits in (0, 1, 2, 3, 4)
]


@pytest.fixture(scope="module")
def golden():
    grids = {step: {name: list(spec[:3]) for name, spec in params.items()} for step, params in sliders().items()}
    return run_node(GRID_JS, {"sliders": grids, "orders": list(orders()), "formats": FORMAT_CASES})


def close(js, python):
    np.testing.assert_allclose(
        np.asarray(js, dtype=float), np.asarray(python, dtype=float), rtol=TOLERANCE, atol=TOLERANCE
    )


def test_frequencies_and_tables_match_posenc(golden):
    widths = [2, 8, 16, 20, 64, 512]
    for width, js in zip(widths, golden["frequencies"]):
        close(js, posenc.frequencies(width))
    for width, js in zip(widths, golden["wavelengths"]):
        close(js, posenc.wavelengths(width))
    close(golden["base500"], posenc.frequencies(16, base=500.0))
    close(golden["sinusoidal20"], posenc.sinusoidal(np.arange(50), 20))
    close(golden["sinusoidal16"], posenc.sinusoidal(np.arange(20), 16))
    close(golden["sinusoidal8"], posenc.sinusoidal(np.arange(41), 8))
    close(golden["angle20"], np.multiply.outer(np.arange(50), np.repeat(posenc.frequencies(20), 2)))


def test_dot_products_and_kernel_match_posenc(golden):
    p16 = posenc.sinusoidal(np.arange(20), 16)
    close(golden["dot16"], p16 @ p16.T)
    p8 = posenc.sinusoidal(np.arange(41), 8)
    close(golden["dot8"], p8[:20] @ p8.T)
    close(golden["kernel16"], posenc.kernel(np.arange(-19, 20), 16))
    close(golden["kernel8"], posenc.kernel(np.arange(-40, 41), 8))


def test_rope_matches_posenc(golden):
    rotated = rope_rows(np.arange(41), 8)
    close(golden["rotated8"], rotated)
    other = np.array([0.3, -1.2, 2.5, 0.7, -0.4, 0.9])
    close(golden["rotatedOther"], posenc.rope(np.tile(other, (20, 1)), np.arange(20)))
    close(golden["rope8"], rotated[:20] @ rotated.T)
    wide = np.tile([1.5, -0.5], 8)
    rotated16 = posenc.rope(np.tile(wide, (20, 1)), np.arange(20))
    close(golden["rope16"], rotated16 @ rotated16.T)


def test_score_matrices_match_numpy(golden):
    for order, js in zip(orders(), golden["matrices"]):
        close(js, score_matrix(order))
    base = score_matrix(orders()[0])
    for js in golden["matrices"]:  # the same nine numbers in every order
        close(np.sort(np.ravel(js)), np.sort(base.ravel()))
    assert golden["unknown"] == ["RangeError", "RangeError"]  # not even a property every object has


def test_numbers_are_formatted_as_python_does(golden):
    assert golden["formatted"] == [format(float(text), f".{digits}f") for text, digits in FORMAT_CASES]


def test_readouts_and_texts_match_posenc_at_every_setting(golden):
    counts = dict.fromkeys(steps(), 0)
    mismatches = []
    for step, params, readouts, texts in golden["rows"]:
        counts[step] += 1
        expected = (expected_readouts(step, params), expected_texts(step, params))
        if (readouts, texts) != expected:
            mismatches.append((step, params, (readouts, texts), expected))
    grid_sizes = {
        step: int(np.prod([len(range(lo, hi + 1, st)) for lo, hi, st, _ in params.values()]))
        for step, params in sliders().items()
    }
    assert counts == {"order": len(orders())} | grid_sizes
    assert sum(counts.values()) > 2000  # the whole grids: 50 x 20 cells of the table alone
    assert not mismatches, mismatches[:5]


# ---------------------------------------------------------------------------------------
# The module's data: what the figures beside the steps draw


def figure_namespace(name: str) -> dict:
    """The module-level names of ``figures_src/NAME.py`` (its top level runs; main() draws nothing)."""
    return runpy.run_path(str(ROOT / "figures_src" / f"{name}.py"))


def test_the_module_reads_the_one_data_file():
    data = demo()
    assert data == json.loads(explainer_demo.DATA_FILE.read_text())
    assert data["embeddings"] == {word: list(v) for word, v in explainer_demo.EMBEDDINGS.items()}
    assert data["content"] == list(explainer_demo.CONTENT)
    assert data["widths"] == explainer_demo.WIDTHS


def test_the_figures_beside_the_steps_draw_the_module_data():
    data = demo()
    words = figure_namespace("attention-permutation")
    assert [" ".join(order) for order in words["ORDERS"]] == list(orders())
    assert set(words["ORDERS"][0]) == set(data["embeddings"])
    for name in ("rope-rotation", "sinusoidal-vs-rope"):
        assert figure_namespace(name)["CONTENT"].tolist() == data["content"], name
    figure_of_step = {
        "heatmap": "heatmap-20x50",
        "bands": "frequency-bands",
        "distance": "dot-product-16",
        "rope": "rope-rotation",
        "compare": "sinusoidal-vs-rope",
    }
    assert set(figure_of_step) == set(data["widths"])
    for step, name in figure_of_step.items():
        assert figure_namespace(name)["WIDTH"] == data["widths"][step], (step, name)
