"""Positions on a 2-D grid of image patches: sin-cos tables, 2-D RoPE and resampled tables.

Every function here numbers the patches of a ``rows x cols`` grid row by row: token ``t`` is the
patch in row ``t // cols`` and column ``t % cols``, as a patch embedding flattens its feature map.

2-D sin-cos tables (``sincos_2d_table``). A 1-D sinusoidal table per axis, concatenated:
half of the ``dim`` channels encode the row, half the column, each half being ``dim / 4`` sines
and ``dim / 4`` cosines of the index times a geometric frequency schedule. Four libraries build
it, and no two of them agree. With ``q = dim / 4`` and ``k < q``, the frequencies and the
order of the four blocks of q channels are:

* "mae": ``base ** (-k / q)``; sin(col), cos(col), sin(row), cos(row).
* "transformers": ``base ** (-k / q)``; sin(row), cos(row), sin(col), cos(col).
* "timm": ``base ** (-k / q)``; sin(row), sin(col), cos(row), cos(col).
* "vit-pytorch": ``base ** (-k / (q - 1))``; sin(col), cos(col), sin(row), cos(row).

MAE's ``get_2d_sincos_pos_embed`` calls ``meshgrid(grid_w, grid_h)``, which puts the column
index in its first grid; it then encodes that grid in the first half under the name ``emb_h``,
so its first half follows the column. transformers' ``build_2d_sinusoidal_position_embedding``
puts the row first; ViTMAE's ``initialize_weights`` then swaps the two halves to load MAE's
checkpoints, so a ViTMAE model's table is the "mae" layout and the function's own output is
"transformers". timm's ``build_sincos2d_pos_embed`` (its defaults ``reverse_coord=False``,
``interleave_sin_cos=False``) stacks all sines before all cosines, row before column within each.
lucidrains' ``posemb_sincos_2d`` divides by ``q - 1``, so its lowest frequency is exactly
``1 / base`` (the tensor2tensor schedule) where the others stop one step short of it.

2-D RoPE (``axial_rope_2d``, ``mixed_rope_2d``). Axial RoPE gives the first half of the
rotated pairs the row coordinate and the second half the column coordinate, with one schedule
of ``d / 4`` frequencies shared by both; RoPE-Mixed (Heo et al. 2024) gives every pair its own
learned 2-D frequency ``(fx, fy)`` and turns it by ``fx * col + fy * row``. Both depend only
on the 2-D offset between a query and a key. Coordinates are patch indices, or (DINOv3) patch
centres mapped to [-1, 1] by the grid's size, or (timm's default) evenly spaced over [-1, 1].
A fractional coordinate is the fraction of two integers, and its phase is formed from them
exactly (``_precision.divided_turns``), never from the fraction rounded to float64: at every
frequency whose phases stay below 2**53 radians the sines are as accurate as at integer ids.

Resampling a table (``resample_patch_table``, ``resample_weights``). A learned table
trained on one grid is resized to another by bicubic interpolation, which is separable: each
axis is a matrix of weights (``resample_weights``) and the 2-D map is their Kronecker product.
The libraries differ in the cubic kernel, its border handling and the scale:

* transformers (``interpolate_pos_encoding`` of ViT, CLIP, ViTMAE's encoder and its DINOv2
  port): ``size=`` the new grid, ``align_corners=False``, no antialiasing: the cubic
  convolution kernel with ``a = -0.75`` over four taps, an index past a border clamped to it
  (the edge value is repeated).
* timm (``resample_abs_pos_embed``): ``antialias=True`` by default, and PyTorch's antialiased
  bicubic uses ``a = -0.5`` even when upsampling. Taps past a border are dropped and the
  remaining weights renormalised; when downsampling by s the kernel is stretched by s (its
  support widens from 2 to 2 s on each side).
* DINOv2 (the original code): no antialiasing, but it passes ``scale_factor = (new + 0.1) /
  old`` instead of the size, and PyTorch then samples with the scale ``old / (new + 0.1)``,
  not ``old / new`` (the 0.1 keeps ``floor(old * scale_factor)`` from rounding down to
  ``new - 1``).

Prefix tokens (a class token, registers) are not on the grid and pass through unchanged.

Every function checks its arguments through ``posenc._checks`` and names the offending one;
NaN and infinity are refused in every array, and the sines and cosines are posenc's accurate
ones (``posenc._precision``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _checks, _precision, rotary
from .rotary import DEFAULT_BASE

SINCOS_2D_LAYOUTS = ("mae", "transformers", "timm", "vit-pytorch")
COORDINATES = ("index", "centered", "pixel")
RESAMPLE_CONVENTIONS = ("timm", "transformers", "dinov2")

#: The cubic convolution coefficient of PyTorch's plain bicubic (transformers, DINOv2).
CUBIC_A = -0.75
#: The coefficient of its antialiased bicubic (timm's default), upsampling or not.
CUBIC_A_ANTIALIAS = -0.5
#: What the original DINOv2 code adds to the new grid size before dividing by the old one.
DINOV2_OFFSET = 0.1


# ---------------------------------------------------------------------------------------
# Arguments


def _grid_side(name: str, value: Any) -> int:
    """A number of rows or columns: a positive integer."""
    return _checks.integer(name, value, minimum=1)


def _grid(name: str, value: Any) -> tuple[int, int]:
    """A grid size ``(rows, cols)``: two positive integers."""
    array = _checks.integer_array(name, value)
    if array.shape != (2,):
        raise ValueError(f"{name} must be two integers (rows, cols), got shape {array.shape}")
    rows, cols = (_checks.integer(name, int(side), minimum=1) for side in array)
    return rows, cols


def _grid_vectors(value: Any, rows: int, cols: int, multiple: int) -> np.ndarray:
    """``x`` of 2-D RoPE: a finite real array (..., rows * cols, d), d a positive multiple of ``multiple``."""
    array = _checks.as_array("x", value)
    if not _checks._is_real(array):
        raise TypeError(f"x must be a real array, got dtype {array.dtype}")
    if array.ndim < 2:
        raise ValueError(f"x must have shape (..., rows * cols, d) with at least 2 axes, got shape {array.shape}")
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise ValueError("x must be finite, got NaN or infinity")
    if array.shape[-2] != rows * cols:
        raise ValueError(
            f"x must have one row per grid cell: rows * cols = {rows} * {cols} = {rows * cols}, "
            f"got {array.shape[-2]} rows"
        )
    width = array.shape[-1]
    if width == 0 or width % multiple:
        why = "pairs split between the row and the column" if multiple == 4 else "channels come in pairs"
        raise ValueError(f"x's last axis must be a positive multiple of {multiple} ({why}), got {width}")
    _checks.channel_count(width, "x's last axis")
    return array


def _coordinates(count: int, kind: str) -> tuple[NDArray[np.float64], int]:
    """The coordinate of each of ``count`` patches along one axis, as exact integer numerators
    (in float64) over one positive integer denominator.

    The phases take the numerators as their ids and the frequencies divided by the denominator
    (``_precision.divided_turns``): a fraction rounded to float64 first would carry its rounding
    error, times the frequency, into the phase.
    """
    index = np.arange(count, dtype=np.float64)
    if kind == "index":
        return index, 1
    if kind == "centered":
        # 2 (i + 1/2) / n - 1 = (2 i + 1 - n) / n.
        return 2.0 * index + 1.0 - count, count
    # Evenly spaced over [-1, 1], both ends included: (2 i - (n - 1)) / (n - 1); a single patch
    # sits at -1 (as linspace gives).
    if count == 1:
        return np.array([-1.0]), 1
    return 2.0 * index - (count - 1), count - 1


def _coordinate_sincos(count: int, kind: str, turns: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Accurate (sin, cos) of each coordinate of an axis times each frequency (in turns)."""
    numerators, denominator = _coordinates(count, kind)
    return _precision.sincos(numerators, _precision.divided_turns(turns, denominator))


