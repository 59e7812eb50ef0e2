"""``posenc.relative`` against transformers: T5's bias (``compute_bias``) and DeBERTa-v2's relative positions and
log buckets.

Symmetric ALiBi is compared with x-transformers in test_peers_alibi_symmetric.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import T5Config
from transformers.models.deberta_v2.modeling_deberta_v2 import build_relative_position, make_log_bucket_position
from transformers.models.t5.modeling_t5 import T5Attention

import posenc

# ---------------------------------------------------------------------------------------
# T5: the bias the first layer computes and every layer shares


@pytest.mark.parametrize(
    ("is_decoder", "num_buckets", "max_distance"), [(False, 32, 128), (True, 32, 128), (False, 16, 40)]
)
def test_t5_compute_bias_is_posenc_t5_bias(is_decoder, num_buckets, max_distance, rng):
    """T5's ``T5Attention.compute_bias`` (7 cached queries after 150 positions, 300 keys) against ``posenc.t5_bias``,
    exactly."""
    config = T5Config(
        d_model=16,
        d_kv=4,
        num_heads=4,
        relative_attention_num_buckets=num_buckets,
        relative_attention_max_distance=max_distance,
        is_decoder=is_decoder,
    )
    attention = T5Attention(config, has_relative_attention_bias=True, layer_idx=0)
    table = rng.standard_normal((num_buckets, 4)).astype(np.float32)
    with torch.no_grad():
        attention.relative_attention_bias.weight.copy_(torch.from_numpy(table))
        # past_seen_tokens shifts the query ids, as during cached generation
        theirs = attention.compute_bias(7, 300, past_seen_tokens=150)[0].numpy()
    ours = posenc.t5_bias(
        table, np.arange(7) + 150, np.arange(300), bidirectional=not is_decoder, max_distance=max_distance
    )
    # A lookup copies table entries: both sides hold the same float32 numbers, so equality is exact.
    np.testing.assert_array_equal(ours, theirs)


# ---------------------------------------------------------------------------------------
# DeBERTa-v2


@pytest.mark.parametrize(("bucket_size", "max_position"), [(256, 512), (128, 512), (64, 1024), (32, 128), (3, 7)])
def test_deberta_log_bucket_matches_make_log_bucket_position(bucket_size, max_position):
    """DeBERTa-v2's ``make_log_bucket_position`` against ``posenc.deberta_log_bucket``, exactly."""
    relative = np.arange(-4 * max_position, 4 * max_position + 1)
    theirs = make_log_bucket_position(torch.from_numpy(relative), bucket_size, max_position).to(torch.long).numpy()
    ours = posenc.deberta_log_bucket(relative, bucket_size, max_position)
    # Both evaluate the same float32 steps, so the buckets must agree exactly. Only where the exact
    # value is an integer (a ceil edge) could the last bit of torch's float32 log decide the side;
    # these configurations (and a sweep of bucket sizes 2 to 296 in steps of 7, max positions up to 1200) hit none.
    np.testing.assert_array_equal(ours, theirs)


def test_deberta_build_relative_position_is_posenc_relative_positions():
    """DeBERTa-v2's ``build_relative_position``, plain and with bucket size 256 and maximum position 512, against
    ``posenc.deberta_relative_positions``, exactly."""
    query, key = torch.zeros(1, 9, 4), torch.zeros(1, 700, 4)
    plain = build_relative_position(query, key)[0].numpy()
    np.testing.assert_array_equal(posenc.deberta_relative_positions(np.arange(9), np.arange(700)), plain)
    bucketed = build_relative_position(query, key, bucket_size=256, max_position=512)[0].numpy()
    np.testing.assert_array_equal(
        posenc.deberta_relative_positions(np.arange(9), np.arange(700), bucket_size=256, max_position=512), bucketed
    )
