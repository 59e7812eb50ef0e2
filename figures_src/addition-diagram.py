r"""Token embeddings plus the positional encoding make the transformer input.

Each row of panels is one sequence of a batch of two: its $8 \times 6$ token-embedding matrix
(rows are positions, columns hidden channels) plus the $8 \times 6$ sinusoidal table gives the
$8 \times 6$ input of the first block. The same table is added to every sequence of the batch
(broadcast over the batch axis), so the shapes [2, 8, 6] + [8, 6] give [2, 8, 6].
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two rows of three heatmaps, one row per sequence of a batch of two. In each row an 8-by-6 "
    "token-embedding matrix plus the same 8-by-6 sinusoidal encoding equals the 8-by-6 transformer "
    "input: shapes [batch 2, seq_len 8, hidden 6] plus [8, 6] broadcast to [2, 8, 6]."
)
BATCH, SEQ_LEN, HIDDEN = 2, 8, 6


def main():
    # Stand-in embeddings: any values would do; a fixed seed keeps the SVG reproducible.
    embeddings = np.random.default_rng(7).normal(scale=0.6, size=(BATCH, SEQ_LEN, HIDDEN))
    table = posenc.sinusoidal(np.arange(SEQ_LEN), HIDDEN)
    inputs = embeddings + table[None]  # broadcast the [seq_len, hidden] table over the batch
    assert table.shape == (SEQ_LEN, HIDDEN) and inputs.shape == embeddings.shape == (BATCH, SEQ_LEN, HIDDEN)
    assert all(np.allclose(inputs[b] - embeddings[b], table) for b in range(BATCH))

    limit = float(np.abs(inputs).max())
    narrow = plotting.narrow()  # a phone's column: the same grid, its words and ticks fewer
    fig, axes = plotting.new_figure(
        aspect=0.62,
        nrows=BATCH,
        ncols=5,
        gridspec_kw={"width_ratios": [4, 1, 4, 1, 4]},
        narrow={"aspect": 1.3, "gridspec_kw": {"width_ratios": [4, 1.3, 4, 1.3, 4]}},
    )
    if narrow:
        titles = (
            f"embeddings\n[{BATCH}, {SEQ_LEN}, {HIDDEN}]",
            f"encoding\n[{SEQ_LEN}, {HIDDEN}]",
            f"input\n[{BATCH}, {SEQ_LEN}, {HIDDEN}]",
        )
    else:
        titles = (
            f"token embeddings\n[batch, seq_len, hidden] = [{BATCH}, {SEQ_LEN}, {HIDDEN}]",
            f"positional encoding\n[seq_len, hidden] = [{SEQ_LEN}, {HIDDEN}]",
            f"transformer input\n[batch, seq_len, hidden] = [{BATCH}, {SEQ_LEN}, {HIDDEN}]",
        )
    for b in range(BATCH):
        row = axes[b]
        for ax, values, title in zip(row[0::2], (embeddings[b], table, inputs[b]), titles):
            image = plotting.heatmap(ax, values, extent=(-0.5, HIDDEN - 0.5, SEQ_LEN - 0.5, -0.5))
            image.set_clim(-limit, limit)  # one colour scale for all six panels
            ax.set_xticks(range(0, HIDDEN, 5 if narrow else 1))
            ax.set_yticks(range(0, SEQ_LEN, 2))
            if b == 0:
                ax.set_title(title, fontsize=9)
            else:
                ax.set_xlabel("channel i" if narrow else "hidden channel i")
        row[0].set_ylabel(f"sequence {b + 1}\nposition t")
        for ax, symbol in zip(row[1::2], ("+", "=")):
            ax.axis("off")
            ax.text(0.5, 0.5, symbol, ha="center", va="center", fontsize=16 if narrow else 22, transform=ax.transAxes)
    axes[1, 2].set_title("the same table\n(broadcast)" if narrow else "the same table (broadcast)", fontsize=9)
    if narrow:  # below the grid: a phone's column has no width to spare
        fig.colorbar(image, ax=axes, label="value", location="bottom", shrink=0.6, aspect=30)
    else:
        fig.colorbar(image, ax=axes[:, 4], label="value", shrink=0.8)
    plotting.save(fig)


if __name__ == "__main__":
    main()