def _largest_coordinate(count: int, kind: str) -> float:
    """The largest coordinate's magnitude on an axis of ``count`` patches."""
    numerators, denominator = _coordinates(count, kind)
    return float(np.max(np.abs(numerators))) / denominator


def _phase_limit(coordinate: float, frequencies: np.ndarray, what: str, name: str) -> None:
    """Refuse the largest coordinate times frequencies at or past 2**53 radians (no accurate sine beyond)."""
    if not frequencies.size:
        return
    largest = coordinate * float(np.max(np.abs(frequencies)))
    if largest >= _checks.PHASE_LIMIT:
        raise ValueError(
            f"{what} times {name} must stay below 2**53 radians (beyond it a phase has no accurate sine in "
            f"float64), got {largest:g}"
        )


# ---------------------------------------------------------------------------------------
# 2-D sin-cos tables


def sincos_2d_table(rows: int, cols: int, dim: int, *, layout: str, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """The fixed 2-D sin-cos table of a ``rows x cols`` patch grid, shape ``(rows * cols, dim)``.

    Row ``t`` is the patch in row ``t // cols``, column ``t % cols``. Each axis gets ``dim / 2``
    channels: the sines and the cosines of its index times ``dim / 4`` frequencies. ``layout``
    names the library whose table this is (the module's table says how they differ):
    "mae" (MAE, and a ViTMAE model's table in transformers), "transformers" (its
    ``build_2d_sinusoidal_position_embedding``), "timm" (``build_sincos2d_pos_embed``) or
    "vit-pytorch" (``posemb_sincos_2d``). ``base`` is what the libraries call the temperature.
    No prefix row is included: MAE and ViTMAE put a zero row for the class token before it.

    >>> sincos_2d_table(1, 2, 4, layout="mae").round(3).tolist()
    [[0.0, 1.0, 0.0, 1.0], [0.841, 0.54, 0.0, 1.0]]
    >>> sincos_2d_table(1, 2, 4, layout="timm").round(3).tolist()
    [[0.0, 0.0, 1.0, 1.0], [0.0, 0.841, 1.0, 0.54]]
    """
    rows = _grid_side("rows", rows)
    cols = _grid_side("cols", cols)
    layout = _checks.choice("layout", layout, SINCOS_2D_LAYOUTS)
    dim = _checks.integer("dim", dim, minimum=None, maximum=None)
    minimum = 8 if layout == "vit-pytorch" else 4
    if dim < minimum or dim % 4:
        why = " (vit-pytorch divides by dim / 4 - 1)" if layout == "vit-pytorch" else ""
        raise ValueError(f"dim must be a multiple of 4 and at least {minimum}{why}, got {_checks._describe(dim)}")
    dim = _checks.channel_count(dim, "dim")
    base = _checks.base(base)
    _checks.elements("rows, cols and dim", rows, cols, dim)
    quarter = dim // 4
    denominator = quarter - 1 if layout == "vit-pytorch" else quarter
    turns = _precision.power_turns(base, 1, denominator, quarter)
    row_sin, row_cos = (part[:, None, :] for part in _precision.sincos(np.arange(rows), turns))
    col_sin, col_cos = (part[None, :, :] for part in _precision.sincos(np.arange(cols), turns))
    order = {
        "mae": (col_sin, col_cos, row_sin, row_cos),
        "vit-pytorch": (col_sin, col_cos, row_sin, row_cos),
        "transformers": (row_sin, row_cos, col_sin, col_cos),
        "timm": (row_sin, col_sin, row_cos, col_cos),
    }[layout]
    table = np.empty((rows, cols, dim))
    for block, values in enumerate(order):
        table[:, :, block * quarter : (block + 1) * quarter] = values
    return table.reshape(rows * cols, dim)


# ---------------------------------------------------------------------------------------
# 2-D RoPE


def axial_rope_2d(
    x: ArrayLike,
    rows: int,
    cols: int,
    *,
    base: float = DEFAULT_BASE,
    frequencies: ArrayLike | None = None,
    layout: str = "interleaved",
    coordinates: str = "index",
) -> NDArray[np.float64]:
    """Axial 2-D RoPE: the first half of the pairs turn with the row, the second with the column.

    ``x`` has shape ``(..., rows * cols, d)``, d a multiple of 4, its rows the patches of the
    grid row by row. With ``q = d / 4``, pair ``k < q`` turns by ``y * frequencies[k]`` and pair
    ``q + k`` by ``x * frequencies[k]``, where (y, x) are the patch's row and column coordinates
    and ``frequencies`` (q of them, radians per coordinate unit) defaults to ``base ** (-k / q)``.
    Pairs are numbered within ``layout``: "interleaved" pairs channels (2 r, 2 r + 1), "halves"
    pairs r and r + d / 2. ``coordinates`` "index" are the indices 0, 1, ...; "centered" are the
    patch centres mapped to [-1, 1], ``2 (i + 1/2) / n - 1`` on an axis of n patches;
    "pixel" are n points evenly spaced from -1 to 1.

    timm's ``RotaryEmbeddingCat`` is this with its bands as ``frequencies`` ("interleaved", or
    "halves" for ``rotate_half=True``; "index" for ``in_pixels=False``, whose bands are the
    default ``base ** (-k / q)``, "pixel" otherwise). DINOv3 is "halves" with "centered"
    coordinates and frequencies ``2 pi base ** (-k / q)`` (its periods ``base ** (k / q)``
    are in units of half the image's extent along the axis), base 100.

    >>> q = np.array([[1.0, 0.0, 1.0, 0.0]] * 4)
    >>> rotated = axial_rope_2d(q, 2, 2, frequencies=[1.0])
    >>> np.round(rotated[3], 3).tolist()  # row 1, column 1: both pairs turned by one radian
    [0.54, 0.841, 0.54, 0.841]
    """
    rows = _grid_side("rows", rows)
    cols = _grid_side("cols", cols)
    values = _grid_vectors(x, rows, cols, 4)
    base = _checks.base(base)
    layout = _checks.layout(layout)
    coordinates = _checks.choice("coordinates", coordinates, COORDINATES)
    width = values.shape[-1]
    quarter = width // 4
    if frequencies is None:
        turns = _precision.power_turns(base, 1, quarter, quarter)
    else:
        given = _checks.frequency_array(frequencies, quarter, name="frequencies")
        largest = max(_largest_coordinate(rows, coordinates), _largest_coordinate(cols, coordinates))
        _phase_limit(largest, given, "grid coordinates", "frequencies")
        turns = _precision.value_turns(given)
    row_sin, row_cos = _coordinate_sincos(rows, coordinates, turns)
    col_sin, col_cos = _coordinate_sincos(cols, coordinates, turns)
    sin, cos = np.empty((rows, cols, 2 * quarter)), np.empty((rows, cols, 2 * quarter))
    sin[:, :, :quarter], cos[:, :, :quarter] = row_sin[:, None, :], row_cos[:, None, :]
    sin[:, :, quarter:], cos[:, :, quarter:] = col_sin[None, :, :], col_cos[None, :, :]
    shape = (rows * cols, 2 * quarter)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below, by name
        return _checks.finite("x", rotary.rotate_pairs(values, sin.reshape(shape), cos.reshape(shape), width, layout))


def mixed_rope_2d(
    x: ArrayLike,
    rows: int,
    cols: int,
    frequencies: ArrayLike,
    *,
    layout: str = "interleaved",
    coordinates: str = "index",
) -> NDArray[np.float64]:
    """RoPE-Mixed: pair r turns by ``fx[r] * x + fy[r] * y``, a learned 2-D frequency per pair.

    ``frequencies`` has shape ``(2, d / 2)``: ``fx`` (per column coordinate) then ``fy`` (per
    row coordinate), of any sign. ``x``, ``layout`` and ``coordinates`` are those of
    ``axial_rope_2d``, except that d need only be even. Axial RoPE is the special case
    ``fy = (omega, 0)``, ``fx = (0, omega)``.
    timm's ``RotaryEmbeddingMixed`` (at its default ``grid_indexing="xy"``) is this in the
    "interleaved" layout with "index" coordinates, its ``freqs[0]`` (which it multiplies by
    the column) as ``fx``.

    The sine and cosine of the summed phase come from the angle-sum formulas on posenc's
    accurate sines and cosines of the two products, so each is within about 1e-15 of its
    exact value.

    >>> q = np.array([[1.0, 0.0, 1.0, 0.0]] * 2)
    >>> f = [[0.5, 0.0], [0.0, 0.0]]  # only the first pair moves, half a radian per column
    >>> np.round(mixed_rope_2d(q, 1, 2, f)[1], 3).tolist()
    [0.878, 0.479, 1.0, 0.0]
    """
    rows = _grid_side("rows", rows)
    cols = _grid_side("cols", cols)
    values = _grid_vectors(x, rows, cols, 2)
    layout = _checks.layout(layout)
    coordinates = _checks.choice("coordinates", coordinates, COORDINATES)
    pairs = values.shape[-1] // 2
    given = _checks.real_array("frequencies", frequencies, ndim=2, what="(2, d / 2): fx then fy")
    if given.shape != (2, pairs):
        raise ValueError(
            f"frequencies must have shape (2, {pairs}) (fx then fy, one per pair of x's last axis), "
            f"got shape {given.shape}"
        )
    _phase_limit(_largest_coordinate(cols, coordinates), given[0], "column coordinates", "frequencies")
    _phase_limit(_largest_coordinate(rows, coordinates), given[1], "row coordinates", "frequencies")
    col_sin, col_cos = _coordinate_sincos(cols, coordinates, _precision.value_turns(given[0]))
    row_sin, row_cos = _coordinate_sincos(rows, coordinates, _precision.value_turns(given[1]))
    # sin(a + b) and cos(a + b) from the accurate sines and cosines of a and b.
    sin = row_sin[:, None, :] * col_cos[None, :, :] + row_cos[:, None, :] * col_sin[None, :, :]
    cos = row_cos[:, None, :] * col_cos[None, :, :] - row_sin[:, None, :] * col_sin[None, :, :]
    shape = (rows * cols, pairs)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below, by name
        rotated = rotary.rotate_pairs(values, sin.reshape(shape), cos.reshape(shape), 2 * pairs, layout)
    return _checks.finite("x", rotated)


# ---------------------------------------------------------------------------------------
# Resampling a learned table


def _cubic_near(x: NDArray[np.float64], a: float) -> NDArray[np.float64]:
    """The cubic convolution kernel on [0, 1], in PyTorch's order of operations."""
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic_far(x: NDArray[np.float64], a: float) -> NDArray[np.float64]:
    """The cubic convolution kernel on [1, 2], in PyTorch's order of operations."""
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def _cubic(distance: NDArray[np.float64], a: float) -> NDArray[np.float64]:
    """The cubic convolution kernel at |distance|, zero from 2 on (the antialiased filter's form)."""
    x = np.abs(distance)
    return np.where(x < 1.0, _cubic_near(x, a), np.where(x < 2.0, _cubic_far(x, a), 0.0))


def _plain_taps(old: int, out: NDArray[np.float64], scale: float) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """PyTorch's bicubic without antialiasing: for each output index in ``out``, its four input
    indices (clamped to the border) and their ``a = -0.75`` coefficients, each of shape (len(out), 4)."""
    source = scale * (out + 0.5) - 0.5
    # PyTorch floors the source index after rounding it to float32 (floorf), then keeps the
    # fraction in [0, 1]; only far from the origin does the rounding move the floor.
    index = np.minimum(np.floor(source.astype(np.float32)).astype(np.int64), old - 1)
    t = np.clip(source - index, 0.0, 1.0)
    coefficients = np.stack(
        [
            _cubic_far(t + 1.0, CUBIC_A),
            _cubic_near(t, CUBIC_A),
            _cubic_near(1.0 - t, CUBIC_A),
            _cubic_far((1.0 - t) + 1.0, CUBIC_A),
        ],
        axis=1,
    )
    taps = np.clip(index[:, None] + np.arange(-1, 3)[None, :], 0, old - 1)
    return taps, coefficients


def _output_blocks(new: int, taps: int) -> list[tuple[int, int]]:
    """(start, stop) of blocks of output rows whose per-tap temporaries stay near ``_checks.BLOCK_ELEMENTS``
    in all: the weights of an output are a few taps, but a tall, narrow matrix has many outputs."""
    rows = max(1, _checks.BLOCK_ELEMENTS // (8 * taps))
    return [(start, min(new, start + rows)) for start in range(0, new, rows)]


def _plain_weights(old: int, new: int, scale: float) -> NDArray[np.float64]:
    """The taps of ``_plain_taps`` as a (new, old) matrix; a clamped index adds to the edge's weight."""
    weights = np.zeros((new, old))
    for start, stop in _output_blocks(new, 4):
        outputs = np.arange(start, stop)
        taps, coefficients = _plain_taps(old, outputs.astype(np.float64), scale)
        for tap in range(4):  # one tap per output at a time, so no index repeats within an assignment
            weights[outputs, taps[:, tap]] += coefficients[:, tap]
    return weights


def _antialiased_weights(old: int, new: int, scale: float) -> NDArray[np.float64]:
    """PyTorch's antialiased bicubic: ``a = -0.5``, stretched by the scale when downsampling,
    taps past the border dropped and the rest renormalised."""
    support = 2.0 * scale if scale >= 1.0 else 2.0
    stretch = 1.0 / scale if scale >= 1.0 else 1.0
    # The taps of one output, at most all of the input: last - first <= old below.
    most = min(int(math.ceil(support)) * 2 + 1, old)
    weights = np.zeros((new, old))
    for start, stop in _output_blocks(new, most):
        outputs = np.arange(start, stop)
        centre = scale * (outputs + 0.5)
        # C++ casts to int64 by truncation; a negative first tap is then raised to 0 anyway.
        first = np.maximum(np.trunc(centre - support + 0.5).astype(np.int64), 0)
        last = np.minimum(np.trunc(centre + support + 0.5).astype(np.int64), old)
        count = np.clip(last - first, 0, most)
        offsets = np.arange(most)[None, :]
        used = offsets < count[:, None]
        taps = first[:, None] + offsets
        raw = np.where(used, _cubic(((taps - centre[:, None]) + 0.5) * stretch, CUBIC_A_ANTIALIAS), 0.0)
        total = raw.sum(axis=1, keepdims=True)
        raw = np.divide(raw, total, out=raw.copy(), where=total != 0.0)
        rows = np.broadcast_to(outputs[:, None], taps.shape)
        weights[rows[used], taps[used]] = raw[used]
    return weights


def resample_weights(
    old: int, new: int, *, antialias: bool = False, scale_factor: float | None = None
) -> NDArray[np.float64]:
    """The ``(new, old)`` matrix of PyTorch's bicubic resize along one axis (``align_corners=False``).

    Output i reads the input around ``scale * (i + 1/2) - 1/2`` with ``scale = old / new``, or
    ``1 / scale_factor`` when PyTorch was given a ``scale_factor`` (then ``new`` must be
    ``floor(old * scale_factor)``, the size PyTorch makes). Without ``antialias``: the cubic
    convolution kernel with ``a = -0.75`` on the four inputs around that point, an index past
    the border clamped to it (so the edge input takes the weight of the missing ones); as in
    PyTorch, the point is floored after rounding it to float32, which matters only past 2**24.
    With ``antialias``: ``a = -0.5``, the kernel stretched by ``scale`` when downsampling
    (support ``2 scale`` on each side), taps outside the input dropped and the remaining
    weights divided by their sum. Every row sums to 1 up to rounding. The 2-D resize is
    separable: ``W_rows @ T @ W_cols.T`` for a table T of one channel.

    >>> resample_weights(2, 4).round(4).tolist()  # upsampling 2 -> 4: plain bicubic overshoots
    [[1.1055, -0.1055], [0.7734, 0.2266], [0.2266, 0.7734], [-0.1055, 1.1055]]
    >>> resample_weights(2, 4, antialias=True).round(4).tolist()[0]  # the a = -0.5 kernel, renormalised
    [1.0882, -0.0882]
    """
    old = _grid_side("old", old)
    new = _grid_side("new", new)
    antialias = _checks.boolean("antialias", antialias)
    _checks.elements("old and new", old, new)
    if scale_factor is None:
        scale = old / new
    else:
        factor = _checks.real("scale_factor", scale_factor, minimum=0.0, strict=True)
        size = float(old) * factor
        if not math.isfinite(size):
            raise ValueError(f"scale_factor must keep old * scale_factor finite in float64, got {factor!r}")
        made = math.floor(size)
        if made != new:
            raise ValueError(
                f"new must be the size PyTorch makes from scale_factor, floor(old * scale_factor) = "
                f"floor({old} * {factor!r}) = {made}, got {new}"
            )
        scale = 1.0 / factor
    return _antialiased_weights(old, new, scale) if antialias else _plain_weights(old, new, scale)


def resample_patch_table(
    table: ArrayLike,
    new_grid: ArrayLike,
    *,
    convention: str,
    old_grid: ArrayLike | None = None,
    prefix_tokens: int = 1,
) -> NDArray[np.float64]:
    """A learned position table resized from one patch grid to another, as a library does it.

    ``table`` has shape ``(prefix_tokens + rows * cols, dim)``: the prefix rows (a class token,
    registers) first, unchanged in the result, then the grid row by row. ``old_grid`` defaults
    to the square grid the patch rows fill (transformers and DINOv2 only ever read it as square).
    ``convention``: "transformers" (plain bicubic to the new size), "timm" (antialiased bicubic,
    ``resample_abs_pos_embed``'s default) or "dinov2" (plain bicubic at the scale
    ``old / (new + 0.1)``); ``resample_weights`` gives each axis's matrix. A new grid equal to
    the old returns the table unchanged, as all three do. Shape
    ``(prefix_tokens + new_rows * new_cols, dim)``.

    >>> table = np.array([[9.0], [0.0], [1.0], [2.0], [3.0]])  # a class token, then a 2 x 2 grid
    >>> resample_patch_table(table, (1, 1), convention="transformers").tolist()
    [[9.0], [1.5]]
    """
    values = _checks.real_array("table", table, ndim=2, what="(prefix_tokens + rows * cols, dim)")
    convention = _checks.choice("convention", convention, RESAMPLE_CONVENTIONS)
    new_rows, new_cols = _grid("new_grid", new_grid)
    prefix_tokens = _checks.integer("prefix_tokens", prefix_tokens, minimum=0)
    patches = values.shape[0] - prefix_tokens
    if patches < 1:
        raise ValueError(
            f"table must have a row per grid cell after its prefix_tokens ({prefix_tokens}) rows, "
            f"got {values.shape[0]} rows"
        )
    if old_grid is None:
        side = math.isqrt(patches)
        if side * side != patches:
            raise ValueError(
                f"table's {patches} rows after prefix_tokens ({prefix_tokens}) are not a square grid; "
                "give old_grid (rows, cols)"
            )
        old_rows, old_cols = side, side
    else:
        old_rows, old_cols = _grid("old_grid", old_grid)
        if old_rows * old_cols != patches:
            raise ValueError(
                f"old_grid {old_rows} x {old_cols} must have one cell per row of table after prefix_tokens "
                f"({prefix_tokens}): {old_rows * old_cols} cells for {patches} rows"
            )
    dim = values.shape[1]
    _checks.elements("new_grid and table's width", prefix_tokens + new_rows * new_cols, dim)
    if (new_rows, new_cols) == (old_rows, old_cols):
        return values.copy()
    if convention == "dinov2":
        row_weights = resample_weights(old_rows, new_rows, scale_factor=_dinov2_factor(old_rows, new_rows, "new_grid"))
        col_weights = resample_weights(old_cols, new_cols, scale_factor=_dinov2_factor(old_cols, new_cols, "new_grid"))
    else:
        antialias = convention == "timm"
        _checks.elements("new_grid and old_grid", new_rows, old_rows)
        _checks.elements("new_grid and old_grid", new_cols, old_cols)
        row_weights = resample_weights(old_rows, new_rows, antialias=antialias)
        col_weights = resample_weights(old_cols, new_cols, antialias=antialias)
    grid = values[prefix_tokens:].reshape(old_rows, old_cols, dim)
    # Shrink first: the intermediate is the smaller of (new_rows, old_cols) and (old_rows, new_cols).
    with np.errstate(over="ignore", invalid="ignore"):
        if new_rows * old_cols <= old_rows * new_cols:
            _checks.elements("new_grid and old_grid", new_rows, old_cols, dim)
            half = np.einsum("ro,ocd->rcd", row_weights, grid)
            resized = np.einsum("co,rod->rcd", col_weights, half)
        else:
            _checks.elements("new_grid and old_grid", old_rows, new_cols, dim)
            half = np.einsum("co,rod->rcd", col_weights, grid)
            resized = np.einsum("ro,ocd->rcd", row_weights, half)
        out = np.concatenate([values[:prefix_tokens], resized.reshape(new_rows * new_cols, dim)])
    return _checks.finite("table", out)


def _dinov2_factor(old: int, new: int, name: str) -> float:
    """The scale factor DINOv2 passes for one axis, ``(new + 0.1) / old``, checked to give ``new`` back."""
    factor = (new + DINOV2_OFFSET) / old
    if math.floor(float(old) * factor) != new:
        raise ValueError(f"{name}: floor({old} * ({new} + 0.1) / {old}) is not {new} in float64")
    return factor
