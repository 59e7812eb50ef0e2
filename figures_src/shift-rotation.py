r"""A shift by one position is a rotation of every sine/cosine pair.

Left: for the fastest pair ($\omega = 1$) the shift matrix $S_1(1)$ turns $v(0) = (0, 1)$ into
$v(1)$ and, applied again, into $v(2)$, clockwise because the sine is drawn on the horizontal axis;
the same matrix works from any starting position. Right: the full shift $T_1$ at width 8 puts one
such $2 \times 2$ rotation per pair on the diagonal and zeros elsewhere, so $P(t + 1) = T_1 P(t)$;
the slower the pair, the closer its block is to the identity.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Left, the unit circle with the vectors v(0) = (0, 1), v(1) = (0.84, 0.54) and "
    "v(2) = (0.91, -0.42), each reached from the previous one by the same rotation "
    "S₁(1) = [[0.54, 0.84], [-0.84, 0.54]]. Right, an 8 by 8 heatmap of T_1 at width 8: four "
    "2 by 2 blocks on the diagonal, the first holding 0.54 and ±0.84, the second 0.99 and "
    "±0.10, the last two almost the identity, and zeros everywhere else."
)
WIDTH = 8


def main():
    shift = posenc.shift_operator(1, WIDTH)
    rotation = shift[:2, :2]
    assert np.allclose(rotation, [[0.5403, 0.8415], [-0.8415, 0.5403]], atol=5e-5)
    v = [np.array([0.0, 1.0])]
    v += [rotation @ v[0], rotation @ rotation @ v[0]]
    assert np.allclose(v[1], [0.8415, 0.5403], atol=5e-5)
    assert np.allclose(v[2], [0.9093, -0.4161], atol=5e-5)
    # T_1 is block diagonal, shifts every position by one, and composes: T_1 T_1 = T_2.
    blocks = np.kron(np.eye(WIDTH // 2), np.ones((2, 2)))
    assert np.all(shift[blocks == 0] == 0)
    vectors = posenc.sinusoidal(np.arange(12), WIDTH)
    assert np.allclose(vectors[:-1] @ shift.T, vectors[1:])
    assert np.allclose(shift @ shift, posenc.shift_operator(2, WIDTH))

    fig, (circle, matrix) = plotting.new_figure(
        aspect=0.58, ncols=2, width_ratios=(0.85, 1.3), narrow={"aspect": 2.15, "height_ratios": (1, 1.25)}
    )
    theta = np.linspace(0, 2 * np.pi, 200)
    reference = plotting.colour_of(reference=True)
    circle.plot(np.sin(theta), np.cos(theta), color=reference, linewidth=0.8)
    for t, vec in enumerate(v):
        colour = plotting.colour_of(series=t)
        circle.annotate("", xy=vec, xytext=(0, 0), arrowprops=dict(arrowstyle="-|>", color=colour, lw=1.6))
        circle.annotate(
            f"v({t})",
            vec,
            xytext=(5 * vec[0], 5 * vec[1] + 2),
            textcoords="offset points",
            ha="left" if vec[0] > 0.1 else "center",
            va="bottom" if vec[1] > 0 else "top",
            fontsize=9,
        )
        circle.plot([], [], color=colour, lw=1.6, label=f"v({t}) = ({vec[0]:.2f}, {vec[1]:.2f})")
    for start, end in ((v[0], v[1]), (v[1], v[2])):  # the same shift S_1(1), twice
        circle.annotate(
            "",
            xy=end * 0.62,
            xytext=start * 0.62,
            arrowprops=dict(arrowstyle="->", color=reference, connectionstyle="arc3,rad=-0.3"),
        )
    # The coordinates go in a legend under the circle: beside the tips they ran into the next panel.
    circle.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), handlelength=1.2)
    circle.set_aspect("equal")
    circle.set(
        xlim=(-1.3, 1.45),
        ylim=(-1.25, 1.35),
        xticks=[-1, 0, 1],
        yticks=[-1, 0, 1],
        xlabel="sin θ (channel 0)",
        ylabel="cos θ (channel 1)",
        title=r"$S_1(1)$ applied twice ($\omega = 1$)",
    )

    image = plotting.heatmap(matrix, shift, extent=(-0.5, WIDTH - 0.5, WIDTH - 0.5, -0.5))
    below = {"location": "bottom", "aspect": 30} if plotting.narrow() else {}
    fig.colorbar(image, ax=matrix, shrink=0.8, label=r"entry of $T_1$", **below)
    plotting.annotate_cells(matrix, image, shift, mask=blocks == 1, fontsize=9)  # the entries of the 2×2 blocks
    matrix.set_aspect("equal")
    matrix.set(
        xticks=range(WIDTH),
        yticks=range(WIDTH),
        xlabel="input channel j",
        ylabel="output channel i",
        title=rf"$T_1$ at d = {WIDTH}",
    )
    plotting.save(fig)


if __name__ == "__main__":
    main()
