"""Long context: transformers' "longrope" initialisation and Phi-3's rotary module (which switches
to the long factors past the original length), and torchscale's xPos, against ``posenc.long_context``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torchscale.component.xpos_relative_position import XPOS
from transformers import Phi3Config
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding

import posenc

F32 = 2.0**-24


def longrope_rtol(base: float) -> float:
    """transformers' float32 LongRoPE frequency against posenc's float64 one, relative.

    It computes ``1 / (factor_r * base ** (2r/d))`` in float32: the exponent rounded (the power
    then off by ln(base) * 2**-24 relative), one rounding each of the power, the factor, their
    product and the reciprocal; two more units for the float32 arange and margin.
    """
    return (math.log(base) + 6) * F32


def phi3_factors(rng: np.random.Generator, pairs: int) -> tuple[list[float], list[float]]:
    """Factors shaped like Phi-3's: short ones near 1, long ones rising from 1 to tens along the pairs."""
    short = rng.uniform(1.0, 1.1, pairs)
    long = np.sort(rng.uniform(1.0, 60.0, pairs))
    return short.tolist(), long.tolist()


def phi3_config(head_dim: int, short, long, *, base=10000.0, original=4096, maximum=131072, extra=None):
    parameters = {"rope_type": "longrope", "rope_theta": base, "short_factor": short, "long_factor": long}
    parameters.update(extra or {})
    return Phi3Config(
        hidden_size=head_dim * 2,
        num_attention_heads=2,
        num_key_value_heads=2,
        intermediate_size=8,
        num_hidden_layers=1,
        vocab_size=16,
        max_position_embeddings=maximum,
        original_max_position_embeddings=original,
        rope_parameters=parameters,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )


