"""Binary counting beside the sinusoidal encoding of the same 16 positions.

Left: the bits of 0 to 15, lowest bit first. Bit $b$ repeats every $2^{b+1}$ numbers, so bit 0
flips at every step and bit 3 only once. Right: the width-8 encoding of positions 0 to 15;
its fast pair cycles about two and a half times, the second pair makes a quarter turn and
the last two barely move. Both codes give every position a distinct row built from fast and
slow columns; the sinusoidal one varies smoothly instead of jumping.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two heatmaps with positions 0 to 15 down the rows. Left, four bit columns: bit 0 flips "
    "15 times, bit 1 7 times, bit 2 3 times and bit 3 once, with periods 2, 4, 8 and 16. "
    "Right, the eight channels of the width-8 sinusoidal encoding, pair wavelengths 6.3, 63, "
    "628 and 6283 positions: channels 0 and 1 change colour every few rows, channels 2 and "
    "3 drift slowly, and channels 4 to 7 stay nearly constant."
)
POSITIONS = 16
WIDTH = 8


def short(wavelength):
    """A wavelength as the figure prints it: one decimal below 10, none above."""
    return f"{wavelength:.0f}" if wavelength > 10 else f"{wavelength:.1f}"


def main():
    ids = np.arange(POSITIONS)
    bits = (ids[:, None] >> np.arange(4)) & 1  # column b = bit b, lowest first
    table = posenc.sinusoidal(ids, WIDTH)
    flips = np.abs(np.diff(bits, axis=0)).sum(axis=0)
    assert flips.tolist() == [15, 7, 3, 1]
    wavelengths = posenc.wavelengths(WIDTH)
    assert [short(x) for x in wavelengths] == ["6.3", "63", "628", "6283"]
    # The analogy: total movement per pair falls from fast to slow, as flips do from bit 0 to 3.
    movement = np.abs(np.diff(table, axis=0)).sum(axis=0).reshape(-1, 2).sum(axis=1)
    assert np.all(np.diff(movement) < 0) and movement[2:].max() < 0.2
    assert len({row.tobytes() for row in table.round(12)}) == POSITIONS  # every row distinct

    # Narrow: the bits above the encoding, both as tall as their 16 rows need.
    fig, (left, right) = plotting.new_figure(
        aspect=0.5, ncols=2, width_ratios=(4, 8.5), narrow={"aspect": 2.1, "height_ratios": (1, 1)}
    )
    image = plotting.heatmap(left, bits, signed=False, extent=(-0.5, 3.5, POSITIONS - 0.5, -0.5))
    plotting.annotate_cells(left, image, bits, fmt="{:.0f}", fontsize=9)
    left.set(xticks=range(4), yticks=ids[::5], xlabel="bit b (lowest first)", ylabel="position t", title="binary")
    top = left.secondary_xaxis("top")
    top.set_xticks(range(4), [f"{2 ** (b + 1)}" for b in range(4)], fontsize=9)
    top.set_xlabel("period (positions)", fontsize=9)

    plotting.heatmap(right, table, colorbar_label="value", extent=(-0.5, WIDTH - 0.5, POSITIONS - 0.5, -0.5))
    right.set(
        xticks=range(WIDTH), yticks=ids[::5], xlabel="channel i (even: sin, odd: cos)", title=f"sinusoidal, d = {WIDTH}"
    )
    top = right.secondary_xaxis("top")
    top.set_xticks(np.arange(0.5, WIDTH, 2), [short(x) for x in wavelengths], fontsize=9)
    top.set_xlabel("pair wavelength (positions)", fontsize=9)
    plotting.save(fig)


if __name__ == "__main__":
    main()
