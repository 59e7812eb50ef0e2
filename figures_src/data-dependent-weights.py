"""Attention weights of four causal schemes on one toy sequence: ALiBi, FoX, stick-breaking, PaTH.

Ten tokens with the same random queries and keys (seed 7, width 8, logits q·k/√8) in every
panel. ALiBi adds −(i − j)/2. FoX adds the sum of the log forget gates between key and query,
each gate σ(2 + 2 u·k_t) computed from its token's key. Stick-breaking lets the nearest earlier
key break off σ(q·k/√8) of the stick first (a query does not see itself, so query 0 sees
nothing); its rows sum to less than one. PaTH scores through the reflections
I − β_t w_t w_tᵀ of the tokens after the key (β_t = 2σ(k_t·v), w_t a unit vector from the key).
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Four 10-by-10 lower-triangular heatmaps of attention weights on one colour scale from 0 to 1, for "
    "ALiBi with slope 1/2, FoX, stick-breaking and PaTH on the same queries and keys. The ALiBi, FoX and "
    "PaTH panels include the diagonal and each row sums to one; the stick-breaking panel stops below the "
    "diagonal, its first row is empty and each row sums to less than one."
)
LENGTH, WIDTH, SEED = 10, 8, 7


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def softmax_rows(logits):
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)


def main():
    rng = np.random.default_rng(SEED)
    q, k = rng.standard_normal((2, LENGTH, WIDTH))
    gate_direction, beta_direction = rng.standard_normal((2, WIDTH)) / np.sqrt(WIDTH)
    directions = k @ rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)
    logits = q @ k.T / np.sqrt(WIDTH)

    alibi = softmax_rows(logits + posenc.alibi_bias(1, LENGTH, max_bias=1.0)[0])  # one head: slope 2^-1
    gates = sigmoid(2 + 2 * k @ gate_direction)
    fox = posenc.forgetting_attention(logits, gates)
    stick = posenc.stick_breaking_weights(logits)
    betas = 2 * sigmoid(k @ beta_direction)
    path = softmax_rows(posenc.path_scores(q, k, directions, betas) / np.sqrt(WIDTH))

    i, j = np.indices((LENGTH, LENGTH))
    for weights in (alibi, fox, path):
        assert np.allclose(weights.sum(axis=-1), 1) and np.all(weights[i < j] == 0)
    assert np.all(stick[i <= j] == 0) and np.all(stick.sum(axis=-1) < 1)  # the caption's claims
    assert posenc.alibi_slopes(1, max_bias=1.0)[0] == 0.5

    fig, axes = plotting.new_figure(aspect=0.3, ncols=4, narrow={"aspect": 1.05, "nrows": 2, "ncols": 2})
    panels = (("ALiBi (slope 1/2)", alibi), ("FoX", fox), ("stick-breaking", stick), ("PaTH", path))
    for ax, (title, weights) in zip(np.ravel(axes), panels):
        seen = i > j if weights is stick else i >= j
        shown = np.where(seen, weights, np.nan)  # keys the query does not see are left blank
        image = plotting.heatmap(ax, shown, signed=False, extent=(-0.5, LENGTH - 0.5, LENGTH - 0.5, -0.5))
        image.set_clim(0, 1)
        ax.set_aspect("equal")
        ax.set_title(title, fontsize=9)
        ax.set_xticks(range(0, LENGTH, 3))
        ax.set_yticks(range(0, LENGTH, 3))
        ax.set_xlabel("key j")
        ax.spines[["left", "bottom"]].set_visible(False)
    for ax in np.ravel(axes)[:: 2 if plotting.narrow() else 4]:
        ax.set_ylabel("query i")
    below = {"location": "bottom", "aspect": 30} if plotting.narrow() else {}
    fig.colorbar(image, ax=axes, label="attention weight", shrink=0.8, **below)
    plotting.save(fig)


if __name__ == "__main__":
    main()
