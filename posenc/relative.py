"""Relative position in attention, learned tables, and no encoding at all, in NumPy.

Each function computes what one scheme adds to attention (to the logits, to the keys and values,
or to the positions that index a table) for explicit query and key position ids, so a sequence
may start anywhere. Conventions, stated once:

* ``query_ids`` and ``key_ids`` are one-dimensional non-negative integer ids (``None`` means
  ``0, 1, ..., n - 1`` for the given rows); results over a (query, key) grid have shape
  ``(..., len(query_ids), len(key_ids))``, query on the rows.
* Each scheme keeps its own sign convention for the relative position, named in its docstring:
  Shaw and T5 use ``key - query``, Transformer-XL, DeBERTa, ALiBi, Kerple and FIRE
  ``query - key``.
* No function applies a causal mask unless it says so; a causal model hides keys after the
  query itself (``posenc.alibi_bias`` is the masked ALiBi).
* Arguments follow posenc's rules (``posenc._checks``): errors name the argument and the rule,
  and no call builds an array of more than 2**27 elements. Intermediates are bounded by the
  result, not only by that limit: where a per-table-row product (query times every row of a
  relative table) would be larger than the result, the rows each entry needs are gathered in
  blocks instead.
* NaN and infinity are refused in every array read (queries, keys, values, tables, weights,
  positions), as everywhere in posenc, and a result that would overflow float64 is refused
  naming the arguments instead of being returned with ``inf`` or ``NaN`` in it.

Sources: Shaw et al. (2018), Dai et al. (2019), Raffel et al. (2020), He et al. (2021),
Press et al. (2021), Chi et al. (2022), Li et al. (2023), Golovneva et al. (2024).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _checks, _precision
from .conventions import DEFAULT_BASE, t5_relative_position_bucket
from .encodings import _offset_sincos, alibi_slopes


def _ids(value: ArrayLike | None, rows: int | None, name: str, rows_of: str) -> NDArray[np.int64]:
    """Position ids, or ``0 .. rows - 1`` when none are given; one per row of the array ``rows_of`` (``rows``)."""
    if value is None:
        if rows is None:
            raise TypeError(f"{name} must be given")
        return np.arange(rows, dtype=np.int64)
    ids = _checks.position_ids(value, name)
    if rows is not None and ids.size != rows:
        raise ValueError(f"{name} must have one id per row of {rows_of}: got {ids.size} ids for {rows} rows")
    return ids


def _grid(query_ids: NDArray[np.int64], key_ids: NDArray[np.int64], *leading: int) -> NDArray[np.int64]:
    """``query - key`` over the grid, after checking its size (times ``leading``) against the limit."""
    _checks.elements("query_ids and key_ids", *leading, query_ids.size, key_ids.size)
    return query_ids[:, None] - key_ids[None, :]


def _rows(name: str, value: ArrayLike, width_name: str = "d") -> NDArray[np.float64]:
    return _checks.real_array(name, value, ndim=2, what=f"(rows, {width_name})")


def _block_rows(per_row: int) -> int:
    """Rows per block when each row of a blocked computation builds ``per_row`` elements."""
    return max(1, _checks.BLOCK_ELEMENTS // max(1, per_row))


def _table_product_is_small(rows: int, table_rows: int, columns: int) -> bool:
    """Whether ``(rows, table_rows)``, one product per table row, is no larger than the result.

    The result has ``rows * columns`` entries; a table of many more rows than the keys (a large
    clipping distance, a long position table) would make the product the largest array of the
    call, so the callers gather the rows each entry needs instead.
    """
    return rows * table_rows <= max(rows * columns, _checks.BLOCK_ELEMENTS)


def _dot_rows(q: NDArray[np.float64], table: NDArray[np.float64], index: NDArray[np.int64]) -> NDArray[np.float64]:
    """``out[i, j] = q[i] . table[index[i, j]]``, shape ``index.shape``, never larger than that in memory.

    One product per table row when that is small (``q @ table.T``, then a gather), otherwise the
    needed rows gathered block by block, each block at most BLOCK_ELEMENTS elements (or one row).
    """
    if _table_product_is_small(q.shape[0], table.shape[0], index.shape[1]):
        return np.take_along_axis(q @ table.T, index, axis=1)
    out = np.empty(index.shape)
    step = _block_rows(index.shape[1] * table.shape[1])
    for start in range(0, index.shape[0], step):
        block = slice(start, start + step)
        out[block] = np.einsum("id,ijd->ij", q[block], table[index[block]])
    return out


def _weighted_rows(
    alpha: NDArray[np.float64], table: NDArray[np.float64], index: NDArray[np.int64]
) -> NDArray[np.float64]:
    """``out[i] = sum_j alpha[i, j] table[index[i, j]]``, shape ``(n, d)``, bounded like ``_dot_rows``."""
    n, d = alpha.shape[0], table.shape[1]
    if _table_product_is_small(n, table.shape[0], alpha.shape[1]):
        per_row = np.zeros((n, table.shape[0]))  # the weight falling on each table row
        np.add.at(per_row, (np.arange(n)[:, None], index), alpha)
        return per_row @ table
    out = np.empty((n, d))
    step = _block_rows(index.shape[1] * d)
    for start in range(0, n, step):
        block = slice(start, start + step)
        out[block] = np.einsum("ij,ijd->id", alpha[block], table[index[block]])
    return out


# ---------------------------------------------------------------------------------------
# Learned absolute table (BERT, GPT-2)


def absolute_table_rows(table: ArrayLike, position_ids: ArrayLike) -> NDArray[np.float64]:
    """The rows of a learned absolute position table for the given ids, shape ``(len(ids), d)``.

    A table of ``L`` rows holds one trained vector per position ``0 .. L - 1`` and nothing
    beyond: an id of ``L`` or more has no row, so this raises instead of inventing one.

    >>> absolute_table_rows([[0.0, 1.0], [2.0, 3.0]], [1, 0]).tolist()
    [[2.0, 3.0], [0.0, 1.0]]
    """
    rows = _rows("table", table)
    ids = _checks.position_ids(position_ids)
    _checks.elements("position_ids and table", ids.size, rows.shape[1])
    if ids.size and ids.max() >= rows.shape[0]:
        raise ValueError(
            f"position_ids must be < {rows.shape[0]} (the table's rows; a learned table has no row past its last), "
            f"got {ids.max()}"
        )
    return rows[ids]


# ---------------------------------------------------------------------------------------
# Shaw et al. (2018)


def shaw_relative_index(query_ids: ArrayLike, key_ids: ArrayLike, max_distance: int) -> NDArray[np.int64]:
    """Row of Shaw's ``2k + 1``-row relative tables for each (query i, key j): ``clip(j - i, -k, k) + k``.

    ``k = max_distance``: every key more than k positions away shares the table's first or last row.

    >>> shaw_relative_index([2], [0, 1, 2, 3, 4, 5], 2).tolist()
    [[0, 1, 2, 3, 4, 4]]
    """
    queries = _checks.position_ids(query_ids, "query_ids")
    keys = _checks.position_ids(key_ids, "key_ids")
    k = _checks.integer("max_distance", max_distance, minimum=0)
    return np.clip(-_grid(queries, keys), -k, k) + k


def _shaw_table(name: str, table: ArrayLike, width: int, width_of: str) -> tuple[np.ndarray, int]:
    """The table ``name`` and its k; its rows must be as wide as the rows of ``width_of``."""
    rows = _rows(name, table)
    if rows.shape[0] % 2 == 0 or rows.shape[1] != width:
        raise ValueError(
            f"{name} must have shape (2k + 1, {width}): one row per clipped distance -k..k, as wide as "
            f"the rows of {width_of}, got shape {rows.shape}"
        )
    return rows, rows.shape[0] // 2


def shaw_logits(
    queries: ArrayLike,
    keys: ArrayLike,
    relative_keys: ArrayLike,
    *,
    query_ids: ArrayLike | None = None,
    key_ids: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """Shaw et al.'s logits ``e_ij = q_i . (k_j + a^K_{clip(j - i, -k, k)}) / sqrt(d)``, shape ``(n_q, n_k)``.

    ``queries`` ``(n_q, d)`` and ``keys`` ``(n_k, d)`` are the projected rows of one head;
    ``relative_keys`` ``(2k + 1, d)`` holds the learned vectors for distances ``-k .. k``.
    The gathered vectors are never materialised: ``q_i . a_r`` is computed once per table row.

    >>> q, k = np.eye(2), np.zeros((3, 2))
    >>> shaw_logits(q, k, [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]).round(4).tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, 0.7071]]
    """
    q, kk = _rows("queries", queries), _rows("keys", keys)
    if q.shape[1] == 0:
        raise ValueError(f"queries must have at least one column (the logits divide by sqrt(d)), got shape {q.shape}")
    if kk.shape[1] != q.shape[1]:
        raise ValueError(f"keys must have the width of queries, {q.shape[1]}, got {kk.shape[1]}")
    table, k = _shaw_table("relative_keys", relative_keys, q.shape[1], "queries and keys")
    index = shaw_relative_index(
        _ids(query_ids, q.shape[0], "query_ids", "queries"), _ids(key_ids, kk.shape[0], "key_ids", "keys"), k
    )
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused by name below
        logits = (q @ kk.T + _dot_rows(q, table, index)) / math.sqrt(q.shape[1])
    return _checks.finite("queries, keys and relative_keys", logits)


def shaw_values(
    weights: ArrayLike,
    values: ArrayLike,
    relative_values: ArrayLike,
    *,
    query_ids: ArrayLike | None = None,
    key_ids: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """Shaw et al.'s outputs ``z_i = sum_j alpha_ij (v_j + a^V_{clip(j - i, -k, k)})``, shape ``(n_q, d)``.

    ``weights`` ``(n_q, n_k)`` are the attention weights alpha, ``values`` ``(n_k, d)`` and
    ``relative_values`` ``(2k + 1, d)``. The weights falling on each table row are summed first,
    so the cost is one ``(n_q, 2k + 1) x (2k + 1, d)`` product.

    >>> shaw_values([[0.5, 0.5]], [[0.0], [2.0]], [[10.0], [0.0], [20.0]]).tolist()
    [[11.0]]
    """
    alpha = _checks.real_array("weights", weights, ndim=2, what="(n_q, n_k)")
    v = _rows("values", values)
    if v.shape[0] != alpha.shape[1]:
        raise ValueError(f"values must have one row per key (weights has {alpha.shape[1]} columns), got {v.shape[0]}")
    table, k = _shaw_table("relative_values", relative_values, v.shape[1], "values")
    index = shaw_relative_index(
        _ids(query_ids, alpha.shape[0], "query_ids", "weights"), _ids(key_ids, v.shape[0], "key_ids", "values"), k
    )
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused by name below
        out = alpha @ v + _weighted_rows(alpha, table, index)
    return _checks.finite("weights, values and relative_values", out)


# ---------------------------------------------------------------------------------------
# Transformer-XL (Dai et al., 2019)


class TransformerXLTerms(NamedTuple):
    """The four terms of Transformer-XL's score, each ``(n_q, n_k)``; ``total`` is their sum."""

    content: NDArray[np.float64]  #: (a) q_i . k_j
    content_position: NDArray[np.float64]  #: (b) q_i . r_{i-j}
    global_content: NDArray[np.float64]  #: (c) u . k_j
    global_position: NDArray[np.float64]  #: (d) v . r_{i-j}

    @property
    def total(self) -> NDArray[np.float64]:
        return self.content + self.content_position + self.global_content + self.global_position


