"""posenc: positional encodings for transformers, with proofs and figures.

The NumPy encodings live in :mod:`posenc.encodings` and are re-exported here. The SymPy
derivation registry is :mod:`posenc.derivations` (run it with ``python -m posenc.verify``)
and the figure helper is :mod:`posenc.plotting`; neither is imported by ``import posenc``,
so using the encodings costs no SymPy or Matplotlib import.
"""

from .encodings import (
    DEFAULT_BASE,
    alibi_bias,
    alibi_slopes,
    frequencies,
    kernel,
    rope,
    shift_operator,
    sinusoidal,
    squared_distance,
    wavelengths,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_BASE",
    "alibi_bias",
    "alibi_slopes",
    "frequencies",
    "kernel",
    "rope",
    "shift_operator",
    "sinusoidal",
    "squared_distance",
    "wavelengths",
]
