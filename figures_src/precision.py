r"""How far a sinusoidal encoding drifts from the exact value as the position id grows.

Largest absolute error over eight pairs of a width-128 table (base 10000) against mpmath at 50
digits, for ids from 1 to $2^{31} - 1$. The naive recipe rounds the id, the frequency and the
phase $t\omega$ to the working dtype, so its error grows in proportion to t until the phase is meaningless;
float16 rounds every id from 65520 on (halfway from its largest value, 65504, to $2^{16}$)
to infinity. posenc's accurate path stays at the float64 rounding level.
RoPE's cosines and sines come from the same computation and behave identically.
"""

import mpmath
import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Log-log plot of absolute error against position id from 1 to about 2.1 billion, one curve "
    "per dtype. float16 starts near 3e-4, is wrong by order one before id 10,000 and overflows "
    "from id 65520 on; bfloat16 starts near 2e-3 and is wrong by order one before id 1000; float32 "
    "grows from about 5e-8 to order one near id 10 million; naive float64 phases grow from 1e-16 "
    "to about 1e-7 at the largest ids; posenc's accurate path stays near 1e-16, below 1e-15 at "
    "every id."
)
WIDTH, PAIRS = 128, np.array([0, 1, 2, 4, 8, 16, 32, 63])
# float16 rounds to nearest: ids up to halfway between its largest value (65504) and 2**16 round
# down to 65504, ids from there on overflow to infinity.
FLOAT16_OVERFLOW = 65520
IDS = np.unique(np.append(np.round(np.logspace(0, np.log10(2**31 - 1), 375)), 2**31 - 1)).astype(np.int64)


def bfloat16(x):
    """Round float32 values to bfloat16 (nearest, ties to even), returned as float32."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    bits = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)


def naive(dtype):
    """sin and cos of t·ω with id, frequency, phase and result each rounded to ``dtype``."""
    if dtype == "bfloat16":
        t, omega = bfloat16(IDS.astype(np.float32)), bfloat16(10000.0 ** (-2.0 * PAIRS / WIDTH))
        phase = bfloat16(np.outer(t, omega))
        return bfloat16(np.sin(phase)), bfloat16(np.cos(phase))
    with np.errstate(over="ignore", invalid="ignore"):
        t, omega = IDS.astype(dtype), (10000.0 ** (-2.0 * PAIRS / WIDTH)).astype(dtype)
        phase = np.outer(t, omega)
        return np.sin(phase), np.cos(phase)


def main():
    mp = mpmath.MPContext()
    mp.dps = 50
    omegas = [mp.power(10000, -mp.mpf(2 * int(r)) / WIDTH) for r in PAIRS]
    exact = [[f(mp.mpf(int(t)) * w) for t in IDS for w in omegas] for f in (mp.sin, mp.cos)]
    hi = [np.array([float(v) for v in part]).reshape(IDS.size, PAIRS.size) for part in exact]
    lo = [
        np.array([float(v - h) for v, h in zip(part, hl.ravel())]).reshape(hi[0].shape) for part, hl in zip(exact, hi)
    ]

    def error(sin, cos):  # worst |got - exact| over the pairs and both functions, per id
        got = [np.asarray(v, dtype=np.float64) for v in (sin, cos)]
        return np.max([np.abs((g - h) - lo_) for g, h, lo_ in zip(got, hi, lo)], axis=(0, 2))

    table = posenc.sinusoidal(IDS, WIDTH)
    unit = np.zeros((IDS.size, WIDTH))
    unit[:, 0::2] = 1.0  # RoPE turns (1, 0) into (cos, sin): the same values as the table
    assert np.array_equal(posenc.rope(unit, IDS)[:, 0::2], table[:, 1::2])
    curves = {
        "float16": error(*naive(np.float16)),
        "bfloat16": error(*naive("bfloat16")),
        "float32": error(*naive(np.float32)),
        "float64, naive phases": error(*naive(np.float64)),
        "posenc (accurate path)": error(table[:, 2 * PAIRS], table[:, 2 * PAIRS + 1]),
    }
    accurate, naive64 = curves["posenc (accurate path)"], curves["float64, naive phases"]
    f16, bf16, f32 = curves["float16"], curves["bfloat16"], curves["float32"]
    assert accurate.max() < 1e-15 and 1e-9 < naive64[-1] < 1e-6 and naive64[0] < 1e-15
    assert np.isnan(f16[IDS >= FLOAT16_OVERFLOW]).all() and np.isfinite(f16[IDS < FLOAT16_OVERFLOW]).all()
    with np.errstate(over="ignore"):
        assert np.float16(FLOAT16_OVERFLOW - 1) == 65504 and np.isinf(np.float16(FLOAT16_OVERFLOW))
    assert f16[0] < 1e-3 and f16[IDS < 10**4].max() > 0.5
    assert 1e-3 < bf16[0] < 1e-2 and bf16[IDS < 1000].max() > 0.5
    assert f32[0] < 1e-7 and f32[IDS < 2 * 10**7].max() > 0.5 and f32[IDS <= 4096].max() < 3e-4

    fig, ax = plotting.new_figure(aspect=0.58, narrow={"aspect": 1.25})
    # The pale colours (orange, sky blue: series 4 and 5) go to the two curves drawn thickest.
    styles = {
        "float16": (4, 2.2),
        "bfloat16": (3, 1.3),
        "float32": (5, 2.2),
        "float64, naive phases": (1, 1.3),
        "posenc (accurate path)": (0, 1.3),
    }
    for label, values in curves.items():
        series, width = styles[label]
        ax.plot(IDS, np.maximum(values, 1e-18), color=plotting.colour_of(series=series), label=label, linewidth=width)
    reference = plotting.colour_of(reference=True)
    ax.axvline(FLOAT16_OVERFLOW, color=reference, linewidth=0.8, linestyle=":")
    ax.annotate(
        "float16 overflows\nfrom id 65520",
        (FLOAT16_OVERFLOW, 1e-7),
        xytext=(6, 0),
        textcoords="offset points",
        fontsize=9,
        va="center",
    )
    ax.axhline(1e-15, color=reference, linewidth=0.8, linestyle="--")
    ax.annotate("1e-15", (1.2, 1e-15), xytext=(0, 3), textcoords="offset points", fontsize=9)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks([2.0**k for k in range(0, 32, 8 if plotting.narrow() else 4)] + [2.0**31])
    ax.set_xlim(1, 2**31 * 1.3)
    ax.set_ylim(1e-18, 10)
    ax.set_xlabel("position id t (log scale, base 2)")
    ax.set_ylabel("largest |error| over 8 pairs")
    fig.legend(loc="outside lower center", ncols=2 if plotting.narrow() else 5, handlelength=1.5, columnspacing=1.2)
    plotting.save(fig)


if __name__ == "__main__":
    main()
