"""Score biases: BLOOM's ALiBi tensor and T5's relative-position buckets."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from transformers.models.bloom.modeling_bloom import build_alibi_tensor
from transformers.models.t5.modeling_t5 import T5Attention

import posenc

# ---------------------------------------------------------------------------------------
# BLOOM ALiBi


@pytest.mark.parametrize("heads", [8, 12])
def test_bloom_alibi_slopes_are_posenc_slopes(heads):
    """BLOOM's ``build_alibi_tensor`` against ``posenc.alibi_slopes`` times the key position (exactly for 8 heads)."""
    length = 9
    mask = torch.ones(1, length, dtype=torch.int64)
    alibi = build_alibi_tensor(mask, heads, torch.float64).reshape(heads, length).numpy()
    slopes = posenc.alibi_slopes(heads)
    # BLOOM works in float32: the base 2**(-8/m) is rounded (2**-24 relative), raised to a power
    # k <= 2 * heads by torch.pow (k * 2**-24 from the base, one more rounding), and the product
    # with the key position is rounded again: at most (2 * heads + 2) * 2**-24 relative.
    rtol = (2 * heads + 2) * 2.0**-24
    np.testing.assert_allclose(alibi, slopes[:, None] * np.arange(length), rtol=rtol, atol=0)
    if heads == 8:  # powers of two: exact in float32 too
        np.testing.assert_array_equal(alibi, slopes[:, None] * np.arange(length))


@pytest.mark.parametrize("heads", [8, 12])
def test_bloom_alibi_gives_posenc_causal_attention(heads, rng):
    """Causal softmax attention with BLOOM's ``build_alibi_tensor`` against the same with ``posenc.alibi_bias``."""
    # BLOOM adds +slope * key_position; posenc's bias is -slope * (query - key). Per query row
    # they differ by the constant slope * query, which the softmax removes.
    length = 7
    mask = torch.ones(1, length, dtype=torch.int64)
    alibi = build_alibi_tensor(mask, heads, torch.float64).reshape(heads, 1, length).numpy()
    scores = rng.normal(size=(heads, length, length))
    causal = np.tril(np.ones((length, length), dtype=bool))

    def softmax(x):
        x = np.where(causal, x, -np.inf)
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    np.testing.assert_allclose(
        softmax(scores + alibi), softmax(scores + posenc.alibi_bias(heads, length)), rtol=0, atol=1e-6
    )


def test_bloom_alibi_counts_positions_from_the_attention_mask():
    """BLOOM's ``build_alibi_tensor`` under left padding against ``posenc.alibi_slopes`` times positions counted from
    the first real token."""
    # left padding: BLOOM's key positions start at the first real token, as fairseq's ids do
    mask = torch.tensor([[0, 0, 1, 1, 1, 1]])
    alibi = build_alibi_tensor(mask, 8, torch.float64).reshape(8, 6).numpy()
    positions = np.maximum(np.cumsum(mask.numpy()[0]) - 1, 0) * mask.numpy()[0]
    np.testing.assert_array_equal(alibi, posenc.alibi_slopes(8)[:, None] * positions)


# ---------------------------------------------------------------------------------------
# T5 buckets


def t5(relative, **kwargs) -> np.ndarray:
    return T5Attention._relative_position_bucket(torch.as_tensor(relative), **kwargs).numpy()


CONFIGS = [  # (bidirectional, num_buckets, max_distance): T5, mT5, LongT5, UL2-style and others
    (True, 32, 128),
    (False, 32, 128),
    (True, 64, 128),
    (False, 64, 256),
    (True, 32, 256),
    (True, 16, 64),
    (False, 16, 64),
    (True, 128, 1024),
    (False, 8, 32),
    (True, 4, 5),
    (False, 2, 3),
]


@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), CONFIGS)
def test_t5_relative_position_bucket_matches_exactly(bidirectional, num_buckets, max_distance):
    """T5's ``_relative_position_bucket`` against ``posenc.t5_relative_position_bucket``, exactly, for offsets up to
    four times ``max_distance`` (configurations of T5, mT5, LongT5, UL2 and smaller ones)."""
    relative = np.arange(-4 * max_distance - 3, 4 * max_distance + 4)
    kwargs = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    np.testing.assert_array_equal(posenc.t5_relative_position_bucket(relative, **kwargs), t5(relative, **kwargs))


def test_t5_compute_bias_layout_query_by_key():
    """T5's ``_relative_position_bucket`` of key minus query on a (query, key) grid against
    ``posenc.t5_relative_position_bucket``, the layout of ``compute_bias``."""
    # T5 buckets memory_position - context_position; a (query, key) grid of ids
    query, key = np.arange(5)[:, None], np.arange(7)[None, :]
    np.testing.assert_array_equal(posenc.t5_relative_position_bucket(key - query), t5(key - query))


def _on_bucket_edge(distance: int, max_exact: int, max_distance: int, span: int) -> bool:
    """True when log(d / max_exact) / log(max_distance / max_exact) * span is exactly an integer."""
    value = math.log(distance / max_exact) / math.log(max_distance / max_exact) * span
    k = round(value)
    return abs(value - k) < 1e-9 and distance**span * max_exact**k == max_distance**k * max_exact**span


def test_t5_buckets_agree_everywhere_except_on_exact_edges_over_a_wide_grid():
    """T5's causal ``_relative_position_bucket`` against ``posenc.t5_relative_position_bucket`` for ``num_buckets`` 2 to
    65 and ``max_distance`` up to 300: they may differ only by one, on an exact bucket edge, where torch's float32
    logarithm may round to the other side."""
    # Away from an exact bucket edge the float32 steps leave margin; on an edge (the real value
    # is an integer) the last bit of torch's float32 log (SLEEF, within 1 ulp but not always
    # correctly rounded) decides the side, while posenc uses the correctly rounded float32 log.
    # So: every disagreement must be on an exact edge, and they must be rare.
    disagreements = checked = 0
    for num_buckets in range(2, 66):
        max_exact = num_buckets // 2
        for max_distance in range(max_exact + 1, 300, 3):
            distance = np.arange(0, max_distance + 2)
            ours = posenc.t5_relative_position_bucket(
                -distance, bidirectional=False, num_buckets=num_buckets, max_distance=max_distance
            )
            theirs = t5(-distance, bidirectional=False, num_buckets=num_buckets, max_distance=max_distance)
            checked += distance.size
            for d in distance[ours != theirs].tolist():
                assert _on_bucket_edge(d, max_exact, max_distance, num_buckets - max_exact), (
                    num_buckets,
                    max_distance,
                    d,
                )
                assert abs(int(ours[d]) - int(theirs[d])) == 1
                disagreements += 1
    assert disagreements <= checked * 1e-4, (disagreements, checked)
