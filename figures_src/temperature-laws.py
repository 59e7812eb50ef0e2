"""Two query temperatures that step up with the position: Llama 4's and Ministral 3's.

Both multiply the queries by 1 + 0.1 ln(1 + k), with k a whole number of steps. Llama 4
(floor_scale 8192, attn_scale 0.1, on its NoPE layers) counts k = floor((t + 1) / 8192), so
its first step comes at t = 8191; Ministral 3 (llama_4_scaling_beta 0.1, original length
16384, on every layer) counts k = floor(t / 16384), first stepping at t = 16384. At
t = 131071 the factors are 1 + 0.1 ln 17 ≈ 1.283 and 1 + 0.1 ln 8 ≈ 1.208.
"""

import math

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Step plot of the query scale against position from 0 to 131071. Both curves start at 1 and "
    "rise in steps of shrinking height. Llama 4's steps every 8192 positions, starting at 8191, "
    "and reaches about 1.28; Ministral 3's steps every 16384, starting at 16384, and reaches about 1.21."
)
END = 131072


def main():
    t = np.arange(END)
    llama4 = posenc.llama4_query_scale(t, floor_scale=8192, attn_scale=0.1)
    ministral = posenc.llama4_beta_query_scale(t, beta=0.1, original_max_position_embeddings=16384)
    # The caption's numbers.
    assert np.flatnonzero(llama4 > 1)[0] == 8191 and np.flatnonzero(ministral > 1)[0] == 16384
    assert math.isclose(llama4[-1], 1 + 0.1 * math.log(17)) and round(llama4[-1], 3) == 1.283
    assert math.isclose(ministral[-1], 1 + 0.1 * math.log(8)) and round(ministral[-1], 3) == 1.208

    fig, ax = plotting.new_figure(aspect=0.45, narrow={"aspect": 0.9})
    ax.plot(t, llama4, color=plotting.colour_of(series=0), label="Llama 4: floor((t + 1) / 8192)")
    ax.plot(t, ministral, color=plotting.colour_of(series=1), linestyle="--", label="Ministral 3: floor(t / 16384)")
    ax.set_xlim(0, END)
    ticks = np.arange(0, END + 1, 32768)
    ax.set_xticks(ticks, [f"{n // 1024}K" for n in ticks])
    ax.set_xlabel("position t")
    ax.set_ylabel("query scale")
    ax.legend(loc="lower right")
    plotting.save(fig)


if __name__ == "__main__":
    main()
