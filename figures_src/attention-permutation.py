r"""Without positions, reordering the words only permutes the attention scores.

Toy two-dimensional embeddings Dog = [0.8, 0.2], bites = [0.1, 0.9] and man = [0.5, 0.6],
with no position added. The score matrix $QK^\top$ (here simply $EE^\top$) for each word order
holds the same nine dot products; only its rows and columns are reordered, so attention
alone cannot tell "Dog bites man" from "man bites Dog".
"""

import numpy as np

from posenc.site import explainer_demo
from posenc.site import plotting

ALT = (
    "Three 3-by-3 score matrices for the word orders 'Dog bites man', 'man bites Dog' and "
    "'bites Dog man', with embeddings Dog = [0.8, 0.2], bites = [0.1, 0.9], man = [0.5, 0.6]. "
    "Each holds the same nine dot products, rearranged: Dog with Dog 0.68, bites with bites 0.82, "
    "man with man 0.61, Dog with bites 0.26, Dog with man 0.52, bites with man 0.59."
)
ORDERS = (("Dog", "bites", "man"), ("man", "bites", "Dog"), ("bites", "Dog", "man"))


def scores(order):
    """The position-free score matrix E E^T of the words in this order."""
    e = np.array([explainer_demo.EMBEDDINGS[word] for word in order])
    return e @ e.T


def main():
    matrices = [scores(order) for order in ORDERS]
    base = matrices[0]
    assert np.allclose(base.round(2), [[0.68, 0.26, 0.52], [0.26, 0.82, 0.59], [0.52, 0.59, 0.61]])
    for order, matrix in zip(ORDERS, matrices):
        perm = [ORDERS[0].index(word) for word in order]
        assert np.allclose(matrix, base[np.ix_(perm, perm)])  # a permutation, nothing new
        assert np.allclose(np.sort(matrix, axis=None), np.sort(base, axis=None))
    assert sorted(map(sorted, ORDERS)) == [sorted(explainer_demo.EMBEDDINGS)] * 3 and len(set(ORDERS)) == 3

    fig, axes = plotting.new_figure(aspect=0.34, ncols=3)
    low, high = float(base.min()), float(base.max())
    for ax, order, matrix in zip(axes, ORDERS, matrices):
        image = plotting.heatmap(ax, matrix, signed=False, extent=(-0.5, 2.5, 2.5, -0.5))
        image.set_clim(0, 1)
        plotting.annotate_cells(ax, image, matrix, fontsize=10)
        ax.set_xticks(range(3), order)
        ax.set_yticks(range(3), order)
        ax.set_aspect("equal")
        ax.set_title(f"\u201c{' '.join(order)}\u201d")
        ax.set_xlabel("key word")
    for ax in axes if plotting.narrow() else axes[:1]:
        ax.set_ylabel("query word")
    assert 0 < low and high < 1  # the shared 0-1 colour scale covers every score
    fig.colorbar(image, ax=axes, label="score q·k", shrink=0.75)
    plotting.save(fig)


if __name__ == "__main__":
    main()
