"""Behaviour of the posenc NumPy library: known values, identities, and every input rule."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc
from posenc import _checks

widths = st.integers(1, 32).map(lambda half: 2 * half)
ids = st.integers(0, 10**6)
small_offsets = st.integers(-5000, 5000)


# ---------------------------------------------------------------------------------------
# Known values


def test_width8_vector_at_position_2_matches_the_published_values():
    vector = posenc.sinusoidal([2], 8)[0].round(4)
    assert vector[0::2].tolist() == [0.9093, 0.1987, 0.02, 0.002]  # sines, fast pair first
    assert vector[1::2].tolist() == [-0.4161, 0.9801, 0.9998, 1.0]  # cosines


def test_width8_vector_at_position_0_alternates_zero_and_one():
    assert posenc.sinusoidal([0], 8)[0].tolist() == [0.0, 1.0] * 4


def test_frequencies_and_wavelengths_at_width8():
    np.testing.assert_allclose(posenc.frequencies(8), [1.0, 0.1, 0.01, 0.001], rtol=1e-15)
    assert posenc.wavelengths(8).round(2).tolist() == [6.28, 62.83, 628.32, 6283.19]


def test_frequencies_follow_base_and_width():
    np.testing.assert_allclose(posenc.frequencies(4, base=100.0), [1.0, 0.1], rtol=1e-15)
    assert posenc.frequencies(128).shape == (64,)


def test_halves_layout_puts_every_sine_before_every_cosine():
    interleaved = posenc.sinusoidal([3], 8)[0]
    halves = posenc.sinusoidal([3], 8, layout="halves")[0]
    np.testing.assert_array_equal(halves[:4], interleaved[0::2])
    np.testing.assert_array_equal(halves[4:], interleaved[1::2])


def test_position_ids_are_explicit_so_a_cached_prefix_continues_at_its_length():
    prefix = posenc.sinusoidal(range(6), 16)
    np.testing.assert_array_equal(posenc.sinusoidal([5], 16)[0], prefix[5])


def test_empty_id_list_gives_zero_rows():
    assert posenc.sinusoidal([], 8).shape == (0, 8)
    assert posenc.sinusoidal(np.array([], dtype=np.int64), 8).shape == (0, 8)


def test_integral_floats_are_accepted_as_ids():
    np.testing.assert_array_equal(posenc.sinusoidal([2.0], 8), posenc.sinusoidal([2], 8))


def test_dtype_rounds_once_at_the_end():
    exact = posenc.sinusoidal([12345], 64)
    single = posenc.sinusoidal([12345], 64, dtype=np.float32)
    assert single.dtype == np.float32
    np.testing.assert_array_equal(single, exact.astype(np.float32))


def test_kernel_values_from_the_interactive_tour():
    assert round(posenc.kernel(6, 8), 2) == 3.78
    assert round(posenc.kernel(5, 16), 2) == 6.14
    assert posenc.kernel(0, 8) == 4.0


def test_kernel_and_distance_accept_arrays_of_offsets():
    offsets = np.arange(-3, 4).reshape(7, 1)
    assert posenc.kernel(offsets, 8).shape == (7, 1)
    assert posenc.squared_distance(offsets, 8).shape == (7, 1)
    assert isinstance(posenc.kernel(3, 8), float)


def test_shift_operator_shapes_and_block_structure():
    single = posenc.shift_operator(1, 8)
    assert single.shape == (8, 8)
    assert posenc.shift_operator([1, 2, 3], 8).shape == (3, 8, 8)
    off_block = single.copy()
    for r in range(4):
        off_block[2 * r : 2 * r + 2, 2 * r : 2 * r + 2] = 0
    assert not off_block.any()
    np.testing.assert_allclose(single[:2, :2], [[math.cos(1), math.sin(1)], [-math.sin(1), math.cos(1)]])


def test_alibi_slopes_for_powers_of_two_and_others():
    np.testing.assert_allclose(posenc.alibi_slopes(8), 2.0 ** -np.arange(1, 9))
    twelve = posenc.alibi_slopes(12)
    np.testing.assert_allclose(twelve[:8], posenc.alibi_slopes(8))
    np.testing.assert_allclose(twelve[8:], posenc.alibi_slopes(16)[0::2][:4])
    assert posenc.alibi_slopes(1).tolist() == [2.0**-8]


def test_alibi_bias_is_causal_and_proportional_to_distance():
    bias = posenc.alibi_bias(2, 4)
    assert bias.shape == (2, 4, 4)
    slope = posenc.alibi_slopes(2)[1]
    assert bias[1, 3, 0] == -3 * slope
    assert bias[1, 2, 2] == 0
    assert np.isneginf(bias[0, 0, 1]) and np.isneginf(bias[1, 1, 3])
    assert posenc.alibi_bias(3, 0).shape == (3, 0, 0)


def test_rope_layouts_pair_the_documented_channels():
    x = np.arange(1.0, 9.0).reshape(1, 8)
    angle = 2 * posenc.frequencies(8)
    interleaved = posenc.rope(x, [2])[0]
    np.testing.assert_allclose(interleaved[:2], [1 * math.cos(2) - 2 * math.sin(2), 1 * math.sin(2) + 2 * math.cos(2)])
    halves = posenc.rope(x, [2], layout="halves")[0]
    np.testing.assert_allclose(
        [halves[1], halves[5]],
        [2 * math.cos(angle[1]) - 6 * math.sin(angle[1]), 2 * math.sin(angle[1]) + 6 * math.cos(angle[1])],
    )


def test_rope_score_from_the_interactive_tour():
    pair = np.tile([0.6, 0.4], 4)
    q = posenc.rope(pair[None], [3])[0]
    k = posenc.rope(pair[None], [7])[0]
    assert round(float(q @ k), 2) == 1.18


def test_rope_broadcasts_over_leading_axes():
    x = np.random.default_rng(0).normal(size=(2, 3, 5, 8))
    out = posenc.rope(x, range(5))
    assert out.shape == x.shape
    np.testing.assert_allclose(out[1, 2], posenc.rope(x[1, 2], range(5)))


# ---------------------------------------------------------------------------------------
# Identities (property tests)


@settings(max_examples=60, deadline=None)
@given(t=ids, k=small_offsets, width=widths)
def test_shift_operator_moves_a_vector_by_its_offset(t, k, width):
    if t + k < 0:
        k = -k
    moved = posenc.shift_operator(k, width) @ posenc.sinusoidal([t], width)[0]
    np.testing.assert_allclose(moved, posenc.sinusoidal([t + k], width)[0], atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(t=ids, s=ids, width=widths)
def test_dot_product_is_the_kernel_of_the_offset(t, s, width):
    pt, ps = posenc.sinusoidal([t, s], width)
    assert math.isclose(float(pt @ ps), posenc.kernel(t - s, width), abs_tol=1e-8)


@settings(max_examples=60, deadline=None)
@given(t=ids, width=widths)
def test_every_vector_has_squared_norm_half_the_width(t, width):
    vector = posenc.sinusoidal([t], width)[0]
    assert math.isclose(float(vector @ vector), width / 2, rel_tol=1e-12)


@settings(max_examples=60, deadline=None)
@given(offset=st.floats(-1e4, 1e4, allow_nan=False), width=widths)
def test_squared_distance_is_width_minus_twice_the_kernel(offset, width):
    assert math.isclose(posenc.squared_distance(offset, width), width - 2 * posenc.kernel(offset, width), abs_tol=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    m=ids,
    n=ids,
    shift=st.integers(0, 10**5),
    width=widths,
    seed=st.integers(0, 2**32 - 1),
    layout=st.sampled_from(["interleaved", "halves"]),
)
def test_rope_scores_depend_only_on_the_offset(m, n, shift, width, seed, layout):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, 1, width))
    score = float(posenc.rope(q, [m], layout=layout)[0] @ posenc.rope(k, [n], layout=layout)[0])
    moved = float(posenc.rope(q, [m + shift], layout=layout)[0] @ posenc.rope(k, [n + shift], layout=layout)[0])
    assert math.isclose(score, moved, abs_tol=1e-8 * width)


@settings(max_examples=40, deadline=None)
@given(t=ids, width=widths, seed=st.integers(0, 2**32 - 1))
def test_rope_preserves_norms(t, width, seed):
    x = np.random.default_rng(seed).normal(size=(1, width))
    assert math.isclose(np.linalg.norm(posenc.rope(x, [t])), np.linalg.norm(x), rel_tol=1e-12)


@settings(max_examples=40, deadline=None)
@given(position=st.lists(ids, min_size=1, max_size=5), width=widths)
def test_halves_is_a_fixed_permutation_of_interleaved(position, width):
    permutation = np.concatenate([np.arange(0, width, 2), np.arange(1, width, 2)])
    np.testing.assert_array_equal(
        posenc.sinusoidal(position, width, layout="halves"), posenc.sinusoidal(position, width)[:, permutation]
    )


@settings(max_examples=30, deadline=None)
@given(width=widths, seed=st.integers(0, 2**32 - 1), position=ids)
def test_rope_halves_equals_interleaved_under_the_channel_permutation(width, seed, position):
    permutation = np.concatenate([np.arange(0, width, 2), np.arange(1, width, 2)])
    x = np.random.default_rng(seed).normal(size=(1, width))
    np.testing.assert_allclose(
        posenc.rope(x[:, permutation], [position], layout="halves"),
        posenc.rope(x, [position])[:, permutation],
        atol=1e-12,
    )


# ---------------------------------------------------------------------------------------
# Input rules: every error names the argument and the rule


@pytest.mark.parametrize(
    ("width", "error", "words"),
    [
        (7, ValueError, "width must be a positive even integer"),
        (0, ValueError, "width must be a positive even integer"),
        (-4, ValueError, "width must be a positive even integer"),
        (8.0, TypeError, "width must be an integer"),
        (True, TypeError, "width must be an integer"),
        ("8", TypeError, "width must be an integer"),
    ],
)
def test_bad_width(width, error, words):
    with pytest.raises(error, match=words):
        posenc.sinusoidal([0], width)
    with pytest.raises(error, match=words):
        posenc.frequencies(width)


@pytest.mark.parametrize(
    ("position_ids", "error", "words"),
    [
        ([-1], ValueError, "position_ids must be >= 0"),
        ([0.5], ValueError, "position_ids must be whole numbers"),
        ([float("nan")], ValueError, "position_ids must be finite"),
        ([float("inf")], ValueError, "position_ids must be finite"),
        ([[0, 1]], ValueError, "position_ids must be one-dimensional"),
        (3, ValueError, "position_ids must be one-dimensional"),
        ([2**53], ValueError, "position_ids must be below 2\\*\\*53"),
        ([True], TypeError, "position_ids must hold integers"),
        (["a"], TypeError, "position_ids must hold integers"),
    ],
)
def test_bad_position_ids(position_ids, error, words):
    with pytest.raises(error, match=words):
        posenc.sinusoidal(position_ids, 8)


def test_largest_exact_position_id_is_accepted():
    assert posenc.sinusoidal([2**53 - 1], 2).shape == (1, 2)


@pytest.mark.parametrize("base", [1.0, 0.5, -3.0, float("inf"), float("nan")])
def test_bad_base_values(base):
    with pytest.raises(ValueError, match="base must be finite and > 1"):
        posenc.sinusoidal([0], 8, base=base)


def test_bad_base_type():
    with pytest.raises(TypeError, match="base must be a real number"):
        posenc.frequencies(8, base="10000")


def test_unknown_layout():
    with pytest.raises(ValueError, match="layout must be one of 'interleaved', 'halves', got 'pairs'"):
        posenc.sinusoidal([0], 8, layout="pairs")
    with pytest.raises(ValueError, match="layout must be one of"):
        posenc.rope(np.ones((1, 8)), [0], layout="neox")


@pytest.mark.parametrize("dtype", [np.int32, bool, "U3"])
def test_non_floating_dtype(dtype):
    with pytest.raises(TypeError, match="dtype must be a floating dtype"):
        posenc.sinusoidal([0], 8, dtype=dtype)


def test_rope_rejects_odd_last_axis_and_mismatched_ids():
    with pytest.raises(
        ValueError, match=r"x's last axis must be a positive even integer \(channels come in pairs\), got 7"
    ):
        posenc.rope(np.ones((2, 7)), [0, 1])
    with pytest.raises(ValueError, match="position_ids must have one id per row of x: got 3 ids for 2 rows"):
        posenc.rope(np.ones((2, 8)), [0, 1, 2])
    with pytest.raises(ValueError, match="x must have shape"):
        posenc.rope(np.ones(8), [0])
    with pytest.raises(TypeError, match="x must be a real array"):
        posenc.rope(np.ones((1, 8), dtype=complex), [0])


def test_alibi_rules():
    with pytest.raises(ValueError, match="n_heads must be >= 1, got 0"):
        posenc.alibi_slopes(0)
    with pytest.raises(TypeError, match="n_heads must be an integer"):
        posenc.alibi_slopes(2.0)
    with pytest.raises(ValueError, match="length must be >= 0, got -1"):
        posenc.alibi_bias(4, -1)


@pytest.mark.parametrize("offset", [float("nan"), float("inf"), [1.0, float("-inf")]])
def test_offsets_must_be_finite(offset):
    with pytest.raises(ValueError, match="offset must be finite"):
        posenc.kernel(offset, 8)
    with pytest.raises(ValueError, match="offset must be finite"):
        posenc.shift_operator(offset, 8)


def test_offsets_must_be_numbers():
    with pytest.raises(TypeError, match="offset must be a real number"):
        posenc.squared_distance("3", 8)


# ---------------------------------------------------------------------------------------
# Long offsets, size limits and out-of-range arguments

exact_offsets = st.integers(0, 2**53 - 1) | st.integers(2**50, 2**53 - 1)  # large ones often
huge_offsets = st.integers(2**53, 2**80) | st.floats(2.0**53, 1e308) | st.integers(-(2**80), -(2**53))


@settings(max_examples=40, deadline=None)
@given(t=exact_offsets, width=widths)
def test_kernel_and_distance_equal_the_accurate_vectors_at_every_accepted_offset(t, width):
    start, moved = posenc.sinusoidal([0, t], width)
    tolerance = 1e-15 * width
    assert math.isclose(posenc.kernel(t, width), float(start @ moved), abs_tol=tolerance)
    assert math.isclose(posenc.kernel(-t, width), float(start @ moved), abs_tol=tolerance)
    difference = start - moved
    assert math.isclose(posenc.squared_distance(t, width), float(difference @ difference), abs_tol=4 * tolerance)


@settings(max_examples=30, deadline=None)
@given(t=exact_offsets, width=st.integers(1, 8).map(lambda half: 2 * half))
def test_shift_operator_moves_position_0_to_any_accepted_offset(t, width):
    start, moved = posenc.sinusoidal([0, t], width)
    np.testing.assert_allclose(posenc.shift_operator(t, width) @ start, moved, rtol=0, atol=1e-15)


@settings(max_examples=30, deadline=None)
@given(offset=huge_offsets)
def test_offsets_of_2_53_or_more_are_rejected_naming_offset(offset):
    for function in (posenc.kernel, posenc.squared_distance, posenc.shift_operator):
        with pytest.raises(ValueError, match=r"offset must be below 2\*\*53 in magnitude"):
            function(offset, 8)
        with pytest.raises(ValueError, match=r"offset must be below 2\*\*53 in magnitude"):
            function([0, offset], 8)


@settings(max_examples=20, deadline=None)
@given(n_heads=st.integers(_checks.MAX_ELEMENTS + 1, 2**70))
def test_alibi_slopes_beyond_the_element_limit_fail_at_once_naming_n_heads(n_heads):
    with pytest.raises(ValueError, match=r"n_heads: the array would have \d+ elements, more than posenc's limit"):
        posenc.alibi_slopes(n_heads)


def test_alibi_slopes_at_the_examples_of_the_issue():
    for n_heads in (2**31, 2**63):
        with pytest.raises(ValueError, match="n_heads: the array would have"):
            posenc.alibi_slopes(n_heads)


@settings(max_examples=20, deadline=None)
@given(n_heads=st.integers(1, 64), length=st.integers(0, 2**40))
def test_alibi_bias_is_built_exactly_when_within_the_element_limit(n_heads, length):
    if n_heads * length * length > _checks.MAX_ELEMENTS:
        with pytest.raises(ValueError, match="n_heads and length: the array would have"):
            posenc.alibi_bias(n_heads, length)
    elif length <= 64:  # large accepted biases are correct too but slow to build in a test
        assert posenc.alibi_bias(n_heads, length).shape == (n_heads, length, length)


@settings(max_examples=15, deadline=None)
@given(width=st.integers(2**9, 2**15).map(lambda half: 2 * half), extra=st.integers(1, 1000))  # ids stay small
def test_sinusoidal_tables_beyond_the_element_limit_fail_before_any_work(width, extra):
    count = _checks.MAX_ELEMENTS // width + extra  # count * width > MAX_ELEMENTS
    with pytest.raises(ValueError, match="position_ids and width: the array would have"):
        posenc.sinusoidal(np.zeros(count, dtype=np.int64), width)


@pytest.mark.parametrize("width", [_checks.MAX_WIDTH + 2, 10**9, 2**63])
def test_widths_beyond_the_channel_limit_fail_at_once_naming_width(width):
    for call in (posenc.sinusoidal, posenc.kernel, posenc.shift_operator):
        with pytest.raises(ValueError, match=r"width must be <= 65536"):
            call([1], width)
    with pytest.raises(ValueError, match=r"width must be <= 65536"):
        posenc.frequencies(width)
    with pytest.raises(ValueError, match=r"x's last axis must be <= 65536"):
        posenc.rope(np.zeros((1, _checks.MAX_WIDTH + 2)), [0])
    assert posenc.frequencies(_checks.MAX_WIDTH).shape == (_checks.MAX_WIDTH // 2,)  # the limit itself is fine


@pytest.mark.parametrize("base", [10**400, -(10**400)])
def test_bases_beyond_float64_are_rejected_naming_base(base):
    with pytest.raises(ValueError, match="base must be finite and > 1, got an integer of 401 digits"):
        posenc.sinusoidal([1], 8, base=base)
    with pytest.raises(ValueError, match="base must be finite and > 1"):
        posenc.frequencies(8, base=base)


@pytest.mark.parametrize("position_ids", [[2**70], [-(2**70)], [1, 2**64 + 1]])
def test_ids_beyond_int64_are_said_to_be_too_large(position_ids):
    with pytest.raises(ValueError, match=r"position_ids must be below 2\*\*53 in magnitude"):
        posenc.sinusoidal(position_ids, 8)


def test_empty_ids_must_still_have_an_integer_or_float_dtype():
    with pytest.raises(TypeError, match="position_ids must hold integers, got dtype bool"):
        posenc.sinusoidal(np.array([], dtype=bool), 8)
    with pytest.raises(TypeError, match="position_ids must hold integers, got dtype <U1"):
        posenc.rope(np.zeros((0, 8)), np.array([], dtype="U1"))
