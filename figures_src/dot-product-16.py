r"""Dot products of the width-16 position vectors of positions 0 to 19.

Cell $(i, j)$ is $P(i) \cdot P(j)$. Every diagonal is constant because the dot product is a sum
of $\cos(\omega_r (i - j))$ and depends only on the distance: the boxed pair, positions 3 and 8,
gives 6.14, and so does every pair 5 apart along the dashed diagonal. The diagonal itself is the
maximum, $d/2 = 8$; away from it the value dips and rises again instead of falling steadily.
"""

import numpy as np

import posenc
from posenc.site import explainer_demo
from posenc.site import plotting

ALT = (
    "A 20-by-20 heatmap of the dot products between width-16 sinusoidal position vectors of "
    "positions 0 to 19, ranging from 3.65 to 8 on the main diagonal. The cells for positions 3 "
    "and 8 are boxed and labelled 6.14; the whole diagonal of distance 5 has that value."
)
WIDTH, LENGTH = explainer_demo.WIDTHS["distance"], 20
FIRST, SECOND = 3, 8  # the boxed pair of positions


def main():
    table = posenc.sinusoidal(np.arange(LENGTH), WIDTH)
    dots = table @ table.T
    offsets = np.subtract.outer(np.arange(LENGTH), np.arange(LENGTH))
    assert np.allclose(dots, posenc.kernel(offsets, WIDTH))  # a function of i - j alone
    assert round(dots[FIRST, SECOND], 2) == 6.14 and np.allclose(np.diag(dots, SECOND - FIRST), dots[FIRST, SECOND])
    assert np.allclose(np.diag(dots), WIDTH / 2)
    assert round(dots.min(), 2) == 3.65

    fig, ax = plotting.new_figure(width=5.2, aspect=0.82, narrow={"aspect": 1.2})
    plotting.heatmap(
        ax, dots, signed=False, colorbar_label="P(i) · P(j)", extent=(-0.5, LENGTH - 0.5, LENGTH - 0.5, -0.5)
    )
    d = SECOND - FIRST
    ax.plot([d, LENGTH - 1], [0, LENGTH - 1 - d], color="white", linestyle="--", linewidth=1)
    for row, col in ((FIRST, SECOND), (SECOND, FIRST)):
        ax.add_patch(plotting.plt.Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, edgecolor="white", linewidth=1.8))
    # The note sits above the map, not on it: text on the cells would fight their colours.
    ax.set_title(
        plotting.wrap(
            f"boxed: P({FIRST}) · P({SECOND}) = {dots[FIRST, SECOND]:.2f},", "as on the whole dashed diagonal"
        ),
        fontsize=10,
    )
    ax.set_aspect("equal")
    ax.set_xticks(range(0, LENGTH, 4 if plotting.narrow() else 2))
    ax.set_yticks(range(0, LENGTH, 4 if plotting.narrow() else 2))
    ax.set_xlabel("position j")
    ax.set_ylabel("position i")
    plotting.save(fig)


if __name__ == "__main__":
    main()
