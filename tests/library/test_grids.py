"""posenc.grids: 2-D sin-cos tables, axial and mixed 2-D RoPE, and resampled patch tables.

The sin-cos cases are worked from each library's published code (MAE's ``get_2d_sincos_pos_embed``,
lucidrains' ``posemb_sincos_2d``, transformers' and timm's builders), the resampling cases from
PyTorch's bicubic coefficients; tests/peers compares the same functions with the installed libraries.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc
from posenc import grids


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(2403)


# ---------------------------------------------------------------------------------------
# 2-D sin-cos tables


def _by_hand(rows: int, cols: int, omegas: list[float], order: str) -> np.ndarray:
    """A table written out cell by cell: ``order`` lists the blocks, e.g. "sc cc sr cr" for
    sin(col), cos(col), sin(row), cos(row), each block one value per frequency."""
    table = []
    for r in range(rows):
        for c in range(cols):
            cell = []
            for block in order.split():
                function = math.sin if block[0] == "s" else math.cos
                coordinate = c if block[1] == "c" else r
                cell += [function(coordinate * omega) for omega in omegas]
            table.append(cell)
    return np.array(table)


def test_mae_table_puts_the_column_first():
    """MAE: meshgrid(grid_w, grid_h) makes its first grid the column, encoded first; at dim 8 the frequencies
    are 1e4 ** (-k / 2), k < 2."""
    expected = _by_hand(2, 3, [1.0, 0.01], "sc cc sr cr")
    np.testing.assert_allclose(grids.sincos_2d_table(2, 3, 8, layout="mae"), expected, atol=1e-15)


def test_vit_pytorch_table_reaches_one_over_base_at_its_last_frequency():
    """lucidrains: omega = base ** (-k / (dim/4 - 1)), so at dim 8 the frequencies are 1 and 1e-4; x (the column)
    first."""
    expected = _by_hand(3, 2, [1.0, 1e-4], "sc cc sr cr")
    np.testing.assert_allclose(grids.sincos_2d_table(3, 2, 8, layout="vit-pytorch"), expected, atol=1e-15)


def test_transformers_table_puts_the_row_first():
    """transformers' builder: [sin_h | cos_h | sin_w | cos_w], h the row."""
    expected = _by_hand(2, 3, [1.0, 0.01], "sr cr sc cc")
    np.testing.assert_allclose(grids.sincos_2d_table(2, 3, 8, layout="transformers"), expected, atol=1e-15)


def test_timm_table_stacks_every_sine_before_every_cosine():
    """timm: sin(row), sin(col), cos(row), cos(col), at the same frequencies as MAE."""
    expected = _by_hand(3, 2, [1.0, 0.01], "sr sc cr cc")
    np.testing.assert_allclose(grids.sincos_2d_table(3, 2, 8, layout="timm", base=1e4), expected, atol=1e-15)


def test_mae_is_transformers_with_its_halves_swapped():
    """ViTMAE swaps the halves of its builder's table to get MAE's: the same numbers, column half first."""
    theirs = grids.sincos_2d_table(4, 5, 16, layout="transformers", base=100.0)
    mae = grids.sincos_2d_table(4, 5, 16, layout="mae", base=100.0)
    np.testing.assert_array_equal(mae, np.concatenate([theirs[:, 8:], theirs[:, :8]], axis=1))


def test_mae_table_of_a_grid_is_transformers_table_of_its_transpose():
    """Swapping the axes' roles is transposing the grid: token (r, c) of one is token (c, r) of the other."""
    rows, cols = 3, 5
    mae = grids.sincos_2d_table(rows, cols, 8, layout="mae").reshape(rows, cols, 8)
    transposed = grids.sincos_2d_table(cols, rows, 8, layout="transformers").reshape(cols, rows, 8)
    np.testing.assert_array_equal(mae, transposed.transpose(1, 0, 2))


@pytest.mark.parametrize("layout", grids.SINCOS_2D_LAYOUTS)
def test_every_table_row_has_squared_norm_dim_over_2(layout):
    """Each of the dim/2 sine-cosine pairs contributes sin**2 + cos**2 = 1."""
    table = grids.sincos_2d_table(4, 6, 32, layout=layout)
    assert table.shape == (24, 32)
    np.testing.assert_allclose((table**2).sum(axis=1), 16.0, rtol=1e-14)


