"""Values cached per token and layer by three attention layouts with DeepSeek-V3's head shapes.

128 query heads whose keys are 192 wide (128 position-free + 64 rotary channels) and values 128
wide. Full multi-head attention caches every head's key and value: 128 × (192 + 128) = 40960
values. Grouped-query attention with 8 key-value heads caches 8 × 320 = 2560. DeepSeek-V3's
multi-head latent attention caches the 512-wide latent and one 64-wide rotary key shared by all
heads: 576, about 71 times fewer than full multi-head attention.
"""

from posenc.site import plotting
import posenc

ALT = (
    "Horizontal bars on a log scale of values cached per token and layer: full multi-head "
    "attention 40960, grouped-query attention with 8 key-value heads 2560, multi-head latent "
    "attention 576."
)
HEADS, NOPE, ROPE, VALUE, LATENT, GROUPS = 128, 128, 64, 128, 512, 8


def main():
    per_head = (NOPE + ROPE) + VALUE
    rows = [
        ("MHA, 128 heads", HEADS * per_head),
        ("GQA, 8 key-value heads", GROUPS * per_head),
        ("MLA, latent 512 + rotary key 64", posenc.mla_cache_values(LATENT, ROPE)),
    ]
    # The caption's numbers.
    assert [value for _, value in rows] == [40960, 2560, 576]
    assert round(rows[0][1] / rows[2][1]) == 71

    fig, ax = plotting.new_figure(aspect=0.3, narrow={"aspect": 0.75})
    labels = [label for label, _ in rows][::-1]
    values = [value for _, value in rows][::-1]
    ax.barh(labels, values, color=[plotting.colour_of(series=i) for i in (2, 1, 0)])
    for y, value in enumerate(values):
        ax.text(value * 1.1, y, f"{value:,}", va="center")
    ax.set_xscale("log")
    ax.set_xlim(100, 4e5)
    ax.set_xticks([1e2, 1e3, 1e4, 1e5], ["100", "1K", "10K", "100K"])
    ax.minorticks_off()
    ax.set_xlabel(plotting.wrap("values cached", "per token per layer"))
    if plotting.narrow():
        ax.set_yticks(range(3), [label.replace(", ", ",\n") for label in labels])
    plotting.save(fig)


if __name__ == "__main__":
    main()
