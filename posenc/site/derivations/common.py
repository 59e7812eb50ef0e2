"""What the proofs of every topic share: the symbols, the sinusoid's pairs and blocks, and the
induction over the number of pairs that takes a lemma about one pair to every even width."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import sympy as sp


from ..registry import ProofFailure, assert_equal

# Symbols shared by many entries, declared with the assumptions the statements make.
t, s, k, theta, delta = sp.symbols("t s k theta delta", real=True)
base = sp.Symbol("b", positive=True)
d = sp.Symbol("d", positive=True, integer=True, even=True)
r = sp.Symbol("r", nonnegative=True, integer=True)


def omega(pair: int | sp.Expr, width: int | sp.Expr) -> sp.Expr:
    """Frequency of pair ``pair`` at width ``width``: ``base ** (-2 pair / width)``."""
    return base ** (-2 * pair / width)


def random_width(rng: np.random.Generator) -> int:
    """A random even width between 2 and 64 for numeric checks."""
    return int(2 * rng.integers(1, 33))


def angle_sum(expression: sp.Expr | sp.MatrixBase) -> sp.Expr | sp.MatrixBase:
    """Expand products inside trig arguments, then apply the angle-addition formulas."""
    if isinstance(expression, sp.MatrixBase):
        return expression.applyfunc(lambda entry: sp.expand_trig(sp.expand(entry)))
    return sp.expand_trig(sp.expand(expression))


def pair(phase: sp.Expr) -> sp.Matrix:
    """The column (sin phase, cos phase) that one frequency pair holds."""
    return sp.Matrix([sp.sin(phase), sp.cos(phase)])


def shift_block(angle: sp.Expr) -> sp.Matrix:
    """The shift matrix S = [[cos a, sin a], [-sin a, cos a]] that advances a (sin, cos) pair by a."""
    return sp.Matrix([[sp.cos(angle), sp.sin(angle)], [-sp.sin(angle), sp.cos(angle)]])


def rotation(angle: sp.Expr) -> sp.Matrix:
    """RoPE's counter-clockwise rotation [[cos a, -sin a], [sin a, cos a]]."""
    return sp.Matrix([[sp.cos(angle), -sp.sin(angle)], [sp.sin(angle), sp.cos(angle)]])


