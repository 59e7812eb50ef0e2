"""The derivation registry: every required ID is present, proved and cross-checked, and the checker can fail."""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import json
import pathlib
import sys
import textwrap
import time

import numpy as np
import pytest
import sympy as sp
from site_build import derivation_pages  # the site's build, in hooks/ (tests/conftest.py)
from support.derivations import REQUIRED_IDS

import posenc
import posenc.site.verify as verify
from posenc.site import derivations
from posenc.site.derivations import common, long_context, rope
from posenc.site.registry import (
    GENERAL,
    ID_PATTERN,
    REGISTRY,
    Derivation,
    ProofFailure,
    assert_close,
    assert_equal,
    derivation,
)


def make_entry(id: str, prove, check=lambda rng: None, budget_seconds: float = 5.0) -> Derivation:
    """A derivation built directly, never added to REGISTRY."""
    return Derivation(
        id=id,
        title="A test entry",
        statement=r"1 = 1",
        summary="Only used by the tests.",
        assumptions=(),
        steps=("Nothing to show.",),
        scope=GENERAL,
        prove=prove,
        check=check,
        budget_seconds=budget_seconds,
    )


@pytest.mark.parametrize("derivation_id", REQUIRED_IDS)
def test_required_id_is_registered_checked_and_proved(derivation_id: str) -> None:
    """Proved and numerically checked within its budget by verify.run, in this test run: nothing
    built is read, so the proofs are held to the code as it is (see `proved`)."""
    assert derivation_id in REGISTRY
    entry = REGISTRY[derivation_id]
    assert entry.check is not None, f"{derivation_id} has no numeric check"
    failure, _ = proved(derivation_id)
    assert failure is None, f"{derivation_id}: {failure}"


@pytest.mark.parametrize("derivation_id", REQUIRED_IDS)
def test_entry_has_reader_facing_parts(derivation_id: str) -> None:
    entry = REGISTRY[derivation_id]
    assert entry.title and not entry.title.endswith(".")
    assert entry.statement.strip() and r"\begin{align}" not in entry.statement
    assert entry.summary.endswith(".")
    assert 2 <= len(entry.steps) <= 5


def test_ids_are_kebab_case_unique_and_registered() -> None:
    # Whether they are registered, not in which order: a new proof goes beside its topic's.
    assert len(set(REQUIRED_IDS)) == len(REQUIRED_IDS)
    assert all(ID_PATTERN.match(derivation_id) for derivation_id in REGISTRY)
    assert set(REQUIRED_IDS) <= set(REGISTRY)


def test_every_entry_knows_its_topic_and_the_order_is_by_topic_then_module() -> None:
    topics = list(derivations.TOPICS)
    assert {entry.topic for entry in REGISTRY.values()} <= set(topics)
    for entry in REGISTRY.values():
        assert entry.prove.__module__ == f"posenc.site.derivations.{entry.topic}", entry.id
    order = derivations.ordered()
    assert sorted(entry.id for entry in order) == sorted(REGISTRY)
    assert [topics.index(entry.topic) for entry in order] == sorted(topics.index(entry.topic) for entry in order)
    for topic in topics:  # within a topic, the order the module declares them in
        lines = [entry.source_line for entry in order if entry.topic == topic]
        assert lines == sorted(lines), topic


