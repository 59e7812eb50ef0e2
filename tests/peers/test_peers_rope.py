"""RoPE: LLaMA (halves), GPT-J (interleaved, partial), GPT-NeoX (partial halves), the checkpoint
permutation, and transformers' ``ROPE_INIT_FUNCTIONS`` for linear, dynamic, yarn and llama3."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from transformers import GPTJConfig, LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb as neox_apply
from transformers.models.gptj.modeling_gptj import GPTJAttention, create_sinusoidal_positions
from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb as gptj_apply
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb as llama_apply

import posenc

IDS = np.array([0, 1, 2, 7, 100, 1000, 4095])

# transformers computes inverse frequencies in float32: base ** (2r/d) with the exponent rounded
# to float32 (relative 2**-24, so the power is off by ln(base) * 2**-24 relative), one rounding
# of the power, of the reciprocal, and of a division by the scaling factor (and YaRN's float32
# ramp blend, which moves a frequency by at most 2**-24 of the unscaled one). With ln(base) <= 14
# (base <= 1.2e6) that is below (14 + 4) * 2**-24 < 1.1e-6 relative.
INV_FREQ_RTOL = 1.1e-6


def llama_config(head_dim=16, heads=2, rope_parameters=None, max_position_embeddings=4096):
    return LlamaConfig(
        hidden_size=head_dim * heads,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        head_dim=head_dim,
        intermediate_size=8,
        num_hidden_layers=1,
        vocab_size=16,
        max_position_embeddings=max_position_embeddings,
        rope_parameters=rope_parameters or {"rope_type": "default", "rope_theta": 10000.0},
    )


def halves_cos_sin(ids, head_dim, base=10000.0):
    """posenc's float64 cos and sin in Hugging Face's (n, head_dim) halves format."""
    table = posenc.sinusoidal(ids, head_dim, base=base, layout="halves")
    sin, cos = table[:, : head_dim // 2], table[:, head_dim // 2 :]
    return np.concatenate([cos, cos], -1), np.concatenate([sin, sin], -1)


# ---------------------------------------------------------------------------------------
# LLaMA (halves pairing)


def test_llama_apply_rotary_pos_emb_is_posenc_rope_halves_in_float64(rng):
    """LLaMA's ``apply_rotary_pos_emb`` in float64 against ``posenc.rope`` in the halves layout, to 1e-14."""
    heads, head_dim = 3, 16
    q, k = rng.normal(size=(2, 1, heads, IDS.size, head_dim))
    cos, sin = halves_cos_sin(IDS, head_dim)
    q_embed, k_embed = llama_apply(
        torch.as_tensor(q), torch.as_tensor(k), torch.as_tensor(cos)[None], torch.as_tensor(sin)[None]
    )
    np.testing.assert_allclose(q_embed.numpy(), posenc.rope(q, IDS, layout="halves"), rtol=0, atol=1e-14)
    np.testing.assert_allclose(k_embed.numpy(), posenc.rope(k, IDS, layout="halves"), rtol=0, atol=1e-14)


def test_llama_rotary_embedding_with_apply_is_posenc_rope_halves(rng, phase_tolerance):
    """``LlamaRotaryEmbedding`` (float32 phases) with ``apply_rotary_pos_emb`` against ``posenc.apply_rope`` and
    ``posenc.rope`` in the halves layout, within the float32 phase bound; the interleaved layout must not match."""
    heads, head_dim = 2, 32
    rotary = LlamaRotaryEmbedding(llama_config(head_dim, heads))
    x = torch.zeros(1, dtype=torch.float64)
    cos, sin = rotary(x, torch.as_tensor(IDS)[None])
    assert cos.dtype == torch.float64  # float32 values (phases are formed in float32), cast to x's dtype
    q, k = rng.normal(size=(2, 1, heads, IDS.size, head_dim))
    q_embed, k_embed = llama_apply(torch.as_tensor(q), torch.as_tensor(k), cos, sin)
    # posenc with transformers' own float32 inverse frequencies: only the float32 phase product
    # and the float32 cos/sin differ. Each output is a 2-term combination of |q| <= 5 values.
    inv = rotary.inv_freq.double().numpy()
    bound = 2 * np.abs(q).max() * phase_tolerance(IDS.max())
    np.testing.assert_allclose(q_embed.numpy(), posenc.apply_rope(q, IDS, inv_freq=inv, layout="halves"), atol=bound)
    # posenc's exact frequencies: add the float32 inverse frequency's own error
    bound = 2 * np.abs(q).max() * phase_tolerance(IDS.max(), INV_FREQ_RTOL)
    np.testing.assert_allclose(q_embed.numpy(), posenc.rope(q, IDS, layout="halves"), atol=bound)
    np.testing.assert_allclose(k_embed.numpy(), posenc.rope(k, IDS, layout="halves"), atol=bound)
    # the other pairing does not match
    assert np.abs(q_embed.numpy() - posenc.rope(q, IDS)).max() > 0.1


