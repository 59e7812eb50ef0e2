"""Every public function of posenc against a hostile caller.

The promise: for any argument, a call either returns a finite, accurate result or raises
ValueError or TypeError whose message names the argument, within a second and without
allocating more than its result needs; never a silent wrong answer, never a bare
OverflowError or IndexError from inside NumPy.

``CALLS`` holds one valid call of every public function (and of the functions of the public
module ``posenc.models``). The tests replace one argument at a time with hostile values (wrong
types, ragged lists, object arrays, huge Python integers, extreme floats, NaN and infinity,
read-only and strided arrays) and check the outcome; values that mean the same numbers (a
read-only or strided copy, a nested list, an object array of small integers) must give the
baseline's result, and values of the wrong kind that NumPy would read as numbers (a duration or
a date, a bool among numbers in a list, a string) must be a TypeError. Then come known hostile
cases one by one, the stable forms against their exact values (FoX's extreme log gates,
fractional 2-D coordinates at the largest frequency the phase limit permits), the memory and
time of the functions whose intermediates used to outgrow their results, and a large request
of every call held to the memory rule (``RULE_BYTES``) by traced peak.
"""

from __future__ import annotations

import inspect
import math
import re
import tracemalloc
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import posenc

# Deterministic: the same examples on every run, nothing read from or written to a database,
# and few enough that the whole file runs in a few seconds.
settings.register_profile(
    "hostile",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=150,
    suppress_health_check=[HealthCheck.too_slow],
)
HOSTILE = settings.get_profile("hostile")

# "Fails at once" is held by memory, not by a clock: a refusal must come before anything large is
# allocated (traced peak bytes), which a busy machine cannot make flaky. Speed is measured by
# `make bench`, never asserted here.
#: What a call on these small arguments may allocate beyond a few times its result.
SPARE_BYTES = 32 * 2**20

_rng = np.random.default_rng(30)

# A RuntimeWarning from NumPy (overflow, invalid value) inside a call means an inf or NaN was
# made on the way, even if the result looks fine: an error here, so every such path is found.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _normal(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape)


IDS = [0, 3, 5]
KEYS = [1, 2]
#: Temporal, height and width ids of three tokens (M-RoPE).
THREE_AXIS_IDS = [[0, 3, 5], [0, 1, 2], [0, 2, 1]]
#: A sequence of text, an image and a timed video (a tuple: its items are segments, not numbers).
SEGMENTS = (("text", 2), ("image", (1, 4, 6)), ("text", 1), ("video", (3, 2, 4), 0.5), ("text", 2))

