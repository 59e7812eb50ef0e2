"""The long-context panel's arithmetic (``docs/javascripts/long-context-math.js``) against ``posenc``, in Node.

One Node process evaluates the module the page loads at every setting the panel's controls
offer (training length, scale, method, read from its template ``docs/panels/long-context.html``). Every frequency,
ramp weight, critical dimension and attention factor must agree with ``posenc`` to a relative
1e-12, and every readout and table cell must read exactly as Python formats posenc's numbers.

Why 1e-12 holds with room to spare: posenc's frequencies are correctly rounded, the module's
come from ``Math.pow`` (within a few ulps, 1e-16 relative), and every method applies at most a
handful of further operations (a division by s, a power of the stretched base, a blend of two
frequencies), each adding an ulp or so; relative, because the frequencies span 1 down to 1e-8.
``tests/browser/test_long_context_panel.py`` checks the page itself in Chromium; both take the reference
from ``tests/support/long_context.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.explainer import run_node
from support.long_context import (
    BASE,
    DIM,
    MODULE,
    TABLE_PAIRS,
    TOLERANCE,
    expected_readouts,
    expected_table,
    expected_value_texts,
    panel,
    scaled_frequencies,
    settings,
)

import posenc


def test_the_panel_offers_the_settings_the_page_describes():
    assert panel()["sliders"] == {"exponent": (9, 17, 1, 12), "scale": (1, 64, 1, 8)}  # L from 512 to 131072
    assert panel()["choices"]["method"] == ["pi", "ntk", "dynamic", "yarn", "llama3"]
    assert panel()["initial"] == {"exponent": 12, "scale": 8, "method": "yarn"}
    assert len(settings()) == 9 * 64 * 5


# ---------------------------------------------------------------------------------------
# The module at every setting, in one Node process

GRID_JS = """(math, settings) => ({
  constants: { dim: math.DIM, base: math.BASE, methods: math.METHODS, pairs: math.TABLE_PAIRS },
  rows: settings.map((params) => {
    const setting = math.setting(params);
    const { frequencies, attentionFactor } = math.scaled(setting);
    return {
      frequencies, attentionFactor,
      critical: math.criticalDimension(math.DIM, setting.training),
      ramp: math.yarnRamp(math.DIM, setting.training),
      range: math.yarnCorrectionRange(math.DIM, setting.training),
      readouts: math.readouts(params), table: math.table(params), valueTexts: math.valueTexts(params),
    };
  }),
  refused: [{ training: 0, scale: 8, method: 'pi' }, { training: 4096, scale: 0.5, method: 'pi' },
            { training: 4096, scale: 8, method: 'toString' }].map((bad) => {
    try { math.scaled(bad); return null; } catch (error) { return error.name; }
  }),
})"""


@pytest.fixture(scope="module")
def golden():
    return run_node(GRID_JS, settings(), module=MODULE)


def test_the_module_computes_for_the_page_s_head(golden):
    assert golden["constants"] == {
        "dim": DIM,
        "base": BASE,
        "methods": panel()["choices"]["method"],
        "pairs": list(TABLE_PAIRS),
    }
    assert golden["refused"] == ["RangeError"] * 3  # not even a property every object has


def test_numbers_match_posenc_at_every_setting(golden):
    assert len(golden["rows"]) == len(settings())
    for p, row in zip(settings(), golden["rows"]):
        training = 2 ** p["exponent"]
        frequencies, attention = scaled_frequencies(training, p["scale"], p["method"])
        np.testing.assert_allclose(row["frequencies"], frequencies, rtol=TOLERANCE, atol=0, err_msg=str(p))
        assert math.isclose(row["attentionFactor"], attention, rel_tol=TOLERANCE), p
        assert math.isclose(row["critical"], posenc.critical_dimension(DIM, training), rel_tol=TOLERANCE), p
        low, high = posenc.yarn_correction_range(DIM, original_max_position_embeddings=training)
        assert row["range"] == [low, high], p  # whole pairs (or 0.001 apart): exact
        np.testing.assert_allclose(
            row["ramp"],
            posenc.yarn_ramp(DIM, original_max_position_embeddings=training),
            rtol=0,
            atol=TOLERANCE,
            err_msg=str(p),
        )


def test_readouts_and_table_read_as_python_formats_posenc(golden):
    mismatches = [
        (p, row["readouts"], row["table"], row["valueTexts"])
        for p, row in zip(settings(), golden["rows"])
        if (row["readouts"], row["table"], row["valueTexts"])
        != (expected_readouts(p), expected_table(p), expected_value_texts(p))
    ]
    assert not mismatches, mismatches[:2]


def test_the_page_s_sentence_about_the_slowest_pair_holds_at_every_setting(golden):
    """Up to L = 32768 every method but dynamic NTK divides the slowest pair by s; dynamic by s^2 - s + 1."""
    for p, row in zip(settings(), golden["rows"]):
        s, training = p["scale"], 2 ** p["exponent"]
        shown = row["readouts"]
        if training <= 32768:
            assert posenc.wavelengths(DIM)[-1] > training  # the last pair is short of a turn
            divisor = s * s - s + 1 if p["method"] == "dynamic" else s
            assert shown["slowest"] == f"{divisor:.2f}", p
            if p["method"] != "dynamic":
                assert shown["angle"] == shown["trainedAngle"], p
            elif s > 1:
                assert float(shown["angle"]) < float(shown["trainedAngle"]), p
