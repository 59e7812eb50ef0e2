"""Which axis each frequency pair of M-RoPE follows: chunked sections against interleaved ones.

A head of 128 channels, 64 pairs, base 10000: pair $r$ turns at $\\theta_r = 10000^{-2r/128}$
radians per unit of its axis's id. Top: Qwen2-VL's and Qwen2.5-VL's chunked sections
[16, 24, 24]: the temporal axis takes the 16 fastest pairs, height the next 24 and width the 24
slowest. Bottom: Qwen3-VL's interleaved sections [24, 20, 20]: height and width take every third
pair from pair 1 and pair 2, so every axis has pairs from the fastest to nearly the slowest; the
last four pairs are temporal.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two strips of 64 dots against frequency on a logarithmic axis from 1 down to about 1e-4, each "
    "dot in the row of the axis its pair follows: temporal, height or width. Top, chunked: the 16 "
    "fastest pairs are temporal, the next 24 height, the 24 slowest width. Bottom, interleaved: "
    "temporal, height and width alternate from the fastest pair down to pair 59, and pairs 60 to 63 "
    "are temporal."
)
HEAD, BASE = 128, 10000.0
AXES = ("temporal", "height", "width")
LAYOUTS = (
    ("chunked", [16, 24, 24], "chunked [16, 24, 24]: Qwen2-VL, Qwen2.5-VL"),
    ("interleaved", [24, 20, 20], "interleaved [24, 20, 20]: Qwen3-VL"),
)


def main():
    theta = posenc.rope_frequencies(HEAD, base=BASE)
    chunked = posenc.mrope_axes(HEAD, [16, 24, 24])
    interleaved = posenc.mrope_axes(HEAD, [24, 20, 20], axis_layout="interleaved")
    assert np.array_equal(chunked, np.repeat([0, 1, 2], [16, 24, 24]))
    assert np.array_equal(interleaved[:60], np.tile([0, 1, 2], 20)) and np.all(interleaved[60:] == 0)
    assert np.array_equal(np.bincount(interleaved), [24, 20, 20]) and np.all(np.diff(theta) < 0)

    fig, axes = plotting.new_figure(aspect=0.5, nrows=2, sharex=True, narrow={"aspect": 1.0})
    for ax, (layout, sections, title) in zip(axes, LAYOUTS, strict=True):
        axis_of = posenc.mrope_axes(HEAD, sections, axis_layout=layout)
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
    axes[1].set_xlabel(r"pair frequency $\theta_r$ (radians per id)")
    axes[1].invert_xaxis()  # the fastest pair, r = 0, on the left
    plotting.save(fig)


if __name__ == "__main__":
    main()
