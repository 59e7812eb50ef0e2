"""Sinusoidal tables: DistilBERT (interleaved), Marian (halves), M2M100 (fairseq schedule, padding)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers.models.distilbert.modeling_distilbert import create_sinusoidal_embeddings
from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding
from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

import posenc

# DistilBERT and Marian compute the table in float64 NumPy (naive phases, accurate to ~1e-13 at
# these ids) and store it through torch.FloatTensor, i.e. rounded to float32: posenc's float32
# table is the exact value rounded once, so the two agree to 1 float32 ulp (the naive float64
# value may sit on the other side of a rounding boundary).


def assert_within_one_float32_ulp(theirs: np.ndarray, ours: np.ndarray) -> None:
    ulp = np.spacing(np.abs(ours.astype(np.float32))).astype(np.float64)
    assert np.all(np.abs(theirs.astype(np.float64) - ours.astype(np.float64)) <= ulp)


@pytest.mark.parametrize(("n_pos", "dim"), [(64, 8), (512, 768), (33, 2)])
def test_distilbert_create_sinusoidal_embeddings_is_the_interleaved_paper_table(n_pos, dim):
    """DistilBERT's ``create_sinusoidal_embeddings`` against ``posenc.sinusoidal`` (the interleaved paper table,
    float32), within one float32 unit in the last place; the halves table must not match."""
    out = torch.empty(n_pos, dim, dtype=torch.float64)
    create_sinusoidal_embeddings(n_pos, dim, out)
    theirs = out.numpy()
    ours = posenc.sinusoidal(np.arange(n_pos), dim, dtype=np.float32)
    assert_within_one_float32_ulp(theirs, ours)
    if dim > 2:  # and it is not the halves layout (the same thing for one pair)
        assert np.abs(theirs - posenc.sinusoidal(np.arange(n_pos), dim, layout="halves")).max() > 0.1


@pytest.mark.parametrize(("n_pos", "dim"), [(64, 8), (512, 512), (40, 6)])
def test_marian_sinusoidal_embedding_is_the_halves_paper_table(n_pos, dim):
    """Marian's ``MarianSinusoidalPositionalEmbedding`` (``create_weight``, and ``forward`` with a cache length of 7)
    against ``posenc.sinusoidal_embedding`` in the halves layout, within one float32 unit in the last place."""
    module = MarianSinusoidalPositionalEmbedding(n_pos, dim)
    theirs = module.create_weight().double().numpy()
    ours = posenc.sinusoidal_embedding(np.arange(n_pos), dim, layout="halves", dtype=np.float32)
    assert_within_one_float32_ulp(theirs, ours)
    # the module's forward looks rows up by position (cache_length shifts them)
    module.weight.data.copy_(module.create_weight())
    rows = module.forward(torch.Size([1, 5]), cache_length=7).double().numpy()
    assert_within_one_float32_ulp(rows, ours[7:12])


# M2M100 computes the fairseq table in float32 torch: omega_r = exp(r * -(ln 10000 / (h - 1)))
# and phases t * omega_r, all float32. The argument a_r = r * ln(10000) / (h - 1) <= 9.22 is
# off by at most 2 * 2**-24 * a_r (two roundings), so omega_r is off by omega_r * a_r * 2**-23
# relative plus one rounding of exp; omega_r * a_r = a_r e^(-a_r) <= 1/e. The phase error is
# therefore below t * (2**-23 / e + 2 * 2**-24) < 1.7e-7 t, and the float32 sine/cosine and the
# final rounding add 2**-23.
def m2m100_tolerance(max_position: int) -> float:
    return 1.7e-7 * max_position + 2.0**-23


@pytest.mark.parametrize(("num", "dim", "padding_idx"), [(60, 16, 1), (130, 1024, 1), (50, 9, 1), (20, 4, 0)])
def test_m2m100_get_embedding_is_the_fairseq_table(num, dim, padding_idx):
    """M2M100's ``get_embedding`` against ``posenc.sinusoidal_embedding`` with the fairseq schedule, the halves layout
    and a zero padding row (and a zero last channel at an odd width); the paper schedule must not match."""
    theirs = M2M100SinusoidalPositionalEmbedding.get_embedding(num, dim, padding_idx).double().numpy()
    ours = posenc.sinusoidal_embedding(
        np.arange(num), dim, schedule="fairseq", layout="halves", padding_idx=padding_idx
    )
    assert theirs.shape == ours.shape
    np.testing.assert_allclose(theirs, ours, rtol=0, atol=m2m100_tolerance(num))
    assert not theirs[padding_idx].any() and not ours[padding_idx].any()
    if dim % 2:
        assert not theirs[:, -1].any() and not ours[:, -1].any()
    # the tolerance tells the schedules apart: the paper's schedule is far off
    paper = posenc.sinusoidal_embedding(np.arange(num), dim, layout="halves", padding_idx=padding_idx)
    assert np.abs(theirs - paper).max() > 100 * m2m100_tolerance(num)


def test_m2m100_position_ids_from_input_ids(rng):
    """M2M100's ``create_position_ids_from_input_ids`` against ``posenc.fairseq_position_ids``, exactly, with right,
    left and interior padding and cache lengths 0 and 5."""
    padding_idx = 1
    tokens = rng.integers(2, 50, size=(4, 12))
    tokens[0, 8:] = padding_idx  # right padding
    tokens[1, :3] = padding_idx  # left padding
    tokens[2, [2, 5, 6]] = padding_idx  # holes
    for cache_length in (0, 5):
        theirs = M2M100SinusoidalPositionalEmbedding.create_position_ids_from_input_ids(
            torch.as_tensor(tokens), padding_idx, cache_length
        ).numpy()
        ours = posenc.fairseq_position_ids(tokens, padding_idx, cache_length=cache_length)
        np.testing.assert_array_equal(theirs, ours)


def test_m2m100_module_forward_is_fairseq_embedding(rng):
    """M2M100's ``M2M100SinusoidalPositionalEmbedding`` forward on padded token ids against
    ``posenc.fairseq_embedding``, zero rows at the padding included."""
    padding_idx, dim = 1, 24
    module = M2M100SinusoidalPositionalEmbedding(64, dim, padding_idx)
    tokens = rng.integers(2, 50, size=(3, 10))
    tokens[1, 7:] = padding_idx
    tokens[2, :4] = padding_idx
    theirs = module(torch.as_tensor(tokens)).double().numpy()
    ours = posenc.fairseq_embedding(tokens, dim, padding_idx=padding_idx)
    np.testing.assert_allclose(theirs, ours, rtol=0, atol=m2m100_tolerance(padding_idx + 11))
    assert not ours[1, 7:].any() and not theirs[1, 7:].any()
