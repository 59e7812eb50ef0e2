"""What each layer of five decoder stacks does with position.

One row per model, its first layer on the left, each layer coloured by its attention: RoPE over
the whole context, RoPE within a sliding window or a chunk, or no rotation at all (NoPE) over the
whole context. Llama 3.1 8B rotates in all 32 layers. Gemma 3 4B has 29 sliding-window layers at
base 10,000 and 5 global layers at base 1,000,000. gpt-oss-20b alternates 12 windowed and 12 full
layers, all rotating. Llama 4 Scout has 36 chunked RoPE layers and 12 NoPE layers. SmolLM3 3B has
27 RoPE and 9 NoPE layers, all attending to the whole context. The layers come from
`posenc.architectures`' schedules at the models' published layer counts.
"""

import posenc
from posenc.site import plotting

ALT = (
    "Five rows of coloured cells, one cell per layer. Llama 3.1 8B: 32 cells, all RoPE with full "
    "attention. Gemma 3 4B: 34 cells, five sliding-window RoPE cells then one full-attention RoPE "
    "cell, repeated, ending with four sliding cells. gpt-oss-20b: 24 cells alternating sliding and "
    "full RoPE. Llama 4 Scout: 48 cells, three chunked RoPE cells then one NoPE cell, repeated. "
    "SmolLM3 3B: 36 cells, three full RoPE cells then one NoPE cell, repeated."
)
FULL_ROPE, LOCAL_ROPE, NOPE = "RoPE, full attention", "RoPE, sliding window or chunk", "NoPE, full attention"
KINDS = (FULL_ROPE, LOCAL_ROPE, NOPE)


def kind(layer):
    if not layer.rotates:
        return NOPE
    return FULL_ROPE if layer.attention == posenc.architectures.FULL else LOCAL_ROPE


def main():
    # Released models with a record take every setting from it, never from a schedule's defaults.
    gptoss, smollm3 = posenc.models.model("gpt-oss-20b"), posenc.models.model("smollm3-3b")
    stacks = [
        ("Llama 3.1 8B", posenc.layer_schedule(32, 1, local_base=None, global_base=500_000.0)),
        ("Gemma 3 4B: local base 10k, global 1M", posenc.gemma3_layers(34)),
        (
            "gpt-oss-20b",
            posenc.layer_schedule(
                gptoss["num_hidden_layers"],
                gptoss["global_period"],
                local_base=gptoss["rope_theta"],
                global_base=gptoss["rope_theta"],
            ),
        ),
        ("Llama 4 Scout", posenc.llama4_layers(48)),
        (
            "SmolLM3 3B",
            posenc.smollm3_layers(
                smollm3["num_hidden_layers"],
                no_rope_layer_interval=smollm3["no_rope_layer_interval"],
                rope_theta=smollm3["rope_theta"],
            ),
        ),
    ]
    counts = {name: [sum(kind(s) == k for s in layers) for k in KINDS] for name, layers in stacks}
    # The caption's numbers: (full RoPE, local RoPE, NoPE) layers of each model.
    assert list(counts.values()) == [[32, 0, 0], [5, 29, 0], [12, 12, 0], [0, 36, 12], [27, 0, 9]]
    assert {s.base for s in stacks[1][1] if s.attention == posenc.architectures.FULL} == {1_000_000.0}
    assert {s.base for s in stacks[1][1] if s.attention != posenc.architectures.FULL} == {10_000.0}
    assert {s.base for s in stacks[4][1] if s.rotates} == {smollm3["rope_theta"]}

    narrow = plotting.narrow()
    fig, ax = plotting.new_figure(aspect=0.42, narrow={"aspect": 1.0})
    colours = {k: plotting.colour_of(series=i) for i, k in enumerate(KINDS)}
    step = 1.6 if narrow else 1.0  # the narrow layout writes each name above its row
    for row, (name, layers) in enumerate(stacks):
        y = -row * step
        ax.barh(
            y,
            1.0,
            left=range(len(layers)),
            height=0.7,
            align="center",
            color=[colours[kind(s)] for s in layers],
            edgecolor=plotting.BACKGROUND,
            linewidth=0.8,
        )
        label = f"{name} ({len(layers)} layers)"
        if narrow:
            ax.text(0, y + 0.45, label, ha="left", va="bottom")
        else:
            ax.text(-0.8, y, label.replace(": ", ":\n"), ha="right", va="center")
    handles = [plotting.plt.Rectangle((0, 0), 1, 1, color=colours[k]) for k in KINDS]
    ax.set_xlim(0 if narrow else -0.3, 48.3)
    ax.set_ylim(-(len(stacks) - 1) * step - 0.6, 1.25 if narrow else 0.6)
    ax.set_yticks([])
    ax.set_xticks([0.5, 11.5, 23.5, 35.5, 47.5], ["1", "12", "24", "36", "48"])
    ax.set_xlabel("layer")
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    fig.legend(
        handles, KINDS, loc="outside lower center", ncols=1 if narrow else 3, handlelength=1.2, columnspacing=1.2
    )
    plotting.save(fig)


if __name__ == "__main__":
    main()
