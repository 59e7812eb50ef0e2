r"""Wavelengths of the sine/cosine pairs at widths 8, 20, 128 and 512.

Pair $r$ has wavelength $2\pi \cdot 10000^{2r/d}$ positions. Drawn against the pair's relative
place $2r/d$, every width samples the same straight line on the log axis: a geometric progression
that starts at $2\pi$ and stops one step short of $10000 \cdot 2\pi$. A wider model samples it more
finely.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Log-scale plot of wavelength in positions against the relative pair index 2r/d for "
    "widths 8, 20, 128 and 512. All points lie on one straight line from 2π (6.28) toward "
    "10000 · 2π (62832); width 8's four pairs are labelled 6.28, 62.83, 628.32 and 6283.19, "
    "and width 512's 256 pairs are so close that they form a continuous band."
)
WIDTHS = (8, 20, 128, 512)
# Width 512's 256 points sit about 2 px apart, so they are drawn as a thick line.
STYLES = {
    8: dict(marker="o", markersize=7, linestyle="none"),
    20: dict(marker="s", markersize=5, linestyle="none"),
    128: dict(marker="o", markersize=2.5, linestyle="none"),
    512: dict(linewidth=5, solid_capstyle="butt"),
}


def main():
    eight = posenc.wavelengths(8)
    assert eight.round(2).tolist() == [6.28, 62.83, 628.32, 6283.19]
    for width in WIDTHS:
        lam = posenc.wavelengths(width)
        # Geometric progression: first term 2π, constant ratio 10000^(2/d), and the next
        # term after the last pair would be exactly 10000 · 2π.
        ratio = 10000 ** (2 / width)
        assert np.isclose(lam[0], 2 * np.pi) and np.allclose(lam[1:] / lam[:-1], ratio)
        assert np.isclose(lam[-1] * ratio, 10000 * 2 * np.pi)

    fig, ax = plotting.new_figure(aspect=0.5, narrow={"aspect": 0.95})
    for bound in (2 * np.pi, 10000 * 2 * np.pi):
        ax.axhline(bound, color=plotting.colour_of(reference=True), linewidth=0.8, linestyle="--")
    ax.text(1.0, 2 * np.pi * 1.2, "2π", ha="right", va="bottom")
    ax.text(1.0, 10000 * 2 * np.pi * 1.2, "10000 · 2π", ha="right", va="bottom")
    for width in sorted(WIDTHS, reverse=True):
        place = np.arange(0, width, 2) / width
        ax.plot(
            place,
            posenc.wavelengths(width),
            label=f"d = {width} ({width // 2} pairs)",
            color=plotting.colour_of(width=width),
            **STYLES[width],
        )
    for place, lam in zip(np.arange(0, 8, 2) / 8, eight):
        ax.annotate(f"{lam:.2f}", (place, lam), xytext=(8, -10), textcoords="offset points", fontsize=9)
    ax.set_yscale("log")
    ax.set_ylim(3, 3e5)
    ax.set_xlabel("relative pair index 2r/d")
    ax.set_ylabel("wavelength (positions)")
    if plotting.narrow():  # the empty corner of a phone's plot
        ax.legend(loc="upper left", bbox_to_anchor=(0, 0.84))
    else:
        ax.legend(loc="lower right", bbox_to_anchor=(1, 0.1))
    plotting.save(fig)


if __name__ == "__main__":
    main()
