"""The derivation registry: every required ID is present, proved and cross-checked, and the checker can fail."""

from __future__ import annotations

import time

import numpy as np
import pytest
import sympy as sp

import posenc
import posenc.verify as verify
from posenc import derivations
from posenc.registry import ID_PATTERN, REGISTRY, Derivation, ProofFailure, assert_close, assert_equal

# The stable public contract: these IDs appear in the site's URLs and in readers' citations.
REQUIRED_IDS = [
    "pair-norm",
    "wavelength",
    "sine-cosine-phase",
    "shift-matrix-from-probes",
    "shift-matrix-all-phases",
    "shift-composition",
    "block-shift",
    "kernel",
    "distance",
    "kernel-symmetry-bound",
    "normalized-ids-step",
    "attention-expansion",
    "position-only-counterexample",
    "projection-parameters",
    "sum-not-separable",
    "residual-jacobian",
    "rope-relative",
    "rope-norm",
    "rope-layout-permutation",
    "rope-sinusoidal-link",
    "alibi-slopes",
    "alibi-softmax-shift",
]


def make_entry(id: str, prove, check=lambda rng: None, budget_seconds: float = 5.0) -> Derivation:
    """A derivation built directly, never added to REGISTRY."""
    return Derivation(
        id=id,
        title="A test entry",
        statement=r"1 = 1",
        summary="Only used by the tests.",
        assumptions=(),
        steps=("Nothing to show.",),
        prove=prove,
        check=check,
        budget_seconds=budget_seconds,
    )


@pytest.mark.parametrize("derivation_id", REQUIRED_IDS)
def test_required_id_is_registered_checked_and_proved(derivation_id: str) -> None:
    assert derivation_id in REGISTRY
    entry = REGISTRY[derivation_id]
    assert entry.check is not None, f"{derivation_id} has no numeric check"
    assert verify.run(entry) is None


@pytest.mark.parametrize("derivation_id", REQUIRED_IDS)
def test_entry_has_reader_facing_parts(derivation_id: str) -> None:
    entry = REGISTRY[derivation_id]
    assert entry.title and not entry.title.endswith(".")
    assert entry.statement.strip() and r"\begin{align}" not in entry.statement
    assert entry.summary.endswith(".")
    assert 2 <= len(entry.steps) <= 5


def test_ids_are_kebab_case_unique_and_in_order() -> None:
    assert len(set(REQUIRED_IDS)) == len(REQUIRED_IDS)
    assert all(ID_PATTERN.match(derivation_id) for derivation_id in REGISTRY)
    assert list(REGISTRY)[: len(REQUIRED_IDS)] == REQUIRED_IDS


def test_wrong_distance_is_rejected() -> None:
    width = 4
    t, s = derivations.t, derivations.s
    difference = derivations.position_vector(t, width) - derivations.position_vector(s, width)
    kernel = sum(sp.cos(derivations.omega(q, width) * (t - s)) for q in range(width // 2))
    squared = derivations.angle_sum(difference.dot(difference))
    assert_equal(squared, derivations.angle_sum(width - 2 * kernel), "the right distance")
    with pytest.raises(ProofFailure):
        assert_equal(squared, derivations.angle_sum(width - kernel), "d - K(t - s)")


def test_shift_matrix_with_wrong_sign_is_rejected() -> None:
    theta, delta = derivations.theta, derivations.delta
    wrong = sp.Matrix([[sp.cos(delta), -sp.sin(delta)], [sp.sin(delta), sp.cos(delta)]])
    with pytest.raises(ProofFailure):
        assert_equal(derivations.angle_sum(wrong * derivations.pair(theta)), derivations.pair(theta + delta), "wrong sign")


def test_alibi_ratio_with_wrong_exponent_is_rejected() -> None:
    heads, head = sp.Symbol("n", positive=True, integer=True), sp.Symbol("h", positive=True, integer=True)
    ratio = sp.powsimp(2 ** (-8 * (head + 1) / heads) / 2 ** (-8 * head / heads), force=True)
    with pytest.raises(ProofFailure):
        assert_equal(ratio, sp.Integer(2) ** (-4 / heads), "ratio 2^(-4/n)")


def test_numeric_check_rejects_a_wrong_library_function(monkeypatch: pytest.MonkeyPatch) -> None:
    def wrong_kernel(offset, width, *, base=posenc.DEFAULT_BASE):
        frequencies = posenc.frequencies(width, base=base)
        return np.sin(np.multiply.outer(np.asarray(offset, dtype=float), frequencies)).sum(axis=-1)

    monkeypatch.setattr(posenc, "kernel", wrong_kernel)
    with pytest.raises(ProofFailure):
        REGISTRY["kernel"].check(np.random.default_rng(0))
    assert "numeric values disagree" in verify.run(REGISTRY["kernel"])


def test_numeric_check_rejects_a_wrong_squared_distance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(posenc, "squared_distance", lambda offset, width: width - posenc.kernel(offset, width))
    assert verify.run(REGISTRY["distance"]) is not None


def test_assert_close_rejects_a_wrong_value() -> None:
    with pytest.raises(ProofFailure):
        assert_close(posenc.kernel(0, 8), 8.0, "K(0) is d/2, not d")


def test_time_budget_stops_a_slow_proof() -> None:
    entry = make_entry("sleepy", prove=lambda: time.sleep(2.0), budget_seconds=0.2)
    start = time.perf_counter()
    message = verify.run(entry)
    assert time.perf_counter() - start < 1.5
    assert message is not None and "time budget" in message
    assert "sleepy" not in REGISTRY


def test_entry_without_numeric_check_fails() -> None:
    entry = make_entry("unchecked", prove=lambda: None, check=None)
    assert verify.run(entry) == "has no numeric check"


def test_main_exits_1_naming_the_failing_id(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def bad_proof() -> None:
        assert_equal(sp.Symbol("x"), sp.Symbol("x") + 1, "x = x + 1")

    monkeypatch.setattr(verify, "REGISTRY", {"bad-entry": make_entry("bad-entry", prove=bad_proof)})
    assert verify.main([]) == 1
    captured = capsys.readouterr()
    assert "bad-entry" in captured.err
    assert "FAILED" in captured.out and "bad-entry" in captured.out


def test_main_proves_selected_ids(capsys: pytest.CaptureFixture[str]) -> None:
    assert verify.main(["kernel", "alibi-slopes"]) == 0
    output = capsys.readouterr().out
    assert "kernel" in output and "alibi-slopes" in output and "all 2 derivations proved" in output


def test_main_rejects_an_unknown_id(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        verify.main(["no-such-id"])
    assert exit_info.value.code == 2
    assert "no-such-id" in capsys.readouterr().err
