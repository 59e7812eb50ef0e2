"""Position from the data: fla-core's reference forgetting, stick-breaking and PaTH attention
(``naive_forgetting_attn``, ``naive_stickbreaking_attn``, ``naive_path_attn``) and x-transformers'
``DataDependentAlibi``, against ``posenc.data_dependent``.

fla-core is imported without its package ``__init__`` files: ``fla/ops/__init__.py`` imports the
Triton kernels, and Triton is not installed here (see ``fla_reference``). The references take
queries, keys and values and return the attention output, so posenc's weights (or scores, then a
softmax) multiply the same values. Sizes are tiny; each tolerance is stated where it is used.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import math
import types
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from x_transformers.x_transformers import DataDependentAlibi

from support.bare_import import import_without_inits, installed_folder

import posenc


FLA = installed_folder("fla")


def fla_reference(kind: str) -> types.ModuleType:
    """``fla.ops.<kind>.naive``, imported without running any ``__init__`` of fla.

    ``fla``, ``fla.ops`` and ``fla.ops.<kind>`` are registered as empty packages that search the
    installed folders, so the reference module loads from its own file as it is (it needs only torch
    and einops).
    """
    return import_without_inits(f"fla.ops.{kind}.naive")


forgetting = fla_reference("forgetting_attn")
stickbreaking = fla_reference("stickbreaking_attn")
path = fla_reference("path_attn")


def test_fla_references_load_without_triton():
    """The three fla-core reference modules load from the installed files while Triton is absent."""
    assert importlib.util.find_spec("triton") is None
    for module, kind in ((forgetting, "forgetting_attn"), (stickbreaking, "stickbreaking_attn"), (path, "path_attn")):
        assert Path(module.__file__) == FLA / "ops" / kind / "naive.py"


# Shapes of fla's references: (batch, tokens, heads, channels); one batch, two heads, six tokens.
TOKENS, HEADS, CHANNELS = 6, 2, 4


def _qkv(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Queries, keys and values of shape (heads, tokens, channels)."""
    return tuple(rng.standard_normal((HEADS, TOKENS, CHANNELS)) for _ in range(3))


def _fla(array: np.ndarray) -> torch.Tensor:
    """(heads, tokens, ...) as fla's (1, tokens, heads, ...) in float64."""
    return torch.from_numpy(np.ascontiguousarray(np.moveaxis(array, 0, 1)[None])).double()


def _back(output: torch.Tensor) -> np.ndarray:
    """fla's (1, tokens, heads, channels) output as (heads, tokens, channels)."""
    return np.moveaxis(output[0].double().numpy(), 1, 0)


# fla's forgetting and PaTH references compute in float32 whatever the input (``.float()``): with
# logits of order one and six keys, each weight is off by a few float32 roundings of the logits, and
# an output (a weighted mean of values of order one) by less than 1e-5.
FLOAT32_OUTPUT = 1e-5


def test_forgetting_attention_matches_fla_reference(rng):
    """``naive_forgetting_attn`` against ``posenc.forgetting_attention`` times the same values (fla computes in
    float32)."""
    q, k, v = _qkv(rng)
    log_gates = -rng.uniform(0.0, 2.0, size=(HEADS, TOKENS))
    scale = CHANNELS**-0.5
    weights = posenc.forgetting_attention(scale * q @ np.swapaxes(k, -1, -2), log_gates, log=True)
    reference = forgetting.naive_forgetting_attn(_fla(q), _fla(k), _fla(v), _fla(log_gates), scale=scale)
    np.testing.assert_allclose(weights @ v, _back(reference), rtol=0, atol=FLOAT32_OUTPUT)


@pytest.mark.parametrize("attend_current", [False, True])
def test_stick_breaking_matches_fla_reference(rng, attend_current):
    """``naive_stickbreaking_attn`` (output and remainder) against ``posenc.stick_breaking_weights`` and
    ``stick_breaking_remainder``, both in float64, with and without the query's own key."""
    q, k, v = _qkv(rng)
    scale = CHANNELS**-0.5
    logits = scale * q @ np.swapaxes(k, -1, -2) * 3.0
    weights = posenc.stick_breaking_weights(logits, attend_current=attend_current)
    remainder = posenc.stick_breaking_remainder(logits, attend_current=attend_current)
    output, rest = stickbreaking.naive_stickbreaking_attn(
        _fla(q * 3.0), _fla(k), _fla(v), scale=scale, attend_current=attend_current
    )
    # Both in float64 from the same logits in log space: agreement to a few float64 roundings.
    np.testing.assert_allclose(weights @ v, _back(output), rtol=0, atol=1e-13)
    np.testing.assert_allclose(remainder, rest[0].numpy().T, rtol=0, atol=1e-13)