def test_table_errors_name_the_argument_and_the_rule():
    """dim must be a multiple of 4 (8 for vit-pytorch); layout has no default; rows must be positive."""
    with pytest.raises(ValueError, match="dim must be a multiple of 4 and at least 4"):
        grids.sincos_2d_table(2, 2, 6, layout="mae")
    with pytest.raises(ValueError, match=r"at least 8 \(vit-pytorch divides by dim / 4 - 1\)"):
        grids.sincos_2d_table(2, 2, 4, layout="vit-pytorch")
    with pytest.raises(ValueError, match="layout must be one of 'mae', 'transformers', 'timm', 'vit-pytorch'"):
        grids.sincos_2d_table(2, 2, 8, layout="halves")
    with pytest.raises(TypeError, match="layout"):
        grids.sincos_2d_table(2, 2, 8)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="rows must be >= 1"):
        grids.sincos_2d_table(0, 2, 8, layout="timm")


# ---------------------------------------------------------------------------------------
# 2-D RoPE


def _scores(queries: np.ndarray, keys: np.ndarray) -> np.ndarray:
    return queries @ keys.T


def _offset_classes(rows: int, cols: int) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """Every (query, key) pair of cells, grouped by their 2-D offset."""
    classes: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for i in range(rows * cols):
        for j in range(rows * cols):
            offset = (i // cols - j // cols, i % cols - j % cols)
            classes.setdefault(offset, []).append((i, j))
    return classes


def _assert_scores_follow_the_offset(scores: np.ndarray, rows: int, cols: int) -> None:
    for pairs in _offset_classes(rows, cols).values():
        values = [scores[i, j] for i, j in pairs]
        np.testing.assert_allclose(values, values[0], atol=1e-12)


@pytest.mark.parametrize("layout", ["interleaved", "halves"])
@pytest.mark.parametrize("coordinates", grids.COORDINATES)
def test_axial_scores_depend_only_on_the_2d_offset(rng, layout, coordinates):
    """One query and one key at every cell: their score is a function of (row offset, column offset)."""
    rows, cols, d = 3, 4, 8
    q, k = rng.standard_normal((2, d))
    queries = grids.axial_rope_2d(np.tile(q, (rows * cols, 1)), rows, cols, layout=layout, coordinates=coordinates)
    keys = grids.axial_rope_2d(np.tile(k, (rows * cols, 1)), rows, cols, layout=layout, coordinates=coordinates)
    scores = _scores(queries, keys)
    _assert_scores_follow_the_offset(scores, rows, cols)
    # and it does depend on the offset, along each axis
    assert abs(scores[0, 1] - scores[0, 0]) > 1e-3 and abs(scores[0, cols] - scores[0, 0]) > 1e-3


def test_axial_interleaved_is_rope_by_row_then_rope_by_column(rng):
    """Interleaved: channels [0, d/2) are RoPE at the row index, [d/2, d) RoPE at the column index."""
    rows, cols, d = 3, 2, 8
    x = rng.standard_normal((2, rows * cols, d))
    frequencies = np.array([0.7, 0.05])
    ours = grids.axial_rope_2d(x, rows, cols, frequencies=frequencies)
    row_ids, col_ids = np.repeat(np.arange(rows), cols), np.tile(np.arange(cols), rows)
    np.testing.assert_allclose(ours[..., :4], posenc.apply_rope(x[..., :4], row_ids, inv_freq=frequencies), atol=1e-15)
    np.testing.assert_allclose(ours[..., 4:], posenc.apply_rope(x[..., 4:], col_ids, inv_freq=frequencies), atol=1e-15)


@pytest.mark.parametrize("coordinates", ["centered", "pixel"])
def test_axial_halves_turns_pair_r_by_the_row_coordinate_and_pair_q_plus_r_by_the_column(rng, coordinates):
    """Halves pairs r with r + d/2; the first d/4 pairs follow the row coordinate. Centred coordinates are
    2 (i + 1/2) / n - 1, pixel ones evenly spaced over [-1, 1] (checked by rotating by those offsets)."""
    rows, cols, d = 2, 3, 8
    x = rng.standard_normal((rows * cols, d))
    frequencies = np.array([1.5, 0.25])
    ours = grids.axial_rope_2d(x, rows, cols, frequencies=frequencies, layout="halves", coordinates=coordinates)
    if coordinates == "centered":
        row_at, col_at = np.array([-0.5, 0.5]), np.array([-2 / 3, 0.0, 2 / 3])
    else:
        row_at, col_at = np.array([-1.0, 1.0]), np.array([-1.0, 0.0, 1.0])
    row_of, col_of = np.repeat(row_at, cols), np.tile(col_at, rows)
    row_pairs, col_pairs = [0, 1, 4, 5], [2, 3, 6, 7]
    for channels, offsets in ((row_pairs, row_of), (col_pairs, col_of)):
        expected = posenc.rerotate_keys(x[:, channels], offsets, inv_freq=frequencies, layout="halves")
        np.testing.assert_allclose(ours[:, channels], expected, atol=1e-15)


def test_axial_default_frequencies_are_base_to_minus_k_over_a_quarter(rng):
    """Without ``frequencies``: base ** (-k / (d/4)), k < d/4 (timm's index bands, DINOv3's before its 2 pi)."""
    x = rng.standard_normal((6, 16))
    expected = grids.axial_rope_2d(x, 2, 3, frequencies=100.0 ** (-np.arange(4) / 4))
    np.testing.assert_allclose(grids.axial_rope_2d(x, 2, 3, base=100.0), expected, atol=1e-15)


def test_axial_rotation_keeps_every_norm_and_a_single_centred_cell_still(rng):
    """A rotation keeps each vector's norm; a 1 x 1 grid's centred coordinate is 0, so nothing turns."""
    x = rng.standard_normal((2, 12, 8))
    rotated = grids.axial_rope_2d(x, 3, 4, coordinates="centered")
    np.testing.assert_allclose(np.linalg.norm(rotated, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-14)
    one = rng.standard_normal((1, 8))
    np.testing.assert_allclose(grids.axial_rope_2d(one, 1, 1, coordinates="centered"), one, atol=0)


def test_mixed_scores_depend_only_on_the_2d_offset(rng):
    """RoPE-Mixed with arbitrary (also negative) frequencies: scores follow the 2-D offset alone."""
    rows, cols, d = 4, 3, 6
    frequencies = rng.standard_normal((2, d // 2))
    q, k = rng.standard_normal((2, d))
    queries = grids.mixed_rope_2d(np.tile(q, (rows * cols, 1)), rows, cols, frequencies)
    keys = grids.mixed_rope_2d(np.tile(k, (rows * cols, 1)), rows, cols, frequencies)
    _assert_scores_follow_the_offset(_scores(queries, keys), rows, cols)


@pytest.mark.parametrize("layout", ["interleaved", "halves"])
def test_mixed_with_axis_aligned_frequencies_is_axial(rng, layout):
    """fy = (omega, 0) and fx = (0, omega): the first half of the pairs follows the row, the second the column."""
    omega = np.array([0.9, 0.1])
    frequencies = np.array([np.concatenate([np.zeros(2), omega]), np.concatenate([omega, np.zeros(2)])])
    x = rng.standard_normal((3, 6, 8))
    mixed = grids.mixed_rope_2d(x, 2, 3, frequencies, layout=layout)
    np.testing.assert_allclose(mixed, grids.axial_rope_2d(x, 2, 3, frequencies=omega, layout=layout), atol=1e-15)


def test_mixed_phase_is_fx_times_column_plus_fy_times_row(rng):
    """Cell (r, c) turns pair p by fx[p] c + fy[p] r: the same as rotating by that real offset at frequency 1."""
    rows, cols = 3, 4
    frequencies = np.array([[0.3, -1.7], [2.5, 0.4]])
    x = rng.standard_normal((rows * cols, 4))
    ours = grids.mixed_rope_2d(x, rows, cols, frequencies)
    for t in range(rows * cols):
        r, c = divmod(t, cols)
        for pair in range(2):
            angle = frequencies[0, pair] * c + frequencies[1, pair] * r
            a, b = x[t, 2 * pair], x[t, 2 * pair + 1]
            expected = [a * math.cos(angle) - b * math.sin(angle), a * math.sin(angle) + b * math.cos(angle)]
            np.testing.assert_allclose(ours[t, 2 * pair : 2 * pair + 2], expected, atol=1e-14)


def test_mixed_by_minus_the_frequencies_undoes_the_rotation(rng):
    """Negating every frequency turns each pair back by the same angle."""
    x = rng.standard_normal((6, 4))
    frequencies = rng.standard_normal((2, 2))
    there = grids.mixed_rope_2d(x, 2, 3, frequencies)
    np.testing.assert_allclose(grids.mixed_rope_2d(there, 2, 3, -frequencies), x, atol=1e-14)


def test_rope_2d_errors_name_the_argument_and_the_rule(rng):
    """x must hold rows * cols rows and a multiple of 4 channels (2 for mixed); frequencies have their shape."""
    with pytest.raises(ValueError, match=r"x must have one row per grid cell: rows \* cols = 2 \* 3 = 6, got 5 rows"):
        grids.axial_rope_2d(np.zeros((5, 8)), 2, 3)
    with pytest.raises(ValueError, match="x's last axis must be a positive multiple of 4"):
        grids.axial_rope_2d(np.zeros((6, 6)), 2, 3)
    with pytest.raises(ValueError, match=r"frequencies must have shape \(2,\)"):
        grids.axial_rope_2d(np.zeros((6, 8)), 2, 3, frequencies=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="frequencies must be finite and >= 0"):
        grids.axial_rope_2d(np.zeros((6, 8)), 2, 3, frequencies=[1.0, -2.0])
    with pytest.raises(ValueError, match="grid coordinates times frequencies must stay below 2\\*\\*53 radians"):
        grids.axial_rope_2d(np.zeros((6, 8)), 2, 3, frequencies=[1.0, 1e300])
    with pytest.raises(ValueError, match=r"frequencies must have shape \(2, 3\) \(fx then fy"):
        grids.mixed_rope_2d(np.zeros((6, 6)), 2, 3, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="x's last axis must be a positive multiple of 2"):
        grids.mixed_rope_2d(np.zeros((6, 5)), 2, 3, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="coordinates must be one of 'index', 'centered', 'pixel'"):
        grids.mixed_rope_2d(np.zeros((6, 4)), 2, 3, np.zeros((2, 2)), coordinates="normalised")


# ---------------------------------------------------------------------------------------
# Resampling


def _keys(x: float, a: float) -> float:
    """Keys' cubic convolution kernel with coefficient a (PyTorch's cubic_convolution1 and 2)."""
    x = abs(x)
    if x <= 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return 0.0


def test_plain_upsampling_weights_worked_by_hand():
    """2 -> 4, first output: source -0.25, taps -2..1 clamped to 0, 0, 0, 1, a = -0.75 (exact binary fractions)."""
    t = 0.75  # -0.25 - floor(-0.25)
    first = _keys(t + 1, -0.75) + _keys(t, -0.75) + _keys(1 - t, -0.75)
    second = _keys(2 - t, -0.75)
    assert (first, second) == (1.10546875, -0.10546875)
    weights = grids.resample_weights(2, 4)
    assert weights[0].tolist() == [first, second]
    assert weights[3].tolist() == [second, first]  # the mirror image at the far border


def test_antialiased_upsampling_weights_worked_by_hand():
    """2 -> 4 with antialias: a = -0.5 at distances 0.25 and 1.25 from the centre 0.25 (no taps to the left of
    input 0), renormalised: 37/34 and -3/34."""
    near, far = _keys(0.25, -0.5), _keys(1.25, -0.5)
    assert (near, far) == (0.8671875, -0.0703125)
    np.testing.assert_allclose(grids.resample_weights(2, 4, antialias=True)[0], [37 / 34, -3 / 34], rtol=1e-15)


@pytest.mark.parametrize("antialias", [False, True])
def test_weights_keep_a_constant_and_the_same_size_is_the_identity(antialias):
    """Every row sums to 1 (a constant table stays constant); resizing to the same size changes nothing."""
    for old in range(1, 12):
        for new in range(1, 12):
            np.testing.assert_allclose(
                grids.resample_weights(old, new, antialias=antialias).sum(axis=1), 1.0, rtol=1e-14
            )
        np.testing.assert_array_equal(grids.resample_weights(old, old, antialias=antialias), np.eye(old))


def test_antialiased_downsampling_widens_the_kernel():
    """Downsampling 16 -> 4 (scale 4): plain bicubic reads 4 inputs per output; the antialiased kernel reads every
    input whose centre j + 1/2 lies within 2 * 4 of the output's centre 4 (i + 1/2): for output 1 (centre 6) the
    inputs 0 to 13, the two further left being past the border."""
    plain = grids.resample_weights(16, 4)
    wide = grids.resample_weights(16, 4, antialias=True)
    assert max(np.count_nonzero(row) for row in plain) == 4
    assert np.flatnonzero(wide[1]).tolist() == list(range(14))
    assert np.flatnonzero(wide[2]).tolist() == list(range(2, 16))


def test_dinov2_scale_factor_samples_at_old_over_new_plus_a_tenth():
    """With scale_factor (new + 0.1) / old, output i reads around (i + 1/2) old / (new + 0.1) - 1/2: at 4 -> 8
    the first output's source index is 0.5 * 4 / 8.1 - 0.5, not the plain 0.5 * 4 / 8 - 0.5."""
    factor = (8 + 0.1) / 4
    source = 4 / 8.1 * 0.5 - 0.5
    t = source - math.floor(source)
    expected = [
        _keys(t + 1, -0.75) + _keys(t, -0.75) + _keys(1 - t, -0.75),
        _keys(2 - t, -0.75),
        0.0,
        0.0,
    ]
    weights = grids.resample_weights(4, 8, scale_factor=factor)
    np.testing.assert_allclose(weights[0], expected, atol=1e-15)
    assert not np.allclose(weights, grids.resample_weights(4, 8))


def test_patch_table_is_the_kronecker_product_with_prefix_rows_unchanged(rng):
    """Resizing rows and columns is W_rows (x) W_cols acting on the grid, for every channel; prefix rows stay."""
    old, new, prefix = (3, 5), (4, 2), 2
    table = rng.standard_normal((prefix + 15, 3))
    for convention, antialias in (("timm", True), ("transformers", False)):
        ours = grids.resample_patch_table(table, new, convention=convention, old_grid=old, prefix_tokens=prefix)
        kron = np.kron(
            grids.resample_weights(3, 4, antialias=antialias), grids.resample_weights(5, 2, antialias=antialias)
        )
        np.testing.assert_array_equal(ours[:prefix], table[:prefix])
        np.testing.assert_allclose(ours[prefix:], kron @ table[prefix:], atol=1e-14)


@pytest.mark.parametrize("convention", grids.RESAMPLE_CONVENTIONS)
def test_patch_table_to_its_own_grid_is_unchanged(rng, convention):
    """All three libraries return the table as it is when the grid does not change (DINOv2's 0.1 included)."""
    table = rng.standard_normal((17, 4))
    np.testing.assert_array_equal(grids.resample_patch_table(table, (4, 4), convention=convention), table)


def test_resample_errors_name_the_argument_and_the_rule(rng):
    """A grid the table's rows do not fill, a malformed new_grid, too many prefix tokens, an unknown
    convention and a scale factor that does not give the requested size are refused by name."""
    table = rng.standard_normal((11, 2))
    with pytest.raises(ValueError, match=r"table's 10 rows after prefix_tokens \(1\) are not a square grid"):
        grids.resample_patch_table(table, (3, 3), convention="timm")
    with pytest.raises(ValueError, match=r"old_grid 3 x 3 must have one cell per row of table"):
        grids.resample_patch_table(table, (3, 3), convention="timm", old_grid=(3, 3))
    with pytest.raises(ValueError, match=r"new_grid must be two integers \(rows, cols\)"):
        grids.resample_patch_table(table, (3, 3, 1), convention="timm", old_grid=(2, 5))
    with pytest.raises(ValueError, match="table must have a row per grid cell after its prefix_tokens"):
        grids.resample_patch_table(table, (3, 3), convention="timm", prefix_tokens=11)
    with pytest.raises(ValueError, match="convention must be one of 'timm', 'transformers', 'dinov2'"):
        grids.resample_patch_table(table, (3, 3), convention="bilinear", old_grid=(2, 5))
    with pytest.raises(ValueError, match=r"new must be the size PyTorch makes from scale_factor, floor\(old \* "):
        grids.resample_weights(4, 8, scale_factor=1.9)


def _plain_row(old: int, new: int, i: int) -> list[float]:
    """Output i of PyTorch's plain bicubic resize from resample_weights' docstring: four taps around
    ``scale (i + 1/2) - 1/2``, floored after rounding to float32, clamped to the border, a = -0.75."""
    source = old / new * (i + 0.5) - 0.5
    index = min(math.floor(np.float32(source)), old - 1)
    t = min(max(source - index, 0.0), 1.0)
    row = [0.0] * old
    for step, distance in zip(range(-1, 3), (t + 1.0, t, 1.0 - t, (1.0 - t) + 1.0)):
        row[min(max(index + step, 0), old - 1)] += _keys(distance, -0.75)
    return row


@pytest.mark.parametrize("old", [1, 3, 40])
def test_a_tall_weight_matrix_is_built_in_blocks_with_every_row_its_own(old):
    """Outputs are formed in blocks of 8192: rows on both sides of a boundary, and the last, are each
    the four taps of their own source point; every row sums to 1 (antialiased too)."""
    new = 20001
    weights = grids.resample_weights(old, new)
    for i in (0, 8191, 8192, 16384, new - 1):
        np.testing.assert_allclose(weights[i], _plain_row(old, new, i), rtol=1e-15, atol=1e-16)
    np.testing.assert_allclose(grids.resample_weights(old, new, antialias=True).sum(axis=1), 1.0, rtol=1e-14)
