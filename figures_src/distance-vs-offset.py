r"""The squared distance between two position vectors depends only on their offset.

$\lVert P(t) - P(t + \Delta) \rVert^2$ computed from the vectors themselves, for four starting
positions $t$: the four sets of points coincide and lie on $d - 2K(\Delta)$ (the wide pale curve),
because every $P(t)$ has squared length $d/2$. The distance is the same at any start, yet it
does not grow steadily with Δ.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two panels of squared distance against offset 0 to 30, at width 8 and width 128. In each, "
    "points for starting positions 0, 7, 100 and 1000 lie exactly on top of each other and on "
    "one wide pale curve. At width 8 the curve rises from 0 to 4.07 at offset 3, falls back to "
    "0.43 at offset 6 and keeps oscillating; at width 128 it rises steeply to 33.6 at "
    "offset 5, then climbs slowly, with small dips, to 55.5 at offset 30."
)
STARTS = (0, 7, 100, 1000)
OFFSETS = np.arange(31)
STYLES = (
    (plotting.colour_of(series=0), "o", 7.5),
    (plotting.colour_of(series=1), "D", 5),
    (plotting.colour_of(series=2), "s", 3.2),
    (plotting.colour_of(series=3), "o", 1.8),
)


def distances(width):
    """Rows of |P(t) - P(t + Δ)|² for every start t in STARTS, from the vectors themselves."""
    rows = []
    for t in STARTS:
        vectors = posenc.sinusoidal(t + OFFSETS, width)
        rows.append(((vectors - vectors[0]) ** 2).sum(axis=1))
    return np.array(rows)


def main():
    fig, axes = plotting.new_figure(aspect=0.4, ncols=2)
    for ax, width in zip(axes, (8, 128)):
        rows = distances(width)
        curve = posenc.squared_distance(OFFSETS, width)
        # Identity: the same curve for every start, equal to d - 2 K(Δ).
        assert np.allclose(rows, curve[None, :], atol=1e-9)
        assert np.allclose(curve, width - 2 * posenc.kernel(OFFSETS, width))
        assert np.any(np.diff(curve) < 0)  # not monotonic in the offset
        stated = {8: {3: 4.07, 6: 0.43}, 128: {5: 33.6, 30: 55.5}}[width]  # the numbers in ALT
        assert all(round(curve[k], 2 if width == 8 else 1) == v for k, v in stated.items())
        smooth = np.linspace(0, OFFSETS[-1], 601)
        ax.plot(
            smooth,
            posenc.squared_distance(smooth, width),
            color=plotting.colour_of(reference=True),
            linewidth=2.5,
            alpha=0.25,
            label="d - 2K(Δ)",
        )
        for t, row, (colour, marker, size) in zip(STARTS, rows, STYLES):
            filled = colour if size < 3 else "none"
            ax.plot(
                OFFSETS,
                row,
                linestyle="none",
                marker=marker,
                markersize=size,
                color=colour,
                markerfacecolor=filled,
                markeredgewidth=0.9,
                label=f"t = {t}",
            )
        ax.set(xlabel="offset Δ (positions)", ylabel="|P(t) - P(t + Δ)|²", title=f"d = {width}")
    axes[0].legend(loc="upper right", ncols=2, bbox_to_anchor=(1.0, 1.02))
    axes[0].set_ylim(0, 11)
    plotting.save(fig)


if __name__ == "__main__":
    main()
