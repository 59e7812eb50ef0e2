"""Without any position encoding, a causal head can still output a function of position.

One causal head with equal scores for every visible key (zero queries) and a value that is
non-zero only at position 0, a marker such as a beginning-of-sequence token with value 1. The
output at position $t$, computed with the causal softmax, is $1/(t + 1)$: different at every
position, so later layers can read the position from it (derivation nope-causal-signal).
"""

import numpy as np

from posenc.site import plotting

ALT = (
    "Output of the head against position t from 0 to 31: dots at 1, 0.5, 0.333, 0.25 and so "
    "on, falling to 0.031 at t = 31, lying exactly on the dotted curve 1/(t + 1); every "
    "position has a different output."
)
LENGTH = 32


def main():
    scores = np.zeros((LENGTH, LENGTH))
    scores[np.triu_indices(LENGTH, 1)] = -np.inf  # the causal mask: no position encoding anywhere
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    values = np.zeros(LENGTH)
    values[0] = 1.0  # the marker at position 0
    output = weights @ values
    t = np.arange(LENGTH)
    assert np.allclose(output, 1 / (t + 1), rtol=1e-15, atol=0)
    assert np.all(np.diff(output) < 0) and round(output[-1], 3) == 0.031

    fig, ax = plotting.new_figure(aspect=0.4)
    fine = np.linspace(0, LENGTH - 1, 400)
    ax.plot(fine, 1 / (fine + 1), color=plotting.colour_of(reference=True), linestyle=":", label="1/(t + 1)")
    ax.plot(t, output, "o", color=plotting.colour_of(method="nope"), markersize=4, label="head output o_t (softmax)")
    ax.set(xlabel="position t", ylabel="output", ylim=(0, 1.05))
    ax.legend(loc="upper right")
    plotting.save(fig)


if __name__ == "__main__":
    main()
