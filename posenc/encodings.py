"""Positional encodings in NumPy: sinusoidal, its shift operator and kernel, RoPE and ALiBi.

Conventions (see the site's deep dive and the derivation registry, ``posenc.site.derivations``):

* ``width`` is the model width d; pair ``r`` (0 <= r < d/2) has frequency
  ``omega_r = base ** (-2 r / d)`` (derivation ``wavelength``).
* Position ids are explicit integers; nothing assumes a sequence starts at 0.
* The "interleaved" layout puts sin(t omega_r) at channel 2r and cos(t omega_r) at 2r + 1
  (the original paper); "halves" puts every sine first, then every cosine.
* Limits: position ids and offsets must be below 2**53 in magnitude (exact in float64); no
  call builds an array of more than 2**27 elements or an encoding of more than 2**16
  channels. A request beyond a limit raises ``ValueError`` naming the argument before any
  work is done.
* NaN and infinity: refused (``ValueError`` naming the argument) in every array a function
  reads, ``x`` of ``rope`` included, never passed through into a result; a result that would
  overflow float64 from finite arguments is refused in the same way. This is the rule of all
  of posenc (``posenc._checks``).

The frequency table, the sinusoidal rows and the RoPE rotation are computed in one place each,
``posenc.conventions`` (``schedule_frequencies``, ``sinusoidal_embedding``) and ``posenc.rotary``
(``apply_rope``), which cover other libraries' variants too; the functions here are those at the paper's
settings, with the paper's stricter rules on widths.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from . import _checks, _precision, conventions, rotary

# Re-exported (``as``): posenc.DEFAULT_BASE is imported from here.
from .conventions import DEFAULT_BASE as DEFAULT_BASE


def frequencies(width: int, *, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Angular frequency of every sine/cosine pair: ``omega_r = base ** (-2 r / width)``, correctly rounded.

    Used on the deep dive ("Build one position vector") and by derivation ``wavelength``. The
    same bits as ``schedule_frequencies`` and ``rope_frequencies`` (the paper's schedule).

    >>> frequencies(8).round(4).tolist()
    [1.0, 0.1, 0.01, 0.001]
    """
    return conventions.schedule_frequencies(_checks.width(width), base=base)


