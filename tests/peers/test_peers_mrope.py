"""M-RoPE: the rotary embedding classes of Qwen2-VL, Qwen2.5-VL and Qwen3-VL (which axis each
pair follows, and the rotation with their ``apply_rotary_pos_emb``) against ``posenc.mrope_axes``
and ``posenc.apply_mrope``, and each model's ``get_rope_index`` against
``posenc.mrope_position_ids`` on text alone, text around an image, text around a video, and two
images, built from tiny configs with no weights. transformers 5.24.0 resumes after a vision
segment at its start plus its larger merged side (``resume="after-larger-side"``); the rule of
Qwen's own code and of transformers 4.57.1 (``resume="after-largest-id"``, posenc's default) is
held to a loop written here from that code's logic."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import Qwen2_5_VLConfig, Qwen2VLConfig, Qwen3VLConfig
from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLModel
from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import apply_rotary_pos_emb as qwen2_5_apply
from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLModel
from transformers.models.qwen2_vl.modeling_qwen2_vl import apply_rotary_pos_emb as qwen2_apply
from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLModel
from transformers.models.qwen3_vl.modeling_qwen3_vl import apply_rotary_pos_emb as qwen3_apply

import posenc

TOKENS_PER_SECOND = 25


def _text_config(head_dim: int, sections: list[int]) -> dict:
    return dict(
        hidden_size=2 * head_dim,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=head_dim,
        intermediate_size=8,
        num_hidden_layers=1,
        vocab_size=16,
        bos_token_id=None,
        eos_token_id=None,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": sections},
    )


#: Sections of a head of 16 for each model: the interleaved run must fit in Qwen3-VL's 8 pairs.
SECTIONS = {"qwen2-vl": [2, 3, 3], "qwen2.5-vl": [2, 3, 3], "qwen3-vl": [3, 3, 2]}


def build(model: str, head_dim: int = 16, sections: list[int] | None = None, merge: int = 2):
    """A tiny model of each kind (one layer, random weights never used), with ``merge`` as its spatial merge size."""
    text = _text_config(head_dim, sections or SECTIONS[model])
    if model == "qwen2-vl":
        vision = dict(depth=1, embed_dim=16, hidden_size=2 * head_dim, num_heads=2, mlp_ratio=1)
        return Qwen2VLModel(Qwen2VLConfig(text_config=text, vision_config={**vision, "spatial_merge_size": merge}))
    vision = dict(depth=1, hidden_size=16, out_hidden_size=2 * head_dim, num_heads=2, intermediate_size=8)
    if model == "qwen2.5-vl":
        vision.update(tokens_per_second=TOKENS_PER_SECOND, fullatt_block_indexes=[0])
        config = Qwen2_5_VLConfig(text_config=text, vision_config={**vision, "spatial_merge_size": merge})
        return Qwen2_5_VLModel(config)
    vision.update(deepstack_visual_indexes=[])
    return Qwen3VLModel(Qwen3VLConfig(text_config=text, vision_config={**vision, "spatial_merge_size": merge}))


APPLY = {"qwen2-vl": qwen2_apply, "qwen2.5-vl": qwen2_5_apply, "qwen3-vl": qwen3_apply}
AXIS_LAYOUT = {"qwen2-vl": "chunked", "qwen2.5-vl": "chunked", "qwen3-vl": "interleaved"}
MODELS = list(APPLY)

# ---------------------------------------------------------------------------------------
# Which axis each pair follows


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(
    "head_dim, sections",
    [(128, [16, 24, 24]), (128, [24, 20, 20]), (16, [2, 3, 3]), (16, [4, 2, 2]), (32, [6, 5, 5]), (12, [2, 2, 2])],
)
def test_each_pair_follows_the_axis_the_rotary_class_gives_it(model, head_dim, sections):
    """The class's ``recomposition_frequencies`` on a table whose axis-a row holds a everywhere returns,
    in each pair's place, the axis it took that pair from: exactly ``posenc.mrope_axes``."""
    rotary = build(model, head_dim, sections).language_model.rotary_emb
    pairs = head_dim // 2
    table = torch.arange(3, dtype=torch.float32).view(3, 1, 1, 1).expand(3, 1, 1, pairs).clone()
    taken = rotary.recomposition_frequencies(table)[0, 0]
    assert taken.shape == (head_dim,)
    if model == "qwen3-vl" and (3 * sections[1] > pairs + 1 or 3 * sections[2] > pairs):
        # posenc refuses sections whose height or width run overruns the pairs: there the class
        # gives that axis fewer pairs than its section says.
        with pytest.raises(ValueError, match="sections must fit the interleaved layout"):
            posenc.mrope_axes(head_dim, sections, axis_layout="interleaved")
        counts = np.bincount(taken[:pairs].numpy().astype(int), minlength=3)
        assert counts[1] < sections[1] or counts[2] < sections[2]
        return
    axes = posenc.mrope_axes(head_dim, sections, axis_layout=AXIS_LAYOUT[model])
    np.testing.assert_array_equal(taken[:pairs].numpy(), axes)
    np.testing.assert_array_equal(taken[pairs:].numpy(), axes)  # cos and sin repeat over both halves


