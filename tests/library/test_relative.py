"""posenc.relative against the papers' formulas written out entry by entry, and its argument rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc
from posenc import _checks


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(16)


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


# ---------------------------------------------------------------------------------------
# Learned absolute table


def test_absolute_table_has_no_row_past_its_last(rng):
    table = rng.standard_normal((4, 3))
    np.testing.assert_array_equal(posenc.absolute_table_rows(table, [3, 0]), table[[3, 0]])
    with pytest.raises(ValueError, match=r"position_ids must be < 4 \(the table's rows"):
        posenc.absolute_table_rows(table, [4])


# ---------------------------------------------------------------------------------------
# Shaw


def test_shaw_logits_and_values_match_the_formula_entry_by_entry(rng):
    d, k = 4, 2
    query_ids, key_ids = np.array([7, 8, 9]), np.array([3, 6, 8, 9, 12])
    q, keys, values = rng.standard_normal((3, d)), rng.standard_normal((5, d)), rng.standard_normal((5, d))
    table_k, table_v = rng.standard_normal((2 * k + 1, d)), rng.standard_normal((2 * k + 1, d))
    logits = posenc.shaw_logits(q, keys, table_k, query_ids=query_ids, key_ids=key_ids)
    weights = softmax(logits)
    out = posenc.shaw_values(weights, values, table_v, query_ids=query_ids, key_ids=key_ids)
    for a, i in enumerate(query_ids):
        expected_out = np.zeros(d)
        for b, j in enumerate(key_ids):
            row = min(max(j - i, -k), k) + k
            assert logits[a, b] == pytest.approx(q[a] @ (keys[b] + table_k[row]) / math.sqrt(d), abs=1e-12)
            expected_out += weights[a, b] * (values[b] + table_v[row])
        np.testing.assert_allclose(out[a], expected_out, atol=1e-12)


def test_shaw_depends_on_ids_only_through_clipped_differences(rng):
    q, keys, table = rng.standard_normal((2, 3)), rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    near = posenc.shaw_logits(q, keys, table, query_ids=[0, 1], key_ids=[0, 1, 2, 3])
    far = posenc.shaw_logits(q, keys, table, query_ids=[1000, 1001], key_ids=[1000, 1001, 1002, 1003])
    np.testing.assert_allclose(near, far, atol=1e-12)
    assert posenc.shaw_relative_index([0], [0, 50, 5000], 3).tolist() == [[3, 6, 6]]


def test_shaw_rules():
    with pytest.raises(ValueError, match=r"relative_keys must have shape \(2k \+ 1, 2\)"):
        posenc.shaw_logits(np.ones((1, 2)), np.ones((1, 2)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="key_ids must have one id per row"):
        posenc.shaw_logits(np.ones((1, 2)), np.ones((2, 2)), np.ones((3, 2)), key_ids=[0])
    with pytest.raises(ValueError, match="max_distance must be >= 0"):
        posenc.shaw_relative_index([0], [0], -1)
    with pytest.raises(TypeError, match="queries must be a real array"):
        posenc.shaw_logits(np.ones((1, 2), dtype=bool), np.ones((1, 2)), np.ones((3, 2)))


# ---------------------------------------------------------------------------------------
# Transformer-XL


def test_transformer_xl_terms_match_the_formula(rng):
    d, d_k = 6, 3
    q, keys = rng.standard_normal((2, d_k)), rng.standard_normal((4, d_k))
    w_r, u, v = rng.standard_normal((d, d_k)), rng.standard_normal(d_k), rng.standard_normal(d_k)
    query_ids, key_ids = [10, 11], [8, 9, 10, 11]
    terms = posenc.transformer_xl_terms(q, keys, w_r, u, v, query_ids=query_ids, key_ids=key_ids)
    omega = posenc.frequencies(d)
    for a, i in enumerate(query_ids):
        for b, j in enumerate(key_ids):
            sinusoid = np.concatenate([np.sin((i - j) * omega), np.cos((i - j) * omega)])  # sines, then cosines
            r = sinusoid @ w_r
            expected = (q[a] @ keys[b], q[a] @ r, u @ keys[b], v @ r)
            np.testing.assert_allclose([term[a, b] for term in terms], expected, atol=1e-12)
            assert terms.total[a, b] == pytest.approx((q[a] + u) @ keys[b] + (q[a] + v) @ r, abs=1e-12)


def test_transformer_xl_position_terms_depend_on_the_distance_only(rng):
    q, keys, w_r = rng.standard_normal((3, 2)), rng.standard_normal((3, 2)), rng.standard_normal((4, 2))
    u, v = rng.standard_normal(2), rng.standard_normal(2)
    start = posenc.transformer_xl_terms(q, keys, w_r, u, v)
    later = posenc.transformer_xl_terms(q, keys, w_r, u, v, query_ids=[500, 501, 502], key_ids=[500, 501, 502])
    np.testing.assert_allclose(start.content_position, later.content_position, atol=1e-9)
    np.testing.assert_allclose(start.global_position, later.global_position, atol=1e-9)


def test_transformer_xl_rules():
    with pytest.raises(ValueError, match=r"position_projection's rows \(d\) must be a positive even integer"):
        posenc.transformer_xl_terms(np.ones((1, 2)), np.ones((1, 2)), np.ones((3, 2)), [0, 0], [0, 0])
    with pytest.raises(ValueError, match=r"u and v must have shape \(2,\)"):
        posenc.transformer_xl_terms(np.ones((1, 2)), np.ones((1, 2)), np.ones((4, 2)), [0, 0, 0], [0, 0])


# ---------------------------------------------------------------------------------------
# T5


def test_t5_bias_looks_up_the_bucket_of_key_minus_query(rng):
    table = rng.standard_normal((32, 3))
    query_ids, key_ids = np.arange(4, 9), np.arange(0, 300, 7)
    bias = posenc.t5_bias(table, query_ids, key_ids)
    buckets = posenc.t5_relative_position_bucket(key_ids[None, :] - query_ids[:, None])
    assert bias.shape == (3, 5, key_ids.size)
    for h in range(3):
        np.testing.assert_array_equal(bias[h], table[buckets, h])
    causal = posenc.t5_bias(table, query_ids, key_ids, bidirectional=False, max_distance=64)
    np.testing.assert_array_equal(
        causal[0],
        table[
            posenc.t5_relative_position_bucket(key_ids - query_ids[:, None], bidirectional=False, max_distance=64), 0
        ],
    )


def test_t5_bias_number_of_buckets_is_the_table_rows():
    with pytest.raises(ValueError, match="num_buckets must be >= 4"):
        posenc.t5_bias(np.ones((3, 1)), [0], [0])


# ---------------------------------------------------------------------------------------
# DeBERTa


def deberta_bucket_by_formula(r: int, bucket_size: int, max_position: int) -> int:
    mid = bucket_size // 2
    if abs(r) <= mid:
        return r
    bucket = mid + math.ceil(math.log(abs(r) / mid) / math.log((max_position - 1) / mid) * (mid - 1))
    return int(math.copysign(bucket, r))


@pytest.mark.parametrize(("bucket_size", "max_position"), [(256, 512), (64, 128), (32, 1024), (3, 7)])
def test_deberta_log_bucket_is_the_formula_away_from_float32_edges(bucket_size, max_position):
    relative = np.arange(-3 * max_position, 3 * max_position + 1)
    ours = posenc.deberta_log_bucket(relative, bucket_size, max_position)
    mid = bucket_size // 2
    for r, bucket in zip(relative.tolist(), ours.tolist()):
        if abs(r) > mid:
            exact = math.log(abs(r) / mid) / math.log((max_position - 1) / mid) * (mid - 1)
            if abs(exact - round(exact)) < 1e-4:  # on an edge float32 decides; checked against DeBERTa in peers
                continue
        assert bucket == deberta_bucket_by_formula(r, bucket_size, max_position), r


def test_deberta_buckets_are_odd_and_keep_small_distances():
    relative = np.arange(-5000, 5001)
    buckets = posenc.deberta_log_bucket(relative, 256, 512)
    np.testing.assert_array_equal(buckets, -buckets[::-1])
    np.testing.assert_array_equal(buckets[np.abs(relative) <= 128], relative[np.abs(relative) <= 128])
    assert np.all(np.diff(buckets) >= 0)


def test_deberta_relative_positions_are_query_minus_key():
    assert posenc.deberta_relative_positions([3, 4], [0, 4]).tolist() == [[3, -1], [4, 0]]
    bucketed = posenc.deberta_relative_positions([600], [0, 599], bucket_size=256, max_position=512)
    assert bucketed.tolist() == [[int(posenc.deberta_log_bucket(600, 256, 512)), 1]]


def test_deberta_rules():
    with pytest.raises(ValueError, match="bucket_size and max_position must be given together"):
        posenc.deberta_relative_positions([0], [0], bucket_size=256)
    with pytest.raises(ValueError, match=r"max_position must be > bucket_size // 2 \+ 1 = 129"):
        posenc.deberta_log_bucket([0], 256, 129)
    with pytest.raises(ValueError, match="bucket_size must be >= 2"):
        posenc.deberta_log_bucket([0], 1, 10)


# ---------------------------------------------------------------------------------------
# ALiBi: maximum bias and the symmetric form


def test_alibi_max_bias_stretches_the_geometric_slopes():
    np.testing.assert_allclose(posenc.alibi_slopes(8, max_bias=16), 2.0 ** (-2.0 * np.arange(1, 9)))
    twelve = posenc.alibi_slopes(12, max_bias=4)
    first_eight, interleaved = 2.0 ** (-4 * np.arange(1, 9) / 8), 2.0 ** (-4 * np.arange(1, 17, 2) / 16)
    np.testing.assert_allclose(twelve, np.concatenate([first_eight, interleaved[:4]]))
    assert posenc.alibi_bias(4, 3, max_bias=4)[0, 2, 0] == -2 * 2.0**-1
    with pytest.raises(ValueError, match="max_bias must be > 0"):
        posenc.alibi_slopes(4, max_bias=0)


def test_symmetric_alibi_is_minus_slope_times_absolute_distance_and_matches_causal_below_the_diagonal():
    ids = np.arange(6)
    symmetric = posenc.alibi_symmetric_bias(4, ids, ids)
    causal = posenc.alibi_bias(4, 6)
    below = ids[:, None] >= ids[None, :]
    np.testing.assert_array_equal(symmetric[:, below], causal[:, below])
    np.testing.assert_array_equal(symmetric, np.swapaxes(symmetric, 1, 2))
    shifted = posenc.alibi_symmetric_bias(3, [100, 107], [90, 110, 120], max_bias=2)
    distances = np.array([[10, 10, 20], [17, 3, 13]])
    np.testing.assert_allclose(shifted, -posenc.alibi_slopes(3, max_bias=2)[:, None, None] * distances)


# ---------------------------------------------------------------------------------------
# Kerple and FIRE


def test_kerple_variants_match_their_formulas():
    ids = np.arange(5)
    distance = np.abs(ids[:, None] - ids[None, :])
    power = posenc.kerple_bias(ids, ids, [1.0, 0.5], [2.0, 0.5])
    np.testing.assert_allclose(power, [-1.0 * distance**2.0, -0.5 * distance**0.5])
    log = posenc.kerple_bias(ids, ids, [3.0], [0.25], variant="log")
    np.testing.assert_allclose(log[0], -3.0 * np.log(1 + 0.25 * distance))


def test_kerple_rules():
    with pytest.raises(ValueError, match=r"r2 must be in \(0, 2\]"):
        posenc.kerple_bias([0], [0], 1.0, 2.5)
    with pytest.raises(ValueError, match="r1 must be > 0"):
        posenc.kerple_bias([0], [0], 0.0, 1.0, variant="log")
    with pytest.raises(ValueError, match="variant must be one of 'power', 'log'"):
        posenc.kerple_bias([0], [0], 1.0, 1.0, variant="cubic")


def test_fire_bias_matches_its_formula_and_normalises_into_the_unit_interval(rng):
    w1, b1 = rng.standard_normal(8), rng.standard_normal(8)
    w2, b2 = rng.standard_normal((2, 8)), rng.standard_normal(2)
    query_ids, key_ids = np.array([0, 5, 40]), np.arange(41)
    bias = posenc.fire_bias(query_ids, key_ids, w1, b1, w2, b2, c=0.3, threshold=16.0)
    for a, i in enumerate(query_ids):
        for j in key_ids:
            x = math.log1p(0.3 * abs(i - j)) / math.log1p(0.3 * max(16.0, i))
            np.testing.assert_allclose(bias[:, a, j], w2 @ np.maximum(x * w1 + b1, 0) + b2, atol=1e-12)
    # the MLP's input for causal keys lies in [0, 1] at every query, however far
    identity = ([1.0], [0.0], [[1.0]], [0.0])
    inputs = posenc.fire_bias([10**6], np.arange(0, 10**6 + 1, 1000), *identity, threshold=16.0)
    assert inputs.min() >= 0 and inputs.max() == pytest.approx(1.0)


def test_fire_rules():
    with pytest.raises(ValueError, match="the MLP's shapes must agree"):
        posenc.fire_bias([0], [0], [1.0], [0.0, 1.0], [[1.0]], [0.0])
    with pytest.raises(ValueError, match="threshold must be > 0"):
        posenc.fire_bias([0], [0], [1.0], [0.0], [[1.0]], [0.0], threshold=0)


# ---------------------------------------------------------------------------------------
# CoPE


def test_cope_positions_sum_the_gates_from_key_to_query(rng):
    logits = rng.standard_normal((5, 5))
    positions = posenc.cope_positions(logits)
    gates = 1 / (1 + np.exp(-logits))
    for i in range(5):
        for j in range(5):
            expected = sum(gates[i, t] for t in range(j, i + 1)) if j <= i else 0.0
            assert positions[i, j] == pytest.approx(expected, abs=1e-12)


def test_cope_logits_interpolate_between_integer_positions(rng):
    q, table = rng.standard_normal((3, 4)), rng.standard_normal((4, 4))
    positions = np.array([[0.0, 0, 0], [1.5, 0.25, 0], [9.0, 2.0, 3.0]])
    out = posenc.cope_logits(q, positions, table)
    assert out[1, 0] == pytest.approx(0.5 * q[1] @ table[1] + 0.5 * q[1] @ table[2])
    assert out[1, 1] == pytest.approx(0.75 * q[1] @ table[0] + 0.25 * q[1] @ table[1])
    assert out[2, 0] == pytest.approx(q[2] @ table[3])  # 9 is clamped to the last row, 3
    assert out[2, 1] == pytest.approx(q[2] @ table[2])


def test_cope_rules():
    with pytest.raises(ValueError, match="logits must be square"):
        posenc.cope_positions(np.ones((2, 3)))
    with pytest.raises(ValueError, match="positions must be >= 0"):
        posenc.cope_logits(np.ones((1, 2)), [[-1.0]], np.ones((2, 2)))


# ---------------------------------------------------------------------------------------
# Every grid is checked against the element limit before it is built


@pytest.mark.parametrize(
    "call",
    [
        lambda n: posenc.alibi_symmetric_bias(2, np.arange(n), np.arange(n)),
        lambda n: posenc.t5_bias(np.ones((32, 2)), np.arange(n), np.arange(n)),
        lambda n: posenc.deberta_relative_positions(np.arange(n), np.arange(n)),
        lambda n: posenc.kerple_bias(np.arange(n), np.arange(n), [1.0, 1.0], [1.0, 1.0]),
        lambda n: posenc.shaw_relative_index(np.arange(n), np.arange(n), 4),
    ],
)
def test_grids_beyond_the_element_limit_fail_naming_the_ids(call):
    n = math.isqrt(_checks.MAX_ELEMENTS) + 1
    with pytest.raises(ValueError, match="query_ids and key_ids: the array would have"):
        call(n)


def test_every_public_function_is_exported():
    from posenc import relative

    public = [
        name
        for name in vars(relative)
        if not name.startswith("_") and getattr(getattr(relative, name), "__module__", "") == "posenc.relative"
    ]
    assert set(public) >= {"shaw_logits", "transformer_xl_terms", "t5_bias", "deberta_log_bucket", "cope_positions"}
    for name in public:
        if callable(getattr(relative, name)):
            assert getattr(posenc, name) is getattr(relative, name)
            assert name in posenc.__all__


# ---------------------------------------------------------------------------------------
# The derivations behind the relative schemes

RELATIVE_DERIVATIONS = [
    "transformer-xl-terms",
    "transformer-xl-from-expansion",
    "t5-bucket-monotone",
    "deberta-bucket-symmetry",
    "nope-causal-signal",
    "alibi-symmetric",
]


@pytest.mark.parametrize("derivation_id", RELATIVE_DERIVATIONS)
def test_relative_derivation_is_registered_general_and_proved(derivation_id):
    # tests/library/test_derivations.py runs every required proof once; here only that these six are
    # among them and claim general scope.
    from posenc.site.registry import GENERAL, REGISTRY
    from support.derivations import REQUIRED_IDS

    entry = REGISTRY[derivation_id]
    assert entry.scope == GENERAL and entry.check is not None
    assert derivation_id in REQUIRED_IDS


def test_nope_check_rejects_a_signal_that_ignores_the_first_key(monkeypatch):
    from posenc.site.derivations import relative
    from posenc.site.registry import REGISTRY, ProofFailure

    # A head that skips the marker (weights only on keys 1..t) outputs zero, not mu/(t + 1).
    monkeypatch.setattr(
        relative,
        "softmax",
        lambda scores: np.tril(np.ones_like(scores), -1) / np.maximum(np.arange(scores.shape[0])[:, None], 1),
    )
    with pytest.raises(ProofFailure):
        REGISTRY["nope-causal-signal"].check(np.random.default_rng(3))
