"""posenc.mrope: the axis of each pair, the rotation, and the three-axis position ids."""

from __future__ import annotations

import numpy as np
import pytest

import posenc

# ---------------------------------------------------------------------------------------
# mrope_axes


def test_chunked_axes_give_each_axis_a_contiguous_run():
    assert posenc.mrope_axes(10, [1, 3, 1]).tolist() == [0, 1, 1, 1, 2]
    axes = posenc.mrope_axes(128, [16, 24, 24])
    assert axes[:16].tolist() == [0] * 16 and axes[16:40].tolist() == [1] * 24 and axes[40:].tolist() == [2] * 24


def test_interleaved_axes_cycle_from_the_fastest_pair_and_leave_the_rest_temporal():
    axes = posenc.mrope_axes(128, [24, 20, 20], axis_layout="interleaved")
    assert axes[:60].tolist() == [0, 1, 2] * 20
    assert axes[60:].tolist() == [0, 0, 0, 0]
    # Unequal height and width sections: width's run stops first, the temporal axis takes the rest.
    assert posenc.mrope_axes(18, [3, 3, 3], axis_layout="interleaved").tolist() == [0, 1, 2] * 3
    assert posenc.mrope_axes(22, [5, 4, 2], axis_layout="interleaved").tolist() == [0, 1, 2, 0, 1, 2, 0, 1, 0, 0, 1]


