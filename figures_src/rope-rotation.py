r"""RoPE rotates every pair of q and k by its position; the score sees only the offset.

Width 8, so four pairs with $\theta_r = 10000^{-2r/8}$. Query and key share the content
[0.6, 0.4] in every pair (thin arrow); the query at position 3 turns by $3\theta_r$ (blue), the key
at position 7 by $7\theta_r$ (vermillion). Each pair contributes $0.52 \cos(4\theta_r)$, which
depends on $3 - 7 = -4$ alone; the four contributions add up to the score 1.18.
"""

import numpy as np

import posenc
from posenc.site import explainer_demo
from posenc.site import plotting

ALT = (
    "Four small planes, one per channel pair of a width-8 RoPE. In each, the content vector "
    "[0.6, 0.4] is drawn as a thin arrow, the query rotated for position 3 in blue and the key rotated for "
    "position 7 in vermillion. Pair 0 turns q to [-0.65, -0.31] and k to [0.19, 0.70], 4 radians "
    "apart; pairs 1 to 3 are 0.4, 0.04 and 0.004 radians apart. Per-pair products -0.34, 0.48, "
    "0.52 and 0.52 sum to the score 1.18, which depends only on the offset -4."
)
CONTENT = np.array(explainer_demo.CONTENT)
WIDTH, Q_POS, K_POS = explainer_demo.WIDTHS["rope"], 3, 7


def main():
    x = np.tile(CONTENT, WIDTH // 2)[None, :]
    q, k = posenc.rope(x, [Q_POS])[0], posenc.rope(x, [K_POS])[0]
    per_pair = (q * k).reshape(-1, 2).sum(axis=1)
    theta = posenc.frequencies(WIDTH)
    score = float(per_pair.sum())
    assert np.allclose(q[:2].round(2), [-0.65, -0.31]) and np.allclose(k[:2].round(2), [0.19, 0.70])
    assert np.allclose(per_pair, CONTENT @ CONTENT * np.cos((Q_POS - K_POS) * theta))
    assert np.allclose(per_pair.round(2), [-0.34, 0.48, 0.52, 0.52]) and round(score, 2) == 1.18
    for shift in (1, 5, 20):  # the same offset at other absolute positions: the same score
        moved = posenc.rope(x, [Q_POS + shift])[0] @ posenc.rope(x, [K_POS + shift])[0]
        assert np.isclose(moved, score)
    assert np.isclose(score, CONTENT @ CONTENT * posenc.kernel(Q_POS - K_POS, WIDTH))

    fig, axes = plotting.new_figure(aspect=0.43, ncols=WIDTH // 2, narrow={"nrows": 2, "ncols": 2, "aspect": 1.45})
    circle = np.linspace(0, 2 * np.pi, 181)
    radius = np.hypot(*CONTENT)
    for r, ax in enumerate(axes):
        reference = plotting.colour_of(reference=True)
        ax.plot(radius * np.cos(circle), radius * np.sin(circle), color=reference, linewidth=0.6, linestyle=":")
        for vector, colour, width, label in (
            (CONTENT, reference, 0.8, "q = k before rotation"),
            (q[2 * r : 2 * r + 2], plotting.colour_of(side="query"), 1.5, f"q (pos {Q_POS})"),
            (k[2 * r : 2 * r + 2], plotting.colour_of(side="key"), 1.5, f"k (pos {K_POS})"),
        ):
            ax.annotate(
                "", xy=vector, xytext=(0, 0), arrowprops={"arrowstyle": "-|>", "color": colour, "linewidth": width}
            )
            if r == 0:
                ax.plot([], [], color=colour, linewidth=width, label=label)
        ax.set_title(f"pair {r}: " + rf"$\theta_{r}$ = {theta[r]:g}", fontsize=9)
        ax.set_xlabel(f"angle q−k: {(Q_POS - K_POS) * theta[r]:.3g} rad\nq·k = {per_pair[r]:.2f}", fontsize=9)
        ax.set_xlim(-0.85, 0.85)
        ax.set_ylim(-0.85, 0.85)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.spines[["left", "bottom"]].set_visible(False)
        ax.axhline(0, color=reference, linewidth=0.3)
        ax.axvline(0, color=reference, linewidth=0.3)
    fig.legend(
        loc="outside lower center",
        ncols=1 if plotting.narrow() else 4,
        handlelength=1.5,
        title=plotting.wrap(
            f"score q·k = sum over pairs = {score:.2f},", f"a function of {Q_POS} − {K_POS} = {Q_POS - K_POS} only"
        ),
        title_fontsize=9,
    )
    plotting.save(fig)


if __name__ == "__main__":
    main()
