"""Two position vectors at width 8, channel by channel.

$P(0)$ and $P(2)$ of the sinusoidal encoding with $d = 8$, base 10000 and the interleaved layout:
even channels hold sines, odd channels cosines. Every sine of $P(0)$ is 0 and every cosine 1;
at position 2 the fast pair has turned most, the slowest pair hardly at all.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two bar charts of the eight channels of the width-8 sinusoidal encoding. "
    "P(0) alternates 0 and 1; P(2) reads 0.91, -0.42, 0.20, 0.98, 0.02, 1.00, 0.00, 1.00, "
    "with sine channels in blue and cosine channels in vermillion."
)
WIDTH = 8
POSITIONS = (0, 2)


def main():
    vectors = posenc.sinusoidal(POSITIONS, WIDTH)
    # The figure states these values in its alt text; fail rather than disagree with them.
    assert np.allclose(vectors[0], np.tile([0.0, 1.0], WIDTH // 2))
    assert np.allclose(vectors[1, :2], [0.9093, -0.4161], atol=5e-5)

    fig, axes = plotting.new_figure(aspect=0.36, ncols=2, sharey=True)
    channels = np.arange(WIDTH)
    colours = [plotting.colour_of(wave="sin" if c % 2 == 0 else "cos") for c in channels]
    for ax, position, vector in zip(axes, POSITIONS, vectors):
        ax.bar(channels, vector, color=colours)
        ax.axhline(0, color=plotting.colour_of(reference=True), linewidth=0.8)
        for c, value in zip(channels, vector):
            ax.annotate(
                f"{value:.2f}",
                (c, value),
                ha="center",
                va="bottom" if value >= 0 else "top",
                xytext=(0, 2 if value >= 0 else -2),
                textcoords="offset points",
                fontsize=9,
            )
        ax.set_title(f"P({position})")
        ax.set_xticks(channels)
        ax.set_xlabel("channel i (even: sin, odd: cos)")
        ax.set_ylim(-1.25, 1.25)
    axes[0].set_ylabel("value")
    plotting.save(fig)


if __name__ == "__main__":
    main()
