"""Position ids inside a rolling cache with attention sinks (4 sinks, a window of 8 recent tokens).

Top: after 30 tokens the cache holds tokens 0-3 and 22-29, and gives them the ids 0-11 by their
place in the cache, not their place in the text. Bottom: the id given to the newest token at each
step. Without eviction it is the text position and grows without bound; in the rolling cache it
stops at 11, so no id ever exceeds the ones seen within 12 positions.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two panels. Top: twelve points, text position on the horizontal axis and cache position id on "
    "the vertical; tokens 0 to 3 have ids 0 to 3 and tokens 22 to 29 have ids 4 to 11, with a gap "
    "between 3 and 22 for the evicted tokens. Bottom: the newest token's id against the step, 1 to "
    "40; the text position rises along the diagonal while the cache id rises with it up to 11 and "
    "then stays at 11."
)
SINKS, WINDOW, SHOWN, STEPS = 4, 8, 30, 40


def main():
    kept, ids = posenc.streaming_cache(SHOWN, sinks=SINKS, window=WINDOW)
    steps = np.arange(1, STEPS + 1)
    newest = np.array([posenc.streaming_cache(int(n), sinks=SINKS, window=WINDOW)[1][-1] for n in steps])
    # The claims of the caption and the alt text.
    assert kept.tolist() == [0, 1, 2, 3] + list(range(22, 30)) and ids.tolist() == list(range(12))
    assert np.array_equal(newest, np.minimum(steps - 1, SINKS + WINDOW - 1))

    fig, (top, bottom) = plotting.new_figure(aspect=0.75, nrows=2)
    top.scatter(kept[:SINKS], ids[:SINKS], color=plotting.colour_of(series=0), label="sinks", zorder=3)
    top.scatter(kept[SINKS:], ids[SINKS:], color=plotting.colour_of(series=1), label="recent window", zorder=3)
    top.axvspan(
        SINKS - 0.5,
        SHOWN - WINDOW - 0.5,
        color=plotting.colour_of(reference=True),
        alpha=0.08,
        linewidth=0,
        label="evicted",
    )
    top.set_xlim(-0.5, SHOWN - 0.5)
    top.set_xlabel(f"text position (after {SHOWN} tokens)")
    top.set_ylabel("cache position id")
    top.legend(loc="upper left")
    bottom.plot(steps, steps - 1, color=plotting.colour_of(reference=True), linestyle=":", label="text position")
    bottom.plot(
        steps, newest, color=plotting.colour_of(series=1), marker="o", markersize=3, label="id in the rolling cache"
    )
    bottom.set_xlabel("step (tokens processed)")
    bottom.set_ylabel("id of the newest token")
    bottom.legend(loc="upper left")
    plotting.save(fig)


if __name__ == "__main__":
    main()
