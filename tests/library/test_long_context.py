"""posenc.long_context: the critical dimension, YaRN's pieces, LongRoPE, xPos, re-rotated keys,
the streaming cache and attention entropy, each against its defining formula."""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc
from posenc import conventions, long_context


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1717)


# ---------------------------------------------------------------------------------------
# Critical dimension


@pytest.mark.parametrize("dim", [8, 64, 128])
@pytest.mark.parametrize("base", [10000.0, 500000.0, 1e6])
@pytest.mark.parametrize("length", [512, 4096, 8192])
def test_pairs_past_the_critical_dimension_are_exactly_those_longer_than_the_training_length(dim, base, length):
    r_c = posenc.critical_dimension(dim, length, base=base)
    wavelengths = posenc.wavelengths(dim, base=base)
    pairs = np.arange(dim // 2)
    assert np.array_equal(wavelengths > length, pairs > r_c)
    # At r_c itself the wavelength is the training length.
    assert 2 * math.pi * base ** (2 * r_c / dim) == pytest.approx(length, rel=1e-12)


@pytest.mark.parametrize("turns", [0.5, 1.0, 32.0])
def test_pair_index_at_turns_is_where_the_window_holds_that_many_turns(turns):
    r = posenc.pair_index_at_turns(128, 4096, turns, base=10000.0)
    assert 4096 / (2 * math.pi * 10000.0 ** (2 * r / 128)) == pytest.approx(turns, rel=1e-12)


# ---------------------------------------------------------------------------------------
# YaRN's ramp and attention factor


def test_yarn_frequencies_blend_by_the_ramp():
    for dim, base, factor, original in [(128, 10000.0, 4.0, 4096), (64, 1e6, 16.0, 2048), (16, 10000.0, 2.0, 64)]:
        ramp = posenc.yarn_ramp(dim, base=base, original_max_position_embeddings=original)
        omega = posenc.rope_frequencies(dim, base=base)
        inv, _ = posenc.yarn_frequencies(dim, base=base, factor=factor, original_max_position_embeddings=original)
        np.testing.assert_allclose(inv, (1 - ramp) * omega + ramp * omega / factor, rtol=1e-15)
        assert np.all(np.diff(ramp) >= 0) and ramp.min() >= 0 and ramp.max() <= 1
        # The two ends: a weight of 0 keeps the frequency, a weight of 1 is position interpolation.
        assert np.array_equal(inv[ramp == 0], omega[ramp == 0])
        np.testing.assert_allclose(inv[ramp == 1], omega[ramp == 1] / factor, rtol=1e-15)


def test_yarn_ramp_runs_between_the_pairs_at_beta_fast_and_beta_slow_turns():
    low, high = posenc.yarn_correction_range(128, base=10000.0, original_max_position_embeddings=4096)
    assert (low, high) == (
        math.floor(posenc.pair_index_at_turns(128, 4096, 32.0)),
        math.ceil(posenc.pair_index_at_turns(128, 4096, 1.0)),
    )
    ramp = posenc.yarn_ramp(128, base=10000.0, original_max_position_embeddings=4096)
    assert np.all(ramp[: low + 1] == 0) and np.all(ramp[high:] == 1)
    np.testing.assert_allclose(ramp[low : high + 1], (np.arange(low, high + 1) - low) / (high - low), rtol=1e-15)
    untruncated = posenc.yarn_correction_range(128, original_max_position_embeddings=4096, truncate=False)
    assert untruncated == (posenc.pair_index_at_turns(128, 4096, 32.0), posenc.pair_index_at_turns(128, 4096, 1.0))


def test_yarn_ramp_ends_that_meet_are_moved_apart_as_in_transformers():
    # At dim 2 and this length both ends land on 1 = dim - 1 (floor of 1.08, ceil clipped), so they would meet.
    low, high = posenc.yarn_correction_range(2, original_max_position_embeddings=2**22)
    assert (low, high) == (1, 1.001)


def test_yarn_attention_factor_is_point_one_ln_s_plus_one():
    for s in (1.5, 4.0, 32.0):
        assert posenc.yarn_attention_factor(s) == pytest.approx(0.1 * math.log(s) + 1, rel=1e-15)
        _, factor = posenc.yarn_frequencies(64, factor=s, original_max_position_embeddings=2048)
        assert factor == posenc.yarn_attention_factor(s)
    assert posenc.yarn_attention_factor(1.0) == 1.0 and posenc.yarn_attention_factor(0.5) == 1.0
    ratio = posenc.yarn_attention_factor(4.0, mscale=1.0, mscale_all_dim=0.5)
    assert ratio == pytest.approx((0.1 * math.log(4) + 1) / (0.05 * math.log(4) + 1), rel=1e-15)


# ---------------------------------------------------------------------------------------
# LongRoPE


def _phi3_style(rng, dim=32):
    short = rng.uniform(1.0, 1.2, dim // 2)
    long = np.sort(rng.uniform(1.0, 40.0, dim // 2))
    return short, long


def test_longrope_divides_each_pair_by_its_short_or_long_factor(rng):
    short, long = _phi3_style(rng)
    omega = posenc.rope_frequencies(32, base=10000.0)
    common = dict(
        short_factor=short, long_factor=long, original_max_position_embeddings=4096, max_position_embeddings=131072
    )
    for seq_len, chosen in [(None, short), (0, short), (4096, short), (4097, long), (131072, long)]:
        inv, attention = posenc.longrope_frequencies(32, seq_len=seq_len, **common)
        np.testing.assert_array_equal(inv, omega / chosen)
        assert attention == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)), rel=1e-15)


def test_longrope_scale_and_attention_factor_follow_transformers_rules(rng):
    short, long = _phi3_style(rng)
    base = dict(short_factor=short, long_factor=long, original_max_position_embeddings=4096)
    # A given factor wins over max_position_embeddings / original.
    _, given = posenc.longrope_frequencies(32, factor=8.0, max_position_embeddings=131072, **base)
    assert given == pytest.approx(math.sqrt(1 + math.log(8) / math.log(4096)), rel=1e-15)
    assert posenc.longrope_frequencies(32, factor=1.0, **base)[1] == 1.0
    assert posenc.longrope_frequencies(32, factor=8.0, attention_factor=0.9, **base)[1] == 0.9


def test_longrope_through_a_rope_scaling_dict(rng):
    short, long = _phi3_style(rng)
    scaling = {
        "rope_type": "longrope",
        "short_factor": list(short),
        "long_factor": list(long),
        "original_max_position_embeddings": 4096,
        "rope_theta": 10000.0,
    }
    for seq_len in (None, 5000):
        inv, attention = posenc.rope_scaling_frequencies(32, scaling, max_position_embeddings=131072, seq_len=seq_len)
        want = posenc.longrope_frequencies(
            32,
            short_factor=short,
            long_factor=long,
            original_max_position_embeddings=4096,
            max_position_embeddings=131072,
            seq_len=seq_len,
        )
        np.testing.assert_array_equal(inv, want[0])
        assert attention == want[1]


# ---------------------------------------------------------------------------------------
# xPos


def test_xpos_scales_are_zeta_to_the_position_over_scale_base():
    ids = np.array([-700, -1, 0, 3, 512, 4000])
    zeta = (np.arange(0, 16, 2) + 0.4 * 16) / (1.4 * 16)
    np.testing.assert_allclose(posenc.xpos_scales(ids, 16), zeta[None, :] ** (ids[:, None] / 512), rtol=1e-15)
    assert np.all((zeta > 0) & (zeta < 1))


def test_xpos_score_depends_only_on_the_offset_and_decays_with_it(rng):
    q, k = rng.standard_normal((1, 32)), rng.standard_normal((1, 32))

    def score(n, m):
        return (posenc.apply_xpos(q, [n]) @ posenc.apply_xpos(k, [m], keys=True).T).item()

    for n, m in [(10, 3), (600, 100), (5000, 4990)]:
        for shift in (1, 77, 4096):
            assert score(n + shift, m + shift) == pytest.approx(score(n, m), rel=1e-9, abs=1e-12)
    # The score is RoPE's pair by pair, each pair weighted by zeta_r ** ((n - m) / scale_base).
    n, m = 900, 100
    rq, rk = posenc.rope(q, [n]), posenc.rope(k, [m])
    zeta = (np.arange(0, 32, 2) + 0.4 * 32) / (1.4 * 32)
    per_pair = (rq * rk).reshape(16, 2).sum(axis=1)
    assert score(n, m) == pytest.approx(float(per_pair @ zeta ** ((n - m) / 512)), rel=1e-12)


def test_xpos_halves_layout_scales_both_members_of_each_pair(rng):
    x = rng.standard_normal((3, 8))
    ids = [0, 5, 9]
    interleaved = posenc.apply_xpos(x, ids)
    perm = posenc.rope_permutation(8)
    halves = posenc.apply_xpos(x[..., perm], ids, layout="halves")
    np.testing.assert_allclose(interleaved[..., perm], halves, rtol=1e-14, atol=1e-15)


# ---------------------------------------------------------------------------------------
# Re-rotating cached keys


@pytest.mark.parametrize("position,offset", [(7, 3), (4096, -4000), (2**40, 2**40 + 11), (2**31 - 1, -(2**30))])
def test_rerotating_a_rotated_key_is_rotating_it_at_the_moved_position(rng, position, offset):
    keys = rng.standard_normal((2, 3, 64))
    ids = np.array([position, position + 1, position + 2])
    moved = posenc.rerotate_keys(posenc.rope(keys, ids), offset)
    np.testing.assert_allclose(moved, posenc.rope(keys, ids + offset), rtol=0, atol=2e-14)


def test_rerotation_per_row_partial_halves_and_given_frequencies(rng):
    keys = rng.standard_normal((4, 16))
    ids = np.array([100, 50, 7, 3000])
    offsets = np.array([-100, 25, 0, 1000])
    inv = posenc.yarn_frequencies(12, factor=4.0, original_max_position_embeddings=256)[0]
    rotated = posenc.apply_rope(keys, ids, inv_freq=inv, layout="halves", rotary_dim=12)
    moved = posenc.rerotate_keys(rotated, offsets, inv_freq=inv, layout="halves", rotary_dim=12)
    want = posenc.apply_rope(keys, ids + offsets, inv_freq=inv, layout="halves", rotary_dim=12)
    np.testing.assert_allclose(moved, want, rtol=0, atol=1e-14)
    assert np.array_equal(moved[..., 12:], keys[..., 12:])


def test_rerotation_keeps_attention_scores_of_moved_pairs(rng):
    # A query at 20 and keys at 5..9 score as a query at 10 and those keys moved back by 10.
    q, k = rng.standard_normal((1, 32)), rng.standard_normal((5, 32))
    before = posenc.rope(q, [20]) @ posenc.rope(k, np.arange(5, 10)).T
    after = posenc.rope(q, [10]) @ posenc.rerotate_keys(posenc.rope(k, np.arange(5, 10)), -10).T
    np.testing.assert_allclose(after, before, rtol=1e-12, atol=1e-13)


# ---------------------------------------------------------------------------------------
# Streaming cache


def test_streaming_cache_keeps_sinks_and_window_with_cache_position_ids():
    kept, ids = posenc.streaming_cache(20, sinks=4, window=6)
    assert kept.tolist() == [0, 1, 2, 3, 14, 15, 16, 17, 18, 19]
    assert ids.tolist() == list(range(10))
    kept, ids = posenc.streaming_cache(7, sinks=4, window=6)
    assert kept.tolist() == ids.tolist() == list(range(7))
    for length in range(0, 40):
        kept, ids = posenc.streaming_cache(length, sinks=2, window=5)
        assert ids.size == min(length, 7) and (ids.size == 0 or ids.max() <= 6)


# ---------------------------------------------------------------------------------------
# Attention entropy


@pytest.mark.parametrize("n", [1, 2, 7, 4096])
def test_entropy_of_equal_scores_is_ln_n(n):
    assert posenc.attention_entropy(np.full(n, 3.25)) == pytest.approx(math.log(n), rel=1e-14, abs=1e-15)


def test_entropy_matches_minus_sum_p_ln_p_and_ignores_masked_keys(rng):
    scores = rng.standard_normal((3, 5, 9)) * 4
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(posenc.attention_entropy(scores), -(p * np.log(p)).sum(-1), rtol=1e-13)
    masked = scores.copy()
    masked[..., 6:] = -np.inf
    np.testing.assert_allclose(posenc.attention_entropy(masked), posenc.attention_entropy(scores[..., :6]), rtol=1e-14)
    assert posenc.attention_entropy([0.0, -np.inf, -np.inf]) == 0.0
    assert np.all(posenc.attention_entropy(scores) <= math.log(9) + 1e-12)


# ---------------------------------------------------------------------------------------
# Arguments


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: posenc.critical_dimension(7, 4096), ValueError, "dim must be a positive even integer"),
        (lambda: posenc.critical_dimension(64, 0), ValueError, "training_length must be >= 1"),
        (lambda: posenc.pair_index_at_turns(64, 4096, 0.0), ValueError, "turns must be > 0"),
        (
            lambda: posenc.yarn_ramp(64, original_max_position_embeddings=64, beta_slow=-1),
            ValueError,
            "beta_slow must be > 0",
        ),
        (lambda: posenc.yarn_attention_factor(0.0), ValueError, "factor must be > 0"),
        (
            lambda: posenc.longrope_frequencies(
                8, short_factor=[1, 1, 1], long_factor=[1] * 4, original_max_position_embeddings=64, factor=2.0
            ),
            ValueError,
            r"short_factor must have shape \(4,\)",
        ),
        (
            lambda: posenc.longrope_frequencies(
                8, short_factor=[1] * 4, long_factor=[1, 0, 1, 1], original_max_position_embeddings=64, factor=2.0
            ),
            ValueError,
            "long_factor must be finite and > 0",
        ),
        (
            lambda: posenc.longrope_frequencies(
                8, short_factor=[1] * 4, long_factor=[1] * 4, original_max_position_embeddings=64
            ),
            ValueError,
            "max_position_embeddings is required when factor is not given",
        ),
        (
            lambda: posenc.longrope_frequencies(
                8, short_factor=[1] * 4, long_factor=[1] * 4, original_max_position_embeddings=1, factor=2.0
            ),
            ValueError,
            "original_max_position_embeddings must be >= 2",
        ),
        (lambda: posenc.xpos_scales([[0]], 8), ValueError, "position_ids must be one-dimensional"),
        (lambda: posenc.xpos_scales([0], 8, scale_base=0), ValueError, "scale_base must be > 0"),
        (
            lambda: posenc.xpos_scales([-(2**52)], 8, scale_base=1.0),
            ValueError,
            "position_ids / scale_base must keep every xPos scale finite",
        ),
        (lambda: posenc.apply_xpos(np.ones((1, 8)), [0], keys=1), TypeError, "keys must be True or False"),
        (
            lambda: posenc.rerotate_keys(np.ones((2, 8)), [1, 2, 3]),
            ValueError,
            "offset must have one offset per row of keys: got 3 offsets for 2 rows",
        ),
        (lambda: posenc.rerotate_keys(np.ones(8), 1), ValueError, "keys must have shape"),
        (lambda: posenc.rerotate_keys(np.ones((1, 8)), 2**53), ValueError, "offset must be below 2"),
        (
            lambda: posenc.rerotate_keys(np.ones((1, 8)), 1, inv_freq=[1e300, 1, 1, 1]),
            ValueError,
            "must stay below 2\\*\\*53 radians",
        ),
        (lambda: posenc.streaming_cache(10, sinks=-1, window=4), ValueError, "sinks must be >= 0"),
        (lambda: posenc.streaming_cache(10, sinks=1, window=0), ValueError, "window must be >= 1"),
        (lambda: posenc.attention_entropy([]), ValueError, "scores must have a non-empty last axis"),
        (lambda: posenc.attention_entropy([1.0, np.nan]), ValueError, "scores must be finite or -inf"),
        (lambda: posenc.attention_entropy([-np.inf, -np.inf]), ValueError, "at least one finite score"),
        (lambda: posenc.attention_entropy(["a"]), TypeError, "scores must be a real array"),
    ],
)
def test_bad_arguments_are_named(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_every_public_function_is_exported():
    for name in (
        "apply_xpos",
        "attention_entropy",
        "critical_dimension",
        "longrope_frequencies",
        "pair_index_at_turns",
        "rerotate_keys",
        "streaming_cache",
        "xpos_scales",
        "yarn_attention_factor",
        "yarn_correction_range",
        "yarn_ramp",
    ):
        assert getattr(posenc, name) is getattr(long_context, name)
        assert name in posenc.__all__
    assert conventions.long_context is long_context


@pytest.mark.parametrize(("name", "value"), [("beta_fast", 5e-324), ("beta_slow", 1e308)])
def test_yarn_turn_counts_that_leave_float64_are_blamed_by_name(name, value):
    # 2048 / (2 pi 5e-324) overflows to inf and 2048 / (2 pi 1e308) underflows to 0: no finite log
    with pytest.raises(ValueError, match=f"{name} must make length / \\(2 pi {name}\\) finite and > 0"):
        long_context.yarn_correction_range(8, original_max_position_embeddings=2048, **{name: value})
