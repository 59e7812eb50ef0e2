r"""The width-20 encoding of positions 0 to 49.

Each row is one position vector P(t), each column one channel (even: sine, odd: cosine).
The left columns change colour every few rows; towards the right the waves are so slow
that a column hardly changes over 50 positions. The boxed cell is channel 4 at $t = 10$,
$\sin(10 / 6.31) = 1.00$, a sine at its crest.
"""

import numpy as np

import posenc
from posenc.site import explainer_demo
from posenc.site import plotting

ALT = (
    "Heatmap of the sinusoidal encoding with width 20 for positions 0 to 49 (rows) and channels "
    "0 to 19 (columns), coloured from -1 (blue) through 0 (the page's background) to +1 (red). "
    "Low channels alternate colour every few rows; high channels stay near 0 (sine) or 1 "
    "(cosine). The cell at position 10, channel 4 is boxed: sin(10 / 6.31) = 1.00."
)
WIDTH, LENGTH = explainer_demo.WIDTHS["heatmap"], 50
MARK_T, MARK_I = 10, 4


def main():
    table = posenc.sinusoidal(np.arange(LENGTH), WIDTH)
    assert np.abs(table).max() <= 1.0 and np.allclose(table[0], np.tile([0.0, 1.0], WIDTH // 2))
    divisor = 1.0 / posenc.frequencies(WIDTH)[MARK_I // 2]  # 10000 ** (4 / 20)
    assert round(divisor, 2) == 6.31 and round(table[MARK_T, MARK_I], 2) == 1.0
    assert np.isclose(table[MARK_T, MARK_I], np.sin(MARK_T / divisor))

    fig, ax = plotting.new_figure(aspect=0.62, narrow={"aspect": 1.25})
    plotting.heatmap(ax, table, colorbar_label="value", extent=(-0.5, WIDTH - 0.5, LENGTH - 0.5, -0.5))
    ax.add_patch(
        plotting.plt.Rectangle((MARK_I - 0.5, MARK_T - 0.5), 1, 1, fill=False, edgecolor="white", linewidth=1.5)
    )
    # The note is the title, not a box on the map: text on the cells would fight their colours.
    ax.set_title(
        plotting.wrap(
            f"boxed: t = {MARK_T}, channel {MARK_I},", f"sin({MARK_T} / {divisor:.2f}) = {table[MARK_T, MARK_I]:.2f}"
        )
    )
    ax.set_xticks(range(0, WIDTH, 2))
    ax.set_yticks(range(0, LENGTH, 5))
    ax.set_xlabel("channel i (even: sin, odd: cos)")
    ax.set_ylabel("position t")
    plotting.save(fig)


if __name__ == "__main__":
    main()
