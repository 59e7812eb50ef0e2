"""Long context with RoPE: which pairs outgrow the training length, and the pieces of the fixes.

* ``pair_index_at_turns`` and ``critical_dimension``: the (real) pair index at which a window
  of ``length`` positions holds a given number of turns; past the critical dimension (one turn)
  a pair's wavelength exceeds the training length, so training never showed it a full circle.
* ``yarn_ramp`` and ``yarn_attention_factor``: YaRN's per-pair blend between keeping a
  frequency and dividing it by the scale, and its attention factor ``0.1 ln s + 1``, the two
  pieces ``posenc.conventions.yarn_frequencies`` is built from.
* ``longrope_frequencies``: LongRoPE's per-pair rescale factors (short and long) and its
  attention factor, as Hugging Face transformers computes them.
* ``xpos_scales`` and ``apply_xpos``: xPos's per-pair decay, ``zeta_r ** (t / scale_base)`` on
  queries and its inverse on keys, so the score still depends on the offset alone.
* ``rerotate_keys``: cached keys rotated at positions p moved to p + delta, using
  ``R(delta) R(p) = R(p + delta)`` with posenc's accurate phases.
* ``streaming_cache``: the tokens an attention-sink cache keeps and the position ids it gives them.
* ``attention_entropy``: the entropy of softmax attention (``ln n`` for n equal scores).

Every function checks its arguments through ``posenc._checks`` and names the offending one. As
everywhere in posenc, NaN and infinity in an array argument (keys, ``x``, factors) are refused
rather than passed through (``-inf`` in attention scores is the one exception: a masked key),
and a result that would overflow float64 is refused instead of returned.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

# RoPE's rotation from posenc.rotary: posenc.conventions builds yarn_frequencies from the YaRN
# pieces here, so this module may not import conventions.
from . import _checks, rotary
from .rotary import DEFAULT_BASE

#: xPos's default ``gamma`` (torchscale's 0.4) and ``scale_base`` (512).
XPOS_GAMMA = 0.4
XPOS_SCALE_BASE = 512.0


def pair_index_at_turns(dim: int, length: int, turns: float, *, base: float = DEFAULT_BASE) -> float:
    """The real pair index r at which ``length`` positions make exactly ``turns`` full turns.

    Pair r turns ``length / (2 pi base ** (2 r / dim))`` times over ``length`` positions; that
    equals ``turns`` at ``r = dim * ln(length / (2 pi turns)) / (2 ln base)``. Pairs past it make
    fewer turns. YaRN's correction range is this at ``beta_fast`` and ``beta_slow`` turns.

    >>> round(pair_index_at_turns(128, 4096, 32), 4)
    20.9445
    """
    dim = _checks.width(dim, name="dim")
    length = _checks.integer("length", length, minimum=1)
    turns = _checks.real("turns", turns, minimum=0.0, strict=True)
    base = _checks.base(base)
    return _pair_index(dim, length, turns, base, "turns")


def _pair_index(dim: int, length: int, turns: float, base: float, turns_name: str) -> float:
    # The expression of transformers' YaRN correction dimension, operation for operation.
    ratio = length / (turns * 2 * math.pi)
    if not (math.isfinite(ratio) and ratio > 0):
        raise ValueError(
            f"{turns_name} must make length / (2 pi {turns_name}) finite and > 0 in float64 "
            f"(length {length}), got {turns!r}"
        )
    return dim * math.log(ratio) / (2 * math.log(base))


def critical_dimension(dim: int, training_length: int, *, base: float = DEFAULT_BASE) -> float:
    """The real pair index past which a pair's wavelength exceeds ``training_length``.

    ``r_c = dim * ln(training_length / (2 pi)) / (2 ln base)`` (derivation
    ``critical-dimension``): pair r has wavelength ``2 pi base ** (2 r / dim)``, longer than
    the training length exactly when ``r > r_c``. Those pairs never complete a turn in training.

    >>> import posenc
    >>> r_c = critical_dimension(128, 4096)
    >>> round(r_c, 3), int((posenc.wavelengths(128) > 4096).sum())
    (45.027, 18)
    """
    training_length = _checks.integer("training_length", training_length, minimum=1)
    return pair_index_at_turns(dim, training_length, 1.0, base=base)


def yarn_correction_range(
    dim: int,
    *,
    base: float = DEFAULT_BASE,
    original_max_position_embeddings: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
) -> tuple[float, float]:
    """YaRN's ramp ends ``(low, high)`` as transformers and the YaRN authors' code compute them.

    ``low`` is the pair index at which the training length holds ``beta_fast`` turns and
    ``high`` the one at ``beta_slow`` turns (``pair_index_at_turns``), floored and ceiled when
    ``truncate``, then clipped to ``[0, dim - 1]``; equal ends are moved 0.001 apart, as in
    transformers, so the ramp never divides by zero. The authors' ``find_correction_range``
    always rounds (it has no ``truncate``); both then ramp linearly in the pair index, where the
    paper's formula ramps linearly in the number of turns.
    """
    original = _checks.integer("original_max_position_embeddings", original_max_position_embeddings, minimum=1)
    beta_fast = _checks.real("beta_fast", beta_fast, minimum=0.0, strict=True)
    beta_slow = _checks.real("beta_slow", beta_slow, minimum=0.0, strict=True)
    truncate = _checks.boolean("truncate", truncate)
    dim = _checks.width(dim, name="dim")
    base = _checks.base(base)
    low = _pair_index(dim, original, beta_fast, base, "beta_fast")
    high = _pair_index(dim, original, beta_slow, base, "beta_slow")
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    return low, high


def yarn_ramp(
    dim: int,
    *,
    base: float = DEFAULT_BASE,
    original_max_position_embeddings: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
) -> NDArray[np.float64]:
    """YaRN's interpolation weight of each pair: 0 keeps the frequency, 1 divides it by the scale.

    ``clip((r - low) / (high - low), 0, 1)`` with ``(low, high)`` from
    ``yarn_correction_range``; the scaled frequency is ``(1 - w) omega + w omega / s``
    (derivation ``yarn-ramp-ends``). The paper's ramp gamma is ``1 - w``. Shape ``(dim // 2,)``.

    >>> yarn_ramp(16, base=10000.0, original_max_position_embeddings=64, beta_fast=4).round(3).tolist()
    [0.0, 0.333, 0.667, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    low, high = yarn_correction_range(
        dim,
        base=base,
        original_max_position_embeddings=original_max_position_embeddings,
        beta_fast=beta_fast,
        beta_slow=beta_slow,
        truncate=truncate,
    )
    return np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)


