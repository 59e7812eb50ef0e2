"""The smallest RoPE base a context length needs (Men et al., 2024), with three models' bases.

Head width 128. The curve is posenc.rope_base_lower_bound at 2048, 4096, 8192 and 16384 tokens:
the smallest base at which B(m), the sum of cos(m θ_r) over the 64 pairs, stays non-negative
for every distance m up to the length (about 1.2·10^4, 2.9·10^4, 8.4·10^4 and 2.3·10^5). Each
point is a model with 128-wide heads at the length it was trained on: Llama 2 (base 10000,
4096 tokens) lies below the curve, Llama 3 (500000, its original window of 8192 tokens) and
Code Llama (10^6, its long-context fine-tuning at 16384) above it.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Log-log plot of RoPE base against context length from 2048 to 16384 tokens. The lower "
    "bound rises from about 12 thousand to about 230 thousand. Llama 2's point, base 10000 at "
    "4096, lies below it; Llama 3's, 500000 at 8192, and Code Llama's, one million at 16384, lie above it."
)
HEAD_DIM = 128
LENGTHS = [2048, 4096, 8192, 16384]
# (name, base, trained length): the page cites each value.
MODELS = [("Llama 2", 1e4, 4096), ("Llama 3", 5e5, 8192), ("Code Llama", 1e6, 16384)]


def main():
    bounds = np.array([posenc.rope_base_lower_bound(n, HEAD_DIM, rtol=1e-3) for n in LENGTHS])
    # The caption's numbers, and each model's side of the curve.
    assert [float(f"{b:.1e}") for b in bounds] == [1.2e4, 2.9e4, 8.4e4, 2.3e5]
    assert round(bounds[-1] / bounds[0]) == 20  # the page: 8 times the length, about 20 times the base
    below = {name: base < bounds[LENGTHS.index(length)] for name, base, length in MODELS}
    assert below == {"Llama 2": True, "Llama 3": False, "Code Llama": False}
    for b, n in zip(bounds, LENGTHS):
        assert min(posenc.kernel(np.arange(n + 1), HEAD_DIM, base=b)) >= 0.0

    fig, ax = plotting.new_figure(aspect=0.5, narrow={"aspect": 1.0})
    ax.plot(LENGTHS, bounds, color=plotting.colour_of(series=0), marker="o", markersize=4, label="lower bound")
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
    ax.set_ylim(5e3, 3e6)
    ax.set_xlabel("context length (tokens)")
    ax.set_ylabel("RoPE base")
    plotting.place_legend(ax, "upper left")
    plotting.save(fig)


if __name__ == "__main__":
    main()