@pytest.mark.parametrize("axis_layout", ["chunked", "interleaved"])
@pytest.mark.parametrize("head_dim, sections", [(128, [24, 20, 20]), (16, [4, 2, 2]), (12, [2, 2, 2]), (8, [4, 0, 0])])
def test_each_axis_gets_exactly_its_section(axis_layout, head_dim, sections):
    axes = posenc.mrope_axes(head_dim, sections, axis_layout=axis_layout)
    assert axes.dtype == np.int64 and axes.shape == (head_dim // 2,)
    assert np.bincount(axes, minlength=3).tolist() == sections


@pytest.mark.parametrize(
    "head_dim, sections, axis_layout, message",
    [
        (16, [2, 3, 2], "chunked", r"sections must sum to head_dim / 2 = 8 .*summing to 7"),
        (16, [2, 3], "chunked", r"sections must be three pair counts .*shape \(2,\)"),
        (16, [[2, 3, 3]], "chunked", r"sections must be three pair counts"),
        (16, [9, -1, 0], "chunked", r"sections must be >= 0"),
        (16, [2.0, 3.0, 3.0], "chunked", r"sections must hold integer pair counts"),
        (128, [16, 24, 24], "interleaved", r"sections must fit the interleaved layout.*3 \* sections\[1\] <= 65"),
        (16, [2, 3, 3], "interleaved", r"3 \* sections\[2\] <= 8"),
        (15, [2, 3, 3], "chunked", r"head_dim must be a positive even integer"),
        (16, [2, 3, 3], "halves", r"axis_layout must be one of 'chunked', 'interleaved'"),
    ],
)
def test_bad_axes_arguments_are_refused_by_name(head_dim, sections, axis_layout, message):
    with pytest.raises((ValueError, TypeError), match=message):
        posenc.mrope_axes(head_dim, sections, axis_layout=axis_layout)


# ---------------------------------------------------------------------------------------
# apply_mrope and mrope_phases

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("axis_layout, sections", [("chunked", [2, 3, 3]), ("interleaved", [3, 3, 2])])
def test_equal_ids_are_ordinary_rope_in_the_halves_pairing(axis_layout, sections):
    x = RNG.standard_normal((2, 5, 16))
    ids = np.array([0, 1, 7, 300, 2**40])
    three = np.stack([ids, ids, ids])
    np.testing.assert_allclose(
        posenc.apply_mrope(x, three, sections=sections, axis_layout=axis_layout, base=500.0),
        posenc.apply_rope(x, ids, base=500.0, layout="halves"),
        rtol=0,
        atol=1e-15,
    )
    inv_freq = [1.0, 0.5, 0.25, 0.1, 0.05, 0.01, 0.005, 0.001]
    np.testing.assert_allclose(
        posenc.apply_mrope(x, three, sections=sections, axis_layout=axis_layout, inv_freq=inv_freq),
        posenc.apply_rope(x, ids, inv_freq=inv_freq, layout="halves"),
        rtol=0,
        atol=1e-15,
    )


def test_a_pair_turns_with_its_own_axis_only():
    """Changing the width ids moves the width pairs and no other; each pair keeps its length."""
    sections = [2, 3, 3]
    axes = posenc.mrope_axes(16, sections)
    x = RNG.standard_normal((4, 16))
    ids = np.array([[0, 1, 2, 3], [5, 6, 7, 8], [9, 10, 11, 12]])
    moved = ids.copy()
    moved[2] += 17
    before = posenc.apply_mrope(x, ids, sections=sections)
    after = posenc.apply_mrope(x, moved, sections=sections)
    changed = np.abs(after - before).max(axis=0)
    width = np.concatenate([axes == 2, axes == 2])
    assert np.all(changed[~width] == 0) and np.all(changed[width] > 1e-6)
    lengths = np.hypot(x[:, :8], x[:, 8:])
    np.testing.assert_allclose(np.hypot(after[:, :8], after[:, 8:]), lengths, rtol=1e-14)


@pytest.mark.parametrize("axis_layout, sections", [("chunked", [2, 3, 3]), ("interleaved", [4, 2, 2])])
def test_scores_depend_on_the_offset_along_each_axis_only(axis_layout, sections):
    q, k = RNG.standard_normal((2, 3, 16))
    query_ids = np.array([[3, 0, 9], [4, 2, 1], [5, 8, 0]])
    key_ids = np.array([[1, 1, 1], [2, 7, 0], [0, 3, 3]])
    shift = np.array([[40], [7], [1000]])

    def scores(qi, ki):
        rotated_q = posenc.apply_mrope(q, qi, sections=sections, axis_layout=axis_layout)
        rotated_k = posenc.apply_mrope(k, ki, sections=sections, axis_layout=axis_layout)
        return np.sum(rotated_q * rotated_k, axis=-1)

    np.testing.assert_allclose(scores(query_ids + shift, key_ids + shift), scores(query_ids, key_ids), atol=1e-12)


def test_phases_worked_by_hand():
    # head 8, base 16: omega_r = 16 ** (-r / 4) = 1, 1/2, 1/4, 1/8; chunked [1, 2, 1]: axes t, h, h, w.
    phases = posenc.mrope_phases([[8, 0], [64, 4], [128, 1]], 8, [1, 2, 1], base=16.0)
    assert phases.tolist() == [[8.0, 32.0, 16.0, 16.0], [0.0, 2.0, 1.0, 0.125]]
    assert phases.dtype == np.float64


def test_the_rotation_turns_each_pair_by_its_phase():
    ids = np.array([[0, 3, 11], [2, 5, 1], [4, 4, 30]])
    phases = posenc.mrope_phases(ids, 12, [2, 2, 2], axis_layout="interleaved", base=50.0)
    first = np.zeros((3, 12))
    first[:, :6] = 1.0  # the first channel of every pair: the rotation gives (cos, sin) of its phase
    rotated = posenc.apply_mrope(first, ids, sections=[2, 2, 2], axis_layout="interleaved", base=50.0)
    np.testing.assert_allclose(rotated[:, :6], np.cos(phases), atol=1e-15)
    np.testing.assert_allclose(rotated[:, 6:], np.sin(phases), atol=1e-15)


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: posenc.apply_mrope(np.ones((3, 8)), [0, 1, 2], sections=[2, 1, 1]),
            r"position_ids must have shape \(3, n\)",
        ),
        (lambda: posenc.apply_mrope(np.ones((3, 8)), np.zeros((3, 2), int), sections=[2, 1, 1]), "one id per row of x"),
        (
            lambda: posenc.apply_mrope(np.ones((2, 7)), np.zeros((3, 2), int), sections=[2, 1, 1]),
            "x's last axis must be even",
        ),
        (
            lambda: posenc.apply_mrope(np.ones((2, 8)), np.zeros((3, 2), int), sections=[2, 1, 2]),
            "sections must sum to",
        ),
        (
            lambda: posenc.apply_mrope(np.ones((1, 4)), [[-1], [0], [0]], sections=[1, 1, 0]),
            "position_ids must be >= 0",
        ),
        (lambda: posenc.apply_mrope(np.ones((1, 4)), [[0.5], [0], [0]], sections=[1, 1, 0]), "whole numbers"),
        (lambda: posenc.apply_mrope([[np.nan, 1, 1, 1]], [[0], [0], [0]], sections=[1, 1, 0]), "x must be finite"),
        (lambda: posenc.apply_mrope(np.ones((1, 4)), [[0], [0], [0]], sections=[1, 1, 0], inv_freq=[1.0]), "inv_freq"),
        (lambda: posenc.mrope_phases([[0], [0], [0]], 2**16, [2**15, 0, 0]), None),
    ],
)
def test_bad_rotation_arguments_are_refused_by_name(call, message):
    if message is None:  # the largest head is accepted
        assert call().shape == (1, 2**15)
        return
    with pytest.raises((ValueError, TypeError), match=message):
        call()


