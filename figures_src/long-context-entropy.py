"""Entropy of one row of softmax attention as the window grows, with and without YaRN's temperature.

For each window length n (64 to 131072 keys) the scores are one sample of n independent normal
scores with standard deviation 2 (seed 17, the same sample for every curve), an illustration rather
than a trained model. Equal scores give the largest possible entropy, ln n. Past the training
length 4096, YaRN's attention factor (0.1 ln s + 1, with s = n / 4096) multiplies queries and keys,
so the scores are multiplied by its square and the entropy is lower than unscaled.
"""

import math

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Entropy in nats against window length from 64 to 131072 on a log axis. The equal-scores line is "
    "ln n, rising straight on the log axis from 4.2 to 11.8. The unscaled normal scores run below "
    "it by 1.4 to 2.3 nats, within 0.3 of 2 from 512 keys on. The YaRN-scaled curve matches the "
    "unscaled one up to 4096 keys and then falls further below it as the window grows."
)
TRAINED, SIGMA, SEED = 4096, 2.0, 17


def main():
    lengths = 2 ** np.arange(6, 18)
    rng = np.random.default_rng(SEED)
    sample = rng.normal(0.0, SIGMA, size=lengths.max())
    equal = np.array([posenc.attention_entropy(np.zeros(n)) for n in lengths])
    unscaled = np.array([posenc.attention_entropy(sample[:n]) for n in lengths])
    factors = np.array([posenc.yarn_attention_factor(max(n / TRAINED, 1.0)) for n in lengths])
    scaled = np.array([posenc.attention_entropy(sample[:n] * f**2) for n, f in zip(lengths, factors)])
    # The claims of the caption and the alt text.
    assert np.allclose(equal, np.log(lengths), rtol=1e-14)
    assert round(equal[0], 1) == 4.2 and round(equal[-1], 1) == 11.8
    gap = equal - unscaled
    assert np.all((gap > 1.4) & (gap < 2.3)) and np.all(np.abs(gap[lengths >= 512] - 2) < 0.3)
    beyond = lengths > TRAINED
    assert np.array_equal(scaled[~beyond], unscaled[~beyond]) and np.all(scaled[beyond] < unscaled[beyond])
    assert np.all(np.diff((unscaled - scaled)[beyond]) > 0)
    assert math.isclose(factors[-1], 0.1 * math.log(32) + 1)

    fig, ax = plotting.new_figure(aspect=0.5, narrow={"aspect": 1.1})
    ax.plot(lengths, equal, color=plotting.colour_of(reference=True), linestyle=":", label="equal scores: ln n")
    ax.plot(
        lengths,
        unscaled,
        color=plotting.colour_of(reference=True),  # no method: unscaled, like the equal-scores line
        marker="o",
        markersize=3,
        label=f"normal scores, sd {SIGMA:g}",
    )
    ax.plot(
        lengths,
        scaled,
        color=plotting.colour_of(method="yarn"),
        marker="s",
        markersize=3,
        linestyle="--",
        label="same scores, YaRN factor squared past 4096",
    )
    ax.axvline(TRAINED, color=plotting.colour_of(reference=True), linewidth=0.6, linestyle=":")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("window length n (keys)")
    ax.set_ylabel("entropy (nats)")
    plotting.place_legend(ax, "upper left")
    plotting.save(fig)


if __name__ == "__main__":
    main()
