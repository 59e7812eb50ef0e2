r"""The same channel index carries a different wave at width 20 and at width 50.

Channel $i = 2r$ holds $\sin(t \cdot 10000^{-i/d})$, so its wavelength $2\pi \cdot 10000^{i/d}$ depends on
the width $d$ as well as on $i$. Channel 0 is identical at every width; for higher indices the wave
is much faster at width 50, where the index sits earlier in a longer frequency grid. Each
panel states its channel's wavelength $\lambda$ in positions; each width has its own colour.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "A grid of line plots, four rows for channels 0, 6, 12 and 18 and two columns for widths "
    "20 and 50, each showing the channel's value over positions 0 to 99. Wavelengths, left "
    "then right: channel 0 6.3 and 6.3; channel 6 99.6 and 19.0; channel 12 1578 and 57.3; "
    "channel 18 25014 and 173.1, so at width 20 channels 12 and 18 hardly move while at "
    "width 50 they still oscillate."
)
WIDTHS = (20, 50)
CHANNELS = (0, 6, 12, 18)
STATED = {
    (0, 20): "6.3",
    (0, 50): "6.3",
    (6, 20): "99.6",
    (6, 50): "19.0",
    (12, 20): "1578",
    (12, 50): "57.3",
    (18, 20): "25014",
    (18, 50): "173.1",
}


def wavelength_text(value):
    """One decimal below 1000 positions, none above."""
    return f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def main():
    ids = np.arange(100)
    tables = {w: posenc.sinusoidal(ids, w) for w in WIDTHS}
    assert np.allclose(tables[20][:, 0], tables[50][:, 0])  # channel 0 does not depend on d
    for (i, w), text in STATED.items():
        lam = posenc.wavelengths(w)[i // 2]
        assert np.isclose(lam, 2 * np.pi * 10000 ** (i / w)) and wavelength_text(lam) == text

    fig, axes = plotting.new_figure(aspect=0.62, nrows=len(CHANNELS), ncols=len(WIDTHS), sharex=True, sharey=True)
    for row, i in enumerate(CHANNELS):
        for col, w in enumerate(WIDTHS):
            ax = axes[row, col]
            ax.axhline(0, color=plotting.colour_of(reference=True), linewidth=0.5)
            ax.plot(ids, tables[w][:, i], color=plotting.colour_of(width=w), linewidth=1.3, label=f"d = {w}")
            # Above the curves' crest (the y limit leaves a band there), so nothing runs under it.
            ax.text(0.99, 0.98, f"λ = {STATED[i, w]}", transform=ax.transAxes, ha="right", va="top", fontsize=9)
        axes[row, 0].set_ylabel(f"i = {i}", rotation=0, ha="right", va="center")
    for col, w in enumerate(WIDTHS):
        axes[0, col].set_title(f"d = {w}")
        axes[-1, col].set_xlabel("position t")
    axes[0, 0].set(ylim=(-1.2, 2.1), yticks=[-1, 0, 1])
    fig.supylabel("value of channel i (a sine)", fontsize=10)
    plotting.save(fig)


if __name__ == "__main__":
    main()
