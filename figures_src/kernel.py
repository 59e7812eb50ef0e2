"""The kernel K(Δ) = P(t) · P(t + Δ) at width 8 and at wider widths.

K(Δ) is the sum of cos(ω_r Δ) over the d/2 pairs: it peaks at d/2 when Δ = 0 and is symmetric
in Δ, but it does not fall steadily with distance. At width 8 it drops to 1.96 at Δ = 3 and
climbs back to 3.78 at Δ = 6, because the fastest pair has nearly completed a turn.
Dots mark whole-number offsets, the only ones positions can have.
"""

import numpy as np

import posenc
from posenc import plotting

ALT = (
    "Left, K(Δ) at width 8 for offsets -20 to 20: a symmetric wavy curve with its maximum 4 "
    "at Δ = 0, a dip to 1.96 at Δ = ±3 and a second bump of 3.78 at Δ = ±6. Right, K(Δ) "
    "for widths 16, 64 and 128 over offsets -100 to 100, peaking at 8, 32 and 64 at Δ = 0 "
    "and also rising and falling as the offset grows."
)
WIDE = {16: plotting.BLUE, 64: plotting.GREEN, 128: plotting.PURPLE}


def main():
    near, far = np.arange(-20, 21), np.arange(-100, 101)
    for width, span in [(8, near)] + [(w, far) for w in WIDE]:
        values = posenc.kernel(span, width)
        assert np.isclose(posenc.kernel(0, width), width / 2) and values.max() <= width / 2 + 1e-12
        assert np.allclose(values, values[::-1])  # symmetric: K(-Δ) = K(Δ)
        assert np.any(np.diff(values[span >= 0]) > 0)  # it rises again somewhere: not monotonic
    dip, bump = posenc.kernel(3, 8), posenc.kernel(6, 8)
    assert round(dip, 2) == 1.96 and round(bump, 2) == 3.78

    fig, (left, right) = plotting.new_figure(aspect=0.4, ncols=2)
    smooth = np.linspace(-20, 20, 801)
    left.plot(smooth, posenc.kernel(smooth, 8), color=plotting.VERMILLION, linewidth=1, alpha=0.6)
    left.plot(near, posenc.kernel(near, 8), "o", color=plotting.VERMILLION, markersize=3.5)
    for delta, text, where, ha in ((0, "K(0) = 4 = d/2", (-1.5, 4.4), "right"),
                                   (3, f"K(3) = {dip:.2f}", (5, 1.0), "left"),
                                   (6, f"K(6) = {bump:.2f}", (8, 4.4), "left")):
        left.annotate(text, (delta, posenc.kernel(delta, 8)), xytext=where, ha=ha, va="center", fontsize=9,
                      arrowprops=dict(arrowstyle="-", color=plotting.GREY, lw=0.7, shrinkB=3))
    left.set(xlabel="offset Δ (positions)", ylabel="K(Δ)", title="d = 8", ylim=(0, 4.8))

    for width, colour in WIDE.items():
        right.plot(far, posenc.kernel(far, width), color=colour, linewidth=1.2, label=f"d = {width}")
        right.annotate(f"{width // 2}", (0, width / 2), xytext=(5, -2), textcoords="offset points",
                       color=colour, fontsize=9)
    right.set(xlabel="offset Δ (positions)", ylabel="K(Δ)", title="wider models: peak d/2")
    right.legend(loc="upper right", bbox_to_anchor=(1.0, 0.95))
    plotting.save(fig)


if __name__ == "__main__":
    main()
