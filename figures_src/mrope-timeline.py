"""The three M-RoPE position ids of every token of text, an image, text, a video and text.

Three text tokens, an image of 4 x 6 patches (2 x 3 tokens after the 2 x 2 merge), two text
tokens, a video of 3 temporal steps of 4 x 4 patches (2 x 2 tokens each) and two text tokens.
Top: Qwen2-VL, one temporal id per step. Bottom: Qwen2.5-VL at its released 2 tokens per second
and 1 s per temporal step, so the temporal ids of the video advance by 2 per step and reach 12.
The lines follow Qwen's own code, which starts each segment one past the largest id so far: the
text after the video resumes at 11 and at 13. The crosses are that text as transformers
5.24.0 numbers it, at the video's start plus its larger merged side, 10 in both, below temporal
ids the video used.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two line plots of position id against token index 0 to 24, three lines each: temporal, "
    "height and width id. On text all three lines coincide and rise by one per token. Over the "
    "image (tokens 3 to 8) the temporal id stays at 3 while height takes 3 or 4 and width 3, 4, 5. "
    "Over the video (tokens 11 to 22) height and width repeat 8 and 9 in each frame; the temporal "
    "id is 8, 9, 10 per frame in Qwen2-VL and 8, 10, 12 in Qwen2.5-VL. The text after the video "
    "resumes at 11 in Qwen2-VL and 13 in Qwen2.5-VL; crosses mark it at 10 and 11 in both, "
    "where transformers 5.24.0 puts it."
)
SEGMENTS = [("text", 3), ("image", (1, 4, 6)), ("text", 2), ("video", (3, 4, 4)), ("text", 2)]
AXES = ("temporal", "height", "width")


def main():
    qwen25 = posenc.models.model("qwen2.5-vl-7b")
    tokens_per_second = qwen25["tokens_per_second"]
    merge = qwen25["spatial_merge_size"]
    assert tokens_per_second == 2 and merge == posenc.models.model("qwen2-vl-7b")["spatial_merge_size"] == 2
    timed = [(*segment, 1.0) if segment[0] == "video" else segment for segment in SEGMENTS]
    panels = []
    for title, segments, kwargs in (
        ("Qwen2-VL", SEGMENTS, dict(variant="qwen2-vl")),
        ("Qwen2.5-VL, 2 tokens per second", timed, dict(variant="qwen2.5-vl", tokens_per_second=tokens_per_second)),
    ):
        ids = posenc.mrope_position_ids(segments, spatial_merge_size=merge, **kwargs)
        side = posenc.mrope_position_ids(segments, spatial_merge_size=merge, resume="after-larger-side", **kwargs)
        panels.append((title, ids, side))
    (_, qwen2, qwen2_side), (_, qwen25_ids, qwen25_side) = panels
    video, after = slice(11, 23), slice(23, 25)
    assert np.array_equal(np.unique(qwen2[0, video]), [8, 9, 10])
    assert np.array_equal(np.unique(qwen25_ids[0, video]), [8, 10, 12])
    assert qwen2[0, 23] == 11 and qwen25_ids[0, 23] == 13 and qwen2_side[0, 23] == qwen25_side[0, 23] == 10
    assert np.array_equal(qwen2[:, 3:9], [[3] * 6, [3, 3, 3, 4, 4, 4], [3, 4, 5] * 2])
    for _, ids, side in panels:  # the rules part only after the video
        assert np.array_equal(ids[:, :23], side[:, :23]) and np.all(side[:, after] == side[0, after])

    fig, axes = plotting.new_figure(aspect=0.62, nrows=2, sharex=True, narrow={"aspect": 1.25})
    tokens = np.arange(qwen2.shape[1])
    for ax, (title, ids, side) in zip(axes, panels, strict=True):
        for start, stop, label in ((3, 9, "image"), (11, 23, "video")):
            ax.axvspan(start - 0.5, stop - 0.5, color=plotting.colour_of(reference=True), alpha=0.1, linewidth=0)
            ax.text((start + stop - 1) / 2, 14.6, label, ha="center", va="bottom")
        # Nested markers, largest first, so ids that coincide (all three on text) stay visible.
        for axis, (name, marker, size) in enumerate(zip(AXES, "os^", (9, 6, 3.5), strict=True)):
            colour = plotting.colour_of(series=axis)
            ax.plot(tokens, ids[axis], marker=marker, markersize=size, linewidth=0.9, label=name, color=colour)
        ax.plot(
            tokens[after],
            side[0, after],
            "x",
            markersize=8,
            markeredgewidth=1.6,
            color=plotting.colour_of(reference=True),
            label="text, by transformers 5.24.0",
        )
        ax.set(title=title, ylabel="position id", ylim=(-0.5, 16.5), yticks=[0, 4, 8, 12, 16])
    axes[1].set_xlabel("token")
    ncols = 1 if plotting.narrow() else 2  # a phone's column holds one entry a row
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=ncols, frameon=False)
    plotting.save(fig)


if __name__ == "__main__":
    main()
