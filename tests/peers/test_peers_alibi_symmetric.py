"""``posenc.alibi_symmetric_bias`` against x-transformers' ``AlibiPositionalBias`` (symmetric, non-causal ALiBi).

x-transformers (lucidrains) builds the bias ``-|j - i| * slope_h`` with the slopes of the ALiBi
reference code, for encoders as well as decoders (its causal mask is applied elsewhere), so it
is compared here on the whole (query, key) grid, above the diagonal included.

Tolerance: x-transformers computes the slopes in Python floats, stores them as a float32 tensor
(one rounding, relative 2**-24, after a float64 computation whose error is far below that) and
multiplies them by the integer distance in float32 (a second rounding; the distance itself is
exact below 2**24). So every entry is within (1 + 2**-24)**2 - 1 < 3 * 2**-24 of posenc's float64
value, relative. When the head count is a power of two the slopes are powers of two: their float64
values are within a few units of 2**-53 of them, so float32 rounds them to the powers of two
exactly, and their products with integer distances are exact; those cases are compared for
equality.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from x_transformers.x_transformers import AlibiPositionalBias

import posenc

F32_TWO_ROUNDINGS = 3 * 2.0**-24


def assert_matches(theirs: torch.Tensor, ours: np.ndarray, heads: int) -> None:
    theirs = theirs.double().numpy()
    assert theirs.shape == ours.shape
    if heads & (heads - 1) == 0:
        np.testing.assert_array_equal(theirs, ours)
    else:
        np.testing.assert_allclose(theirs, ours, rtol=F32_TWO_ROUNDINGS, atol=0)


@pytest.mark.parametrize("heads", [1, 2, 6, 8, 12, 16])
def test_slopes_are_posenc_slopes(heads):
    """x-transformers' ``AlibiPositionalBias._get_slopes`` against ``posenc.alibi_slopes``."""
    # Python floats: the base 2**(-8/n) is rounded once, raised to a power k <= heads (k times its
    # error) and multiplied by itself once more, each result rounded: (heads + 2) * 2**-53 relative.
    rtol = (heads + 2) * 2.0**-53
    np.testing.assert_allclose(AlibiPositionalBias._get_slopes(heads), posenc.alibi_slopes(heads), rtol=rtol, atol=0)


@pytest.mark.parametrize("heads", [8, 12])
@pytest.mark.parametrize(("queries", "keys"), [(9, 9), (3, 9), (1, 40)])
def test_bias_is_posenc_symmetric_bias(heads, queries, keys):
    """x-transformers' ``AlibiPositionalBias`` for the last queries of a sequence against
    ``posenc.alibi_symmetric_bias``, keys after the query included."""
    # forward(i, j): the last i of j positions query all j keys (the queries of a cached step)
    theirs = AlibiPositionalBias(heads)(queries, keys)
    query_ids, key_ids = np.arange(keys - queries, keys), np.arange(keys)
    ours = posenc.alibi_symmetric_bias(heads, query_ids, key_ids)
    assert_matches(theirs, ours, heads)
    # keys after the query are penalised too: this is not the causal bias
    if queries > 1:
        assert np.any(ours[:, 0, 1:] < 0)


@pytest.mark.parametrize("heads", [4, 6])
def test_bias_with_arbitrary_position_ids_is_posenc_symmetric_bias(heads, rng):
    """x-transformers' ``AlibiPositionalBias.forward_custom_pos`` at random position ids below 100000 against
    ``posenc.alibi_symmetric_bias``."""
    query_ids = np.sort(rng.choice(10**5, size=7, replace=False))
    key_ids = np.sort(rng.choice(10**5, size=11, replace=False))
    theirs = AlibiPositionalBias(heads).forward_custom_pos(torch.from_numpy(query_ids), torch.from_numpy(key_ids))
    ours = posenc.alibi_symmetric_bias(heads, query_ids, key_ids)
    assert_matches(theirs, ours, heads)
