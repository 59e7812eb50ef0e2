"""ALiBi: a causal bias that falls linearly with distance, at a different slope per head.

Top: the bias that four of eight heads add to the score of query $i$ and key $j$ over a length
of 8, on one colour scale; the blank upper triangle is masked (future keys, minus infinity).
Head $h$ of 8 has slope $2^{-h}$: head 1 penalises distance by 1/2 per position, head 8 by only
1/256. Bottom: the slopes for 8 heads and for 12, where heads 9-12 fall between the first
eight (every other slope of a 16-head model).
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Top: four 8-by-8 lower-triangular heatmaps of the ALiBi bias for heads 1, 2, 4 and 8 of "
    "8, with slopes 1/2, 1/4, 1/16 and 1/256: each entry is minus the slope times the distance "
    "i - j, down to -3.5 for head 1 and -0.027 for head 8, and the upper triangle is masked. "
    "Bottom: slopes on a log-2 axis, 2^-1 to 2^-8 for 8 heads; 12 heads reuse those eight and add "
    "0.707, 0.354, 0.177 and 0.088."
)
N_HEADS, LENGTH, SHOWN = 8, 8, (1, 2, 4, 8)


def main():
    bias = posenc.alibi_bias(N_HEADS, LENGTH)
    slopes8, slopes12 = posenc.alibi_slopes(8), posenc.alibi_slopes(12)
    assert np.allclose(slopes8, 2.0 ** -np.arange(1, 9))
    assert np.allclose(slopes12[:8], slopes8) and np.allclose(slopes12[8:], posenc.alibi_slopes(16)[0:8:2])
    assert np.allclose(slopes12[8:].round(3), [0.707, 0.354, 0.177, 0.088])
    i, j = np.indices((LENGTH, LENGTH))
    assert np.all(np.isneginf(bias[:, i < j]))
    assert np.allclose(bias[:, i >= j], -slopes8[:, None] * (i - j)[i >= j])  # constant along diagonals
    assert bias[0][i >= j].min() == -3.5 and round(bias[-1][i >= j].min(), 3) == -0.027

    # Narrow: the four heads two by two, the slopes below them.
    fig, axes = plotting.new_figure(
        aspect=0.62,
        nrows=2,
        ncols=len(SHOWN),
        gridspec_kw={"height_ratios": [1.1, 1]},
        narrow={"aspect": 2.2, "nrows": 3, "ncols": 2, "height_ratios": [1, 1, 1.5]},
    )
    heads, slope_row = (axes[:2].ravel(), axes[2]) if plotting.narrow() else (axes[0], axes[1])
    low = float(bias[0][i >= j].min())
    for ax, head in zip(heads, SHOWN):
        shown = np.where(i >= j, bias[head - 1], np.nan)  # masked cells are left blank
        image = plotting.heatmap(ax, shown, signed=False, extent=(-0.5, LENGTH - 0.5, LENGTH - 0.5, -0.5))
        image.set_clim(low, 0)
        ax.set_aspect("equal")
        ax.set_title(plotting.wrap(f"head {head}:", f"slope 1/{round(1 / slopes8[head - 1])}"), fontsize=9)
        ax.set_xticks(range(0, LENGTH, 2))
        ax.set_yticks(range(0, LENGTH, 2))
        ax.set_xlabel("key j")
        ax.spines[["left", "bottom"]].set_visible(False)
    for ax in axes[:2, 0] if plotting.narrow() else axes[:1, 0]:
        ax.set_ylabel("query i")
    heads[0].text(LENGTH - 1, 0.5, "masked", ha="right", va="top", fontsize=9)
    below = {"location": "bottom", "aspect": 30} if plotting.narrow() else {}
    fig.colorbar(image, ax=heads, label="bias −slope·(i − j)", shrink=0.8, **below)

    slopes_ax = plotting.span_axes(slope_row)  # the bottom row becomes one wide slope plot
    slopes_ax.plot(np.arange(1, 9), slopes8, "o", color=plotting.colour_of(series=0), markersize=7, label="8 heads")
    slopes_ax.plot(
        np.arange(1, 13),
        slopes12,
        "x",
        color=plotting.colour_of(series=1),
        markersize=7,
        markeredgewidth=1.8,
        label="12 heads",
    )
    for h, slope in enumerate(slopes12[8:], start=9):
        slopes_ax.annotate(
            f"{slope:.3f}", (h, slope), xytext=(7, 0), textcoords="offset points", va="center", fontsize=9
        )
    slopes_ax.set_yscale("log", base=2)
    slopes_ax.set_xticks(range(2 if plotting.narrow() else 1, 13, 2 if plotting.narrow() else 1))
    slopes_ax.set_xlim(0.5, 13.2)
    slopes_ax.set_xlabel("head h")
    slopes_ax.set_ylabel("slope (log scale)")
    slopes_ax.legend(loc="lower left")
    plotting.save(fig)


if __name__ == "__main__":
    main()
