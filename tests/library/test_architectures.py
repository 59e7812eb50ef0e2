"""posenc.architectures: per-layer schedules, partial and proportional RoPE, MLA, the base bound, temperatures."""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc

rng = np.random.default_rng(7)


# ---------------------------------------------------------------------------------------
# Per-layer schedules


def test_every_period_th_layer_is_global_counting_from_one():
    layers = posenc.layer_schedule(12, 4, local_base=1e4, global_base=5e5)
    assert [i for i, layer in enumerate(layers) if layer.attention == "full_attention"] == [3, 7, 11]
    assert [layer.base for layer in layers[2:5]] == [1e4, 5e5, 1e4]
    assert all(layer.rotates and layer.scaled and not layer.temperature_tuned for layer in layers)


@pytest.mark.parametrize("count, period", [(22, 3), (7, 3), (12, 4), (5, 1), (3, 5)])
def test_global_position_first_makes_layer_zero_and_every_period_th_after_it_global(count, period):
    first = posenc.layer_schedule(count, period, local_base=1e4, global_base=1.6e5, global_position="first")
    last = posenc.layer_schedule(count, period, local_base=1e4, global_base=1.6e5, global_position="last")
    # ModernBertConfig: layer i is full attention when i % global_attn_every_n_layers == 0.
    assert [i for i, layer in enumerate(first) if layer.attention == "full_attention"] == list(range(0, count, period))
    assert [i for i, layer in enumerate(last) if layer.attention == "full_attention"] == list(
        range(period - 1, count, period)
    )
    assert [layer.base for layer in first] == [1.6e5 if i % period == 0 else 1e4 for i in range(count)]
    assert last == posenc.layer_schedule(count, period, local_base=1e4, global_base=1.6e5)


def test_modernbert_base_has_eight_global_layers_from_its_record():
    record = posenc.models.model("modernbert-base")
    layers = posenc.layer_schedule(
        record["num_hidden_layers"],
        record["global_period"],
        local_base=record["local_rope_theta"],
        global_base=record["rope_theta"],
        global_position=record["global_position"],
    )
    # 22 layers, global at 0, 3, ..., 21: the first and the last layer are both global.
    assert [i for i, layer in enumerate(layers) if layer.base == 160_000.0] == [0, 3, 6, 9, 12, 15, 18, 21]
    assert layers[0].attention == layers[-1].attention == "full_attention"


@pytest.mark.parametrize("position", ["middle", "First", None, 0])
def test_global_position_is_refused_by_name(position):
    with pytest.raises(ValueError, match="global_position"):
        posenc.layer_schedule(6, 3, local_base=1e4, global_base=1e5, global_position=position)


def test_period_one_makes_every_layer_global_and_a_base_of_none_makes_it_nope():
    layers = posenc.layer_schedule(3, 1, local_base=1e4, global_base=None)
    assert [(layer.rotates, layer.base, layer.attention) for layer in layers] == [(False, None, "full_attention")] * 3


def test_gemma3_has_a_global_layer_every_sixth_with_its_own_base_and_the_scaling():
    layers = posenc.gemma3_layers(26)
    globals_ = [i for i, layer in enumerate(layers) if layer.attention == "full_attention"]
    assert globals_ == [5, 11, 17, 23]
    for i, layer in enumerate(layers):
        assert layer.rotates
        assert layer.base == (1e6 if i in globals_ else 1e4)
        assert layer.scaled == (i in globals_)  # rope_scaling reaches the global layers only


def test_llama4_default_makes_every_fourth_layer_nope_with_full_attention_and_temperature():
    layers = posenc.llama4_layers(8)
    assert [layer.rotates for layer in layers] == [True, True, True, False] * 2
    for layer in layers:
        if layer.rotates:
            assert (layer.base, layer.attention, layer.temperature_tuned) == (500000.0, "chunked_attention", False)
        else:
            assert (layer.base, layer.attention, layer.temperature_tuned) == (None, "full_attention", True)


def test_llama4_flags_of_one_mean_the_layer_rotates_and_an_empty_list_means_the_default():
    assert [layer.rotates for layer in posenc.llama4_layers(3, no_rope_layers=[0, 1, 0])] == [False, True, False]
    assert posenc.llama4_layers(4, no_rope_layers=[]) == posenc.llama4_layers(4)


def test_llama4_without_chunks_attends_fully_and_without_tuning_has_no_temperature():
    layers = posenc.llama4_layers(4, attention_chunk_size=None, attn_temperature_tuning=False)
    assert {layer.attention for layer in layers} == {"full_attention"}
    assert not any(layer.temperature_tuned for layer in layers)


