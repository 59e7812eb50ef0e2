"""posenc.data_dependent against the definitions written out term by term, and its special cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc

rng = np.random.default_rng(2025)


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


# ---------------------------------------------------------------------------------------
# FoX


def test_forgetting_bias_is_the_sum_of_log_gates_between_key_and_query():
    gates = rng.uniform(0.05, 1.0, size=(2, 6))
    bias = posenc.forgetting_bias(gates)
    for head in range(2):
        for i in range(6):
            for j in range(6):
                if j > i:
                    assert bias[head, i, j] == -math.inf
                else:
                    expected = sum(math.log(gates[head, step]) for step in range(j + 1, i + 1))
                    assert bias[head, i, j] == pytest.approx(expected, abs=1e-13)


def test_forgetting_bias_from_logs_equals_the_bias_from_gates():
    gates = rng.uniform(0.01, 1.0, size=7)
    np.testing.assert_allclose(
        posenc.forgetting_bias(np.log(gates), log=True), posenc.forgetting_bias(gates), rtol=0, atol=1e-14
    )


def test_a_gate_near_zero_from_its_log_keeps_its_digits():
    # A log of -800 is a gate of e^-800, below float64's smallest number: only log=True can carry it.
    bias = posenc.forgetting_bias([0.0, -800.0, -800.0], log=True)
    assert bias[2, 0] == -1600.0 and bias[2, 1] == -800.0


@pytest.mark.parametrize("n_heads", [1, 3, 8])
def test_a_constant_gate_is_alibi_with_slope_minus_log_f(n_heads):
    slopes = posenc.alibi_slopes(n_heads)
    gates = np.repeat(np.exp(-slopes)[:, None], 9, axis=1)
    np.testing.assert_allclose(posenc.forgetting_bias(gates), posenc.alibi_bias(n_heads, 9), rtol=1e-13)


def test_forgetting_attention_is_causal_softmax_of_scores_plus_bias():
    scores = rng.standard_normal((2, 5, 5))
    gates = rng.uniform(0.3, 1.0, size=(2, 5))
    bias = posenc.forgetting_bias(gates)
    expected = softmax_rows(np.where(np.isfinite(bias), scores + bias, -np.inf))
    np.testing.assert_allclose(posenc.forgetting_attention(scores, gates), expected, rtol=1e-13, atol=1e-15)


def test_gates_of_one_leave_plain_causal_softmax():
    scores = rng.standard_normal((4, 4))
    causal = np.where(np.tril(np.ones((4, 4), dtype=bool)), scores, -np.inf)
    np.testing.assert_allclose(posenc.forgetting_attention(scores, np.ones(4)), softmax_rows(causal), rtol=1e-13)


def test_forgetting_attention_refuses_gates_of_another_shape():
    with pytest.raises(ValueError, match="forget_gates must have shape"):
        posenc.forgetting_attention(np.zeros((3, 3)), [1.0, 1.0])


@pytest.mark.parametrize("gate", [0.0, -0.1, 1.5])
def test_gates_outside_zero_one_are_refused(gate):
    with pytest.raises(ValueError, match=r"forget_gates must lie in \(0, 1\]"):
        posenc.forgetting_bias([0.5, gate])


# ---------------------------------------------------------------------------------------
# Stick-breaking


def stick_breaking_by_definition(z: np.ndarray, attend_current: bool) -> np.ndarray:
    n = z.shape[-1]
    beta = 1.0 / (1.0 + np.exp(-z))
    weights = np.zeros_like(z)
    for i in range(n):
        last = i if attend_current else i - 1
        for j in range(last + 1):
            weights[i, j] = beta[i, j] * math.prod(1.0 - beta[i, k] for k in range(j + 1, last + 1))
    return weights


@pytest.mark.parametrize("attend_current", [False, True])
def test_stick_breaking_matches_its_definition(attend_current):
    z = rng.standard_normal((6, 6)) * 2
    np.testing.assert_allclose(
        posenc.stick_breaking_weights(z, attend_current=attend_current),
        stick_breaking_by_definition(z, attend_current),
        rtol=1e-12,
        atol=1e-15,
    )


def test_a_query_sees_only_earlier_keys_unless_it_attends_to_itself():
    z = rng.standard_normal((5, 5))
    strict = posenc.stick_breaking_weights(z)
    assert np.all(strict[np.triu_indices(5)] == 0)
    assert np.all(np.diag(posenc.stick_breaking_weights(z, attend_current=True)) > 0)


@pytest.mark.parametrize("attend_current", [False, True])
def test_the_remainder_is_one_minus_the_weights(attend_current):
    z = rng.standard_normal((2, 7, 7))
    weights = posenc.stick_breaking_weights(z, attend_current=attend_current)
    remainder = posenc.stick_breaking_remainder(z, attend_current=attend_current)
    np.testing.assert_allclose(weights.sum(axis=-1) + remainder, 1.0, rtol=0, atol=1e-14)


def test_the_nearest_key_takes_almost_everything_when_it_is_sure():
    z = np.full((3, 3), 0.0)
    z[2, 1] = 40.0
    weights = posenc.stick_breaking_weights(z)
    assert weights[2, 1] == pytest.approx(1.0, abs=1e-15)
    # The earlier key keeps a share of about e^-40, which the log-space form still resolves.
    assert weights[2, 0] == pytest.approx(0.5 * math.exp(-40.0), rel=1e-12)


def test_a_masked_key_leaves_the_stick_unchanged():
    z = rng.standard_normal((4, 4))
    masked = z.copy()
    masked[3, 2] = -math.inf
    weights = posenc.stick_breaking_weights(masked)
    assert weights[3, 2] == 0
    beta = 1.0 / (1.0 + np.exp(-z[3]))
    np.testing.assert_allclose(weights[3, :2], [beta[0] * (1 - beta[1]), beta[1]], rtol=1e-13)


# ---------------------------------------------------------------------------------------
# PaTH


def householder(w: np.ndarray, beta: float) -> np.ndarray:
    unit = w / np.linalg.norm(w)
    return np.eye(w.size) - beta * np.outer(unit, unit)


def path_by_matrices(q, k, w, betas) -> np.ndarray:
    n = q.shape[0]
    scores = np.full((n, n), -np.inf)
    for i in range(n):
        for j in range(i + 1):
            product = np.eye(q.shape[1])
            for s in range(i, j, -1):  # H_i H_{i-1} ... H_{j+1}, left to right
                product = product @ householder(w[s], betas[s])
            scores[i, j] = q[i] @ product @ k[j]
    return scores


def test_path_scores_match_the_product_of_householder_matrices():
    q, k, w = (rng.standard_normal((6, 4)) for _ in range(3))
    betas = rng.uniform(0, 2, size=6)
    np.testing.assert_allclose(posenc.path_scores(q, k, w, betas), path_by_matrices(q, k, w, betas), rtol=1e-12)


def test_the_order_of_the_reflections_matters_and_is_newest_next_to_the_query():
    q, k, w = (rng.standard_normal((4, 3)) for _ in range(3))
    betas = np.full(4, 1.5)
    scores = posenc.path_scores(q, k, w, betas)
    reversed_order = q[3] @ householder(w[1], 1.5) @ householder(w[2], 1.5) @ householder(w[3], 1.5) @ k[0]
    assert abs(scores[3, 0] - reversed_order) > 1e-3


def test_path_with_every_beta_zero_is_nope():
    q, k, w = (rng.standard_normal((2, 5, 4)) for _ in range(3))
    scores = posenc.path_scores(q, k, w, np.zeros((2, 5)))
    nope = np.einsum("hid,hjd->hij", q, k)
    lower = np.tril(np.ones((5, 5), dtype=bool))
    np.testing.assert_allclose(scores[:, lower], nope[:, lower], rtol=1e-14)
    assert np.all(scores[:, ~lower] == -np.inf)


def test_path_directions_are_scaled_to_unit_length():
    q, k, w = (rng.standard_normal((4, 3)) for _ in range(3))
    betas = rng.uniform(0, 2, size=4)
    np.testing.assert_allclose(
        posenc.path_scores(q, k, w * 1e-200, betas), posenc.path_scores(q, k, w, betas), rtol=1e-13
    )


def test_path_refuses_a_zero_direction_and_a_beta_beyond_two():
    q = np.ones((2, 2))
    with pytest.raises(ValueError, match="directions must be nonzero"):
        posenc.path_scores(q, q, [[1.0, 0.0], [0.0, 0.0]], [1.0, 1.0])
    with pytest.raises(ValueError, match=r"betas must lie in \[0, 2\]"):
        posenc.path_scores(q, q, q, [1.0, 2.5])


# ---------------------------------------------------------------------------------------
# Long sequences: formed a block of queries at a time, each row still its definition


def test_a_long_forgetting_bias_is_each_segment_sum_on_both_sides_of_a_block_boundary():
    """Rows are summed in blocks of about 2**18 elements: n = 700 makes two blocks (374 rows in the
    first); rows on both sides of the boundary, and the last, are their segments' exact sums."""
    logs = -rng.uniform(0.0, 3.0, size=700)
    logs[5] = -1e16  # before the boundary: a running sum's difference would lose every later bias
    bias = posenc.forgetting_bias(logs, log=True)
    for i in (0, 373, 374, 375, 699):
        for j in range(i + 1):
            expected = math.fsum(logs[j + 1 : i + 1])
            assert bias[i, j] == pytest.approx(expected, rel=700 * 2.0**-52, abs=1e-300)
        assert np.all(bias[i, i + 1 :] == -math.inf)


