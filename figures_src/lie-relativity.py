"""How far rotations of random dense generators are from relative, against how far they are from commuting.

Each curve is one seeded set of two random dense skew-symmetric generators of width 8 (LieRE's
kind, untrained), multiplied by a scale from 0.001 to 3; the point at the left stands for RoPE's
axial 2-D generators, STRING's (the same in a random orthogonal basis) and seeded random
ComRoPE-AP and ComRoPE-LD generators (blocks of 4, seed 0), whose commutator norms and
relativity errors all stay below 1e-12. Positions are the 16 cells of a 4 x 4 grid;
the relativity error is the largest spectral norm of R(p)^T R(q) - R(q - p) over every pair of
them. Both axes are logarithmic above 1e-6 and linear below it, so that zero can be shown.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Log-log plot of the relativity error against the commutator norm. Three curves, one per seed of "
    "random dense generators, rise together from the lower left: the error grows in proportion to the "
    "commutator norm while both are small, then levels off below 2 once the generators are far from "
    "commuting. RoPE, STRING and ComRoPE sit at zero on both axes."
)
WIDTH = 8
SCALES = np.geomspace(1e-3, 3.0, 25)
SEEDS = (0, 1, 2)
GRID = np.array([[row, col] for row in range(4) for col in range(4)], dtype=float)
ZERO_BAND = 1e-6


def main():
    rope = posenc.rope_generators(WIDTH, axes=2, base=10.0)
    basis = np.linalg.qr(np.random.default_rng(7).standard_normal((WIDTH, WIDTH)))[0]
    string = posenc.string_generators(basis, axes=2, base=10.0)
    comrope = [
        posenc.comrope_random_generators(WIDTH, 2, block_size=4, variant=variant, seed=0) for variant in ("ap", "ld")
    ]
    for commuting in (rope, string, *comrope):
        # The caption's claims.
        assert posenc.commutator_norm(commuting) < 1e-12
        assert posenc.relativity_error(commuting, GRID) < 1e-12

    fig, ax = plotting.new_figure(aspect=0.6, narrow={"aspect": 0.95})
    for series, seed in enumerate(SEEDS):
        dense = posenc.liere_generators(WIDTH, 2, seed=seed)
        norms = [posenc.commutator_norm(scale * dense) for scale in SCALES]
        errors = [posenc.relativity_error(scale * dense, GRID) for scale in SCALES]
        assert max(errors) < 2.0 and errors[0] < errors[-1]
        ax.plot(norms, errors, color=plotting.colour_of(series=series), marker="o", markersize=3, label=f"seed {seed}")
    ax.plot(
        [0.0],
        [0.0],
        linestyle="none",
        marker="s",
        markersize=8,
        color=plotting.colour_of(reference=True),
        label="RoPE, STRING, ComRoPE",
    )
    ax.set_xscale("symlog", linthresh=ZERO_BAND)
    ax.set_yscale("symlog", linthresh=ZERO_BAND)
    ax.set_xlim(-ZERO_BAND / 2, 1e3)
    ax.set_ylim(-ZERO_BAND / 2, 10.0)
    ax.set_xticks([0, 1e-4, 1e-2, 1, 1e2])
    ax.set_yticks([0, 1e-4, 1e-2, 1])
    ax.set_xlabel("commutator norm")
    ax.set_ylabel("relativity error")
    ax.legend(loc="upper left")
    plotting.save(fig)


if __name__ == "__main__":
    main()