def wavelengths(width: int, *, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Wavelength of every pair in positions, ``2 pi / omega_r`` (derivation ``wavelength``).

    >>> wavelengths(8).round(2).tolist()
    [6.28, 62.83, 628.32, 6283.19]
    """
    with np.errstate(over="ignore"):  # a base near float64's largest makes a wavelength beyond it
        return _checks.finite("base and width", 2.0 * np.pi / frequencies(width, base=base))


def sinusoidal(
    position_ids: ArrayLike,
    width: int,
    *,
    base: float = DEFAULT_BASE,
    layout: str = "interleaved",
    dtype: DTypeLike = np.float64,
) -> NDArray[np.floating[Any]]:
    """The sinusoidal encoding P(t) of each position id, one row per id.

    Returns an array of shape ``(len(position_ids), width)``. The phases ``t * omega_r`` are
    formed and reduced modulo 2 pi in extended precision, so the float64 result is within
    1e-15 of the exact value for every id below 2**31 (where naive float64 ``sin(t * omega)``
    is off by up to 1e-7); any other ``dtype`` gets that result rounded once. This is
    ``posenc.conventions.sinusoidal_embedding`` with its defaults, for an even ``width``.

    >>> sinusoidal([2], 8)[0, :4].round(4).tolist()
    [0.9093, -0.4161, 0.1987, 0.9801]
    """
    ids = _checks.position_ids(position_ids)
    width = _checks.width(width)
    return conventions.sinusoidal_embedding(ids, width, base=base, layout=layout, dtype=dtype)


def _offset_sincos(k: np.ndarray, width: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """Accurate ``sin(k omega_r)`` and ``cos(k omega_r)``, shape ``k.shape + (width // 2,)``.

    The phases are those of ``sinusoidal`` (see posenc._precision), valid for real k too; the
    offset check keeps |k| below 2**53, so every phase stays below 2**53 radians.
    """
    half = width // 2
    _checks.elements("offset and width", k.size, half)
    sines, cosines = _precision.sincos(k.ravel(), _precision.power_turns(base, 2, width, half))
    return sines.reshape(k.shape + (half,)), cosines.reshape(k.shape + (half,))


def _summed_over_pairs(k: np.ndarray, width: int, base: float, term: str) -> np.ndarray:
    """``sum_r cos(k omega_r)`` (``term="cos"``) or ``sum_r sin(k omega_r)**2`` (``"sin2"``), shape ``k.shape``.

    The (offsets, pairs) table behind the sum is checked like any sine table and built a block
    of offsets at a time, so a call never holds more than a block of it beside its result.
    """
    half = width // 2
    _checks.elements("offset and width", k.size, half)
    turns = _precision.power_turns(base, 2, width, half)
    flat, out = k.ravel(), np.empty(k.size)
    step = max(1, _checks.BLOCK_ELEMENTS // half)
    for start in range(0, flat.size, step):
        sines, cosines = _precision.sincos(flat[start : start + step], turns)
        out[start : start + step] = (cosines if term == "cos" else np.square(sines)).sum(axis=-1)
    return out.reshape(k.shape)


def shift_operator(offset: ArrayLike, width: int, *, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """The block-diagonal matrix T_k with ``P(t + k) = T_k @ P(t)`` (interleaved layout).

    ``offset`` is one number (result ``(width, width)``) or an array of them (result
    ``offset.shape + (width, width)``), each below 2**53 in magnitude like a position id.
    T_k does not depend on t: derivation ``block-shift``. Its rotation angles are the accurate
    phases of ``sinusoidal``.
    """
    k = _checks.offsets(offset)
    width = _checks.width(width)
    base = _checks.base(base)
    _checks.elements("offset and width", k.size, width, width)
    sin, cos = _offset_sincos(k, width, base)
    out = np.zeros(k.shape + (width, width))
    for r in range(width // 2):
        # [[cos a, sin a], [-sin a, cos a]] advances (sin x, cos x) to x + a
        out[..., 2 * r, 2 * r] = out[..., 2 * r + 1, 2 * r + 1] = cos[..., r]
        out[..., 2 * r, 2 * r + 1] = sin[..., r]
        out[..., 2 * r + 1, 2 * r] = -sin[..., r]
    return out


def kernel(offset: ArrayLike, width: int, *, base: float = DEFAULT_BASE) -> NDArray[np.float64] | float:
    """The dot product ``P(t) . P(t + offset) = sum_r cos(omega_r * offset)`` (derivation ``kernel``).

    Returns a float for a scalar offset and an array of the offsets' shape otherwise. Offsets
    must be below 2**53 in magnitude, like position ids; the cosines are the accurate ones of
    ``sinusoidal``, so ``kernel(t - s)`` equals the dot product of ``sinusoidal([t, s])``'s
    rows to within rounding at every such offset (a naive ``cos(omega_r * offset)`` would see
    phases rounded to a grid of 1 radian near 2**53).

    >>> round(kernel(6, 8), 2)
    3.78
    """
    k = _checks.offsets(offset)
    width = _checks.width(width)
    base = _checks.base(base)
    values = _summed_over_pairs(k, width, base, "cos")
    return float(values) if values.ndim == 0 else values


def squared_distance(offset: ArrayLike, width: int, *, base: float = DEFAULT_BASE) -> NDArray[np.float64] | float:
    """``|P(t) - P(t + offset)|^2 = width - 2 * kernel(offset)`` (derivation ``distance``).

    Computed as ``4 sum_r sin^2(omega_r offset / 2)`` with the accurate phases of ``sinusoidal``,
    which keeps full relative accuracy at small offsets where ``width - 2 kernel`` would
    cancel. Offsets must be below 2**53 in magnitude, as for ``kernel``.
    """
    k = _checks.offsets(offset)
    width = _checks.width(width)
    base = _checks.base(base)
    values = 4.0 * _summed_over_pairs(k / 2, width, base, "sin2")  # k / 2 is exact in float64
    return float(values) if values.ndim == 0 else values


def rope(
    x: ArrayLike,
    position_ids: ArrayLike,
    *,
    base: float = DEFAULT_BASE,
    layout: str = "interleaved",
) -> NDArray[np.float64]:
    """Rotary position embedding: rotate each channel pair of row j by ``position_ids[j] * omega_r``.

    ``x`` has shape ``(..., n, d)`` with d even and ``n == len(position_ids)``. "interleaved"
    pairs channels (2r, 2r + 1) as in RoFormer and GPT-J; "halves" pairs channel r with
    r + d/2 as in GPT-NeoX. Scores of rotated queries and keys depend only on the offset:
    derivation ``rope-relative``. The cosines and sines applied are within 1e-15 of the exact
    ``cos(t omega_r)``, ``sin(t omega_r)`` for every id below 2**31 (as in ``sinusoidal``).
    This is ``posenc.rotary.apply_rope`` (also ``posenc.apply_rope``) with its defaults: every channel rotates. ``x``
    must be finite: a NaN or infinity in it is refused, not rotated into its pair's other channel.
    """
    ids = _checks.position_ids(position_ids)
    values = _checks.vectors(x, ids)
    width = _checks.width(values.shape[-1], name="x's last axis")
    # Checked once, here, in apply_rope's order (base, then layout); rotary.rotate checks nothing again.
    return rotary.rotate(values, ids, _checks.base(base), None, width, _checks.layout(layout))


def alibi_slopes(n_heads: int, *, max_bias: float = 8.0) -> NDArray[np.float64]:
    """ALiBi's per-head slopes (derivation ``alibi-slopes`` for ``max_bias = 8``).

    For a power of two n the slopes are ``2 ** (-max_bias h / n)``, h = 1..n. Otherwise, with m
    the largest power of two not exceeding n, the first m slopes are those of m heads and the rest
    are every other slope of 2m heads, as in the ALiBi reference code. The paper uses
    ``max_bias = 8``, so the last of n (a power of two) slopes is 1/256; other values stretch or
    shrink the geometric sequence.

    >>> alibi_slopes(4).tolist()
    [0.25, 0.0625, 0.015625, 0.00390625]
    >>> alibi_slopes(4, max_bias=4).tolist()
    [0.5, 0.25, 0.125, 0.0625]
    """
    n = _checks.integer("n_heads", n_heads, minimum=1, maximum=None)  # bounded by the element check
    max_bias = _checks.real("max_bias", max_bias, minimum=0.0, strict=True)
    _checks.elements("n_heads", n)

    def power_of_two(count: int) -> np.ndarray:
        # A huge max_bias overflows the exponent to -inf, whose power is 0: the slope in float64.
        with np.errstate(over="ignore"):
            return 2.0 ** (-max_bias * np.arange(1, count + 1) / count)

    m = 1 << (n.bit_length() - 1)
    if m == n:
        return power_of_two(n)
    return np.concatenate([power_of_two(m), power_of_two(2 * m)[0::2][: n - m]])


def alibi_bias(n_heads: int, length: int, *, max_bias: float = 8.0) -> NDArray[np.float64]:
    """Causal ALiBi bias, shape ``(n_heads, length, length)``.

    Entry ``[h, i, j]`` is ``-slope_h * (i - j)`` for keys j <= i and ``-inf`` above the
    diagonal, where the causal mask hides future keys. ``max_bias`` is that of
    ``alibi_slopes``; ``posenc.relative.alibi_symmetric_bias`` is the form without the mask,
    for any position ids.
    """
    n_heads = _checks.integer("n_heads", n_heads, minimum=1, maximum=None)  # bounded by the element check
    length = _checks.integer("length", length, minimum=0, maximum=None)  # bounded by the element check
    _checks.elements("n_heads", n_heads)  # the slopes' own limit, which an empty grid would not enforce
    _checks.elements("n_heads and length", n_heads, length, length)  # before the slopes, which may be many
    if length == 0:  # an empty result needs no slopes, of which there may be 2**27 (max_bias is still checked)
        alibi_slopes(1, max_bias=max_bias)
        return np.zeros((n_heads, 0, 0))
    slopes = alibi_slopes(n_heads, max_bias=max_bias)
    i = np.arange(length)
    distance = (i[:, None] - i[None, :]).astype(np.float64)
    bias = -slopes[:, None, None] * distance
    return np.where(distance[None] >= 0, bias, -np.inf)
