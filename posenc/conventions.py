"""Conventions of well-known libraries, reproduced exactly (tested against them in tests/peers).

* Sinusoidal frequency schedules: the paper's ``omega_r = base ** (-2 r / d)`` and the
  tensor2tensor/fairseq one, ``omega_r = base ** (-r / (d/2 - 1))`` (lowest frequency exactly
  1/base), with fairseq's rules: sines then cosines ("halves"), a zero channel appended for an
  odd width, position ids from padded token ids starting at ``padding_idx + 1``, and a zero row
  for padding (M2M100, fairseq's ``SinusoidalPositionalEmbedding``).
* RoPE: the fixed permutation between the interleaved pairing (RoFormer, GPT-J, Meta's LLaMA
  code) and the halves pairing (GPT-NeoX, Hugging Face LLaMA), partial rotation of the first
  ``rotary_dim`` channels, and the inverse frequencies of the ``rope_scaling`` variants of
  Hugging Face transformers: linear, dynamic NTK, YaRN (with its attention factor), llama3 and
  longrope (computed by ``posenc.long_context.longrope_frequencies``); the remaining type,
  "proportional", is ``posenc.architectures.proportional_rope_frequencies``.
* T5's relative-position buckets, bidirectional and causal.

Every function checks its arguments and names the offending one in its error; as everywhere in
posenc, NaN and infinity in an array argument (``x``, ``inv_freq``) are refused, not passed
through, and so is a result that would overflow float64. The sines and
cosines are computed with posenc's accurate phases (see ``posenc._precision``), so they are
within 1e-15 of the exact values for position ids below 2**31, and every frequency table is
correctly rounded.

``sinusoidal_embedding`` and ``schedule_frequencies`` are the one implementation of their idea
in posenc: ``posenc.sinusoidal`` and ``posenc.frequencies`` are these at the paper's settings.
``apply_rope`` and ``rope_frequencies`` are those of ``posenc.rotary``, re-exported here (as
``posenc.rope`` is ``apply_rope`` at the paper's settings).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from . import _checks, _precision, long_context
from .rotary import _rope_dim, _scaled_by

# RoPE's rotation and its frequencies live in posenc.rotary, which long_context builds on too;
# these names are re-exported here (``as`` marks that), where readers of other libraries' conventions look for them.
from .rotary import DEFAULT_BASE as DEFAULT_BASE
from .rotary import apply_rope as apply_rope
from .rotary import rope_frequencies as rope_frequencies
from .rotary import rope_sincos as rope_sincos
from .rotary import rotate_pairs as rotate_pairs

SCHEDULES = ("paper", "fairseq")
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "llama3", "longrope")

# ---------------------------------------------------------------------------------------
# Sinusoidal: schedules, fairseq's embedding and its position ids


def _schedule_parameters(width: int, schedule: str) -> tuple[int, int, int]:
    """(numerator step, denominator, pairs) with omega_r = base ** (-r * step / denominator)."""
    pairs = width // 2
    return (2, 2 * pairs, pairs) if schedule == "paper" else (1, pairs - 1, pairs)


def schedule_frequencies(width: int, *, base: float = DEFAULT_BASE, schedule: str = "paper") -> NDArray[np.float64]:
    """Angular frequency of each of the ``width // 2`` pairs under a schedule, correctly rounded.

    "paper": ``omega_r = base ** (-2 r / d)`` with d the even part of ``width`` (the paper,
    DistilBERT, Marian, posenc.frequencies). "fairseq": ``omega_r = base ** (-r / (h - 1))``
    with ``h = width // 2`` (tensor2tensor, fairseq, M2M100): the last pair has frequency
    exactly ``1 / base``.

    >>> schedule_frequencies(8, schedule="fairseq").round(6).tolist()
    [1.0, 0.046416, 0.002154, 0.0001]
    """
    schedule = _checks.choice("schedule", schedule, SCHEDULES)
    width = _checks.embedding_width(width, schedule)
    base = _checks.base(base)
    return _precision.power_values(base, *_schedule_parameters(width, schedule)).copy()


def sinusoidal_embedding(
    position_ids: ArrayLike,
    width: int,
    *,
    base: float = DEFAULT_BASE,
    schedule: str = "paper",
    layout: str = "interleaved",
    padding_idx: int | None = None,
    dtype: DTypeLike = np.float64,
) -> NDArray[np.floating[Any]]:
    """Sinusoidal rows for the given ids under any schedule and layout, shape ``(n, width)``.

    An odd ``width`` gets the encoding of ``width - 1`` channels followed by a zero channel
    (fairseq's rule). Rows whose id equals ``padding_idx`` are zero (fairseq zeroes the table
    row of the padding index). With the defaults this is ``posenc.sinusoidal``.

    >>> sinusoidal_embedding([0, 1, 2], 5, schedule="fairseq", layout="halves", padding_idx=1).round(3).tolist()
    [[0.0, 0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0], [0.909, 0.0, -0.416, 1.0, 0.0]]
    """
    ids = _checks.position_ids(position_ids)
    schedule = _checks.choice("schedule", schedule, SCHEDULES)
    width = _checks.embedding_width(width, schedule)
    base = _checks.base(base)
    layout = _checks.layout(layout)
    padding_idx = _checks.optional_index("padding_idx", padding_idx)
    dtype = _checks.float_dtype(dtype)
    _checks.elements("position_ids and width", ids.size, width)
    step, denominator, pairs = _schedule_parameters(width, schedule)
    out = np.zeros((ids.size, width), dtype=dtype)
    if layout == "halves":
        sines, cosines = out[:, :pairs], out[:, pairs : 2 * pairs]
    else:
        sines, cosines = out[:, 0 : 2 * pairs : 2], out[:, 1 : 2 * pairs : 2]
    _precision.sincos_into(ids, _precision.power_turns(base, step, denominator, pairs), sines, cosines)
    if padding_idx is not None:
        out[ids == padding_idx] = 0
    return out


def fairseq_position_ids(input_ids: ArrayLike, padding_idx: int, *, cache_length: int = 0) -> NDArray[np.int64]:
    """fairseq's position ids from token ids: ``padding_idx + 1`` onward, padding keeps ``padding_idx``.

    Along the last axis, the k-th non-padding token (k = 1, 2, ...) gets
    ``padding_idx + cache_length + k`` and every padding token gets ``padding_idx`` (whose
    embedding row is zero). ``cache_length`` counts tokens already decoded (a KV cache).
    Same shape as ``input_ids``, int64. Every id must stay below 2**53, like any position id.

    >>> fairseq_position_ids([[5, 6, 7, 1, 1], [1, 1, 8, 9, 4]], padding_idx=1).tolist()
    [[2, 3, 4, 1, 1], [1, 1, 2, 3, 4]]
    """
    tokens = _checks.token_ids(input_ids)
    limit = _checks.EXACT_INTEGER_LIMIT - 1
    padding_idx = _checks.integer("padding_idx", padding_idx, minimum=0, maximum=limit)
    cache_length = _checks.integer("cache_length", cache_length, minimum=0, maximum=limit)
    # NumPy's stubs type an array comparison as Any; the mask is int64, and so is all that follows from it.
    mask: NDArray[np.int64] = (tokens != padding_idx).astype(np.int64)
    counts = np.cumsum(mask, axis=-1)
    largest = padding_idx + cache_length + (int(counts.max()) if counts.size else 0)  # Python int: no wrap
    if largest > limit:
        raise ValueError(
            f"padding_idx + cache_length + tokens per row must stay below 2**53 (position ids exact in float64), "
            f"got {padding_idx} + {cache_length} + {largest - padding_idx - cache_length}"
        )
    positions: NDArray[np.int64] = (counts + cache_length) * mask + padding_idx
    return positions


def fairseq_embedding(
    input_ids: ArrayLike,
    width: int,
    *,
    padding_idx: int,
    cache_length: int = 0,
    base: float = DEFAULT_BASE,
    dtype: DTypeLike = np.float64,
) -> NDArray[np.floating[Any]]:
    """fairseq/M2M100 sinusoidal positions for token ids, shape ``input_ids.shape + (width,)``.

    Position ids from ``fairseq_position_ids``, the fairseq schedule, halves layout, a zero
    channel for an odd width and zero rows for padding tokens.
    """
    positions = fairseq_position_ids(input_ids, padding_idx, cache_length=cache_length)
    rows = sinusoidal_embedding(
        positions.ravel(), width, base=base, schedule="fairseq", layout="halves", padding_idx=padding_idx, dtype=dtype
    )
    return rows.reshape(positions.shape + (rows.shape[-1],))


# ---------------------------------------------------------------------------------------
# RoPE: pairings, partial rotation, scaled inverse frequencies


def rope_permutation(
    head_dim: int, *, n_heads: int = 1, rotary_dim: int | None = None, inverse: bool = False
) -> NDArray[np.int64]:
    """The row permutation taking W_Q/W_K from the interleaved pairing to the halves pairing.

    Within each head, channel ``2r`` (interleaved pair r, first member) moves to ``r`` and
    ``2r + 1`` moves to ``r + rotary_dim/2``; channels past ``rotary_dim`` stay. For a weight
    ``W`` of shape ``(n_heads * head_dim, hidden)`` (PyTorch ``Linear`` layout) with interleaved
    pairs, ``W[perm]`` is the same projection for the halves pairing, and
    ``rope(q, ids)[..., perm] == rope(q[..., perm], ids, layout="halves")``; this is how
    checkpoints are converted from Meta's LLaMA code to Hugging Face's. ``inverse=True`` gives
    the permutation back (halves to interleaved).

    >>> rope_permutation(8).tolist()
    [0, 2, 4, 6, 1, 3, 5, 7]
    >>> rope_permutation(8, inverse=True).tolist()
    [0, 4, 1, 5, 2, 6, 3, 7]
    """
    head_dim = _checks.width(head_dim, name="head_dim")
    n_heads = _checks.integer("n_heads", n_heads, minimum=1, maximum=None)  # bounded by the element check
    rotary_dim = _checks.rotary_dim(rotary_dim, head_dim, "head_dim")
    inverse = _checks.boolean("inverse", inverse)
    _checks.elements("n_heads and head_dim", n_heads, head_dim)
    one = np.concatenate([np.arange(0, rotary_dim, 2), np.arange(1, rotary_dim, 2), np.arange(rotary_dim, head_dim)])
    if inverse:
        one = np.argsort(one)
    # NumPy's stubs lose the dtype of this sum (platform int plus int64), which astype makes int64.
    permutation: NDArray[np.int64] = (np.arange(n_heads)[:, None] * head_dim + one[None, :]).ravel().astype(np.int64)
    return permutation


def linear_scaled_frequencies(dim: int, *, base: float = DEFAULT_BASE, factor: float) -> NDArray[np.float64]:
    """Position interpolation ("linear"): every inverse frequency divided by ``factor``."""
    factor = _checks.real("factor", factor, minimum=0.0, strict=True)
    return _scaled_by(factor, lambda: rope_frequencies(dim, base=base) / factor)


def dynamic_ntk_frequencies(
    dim: int,
    *,
    base: float = DEFAULT_BASE,
    factor: float,
    max_position_embeddings: int,
    seq_len: int | None = None,
) -> NDArray[np.float64]:
    """Dynamic NTK ("dynamic") inverse frequencies for a sequence of ``seq_len`` tokens.

    As Hugging Face transformers computes them: with ``L = max(seq_len, max_position_embeddings)``
    (``seq_len`` None means ``max_position_embeddings``), the base becomes
    ``base * (factor * L / max_position_embeddings - (factor - 1)) ** (dim / (dim - 2))``, so
    nothing changes until the sequence outgrows ``max_position_embeddings``.
    """
    dim = _rope_dim(dim)
    if dim < 4:
        raise ValueError(f"dim must be >= 4 for dynamic NTK scaling (its exponent divides by dim - 2), got {dim}")
    base = _checks.base(base)
    factor = _checks.real("factor", factor, minimum=0.0, strict=True)
    max_position_embeddings = _checks.integer("max_position_embeddings", max_position_embeddings, minimum=1)
    length = max_position_embeddings if seq_len is None else _checks.integer("seq_len", seq_len, minimum=0)
    length = max(length, max_position_embeddings)
    stretch = factor * length / max_position_embeddings - (factor - 1)
    if not math.isfinite(stretch):
        # transformers' form overflows for a huge factor even where the stretch is small (at
        # length == max_position_embeddings it is 1); the same value in a form that does not.
        stretch = factor * ((length - max_position_embeddings) / max_position_embeddings) + 1
    try:
        new_base = base * stretch ** (dim / (dim - 2)) if stretch > 0 else 0.0
    except OverflowError:
        new_base = math.inf
    if not (math.isfinite(new_base) and new_base > 1):
        # Exactly the base is > 1 and stretch >= 1; only float64 rounding of a huge factor gets here.
        raise ValueError(
            f"factor must keep the scaled base finite and > 1 in float64: factor {factor:g} at seq_len {length} "
            f"gives stretch {stretch:g} and base {new_base:g}"
        )
    return rope_frequencies(dim, base=new_base)


def yarn_frequencies(
    dim: int,
    *,
    base: float = DEFAULT_BASE,
    factor: float,
    original_max_position_embeddings: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
    attention_factor: float | None = None,
    mscale: float | None = None,
    mscale_all_dim: float | None = None,
) -> tuple[NDArray[np.float64], float]:
    """YaRN inverse frequencies and attention factor, as Hugging Face transformers computes them.

    Pair r keeps its frequency (extrapolation) below the correction range, is divided by
    ``factor`` (interpolation) above it, and blends linearly inside it. The range runs from
    the pair index at which ``original_max_position_embeddings`` tokens make ``beta_fast``
    rotations to the one where they make ``beta_slow``, ``dim * ln(L / (2 pi beta)) / (2 ln
    base)``, floored and ceiled when ``truncate``, clipped to [0, dim - 1]
    (``posenc.long_context.yarn_ramp`` gives each pair's blend). The attention factor
    (multiplying cos and sin) is ``posenc.long_context.yarn_attention_factor``:
    ``0.1 ln(factor) + 1`` for factor > 1, else 1, or
    ``mscale(factor, mscale) / mscale(factor, mscale_all_dim)`` when both are given, unless
    ``attention_factor`` is given. Returns ``(inv_freq, attention_factor)``.
    """
    dim = _rope_dim(dim)
    base = _checks.base(base)
    factor = _checks.real("factor", factor, minimum=0.0, strict=True)
    original = _checks.integer("original_max_position_embeddings", original_max_position_embeddings, minimum=1)
    beta_fast = _checks.real("beta_fast", beta_fast, minimum=0.0, strict=True)
    beta_slow = _checks.real("beta_slow", beta_slow, minimum=0.0, strict=True)
    truncate = _checks.boolean("truncate", truncate)
    if attention_factor is not None:
        attention_factor = _checks.real("attention_factor", attention_factor)
    else:
        attention_factor = long_context.yarn_attention_factor(factor, mscale=mscale, mscale_all_dim=mscale_all_dim)
    ramp = long_context.yarn_ramp(
        dim,
        base=base,
        original_max_position_embeddings=original,
        beta_fast=beta_fast,
        beta_slow=beta_slow,
        truncate=truncate,
    )
    extrapolation = rope_frequencies(dim, base=base)
    keep = 1.0 - ramp  # weight of the unscaled frequency, as transformers blends them
    blended = _scaled_by(factor, lambda: (extrapolation / factor) * (1.0 - keep) + extrapolation * keep)
    return blended, float(attention_factor)


def llama3_frequencies(
    dim: int,
    *,
    base: float = DEFAULT_BASE,
    factor: float,
    low_freq_factor: float,
    high_freq_factor: float,
    original_max_position_embeddings: int,
) -> NDArray[np.float64]:
    """Llama 3.1's inverse frequencies ("llama3").

    With ``L = original_max_position_embeddings`` and wavelength ``2 pi / omega``: wavelengths
    longer than ``L / low_freq_factor`` are divided by ``factor``, shorter than
    ``L / high_freq_factor`` kept, and in between blended with
    ``s = (L / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)`` as
    ``(1 - s) omega / factor + s omega``.
    """
    factor = _checks.real("factor", factor, minimum=0.0, strict=True)
    low_freq_factor = _checks.real("low_freq_factor", low_freq_factor, minimum=0.0, strict=True)
    high_freq_factor = _checks.real("high_freq_factor", high_freq_factor, minimum=0.0, strict=True)
    if high_freq_factor <= low_freq_factor:
        raise ValueError(f"high_freq_factor must be > low_freq_factor, got {high_freq_factor:g} <= {low_freq_factor:g}")
    original = _checks.integer("original_max_position_embeddings", original_max_position_embeddings, minimum=1)
    omega = rope_frequencies(dim, base=base)
    wavelength = 2 * math.pi / omega
    smooth = (original / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
    medium = (wavelength >= original / high_freq_factor) & (wavelength <= original / low_freq_factor)

    def scaled() -> np.ndarray:
        blended = (1 - smooth) * omega / factor + smooth * omega
        out = np.where(wavelength > original / low_freq_factor, omega / factor, omega)
        return np.where(medium, blended, out)

    return _scaled_by(factor, scaled)


_SCALING_KEYS = {
    "default": set(),
    "linear": {"factor"},
    "dynamic": {"factor"},
    "yarn": {
        "factor",
        "original_max_position_embeddings",
        "beta_fast",
        "beta_slow",
        "truncate",
        "attention_factor",
        "mscale",
        "mscale_all_dim",
    },
    "llama3": {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
    "longrope": {"factor", "short_factor", "long_factor", "original_max_position_embeddings", "attention_factor"},
}


def rope_scaling_frequencies(
    dim: int,
    rope_scaling: Mapping[str, Any] | None = None,
    *,
    base: float | None = None,
    max_position_embeddings: int | None = None,
    seq_len: int | None = None,
) -> tuple[NDArray[np.float64], float]:
    """Inverse frequencies and attention factor for a Hugging Face ``rope_scaling`` dict.

    ``rope_scaling`` is None or a mapping with ``"rope_type"`` (or the older ``"type"``) in
    "default", "linear", "dynamic", "yarn", "llama3", "longrope" and that variant's keys;
    ``"rope_theta"`` in it is used as ``base`` when ``base`` is not given (default 10000).
    ``max_position_embeddings`` and ``seq_len`` are used by "dynamic" and "longrope" only.
    Returns ``(inv_freq, attention_factor)``; the factor is 1 except for YaRN and LongRoPE.

    >>> inv, factor = rope_scaling_frequencies(8, {"rope_type": "linear", "factor": 4.0})
    >>> inv.tolist(), factor
    ([0.25, 0.025, 0.0025, 0.00025], 1.0)
    """
    if rope_scaling is None:
        rope_scaling = {"rope_type": "default"}
    if not isinstance(rope_scaling, Mapping):
        raise TypeError(f"rope_scaling must be a mapping (a dict) or None, got {type(rope_scaling).__name__}")
    params = dict(rope_scaling)
    odd = next((key for key in params if not isinstance(key, str)), None)
    if odd is not None:
        raise TypeError(
            f"rope_scaling's keys must be strings (a config's names), got {odd!r} of type {type(odd).__name__}"
        )
    kind = params.pop("rope_type", None)
    legacy = params.pop("type", None)
    kind = kind if kind is not None else legacy
    if kind is None:
        kind = "default"
    if kind not in ROPE_TYPES:
        raise ValueError(f"rope_scaling's rope_type must be one of {', '.join(map(repr, ROPE_TYPES))}, got {kind!r}")
    theta = params.pop("rope_theta", None)
    if base is None:
        base = DEFAULT_BASE if theta is None else theta
    unknown = sorted(set(params) - _SCALING_KEYS[kind])
    if unknown:
        raise ValueError(f"rope_scaling has keys that {kind!r} does not use: {', '.join(unknown)}")
    required = {
        "linear": ["factor"],
        "dynamic": ["factor"],
        "yarn": ["factor", "original_max_position_embeddings"],
        "llama3": sorted(_SCALING_KEYS["llama3"]),
        "longrope": ["long_factor", "original_max_position_embeddings", "short_factor"],
    }.get(kind, [])
    missing = [key for key in required if key not in params]
    if missing:
        raise ValueError(f"rope_scaling of type {kind!r} needs {', '.join(missing)}")
    if kind == "default":
        return rope_frequencies(dim, base=base), 1.0
    if kind == "linear":
        return linear_scaled_frequencies(dim, base=base, factor=params["factor"]), 1.0
    if kind == "dynamic":
        if max_position_embeddings is None:
            raise ValueError("max_position_embeddings is required for dynamic scaling")
        return dynamic_ntk_frequencies(
            dim, base=base, factor=params["factor"], max_position_embeddings=max_position_embeddings, seq_len=seq_len
        ), 1.0
    if kind == "yarn":
        params = {key: value for key, value in params.items() if value is not None}
        return yarn_frequencies(dim, base=base, **params)
    if kind == "longrope":
        params = {key: value for key, value in params.items() if value is not None}
        return long_context.longrope_frequencies(
            dim, base=base, max_position_embeddings=max_position_embeddings, seq_len=seq_len, **params
        )
    return llama3_frequencies(dim, base=base, **params), 1.0


# ---------------------------------------------------------------------------------------
# T5 relative-position buckets


def t5_relative_position_bucket(
    relative_position: ArrayLike,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> NDArray[np.int64] | int:
    """T5's bucket of each relative position ``key_position - query_position``.

    Bidirectional: half the buckets are for keys after the query. Of the (remaining) ``B``
    buckets, distances below ``B/2`` get one bucket each; larger ones share logarithmically
    wider buckets up to ``max_distance``, beyond which all fall in the last bucket. Causal
    (``bidirectional=False``): keys after the query all map to bucket 0. The logarithm is
    evaluated in float32 step by step as T5 does, so distances whose exact value falls on a
    bucket edge land where T5's do. Returns an int64 array of the input's shape (an ``int``
    for a scalar).

    >>> t5_relative_position_bucket([-200, -20, -1, 0, 1, 20, 200]).tolist()
    [15, 10, 1, 0, 17, 26, 31]
    """
    array = _checks.relative_positions(relative_position)
    bidirectional = _checks.boolean("bidirectional", bidirectional)
    num_buckets = _checks.integer("num_buckets", num_buckets, minimum=4 if bidirectional else 2)
    buckets = num_buckets // 2 if bidirectional else num_buckets
    max_exact = buckets // 2
    max_distance = _checks.integer("max_distance", max_distance)
    if max_distance <= max_exact:
        raise ValueError(
            f"max_distance must be > {max_exact} (the last exact distance at num_buckets {num_buckets}), "
            f"got {max_distance}"
        )
    position = array.astype(np.int64)
    result = np.zeros(position.shape, dtype=np.int64)
    if bidirectional:
        result += (position > 0) * buckets
        distance = np.abs(position)
    else:
        distance = -np.minimum(position, 0)
    # The float32 steps of T5: log(float32(n) / max_exact) / float32(log(max_distance / max_exact))
    # * (buckets - max_exact), each rounded to float32, then truncated to an integer.
    f32 = np.float32
    ratio = (distance.astype(f32) / f32(max_exact)).astype(f32)
    with np.errstate(divide="ignore"):
        log_ratio = np.log(ratio.astype(np.float64)).astype(f32)  # float32 log, correctly rounded
    scaled = (log_ratio.astype(np.float64) / float(f32(math.log(max_distance / max_exact)))).astype(f32)
    scaled = (scaled.astype(np.float64) * (buckets - max_exact)).astype(f32)
    # Capped before the integer conversion: a max_distance just above max_exact makes the float32
    # log of their ratio tiny and ``scaled`` huge or infinite, which int64 would wrap.
    scaled = np.minimum(np.where(distance < max_exact, 0, scaled), buckets)
    large = np.minimum(max_exact + scaled.astype(np.int64), buckets - 1)
    result += np.where(distance < max_exact, distance, large)
    return int(result) if result.ndim == 0 else result
