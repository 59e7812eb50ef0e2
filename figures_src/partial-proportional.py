"""Partial RoPE at base b^p and proportional RoPE at base b turn the same frequencies.

Head width 16, base b = 10000, fraction p = 1/2, halves pairing (channel c with c + 8 for
proportional RoPE, with c + 4 within the rotated slice for partial RoPE). Partial RoPE rotates the
first 8 channels at base 10000^(1/2) = 100 over a rotated width of 8; proportional RoPE keeps
the full-width frequencies 10000^(-2r/16) of its first 4 pairs and gives the other 4 pairs
frequency 0. Both turn 4 pairs at 1, 10^-0.5, 10^-1 and 10^-1.5 radians per position and leave
8 channels unturned; only which channels they are differs.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two panels over channels 0 to 15, each marking a channel's frequency on a log scale or "
    "marking it not turned. Partial RoPE at base 100 turns channels 0 to 7, pairs 0 to 3 joining "
    "channel c with c + 4, at 1, 0.32, 0.1 and 0.032; channels 8 to 15 are not turned. Proportional "
    "RoPE at base 10000 turns channels 0 to 3 and 8 to 11 at the same four frequencies; "
    "channels 4 to 7 and 12 to 15 are not turned."
)
D, BASE, P = 16, 1e4, 0.5
FIXED = -2.3  # where an unturned channel is drawn, below the slowest frequency


def channel_frequencies():
    """Per channel, its frequency (0 when it never turns) and its pair, under each scheme."""
    partial = posenc.partial_rope_frequencies(D, base=BASE**P, partial_rotary_factor=P)
    half = len(partial)
    part_freq = np.concatenate([partial, partial, np.zeros(D - 2 * half)])
    part_pair = np.concatenate([np.arange(half), np.arange(half), -np.ones(D - 2 * half, int)])
    proportional = posenc.proportional_rope_frequencies(D, base=BASE, partial_rotary_factor=P)
    pairs = np.where(proportional > 0, np.arange(D // 2), -1)
    return (part_freq, part_pair), (np.tile(proportional, 2), np.tile(pairs, 2))


def main():
    schemes = channel_frequencies()
    (part_freq, _), (prop_freq, _) = schemes
    # The caption's claims: the same multiset of frequencies, four pairs, eight channels fixed.
    assert np.allclose(np.sort(part_freq), np.sort(prop_freq), rtol=1e-12, atol=0)
    assert np.allclose(np.unique(prop_freq[prop_freq > 0])[::-1], 10.0 ** -np.arange(0, 2, 0.5), rtol=1e-12)
    assert (part_freq == 0).sum() == (prop_freq == 0).sum() == 8
    assert list(np.flatnonzero(prop_freq)) == [0, 1, 2, 3, 8, 9, 10, 11]

    titles = (
        f"partial RoPE, base {BASE**P:g} on the first {int(D * P)} channels",
        f"proportional RoPE, base {BASE:g}, p = {P:g}",
    )
    fig, axes = plotting.new_figure(aspect=0.55, nrows=2, sharex=True, narrow={"aspect": 1.1})
    for ax, title, (freq, pair) in zip(axes, titles, schemes):
        channels = np.arange(D)
        turned = freq > 0
        for r in range(D // 4):
            mine = pair == r
            ax.plot(
                channels[mine], np.log10(freq[mine]), marker="o", color=plotting.colour_of(series=r), label=f"pair {r}"
            )
        ax.plot(
            channels[~turned],
            np.full((~turned).sum(), FIXED),
            "x",
            color=plotting.colour_of(reference=True),
            label="not turned",
        )
        ax.set_title(plotting.wrap(*title.split(", ", 1)), loc="left")
        ax.set_yticks([0, -1, FIXED], ["1", "0.1", "fixed"])
        ax.set_ylim(FIXED - 0.5, 0.5)
        ax.set_ylabel("rad / position")
    axes[-1].set_xticks(range(0, D, 2 if plotting.narrow() else 1))
    axes[-1].set_xlabel("channel")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3 if plotting.narrow() else 5)
    plotting.save(fig)


if __name__ == "__main__":
    main()
