"""The long-context panel's arithmetic (``docs/javascripts/long-context-math.js``) against ``posenc``, in Node.

One Node process evaluates the module the page loads at every setting the panel's controls
offer (training length, scale, method, read from its template ``docs/panels/long-context.html``). Every frequency,
ramp weight, critical dimension and attention factor must agree with ``posenc`` to a relative
1e-12, and every readout and table cell must read exactly as Python formats posenc's numbers.

Why 1e-12 holds with room to spare: posenc's frequencies are correctly rounded, the module's
come from ``Math.pow`` (within a few ulps, 1e-16 relative), and every method applies at most a
handful of further operations (a division by s, a power of the stretched base, a blend of two
frequencies), each adding an ulp or so; relative, because the frequencies span 1 down to 1e-8.
``tests/test_long_context_panel.py`` checks the page itself in Chromium and imports the
reference below.
"""

from __future__ import annotations

import functools
import math
import pathlib

import numpy as np
import pytest
from test_explainer_math import _Controls, panels_markup, run_node

import posenc

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODULE = ROOT / "docs" / "javascripts" / "long-context-math.js"
PAGE = ROOT / "docs" / "long-context.md"
TOLERANCE = 1e-12
DIM, BASE = 128, 10000.0
TABLE_PAIRS = (0, 8, 16, 24, 32, 40, 48, 56, 63)


@functools.cache
def panel() -> dict:
    """The panel's controls: sliders {param: (min, max, step, start)}, method values, starting values."""
    parser = _Controls()
    parser.feed(panels_markup(PAGE))
    return parser.steps["long-context"]


def settings() -> list[dict]:
    """Every setting the controls offer."""
    (lo_k, hi_k, st_k, _), (lo_s, hi_s, st_s, _) = (panel()["sliders"][name] for name in ("exponent", "scale"))
    return [{"exponent": k, "scale": s, "method": method}
            for k in range(lo_k, hi_k + 1, st_k) for s in range(lo_s, hi_s + 1, st_s)
            for method in panel()["choices"]["method"]]


# ---------------------------------------------------------------------------------------
# The reference: posenc's frequencies for each method, and what the panel should read


def scaled_frequencies(training: int, scale: int, method: str) -> tuple[np.ndarray, float]:
    """posenc's frequencies and factor on queries and keys for a method at L = training, s = scale."""
    factor = float(scale)
    if method == "pi":
        return posenc.linear_scaled_frequencies(DIM, base=BASE, factor=factor), 1.0
    if method == "ntk":  # the base of derivation rope-ntk-base
        return posenc.rope_frequencies(DIM, base=BASE * factor ** (DIM / (DIM - 2))), 1.0
    if method == "dynamic":
        return posenc.dynamic_ntk_frequencies(DIM, base=BASE, factor=factor, max_position_embeddings=training,
                                              seq_len=scale * training), 1.0
    if method == "yarn":
        return posenc.yarn_frequencies(DIM, base=BASE, factor=factor, original_max_position_embeddings=training)
    if method == "llama3":
        return posenc.llama3_frequencies(DIM, base=BASE, factor=factor, low_freq_factor=1.0, high_freq_factor=4.0,
                                         original_max_position_embeddings=training), 1.0
    raise ValueError(method)


def expected_readouts(p: dict) -> dict[str, str]:
    training = 2 ** p["exponent"]
    target = p["scale"] * training
    omega = posenc.rope_frequencies(DIM, base=BASE)
    scaled, attention = scaled_frequencies(training, p["scale"], p["method"])
    return {
        "target": f"{target:,}",
        "critical": f"{posenc.critical_dimension(DIM, training, base=BASE):.2f}",
        "untrained": str(int((posenc.wavelengths(DIM, base=BASE) > training).sum())),
        "unturned": str(int((2 * np.pi / scaled > target).sum())),
        "slowest": f"{omega[-1] / scaled[-1]:.2f}",
        "angle": f"{target * scaled[-1]:.3f}",
        "trainedAngle": f"{training * omega[-1]:.3f}",
        "attention": f"{attention:.4f}",
    }


def expected_table(p: dict) -> list[dict[str, str]]:
    training = 2 ** p["exponent"]
    target = p["scale"] * training
    omega = posenc.rope_frequencies(DIM, base=BASE)
    wavelength = posenc.wavelengths(DIM, base=BASE)
    scaled, _ = scaled_frequencies(training, p["scale"], p["method"])
    return [{"pair": str(r), "turns": f"{training / wavelength[r]:.3f}",
             "slowdown": f"{omega[r] / scaled[r]:.2f}", "targetTurns": f"{target / (2 * np.pi / scaled[r]):.3f}"}
            for r in TABLE_PAIRS]


def expected_value_texts(p: dict) -> dict[str, str]:
    training = 2 ** p["exponent"]
    return {"exponent": f"{training:,} tokens", "scale": f"{p['scale']} (target {p['scale'] * training:,} tokens)"}


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
    assert golden["constants"] == {"dim": DIM, "base": BASE, "methods": panel()["choices"]["method"],
                                   "pairs": list(TABLE_PAIRS)}
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
        np.testing.assert_allclose(row["ramp"], posenc.yarn_ramp(DIM, original_max_position_embeddings=training),
                                   rtol=0, atol=TOLERANCE, err_msg=str(p))


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