def test_stick_breaking_default_excludes_the_query_itself_as_fla_does(rng):
    """Both default to keys j < i: posenc's default matches fla's default and its other convention does not."""
    q, k, v = _qkv(rng)
    logits = q @ np.swapaxes(k, -1, -2)
    output, _ = stickbreaking.naive_stickbreaking_attn(_fla(q), _fla(k), _fla(v), scale=1.0)
    assert np.allclose(posenc.stick_breaking_weights(logits) @ v, _back(output), atol=1e-13)
    assert not np.allclose(posenc.stick_breaking_weights(logits, attend_current=True) @ v, _back(output), atol=1e-3)


def _path_output(q, k, v, w, betas, scale):
    scores = posenc.path_scores(q, k, w, betas) * scale
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (weights / weights.sum(axis=-1, keepdims=True)) @ v


@pytest.mark.parametrize("chunk_size", [4, 64])
def test_path_attention_matches_fla_reference(rng, chunk_size):
    """``naive_path_attn`` against a softmax of ``posenc.path_scores`` times the same values (fla computes in
    float32); chunk size 4 splits the six tokens across two chunks, so both of the reference's paths are used."""
    q, k, v = _qkv(rng)
    w = rng.standard_normal((HEADS, TOKENS, CHANNELS))
    w /= np.linalg.norm(w, axis=-1, keepdims=True)  # the layer normalises w before the kernel
    betas = rng.uniform(0.0, 2.0, size=(HEADS, TOKENS))
    scale = CHANNELS**-0.5
    reference = path.naive_path_attn(
        _fla(q), _fla(k), _fla(v), _fla(w), _fla(betas), torch.zeros(1, TOKENS, HEADS), scale, chunk_size=chunk_size
    )
    np.testing.assert_allclose(_path_output(q, k, v, w, betas, scale), _back(reference), rtol=0, atol=FLOAT32_OUTPUT)


def test_path_attention_in_the_other_order_disagrees_with_fla(rng):
    """The product's order matters: the reflections nearest the key first is not what fla computes."""
    q, k, v = _qkv(rng)
    w = rng.standard_normal((HEADS, TOKENS, CHANNELS))
    w /= np.linalg.norm(w, axis=-1, keepdims=True)
    betas = np.full((HEADS, TOKENS), 1.5)
    scale = 1.0
    reference = _back(
        path.naive_path_attn(_fla(q), _fla(k), _fla(v), _fla(w), _fla(betas), torch.zeros(1, TOKENS, HEADS), scale)
    )
    other = np.full((HEADS, TOKENS, TOKENS), -np.inf)
    for head in range(HEADS):
        reflections = [np.eye(CHANNELS) - 1.5 * np.outer(unit, unit) for unit in w[head]]
        for i in range(TOKENS):
            for j in range(i + 1):
                product = np.eye(CHANNELS)
                for step in range(j + 1, i + 1):  # H_(j+1) ... H_i, left to right: the other order
                    product = product @ reflections[step]
                other[head, i, j] = q[head, i] @ product @ k[head, j]
    weights = np.exp(other - other.max(axis=-1, keepdims=True))
    assert not np.allclose((weights / weights.sum(axis=-1, keepdims=True)) @ v, reference, atol=1e-3)


def test_x_transformers_data_dependent_alibi_is_forgetting_bias(rng):
    """x-transformers' causal ``DataDependentAlibi`` on and below the diagonal against ``posenc.forgetting_bias``
    of the same log gates (its ``logsigmoid`` of a linear layer)."""
    torch.manual_seed(0)
    dim = 8
    layer = DataDependentAlibi(dim, HEADS, causal=True).double()
    x = torch.from_numpy(rng.standard_normal((1, TOKENS, dim)))
    with torch.no_grad():
        bias = layer(x)[0].numpy()  # (heads, tokens, tokens), unmasked above the diagonal
        log_gates = F.logsigmoid(layer.to_forget_gates[0](x))[0].numpy().T  # (heads, tokens)
    expected = posenc.forgetting_bias(log_gates, log=True)
    lower = np.tril(np.ones((TOKENS, TOKENS), dtype=bool))
    # Both are differences of one float64 running sum of the same logs: a few roundings apart.
    np.testing.assert_allclose(bias[:, lower], expected[:, lower], rtol=0, atol=1e-13)
    assert math.isinf(expected[0, 0, 1])
