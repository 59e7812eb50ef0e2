"""The sinusoidal table for max_len = 8 and d_model = 6, value by value.

Rows are positions 0-7 and columns the six channels in the interleaved layout (sin, cos,
sin, cos, ...), each cell printed to four decimals as a PyTorch implementation would give
it. Channels 0 and 1 swing through the whole range within eight positions; channels 4 and 5
stay within 0.016 of 0 and 1.
"""

import math

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "An 8-by-6 annotated heatmap of the sinusoidal encoding, positions 0 to 7 by channels 0 to 5. "
    "Row 0 reads 0, 1, 0, 1, 0, 1; row 1 reads 0.8415, 0.5403, 0.0464, 0.9989, 0.0022 and 1.0000; "
    "row 7 reads 0.6570, 0.7539, 0.3192, 0.9477, 0.0151 and 0.9999. Channels 0 and 1 change sign, "
    "channels 4 and 5 stay near 0 and 1."
)
MAX_LEN, D_MODEL = 8, 6


def main():
    table = posenc.sinusoidal(np.arange(MAX_LEN), D_MODEL)
    # Cross-check against the usual PyTorch recipe: div_term = exp(-ln(10000) * 2i / d_model).
    div_term = np.exp(np.arange(0, D_MODEL, 2) * (-math.log(10000.0) / D_MODEL))
    angles = np.arange(MAX_LEN)[:, None] * div_term
    recipe = np.empty((MAX_LEN, D_MODEL))
    recipe[:, 0::2], recipe[:, 1::2] = np.sin(angles), np.cos(angles)
    assert np.allclose(table, recipe)
    shown = table.round(4)
    assert shown[1].tolist() == [0.8415, 0.5403, 0.0464, 0.9989, 0.0022, 1.0]
    assert shown[7].tolist() == [0.657, 0.7539, 0.3192, 0.9477, 0.0151, 0.9999]
    assert np.abs(table[:, 4]).max() < 0.016 and (1 - table[:, 5]).max() < 0.016

    fig, ax = plotting.new_figure(aspect=0.6, narrow={"aspect": 1.15})
    image = plotting.heatmap(ax, table, colorbar_label="value", extent=(-0.5, D_MODEL - 0.5, MAX_LEN - 0.5, -0.5))
    plotting.annotate_cells(ax, image, table, fmt="{:.4f}", fontsize=9)
    ax.set_xticks(range(D_MODEL), [f"{i}\n{'sin' if i % 2 == 0 else 'cos'}" for i in range(D_MODEL)])
    ax.set_yticks(range(MAX_LEN))
    ax.set_xlabel("channel i (d_model = 6)")
    ax.set_ylabel("position t")
    ax.xaxis.set_ticks_position("top")
    ax.xaxis.set_label_position("top")
    ax.spines[["top", "right", "bottom", "left"]].set_visible(False)
    plotting.save(fig)


if __name__ == "__main__":
    main()
