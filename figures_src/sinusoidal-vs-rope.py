r"""Similarity to position 2: sinusoidal dot product against RoPE score, width 8.

The sinusoidal curve is $P(2) \cdot P(n)$; the RoPE curve is the score of a query at position 2
and a key at position $n$, both with content [0.6, 0.4] in every pair. With that content the
RoPE score is exactly 0.52 times the sinusoidal one, so the two curves rise and fall
together; at distance 6 (n = 8) they read 3.78 and 1.97.
"""

import numpy as np

import posenc
from posenc.site import explainer_demo
from posenc.site import plotting

ALT = (
    "Line chart over key positions n from 0 to 40 of the similarity to position 2 at width 8: "
    "the sinusoidal dot product P(2)·P(n) in blue peaks at 4 for n = 2, the RoPE score in "
    "vermillion peaks at 2.08 and is 0.52 times it everywhere. Neither falls steadily; at n = 8 "
    "the values are 3.78 and 1.97."
)
WIDTH, M, LAST, MARK = explainer_demo.WIDTHS["compare"], 2, 40, 8
CONTENT = np.array(explainer_demo.CONTENT)


def main():
    n = np.arange(LAST + 1)
    table = posenc.sinusoidal(n, WIDTH)
    sinusoidal = table @ table[M]
    content = np.tile(CONTENT, WIDTH // 2)
    query = posenc.rope(content[None, :], [M])[0]
    keys = posenc.rope(np.tile(content, (n.size, 1)), n)
    rope = keys @ query
    scale = float(CONTENT @ CONTENT)
    assert np.allclose(sinusoidal, posenc.kernel(n - M, WIDTH))
    assert np.allclose(rope, scale * sinusoidal) and round(scale, 2) == 0.52  # |c|^2 K(n - m)
    assert round(sinusoidal[MARK], 2) == 3.78 and round(rope[MARK], 2) == 1.97
    assert round(rope[M], 2) == 2.08 and np.isclose(sinusoidal[M], WIDTH / 2)

    fig, ax = plotting.new_figure(aspect=0.45, narrow={"aspect": 1.05})
    reference = plotting.colour_of(reference=True)
    ax.plot(
        n,
        sinusoidal,
        "o-",
        color=plotting.colour_of(family="sinusoidal"),
        markersize=3.5,
        label="sinusoidal: P(2)·P(n)",
    )
    ax.plot(
        n,
        rope,
        "s-",
        color=plotting.colour_of(family="rope"),
        markersize=3.5,
        label=plotting.wrap("RoPE: q(2)·k(n), content [0.6, 0.4]", f"per pair (= {scale:.2f} × sinusoidal)"),
    )
    ax.axvline(M, color=reference, linestyle=":", linewidth=0.8)
    ax.text(M + 0.4, 0.15, f"m = {M}", fontsize=9)
    for value, offset in ((sinusoidal[MARK], (7, 5)), (rope[MARK], (-4, -19))):
        ax.plot(MARK, value, "o", markersize=9, markerfacecolor="none", markeredgecolor=reference)
        ax.annotate(
            f"{value:.2f}", (MARK, value), xytext=offset, textcoords="offset points", fontsize=9, fontweight="bold"
        )
    ax.annotate(
        "",
        xy=(MARK, -0.35),
        xytext=(M, -0.35),
        arrowprops={"arrowstyle": "<->", "color": reference, "shrinkA": 0, "shrinkB": 0},
    )
    ax.text((M + MARK) / 2, -0.3, f"|m − n| = {MARK - M}", ha="center", va="bottom", fontsize=9)
    ax.set_xlim(-0.5, LAST + 0.5)
    ax.set_ylim(-0.6, 5.0)
    ax.set_xlabel("key position n")
    ax.set_ylabel("similarity to position 2\n(dot product)")
    if plotting.narrow():  # below the plot: a phone's plot has no corner to spare
        fig.legend(loc="outside lower center")
    else:
        ax.legend(loc="upper right")
    plotting.save(fig)


if __name__ == "__main__":
    main()
