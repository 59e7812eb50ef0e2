"""Accurate sines and cosines of ``t * omega`` for integer t: the long-context path of posenc.

Naive float64 ``sin(t * omega)`` rounds the phase ``t * omega`` to 53 bits before the sine
sees it. At t near 2**31 the phase is near 2**31 radians, its last bit is worth 2**-22 and the
sine is off by up to about 1e-7. This module keeps the phase exact instead:

1. The frequency is held in *turns*, ``f = omega / (2 pi)``, as a double-double
   ``f_hi + f_lo`` (|error| < 2**-100 f), computed once with the standard library's
   ``decimal`` at 45 digits from the exact binary value of ``base`` (or of a given frequency).
2. ``t * f_hi`` is formed exactly as ``p + e`` (Dekker's product with Veltkamp splitting, exact
   for any float64 t: an integer id below 2**53, or a real offset for ``posenc.kernel``), and
   ``t * f_lo`` is added as ``g``.
3. Whole turns are dropped exactly: ``p`` is rounded to a multiple of 2**-27 (``q``), the
   remainder ``p - q`` is exact, and so is the fractional part ``c = q - rint(q)``. The phase
   modulo one turn is ``c + w`` with ``w = (p - q) + e + g`` small (|w| < 4e-7 turns).
4. In radians that is ``x_h + x_l`` with ``x_h = TWO_PI_26 * c`` (exact: a 26-bit 2 pi times
   a 27-bit c) and ``x_l = (2 pi - TWO_PI_26) * c + 2 pi * w`` (|x_l| < 3e-6), and
   ``sin(x_h + x_l) = S (1 - x_l**2/2) + C x_l`` (truncation below 1e-17) with S, C the
   library sine and cosine of ``x_h`` in [-pi, pi].

The float64 result is within about 2e-16 of the exact value for every t below 2**31 (tests
check 1e-15 against mpmath at 50 digits); the error stays below 1e-15 for every phase
``t * omega`` below 2**53 radians (any id below 2**53 at frequencies of at most one radian per
position). Past that the public functions refuse the arguments (``_checks.PHASE_LIMIT``). Work
is done in blocks of rows that stay in cache, so the extra arithmetic costs far less than the
two transcendental calls it shares with the naive path.
"""

from __future__ import annotations

import decimal
import functools

import numpy as np
from numpy.typing import NDArray

# Two float64 arrays: a value's (hi, lo) parts, or the (sin, cos) of the phases.
_Pair = tuple[NDArray[np.float64], NDArray[np.float64]]

# pi to 60 digits; 2 pi in decimal, 45-digit working precision (about 150 bits).
_PI = decimal.Decimal("3.14159265358979323846264338327950288419716939937510582097494459")
_CONTEXT = decimal.Context(prec=45)
_TWO_PI_DEC = _CONTEXT.multiply(_PI, 2)

#: 2 pi rounded to 26 significant bits (23 after the binary point), so that its product with
#: any multiple of 2**-27 in [-1/2, 1/2] is exact in float64.
TWO_PI_26 = round(float(_TWO_PI_DEC) * 2**23) / 2**23
#: The rest of 2 pi, ``2 pi - TWO_PI_26`` rounded to float64.
TWO_PI_REST = float(_CONTEXT.subtract(_TWO_PI_DEC, decimal.Decimal(TWO_PI_26)))
TWO_PI = float(_TWO_PI_DEC)

_SPLITTER = 2.0**27 + 1.0  # Veltkamp: splits a double into two halves of at most 26 bits
_GRID = 2.0**27  # the coarse phase is a multiple of 1 / _GRID turns
_FAST_LIMIT = 2.0**29  # |t * f| below this: |w| < 4e-7 turns without reducing e and g
_BLOCK_ELEMENTS = 1 << 15  # elements per block: 256 KiB per float64 temporary


def _double_double(value: decimal.Decimal) -> tuple[float, float]:
    hi = float(value)
    return hi, float(_CONTEXT.subtract(value, decimal.Decimal(hi)))


def _frozen(values: list[float]) -> NDArray[np.float64]:
    array = np.array(values, dtype=np.float64)
    array.flags.writeable = False
    return array


