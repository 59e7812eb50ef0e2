"""Argument checks shared by every public function of posenc, and the limits they enforce.

Each check either returns the argument in a normalised form or raises an error whose
message names the argument and the rule it broke, so a caller never has to read a
traceback into NumPy to learn what was wrong.

Limits (each defined once, here):

* ``EXACT_INTEGER_LIMIT``: position ids, offsets and token-derived position ids must be
  below 2**53 in magnitude, where every integer is exact in float64.
* ``PHASE_LIMIT``: a phase ``t * omega`` must be below 2**53 radians in magnitude; below it
  the phases of ``posenc._precision`` are accurate to about 2e-16 (tests check this against
  mpmath), above it an angle held in float64 has no accurate sine at all.
* ``MAX_ELEMENTS``: no array a call reads or builds (an argument, its result or the sine/cosine
  table behind it) may have more than 2**27 elements (1 GiB in float64). The check runs before
  anything is allocated (an argument's before it is converted: a broadcast view of a few numbers
  would be copied whole), so an oversized request fails at once instead of exhausting memory.
* ``MAX_WIDTH``: no encoding may have more than 2**16 channels. Frequencies are computed
  correctly rounded in decimal arithmetic, one pair at a time (about a second at this
  width), so a wider request would run for minutes before any output exists.
* ``INTEGER_LIMIT``: every integer argument (a size, distance, bucket count, window or
  length) is at most 2**53 - 1 unless its function gives it a smaller range; checked where it
  is read, so a huge Python integer (2**63, 2**1100) is refused by name instead of ending in an
  ``OverflowError`` from a later float or int64 conversion. Below it every integer is exact in
  float64 and any sum or difference of two of them is exact in int64.

Scalars: a bool is never a number, nor is a NumPy duration or date (``timedelta64`` subclasses
NumPy's integers), whether given alone or inside a list. Arrays: a ragged nested list (rows of
different lengths) or an object array is named as such,
Python integers in an object array are read as int64 when they fit, and a result that would
not be finite in float64 (an overflow of finite arguments) is refused by ``finite`` rather
than returned. NaN and infinity are refused in every array of numbers a function reads
(queries, keys, values, ``x``, tables, weights); the one exception is ``-inf`` in attention
scores, where it marks a masked key.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Sequence, TypeVar

import numpy as np
from numpy.typing import NDArray

#: Largest magnitude below which every integer is exactly representable in float64.
EXACT_INTEGER_LIMIT = 2**53
#: Largest phase magnitude (radians) evaluated; ids below 2**53 at frequencies of at most
#: one radian per position stay below it.
PHASE_LIMIT = float(EXACT_INTEGER_LIMIT)
#: Most elements in any array built by one call.
MAX_ELEMENTS = 2**27
#: Most channels in one encoding (width, head_dim, rotary_dim, dim, x's last axis).
MAX_WIDTH = 2**16
#: Largest integer argument: exact in float64, and the sum or difference of two fits int64.
INTEGER_LIMIT = EXACT_INTEGER_LIMIT - 1
#: Elements of a temporary worth computing in one block: large enough to amortise NumPy's
#: per-call cost (a quarter of a million operations per call), small enough (2 MiB in float64)
#: that the few temporaries a blocked call holds beside its result are a small constant.
BLOCK_ELEMENTS = 2**18
_INT64 = np.iinfo(np.int64)
#: Largest finite float64.
MAX_FLOAT = float(np.finfo(np.float64).max)

LAYOUTS = ("interleaved", "halves")


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _is_time(value: Any) -> bool:
    """Whether a scalar is a NumPy duration or date: ``timedelta64`` subclasses ``numpy.signedinteger``,
    so it passes ``numbers.Integral``, but a duration (or a date) is not a count."""
    return isinstance(value, (np.timedelta64, np.datetime64))


def _not_a_number(value: Any, kind: type) -> bool:
    """Whether a scalar fails to be a number of ``kind`` (Integral or Real): bools, durations and dates never are."""
    return _is_bool(value) or _is_time(value) or not isinstance(value, kind)


def _is_real(array: np.ndarray) -> bool:
    """Whether an array holds real numbers: a signed, unsigned or floating dtype.

    By kind, not by NumPy's type tree: that counts ``timedelta64`` as an integer and would let
    a duration through as a count.
    """
    return array.dtype.kind in "iuf"


def integer(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = INTEGER_LIMIT) -> int:
    """Return ``value`` as an ``int``; reject bools, floats and anything outside [minimum, maximum].

    ``maximum`` defaults to INTEGER_LIMIT, so no integer argument is unbounded by accident;
    ``None`` leaves the top open for a caller that bounds the value itself right after.
    """
    if _not_a_number(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} of type {type(value).__name__}")
    number = int(value)
    if minimum is not None and number < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {_describe(number)}")
    if maximum is not None and number > maximum:
        why = " (2**53 - 1: exact in float64, as every integer argument must be)" if maximum == INTEGER_LIMIT else ""
        raise ValueError(f"{name} must be <= {maximum}{why}, got {_describe(number)}")
    return number


def _as_float(name: str, value: Any) -> float:
    """A real number as a float; an int beyond float64's range becomes an infinity of its sign."""
    if _not_a_number(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} of type {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        # Only an integer (or a fraction) too large for float64 gets here, never zero.
        return -math.inf if value < 0 else math.inf


def _describe(value: Any) -> str:
    """``repr(value)``, except that an integer too long to read is given by its length."""
    text = repr(value)
    if isinstance(value, numbers.Integral) and len(text) > 30:
        return f"an integer of {len(str(abs(int(value))))} digits"
    return text


def real(name: str, value: Any, *, minimum: float | None = None, strict: bool = False) -> float:
    """A finite real number as a ``float``, optionally bounded below (``strict``: strictly greater)."""
    number = _as_float(name, value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite (representable in float64), got {_describe(value)}")
    if minimum is not None and (number <= minimum if strict else number < minimum):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {minimum:g}, got {number:g}")
    return number


def boolean(name: str, value: Any) -> bool:
    """``True`` or ``False`` (NumPy's bool too); no truthy stand-ins such as 1 or "yes"."""
    if not _is_bool(value):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def choice(name: str, value: Any, options: Sequence[str]) -> str:
    """One of a fixed set of names."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}, got {value!r}")
    return value


def layout(value: Any) -> str:
    """A channel layout name."""
    return choice("layout", value, LAYOUTS)


def width(value: Any, name: str = "width") -> int:
    """A model width: a positive even integer (channels come in sine/cosine pairs), at most MAX_WIDTH."""
    value = integer(name, value, maximum=None)  # channel_count bounds it, with its own reason
    if value <= 0 or value % 2:
        raise ValueError(f"{name} must be a positive even integer (channels come in pairs), got {_describe(value)}")
    return channel_count(value, name)


def channel_count(value: int, name: str) -> int:
    """Reject a channel count above MAX_WIDTH (the frequency table would take minutes)."""
    if value > MAX_WIDTH:
        raise ValueError(f"{name} must be <= {MAX_WIDTH} (2**16, posenc's widest encoding), got {_describe(value)}")
    return value


def base(value: Any) -> float:
    """The frequency base: a finite real number greater than 1."""
    number = _as_float("base", value)
    if not (math.isfinite(number) and number > 1.0):
        raise ValueError(f"base must be finite and > 1, got {_describe(value)}")
    return number


def float_dtype(value: Any) -> np.dtype[np.floating[Any]]:
    """A NumPy floating dtype (float16, float32, float64, ...)."""
    try:
        dtype: np.dtype[Any] = np.dtype(value)
    except TypeError as error:
        raise TypeError(f"dtype must be a NumPy floating dtype, got {value!r}") from error
    if not np.issubdtype(dtype, np.floating):
        raise TypeError(f"dtype must be a floating dtype such as numpy.float32, got {dtype}")
    return dtype


# finite() hands back what it was given, so its callers keep their array or tuple type.
_Result = TypeVar("_Result")


def finite(names: str, result: _Result) -> _Result:
    """Return ``result`` if every value in it is finite; otherwise refuse the arguments that overflowed.

    Called on what a function computed from finite arguments: a NaN or infinity there means
    float64 overflowed (the true value is beyond it, or an intermediate was), and returning it
    would be a silent wrong answer. ``result`` may be an array, a float or a tuple of them.
    """
    parts: tuple[Any, ...] = result if isinstance(result, tuple) else (result,)
    for part in parts:
        if not np.all(np.isfinite(part)):
            raise ValueError(f"{names} must be small enough that the result is finite in float64 (it overflowed)")
    return result


def elements(names: str, *sizes: int) -> None:
    """Reject a request for an array of ``prod(sizes)`` elements above MAX_ELEMENTS, before allocating."""
    count = math.prod(sizes)
    if count > MAX_ELEMENTS:
        raise ValueError(
            f"{names}: the array would have {_describe(count)} elements, more than posenc's limit of {MAX_ELEMENTS} "
            "(2**27)"
        )


_BELOW_EXACT_LIMIT = "below 2**53 in magnitude (exact in float64)"
_WITHIN_INT64 = "within int64"
_OFFSET_RULE = "below 2**53 in magnitude (the range of position ids, where phases have accurate cosines)"


def _readable(name: str, size: int) -> None:
    if size > MAX_ELEMENTS:
        raise ValueError(
            f"{name} must have at most {MAX_ELEMENTS} (2**27) elements, posenc's limit on any array a call reads "
            f"or builds, got {size}"
        )


def _holds_bool(value: list[Any] | tuple[Any, ...]) -> bool:
    """Whether a nested list or tuple holds a bool (or an array of bools) anywhere."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif _is_bool(item) or (isinstance(item, np.ndarray) and item.dtype.kind == "b"):
            return True
    return False


def as_array(name: str, value: Any, rule: str | None = None) -> np.ndarray:
    """``value`` as a NumPy array, with the ways NumPy fails on a hostile list named for the caller.

    An array of more than MAX_ELEMENTS elements is refused before it is read (every function
    converts what it reads, so a broadcast view of a few numbers would be copied whole), and so
    is a list holding a bool among numbers (NumPy would read True as 1).
    A ragged nested list (rows of different lengths) is refused by name instead of with NumPy's
    "inhomogeneous shape" message. An object array (NumPy's answer to Python integers beyond
    int64, or to mixed contents) is read item by item: integers that fit become int64; with
    ``rule`` (an integer argument's range) a larger one is refused by that rule, without it
    (real-valued arguments) every real item becomes float64, an integer beyond float64 becoming
    an infinity that the finiteness checks refuse; anything else is a TypeError naming the
    item's type.
    """
    if isinstance(value, np.ndarray):
        # Before any conversion: a broadcast view (no memory of its own) would be copied whole.
        _readable(name, value.size)
    try:
        array = np.asarray(value)
    except ValueError:
        raise ValueError(
            f"{name} must be a rectangular array (every row the same length), got a ragged nested sequence"
        ) from None
    _readable(name, array.size)
    if array.dtype != object:
        if isinstance(value, (list, tuple)) and array.dtype.kind in "iuf" and _holds_bool(value):
            # NumPy reads True as 1 beside other numbers; only an all-bool list keeps a bool dtype.
            raise TypeError(f"{name} must hold numbers, got a bool (True or False) among them")
        return array
    items = array.ravel().tolist()
    bad = next((item for item in items if _not_a_number(item, numbers.Real)), None)
    if bad is not None:
        what = "a ragged nested sequence" if isinstance(bad, (list, tuple, np.ndarray)) else type(bad).__name__
        raise TypeError(f"{name} must hold real numbers, got an object array holding {what}")
    if all(isinstance(item, numbers.Integral) for item in items):
        if all(_INT64.min <= item <= _INT64.max for item in items):
            return np.array(items, dtype=np.int64).reshape(array.shape)
        if rule is not None:
            raise ValueError(f"{name} must be {rule}, got an integer beyond int64")
    return np.array([_as_float(name, item) for item in items], dtype=np.float64).reshape(array.shape)


def _real_array(name: str, value: Any, *, what: str, rule: str) -> np.ndarray:
    """``value`` as an array of integers or floats; an empty list (float64 to NumPy) counts as integers."""
    array = as_array(name, value, rule)
    if not _is_real(array):
        raise TypeError(f"{name} must hold {what}, got dtype {array.dtype}")
    if array.size == 0:
        return array.astype(np.int64)
    return array


def _below_exact_limit(
    name: str, array: np.ndarray, rule: str = _BELOW_EXACT_LIMIT, limit: float = EXACT_INTEGER_LIMIT
) -> None:
    if array.size and np.max(np.abs(array.astype(np.float64))) >= limit:
        raise ValueError(f"{name} must be {rule}")


def integer_array(name: str, value: Any, *, what: str = "integers") -> NDArray[np.int64]:
    """An array of any shape holding integers (an integer dtype; an empty list is accepted), as int64."""
    array = _real_array(name, value, what=what, rule=_WITHIN_INT64)
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must hold {what}, got dtype {array.dtype}")
    if array.dtype == np.uint64 and array.size and array.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} must be {_WITHIN_INT64}, got {array.max()}")  # would wrap to negative
    return array.astype(np.int64)


def position_ids(value: Any, name: str = "position_ids") -> NDArray[np.int64]:
    """A one-dimensional sequence of non-negative integer position ids below 2**53 (may be empty), as int64.

    Integral floats are accepted.
    """
    array = _real_array(name, value, what="integers", rule=_BELOW_EXACT_LIMIT)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if np.issubdtype(array.dtype, np.floating):
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{name} must be finite, got NaN or infinity")
        if np.any(array != np.trunc(array)):
            raise ValueError(f"{name} must be whole numbers, got a fractional value")
    _below_exact_limit(name, array)
    if array.size and np.min(array) < 0:
        raise ValueError(f"{name} must be >= 0, got {np.min(array)}")
    return array.astype(np.int64)


def offsets(value: Any, name: str = "offset") -> NDArray[np.float64]:
    """One offset or an array of them: finite real numbers of any sign below 2**53 in magnitude, as float64.

    The bound is that of position ids (an offset is a difference of two of them); it also keeps
    every phase ``offset * omega`` (omega <= 1) within PHASE_LIMIT.
    """
    array = as_array(name, value, _OFFSET_RULE)
    if not _is_real(array):
        raise TypeError(f"{name} must be a real number or an array of them, got {_describe_array(value)}")
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got NaN or infinity")
    _below_exact_limit(name, array, _OFFSET_RULE)
    return array


def _describe_array(value: Any) -> str:
    """A short description of a rejected array argument: its repr if short, else its type."""
    text = repr(value)
    return text if len(text) <= 60 else f"a value of type {type(value).__name__}"


def real_array(name: str, value: Any, *, ndim: int, what: str = "") -> NDArray[np.float64]:
    """A finite real array with exactly ``ndim`` axes (``what`` names them in the error), as float64."""
    array = as_array(name, value)
    if not _is_real(array):
        raise TypeError(f"{name} must be a real array, got dtype {array.dtype}")
    if array.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} axes{' ' + what if what else ''}, got shape {array.shape}")
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got NaN or infinity")
    return array