@pytest.mark.parametrize(
    "flags, message",
    [
        ([1, 2, 1], "only 0"),
        ([1, 1], "one entry for each of the num_hidden_layers = 3 layers"),
        ([1, 1, 1, 1], "one entry for each of the num_hidden_layers = 3 layers"),
        ([[1, 1, 1]], "one-dimensional"),
    ],
)
def test_bad_no_rope_layers_are_refused_by_name(flags, message):
    with pytest.raises(ValueError, match=message):
        posenc.llama4_layers(3, no_rope_layers=flags)


def test_smollm3_slides_only_its_nope_layers_and_takes_no_empty_flag_list():
    layers = posenc.smollm3_layers(4, use_sliding_window=True, sliding_window=128)
    assert [(layer.rotates, layer.attention) for layer in layers] == [
        (True, "full_attention"),
        (True, "full_attention"),
        (True, "full_attention"),
        (False, "sliding_attention"),
    ]
    assert layers[0].base == 2e6
    assert {layer.attention for layer in posenc.smollm3_layers(4, use_sliding_window=True)} == {"full_attention"}
    with pytest.raises(ValueError, match="no_rope_layers"):
        posenc.smollm3_layers(4, no_rope_layers=[])


@pytest.mark.parametrize("schedule", [posenc.cohere2_layers, posenc.exaone4_layers])
def test_cohere2_and_exaone4_rotate_the_sliding_layers_and_leave_the_global_ones_nope(schedule):
    layers = schedule(8)
    for i, layer in enumerate(layers):
        is_global = (i + 1) % 4 == 0
        assert layer.attention == ("full_attention" if is_global else "sliding_attention")
        assert layer.rotates == (not is_global)
        assert layer.base == (None if is_global else 10000.0)


