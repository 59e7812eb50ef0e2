"""Position computed from the data: forget gates, stick-breaking and accumulated reflections.

Each mechanism here gives causal attention a sense of order from what the tokens hold rather than
from their indices:

* The Forgetting Transformer (FoX; Lin et al., 2025): a forget gate ``f_t`` in (0, 1) per step
  (a sigmoid; the functions here also take 1, the limit in which the gate forgets nothing)
  adds ``D_ij = sum_{l=j+1}^{i} log f_l`` to the logit of query i on key j <= i
  (``forgetting_bias``), before the softmax (``forgetting_attention``). A constant gate ``f``
  gives ``(i - j) log f``: ALiBi with slope ``-log f``.
* Stick-breaking attention (Tan et al., 2025): ``beta_ij = sigmoid(z_ij)``, and key j gets
  ``beta_ij`` times the stick the keys between it and the query left over
  (``stick_breaking_weights``); what no key takes is ``stick_breaking_remainder``.
* PaTH attention (Yang et al., 2025): the score of query i on key j <= i is
  ``q_i^T H_i H_{i-1} ... H_{j+1} k_j`` with ``H_t = I - beta_t w_t w_t^T`` (``path_scores``).

Every function works in float64, refuses future keys with ``-inf`` (a bias or a score) or a zero
weight, and checks its arguments through ``posenc._checks``, naming the offending one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _checks

# ---------------------------------------------------------------------------------------
# Argument checks shared by the three mechanisms


def _real(name: str, value: Any, *, min_ndim: int, what: str) -> NDArray[np.float64]:
    """A real array with at least ``min_ndim`` axes (``what`` names them), as float64; NaN refused here."""
    array = _checks.as_array(name, value)
    if not _checks._is_real(array):
        raise TypeError(f"{name} must be a real array, got dtype {array.dtype}")
    if array.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} axes {what}, got shape {array.shape}")
    # No copy when it is float64 already: nothing here writes into an argument.
    array = array.astype(np.float64, copy=False)
    if np.any(np.isnan(array)):
        raise ValueError(f"{name} must not hold NaN")
    return array


def _finite(name: str, value: Any, *, min_ndim: int, what: str) -> NDArray[np.float64]:
    array = _real(name, value, min_ndim=min_ndim, what=what)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got an infinity")
    return array


def _logits(name: str, value: Any) -> NDArray[np.float64]:
    """Scores or logits of shape (..., n, n): finite or -inf (a masked key); NaN and +inf refused."""
    array = _real(name, value, min_ndim=2, what="(..., queries, keys)")
    if array.shape[-1] != array.shape[-2]:
        raise ValueError(f"{name} must be square in its last two axes (one key per query), got shape {array.shape}")
    if np.any(array == np.inf):
        raise ValueError(f"{name} must be finite or -inf (a masked key), got +inf")
    return array


def _log_gates(value: Any, log: Any) -> NDArray[np.float64]:
    """FoX's gates (..., n) as log f: each gate in (0, 1], or each log in [-inf excluded, 0]."""
    use_log = _checks.boolean("log", log)
    gates = _finite("forget_gates", value, min_ndim=1, what="(..., steps)")
    if use_log:
        if np.any(gates > 0):
            raise ValueError("forget_gates must be <= 0 with log=True (the log of a gate in (0, 1])")
        return gates
    if np.any(gates <= 0) or np.any(gates > 1):
        raise ValueError("forget_gates must lie in (0, 1] (a gate keeps a fraction of the past)")
    return np.log(gates)


def _causal(n: int, *, strict: bool = False) -> NDArray[np.bool_]:
    """Which keys j each query i sees: j <= i, or j < i when ``strict``."""
    index = np.arange(n)
    return index[None, :] < index[:, None] if strict else index[None, :] <= index[:, None]


# ---------------------------------------------------------------------------------------
# The Forgetting Transformer


