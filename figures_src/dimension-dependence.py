r"""How the frequency grid changes with the model width.

Each row marks the $d/2$ pair frequencies $\omega_r = 10000^{-2r/d}$ of one width on a log axis.
Every grid starts at $\omega = 1$ and stops one step above $1/10000$; a wider model fills that
same range with more pairs, so the ratio between neighbouring frequencies, $10000^{-2/d}$, creeps
toward 1.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Five rows of tick marks on a logarithmic frequency axis from 0.0001 to 1, one row per "
    "width: 4 ticks for d = 8, 10 for d = 20, 25 for d = 50, 64 for d = 128 and 256 for "
    "d = 512. All rows start at 1 and end near 0.0001; the ratio between neighbouring "
    "frequencies is 0.100, 0.398, 0.692, 0.866 and 0.965, and the slowest frequency is "
    "0.001 at d = 8 but 0.00012 at d = 128."
)
WIDTHS = (8, 20, 50, 128, 512)
RATIOS = {8: "0.100", 20: "0.398", 50: "0.692", 128: "0.866", 512: "0.965"}


def main():
    grids = {w: posenc.frequencies(w) for w in WIDTHS}
    for w, omega in grids.items():
        ratio = 10000 ** (-2 / w)
        assert omega.size == w // 2 and omega[0] == 1.0
        assert np.allclose(omega[1:] / omega[:-1], ratio) and f"{ratio:.3f}" == RATIOS[w]
        assert np.isclose(omega[-1] * ratio, 1e-4)  # one more step would reach 1/10000
    assert round(grids[8][-1], 6) == 0.001 and round(grids[128][-1], 5) == 0.00012

    fig, ax = plotting.new_figure(aspect=0.42, narrow={"aspect": 0.95})
    rows = np.arange(len(WIDTHS))[::-1]  # d = 8 on top
    ticks = ax.eventplot(
        [grids[w] for w in WIDTHS],
        lineoffsets=rows,
        linelengths=0.6,
        colors=[plotting.colour_of(width=w) for w in WIDTHS],
        linewidths=[1.6, 1.4, 1.2, 0.9, 0.6],
    )
    for collection, w in zip(ticks, WIDTHS):
        collection.set_label(f"d = {w}")
    ax.axvline(1e-4, color=plotting.colour_of(reference=True), linewidth=0.8, linestyle="--")
    ax.text(1.1e-4, len(WIDTHS) - 0.45, "1/10000", fontsize=9, va="center")
    for row, w in zip(rows, WIDTHS):  # in the text colour: a row's colour is its tick marks'
        ax.text(1.35, row, f"ratio {RATIOS[w]}", va="center", fontsize=9)
    ax.set_xscale("log")
    ax.set_xlim(6e-5, 1.3)
    if plotting.narrow():
        ax.set_xticks([1e-4, 1e-2, 1])
    ax.set_ylim(-0.6, len(WIDTHS) - 0.2)
    ax.set_yticks(rows, [f"d = {w}" + ("\n" if plotting.narrow() else " ") + f"({w // 2} pairs)" for w in WIDTHS])
    ax.tick_params(axis="y", length=0)
    ax.spines["left"].set_visible(False)
    ax.set_xlabel(r"frequency $\omega_r$ (radians per position)")
    plotting.save(fig)


if __name__ == "__main__":
    main()