def test_exaone4_without_a_window_rotates_every_layer_with_full_attention():
    layers = posenc.exaone4_layers(5, sliding_window=None)
    assert all(layer.rotates and layer.attention == "full_attention" for layer in layers)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: posenc.gemma3_layers(0), "num_hidden_layers"),
        (lambda: posenc.gemma3_layers(2**17), "num_hidden_layers"),
        (lambda: posenc.gemma3_layers(4, sliding_window_pattern=0), "sliding_window_pattern"),
        (lambda: posenc.gemma3_layers(4, rope_theta=1.0), "rope_theta"),
        (
            lambda: posenc.layer_schedule(4, 2, local_base=1e4, global_base=1e5, local_attention="local"),
            "local_attention",
        ),
        (lambda: posenc.llama4_layers(4, attn_temperature_tuning=1), "attn_temperature_tuning"),
    ],
)
def test_schedule_arguments_are_refused_by_name(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


# ---------------------------------------------------------------------------------------
# Partial and proportional RoPE


def test_partial_rotary_dim_truncates_the_float_product_as_python_does():
    assert posenc.partial_rotary_dim(100, 0.29) == 28  # 100 * 0.29 is 28.999999999999996 in float64
    assert posenc.partial_rotary_dim(64, 0.5) == 32
    with pytest.raises(ValueError, match="even and >= 2"):
        posenc.partial_rotary_dim(10, 0.3)  # 3 channels
    with pytest.raises(ValueError, match="<= 1"):
        posenc.partial_rotary_dim(10, 1.5)


def test_partial_frequencies_span_the_rotated_width_not_the_head():
    frequencies = posenc.partial_rope_frequencies(64, base=10000.0, partial_rotary_factor=0.25)
    assert frequencies.shape == (8,)
    np.testing.assert_allclose(frequencies, 10000.0 ** (-np.arange(8) / 8), rtol=1e-15)


@pytest.mark.parametrize("layout", ["interleaved", "halves"])
def test_partial_rope_rotates_the_first_channels_in_pairs_and_passes_the_rest(layout):
    x = rng.standard_normal((2, 5, 12))
    ids = [0, 1, 4, 9, 30]
    out = posenc.apply_partial_rope(x, ids, base=500.0, partial_rotary_factor=0.5, layout=layout)
    np.testing.assert_array_equal(out[..., 6:], x[..., 6:])
    pairs = [(0, 1), (2, 3), (4, 5)] if layout == "interleaved" else [(0, 3), (1, 4), (2, 5)]
    for r, (i, j) in enumerate(pairs):
        angle = np.array(ids, dtype=float) * 500.0 ** (-2 * r / 6)
        np.testing.assert_allclose(out[..., i], x[..., i] * np.cos(angle) - x[..., j] * np.sin(angle), atol=1e-13)
        np.testing.assert_allclose(out[..., j], x[..., i] * np.sin(angle) + x[..., j] * np.cos(angle), atol=1e-13)


def test_proportional_keeps_full_width_frequencies_on_a_fraction_and_zero_on_the_rest():
    frequencies = posenc.proportional_rope_frequencies(16, base=10000.0, partial_rotary_factor=0.25, factor=4.0)
    expected = np.zeros(8)
    expected[:2] = 10000.0 ** (-2 * np.arange(2) / 16) / 4.0
    np.testing.assert_allclose(frequencies, expected, rtol=1e-15)
    np.testing.assert_array_equal(posenc.proportional_rope_frequencies(16, partial_rotary_factor=0.0), np.zeros(8))
    np.testing.assert_array_equal(posenc.proportional_rope_frequencies(16), posenc.rope_frequencies(16))


@pytest.mark.parametrize("head_dim, fraction, base", [(16, 0.25, 10000.0), (32, 0.5, 1e6), (24, 0.5, 500.0)])
def test_proportional_rope_is_partial_rope_at_base_to_the_p_up_to_a_channel_permutation(head_dim, fraction, base):
    half = head_dim // 2
    pairs = int(fraction * head_dim // 2)
    x = rng.standard_normal((3, 7, head_dim))
    ids = [0, 1, 2, 5, 100, 1000, 40000]
    inv_freq = posenc.proportional_rope_frequencies(head_dim, base=base, partial_rotary_factor=fraction)
    proportional = posenc.apply_rope(x, ids, inv_freq=inv_freq, layout="halves")
    # Proportional RoPE rotates channels r and r + head_dim/2 for r < pairs; move them to the front.
    rotated = list(range(pairs)) + list(range(half, half + pairs))
    permutation = rotated + [c for c in range(head_dim) if c not in rotated]
    partial = posenc.apply_partial_rope(x[..., permutation], ids, base=base**fraction, partial_rotary_factor=fraction)
    np.testing.assert_allclose(proportional[..., permutation], partial, atol=1e-12)
    # What proportional RoPE leaves alone: every channel outside the rotated pairs.
    untouched = permutation[2 * pairs :]
    np.testing.assert_array_equal(proportional[..., untouched], x[..., untouched])


def test_proportional_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="head_dim"):
        posenc.proportional_rope_frequencies(7)
    with pytest.raises(ValueError, match="factor"):
        posenc.proportional_rope_frequencies(8, factor=0.0)
    with pytest.raises(ValueError, match="factor"):
        posenc.proportional_rope_frequencies(8, factor=1e-320)


# ---------------------------------------------------------------------------------------
# Multi-head latent attention


def _mla_inputs(heads=3, n=4, m=5, d_nope=6, d_rope=4):
    return (
        rng.standard_normal((heads, n, d_nope)),
        rng.standard_normal((heads, n, d_rope)),
        rng.standard_normal((heads, m, d_nope)),
        rng.standard_normal((m, d_rope)),
    )


def test_mla_score_is_the_dot_product_of_concatenated_heads_with_one_rotary_key_for_all():
    q_nope, q_rope, k_nope, k_rope = _mla_inputs()
    qids, kids = [5, 6, 7, 8], [0, 2, 4, 6, 8]
    scores = posenc.mla_scores(q_nope, q_rope, k_nope, k_rope, query_ids=qids, key_ids=kids, base=100.0)
    rq = posenc.apply_rope(q_rope, qids, base=100.0, layout="interleaved")
    rk = posenc.apply_rope(k_rope, kids, base=100.0, layout="interleaved")
    for h in range(3):
        queries = np.concatenate([q_nope[h], rq[h]], axis=-1)
        keys = np.concatenate([k_nope[h], rk], axis=-1)
        np.testing.assert_allclose(scores[h], queries @ keys.T / math.sqrt(10), atol=1e-13)


def test_mla_scores_depend_on_the_offset_alone():
    inputs = _mla_inputs()
    first = posenc.mla_scores(*inputs, query_ids=[3, 4, 5, 6], key_ids=[0, 1, 2, 3, 4])
    shifted = posenc.mla_scores(*inputs, query_ids=[1003, 1004, 1005, 1006], key_ids=[1000, 1001, 1002, 1003, 1004])
    np.testing.assert_allclose(first, shifted, atol=1e-11)


def test_the_attention_factor_multiplies_only_the_rotary_term_by_its_square():
    q_nope, q_rope, k_nope, k_rope = _mla_inputs()
    ids = {"query_ids": [0, 1, 2, 3], "key_ids": [0, 1, 2, 3, 4]}
    zeros_q, zeros_k = np.zeros_like(q_nope), np.zeros_like(k_nope)
    rope_only = posenc.mla_scores(zeros_q, q_rope, zeros_k, k_rope, **ids, scaling=1.0)
    nope_only = posenc.mla_scores(q_nope, np.zeros_like(q_rope), k_nope, np.zeros_like(k_rope), **ids, scaling=1.0)
    both = posenc.mla_scores(q_nope, q_rope, k_nope, k_rope, **ids, attention_factor=1.5, scaling=0.5)
    np.testing.assert_allclose(both, 0.5 * (nope_only + 2.25 * rope_only), atol=1e-12)


def test_mla_shapes_are_checked_by_name():
    q_nope, q_rope, k_nope, k_rope = _mla_inputs()
    ids = {"query_ids": [0, 1, 2, 3], "key_ids": [0, 1, 2, 3, 4]}
    with pytest.raises(ValueError, match="k_rope"):
        posenc.mla_scores(q_nope, q_rope, k_nope, k_rope[:4], **ids)
    with pytest.raises(ValueError, match="k_rope"):
        posenc.mla_scores(q_nope, q_rope, k_nope, k_rope[None], **ids)
    with pytest.raises(ValueError, match="key_ids"):
        posenc.mla_scores(q_nope, q_rope, k_nope, k_rope, query_ids=[0, 1, 2, 3], key_ids=[0, 1])
    with pytest.raises(ValueError, match="d_rope"):
        posenc.mla_scores(q_nope, q_rope[..., :3], k_nope, k_rope[..., :3], **ids)


def test_mla_softmax_scale_multiplies_by_the_square_of_the_yarn_mscale():
    assert posenc.mla_softmax_scale(192) == 192**-0.5
    mscale = 0.1 * 0.707 * math.log(40.0) + 1.0
    assert posenc.mla_softmax_scale(192, factor=40.0, mscale_all_dim=0.707) == pytest.approx(
        192**-0.5 * mscale**2, rel=1e-15
    )
    assert posenc.mla_softmax_scale(192, factor=40.0, mscale_all_dim=0.0) == 192**-0.5
    assert posenc.mla_softmax_scale(192, factor=0.5, mscale_all_dim=1.0) == 192**-0.5


def test_mla_caches_the_latent_and_one_rotary_key_per_token():
    assert posenc.mla_cache_values(512, 64) == 512 + 64
    with pytest.raises(ValueError, match="qk_rope_head_dim"):
        posenc.mla_cache_values(512, 63)


# ---------------------------------------------------------------------------------------
# The base a context length needs


def lowest_sums(bases, distances, head_dim):
    """For each base, the smallest sum of cosines over the distances, formed for every base at once
    (written here from the definition, not with posenc; distances of a few hundred keep every phase
    exact enough for its sign)."""
    omegas = np.asarray(bases)[:, None] ** (-2.0 * np.arange(head_dim // 2) / head_dim)
    return np.min(np.cos(distances[None, :, None] * omegas[:, None, :]).sum(axis=-1), axis=-1)


@pytest.mark.parametrize("length, head_dim", [(64, 8), (300, 16), (600, 12)])
def test_the_bound_keeps_b_non_negative_and_a_slightly_smaller_base_does_not(length, head_dim):
    rtol = 1e-6
    bound = posenc.rope_base_lower_bound(length, head_dim, rtol=rtol)
    distances = np.arange(length + 1)
    assert np.min(posenc.kernel(distances, head_dim, base=bound)) >= 0.0
    assert np.min(posenc.kernel(distances, head_dim, base=bound / (1 + 2 * rtol))) < 0.0
    # No base of the scan's grid below the bound is feasible.
    grid = 1.005 ** np.arange(1, int(math.log(bound) / math.log(1.005)) + 1)
    assert np.all(lowest_sums(grid[grid < bound], distances, head_dim) < 0.0)


def test_feasible_bases_are_not_one_interval_so_the_bound_is_not_a_bisection_from_far_ends():
    # At head_dim 128 and 4096 tokens, B stays >= 0 at 2.9e4 but dips below 0 at 3.5e4.
    distances = np.arange(4097)
    assert np.min(posenc.kernel(distances, 128, base=2.88e4)) >= 0.0
    assert np.min(posenc.kernel(distances, 128, base=3.5e4)) < 0.0


def test_bases_above_the_smallest_feasible_one_fail_again_at_two_figure_lengths():
    # The bases that pass are not an interval: each of these lies above the smallest passing base
    # for its length and still makes B negative within the context.
    for length, base in ((2048, 15_000.0), (16384, 300_000.0)):
        distances = np.arange(length + 1)
        assert base > posenc.rope_base_lower_bound(length, 128, rtol=1e-3)
        assert np.min(posenc.kernel(distances, 128, base=base)) < 0.0


@pytest.mark.parametrize("length, head_dim", [(64, 8), (200, 16), (500, 12)])
def test_the_all_pass_threshold_is_where_a_direct_scan_last_fails(length, head_dim):
    rtol = 1e-6
    threshold = posenc.rope_base_all_pass_bound(length, head_dim, rtol=rtol)
    distances = np.arange(length + 1)

    def passes(base):
        return bool(np.min(posenc.kernel(distances, head_dim, base=base)) >= 0.0)

    assert passes(threshold)
    assert not passes(threshold / (1 + 2 * rtol))
    assert threshold >= posenc.rope_base_lower_bound(length, head_dim, rtol=rtol) / (1 + rtol)
    # An independent scan on a finer grid, from the smallest passing base to far above the
    # threshold, with every base's sum of cosines formed at once (offsets up to 500 keep the
    # phases exact enough for the sign): the last base that fails lies just below the threshold.
    grid = np.exp(np.linspace(0.01, math.log(threshold) + 8.0, 6_000))
    failing = grid[lowest_sums(grid, distances, head_dim) < 0.0]
    assert failing.size and failing.max() < threshold


def test_the_all_pass_threshold_at_head_width_128_lies_above_bases_that_fail():
    threshold = posenc.rope_base_all_pass_bound(2048, 128, rtol=1e-4)
    distances = np.arange(2049)
    assert 15_000.0 < threshold  # the failing base above the smallest passing one lies below it
    rng = np.random.default_rng(3)
    for base in threshold * np.exp(rng.uniform(0.0, 12.0, size=40)):
        assert np.min(posenc.kernel(distances, 128, base=base)) >= 0.0


def test_the_bound_grows_with_the_context():
    bounds = [posenc.rope_base_lower_bound(length, 16, rtol=1e-4) for length in (50, 200, 800)]
    assert bounds[0] < bounds[1] < bounds[2]


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(context_length=1, head_dim=8), "context_length"),
        (dict(context_length=64, head_dim=2), "head_dim"),
        (dict(context_length=64, head_dim=8, rtol=0.0), "rtol"),
        (dict(context_length=64, head_dim=8, grid_ratio=1.0), "grid_ratio"),
        (dict(context_length=2**40, head_dim=8), "context_length"),
        # One past the work limit of a trial base: (32768 + 1) * 64 > 2**21.
        (dict(context_length=2**15, head_dim=128), "context_length and head_dim"),
    ],
)
@pytest.mark.parametrize("function", [posenc.rope_base_lower_bound, posenc.rope_base_all_pass_bound])
def test_bound_arguments_are_refused_by_name(kwargs, name, function):
    with pytest.raises(ValueError, match=name):
        function(**kwargs)


