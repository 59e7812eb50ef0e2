"""Raw position ids against ids normalized by sentence length.

Left: raw ids $t$ keep a step of 1 between neighbours whatever the length $L$. Right: the
normalized ids $u_t = t / (L - 1)$ always span 0 to 1, so the step between neighbours is 1/4
at $L = 5$ but 1/8 at $L = 9$, and the same token $t = 4$ gets $u = 1$ in one sentence and
$u = 0.5$ in the other.
"""

import numpy as np

from posenc.site import plotting

ALT = (
    "Two number lines per panel, one for a 5-token and one for a 9-token sentence. Left, "
    "raw ids 0 to 4 and 0 to 8, one unit apart in both. Right, normalized ids t/(L-1) "
    "from 0 to 1: five points a quarter (0.25) apart for L = 5 and nine points an eighth "
    "(0.125) apart for L = 9; token 4, highlighted, sits at 1.0 and at 0.5."
)
LENGTHS = (5, 9)
MARKED = 4  # the token followed across both sentences


def main():
    raw = {L: np.arange(L, dtype=float) for L in LENGTHS}
    normalized = {L: raw[L] / (L - 1) for L in LENGTHS}
    assert all(np.all(np.diff(raw[L]) == 1) for L in LENGTHS)
    assert np.all(np.diff(normalized[5]) == 0.25) and np.all(np.diff(normalized[9]) == 0.125)
    assert normalized[5][MARKED] == 1.0 and normalized[9][MARKED] == 0.5

    fig, axes = plotting.new_figure(aspect=0.3, ncols=2)
    panels = ((axes[0], raw, "raw id t", "1"), (axes[1], normalized, "normalized id u = t / (L - 1)", None))
    for ax, ids, label, step_text in panels:
        for row, L in zip((1, 0), LENGTHS):  # L = 5 on top
            values = ids[L]
            ax.axhline(row, color=plotting.colour_of(reference=True), linewidth=0.6, zorder=0)
            ax.plot(values, np.full(L, row), "o", color=plotting.colour_of(series=0), markersize=6)
            ax.plot(values[MARKED], row, "o", color=plotting.colour_of(series=1), markersize=9)
            ax.annotate(
                f"t = {MARKED}",
                (values[MARKED], row),
                xytext=(0, 9),
                textcoords="offset points",
                ha="center",
                fontsize=9,
            )
            step = values[1] - values[0]
            ax.annotate(
                "",
                xy=(values[1], row - 0.25),
                xytext=(values[0], row - 0.25),
                arrowprops=dict(arrowstyle="<->", color=plotting.colour_of(reference=True), shrinkA=0, shrinkB=0),
            )
            text = step_text or f"1/{L - 1} = {step:g}"
            ax.text(values[1] + 0.02 * values[-1], row - 0.25, f"step {text}", va="center", fontsize=9)
        ax.set_yticks((1, 0), [f"L = {L}" for L in LENGTHS])
        ax.set_ylim(-0.6, len(LENGTHS) - 0.4)
        ax.set_xlabel(label)
        ax.spines["left"].set_visible(False)
        ax.tick_params(axis="y", length=0)
    axes[0].set_xticks(range(max(LENGTHS)))
    axes[1].set_xticks(np.linspace(0, 1, 5))
    axes[1].set_xlim(-0.05, 1.07)
    axes[0].set_title("raw ids: step 1 at any length")
    axes[1].set_title("normalized ids: step depends on L")
    plotting.save(fig)


if __name__ == "__main__":
    main()
