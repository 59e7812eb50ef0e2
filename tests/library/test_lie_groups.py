"""posenc.lie_groups: the exponential against closed forms and series, RoPE's generators against
posenc's RoPE, STRING as RoPE in a rotated basis, ComRoPE's block generators against a block-by-block
evaluation, and the commutator and relativity measures."""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc
from posenc import lie_groups

J = np.array([[0.0, -1.0], [1.0, 0.0]])


def taylor_exp(matrix: np.ndarray, terms: int = 60) -> np.ndarray:
    """exp of a small matrix by its power series, an evaluation independent of eigh."""
    total, term = np.eye(len(matrix)), np.eye(len(matrix))
    for n in range(1, terms):
        term = term @ matrix / n
        total = total + term
    return total


def random_orthogonal(rng: np.random.Generator, width: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((width, width)))
    return q * np.sign(np.diag(r))


@pytest.mark.parametrize("angle", [0.0, 0.3, -1.7, math.pi, 12.5, 1e4 + 0.25])
def test_a_2x2_generator_gives_the_closed_form_rotation(angle: float) -> None:
    rotation = posenc.lie_rotation([J], [[angle]])[0]
    expected = [[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]]
    np.testing.assert_allclose(rotation, expected, atol=1e-11 * max(1.0, abs(angle)))


def test_the_exponential_agrees_with_its_power_series_for_dense_generators() -> None:
    rng = np.random.default_rng(4)
    generators = posenc.liere_generators(7, 3, seed=11, scale=0.2)
    positions = rng.uniform(-2, 2, size=(5, 3))
    rotations = posenc.lie_rotation(generators, positions)
    for rotation, position in zip(rotations, positions, strict=True):
        exponent = np.tensordot(position, generators, axes=1)
        np.testing.assert_allclose(rotation, taylor_exp(exponent), atol=1e-12)
        np.testing.assert_allclose(rotation.T @ rotation, np.eye(7), atol=1e-13)


@pytest.mark.parametrize("layout", ["interleaved", "halves"])
@pytest.mark.parametrize("width", [2, 8, 20])
def test_rope_generators_give_posenc_rope(layout: str, width: int) -> None:
    rng = np.random.default_rng(width)
    ids = [0, 1, 7, 4096]
    x = rng.standard_normal((len(ids), width))
    rotations = posenc.lie_rotation(posenc.rope_generators(width, layout=layout), np.array(ids, float)[:, None])
    np.testing.assert_allclose(np.einsum("nij,nj->ni", rotations, x), posenc.rope(x, ids, layout=layout), atol=1e-11)


@pytest.mark.parametrize("layout", ["interleaved", "halves"])
def test_two_axis_rope_generators_give_axial_rope(layout: str) -> None:
    rows, cols, width = 3, 4, 12
    x = np.random.default_rng(2).standard_normal((rows * cols, width))
    grid = np.array([[cell // cols, cell % cols] for cell in range(rows * cols)], dtype=float)
    rotations = posenc.lie_rotation(posenc.rope_generators(width, axes=2, base=100.0, layout=layout), grid)
    expected = posenc.axial_rope_2d(x, rows, cols, base=100.0, layout=layout)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", rotations, x), expected, atol=1e-12)


def test_rope_generators_are_skew_and_hold_the_paper_frequencies() -> None:
    generators = posenc.rope_generators(8, base=10.0)
    np.testing.assert_array_equal(generators, -generators.transpose(0, 2, 1))
    assert generators[0, 1, 0] == 1.0 and generators[0, 0, 1] == -1.0
    np.testing.assert_allclose([generators[0, 2 * r + 1, 2 * r] for r in range(4)], 10.0 ** (-np.arange(4) / 4))


def test_commutator_norm_is_the_frobenius_norm_over_pairs() -> None:
    a, b, c = posenc.liere_generators(5, 3, seed=7)

    def frobenius_squared(x: np.ndarray, y: np.ndarray) -> float:
        return float(np.sum((x @ y - y @ x) ** 2))

    expected = math.sqrt(frobenius_squared(a, b) + frobenius_squared(a, c) + frobenius_squared(b, c))
    assert posenc.commutator_norm([a, b, c]) == pytest.approx(expected, rel=1e-12)
    assert posenc.commutator_norm([a]) == 0.0
    assert posenc.commutator_norm([a, 2.5 * a, -a]) == pytest.approx(0.0, abs=1e-12)
    assert posenc.commutator_norm(np.stack([a, b]) * 3.0) == pytest.approx(9.0 * posenc.commutator_norm([a, b]))


def test_rope_and_string_commute_and_are_relative() -> None:
    rng = np.random.default_rng(9)
    positions = rng.uniform(-20, 20, size=(6, 2))
    for generators in (posenc.rope_generators(8, axes=2), posenc.string_generators(random_orthogonal(rng, 8), axes=2)):
        assert posenc.commutator_norm(generators) < 1e-12
        assert posenc.relativity_error(generators, positions) < 1e-11


def test_string_is_rope_in_a_rotated_basis() -> None:
    rng = np.random.default_rng(5)
    basis = random_orthogonal(rng, 8)
    positions = rng.uniform(-5, 5, size=(4, 2))
    string = posenc.lie_rotation(posenc.string_generators(basis, axes=2, base=50.0), positions)
    rope = posenc.lie_rotation(posenc.rope_generators(8, axes=2, base=50.0), positions)
    np.testing.assert_allclose(string, basis.T @ rope @ basis, atol=1e-12)


def test_relativity_error_is_the_largest_change_of_a_unit_score() -> None:
    generators = posenc.liere_generators(6, 2, seed=3, scale=0.5)
    positions = np.array([[0.0, 0.0], [1.0, 0.5], [-0.5, 2.0]])
    error = posenc.relativity_error(generators, positions)
    assert 0.0 < error <= 2.0
    rotation = posenc.lie_rotation(generators, positions)
    largest = 0.0
    for i in range(3):
        for j in range(3):
            offset = posenc.lie_rotation(generators, [positions[j] - positions[i]])[0]
            difference = rotation[i].T @ rotation[j] - offset
            largest = max(largest, float(np.linalg.svd(difference, compute_uv=False)[0]))
            # Some pair of unit vectors reaches the norm: the top singular vectors.
            u, s, vt = np.linalg.svd(difference)
            assert u[:, 0] @ difference @ vt[0] == pytest.approx(s[0])
    assert error == pytest.approx(largest, rel=1e-12)


def test_relativity_error_grows_from_zero_as_generators_leave_commuting() -> None:
    commuting = posenc.rope_generators(8, axes=2, base=10.0)
    dense = posenc.liere_generators(8, 2, seed=1)
    positions = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, -1.0], [2.0, 2.0]])
    errors = [posenc.relativity_error(commuting + s * dense, positions) for s in (0.0, 0.01, 0.1)]
    assert errors[0] < 1e-12 < errors[1] < errors[2]


