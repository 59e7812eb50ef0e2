r"""Dot products between every pair of 50 positions at width 128.

Left: $P(t) \cdot P(s)$ for $t, s = 0, \dots, 49$; the colour is constant along every line parallel
to the diagonal. Right: three rows of that matrix drawn against the offset $s - t$ land on one
curve, the kernel $K(s - t)$, so the comparison depends on the offset alone.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Left, a 50 by 50 heatmap of the dot products of the width-128 encodings of positions "
    "0 to 49: 64 on the diagonal, smaller away from it, in bands parallel to the diagonal. "
    "Right, rows t = 0, 20 and 40 of the matrix plotted against the offset s - t fall on "
    "a single curve that peaks at 64 for offset 0 and is about 30.6 at its lowest."
)
WIDTH = 128
POSITIONS = 50
ROWS = (0, 20, 40)


def main():
    ids = np.arange(POSITIONS)
    vectors = posenc.sinusoidal(ids, WIDTH)
    dots = vectors @ vectors.T
    offsets = ids[None, :] - ids[:, None]
    # Identity: every entry is the kernel of its offset, so each diagonal is constant.
    assert np.allclose(dots, posenc.kernel(offsets, WIDTH))
    for k in range(-POSITIONS + 1, POSITIONS):
        assert np.ptp(np.diagonal(dots, k)) < 1e-9
    assert np.isclose(dots.max(), WIDTH / 2) and round(dots.min(), 1) == 30.6

    fig, (left, right) = plotting.new_figure(aspect=0.44, ncols=2, width_ratios=(1.1, 1))
    # The colour bar goes unlabelled: the title names the quantity, and a label there would sit
    # against the right panel's y label, which names the same quantity.
    image = plotting.heatmap(left, dots, signed=False, extent=(-0.5, POSITIONS - 0.5, POSITIONS - 0.5, -0.5))
    fig.colorbar(image, ax=left)
    left.set_aspect("equal")
    left.set_xlabel("position s")
    left.set_ylabel("position t")
    left.set_title(f"P(t) · P(s) at d = {WIDTH}, t, s = 0..{POSITIONS - 1}")

    span = np.arange(-POSITIONS + 1, POSITIONS)
    right.plot(
        span,
        posenc.kernel(span, WIDTH),
        color=plotting.colour_of(reference=True),
        linewidth=3,
        alpha=0.25,
        label="K(s - t)",
    )
    # Hollow markers of shrinking size, so that coinciding points stay visible.
    styles = (
        (plotting.colour_of(series=0), "o", 7, "none"),
        (plotting.colour_of(series=1), "D", 4.5, "none"),
        (plotting.colour_of(series=2), "o", 2.2, plotting.colour_of(series=2)),
    )
    for row, (colour, marker, size, face) in zip(ROWS, styles):
        right.plot(
            ids - row,
            dots[row],
            linestyle="none",
            marker=marker,
            markersize=size,
            color=colour,
            markerfacecolor=face,
            markeredgewidth=0.9,
            label=f"row t = {row}",
        )
    right.set_xlabel("offset s - t (positions)")
    right.set_ylabel("P(t) · P(s)")
    right.set_title("rows against offset")
    right.legend(loc="upper right")
    plotting.save(fig)


if __name__ == "__main__":
    main()