# ---------------------------------------------------------------------------------------
# The rotation

IDS = np.array([[0, 1, 2, 2, 2, 2, 9, 40, 300], [0, 1, 2, 2, 3, 3, 5, 40, 301], [0, 1, 2, 3, 2, 3, 7, 41, 299]])


@pytest.mark.parametrize("model", MODELS)
def test_apply_rotary_pos_emb_in_float64_is_apply_mrope(model, rng):
    """The model's ``apply_rotary_pos_emb`` fed posenc's float64 cos and sin (each pair at its axis's id)
    against ``posenc.apply_mrope``, to 1e-13."""
    head_dim, sections = 16, SECTIONS[model]
    axis_layout = AXIS_LAYOUT[model]
    phases = posenc.mrope_phases(IDS, head_dim, sections, axis_layout=axis_layout)
    cos = torch.as_tensor(np.concatenate([np.cos(phases)] * 2, -1))[None]
    sin = torch.as_tensor(np.concatenate([np.sin(phases)] * 2, -1))[None]
    q, k = rng.normal(size=(2, 1, 2, IDS.shape[1], head_dim))
    q_embed, k_embed = APPLY[model](torch.as_tensor(q), torch.as_tensor(k), cos, sin)
    for theirs, ours in ((q_embed, q), (k_embed, k)):
        expected = posenc.apply_mrope(ours, IDS, sections=sections, axis_layout=axis_layout)
        np.testing.assert_allclose(theirs.numpy(), expected, rtol=0, atol=1e-13)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("head_dim, sections", [(16, None), (32, [6, 5, 5]), (128, [24, 20, 20])])
def test_rotary_class_with_apply_is_apply_mrope(model, head_dim, sections, rng, phase_tolerance):
    """The rotary class (float32 phases) with ``apply_rotary_pos_emb`` against ``posenc.apply_mrope`` with
    the class's own float32 inverse frequencies, within the float32 phase bound; with the height and width
    ids swapped it must not match."""
    sections = sections or SECTIONS[model]
    rotary = build(model, head_dim, sections).language_model.rotary_emb
    cos, sin = rotary(torch.zeros(1, dtype=torch.float64), torch.as_tensor(IDS)[:, None, :])
    q, k = rng.normal(size=(2, 1, 2, IDS.shape[1], head_dim))
    q_embed, k_embed = APPLY[model](torch.as_tensor(q), torch.as_tensor(k), cos, sin)
    inv_freq = rotary.inv_freq.double().numpy()
    axis_layout = AXIS_LAYOUT[model]
    # Each output is cos * a - sin * b with |a|, |b| <= max |x|: twice the phase bound times that.
    atol = 2 * np.abs(q).max() * phase_tolerance(IDS.max())
    expected = posenc.apply_mrope(q, IDS, sections=sections, axis_layout=axis_layout, inv_freq=inv_freq)
    np.testing.assert_allclose(q_embed.numpy(), expected, rtol=0, atol=atol)
    atol = 2 * np.abs(k).max() * phase_tolerance(IDS.max())
    expected = posenc.apply_mrope(k, IDS, sections=sections, axis_layout=axis_layout, inv_freq=inv_freq)
    np.testing.assert_allclose(k_embed.numpy(), expected, rtol=0, atol=atol)
    swapped = IDS[[0, 2, 1]]
    wrong = posenc.apply_mrope(q, swapped, sections=sections, axis_layout=axis_layout, inv_freq=inv_freq)
    assert np.abs(q_embed.numpy() - wrong).max() > 100 * atol