def test_llama_default_inverse_frequencies_and_theta():
    """``LlamaRotaryEmbedding``'s default inverse frequencies against ``posenc.rope_frequencies`` for ``rope_theta``
    10000, 500000 and 1000000, head width 128."""
    for theta in (10000.0, 500000.0, 1e6):
        rotary = LlamaRotaryEmbedding(llama_config(128, 1, {"rope_type": "default", "rope_theta": theta}))
        np.testing.assert_allclose(
            rotary.inv_freq.double().numpy(), posenc.rope_frequencies(128, base=theta), rtol=INV_FREQ_RTOL
        )


# ---------------------------------------------------------------------------------------
# GPT-J (interleaved pairing, partial rotation)


def test_gptj_sinusoidal_positions_are_the_halves_table(phase_tolerance):
    """GPT-J's ``create_sinusoidal_positions`` (300 positions, width 64) against ``posenc.sinusoidal`` in the halves
    layout."""
    theirs = create_sinusoidal_positions(300, 64).double().numpy()
    ours = posenc.sinusoidal(np.arange(300), 64, layout="halves")
    np.testing.assert_allclose(theirs, ours, rtol=0, atol=phase_tolerance(299, INV_FREQ_RTOL))


def test_gptj_apply_rotary_pos_emb_is_posenc_rope_interleaved_in_float64(rng):
    """GPT-J's ``apply_rotary_pos_emb`` in float64 against ``posenc.rope`` in the interleaved layout, to 1e-14; the
    halves layout must not match."""
    head_dim, heads = 16, 2
    x = rng.normal(size=(1, IDS.size, heads, head_dim))  # GPT-J's (batch, seq, heads, dim)
    table = posenc.sinusoidal(IDS, head_dim, layout="halves")
    sin, cos = torch.as_tensor(table[None, :, : head_dim // 2]), torch.as_tensor(table[None, :, head_dim // 2 :])
    theirs = gptj_apply(torch.as_tensor(x), sin, cos).numpy()
    ours = posenc.rope(x.transpose(0, 2, 1, 3), IDS).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(theirs, ours, rtol=0, atol=1e-14)
    assert np.abs(theirs - posenc.rope(x.transpose(0, 2, 1, 3), IDS, layout="halves").transpose(0, 2, 1, 3)).max() > 0.1


def test_gptj_attention_rotates_only_rotary_dim_channels_interleaved(rng):
    """A whole ``GPTJAttention`` (``rotary_dim`` 8 of a 16-wide head) against attention built on ``posenc.apply_rope``
    with partial interleaved rotation; the halves layout must not match."""
    hidden, heads, rotary_dim, n = 32, 2, 8, 6
    head_dim = hidden // heads
    config = GPTJConfig(
        n_embd=hidden,
        n_head=heads,
        rotary_dim=rotary_dim,
        n_positions=64,
        n_layer=1,
        vocab_size=16,
        attn_pdrop=0.0,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
    )
    config._attn_implementation = "eager"
    attention = GPTJAttention(config, layer_idx=0).double().eval()
    weights = {name: rng.normal(size=(hidden, hidden)) / 4 for name in ("q", "k", "v", "out")}
    for name, value in weights.items():
        getattr(attention, f"{name}_proj" if name != "out" else "out_proj").weight.data = torch.as_tensor(value)
    states = rng.normal(size=(1, n, hidden))
    ids = np.array([3, 4, 5, 9, 10, 40])
    table = posenc.sinusoidal(ids, rotary_dim, layout="halves")
    sin = torch.as_tensor(table[None, :, : rotary_dim // 2])
    cos = torch.as_tensor(table[None, :, rotary_dim // 2 :])
    with torch.no_grad():
        _, theirs = attention(torch.as_tensor(states), position_embeddings=(sin, cos))
    q_raw = (states[0] @ weights["q"].T).reshape(n, heads, head_dim).transpose(1, 0, 2)
    k_raw = (states[0] @ weights["k"].T).reshape(n, heads, head_dim).transpose(1, 0, 2)

    def probabilities(layout):
        q = posenc.apply_rope(q_raw, ids, rotary_dim=rotary_dim, layout=layout)
        k = posenc.apply_rope(k_raw, ids, rotary_dim=rotary_dim, layout=layout)
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(head_dim)
        p = np.exp(scores - scores.max(-1, keepdims=True))
        return p / p.sum(-1, keepdims=True)

    # GPT-J's eager attention forms q.k in float32 on purpose: scores (|s| < 10) carry
    # ~10 * 2**-23 absolute error and the softmax probabilities at most about as much.
    np.testing.assert_allclose(theirs[0].double().numpy(), probabilities("interleaved"), rtol=0, atol=5e-6)
    assert np.abs(theirs[0].double().numpy() - probabilities("halves")).max() > 1e-3


# ---------------------------------------------------------------------------------------
# GPT-NeoX partial rotation (halves within the rotated slice)


@pytest.mark.parametrize("rotary_dim", [4, 8, 16])
def test_neox_partial_rotation_is_apply_rope_halves(rng, rotary_dim):
    """GPT-NeoX's ``apply_rotary_pos_emb`` rotating the first ``rotary_dim`` channels of a 16-wide head against
    ``posenc.apply_rope`` in the halves layout, to 1e-14."""
    head_dim = 16
    q, k = rng.normal(size=(2, 1, 2, IDS.size, head_dim))
    cos, sin = halves_cos_sin(IDS, rotary_dim)
    q_embed, _ = neox_apply(
        torch.as_tensor(q), torch.as_tensor(k), torch.as_tensor(cos)[None], torch.as_tensor(sin)[None]
    )
    ours = posenc.apply_rope(q, IDS, rotary_dim=rotary_dim, layout="halves")
    np.testing.assert_allclose(q_embed.numpy(), ours, rtol=0, atol=1e-14)


# ---------------------------------------------------------------------------------------
# The permutation between the pairings (checkpoint conversion)


def test_permuted_projection_rows_give_llama_the_gptj_scores(rng):
    """GPT-J's interleaved attention scores against LLaMA's halves scores after permuting the query and key projection
    rows with ``posenc.rope_permutation`` (two heads), and the inverse permutation back."""
    heads, head_dim, hidden = 2, 16, 12
    w_q, w_k = rng.normal(size=(2, heads * head_dim, hidden))
    states = rng.normal(size=(IDS.size, hidden))
    table = posenc.sinusoidal(IDS, head_dim, layout="halves")
    sin = torch.as_tensor(table[None, :, : head_dim // 2])
    cos = torch.as_tensor(table[None, :, head_dim // 2 :])

    def project(w):  # (1, seq, heads, head_dim)
        return torch.as_tensor((states @ w.T).reshape(1, IDS.size, heads, head_dim))

    q_i, k_i = gptj_apply(project(w_q), sin, cos), gptj_apply(project(w_k), sin, cos)
    scores_interleaved = torch.einsum("bqhd,bkhd->bhqk", q_i, k_i).numpy()

    perm = posenc.rope_permutation(head_dim, n_heads=heads)
    hf_cos, hf_sin = (torch.as_tensor(a)[None] for a in halves_cos_sin(IDS, head_dim))
    q_h, k_h = llama_apply(project(w_q[perm]).transpose(1, 2), project(w_k[perm]).transpose(1, 2), hf_cos, hf_sin)
    scores_halves = torch.einsum("bhqd,bhkd->bhqk", q_h, k_h).numpy()
    np.testing.assert_allclose(scores_halves, scores_interleaved, rtol=0, atol=1e-12)
    # and back: the inverse permutation restores the interleaved rows
    np.testing.assert_array_equal(w_q[perm][posenc.rope_permutation(head_dim, n_heads=heads, inverse=True)], w_q)
    # without the permutation the scores differ
    q_u, k_u = llama_apply(project(w_q).transpose(1, 2), project(w_k).transpose(1, 2), hf_cos, hf_sin)
    assert np.abs(torch.einsum("bhqd,bhkd->bhqk", q_u, k_u).numpy() - scores_interleaved).max() > 0.1


# ---------------------------------------------------------------------------------------
# rope_scaling variants: ROPE_INIT_FUNCTIONS


SCALINGS = [
    {"rope_type": "linear", "factor": 4.0, "rope_theta": 10000.0},
    {"rope_type": "linear", "factor": 2.5, "rope_theta": 1e6},
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096, "rope_theta": 10000.0},
    {
        "rope_type": "yarn",
        "factor": 16.0,
        "original_max_position_embeddings": 2048,
        "rope_theta": 1e6,
        "beta_fast": 16.0,
        "beta_slow": 2.0,
    },
    {
        "rope_type": "yarn",
        "factor": 8.0,
        "original_max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "truncate": False,
    },
    {
        "rope_type": "yarn",
        "factor": 40.0,
        "original_max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
    },
    {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_theta": 500000.0,
    },
    {
        "rope_type": "llama3",
        "factor": 32.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_theta": 500000.0,
    },
]


@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("scaling", SCALINGS, ids=lambda s: f"{s['rope_type']}-{s['factor']}")
def test_rope_init_functions_match_posenc(scaling, head_dim):
    """transformers' ``ROPE_INIT_FUNCTIONS`` for linear, yarn (``truncate`` false and ``mscale`` included) and llama3
    against ``posenc.rope_scaling_frequencies``: inverse frequencies and attention factor."""
    config = llama_config(head_dim, 2, dict(scaling), max_position_embeddings=32768)
    inv, factor = ROPE_INIT_FUNCTIONS[scaling["rope_type"]](config, "cpu")
    ours, our_factor = posenc.rope_scaling_frequencies(head_dim, scaling)
    np.testing.assert_allclose(inv.double().numpy(), ours, rtol=INV_FREQ_RTOL)
    assert our_factor == pytest.approx(factor, rel=1e-15)
    if scaling["rope_type"] == "llama3":
        # the band edges are decided on float32 wavelengths: none may sit within float32 error
        wavelength = 2 * np.pi / posenc.rope_frequencies(head_dim, base=scaling["rope_theta"])
        for edge in (8192 / 1.0, 8192 / 4.0):
            assert np.min(np.abs(wavelength / edge - 1)) > 1e-5


@pytest.mark.parametrize("seq_len", [None, 100, 4096, 4097, 10000, 100000])
@pytest.mark.parametrize("factor", [2.0, 8.0])
def test_dynamic_ntk_matches_transformers_for_each_sequence_length(seq_len, factor):
    """transformers' ``ROPE_INIT_FUNCTIONS`` for dynamic NTK scaling against ``posenc.rope_scaling_frequencies`` at each
    sequence length (original length 4096)."""
    config = llama_config(
        64, 2, {"rope_type": "dynamic", "factor": factor, "rope_theta": 10000.0}, max_position_embeddings=4096
    )
    inv, attention = ROPE_INIT_FUNCTIONS["dynamic"](config, "cpu", seq_len=seq_len)
    ours, our_attention = posenc.rope_scaling_frequencies(
        64, {"rope_type": "dynamic", "factor": factor}, max_position_embeddings=4096, seq_len=seq_len
    )
    np.testing.assert_allclose(inv.double().numpy(), ours, rtol=INV_FREQ_RTOL)
    assert attention == our_attention == 1.0


def test_dynamic_module_updates_with_the_longest_position_seen():
    """``LlamaRotaryEmbedding`` with dynamic scaling, after positions up to 999, against
    ``posenc.dynamic_ntk_frequencies`` at sequence length 1000."""
    config = llama_config(
        32, 2, {"rope_type": "dynamic", "factor": 4.0, "rope_theta": 10000.0}, max_position_embeddings=256
    )
    rotary = LlamaRotaryEmbedding(config)
    rotary(torch.zeros(1, dtype=torch.float64), torch.arange(1000)[None])
    ours = posenc.dynamic_ntk_frequencies(32, factor=4.0, max_position_embeddings=256, seq_len=1000)
    np.testing.assert_allclose(rotary.inv_freq.double().numpy(), ours, rtol=INV_FREQ_RTOL)


def test_yarn_rotary_embedding_folds_the_attention_factor_into_cos_and_sin(phase_tolerance):
    """``LlamaRotaryEmbedding`` with yarn scaling (factor 8) against ``posenc.apply_rope`` with YaRN's attention factor,
    which both fold into the cosines and sines."""
    scaling = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 512, "rope_theta": 10000.0}
    rotary = LlamaRotaryEmbedding(llama_config(32, 2, dict(scaling)))
    cos, sin = rotary(torch.zeros(1, dtype=torch.float64), torch.as_tensor(IDS)[None])
    inv, factor = posenc.rope_scaling_frequencies(32, scaling)
    unit = np.zeros((IDS.size, 32))
    unit[:, :16] = 1.0  # rotating (1, 0) pairs yields (cos, sin) times the factor
    ours = posenc.apply_rope(unit, IDS, inv_freq=inv, attention_factor=factor, layout="halves")
    bound = factor * phase_tolerance(IDS.max(), INV_FREQ_RTOL)
    np.testing.assert_allclose(cos[0, :, :16].numpy(), ours[:, :16], atol=bound, rtol=0)
    np.testing.assert_allclose(sin[0, :, :16].numpy(), ours[:, 16:], atol=bound, rtol=0)
    assert factor > 1.2
