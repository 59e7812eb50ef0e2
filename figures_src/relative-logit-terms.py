r"""What each relative scheme adds to the logits, over the same 16 query and 16 key positions.

Top row: biases with fixed illustrative parameters. Symmetric ALiBi for the first head of eight
(slope 1/2), Kerple's logarithmic bias with $r_1 = r_2 = 1$, and the input FIRE's MLP receives,
$\psi(i - j)/\psi(\max(L, i))$ with $c = 1$ and $L = 8$, on causal keys only. Bottom row: the
learned schemes add a trained value, so each cell shows which row of the learned table it
reads: Shaw's clipped offset $j - i$ with $k = 3$, T5's bucket of $j - i$ (8 buckets, maximum
distance 12, both directions) and DeBERTa-v2's log bucket of $i - j$ (bucket size 6, maximum
position 12). A model without position encoding (NoPE) adds nothing: a panel of zeros.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Six 16-by-16 heatmaps over query position i (rows) and key position j (columns). Top: "
    "symmetric ALiBi, minus half the distance, from 0 on the diagonal to -7.5 in the corners; "
    "Kerple's log bias, minus log(1 + |i - j|), from 0 to -2.77; FIRE's normalised distance, "
    "0 on the diagonal and up to 1 in the first column once i reaches 8, the upper triangle blank. "
    "Bottom: Shaw's clipped offset, from -3 to 3, saturating 3 steps from the diagonal; T5's bucket, "
    "one bucket each for distances 0 and 1, then log-spaced bands up to the last bucket of each "
    "direction (3 before the query, 7 after it); DeBERTa's bucket, "
    "exact up to 3 steps, then growing slowly, odd about the diagonal."
)
LENGTH = 16
SHAW_K, T5_BUCKETS, T5_MAX, DEBERTA_SIZE, DEBERTA_MAX = 3, 8, 12, 6, 12
FIRE_C, FIRE_L = 1.0, 8.0


def main():
    ids = np.arange(LENGTH)
    i, j = np.indices((LENGTH, LENGTH))
    alibi = posenc.alibi_symmetric_bias(8, ids, ids)[0]
    kerple = posenc.kerple_bias(ids, ids, 1.0, 1.0, variant="log")[0]
    identity = ([1.0], [0.0], [[1.0]], [0.0])  # an MLP f(x) = max(x, 0): the panel shows f's input
    fire = np.where(i >= j, posenc.fire_bias(ids, ids, *identity, c=FIRE_C, threshold=FIRE_L)[0], np.nan)
    shaw = posenc.shaw_relative_index(ids, ids, SHAW_K) - SHAW_K  # the clipped offset itself, -k..k
    t5 = posenc.t5_relative_position_bucket(j - i, bidirectional=True, num_buckets=T5_BUCKETS, max_distance=T5_MAX)
    deberta = posenc.deberta_relative_positions(ids, ids, bucket_size=DEBERTA_SIZE, max_position=DEBERTA_MAX)
    # The numbers in the caption and the alt text.
    assert alibi.min() == -7.5 and np.all(np.diagonal(alibi) == 0)
    assert round(float(kerple.min()), 2) == -2.77
    assert np.all(fire[ids >= FIRE_L, 0] == 1.0) and np.nanmax(fire) <= 1.0 and np.nanmin(fire) == 0.0
    assert np.array_equal(shaw, np.clip(j - i, -SHAW_K, SHAW_K))
    assert np.array_equal(t5[-1, -3:], [2, 1, 0]) and np.array_equal(t5[0, 1:4], [5, 6, 6]) and t5.max() == 7
    assert np.array_equal(deberta, -deberta.T) and np.array_equal(deberta[3, :4], [3, 2, 1, 0])

    fig, axes = plotting.new_figure(aspect=0.72, nrows=2, ncols=3, narrow={"nrows": 3, "ncols": 2, "aspect": 1.75})
    extent = (-0.5, LENGTH - 0.5, LENGTH - 0.5, -0.5)
    panels = (
        (alibi, False, "symmetric ALiBi\nslope 1/2", "bias"),
        (kerple, False, "Kerple (log)\nr1 = r2 = 1", "bias"),
        (fire, False, "FIRE: input\nof the MLP", "ψ(i−j)/ψ(max(L, i))"),
        (shaw, True, f"Shaw: clipped\noffset, k = {SHAW_K}", "row (offset)"),
        (t5, False, "T5: bucket\nof j − i", "bucket"),
        (deberta, True, "DeBERTa-v2\nbucket of i − j", "bucket"),
    )
    for ax, (values, signed, title, label) in zip(axes.flat, panels):
        plotting.heatmap(ax, values, signed=signed, colorbar_label=label, extent=extent)
        ax.set_aspect("equal")
        ax.set_title(title, fontsize=9)
        ax.set_xticks(range(0, LENGTH, 5))
        ax.set_yticks(range(0, LENGTH, 5))
    # The panels' places: reading order, in rows of three (two in the narrow layout).
    columns = 2 if plotting.narrow() else 3
    for number, ax in enumerate(axes.flat):
        if number >= axes.size - columns:
            ax.set_xlabel("key j")
        if number % columns == 0:
            ax.set_ylabel("query i")
    plotting.save(fig)


if __name__ == "__main__":
    main()
