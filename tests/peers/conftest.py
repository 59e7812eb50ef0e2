"""posenc against the real libraries (torch CPU, Hugging Face transformers, timm's layers, torchscale's
xPos, x-transformers, fla-core's reference attention).

Run by `make test-peers` in its own environment, .venv-peers (requirements-peers.txt and
requirements-peers-nodeps.txt); the main `make test` does not collect this folder. Everything is
built from small configs in code: no weights, no hub files, no network (the hub is switched off
before transformers is imported).
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
import pytest
import torch

torch.set_num_threads(1)

#: One float32 rounding, relative (unit roundoff of float32).
F32 = 2.0**-24


def _float32_phase_tolerance(max_position: float, extra_relative: float = 0.0) -> float:
    """Largest |sin/cos difference| when a library forms the phase ``t * inv_freq`` in float32.

    The product ``t * inv_freq`` is rounded once (relative 2**-24), so the phase is off by at
    most ``t * F32`` (inverse frequencies are <= 1); ``extra_relative`` adds the relative error
    of the library's own float32 inverse frequency, and the float32 sine/cosine and its final
    rounding add 2 * 2**-24. The sine and cosine are 1-Lipschitz, so this bounds the value error.
    """
    return max_position * (F32 + extra_relative) + 2 * F32


@pytest.fixture
def phase_tolerance():
    """The bound above, as a function of the largest position and the inverse frequency's error."""
    return _float32_phase_tolerance


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20260501)
