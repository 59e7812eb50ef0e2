r"""Four sine channels of the width-16 encoding, from fast to slow.

Channels 0, 2, 4 and 6 over positions 0 to 200. Channel $2r$ has wavelength
$2\pi \cdot 10000^{2r/16}$: about 6.3 positions for channel 0, 20 for channel 2, 63 for channel 4 and
199 for channel 6, so each band is about 3.2 times slower than the one before. The arrow
in each panel spans one wavelength.
"""

import numpy as np

import posenc
from posenc.site import explainer_demo
from posenc.site import plotting

ALT = (
    "Four stacked sine waves over positions 0 to 200 for channels 0, 2, 4 and 6 of the width-16 "
    "encoding, with wavelengths 6.3, 19.9, 62.8 and 198.7 positions: channel 0 oscillates about "
    "32 times, channel 6 completes about one cycle."
)
WIDTH, LAST = explainer_demo.WIDTHS["bands"], 200
CHANNELS = (0, 2, 4, 6)


def main():
    omega = posenc.frequencies(WIDTH)
    wavelength = posenc.wavelengths(WIDTH)
    assert round(wavelength[0], 1) == 6.3 and round(wavelength[3]) == 199
    assert np.allclose(wavelength.round(1)[:4], [6.3, 19.9, 62.8, 198.7])
    assert np.allclose(wavelength[1:] / wavelength[:-1], 10000 ** (2 / WIDTH))  # geometric steps
    ints = np.arange(LAST + 1)
    table = posenc.sinusoidal(ints, WIDTH)

    fig, axes = plotting.new_figure(aspect=0.62, nrows=len(CHANNELS), sharex=True)
    t = np.linspace(0, LAST, 1201)
    for ax, channel in zip(axes, CHANNELS):
        r = channel // 2
        assert np.allclose(np.sin(omega[r] * ints), table[:, channel])  # the curve is the channel
        ax.plot(t, np.sin(omega[r] * t), color=plotting.colour_of(wave="sin"), linewidth=1.2)
        ax.annotate(
            "",
            xy=(wavelength[r], 1.3),
            xytext=(0, 1.3),
            arrowprops={"arrowstyle": "<->", "color": plotting.colour_of(reference=True), "shrinkA": 0, "shrinkB": 0},
        )
        # Beside a short arrow; above a long one, whose end leaves no room beside it.
        inside = wavelength[r] > LAST / 2
        ax.text(
            wavelength[r] / 2 if inside else wavelength[r] + 2,
            1.45 if inside else 1.3,
            rf"$\lambda$ = {wavelength[r]:.1f}",
            ha="center" if inside else "left",
            va="bottom" if inside else "center",
            fontsize=9,
        )
        ax.set_ylim(-1.15, 2.3)
        ax.set_yticks([-1, 0, 1])
        ax.set_ylabel(
            f"channel {channel}\n" + rf"$\omega$ = {omega[r]:.3g}", rotation=0, ha="right", va="center", fontsize=9
        )
    axes[-1].set_xlim(0, LAST)
    axes[-1].set_xlabel("position t")
    axes[0].set_title(plotting.wrap(f"sin(t $\\omega_r$) at width {WIDTH},", "channel 2r"), fontsize=10)
    plotting.save(fig)


if __name__ == "__main__":
    main()
