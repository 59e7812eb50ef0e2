"""The three M-RoPE position ids of every token of text, an image, text, a video and text.

Three text tokens, an image of 4 x 6 patches (2 x 3 tokens after the 2 x 2 merge), two text
tokens, a video of 3 temporal steps of 4 x 4 patches (2 x 2 tokens each) and two text tokens,
as transformers 5.24.0 numbers them. Top: Qwen2-VL, one temporal id per step. Bottom:
Qwen2.5-VL with 2 tokens per second and 1 s per temporal step, so the temporal ids of the video
advance by 2 per step and reach 12, while the text after it resumes at 10: every vision segment
moves the position on by its larger merged side, whatever its temporal ids.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two line plots of position id against token index 0 to 24, three lines each: temporal, "
    "height and width id. On text all three lines coincide and rise by one per token. Over the "
    "image (tokens 3 to 8) the temporal id stays at 3 while height takes 3 or 4 and width 3, 4, 5. "
    "Over the video (tokens 11 to 22) height and width repeat 8 and 9 in each frame; the temporal "
    "id is 8, 9, 10 per frame in Qwen2-VL and 8, 10, 12 in Qwen2.5-VL. Text resumes at 10 in both."
)
SEGMENTS = [("text", 3), ("image", (1, 4, 6)), ("text", 2), ("video", (3, 4, 4)), ("text", 2)]
AXES = ("temporal", "height", "width")


def main():
    qwen2 = posenc.mrope_position_ids(SEGMENTS, variant="qwen2-vl")
    timed = [(*segment, 1.0) if segment[0] == "video" else segment for segment in SEGMENTS]
    qwen25 = posenc.mrope_position_ids(timed, variant="qwen2.5-vl", tokens_per_second=2)
    video = slice(11, 23)
    assert np.array_equal(np.unique(qwen2[0, video]), [8, 9, 10]) and np.array_equal(
        np.unique(qwen25[0, video]), [8, 10, 12]
    )
    assert qwen2[0, 23] == qwen25[0, 23] == 10 and np.array_equal(qwen2[1:], qwen25[1:])
    assert np.array_equal(qwen2[:, 3:9], [[3] * 6, [3, 3, 3, 4, 4, 4], [3, 4, 5] * 2])

    fig, axes = plotting.new_figure(aspect=0.62, nrows=2, sharex=True, narrow={"aspect": 1.25})
    tokens = np.arange(qwen2.shape[1])
    for ax, ids, title in zip(axes, (qwen2, qwen25), ("Qwen2-VL", "Qwen2.5-VL, 2 tokens per second"), strict=True):
        for start, stop, label in ((3, 9, "image"), (11, 23, "video")):
            ax.axvspan(start - 0.5, stop - 0.5, color=plotting.colour_of(reference=True), alpha=0.1, linewidth=0)
            ax.text((start + stop - 1) / 2, 12.6, label, ha="center", va="bottom")
        # Nested markers, largest first, so ids that coincide (all three on text) stay visible.
        for axis, (name, marker, size) in enumerate(zip(AXES, "os^", (9, 6, 3.5), strict=True)):
            colour = plotting.colour_of(series=axis)
            ax.plot(tokens, ids[axis], marker=marker, markersize=size, linewidth=0.9, label=name, color=colour)
        ax.set(title=title, ylabel="position id", ylim=(-0.5, 14.5), yticks=[0, 4, 8, 12])
    axes[1].set_xlabel("token")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3, frameon=False)
    plotting.save(fig)


if __name__ == "__main__":
    main()
