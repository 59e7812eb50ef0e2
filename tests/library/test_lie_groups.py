"""posenc.lie_groups: the exponential against closed forms and series, RoPE's generators against
posenc's RoPE, STRING as RoPE in a rotated basis, and the commutator and relativity measures."""

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
        (lambda: posenc.liere_generators(2**11, 1, seed=0), "width must be <= 1024"),
        (lambda: posenc.liere_generators(1024, 2**10, seed=0), "more than posenc's limit"),
    ],
)
def test_bad_arguments_are_refused_by_name_and_rule(call, rule: str) -> None:
    with pytest.raises((ValueError, TypeError), match=rule):
        call()


def test_a_huge_width_is_refused_before_anything_is_allocated() -> None:
    import tracemalloc

    tracemalloc.start()
    with pytest.raises(ValueError, match="width must be <= 1024"):
        posenc.rope_generators(2**20)
    with pytest.raises(ValueError, match="positions and generators: the array would have"):
        posenc.relativity_error(posenc.rope_generators(512), np.zeros((2**10, 1)))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2**22 + 8 * posenc.rope_generators(512).nbytes  # copies of the generators, never the grid


def test_the_tolerances_are_those_documented() -> None:
    assert lie_groups.SKEW_TOLERANCE == 1e-12 and lie_groups.MAX_LIE_WIDTH == 1024
    nearly = np.array([[[0.0, -1.0], [1.0 + 1e-13, 0.0]]])
    posenc.commutator_norm(nearly)  # within the tolerance: accepted
    with pytest.raises(ValueError, match="skew-symmetric"):
        posenc.commutator_norm(np.array([[[0.0, -1.0], [1.0 + 1e-9, 0.0]]]))