#: One valid call of every public function: (label, function, keyword arguments).
CALLS: list[tuple[str, Callable[..., Any], dict[str, Any]]] = [
    ("frequencies", posenc.frequencies, dict(width=8, base=10000.0)),
    ("wavelengths", posenc.wavelengths, dict(width=8, base=10000.0)),
    (
        "sinusoidal",
        posenc.sinusoidal,
        dict(position_ids=IDS, width=8, base=10000.0, layout="interleaved", dtype=np.float64),
    ),
    ("shift_operator", posenc.shift_operator, dict(offset=[1.5, -2.0], width=4, base=10000.0)),
    ("kernel", posenc.kernel, dict(offset=[1.5, -2.0], width=8, base=10000.0)),
    ("squared_distance", posenc.squared_distance, dict(offset=[1.5, -2.0], width=8, base=10000.0)),
    ("rope", posenc.rope, dict(x=_normal(2, 3, 8), position_ids=IDS, base=10000.0, layout="halves")),
    ("alibi_slopes", posenc.alibi_slopes, dict(n_heads=6, max_bias=8.0)),
    ("alibi_bias", posenc.alibi_bias, dict(n_heads=2, length=4, max_bias=8.0)),
    ("schedule_frequencies", posenc.schedule_frequencies, dict(width=8, base=10000.0, schedule="fairseq")),
    (
        "sinusoidal_embedding",
        posenc.sinusoidal_embedding,
        dict(
            position_ids=IDS,
            width=7,
            base=10000.0,
            schedule="fairseq",
            layout="halves",
            padding_idx=3,
            dtype=np.float64,
        ),
    ),
    (
        "fairseq_position_ids",
        posenc.fairseq_position_ids,
        dict(input_ids=[[5, 6, 1], [1, 7, 8]], padding_idx=1, cache_length=2),
    ),
    (
        "fairseq_embedding",
        posenc.fairseq_embedding,
        dict(input_ids=[[5, 6, 1], [1, 7, 8]], width=6, padding_idx=1, cache_length=2, base=10000.0, dtype=np.float64),
    ),
    ("rope_permutation", posenc.rope_permutation, dict(head_dim=8, n_heads=2, rotary_dim=4, inverse=False)),
    (
        "apply_rope",
        posenc.apply_rope,
        dict(
            x=_normal(3, 8),
            position_ids=IDS,
            base=10000.0,
            inv_freq=[1.0, 0.1],
            layout="interleaved",
            rotary_dim=4,
            attention_factor=1.2,
        ),
    ),
    ("rope_frequencies", posenc.rope_frequencies, dict(dim=8, base=10000.0)),
    ("linear_scaled_frequencies", posenc.linear_scaled_frequencies, dict(dim=8, base=10000.0, factor=4.0)),
    (
        "dynamic_ntk_frequencies",
        posenc.dynamic_ntk_frequencies,
        dict(dim=8, base=10000.0, factor=2.0, max_position_embeddings=64, seq_len=200),
    ),
    (
        "yarn_frequencies",
        posenc.yarn_frequencies,
        dict(
            dim=16,
            base=10000.0,
            factor=4.0,
            original_max_position_embeddings=64,
            beta_fast=4.0,
            beta_slow=1.0,
            truncate=True,
            mscale=1.0,
            mscale_all_dim=0.8,
        ),
    ),
    (
        "llama3_frequencies",
        posenc.llama3_frequencies,
        dict(
            dim=16,
            base=10000.0,
            factor=8.0,
            low_freq_factor=1.0,
            high_freq_factor=4.0,
            original_max_position_embeddings=64,
        ),
    ),
    (
        "rope_scaling_frequencies",
        posenc.rope_scaling_frequencies,
        dict(
            dim=8,
            rope_scaling={"rope_type": "dynamic", "factor": 2.0},
            base=10000.0,
            max_position_embeddings=64,
            seq_len=100,
        ),
    ),
    (
        "t5_relative_position_bucket",
        posenc.t5_relative_position_bucket,
        dict(relative_position=[[-200, -3, 0], [4, 50, 7]], bidirectional=True, num_buckets=32, max_distance=128),
    ),
    ("absolute_table_rows", posenc.absolute_table_rows, dict(table=_normal(6, 3), position_ids=IDS)),
    ("shaw_relative_index", posenc.shaw_relative_index, dict(query_ids=IDS, key_ids=KEYS, max_distance=2)),
    (
        "shaw_logits",
        posenc.shaw_logits,
        dict(queries=_normal(3, 4), keys=_normal(2, 4), relative_keys=_normal(5, 4), query_ids=IDS, key_ids=KEYS),
    ),
    (
        "shaw_values",
        posenc.shaw_values,
        dict(
            weights=_rng.random((3, 2)),
            values=_normal(2, 4),
            relative_values=_normal(5, 4),
            query_ids=IDS,
            key_ids=KEYS,
        ),
    ),
    (
        "transformer_xl_terms",
        posenc.transformer_xl_terms,
        dict(
            queries=_normal(3, 4),
            keys=_normal(2, 4),
            position_projection=_normal(6, 4),
            u=_normal(4),
            v=_normal(4),
            query_ids=IDS,
            key_ids=KEYS,
            base=10000.0,
        ),
    ),
    (
        "t5_bias",
        posenc.t5_bias,
        dict(table=_normal(32, 2), query_ids=IDS, key_ids=KEYS, bidirectional=False, max_distance=128),
    ),
    (
        "deberta_log_bucket",
        posenc.deberta_log_bucket,
        dict(relative_position=[-600, -5, 0, 5, 300], bucket_size=256, max_position=512),
    ),
    (
        "deberta_relative_positions",
        posenc.deberta_relative_positions,
        dict(query_ids=IDS, key_ids=KEYS, bucket_size=4, max_position=8),
    ),
    ("alibi_symmetric_bias", posenc.alibi_symmetric_bias, dict(n_heads=2, query_ids=IDS, key_ids=KEYS, max_bias=8.0)),
    (
        "kerple_bias power",
        posenc.kerple_bias,
        dict(query_ids=IDS, key_ids=KEYS, r1=[1.0, 2.0], r2=[1.5, 0.5], variant="power"),
    ),
    (
        "kerple_bias log",
        posenc.kerple_bias,
        dict(query_ids=IDS, key_ids=KEYS, r1=[1.0, 2.0], r2=[3.0, 0.1], variant="log"),
    ),
    (
        "fire_bias",
        posenc.fire_bias,
        dict(
            query_ids=IDS,
            key_ids=KEYS,
            hidden_weights=_normal(4),
            hidden_bias=_normal(4),
            output_weights=_normal(2, 4),
            output_bias=_normal(2),
            c=1.0,
            threshold=4.0,
        ),
    ),
    ("cope_positions", posenc.cope_positions, dict(logits=_normal(4, 4))),
    (
        "cope_logits",
        posenc.cope_logits,
        dict(queries=_normal(4, 3), positions=posenc.cope_positions(_normal(4, 4)), position_embeddings=_normal(5, 3)),
    ),
    ("pair_index_at_turns", posenc.pair_index_at_turns, dict(dim=128, length=4096, turns=32.0, base=10000.0)),
    ("critical_dimension", posenc.critical_dimension, dict(dim=128, training_length=4096, base=10000.0)),
    (
        "yarn_correction_range",
        posenc.yarn_correction_range,
        dict(dim=16, base=10000.0, original_max_position_embeddings=64, beta_fast=4.0, beta_slow=1.0, truncate=False),
    ),
    (
        "yarn_ramp",
        posenc.yarn_ramp,
        dict(dim=16, base=10000.0, original_max_position_embeddings=64, beta_fast=4.0, beta_slow=1.0, truncate=True),
    ),
    ("yarn_attention_factor", posenc.yarn_attention_factor, dict(factor=4.0, mscale=1.0, mscale_all_dim=0.5)),
    (
        "longrope_frequencies",
        posenc.longrope_frequencies,
        dict(
            dim=4,
            base=10000.0,
            short_factor=[1.0, 1.5],
            long_factor=[1.0, 4.0],
            original_max_position_embeddings=4096,
            max_position_embeddings=131072,
            seq_len=8192,
        ),
    ),
    (
        "longrope_frequencies factor",
        posenc.longrope_frequencies,
        dict(
            dim=4,
            base=10000.0,
            short_factor=[1.0, 1.5],
            long_factor=[1.0, 4.0],
            original_max_position_embeddings=4096,
            factor=32.0,
            attention_factor=1.1,
            seq_len=100,
        ),
    ),
    ("xpos_scales", posenc.xpos_scales, dict(position_ids=[-3, 0, 5], dim=8, scale_base=512.0, gamma=0.4)),
    (
        "apply_xpos",
        posenc.apply_xpos,
        dict(
            x=_normal(3, 8),
            position_ids=IDS,
            keys=True,
            base=10000.0,
            scale_base=512.0,
            gamma=0.4,
            layout="interleaved",
        ),
    ),
    (
        "rerotate_keys",
        posenc.rerotate_keys,
        dict(keys=_normal(2, 3, 8), offset=[1.0, -2.0, 3.5], base=10000.0, layout="halves", rotary_dim=6),
    ),
    ("streaming_cache", posenc.streaming_cache, dict(length=10, sinks=2, window=3)),
    ("mrope_axes", posenc.mrope_axes, dict(head_dim=16, sections=[3, 3, 2], axis_layout="interleaved")),
    (
        "mrope_phases",
        posenc.mrope_phases,
        dict(position_ids=THREE_AXIS_IDS, head_dim=8, sections=[2, 1, 1], base=10000.0, axis_layout="chunked"),
    ),
    (
        "apply_mrope",
        posenc.apply_mrope,
        dict(
            x=_normal(2, 3, 8),
            position_ids=THREE_AXIS_IDS,
            sections=[1, 2, 1],
            base=10000.0,
            axis_layout="chunked",
            inv_freq=[1.0, 0.5, 0.1, 0.01],
        ),
    ),
    (
        "mrope_position_ids",
        posenc.mrope_position_ids,
        dict(
            segments=SEGMENTS,
            variant="qwen2.5-vl",
            spatial_merge_size=2,
            tokens_per_second=25,
            resume="after-largest-id",
        ),
    ),
    ("attention_entropy", posenc.attention_entropy, dict(scores=[[0.0, 1.0, -math.inf], [2.0, 2.0, 2.0]])),
    (
        "sincos_2d_table",
        posenc.sincos_2d_table,
        dict(rows=3, cols=4, dim=8, layout="vit-pytorch", base=10000.0),
    ),
    (
        "axial_rope_2d",
        posenc.axial_rope_2d,
        dict(x=_normal(2, 6, 8), rows=2, cols=3, base=100.0, layout="halves", coordinates="centered"),
    ),
    (
        "axial_rope_2d frequencies",
        posenc.axial_rope_2d,
        dict(x=_normal(6, 8), rows=3, cols=2, frequencies=[3.0, 0.5], layout="interleaved", coordinates="pixel"),
    ),
    (
        "mixed_rope_2d",
        posenc.mixed_rope_2d,
        dict(x=_normal(6, 4), rows=2, cols=3, frequencies=_normal(2, 2), layout="interleaved", coordinates="index"),
    ),
    ("resample_weights", posenc.resample_weights, dict(old=5, new=3, antialias=True)),
    ("resample_weights scale_factor", posenc.resample_weights, dict(old=4, new=6, antialias=False, scale_factor=1.525)),
    (
        "resample_patch_table",
        posenc.resample_patch_table,
        dict(table=_normal(17, 3), new_grid=[3, 5], convention="timm", old_grid=[4, 4], prefix_tokens=1),
    ),
    (
        "resample_patch_table dinov2",
        posenc.resample_patch_table,
        dict(table=_normal(11, 2), new_grid=[2, 5], convention="dinov2", prefix_tokens=2),
    ),
    (
        "layer_schedule",
        posenc.layer_schedule,
        dict(
            num_hidden_layers=6,
            period=3,
            local_base=10000.0,
            global_base=1e6,
            local_attention="sliding_attention",
            global_attention="full_attention",
            global_position="first",
        ),
    ),
    (
        "gemma3_layers",
        posenc.gemma3_layers,
        dict(num_hidden_layers=7, sliding_window_pattern=6, rope_theta=1e6, rope_local_base_freq=10000.0),
    ),
    (
        "llama4_layers",
        posenc.llama4_layers,
        dict(
            num_hidden_layers=5,
            no_rope_layers=[1, 1, 0, 1, 0],
            no_rope_layer_interval=4,
            attention_chunk_size=8192,
            rope_theta=500000.0,
            attn_temperature_tuning=True,
        ),
    ),
    (
        "smollm3_layers",
        posenc.smollm3_layers,
        dict(
            num_hidden_layers=4,
            no_rope_layers=[1, 0, 1, 0],
            no_rope_layer_interval=4,
            rope_theta=2e6,
            use_sliding_window=True,
            sliding_window=64,
        ),
    ),
    ("cohere2_layers", posenc.cohere2_layers, dict(num_hidden_layers=8, sliding_window_pattern=4, rope_theta=5e4)),
    (
        "exaone4_layers",
        posenc.exaone4_layers,
        dict(num_hidden_layers=8, sliding_window_pattern=4, sliding_window=128, rope_theta=1e6),
    ),
    ("partial_rotary_dim", posenc.partial_rotary_dim, dict(head_dim=80, partial_rotary_factor=0.4)),
    (
        "partial_rope_frequencies",
        posenc.partial_rope_frequencies,
        dict(head_dim=16, base=10000.0, partial_rotary_factor=0.5),
    ),
    (
        "apply_partial_rope",
        posenc.apply_partial_rope,
        dict(x=_normal(2, 3, 8), position_ids=IDS, base=10000.0, partial_rotary_factor=0.5, layout="interleaved"),
    ),
    (
        "proportional_rope_frequencies",
        posenc.proportional_rope_frequencies,
        dict(head_dim=16, base=10000.0, partial_rotary_factor=0.25, factor=2.0),
    ),
    ("mla_softmax_scale", posenc.mla_softmax_scale, dict(qk_head_dim=24, factor=40.0, mscale_all_dim=1.0)),
    ("mla_cache_values", posenc.mla_cache_values, dict(kv_lora_rank=512, qk_rope_head_dim=64)),
    (
        "mla_scores",
        posenc.mla_scores,
        dict(
            q_nope=_normal(2, 3, 4),
            q_rope=_normal(2, 3, 4),
            k_nope=_normal(2, 2, 4),
            k_rope=_normal(2, 4),
            query_ids=IDS,
            key_ids=KEYS,
            base=10000.0,
            inv_freq=[1.0, 0.01],
            layout="interleaved",
            attention_factor=1.1,
            scaling=0.3,
        ),
    ),
    (
        "rope_base_lower_bound",
        posenc.rope_base_lower_bound,
        dict(context_length=64, head_dim=8, grid_ratio=1.01, rtol=1e-6),
    ),
    (
        "rope_base_all_pass_bound",
        posenc.rope_base_all_pass_bound,
        dict(context_length=64, head_dim=8, grid_ratio=1.01, rtol=1e-6),
    ),
    (
        "llama4_query_scale",
        posenc.llama4_query_scale,
        dict(positions=[0, 8191, 20000], floor_scale=8192, attn_scale=0.1),
    ),
    (
        "lie_rotation",
        posenc.lie_rotation,
        dict(generators=posenc.rope_generators(8, axes=2), positions=[[0, 1], [2, 3]]),
    ),
    ("rope_generators", posenc.rope_generators, dict(width=8, axes=2, base=10000.0, layout="halves")),
    ("string_generators", posenc.string_generators, dict(basis=np.linalg.qr(_normal(4, 4))[0], axes=1, base=100.0)),
    ("liere_generators", posenc.liere_generators, dict(width=4, axes=2, seed=3, scale=0.5)),
    ("comrope_ap_generators", posenc.comrope_ap_generators, dict(matrices=_normal(4, 2, 2), axes=2)),
    (
        "comrope_ld_generators",
        posenc.comrope_ld_generators,
        dict(matrices=_normal(3, 2, 2), multipliers=[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]),
    ),
    (
        "comrope_random_generators",
        posenc.comrope_random_generators,
        dict(width=8, axes=2, block_size=2, variant="ld", seed=3, scale=0.5),
    ),
    ("commutator_norm", posenc.commutator_norm, dict(generators=posenc.liere_generators(4, 2, seed=1))),
    (
        "relativity_error",
        posenc.relativity_error,
        dict(generators=posenc.liere_generators(4, 2, seed=2), positions=[[0.0, 1.0], [2.0, -1.0], [0.5, 0.5]]),
    ),
    (
        "llama4_beta_query_scale",
        posenc.llama4_beta_query_scale,
        dict(position_ids=[0, 16384, 40000], beta=0.1, original_max_position_embeddings=16384),
    ),
    ("forgetting_bias", posenc.forgetting_bias, dict(forget_gates=[[0.9, 0.5, 1.0], [0.2, 0.7, 0.99]], log=False)),
    (
        "forgetting_attention",
        posenc.forgetting_attention,
        dict(scores=_normal(2, 3, 3), forget_gates=[[-0.1, -0.7, 0.0], [-1.6, -0.4, -0.01]], log=True),
    ),
    ("stick_breaking_weights", posenc.stick_breaking_weights, dict(logits=_normal(2, 3, 3), attend_current=False)),
    ("stick_breaking_remainder", posenc.stick_breaking_remainder, dict(logits=_normal(3, 3), attend_current=True)),
    (
        "path_scores",
        posenc.path_scores,
        dict(
            queries=_normal(2, 3, 4),
            keys=_normal(2, 3, 4),
            directions=_normal(2, 3, 4),
            betas=[[0.5, 2.0, 0.0], [1.2, 1.9, 0.1]],
        ),
    ),
]

CALLS += [
    # posenc.models is a module of records, not a function: its functions read a key, or nothing.
    ("models.model", posenc.models.model, dict(key="qwen2-vl-7b")),
]

LABELS = [label for label, _, _ in CALLS]