def test_liere_generators_are_seeded_and_scaled() -> None:
    first = posenc.liere_generators(6, 2, seed=42, scale=0.5)
    np.testing.assert_array_equal(first, posenc.liere_generators(6, 2, seed=42, scale=0.5))
    assert not np.array_equal(first, posenc.liere_generators(6, 2, seed=43, scale=0.5))
    np.testing.assert_allclose(first, 0.5 * posenc.liere_generators(6, 2, seed=42))
    assert np.all(np.diagonal(first, axis1=1, axis2=2) == 0)


def comrope_rotation_by_blocks(
    matrices: np.ndarray, multipliers: np.ndarray, owners: np.ndarray, position: np.ndarray
) -> np.ndarray:
    """ComRoPE's rotation at one position, one block at a time, as the authors' code evaluates it.

    Block j's exponent is sum_i p_i c_ij (P_j - P_j^T), where c_ij is multipliers[i, j] for LD and
    1 or 0 by ``owners`` (the axis of each block) for AP; its exponential (power series) goes on
    the diagonal of a zero matrix.
    """
    count, size = matrices.shape[0], matrices.shape[1]
    rotation = np.zeros((count * size, count * size))
    for j in range(count):
        skew = matrices[j] - matrices[j].T
        weight = sum(position[i] * multipliers[i, j] * (owners[j] in (-1, i)) for i in range(len(position)))
        rotation[j * size : (j + 1) * size, j * size : (j + 1) * size] = taylor_exp(weight * skew)
    return rotation


@pytest.mark.parametrize("axes, size, per_axis", [(1, 2, 3), (2, 2, 2), (2, 3, 1), (3, 4, 1), (2, 1, 2)])
def test_comrope_ap_rotates_each_block_by_its_own_axis(axes: int, size: int, per_axis: int) -> None:
    rng = np.random.default_rng(10 * axes + size)
    count = axes * per_axis
    matrices = rng.standard_normal((count, size, size))
    positions = rng.uniform(-2, 2, size=(3, axes))
    generators = posenc.comrope_ap_generators(matrices, axes=axes)
    assert generators.shape == (axes, count * size, count * size)
    owners = np.arange(count) % axes  # block j belongs to axis j mod axes, as in the authors' mask
    for rotation, position in zip(posenc.lie_rotation(generators, positions), positions, strict=True):
        expected = comrope_rotation_by_blocks(matrices, np.ones((axes, count)), owners, position)
        np.testing.assert_allclose(rotation, expected, atol=1e-12)