def transformer_xl_terms(
    queries: ArrayLike,
    keys: ArrayLike,
    position_projection: ArrayLike,
    u: ArrayLike,
    v: ArrayLike,
    *,
    query_ids: ArrayLike | None = None,
    key_ids: ArrayLike | None = None,
    base: float = DEFAULT_BASE,
) -> TransformerXLTerms:
    """Transformer-XL's score terms for one head (derivation ``transformer-xl-terms``).

    ``queries`` ``(n_q, d_k)`` are ``W_q E_i``, ``keys`` ``(n_k, d_k)`` are ``W_{k,E} E_j``;
    ``position_projection`` ``(d, d_k)`` is ``W_{k,R}``, applied to the sinusoid ``R_{i-j}`` of
    width ``d`` in Transformer-XL's layout (all sines, then all cosines), so
    ``r_{i-j} = R_{i-j} @ W_{k,R}``; ``u`` and ``v`` ``(d_k,)`` are the global content and
    position biases shared by every query. The sum of the terms is
    ``(q_i + u) . k_j + (q_i + v) . r_{i-j}``. No scale and no mask are applied. ``R`` is
    computed once per distinct distance ``i - j``; when the ids are so irregular that there are
    many more distinct distances than ids, the position terms are formed instead from the sines
    and cosines of the ids themselves, by ``sin((i - j) w) = sin(i w) cos(j w) - cos(i w) sin(j w)``
    and its cosine twin, so the work grows with the ids, not with their pairs.

    >>> terms = transformer_xl_terms(np.ones((1, 2)), np.ones((2, 2)), np.eye(2), [1.0, 0.0], [0.0, 0.0])
    >>> terms.content.tolist(), terms.global_content.tolist()
    ([[2.0, 2.0]], [[1.0, 1.0]])
    >>> terms.content_position.round(4).tolist()  # R_0 = (sin 0, cos 0), R_(-1) = (sin -1, cos -1)
    [[1.0, -0.3012]]
    """
    q, kk = _rows("queries", queries, "d_k"), _rows("keys", keys, "d_k")
    projection = _checks.real_array("position_projection", position_projection, ndim=2, what="(d, d_k)")
    head = q.shape[1]
    if kk.shape[1] != head or projection.shape[1] != head:
        raise ValueError(
            f"keys and position_projection must have the queries' width d_k = {head}, "
            f"got {kk.shape[1]} and {projection.shape[1]}"
        )
    width = _checks.width(projection.shape[0], "position_projection's rows (d)")
    global_content, global_position = (
        _checks.real_array(name, value, ndim=1, what="(d_k,)") for name, value in (("u", u), ("v", v))
    )
    if global_content.shape != (head,) or global_position.shape != (head,):
        raise ValueError(f"u and v must have shape ({head},), got {global_content.shape} and {global_position.shape}")
    base = _checks.base(base)
    query_positions = _ids(query_ids, q.shape[0], "query_ids", "queries")
    key_positions = _ids(key_ids, kk.shape[0], "key_ids", "keys")
    distance = _grid(query_positions, key_positions, head)
    distinct, where = np.unique(distance, return_inverse=True)
    where = where.reshape(distance.shape)
    half = width // 2
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused by name below
        if distinct.size * half <= max(_checks.BLOCK_ELEMENTS, 4 * (query_positions.size + key_positions.size) * half):
            # Few distances (ids in runs): one sinusoid per distance, built and projected a block of
            # distances at a time, so only r, one d_k-vector per distance, is ever whole.
            _checks.elements("query_ids, key_ids and position_projection's rows (d)", distinct.size, half)
            r = np.empty((distinct.size, head))
            step = _block_rows(width)
            for start in range(0, distinct.size, step):
                block = distinct[start : start + step].astype(np.float64)
                sines, cosines = _offset_sincos(block, width, base)
                r[start : start + step] = sines @ projection[:half] + cosines @ projection[half:]
            content_position, global_position_term = _dot_rows(q, r, where), (r @ global_position)[where]
        else:
            content_position, global_position_term = _xl_position_terms_by_ids(
                q, global_position, projection, query_positions, key_positions, base
            )
        terms = TransformerXLTerms(
            content=q @ kk.T,
            content_position=content_position,
            global_content=np.broadcast_to(kk @ global_content, distance.shape).copy(),
            global_position=global_position_term,
        )
        total = terms.total  # the four finite terms may still overflow in their sum
    _checks.finite("queries, keys, position_projection, u and v", tuple(terms) + (total,))
    return terms