def vectors(
    value: Any, ids: np.ndarray, *, name: str = "x", ids_name: str = "position_ids", item: str = "id"
) -> np.ndarray:
    """``x`` of RoPE: a finite real array of shape (..., n, d), d >= 1, with one position id (or offset) per row.

    NaN and infinity are refused, as in every array of numbers posenc reads: a rotation would
    spread one NaN channel over its pair and return it as if it were a result.
    """
    array = as_array(name, value)
    if not _is_real(array):
        raise TypeError(f"{name} must be a real array, got dtype {array.dtype}")
    if array.ndim < 2:
        raise ValueError(f"{name} must have shape (..., n, d) with at least 2 axes, got shape {array.shape}")
    if array.shape[-1] == 0:
        raise ValueError(f"{name}'s last axis must not be empty")
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got NaN or infinity")
    if ids.ndim != 1:
        raise ValueError(
            f"{ids_name} must be one {item} or one-dimensional (one per row of {name}), got shape {ids.shape}"
        )
    if ids.size != array.shape[-2]:
        raise ValueError(
            f"{ids_name} must have one {item} per row of {name}: got {ids.size} {item}s for {array.shape[-2]} rows"
        )
    return array


def phases(ids: np.ndarray, frequencies: np.ndarray, name: str) -> None:
    """Reject position ids and frequencies whose largest phase ``t * omega`` reaches PHASE_LIMIT."""
    if not (ids.size and frequencies.size):
        return
    t = float(np.max(np.abs(ids)))
    omega = float(np.max(np.abs(frequencies)))
    if t * omega >= PHASE_LIMIT:
        raise ValueError(
            f"position_ids times {name} must stay below 2**53 radians (beyond it a phase has no accurate "
            f"sine in float64), got position id {t:.0f} times {name} {omega:g} = {t * omega:g}"
        )


