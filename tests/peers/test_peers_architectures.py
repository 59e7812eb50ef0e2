"""Today's architectures: transformers' per-layer schedules (Gemma 3, Llama 4, SmolLM3, Cohere2, EXAONE 4),
its "proportional" RoPE, GLM's partial pairing, DeepSeek-V3's latent attention with its YaRN scales (also at Kimi
K2's position settings), and the query temperatures of Llama 4 and Ministral 3, against ``posenc.architectures``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import (
    Cohere2Config,
    DeepseekV3Config,
    Exaone4Config,
    Gemma3TextConfig,
    GlmConfig,
    LlamaConfig,
    Llama4TextConfig,
    SmolLM3Config,
)
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.cohere2 import modeling_cohere2
from transformers.models.deepseek_v3 import modeling_deepseek_v3
from transformers.models.exaone4 import modeling_exaone4
from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding
from transformers.models.glm.modeling_glm import GlmRotaryEmbedding
from transformers.models.glm.modeling_glm import apply_rotary_pos_emb as glm_apply
from transformers.models.llama4 import modeling_llama4
from transformers.models.ministral3.modeling_ministral3 import get_llama_4_attn_scale

import posenc


#: Relative error of a float32 inverse frequency (as in the other peer tests): the exponent and
#: the power each rounded, with a margin.
def inv_freq_rtol(base: float) -> float:
    return (np.log(base) + 4) * 2.0**-24


def small(config_class, **extra):
    """A config of a few tiny layers: the schedules depend on the layer count and the pattern only."""
    sizes = dict(hidden_size=32, num_attention_heads=2, num_key_value_heads=2, intermediate_size=8, vocab_size=16)
    return config_class(**(sizes | extra))


def capture_queries(monkeypatch, module) -> dict:
    """Replace ``module``'s eager attention with one that keeps the query it is handed and returns zeros."""
    seen: dict = {}

    def capture(attention, query, key, value, attention_mask, scaling=None, **kwargs):
        seen.update(query=query.clone(), key=key, scaling=scaling)
        return torch.zeros(query.shape[0], query.shape[2], query.shape[1], value.shape[-1], dtype=query.dtype), None

    monkeypatch.setattr(module, "eager_attention_forward", capture)
    return seen


def layer_rotates(attention, seen, identity, quarter_turn, width) -> bool:
    """Whether a layer rotates: its queries with position embeddings of angle 0 and of a quarter turn differ."""
    torch.manual_seed(2)
    hidden = torch.randn(1, 3, width, dtype=torch.float64)
    queries = []
    with torch.no_grad():
        for embeddings in (identity, quarter_turn):
            attention(hidden, embeddings, None)
            queries.append(seen["query"])
    return not torch.equal(queries[0], queries[1])


@pytest.mark.parametrize("layers, pattern", [(13, 6), (8, 2), (5, 1)])
def test_gemma3_layer_types_bases_and_scaling(layers, pattern):
    """``Gemma3TextConfig``'s ``layer_types`` from ``sliding_window_pattern`` and the inverse frequencies of
    ``Gemma3RotaryEmbedding`` per layer type (with a linear ``rope_scaling`` of 8) against ``posenc.gemma3_layers``:
    global layers at base 1,000,000 and scaled, sliding ones at 10,000 and not."""
    config = small(
        Gemma3TextConfig,
        head_dim=16,
        num_hidden_layers=layers,
        sliding_window_pattern=pattern,
        rope_scaling={"rope_type": "linear", "factor": 8.0},
    )
    schedule = posenc.gemma3_layers(layers, sliding_window_pattern=pattern)
    assert [layer.attention for layer in schedule] == list(config.layer_types)
    rotary = Gemma3RotaryEmbedding(config)
    for layer in schedule:
        inv_freq = getattr(rotary, f"{layer.attention}_inv_freq").double().numpy()
        expected = posenc.rope_frequencies(16, base=layer.base) / (8.0 if layer.scaled else 1.0)
        np.testing.assert_allclose(inv_freq, expected, rtol=inv_freq_rtol(layer.base))
        assert config.rope_parameters[layer.attention]["rope_theta"] == layer.base