def position_vector(position: sp.Expr, width: int) -> sp.Matrix:
    """The interleaved sinusoidal vector P(position) at a concrete width, with symbolic base."""
    entries: list[sp.Expr] = []
    for q in range(width // 2):
        entries.extend(pair(position * omega(q, width)))
    return sp.Matrix(entries)


def shift_operator(offset: sp.Expr, width: int) -> sp.Matrix:
    """T_offset = diag(S_{omega_0}(offset), ...) at a concrete width, with symbolic base."""
    return sp.diag(*[shift_block(offset * omega(q, width)) for q in range(width // 2)])


def random_vectors(rng: np.random.Generator, count: int, width: int) -> np.ndarray:
    """``count`` standard normal vectors of length ``width``, one per row."""
    return rng.standard_normal((count, width))


def softmax(scores: np.ndarray) -> np.ndarray:
    """Softmax over the last axis; entries equal to -inf get probability zero."""
    shifted = scores - np.max(scores, axis=-1, keepdims=True)
    weights = np.exp(shifted)
    probabilities: np.ndarray = weights / np.sum(weights, axis=-1, keepdims=True)
    return probabilities


# Induction over the number of pairs. A width-d vector is the stack of its d/2 pairs and a
# block-diagonal operator has one 2x2 block per pair. The rules proved in `stacking_rules` take a
# statement about the first n pairs (n symbolic) to the first n + 1 pairs, so a lemma proved for
# one pair with a symbolic pair index r (hence any frequency b^(-2r/d)) holds at every even width.
stacked_pairs = sp.Symbol("n", positive=True, integer=True)


def stacked(top: sp.MatrixBase, bottom: sp.MatrixBase) -> sp.BlockMatrix:
    """The column that holds ``top`` (the first pairs) above ``bottom`` (the next pair)."""
    return sp.BlockMatrix([[top], [bottom]])


@functools.cache
def stacking_rules() -> None:
    """Prove the step from n pairs to n + 1 pairs for a symbolic n (once per process).

    With U, V, A, B the parts on the first n pairs and x, y, P, Q those of pair n:
    dot products add, [U; x].[V; y] = U.V + x.y; a block-diagonal matrix acts pair by pair,
    diag(A, P) [V; x] = [A V; P x]; and block-diagonal matrices multiply block by block,
    diag(A, P)^T diag(B, Q) = diag(A^T B, P^T Q). A sum over n pairs plus the term of pair n is
    the sum over n + 1 pairs.
    """
    size = 2 * stacked_pairs
    first_u, first_v = sp.MatrixSymbol("U", size, 1), sp.MatrixSymbol("V", size, 1)
    first_a, first_b = sp.MatrixSymbol("A", size, size), sp.MatrixSymbol("B", size, size)
    next_x, next_y = sp.MatrixSymbol("x", 2, 1), sp.MatrixSymbol("y", 2, 1)
    next_p, next_q = sp.MatrixSymbol("P", 2, 2), sp.MatrixSymbol("Q", 2, 2)
    dot = sp.block_collapse(stacked(first_u, next_x).T * stacked(first_v, next_y))
    if dot != first_u.T * first_v + next_x.T * next_y:
        raise ProofFailure(f"the dot product of stacked vectors is {dot}, not the sum over the parts")
    action = sp.block_collapse(sp.BlockDiagMatrix(first_a, next_p) * stacked(first_v, next_x))
    if action.blocks[0, 0] != first_a * first_v or action.blocks[1, 0] != next_p * next_x:
        raise ProofFailure(f"a block-diagonal matrix does not act pair by pair: {action}")
    product = sp.block_collapse(sp.BlockDiagMatrix(first_a, next_p).T * sp.BlockDiagMatrix(first_b, next_q))
    if (product.blocks[0, 0], product.blocks[1, 1]) != (first_a.T * first_b, next_p.T * next_q) or any(
        product.blocks[i, j] != sp.ZeroMatrix(*product.blocks[i, j].shape) for i, j in ((0, 1), (1, 0))
    ):
        raise ProofFailure(f"block-diagonal matrices do not multiply block by block: {product}")
    term = sp.Function("g")
    extended = sp.Sum(term(r), (r, 0, stacked_pairs - 1)) + sp.Sum(term(r), (r, stacked_pairs, stacked_pairs))
    if sp.simplify(extended - sp.Sum(term(r), (r, 0, stacked_pairs))) != 0 or sp.Sum(
        term(r), (r, stacked_pairs, stacked_pairs)
    ).doit() != term(stacked_pairs):
        raise ProofFailure("adding the term of pair n to a sum over n pairs is not the sum over n + 1 pairs")


def for_pair_r(expression: sp.Expr | sp.MatrixBase, what: str) -> sp.Expr | sp.MatrixBase:
    """``expression`` with pair r's frequency b^(-2r/d) written as one positive symbol.

    Pair r enters only through its frequency, so a lemma proved for an arbitrary positive
    frequency holds for every pair index r, base b and width d; SymPy simplifies the short
    form much faster than nested powers.
    """
    general = expression.subs(omega(r, d), pair_frequency)
    if general.has(r) or general.has(d):
        raise ProofFailure(f"{what}: pair r enters other than through its frequency: {general}")
    return general


pair_frequency = sp.Symbol("omega_r", positive=True)


def sum_over_pairs(summand: sp.Expr, value: sp.Expr, what: str) -> sp.Expr:
    """Prove ``summand = value`` for the symbolic pair index r; return the sum of ``value`` over the d/2 pairs.

    ``summand`` is pair r's part of a dot product, which `stacking_rules` sums over pairs at
    every width. A constant ``value`` is summed (d/2 copies); otherwise the Sum is returned.
    """
    stacking_rules()
    assert_equal(angle_sum(for_pair_r(summand - value, what)), 0, f"{what}, for a symbolic pair index r")
    total = sp.Sum(value, (r, 0, d / 2 - 1))
    return total if value.has(r) else total.doit()


def linear_parts(total: sp.Expr) -> sp.Expr:
    """A sum over pairs split by linearity, constant factors taken out and constant terms summed."""
    return sp.factor_terms(sp.expand(total)).doit()


def blocks_act_pairwise(
    block: Callable[[sp.Expr], sp.Matrix],
    vector: Callable[[sp.Expr], sp.Matrix],
    image: Callable[[sp.Expr], sp.Matrix],
    what: str,
) -> None:
    """diag(block(0), ..., block(d/2 - 1)) stacked(vector(r)) = stacked(image(r)) at every even width.

    Base: one pair, the lemma below at r = 0. Step: if the first n blocks map the first n pairs
    to their images (the hypothesis, A V = W), `stacking_rules` shows that adding pair n keeps
    the identity, using the lemma at r = n.
    """
    stacking_rules()
    lemma = for_pair_r(block(r) * vector(r) - image(r), what)
    assert_equal(angle_sum(lemma), sp.zeros(2, 1), f"{what}, for a symbolic pair index r")
    size = 2 * stacked_pairs
    first_a = sp.MatrixSymbol("A", size, size)
    first_v, first_w = sp.MatrixSymbol("V", size, 1), sp.MatrixSymbol("W", size, 1)
    step = sp.block_collapse(
        sp.BlockDiagMatrix(first_a, block(stacked_pairs)) * stacked(first_v, vector(stacked_pairs))
    )
    if step.blocks[0, 0].xreplace({first_a * first_v: first_w}) != first_w:
        raise ProofFailure(f"{what}: the first n pairs do not keep their images in the step {step}")
    if sp.Matrix(step.blocks[1, 0]) != block(stacked_pairs) * vector(stacked_pairs):
        raise ProofFailure(f"{what}: pair n is not mapped by its own block in the step {step}")  # the lemma at r = n


def blocks_multiply_pairwise(
    first: Callable[[sp.Expr], sp.Matrix],
    second: Callable[[sp.Expr], sp.Matrix],
    product: Callable[[sp.Expr], sp.Matrix],
    what: str,
) -> None:
    """diag(first(r))^T diag(second(r)) = diag(product(r)) at every even width.

    Base: one pair, the lemma below at r = 0. Step: if the first n blocks satisfy it (the
    hypothesis A^T B = C), `stacking_rules` shows that adding pair n keeps it, using the lemma
    at r = n.
    """
    stacking_rules()
    lemma = for_pair_r(first(r).T * second(r) - product(r), what)
    assert_equal(angle_sum(lemma), sp.zeros(2, 2), f"{what}, for a symbolic pair index r")
    size = 2 * stacked_pairs
    first_a, first_b, first_c = (sp.MatrixSymbol(name, size, size) for name in ("A", "B", "C"))
    step = sp.block_collapse(
        sp.BlockDiagMatrix(first_a, first(stacked_pairs)).T * sp.BlockDiagMatrix(first_b, second(stacked_pairs))
    )
    if step.blocks[0, 0].xreplace({first_a.T * first_b: first_c}) != first_c:
        raise ProofFailure(f"{what}: the first n blocks do not keep their product in the step {step}")
    if sp.Matrix(step.blocks[1, 1]) != first(stacked_pairs).T * second(stacked_pairs):
        raise ProofFailure(f"{what}: pair n's blocks do not meet in the step {step}")  # the lemma at r = n


def kernel_sum(offset: sp.Expr) -> sp.Sum:
    """K(offset) = sum over the d/2 pairs of cos(omega_r offset), at a symbolic width d."""
    return sp.Sum(sp.cos(omega(r, d) * offset), (r, 0, d / 2 - 1))