# ---------------------------------------------------------------------------------------
# Arguments of posenc.conventions


def embedding_width(value: Any, schedule: str) -> int:
    """A sinusoidal width that may be odd (fairseq pads it with a zero channel); at least one pair."""
    value = integer("width", value, maximum=None)  # channel_count bounds it, with its own reason
    if value < 2:
        raise ValueError(f"width must be >= 2 (at least one sine/cosine pair), got {_describe(value)}")
    if schedule == "fairseq" and value < 4:
        raise ValueError(
            f"width must be >= 4 for the fairseq schedule (its divisor width // 2 - 1 must be positive), "
            f"got {_describe(value)}"
        )
    return channel_count(value, "width")


def optional_index(name: str, value: Any) -> int | None:
    """None or a non-negative integer."""
    return None if value is None else integer(name, value, minimum=0)


def token_ids(value: Any) -> NDArray[np.int64]:
    """Token ids of shape (..., sequence) with at least one axis, as int64."""
    array = integer_array("input_ids", value, what="integer token ids")
    if array.ndim < 1:
        raise ValueError(f"input_ids must have at least one axis (..., sequence), got shape {array.shape}")
    return array


#: Relative positions bucketed in float32 (T5, DeBERTa) must be below this in magnitude.
FLOAT32_EXACT_LIMIT = 2**24