def test_wrong_distance_is_rejected() -> None:
    # One pair: with two, the time SymPy takes to simplify the wrong residual (still not zero)
    # swings with Python's hash seed from a fraction of a second to a minute.
    width = 2
    t, s = common.t, common.s
    difference = common.position_vector(t, width) - common.position_vector(s, width)
    kernel = sum(sp.cos(common.omega(q, width) * (t - s)) for q in range(width // 2))
    squared = common.angle_sum(difference.dot(difference))
    assert_equal(squared, common.angle_sum(width - 2 * kernel), "the right distance")
    with pytest.raises(ProofFailure):
        assert_equal(squared, common.angle_sum(width - kernel), "d - K(t - s)")


def test_shift_matrix_with_wrong_sign_is_rejected() -> None:
    theta, delta = common.theta, common.delta
    wrong = sp.Matrix([[sp.cos(delta), -sp.sin(delta)], [sp.sin(delta), sp.cos(delta)]])
    with pytest.raises(ProofFailure):
        rotated = common.angle_sum(wrong * common.pair(theta))
        assert_equal(rotated, common.pair(theta + delta), "wrong sign")


def test_alibi_ratio_with_wrong_exponent_is_rejected() -> None:
    heads, head = sp.Symbol("n", positive=True, integer=True), sp.Symbol("h", positive=True, integer=True)
    ratio = sp.powsimp(2 ** (-8 * (head + 1) / heads) / 2 ** (-8 * head / heads), force=True)
    with pytest.raises(ProofFailure):
        assert_equal(ratio, sp.Integer(2) ** (-4 / heads), "ratio 2^(-4/n)")


def test_critical_dimension_with_d_in_place_of_half_d_is_rejected() -> None:
    length, d, b = long_context.training_length, common.d, common.base
    with pytest.raises(ProofFailure):
        assert_equal(
            long_context.wavelength_minus_exponential(d * sp.log(length / (2 * sp.pi)) / sp.log(b)),
            0,
            "r_c with d for d/2",
        )


def test_xpos_check_rejects_keys_scaled_like_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    real = posenc.apply_xpos
    monkeypatch.setattr(posenc, "apply_xpos", lambda x, ids, *, keys=False, **options: real(x, ids, **options))
    with pytest.raises(ProofFailure):
        REGISTRY["xpos-relative"].check(np.random.default_rng(3))


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


def test_main_exits_1_naming_the_failing_id(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
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


def test_the_report_holds_what_the_site_shows_of_every_derivation_in_the_index_order(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def later_proof() -> None:
        assert_equal(sp.Symbol("x"), sp.Symbol("x"), "x = x")

    def earlier_proof() -> None:
        assert_equal(sp.Symbol("y"), sp.Symbol("y"), "y = y")

    # Registered in the opposite of the index's order: alibi comes after sinusoidal in TOPICS.
    later = dataclasses.replace(make_entry("later-entry", prove=later_proof), topic="alibi")
    earlier = dataclasses.replace(make_entry("earlier-entry", prove=earlier_proof), topic="sinusoidal")
    monkeypatch.setattr(verify, "REGISTRY", {"later-entry": later, "earlier-entry": earlier})
    report_path = tmp_path / "verify.json"
    assert verify.main(["--report", str(report_path)]) == 0
    report = json.loads(report_path.read_text())
    assert list(report) == ["earlier-entry", "later-entry"]
    shown = report["later-entry"]
    assert shown["status"] == "proved" and shown["topic_title"] == derivations.TOPICS["alibi"]
    assert (
        shown["title"] == later.title and shown["statement"] == later.statement and shown["steps"] == list(later.steps)
    )
    assert shown["scope"] == later.scope and shown["checked"] is True
    assert inspect.getsource(later_proof) in shown["code"] and "earlier_proof" not in shown["code"]
    assert shown["source_file"] == "tests/library/test_derivations.py"  # as the repository names the file


def test_a_report_of_some_ids_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        verify.main(["kernel", "--report", str(tmp_path / "verify.json")])
    assert exit_info.value.code == 2
    assert "--report lists every derivation, so it takes no IDs" in capsys.readouterr().err
    assert not (tmp_path / "verify.json").exists()


def test_main_rejects_an_unknown_id(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        verify.main(["no-such-id"])
    assert exit_info.value.code == 2
    assert "no-such-id" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------
# Scope: "general" must be earned. A general proof keeps every size symbolic, so it never
# enumerates pairs or components of a concrete vector. The detector below looks for that in
# two ways: in the proof's source (range(), numbered symbol families such as "q_0:4", loops
# over literal sizes, the concrete-width builders position_vector and shift_operator, explicit
# matrices larger than one 2x2 pair) and while the proof runs (every width handed to omega, every
# explicit matrix handed to assert_equal). Like a 2x2 block, a loop over the two members of one
# pair, `for a in (0, 1)`, is the same at every width, so it is not a size.

CONCRETE_WIDTH_BUILDERS = {"position_vector", "shift_operator"}
EXPLICIT_MATRIX_MAKERS = {"zeros", "eye", "ones", "Matrix"}
PAIR_MEMBERS = [0, 1]


def _called_name(call: ast.Call) -> str:
    function = call.func
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")


def _literal_int(node: ast.AST) -> int | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, int) else None


def concrete_sizes_in_source(proof) -> list[str]:
    """What in ``proof``'s source (nested functions included) fixes a size."""
    findings = []
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(proof)))):
        if isinstance(node, ast.Call):
            name = _called_name(node)
            if name == "range":
                findings.append("enumerates with range()")
            if name in CONCRETE_WIDTH_BUILDERS:
                findings.append(f"builds a concrete width with {name}()")
            if name == "symbols" and any(
                isinstance(arg, (ast.Constant, ast.JoinedStr)) and ":" in ast.unparse(arg) for arg in node.args
            ):
                findings.append(f"declares a numbered symbol family: {ast.unparse(node)}")
            sizes = [_literal_int(arg) for arg in node.args[:2]]
            if name in EXPLICIT_MATRIX_MAKERS and any(size is not None and size > 2 for size in sizes):
                findings.append(f"builds an explicit matrix larger than one pair: {ast.unparse(node)}")
        if isinstance(node, ast.For) and isinstance(node.iter, (ast.Tuple, ast.List)):
            literals = [_literal_int(element) for element in node.iter.elts]
            if any(value is not None for value in literals) and literals != PAIR_MEMBERS:
                findings.append(f"loops over literal sizes: for {ast.unparse(node.target)} in {ast.unparse(node.iter)}")
        if isinstance(node, ast.Assign) and _literal_int(node.value) is not None and node.value.value > 2:
            findings.append(f"fixes a size: {ast.unparse(node)}")
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
            if any((_literal_int(element) or 0) > 2 for element in node.value.elts):
                findings.append(f"fixes a size: {ast.unparse(node)}")
    return findings


def concrete_sizes_at_run_time(proof, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Concrete widths the proof hands to omega and explicit matrices larger than 2x2 it compares."""
    findings = []
    real_omega, real_assert_equal = common.omega, common.assert_equal

    def recording_omega(pair, width):
        if not sp.sympify(width).free_symbols:
            findings.append(f"omega at the concrete width {width}")
        return real_omega(pair, width)

    def recording_assert_equal(lhs, rhs, what):
        for side in (lhs, rhs):
            if isinstance(side, sp.MatrixBase) and max(side.shape) > 2:
                findings.append(f"compares an explicit {side.shape[0]}x{side.shape[1]} matrix ({what})")
        return real_assert_equal(lhs, rhs, what)

    # Patched where the proof's module and the shared helpers look the names up.
    with monkeypatch.context() as patch:
        for module in (common, sys.modules[proof.__module__]):
            for name, recording in (("omega", recording_omega), ("assert_equal", recording_assert_equal)):
                if hasattr(module, name):
                    patch.setattr(module, name, recording)
        common.stacking_rules.cache_clear()
        proof()
    return findings


def concrete_sizes(proof, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return concrete_sizes_in_source(proof) + concrete_sizes_at_run_time(proof, monkeypatch)


@functools.cache
def proved(derivation_id: str) -> tuple[str | None, tuple[str, ...]]:
    """verify.run of the derivation (its proof, its numeric checks, its time budget) with the proof
    watched by concrete_sizes_at_run_time: the failure message or None, and the concrete sizes the
    proof used. Run once per test process, for test_required_id_is_registered_checked_and_proved
    and test_scope_is_earned both: a proof is the slowest thing either does."""
    entry = REGISTRY[derivation_id]
    findings: list[str] = []

    def watched_proof() -> None:
        findings.extend(concrete_sizes_at_run_time(entry.prove, pytest.MonkeyPatch()))

    failure = verify.run(dataclasses.replace(entry, prove=watched_proof))
    return failure, tuple(findings)


@pytest.mark.parametrize("derivation_id", list(REGISTRY))
def test_scope_is_earned(derivation_id: str) -> None:
    entry = REGISTRY[derivation_id]
    failure, at_run_time = proved(derivation_id)
    assert failure is None, f"{derivation_id}: {failure}"
    findings = concrete_sizes_in_source(entry.prove) + list(at_run_time)
    if entry.scope == GENERAL:
        assert findings == [], f"{derivation_id} claims general scope but its proof fixes sizes: {findings}"
    else:
        # A fixed scope must be the truth too: the detector sees the sizes it names.
        assert findings, f"{derivation_id} names sizes ({entry.scope}) but its proof keeps every size symbolic"


def _fixed_width_proofs():
    """Proofs in the shapes that fixed-width proofs took, each of which must be caught."""
    t, s, k = common.t, common.s, common.k

    def loop_over_widths():
        for width in (2, 8, 16):
            total = sum(sp.cos(t * common.omega(q, width)) ** 2 for q in range(width // 2))
            assert_equal(total, total, "at this width")

    def position_vectors_at_eight():
        difference = common.position_vector(t, 8) - common.position_vector(s, 8)
        assert_equal(difference.dot(difference), difference.dot(difference), "at d = 8")

    def shift_operator_at_four():
        common.shift_operator(k, 4)

    def numbered_components():
        query = sp.Matrix(sp.symbols("q_0:4", real=True))
        assert_equal(query, query, "four components")

    def width_through_a_variable():
        width = 6
        common.omega(1, width)

    return [
        loop_over_widths,
        position_vectors_at_eight,
        shift_operator_at_four,
        numbered_components,
        width_through_a_variable,
    ]


@pytest.mark.parametrize("proof", _fixed_width_proofs(), ids=lambda proof: proof.__name__)
def test_scope_detector_catches_fixed_width_proofs(proof, monkeypatch: pytest.MonkeyPatch) -> None:
    assert concrete_sizes(proof, monkeypatch), f"{proof.__name__} fixes a size but was not caught"


def test_scope_detector_accepts_a_loop_over_the_members_of_a_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    d, r, omega = common.d, common.r, common.omega

    def members_of_pair_r():
        block = common.rotation(common.k * omega(r, d))
        for a in (0, 1):
            assert_equal(block[a, a], sp.cos(common.k * omega(r, d)), "the diagonal of a rotation")

    def members_and_a_size():
        for a in (0, 1, 2):
            common.omega(a, d)

    def one_pair():
        for pairs in (1,):
            common.omega(0, 2 * pairs)

    assert concrete_sizes(members_of_pair_r, monkeypatch) == []
    assert concrete_sizes_in_source(members_and_a_size) and concrete_sizes_in_source(one_pair)


def test_scope_must_be_general_or_name_the_sizes() -> None:
    def register(scope: str) -> None:
        derivation(
            "scope-probe", title="t", statement="1 = 1", summary="s.", assumptions=(), steps=("x",), scope=scope
        )(lambda: None)

    for bad in ("", "generally", "checked at some widths", "checked at d = eight"):
        with pytest.raises(ValueError, match="scope"):
            register(bad)
    assert "scope-probe" not in REGISTRY
    with pytest.raises(TypeError):
        derivation("scope-probe", title="t", statement="1 = 1", summary="s.", assumptions=(), steps=("x",))
    fixed = dataclasses.replace(make_entry("fixed-scope", prove=lambda: None), scope="checked at d = 8")
    assert fixed.scope_label == "checked at d = 8 only"
    assert REGISTRY["kernel"].scope_label == "in general"
    assert REGISTRY["rope-layout-permutation"].scope_label == "in general"


def test_pairwise_induction_rejects_a_wrong_block() -> None:
    t, k, d, omega = common.t, common.k, common.d, common.omega
    with pytest.raises(ProofFailure):
        common.blocks_act_pairwise(
            lambda q: common.rotation(k * omega(q, d)),  # RoPE's rotation shifts the pair backwards
            lambda q: common.pair(t * omega(q, d)),
            lambda q: common.pair((t + k) * omega(q, d)),
            "wrong block",
        )
    with pytest.raises(ProofFailure):
        pair_term = common.pair(t * omega(common.r, d)).dot(common.pair(t * omega(common.r, d)))
        common.sum_over_pairs(pair_term, sp.Integer(2), "a pair of norm 2")


def test_channel_maps_that_are_not_bijections_are_rejected() -> None:
    d = common.d
    rope.fills_channels_once(rope.halves_channel)
    rope.fills_channels_once(rope.interleaved_channel)
    with pytest.raises(ProofFailure, match="not always in channels"):
        rope.fills_channels_once(lambda q, a: 2 * q + a + 1)  # the last pair's member 1 lands in channel d
    with pytest.raises(ProofFailure, match="share a channel"):
        rope.fills_channels_once(lambda q, a: q + a * (d / 2 - 1))  # pair d/2 - 1 meets pair 0's member 1
    with pytest.raises(ProofFailure, match="share a channel"):
        rope.fills_channels_once(lambda q, a: a)  # every pair in the same two channels


# ---------------------------------------------------------------------------------------
# Every scope reaches the reader: beside each displayed equation and on the Derivations page.


@pytest.fixture(scope="module")
def registry_report_file(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A derivation report of every registered entry, as `make verify` writes one, written once
    for the module (what the site shows of a derivation, not whether it is proved: the tests
    above prove them)."""
    report = tmp_path_factory.mktemp("verify") / "verify.json"
    report.write_text(
        json.dumps({i: {"status": "proved", "seconds": 0.1} | verify.shown(e) for i, e in REGISTRY.items()})
    )
    return report


@pytest.fixture
def registry_report(registry_report_file: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """The site's build reading registry_report_file: the library's tests read nothing a build wrote."""
    monkeypatch.setattr(derivation_pages.paths, "VERIFY_REPORT", registry_report_file)
    return registry_report_file


@pytest.mark.parametrize("derivation_id", list(REGISTRY))
def test_every_scope_is_shown_beside_its_equation(derivation_id: str, registry_report: pathlib.Path) -> None:
    shown = derivation_pages.eq(derivation_id, "guide.md")
    label = REGISTRY[derivation_id].scope_label
    assert f'<span class="posenc-scope">{label}</span>' in shown.split("Proved as", 1)[1]


def test_every_scope_is_shown_in_the_index_and_on_the_derivations_page(registry_report: pathlib.Path) -> None:
    index = derivation_pages.index_markdown("derivations/index.md")
    for entry in REGISTRY.values():
        row = next(line for line in index.splitlines() if line.startswith(f"- [`{entry.id}`]"))
        assert row.endswith(f"{entry.scope_label}.*"), row
        page = derivation_pages.derivation_page(entry.id, "https://example.org/")
        assert "**Scope:** " in page and entry.scope_label in page.split("**Scope:** ", 1)[1].split("\n", 1)[0]
