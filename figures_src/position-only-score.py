r"""The position-only attention score for two choices of the matrix A at width 8.

The score is $P(t)^\top A\, P(s)$. With $A = I$ it is the kernel $K(s - t)$, constant along every
diagonal: pairs one step apart, such as (0, 1) and (1, 2), score the same. With an $A$ that keeps
only the first sine channel the score becomes $\sin(t) \sin(s)$, which is 0 at (0, 1) but 0.77 at
(1, 2): a learned $A$ need not keep the relative structure of the raw encoding.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two 8 by 8 heatmaps of the score between query position t (rows) and key position s "
    "(columns) at width 8. Left, A = identity: bands of equal colour along every diagonal, "
    "with (0, 1) and (1, 2) both scoring 3.54. Right, A keeping only channel 0: a "
    "checkerboard-like pattern of sin(t) sin(s) with no diagonal structure, where (0, 1) "
    "scores 0.00 and (1, 2) scores 0.77."
)
WIDTH = 8
POSITIONS = 8
MARKED = ((0, 1), (1, 2))


def main():
    ids = np.arange(POSITIONS)
    vectors = posenc.sinusoidal(ids, WIDTH)
    first_sine = np.zeros((WIDTH, WIDTH))
    first_sine[0, 0] = 1.0
    identity = vectors @ vectors.T
    masked = vectors @ first_sine @ vectors.T
    # A = I: the score is K(s - t), so every diagonal is constant.
    assert np.allclose(identity, posenc.kernel(ids[None, :] - ids[:, None], WIDTH))
    assert all(np.ptp(np.diagonal(identity, k)) < 1e-12 for k in range(-POSITIONS + 1, POSITIONS))
    assert round(identity[0, 1], 2) == round(identity[1, 2], 2) == 3.54
    # A = e0 e0ᵀ: the score is sin(t) sin(s); same gap, different scores.
    assert np.allclose(masked, np.outer(np.sin(ids), np.sin(ids)))
    assert abs(masked[0, 1]) < 1e-12 and round(masked[1, 2], 4) == 0.7651

    fig, axes = plotting.new_figure(aspect=0.44, ncols=2, narrow={"aspect": 2.35})
    extent = (-0.5, POSITIONS - 0.5, POSITIONS - 0.5, -0.5)
    panels = ((identity, False, "A = I (all channels)"), (masked, True, "A keeps only channel 0 (sin t)"))
    for ax, (scores, signed, title) in zip(axes, panels):
        image = plotting.heatmap(ax, scores, signed=signed, colorbar_label="score", extent=extent)
        marked = np.zeros(scores.shape, dtype=bool)
        for t, s in MARKED:
            marked[t, s] = True
            ax.add_patch(
                plotting.plt.Rectangle(
                    (s - 0.5, t - 0.5), 1, 1, fill=False, edgecolor=plotting.colour_of(reference=True), linewidth=1.6
                )
            )
        plotting.annotate_cells(ax, image, scores, mask=marked, fontsize=9)  # only the boxed cells
        ax.set_aspect("equal")
        ax.set(xticks=ids, yticks=ids, xlabel="key position s", ylabel="query position t", title=title)
    fig.suptitle(plotting.wrap(r"position-only score $P(t)^\top A\, P(s)$", f"at d = {WIDTH}"))
    plotting.save(fig)


if __name__ == "__main__":
    main()