def _log_ratio(base: float, numerator_step: int, denominator: int) -> decimal.Decimal:
    """``ln(base ** (-numerator_step / denominator))``: the log of the ratio between neighbouring pairs."""
    return _CONTEXT.divide(_CONTEXT.multiply(_CONTEXT.ln(decimal.Decimal(base)), -numerator_step), denominator)


@functools.lru_cache(maxsize=128)
def power_turns(base: float, numerator_step: int, denominator: int, count: int) -> _Pair:
    """``base ** (-r * numerator_step / denominator) / (2 pi)`` for r < count, as (hi, lo).

    The paper's schedule is ``(base, 2, d, d // 2)``; fairseq's is ``(base, 1, h - 1, h)``
    with h = d // 2. Cached: a table of width 4096 costs a few tens of milliseconds once.
    """
    ratio = _CONTEXT.exp(_log_ratio(base, numerator_step, denominator))
    # turns_r = ratio**r / (2 pi), by repeated multiplication: the relative error after r
    # steps is below r * 1e-44, far under the 2**-106 a double-double can hold.
    his, los = [], []
    turns = _CONTEXT.divide(1, _TWO_PI_DEC)
    for _ in range(count):
        hi, lo = _double_double(turns)
        his.append(hi)
        los.append(lo)
        turns = _CONTEXT.multiply(turns, ratio)
    return _frozen(his), _frozen(los)


def value_turns(omega: NDArray[np.float64]) -> _Pair:
    """Float64 angular frequencies (taken as exact) in turns, ``omega / (2 pi)``, as (hi, lo)."""
    return _value_turns(np.ascontiguousarray(omega, dtype=np.float64).ravel().tobytes())


@functools.lru_cache(maxsize=128)
def _value_turns(packed: bytes) -> _Pair:
    his, los = [], []
    for value in np.frombuffer(packed, dtype=np.float64).tolist():
        hi, lo = _double_double(_CONTEXT.divide(decimal.Decimal(value), _TWO_PI_DEC))
        his.append(hi)
        los.append(lo)
    return _frozen(his), _frozen(los)


def divided_turns(turns: _Pair, divisor: int) -> _Pair:
    """Frequencies in turns (hi, lo) divided by a positive integer, as (hi, lo) again.

    For a coordinate that is a fraction ``t / divisor`` (a patch centre, a point of an evenly
    spaced grid): ``sincos(t, divided_turns(f, divisor))`` takes the integer ``t`` as its id,
    exactly, where a rounded ``t / divisor`` would carry its rounding error (a relative 1e-16)
    into the phase, times the frequency. Each quotient is formed in decimal at 45 digits from the
    exact sum ``hi + lo``, so it keeps the double-double's accuracy.
    """
    if divisor == 1:
        return turns
    his, los = [], []
    for hi, lo in zip(np.asarray(turns[0]).tolist(), np.asarray(turns[1]).tolist()):
        exact = _CONTEXT.add(decimal.Decimal(hi), decimal.Decimal(lo))
        quotient_hi, quotient_lo = _double_double(_CONTEXT.divide(exact, divisor))
        his.append(quotient_hi)
        los.append(quotient_lo)
    return _frozen(his), _frozen(los)


def _split(values: NDArray[np.float64]) -> _Pair:
    """Veltkamp's split: ``values == high + low`` exactly, each half of at most 26 bits."""
    scaled = values * _SPLITTER
    high = scaled - (scaled - values)
    return high, values - high


def _move_whole_turns(part: NDArray[np.float64], coarse: NDArray[np.float64], scratch: NDArray[np.float64]) -> None:
    """Split ``part`` (turns) into ``coarse``, its multiple of 2**-27 turns reduced into [-1/2, 1/2],
    and the exact remainder, left in ``part``; ``scratch`` is overwritten."""
    np.multiply(part, _GRID, out=coarse)
    np.rint(coarse, out=coarse)
    coarse /= _GRID
    part -= coarse
    np.rint(coarse, out=scratch)
    coarse -= scratch


