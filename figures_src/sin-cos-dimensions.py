r"""Each channel pair is a sine and a cosine wave; a position vector is a vertical slice.

Width 8: pair $r$ holds $\sin(t\omega_r)$ in channel $2r$ and $\cos(t\omega_r)$ in channel $2r + 1$,
with wavelengths 6.3, 63, 628 and 6283 positions. The dashed line at $t = 10$ cuts every wave once;
the eight values it meets, read top to bottom, are the vector $P(10)$ shown on the right.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Four stacked panels, one per channel pair of the width-8 encoding, each with a sine and a "
    "cosine wave over positions 0 to 40: pair 0 repeats every 6.3 positions, pair 1 every 63, "
    "pairs 2 and 3 barely move. A dashed line at position 10 reads off P(10) = "
    "[-0.54, -0.84, 0.84, 0.54, 0.10, 1.00, 0.01, 1.00], shown as bars on the right."
)
WIDTH, SLICE, LAST = 8, 10, 40


def main():
    omega = posenc.frequencies(WIDTH)
    t = np.linspace(0, LAST, 801)
    vector = posenc.sinusoidal([SLICE], WIDTH)[0]
    # The drawn waves are the encoding itself: at integer positions they equal the library's table.
    ints = np.arange(LAST + 1)
    waves_at_ints = np.stack([np.sin(np.outer(ints, omega)), np.cos(np.outer(ints, omega))], -1)
    assert np.allclose(waves_at_ints.reshape(ints.size, WIDTH), posenc.sinusoidal(ints, WIDTH))
    assert np.allclose(vector.round(2), [-0.54, -0.84, 0.84, 0.54, 0.10, 1.00, 0.01, 1.00])
    assert np.allclose(posenc.wavelengths(WIDTH).round(1), [6.3, 62.8, 628.3, 6283.2])

    # Narrow: the bar chart goes under the four wave panels instead of beside them.
    narrow = plotting.narrow()
    fig, axes = plotting.new_figure(
        aspect=0.7,
        nrows=WIDTH // 2,
        ncols=2,
        gridspec_kw={"width_ratios": [3.2, 1]},
        narrow={"nrows": WIDTH // 2 + 1, "ncols": 1, "aspect": 2.2, "height_ratios": [1] * (WIDTH // 2) + [2.4]},
    )
    waves = axes[:-1] if narrow else axes[:, 0]
    sine, cosine, reference = (
        plotting.colour_of(wave="sin"),
        plotting.colour_of(wave="cos"),
        plotting.colour_of(reference=True),
    )
    for r, ax in enumerate(waves):
        ax.plot(t, np.sin(omega[r] * t), color=sine, label="sin (channel 2r)")
        ax.plot(t, np.cos(omega[r] * t), color=cosine, label="cos (channel 2r+1)")
        for value, colour in zip(vector[2 * r : 2 * r + 2], (sine, cosine)):  # where the slice meets each wave
            ax.plot(SLICE, value, "o", color=colour, markeredgecolor=reference, markeredgewidth=0.8, markersize=5)
        ax.axvline(SLICE, color=reference, linestyle="--", linewidth=0.8)
        ax.set_ylim(-1.3, 1.3)
        ax.set_yticks([-1, 0, 1])
        ax.set_ylabel(
            f"pair {r}\n" + rf"$\lambda$ = {2 * np.pi / omega[r]:.1f}", rotation=0, ha="right", va="center", fontsize=9
        )
        if r < len(waves) - 1:
            ax.tick_params(labelbottom=False)
        ax.set_xlim(0, LAST)
    waves[0].legend(
        loc="lower left", bbox_to_anchor=(0, 1.0), ncols=1 if narrow else 2, borderaxespad=0.1, handlelength=1.5
    )
    waves[-1].set_xlabel("position t")

    bars = axes[-1] if narrow else plotting.span_axes(axes[:, 1])  # one bar chart beside the four wave panels
    channels = np.arange(WIDTH)
    bars.barh(channels, vector, color=[sine, cosine] * (WIDTH // 2))
    bars.axvline(0, color=reference, linewidth=0.8)
    for c, value in zip(channels, vector):
        bars.text(
            value + (0.05 if value >= 0 else -0.05),
            c,
            f"{value:.2f}",
            va="center",
            ha="left" if value >= 0 else "right",
            fontsize=9,
        )
    bars.set_yticks(channels)
    bars.invert_yaxis()
    bars.set_xlim(-2.2, 2.0)
    bars.set_xticks([-1, 0, 1])
    bars.set_ylabel("channel i")
    bars.set_xlabel("value")
    bars.set_title(f"P({SLICE})")
    plotting.save(fig)


if __name__ == "__main__":
    main()