#: Modules in ``posenc.__all__`` (released-model records): their public functions are called too.
MODULES = [name for name in posenc.__all__ if inspect.ismodule(getattr(posenc, name))]


def _public_name(function: Callable[..., Any]) -> str:
    """A function's name in posenc: ``name``, or ``module.name`` for a function of a public module."""
    module = function.__module__.rsplit(".", 1)[-1]
    return f"{module}.{function.__name__}" if module in MODULES else function.__name__


def test_every_public_function_has_a_call():
    classes = {"TransformerXLTerms", "LayerSpec"}
    public = {name for name in posenc.__all__ if callable(getattr(posenc, name)) and name not in classes}
    for module_name in MODULES:
        module = getattr(posenc, module_name)
        public |= {
            f"{module_name}.{name}"
            for name, member in vars(module).items()
            if inspect.isfunction(member)
            and member.__module__ == module.__name__
            and not name.startswith("_")
            and inspect.signature(member).parameters  # a function of no argument has nothing to be hostile in
        }
    assert MODULES == ["models"]  # a new public module's functions need calls here, with results _numbers reads
    assert public == {_public_name(function) for _, function, _ in CALLS}


# ---------------------------------------------------------------------------------------
# Hostile values


class _Opaque:
    """An object NumPy can only hold in an object array."""


INTEGERS = [
    2**63,
    2**63 - 1,
    2**64,
    2**1100,
    -(2**1100),
    2**53,
    2**53 - 1,
    2**31,
    -1,
    0,
    np.uint64(2**64 - 1),
    np.int64(-(2**63)),
    True,
    1.5,
    3.0,
    math.nan,
    "3",
    None,
    [4],
    _Opaque(),
]
REALS = [
    math.nan,
    math.inf,
    -math.inf,
    1e308,
    -1e308,
    5e-324,
    -5e-324,
    1e-300,
    0.0,
    -0.0,
    2**1100,
    -(2**1100),
    2**63,
    np.float32(3e38),
    np.longdouble(10) ** 400,
    True,
    "1.0",
    None,
    1 + 1j,
    [1.0],
    _Opaque(),
]
OTHERS = [None, 1, 0, 2**1100, math.nan, "", "nope", b"interleaved", [], {}, _Opaque(), np.float64, "float64 "]
MAPPINGS = [
    [],
    "dynamic",
    {3: 1},
    {("rope_type",): "linear"},
    {"rope_type": ["linear"]},
    {"rope_type": "yarn"},
    {"rope_type": "linear", "factor": 2**1100},
    {"rope_type": "linear", "factor": math.nan},
    {"rope_type": "linear", "factor": "4"},
    {"rope_type": "linear", "factor": 5e-324},
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2**63},
    {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 2**1100,
    },
    {
        "rope_type": "longrope",
        "short_factor": [[1.0], [1.0, 2.0]],
        "long_factor": [1.0] * 4,
        "original_max_position_embeddings": 64,
    },
    {
        "rope_type": "longrope",
        "short_factor": [5e-324] * 4,
        "long_factor": [1.0] * 4,
        "original_max_position_embeddings": 64,
        "factor": 2.0,
    },
    {"rope_type": "dynamic", "factor": 1e308},
    {"rope_type": "default", "rope_theta": 2**1100},
]


def _with_element(value: Any, item: Any) -> np.ndarray:
    """``value`` as an object array with its first element replaced by ``item``."""
    array = np.array(value, dtype=object)
    array.flat[0] = item
    return array


def _ragged(array: np.ndarray) -> list:
    """A nested list like ``array`` with its innermost last row one element short (a list among numbers in 1-D)."""
    rows = array.tolist()
    if array.ndim == 0:
        return [[1.0], [1.0, 2.0]]
    if array.ndim == 1:
        return rows + [[1, 2]]
    inner = rows
    for _ in range(array.ndim - 2):
        inner = inner[-1]
    inner[-1] = inner[-1][:-1]
    return rows


def equivalent_arrays(value: Any) -> list[tuple[str, Any]]:
    """The baseline's numbers in other forms a caller may pass; each must give the same result."""
    array = np.asarray(value)
    readonly = array.copy()
    readonly.flags.writeable = False
    strided = np.repeat(array[..., None], 2, axis=-1)[..., 0] if array.ndim else array
    forms = [
        ("nested list", array.tolist()),
        ("read-only", readonly),
        ("strided", strided),
        ("Fortran order", np.asfortranarray(array)),
        ("big-endian", array.astype(array.dtype.newbyteorder(">"))),
    ]
    if array.dtype.kind in "iu":
        forms.append(("object array of ints", array.astype(object)))
    return forms


def hostile_arrays(value: Any) -> list[tuple[str, Any]]:
    """Hostile arrays shaped after the baseline ``value``."""
    array = np.asarray(value)
    floats = array.astype(np.float64)
    variants: list[tuple[str, Any]] = []
    for item in (math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, 0.5, 2.0**53, -1.0):
        changed = floats.copy()
        changed.flat[0] = item
        variants.append((f"an element {item!r}", changed))
    for item in (2**53, 2**63, 2**64, 2**1100, -(2**1100), -1, None, "1", _Opaque(), True):
        variants.append((f"an object element {item!r}", _with_element(array, item)))
        variants.append((f"a list element {item!r}", _with_element(array, item).tolist()))
    variants += [
        ("ragged", _ragged(array)),
        ("an extra axis", array[None]),
        ("one axis fewer", array[0] if array.ndim else array),
        ("empty", array[:0] if array.ndim else array.reshape(0)),
        ("a scalar", 1.0),
        ("strings", array.astype(str)),
        ("bools", array.astype(bool)),
        ("complex", array.astype(np.complex128)),
        ("timedelta", np.where(np.isfinite(floats), floats, 0).astype(np.int64).astype("m8[s]")),
        ("scaled by 1e300", floats * 1e300),
        ("scaled by 1e-320", floats * 1e-320),
        ("None", None),
        ("a string", "0 1 2"),
        ("a set", {1, 2}),
    ]
    return variants


def hostile_segments(value: tuple) -> list[tuple[str, Any]]:
    """Hostile descriptions of a sequence for ``mrope_position_ids``, built on the baseline's segments."""
    variants: list[tuple[str, Any]] = [(repr(item), item) for item in OTHERS + [[[1, 2]], np.zeros((2, 2))]]
    bad_segments = [
        ("text",),
        ("text", 1, 2),
        ("text", -1),
        ("text", 2**63),
        ("text", 2**1100),
        ("text", True),
        ("text", 1.5),
        ("text", np.array([1, 2])),
        ("Text", 1),
        (None, 1),
        (1, 2),
        (),
        "text",
        b"text",
        {"text": 1},
        ("image", 4),
        ("image", (1, 4)),
        ("image", (1, 4, 6, 2)),
        ("image", [[1, 4, 6]]),
        ("image", (0, 4, 4)),
        ("image", (1, 3, 4)),
        ("image", (1, -4, 4)),
        ("image", (1.0, 4.0, 4.0)),
        ("image", (1, 2**62, 2**62)),
        ("image", (1, 2**1100, 2)),
        ("image", (1, 2, 2), 0.5),
        ("image", ("1", 2, 2)),
        ("video", (2**40, 2, 2)),
        ("video", (2**20, 2, 2), 1e30),
        ("video", (2, 2, 2), math.nan),
        ("video", (2, 2, 2), math.inf),
        ("video", (2, 2, 2), 1e39),
        ("video", (2, 2, 2), 5e-324),
        ("video", (2, 2, 2), -1.0),
        ("video", (2, 2, 2), 0.0),
        ("video", (2, 2, 2), "0.5"),
        ("video", (2, 2, 2), True),
        ("video", (2, 2, 2), 2**1100),
        ("video", (2, 2, 2), 0.5, 1),
    ]
    for segment in bad_segments:
        for index in (0, len(value) - 1):
            changed = list(value)
            changed[index] = segment
            variants.append((f"segment {index} {segment!r}", tuple(changed)))
    variants.append(("a list of segments", list(value)))
    variants.append(("many segments", value * 1000))
    return variants


def hostile_values(value: Any) -> list[tuple[str, Any]]:
    """Every hostile value for an argument whose valid baseline is ``value``."""
    if isinstance(value, tuple):
        return hostile_segments(value)
    if isinstance(value, (bool, np.bool_)):
        return [(repr(item), item) for item in OTHERS]
    if isinstance(value, int):
        return [(repr(item), item) for item in INTEGERS]
    if isinstance(value, float):
        return [(repr(item), item) for item in REALS]
    if isinstance(value, dict):
        return [(repr(item), item) for item in MAPPINGS + OTHERS]
    if isinstance(value, (str, type)):
        return [(repr(item), item) for item in OTHERS + [np.int64, np.complex128, np.bool_, "float128x"]]
    return hostile_arrays(value)


# ---------------------------------------------------------------------------------------
# Running one call and judging its outcome


def _names(argument: str, value: Any) -> list[str]:
    """The names an error about ``argument`` may give: its own, or a key of a mapping passed as it."""
    names = [argument]
    if isinstance(value, dict):
        names += [key for key in value if isinstance(key, str)] + ["rope_scaling"]
    return names


def _mentions(message: str, name: str) -> bool:
    return re.search(rf"(?<![A-Za-z_]){re.escape(name)}(?![A-Za-z_])", message) is not None


def _result_bytes(result: Any) -> int:
    result = _numbers(result)
    parts = result if isinstance(result, tuple) else (result,)
    return sum(np.asarray(part).nbytes for part in parts)


def measured(function: Callable[..., Any], kwargs: dict[str, Any]) -> tuple[Any, int]:
    """(result or the exception raised, peak bytes allocated) of one call."""
    tracemalloc.start()
    try:
        outcome = function(**kwargs)
    except Exception as error:  # judged by the caller: which exceptions are allowed is the test
        outcome = error
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return outcome, peak


def _numbers(result: Any) -> Any:
    """A schedule's LayerSpec records as arrays of numbers (a NoPE layer's base None as 0, its kind as an index);
    a released model's record as the count of its settings."""
    if isinstance(result, posenc.models.ModelRecord):
        return np.array([len(result.settings)], dtype=np.float64)
    if isinstance(result, tuple) and result and isinstance(result[0], posenc.LayerSpec):
        kinds = ("sliding_attention", "full_attention", "chunked_attention")
        return (
            np.array([[layer.rotates, layer.scaled, layer.temperature_tuned] for layer in result], dtype=np.float64),
            np.array([0.0 if layer.base is None else layer.base for layer in result]),
            np.array([kinds.index(layer.attention) for layer in result], dtype=np.float64),
        )
    return result


