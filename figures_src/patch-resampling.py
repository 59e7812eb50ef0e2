"""Resizing a 14 x 14 table of patch positions to 16 x 16, as timm, transformers and DINOv2 do it.

Left: the weights with which the three libraries' bicubic resize makes output row 3 of 16 from
the 14 input rows (the same weights serve the columns, and every channel). transformers uses
the $a = -0.75$ cubic at the scale 14/16; timm's default antialiasing switches to the
$a = -0.5$ cubic even though this is an upsampling; the original DINOv2 code asks for the scale
factor 16.1/14, so it samples at the scale 14/16.1 and reads row 3 at input coordinate 2.54
instead of 2.56.
Right: the largest difference between timm's and transformers' resized tables, over the 768
channels, at each of the 256 patches, for MAE's 2-D sin-cos table of a ViT-B/16 at 224 pixels
standing in for a learned one: at most 0.053, on values of magnitude up to 1.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Left: grouped bars of the weights of input rows 1 to 4 in output row 3, for timm, "
    "transformers and DINOv2: small negative weights on rows 1 and 4, about 0.5 on row 2 and 0.65 "
    "on row 3; timm's negative weights are the smallest in size. "
    "Right: a 16 by 16 heat map of the largest difference between timm's and transformers' "
    "resized tables at each patch, from 0 to about 0.05."
)
OLD, NEW, ROW = 14, 16, 3
CONVENTIONS = ("timm", "transformers", "dinov2")


def main():
    weights = {
        "timm": posenc.resample_weights(OLD, NEW, antialias=True),
        "transformers": posenc.resample_weights(OLD, NEW),
        "dinov2": posenc.resample_weights(OLD, NEW, scale_factor=(NEW + 0.1) / OLD),
    }
    for matrix in weights.values():
        assert np.allclose(matrix.sum(axis=1), 1.0) and np.flatnonzero(matrix[ROW]).tolist() == [1, 2, 3, 4]
    table = np.vstack([np.zeros((1, 768)), posenc.sincos_2d_table(OLD, OLD, 768, layout="mae")])
    resized = {name: posenc.resample_patch_table(table, (NEW, NEW), convention=name) for name in CONVENTIONS}
    difference = np.abs(resized["timm"] - resized["transformers"])[1:].max(axis=1).reshape(NEW, NEW)
    assert round(float(difference.max()), 3) == 0.053 and np.abs(table).max() == 1.0
    assert np.array_equal(resized["timm"][0], table[0])  # the class token's row passes through

    fig, (left, right) = plotting.new_figure(aspect=0.45, ncols=2, width_ratios=[1.2, 1], narrow={"aspect": 1.7})
    assert [round(scale * (ROW + 0.5) - 0.5, 2) for scale in (OLD / NEW, OLD / (NEW + 0.1))] == [2.56, 2.54]
    taps = np.arange(1, 5)
    for index, name in enumerate(CONVENTIONS):
        left.bar(
            taps + (index - 1) * 0.27,
            weights[name][ROW, taps],
            width=0.27,
            label=name,
            color=plotting.colour_of(series=index),
        )
    left.axhline(0, color=plotting.colour_of(reference=True), linewidth=0.6)
    left.set(xticks=taps, xlabel="input row", ylabel="weight", title=f"output row {ROW} of {NEW}")
    left.legend(loc="upper left", frameon=False)
    image = plotting.heatmap(right, difference, signed=False, colorbar_label="largest |timm − transformers|")
    right.set(title="timm − transformers", xticks=[0, 15], yticks=[0, 15], xlabel="column", ylabel="row")
    right.set_aspect("equal")
    image.set_clim(0, float(difference.max()))
    plotting.save(fig)


if __name__ == "__main__":
    main()
