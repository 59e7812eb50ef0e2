"""The two RoPE channel pairings, and the permutation that turns one into the other.

Head width $d = 8$, four pairs, one colour per pair; the first member of a pair (the $x$
coordinate of the 2-vector that turns) is filled, the second (its $y$ coordinate) outlined. Top:
the interleaved pairing of RoFormer, GPT-J and Meta's LLaMA code, pair $r$ on channels
$(2r, 2r + 1)$. Bottom: the halves pairing of GPT-NeoX and Hugging Face's LLaMA, pair $r$ on
channels $(r, r + 4)$. Each line sends an interleaved channel to the halves channel that takes its
row of $W_Q$ and $W_K$, which is what `posenc.rope_permutation(8)` lists.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two rows of eight numbered channel boxes joined by crossing lines. In the top row, the "
    "interleaved pairing, arcs join channels 0-1, 2-3, 4-5 and 6-7; in the bottom row, the halves "
    "pairing, arcs join channels 0-4, 1-5, 2-6 and 3-7. Lines carry interleaved channels "
    "0, 2, 4, 6, 1, 3, 5, 7 to halves channels 0 to 7: the permutation [0, 2, 4, 6, 1, 3, 5, 7]."
)
D = 8
TOP, BOTTOM = 1.0, 0.0


def boxes(ax, y, pair_of, first, colours):
    """Draw channel boxes 0..D-1 at height y, coloured by pair: the first member filled, the second outlined."""
    for c in range(D):
        colour = colours[pair_of[c]]
        ax.add_patch(
            plotting.plt.Rectangle(
                (c - 0.38, y - 0.13),
                0.76,
                0.26,
                facecolor=colour if first[c] else "none",
                edgecolor=colour,
                linewidth=2.2,
            )
        )
        # White on a filled box whatever the page; an outlined box shows the page, so its number
        # keeps the text colour.
        ax.text(
            c,
            y,
            str(c),
            ha="center",
            va="center",
            fontsize=10,
            fontweight="bold",
            **({"color": "white"} if first[c] else {}),
        )


def arc(ax, a, b, y, height, colour):
    """A half-ellipse joining channels a and b, above the row at y (height > 0) or below it."""
    s = np.linspace(0, np.pi, 60)
    sign, height = np.sign(height), abs(height)
    ax.plot((a + b) / 2 + (b - a) / 2 * np.cos(s), y + sign * (0.13 + height * np.sin(s)), color=colour, linewidth=1.6)


def main():
    perm = posenc.rope_permutation(D)
    assert perm.tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert np.array_equal(perm[posenc.rope_permutation(D, inverse=True)], np.arange(D))
    # The identity the lines draw: rotating interleaved then permuting = permuting then rotating in halves.
    rng = np.random.default_rng(8)
    q, ids = rng.normal(size=(5, D)), np.array([0, 1, 7, 100, 4096])
    assert np.allclose(posenc.rope(q, ids)[:, perm], posenc.rope(q[:, perm], ids, layout="halves"), rtol=0, atol=1e-12)
    assert not np.allclose(posenc.rope(q, ids), posenc.rope(q, ids, layout="halves"))
    inter_pair, halves_pair = np.arange(D) // 2, np.arange(D) % (D // 2)
    inter_first, halves_first = np.arange(D) % 2 == 0, np.arange(D) < D // 2
    assert np.array_equal(inter_pair[perm], halves_pair) and np.array_equal(inter_first[perm], halves_first)

    colours = [plotting.colour_of(series=r) for r in range(D // 2)]
    # Narrow: the identity under the rows instead of beside them, the legend under the figure.
    narrow = plotting.narrow()
    fig, ax = plotting.new_figure(aspect=0.5, narrow={"aspect": 1.3})
    for i, source in enumerate(perm):  # halves channel i takes interleaved channel perm[i]
        ax.annotate(
            "",
            xy=(i, BOTTOM + 0.15),
            xytext=(source, TOP - 0.15),
            arrowprops={
                "arrowstyle": "-|>",
                "color": colours[halves_pair[i]],
                "linewidth": 1.1,
                "shrinkA": 0,
                "shrinkB": 0,
                "alpha": 0.8,
            },
        )
    boxes(ax, TOP, inter_pair, inter_first, colours)
    boxes(ax, BOTTOM, halves_pair, halves_first, colours)
    for r in range(D // 2):
        arc(ax, 2 * r, 2 * r + 1, TOP, 0.12, colours[r])
        arc(ax, r, r + D // 2, BOTTOM, -(0.08 + 0.07 * r), colours[r])
    ax.text(
        -0.4,
        TOP + 0.32,
        "interleaved: pair r = channels (2r, 2r+1)\nRoFormer, GPT-J, Meta LLaMA code",
        ha="left",
        va="bottom",
        fontsize=9,
    )
    ax.text(
        -0.4,
        BOTTOM - 0.56,
        "halves: pair r = channels (r, r+4)\nGPT-NeoX, Hugging Face LLaMA",
        ha="left",
        va="top",
        fontsize=9,
    )
    # Math text is laid out at its own sizes, subscripts included, so none runs into the next word.
    listed = f"perm = {perm.tolist()}" if narrow else f"perm =\n{perm.tolist()}"
    ax.text(
        (D - 1) / 2 if narrow else D - 0.1,
        BOTTOM - 1.2 if narrow else 0.5,
        f"rows of $W_Q$ and $W_K$:\n$W_{{halves}} = W_{{inter}}$[perm]\n\n{listed}",
        ha="center" if narrow else "left",
        va="top" if narrow else "center",
        fontsize=9,
        bbox={"boxstyle": "round,pad=0.4", "facecolor": "none", "edgecolor": plotting.colour_of(reference=True)},
    )
    for r, colour in enumerate(colours):
        ax.plot([], [], color=colour, linewidth=4, label=f"pair {r}")
    if narrow:
        fig.legend(loc="outside lower center", ncols=4, handlelength=1.2, columnspacing=1.0)
    else:
        ax.legend(loc="upper right", bbox_to_anchor=(1.0, 1.0), handlelength=1.2)
    ax.set_xlim(-0.7, D - 0.3 if narrow else D + 3.5)
    ax.set_ylim(BOTTOM - (2.75 if narrow else 0.9), TOP + 0.62)
    ax.set_axis_off()
    plotting.save(fig)


if __name__ == "__main__":
    main()