def _all_finite(label: str, result: Any) -> bool:
    """Whether every value is finite, except alibi_bias's -inf above the diagonal (its causal mask)."""
    if label in ("alibi_bias", "forgetting_bias", "path_scores"):
        above = np.triu(np.ones(result.shape[-2:], dtype=bool), 1)
        return bool(np.all(result[..., above] == -np.inf) and np.all(np.isfinite(result[..., ~above])))
    result = _numbers(result)
    parts = result if isinstance(result, tuple) else (result,)
    return all(np.all(np.isfinite(np.asarray(part, dtype=np.float64))) for part in parts)


def _invariants(label: str, kwargs: dict[str, Any], result: Any) -> None:
    """What an integer result must satisfy whatever its arguments: no wrapped, out-of-range values."""
    if label == "shaw_relative_index":
        k = int(kwargs["max_distance"])
        assert result.min(initial=0) >= 0 and result.max(initial=0) <= 2 * k
    elif label == "streaming_cache":
        kept, ids = result
        assert np.all(kept >= 0) and np.all(kept < kwargs["length"]) and np.all(np.diff(kept) > 0)
        assert ids.tolist() == list(range(kept.size))
    elif label == "t5_relative_position_bucket":
        assert np.all((result >= 0) & (result < kwargs["num_buckets"]))
    elif label == "fairseq_position_ids":
        assert np.all(result >= kwargs["padding_idx"]) and np.all(result < 2**53)
    elif label in ("deberta_log_bucket", "deberta_relative_positions"):
        assert np.all(np.abs(result) < 2**53)
    elif label == "rope_permutation":
        assert sorted(result.tolist()) == list(range(result.size))
    elif label == "mrope_axes":
        assert np.bincount(result, minlength=3).tolist() == np.asarray(kwargs["sections"]).tolist()
    elif label == "forgetting_attention":
        np.testing.assert_allclose(np.sum(result, axis=-1), 1.0, rtol=1e-12)
        assert np.all(result[..., np.triu(np.ones(result.shape[-2:], dtype=bool), 1)] == 0)
    elif label in ("stick_breaking_weights", "stick_breaking_remainder"):
        assert np.all(result >= 0) and np.all(result <= 1)
        if label == "stick_breaking_weights":
            assert np.all(np.sum(result, axis=-1) <= 1 + 1e-12)
    elif label == "mrope_position_ids":
        assert result.shape[0] == 3 and np.all(result >= 0) and np.all(result < 2**53)


def judge(label: str, function: Callable[..., Any], kwargs: dict[str, Any], argument: str) -> Any:
    """Call ``function(**kwargs)`` and assert the promise; return the result (None after an error)."""
    outcome, peak = measured(function, kwargs)
    where = f"{label} with a hostile {argument}"
    if isinstance(outcome, Exception):
        assert isinstance(outcome, (ValueError, TypeError)), f"{where} raised {outcome!r}"
        assert type(outcome).__module__ == "builtins", f"{where} raised {type(outcome)!r}"
        message = str(outcome)
        assert any(_mentions(message, name) for name in _names(argument, kwargs[argument])), (
            f"{where} raised {outcome!r}, which does not name {argument}"
        )
        assert peak < SPARE_BYTES, f"{where} allocated {peak} bytes before refusing"
        return None
    assert _all_finite(label, outcome), f"{where} returned a NaN or an infinity: {outcome!r}"
    assert peak < SPARE_BYTES + 4 * _result_bytes(outcome), f"{where} allocated {peak} bytes"
    _invariants(label, kwargs, outcome)
    return outcome


def _same(a: Any, b: Any) -> None:
    a, b = _numbers(a), _numbers(b)
    parts_a = a if isinstance(a, tuple) else (a,)
    parts_b = b if isinstance(b, tuple) else (b,)
    for x, y in zip(parts_a, parts_b, strict=True):
        np.testing.assert_allclose(
            np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64), rtol=1e-13, atol=1e-15
        )


# ---------------------------------------------------------------------------------------
# Every function, every argument, every hostile value


@pytest.mark.parametrize("label, function, kwargs", CALLS, ids=LABELS)
def test_every_argument_refuses_hostile_values_by_name_or_gives_a_finite_result(label, function, kwargs):
    baseline = judge(label, function, kwargs, next(iter(kwargs)))
    assert baseline is not None, f"{label}'s baseline call failed"
    for argument, value in kwargs.items():
        for _, hostile in hostile_values(value):
            judge(label, function, {**kwargs, argument: hostile}, argument)


@pytest.mark.parametrize("label, function, kwargs", CALLS, ids=LABELS)
def test_the_same_numbers_in_another_form_give_the_same_result(label, function, kwargs):
    baseline = function(**kwargs)
    for argument, value in kwargs.items():
        if not isinstance(value, (list, np.ndarray)):
            continue
        snapshot = np.array(value, copy=True)
        for form, equivalent in equivalent_arrays(value):
            result = judge(label, function, {**kwargs, argument: equivalent}, argument)
            assert result is not None, f"{label} refused {argument} as a {form}"
            _same(result, baseline)
        assert np.array_equal(np.asarray(value), snapshot, equal_nan=True), f"{label} changed its {argument}"


# ---------------------------------------------------------------------------------------
# Property tests: any magnitude in any numeric argument or array element

_magnitudes = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
    st.integers(-(2**1100), 2**1100),
    st.integers(-(2**70), 2**70),
    st.integers(-(2**64), 2**64).map(lambda n: n * (2**40 + 1)),
    st.sampled_from([0, 1, -1, 2**53 - 1, 2**53, 2**63 - 1, 2**63, 2**64, 0.5, 5e-324, 1e308]),
)


@HOSTILE
@given(data=st.data(), call=st.sampled_from(CALLS), magnitude=_magnitudes)
def test_any_number_in_any_numeric_argument_is_refused_by_name_or_gives_a_finite_result(data, call, magnitude):
    label, function, kwargs = call
    numeric = [name for name, value in kwargs.items() if type(value) in (int, float)]
    arrays = [name for name, value in kwargs.items() if isinstance(value, (list, np.ndarray))]
    if not numeric + arrays:  # a released model's key: a name, tried by the other tests
        return
    argument = data.draw(st.sampled_from(numeric + arrays))
    value = kwargs[argument]
    if argument in arrays:
        array = np.array(value, dtype=object)
        index = data.draw(st.integers(0, max(array.size - 1, 0)))
        if array.size:
            array.flat[index] = magnitude
        as_list = data.draw(st.booleans())
        value = array.tolist() if as_list else array
    else:
        value = magnitude
    judge(label, function, {**kwargs, argument: value}, argument)


@HOSTILE
@given(data=st.data(), call=st.sampled_from(CALLS))
def test_any_size_of_array_is_refused_by_name_or_gives_a_finite_result(data, call):
    label, function, kwargs = call
    arrays = [name for name, value in kwargs.items() if isinstance(value, (list, np.ndarray))]
    if not arrays:
        return
    argument = data.draw(st.sampled_from(arrays))
    ndim = data.draw(st.integers(0, 3))
    shape = tuple(data.draw(st.lists(st.integers(0, 6), min_size=ndim, max_size=ndim)))
    kind = data.draw(st.sampled_from(["integers", "floats", "huge floats"]))
    if kind == "integers":
        value = data.draw(st.integers(0, 10)) + np.arange(math.prod(shape)).reshape(shape)
    else:
        scale = 1e300 if kind == "huge floats" else 1.0
        value = _rng.standard_normal(shape) * scale
    judge(label, function, {**kwargs, argument: value}, argument)


# ---------------------------------------------------------------------------------------
# Known hostile cases, one by one

BEYOND = "must be <= 9007199254740991"