# ---------------------------------------------------------------------------------------
# Temperature laws


def test_llama4_temperature_steps_at_multiples_of_the_floor_scale_counting_from_one():
    scale = posenc.llama4_query_scale([0, 8190, 8191, 16382, 16383, 24575], floor_scale=8192, attn_scale=0.1)
    expected = [1.0, 1.0, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(3), 1 + 0.1 * math.log(4)]
    np.testing.assert_allclose(scale, expected, rtol=1e-15)


def test_llama4_beta_scale_steps_at_multiples_of_the_original_length_without_the_plus_one():
    scale = posenc.llama4_beta_query_scale([0, 99, 100, 299, 300], beta=0.5, original_max_position_embeddings=100)
    expected = [1.0, 1.0, 1 + 0.5 * math.log(2), 1 + 0.5 * math.log(3), 1 + 0.5 * math.log(4)]
    np.testing.assert_allclose(scale, expected, rtol=1e-15)


def test_temperature_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="floor_scale"):
        posenc.llama4_query_scale([1], floor_scale=0)
    with pytest.raises(ValueError, match="positions"):
        posenc.llama4_query_scale([-1])
    with pytest.raises(ValueError, match="original_max_position_embeddings"):
        posenc.llama4_beta_query_scale([1], original_max_position_embeddings=0)
