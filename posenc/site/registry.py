"""The derivation registry: stable IDs, displayed statements, SymPy proofs, numeric checks.

Every identity the site displays is one :class:`Derivation`. Its ``statement`` is the LaTeX
that the pages show (the site reads it from here, so the text and the proof cannot drift
apart), ``prove`` checks the statement symbolically with SymPy, and ``check`` evaluates the
same statement with the NumPy functions of :mod:`posenc` at random points.

IDs are part of the site's public URLs (``/derivations/<id>/``): never rename or reuse one.
Entries are declared in :mod:`posenc.site.derivations`, one module per topic; run them with
``python -m posenc.site.verify``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from dataclasses import dataclass, field

import numpy as np

ID_PATTERN = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
# A derivation's scope: GENERAL when the proof holds for every size its statement allows (every
# even width d, every head count, ...), otherwise the exact sizes the proof substituted.
GENERAL = "general"
FIXED_SCOPE_PATTERN = re.compile(r"^checked at [^\s=]+ = \d+(?:, \d+)*(?:(?:,| and) [^\s=]+ = \d+(?:, \d+)*)*$")


class ProofFailure(AssertionError):
    """A derivation's symbolic proof or numeric check does not hold."""


@dataclass(frozen=True)
class Stated:
    """What readers read of a derivation: its ID, title, displayed statement, summary, assumptions,
    proof steps and scope. The site's build reads these from the verify report without the proofs
    (``posenc.site.verify.shown``)."""

    id: str
    title: str
    statement: str
    summary: str
    assumptions: tuple[str, ...]
    steps: tuple[str, ...]
    scope: str

    @property
    def scope_label(self) -> str:
        """The scope as readers see it: "in general", or the sizes followed by "only"."""
        return "in general" if self.scope == GENERAL else f"{self.scope} only"


@dataclass(frozen=True)
class Derivation(Stated):
    """One citable identity. See the module docstring for the meaning of each part."""

    prove: Callable[[], None]
    check: Callable[[np.random.Generator], None] | None = None
    # Proofs take well under a second; the budget catches a runaway simplify, with room for
    # a loaded shared machine.
    budget_seconds: float = 10.0
    source_line: int = field(default=0, compare=False)
    # The module the proof is in (posenc/site/derivations/<topic>.py): the Derivations index
    # groups its entries under this, so a new proof goes beside those of its topic.
    topic: str = field(default="", compare=False)


REGISTRY: dict[str, Derivation] = {}


def derivation(
    id: str,
    *,
    title: str,
    statement: str,
    summary: str,
    assumptions: tuple[str, ...] | list[str],
    steps: tuple[str, ...] | list[str],
    scope: str,
    budget_seconds: float = 10.0,
) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Register the decorated function as the SymPy proof of derivation ``id``.

    ``scope`` is :data:`GENERAL` when the proof keeps every size symbolic, otherwise the sizes
    it was checked at, such as ``"checked at d = 2, 8, 16"``.
    """
    if not ID_PATTERN.match(id):
        raise ValueError(f"derivation id must be kebab-case (a-z, 0-9, single hyphens), got {id!r}")
    if id in REGISTRY:
        raise ValueError(f"derivation id {id!r} is registered twice")
    if not steps:
        raise ValueError(f"derivation {id!r} needs at least one proof step for the reader")
    if scope != GENERAL and not FIXED_SCOPE_PATTERN.match(scope):
        raise ValueError(
            f"derivation {id!r}: scope must be {GENERAL!r} or name the sizes checked, as in "
            f"'checked at d = 2, 8, 16', got {scope!r}"
        )

    def register(prove: Callable[[], None]) -> Callable[[], None]:
        REGISTRY[id] = Derivation(
            id=id,
            title=title,
            statement=statement,
            summary=summary,
            assumptions=tuple(assumptions),
            steps=tuple(steps),
            scope=scope,
            prove=prove,
            budget_seconds=budget_seconds,
            source_line=prove.__code__.co_firstlineno,
            topic=prove.__module__.rsplit(".", 1)[-1],
        )
        return prove

    return register


def numeric_check(id: str) -> Callable[[Callable[[np.random.Generator], None]], Callable[[np.random.Generator], None]]:
    """Register the decorated function as the numeric cross-check of derivation ``id``."""

    def register(check: Callable[[np.random.Generator], None]) -> Callable[[np.random.Generator], None]:
        if id not in REGISTRY:
            raise ValueError(f"numeric_check for unknown derivation id {id!r} (declare the proof first)")
        if REGISTRY[id].check is not None:
            raise ValueError(f"derivation {id!r} has two numeric checks")
        current = REGISTRY[id]
        REGISTRY[id] = Derivation(**{**current.__dict__, "check": check})
        return check

    return register


def assert_zero(expression: object, what: str) -> None:
    """Fail with ``what`` unless SymPy simplifies ``expression`` to exactly zero."""
    import sympy as sp

    residual = sp.simplify(expression)
    if residual != 0:
        raise ProofFailure(f"{what}: residual {residual} is not zero")


def assert_equal(lhs: Any, rhs: Any, what: str) -> None:
    """Fail with ``what`` unless ``lhs - rhs`` simplifies to zero (matrices element-wise)."""
    import sympy as sp

    difference = sp.Matrix(lhs) - sp.Matrix(rhs) if isinstance(lhs, sp.MatrixBase) else lhs - rhs
    if isinstance(difference, sp.MatrixBase):
        for entry in difference:
            assert_zero(entry, what)
    else:
        assert_zero(difference, what)


def assert_close(actual: object, expected: object, what: str, *, atol: float = 1e-9) -> None:
    """Fail with ``what`` unless two numeric arrays agree to ``atol``."""
    actual_array, expected_array = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    if actual_array.shape != expected_array.shape or not np.allclose(actual_array, expected_array, atol=atol, rtol=0):
        raise ProofFailure(
            f"{what}: numeric values disagree (max error {np.max(np.abs(actual_array - expected_array))})"
        )