def _yarn_mscale(scale: float, coefficient: float = 1.0) -> float:
    return 1.0 if scale <= 1 else 0.1 * coefficient * math.log(scale) + 1.0


def yarn_attention_factor(factor: float, *, mscale: float | None = None, mscale_all_dim: float | None = None) -> float:
    """YaRN's attention factor: ``0.1 ln(factor) + 1`` for factor > 1, else 1.

    It multiplies the rotated queries and keys (transformers folds it into cos and sin), so the
    logits are multiplied by its square: the paper's temperature t with ``sqrt(1/t) = 0.1 ln s + 1``.
    With both ``mscale`` and ``mscale_all_dim`` (DeepSeek's configs) it is the ratio of the two
    scales ``0.1 * c * ln(factor) + 1`` at ``c = mscale`` and ``c = mscale_all_dim``.

    >>> round(yarn_attention_factor(4.0), 6)
    1.138629
    """
    factor = _checks.real("factor", factor, minimum=0.0, strict=True)
    if mscale is not None:
        mscale = _checks.real("mscale", mscale)
    if mscale_all_dim is not None:
        mscale_all_dim = _checks.real("mscale_all_dim", mscale_all_dim)
    if not (mscale and mscale_all_dim):
        return _yarn_mscale(factor)
    denominator = _yarn_mscale(factor, mscale_all_dim)
    if denominator == 0:
        raise ValueError(
            f"mscale_all_dim must not make its scale 0.1 * mscale_all_dim * ln(factor) + 1 zero "
            f"(the attention factor divides by it), got mscale_all_dim {mscale_all_dim:g} with factor {factor:g}"
        )
    ratio = _yarn_mscale(factor, mscale) / denominator
    if not math.isfinite(ratio):
        raise ValueError(
            f"mscale and mscale_all_dim must give a finite attention factor, got mscale {mscale:g}, "
            f"mscale_all_dim {mscale_all_dim:g} with factor {factor:g}"
        )
    return ratio