@pytest.mark.parametrize("axes, size, count", [(1, 2, 3), (2, 2, 2), (2, 3, 3), (3, 4, 2)])
def test_comrope_ld_scales_each_block_per_axis(axes: int, size: int, count: int) -> None:
    rng = np.random.default_rng(100 + 10 * axes + size)
    matrices = rng.standard_normal((count, size, size))
    multipliers = rng.standard_normal((axes, count))
    positions = rng.uniform(-2, 2, size=(3, axes))
    generators = posenc.comrope_ld_generators(matrices, multipliers)
    assert generators.shape == (axes, count * size, count * size)
    every_axis = np.full(count, -1)
    for rotation, position in zip(posenc.lie_rotation(generators, positions), positions, strict=True):
        expected = comrope_rotation_by_blocks(matrices, multipliers, every_axis, position)
        np.testing.assert_allclose(rotation, expected, atol=1e-12)


@pytest.mark.parametrize("variant", ["ap", "ld"])
@pytest.mark.parametrize("size", [2, 3, 4])
def test_comrope_generators_commute_and_give_relative_scores(variant: str, size: int) -> None:
    generators = posenc.comrope_random_generators(4 * size, 2, block_size=size, variant=variant, seed=size)
    assert posenc.commutator_norm(generators) < 1e-12
    grid = [[row, col] for row in range(4) for col in range(4)]
    assert posenc.relativity_error(generators, grid) < 1e-11
    # LieRE's dense generators of the same width and entry size are far from both.
    dense = posenc.liere_generators(4 * size, 2, seed=size)
    assert posenc.commutator_norm(dense) > 1.0 and posenc.relativity_error(dense, grid) > 0.1


def test_comrope_ap_generators_of_different_axes_multiply_to_zero() -> None:
    generators = posenc.comrope_random_generators(12, 3, block_size=2, variant="ap", seed=5)
    for i in range(3):
        for k in range(3):
            if i != k:
                assert not np.any(generators[i] @ generators[k])
        assert np.any(generators[i])


