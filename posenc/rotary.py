"""RoPE's rotation, the one implementation in posenc, and its unscaled inverse frequencies.

``apply_rope`` rotates with every option (partial rotation, any inverse frequencies, either
pairing, an attention factor); ``posenc.rope`` is it at the paper's settings, checking its
arguments once and calling ``rotate``; ``posenc.long_context`` re-rotates cached keys with
``rope_sincos`` and ``rotate_pairs``. ``posenc.conventions`` re-exports these names, beside the
scaled frequencies (YaRN, llama3, LongRoPE) that it builds from ``rope_frequencies``. This
module imports only posenc's checks and exact phases, so every other module can build on it.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _checks, _precision

#: The paper's frequency base, the default of every function in posenc.
DEFAULT_BASE = 10000.0


def apply_rope(
    x: ArrayLike,
    position_ids: ArrayLike,
    *,
    base: float = DEFAULT_BASE,
    inv_freq: ArrayLike | None = None,
    layout: str = "interleaved",
    rotary_dim: int | None = None,
    attention_factor: float = 1.0,
) -> NDArray[np.float64]:
    """RoPE with partial rotation, any inverse frequencies and an attention factor.

    The first ``rotary_dim`` channels of ``x`` (shape ``(..., n, d)``, default: all) are rotated,
    paired within that slice by ``layout`` ("interleaved": GPT-J; "halves": GPT-NeoX,
    Hugging Face LLaMA); the rest pass through unchanged. Pair r turns by
    ``position_ids[j] * inv_freq[r]``, where ``inv_freq`` defaults to
    ``base ** (-2 r / rotary_dim)`` (use ``rope_scaling_frequencies`` for scaled variants).
    The rotated channels are multiplied by ``attention_factor`` (YaRN's; Hugging Face folds
    it into cos and sin). With the defaults this is ``posenc.rope``. Float64 result. Every
    phase ``position_ids[j] * inv_freq[r]`` must be below 2**53 radians, the range in which
    posenc's phases are accurate (any id below 2**53 qualifies for frequencies up to 1).
    """
    ids = _checks.position_ids(position_ids)
    values = _checks.vectors(x, ids)
    rotary_dim = _checks.rotary_dim(rotary_dim, values.shape[-1], "x's last axis")
    base = _checks.base(base)
    layout = _checks.layout(layout)
    attention_factor = _checks.real("attention_factor", attention_factor)
    return rotate(values, ids, base, inv_freq, rotary_dim, layout, attention_factor)


def rotate(
    values: np.ndarray,
    ids: np.ndarray,
    base: float,
    inv_freq: ArrayLike | None,
    rotary_dim: int,
    layout: str,
    attention_factor: float = 1.0,
) -> np.ndarray:
    """``apply_rope`` on arguments already checked: ``posenc.rope`` checks its own (the paper's
    stricter rules) and calls this, so no argument is checked twice on one call."""
    sin, cos = rope_sincos(ids, rotary_dim, base, inv_freq)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below, by name
        if attention_factor != 1.0:
            sin, cos = sin * attention_factor, cos * attention_factor
        rotated = rotate_pairs(values, sin, cos, rotary_dim, layout)
    return _checks.finite("x and attention_factor", rotated)


def rope_sincos(
    ids: np.ndarray, rotary_dim: int, base: float, inv_freq: ArrayLike | None
) -> tuple[np.ndarray, np.ndarray]:
    """Sines and cosines of RoPE's phases ``ids[j] * inv_freq[r]``, shape ``(n, rotary_dim // 2)``.

    ``inv_freq`` defaults to ``base ** (-2r / rotary_dim)``; given, it is checked here, with the
    phase limit. The phases are reduced exactly (``posenc._precision``). Shared by ``apply_rope``
    and ``posenc.long_context.rerotate_keys``; ``ids``, ``rotary_dim`` and ``base`` are already checked.
    """
    half = rotary_dim // 2
    if inv_freq is None:
        turns = _precision.power_turns(base, 2, rotary_dim, half)
    else:
        frequencies = _checks.frequency_array(inv_freq, half)
        _checks.phases(ids, frequencies, "inv_freq")
        turns = _precision.value_turns(frequencies)
    return _precision.sincos(ids, turns)


def rotate_pairs(values: np.ndarray, sin: np.ndarray, cos: np.ndarray, rotary_dim: int, layout: str) -> np.ndarray:
    """Rotate the pairs of the first ``rotary_dim`` channels of ``values`` by the given sines and cosines.

    ``sin`` and ``cos`` have shape ``(n, rotary_dim // 2)``, one row per row of ``values``
    (``(..., n, d)``); the other channels pass through. The one rotation of posenc, shared by
    ``apply_rope`` and ``posenc.long_context.rerotate_keys``. Arguments are already checked.
    """
    half = rotary_dim // 2
    values = values.astype(np.result_type(values.dtype, np.float64))
    out = values.copy()
    rotated = values[..., :rotary_dim]
    if layout == "interleaved":
        first, second = rotated[..., 0::2], rotated[..., 1::2]
        out[..., 0:rotary_dim:2] = first * cos - second * sin
        out[..., 1:rotary_dim:2] = first * sin + second * cos
    else:
        first, second = rotated[..., :half], rotated[..., half:]
        out[..., :half] = first * cos - second * sin
        out[..., half:rotary_dim] = first * sin + second * cos
    return out


def _rope_dim(dim: Any) -> int:
    return _checks.width(dim, name="dim")


def rope_frequencies(dim: int, *, base: float = DEFAULT_BASE) -> NDArray[np.float64]:
    """Unscaled RoPE inverse frequencies ``base ** (-2 r / dim)``, r < dim/2, correctly rounded.

    ``dim`` is the rotated width (``rotary_dim``; the head width when all channels rotate).
    """
    dim = _rope_dim(dim)
    base = _checks.base(base)
    # The paper's schedule (conventions.schedule_frequencies), the same bits as posenc.frequencies.
    return _precision.power_values(base, 2, dim, dim // 2).copy()


def _scaled_by(factor: Any, compute: Callable[[], NDArray[np.float64]], name: str = "factor") -> NDArray[np.float64]:
    """``compute()``'s frequencies, refused when dividing by ``factor`` (the argument ``name``) overflowed float64.

    A factor below about ``1e-308`` turns ``omega / factor`` into infinity; that is an error
    naming the argument, not a table of ``inf``.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        frequencies = compute()
    if not np.all(np.isfinite(frequencies)):
        got = f", got {factor!r}" if isinstance(factor, float) else ""  # a per-pair array is named, not printed
        raise ValueError(f"{name} must be large enough that every frequency divided by it is finite in float64{got}")
    return frequencies
