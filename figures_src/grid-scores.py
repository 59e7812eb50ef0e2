"""The position pattern of three 2-D schemes: one query patch against every key patch.

A 16 x 16 grid, the query patch at row 8, column 8 (ringed in the query's colour). Left: axial 2-D RoPE, width 32,
base 100, with the same all-ones vector as query and key, so each score is position alone.
Middle: RoPE-Mixed with the same content and the axial frequencies' magnitudes, half the pairs
pointing 30° from the column axis and half at 120° (fixed here; the model learns them). Right:
the dot product of two rows of MAE's 2-D sin-cos table, width 32, base 10000. Each map is
divided by its value at the query itself, its largest, and one colour scale serves all three.
The axial map is a row pattern plus a column pattern; the mixed map is the axial pattern turned
by 30°.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Three 16 by 16 heat maps of a score between the ringed query patch at row 8, column 8 and "
    "every patch, 1 at the query and lower elsewhere. Left, axial RoPE: a cross of high values "
    "along the query's row and column, lower values away from both. Middle, RoPE-Mixed: the same kind of "
    "pattern tilted by 30 degrees, its ridges running along oblique lines. Right, the 2-D sin-cos "
    "table: a cross along the query's row and column that fades more slowly than the axial one."
)
SIDE, WIDTH, QUERY = 16, 32, (8, 8)
ANGLE = np.pi / 6  # the direction of the first half of RoPE-Mixed's pairs, from the column axis


def mixed_frequencies(base):
    """(fx, fy) per pair: the axial magnitudes, half the pairs along ANGLE and half perpendicular to it."""
    quarter = WIDTH // 4
    magnitude = base ** (-np.arange(quarter) / quarter)
    angles = np.repeat([ANGLE, ANGLE + np.pi / 2], quarter)
    return np.stack([np.tile(magnitude, 2) * np.cos(angles), np.tile(magnitude, 2) * np.sin(angles)])


def query_scores(rotated):
    """The score of the query patch's rotated vector with every patch's, as a SIDE x SIDE map."""
    return (rotated @ rotated[QUERY[0] * SIDE + QUERY[1]]).reshape(SIDE, SIDE)


def double_difference(scores):
    """What is left of a map after its best fit by a row pattern plus a column pattern."""
    return scores - scores.mean(0, keepdims=True) - scores.mean(1, keepdims=True) + scores.mean()


def main():
    ones = np.ones((SIDE * SIDE, WIDTH))
    axial = query_scores(posenc.axial_rope_2d(ones, SIDE, SIDE, base=100.0))
    mixed = query_scores(posenc.mixed_rope_2d(ones, SIDE, SIDE, mixed_frequencies(100.0)))
    table = query_scores(posenc.sincos_2d_table(SIDE, SIDE, WIDTH, layout="mae"))
    # What the caption says: axial is a row part plus a column part, mixed is not, and with
    # all-ones content axial RoPE is twice the sin-cos table's dot product at the same base.
    assert np.abs(double_difference(axial)).max() < 1e-12 < 0.1 < np.abs(double_difference(mixed)).max()
    same_base = query_scores(posenc.sincos_2d_table(SIDE, SIDE, WIDTH, layout="mae", base=100.0))
    assert np.allclose(axial, 2 * same_base, rtol=0, atol=1e-12)
    maps = [scores / scores[QUERY] for scores in (axial, mixed, table)]
    assert all(np.isclose(m.max(), 1.0) and np.argmax(m) == QUERY[0] * SIDE + QUERY[1] for m in maps)

    narrow = plotting.narrow()
    fig, axes = plotting.new_figure(aspect=0.4, ncols=3, narrow={"aspect": 2.9})
    titles = ("axial RoPE", "RoPE-Mixed (30°)", "2-D sin-cos table")
    lowest = min(float(m.min()) for m in maps)
    assert lowest > 0.2  # every score is positive here: one sequential scale from the lowest to 1
    for ax, values, title in zip(axes, maps, titles, strict=True):
        image = plotting.heatmap(ax, values, signed=False)
        image.set_clim(lowest, 1)
        ax.plot(*QUERY[::-1], "o", markersize=9, mfc="none", mec=plotting.colour_of(side="query"), mew=2)
        ax.set(title=title, xticks=[0, 8, 15], yticks=[0, 8, 15], xlabel="column", ylabel="row")
        ax.set_aspect("equal")
    where = {"location": "bottom", "shrink": 0.8, "aspect": 30} if narrow else {"shrink": 0.85}
    fig.colorbar(image, ax=list(np.ravel(axes)), label="score / score at the query", **where)
    plotting.save(fig)


if __name__ == "__main__":
    main()