@pytest.mark.parametrize("head_dim,base", [(32, 10000.0), (96, 10000.0), (64, 1e6)])
@pytest.mark.parametrize("seq_len", [None, 100, 4096, 4097, 131072])
def test_longrope_init_matches_posenc(rng, head_dim, base, seq_len):
    """transformers' ``ROPE_INIT_FUNCTIONS`` for longrope, with factors shaped like Phi-3's, against
    ``posenc.rope_scaling_frequencies``: frequencies and attention factor; the other factor set must not match."""
    short, long = phi3_factors(rng, head_dim // 2)
    config = phi3_config(head_dim, short, long, base=base)
    inv, attention = ROPE_INIT_FUNCTIONS["longrope"](config, "cpu", seq_len=seq_len)
    scaling = {
        "rope_type": "longrope",
        "short_factor": short,
        "long_factor": long,
        "original_max_position_embeddings": 4096,
    }
    ours, our_attention = posenc.rope_scaling_frequencies(
        head_dim, scaling, base=base, max_position_embeddings=131072, seq_len=seq_len
    )
    np.testing.assert_allclose(inv.double().numpy(), ours, rtol=longrope_rtol(base))
    assert our_attention == pytest.approx(attention, rel=1e-15)
    # The right factor set was chosen: the other one is far from transformers' frequencies.
    other = long if (seq_len or 0) <= 4096 else short
    assert not np.allclose(
        inv.double().numpy() * np.asarray(other), posenc.rope_frequencies(head_dim, base=base), rtol=1e-3
    )


@pytest.mark.parametrize("extra", [{"factor": 8.0}, {"attention_factor": 1.3}, {"factor": 1.0}])
def test_longrope_given_factor_or_attention_factor(rng, extra):
    """transformers' longrope initialisation with a given ``factor`` or ``attention_factor`` against
    ``posenc.longrope_frequencies``."""
    short, long = phi3_factors(rng, 16)
    config = phi3_config(32, short, long, extra=extra)
    inv, attention = ROPE_INIT_FUNCTIONS["longrope"](config, "cpu", seq_len=5000)
    ours, our_attention = posenc.longrope_frequencies(
        32,
        short_factor=short,
        long_factor=long,
        original_max_position_embeddings=4096,
        max_position_embeddings=131072,
        seq_len=5000,
        **extra,
    )
    np.testing.assert_allclose(inv.double().numpy(), ours, rtol=longrope_rtol(10000.0))
    assert our_attention == pytest.approx(attention, rel=1e-15)


@pytest.mark.parametrize("last_position", [100, 4095, 4096, 9000])
def test_phi3_rotary_module_switches_factors_past_the_original_length(rng, phase_tolerance, last_position):
    """Phi-3's ``Phi3RotaryEmbedding`` (which takes the long factors past 4096 positions) against ``posenc.apply_rope``
    with ``posenc.longrope_frequencies``."""
    short, long = phi3_factors(rng, 16)
    rotary = Phi3RotaryEmbedding(phi3_config(32, short, long))
    ids = np.unique(np.linspace(0, last_position, 40).astype(np.int64))
    cos, sin = rotary(torch.zeros(1, dtype=torch.float64), torch.as_tensor(ids)[None])
    # Phi-3 picks the set by the sequence length max(id) + 1.
    inv, factor = posenc.longrope_frequencies(
        32,
        short_factor=short,
        long_factor=long,
        original_max_position_embeddings=4096,
        max_position_embeddings=131072,
        seq_len=int(ids.max()) + 1,
    )
    unit = np.zeros((ids.size, 32))
    unit[:, :16] = 1.0  # rotating (1, 0) pairs gives (cos, sin) times the attention factor
    ours = posenc.apply_rope(unit, ids, inv_freq=inv, attention_factor=factor, layout="halves")
    bound = factor * phase_tolerance(ids.max(), longrope_rtol(10000.0))
    np.testing.assert_allclose(cos[0, :, :16].numpy(), ours[:, :16], atol=bound, rtol=0)
    np.testing.assert_allclose(sin[0, :, :16].numpy(), ours[:, 16:], atol=bound, rtol=0)


# ---------------------------------------------------------------------------------------
# xPos (torchscale)


def test_xpos_scale_buffer_is_zeta():
    """torchscale's ``XPOS`` scale buffer (the per-pair base zeta) against ``posenc.xpos_scales`` at position 1 and
    scale base 1, for head widths 16, 64 and 128."""
    for head_dim in (16, 64, 128):
        zeta = posenc.xpos_scales([1.0], head_dim, scale_base=1.0)[0]
        # float32: 0.4 * head_dim, the sum, 1.4 * head_dim and the quotient are each rounded once.
        np.testing.assert_allclose(XPOS(head_dim).scale.double().numpy(), zeta, rtol=4 * F32)


@pytest.mark.parametrize("length", [16, 200])
def test_torchscale_xpos_is_rope_times_posenc_scales(rng, phase_tolerance, length):
    """torchscale's ``XPOS`` on queries and on keys (``downscale``) against ``posenc.rope`` times ``posenc.xpos_scales``
    at torchscale's centred scale positions."""
    head_dim = 32
    x = rng.standard_normal((1, length, head_dim))
    xpos = XPOS(head_dim)
    ids = np.arange(length)
    # torchscale rotates row t by position t and scales it by zeta ** ((t + min_pos) / 512), with its
    # scale positions centred on zero: min_pos = -(length // 2).
    shift = -(length // 2)
    for keys in (False, True):
        theirs = xpos(torch.as_tensor(x), downscale=keys)[0].numpy()
        scales = posenc.xpos_scales(-(ids + shift) if keys else ids + shift, head_dim)
        ours = posenc.rope(x[0], ids) * np.repeat(scales, 2, axis=-1)
        bound = phase_tolerance(length, 0.0) + 8 * F32  # float32 phases, scale powers and products
        np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=bound * np.abs(x[0]).max() * scales.max())


def test_torchscale_xpos_scores_are_posenc_apply_xpos_scores(rng):
    """Query-key scores through torchscale's ``XPOS`` against scores through ``posenc.apply_xpos``, where the centring
    cancels."""
    head_dim, length = 32, 64
    q, k = rng.standard_normal((length, head_dim)), rng.standard_normal((length, head_dim))
    xpos = XPOS(head_dim)
    theirs = (xpos(torch.as_tensor(q[None]))[0] @ xpos(torch.as_tensor(k[None]), downscale=True)[0].T).numpy()
    ids = np.arange(length)
    ours = posenc.apply_xpos(q, ids) @ posenc.apply_xpos(k, ids, keys=True).T
    # The centring of torchscale's scale positions cancels between query and key.
    np.testing.assert_allclose(theirs, ours, rtol=1e-4, atol=1e-4 * np.abs(ours).max())