def longrope_frequencies(
    dim: int,
    *,
    base: float = DEFAULT_BASE,
    short_factor: ArrayLike,
    long_factor: ArrayLike,
    original_max_position_embeddings: int,
    max_position_embeddings: int | None = None,
    factor: float | None = None,
    attention_factor: float | None = None,
    seq_len: int | None = None,
) -> tuple[NDArray[np.float64], float]:
    """LongRoPE ("longrope") inverse frequencies and attention factor, as transformers computes them.

    Pair r's frequency ``base ** (-2 r / dim)`` is divided by its own rescale factor: from
    ``long_factor`` when ``seq_len`` exceeds ``original_max_position_embeddings`` (L), from
    ``short_factor`` otherwise (``seq_len`` None counts as short). The scale s is ``factor``, or
    ``max_position_embeddings / L`` when ``factor`` is None (Phi-3's configs); the attention
    factor is ``sqrt(1 + ln s / ln L)`` for s > 1, else 1, unless ``attention_factor`` is given.
    Returns ``(inv_freq, attention_factor)``. As in transformers, every position is scaled: the
    paper's unscaled first positions are not part of this form, and the short-to-long switch
    means keys rotated before a sequence passes L do not match queries rotated after it.

    >>> inv, scale = longrope_frequencies(4, short_factor=[1, 1], long_factor=[1, 4],
    ...     original_max_position_embeddings=4096, max_position_embeddings=131072, seq_len=8192)
    >>> inv.tolist(), round(scale, 6)
    ([1.0, 0.0025], 1.190238)
    """
    dim = rotary._rope_dim(dim)
    pairs = dim // 2
    short = _checks.pair_factors("short_factor", short_factor, pairs)
    long = _checks.pair_factors("long_factor", long_factor, pairs)
    original = _checks.integer("original_max_position_embeddings", original_max_position_embeddings, minimum=2)
    if seq_len is not None:
        seq_len = _checks.integer("seq_len", seq_len, minimum=0)
    if factor is None:
        if max_position_embeddings is None:
            raise ValueError("max_position_embeddings is required when factor is not given (the scale is their ratio)")
        # Both are integers below 2**53, so their ratio is a positive finite float: nothing to
        # check under the name of a factor the caller never passed.
        max_position_embeddings = _checks.integer("max_position_embeddings", max_position_embeddings, minimum=1)
        factor = max_position_embeddings / original
    else:
        factor = _checks.real("factor", factor, minimum=0.0, strict=True)
    if attention_factor is None:
        attention_factor = 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(original))
    attention_factor = _checks.real("attention_factor", attention_factor)
    use_long = bool(seq_len and seq_len > original)
    chosen = long if use_long else short
    inv_freq = rotary._scaled_by(
        chosen,
        lambda: rotary.rope_frequencies(dim, base=base) / chosen,
        "long_factor" if use_long else "short_factor",
    )
    return inv_freq, attention_factor