def sincos_into(
    ids: np.ndarray,
    turns: _Pair,
    sin_out: NDArray[np.float64],
    cos_out: NDArray[np.float64],
) -> None:
    """Write ``sin(2 pi t f)`` and ``cos(2 pi t f)`` for every (t, f) into two (n, m) arrays.

    ``ids`` are real numbers, shape (n,): position ids, or offsets of either sign; ``turns`` is
    (f_hi, f_lo), shape (m,). Accurate while every ``|t| * 2 pi f`` is below 2**53 (the
    callers check it).
    The outputs may be strided views of any floating dtype: each float64 block is rounded
    into them once.
    """
    f_hi, f_lo = (np.asarray(part, dtype=np.float64) for part in turns)
    n, m = ids.size, f_hi.size
    if n == 0 or m == 0:
        return
    t = ids.astype(np.float64)
    t_high, t_low = _split(t)
    f_high, f_low = _split(f_hi)
    fast = float(np.max(np.abs(t))) * float(np.max(np.abs(f_hi))) < _FAST_LIMIT
    rows = max(1, min(n, _BLOCK_ELEMENTS // m))

    buffers = [np.empty((rows, m)) for _ in range(6)]
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        size = stop - start
        p, e, g, c, tmp, tmp2 = (buffer[:size] for buffer in buffers)
        tb = t[start:stop, None]
        th, tl = t_high[start:stop, None], t_low[start:stop, None]

        # p + e = t * f_hi exactly (Dekker), g = t * f_lo.
        np.multiply(tb, f_hi, out=p)
        np.multiply(th, f_high, out=e)
        e -= p
        np.multiply(th, f_low, out=tmp)
        e += tmp
        np.multiply(tl, f_high, out=tmp)
        e += tmp
        np.multiply(tl, f_low, out=tmp)
        e += tmp
        np.multiply(tb, f_lo, out=g)

        # Coarse phase c (a multiple of 2**-27 turns in [-1/2, 1/2]) and exact remainder in p.
        _move_whole_turns(p, c, tmp)
        if not fast:
            # Huge t * f: e and g may hold whole turns too; move their coarse parts into c.
            for part in (e, g):
                _move_whole_turns(part, tmp, tmp2)
                c += tmp
            np.rint(c, out=tmp)
            c -= tmp

        # w = p + e + g (small); x_l = TWO_PI_REST * c + 2 pi * w; x_h = TWO_PI_26 * c.
        p += e
        p += g
        p *= TWO_PI
        np.multiply(c, TWO_PI_REST, out=tmp)
        p += tmp  # p now holds x_l
        c *= TWO_PI_26  # c now holds x_h
        np.sin(c, out=e)  # S
        np.cos(c, out=g)  # C
        np.multiply(p, p, out=tmp2)
        tmp2 *= 0.5  # x_l**2 / 2

        # sin = S + (C x_l - S h), cos = C - (S x_l + C h), h = x_l**2 / 2.
        np.multiply(g, p, out=tmp)
        np.multiply(e, tmp2, out=c)
        tmp -= c
        tmp += e
        sin_out[start:stop] = tmp
        np.multiply(e, p, out=tmp)
        np.multiply(g, tmp2, out=c)
        tmp += c
        np.subtract(g, tmp, out=tmp)
        cos_out[start:stop] = tmp


def sincos(ids: np.ndarray, turns: _Pair) -> _Pair:
    """Accurate ``(sin, cos)`` of ``2 pi t f``, each of shape (len(ids), len(f)), float64."""
    shape = (ids.size, np.asarray(turns[0]).size)
    sines, cosines = np.empty(shape), np.empty(shape)
    sincos_into(ids, turns, sines, cosines)
    return sines, cosines


@functools.lru_cache(maxsize=128)
def power_values(base: float, numerator_step: int, denominator: int, count: int) -> NDArray[np.float64]:
    """``base ** (-r * numerator_step / denominator)`` for r < count, each correctly rounded."""
    step = _log_ratio(base, numerator_step, denominator)
    return _frozen([float(_CONTEXT.exp(_CONTEXT.multiply(step, r))) for r in range(count)])
