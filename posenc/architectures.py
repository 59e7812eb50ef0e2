"""How today's language models place position, as Hugging Face transformers 5.24.0 builds them.

* Per-layer schedules: ``layer_schedule`` (the last or the first layer of every block of
  ``period`` global, the rest local) and the rules of Gemma 3, Llama 4, SmolLM3, Cohere2 and EXAONE 4, each a tuple of
  ``LayerSpec`` records (whether the layer rotates, its base, its attention kind, whether the
  long-context RoPE scaling reaches it, whether its queries are temperature-tuned).
* Partial and proportional RoPE: ``partial_rope_frequencies`` (GPT-NeoX, Phi, GLM: rotate the
  first ``int(head_dim * factor)`` channels), ``apply_partial_rope`` and
  ``proportional_rope_frequencies`` (transformers' "proportional" type, Gemma 4's global
  layers): base ``b`` on a fraction ``p`` of the pairs equals partial RoPE with base ``b ** p``
  once the channels are permuted.
* Multi-head latent attention (DeepSeek-V2/V3, Kimi K2): ``mla_scores`` (a position-free term
  plus a RoPE term whose key is shared by every head), ``mla_softmax_scale`` and
  ``mla_cache_values``.
* ``rope_base_lower_bound``: the smallest base that keeps Men et al.'s (2024)
  ``B(m) = sum_i cos(m theta_i)`` non-negative over a context; ``rope_base_all_pass_bound``: the
  base from which every larger one does (the bases that pass are not an interval).
* Temperature laws that multiply the queries by a slowly growing factor of the position:
  ``llama4_query_scale`` (Llama 4's NoPE layers) and ``llama4_beta_query_scale`` (the
  ``llama_4_scaling_beta`` of Ministral 3 and Mistral 4).

Every function checks its arguments through ``posenc._checks`` and names the offending one.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _checks, rotary
from .rotary import DEFAULT_BASE

#: Most layers a schedule may describe; far beyond any model, small enough to build at once.
MAX_LAYERS = 2**16

#: The attention kinds of transformers' ``layer_types``.
SLIDING = "sliding_attention"
FULL = "full_attention"
CHUNKED = "chunked_attention"
ATTENTION_KINDS = (SLIDING, FULL, CHUNKED)


class LayerSpec(NamedTuple):
    """What one decoder layer does with position.

    ``base`` is the RoPE base of a rotating layer and None for a NoPE layer. ``attention`` is
    the layer's entry of transformers' ``layer_types``. ``scaled`` says whether the model's
    long-context RoPE scaling (``rope_scaling``) applies to the layer; ``temperature_tuned``
    whether its queries are multiplied by Llama 4's ``llama4_query_scale``.
    """

    rotates: bool
    base: float | None
    attention: str
    scaled: bool
    temperature_tuned: bool


# ---------------------------------------------------------------------------------------
# Per-layer schedules


def _layer_count(value: Any) -> int:
    return _checks.integer("num_hidden_layers", value, minimum=1, maximum=MAX_LAYERS)


def _optional_base(name: str, value: Any) -> float | None:
    if value is None:
        return None
    number = _checks._as_float(name, value)
    if not (math.isfinite(number) and number > 1.0):
        raise ValueError(f"{name} must be None (no rotation) or finite and > 1, got {_checks._describe(value)}")
    return number


def _named_base(name: str, value: Any) -> float:
    number = _optional_base(name, value)
    if number is None:
        raise TypeError(f"{name} must be a real number > 1, got None")
    return number


#: Where the global layer sits in each block of ``period`` layers: "last" is layer i global when
#: ``i + 1`` is a multiple of the period (transformers' Gemma 2, Gemma 3, Cohere2, EXAONE 4,
#: gpt-oss), "first" when ``i`` is (ModernBERT, Cwm, GraniteSWA).
GLOBAL_POSITIONS = ("last", "first")


def _global_layers(count: int, period: int, position: str = "last") -> list[bool]:
    offset = 1 if position == "last" else 0
    return [(index + offset) % period == 0 for index in range(count)]


def layer_schedule(
    num_hidden_layers: int,
    period: int,
    *,
    local_base: float | None,
    global_base: float | None,
    local_attention: str = SLIDING,
    global_attention: str = FULL,
    global_position: str = "last",
) -> tuple[LayerSpec, ...]:
    """Every ``period``-th layer global, the others local, each kind with its own base and attention.

    ``global_position`` says which layer of each block of ``period`` layers is the global one,
    counting layers from 0. "last" (the default): layer i is global when ``i + 1`` is a multiple
    of ``period``, the rule of transformers' Gemma 2, Gemma 3, Cohere2, EXAONE 4 and gpt-oss
    configurations. "first": layer i is global when ``i`` is a multiple of ``period``, so layer 0
    is global, the rule of ``ModernBertConfig`` (``global_attn_every_n_layers``), ``CwmConfig``
    and ``GraniteSWAConfig``. Period 1 makes every layer global either way. A base of None makes
    that kind of layer NoPE. Every rotating layer is marked ``scaled`` (one set of RoPE
    parameters for the model) and none is temperature-tuned; the model functions below refine this.

    >>> [(s.base, s.attention) for s in layer_schedule(4, 2, local_base=1e4, global_base=None)][:2]
    [(10000.0, 'sliding_attention'), (None, 'full_attention')]
    >>> [s.attention[0] for s in layer_schedule(7, 3, local_base=1e4, global_base=1.6e5, global_position="first")]
    ['f', 's', 's', 'f', 's', 's', 'f']
    """
    count = _layer_count(num_hidden_layers)
    period = _checks.integer("period", period, minimum=1)
    local = _optional_base("local_base", local_base)
    global_ = _optional_base("global_base", global_base)
    local_kind = _checks.choice("local_attention", local_attention, ATTENTION_KINDS)
    global_kind = _checks.choice("global_attention", global_attention, ATTENTION_KINDS)
    position = _checks.choice("global_position", global_position, GLOBAL_POSITIONS)
    layers = []
    for is_global in _global_layers(count, period, position):
        base = global_ if is_global else local
        kind = global_kind if is_global else local_kind
        layers.append(LayerSpec(base is not None, base, kind, base is not None, False))
    return tuple(layers)


def gemma3_layers(
    num_hidden_layers: int = 26,
    *,
    sliding_window_pattern: int = 6,
    rope_theta: float = 1_000_000.0,
    rope_local_base_freq: float = 10_000.0,
) -> tuple[LayerSpec, ...]:
    """Gemma 3: five sliding-window layers at base 10,000, then one global layer at base 1,000,000.

    ``Gemma3TextConfig`` builds ``layer_types`` from ``sliding_window_pattern`` (default 6):
    layer i is global when ``i + 1`` is a multiple of it. Its ``rope_parameters`` hold one set
    per kind: the global one takes ``rope_theta`` and any ``rope_scaling`` (so only global
    layers are ``scaled``), the sliding one ``rope_local_base_freq``. Every layer rotates.

    >>> [s.base for s in gemma3_layers(7)]
    [10000.0, 10000.0, 10000.0, 10000.0, 10000.0, 1000000.0, 10000.0]
    """
    count = _layer_count(num_hidden_layers)
    pattern = _checks.integer("sliding_window_pattern", sliding_window_pattern, minimum=1)
    global_base = _named_base("rope_theta", rope_theta)
    local_base = _named_base("rope_local_base_freq", rope_local_base_freq)
    return tuple(
        LayerSpec(True, global_base, FULL, True, False)
        if is_global
        else LayerSpec(True, local_base, SLIDING, False, False)
        for is_global in _global_layers(count, pattern)
    )


def _rope_flags(
    count: int, no_rope_layers: ArrayLike | None, interval: int, *, empty_means_default: bool
) -> list[bool]:
    """Which layers use RoPE: ``no_rope_layers`` (1 = rotates, despite the name) or every interval-th layer NoPE."""
    if no_rope_layers is not None:
        flags = _checks.integer_array("no_rope_layers", no_rope_layers)
        if flags.ndim != 1:
            raise ValueError(f"no_rope_layers must be one-dimensional (one 0 or 1 per layer), got shape {flags.shape}")
        if flags.size or not empty_means_default:
            if np.any((flags != 0) & (flags != 1)):
                raise ValueError("no_rope_layers must hold only 0 (NoPE layer) and 1 (RoPE layer)")
            if flags.size != count:
                # transformers 5.24.0 refuses a longer list too: layer_types, built from it, must match the count.
                raise ValueError(
                    f"no_rope_layers must have one entry for each of the num_hidden_layers = {count} layers, "
                    f"got {flags.size} entries"
                )
            return [bool(flag) for flag in flags]
    return [(index + 1) % interval != 0 for index in range(count)]


def llama4_layers(
    num_hidden_layers: int = 48,
    *,
    no_rope_layers: ArrayLike | None = None,
    no_rope_layer_interval: int = 4,
    attention_chunk_size: int | None = 8192,
    rope_theta: float = 500_000.0,
    attn_temperature_tuning: bool = True,
) -> tuple[LayerSpec, ...]:
    """Llama 4's iRoPE: RoPE layers with chunked attention, every fourth layer NoPE with full attention.

    ``no_rope_layers`` holds one flag per layer, 1 when the layer uses RoPE (the name
    notwithstanding); None or an empty list gives transformers' default, layer i NoPE when
    ``i + 1`` is a multiple of ``no_rope_layer_interval`` (4). RoPE layers attend within chunks
    of ``attention_chunk_size`` tokens (full attention when it is None); NoPE layers attend to
    everything and, with ``attn_temperature_tuning``, scale their queries by
    ``llama4_query_scale``. One rotary embedding (base ``rope_theta``) serves every RoPE layer.

    >>> [(s.rotates, s.attention) for s in llama4_layers(4)][2:]
    [(True, 'chunked_attention'), (False, 'full_attention')]
    """
    count = _layer_count(num_hidden_layers)
    interval = _checks.integer("no_rope_layer_interval", no_rope_layer_interval, minimum=1)
    chunk = _checks.optional_index("attention_chunk_size", attention_chunk_size)
    base = _named_base("rope_theta", rope_theta)
    tuning = _checks.boolean("attn_temperature_tuning", attn_temperature_tuning)
    flags = _rope_flags(count, no_rope_layers, interval, empty_means_default=True)
    rope_kind = FULL if chunk is None else CHUNKED
    return tuple(
        LayerSpec(True, base, rope_kind, True, False) if uses_rope else LayerSpec(False, None, FULL, False, tuning)
        for uses_rope in flags
    )


def smollm3_layers(
    num_hidden_layers: int = 36,
    *,
    no_rope_layers: ArrayLike | None = None,
    no_rope_layer_interval: int = 4,
    rope_theta: float = 2_000_000.0,
    use_sliding_window: bool = False,
    sliding_window: int | None = None,
) -> tuple[LayerSpec, ...]:
    """SmolLM3: every fourth layer NoPE, the others RoPE at base ``rope_theta``; by default all attend fully.

    The defaults are ``SmolLM3Config``'s, and its ``rope_theta`` of 2,000,000 is not the base the
    released 3B models rotate with: to describe them, pass their record's,
    ``rope_theta=posenc.models.model("smollm3-3b")["rope_theta"]``.
    ``no_rope_layers`` follows Llama 4's convention (1 = the layer rotates); only None gives the
    default from ``no_rope_layer_interval`` (an empty list is no flags at all, refused here).
    With ``use_sliding_window`` and a ``sliding_window``, the NoPE layers attend in a sliding
    window and the RoPE layers stay full.

    >>> [s.rotates for s in smollm3_layers(8)]
    [True, True, True, False, True, True, True, False]
    """
    count = _layer_count(num_hidden_layers)
    interval = _checks.integer("no_rope_layer_interval", no_rope_layer_interval, minimum=1)
    base = _named_base("rope_theta", rope_theta)
    sliding = _checks.boolean("use_sliding_window", use_sliding_window)
    window = _checks.optional_index("sliding_window", sliding_window)
    flags = _rope_flags(count, no_rope_layers, interval, empty_means_default=False)
    nope_kind = SLIDING if sliding and window is not None else FULL
    return tuple(
        LayerSpec(True, base, FULL, True, False) if uses_rope else LayerSpec(False, None, nope_kind, False, False)
        for uses_rope in flags
    )


def cohere2_layers(
    num_hidden_layers: int = 40, *, sliding_window_pattern: int = 4, rope_theta: float = 10_000.0
) -> tuple[LayerSpec, ...]:
    """Cohere2 (Command R7B, Command A): sliding layers rotate, every fourth layer is global and NoPE.

    Layer i is global when ``i + 1`` is a multiple of ``sliding_window_pattern`` (4). Cohere2
    pairs channels interleaved (its cos and sin repeat each frequency twice in a row).

    >>> [s.rotates for s in cohere2_layers(4)]
    [True, True, True, False]
    """
    count = _layer_count(num_hidden_layers)
    pattern = _checks.integer("sliding_window_pattern", sliding_window_pattern, minimum=1)
    base = _named_base("rope_theta", rope_theta)
    return layer_schedule(count, pattern, local_base=base, global_base=None)


def exaone4_layers(
    num_hidden_layers: int = 32,
    *,
    sliding_window_pattern: int = 4,
    sliding_window: int | None = 4096,
    rope_theta: float = 10_000.0,
) -> tuple[LayerSpec, ...]:
    """EXAONE 4: like Cohere2, sliding layers rotate and every fourth (global) layer is NoPE.

    With ``sliding_window`` None there are no sliding layers and EXAONE 4 rotates every layer,
    all with full attention (transformers 5.24.0 then needs ``layer_types`` given: its default
    divides by a pattern it has set to 0).

    >>> [s.attention for s in exaone4_layers(2, sliding_window_pattern=2)]
    ['sliding_attention', 'full_attention']
    """
    count = _layer_count(num_hidden_layers)
    pattern = _checks.integer("sliding_window_pattern", sliding_window_pattern, minimum=1)
    window = _checks.optional_index("sliding_window", sliding_window)
    base = _named_base("rope_theta", rope_theta)
    if window is None:
        return tuple(LayerSpec(True, base, FULL, True, False) for _ in range(count))
    return layer_schedule(count, pattern, local_base=base, global_base=None)


# ---------------------------------------------------------------------------------------
# Partial and proportional RoPE


def _fraction(value: Any) -> float:
    number = _checks.real("partial_rotary_factor", value, minimum=0.0)
    if number > 1.0:
        raise ValueError(f"partial_rotary_factor must be <= 1 (a fraction of head_dim), got {number:g}")
    return number


def _head_dim(value: Any) -> int:
    return _checks.channel_count(_checks.integer("head_dim", value, minimum=1, maximum=None), "head_dim")


def partial_rotary_dim(head_dim: int, partial_rotary_factor: float) -> int:
    """The rotated width of partial RoPE, ``int(head_dim * partial_rotary_factor)`` in float64.

    The product is rounded as Python rounds it before truncating (so ``100 * 0.29`` gives 28);
    the result must be even and at least 2.

    >>> partial_rotary_dim(80, 0.4), partial_rotary_dim(128, 0.25)
    (32, 32)
    """
    dim = _head_dim(head_dim)
    factor = _fraction(partial_rotary_factor)
    rotated = int(dim * factor)
    if rotated < 2 or rotated % 2:
        raise ValueError(
            f"partial_rotary_factor must make int(head_dim * partial_rotary_factor) even and >= 2 "
            f"(channels rotate in pairs), got {rotated} from head_dim {dim} and factor {factor:g}"
        )
    return rotated


def partial_rope_frequencies(
    head_dim: int, *, base: float = DEFAULT_BASE, partial_rotary_factor: float = 1.0
) -> NDArray[np.float64]:
    """Inverse frequencies of partial RoPE: ``base ** (-2 r / rotary_dim)``, ``rotary_dim = partial_rotary_dim(...)``.

    The convention of GPT-NeoX, Phi and GLM (transformers' default RoPE with a
    ``partial_rotary_factor``): the frequencies span the rotated width, not ``head_dim``, so
    the slowest pair turns at nearly ``1 / base`` whatever the fraction. Shape ``(rotary_dim // 2,)``.

    >>> partial_rope_frequencies(16, base=10000.0, partial_rotary_factor=0.5).tolist()
    [1.0, 0.1, 0.01, 0.001]
    """
    rotated = partial_rotary_dim(head_dim, partial_rotary_factor)
    return rotary.rope_frequencies(rotated, base=base)


def apply_partial_rope(
    x: ArrayLike,
    position_ids: ArrayLike,
    *,
    base: float = DEFAULT_BASE,
    partial_rotary_factor: float,
    layout: str = "halves",
) -> NDArray[np.float64]:
    """Partial RoPE on ``x`` (shape ``(..., n, head_dim)``): the first ``rotary_dim`` channels rotate.

    ``rotary_dim = int(head_dim * partial_rotary_factor)``; the remaining channels pass through.
    ``layout`` pairs the rotated slice: "halves" for GPT-NeoX and Phi (channel r with
    ``r + rotary_dim / 2``), "interleaved" for GLM and GLM-4 (channels 2r and 2r + 1: their
    ``apply_rotary_pos_emb`` keeps the first half of cos and sin, repeats each entry twice and
    rotates adjacent channels). Pair r turns by ``position * base ** (-2 r / rotary_dim)``.

    >>> x = [[1.0, 0.0, 5.0, 6.0]]
    >>> apply_partial_rope(x, [2], partial_rotary_factor=0.5, layout="interleaved").round(3).tolist()
    [[-0.416, 0.909, 5.0, 6.0]]
    """
    ids = _checks.position_ids(position_ids)
    values = _checks.vectors(x, ids)
    rotated = partial_rotary_dim(values.shape[-1], partial_rotary_factor)
    base = _checks.base(base)
    layout = _checks.layout(layout)
    return rotary.rotate(values, ids, base, None, rotated, layout)


def proportional_rope_frequencies(
    head_dim: int, *, base: float = DEFAULT_BASE, partial_rotary_factor: float = 1.0, factor: float = 1.0
) -> NDArray[np.float64]:
    """transformers' "proportional" RoPE (Gemma 4's global layers; p-RoPE of Barbero et al., 2025).

    The first ``a = int(partial_rotary_factor * head_dim // 2)`` pairs keep their full-width
    frequencies ``base ** (-2 r / head_dim)`` and the other ``head_dim // 2 - a`` get frequency
    0 (they never turn); all are divided by ``factor``. Shape ``(head_dim // 2,)``: one
    frequency per pair of the whole head, used with the halves pairing over ``head_dim``.

    With factor 1 this is partial RoPE in disguise: pair r < a turns at
    ``base ** (-2 r / head_dim) = (base ** p) ** (-2 r / (p head_dim))``, the frequency of
    ``partial_rope_frequencies(head_dim, base=base ** p, partial_rotary_factor=p)`` when
    ``p head_dim = 2 a``. The rotated channels are ``0 .. a-1`` and ``head_dim/2 .. head_dim/2 + a - 1``
    rather than the first ``2 a``, so the two agree up to that channel permutation; channels
    ``a .. head_dim/2 - 1`` and ``head_dim/2 + a .. head_dim - 1`` are left unrotated.

    >>> proportional_rope_frequencies(8, base=10000.0, partial_rotary_factor=0.5).tolist()
    [1.0, 0.1, 0.0, 0.0]
    """
    dim = _checks.width(head_dim, name="head_dim")
    fraction = _fraction(partial_rotary_factor)
    base = _checks.base(base)
    factor = _checks.real("factor", factor, minimum=0.0, strict=True)
    # transformers' expression: (fraction * head_dim) // 2 in float, then int.
    rotated_pairs = int(fraction * dim // 2)
    frequencies = np.zeros(dim // 2)
    frequencies[:rotated_pairs] = rotary.rope_frequencies(dim, base=base)[:rotated_pairs]
    with np.errstate(over="ignore"):  # an overflow is refused just below, by name
        return _checks.finite("factor", frequencies / factor)


# ---------------------------------------------------------------------------------------
# Multi-head latent attention


def mla_softmax_scale(qk_head_dim: int, *, factor: float | None = None, mscale_all_dim: float | None = None) -> float:
    """DeepSeek-V3's softmax scale: ``qk_head_dim ** -0.5``, times ``mscale ** 2`` under YaRN.

    ``DeepseekV3Attention`` multiplies the usual scale by the square of
    ``mscale = 0.1 * mscale_all_dim * ln(factor) + 1`` (1 when ``factor <= 1``) whenever the
    RoPE type is not "default" and ``mscale_all_dim`` is set and non-zero; pass ``factor``
    None for the default type. This is the second place the YaRN scale enters: the first is
    the attention factor on cos and sin (``posenc.yarn_attention_factor`` with ``mscale`` and
    ``mscale_all_dim``, 1 when the two are equal, as in DeepSeek-V3's config).

    >>> round(mla_softmax_scale(192, factor=40.0, mscale_all_dim=1.0) * 192 ** 0.5, 6)
    1.873854
    """
    dim = _checks.integer("qk_head_dim", qk_head_dim, minimum=1)
    scale = float(dim**-0.5)
    if factor is not None:
        factor = _checks.real("factor", factor, minimum=0.0, strict=True)
    coefficient = None if mscale_all_dim is None else _checks.real("mscale_all_dim", mscale_all_dim)
    if factor is None or not coefficient or factor <= 1.0:
        return scale
    mscale = 0.1 * coefficient * math.log(factor) + 1.0
    return float(_checks.finite("factor and mscale_all_dim", scale * mscale * mscale))


def mla_cache_values(kv_lora_rank: int, qk_rope_head_dim: int) -> int:
    """Values MLA caches per token and layer: the latent ``kv_lora_rank`` plus one shared rotary key.

    DeepSeek-V3's cache holds the compressed latent (from which every head's position-free key
    and value are re-expanded) and the RoPE key of width ``qk_rope_head_dim`` common to all heads,
    not a key and value per head.

    >>> mla_cache_values(512, 64)
    576
    """
    rank = _checks.integer("kv_lora_rank", kv_lora_rank, minimum=1)
    rope = _checks.width(qk_rope_head_dim, name="qk_rope_head_dim")
    return rank + rope


def mla_scores(
    q_nope: ArrayLike,
    q_rope: ArrayLike,
    k_nope: ArrayLike,
    k_rope: ArrayLike,
    *,
    query_ids: ArrayLike,
    key_ids: ArrayLike,
    base: float = DEFAULT_BASE,
    inv_freq: ArrayLike | None = None,
    layout: str = "interleaved",
    attention_factor: float = 1.0,
    scaling: float | None = None,
) -> NDArray[np.float64]:
    """Decoupled-RoPE attention logits of multi-head latent attention, shape ``(heads, n, m)``.

    ``scaling * (q_nope . k_nope + RoPE(q_rope) . RoPE(k_rope))``: ``q_nope`` ``(heads, n, d_nope)``
    and ``k_nope`` ``(heads, m, d_nope)`` carry no position; ``q_rope`` ``(heads, n, d_rope)``
    is rotated at ``query_ids`` and the single key ``k_rope`` ``(m, d_rope)``, shared by every
    head, at ``key_ids``. ``layout`` "interleaved" is DeepSeek-V3's ``rope_interleave``
    (adjacent channels pair); ``inv_freq`` defaults to ``base ** (-2 r / d_rope)`` (pass
    YaRN's); ``attention_factor`` multiplies both rotated vectors, so the RoPE term by its
    square; ``scaling`` defaults to ``(d_nope + d_rope) ** -0.5`` (``mla_softmax_scale``).

    >>> q = [[[1.0, 0.0]]]
    >>> float(mla_scores(q, [[[1.0, 0.0]]], q, [[1.0, 0.0]], query_ids=[3], key_ids=[3], scaling=1.0)[0, 0, 0])
    2.0
    """
    qids = _checks.position_ids(query_ids, name="query_ids")
    kids = _checks.position_ids(key_ids, name="key_ids")
    qn = _checks.real_array("q_nope", q_nope, ndim=3, what="(heads, n, d_nope)")
    kn = _checks.real_array("k_nope", k_nope, ndim=3, what="(heads, m, d_nope)")
    qr = _checks.real_array("q_rope", q_rope, ndim=3, what="(heads, n, d_rope)")
    kr = _checks.real_array("k_rope", k_rope, ndim=2, what="(m, d_rope), one key shared by every head")
    heads, n, d_nope = qn.shape
    if qr.shape[:2] != (heads, n):
        raise ValueError(f"q_rope must have the heads and rows of q_nope {(heads, n)}, got shape {qr.shape}")
    if kn.shape[0] != heads or kn.shape[2] != d_nope:
        raise ValueError(f"k_nope must have shape ({heads}, m, {d_nope}) like q_nope, got shape {kn.shape}")
    m = kn.shape[1]
    if kr.shape[0] != m:
        raise ValueError(f"k_rope must have one row per key of k_nope ({m}), got shape {kr.shape}")
    d_rope = qr.shape[2]
    if kr.shape[1] != d_rope:
        raise ValueError(f"k_rope must have q_rope's width {d_rope}, got shape {kr.shape}")
    rotated = _checks.width(d_rope, name="q_rope's last axis (d_rope)")
    if qids.size != n:
        raise ValueError(f"query_ids must have one id per query row: got {qids.size} ids for {n} rows")
    if kids.size != m:
        raise ValueError(f"key_ids must have one id per key row: got {kids.size} ids for {m} rows")
    base = _checks.base(base)
    layout = _checks.layout(layout)
    factor = _checks.real("attention_factor", attention_factor)
    scale = (d_nope + d_rope) ** -0.5 if scaling is None else _checks.real("scaling", scaling)
    _checks.elements("q_rope and k_rope", heads, n, m)
    rq = rotary.rotate(qr, qids, base, inv_freq, rotated, layout, factor)
    rk = rotary.rotate(kr, kids, base, inv_freq, rotated, layout, factor)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below, by name
        scores = (qn @ np.swapaxes(kn, -1, -2) + rq @ rk.T) * scale
    return _checks.finite("q_nope, q_rope, k_nope, k_rope, attention_factor and scaling", scores)


# ---------------------------------------------------------------------------------------
# The base that a context length needs


#: Most cosines one trial base of ``rope_base_lower_bound`` may need, ``(context_length + 1) * head_dim / 2``.
BOUND_COSINES = 2**21


def _bound_arguments(
    context_length: Any, head_dim: Any, grid_ratio: Any, rtol: Any
) -> tuple[int, int, float, float, NDArray[np.float64]]:
    """The checked arguments of the two base bounds, and the exponents ``-2 i / head_dim`` of their pairs.

    Both scans try up to thousands of bases at a cost in proportion to ``(context_length + 1) *
    head_dim / 2`` each, so that product is limited to ``BOUND_COSINES``, refused at once beyond."""
    length = _checks.integer("context_length", context_length, minimum=2)
    dim = _checks.width(head_dim, name="head_dim")
    if dim < 4:
        raise ValueError(f"head_dim must be >= 4 (with one pair, B(2) = cos 2 < 0 at every base), got {dim}")
    ratio = _checks.real("grid_ratio", grid_ratio)
    if not 1.001 <= ratio <= 2.0:
        raise ValueError(f"grid_ratio must be between 1.001 and 2 (the step of the scan over bases), got {ratio:g}")
    tolerance = _checks.real("rtol", rtol)
    if not 1e-12 <= tolerance <= 1.0:
        raise ValueError(f"rtol must be between 1e-12 and 1 (a relative step of the base), got {tolerance:g}")
    pairs = dim // 2
    _checks.elements("context_length and head_dim", length + 1, pairs)
    if (length + 1) * pairs > BOUND_COSINES:
        raise ValueError(
            f"context_length and head_dim: (context_length + 1) * head_dim / 2 must be <= {BOUND_COSINES} (2**21 "
            f"cosines per trial base, a few seconds in all), got {(length + 1) * pairs}"
        )
    return length, dim, ratio, tolerance, -2.0 * np.arange(pairs) / dim


def _bisect_bases(low: float, high: float, tolerance: float, feasible: Callable[[float], bool]) -> float:
    """Bisect on ``ln base`` between a failing ``low`` and a passing ``high`` until they are within a
    ratio of ``1 + tolerance``; the passing end."""
    while high > low * (1.0 + tolerance):
        middle = math.sqrt(low * high)
        if middle <= low or middle >= high:
            break
        if feasible(middle):
            high = middle
        else:
            low = middle
    return high


def rope_base_lower_bound(
    context_length: int, head_dim: int, *, grid_ratio: float = 1.005, rtol: float = 1e-6
) -> float:
    """The smallest RoPE base keeping ``B(m) = sum_i cos(m theta_i) >= 0`` for m = 0, 1, ..., context_length.

    Men et al. (2024), "Base of RoPE Bounds Context Length": with ``theta_i = base ** (-2 i / head_dim)``,
    i < head_dim / 2, the model's ability to attend more to a similar token than to a random
    one at distance m is proportional to ``B(m)`` (``posenc.kernel(m, head_dim, base=base)``),
    and a context length needs it non-negative at every distance. ``theta_0 = 1`` for every
    base, so the other pairs must outweigh ``cos m``: head_dim must be at least 4.

    The feasible bases do not form one interval (at head_dim 128 and 4096 tokens, B stays
    non-negative at base 2.88e4 but not at 3.5e4), so a bisection between far-apart ends need
    not find the smallest. The bases ``grid_ratio ** k`` (k >= 1) are tried in turn, and
    the step from the last infeasible one to the first feasible one is bisected on ``ln base``
    down to a ratio of ``1 + rtol``: the result satisfies ``B(m) >= 0`` at every m, a base
    less than ``1 + rtol`` times smaller does not (or is 1), and no grid base below it is feasible (an
    island narrower than the grid step below it would be missed). The phases are formed in
    float64 as ``m * theta_i``, accurate to about ``m`` ulps, far below the tolerance. A trial
    base costs up to ``(context_length + 1) * head_dim / 2`` cosines; an infeasible one usually
    far fewer, since it is first tested near the distance where the base before it failed;
    ``(context_length + 1) * head_dim / 2`` may be at most ``BOUND_COSINES`` (2**21: 32,767
    tokens at head_dim 128, a few seconds on one core), refused at once beyond, since the scan
    tries thousands of bases and a larger request would run for minutes or hours.

    >>> import posenc
    >>> bound = rope_base_lower_bound(64, 8, rtol=1e-3)
    >>> bool(min(posenc.kernel(range(65), 8, base=bound)) >= 0)
    True
    """
    length, dim, ratio, tolerance, exponents = _bound_arguments(context_length, head_dim, grid_ratio, rtol)
    pairs = dim // 2
    block = max(1, 2**16 // pairs)
    # Neighbouring bases fail at nearby distances, so each trial looks first at this many
    # distances around the one where the previous base failed: most trials stop there, at a
    # sixteenth of a block's cosines.
    window = max(1, block // 16)
    last_failure = [0]

    def first_negative(start: int, stop: int) -> int | None:
        m = np.arange(start, stop, dtype=np.float64)
        negative = np.flatnonzero(np.cos(np.multiply.outer(m, theta[0])).sum(axis=-1) < 0.0)
        return start + int(negative[0]) if negative.size else None

    theta = [np.empty(0)]

    def feasible(base: float) -> bool:
        theta[0] = base**exponents
        near = max(0, min(last_failure[0] - window // 2, length + 1 - window))
        found = first_negative(near, min(near + window, length + 1))
        for start in range(0, length + 1, block):
            if found is not None:
                break
            found = first_negative(start, min(start + block, length + 1))
        if found is None:
            return True
        last_failure[0] = found
        return False

    # Base 1 itself is excluded (no rotation); the scan starts one grid step above it.
    low, high = 1.0, ratio
    while not feasible(high):
        low, high = high, high * ratio
        if high > 1e300:
            raise ValueError(f"context_length {length} needs a base beyond float64 at head_dim {dim}")
    return _bisect_bases(low, high, tolerance, feasible)


def _bound_sums(exponents: NDArray[np.float64], base: float, length: int) -> NDArray[np.float64]:
    """``B(m) = sum_i cos(m theta_i)`` at m = 0 .. length, ``theta_i = base ** exponents[i]``.

    Each distance is split as m = q s + j with s about the square root of the length, and
    ``cos(m theta) = cos(q s theta) cos(j theta) - sin(q s theta) sin(j theta)``: one product over
    the pairs instead of a cosine per distance and pair, with the same error (a few ulps of the
    phases ``q s theta`` and ``j theta``, as ``m theta`` formed at once has). einsum rather than
    ``@``: a threaded matrix product of this size is many times slower on a busy machine.
    """
    theta = base**exponents
    step = math.isqrt(length) + 1
    coarse = np.multiply.outer(np.arange(0, length + 1, step, dtype=np.float64), theta)
    fine = np.multiply.outer(np.arange(step, dtype=np.float64), theta)
    left = np.concatenate([np.cos(coarse), np.sin(coarse)], axis=-1)
    right = np.concatenate([np.cos(fine), -np.sin(fine)], axis=-1)
    result: NDArray[np.float64] = np.einsum("qp,jp->qj", left, right).ravel()[: length + 1]
    return result


def rope_base_all_pass_bound(
    context_length: int, head_dim: int, *, grid_ratio: float = 1.005, rtol: float = 1e-6
) -> float:
    """The base from which every larger base keeps ``B(m) = sum_i cos(m theta_i) >= 0`` for m = 0 .. context_length.

    The bases that keep Men et al.'s (2024) ``B`` non-negative over a context are not an interval:
    above ``rope_base_lower_bound``, the smallest of them, lie bases that fail again (at head_dim
    128 and 2048 tokens, 15,000 fails though the smallest passing base is below 12,000). This
    function returns the all-pass threshold T, the smallest base such that every base from T up
    passes; ``rope_base_lower_bound(n, d) <= T``, with equality only when the passing bases are
    one interval.

    Every base from a ceiling U up passes, which this function proves rather than samples: with
    ``theta_i(b) = b ** (-2 i / head_dim)`` falling as b grows, a pair whose largest phase
    ``context_length * theta_i(U)`` is at most pi keeps ``cos(m theta_i(b)) >= cos(context_length
    theta_i(U))`` for every b >= U and m <= context_length (cosine falls on [0, pi]); the first pair
    (theta_0 = 1 at every base) is at least the least ``cos m`` over the context; every other pair
    is at least -1. U is the smallest base (to a ratio of 1.001) at which these lower bounds sum to
    at least 0. Below U, the bases ``U / grid_ratio ** k`` are tried downwards until one fails, and
    the step from it to the passing base above is bisected on ``ln base`` down to a ratio of
    ``1 + rtol``: the result passes, a base less than ``1 + rtol`` times smaller fails, and every
    grid base from the result up to U passes (an infeasible island narrower than the grid step
    above the result would be missed, as ``rope_base_lower_bound`` may miss a feasible one). A
    trial base costs about ``(context_length + 1) head_dim`` multiply-adds and
    ``2 sqrt(context_length) head_dim`` cosines and sines; ``(context_length + 1) * head_dim / 2``
    may be at most ``BOUND_COSINES``, as for ``rope_base_lower_bound``.

    >>> import posenc
    >>> threshold = rope_base_all_pass_bound(64, 8, rtol=1e-3)
    >>> bool(threshold >= rope_base_lower_bound(64, 8, rtol=1e-3))
    True
    >>> all(min(posenc.kernel(range(65), 8, base=threshold * k)) >= 0 for k in (1.0, 1.5, 3.0, 1e3))
    True
    """
    length, dim, ratio, tolerance, exponents = _bound_arguments(context_length, head_dim, grid_ratio, rtol)
    least_first_pair = float(np.cos(np.arange(length + 1, dtype=np.float64)).min())

    def certified(base: float) -> bool:
        # The lower bound on B over every base from `base` up and every m <= length (docstring).
        phases = length * base ** exponents[1:]
        slow = phases <= math.pi
        # A margin far above the rounding of the sum, so that a rounded sum never certifies a negative one.
        return least_first_pair + float(np.cos(phases[slow]).sum()) - int(np.count_nonzero(~slow)) >= 1e-9

    def feasible(base: float) -> bool:
        return bool(_bound_sums(exponents, base, length).min() >= 0.0)

    below, ceiling = 1.0, 2.0
    while not certified(ceiling):
        below, ceiling = ceiling, ceiling * ceiling
        if ceiling > 1e300:
            raise ValueError(f"context_length {length} needs a base beyond float64 at head_dim {dim}")
    # The certificate only grows with the base, so bisection finds its smallest base.
    while ceiling > below * 1.001:
        middle = math.sqrt(below * ceiling)
        if certified(middle):
            ceiling = middle
        else:
            below = middle
    low, high = 1.0, ceiling
    while True:
        trial = high / ratio
        if trial <= 1.0:
            break  # base 1 fails: B(2) = (head_dim / 2) cos 2 < 0
        if not feasible(trial):
            low = trial
            break
        high = trial
    return _bisect_bases(low, high, tolerance, feasible)


# ---------------------------------------------------------------------------------------
# Temperature laws


def llama4_query_scale(
    positions: ArrayLike, *, floor_scale: int = 8192, attn_scale: float = 0.1
) -> NDArray[np.float64]:
    """Llama 4's attention temperature: ``ln(floor((t + 1) / floor_scale) + 1) * attn_scale + 1``.

    ``Llama4TextAttention`` multiplies the queries of its NoPE layers (``attn_temperature_tuning``,
    on by default) by this, at the token's index t in the sequence (the cached length plus its
    place in the current input). It is 1 for the first ``floor_scale - 1`` tokens, reaches
    ``1 + attn_scale * ln 2`` at ``t + 1 = floor_scale`` and ``1 + attn_scale * ln(k + 1)`` at
    ``t + 1 = k floor_scale``. Exact here: ``floor`` is integer division.

    >>> llama4_query_scale([0, 8190, 8191, 16383]).round(6).tolist()
    [1.0, 1.0, 1.069315, 1.109861]
    """
    ids = _checks.position_ids(positions, name="positions")
    floor = _checks.integer("floor_scale", floor_scale, minimum=1)
    scale = _checks.real("attn_scale", attn_scale)
    steps = (ids + 1) // floor
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below, by name
        return _checks.finite("attn_scale", np.log1p(steps.astype(np.float64)) * scale + 1.0)


def llama4_beta_query_scale(
    position_ids: ArrayLike, *, beta: float = 0.1, original_max_position_embeddings: int = 16384
) -> NDArray[np.float64]:
    """Ministral 3's (and Mistral 4's) query scale ``1 + beta * ln(1 + floor(t / original_max_position_embeddings))``.

    Read from ``rope_parameters["llama_4_scaling_beta"]`` (0.1 in Ministral 3's default) and
    its ``original_max_position_embeddings`` (16384), it multiplies the rotated queries of
    every layer at position id t. Unlike Llama 4's ``llama4_query_scale`` there is no ``+ 1``
    on the position: the first step comes at t = original_max_position_embeddings.

    >>> llama4_beta_query_scale([0, 16383, 16384]).round(6).tolist()
    [1.0, 1.0, 1.069315]
    """
    ids = _checks.position_ids(position_ids)
    beta = _checks.real("beta", beta)
    original = _checks.integer("original_max_position_embeddings", original_max_position_embeddings, minimum=1)
    steps = ids // original
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below, by name
        return _checks.finite("beta", 1.0 + beta * np.log1p(steps.astype(np.float64)))