ISSUE_ERRORS = [
    # Integers bounded where they are read (each was a bare OverflowError).
    (lambda: posenc.shaw_relative_index([0], [1], 2**63), BEYOND, "max_distance"),
    (lambda: posenc.t5_relative_position_bucket([5], max_distance=2**1100), BEYOND, "max_distance"),
    (lambda: posenc.t5_relative_position_bucket([5], num_buckets=2**1100), BEYOND, "num_buckets"),
    (lambda: posenc.deberta_log_bucket([5], 2**1100, 2**1101), BEYOND, "bucket_size"),
    (lambda: posenc.deberta_log_bucket([5], 256, 2**1100), BEYOND, "max_position"),
    (lambda: posenc.streaming_cache(2**1100, sinks=1, window=2), BEYOND, "length"),
    (
        lambda: posenc.longrope_frequencies(
            4,
            short_factor=[1, 1],
            long_factor=[1, 1],
            original_max_position_embeddings=2,
            max_position_embeddings=2**1100,
        ),
        BEYOND,
        "max_position_embeddings",
    ),
    (
        lambda: posenc.longrope_frequencies(
            4, short_factor=[1, 1], long_factor=[1, 1], original_max_position_embeddings=4, factor=2.0, seq_len=2**63
        ),
        BEYOND,
        "seq_len",
    ),
    (lambda: posenc.pair_index_at_turns(8, 2**1100, 1.0), BEYOND, "length"),
    (lambda: posenc.critical_dimension(8, 2**63), BEYOND, "training_length"),
    (
        lambda: posenc.yarn_correction_range(8, original_max_position_embeddings=2**1100),
        BEYOND,
        "original_max_position_embeddings",
    ),
    (
        lambda: posenc.dynamic_ntk_frequencies(8, factor=2.0, max_position_embeddings=2**1100),
        BEYOND,
        "max_position_embeddings",
    ),
    (
        lambda: posenc.dynamic_ntk_frequencies(8, factor=2.0, max_position_embeddings=4, seq_len=2**1100),
        BEYOND,
        "seq_len",
    ),
    (
        lambda: posenc.llama3_frequencies(
            8, factor=2.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=2**1100
        ),
        BEYOND,
        "original_max_position_embeddings",
    ),
    # Silent wrong answers, now refused.
    (lambda: posenc.shaw_relative_index([0], [2**52], 2**63 - 1), BEYOND, "max_distance"),
    (lambda: posenc.streaming_cache(2**63, sinks=1, window=2), BEYOND, "length"),
    # Every message names the argument and the rule.
    (lambda: posenc.sinusoidal([[1], [1, 2]], 4), "must be a rectangular array", "position_ids"),
    (lambda: posenc.shaw_logits([[1.0], [1.0, 2.0]], np.ones((1, 1)), np.ones((1, 1))), "ragged", "queries"),
    (lambda: posenc.cope_logits([[1.0]], [[0.5]], np.zeros((0, 1))), "at least one row", "position_embeddings"),
    (
        lambda: posenc.rope_scaling_frequencies(8, {"rope_type": "linear", "factor": 2.0, 3: 1}),
        "must be strings",
        "rope_scaling",
    ),
    (
        lambda: posenc.rerotate_keys(np.ones((3, 2)), np.zeros((3, 1))),
        r"one-dimensional .*got shape \(3, 1\)",
        "offset",
    ),
    (lambda: posenc.t5_bias(np.zeros((32, 1)), [0], [2**25]), "less than 2\\*\\*24 apart", "key_ids"),
    (
        lambda: posenc.deberta_relative_positions([2**25], [0], bucket_size=256, max_position=512),
        "as DeBERTa needs",
        "query_ids",
    ),
    (lambda: posenc.deberta_log_bucket([2**24], 256, 512), "as DeBERTa needs", "relative_position"),
    (
        lambda: posenc.longrope_frequencies(
            4, short_factor=[5e-324, 1], long_factor=[1, 1], original_max_position_embeddings=4, factor=2.0
        ),
        "finite",
        "short_factor",
    ),
    (
        lambda: posenc.longrope_frequencies(
            4, short_factor=[1, 1], long_factor=[1, 5e-324], original_max_position_embeddings=4, factor=2.0, seq_len=8
        ),
        "finite",
        "long_factor",
    ),
    # No NaN for a finite true answer: zero-width rows have no logits (0 / 0).
    (
        lambda: posenc.shaw_logits(np.zeros((2, 0)), np.zeros((2, 0)), np.zeros((1, 0))),
        "at least one column",
        "queries",
    ),
    # An overflow of finite arguments is refused, not returned as inf.
    (lambda: posenc.rope(np.full((1, 2), 1.7e308), [1]), "overflowed", "x"),
    (
        lambda: posenc.shaw_logits(np.full((1, 2), 1e200), np.full((1, 2), 1e200), np.zeros((1, 2))),
        "overflowed",
        "queries",
    ),
    (lambda: posenc.kerple_bias([0], [10], 1e307, 2.0), "overflowed", "r1"),
    # A duration or a date is not a count, and a bool inside a list is not one either.
    (lambda: posenc.sincos_2d_table(np.timedelta64(4), 3, 8, layout="mae"), "must be an integer", "rows"),
    (lambda: posenc.liere_generators(4, 2, seed=np.timedelta64(3)), "must be an integer", "seed"),
    (lambda: posenc.rope_frequencies(8, base=np.datetime64(10**4, "D")), "must be a real number", "base"),
    (lambda: posenc.mrope_axes(12, [True, 3, 2]), "got a bool", "sections"),
    (lambda: posenc.mrope_position_ids([("text", 1), ("image", [True, 2, 2])]), "got a bool", "segments"),
    (lambda: posenc.mrope_position_ids([("text", np.timedelta64(2))]), "must be an integer", "segments"),
    (lambda: posenc.resample_patch_table(np.ones((5, 1)), [True, 2], convention="timm"), "got a bool", "new_grid"),
    (
        lambda: posenc.llama4_layers(3, no_rope_layers=[1, True, 0], no_rope_layer_interval=4),
        "got a bool",
        "no_rope_layers",
    ),
    (
        lambda: posenc.rope_scaling_frequencies(8, {"rope_type": "linear", "factor": np.timedelta64(2)}),
        "must be a real number",
        "factor",
    ),
    # What cannot finish at once is refused at once, naming the limit (2**20 tokens once ran for hours).
    (lambda: posenc.rope_base_lower_bound(2**20, 128), r"must be <= 2097152 \(2\*\*21", "context_length"),
    (lambda: posenc.commutator_norm(np.zeros((2**12, 4, 4))), "too many for one call", "generators"),
    (lambda: posenc.lie_rotation(np.zeros((1, 256, 256)), np.zeros((3, 1))), "too many for one call", "positions"),
    # A string is the wrong type of position ids, whatever its shape.
    (lambda: posenc.mrope_phases("0 1 2", 8, [2, 1, 1]), "must hold integers", "position_ids"),
    # NaN: one rule, refused everywhere (rope passed it through before).
    (lambda: posenc.rope(np.array([[np.nan, 1.0]]), [0]), "must be finite", "x"),
    (lambda: posenc.apply_xpos(np.array([[np.inf, 1.0]]), [0]), "must be finite", "x"),
    (lambda: posenc.rerotate_keys(np.array([[np.nan, 1.0]]), 1.0), "must be finite", "keys"),
    (lambda: posenc.shaw_logits(np.array([[np.nan]]), np.ones((1, 1)), np.ones((1, 1))), "must be finite", "queries"),
]


@pytest.mark.parametrize("call, rule, name", ISSUE_ERRORS, ids=[f"{n}-{i}" for i, (_, _, n) in enumerate(ISSUE_ERRORS)])
def test_each_case_of_the_issue_is_refused_naming_the_argument_and_the_rule(call, rule, name):
    with pytest.raises((ValueError, TypeError)) as caught:
        call()
    if rule in ("must be an integer", "must be a real number", "got a bool", "must hold integers"):
        assert isinstance(caught.value, TypeError), caught.value  # the wrong kind of value, not a bad number
    assert _mentions(str(caught.value), name), caught.value
    assert re.search(rule, str(caught.value)), caught.value


def test_an_object_array_of_small_integers_is_read_as_integers():
    ids = np.array([1, 4], dtype=object)
    np.testing.assert_array_equal(posenc.sinusoidal(ids, 4), posenc.sinusoidal([1, 4], 4))
    with pytest.raises(ValueError, match="position_ids must be below 2\\*\\*53 .*got an integer beyond int64"):
        posenc.sinusoidal(np.array([1, 2**64], dtype=object), 4)


def test_a_timedelta_array_is_not_taken_for_counts():
    with pytest.raises(TypeError, match="position_ids must hold integers"):
        posenc.sinusoidal(np.array([1, 2], dtype="m8[s]"), 4)


# ---------------------------------------------------------------------------------------
# Stable forms: finite and accurate where the naive form gave NaN or infinity


def test_kerple_log_with_a_huge_r2_is_its_logarithm():
    bias = posenc.kerple_bias([0], [0, 10], 2.0, 1e308, variant="log")
    assert bias[0, 0, 0] == 0.0
    assert bias[0, 0, 1] == pytest.approx(-2.0 * (math.log(1e308) + math.log(10.0)), rel=1e-15)


@pytest.mark.parametrize("c", [5e-324, 1e-310, 1e-200, 1e-12, 0.5, 1.0, 3.0, 1e200, 1e308])
def test_fire_normalised_distance_is_accurate_for_any_c(c):
    """With the identity MLP the bias is psi(|i - j|) / psi(max(L, i)), psi(x) = log(1 + c x)."""
    import mpmath

    identity = ([1.0], [0.0], [[1.0]], [0.0])  # f(x) = max(x, 0) = x for x >= 0
    query, keys, threshold = 40, [0, 1, 7, 40], 512.0
    bias = posenc.fire_bias([query], keys, *identity, c=c, threshold=threshold)[0, 0]
    with mpmath.workdps(60):
        psi = lambda x: mpmath.log1p(mpmath.mpf(c) * x)  # noqa: E731 - one line of the formula
        expected = [float(psi(query - k) / psi(max(threshold, query))) for k in keys]
    np.testing.assert_allclose(bias, expected, rtol=1e-14, atol=0)


def test_xpos_with_a_huge_gamma_has_scales_of_one():
    scales = posenc.xpos_scales([0, 512, -512], 8, gamma=1e308)
    np.testing.assert_array_equal(scales, np.ones((3, 4)))


@pytest.mark.parametrize("gap", [0.0, 1.0, 20.0, 40.0, 300.0, 745.0, 800.0])
def test_attention_entropy_of_a_nearly_one_hot_row_is_accurate(gap):
    import mpmath

    scores = np.array([0.0, -gap, -gap - 1.0])
    with mpmath.workdps(1000):  # 1 + e**-800 must not round to 1
        weights = [mpmath.exp(mpmath.mpf(-s)) for s in (0.0, gap, gap + 1.0)]
        total = sum(weights)
        exact = float(-sum(w / total * mpmath.log(w / total) for w in weights if w))
    assert posenc.attention_entropy(scores) == pytest.approx(exact, rel=1e-13, abs=1e-300)


def test_longrope_refuses_a_subnormal_factor_like_the_other_scalings():
    for function, kwargs in [
        (posenc.linear_scaled_frequencies, dict(factor=5e-324)),
        (
            posenc.longrope_frequencies,
            dict(
                short_factor=[1.0] * 4,
                long_factor=[5e-324] * 4,
                original_max_position_embeddings=8,
                factor=2.0,
                seq_len=9,
            ),
        ),
    ]:
        with pytest.raises(ValueError, match="factor must be large enough that every frequency divided by it"):
            function(8, **kwargs)


def test_dynamic_ntk_with_a_huge_factor_at_the_trained_length_keeps_the_base():
    np.testing.assert_array_equal(
        posenc.dynamic_ntk_frequencies(8, factor=1e308, max_position_embeddings=64, seq_len=64),
        posenc.rope_frequencies(8),
    )


def test_t5_bucket_of_a_max_distance_just_past_the_exact_range_is_the_last_bucket():
    # log(max_distance / max_exact) is tiny in float32; the bucket must be capped, not wrapped.
    buckets = posenc.t5_relative_position_bucket([-(2**20), 2**20], num_buckets=2**40, max_distance=2**38 + 1)
    assert buckets.tolist() == [2**20, 2**39 + 2**20]
    far = posenc.t5_relative_position_bucket([2**23], bidirectional=False, num_buckets=8, max_distance=5)
    assert far == 0


# ---------------------------------------------------------------------------------------
# Memory and time: intermediates bounded by the result, checks before the grid


def _peak(call: Callable[[], Any]) -> tuple[int, Any]:
    outcome, peak = measured(call, {})
    return peak, outcome


