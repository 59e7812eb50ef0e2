"""Argument checks shared by every public function of posenc.

Each check either returns the argument in a normalised form or raises an error whose
message names the argument and the rule it broke, so a caller never has to read a
traceback into NumPy to learn what was wrong.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

#: Largest magnitude below which every integer is exactly representable in float64.
EXACT_INTEGER_LIMIT = 2**53

LAYOUTS = ("interleaved", "halves")


def integer(name: str, value: Any, *, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int``; reject bools, floats and anything below ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} of type {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def width(value: Any, name: str = "width") -> int:
    """A model width: a positive even integer (channels come in sine/cosine pairs)."""
    value = integer(name, value)
    if value <= 0 or value % 2:
        raise ValueError(f"{name} must be a positive even integer (channels come in pairs), got {value}")
    return value


def base(value: Any) -> float:
    """The frequency base: a finite real number greater than 1."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"base must be a real number, got {value!r} of type {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value) or value <= 1.0:
        raise ValueError(f"base must be finite and > 1, got {value}")
    return value


def layout(value: Any) -> str:
    """A channel layout name."""
    if value not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(map(repr, LAYOUTS))}, got {value!r}")
    return value


def float_dtype(value: Any) -> np.dtype:
    """A NumPy floating dtype (float16, float32, float64, ...)."""
    try:
        dtype = np.dtype(value)
    except TypeError as error:
        raise TypeError(f"dtype must be a NumPy floating dtype, got {value!r}") from error
    if not np.issubdtype(dtype, np.floating):
        raise TypeError(f"dtype must be a floating dtype such as numpy.float32, got {dtype}")
    return dtype


def _integer_valued(name: str, array: np.ndarray, *, allow_negative: bool) -> np.ndarray:
    """Return ``array`` as int64 after checking every entry is a finite, exact integer."""
    if array.dtype == np.bool_:
        raise TypeError(f"{name} must hold integers, got booleans")
    if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise TypeError(f"{name} must hold integers, got dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.floating):
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{name} must be finite, got NaN or infinity")
        if np.any(array != np.trunc(array)):
            raise ValueError(f"{name} must be whole numbers, got a fractional value")
    limit = EXACT_INTEGER_LIMIT
    if array.size and np.max(np.abs(array.astype(np.float64))) >= limit:
        raise ValueError(f"{name} must be below 2**53 in magnitude (exact in float64)")
    if not allow_negative and array.size and np.min(array) < 0:
        raise ValueError(f"{name} must be >= 0, got {np.min(array)}")
    return array.astype(np.int64)


def position_ids(value: Any, name: str = "position_ids") -> np.ndarray:
    """A one-dimensional sequence of non-negative integer position ids (may be empty)."""
    array = np.asarray(value)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    return _integer_valued(name, array, allow_negative=False)


def offsets(value: Any, name: str = "offset") -> np.ndarray:
    """One offset or an array of them: finite real numbers of any sign."""
    array = np.asarray(value)
    if array.dtype == np.bool_ or not (
        np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)
    ):
        raise TypeError(f"{name} must be a real number or an array of them, got {value!r}")
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got NaN or infinity")
    return array