def relative_positions(value: Any, model: str = "T5") -> NDArray[np.int64]:
    """Relative positions for float32 bucketing: integers of any shape below 2**24 in magnitude, as int64.

    ``model`` (T5 or DeBERTa) is named in the rule, whose float32 arithmetic needs the bound.
    """
    array = integer_array("relative_position", value)
    _below_exact_limit(
        "relative_position",
        array,
        f"below 2**24 in magnitude (exact in float32, as {model} needs)",
        FLOAT32_EXACT_LIMIT,
    )
    return array


def id_distances(query_ids: np.ndarray, key_ids: np.ndarray, model: str) -> None:
    """Refuse query and key ids whose largest distance reaches 2**24, before any grid is built.

    The grid's largest ``|query - key|`` follows from the ids' extremes, so the rule of
    ``relative_positions`` is checked on the arguments the caller passed, in their names.
    """
    if not (query_ids.size and key_ids.size):
        return
    span = max(int(key_ids.max()) - int(query_ids.min()), int(query_ids.max()) - int(key_ids.min()))
    if span >= FLOAT32_EXACT_LIMIT:
        raise ValueError(
            f"query_ids and key_ids must be less than 2**24 apart (relative positions exact in float32, as "
            f"{model} needs), got a distance of {span}"
        )


