"""Positions on 2-D patch grids: transformers' ViTMAE sin-cos tables, ViT and CLIP ``interpolate_pos_encoding`` and
DINOv3's rotary embedding; timm's ``build_sincos2d_pos_embed``, ``RotaryEmbeddingCat``, ``RotaryEmbeddingMixed`` and
``resample_abs_pos_embed``; vit-pytorch's ``posemb_sincos_2d``; DINOv2's scale-factor resize and PyTorch's bicubic
``interpolate``, against ``posenc.grids``.

timm and vit-pytorch are imported without their package ``__init__`` files, which import torchvision (see
``timm_layer`` and ``simple_vit``).
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
from transformers import CLIPVisionConfig, DINOv3ViTConfig, ViTConfig, ViTMAEConfig
from transformers.models.clip.modeling_clip import CLIPVisionEmbeddings
from transformers.models.dinov3_vit.modeling_dinov3_vit import DINOv3ViTRopePositionEmbedding
from transformers.models.dinov3_vit.modeling_dinov3_vit import apply_rotary_pos_emb as dinov3_apply
from transformers.models.vit.modeling_vit import ViTEmbeddings
from transformers.models.vit_mae.modeling_vit_mae import ViTMAEEmbeddings, build_2d_sinusoidal_position_embedding

from support.bare_import import import_without_inits, installed_folder

from posenc import grids

F32 = 2.0**-24


TIMM = installed_folder("timm")


def timm_layer(name: str) -> types.ModuleType:
    """``timm.layers.<name>``, imported without ``timm/__init__.py`` or ``timm/layers/__init__.py``:
    both import torchvision (timm's models and its frozen batch norm), whose wheel does not load beside
    the CPU torch here, while the sin-cos and position-embedding modules themselves need only torch."""
    return import_without_inits(f"timm.layers.{name}")


sincos = timm_layer("pos_embed_sincos")
pos_embed = timm_layer("pos_embed")
# vit_pytorch/__init__.py imports its DINO trainer, which imports torchvision; simple_vit.py, where
# posemb_sincos_2d is, needs only torch and einops.
simple_vit = import_without_inits("vit_pytorch.simple_vit")


def test_timm_layers_load_without_torchvision():
    """The timm modules compared here load from the installed timm while torchvision is absent."""
    assert importlib.util.find_spec("torchvision") is None
    assert Path(sincos.__file__).parent == TIMM / "layers" and Path(pos_embed.__file__).parent == TIMM / "layers"
    assert callable(sincos.build_sincos2d_pos_embed) and callable(pos_embed.resample_abs_pos_embed)


def test_vit_pytorch_simple_vit_loads_without_torchvision():
    """vit-pytorch's ``simple_vit`` module loads from the installed package while torchvision is absent."""
    assert importlib.util.find_spec("torchvision") is None
    assert Path(simple_vit.__file__).parent == installed_folder("vit_pytorch")
    assert callable(simple_vit.posemb_sincos_2d)


def _bands_tolerance(max_phase: float, base: float) -> float:
    """|sin/cos error| of a float32 phase ``t * base ** (-k / q)``: the exponent k / q rounded to float32
    (relative ln(base) 2**-24 on the power), the power, reciprocal and product rounded once each, and
    the float32 sine or cosine and its rounding."""
    return max_phase * (math.log(base) + 3) * F32 + 2 * F32


# ---------------------------------------------------------------------------------------
# 2-D sin-cos tables


@pytest.mark.parametrize("rows, cols, dim", [(1, 1, 4), (3, 5, 8), (7, 4, 16), (14, 14, 32)])
def test_transformers_2d_sinusoidal_table_is_the_transformers_layout(rows, cols, dim):
    """transformers' ``build_2d_sinusoidal_position_embedding`` (float64) against
    ``sincos_2d_table(layout="transformers")``, to 1e-13."""
    theirs = build_2d_sinusoidal_position_embedding(rows, cols, embed_dim=dim, dtype=torch.float64).numpy()
    np.testing.assert_allclose(theirs, grids.sincos_2d_table(rows, cols, dim, layout="transformers"), atol=1e-13)


@pytest.mark.parametrize("side, dim", [(2, 8), (4, 16), (7, 32)])
def test_vitmae_model_table_is_the_mae_layout(side, dim):
    """ViTMAE's position table as ``ViTMAEEmbeddings.initialize_weights`` fills it (its builder's table with the
    halves swapped, float32) against ``sincos_2d_table(layout="mae")`` after its zero class-token row."""
    config = ViTMAEConfig(
        hidden_size=dim,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=8,
        image_size=2 * side,
        patch_size=2,
        decoder_hidden_size=dim,
        decoder_num_hidden_layers=1,
        decoder_num_attention_heads=2,
        decoder_intermediate_size=8,
    )
    # A whole ViTMAEModel(config) leaves this table at zero here (initialize_weights returns early once the
    # patch projection is flagged as initialised); the embeddings module alone fills it.
    embeddings = ViTMAEEmbeddings(config)
    embeddings.initialize_weights()
    table = embeddings.position_embeddings[0].detach().double().numpy()
    expected = grids.sincos_2d_table(side, side, dim, layout="mae")
    # Computed in float64 and rounded once to float32.
    np.testing.assert_allclose(table[0], 0.0)
    np.testing.assert_allclose(table[1:], expected, atol=F32, rtol=0)


@pytest.mark.parametrize("rows, cols, dim", [(1, 1, 4), (3, 5, 8), (6, 4, 16), (16, 16, 64)])
@pytest.mark.parametrize("base", [10000.0, 100.0])
def test_timm_build_sincos2d_pos_embed_is_the_timm_layout(rows, cols, dim, base):
    """timm's ``build_sincos2d_pos_embed`` (float32, its default ``reverse_coord`` and ``interleave_sin_cos``)
    against ``sincos_2d_table(layout="timm")``."""
    theirs = sincos.build_sincos2d_pos_embed([rows, cols], dim=dim, temperature=base).double().numpy()
    ours = grids.sincos_2d_table(rows, cols, dim, layout="timm", base=base)
    np.testing.assert_allclose(theirs, ours, atol=_bands_tolerance(max(rows, cols) - 1, base), rtol=0)


@pytest.mark.parametrize("rows, cols, dim", [(1, 1, 8), (3, 5, 8), (6, 4, 16), (14, 14, 32), (16, 16, 64)])
@pytest.mark.parametrize("base", [10000, 100])
def test_vit_pytorch_posemb_sincos_2d_is_the_vit_pytorch_layout(rows, cols, dim, base):
    """vit-pytorch's ``posemb_sincos_2d`` (``h`` rows by ``w`` columns, float32) against
    ``sincos_2d_table(layout="vit-pytorch")``."""
    theirs = simple_vit.posemb_sincos_2d(rows, cols, dim, temperature=base).double().numpy()
    ours = grids.sincos_2d_table(rows, cols, dim, layout="vit-pytorch", base=base)
    # Like timm's table: float32 exponents k / (q - 1), powers, reciprocals, phases and sines.
    np.testing.assert_allclose(theirs, ours, atol=_bands_tolerance(max(rows, cols) - 1, base), rtol=0)


def test_vit_pytorch_posemb_sincos_2d_is_not_the_mae_layout():
    """The same blocks in the same order as ``"mae"``, but not the same table: its frequencies divide by ``q - 1``."""
    theirs = simple_vit.posemb_sincos_2d(3, 5, 16).double().numpy()
    assert np.max(np.abs(theirs - grids.sincos_2d_table(3, 5, 16, layout="mae"))) > 0.1


# ---------------------------------------------------------------------------------------
# 2-D RoPE


def _rotary_tolerance(max_phase: float, x: np.ndarray, extra_relative: float = 0.0) -> float:
    """|error| of a rotation whose float32 sines and cosines are each within the phase bound:
    every output channel is a sum of two products of an x value with a sine or a cosine."""
    return 2 * float(np.max(np.abs(x))) * (max_phase * (3 * F32 + extra_relative) + 2 * F32)


@pytest.mark.parametrize("rotate_half", [False, True])
@pytest.mark.parametrize("rows, cols", [(1, 1), (3, 5), (6, 4)])
def test_timm_rotary_embedding_cat_index_grid_is_axial_rope_2d(rng, rows, cols, rotate_half):
    """timm's ``RotaryEmbeddingCat`` with ``in_pixels=False`` (index grid, bands ``base ** (-k / q)``), applied by
    ``apply_rot_embed_cat``, against ``axial_rope_2d`` ("interleaved", or "halves" for ``rotate_half``)."""
    dim, base = 16, 100.0
    module = sincos.RotaryEmbeddingCat(dim, temperature=base, in_pixels=False, rotate_half=rotate_half)
    embed = module.get_embed([rows, cols])
    x = rng.uniform(-1, 1, size=(2, rows * cols, dim))
    theirs = sincos.apply_rot_embed_cat(torch.from_numpy(x), embed, half=rotate_half).numpy()
    layout = "halves" if rotate_half else "interleaved"
    ours = grids.axial_rope_2d(x, rows, cols, base=base, layout=layout)
    max_phase = max(rows, cols) - 1
    np.testing.assert_allclose(theirs, ours, atol=_rotary_tolerance(max_phase, x, (math.log(base) + 1) * F32), rtol=0)


@pytest.mark.parametrize("rows, cols", [(1, 1), (3, 5), (4, 2)])
def test_timm_rotary_embedding_cat_default_pixel_grid_is_axial_rope_2d(rng, rows, cols):
    """timm's ``RotaryEmbeddingCat`` at its defaults (``in_pixels=True``: grid evenly spaced over [-1, 1], bands
    ``pi * 2 ** linspace(0, log2(max_res / 2), q)``) against ``axial_rope_2d(coordinates="pixel")`` with those bands."""
    dim, max_res = 16, 16
    module = sincos.RotaryEmbeddingCat(dim, max_res=max_res)
    bands = module.bands.double().numpy()  # float32 bands, taken as exact
    np.testing.assert_allclose(bands, np.pi * 2 ** np.linspace(0, math.log2(max_res / 2), dim // 4), rtol=4 * F32)
    x = rng.uniform(-1, 1, size=(rows * cols, dim))
    theirs = sincos.apply_rot_embed_cat(torch.from_numpy(x), module.get_embed([rows, cols])).numpy()
    ours = grids.axial_rope_2d(x, rows, cols, frequencies=bands, coordinates="pixel")
    np.testing.assert_allclose(theirs, ours, atol=_rotary_tolerance(float(bands.max()), x), rtol=0)


@pytest.mark.parametrize("rows, cols", [(1, 1), (3, 5), (5, 2)])
def test_timm_rotary_embedding_mixed_is_mixed_rope_2d(rng, rows, cols):
    """timm's ``RotaryEmbeddingMixed`` (random learned 2-D frequencies per head, ``xy`` grid), applied by
    ``apply_rot_embed_cat``, against ``mixed_rope_2d`` with ``freqs[0]`` as fx (the column's) for every head."""
    torch.manual_seed(3)
    heads, head_dim = 3, 8
    module = sincos.RotaryEmbeddingMixed(heads * head_dim, depth=1, num_heads=heads, temperature=10.0)
    frequencies = module.freqs.detach().double().numpy()[:, 0]  # (2, heads, head_dim / 2)
    embed = module.get_embed([rows, cols])[0].detach()  # (heads, rows * cols, 2 * head_dim)
    x = rng.uniform(-1, 1, size=(heads, rows * cols, head_dim))
    theirs = sincos.apply_rot_embed_cat(torch.from_numpy(x), embed).numpy()
    # timm forms the phase fx * col + fy * row in float32: two products and a sum, each rounded once.
    max_phase = float(np.abs(frequencies).max()) * (rows + cols)
    for head in range(heads):
        ours = grids.mixed_rope_2d(x[head], rows, cols, frequencies[:, head])
        np.testing.assert_allclose(theirs[head], ours, atol=_rotary_tolerance(max_phase, x), rtol=0)


@pytest.mark.parametrize("height, width, registers", [(8, 8, 0), (12, 8, 4), (8, 20, 1)])
def test_dinov3_rotary_is_axial_rope_2d_on_centred_coordinates(rng, height, width, registers):
    """transformers' ``DINOv3ViTRopePositionEmbedding`` and ``apply_rotary_pos_emb`` (prefix tokens skipped)
    against ``axial_rope_2d`` ("halves", "centered", frequencies ``2 pi base ** (-k / q)``) on the patches."""
    patch, head_dim, heads = 4, 16, 2
    config = DINOv3ViTConfig(
        hidden_size=head_dim * heads,
        num_attention_heads=heads,
        intermediate_size=8,
        num_hidden_layers=1,
        patch_size=patch,
        image_size=8,
        num_register_tokens=registers,
    )
    module = DINOv3ViTRopePositionEmbedding(config).eval()
    cos, sin = module(torch.zeros(1, 3, height, width, dtype=torch.float64))
    rows, cols = height // patch, width // patch
    prefix = 1 + registers
    q = rng.uniform(-1, 1, size=(1, heads, prefix + rows * cols, head_dim))
    theirs, _ = dinov3_apply(torch.from_numpy(q), torch.from_numpy(q), cos, sin)
    theirs = theirs.numpy()
    np.testing.assert_array_equal(theirs[..., :prefix, :], q[..., :prefix, :])
    quarter = head_dim // 4
    frequencies = 2 * np.pi * config.rope_theta ** (-np.arange(quarter) / quarter)
    ours = grids.axial_rope_2d(
        q[..., prefix:, :], rows, cols, frequencies=frequencies, layout="halves", coordinates="centered"
    )
    # Phases below 2 pi, formed in float32 from a float32 inverse frequency.
    np.testing.assert_allclose(theirs[..., prefix:, :], ours, atol=_rotary_tolerance(2 * np.pi, q, 8 * F32), rtol=0)


# ---------------------------------------------------------------------------------------
# Resampling


def torch_weights(old: int, new: int, *, antialias: bool = False, scale_factor: float | None = None) -> np.ndarray:
    """The (new, old) matrix of ``F.interpolate`` along one axis, read off by resizing the identity in float64.

    Each channel holds one basis vector down the rows of a grid three columns wide (left unresized);
    a width of one would make the input ambiguous between memory formats.
    """
    basis = torch.eye(old, dtype=torch.float64)[None, :, :, None].expand(1, old, old, 3).contiguous()
    if scale_factor is None:
        out = F.interpolate(basis, size=(new, 3), mode="bicubic", align_corners=False, antialias=antialias)
    else:
        out = F.interpolate(basis, scale_factor=(scale_factor, 1.0), mode="bicubic", align_corners=False)
    return out[0, :, :, 1].T.numpy()


@pytest.mark.parametrize("antialias", [False, True])
def test_resample_weights_are_torch_interpolate_bicubic(antialias):
    """``resample_weights`` against ``torch.nn.functional.interpolate`` (bicubic, ``align_corners=False``) on the
    identity, for every old and new size up to 24, to 1e-13."""
    for old in range(1, 25):
        for new in range(1, 25):
            theirs = torch_weights(old, new, antialias=antialias)
            np.testing.assert_allclose(
                grids.resample_weights(old, new, antialias=antialias), theirs, atol=1e-13, err_msg=f"{old} -> {new}"
            )


def test_resample_weights_with_dinov2_scale_factors_are_torch_interpolate():
    """``resample_weights(scale_factor=(new + 0.1) / old)`` against ``interpolate`` given that scale factor."""
    for old in range(1, 25):
        for new in range(1, 25):
            factor = (new + 0.1) / old
            theirs = torch_weights(old, new, scale_factor=factor)
            np.testing.assert_allclose(
                grids.resample_weights(old, new, scale_factor=factor), theirs, atol=1e-13, err_msg=f"{old} -> {new}"
            )


def test_plain_bicubic_floors_the_source_index_in_float32_like_torch(rng):
    """Far from the origin (source index past 2**24), ``interpolate``'s plain bicubic floors the source index after
    rounding it to float32; ``posenc.grids``' taps do the same (checked on a vector, not a 16-million-column matrix)."""
    old, new = 2**24 + 5, 7
    values = rng.standard_normal(old)
    theirs = F.interpolate(torch.from_numpy(values)[None, None, :, None], size=(new, 1), mode="bicubic").numpy()
    taps, coefficients = grids._plain_taps(old, np.arange(new, dtype=np.float64), old / new)
    source = old / new * (np.arange(new) + 0.5) - 0.5
    assert np.any(np.floor(source.astype(np.float32)) != np.floor(source))  # the case the rounding decides
    np.testing.assert_allclose(theirs.ravel(), (coefficients * values[taps]).sum(axis=1), atol=1e-13)


RESIZES = [((4, 4), (6, 6)), ((4, 4), (2, 3)), ((5, 5), (8, 3)), ((3, 3), (1, 1)), ((6, 6), (6, 4))]


@pytest.mark.parametrize("old, new", RESIZES)
@pytest.mark.parametrize("prefix", [0, 1, 3])
def test_timm_resample_abs_pos_embed_is_resample_patch_table(rng, old, new, prefix):
    """timm's ``resample_abs_pos_embed`` (its defaults: bicubic, antialias, computed in float32) against
    ``resample_patch_table(convention="timm")``, prefix tokens unchanged."""
    dim = 5
    table = rng.uniform(-1, 1, size=(prefix + old[0] * old[1], dim))
    theirs = pos_embed.resample_abs_pos_embed(
        torch.from_numpy(table)[None], list(new), old_size=list(old), num_prefix_tokens=prefix
    )[0].numpy()
    ours = grids.resample_patch_table(table, new, convention="timm", old_grid=old, prefix_tokens=prefix)
    np.testing.assert_array_equal(theirs[:prefix], table[:prefix])
    # The table is rounded to float32 and resized in float32: a few roundings of sums whose weights'
    # magnitudes add up to less than 2.
    np.testing.assert_allclose(theirs, ours, atol=16 * F32, rtol=0)


@pytest.mark.parametrize("old_side, height, width", [(4, 12, 12), (4, 6, 10), (5, 4, 8), (3, 16, 6)])
def test_vit_interpolate_pos_encoding_is_resample_patch_table(rng, old_side, height, width):
    """transformers' ``ViTEmbeddings.interpolate_pos_encoding`` (float64) against
    ``resample_patch_table(convention="transformers")``, to 1e-13."""
    patch, dim = 2, 8
    config = ViTConfig(hidden_size=dim, image_size=old_side * patch, patch_size=patch, num_channels=3)
    module = ViTEmbeddings(config).double()
    table = rng.uniform(-1, 1, size=(1 + old_side**2, dim))
    with torch.no_grad():
        module.position_embeddings.copy_(torch.from_numpy(table)[None])
    rows, cols = height // patch, width // patch
    theirs = module.interpolate_pos_encoding(torch.zeros(1, 1 + rows * cols, dim, dtype=torch.float64), height, width)
    ours = grids.resample_patch_table(table, (rows, cols), convention="transformers")
    np.testing.assert_allclose(theirs[0].detach().numpy(), ours, atol=1e-13)


@pytest.mark.parametrize("old_side, height, width", [(4, 12, 12), (4, 6, 10), (3, 4, 14)])
def test_clip_interpolate_pos_encoding_is_resample_patch_table(rng, old_side, height, width):
    """transformers' ``CLIPVisionEmbeddings.interpolate_pos_encoding`` (float64) against
    ``resample_patch_table(convention="transformers")``, to 1e-13."""
    patch, dim = 2, 8
    config = CLIPVisionConfig(
        hidden_size=dim,
        intermediate_size=8,
        num_attention_heads=2,
        num_hidden_layers=1,
        image_size=old_side * patch,
        patch_size=patch,
    )
    module = CLIPVisionEmbeddings(config).double()
    table = rng.uniform(-1, 1, size=(1 + old_side**2, dim))
    with torch.no_grad():
        module.position_embedding.weight.copy_(torch.from_numpy(table))
    rows, cols = height // patch, width // patch
    theirs = module.interpolate_pos_encoding(torch.zeros(1, 1 + rows * cols, dim, dtype=torch.float64), height, width)
    ours = grids.resample_patch_table(table, (rows, cols), convention="transformers")
    np.testing.assert_allclose(theirs[0].detach().numpy(), ours, atol=1e-13)


@pytest.mark.parametrize("old_side, new_rows, new_cols", [(4, 6, 6), (5, 3, 7), (16, 37, 37), (4, 4, 9)])
def test_dinov2_scale_factor_resize_is_resample_patch_table(rng, old_side, new_rows, new_cols):
    """The original DINOv2 resize (``interpolate`` given ``scale_factor = (new + 0.1) / old``, plain bicubic) in
    float64 against ``resample_patch_table(convention="dinov2")``, to 1e-13."""
    dim = 6
    table = rng.uniform(-1, 1, size=(1 + old_side**2, dim))
    grid = torch.from_numpy(table[1:]).reshape(1, old_side, old_side, dim).permute(0, 3, 1, 2)
    factors = ((new_rows + 0.1) / old_side, (new_cols + 0.1) / old_side)
    resized = F.interpolate(grid, scale_factor=factors, mode="bicubic")
    assert tuple(resized.shape[-2:]) == (new_rows, new_cols)
    theirs = np.concatenate([table[:1], resized.permute(0, 2, 3, 1).reshape(-1, dim).numpy()])
    ours = grids.resample_patch_table(table, (new_rows, new_cols), convention="dinov2")
    np.testing.assert_allclose(theirs, ours, atol=1e-13)
    # The 0.1 matters: at the scale old / new the result differs.
    plain = grids.resample_patch_table(table, (new_rows, new_cols), convention="transformers")
    assert np.max(np.abs(plain - ours)) > 1e-6
