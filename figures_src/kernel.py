r"""The kernel, the dot product of two position vectors by their offset, at width 8 and wider.

$K(\Delta) = P(t) \cdot P(t + \Delta)$ is the sum of $\cos(\omega_r \Delta)$ over the $d/2$ pairs: it
peaks at $d/2$ when $\Delta = 0$ and is symmetric in $\Delta$, but it does not fall steadily with
distance. At width 8 it drops to 1.96 at $\Delta = 3$ and climbs back to 3.78 at $\Delta = 6$, because
the fastest pair has nearly completed a turn.
Dots mark whole-number offsets, the only ones positions can have.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Left, K(Δ) at width 8 for offsets -20 to 20: a symmetric wavy curve with its maximum 4 "
    "at Δ = 0, a dip to 1.96 at Δ = ±3 and a second bump of 3.78 at Δ = ±6. Right, K(Δ) "
    "for widths 20, 50 and 128 over offsets -100 to 100, peaking at 10, 25 and 64 at Δ = 0 "
    "and also rising and falling as the offset grows."
)
WIDE = (20, 50, 128)


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
    eight = plotting.colour_of(width=8)
    left.plot(smooth, posenc.kernel(smooth, 8), color=eight, linewidth=1, alpha=0.6)
    left.plot(near, posenc.kernel(near, 8), "o", color=eight, markersize=3.5, label="d = 8")
    # Each label sits in empty space (above the curve's top or below its dip) with a leader line
    # that stops short of the point, so no text touches the curve.
    for delta, text, where, ha in (
        (0, "K(0) = 4 = d/2", (-2.5, 4.55), "right"),
        (3, f"K(3) = {dip:.2f}", (9, 0.55), "left"),
        (6, f"K(6) = {bump:.2f}", (10, 4.55), "left"),
    ):
        left.annotate(
            text,
            (delta, posenc.kernel(delta, 8)),
            xytext=where,
            ha=ha,
            va="center",
            fontsize=9,
            arrowprops=dict(arrowstyle="-", color=plotting.colour_of(reference=True), lw=0.7, shrinkA=2, shrinkB=5),
        )
    left.set(xlabel="offset Δ (positions)", ylabel="K(Δ)", title="d = 8", ylim=(0, 5.0))

    for width in WIDE:
        right.plot(
            far, posenc.kernel(far, width), color=plotting.colour_of(width=width), linewidth=1.2, label=f"d = {width}"
        )
        right.annotate(
            f"{width // 2}", (0, width / 2), xytext=(6, 0), textcoords="offset points", va="center", fontsize=9
        )
    right.set(xlabel="offset Δ (positions)", ylabel="K(Δ)", title="wider models: peak d/2")
    right.legend(loc="upper right", bbox_to_anchor=(1.0, 0.95))
    plotting.save(fig)


if __name__ == "__main__":
    main()
