"""How much of each pair's circle a window of positions covers, at the training and a target length.

Head width 128, base 10000. Each pair r turns once every 2π·10000^(2r/128) positions; a window of L
positions carries it through L / wavelength turns, drawn here capped at one full turn. At the
training length 4096 the pairs past the critical dimension (r > 45.03) never complete a turn;
at the target length 32768 they reach angles that training never showed them.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Fraction of a full turn covered by each of the 64 pairs, against the pair index. Both curves "
    "stay at 1 for the fast pairs. The training-length curve (4096 positions) drops below 1 after "
    "pair 45, the critical dimension, and falls to about 0.08 at pair 63; the target-length curve "
    "(32768 positions) drops below 1 after pair 59 and ends near 0.60. The shaded band between the "
    "curves marks angles reached at the target length but never in training."
)
D, BASE, TRAINED, TARGET = 128, 10000.0, 4096, 32768


def main():
    r = np.arange(D // 2)
    wavelength = posenc.wavelengths(D, base=BASE)
    trained = np.minimum(TRAINED / wavelength, 1.0)
    target = np.minimum(TARGET / wavelength, 1.0)
    r_c = posenc.critical_dimension(D, TRAINED, base=BASE)
    r_target = posenc.critical_dimension(D, TARGET, base=BASE)
    # The numbers of the caption and the alt text.
    assert round(r_c, 2) == 45.03 and np.array_equal(trained < 1, r > r_c)
    assert int(np.floor(r_target)) == 59 and np.array_equal(target < 1, r > r_target)
    assert round(trained[-1], 2) == 0.08 and round(target[-1], 2) == 0.60

    fig, ax = plotting.new_figure(aspect=0.45)
    ax.plot(r, trained, color=plotting.colour_of(series=0), label=f"training length {TRAINED}")
    ax.plot(r, target, color=plotting.colour_of(series=1), linestyle="--", label=f"target length {TARGET}")
    ax.fill_between(
        r,
        trained,
        target,
        color=plotting.colour_of(series=1),
        alpha=0.15,
        linewidth=0,
        label="angles never seen in training",
    )
    ax.axvline(r_c, color=plotting.colour_of(reference=True), linewidth=0.7, linestyle=":")
    ax.annotate(
        f"critical dimension r_c = {r_c:.2f}",
        (r_c, 0.5),
        xytext=(-4, 0),
        textcoords="offset points",
        ha="right",
        fontsize=9,
    )
    ax.set_xlim(0, D // 2 - 1)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("pair index r")
    ax.set_ylabel("fraction of a full turn covered")
    ax.legend(loc="lower left")
    plotting.save(fig)


if __name__ == "__main__":
    main()
