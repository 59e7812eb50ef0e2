"""The grid-scores panel's arithmetic (``docs/javascripts/grid-scores-math.js``) against ``posenc``, in Node.

One Node process evaluates the module the page loads at every setting the panel's controls offer
(query row, query column, scheme, read from its description ``docs/panels/grid-scores.yml``)
and on other grids and widths. Every frequency and every score must agree with ``posenc`` to
1e-12 (scores relative to the largest of their grid), and every readout must read exactly as
Python formats posenc's numbers.

Why 1e-12 holds with room to spare: posenc's sines and cosines are correctly rounded and the
module's come from ``Math.sin`` and ``Math.cos`` of phases of at most a few tens of radians
(within an ulp or two, 1e-15); a score is a sum of 64 products of such numbers, each vector
entry at most 2 in size, so the two sums differ by some 64 * 1e-15 at most, relative to a
largest score of 64 or more. ``tests/browser/test_grid_scores_panel.py`` checks the page itself
in Chromium; both take the reference from ``tests/support/grid_scores.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.explainer import run_node
from support.grid_scores import (
    BASE,
    COLS,
    DIM,
    MODULE,
    ROWS,
    SCHEMES,
    SEPARABLE,
    TIE,
    TOLERANCE,
    encoded,
    expected_readouts,
    interaction,
    largest_elsewhere,
    mixed_frequencies,
    panel,
    scores,
    settings,
)

import posenc

# Grids and widths besides the panel's: a single patch, a single row or column, wide and tall
# grids, widths from the narrowest the table allows to the panel's.
GRIDS = [(1, 1, 4), (1, 6, 16), (5, 1, 8), (3, 4, 64), (7, 5, 16), (9, 16, 64), (12, 12, 64)]


def test_the_panel_offers_the_settings_the_page_describes():
    assert panel()["sliders"] == {"row": (0, ROWS - 1, 1, 4), "col": (0, COLS - 1, 1, 7)}
    assert panel()["choices"]["scheme"] == list(SCHEMES)
    assert panel()["initial"] == {"row": 4, "col": 7, "scheme": "axial"}
    assert len(settings()) == ROWS * COLS * len(SCHEMES)


def cases() -> list[dict]:
    """Every query of the small grids, the corners, the middle and one more patch of the larger ones."""
    found = []
    for rows, cols, dim in GRIDS:
        if rows * cols <= 35:
            queries = [(r, c) for r in range(rows) for c in range(cols)]
        else:
            queries = [(0, 0), (0, cols - 1), (rows - 1, 0), (rows - 1, cols - 1), (rows // 2, cols // 2), (1, 2)]
        for scheme in SCHEMES:
            found += [
                {"scheme": scheme, "rows": rows, "cols": cols, "dim": dim, "row": r, "col": c} for r, c in queries
            ]
    return found


# ---------------------------------------------------------------------------------------
# The module at every setting and on other grids, in one Node process

GRID_JS = """(math, { settings, cases, grids }) => ({
  constants: { dim: math.DIM, base: math.BASE, rows: math.ROWS, cols: math.COLS, schemes: math.SCHEMES,
               tie: math.TIE, separable: math.SEPARABLE },
  frequencies: math.frequencies(), mixed: math.mixedFrequencies(),
  vectors: grids.map(([rows, cols, dim]) =>
    Object.fromEntries(math.SCHEMES.map((s) => [s, math.encode(s, rows, cols, dim)]))),
  cases: cases.map((c) => {
    const values = math.scores(c.scheme, c.row, c.col, c.rows, c.cols, c.dim);
    return { values, interaction: math.interaction(values, c.row, c.col, c.rows, c.cols),
             largest: math.largestElsewhere(values, c.row, c.col, c.cols), scale: math.colourScale(values) };
  }),
  readouts: settings.map((params) => math.readouts(params)),
  refused: [['encode', ['polar', 3, 3, 8]], ['encode', ['toString', 3, 3, 8]], ['encode', ['axial', 0, 3, 8]],
            ['encode', ['axial', 3, 2.5, 8]], ['encode', ['axial', 3, 3, 6]], ['scores', ['axial', 3, 0, 3, 3, 8]],
            ['scores', ['axial', 0, -1, 3, 3, 8]], ['scores', ['axial', 0.5, 0, 3, 3, 8]]].map(([name, args]) => {
    try { math[name](...args); return null; } catch (error) { return error.name; }
  }),
})"""


@pytest.fixture(scope="module")
def golden():
    return run_node(GRID_JS, {"settings": settings(), "cases": cases(), "grids": GRIDS}, module=MODULE)


def test_the_module_computes_for_the_page_s_grid(golden):
    assert golden["constants"] == {
        "dim": DIM,
        "base": BASE,
        "rows": ROWS,
        "cols": COLS,
        "schemes": panel()["choices"]["scheme"],
        "tie": TIE,
        "separable": SEPARABLE,
    }
    # An unknown scheme (not even a property every object has), a grid or a width it cannot have, a query off the grid.
    assert golden["refused"] == ["RangeError"] * 8


def test_frequencies_are_posenc_s(golden):
    omega = posenc.rope_frequencies(DIM // 2, base=BASE)
    np.testing.assert_allclose(golden["frequencies"], omega, rtol=TOLERANCE, atol=0)
    # posenc's axial default schedule is the same: pair k < 16 of the first patch in row 1 turns by omega_k.
    turned = posenc.axial_rope_2d(np.tile([1.0, 0.0], (2, DIM // 2)), 2, 1, base=BASE)[1]
    np.testing.assert_allclose(np.arctan2(turned[1 : DIM // 2 : 2], turned[0 : DIM // 2 : 2]), omega, rtol=1e-14)
    mixed = golden["mixed"]
    np.testing.assert_allclose(np.array([mixed["fx"], mixed["fy"]]), mixed_frequencies(), rtol=TOLERANCE, atol=0)
    # Each pair's 2-D frequency is the axial one turned by 45 degrees: pair k at 45, pair 16 + k at 135 degrees.
    angles = np.degrees(np.arctan2(mixed["fy"], mixed["fx"]))
    np.testing.assert_allclose(angles, [45.0] * (DIM // 4) + [135.0] * (DIM // 4), rtol=1e-14)
    np.testing.assert_allclose(np.hypot(mixed["fx"], mixed["fy"]), np.tile(omega, 2), rtol=1e-15)


def test_every_vector_matches_posenc(golden):
    for (rows, cols, dim), by_scheme in zip(GRIDS, golden["vectors"]):
        for scheme in SCHEMES:
            np.testing.assert_allclose(
                by_scheme[scheme],
                encoded(scheme, rows, cols, dim),
                rtol=0,
                atol=TOLERANCE,
                err_msg=f"{scheme} {rows}x{cols}",
            )


def test_scores_match_posenc_on_every_grid(golden):
    assert len(golden["cases"]) == len(cases())
    for case, got in zip(cases(), golden["cases"]):
        rows, cols, dim, row, col = (case[k] for k in ("rows", "cols", "dim", "row", "col"))
        expected = scores(case["scheme"], row, col, rows, cols, dim)
        largest = np.abs(expected).max()
        np.testing.assert_allclose(got["values"], expected, rtol=0, atol=TOLERANCE * largest, err_msg=str(case))
        assert abs(got["interaction"] - interaction(expected, row, col, rows, cols)) <= TOLERANCE * largest, case
        assert got["scale"]["centre"] == pytest.approx(expected.mean(), rel=0, abs=TOLERANCE * largest), case
        spread = np.abs(expected - expected.mean()).max()
        assert got["scale"]["spread"] == pytest.approx(spread, rel=0, abs=TOLERANCE * largest), case
        if rows * cols == 1:
            assert got["largest"] is None, case  # no other patch
            continue
        best, tied = largest_elsewhere(expected, row, col, cols)
        assert got["largest"]["score"] == pytest.approx(best, rel=0, abs=TOLERANCE * largest), case
        assert [got["largest"]["row"], got["largest"]["col"], got["largest"]["ties"]] == [
            tied[0] // cols,
            tied[0] % cols,
            len(tied),
        ], case


def test_scores_behave_as_each_scheme_says(golden):
    """RoPE's scores depend on the offset alone and peak at the query; axial RoPE and the table split into
    a row part plus a column part, RoPE-Mixed's oblique frequencies do not."""
    for case, got in zip(cases(), golden["cases"]):
        rows, cols, dim, row, col = (case[k] for k in ("rows", "cols", "dim", "row", "col"))
        values = np.array(got["values"]).reshape(rows, cols)
        if case["scheme"] != "sincos":
            assert values[row, col] == pytest.approx(dim, rel=1e-14), case  # |x|^2 of the ones vector
            assert values.max() <= values[row, col] + 1e-12, case
        separable = got["interaction"] < SEPARABLE
        assert separable == (case["scheme"] != "mixed" or min(rows, cols) == 1), case


def test_rope_scores_depend_on_the_offset_alone():
    """The reference itself: moving the query and the keys together leaves a RoPE score as it was."""
    for scheme in ("axial", "mixed"):
        here = scores(scheme, 2, 3).reshape(ROWS, COLS)
        there = scores(scheme, 5, 7).reshape(ROWS, COLS)
        np.testing.assert_allclose(here[: ROWS - 3, : COLS - 4], there[3:, 4:], rtol=0, atol=1e-12)
    here, there = (scores("sincos", r, c).reshape(ROWS, COLS) for r, c in ((2, 3), (5, 7)))
    assert np.abs(here[: ROWS - 3, : COLS - 4] - there[3:, 4:]).max() > 1  # the table's does not


def test_readouts_read_as_python_formats_posenc(golden):
    mismatches = [
        (p, shown, expected_readouts(p))
        for p, shown in zip(settings(), golden["readouts"])
        if shown != expected_readouts(p)
    ]
    assert not mismatches, mismatches[:2]