def xpos_scales(
    position_ids: ArrayLike,
    dim: int,
    *,
    scale_base: float = XPOS_SCALE_BASE,
    gamma: float = XPOS_GAMMA,
) -> NDArray[np.float64]:
    """xPos's factor of each pair at each position, ``zeta_r ** (t / scale_base)``, shape ``(n, dim // 2)``.

    ``zeta_r = (2 r + gamma dim) / ((1 + gamma) dim)`` lies in ``(0, 1)``, smallest for the
    fastest pair. xPos multiplies a rotated query at t by this and a rotated key at t by its
    inverse, so their score carries ``zeta_r ** ((t_q - t_k) / scale_base)``: a decay in the
    offset alone (derivation ``xpos-relative``). Position ids may be any integers (torchscale
    centres them on zero), below 2**53 in magnitude.

    >>> xpos_scales([0, 512], 4)[1].round(4).tolist()
    [0.2857, 0.6429]
    """
    ids = _checks.offsets(position_ids, name="position_ids")
    if ids.ndim != 1:
        raise ValueError(f"position_ids must be one-dimensional, got shape {ids.shape}")
    dim = _checks.width(dim, name="dim")
    scale_base = _checks.real("scale_base", scale_base, minimum=0.0, strict=True)
    gamma = _checks.real("gamma", gamma, minimum=0.0, strict=True)
    _checks.elements("position_ids and dim", ids.size, dim // 2)
    if gamma * dim < _checks.MAX_FLOAT:
        zeta = (np.arange(0, dim, 2, dtype=np.float64) + gamma * dim) / ((1 + gamma) * dim)
    else:
        # gamma * dim overflows (inf / inf); dividing through by dim first gives the same zeta,
        # which rounds to 1 at such a gamma.
        zeta = (np.arange(0, dim, 2, dtype=np.float64) / dim + gamma) / (1 + gamma)
    with np.errstate(over="raise", under="ignore"):
        try:
            return zeta[None, :] ** (ids[:, None] / scale_base)
        except FloatingPointError:
            raise ValueError(
                f"position_ids / scale_base must keep every xPos scale finite in float64, got position "
                f"{float(np.max(np.abs(ids))):.0f} with scale_base {scale_base:g}"
            ) from None


def apply_xpos(
    x: ArrayLike,
    position_ids: ArrayLike,
    *,
    keys: bool = False,
    base: float = DEFAULT_BASE,
    scale_base: float = XPOS_SCALE_BASE,
    gamma: float = XPOS_GAMMA,
    layout: str = "interleaved",
) -> NDArray[np.float64]:
    """xPos: RoPE (``apply_rope``) with both channels of pair r multiplied by ``xpos_scales``.

    Queries (``keys=False``) get ``zeta_r ** (t / scale_base)``, keys the inverse. ``x`` has
    shape ``(..., n, d)`` with d even; ``position_ids`` are non-negative integer ids.
    """
    keys = _checks.boolean("keys", keys)
    ids = _checks.position_ids(position_ids)
    rotated = rotary.apply_rope(x, ids, base=base, layout=layout)
    # A key's factor is the query's at -t: zeta ** (-t / scale_base), checked for overflow alike.
    scales = xpos_scales(-ids if keys else ids, rotated.shape[-1], scale_base=scale_base, gamma=gamma)
    per_channel = np.repeat(scales, 2, axis=-1) if layout == "interleaved" else np.concatenate([scales, scales], -1)
    with np.errstate(over="ignore", invalid="ignore"):
        return _checks.finite("x and position_ids (their xPos scales)", rotated * per_channel)


def rerotate_keys(
    keys: ArrayLike,
    offset: ArrayLike,
    *,
    base: float = DEFAULT_BASE,
    inv_freq: ArrayLike | None = None,
    layout: str = "interleaved",
    rotary_dim: int | None = None,
) -> NDArray[np.float64]:
    """Move RoPE-rotated cached keys from positions p to p + offset without the unrotated keys.

    ``R(offset) R(p) = R(p + offset)`` (derivation ``rope-rerotation``), so rotating a key
    already rotated at p by ``offset`` gives exactly the key rotated at p + offset. ``keys`` has
    shape ``(..., n, d)``; ``offset`` is one real number or one per row (shape ``(n,)``), of any
    sign and below 2**53 in magnitude. ``base``, ``inv_freq``, ``layout`` and ``rotary_dim`` are
    those of ``apply_rope``; the phases are posenc's accurate ones.

    >>> import posenc
    >>> k = np.array([[1.0, 0.0]])
    >>> bool(np.allclose(rerotate_keys(posenc.rope(k, [5]), 3), posenc.rope(k, [8]), atol=1e-15))
    True
    """
    values = _checks.as_array("keys", keys)
    moves = _checks.offsets(offset)
    if moves.ndim == 0 and values.ndim >= 2:
        moves = np.full(values.shape[-2], float(moves))
    values = _checks.vectors(values, moves, name="keys", ids_name="offset", item="offset")
    rotary_dim = _checks.rotary_dim(rotary_dim, values.shape[-1], "keys' last axis")
    base = _checks.base(base)
    layout = _checks.layout(layout)
    sin, cos = rotary.rope_sincos(moves, rotary_dim, base, inv_freq)
    with np.errstate(over="ignore", invalid="ignore"):
        return _checks.finite("keys", rotary.rotate_pairs(values, sin, cos, rotary_dim, layout))


def streaming_cache(length: int, *, sinks: int, window: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Which tokens an attention-sink cache holds after ``length`` tokens, and their position ids.

    StreamingLLM keeps the first ``sinks`` tokens (four in the paper) and the ``window`` most
    recent ones and gives the cached tokens the position ids 0, 1, ... in cache order, not their
    positions in the text, so no id ever exceeds ``sinks + window - 1``; the sinks are never
    evicted. Returns ``(token_indices, position_ids)``.

    >>> kept, ids = streaming_cache(10, sinks=2, window=3)
    >>> kept.tolist()
    [0, 1, 7, 8, 9]
    >>> ids.tolist()
    [0, 1, 2, 3, 4]
    """
    length = _checks.integer("length", length, minimum=0)
    sinks = _checks.integer("sinks", sinks, minimum=0)
    window = _checks.integer("window", window, minimum=1)
    _checks.elements("sinks and window", sinks + window)
    if length <= sinks + window:
        kept = np.arange(length, dtype=np.int64)
    else:
        kept = np.concatenate([np.arange(sinks), np.arange(length - window, length)]).astype(np.int64)
    return kept, np.arange(kept.size, dtype=np.int64)


def attention_entropy(scores: ArrayLike) -> NDArray[np.float64] | float:
    """Entropy in nats of ``softmax(scores)`` along the last axis (``ln n`` for n equal scores).

    ``-inf`` marks a masked key (probability zero, no contribution); every row needs at least
    one finite score. Returns a float for one row, else an array of the leading shape.
    Derivation ``entropy-equal-scores``.

    >>> round(attention_entropy(np.zeros(8)), 12) == round(math.log(8), 12)
    True
    """
    array = _checks.attention_scores(scores)
    top = np.max(array, axis=-1, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):
        # A spread beyond float64 (1e308 and -1e308) makes -inf here: that key's weight is 0,
        # exactly as it would be for the true, finite difference.
        shifted = array - top
    weights = np.exp(shifted)
    # The first largest score has weight exactly 1; the sum of the others is formed apart so
    # that ln(total) = log1p(rest) keeps the tiny entropy of a nearly one-hot row, which
    # ln(1 + rest) would round away. Every term below is >= 0, so no cancellation either.
    first = np.argmax(array, axis=-1)[..., None]
    rest = np.sum(weights, axis=-1, where=np.arange(array.shape[-1]) != first)
    # -shifted is +inf for a weight of 0: those terms are left out (in place, no copy of the scores' size).
    present = weights > 0
    np.negative(shifted, out=shifted)
    np.multiply(shifted, weights, out=shifted, where=present)
    entropy = np.log1p(rest) + np.sum(shifted, axis=-1, where=present) / (1.0 + rest)
    return float(entropy) if entropy.ndim == 0 else entropy
