r"""Inserting a token at the start moves every absolute position, not the offsets.

Putting "Yesterday" in front of "the dog chased a ball" moves each original token one
position later (arrows), so "chased" goes from position 2 to 3. The offset between
neighbours stays +1, and so does what the encoding sees of a neighbour pair: $P(t) \cdot P(t+1)$
is the same number at every $t$.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two rows of word boxes with their position ids. Top: 'the dog chased a ball' at positions "
    "0 to 4. Bottom: 'Yesterday' inserted at position 0 pushes every original word one place "
    "later, so 'chased' moves from 2 to 3, while neighbouring words stay 1 apart; at width 8 "
    "every neighbour pair has the same encoding dot product, 3.54."
)
SENTENCE = ("the", "dog", "chased", "a", "ball")
INSERTED = "Yesterday"
WIDTH = 8


def main():
    before = {word: t for t, word in enumerate(SENTENCE)}
    after_words = (INSERTED,) + SENTENCE
    after = {word: t for t, word in enumerate(after_words)}
    assert all(after[w] == before[w] + 1 for w in SENTENCE)
    assert all(after[b] - after[a] == before[b] - before[a] for a, b in zip(SENTENCE, SENTENCE[1:]))
    table = posenc.sinusoidal(np.arange(len(after_words)), WIDTH)
    neighbour_dots = np.einsum("ti,ti->t", table[:-1], table[1:])
    assert np.allclose(neighbour_dots, posenc.kernel(1, WIDTH))  # identical at every t
    assert round(posenc.kernel(1, WIDTH), 2) == 3.54

    # Wide: two rows of words, left to right. Narrow (a phone's column): two columns, top to bottom.
    narrow = plotting.narrow()
    fig, ax = plotting.new_figure(aspect=0.36, narrow={"aspect": 1.25})
    rows = {1.0: SENTENCE, 0.0: after_words}

    def at(t, row, across=0.0, along=0.0):
        """Where word t of a row goes, moved across the rows and along them (in the wide layout's sense)."""
        return ((1 - row) * 1.7 - across * 2.2, -t - along) if narrow else (t + along, row + across)

    for y, words in rows.items():
        for t, word in enumerate(words):
            new = y == 0.0 and word == INSERTED
            # Unfilled boxes: the words keep the text colour on either page background.
            ax.text(
                *at(t, y),
                word,
                ha="center",
                va="center",
                fontsize=11,
                bbox={
                    "boxstyle": "round,pad=0.35",
                    "facecolor": "none",
                    "linewidth": 2 if new else 1.4,
                    "edgecolor": plotting.colour_of(series=1 if new else 0),
                },
            )
            side = (1 if y else -1) if narrow else -1  # the ids outside the columns, under the rows
            ax.text(
                *at(t, y, across=0.2 * side if not narrow else 0.3 * side),
                f"t = {t}",
                ha="center" if not narrow else ("right" if y else "left"),
                va="top" if not narrow else "center",
                fontsize=9,
                fontweight="bold" if new else "normal",
            )
            if t > 0:  # the offset to the previous word, outside each row
                offset = (0.22 if y else -0.45) if not narrow else (0.53 if y else -0.53)
                ax.text(*at(t, y, across=offset, along=-0.5), "+1", ha="center", va="center", fontsize=9)
    for t in before.values():
        ax.annotate(
            "",
            xy=at(t + 1, 0.0, across=0.2 if not narrow else 0.2),
            xytext=at(t, 1.0, across=-0.34 if not narrow else -0.2),
            arrowprops={"arrowstyle": "->", "color": plotting.colour_of(reference=True), "linewidth": 1},
        )
    dot = f"P(t)·P(t+1) = {posenc.kernel(1, WIDTH):.2f} for every t"
    note = f"neighbours stay +1 apart in both rows; at width {WIDTH}, {dot}"
    if narrow:
        ax.set_xlim(-1.6, 3.3)
        ax.set_ylim(-len(after_words) + 0.4, 1.0)
        for y, title in ((1.0, "original"), (0.0, "one token\ninserted")):
            ax.text(*at(0, y, along=-0.9), title, ha="center", va="bottom", fontsize=10)
        ax.set_yticks([])
        ax.set_xlabel(f"neighbours stay +1 apart in both\ncolumns; at width {WIDTH},\n{dot}")
    else:
        ax.set_xlim(-0.8, len(after_words) - 0.4)
        ax.set_ylim(-0.6, 1.35)
        ax.set_yticks([1.0, 0.0], ["original", "one token\ninserted"])
        ax.set_xlabel(note)
    ax.tick_params(axis="y", length=0)
    ax.set_xticks([])
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    plotting.save(fig)


if __name__ == "__main__":
    main()
