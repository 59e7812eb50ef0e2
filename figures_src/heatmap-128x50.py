"""The sinusoidal encoding of 50 positions at width 128.

Each row is one position vector P(t), each column one channel (interleaved layout: even
channels sine, odd channels cosine). The left columns cycle within a few positions; further
right the pairs turn so slowly that over 50 positions the sines stay near 0 and the cosines
near 1.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Heatmap of the 128-channel sinusoidal encoding, positions 0 to 49 down the rows and "
    "channels 0 to 127 across, coloured from -1 (blue) through 0 (the page's background) to "
    "+1 (red). The first few channels alternate colour every few rows; from channel 88 onward "
    "no sine reaches 0.1, so the columns are almost uniform, close to the background for sines "
    "and red for cosines. Every row has squared length 64."
)
WIDTH = 128
POSITIONS = 50


def main():
    table = posenc.sinusoidal(np.arange(POSITIONS), WIDTH)
    # Row 0 is (0, 1, 0, 1, ...), every row has squared length d/2 = 64, values stay in [-1, 1].
    assert np.allclose(table[0], np.tile([0.0, 1.0], WIDTH // 2))
    assert np.allclose((table**2).sum(axis=1), WIDTH / 2)
    assert np.abs(table).max() <= 1.0
    # The slow channels hardly move: channel 88 is the first sine that stays below 0.1.
    quiet = np.abs(table[:, 0::2]).max(axis=0) < 0.1
    assert 2 * np.argmax(quiet) == 88 and quiet[44:].all()

    # On a phone it is the home page's first screen, under the lead and the ways in: kept short.
    fig, ax = plotting.new_figure(aspect=0.52, narrow={"aspect": 0.62})
    plotting.heatmap(ax, table, colorbar_label="value", extent=(-0.5, WIDTH - 0.5, POSITIONS - 0.5, -0.5))
    ax.set_xticks(np.arange(0, WIDTH, 16))
    ax.set_yticks(np.arange(0, POSITIONS, 10))
    ax.set_xlabel("channel i (even: sin, odd: cos)")
    ax.set_ylabel("position t")
    ax.set_title(f"P(t) for t = 0..{POSITIONS - 1}, d = {WIDTH}")
    plotting.save(fig)


if __name__ == "__main__":
    main()