@pytest.mark.parametrize(
    "layers, flags, chunk", [(8, None, 8192), (6, [1, 0, 0, 1, 1, 0], 16), (5, [], None), (4, [0, 1, 1, 0], 8)]
)
def test_llama4_irope_schedule(monkeypatch, layers, flags, chunk):
    """``Llama4TextConfig``'s ``no_rope_layers`` (1 = uses RoPE; default every fourth layer NoPE) and
    ``layer_types``, and whether each ``Llama4TextAttention`` turns its queries when its position embeddings
    turn, against ``posenc.llama4_layers``."""
    config = small(
        Llama4TextConfig, num_hidden_layers=layers, no_rope_layers=flags, attention_chunk_size=chunk, head_dim=16
    )
    config._attn_implementation = "eager"
    seen = capture_queries(monkeypatch, modeling_llama4)
    schedule = posenc.llama4_layers(layers, no_rope_layers=flags, attention_chunk_size=chunk)
    assert [layer.attention for layer in schedule] == list(config.layer_types)
    identity = torch.ones(1, 3, 8, dtype=torch.complex64)
    for index, layer in enumerate(schedule):
        attention = modeling_llama4.Llama4TextAttention(config, index).double()
        assert layer_rotates(attention, seen, identity, identity * 1j, 32) == layer.rotates
        assert layer.temperature_tuned == (config.attn_temperature_tuning and not attention.use_rope)
        assert layer.base == (config.rope_parameters["rope_theta"] if attention.use_rope else None)


def test_llama4_attention_scales_nope_queries_by_its_temperature(monkeypatch):
    """The queries ``Llama4TextAttention`` hands to its attention function on a NoPE layer, divided by the
    projected queries, against ``posenc.llama4_query_scale`` (small ``floor_scale`` so the steps show); a RoPE
    layer's queries are not scaled."""
    config = small(
        Llama4TextConfig,
        num_hidden_layers=4,
        floor_scale=3,
        attn_scale=0.25,
        attention_chunk_size=None,
        head_dim=16,
        use_qk_norm=False,  # the RoPE layer's queries are then exactly the projected ones
    )
    config._attn_implementation = "eager"
    seen = capture_queries(monkeypatch, modeling_llama4)
    torch.manual_seed(0)
    hidden = torch.randn(1, 10, 32, dtype=torch.float64)
    unturned = torch.ones(1, 10, 8, dtype=torch.complex64)
    ratios = []
    for index in (0, 3):  # layer 0 rotates, layer 3 is NoPE
        attention = modeling_llama4.Llama4TextAttention(config, index).double()
        with torch.no_grad():
            attention(hidden, unturned, None)
            projected = attention.q_proj(hidden).view(1, 10, 2, 16).transpose(1, 2)
        ratios.append((seen["query"] / projected).numpy())
    # Llama 4's apply_rotary_emb multiplies in float32 (here by 1): the queries come back rounded to float32.
    np.testing.assert_allclose(ratios[0], 1.0, rtol=4 * 2.0**-24)
    ratio = ratios[1]
    scale = posenc.llama4_query_scale(np.arange(10), floor_scale=3, attn_scale=0.25)
    # Llama 4 forms the scale in float32 (positions.float()): log1p and the product each rounded once.
    np.testing.assert_allclose(ratio, np.broadcast_to(scale[None, None, :, None], ratio.shape), rtol=4 * 2.0**-24)
    assert np.abs(ratio - 1).max() > 0.1  # the steps are there to be seen


def test_ministral3_llama_4_scaling_beta():
    """``get_llama_4_attn_scale`` of Ministral 3 (``llama_4_scaling_beta``, ``original_max_position_embeddings``)
    against ``posenc.llama4_beta_query_scale`` at positions around its steps."""
    ids = np.array([0, 1, 99, 100, 101, 299, 300, 5000])
    scale = get_llama_4_attn_scale(torch.as_tensor(ids, dtype=torch.float64)[None], 0.3, 100)
    np.testing.assert_allclose(
        scale.flatten().numpy(),
        posenc.llama4_beta_query_scale(ids, beta=0.3, original_max_position_embeddings=100),
        rtol=1e-15,
    )


