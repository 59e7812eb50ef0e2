r"""The same 100 positions encoded at width 20 and at width 50.

Both encodings start with the same fastest pair ($\omega = 1$), and both frequency grids run from 1
toward $1/10000$, but width 50 spaces its 25 pairs more closely: its channel 10 repeats the
wave that width 20 keeps in channel 4 (outlined), and the pairs that turn at least half a
cycle over these positions fill 8 channels at width 20 but 20 at width 50. Columns are drawn
at the same size in both panels.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two heatmaps of the sinusoidal encoding of positions 0 to 99, rows = positions, coloured "
    "from -1 (blue) through 0 (the page's background) to +1 (red): 20 channels on the left "
    "and 50 on the right. Channels 0 and 1 are identical in both. The pairs that turn at least "
    "half a cycle over these positions fill channels 0 to 7 at width 20 but channels 0 to 19 "
    "at width 50, and the outlined channel 4 of width 20 matches the outlined channel 10 of width 50."
)
WIDTHS = (20, 50)
POSITIONS = 100


def main():
    ids = np.arange(POSITIONS)
    small, large = (posenc.sinusoidal(ids, width) for width in WIDTHS)
    # Same first pair at every width; equal exponents 2r/d give equal channels (4/20 = 10/50).
    assert np.allclose(small[:, :2], large[:, :2])
    assert np.allclose(small[:, 4:6], large[:, 10:12])
    assert np.isclose(posenc.frequencies(20)[2], posenc.frequencies(50)[5])
    # Pairs turning at least half a cycle (phase π) by the last position: 4 of 10 and 10 of 25.
    turning = [int(np.sum(posenc.frequencies(w) * (POSITIONS - 1) >= np.pi)) for w in WIDTHS]
    assert turning == [4, 10]

    # Narrow: the two tables one above the other, each as wide as the phone.
    fig, axes = plotting.new_figure(
        aspect=0.55, ncols=2, sharey=True, width_ratios=WIDTHS, narrow={"aspect": 1.45, "height_ratios": (1, 1)}
    )
    for ax, table, width in zip(axes, (small, large), WIDTHS):
        image = plotting.heatmap(ax, table, extent=(-0.5, width - 0.5, POSITIONS - 0.5, -0.5))
        ax.set_xticks(np.arange(0, width, 4 if width == 20 else 10))
        ax.set_xlabel("channel i")
        ax.set_title(f"d = {width} ({width // 2} pairs)")
    for ax, channel in zip(axes, (4, 10)):  # the same wave at both widths
        ax.add_patch(
            plotting.plt.Rectangle(
                (channel - 0.5, -0.5),
                1,
                POSITIONS,
                fill=False,
                edgecolor=plotting.colour_of(reference=True),
                linewidth=1.4,
            )
        )
    for ax in axes if plotting.narrow() else axes[:1]:
        ax.set_ylabel("position t")
    below = {"location": "bottom", "shrink": 0.8, "aspect": 30} if plotting.narrow() else {"shrink": 0.9}
    fig.colorbar(image, ax=axes, label="value", **below)
    plotting.save(fig)


if __name__ == "__main__":
    main()