def _stick_row(z: np.ndarray, i: int, attend_current: bool) -> list[float]:
    """Row i of stick_breaking_weights from its definition, the nearest key first: beta_j times the
    product of (1 - beta_k) over the keys k between j and the query."""
    beta = (1.0 / (1.0 + np.exp(-z[i]))).tolist()
    last = i if attend_current else i - 1
    row, left = [0.0] * z.shape[-1], 1.0
    for j in range(last, -1, -1):
        row[j] = beta[j] * left
        left *= 1.0 - beta[j]
    return row


@pytest.mark.parametrize("attend_current", [False, True])
def test_long_stick_breaking_rows_match_their_definition_on_both_sides_of_a_block_boundary(attend_current):
    """n = 600 makes two blocks of queries (436 in the first)."""
    z = rng.standard_normal((600, 600)) * 0.1 - 4.0  # small betas: the sticks last the whole row
    weights = posenc.stick_breaking_weights(z, attend_current=attend_current)
    remainder = posenc.stick_breaking_remainder(z, attend_current=attend_current)
    for i in (1, 435, 436, 437, 599):
        expected = _stick_row(z, i, attend_current)
        np.testing.assert_allclose(weights[i], expected, rtol=1e-11, atol=1e-300)
        assert remainder[i] == pytest.approx(1.0 - math.fsum(expected), rel=1e-10)