@pytest.mark.parametrize("layers, flags, sliding", [(8, None, False), (6, [1, 0, 1, 0, 1, 1], True)])
def test_smollm3_nope_layers(layers, flags, sliding):
    """``SmolLM3Config``'s ``no_rope_layers`` and ``layer_types`` (sliding window on NoPE layers only) against
    ``posenc.smollm3_layers``."""
    config = small(
        SmolLM3Config,
        num_hidden_layers=layers,
        no_rope_layers=flags,
        use_sliding_window=sliding,
        sliding_window=64 if sliding else None,
    )
    schedule = posenc.smollm3_layers(
        layers, no_rope_layers=flags, use_sliding_window=sliding, sliding_window=64 if sliding else None
    )
    assert [layer.attention for layer in schedule] == list(config.layer_types)
    assert [layer.rotates for layer in schedule] == [bool(flag) for flag in config.no_rope_layers[:layers]]
    assert {layer.base for layer in schedule if layer.rotates} == {config.rope_parameters["rope_theta"]}


@pytest.mark.parametrize("config_class", [Cohere2Config, Exaone4Config])
def test_cohere2_and_exaone4_rotate_only_sliding_layers(monkeypatch, config_class):
    """``Cohere2Config`` and ``Exaone4Config``'s ``layer_types``, whether each layer's attention turns its queries
    when its cos and sin turn, and their default ``rope_theta``, against ``posenc.cohere2_layers`` and
    ``posenc.exaone4_layers``."""
    config = small(config_class, num_hidden_layers=9, sliding_window_pattern=3)
    config._attn_implementation = "eager"
    cohere = config_class is Cohere2Config
    module = modeling_cohere2 if cohere else modeling_exaone4
    seen = capture_queries(monkeypatch, module)
    schedule = (posenc.cohere2_layers if cohere else posenc.exaone4_layers)(9, sliding_window_pattern=3)
    assert [layer.attention for layer in schedule] == list(config.layer_types)
    ones, zeros = torch.ones(1, 3, 16, dtype=torch.float64), torch.zeros(1, 3, 16, dtype=torch.float64)
    for index, layer in enumerate(schedule):
        attention = (module.Cohere2Attention if cohere else module.Exaone4Attention)(config, index).double()
        assert layer_rotates(attention, seen, (ones, zeros), (zeros, ones), 32) == layer.rotates
        assert layer.base == (config.rope_parameters["rope_theta"] if layer.rotates else None)


@pytest.mark.parametrize(
    "head_dim, fraction, factor, base", [(16, 0.25, 1.0, 10000.0), (64, 0.5, 8.0, 1e6), (32, 0.3, 1.0, 500.0)]
)
def test_proportional_rope_init(head_dim, fraction, factor, base):
    """transformers' ``_compute_proportional_rope_parameters`` (``ROPE_INIT_FUNCTIONS["proportional"]``) against
    ``posenc.proportional_rope_frequencies``: full-width frequencies on the first pairs, zeros after, all over
    ``factor``."""
    config = small(
        LlamaConfig,
        head_dim=head_dim,
        num_hidden_layers=1,
        rope_parameters={
            "rope_type": "proportional",
            "rope_theta": base,
            "partial_rotary_factor": fraction,
            "factor": factor,
        },
    )
    inv_freq, attention_factor = ROPE_INIT_FUNCTIONS["proportional"](config, "cpu")
    assert attention_factor == 1.0
    expected = posenc.proportional_rope_frequencies(head_dim, base=base, partial_rotary_factor=fraction, factor=factor)
    assert inv_freq.shape == expected.shape
    np.testing.assert_allclose(inv_freq.double().numpy(), expected, rtol=inv_freq_rtol(base), atol=0)


@pytest.mark.parametrize("fraction", [0.5, 0.25, 1.0])
def test_glm_partial_pairing_is_interleaved_over_the_rotated_slice(rng, phase_tolerance, fraction):
    """GLM's ``GlmRotaryEmbedding`` with its ``apply_rotary_pos_emb`` (first half of cos/sin, each entry repeated,
    adjacent channels paired) against ``posenc.apply_partial_rope`` with the interleaved layout; the halves
    pairing must not match."""
    head_dim = 16
    config = small(
        GlmConfig,
        head_dim=head_dim,
        num_hidden_layers=1,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": fraction},
    )
    ids = np.array([0, 1, 5, 17, 60])
    rotary = GlmRotaryEmbedding(config)
    cos, sin = rotary(torch.zeros(1, dtype=torch.float64), torch.as_tensor(ids)[None])
    q, k = rng.normal(size=(2, 1, 2, ids.size, head_dim))
    q_embed, _ = glm_apply(torch.as_tensor(q), torch.as_tensor(k), cos, sin)
    rotated = posenc.partial_rotary_dim(head_dim, fraction)
    inv = rotary.inv_freq.double().numpy()
    ours = posenc.apply_rope(q, ids, inv_freq=inv, layout="interleaved", rotary_dim=rotated)
    bound = 2 * np.abs(q).max() * phase_tolerance(ids.max())
    np.testing.assert_allclose(q_embed.numpy(), ours, atol=bound)
    exact = posenc.apply_partial_rope(q, ids, partial_rotary_factor=fraction, layout="interleaved")
    np.testing.assert_allclose(q_embed.numpy(), exact, atol=bound + 2 * np.abs(q).max() * ids.max() * 2.0**-20)
    halves = posenc.apply_partial_rope(q, ids, partial_rotary_factor=fraction, layout="halves")
    assert np.abs(q_embed.numpy() - halves).max() > 0.1


