"""Which axis each frequency pair of M-RoPE follows: chunked sections against interleaved ones.

A head of 128 channels, 64 pairs: pair $r$ turns at $\\theta_r = b^{-2r/128}$ radians per unit of
its axis's id, with each model's own base $b$. Top: Qwen2-VL's and Qwen2.5-VL's chunked sections
[16, 24, 24] at $b = 10^6$: the temporal axis takes the 16 fastest pairs, height the next 24 and
width the 24 slowest. Bottom: Qwen3-VL's interleaved sections [24, 20, 20] at $b = 5 \\times 10^6$:
height and width take every third pair from pair 1 and pair 2, the temporal axis every third pair
from pair 0 to pair 57 and the last four, so every axis has pairs from the fastest to nearly the
slowest.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two strips of 64 dots against frequency on a logarithmic axis from 1 down to below 1e-6, each "
    "dot in the row of the axis its pair follows: temporal, height or width. Top, chunked, base one "
    "million: the 16 fastest pairs are temporal, the next 24 height, the 24 slowest width. Bottom, "
    "interleaved, base five million: temporal, height and width alternate from the fastest pair down "
    "to pair 59, and pairs 60 to 63 are temporal."
)
AXES = ("temporal", "height", "width")
#: Each strip: the model whose head, sections, layout and base it draws, and its title.
STRIPS = (
    ("qwen2-vl-7b", "chunked [16, 24, 24], base $10^6$: Qwen2-VL, Qwen2.5-VL"),
    ("qwen3-vl-8b", "interleaved [24, 20, 20], base $5 \\times 10^6$: Qwen3-VL"),
)


def main():
    qwen2, qwen25, qwen3 = (posenc.models.model(key) for key in ("qwen2-vl-7b", "qwen2.5-vl-7b", "qwen3-vl-8b"))
    # What the caption, the alt text and the titles state, held to the records.
    for field in ("head_dim", "rope_theta", "mrope_section", "mrope_axis_layout"):
        assert qwen2[field] == qwen25[field]
    assert qwen2["head_dim"] == qwen3["head_dim"] == 128
    assert (qwen2["rope_theta"], qwen3["rope_theta"]) == (1e6, 5e6)
    assert (qwen2["mrope_section"], qwen3["mrope_section"]) == ((16, 24, 24), (24, 20, 20))
    assert (qwen2["mrope_axis_layout"], qwen3["mrope_axis_layout"]) == ("chunked", "interleaved")
    chunked = posenc.mrope_axes(128, qwen2["mrope_section"], axis_layout=qwen2["mrope_axis_layout"])
    interleaved = posenc.mrope_axes(128, qwen3["mrope_section"], axis_layout=qwen3["mrope_axis_layout"])
    assert np.array_equal(chunked, np.repeat([0, 1, 2], [16, 24, 24]))
    assert np.array_equal(interleaved[:60], np.tile([0, 1, 2], 20)) and np.all(interleaved[60:] == 0)
    assert np.array_equal(np.bincount(interleaved), [24, 20, 20])

    fig, axes = plotting.new_figure(aspect=0.5, nrows=2, sharex=True, narrow={"aspect": 1.0})
    slowest = []
    for ax, (key, title) in zip(axes, STRIPS, strict=True):
        record = posenc.models.model(key)
        theta = posenc.rope_frequencies(record["head_dim"], base=record["rope_theta"])
        assert np.all(np.diff(theta) < 0) and theta[0] == 1.0
        slowest.append(theta[-1])
        axis_of = posenc.mrope_axes(
            record["head_dim"], record["mrope_section"], axis_layout=record["mrope_axis_layout"]
        )
        for axis in range(len(AXES)):
            chosen = axis_of == axis
            ax.plot(
                theta[chosen], np.full(chosen.sum(), axis), "o", markersize=5, color=plotting.colour_of(series=axis)
            )
        ax.set(
            title=plotting.wrap(*title.replace(": ", ":\n").split("\n")),
            yticks=[0, 1, 2],
            yticklabels=AXES,
            ylim=(2.6, -0.6),
        )
        ax.set_xscale("log")
    assert 1e-7 < min(slowest) < 1e-6  # the alt text's "below 1e-6"
    axes[1].set_xlabel(r"pair frequency $\theta_r$ (radians per id)")
    axes[1].invert_xaxis()  # the fastest pair, r = 0, on the left
    plotting.save(fig)


if __name__ == "__main__":
    main()
