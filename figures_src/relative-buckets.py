"""T5's and DeBERTa-v2's buckets: exact near the query, logarithmic further away.

Left: T5's bucket of the relative position $j - i$ with its defaults (32 buckets shared by the
two directions, maximum distance 128): distances below 8 each have a bucket, larger ones share
log-spaced buckets, and from 128 on every key falls in the last bucket of its side (15 before
the query, 31 after it). Right: DeBERTa-v2's log bucket of $i - j$ with bucket size 256 and
maximum position 512: exact up to 128, 255 at 511, and not capped (it keeps growing slowly);
DeBERTa clamps the index into its table afterwards. The dotted lines mark each maximum.
"""

import numpy as np

import posenc
from posenc.site import plotting

ALT = (
    "Two step plots. Left: T5 bucket against relative position j - i from -300 to 300; keys "
    "before the query (and the query itself) take buckets 0 to 15 and keys after it 17 to 31, "
    "each side exact for distances 0 to 7, then in widening steps, flat at 15 and 31 from distance 128 on. Right: "
    "DeBERTa-v2 bucket against relative position i - j from -1000 to 1000, a straight line "
    "from -128 to 128, then a slowly rising curve reaching plus or minus 255 at 511 and "
    "plus or minus 317 at 1000, odd about zero."
)
T5_BUCKETS, T5_MAX = 32, 128
DEBERTA_SIZE, DEBERTA_MAX = 256, 512


def main():
    t5_offsets = np.arange(-300, 301)
    t5 = posenc.t5_relative_position_bucket(t5_offsets, bidirectional=True, num_buckets=T5_BUCKETS, max_distance=T5_MAX)
    deberta_offsets = np.arange(-1000, 1001)
    deberta = posenc.deberta_log_bucket(deberta_offsets, DEBERTA_SIZE, DEBERTA_MAX)
    # The numbers in the caption and the alt text.
    before, after = t5[t5_offsets <= 0], t5[t5_offsets > 0]
    assert before.min() == 0 and before.max() == 15 and after.min() == 17 and after.max() == 31
    assert np.all(t5[t5_offsets <= -T5_MAX] == 15) and np.all(t5[t5_offsets >= T5_MAX] == 31)
    assert np.array_equal(t5[(t5_offsets >= 0) & (t5_offsets < 8)], [0, 17, 18, 19, 20, 21, 22, 23])
    exact = np.abs(deberta_offsets) <= DEBERTA_SIZE // 2
    assert np.array_equal(deberta[exact], deberta_offsets[exact]) and np.array_equal(deberta, -deberta[::-1])
    assert posenc.deberta_log_bucket(511, DEBERTA_SIZE, DEBERTA_MAX) == 255
    assert deberta[-1] == 317 and np.all(np.diff(deberta) >= 0)

    fig, (left, right) = plotting.new_figure(aspect=0.42, ncols=2)
    left.step(t5_offsets, t5, where="mid", color=plotting.colour_of(method="t5"))
    for edge in (-T5_MAX, T5_MAX):
        left.axvline(edge, color=plotting.colour_of(reference=True), linewidth=0.6, linestyle=":")
    left.set(xlabel="relative position j − i", ylabel="bucket", title="T5: 32 buckets,\nmax distance 128")
    right.step(deberta_offsets, deberta, where="mid", color=plotting.colour_of(method="deberta"))
    for edge in (-(DEBERTA_MAX - 1), DEBERTA_MAX - 1):
        right.axvline(edge, color=plotting.colour_of(reference=True), linewidth=0.6, linestyle=":")
    right.set(xlabel="relative position i − j", ylabel="bucket", title="DeBERTa-v2: bucket size 256,\nmax position 512")
    plotting.save(fig)


if __name__ == "__main__":
    main()
