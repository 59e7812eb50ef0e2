r"""One frequency's sine and cosine as a point on the unit circle.

For a phase $\theta = t\omega$ the pair $v(\theta) = (\sin\theta, \cos\theta)$ lies on the unit
circle and moves clockwise from the top as $\theta$ grows. Phases 0 and $\pi$ have the same sine, 0,
so a sine channel alone cannot tell them apart; the cosine reads +1 at one and -1 at the other.
Small dots: whole positions $t = 1, \dots, 6$ of the fastest pair ($\omega = 1$) at width 8.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Left, the unit circle with horizontal axis sin θ and vertical axis cos θ; the phase-0 "
    "point sits at the top (0, 1) and the phase-π point at the bottom (0, -1), both on the "
    "vertical axis where the sine is 0; dots mark positions 1 to 6 of the width-8 encoding's "
    "fastest pair on the same circle. Right, sin θ and cos θ for θ from 0 to 2π: at θ = 0 "
    "and θ = π the sine curve is 0 both times while the cosine is 1 and -1."
)
PHASES = {"θ = 0": 0.0, "θ = π": np.pi}


def main():
    theta = np.linspace(0, 2 * np.pi, 361)
    pair = np.column_stack([np.sin(theta), np.cos(theta)])
    zero, half = pair[0], pair[180]
    assert abs(zero[0] - half[0]) < 1e-12 and np.isclose(zero[1], 1) and np.isclose(half[1], -1)
    # Whole positions t = 0..6 of the fastest pair (ω = 1) at width 8 land on the same circle.
    steps = posenc.sinusoidal(np.arange(7), 8)[:, :2]
    assert np.allclose(steps, np.column_stack([np.sin(np.arange(7)), np.cos(np.arange(7))]))
    assert np.allclose((steps**2).sum(axis=1), 1.0)

    fig, (circle, waves) = plotting.new_figure(
        aspect=0.42, ncols=2, width_ratios=(1, 1.5), narrow={"aspect": 1.75, "height_ratios": (1.2, 1)}
    )
    reference = plotting.colour_of(reference=True)
    circle.plot(pair[:, 0], pair[:, 1], color=reference, linewidth=0.8)
    circle.axhline(0, color=reference, linewidth=0.4)
    circle.axvline(0, color=reference, linewidth=0.4)
    circle.annotate(
        "",
        xy=(np.sin(0.9), np.cos(0.9)),
        xytext=(np.sin(0.5), np.cos(0.5)),
        arrowprops=dict(arrowstyle="->", color=reference, connectionstyle="arc3,rad=-0.1"),
    )
    circle.text(np.sin(0.7) * 1.12, np.cos(0.7) * 1.12, "θ grows", fontsize=9)
    circle.plot(steps[1:, 0], steps[1:, 1], "o", color=reference, markersize=3.5)
    for t, (s, c) in enumerate(steps[1:], 1):
        circle.annotate(
            f"t={t}",
            (s, c),
            xytext=(-s * 13, -c * 11),
            textcoords="offset points",
            ha="center",
            va="center",
            fontsize=9,
        )
    marks = zip(PHASES.items(), (plotting.colour_of(series=2), plotting.colour_of(series=3)), ("bottom", "top"))
    for (label, phase), colour, va in marks:
        s, c = np.sin(phase), np.cos(phase)
        circle.plot(s, c, "o", color=colour, markersize=8)
        circle.annotate(
            f"{label}: ({abs(s):.0f}, {c:.0f})",
            (s, c),
            xytext=(-8, 8 if va == "bottom" else -8),
            textcoords="offset points",
            ha="right",
            va=va,
        )
        waves.axvline(phase, color=colour, linewidth=1, linestyle="--")
        waves.plot([phase, phase], [s, c], "o", color=colour, markersize=7)
    circle.set_aspect("equal")
    circle.set(xlim=(-1.35, 1.35), ylim=(-1.35, 1.35), xlabel="sin θ", ylabel="cos θ")
    circle.set_xticks([-1, 0, 1])
    circle.set_yticks([-1, 0, 1])

    waves.plot(theta, pair[:, 0], color=plotting.colour_of(wave="sin"), label="sin θ")
    waves.plot(theta, pair[:, 1], color=plotting.colour_of(wave="cos"), label="cos θ")
    waves.set_xticks([0, np.pi / 2, np.pi, 3 * np.pi / 2, 2 * np.pi], ["0", "π/2", "π", "3π/2", "2π"])
    waves.set(xlabel="phase θ = tω (radians)", ylabel="value", ylim=(-1.3, 1.55), yticks=[-1, -0.5, 0, 0.5, 1])
    waves.legend(loc="upper center", ncols=2)
    plotting.save(fig)


if __name__ == "__main__":
    main()