DEEPSEEK_ROPE = [
    {"rope_type": "default", "rope_theta": 10000.0},
    {
        "rope_type": "yarn",
        "rope_theta": 10000.0,
        "factor": 8.0,
        "original_max_position_embeddings": 16,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "mscale": 1.0,
        "mscale_all_dim": 0.7,
    },
]


def small_mla_config(heads: int, rank: int, rope_dim: int, nope: int, value_dim: int, **settings) -> DeepseekV3Config:
    """A one-layer ``DeepseekV3Config`` with ``heads`` heads, a latent of ``rank`` values, ``rope_dim`` rotary and
    ``nope`` position-free channels per head, no query compression and eager attention."""
    config = small(
        DeepseekV3Config,
        num_hidden_layers=1,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        q_lora_rank=None,
        kv_lora_rank=rank,
        qk_rope_head_dim=rope_dim,
        qk_nope_head_dim=nope,
        v_head_dim=value_dim,
        **settings,
    )
    config._attn_implementation = "eager"
    return config


@pytest.mark.parametrize("interleave", [True, False])
@pytest.mark.parametrize("rope", DEEPSEEK_ROPE, ids=["default", "yarn"])
def test_deepseek_v3_attention_logits_are_mla_scores(monkeypatch, interleave, rope):
    """``DeepseekV3Attention``'s logits (query and key as handed to its attention function, times its ``scaling``)
    against ``posenc.mla_scores`` on the same projections: the position-free term plus the RoPE term with one
    rotary key shared by the heads, YaRN's inverse frequencies and attention factor on cos/sin, and
    ``posenc.mla_softmax_scale`` (``mscale ** 2``); ``rope_interleave`` on and off."""
    nope, rope_dim, rank, heads, n = 6, 4, 8, 2, 7
    config = small_mla_config(
        heads,
        rank,
        rope_dim,
        nope,
        5,
        max_position_embeddings=128,
        rope_interleave=interleave,
        rope_parameters=dict(rope),
    )
    seen = capture_queries(monkeypatch, modeling_deepseek_v3)
    torch.manual_seed(1)
    attention = modeling_deepseek_v3.DeepseekV3Attention(config, 0).double()
    rotary = modeling_deepseek_v3.DeepseekV3RotaryEmbedding(config)
    ids = np.arange(3, 3 + n)
    hidden = torch.randn(1, n, 32, dtype=torch.float64)
    with torch.no_grad():
        cos, sin = rotary(hidden, torch.as_tensor(ids)[None])
        attention(hidden, (cos, sin), None)
        q = attention.q_proj(hidden).view(1, n, heads, nope + rope_dim).transpose(1, 2)[0].numpy()
        compressed = attention.kv_a_proj_with_mqa(hidden)[0]
        latent, k_rope = compressed[:, :rank], compressed[:, rank:].numpy()
        kv = attention.kv_b_proj(attention.kv_a_layernorm(latent)).view(n, heads, nope + 5).transpose(0, 1).numpy()
    logits = (seen["query"] @ seen["key"].transpose(-1, -2) * seen["scaling"])[0].numpy()

    if rope["rope_type"] == "yarn":
        yarn = {k: v for k, v in rope.items() if k not in ("rope_type", "rope_theta")}
        factor = posenc.yarn_attention_factor(8.0, mscale=1.0, mscale_all_dim=0.7)
        scaling = posenc.mla_softmax_scale(nope + rope_dim, factor=8.0, mscale_all_dim=0.7)
        inv_freq = posenc.yarn_frequencies(rope_dim, base=10000.0, **yarn)[0]
    else:
        factor, scaling, inv_freq = 1.0, posenc.mla_softmax_scale(nope + rope_dim), None
    assert seen["scaling"] == pytest.approx(scaling, rel=1e-15)
    ours = posenc.mla_scores(
        q[..., :nope],
        q[..., nope:],
        kv[..., :nope],
        k_rope,
        query_ids=ids,
        key_ids=ids,
        inv_freq=inv_freq,
        layout="interleaved" if interleave else "halves",
        attention_factor=factor,
        scaling=scaling,
    )
    # The RoPE term's cos and sin are float32 (phases up to 10 radians): a few float32 roundings of the logits.
    np.testing.assert_allclose(logits, ours, atol=1e-5 * np.abs(ours).max())