# ---------------------------------------------------------------------------------------
# mrope_position_ids


def test_text_alone_counts_up_on_all_three_axes():
    ids = posenc.mrope_position_ids([("text", 5)])
    assert ids.dtype == np.int64 and ids.tolist() == [list(range(5))] * 3
    assert posenc.mrope_position_ids([]).shape == (3, 0)


def test_an_image_is_worked_by_hand():
    # 2 text tokens, then an image of 1 x 4 x 6 patches: 2 x 3 tokens after 2 x 2 merging, at position 2;
    # text resumes at 2 + max(2, 3) = 5.
    ids = posenc.mrope_position_ids([("text", 2), ("image", (1, 4, 6)), ("text", 2)])
    assert ids.tolist() == [
        [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
        [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
        [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
    ]
    # The same image as a one-step video of Qwen2-VL.
    video = posenc.mrope_position_ids([("text", 2), ("video", (1, 4, 6)), ("text", 2)])
    np.testing.assert_array_equal(video, ids)


def test_a_long_video_resumes_by_each_rule():
    # 5 steps of 1 x 1 token each: temporal ids 1..5. Past the largest id, text resumes at 6; by the
    # larger side, at 1 + max(1, 1) = 2, below temporal ids the video used.
    segments = [("text", 1), ("video", (5, 2, 2)), ("text", 1)]
    ids = posenc.mrope_position_ids(segments, variant="qwen2-vl")
    assert ids.tolist() == [[0, 1, 2, 3, 4, 5, 6], [0, 1, 1, 1, 1, 1, 6], [0, 1, 1, 1, 1, 1, 6]]
    ids = posenc.mrope_position_ids(segments, variant="qwen2-vl", resume="after-larger-side")
    assert ids.tolist() == [[0, 1, 2, 3, 4, 5, 2], [0, 1, 1, 1, 1, 1, 2], [0, 1, 1, 1, 1, 1, 2]]


@pytest.mark.parametrize(
    "variant, steps, seconds, tokens_per_second, stride",
    [
        ("qwen2-vl", 3000, None, 2, 1),  # one temporal id per step
        ("qwen2.5-vl", 1800, 2.0, 2, 4),  # an hour at 2 s a step: 4 temporal ids a step
        ("qwen2.5-vl", 600, None, 25, 25),  # without a time a step spans 1 s
    ],
)
def test_long_videos_pin_both_rules(variant, steps, seconds, tokens_per_second, stride):
    """Text, a long video of 2 x 3 merged tokens a step, text, an image, text: every id worked out from
    the rules' statements, each rule on its own."""
    video = ("video", (steps, 4, 6)) if seconds is None else ("video", (steps, 4, 6), seconds)
    segments = [("text", 7), video, ("text", 3), ("image", (1, 6, 2)), ("text", 2)]
    kwargs = dict(variant=variant, tokens_per_second=tokens_per_second)
    start = 7  # the video's start
    last_temporal = start + stride * (steps - 1)
    # The video's tokens, by step, row and column.
    step, row, column = np.meshgrid(np.arange(steps), np.arange(2), np.arange(3), indexing="ij")
    video_ids = np.stack([start + stride * step, start + row, start + column]).reshape(3, -1)
    for resume, text_start in (("after-largest-id", last_temporal + 1), ("after-larger-side", start + 3)):
        ids = posenc.mrope_position_ids(segments, resume=resume, **kwargs)
        np.testing.assert_array_equal(ids[:, :7], np.tile(np.arange(7), (3, 1)))
        np.testing.assert_array_equal(ids[:, 7 : 7 + 6 * steps], video_ids)
        after = ids[:, 7 + 6 * steps :]
        np.testing.assert_array_equal(after[:, :3], np.tile(text_start + np.arange(3), (3, 1)))
        image_start = text_start + 3  # 3 x 1 merged tokens; both rules then move on by 3
        np.testing.assert_array_equal(after[:, 3:6], [[image_start] * 3, image_start + np.arange(3), [image_start] * 3])
        np.testing.assert_array_equal(after[:, 6:], np.tile(image_start + 3 + np.arange(2), (3, 1)))
    # After a long video the two rules are thousands of positions apart.
    gap = (
        posenc.mrope_position_ids(segments, **kwargs)[0, -1]
        - posenc.mrope_position_ids(segments, resume="after-larger-side", **kwargs)[0, -1]
    )
    assert gap == last_temporal + 1 - (start + 3) >= 2900


@pytest.mark.parametrize("variant", ["qwen2-vl", "qwen2.5-vl", "qwen3-vl"])
def test_past_the_largest_id_every_segment_starts_one_past_all_before_it(variant):
    rng = np.random.default_rng(11)
    for _ in range(20):
        segments: list = []
        for _ in range(6):
            kind = ["text", "image", "video"][rng.integers(3)]
            if kind == "text":
                segments.append(("text", int(rng.integers(1, 4))))
            else:
                grid = (int(rng.integers(1, 9)), 2 * int(rng.integers(1, 4)), 2 * int(rng.integers(1, 4)))
                segments.append((kind, (1, *grid[1:]) if kind == "image" else grid))
        ids = posenc.mrope_position_ids(segments, variant=variant, tokens_per_second=3)
        token = 0
        for kind, sizes in segments:
            count = sizes if kind == "text" else sizes[0] * (sizes[1] // 2) * (sizes[2] // 2)
            expected = ids[:, :token].max() + 1 if token else 0
            assert ids[:, token : token + count].min() == expected
            token += count


def test_the_rules_agree_on_images_and_on_qwen3_vl_frames():
    images = [("text", 2), ("image", (1, 4, 8)), ("text", 1), ("image", (1, 6, 2)), ("image", (1, 2, 2))]
    frames = [("text", 1), ("video", (5, 2, 4)), ("text", 2), ("video", (1, 4, 4)), ("text", 1)]
    for segments, variant in ((images, "qwen2-vl"), (images, "qwen2.5-vl"), (frames, "qwen3-vl")):
        np.testing.assert_array_equal(
            posenc.mrope_position_ids(segments, variant=variant),
            posenc.mrope_position_ids(segments, variant=variant, resume="after-larger-side"),
        )


def test_qwen2_5_vl_places_video_steps_by_their_time():
    # 25 tokens a second, half a second a step: step k at trunc(12.5 k).
    segments = [("text", 1), ("video", (3, 2, 2), 0.5), ("text", 1)]
    ids = posenc.mrope_position_ids(segments, variant="qwen2.5-vl", tokens_per_second=25)
    assert ids[0].tolist() == [0, 1, 13, 26, 27]
    ids = posenc.mrope_position_ids(segments, variant="qwen2.5-vl", tokens_per_second=25, resume="after-larger-side")
    assert ids[0].tolist() == [0, 1, 13, 26, 2]
    # Without a time, a step spans one second: step k at k * tokens_per_second.
    ids = posenc.mrope_position_ids([("video", (3, 2, 2))], variant="qwen2.5-vl", tokens_per_second=4)
    assert ids[0].tolist() == [0, 4, 8]
    # Images are not stretched.
    ids = posenc.mrope_position_ids([("image", (2, 2, 2))], variant="qwen2.5-vl", tokens_per_second=4)
    assert ids[0].tolist() == [0, 1]


def test_qwen2_5_vl_rounds_the_time_in_float32():
    # 2/31 s a step at 25 tokens a second: step 31 is exactly 50 tokens in, but float32 rounds
    # 25 * f32(2/31) and 31 times that just below 50, which truncates to 49.
    ids = posenc.mrope_position_ids([("video", (32, 2, 2), 2 / 31)], variant="qwen2.5-vl", tokens_per_second=25)
    assert ids[0, 31] == 49 and ids[0, 30] == int(30 * 50 / 31)


def test_qwen3_vl_places_each_frame_on_its_own():
    # Three frames of 1 x 2 tokens at positions 1, 3, 5 (each moves on by max(1, 2) = 2).
    ids = posenc.mrope_position_ids([("text", 1), ("video", (3, 2, 4)), ("text", 1)], variant="qwen3-vl")
    assert ids.tolist() == [[0, 1, 1, 3, 3, 5, 5, 7], [0, 1, 1, 3, 3, 5, 5, 7], [0, 1, 2, 3, 4, 5, 6, 7]]
    frames = posenc.mrope_position_ids(
        [("text", 1), ("video", (1, 2, 4)), ("video", (1, 2, 4)), ("video", (1, 2, 4)), ("text", 1)],
        variant="qwen3-vl",
    )
    np.testing.assert_array_equal(ids, frames)


def test_the_merge_size_divides_height_and_width():
    ids = posenc.mrope_position_ids([("image", (1, 3, 6))], spatial_merge_size=3)
    assert ids.tolist() == [[0, 0], [0, 0], [0, 1]]
    ids = posenc.mrope_position_ids([("image", (1, 1, 2)), ("text", 1)], spatial_merge_size=1)
    assert ids.tolist() == [[0, 0, 2], [0, 0, 2], [0, 1, 2]]


@pytest.mark.parametrize(
    "segments, kwargs, message",
    [
        ("text", {}, "segments must be a list of segments"),
        ([("audio", 3)], {}, r"segments\[0\]'s kind must be one of 'text', 'image', 'video'"),
        ([("text", 2), "image"], {}, r"segments\[1\] must be a tuple"),
        ([("text",)], {}, r"segments\[0\] must be \('text', n\), got 1 items"),
        ([("text", -1)], {}, r"segments\[0\]'s length must be >= 0"),
        ([("text", 2.0)], {}, r"segments\[0\]'s length must be an integer"),
        ([("image", (1, 4))], {}, r"segments\[0\]'s grid must be three integers"),
        ([("image", (0, 4, 4))], {}, r"segments\[0\]'s grid must be >= 1"),
        ([("image", (1, 3, 4))], {}, r"multiples of spatial_merge_size \(2\)"),
        ([("video", (2, 4, 4), 0.5)], {}, r"only qwen2.5-vl places video frames by their time"),
        ([("video", (2, 4, 4), 0.5)], {"variant": "qwen3-vl"}, r"only qwen2.5-vl"),
        ([("video", (2, 4, 4), 0.0)], {"variant": "qwen2.5-vl"}, r"second_per_grid must be > 0"),
        ([("video", (2, 4, 4), 1e39)], {"variant": "qwen2.5-vl"}, r"second_per_grid must be finite in float32"),
        ([("image", (1, 2**20, 2**20))], {}, r"segments \(three ids per token\): the array would have"),
        ([("text", 1)], {"variant": "qwen2-VL"}, r"variant must be one of"),
        ([("text", 1)], {"spatial_merge_size": 0}, r"spatial_merge_size must be >= 1"),
        ([("text", 1)], {"tokens_per_second": 2.5}, r"tokens_per_second must be an integer"),
        ([("text", 1)], {"resume": "max"}, r"resume must be one of 'after-largest-id', 'after-larger-side'"),
        ([("text", 1)], {"resume": None}, r"resume must be one of"),
        (
            [("video", (3, 2, 2))] * 3,
            {"variant": "qwen2.5-vl", "tokens_per_second": 2**51},
            r"segments and tokens_per_second must keep every position id below 2\*\*53",
        ),
        (
            [("video", (3, 2, 2))],
            {"variant": "qwen2.5-vl", "tokens_per_second": 2**52},
            r"video grid steps times tokens_per_second .*must stay below 2\*\*53",
        ),
        (
            [("video", (3, 2, 2), 2.0**60)],
            {"variant": "qwen2.5-vl"},
            r"times second_per_grid, when given\) must stay below 2\*\*53",
        ),
        (
            [("text", 1), ("video", (2, 2, 2))],
            {"variant": "qwen2.5-vl", "tokens_per_second": 2**53 - 1},
            r"segments and tokens_per_second must keep every position id below 2\*\*53",
        ),
    ],
)
def test_bad_segments_are_refused_by_name(segments, kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        posenc.mrope_position_ids(segments, **kwargs)