def _row_blocks(shape: tuple[int, ...]) -> list[tuple[int, int]]:
    """(start, stop) of blocks of the query rows of an (..., n, n) array, each block's temporaries
    (the leading axes times its rows times the keys) near ``_checks.BLOCK_ELEMENTS``, at least one row."""
    n = shape[-1]
    rows = max(1, _checks.BLOCK_ELEMENTS // max(1, math.prod(shape[:-2]) * n))
    return [(start, min(n, start + rows)) for start in range(0, n, rows)]


def forgetting_bias(forget_gates: ArrayLike, *, log: bool = False) -> NDArray[np.float64]:
    """FoX's bias ``D_ij = sum_{l=j+1}^{i} log f_l`` for keys j <= i, ``-inf`` above the diagonal.

    ``forget_gates`` has shape ``(..., n)``, one gate per step (per head on any leading axes),
    each in (0, 1]; with ``log=True`` it holds ``log f`` instead (each <= 0), as a layer computes
    it (``logsigmoid`` of a projection) without rounding a gate near 0 or 1. The result has shape
    ``(..., n, n)``; the diagonal is 0 (an empty sum). FoX's kernels form the sums as differences
    of one running sum of the logs, which cancels: after a gate of ``log f = -1e16`` every later
    difference would be 0. Here each row is summed from the diagonal outward instead, adding
    ``log f_i``, ``log f_{i-1}``, ... in turn: every term is <= 0, so no partial sum cancels and
    each bias is within about ``n`` roundings of its exact value. Derivation
    ``fox-constant-gate-is-alibi``: a constant gate ``f`` gives ALiBi with slope ``-log f``.

    >>> forgetting_bias([1.0, 0.5, 0.5]).round(4).tolist()
    [[0.0, -inf, -inf], [-0.6931, 0.0, -inf], [-1.3863, -0.6931, 0.0]]
    >>> forgetting_bias([-1e16, -1.0, -1.0, -0.5], log=True)[3].tolist()
    [-2.5, -1.5, -0.5, 0.0]
    """
    logs = _log_gates(forget_gates, log)
    n = logs.shape[-1]
    _checks.elements("forget_gates", *logs.shape, n)
    bias = np.full(logs.shape + (n,), -np.inf)
    # following[..., k] = log f_{k+1}: the term key k adds when the sum reaches back past it.
    following = np.concatenate([logs[..., 1:], np.zeros_like(logs[..., :1])], axis=-1)
    for start, stop in _row_blocks(bias.shape):
        query = np.arange(start, stop)[:, None]
        key = np.arange(stop)[None, :]
        terms = np.where(key < query, following[..., None, :stop], 0.0)
        with np.errstate(over="ignore"):  # a sum beyond float64 is refused just below, by name
            # Reversed running sum: key j gets the terms of keys j .. i - 1, the nearest added first.
            sums = np.cumsum(terms[..., ::-1], axis=-1)[..., ::-1]
        if not np.all(np.isfinite(sums)):
            raise ValueError(
                "forget_gates must be small enough in magnitude that every sum of them is finite in float64"
            )
        bias[..., start:stop, :stop] = np.where(key <= query, sums, -np.inf)
    return bias


def forgetting_attention(scores: ArrayLike, forget_gates: ArrayLike, *, log: bool = False) -> NDArray[np.float64]:
    """FoX's causal attention weights: ``softmax_j(s_ij + D_ij)`` over keys j <= i.

    ``scores`` (shape ``(..., n, n)``) holds the logits ``s_ij`` (``q_i . k_j`` times the softmax
    scale); entries above the diagonal are ignored and ``-inf`` masks a key. ``forget_gates``
    (shape ``(..., n)``, the same leading axes) and ``log`` are those of ``forgetting_bias``.
    Every row must see at least one finite score. With every gate 1 this is plain causal softmax.
    The sums ``s_ij + D_ij`` are formed at half scale, so two finite terms never overflow to
    ``-inf`` (a key beyond float64's reach still gets its weight, 0 or not, from the difference).

    >>> forgetting_attention(np.zeros((2, 2)), [1.0, 0.5]).round(4).tolist()
    [[1.0, 0.0], [0.3333, 0.6667]]
    """
    logits = _logits("scores", scores)
    bias = forgetting_bias(forget_gates, log=log)
    if bias.shape != logits.shape:
        raise ValueError(
            f"forget_gates must have shape {logits.shape[:-1]} (the leading axes of scores, then one gate per "
            f"key), got {bias.shape[:-1]}"
        )
    # Halves: each is at most 2**1023 in magnitude, so their sum is finite. The bias is -inf
    # above the diagonal, which masks those keys whatever their score.
    total = np.multiply(logits, 0.5)
    bias *= 0.5
    total += bias
    del bias
    top = np.max(total, axis=-1, keepdims=True)
    if np.any(top == -np.inf):
        raise ValueError("scores must hold a finite score on or below the diagonal of every row (a row of -inf)")
    total -= top
    with np.errstate(over="ignore"):
        # A spread beyond float64 makes -inf here: that key's weight is 0, as for the true difference.
        total *= 2.0
    weights: NDArray[np.float64] = np.exp(total, out=total)
    weights /= np.sum(weights, axis=-1, keepdims=True)
    return weights


# ---------------------------------------------------------------------------------------
# Stick-breaking attention


def _stick_logits(logits: ArrayLike, attend_current: Any) -> tuple[NDArray[np.float64], bool]:
    """The logits z (..., n, n), checked, and whether a query sees its own key."""
    z = _logits("logits", logits)
    current = _checks.boolean("attend_current", attend_current)
    _checks.elements("logits", *z.shape)
    return z, current


def _stick_logs(
    z: NDArray[np.float64], start: int, stop: int, current: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(log beta, log(1 - beta)) of query rows start..stop-1, the keys they cannot see at -inf and 0."""
    query = np.arange(start, stop)[:, None]
    key = np.arange(z.shape[-1])[None, :]
    visible = key <= query if current else key < query
    block = z[..., start:stop, :]
    # log sigmoid(z) = -log(1 + e^(-z)), log(1 - sigmoid(z)) = -log(1 + e^z): neither rounds a
    # beta near 0 or 1 to it, and both stay finite for any finite z.
    log_beta = np.where(visible, -np.logaddexp(0.0, -block), -np.inf)
    log_keep = np.where(visible, -np.logaddexp(0.0, block), 0.0)
    return log_beta, log_keep


def stick_breaking_weights(logits: ArrayLike, *, attend_current: bool = False) -> NDArray[np.float64]:
    """Stick-breaking attention: ``A_ij = beta_ij prod_{j<k<i} (1 - beta_ik)``, ``beta = sigmoid(z)``.

    ``logits`` (shape ``(..., n, n)``) holds ``z_ij`` (``q_i . k_j`` times the scale). Query i
    sees the keys j < i, as in Tan et al. (2025) and fla-core's reference (its default); with
    ``attend_current`` it sees j <= i too and the product runs over ``j < k <= i``. The nearest
    key breaks off its share first; each further key takes its share of what is left, so a row
    sums to at most 1 (derivation ``stick-breaking-remainder``). Computed in log space: the
    product is the exponential of a sum of ``log(1 - beta) = -log(1 + e^z)`` formed from the
    query's end without subtraction. ``-inf`` gives ``beta = 0`` (a masked key). Formed a block
    of queries at a time, so its temporaries stay a fixed size beside the result.

    >>> stick_breaking_weights(np.zeros((3, 3))).tolist()
    [[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.25, 0.5, 0.0]]
    """
    z, current = _stick_logits(logits, attend_current)
    weights = np.empty(z.shape)
    for start, stop in _row_blocks(z.shape):
        log_beta, log_keep = _stick_logs(z, start, stop, current)
        # after[..., j] = sum over k > j of log(1 - beta_ik): a reverse running sum, shifted by one key.
        with np.errstate(over="ignore"):  # a sum below -1.8e308 is -inf: the stick is gone, weight 0
            reverse = np.cumsum(log_keep[..., ::-1], axis=-1)[..., ::-1]
        log_beta[..., :-1] += reverse[..., 1:]
        np.exp(log_beta, out=weights[..., start:stop, :])
    return weights


def stick_breaking_remainder(logits: ArrayLike, *, attend_current: bool = False) -> NDArray[np.float64]:
    """What no key takes: ``prod_j (1 - beta_ij)`` over the keys query i sees, shape ``(..., n)``.

    Equal to ``1 - sum_j A_ij`` of ``stick_breaking_weights`` (derivation
    ``stick-breaking-remainder``), but formed as the exponential of a sum of logs, so a remainder
    near 0 or 1 keeps its digits. The first query sees no key (unless ``attend_current``): 1.

    >>> stick_breaking_remainder(np.zeros((3, 3))).tolist()
    [1.0, 0.5, 0.25]
    """
    z, current = _stick_logits(logits, attend_current)
    remainder = np.empty(z.shape[:-1])
    for start, stop in _row_blocks(z.shape):
        _, log_keep = _stick_logs(z, start, stop, current)
        with np.errstate(over="ignore"):
            np.exp(np.sum(log_keep, axis=-1), out=remainder[..., start:stop])
    return remainder


# ---------------------------------------------------------------------------------------
# PaTH attention


def path_scores(queries: ArrayLike, keys: ArrayLike, directions: ArrayLike, betas: ArrayLike) -> NDArray[np.float64]:
    """PaTH's scores ``q_i^T H_i H_{i-1} ... H_{j+1} k_j`` for keys j <= i, ``-inf`` above the diagonal.

    ``H_t = I - beta_t w_t w_t^T``. ``queries``, ``keys`` and ``directions`` have shape
    ``(..., n, d)`` and ``betas`` shape ``(..., n)``, all with the same leading axes; each
    direction is scaled to unit length (none may be zero) and each beta lies in [0, 2] (the
    paper's ``2 sigmoid(.)`` reaches neither end). The diagonal is ``q_i . k_i`` (an empty
    product); every beta 0 gives ``q_i . k_j``, NoPE (derivation ``path-reflections``). Multiply
    by the softmax scale and add any other bias before the softmax. The products are applied to
    each query one reflection at a time, ``O(n^2 d)`` work, without forming a ``d x d`` matrix.

    >>> path_scores([[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]], [0.0, 2.0]).tolist()
    [[1.0, -inf], [-1.0, 1.0]]
    """
    q = _finite("queries", queries, min_ndim=2, what="(..., tokens, channels)")
    k = _finite("keys", keys, min_ndim=2, what="(..., tokens, channels)")
    w = _finite("directions", directions, min_ndim=2, what="(..., tokens, channels)")
    b = _finite("betas", betas, min_ndim=1, what="(..., tokens)")
    for name, array in (("keys", k), ("directions", w)):
        if array.shape != q.shape:
            raise ValueError(f"{name} must have the shape of queries, {q.shape}, got {array.shape}")
    if b.shape != q.shape[:-1]:
        raise ValueError(f"betas must have shape {q.shape[:-1]} (one per token), got {b.shape}")
    if np.any(b < 0) or np.any(b > 2):
        raise ValueError("betas must lie in [0, 2] (H_t = I - beta w w^T is then a contraction)")
    n, width = q.shape[-2], q.shape[-1]
    if width == 0:
        raise ValueError(f"queries must have at least one channel, got shape {q.shape}")
    _checks.elements("queries", *q.shape[:-1], n)
    # Scaled by the largest entry first, so a tiny or huge direction keeps its unit vector.
    peak = np.max(np.abs(w), axis=-1, keepdims=True)
    if np.any(peak == 0):
        raise ValueError("directions must be nonzero vectors (each is scaled to unit length)")
    w = w / peak
    w = w / np.linalg.norm(w, axis=-1, keepdims=True)
    scores = np.full(q.shape[:-1] + (n,), -np.inf)
    moved = q.copy()  # row i holds H_{j+1} ... H_i q_i once key j is reached (H_t is symmetric)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below, by name
        for j in range(n - 1, -1, -1):
            rows = moved[..., j:, :]
            scores[..., j:, j] = np.einsum("...id,...d->...i", rows, k[..., j, :])
            along = np.einsum("...id,...d->...i", rows, w[..., j, :])
            moved[..., j:, :] = rows - (b[..., j, None] * along)[..., None] * w[..., j, None, :]
    return _checks.finite("queries and keys", np.where(_causal(n), scores, 0.0)) + np.where(_causal(n), 0.0, -np.inf)