def test_shaw_with_a_long_table_and_few_keys_stays_near_the_result_size():
    # One product per table row would be 2**14 x (2**15 + 1) float64, 4 GiB, for a 1 MiB result.
    rng = np.random.default_rng(1)
    q, keys = rng.standard_normal((2**14, 1)), rng.standard_normal((8, 1))
    table = rng.standard_normal((2**15 + 1, 1))
    ids = np.arange(2**14) * 2
    peak, logits = _peak(lambda: posenc.shaw_logits(q, keys, table, query_ids=ids, key_ids=np.arange(8) * 4096))
    assert logits.shape == (2**14, 8) and peak < 64 * 2**20
    k = 2**14
    index = np.clip(np.arange(8)[None, :] * 4096 - ids[:, None], -k, k) + k
    np.testing.assert_allclose(logits, (q @ keys.T + (q * table[index][..., 0])) / 1.0, rtol=1e-12)
    weights = rng.random((2**14, 8))
    peak, out = _peak(lambda: posenc.shaw_values(weights, keys, table, query_ids=ids, key_ids=np.arange(8) * 4096))
    assert out.shape == (2**14, 1) and peak < 64 * 2**20
    expected = (weights * (keys[:, 0][None, :] + table[index][..., 0])).sum(1)
    np.testing.assert_allclose(out[:, 0], expected, rtol=1e-12, atol=1e-14)


