"""The smallest RoPE base a context length needs (Men et al., 2024), and the base from which every larger one passes.

Head width 128, at 2048, 4096, 8192 and 16384 tokens. Both curves concern B(m), the sum of
cos(m θ_r) over the 64 pairs, kept non-negative for every distance m up to the length. The lower
curve is posenc.rope_base_lower_bound, the smallest base that passes (about 1.2·10^4, 2.9·10^4,
8.4·10^4 and 2.3·10^5); the upper one is posenc.rope_base_all_pass_bound, the all-pass threshold
from which every larger base passes too (about 2.3·10^4, 5.9·10^4, 3.9·10^5 and 1.2·10^6). The
passing bases are not an interval: between the curves, some bases pass and others fail. Each
point is a model with 128-wide heads at the length it was trained on: Llama 2 (base 10000, 4096
tokens) lies below the lower curve and fails, Llama 3 (500000, its original window of 8192
tokens) lies above the upper one, and Code Llama (10^6, its long-context fine-tuning at 16384)
lies between them and passes.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Log-log plot of RoPE base against context length from 2048 to 16384 tokens, with two rising "
    "curves. The smallest base that passes rises from about 12 thousand to about 230 thousand; the "
    "base from which every larger base passes rises from about 23 thousand to about 1.2 million. "
    "Llama 2's point, base 10000 at 4096, lies below both; Llama 3's, 500000 at 8192, above both; "
    "Code Llama's, one million at 16384, between them."
)
HEAD_DIM = 128
LENGTHS = [2048, 4096, 8192, 16384]
# (name, base, trained length): the page cites each value.
MODELS = [("Llama 2", 1e4, 4096), ("Llama 3", 5e5, 8192), ("Code Llama", 1e6, 16384)]


def passes(base, length):
    return bool(min(posenc.kernel(np.arange(length + 1), HEAD_DIM, base=base)) >= 0.0)


def main():
    lower = np.array([posenc.rope_base_lower_bound(n, HEAD_DIM, rtol=1e-3) for n in LENGTHS])
    upper = np.array([posenc.rope_base_all_pass_bound(n, HEAD_DIM, rtol=1e-3) for n in LENGTHS])
    # The caption's numbers, each model's place and whether it passes.
    assert [float(f"{b:.1e}") for b in lower] == [1.2e4, 2.9e4, 8.4e4, 2.3e5]
    assert [float(f"{b:.1e}") for b in upper] == [2.3e4, 5.9e4, 3.9e5, 1.2e6]
    for low, high, n in zip(lower, upper, LENGTHS):
        assert low <= high and passes(low, n) and passes(high, n)
    place = {
        name: int(base >= lower[LENGTHS.index(n)]) + int(base >= upper[LENGTHS.index(n)]) for name, base, n in MODELS
    }
    assert place == {"Llama 2": 0, "Llama 3": 2, "Code Llama": 1}
    assert [passes(base, n) for _, base, n in MODELS] == [False, True, True]

    fig, ax = plotting.new_figure(aspect=0.5, narrow={"aspect": 1.0})
    ax.plot(
        LENGTHS, lower, color=plotting.colour_of(series=0), marker="o", markersize=4, label="smallest base that passes"
    )
    ax.plot(
        LENGTHS,
        upper,
        color=plotting.colour_of(series=4),
        marker="o",
        markersize=4,
        linestyle="--",
        label="every base above it passes",
    )
    for index, (name, base, length) in enumerate(MODELS):
        ax.plot(
            [length],
            [base],
            linestyle="none",
            marker="sDv"[index],
            markersize=7,
            color=plotting.colour_of(series=index + 1),
            label=f"{name}: base {base:,.0f}, {length} tokens",
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(LENGTHS, [str(n) for n in LENGTHS])
    ax.minorticks_off()
    ax.set_ylim(5e3, 2e7)
    ax.set_xlabel("context length (tokens)")
    ax.set_ylabel("RoPE base")
    plotting.place_legend(ax, "upper left")
    plotting.save(fig)


if __name__ == "__main__":
    main()