def test_comrope_ap_with_2x2_blocks_and_one_axis_is_rope() -> None:
    # exp(p (P - P^T)) for a 2x2 P turns the pair by p (P[1, 0] - P[0, 1]) counter-clockwise, as RoPE's
    # exp(p theta J) does; P with P[1, 0] - P[0, 1] = theta_r gives RoPE's rotation.
    width = 8
    frequencies = posenc.rope_frequencies(width)
    matrices = np.zeros((width // 2, 2, 2))
    matrices[:, 1, 0] = 0.25 + frequencies
    matrices[:, 0, 1] = 0.25
    matrices[:, 0, 0] = np.arange(width // 2)  # the diagonal cancels in P - P^T
    ids = [0, 1, 5, 300]
    x = np.random.default_rng(3).standard_normal((len(ids), width))
    rotations = posenc.lie_rotation(posenc.comrope_ap_generators(matrices, axes=1), np.array(ids, float)[:, None])
    np.testing.assert_allclose(np.einsum("nij,nj->ni", rotations, x), posenc.rope(x, ids), atol=1e-11)


def test_comrope_ld_with_one_multiplier_per_axis_is_the_readme_form() -> None:
    # The README's form B_i = theta_i (P - P^T): every block of axis i scaled by the same theta_i.
    rng = np.random.default_rng(8)
    matrices = rng.standard_normal((3, 4, 4))
    thetas = np.array([0.5, -2.0])
    generators = posenc.comrope_ld_generators(matrices, np.repeat(thetas[:, None], 3, axis=1))
    shared = posenc.comrope_ld_generators(matrices, [[1.0, 1.0, 1.0]])[0]
    np.testing.assert_allclose(generators, thetas[:, None, None] * shared, rtol=0, atol=0)


def test_comrope_random_generators_are_seeded_and_drawn_as_documented() -> None:
    for variant in ("ap", "ld"):
        first = posenc.comrope_random_generators(8, 2, block_size=2, variant=variant, seed=4, scale=0.5)
        again = posenc.comrope_random_generators(8, 2, block_size=2, variant=variant, seed=4, scale=0.5)
        other = posenc.comrope_random_generators(8, 2, block_size=2, variant=variant, seed=5, scale=0.5)
        np.testing.assert_array_equal(first, again)
        assert not np.array_equal(first, other)
    rng = np.random.default_rng(4)
    matrices = 0.5 * rng.standard_normal((4, 2, 2))
    multipliers = rng.standard_normal((2, 4))
    np.testing.assert_array_equal(
        posenc.comrope_random_generators(8, 2, block_size=2, variant="ld", seed=4, scale=0.5),
        posenc.comrope_ld_generators(matrices, multipliers),
    )
    np.testing.assert_array_equal(
        posenc.comrope_random_generators(8, 2, block_size=2, variant="ap", seed=4, scale=0.5),
        posenc.comrope_ap_generators(matrices, axes=2),
    )


@pytest.mark.parametrize("width", range(1, 25))
@pytest.mark.parametrize("axes", [1, 2, 3])
@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_comrope_ap_accepts_exactly_the_sizes_the_authors_code_accepts(width: int, axes: int, size: int) -> None:
    # Their code requires head_dim % num_axes == 0 and (head_dim / num_axes) % block_size == 0.
    accepted_there = width % axes == 0 and (width // axes) % size == 0
    try:
        posenc.comrope_random_generators(width, axes, block_size=size, variant="ap", seed=0)
    except ValueError as error:
        assert not accepted_there, str(error)
    else:
        assert accepted_there


@pytest.mark.parametrize(
    "call, rule",
    [
        (lambda: posenc.lie_rotation([[[0.0, 1.0], [1.0, 0.0]]], [[1.0]]), "generators must be skew-symmetric"),
        (lambda: posenc.lie_rotation([J], [[1.0, 2.0]]), "positions must have one coordinate per generator"),
        (lambda: posenc.lie_rotation(J, [[1.0]]), r"generators must have shape \(k, d, d\)"),
        (lambda: posenc.lie_rotation([J], [[2.0**40]]), "positions and generators must keep"),
        (lambda: posenc.string_generators([[1.0, 1.0], [0.0, 1.0]]), "basis must be orthogonal"),
        (lambda: posenc.rope_generators(6, axes=2), "width must be a multiple of 4"),
        (lambda: posenc.rope_generators(7), "width must be a positive even integer"),
        (lambda: posenc.rope_generators(8, axes=3), "axes must be <= 2"),
        (lambda: posenc.liere_generators(2**9, 1, seed=0), "width must be <= 256"),
        (lambda: posenc.liere_generators(256, 2**12, seed=0), "more than posenc's limit"),
        (lambda: posenc.comrope_ap_generators(np.zeros((3, 2, 2)), axes=2), "axes must divide the number of blocks"),
        (lambda: posenc.comrope_ap_generators(np.zeros((2, 2, 3)), axes=1), r"matrices must have shape \(m, b, b\)"),
        (lambda: posenc.comrope_ap_generators(np.zeros((2, 2)), axes=1), "matrices must have 3 axes"),
        (
            lambda: posenc.comrope_ap_generators(np.zeros((128, 4, 4)), axes=1),
            r"matrices' width m \* b must be <= 256",
        ),
        (lambda: posenc.comrope_ld_generators(np.zeros((3, 2, 2)), np.ones((2, 2))), r"multipliers must have shape"),
        (lambda: posenc.comrope_ld_generators([[[0.0, 1e308], [-1e308, 0.0]]], [[1.0]]), "matrices must be small"),
        (lambda: posenc.comrope_ld_generators([[[0.0, 1e300], [0.0, 0.0]]], [[1e10]]), "matrices and multipliers"),
        (
            lambda: posenc.comrope_random_generators(10, 1, block_size=4, variant="ld", seed=0),
            "block_size must divide width",
        ),
        (
            lambda: posenc.comrope_random_generators(12, 4, block_size=2, variant="ap", seed=0),
            "axes must divide width / block_size",
        ),
        (lambda: posenc.comrope_random_generators(8, 2, block_size=2, variant="AP", seed=0), "variant must be one of"),
        (
            lambda: posenc.comrope_random_generators(256, 2**12, block_size=2, variant="ld", seed=0),
            "more than posenc's limit",
        ),
    ],
)
def test_bad_arguments_are_refused_by_name_and_rule(call, rule: str) -> None:
    with pytest.raises((ValueError, TypeError), match=rule):
        call()


def test_a_huge_width_is_refused_before_anything_is_allocated() -> None:
    import tracemalloc

    tracemalloc.start()
    with pytest.raises(ValueError, match="width must be <= 256"):
        posenc.rope_generators(2**20)
    with pytest.raises(ValueError, match="positions and generators: 2098176 rotations and norms of width 256 are too"):
        posenc.relativity_error(posenc.rope_generators(256), np.zeros((2**10, 1)))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2**22 + 8 * posenc.rope_generators(256).nbytes  # copies of the generators, never the grid


def test_the_tolerances_are_those_documented() -> None:
    assert lie_groups.SKEW_TOLERANCE == 1e-12 and lie_groups.MAX_LIE_WIDTH == 256
    assert lie_groups.LIE_WORK_LIMIT == 2**25
    nearly = np.array([[[0.0, -1.0], [1.0 + 1e-13, 0.0]]])
    posenc.commutator_norm(nearly)  # within the tolerance: accepted
    with pytest.raises(ValueError, match="skew-symmetric"):
        posenc.commutator_norm(np.array([[[0.0, -1.0], [1.0 + 1e-9, 0.0]]]))