def test_cope_with_a_long_table_stays_near_the_result_size():
    rng = np.random.default_rng(2)
    n, rows = 512, 2**16
    q, table = rng.standard_normal((n, 1)), rng.standard_normal((rows, 1))
    positions = rng.random((n, n)) * (rows - 1)
    peak, logits = _peak(lambda: posenc.cope_logits(q, positions, table))
    assert peak < 64 * 2**20
    floor = np.floor(positions).astype(int)
    weight = positions - floor
    expected = q * (weight * table[np.ceil(positions).astype(int), 0] + (1 - weight) * table[floor, 0])
    np.testing.assert_allclose(logits, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("irregular", [True, False], ids=["irregular ids", "ids in runs"])
def test_transformer_xl_position_terms_never_build_a_sinusoid_per_pair(irregular):
    """Irregular ids have a distance per (query, key) pair: 4096 sinusoids of width 2**14 would be
    2**25 sines (seconds, and 256 MiB three times over); they are formed from the ids' own sines."""
    rng = np.random.default_rng(3)
    n, width = 64, 2**14
    if irregular:
        query_ids, key_ids = (np.sort(rng.choice(10**12, n, replace=False)) for _ in range(2))
    else:
        query_ids, key_ids = np.arange(n) + 10**6, np.arange(n) + 10**6 - 20
    q, keys = rng.standard_normal((n, 2)), rng.standard_normal((n, 2))
    projection = rng.standard_normal((width, 2))
    u, v = rng.standard_normal(2), rng.standard_normal(2)
    posenc.frequencies(width)  # the frequency table of this width, computed once and cached, is not timed
    peak, terms = _peak(
        lambda: posenc.transformer_xl_terms(q, keys, projection, u, v, query_ids=query_ids, key_ids=key_ids)
    )
    assert peak < 96 * 2**20
    some = slice(0, 6)
    distance = (query_ids[some, None] - key_ids[None, some]).ravel()
    rows = posenc.sinusoidal(np.abs(distance), width, layout="halves")
    rows[:, : width // 2] *= np.where(distance < 0, -1.0, 1.0)[:, None]  # sin is odd, cos even
    r = (rows @ projection).reshape(6, 6, 2)
    np.testing.assert_allclose(
        terms.content_position[some, some], np.einsum("id,ijd->ij", q[some], r), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(terms.global_position[some, some], r @ v, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "call",
    [
        lambda: posenc.t5_bias(np.zeros((32, 8)), np.arange(2**12), np.arange(2**12) + 2**25),
        lambda: posenc.deberta_relative_positions(
            np.arange(2**12) + 2**25, np.arange(2**12), bucket_size=256, max_position=512
        ),
    ],
    ids=["t5_bias", "deberta_relative_positions"],
)
def test_far_apart_ids_are_refused_before_the_grid_is_built(call):
    peak, outcome = _peak(call)
    assert isinstance(outcome, ValueError) and "query_ids and key_ids must be less than 2**24 apart" in str(outcome)
    assert peak < 2**20


_many = np.arange(1024)


@pytest.mark.parametrize(
    "call",
    [
        lambda: posenc.t5_bias(np.ones((32, 1)), _many, _many),
        lambda: posenc.deberta_relative_positions(_many, _many, bucket_size=256, max_position=512),
        lambda: posenc.fire_bias(_many[:512], _many[:512], np.ones(64), np.zeros(64), np.ones((1, 64)), [0.0]),
        lambda: posenc.kernel(np.arange(2.0**15), 256),
        lambda: posenc.squared_distance(np.arange(2.0**15), 256),
    ],
    ids=["t5_bias", "deberta_relative_positions", "fire_bias", "kernel", "squared_distance"],
)
def test_grid_functions_hold_blocks_of_their_temporaries_not_whole_grids(call):
    """The whole grid's temporaries would be 8 (T5, DeBERTa: 64 MiB here), 64 (FIRE's hidden layer:
    128 MiB) or 256 (kernel's cosine table: 64 MiB) times the result; in blocks of 2 MiB
    (``_checks.BLOCK_ELEMENTS``) they stay a fixed size beside it."""
    peak, result = _peak(call)
    assert not isinstance(result, Exception), result
    assert peak < np.asarray(result).nbytes + 24 * 2**20


@settings(HOSTILE, max_examples=30)
@given(
    n_q=st.integers(1, 6),
    n_k=st.integers(1, 6),
    d=st.integers(1, 3),
    k=st.sampled_from([0, 3, 2**17 + 5]),  # 2k + 1 > BLOCK_ELEMENTS table rows: the blocked gather
    seed=st.integers(0, 2**32 - 1),
)
def test_shaw_gathers_the_same_rows_whatever_the_table_length(n_q, n_k, d, k, seed):
    """A long table (2k + 1 rows) sends Shaw through the blocked gather, a short one through one
    product per table row; both are the formula entry by entry."""
    rng = np.random.default_rng(seed)
    q, keys, values = rng.standard_normal((n_q, d)), rng.standard_normal((n_k, d)), rng.standard_normal((n_k, d))
    table_k, table_v = rng.standard_normal((2 * k + 1, d)), rng.standard_normal((2 * k + 1, d))
    query_ids, key_ids = rng.integers(0, 2 * k + 10, n_q), rng.integers(0, 2 * k + 10, n_k)
    weights = rng.random((n_q, n_k))
    logits = posenc.shaw_logits(q, keys, table_k, query_ids=query_ids, key_ids=key_ids)
    out = posenc.shaw_values(weights, values, table_v, query_ids=query_ids, key_ids=key_ids)
    row = np.clip(key_ids[None, :] - query_ids[:, None], -k, k) + k
    expected = np.einsum("id,ijd->ij", q, keys[None, :, :] + table_k[row]) / math.sqrt(d)
    np.testing.assert_allclose(logits, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        out, np.einsum("ij,ijd->id", weights, values[None] + table_v[row]), rtol=1e-12, atol=1e-12
    )


@settings(HOSTILE, max_examples=30)
@given(
    n=st.integers(1, 6), d=st.integers(1, 3), rows=st.sampled_from([1, 7, 2**18 + 3]), seed=st.integers(0, 2**32 - 1)
)
def test_cope_interpolates_the_same_rows_whatever_the_table_length(n, d, rows, seed):
    rng = np.random.default_rng(seed)
    q, table = rng.standard_normal((n, d)), rng.standard_normal((rows, d))
    positions = rng.random((n, n)) * (rows + 2)  # some past the last row, clamped to it
    logits = posenc.cope_logits(q, positions, table)
    p = np.minimum(positions, rows - 1)
    low, high = np.floor(p).astype(int), np.ceil(p).astype(int)
    weight = p - low
    expected = np.einsum("id,ijd->ij", q, weight[..., None] * table[high] + (1 - weight[..., None]) * table[low])
    np.testing.assert_allclose(logits, expected, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------
# Found by driving two or three hostile arguments at once


def test_an_empty_alibi_grid_builds_no_slopes_but_still_bounds_n_heads():
    peak, bias = _peak(lambda: posenc.alibi_bias(2**24, 0))
    assert bias.shape == (2**24, 0, 0) and peak < 2**20
    peak, bias = _peak(lambda: posenc.alibi_symmetric_bias(2**24, [], [1, 2]))
    assert bias.shape == (2**24, 0, 2) and peak < 2**20
    for call in (lambda: posenc.alibi_bias(2**1100, 0), lambda: posenc.alibi_symmetric_bias(2**1100, [], [])):
        with pytest.raises(ValueError, match="n_heads: the array would have an integer of 332 digits elements"):
            call()
    with pytest.raises(ValueError, match="max_bias must be > 0"):
        posenc.alibi_bias(2, 0, max_bias=-1.0)


def test_a_wavelength_beyond_float64_is_refused():
    with pytest.raises(ValueError, match="base and width must be small enough that the result is finite"):
        posenc.wavelengths(2048, base=1e308)  # 2 pi 1e308**(1 - 2/2048) > 1.8e308


# ---------------------------------------------------------------------------------------
# Values of the wrong kind that NumPy would read as numbers: refused by type, naming the argument

#: NumPy makes ``timedelta64`` a subclass of its integers (so it passes ``numbers.Integral``),
#: and a date converts to a count of days: neither is a count, a size or a real number.
TIME_SCALARS = [np.timedelta64(3), np.timedelta64(2, "s"), np.datetime64(3, "D")]


def wrong_kinds(value: Any) -> list[tuple[str, Any]]:
    """Values of the wrong type shaped after a numeric baseline: each must be a TypeError."""
    if type(value) in (int, float):
        return [(repr(item), item) for item in TIME_SCALARS]
    if not isinstance(value, (list, np.ndarray)) or not np.asarray(value).size:
        return []
    array = np.asarray(value)
    kinds = [
        ("a list with True among numbers", _with_element(array, True).tolist()),
        ("a list with numpy's False among numbers", _with_element(array, np.False_).tolist()),
        ("a list with a duration among numbers", _with_element(array, np.timedelta64(1)).tolist()),
        ("an object array with a date among numbers", _with_element(array, np.datetime64(1, "D"))),
        ("a string", " ".join(map(str, array.ravel().tolist()))),
        ("a list of strings", array.astype(str).tolist()),
    ]
    if array.ndim > 1:  # a bool in an inner row, where a check of the outer list alone would not look
        inner = array.astype(object)
        inner[(-1,) * array.ndim] = True
        kinds.append(("a nested list with True in its last row", inner.tolist()))
    return kinds


@pytest.mark.parametrize("label, function, kwargs", CALLS, ids=LABELS)
def test_durations_dates_strings_and_bools_among_numbers_are_refused_as_the_wrong_type(label, function, kwargs):
    for argument, value in kwargs.items():
        for kind, hostile in wrong_kinds(value):
            outcome, peak = measured(function, {**kwargs, argument: hostile})
            where = f"{label} with {kind} as {argument}"
            assert isinstance(outcome, TypeError), f"{where} gave {outcome!r}"
            assert _mentions(str(outcome), argument), f"{where} raised {outcome!r}, which does not name it"
            assert peak < SPARE_BYTES


# ---------------------------------------------------------------------------------------
# Extreme log gates: FoX's segment sums against exact sums, with nothing cancelled

EXTREME_LOG_GATES = [
    [-1e16, -1.0, -1.0, -0.5],
    [-1.0, -1e300, -1e-300, -5e-324, -2.5],
    [-5e-324, -5e-324, -1e-310, 0.0, -1e-320],
    [-1e308, -1e308, -1.0, -3.0],  # two of them beyond float64 together: refused by name
    [-(2.0**60), -1.0, -(2.0**-60), -(2.0**60), -3.0],
]


@pytest.mark.parametrize("gates", EXTREME_LOG_GATES)
def test_forgetting_bias_of_extreme_log_gates_is_each_segment_sum(gates):
    """Each bias is math.fsum of its own segment (exactly rounded), or the call refuses a sum past float64."""
    from fractions import Fraction

    n = len(gates)
    exact = [[sum(map(Fraction, gates[j + 1 : i + 1]), Fraction(0)) for j in range(n)] for i in range(n)]
    if any(abs(value) > Fraction(np.finfo(np.float64).max) for row in exact for value in row):
        with pytest.raises(ValueError, match="forget_gates must be small enough"):
            posenc.forgetting_bias(gates, log=True)
        return
    bias = posenc.forgetting_bias(gates, log=True)
    for i in range(n):
        for j in range(n):
            if j > i:
                assert bias[i, j] == -np.inf
            else:  # every term has one sign, so n roundings at most
                assert bias[i, j] == pytest.approx(float(exact[i][j]), rel=n * 2.0**-52, abs=1e-320)


@pytest.mark.parametrize("gates", EXTREME_LOG_GATES[:3] + EXTREME_LOG_GATES[4:])
def test_forgetting_attention_of_extreme_log_gates_is_the_exact_softmax(gates):
    import mpmath

    n = len(gates)
    scores = np.array([[(-1.0) ** (i + j) * 1e308 / (1 + i + j) for j in range(n)] for i in range(n)])
    scores[1, 1] = -np.inf  # a masked diagonal: row 1's only finite total overflowed to -inf before
    weights = posenc.forgetting_attention(scores, gates, log=True)
    with mpmath.workdps(60):
        for i in range(n):
            totals = [mpmath.mpf(scores[i, j]) + mpmath.fsum(gates[j + 1 : i + 1]) for j in range(i + 1)]
            finite = [t for t, s in zip(totals, scores[i]) if s != -np.inf]
            top = max(finite)
            numerators = [mpmath.exp(t - top) if s != -np.inf else 0 for t, s in zip(totals, scores[i])]
            expected = [float(x / mpmath.fsum(numerators)) for x in numerators] + [0.0] * (n - i - 1)
            np.testing.assert_allclose(weights[i], expected, rtol=1e-13, atol=1e-300)


def test_forgetting_attention_with_a_finite_score_in_each_row_is_no_row_of_minus_infinity():
    # Score and bias each beyond half of float64's range: their sum overflowed to -inf before.
    weights = posenc.forgetting_attention([[0.0, -np.inf], [-1e308, -np.inf]], [0.0, -1e308], log=True)
    assert weights.tolist() == [[1.0, 0.0], [1.0, 0.0]]


# ---------------------------------------------------------------------------------------
# Fractional 2-D coordinates at the largest documented frequency: as accurate as integer ids

#: The largest frequency whose phases stay below 2**53 radians (PHASE_LIMIT) at any coordinate in [-1, 1].
LARGEST_FREQUENCY = float(np.nextafter(2.0**53, 0))


def _exact_coordinates(count: int, kind: str) -> list[Any]:
    """Each coordinate as an exact fraction, from the docstring's formulas."""
    from fractions import Fraction

    if kind == "index":
        return [Fraction(i) for i in range(count)]
    if kind == "centered":
        return [2 * (i + Fraction(1, 2)) / count - 1 for i in range(count)]
    return [Fraction(-1)] if count == 1 else [-1 + Fraction(2 * i, count - 1) for i in range(count)]


@pytest.mark.parametrize("kind", ["centered", "pixel", "index"])
@pytest.mark.parametrize("frequency", [LARGEST_FREQUENCY, 2.0**40 + 0.5, 3.0])
def test_fractional_2d_coordinates_keep_full_accuracy_at_large_frequencies(kind, frequency):
    import mpmath

    rows, cols = 3, 7
    if kind == "index":
        frequency /= 2**3  # index coordinates reach 6: the same largest phase
    unit = np.tile([1.0, 0.0], (rows * cols, 2))  # (cos, sin) of each pair's phase after the rotation
    axial = posenc.axial_rope_2d(unit, rows, cols, frequencies=[frequency], coordinates=kind)
    mixed = posenc.mixed_rope_2d(unit, rows, cols, [[frequency, 0.0], [0.0, frequency]], coordinates=kind)
    ys, xs = _exact_coordinates(rows, kind), _exact_coordinates(cols, kind)
    with mpmath.workdps(60):
        for token in range(rows * cols):
            y, x = ys[token // cols], xs[token % cols]
            for pair, coordinate in ((0, y), (1, x)):
                phase = mpmath.mpf(frequency) * mpmath.mpf(coordinate.numerator) / coordinate.denominator
                expected = [float(mpmath.cos(phase)), float(mpmath.sin(phase))]
                # axial: pair 0 turns with the row, pair 1 with the column; mixed: fx, then fy.
                mixed_pair = 1 if pair == 0 else 0
                np.testing.assert_allclose(axial[token, 2 * pair : 2 * pair + 2], expected, rtol=0, atol=2e-15)
                np.testing.assert_allclose(
                    mixed[token, 2 * mixed_pair : 2 * mixed_pair + 2], expected, rtol=0, atol=2e-15
                )


# ---------------------------------------------------------------------------------------
# Large requests: memory bounded by the result, by traced peak

#: "A small constant": what a call may hold beside its result and its arguments (two of the
#: library's blocks of temporaries, ``_checks.BLOCK_ELEMENTS`` float64 each).
RULE_BYTES = 16 * 2**20
#: "A few times": how many times the bytes of its result a call may hold beside them (its
#: result, a block's temporaries of the result's size, a reduction's partial sums)...
RULE_FACTOR = 4
#: ...and of its array arguments (one converted copy, and one temporary of their size).
ARGUMENT_FACTOR = 2


def _big(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape)).standard_normal(shape)


def _ids(n: int) -> np.ndarray:
    return np.arange(n)


#: For every call of CALLS, the arguments that make it large: a result (or what it reads) of
#: about 2**20 elements, 8 MiB, where the size is free; a limit's own largest value where the
#: limit is not a size and the call is quick (the Lie generators' widest width, commutator pairs
#: just below LIE_WORK_LIMIT, the widest M-RoPE and permutation heads). The rule is a ratio, and
#: posenc's size limit (2**27 elements, 1 GiB) would multiply the same ratio by 128 on a shared
#: machine; 8 MiB is large enough that a temporary of many times the result shows above the
#: constant. Frequency tables stay at width 2**10: they are small, and correctly rounded ones
#: take a second at MAX_WIDTH. Built when the test runs.
LARGE: dict[str, Callable[[], dict[str, Any]]] = {
    "frequencies": lambda: dict(width=2**10),
    "wavelengths": lambda: dict(width=2**10),
    "sinusoidal": lambda: dict(position_ids=_ids(2**13), width=128),
    "shift_operator": lambda: dict(offset=np.arange(2**12) * 1.5, width=16),
    "kernel": lambda: dict(offset=np.arange(2.0**14), width=256),
    "squared_distance": lambda: dict(offset=np.arange(2.0**14), width=256),
    "rope": lambda: dict(x=_big(2**13, 128), position_ids=_ids(2**13)),
    "alibi_slopes": lambda: dict(n_heads=2**20),
    "alibi_bias": lambda: dict(n_heads=4, length=512),
    "schedule_frequencies": lambda: dict(width=2**10),
    "sinusoidal_embedding": lambda: dict(position_ids=_ids(2**13) + 4, width=127),
    "fairseq_position_ids": lambda: dict(input_ids=(_ids(2**20) % 7 + 1).reshape(2**10, 2**10)),
    "fairseq_embedding": lambda: dict(input_ids=(_ids(2**13) % 7 + 1).reshape(64, 128), width=128),
    "rope_permutation": lambda: dict(head_dim=2**16, n_heads=16, rotary_dim=2**15),
    "apply_rope": lambda: dict(
        x=_big(2**13, 128), position_ids=_ids(2**13), inv_freq=np.geomspace(1, 1e-4, 32), rotary_dim=64
    ),
    "rope_frequencies": lambda: dict(dim=2**10),
    "linear_scaled_frequencies": lambda: dict(dim=2**10),
    "dynamic_ntk_frequencies": lambda: dict(dim=2**10),
    "yarn_frequencies": lambda: dict(dim=2**10),
    "llama3_frequencies": lambda: dict(dim=2**10),
    "rope_scaling_frequencies": lambda: dict(dim=2**10),
    "t5_relative_position_bucket": lambda: dict(relative_position=(_ids(2**20) - 2**19).reshape(2**10, 2**10)),
    "absolute_table_rows": lambda: dict(table=_big(2**10, 2**10), position_ids=_ids(2**10)[::-1]),
    "shaw_relative_index": lambda: dict(query_ids=_ids(2**10), key_ids=_ids(2**10), max_distance=2**10),
    "shaw_logits": lambda: dict(
        queries=_big(2**10, 64),
        keys=_big(2**10, 64),
        relative_keys=_big(257, 64),
        query_ids=_ids(2**10),
        key_ids=_ids(2**10),
    ),
    "shaw_values": lambda: dict(
        weights=_big(2**10, 2**10),
        values=_big(2**10, 64),
        relative_values=_big(257, 64),
        query_ids=_ids(2**10),
        key_ids=_ids(2**10),
    ),
    "transformer_xl_terms": lambda: dict(
        queries=_big(2**9, 64),
        keys=_big(2**9, 64),
        position_projection=_big(128, 64),
        u=_big(64),
        v=_big(64),
        query_ids=_ids(2**9),
        key_ids=_ids(2**9),
    ),
    "t5_bias": lambda: dict(table=_big(32, 1), query_ids=_ids(2**10), key_ids=_ids(2**10)),
    "deberta_log_bucket": lambda: dict(relative_position=_ids(2**20) - 2**19),
    "deberta_relative_positions": lambda: dict(query_ids=_ids(2**10), key_ids=_ids(2**10)),
    "alibi_symmetric_bias": lambda: dict(n_heads=1, query_ids=_ids(2**10), key_ids=_ids(2**10)),
    "kerple_bias power": lambda: dict(query_ids=_ids(2**10), key_ids=_ids(2**10), r1=[1.0], r2=[1.5]),
    "kerple_bias log": lambda: dict(query_ids=_ids(2**10), key_ids=_ids(2**10), r1=[1.0], r2=[3.0]),
    "fire_bias": lambda: dict(
        query_ids=_ids(512),
        key_ids=_ids(512),
        hidden_weights=_big(32),
        hidden_bias=_big(32),
        output_weights=_big(4, 32),
        output_bias=_big(4),
    ),
    "cope_positions": lambda: dict(logits=_big(2**10, 2**10)),
    "cope_logits": lambda: dict(
        queries=_big(2**10, 64), positions=np.abs(_big(2**10, 2**10)) * 30, position_embeddings=_big(128, 64)
    ),
    "pair_index_at_turns": lambda: dict(dim=2**10),
    "critical_dimension": lambda: dict(dim=2**10),
    "yarn_correction_range": lambda: dict(dim=2**10),
    "yarn_ramp": lambda: dict(dim=2**10),
    "yarn_attention_factor": lambda: dict(factor=2.0**1000),
    "longrope_frequencies": lambda: dict(dim=2**10, short_factor=np.ones(2**9), long_factor=np.ones(2**9) * 4),
    "longrope_frequencies factor": lambda: dict(dim=2**10, short_factor=np.ones(2**9), long_factor=np.ones(2**9) * 4),
    "xpos_scales": lambda: dict(position_ids=_ids(2**13) - 2**12, dim=256),
    "apply_xpos": lambda: dict(x=_big(2**13, 128), position_ids=_ids(2**13)),
    "rerotate_keys": lambda: dict(keys=_big(2**13, 128), offset=np.arange(2**13) * 0.5, rotary_dim=128),
    "streaming_cache": lambda: dict(length=2**20, sinks=4, window=2**20 - 8),
    "mrope_axes": lambda: dict(head_dim=2**16, sections=[10924, 10922, 10922]),
    "mrope_phases": lambda: dict(position_ids=np.stack([_ids(2**13)] * 3), head_dim=256, sections=[32, 48, 48]),
    "apply_mrope": lambda: dict(
        x=_big(2**13, 128),
        position_ids=np.stack([_ids(2**13)] * 3),
        sections=[16, 24, 24],
        inv_freq=np.geomspace(1, 1e-4, 64),
    ),
    "mrope_position_ids": lambda: dict(
        segments=(("text", 2**17), ("image", (1, 512, 512)), ("video", (4, 256, 256), 0.5), ("text", 8))
    ),
    "attention_entropy": lambda: dict(scores=_big(2**10, 2**10)),
    "sincos_2d_table": lambda: dict(rows=128, cols=128, dim=64),
    "axial_rope_2d": lambda: dict(x=_big(2**14, 64), rows=128, cols=128),
    "axial_rope_2d frequencies": lambda: dict(
        x=_big(2**14, 64), rows=128, cols=128, frequencies=np.geomspace(1e6, 1, 16)
    ),
    "mixed_rope_2d": lambda: dict(x=_big(2**14, 64), rows=128, cols=128, frequencies=_big(2, 32)),
    "resample_weights": lambda: dict(old=1, new=2**20),
    "resample_weights scale_factor": lambda: dict(old=2**10, new=2**10, scale_factor=1.0),
    "resample_patch_table": lambda: dict(table=_big(1 + 32 * 32, 256), new_grid=[64, 64], old_grid=[32, 32]),
    "resample_patch_table dinov2": lambda: dict(table=_big(2 + 32 * 32, 256), new_grid=[64, 64]),
    "layer_schedule": lambda: dict(num_hidden_layers=2**10),
    "gemma3_layers": lambda: dict(num_hidden_layers=2**10),
    "llama4_layers": lambda: dict(num_hidden_layers=2**10, no_rope_layers=(_ids(2**10) % 4 != 3).astype(int)),
    "smollm3_layers": lambda: dict(num_hidden_layers=2**10, no_rope_layers=(_ids(2**10) % 4 != 3).astype(int)),
    "cohere2_layers": lambda: dict(num_hidden_layers=2**10),
    "exaone4_layers": lambda: dict(num_hidden_layers=2**10),
    "partial_rotary_dim": lambda: dict(head_dim=2**16),
    "partial_rope_frequencies": lambda: dict(head_dim=2**10),
    "apply_partial_rope": lambda: dict(x=_big(2**13, 128), position_ids=_ids(2**13)),
    "proportional_rope_frequencies": lambda: dict(head_dim=2**10),
    "mla_softmax_scale": lambda: dict(factor=2.0**1000),
    "mla_cache_values": lambda: dict(kv_lora_rank=2**16, qk_rope_head_dim=2**16),
    "mla_scores": lambda: dict(
        q_nope=_big(4, 256, 64),
        q_rope=_big(4, 256, 64),
        k_nope=_big(4, 256, 64),
        k_rope=_big(256, 64),
        query_ids=_ids(256),
        key_ids=_ids(256),
        inv_freq=np.geomspace(1, 1e-4, 32),
    ),
    # A few thousand trial bases, each up to (context_length + 1) * head_dim / 2 cosines: the
    # largest permitted context (BOUND_COSINES) takes seconds, so a middling one stands for it.
    "rope_base_lower_bound": lambda: dict(context_length=2**9 - 1, head_dim=16),
    "rope_base_all_pass_bound": lambda: dict(context_length=2**9 - 1, head_dim=16),
    "llama4_query_scale": lambda: dict(positions=_ids(2**20)),
    # 4096 rotations of width 16: half of LIE_WORK_LIMIT, and a result of 2**20 elements.
    "lie_rotation": lambda: dict(generators=posenc.liere_generators(16, 2, seed=0), positions=_big(2**12, 2) / 8),
    "rope_generators": lambda: dict(width=posenc.lie_groups.MAX_LIE_WIDTH),
    "string_generators": lambda: dict(basis=np.eye(256)[np.random.default_rng(0).permutation(256)], axes=2),
    "liere_generators": lambda: dict(width=posenc.lie_groups.MAX_LIE_WIDTH, axes=16),
    "comrope_ap_generators": lambda: dict(matrices=_big(64, 4, 4), axes=16),
    "comrope_ld_generators": lambda: dict(matrices=_big(64, 4, 4), multipliers=_big(16, 64)),
    "comrope_random_generators": lambda: dict(width=256, axes=16, block_size=4),
    # 120 pairs of width 64: just below LIE_WORK_LIMIT.
    "commutator_norm": lambda: dict(generators=posenc.liere_generators(64, 16, seed=0)),
    "relativity_error": lambda: dict(generators=posenc.liere_generators(8, 2, seed=0), positions=_big(32, 2)),
    "llama4_beta_query_scale": lambda: dict(position_ids=_ids(2**20)),
    "forgetting_bias": lambda: dict(forget_gates=-np.abs(_big(4, 512)), log=True),
    "forgetting_attention": lambda: dict(scores=_big(4, 512, 512), forget_gates=-np.abs(_big(4, 512))),
    "stick_breaking_weights": lambda: dict(logits=_big(2**10, 2**10)),
    # The issue's case: 132 MiB for a result of 16 KiB at 2048 x 2048 (four copies of the logits' size).
    "stick_breaking_remainder": lambda: dict(logits=_big(1536, 1536)),
    "models.model": lambda: dict(
        key=max(posenc.models.MODELS, key=lambda key: len(posenc.models.MODELS[key].settings))
    ),
    "path_scores": lambda: dict(
        queries=_big(4, 512, 8), keys=_big(4, 512, 8), directions=_big(4, 512, 8), betas=np.ones((4, 512))
    ),
}


def _argument_bytes(kwargs: dict[str, Any]) -> int:
    return sum(value.nbytes for value in kwargs.values() if isinstance(value, np.ndarray))


def test_every_call_has_a_large_request():
    assert set(LARGE) >= set(LABELS)


@pytest.mark.parametrize("label, function, kwargs", CALLS, ids=LABELS)
def test_a_large_request_holds_at_most_a_small_constant_and_a_few_times_its_result_and_arguments(
    label, function, kwargs
):
    large = {**kwargs, **LARGE[label]()}
    outcome, peak = measured(function, large)
    assert not isinstance(outcome, Exception), f"{label} refused its large request: {outcome!r}"
    assert _all_finite(label, outcome), f"{label}'s large request gave a NaN or an infinity"
    allowed = RULE_BYTES + RULE_FACTOR * _result_bytes(outcome) + ARGUMENT_FACTOR * _argument_bytes(large)
    assert peak <= allowed, (
        f"{label} peaked at {peak / 2**20:.1f} MiB for a result of {_result_bytes(outcome) / 2**20:.1f} MiB and "
        f"arguments of {_argument_bytes(large) / 2**20:.1f} MiB (allowed {allowed / 2**20:.1f} MiB)"
    )