# Kimi K2's position settings, from its record (posenc.models): a larger base than DeepSeek-V3's and
# YaRN at factor 32 over 4,096 positions, with both ramp bounds at 1; as transformers reads them.
KIMI_K2 = posenc.models.model("kimi-k2")
KIMI_K2_ROPE = {
    "rope_type": KIMI_K2["rope_scaling"]["type"],
    "rope_theta": KIMI_K2["rope_theta"],
    **{key: value for key, value in KIMI_K2["rope_scaling"].items() if key != "type"},
}


class CacheRecorder:
    """Stands in for a transformers cache: keeps the shapes of what a layer hands it and returns it unchanged."""

    def __init__(self) -> None:
        self.shapes: list[tuple[tuple[int, ...], tuple[int, ...]]] = []

    def update(self, first, second, layer_idx, **kwargs):
        self.shapes.append((tuple(first.shape), tuple(second.shape)))
        return first, second


def test_kimi_k2_latent_cache_and_yarn_scales():
    """A tiny ``DeepseekV3Config`` with Kimi K2's position settings (base 50,000, YaRN factor 32 over 4,096
    positions, ``kv_lora_rank`` 512, ``qk_rope_head_dim`` 64 beside 128 channels without position): what
    ``DeepseekV3Attention`` hands its cache per token and layer is ``posenc.mla_cache_values``, whatever the number
    of heads; its softmax scale is ``posenc.mla_softmax_scale`` (``mscale ** 2`` at factor 32); its rotary
    embedding's inverse frequencies and attention factor are ``posenc.yarn_frequencies``' with the two ramp bounds
    equal."""
    rank, rope_dim, nope, n = KIMI_K2["kv_lora_rank"], KIMI_K2["qk_rope_head_dim"], 128, 5
    yarn = {k: v for k, v in KIMI_K2_ROPE.items() if k not in ("rope_type", "rope_theta")}
    inv_freq, attention_factor = posenc.yarn_frequencies(rope_dim, base=KIMI_K2_ROPE["rope_theta"], **yarn)
    per_token = []
    for heads in (1, 3):
        config = small_mla_config(
            heads, rank, rope_dim, nope, 8, max_position_embeddings=131072, rope_parameters=dict(KIMI_K2_ROPE)
        )
        torch.manual_seed(3)
        attention = modeling_deepseek_v3.DeepseekV3Attention(config, 0).double()
        rotary = modeling_deepseek_v3.DeepseekV3RotaryEmbedding(config)
        hidden = torch.randn(1, n, 32, dtype=torch.float64)
        cache = CacheRecorder()
        with torch.no_grad():
            cos, sin = rotary(hidden, torch.arange(n)[None])
            attention(hidden, (cos, sin), None, cache=cache)
        [(latent, rotary_key)] = cache.shapes
        assert latent[-2] == rotary_key[-2] == n
        per_token.append((np.prod(latent) + np.prod(rotary_key)) // n)

        assert attention.scaling == pytest.approx(
            posenc.mla_softmax_scale(nope + rope_dim, factor=32.0, mscale_all_dim=1.0), rel=1e-15
        )
        assert rotary.attention_scaling == pytest.approx(attention_factor, rel=1e-15)
        np.testing.assert_allclose(
            rotary.inv_freq.double().numpy(), inv_freq, rtol=inv_freq_rtol(KIMI_K2_ROPE["rope_theta"]), atol=0
        )
    assert per_token == [posenc.mla_cache_values(rank, rope_dim)] * 2
    assert attention_factor == posenc.yarn_attention_factor(32.0, mscale=1.0, mscale_all_dim=1.0)