def _xl_position_terms_by_ids(
    q: NDArray[np.float64],
    v: NDArray[np.float64],
    projection: NDArray[np.float64],
    query_ids: NDArray[np.int64],
    key_ids: NDArray[np.int64],
    base: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Transformer-XL's ``q_i . r_{i-j}`` and ``v . r_{i-j}`` from the sines and cosines of the ids.

    With ``a = W_{k,R} q_i`` split into its sine and cosine halves, ``q_i . r_{i-j}`` is
    ``sum_r sin((i - j) w_r) a_sin + cos((i - j) w_r) a_cos``; the angle-difference identities turn
    that into two products of (n_q, d/2) by (d/2, n_k) arrays, so no sinusoid is built per pair.
    The phases of the ids are posenc's accurate ones, so each identity's terms are within an
    ulp or two of the exact sines and cosines.
    """
    half = projection.shape[0] // 2
    _checks.elements("query_ids, key_ids and position_projection's rows (d)", query_ids.size + key_ids.size, half)
    turns = _precision.power_turns(base, 2, 2 * half, half)
    query_sin, query_cos = _precision.sincos(query_ids, turns)
    key_sin, key_cos = _precision.sincos(key_ids, turns)

    def dotted(weights: NDArray[np.float64]) -> NDArray[np.float64]:
        along_sin, along_cos = weights[..., :half], weights[..., half:]
        return (query_sin * along_sin + query_cos * along_cos) @ key_cos.T + (
            query_sin * along_cos - query_cos * along_sin
        ) @ key_sin.T

    return dotted(q @ projection.T), dotted(projection @ v)


# ---------------------------------------------------------------------------------------
# T5 (Raffel et al., 2020)


def t5_bias(
    table: ArrayLike,
    query_ids: ArrayLike,
    key_ids: ArrayLike,
    *,
    bidirectional: bool = True,
    max_distance: int = 128,
) -> NDArray[np.float64]:
    """T5's position bias, shape ``(n_heads, n_q, n_k)``: one learned scalar per bucket and head.

    ``table`` ``(num_buckets, n_heads)`` is T5's ``relative_attention_bias`` weight; entry
    ``[h, i, j]`` is ``table[bucket(key_j - query_i), h]`` with the bucket of
    ``posenc.t5_relative_position_bucket``. T5 computes it once, in the first layer, shares it
    with every layer, and adds it to logits that are not divided by ``sqrt(d_k)``.

    >>> table = np.arange(32.0)[:, None]  # one head, bias = bucket number
    >>> t5_bias(table, [5], [0, 4, 5, 6, 100])[0].tolist()
    [[5.0, 1.0, 0.0, 17.0, 31.0]]
    """
    weights = _checks.real_array("table", table, ndim=2, what="(num_buckets, n_heads)")
    fewest = 4 if _checks.boolean("bidirectional", bidirectional) else 2
    if weights.shape[0] < fewest:
        raise ValueError(f"num_buckets must be >= {fewest} (num_buckets is table's rows), got {weights.shape[0]}")
    queries = _checks.position_ids(query_ids, "query_ids")
    keys = _checks.position_ids(key_ids, "key_ids")
    _checks.id_distances(queries, keys, "T5")  # before the grid, in the caller's names
    _checks.elements("query_ids and key_ids", weights.shape[1], queries.size, keys.size)

    def buckets(relative: NDArray[np.int64]) -> NDArray[np.int64]:
        bucketed = t5_relative_position_bucket(
            relative, bidirectional=bidirectional, num_buckets=weights.shape[0], max_distance=max_distance
        )
        # relative is never 0-d here, so that is an array (an int only for a single position); asarray returns it as is.
        return np.asarray(bucketed)

    buckets(np.zeros(0, dtype=np.int64))  # max_distance checked even when there are no ids
    # A block of query rows at a time: the bucketing's float32 steps make several temporaries
    # the size of their grid, which for the whole grid would be many times the result.
    out = np.empty((weights.shape[1], queries.size, keys.size))
    step = _block_rows(keys.size * max(1, weights.shape[1]))
    for start in range(0, queries.size, step):
        rows = slice(start, start + step)
        out[:, rows] = np.moveaxis(weights[buckets(keys[None, :] - queries[rows, None])], -1, 0)
    return out


# ---------------------------------------------------------------------------------------
# DeBERTa (He et al., 2021), as DeBERTa-v2's code


def deberta_log_bucket(relative_position: ArrayLike, bucket_size: int, max_position: int) -> NDArray[np.int64] | int:
    """DeBERTa-v2's log bucket of each relative position (``make_log_bucket_position``), as int64.

    With ``mid = bucket_size // 2``, positions with ``|r| <= mid`` are kept as they are; a larger
    ``|r|`` becomes ``sign(r) * (mid + ceil(log(|r| / mid) / log((max_position - 1) / mid) * (mid - 1)))``,
    so the bucket is odd in r (derivation ``deberta-bucket-symmetry``). The arithmetic is
    float32 step by step, as DeBERTa's is, with correctly rounded float32 logarithms. Unlike
    T5's buckets these are not capped (past ``max_position - 1`` they keep growing, slowly);
    DeBERTa's attention clamps the index into its table of ``2 * bucket_size`` rows afterwards.
    An array of the input's shape is returned; a single position gives an ``int``, as in
    ``posenc.t5_relative_position_bucket``.

    >>> deberta_log_bucket([-600, -300, -5, 0, 5, 300, 511, 600], 256, 512).tolist()
    [-270, -207, -5, 0, 5, 207, 255, 270]
    """
    position = _checks.relative_positions(relative_position, "DeBERTa")
    mid, max_position = _deberta_bucket_arguments(bucket_size, max_position)
    f32 = np.float32
    distance = np.abs(position)
    large = distance > mid
    ratio = (np.where(large, distance, mid).astype(np.float64) / mid).astype(f32)  # exact quotient, rounded once
    log_ratio = np.log(ratio.astype(np.float64)).astype(f32)
    log_span = f32(math.log(float(f32((max_position - 1) / mid))))
    scaled = (log_ratio.astype(np.float64) / float(log_span)).astype(f32)
    scaled = (scaled.astype(np.float64) * (mid - 1)).astype(f32)
    if np.any(np.abs(scaled) >= 2**62):
        # A log span near 0 in float32 gives buckets that int64 would wrap; refused, not wrapped.
        raise ValueError(
            f"bucket_size and max_position must give buckets within int64 for relative positions up to "
            f"{int(distance.max())}, got bucket_size {bucket_size} and max_position {max_position}"
        )
    bucket = np.ceil(scaled).astype(np.int64) + mid
    result = np.where(large, np.sign(position) * bucket, position)
    return int(result) if result.ndim == 0 else result


def _deberta_bucket_arguments(bucket_size: object, max_position: object) -> tuple[int, int]:
    """``(bucket_size // 2, max_position)`` after their checks: float32 ``log((max_position - 1) / mid)`` > 0."""
    bucket_size = _checks.integer("bucket_size", bucket_size, minimum=2)
    mid = bucket_size // 2
    max_position = _checks.integer("max_position", max_position)
    if max_position - 1 <= mid or np.float32((max_position - 1) / mid) <= 1:
        raise ValueError(
            f"max_position must be > bucket_size // 2 + 1 = {mid + 1} by enough that (max_position - 1) / "
            f"(bucket_size // 2) is > 1 in float32 (its log divides), got {max_position}"
        )
    return mid, max_position


def deberta_relative_positions(
    query_ids: ArrayLike,
    key_ids: ArrayLike,
    *,
    bucket_size: int | None = None,
    max_position: int | None = None,
) -> NDArray[np.int64]:
    """DeBERTa's relative positions ``query - key`` over the grid, shape ``(n_q, n_k)``, as int64.

    Given ``bucket_size`` and ``max_position`` (DeBERTa-v2's ``position_buckets`` and
    ``max_relative_positions``), they are log-bucketed by ``deberta_log_bucket``, as
    ``build_relative_position`` does.

    >>> deberta_relative_positions([0, 1], [0, 1, 2]).tolist()
    [[0, -1, -2], [1, 0, -1]]
    """
    queries, keys = _checks.position_ids(query_ids, "query_ids"), _checks.position_ids(key_ids, "key_ids")
    if (bucket_size is None) != (max_position is None):
        raise ValueError("bucket_size and max_position must be given together (or neither)")
    if bucket_size is None or max_position is None:  # after the check above, neither is None unless both are
        return _grid(queries, keys)
    # Every argument is checked before the grid is built, the distances in the caller's names.
    _deberta_bucket_arguments(bucket_size, max_position)
    _checks.id_distances(queries, keys, "DeBERTa")
    _checks.elements("query_ids and key_ids", queries.size, keys.size)
    # A block of query rows at a time, as in t5_bias: the float32 steps' temporaries stay small.
    out = np.empty((queries.size, keys.size), dtype=np.int64)
    step = _block_rows(keys.size)
    for start in range(0, queries.size, step):
        rows = slice(start, start + step)
        out[rows] = deberta_log_bucket(queries[rows, None] - keys[None, :], bucket_size, max_position)
    return out


# ---------------------------------------------------------------------------------------
# ALiBi without the causal mask (bidirectional encoders), any position ids


def alibi_symmetric_bias(
    n_heads: int, query_ids: ArrayLike, key_ids: ArrayLike, *, max_bias: float = 8.0
) -> NDArray[np.float64]:
    """Symmetric ALiBi, ``-slope_h * |i - j|``, shape ``(n_heads, n_q, n_k)``, with no mask.

    The slopes are ``posenc.alibi_slopes(n_heads, max_bias=max_bias)``; the bias depends on
    ``|i - j|`` alone (derivation ``alibi-symmetric``). On keys ``j <= i`` it equals
    ``posenc.alibi_bias``.

    >>> alibi_symmetric_bias(1, [2], [0, 1, 2, 3, 4], max_bias=1).tolist()
    [[[-1.0, -0.5, -0.0, -0.5, -1.0]]]
    """
    n_heads = _checks.integer("n_heads", n_heads, minimum=1, maximum=None)  # bounded by the element check
    queries = _checks.position_ids(query_ids, "query_ids")
    keys = _checks.position_ids(key_ids, "key_ids")
    _checks.elements("n_heads", n_heads)  # the slopes' own limit, which an empty grid would not enforce
    _checks.elements("n_heads, query_ids and key_ids", n_heads, queries.size, keys.size)  # before the slopes
    if queries.size * keys.size == 0:  # an empty grid needs no slopes (max_bias is still checked)
        alibi_slopes(1, max_bias=max_bias)
        return np.zeros((n_heads, queries.size, keys.size))
    slopes = alibi_slopes(n_heads, max_bias=max_bias)
    distance = np.abs(_grid(queries, keys, slopes.size)).astype(np.float64)
    return -slopes[:, None, None] * distance


# ---------------------------------------------------------------------------------------
# Kerple (Chi et al., 2022) and FIRE (Li et al., 2023)

KERPLE_VARIANTS = ("power", "log")


def _head_parameters(name: str, value: ArrayLike) -> np.ndarray:
    array = _checks.real_array(name, np.atleast_1d(_checks.as_array(name, value)), ndim=1, what="(n_heads,)")
    if array.size == 0:
        raise ValueError(f"{name} must hold one value per head, got none")
    return array


def kerple_bias(
    query_ids: ArrayLike, key_ids: ArrayLike, r1: ArrayLike, r2: ArrayLike, *, variant: str = "power"
) -> NDArray[np.float64]:
    """Kerple's bias, shape ``(n_heads, n_q, n_k)``, one ``(r1, r2)`` per head.

    ``"power"``: ``-r1 |i - j|**r2`` with ``r1 > 0`` and ``0 < r2 <= 2``; ``"log"``:
    ``-r1 log(1 + r2 |i - j|)`` with ``r1, r2 > 0``. Both are 0 on the diagonal and fall with
    distance. Kerple is used causally; the mask is the caller's.

    >>> kerple_bias([3], [0, 1, 3], 1.0, 2.0).tolist()
    [[[-9.0, -4.0, -0.0]]]
    >>> kerple_bias([3], [0, 3], 2.0, 1.0, variant="log").round(4).tolist()
    [[[-2.7726, -0.0]]]
    """
    variant = _checks.choice("variant", variant, KERPLE_VARIANTS)
    scale, shape = _head_parameters("r1", r1), _head_parameters("r2", r2)
    if scale.shape != shape.shape:
        raise ValueError(f"r1 and r2 must have one value per head each, got shapes {scale.shape} and {shape.shape}")
    if np.any(scale <= 0):
        raise ValueError("r1 must be > 0 for every head")
    if variant == "power" and np.any((shape <= 0) | (shape > 2)):
        raise ValueError(
            "r2 must be in (0, 2] for every head (the power variant's kernel is "
            "conditionally positive definite only there)"
        )
    if variant == "log" and np.any(shape <= 0):
        raise ValueError("r2 must be > 0 for every head")
    distance = np.abs(
        _grid(_checks.position_ids(query_ids, "query_ids"), _checks.position_ids(key_ids, "key_ids"), scale.size)
    ).astype(np.float64)
    a, c = scale[:, None, None], shape[:, None, None]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused by name below
        if variant == "power":
            bias = -a * distance[None] ** c
        else:
            bias = -a * _log1p_product(c, distance[None])
    return _checks.finite("r1 and r2", bias)


def _log1p_product(c: NDArray[np.float64] | np.float64, x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log(1 + c x)`` for ``c > 0`` and ``x >= 0``, finite wherever the true value is.

    ``c x`` may overflow (a huge c) although its log is small: there ``log c + log x`` is the
    value, the 1 being far below rounding.
    """
    with np.errstate(over="ignore", divide="ignore"):
        product = c * x
        return np.where(np.isfinite(product), np.log1p(product), np.log(c) + np.log(x))


def fire_bias(
    query_ids: ArrayLike,
    key_ids: ArrayLike,
    hidden_weights: ArrayLike,
    hidden_bias: ArrayLike,
    output_weights: ArrayLike,
    output_bias: ArrayLike,
    *,
    c: float = 1.0,
    threshold: float = 512.0,
) -> NDArray[np.float64]:
    """FIRE's bias ``f(psi(|i - j|) / psi(max(L, i)))``, ``psi(x) = log(1 + c x)``, shape ``(n_heads, n_q, n_k)``.

    ``f`` is FIRE's MLP with one ReLU hidden layer from one input to one output per head:
    ``hidden_weights`` and ``hidden_bias`` ``(hidden,)``, ``output_weights`` ``(n_heads, hidden)``,
    ``output_bias`` ``(n_heads,)``. ``c > 0`` and the threshold ``L > 0`` are learned in FIRE;
    dividing by ``psi(max(L, i))`` maps every causal distance into ``[0, 1]`` at any length.
    The distance is ``|i - j|``, which is ``i - j`` on the causal keys FIRE uses.

    >>> identity = ([1.0], [0.0], [[1.0]], [0.0])  # f(x) = max(x, 0) = x on [0, 1]
    >>> fire_bias([3], [0, 3], *identity, threshold=3.0).round(4).tolist()
    [[[1.0, 0.0]]]
    """
    w1 = _checks.real_array("hidden_weights", hidden_weights, ndim=1, what="(hidden,)")
    b1 = _checks.real_array("hidden_bias", hidden_bias, ndim=1, what="(hidden,)")
    w2 = _checks.real_array("output_weights", output_weights, ndim=2, what="(n_heads, hidden)")
    b2 = _checks.real_array("output_bias", output_bias, ndim=1, what="(n_heads,)")
    if b1.shape != w1.shape or w2.shape[1] != w1.size or b2.shape != (w2.shape[0],):
        raise ValueError(
            "the MLP's shapes must agree: hidden_weights and hidden_bias (hidden,), output_weights "
            f"(n_heads, hidden), output_bias (n_heads,); got {w1.shape}, {b1.shape}, {w2.shape}, {b2.shape}"
        )
    c = _checks.real("c", c, minimum=0.0, strict=True)
    threshold = _checks.real("threshold", threshold, minimum=0.0, strict=True)
    queries = _checks.position_ids(query_ids, "query_ids")
    keys = _checks.position_ids(key_ids, "key_ids")
    widest = max(w1.size, w2.shape[0])
    _checks.elements("query_ids and key_ids", widest, queries.size, keys.size)  # the work: every hidden unit
    normaliser = _psi(c, np.maximum(threshold, queries.astype(np.float64)))
    # A block of query rows at a time: the hidden layer, (rows, n_k, hidden), is the largest
    # temporary, and for the whole grid it would be hidden / n_heads times the result.
    bias = np.empty((w2.shape[0], queries.size, keys.size))
    step = _block_rows(keys.size * widest)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused by name below
        for start in range(0, queries.size, step):
            rows = slice(start, start + step)
            distance = np.abs(queries[rows, None] - keys[None, :]).astype(np.float64)
            x = _psi(c, distance) / normaliser[rows, None]
            hidden = np.maximum(x[..., None] * w1 + b1, 0.0)  # (rows, n_k, hidden)
            bias[:, rows] = np.moveaxis(hidden @ w2.T + b2, -1, 0)
    return _checks.finite("hidden_weights, hidden_bias, output_weights, output_bias, c and threshold", bias)


def _psi(c: float, x: NDArray[np.float64]) -> NDArray[np.float64]:
    """FIRE's ``psi(x) = log(1 + c x)`` divided by ``min(c, 1)``: only ratios of it are used.

    At a tiny c, ``log1p(c x)`` is subnormal or 0 and the ratio of two of them is 0/0 or
    inaccurate, although it tends to the ratio of the x; ``log1p(c x) / c`` is computed
    instead, from its series ``x (1 - y/2 + y**2/3 - y**3/4)`` (y = c x, error below y**4/5)
    where y is small. At a huge c, ``c x`` overflows and ``log c + log x`` is used.
    """
    if c > 1.0:
        return _log1p_product(np.float64(c), x)
    y = c * x
    with np.errstate(over="ignore", invalid="ignore"):  # the series where it is not used (large y) may overflow
        series = x * (1.0 - y * (1.0 / 2.0 - y * (1.0 / 3.0 - y / 4.0)))
    return np.where(y < 1e-4, series, np.log1p(y) / c)


# ---------------------------------------------------------------------------------------
# CoPE (Golovneva et al., 2024)


def cope_positions(logits: ArrayLike) -> NDArray[np.float64]:
    """CoPE's contextual positions ``p_ij = sum_{t=j}^{i} sigmoid(logit_it)`` for keys ``j <= i``.

    ``logits`` ``(n, n)`` are the query-key logits of one causal head (query i on row i, key j
    in column j). Each gate ``sigmoid(logit_ij)`` belongs to the pair (query i, key j): it counts
    key j as a fraction of a position for query i only, and the position of key j from query i
    sums query i's gates on the keys from j up to i. Entries above the diagonal (future keys) are
    0. As every gate tends to 1, ``p_ij`` tends to ``i - j + 1``.

    >>> cope_positions(np.full((3, 3), 50.0)).round(6).tolist()
    [[1.0, 0.0, 0.0], [2.0, 1.0, 0.0], [3.0, 2.0, 1.0]]
    """
    a = _checks.real_array("logits", logits, ndim=2, what="(n, n)")
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"logits must be square (one causal head, queries and keys the same rows), got {a.shape}")
    with np.errstate(over="ignore"):  # exp(-a) = inf for a very negative logit: its gate is 0, as it should be
        gates = np.tril(1.0 / (1.0 + np.exp(-a)))
    return np.flip(np.cumsum(np.flip(gates, axis=1), axis=1), axis=1) * np.tri(a.shape[0])


def cope_logits(queries: ArrayLike, positions: ArrayLike, position_embeddings: ArrayLike) -> NDArray[np.float64]:
    """CoPE's logit term ``q_i . e[p_ij]``, with ``e`` interpolated between integer positions, shape ``(n, n)``.

    ``queries`` ``(n, d)``, ``positions`` ``(n, n)`` from ``cope_positions``, and
    ``position_embeddings`` ``(P, d)`` one learned vector per integer position
    ``0 .. P - 1``. A position ``p`` between ``floor p`` and ``ceil p`` takes
    ``(p - floor p) q.e[ceil p] + (1 - p + floor p) q.e[floor p]``; positions above ``P - 1``
    are clamped to ``P - 1``, as the reference code does.

    >>> cope_logits([[1.0]], [[0.25]], [[0.0], [4.0]]).tolist()
    [[1.0]]
    """
    q = _rows("queries", queries)
    p = _checks.real_array("positions", positions, ndim=2, what="(n, n)")
    table = _rows("position_embeddings", position_embeddings)
    if p.shape != (q.shape[0], q.shape[0]) or table.shape[1] != q.shape[1]:
        raise ValueError(
            f"positions must have shape ({q.shape[0]}, {q.shape[0]}) and position_embeddings width {q.shape[1]} "
            f"(those of the queries, shape {q.shape}), got {p.shape} and {table.shape[1]}"
        )
    if table.shape[0] == 0:
        raise ValueError("position_embeddings must have at least one row (position 0), got none")
    if np.any(p < 0):
        raise ValueError("positions must be >= 0 (sums of gates)")
    p = np.minimum(p, table.shape[0] - 1)
    # Rows past the largest position are never read; dropping them keeps q_i . e[k] from being
    # formed for a long table that the positions do not reach.
    table = table[: int(np.ceil(p.max())) + 1 if p.size else 1]
    floor, ceil = np.floor(p).astype(np.int64), np.ceil(p).astype(np.int64)
    weight = p - floor
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused by name below
        above, below = _dot_rows(q, table, ceil), _dot_rows(q, table, floor)
        logits = weight * above + (1 - weight) * below
    return _checks.finite("queries and position_embeddings", logits)