# ---------------------------------------------------------------------------------------
# Position ids of mixed sequences

KIND = {"text": 0, "image": 1, "video": 2}
#: The rule transformers 5.24.0's ``get_rope_index`` follows after an image or a video.
TRANSFORMERS_RULE = "after-larger-side"


def transformers_position_ids(model, segments, videos=None, seconds=None):
    """``get_rope_index`` on the token types of ``segments``; ``videos`` overrides the video grids
    (Qwen3-VL takes one grid per video and splits it into frames itself)."""
    merge = model.config.vision_config.spatial_merge_size
    types, images, grids = [], [], []
    for segment in segments:
        if segment[0] == "text":
            types += [0] * segment[1]
            continue
        t, h, w = segment[1]
        types += [KIND[segment[0]]] * (t * (h // merge) * (w // merge))
        (images if segment[0] == "image" else grids).append(list(segment[1]))
    kwargs = {}
    if images:
        kwargs["image_grid_thw"] = torch.tensor(images)
    if videos or grids:
        kwargs["video_grid_thw"] = torch.tensor(videos or grids)
    if seconds is not None:
        kwargs["second_per_grid_ts"] = torch.tensor(seconds)  # float32, as the processor makes it
    token_types = torch.tensor([types])
    position_ids, _ = model.get_rope_index(torch.zeros_like(token_types), token_types, **kwargs)
    return position_ids[:, 0].numpy()


SEQUENCES = {
    "text only": [("text", 7)],
    "text, image, text": [("text", 3), ("image", (1, 4, 6)), ("text", 4)],
    "image first": [("image", (1, 8, 4)), ("text", 2)],
    "two images": [("text", 2), ("image", (1, 4, 4)), ("text", 3), ("image", (1, 6, 2)), ("text", 1)],
    "a tall image": [("text", 1), ("image", (1, 10, 2)), ("text", 3)],
}
VIDEOS = {
    # A short video, and one whose temporal ids outrun its height and width (text resumes below them).
    "text, video, text": [("text", 2), ("video", (3, 4, 6)), ("text", 3)],
    "a long video": [("text", 1), ("video", (7, 2, 4)), ("text", 2), ("image", (1, 2, 2)), ("text", 1)],
}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("sequence", list(SEQUENCES))
def test_position_ids_of_text_and_images_are_get_rope_index(model, sequence):
    """Each model's ``get_rope_index`` against ``posenc.mrope_position_ids`` on text alone and text with images:
    text resumes at the image's start plus its larger merged side."""
    segments = SEQUENCES[sequence]
    expected = transformers_position_ids(build(model), segments)
    got = posenc.mrope_position_ids(segments, variant=model, tokens_per_second=25, resume=TRANSFORMERS_RULE)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("merge", [1, 2, 3])
def test_position_ids_follow_the_spatial_merge_size(merge):
    """Qwen2-VL's ``get_rope_index`` with merge sizes 1 to 3 against ``posenc.mrope_position_ids``."""
    segments = [("text", 2), ("image", (1, 2 * merge, 3 * merge)), ("text", 2), ("video", (2, merge, merge))]
    expected = transformers_position_ids(build("qwen2-vl", merge=merge), segments)
    got = posenc.mrope_position_ids(segments, spatial_merge_size=merge, resume=TRANSFORMERS_RULE)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("sequence", list(VIDEOS))
def test_qwen2_vl_video_position_ids_are_get_rope_index(sequence):
    """Qwen2-VL's ``get_rope_index`` on videos (one temporal id per grid step) against
    ``posenc.mrope_position_ids``."""
    segments = VIDEOS[sequence]
    expected = transformers_position_ids(build("qwen2-vl"), segments)
    got = posenc.mrope_position_ids(segments, variant="qwen2-vl", resume=TRANSFORMERS_RULE)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("sequence", list(VIDEOS))
@pytest.mark.parametrize("seconds", [None, 0.5, 2 / 31, 1.0, 3.7])
def test_qwen2_5_vl_video_position_ids_are_get_rope_index(sequence, seconds):
    """Qwen2.5-VL's ``get_rope_index`` on videos against ``posenc.mrope_position_ids``: temporal ids at
    ``trunc(step * tokens_per_second * second_per_grid)``, in integers without a time and in float32 (the
    processor's float32 tensor) with one."""
    segments = VIDEOS[sequence]
    ours = segments if seconds is None else [(*s, seconds) if s[0] == "video" else s for s in segments]
    expected = transformers_position_ids(build("qwen2.5-vl"), segments, seconds=None if seconds is None else [seconds])
    got = posenc.mrope_position_ids(
        ours, variant="qwen2.5-vl", tokens_per_second=TOKENS_PER_SECOND, resume=TRANSFORMERS_RULE
    )
    np.testing.assert_array_equal(got, expected)


def test_qwen2_5_vl_float32_time_differs_from_exact_arithmetic():
    """Qwen2.5-VL's ``get_rope_index`` where float32 matters: at 2/31 s a step and 25 tokens a second, step 31
    lands on 49 (50 in exact arithmetic), in transformers and in ``posenc.mrope_position_ids``."""
    segments = [("video", (32, 2, 2)), ("text", 1)]
    expected = transformers_position_ids(build("qwen2.5-vl"), segments, seconds=[2 / 31])
    got = posenc.mrope_position_ids(
        [("video", (32, 2, 2), 2 / 31), ("text", 1)],
        variant="qwen2.5-vl",
        tokens_per_second=TOKENS_PER_SECOND,
        resume=TRANSFORMERS_RULE,
    )
    np.testing.assert_array_equal(got, expected)
    assert got[0, 31] == 49  # 31 * 25 * 2 / 31 = 50 exactly


@pytest.mark.parametrize("frames, h, w", [(1, 4, 6), (3, 4, 4), (4, 2, 6)])
def test_qwen3_vl_video_frames_between_timestamps_are_get_rope_index(frames, h, w):
    """Qwen3-VL's ``get_rope_index`` on a video whose frames sit between timestamp text (as its processor
    writes them; transformers splits the video's grid into one-frame grids) against
    ``posenc.mrope_position_ids`` given the frames as one-step videos between text segments."""
    segments: list = [("text", 2)]
    for frame in range(frames):
        segments += [("text", 3 + frame % 2), ("video", (1, h, w))]
    segments += [("text", 2), ("image", (1, 2, 2)), ("text", 1)]
    expected = transformers_position_ids(build("qwen3-vl"), segments, videos=[[frames, h, w]])
    got = posenc.mrope_position_ids(segments, variant="qwen3-vl", resume=TRANSFORMERS_RULE)
    np.testing.assert_array_equal(got, expected)


def test_transformers_follows_the_larger_side_rule_and_not_the_reference_one():
    """On a video longer than its larger merged side, transformers 5.24.0's ``get_rope_index`` is
    ``resume="after-larger-side"`` and differs from posenc's default, the reference rule."""
    segments = VIDEOS["a long video"]
    expected = transformers_position_ids(build("qwen2-vl"), segments)
    np.testing.assert_array_equal(posenc.mrope_position_ids(segments, resume="after-larger-side"), expected)
    assert not np.array_equal(posenc.mrope_position_ids(segments), expected)


# ---------------------------------------------------------------------------------------
# The reference rule: one past the largest id so far


def reference_position_ids(segments, variant, merge=2, tokens_per_second=2):
    """The three ids as Qwen's own ``get_rope_index`` code numbers them, written from its logic: every
    block of tokens (a run of text, an image, a video, or for Qwen3-VL one frame of a video) starts one
    past the largest id of the block before it, text counts up on all three axes, and a vision block adds
    its step, row and column to its start. Qwen2.5-VL's video steps are placed at
    ``trunc((step * second_per_grid) * tokens_per_second)`` in float32, in that order, with one second a
    step when no time is given."""
    blocks = []
    for segment in segments:
        kind = segment[0]
        if kind == "text":
            if segment[1]:
                start = blocks[-1].max() + 1 if blocks else 0
                blocks.append(np.repeat(start + np.arange(segment[1])[None, :], 3, axis=0))
            continue
        t, h, w = segment[1]
        rows, columns = h // merge, w // merge
        # Qwen3-VL's processor splits a video into frames of one step each.
        for steps in [1] * t if (kind == "video" and variant == "qwen3-vl") else [t]:
            start = blocks[-1].max() + 1 if blocks else 0
            step = np.arange(steps)
            if kind == "video" and variant == "qwen2.5-vl":
                seconds = np.float32(segment[2] if len(segment) == 3 else 1.0)
                temporal = np.trunc((step.astype(np.float32) * seconds) * np.float32(tokens_per_second))
                temporal = temporal.astype(np.int64)
            else:
                temporal = step
            block = np.empty((3, steps, rows, columns), dtype=np.int64)
            block[0] = temporal[:, None, None]
            block[1] = np.arange(rows)[None, :, None]
            block[2] = np.arange(columns)[None, None, :]
            blocks.append(start + block.reshape(3, -1))
    return np.concatenate(blocks, axis=1) if blocks else np.zeros((3, 0), dtype=np.int64)


LONG = {
    "text around a long video": [("text", 3), ("video", (40, 4, 6)), ("text", 5)],
    "a long video, then an image": [("text", 1), ("video", (9, 2, 4)), ("text", 2), ("image", (1, 4, 2)), ("text", 1)],
    "two videos": [("video", (6, 2, 2)), ("text", 1), ("video", (3, 6, 4)), ("text", 2)],
    "images and a short video": [("text", 2), ("image", (1, 8, 4)), ("text", 1), ("video", (2, 4, 4)), ("text", 1)],
}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("sequence", [*SEQUENCES, *LONG])
def test_position_ids_past_the_largest_id_are_the_reference_loop(model, sequence):
    """``posenc.mrope_position_ids`` at its default rule against the loop above, for each model; around a
    long video of Qwen2-VL or Qwen2.5-VL the loop differs from transformers 5.24.0's ``get_rope_index``.
    (transformers takes Qwen3-VL's frames only with timestamp text between them, as tested above, and the
    two rules agree on them.)"""
    segments = {**SEQUENCES, **LONG}[sequence]
    expected = reference_position_ids(segments, model)
    np.testing.assert_array_equal(posenc.mrope_position_ids(segments, variant=model), expected)
    if sequence == "text around a long video" and model != "qwen3-vl":
        assert not np.array_equal(transformers_position_ids(build(model), segments), expected)


@pytest.mark.parametrize("sequence", list(LONG))
@pytest.mark.parametrize("seconds", [None, 0.5, 2 / 31, 1.0, 3.7, 9.375])
def test_qwen2_5_vl_video_ids_past_the_largest_id_are_the_reference_loop(sequence, seconds):
    """Qwen2.5-VL videos at its released ``tokens_per_second`` (``posenc.models``), with and without a
    time per step, against the reference loop."""
    tokens_per_second = posenc.models.model("qwen2.5-vl-7b")["tokens_per_second"]
    segments = LONG[sequence]
    if seconds is not None:
        segments = [(*s, seconds) if s[0] == "video" else s for s in segments]
    expected = reference_position_ids(segments, "qwen2.5-vl", tokens_per_second=tokens_per_second)
    got = posenc.mrope_position_ids(segments, variant="qwen2.5-vl", tokens_per_second=tokens_per_second)
    np.testing.assert_array_equal(got, expected)