def rotary_dim(value: Any, channels: int, channels_name: str) -> int:
    """The number of rotated channels: even, at most ``channels``; None means all of them."""
    if value is None:
        if channels % 2:
            raise ValueError(
                f"{channels_name} must be even when rotary_dim is not given (channels come in pairs), got {channels}"
            )
        return channel_count(channels, channels_name)
    count = width(value, name="rotary_dim")
    if count > channels:
        raise ValueError(f"rotary_dim must be <= {channels_name} ({channels}), got {count}")
    return count


def _per_pair(name: str, value: Any, pairs: int, what: str) -> NDArray[np.float64]:
    """A real array with one entry per rotated pair (``what`` says what an entry is), as float64."""
    array = as_array(name, value)
    if not _is_real(array):
        raise TypeError(f"{name} must be an array of real numbers, got dtype {array.dtype}")
    array = array.astype(np.float64)
    if array.shape != (pairs,):
        raise ValueError(f"{name} must have shape ({pairs},) ({what}), got shape {array.shape}")
    return array


def frequency_array(value: Any, pairs: int, name: str = "inv_freq") -> NDArray[np.float64]:
    """One finite, non-negative angular frequency per rotated pair, as float64."""
    array = _per_pair(name, value, pairs, "one per rotated pair of rotary_dim")
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        raise ValueError(f"{name} must be finite and >= 0")
    return array


# ---------------------------------------------------------------------------------------
# Arguments of posenc.long_context


def pair_factors(name: str, value: Any, pairs: int) -> NDArray[np.float64]:
    """One finite rescale factor > 0 per rotated pair (LongRoPE's short and long factors), as float64."""
    array = _per_pair(name, value, pairs, "one factor per rotated pair of dim")
    if not np.all(np.isfinite(array)) or np.any(array <= 0):
        raise ValueError(f"{name} must be finite and > 0 (each divides a pair's frequency)")
    return array


def attention_scores(value: Any) -> NDArray[np.float64]:
    """Attention scores with the keys on the last axis: real, finite or -inf (masked), as float64."""
    array = as_array("scores", value)
    if not _is_real(array):
        raise TypeError(f"scores must be a real array, got dtype {array.dtype}")
    if array.ndim < 1 or array.shape[-1] == 0:
        raise ValueError(f"scores must have a non-empty last axis (the keys), got shape {array.shape}")
    array = array.astype(np.float64, copy=False)  # read, never written: no copy of float64 scores
    if np.any(np.isnan(array)) or np.any(array == np.inf):
        raise ValueError("scores must be finite or -inf (a masked key), got NaN or +inf")
    if np.any(np.max(array, axis=-1) == -np.inf):
        raise ValueError("scores must have at least one finite score in every row (a row of -inf has no softmax)")
    return array
