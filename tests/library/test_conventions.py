"""posenc.conventions: known values, relations between conventions, and every input rule.

The comparisons with the libraries themselves (transformers, torch) are in tests/peers and run
with `make test-peers`; these tests need neither.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc
from posenc import conventions

widths = st.integers(1, 32).map(lambda half: 2 * half)


# ---------------------------------------------------------------------------------------
# Schedules and the fairseq embedding


def test_fairseq_schedule_ends_exactly_at_one_over_base():
    omega = posenc.schedule_frequencies(16, schedule="fairseq")
    assert omega[0] == 1.0 and omega[-1] == 1e-4
    np.testing.assert_allclose(omega, 1e4 ** (-np.arange(8) / 7), rtol=1e-15)


@pytest.mark.parametrize("base", [10000.0, 500000.0, 1e6, 2.0])
@pytest.mark.parametrize("width", [2, 8, 64, 128, 1000, 4096])
def test_every_table_of_the_paper_schedule_is_the_same_bits(width, base):
    # One schedule, base ** (-2 r / d), has five public tables; each must be the correctly
    # rounded one, so they agree bit for bit (at d = 64 a naive pow misses 4 of the 32).
    tables = {
        "frequencies": posenc.frequencies(width, base=base),
        "schedule_frequencies": posenc.schedule_frequencies(width, base=base),
        "schedule_frequencies (odd width)": posenc.schedule_frequencies(width + 1, base=base),
        "rope_frequencies": posenc.rope_frequencies(width, base=base),
        "rope_scaling_frequencies": posenc.rope_scaling_frequencies(width, {"rope_theta": base})[0],
    }
    if width >= 4:  # below the original length dynamic NTK keeps the base
        tables["dynamic_ntk_frequencies"] = posenc.dynamic_ntk_frequencies(
            width, base=base, factor=2.0, max_position_embeddings=64, seq_len=10
        )
    bits = {name: table.view(np.uint64).tolist() for name, table in tables.items()}
    for name, table in bits.items():
        assert table == bits["schedule_frequencies"], f"{name} differs from schedule_frequencies"


@settings(max_examples=40, deadline=None)
@given(
    ids=st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=6),
    width=widths,
    layout=st.sampled_from(["interleaved", "halves"]),
)
def test_paper_embedding_is_posenc_sinusoidal(ids, width, layout):
    np.testing.assert_array_equal(
        posenc.sinusoidal_embedding(ids, width, layout=layout), posenc.sinusoidal(ids, width, layout=layout)
    )


def test_fairseq_embedding_values_and_layout():
    width, t = 8, 3
    row = posenc.sinusoidal_embedding([t], width, schedule="fairseq", layout="halves")[0]
    omega = 1e4 ** (-np.arange(4) / 3)
    np.testing.assert_allclose(row, np.concatenate([np.sin(t * omega), np.cos(t * omega)]), atol=1e-15)


def test_odd_width_appends_a_zero_channel():
    odd = posenc.sinusoidal_embedding([0, 5, 9], 9, schedule="fairseq", layout="halves")
    even = posenc.sinusoidal_embedding([0, 5, 9], 8, schedule="fairseq", layout="halves")
    np.testing.assert_array_equal(odd[:, :8], even)
    assert not odd[:, 8].any()


def test_padding_rows_are_zero():
    table = posenc.sinusoidal_embedding(range(6), 8, schedule="fairseq", layout="halves", padding_idx=1)
    assert not table[1].any()
    assert table[0].any() and table[2].any()


def test_fairseq_position_ids_start_after_padding_and_skip_padding():
    ids = posenc.fairseq_position_ids([[5, 6, 7, 1, 1], [1, 1, 8, 9, 4]], padding_idx=1)
    assert ids.tolist() == [[2, 3, 4, 1, 1], [1, 1, 2, 3, 4]]
    assert ids.dtype == np.int64
    cached = posenc.fairseq_position_ids([[5, 6]], padding_idx=1, cache_length=3)
    assert cached.tolist() == [[5, 6]]
    assert posenc.fairseq_position_ids([0, 3, 0], padding_idx=0).tolist() == [0, 1, 0]


def test_fairseq_embedding_combines_ids_schedule_and_padding():
    tokens = np.array([[5, 6, 1], [7, 1, 1]])
    out = posenc.fairseq_embedding(tokens, 7, padding_idx=1)
    assert out.shape == (2, 3, 7)
    assert not out[0, 2].any() and not out[1, 1:].any()
    np.testing.assert_array_equal(
        out[0, 1], posenc.sinusoidal_embedding([3], 7, schedule="fairseq", layout="halves")[0]
    )


def test_fairseq_dtype_rounds_once():
    exact = posenc.sinusoidal_embedding(range(40), 10, schedule="fairseq")
    np.testing.assert_array_equal(
        posenc.sinusoidal_embedding(range(40), 10, schedule="fairseq", dtype=np.float32), exact.astype(np.float32)
    )


# ---------------------------------------------------------------------------------------
# RoPE: permutation, partial rotation, scaling


def test_rope_permutation_and_its_inverse():
    perm = posenc.rope_permutation(8)
    assert perm.tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    inverse = posenc.rope_permutation(8, inverse=True)
    np.testing.assert_array_equal(perm[inverse], np.arange(8))
    np.testing.assert_array_equal(inverse[perm], np.arange(8))
    two_heads = posenc.rope_permutation(4, n_heads=2)
    assert two_heads.tolist() == [0, 2, 1, 3, 4, 6, 5, 7]
    partial = posenc.rope_permutation(8, rotary_dim=4)
    assert partial.tolist() == [0, 2, 1, 3, 4, 5, 6, 7]


@settings(max_examples=30, deadline=None)
@given(width=widths, heads=st.integers(1, 3), seed=st.integers(0, 2**32 - 1), position=st.integers(0, 10**6))
def test_permuting_projection_rows_converts_interleaved_checkpoints_to_halves(width, heads, seed, position):
    rng = np.random.default_rng(seed)
    hidden = 6
    w_q, w_k = rng.normal(size=(2, heads * width, hidden))
    x = rng.normal(size=(2, hidden))
    perm = posenc.rope_permutation(width, n_heads=heads)

    def scores(wq, wk, layout):
        q = (x[:1] @ wq.T).reshape(1, heads, width).transpose(1, 0, 2)  # (heads, 1, width)
        k = (x[1:] @ wk.T).reshape(1, heads, width).transpose(1, 0, 2)
        rq = posenc.rope(q, [position], layout=layout)
        rk = posenc.rope(k, [position + 3], layout=layout)
        return (rq * rk).sum(-1)

    np.testing.assert_allclose(scores(w_q, w_k, "interleaved"), scores(w_q[perm], w_k[perm], "halves"), atol=1e-10)


def test_apply_rope_defaults_are_posenc_rope():
    x = np.random.default_rng(1).normal(size=(3, 5, 16))
    for layout in ("interleaved", "halves"):
        np.testing.assert_array_equal(
            posenc.apply_rope(x, range(5), layout=layout), posenc.rope(x, range(5), layout=layout)
        )


def test_partial_rotation_rotates_only_the_first_rotary_dim_channels():
    x = np.random.default_rng(2).normal(size=(4, 10))
    for layout in ("interleaved", "halves"):
        out = posenc.apply_rope(x, [0, 1, 50, 2**31 - 1], rotary_dim=4, layout=layout)
        np.testing.assert_array_equal(out[:, 4:], x[:, 4:])
        np.testing.assert_array_equal(out[:, :4], posenc.rope(x[:, :4], [0, 1, 50, 2**31 - 1], layout=layout))


def test_inverse_frequencies_and_attention_factor_are_applied():
    x = np.random.default_rng(3).normal(size=(2, 8))
    inv = posenc.rope_frequencies(8) / 4
    out = posenc.apply_rope(x, [0, 12], inv_freq=inv, attention_factor=1.5, layout="halves")
    np.testing.assert_allclose(out[1], 1.5 * posenc.rope(x[1:], [3], layout="halves")[0], atol=1e-14)
    np.testing.assert_allclose(out[0], 1.5 * x[0], atol=1e-15)


def test_linear_scaling_divides_every_frequency():
    np.testing.assert_allclose(posenc.linear_scaled_frequencies(8, factor=4.0), [0.25, 0.025, 0.0025, 0.00025])


def test_dynamic_ntk_leaves_short_sequences_alone_and_raises_the_base_for_long_ones():
    plain = posenc.rope_frequencies(64)
    same = posenc.dynamic_ntk_frequencies(64, factor=2.0, max_position_embeddings=2048, seq_len=1000)
    np.testing.assert_allclose(same, plain, rtol=1e-15)
    longer = posenc.dynamic_ntk_frequencies(64, factor=2.0, max_position_embeddings=2048, seq_len=4096)
    new_base = 1e4 * (2.0 * 4096 / 2048 - 1) ** (64 / 62)
    np.testing.assert_allclose(longer, new_base ** (-np.arange(0, 64, 2) / 64), rtol=1e-14)
    assert longer[0] == 1.0 and np.all(longer[1:] < plain[1:])


def test_yarn_keeps_fast_pairs_interpolates_slow_ones_and_scales_attention():
    inv, factor = posenc.yarn_frequencies(128, factor=4.0, original_max_position_embeddings=4096)
    plain = posenc.rope_frequencies(128)
    assert factor == pytest.approx(0.1 * math.log(4.0) + 1)
    np.testing.assert_allclose(inv[:10], plain[:10], rtol=1e-15)
    np.testing.assert_allclose(inv[-10:], plain[-10:] / 4, rtol=1e-15)
    assert np.all(np.diff(inv) < 0)
    _, none = posenc.yarn_frequencies(128, factor=1.0, original_max_position_embeddings=4096)
    assert none == 1.0
    _, given = posenc.yarn_frequencies(128, factor=4.0, original_max_position_embeddings=4096, attention_factor=0.7)
    assert given == 0.7
    _, ratio = posenc.yarn_frequencies(
        128, factor=4.0, original_max_position_embeddings=4096, mscale=1.0, mscale_all_dim=0.5
    )
    assert ratio == pytest.approx((0.1 * math.log(4) + 1) / (0.05 * math.log(4) + 1))


def test_llama3_bands():
    kwargs = dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=8192)
    inv = posenc.llama3_frequencies(128, base=500000.0, **kwargs)
    plain = posenc.rope_frequencies(128, base=500000.0)
    wavelength = 2 * np.pi / plain
    high = wavelength < 8192 / 4
    low = wavelength > 8192
    np.testing.assert_array_equal(inv[high], plain[high])
    np.testing.assert_allclose(inv[low], plain[low] / 8, rtol=1e-15)
    medium = ~high & ~low
    assert medium.any() and np.all((inv[medium] < plain[medium]) & (inv[medium] > plain[medium] / 8))


def test_rope_scaling_dispatch_matches_the_functions():
    assert posenc.rope_scaling_frequencies(16)[1] == 1.0
    np.testing.assert_array_equal(posenc.rope_scaling_frequencies(16)[0], posenc.rope_frequencies(16))
    np.testing.assert_array_equal(
        posenc.rope_scaling_frequencies(16, {"type": "linear", "factor": 2.0})[0],
        posenc.linear_scaled_frequencies(16, factor=2.0),
    )
    np.testing.assert_array_equal(
        posenc.rope_scaling_frequencies(
            16, {"rope_type": "dynamic", "factor": 2.0}, max_position_embeddings=64, seq_len=100
        )[0],
        posenc.dynamic_ntk_frequencies(16, factor=2.0, max_position_embeddings=64, seq_len=100),
    )
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 256, "beta_fast": None}
    inv, factor = posenc.rope_scaling_frequencies(16, yarn, base=1e6)
    want = posenc.yarn_frequencies(16, base=1e6, factor=4.0, original_max_position_embeddings=256)
    np.testing.assert_array_equal(inv, want[0])
    assert factor == want[1]
    llama3 = {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 64,
        "rope_theta": 500000.0,
    }
    np.testing.assert_array_equal(
        posenc.rope_scaling_frequencies(16, llama3)[0],
        posenc.llama3_frequencies(
            16,
            base=500000.0,
            factor=8.0,
            low_freq_factor=1.0,
            high_freq_factor=4.0,
            original_max_position_embeddings=64,
        ),
    )


# ---------------------------------------------------------------------------------------
# T5 buckets


def test_t5_buckets_bidirectional_known_values():
    rel = np.arange(-10, 11)
    got = posenc.t5_relative_position_bucket(rel)
    # distances below 8 get their own bucket; keys after the query use buckets 16..31
    assert got[rel == 0].tolist() == [0]
    assert got[rel == -7].tolist() == [7] and got[rel == 7].tolist() == [23]
    assert got[rel == -8].tolist() == [8] and got[rel == 8].tolist() == [24]
    assert posenc.t5_relative_position_bucket(-127) == 15 and posenc.t5_relative_position_bucket(-(10**6)) == 15
    assert posenc.t5_relative_position_bucket(10**6) == 31


def test_t5_buckets_causal_ignore_future_keys():
    rel = np.array([5, 1, 0, -1, -15, -16, -200])
    assert posenc.t5_relative_position_bucket(rel, bidirectional=False).tolist() == [0, 0, 0, 1, 15, 16, 31]


def test_t5_buckets_are_monotone_in_distance_and_in_range():
    for bidirectional, buckets in ((True, 32), (False, 32), (True, 64), (False, 10)):
        distance = np.arange(0, 2000)
        got = posenc.t5_relative_position_bucket(
            -distance, bidirectional=bidirectional, num_buckets=buckets, max_distance=300
        )
        assert np.all(np.diff(got) >= 0) and got.min() == 0
        assert got.max() == (buckets // 2 if bidirectional else buckets) - 1


def test_t5_exact_bucket_edges_follow_float32_steps():
    # 16 = 8 * 2 sits exactly on an edge (log2 / log16 * 8 = 2): float32 steps give bucket 10
    assert posenc.t5_relative_position_bucket(-16) == 10
    assert posenc.t5_relative_position_bucket(-15) == 9


# ---------------------------------------------------------------------------------------
# Input rules: every error names the argument


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (
            lambda: posenc.schedule_frequencies(8, schedule="t2t"),
            ValueError,
            "schedule must be one of 'paper', 'fairseq'",
        ),
        (lambda: posenc.schedule_frequencies(3, schedule="fairseq"), ValueError, "width must be >= 4 for the fairseq"),
        (lambda: posenc.schedule_frequencies(1), ValueError, "width must be >= 2"),
        (lambda: posenc.schedule_frequencies(8.0), TypeError, "width must be an integer"),
        (lambda: posenc.schedule_frequencies(8, base=1.0), ValueError, "base must be finite and > 1"),
        (lambda: posenc.sinusoidal_embedding([0], 8, padding_idx=-1), ValueError, "padding_idx must be >= 0"),
        (lambda: posenc.sinusoidal_embedding([0], 8, padding_idx=1.0), TypeError, "padding_idx must be an integer"),
        (lambda: posenc.sinusoidal_embedding([-1], 8), ValueError, "position_ids must be >= 0"),
        (lambda: posenc.sinusoidal_embedding([0], 8, layout="pairs"), ValueError, "layout must be one of"),
        (lambda: posenc.sinusoidal_embedding([0], 8, dtype=int), TypeError, "dtype must be a floating dtype"),
        (lambda: posenc.fairseq_position_ids([[1.0, 2.0]], 1), TypeError, "input_ids must hold integer token ids"),
        (lambda: posenc.fairseq_position_ids(3, 1), ValueError, "input_ids must have at least one axis"),
        (lambda: posenc.fairseq_position_ids([[1]], -1), ValueError, "padding_idx must be >= 0"),
        (lambda: posenc.fairseq_position_ids([[1]], 1, cache_length=-2), ValueError, "cache_length must be >= 0"),
        (lambda: posenc.fairseq_embedding([[1]], 8, padding_idx=None), TypeError, "padding_idx must be an integer"),
        (lambda: posenc.rope_permutation(7), ValueError, "head_dim must be a positive even integer"),
        (lambda: posenc.rope_permutation(8, n_heads=0), ValueError, "n_heads must be >= 1"),
        (lambda: posenc.rope_permutation(8, rotary_dim=10), ValueError, "rotary_dim must be <= head_dim"),
        (lambda: posenc.rope_permutation(8, inverse=1), TypeError, "inverse must be True or False"),
        (
            lambda: posenc.apply_rope(np.ones((1, 8)), [0], rotary_dim=3),
            ValueError,
            "rotary_dim must be a positive even",
        ),
        (lambda: posenc.apply_rope(np.ones((1, 7)), [0]), ValueError, "x's last axis must be even"),
        (
            lambda: posenc.apply_rope(np.ones((1, 8)), [0], inv_freq=[1.0]),
            ValueError,
            "inv_freq must have shape \\(4,\\)",
        ),
        (
            lambda: posenc.apply_rope(np.ones((1, 8)), [0], inv_freq=[1, 1, 1, np.nan]),
            ValueError,
            "inv_freq must be finite",
        ),
        (lambda: posenc.apply_rope(np.ones((1, 8)), [0, 1]), ValueError, "position_ids must have one id per row"),
        (
            lambda: posenc.apply_rope(np.ones((1, 8)), [0], attention_factor="2"),
            TypeError,
            "attention_factor must be a real",
        ),
        (lambda: posenc.apply_rope(np.ones(8), [0]), ValueError, "x must have shape"),
        (lambda: posenc.linear_scaled_frequencies(8, factor=0), ValueError, "factor must be > 0"),
        (
            lambda: posenc.dynamic_ntk_frequencies(2, factor=2.0, max_position_embeddings=8),
            ValueError,
            "dim must be >= 4",
        ),
        (
            lambda: posenc.dynamic_ntk_frequencies(8, factor=2.0, max_position_embeddings=0),
            ValueError,
            "max_position_embeddings must be >= 1",
        ),
        (
            lambda: posenc.dynamic_ntk_frequencies(8, factor=2.0, max_position_embeddings=8, seq_len=-1),
            ValueError,
            "seq_len must be >= 0",
        ),
        (
            lambda: posenc.yarn_frequencies(8, factor=2.0, original_max_position_embeddings=0),
            ValueError,
            "original_max_position_embeddings must be >= 1",
        ),
        (
            lambda: posenc.yarn_frequencies(8, factor=2.0, original_max_position_embeddings=64, beta_fast=-1),
            ValueError,
            "beta_fast must be > 0",
        ),
        (
            lambda: posenc.yarn_frequencies(8, factor=2.0, original_max_position_embeddings=64, truncate="yes"),
            TypeError,
            "truncate must be True or False",
        ),
        (
            lambda: posenc.llama3_frequencies(
                8, factor=8.0, low_freq_factor=4.0, high_freq_factor=1.0, original_max_position_embeddings=64
            ),
            ValueError,
            "high_freq_factor must be > low_freq_factor",
        ),
        (
            lambda: posenc.rope_scaling_frequencies(8, {"rope_type": "no-such-type"}),
            ValueError,
            "rope_type must be one of",
        ),
        (
            lambda: posenc.rope_scaling_frequencies(8, {"rope_type": "longrope"}),
            ValueError,
            "'longrope' needs long_factor, original_max_position_embeddings, short_factor",
        ),
        (lambda: posenc.rope_scaling_frequencies(8, {"rope_type": "linear"}), ValueError, "needs factor"),
        (
            lambda: posenc.rope_scaling_frequencies(8, {"rope_type": "linear", "factor": 2, "beta": 1}),
            ValueError,
            "keys that 'linear' does not use: beta",
        ),
        (
            lambda: posenc.rope_scaling_frequencies(8, {"rope_type": "dynamic", "factor": 2}),
            ValueError,
            "max_position_embeddings is required",
        ),
        (lambda: posenc.rope_scaling_frequencies(8, [("factor", 2)]), TypeError, "rope_scaling must be a mapping"),
        (lambda: posenc.t5_relative_position_bucket([0.5]), TypeError, "relative_position must hold integers"),
        (lambda: posenc.t5_relative_position_bucket([2**24]), ValueError, "relative_position must be below 2\\*\\*24"),
        (lambda: posenc.t5_relative_position_bucket([0], num_buckets=2), ValueError, "num_buckets must be >= 4"),
        (lambda: posenc.t5_relative_position_bucket([0], max_distance=8), ValueError, "max_distance must be > 8"),
        (
            lambda: posenc.t5_relative_position_bucket([0], bidirectional=None),
            TypeError,
            "bidirectional must be True or False",
        ),
    ],
)
def test_bad_arguments_are_named(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_every_public_function_is_exported():
    for name in (
        "apply_rope",
        "dynamic_ntk_frequencies",
        "fairseq_embedding",
        "fairseq_position_ids",
        "linear_scaled_frequencies",
        "llama3_frequencies",
        "rope_frequencies",
        "rope_permutation",
        "rope_scaling_frequencies",
        "schedule_frequencies",
        "sinusoidal_embedding",
        "t5_relative_position_bucket",
        "yarn_frequencies",
    ):
        assert getattr(posenc, name) is getattr(conventions, name)
        assert name in posenc.__all__


# ---------------------------------------------------------------------------------------
# Out-of-range arguments: never a wrapped, overflowed or unexplained result

LAST_EXACT = 2**53 - 1


@settings(max_examples=40, deadline=None)
@given(padding_idx=st.integers(0, 2**64), cache_length=st.integers(0, 2**64), tokens=st.integers(1, 4))
def test_fairseq_position_ids_are_exact_or_rejected_never_wrapped(padding_idx, cache_length, tokens):
    input_ids = np.full((1, tokens), 7) if padding_idx != 7 else np.full((1, tokens), 8)
    largest = padding_idx + cache_length + tokens
    if padding_idx > LAST_EXACT:
        with pytest.raises(ValueError, match="padding_idx must be <= 9007199254740991"):
            posenc.fairseq_position_ids(input_ids, padding_idx, cache_length=cache_length)
    elif cache_length > LAST_EXACT:
        with pytest.raises(ValueError, match="cache_length must be <= 9007199254740991"):
            posenc.fairseq_position_ids(input_ids, padding_idx, cache_length=cache_length)
    elif largest > LAST_EXACT:
        with pytest.raises(ValueError, match=r"padding_idx \+ cache_length \+ tokens per row must stay below 2\*\*53"):
            posenc.fairseq_position_ids(input_ids, padding_idx, cache_length=cache_length)
    else:
        got = posenc.fairseq_position_ids(input_ids, padding_idx, cache_length=cache_length)
        assert got.tolist() == [[padding_idx + cache_length + k for k in range(1, tokens + 1)]]


def test_fairseq_position_ids_at_the_last_exact_id():
    got = posenc.fairseq_position_ids([[5, 6]], 1, cache_length=LAST_EXACT - 3)
    assert got.tolist() == [[LAST_EXACT - 1, LAST_EXACT]]
    with pytest.raises(ValueError, match="must stay below 2\\*\\*53"):
        posenc.fairseq_position_ids([[5, 6, 7]], 1, cache_length=LAST_EXACT - 3)


def test_apply_rope_with_the_issue_s_frequency():
    with pytest.raises(ValueError, match="position_ids times inv_freq must stay below 2\\*\\*53 radians"):
        posenc.apply_rope(np.ones((2, 2)), [0, 3], inv_freq=[1e300])
    # at id 0 every phase is 0, accurately
    np.testing.assert_array_equal(posenc.apply_rope(np.ones((1, 2)), [0], inv_freq=[1e300]), [[1.0, 1.0]])


@pytest.mark.parametrize("factor", [1e300, 1e20, 1e17])
def test_dynamic_ntk_factors_that_break_the_scaled_base_are_blamed(factor):
    with pytest.raises(ValueError, match="factor must keep the scaled base finite and > 1"):
        seq_len = 16 if factor > 1e100 else 8
        posenc.dynamic_ntk_frequencies(64, factor=factor, max_position_embeddings=8, seq_len=seq_len)


@pytest.mark.parametrize(
    "scaled",
    [
        lambda factor: posenc.linear_scaled_frequencies(8, factor=factor),
        lambda factor: posenc.yarn_frequencies(8, factor=factor, original_max_position_embeddings=2048)[0],
        lambda factor: posenc.llama3_frequencies(
            8, factor=factor, low_freq_factor=1, high_freq_factor=4, original_max_position_embeddings=2048
        ),
    ],
)
def test_a_factor_so_small_that_a_frequency_overflows_is_blamed(scaled):
    # dividing the unit frequency of pair 0 (or the slow pairs) by 1e-320 is infinite in float64
    with pytest.raises(ValueError, match="factor must be large enough that every frequency divided by it is finite"):
        scaled(1e-320)
    assert np.all(np.isfinite(scaled(1e-300)))


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: posenc.schedule_frequencies(8, base=10**400), "base must be finite and > 1"),
        (lambda: posenc.rope_frequencies(8, base=10**400), "base must be finite and > 1"),
        (lambda: posenc.apply_rope(np.ones((1, 8)), [0], base=10**400), "base must be finite and > 1"),
        (lambda: posenc.linear_scaled_frequencies(8, factor=10**400), "factor must be finite"),
        (
            lambda: posenc.apply_rope(np.ones((1, 8)), [0], attention_factor=-(10**400)),
            "attention_factor must be finite",
        ),
        (lambda: posenc.schedule_frequencies(2**63), "width must be <= 65536"),
        (lambda: posenc.schedule_frequencies(2**63 + 1, schedule="fairseq"), "width must be <= 65536"),
        (lambda: posenc.sinusoidal_embedding([1], 2**63), "width must be <= 65536"),
        (lambda: posenc.rope_frequencies(2**63), "dim must be <= 65536"),
        (lambda: posenc.rope_permutation(2**63), "head_dim must be <= 65536"),
        (lambda: posenc.rope_permutation(2**16, n_heads=2**12), "n_heads and head_dim: the array would have"),
        (lambda: posenc.apply_rope(np.ones((1, 8)), [0], rotary_dim=2**63), "rotary_dim must be <= 65536"),
        (lambda: posenc.sinusoidal_embedding(np.zeros(2**12, dtype=int), 2**16), "position_ids and width: the array"),
        (
            lambda: posenc.yarn_frequencies(
                8, factor=math.e, original_max_position_embeddings=64, mscale=1.0, mscale_all_dim=-10.0
            ),
            "mscale_all_dim must not make its scale",
        ),
        (
            lambda: posenc.yarn_frequencies(
                8, factor=1e10, original_max_position_embeddings=64, mscale=1e308, mscale_all_dim=1e-300
            ),
            "mscale and mscale_all_dim must give a finite",
        ),
    ],
)
def test_out_of_range_arguments_are_named_with_their_rule(call, words):
    with pytest.raises(ValueError, match=words):
        call()


@pytest.mark.parametrize("empty", [[], [[]], ()])
def test_empty_id_lists_are_empty_integer_arrays_and_other_empty_types_still_fail(empty):
    assert posenc.fairseq_position_ids(empty, 1).shape == np.asarray(empty).shape
    assert posenc.fairseq_position_ids(empty, 1).dtype == np.int64
    assert posenc.fairseq_embedding(empty, 8, padding_idx=1).shape == np.asarray(empty).shape + (8,)
    assert posenc.t5_relative_position_bucket(empty).shape == np.asarray(empty).shape
    # only NumPy's float64 stand-in for "no entries" is taken as integers, not any empty array
    with pytest.raises(TypeError, match="input_ids must hold integer token ids, got dtype bool"):
        posenc.fairseq_position_ids(np.array(empty, dtype=bool), 1)
    with pytest.raises(TypeError, match="relative_position must hold integers, got dtype <U1"):
        posenc.t5_relative_position_bucket(np.array(empty, dtype="U1"))


def test_token_ids_beyond_int64_are_said_to_be_too_large():
    with pytest.raises(ValueError, match="input_ids must be within int64"):
        posenc.fairseq_position_ids([[2**64 + 5]], 1)
    with pytest.raises(ValueError, match="input_ids must be within int64"):
        posenc.fairseq_position_ids(np.array([[2**63]], dtype=np.uint64), 1)
