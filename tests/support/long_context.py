"""The long-context panel's reference (what posenc says each readout and table cell should read)
and its controls, from the panel's template. test_long_context_math holds the module to it,
test_long_context_panel the page."""

from __future__ import annotations

import functools

import numpy as np

import posenc
from support import ROOT
from support.explainer import Controls, panels_markup

MODULE = ROOT / "docs" / "javascripts" / "long-context-math.js"
PAGE = ROOT / "docs" / "long-context.md"
TOLERANCE = 1e-12
DIM, BASE = 128, 10000.0
TABLE_PAIRS = (0, 8, 16, 24, 32, 40, 48, 56, 63)


@functools.cache
def panel() -> dict:
    """The panel's controls: sliders {param: (min, max, step, start)}, method values, starting values."""
    parser = Controls()
    parser.feed(panels_markup(PAGE))
    return parser.steps["long-context"]


def settings() -> list[dict]:
    """Every setting the controls offer."""
    (lo_k, hi_k, st_k, _), (lo_s, hi_s, st_s, _) = (panel()["sliders"][name] for name in ("exponent", "scale"))
    return [
        {"exponent": k, "scale": s, "method": method}
        for k in range(lo_k, hi_k + 1, st_k)
        for s in range(lo_s, hi_s + 1, st_s)
        for method in panel()["choices"]["method"]
    ]


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
        return posenc.dynamic_ntk_frequencies(
            DIM, base=BASE, factor=factor, max_position_embeddings=training, seq_len=scale * training
        ), 1.0
    if method == "yarn":
        return posenc.yarn_frequencies(DIM, base=BASE, factor=factor, original_max_position_embeddings=training)
    if method == "llama3":
        return posenc.llama3_frequencies(
            DIM,
            base=BASE,
            factor=factor,
            low_freq_factor=1.0,
            high_freq_factor=4.0,
            original_max_position_embeddings=training,
        ), 1.0
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
    return [
        {
            "pair": str(r),
            "turns": f"{training / wavelength[r]:.3f}",
            "slowdown": f"{omega[r] / scaled[r]:.2f}",
            "targetTurns": f"{target / (2 * np.pi / scaled[r]):.3f}",
        }
        for r in TABLE_PAIRS
    ]


def expected_value_texts(p: dict) -> dict[str, str]:
    training = 2 ** p["exponent"]
    return {"exponent": f"{training:,} tokens", "scale": f"{p['scale']} (target {p['scale'] * training:,} tokens)"}
