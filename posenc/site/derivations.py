"""Every identity the site displays, proved with SymPy and cross-checked against posenc.

Each entry is a proof function decorated with :func:`posenc.site.registry.derivation` (its
stable ID, displayed statement and reader-facing steps) followed by its numeric check
decorated with :func:`posenc.site.registry.numeric_check`. IDs never change: pages and readers'
citations link to ``/derivations/<id>/``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import sympy as sp

import posenc

from .registry import GENERAL, ProofFailure, assert_close, assert_equal, derivation, numeric_check

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
    return weights / np.sum(weights, axis=-1, keepdims=True)


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


@derivation(
    "pair-norm",
    title="Every pair has unit norm, so every position vector has the same length",
    statement=(
        r"\sin^2(t\,\omega_r) + \cos^2(t\,\omega_r) = 1"
        r" \quad\Longrightarrow\quad \lVert P(t) \rVert^2 = \frac{d}{2}"
    ),
    summary=r"Each sine/cosine pair lies on the unit circle, so $\lVert P(t) \rVert^2 = d/2$ for every position $t$.",
    assumptions=("$t$ real", "$d$ a positive even integer", r"$\omega_r > 0$"),
    steps=(
        r"Pair $r$ contributes $\sin^2(t\omega_r) + \cos^2(t\omega_r)$ to $\lVert P(t)\rVert^2$.",
        r"The Pythagorean identity makes each contribution exactly 1, whatever $t$ and $\omega_r$ are.",
        r"There are $d/2$ pairs, so the squared norm is $d/2$ at every position.",
        r"SymPy proves the pair identity for a symbolic pair index $r$, width $d$ and base $b$, and the sum over a "
        r"symbolic number of pairs by induction on the number of pairs.",
    ),
    scope=GENERAL,
)
def prove_pair_norm() -> None:
    one_pair = pair(t * omega(r, d))
    squared_norm = sum_over_pairs(one_pair.dot(one_pair), sp.Integer(1), "pair r has unit norm")
    assert_equal(squared_norm, d / 2, "|P(t)|^2 = d/2")


@numeric_check("pair-norm")
def check_pair_norm(rng: np.random.Generator) -> None:
    width = random_width(rng)
    ids = rng.integers(0, 10**6, size=16)
    norms = np.sum(posenc.sinusoidal(ids, width) ** 2, axis=1)
    assert_close(norms, np.full(ids.size, width / 2), "|P(t)|^2 = d/2")


@derivation(
    "wavelength",
    title="Wavelengths form a geometric sequence from 2π upwards",
    statement=(
        r"\lambda_r = \frac{2\pi}{\omega_r} = 2\pi\, b^{2r/d}, \qquad \frac{\lambda_{r+1}}{\lambda_r} = b^{2/d} > 1,"
        r" \qquad \lambda_0 = 2\pi, \quad \lambda_{d/2-1} = 2\pi\, b^{(d-2)/d}"
    ),
    summary=r"Pair $r$ repeats every $2\pi\, b^{2r/d}$ positions, each pair's wavelength is $b^{2/d}$ times the "
            r"previous one, and the range spans $2\pi$ to $2\pi\, b^{(d-2)/d}$.",
    assumptions=(
        r"$\omega_r = b^{-2r/d}$",
        r"base $b > 1$ (10000 by default)",
        "d a positive even integer",
        r"$r = 0, \ldots, d/2 - 1$",
    ),
    steps=(
        r"The pair $(\sin t\omega_r, \cos t\omega_r)$ repeats when $t\omega_r$ grows by $2\pi$, so its wavelength is "
        r"$2\pi/\omega_r = 2\pi b^{2r/d}$.",
        r"Dividing the wavelength of pair $r+1$ by that of pair $r$ cancels everything except "
        r"$b^{2(r+1)/d - 2r/d} = b^{2/d}$, which does not depend on $r$.",
        r"Writing $b = e^{\ell}$ with $\ell > 0$ turns the ratio into $e^{2\ell/d} > 1$, so the "
        r"wavelengths strictly increase with $r$.",
        r"The smallest is at $r = 0$, where $b^0 = 1$ gives $2\pi$; the largest is at $r = d/2 - 1$, "
        r"where the exponent is $(d-2)/d$.",
    ),
    scope=GENERAL,
)
def prove_wavelength() -> None:
    def wavelength(q: sp.Expr) -> sp.Expr:
        return 2 * sp.pi / omega(q, d)

    assert_equal(wavelength(r), 2 * sp.pi * base ** (2 * r / d), "lambda_r = 2 pi b^(2r/d)")
    ratio = sp.powsimp(wavelength(r + 1) / wavelength(r), force=True)
    assert_equal(ratio, base ** (2 / d), "consecutive wavelengths differ by the factor b^(2/d)")
    if ratio.has(r):
        raise ProofFailure(f"the wavelength ratio {ratio} still depends on r")
    log_base = sp.Symbol("ell", positive=True)  # b = e^ell with ell > 0 encodes b > 1
    growth = sp.expand_log(sp.log(ratio.subs(base, sp.exp(log_base))), force=True)
    if growth.is_positive is not True:
        raise ProofFailure(f"log of the wavelength ratio, {growth}, is not positive for b > 1")
    assert_equal(wavelength(0), 2 * sp.pi, "the shortest wavelength is 2 pi")
    assert_equal(wavelength(d / 2 - 1), 2 * sp.pi * base ** ((d - 2) / d), "the longest wavelength is 2 pi b^((d-2)/d)")


@numeric_check("wavelength")
def check_wavelength(rng: np.random.Generator) -> None:
    width, chosen_base = random_width(rng), float(rng.uniform(1.5, 1e5))
    lengths = posenc.wavelengths(width, base=chosen_base)
    pairs = np.arange(width // 2)
    assert_close(lengths, 2 * np.pi * chosen_base ** (2 * pairs / width), "lambda_r = 2 pi b^(2r/d)", atol=1e-6)
    assert_close(lengths[1:] / lengths[:-1], np.full(pairs.size - 1, chosen_base ** (2 / width)), "ratio b^(2/d)")
    assert_close([lengths[0], lengths[-1] / chosen_base ** ((width - 2) / width)], [2 * np.pi, 2 * np.pi], "range ends")


@derivation(
    "sine-cosine-phase",
    title="A cosine is a sine a quarter cycle ahead, and it tells apart phases a second sine cannot",
    statement=(
        r"\cos\theta = \sin\Big(\theta + \frac{\pi}{2}\Big), \qquad \sin(\pi - \theta) = \sin\theta"
        r" \quad\text{while}\quad \cos(\pi - \theta) = -\cos\theta"
    ),
    summary=r"The cosine channel equals a sine shifted by $\pi/2$, and unlike a duplicated sine it distinguishes the "
            r"phases $\theta$ and $\pi - \theta$.",
    assumptions=(r"$\theta$ real",),
    steps=(
        r"The addition formula gives "
        r"$\sin(\theta + \pi/2) = \sin\theta\cos\frac{\pi}{2} + \cos\theta\sin\frac{\pi}{2} = \cos\theta$, so a "
        r"sine/cosine pair is two sines a quarter cycle apart.",
        r"Likewise $\sin(\pi - \theta) = \sin\theta$: the phases $\theta$ and $\pi - \theta$ give the same sine, so a "
        r"second copy of that sine would give the same value too and add nothing.",
        r"The cosine flips sign between them, $\cos(\pi - \theta) = -\cos\theta$, so the pair separates the two phases "
        r"whenever $\cos\theta \neq 0$.",
    ),
    scope=GENERAL,
)
def prove_sine_cosine_phase() -> None:
    assert_equal(sp.expand_trig(sp.sin(theta + sp.pi / 2, evaluate=False)), sp.cos(theta), "cos = sin shifted by pi/2")
    assert_equal(sp.expand_trig(sp.sin(sp.pi - theta, evaluate=False)), sp.sin(theta), "sin(pi - theta) = sin(theta)")
    assert_equal(sp.expand_trig(sp.cos(sp.pi - theta, evaluate=False)), -sp.cos(theta), "cos(pi - theta) = -cos(theta)")
    assert_equal(sp.cos(sp.pi - theta) - sp.cos(theta), -2 * sp.cos(theta), "the cosines differ by -2 cos(theta)")


@numeric_check("sine-cosine-phase")
def check_sine_cosine_phase(rng: np.random.Generator) -> None:
    width = random_width(rng)
    ids = rng.integers(0, 10**4, size=16)
    vectors = posenc.sinusoidal(ids, width)
    phases = np.multiply.outer(ids, posenc.frequencies(width))
    assert_close(vectors[:, 1::2], np.sin(phases + np.pi / 2), "cos channel = sin(phase + pi/2)")
    assert_close(np.sin(np.pi - phases), vectors[:, 0::2], "sin(pi - phase) = sin(phase)")
    assert_close(np.cos(np.pi - phases), -vectors[:, 1::2], "cos(pi - phase) = -cos(phase)")


@derivation(
    "shift-matrix-from-probes",
    title="Two probe phases determine the shift matrix uniquely",
    statement=(
        r"M \begin{pmatrix}\sin\theta\\ \cos\theta\end{pmatrix}"
        r" = \begin{pmatrix}\sin(\theta + \delta)\\ \cos(\theta + \delta)\end{pmatrix}"
        r" \text{ at } \theta = 0 \text{ and } \theta = \tfrac{\pi}{2} \quad\Longleftrightarrow\quad"
        r" M = \begin{pmatrix}\cos\delta & \sin\delta\\ -\sin\delta & \cos\delta\end{pmatrix}"
    ),
    summary=r"Requiring a $2 \times 2$ matrix to advance the pair by $\delta$ at the phases $0$ and $\pi/2$ gives four "
            r"linear equations whose only solution is the shift matrix displayed.",
    assumptions=(r"$\delta$ real", r"$M$ an unknown real $2\times 2$ matrix"),
    steps=(
        r"At $\theta = 0$ the pair is $(0, 1)^\top$, so $M(0, 1)^\top$, which is the second column of $M$, must equal "
        r"$(\sin\delta, \cos\delta)^\top$.",
        r"At $\theta = \pi/2$ the pair is $(1, 0)^\top$, so the first column of $M$ must equal "
        r"$(\sin(\pi/2 + \delta), \cos(\pi/2 + \delta))^\top = (\cos\delta, -\sin\delta)^\top$.",
        r"These are four linear equations in the four entries of $M$; their coefficient matrix has determinant "
        r"$1 \neq 0$, so SymPy's `solve` returns exactly one solution.",
        r"That solution is the matrix displayed above: the probes leave no freedom.",
    ),
    scope=GENERAL,
)
def prove_shift_matrix_from_probes() -> None:
    unknowns = sp.symbols("m_11 m_12 m_21 m_22", real=True)
    matrix = sp.Matrix(2, 2, unknowns)
    equations = []
    for probe in (sp.Integer(0), sp.pi / 2):
        equations.extend(matrix * pair(probe) - pair(probe + delta))
    coefficients, _ = sp.linear_eq_to_matrix(equations, unknowns)
    if sp.simplify(coefficients.det()) == 0:
        raise ProofFailure("the probe equations are singular, so the matrix is not determined")
    solutions = sp.solve(equations, unknowns, dict=True)
    if len(solutions) != 1 or set(solutions[0]) != set(unknowns):
        raise ProofFailure(f"expected exactly one solution fixing all four entries, got {solutions}")
    assert_equal(matrix.subs(solutions[0]), shift_block(delta), "the probes force the shift matrix")


@numeric_check("shift-matrix-from-probes")
def check_shift_matrix_from_probes(rng: np.random.Generator) -> None:
    shift = float(rng.uniform(-10, 10))
    probes = np.array([[0.0, 1.0], [1.0, 0.0]])  # columns: the pair at theta = 0 and at theta = pi/2
    targets = np.array([[np.sin(shift), np.cos(shift)], [np.cos(shift), -np.sin(shift)]])
    solved = np.linalg.solve(probes.T, targets.T).T  # M @ probes = targets
    assert_close(solved, posenc.shift_operator(shift, 2), "probe solution = shift operator at omega = 1")


@derivation(
    "shift-matrix-all-phases",
    title="The shift matrix advances the pair at every phase",
    statement=(
        r"S_\omega(k) = \begin{pmatrix}\cos k\omega & \sin k\omega\\ -\sin k\omega & \cos k\omega\end{pmatrix}:"
        r" \qquad S_\omega(k) \begin{pmatrix}\sin\theta\\ \cos\theta\end{pmatrix}"
        r" = \begin{pmatrix}\sin(\theta + k\omega)\\ \cos(\theta + k\omega)\end{pmatrix} \quad\text{for every } \theta"
    ),
    summary=r"The matrix found from two probes shifts the $(\sin, \cos)$ pair by $k\omega$ whatever phase "
            r"it starts at.",
    assumptions=(r"$\theta, k$ real", r"$\omega > 0$"),
    steps=(
        r"The first row gives $\cos k\omega \sin\theta + \sin k\omega \cos\theta$, which is $\sin(\theta + k\omega)$ "
        r"by the sine addition formula.",
        r"The second row gives $-\sin k\omega \sin\theta + \cos k\omega \cos\theta$, which is $\cos(\theta + k\omega)$ "
        r"by the cosine addition formula.",
        r"Neither step used a particular $\theta$, so the two probes' matrix works for every phase, including "
        r"$\theta = t\omega$ for any position $t$.",
    ),
    scope=GENERAL,
)
def prove_shift_matrix_all_phases() -> None:
    frequency = sp.Symbol("omega", positive=True)
    shifted = shift_block(k * frequency) * pair(theta)
    residual = angle_sum(shifted - pair(theta + k * frequency))
    assert_equal(residual, sp.zeros(2, 1), "S(k) advances every phase by k omega")


@numeric_check("shift-matrix-all-phases")
def check_shift_matrix_all_phases(rng: np.random.Generator) -> None:
    width = random_width(rng)
    q = int(rng.integers(0, width // 2))
    offset, phase = rng.uniform(-50, 50, size=2)
    block = posenc.shift_operator(offset, width)[2 * q : 2 * q + 2, 2 * q : 2 * q + 2]
    step = offset * posenc.frequencies(width)[q]
    assert_close(block @ [np.sin(phase), np.cos(phase)], [np.sin(phase + step), np.cos(phase + step)], "S(k) v(theta)")


@derivation(
    "shift-composition",
    title="Shift matrices compose, invert and preserve orientation like rotations",
    statement=(
        r"\begin{gathered} S_\omega(a)\,S_\omega(b) = S_\omega(a + b), \qquad S_\omega(0) = I, \\"
        r" S_\omega(-k) = S_\omega(k)^{-1} = S_\omega(k)^\top, \qquad \det S_\omega(k) = 1 \end{gathered}"
    ),
    summary=r"Shifting by $a$ then by $b$ is shifting by $a + b$, shifting by $0$ does nothing, shifting back undoes a "
            r"shift and equals the transpose, and the determinant is $1$.",
    assumptions=(r"$a, b, k$ real", r"$\omega > 0$"),
    steps=(
        r"Multiply out $S_\omega(a)S_\omega(b)$: each entry is a sum of two products of sines and cosines that the "
        r"addition formulas collapse to $\cos((a+b)\omega)$ or $\pm\sin((a+b)\omega)$.",
        r"At $k = 0$ the cosines are 1 and the sines 0, which is the identity.",
        r"Cosine is even and sine is odd, so negating $k$ flips the off-diagonal signs, which is the transpose; by the "
        r"first two facts $S_\omega(-k)S_\omega(k) = S_\omega(0) = I$, so it is also the inverse.",
        r"The determinant is $\cos^2 k\omega + \sin^2 k\omega = 1$.",
    ),
    scope=GENERAL,
)
def prove_shift_composition() -> None:
    frequency = sp.Symbol("omega", positive=True)
    a, b = sp.symbols("a b", real=True)

    def shift(offset: sp.Expr) -> sp.Matrix:
        return shift_block(offset * frequency)

    assert_equal(angle_sum(shift(a) * shift(b) - shift(a + b)), sp.zeros(2, 2), "S(a) S(b) = S(a + b)")
    assert_equal(shift(0), sp.eye(2), "S(0) = I")
    assert_equal(shift(-k), shift(k).T, "S(-k) = S(k)^T")
    assert_equal(shift(-k), shift(k).inv(), "S(-k) = S(k)^-1")
    assert_equal(shift(k).det(), 1, "det S(k) = 1")


@numeric_check("shift-composition")
def check_shift_composition(rng: np.random.Generator) -> None:
    width = random_width(rng)
    a, b = rng.uniform(-100, 100, size=2)
    shift_a, shift_b = posenc.shift_operator(a, width), posenc.shift_operator(b, width)
    assert_close(shift_a @ shift_b, posenc.shift_operator(a + b, width), "T_a T_b = T_(a+b)")
    assert_close(posenc.shift_operator(0, width), np.eye(width), "T_0 = I")
    assert_close(posenc.shift_operator(-a, width), np.linalg.inv(shift_a), "T_(-k) = T_k^-1")
    assert_close(posenc.shift_operator(-a, width), shift_a.T, "T_(-k) = T_k^T")
    assert_close(np.linalg.det(shift_a), 1.0, "det T_k = 1")


@derivation(
    "shift-rotation-link",
    title="The sinusoidal shift matrix is the RoPE rotation by the opposite angle",
    statement=(
        r"\begin{aligned} S_\omega(k)"
        r" &= \begin{pmatrix}\cos k\omega & \sin k\omega\\ -\sin k\omega & \cos k\omega\end{pmatrix}"
        r" = R(-k\omega), \\ R(\phi) &= \begin{pmatrix}\cos\phi & -\sin\phi\\ \sin\phi & \cos\phi\end{pmatrix}, \\"
        r" T_k &= R_\Theta(-k) = R_\Theta(k)^\top \text{ when } \theta_r = \omega_r \end{aligned}"
    ),
    summary=r"The matrix that shifts a $(\sin, \cos)$ pair by $k\omega$ is RoPE's counter-clockwise rotation by "
            r"$-k\omega$, so the whole shift operator $T_k$ is RoPE's rotation at position $-k$.",
    assumptions=(
        r"$k$ real",
        r"$\omega > 0$",
        r"pairs ordered (sin, cos) for the encoding and (channel $2r$, channel $2r + 1$) for RoPE",
    ),
    steps=(
        r"Cosine is even and sine is odd, so $R(-k\omega)$ has $\cos k\omega$ on the diagonal, $+\sin k\omega$ above "
        r"it and $-\sin k\omega$ below it: entry by entry, that is $S_\omega(k)$.",
        r"Both block-diagonal operators put pair $r$'s $2 \times 2$ block on channels $2r$ and $2r + 1$, so with the "
        r"same frequencies $T_k = \operatorname{diag}(R(-k\omega_r)) = R_\Theta(-k)$.",
        r"A rotation's inverse is its transpose (`rope-norm`), so $R_\Theta(-k) = R_\Theta(k)^\top$: rotating the "
        r"shifted encoding $P(t + k)$ by RoPE at position $k$ gives back $P(t)$.",
    ),
    scope=GENERAL,
)
def prove_shift_rotation_link() -> None:
    frequency = sp.Symbol("omega", positive=True)
    assert_equal(shift_block(k * frequency), rotation(-k * frequency), "S_omega(k) = R(-k omega)")
    assert_equal(rotation(-k * frequency), rotation(k * frequency).T, "R(-k omega) = R(k omega)^T")
    blocks_act_pairwise(
        lambda q: rotation(k * omega(q, d)),
        lambda q: pair((t + k) * omega(q, d)),
        lambda q: pair(t * omega(q, d)),
        "R_Theta(k) P(t + k) = P(t)",
    )


@numeric_check("shift-rotation-link")
def check_shift_rotation_link(rng: np.random.Generator) -> None:
    width = random_width(rng)
    offset = int(rng.integers(0, 10**4))
    # Row j of rope(I, ...) is R_Theta(k) e_j, so the result is R_Theta(k)^T.
    rope_transposed = posenc.rope(np.eye(width), np.full(width, offset))
    assert_close(posenc.shift_operator(offset, width), rope_transposed, "T_k = R_Theta(k)^T = R_Theta(-k)")
    ids = rng.integers(0, 10**4, size=8)
    shifted = posenc.sinusoidal(ids + offset, width)
    unshifted = posenc.rope(shifted, np.full(ids.size, offset))
    assert_close(unshifted, posenc.sinusoidal(ids, width), "RoPE at position k undoes the shift by k", atol=1e-9)


@derivation(
    "block-shift",
    title="One block-diagonal matrix shifts the whole position vector",
    statement=(
        r"P(t + k) = T_k\,P(t),"
        r" \qquad T_k = \operatorname{diag}\big(S_{\omega_0}(k), \ldots, S_{\omega_{d/2-1}}(k)\big)"
        r" \text{ does not depend on } t"
    ),
    summary=r"Placing each pair's shift matrix on the diagonal gives a matrix $T_k$, built from $k$ and the "
            r"frequencies alone, that maps $P(t)$ to $P(t + k)$.",
    assumptions=("t, k real", "d a positive even integer", r"$\omega_r = b^{-2r/d}$ with base $b > 0$"),
    steps=(
        r"Block $r$ of $T_k$ touches only channels $2r$ and $2r + 1$, which hold $(\sin t\omega_r, \cos t\omega_r)$.",
        r"By the all-phases identity with $\theta = t\omega_r$, that block returns "
        r"$(\sin (t + k)\omega_r, \cos (t + k)\omega_r)$, the same channels of $P(t + k)$.",
        r"The entries of $T_k$ are sines and cosines of $k\omega_r$ only, so one matrix serves every "
        r"starting position $t$.",
        r"SymPy checks block $r$ for a symbolic pair index $r$, width $d$ and base $b$, then the whole matrix by "
        r"induction on the number of pairs: if the first $n$ blocks shift the first $n$ pairs, adding pair "
        r"$n$ keeps that true.",
    ),
    scope=GENERAL,
)
def prove_block_shift() -> None:
    def block(q: sp.Expr) -> sp.Matrix:
        return shift_block(k * omega(q, d))

    if t in block(r).free_symbols:
        raise ProofFailure("block r of T_k depends on t")
    blocks_act_pairwise(block, lambda q: pair(t * omega(q, d)), lambda q: pair((t + k) * omega(q, d)), "P(t + k) "
                                                                                                       "= T_k P(t)")


@numeric_check("block-shift")
def check_block_shift(rng: np.random.Generator) -> None:
    width = random_width(rng)
    ids = rng.integers(0, 10**4, size=16)
    offset = int(rng.integers(0, 10**3))
    shifted = posenc.sinusoidal(ids, width) @ posenc.shift_operator(offset, width).T
    assert_close(shifted, posenc.sinusoidal(ids + offset, width), "P(t + k) = T_k P(t)")


@derivation(
    "kernel",
    title="The dot product of two position vectors depends only on their offset",
    statement=r"P(t)\cdot P(s) = \sum_{r=0}^{d/2-1} \cos\big(\omega_r (t - s)\big) =: K(t - s)",
    summary=r"$P(t) \cdot P(s)$ is a sum of cosines of the offset $t - s$, the same wherever the pair "
            r"of positions starts.",
    assumptions=("t, s real", "d a positive even integer"),
    steps=(
        r"Pair $r$ contributes $\sin(t\omega_r)\sin(s\omega_r) + \cos(t\omega_r)\cos(s\omega_r)$ to the dot product.",
        r"By the cosine subtraction formula this is $\cos(t\omega_r - s\omega_r) = \cos(\omega_r (t - s))$.",
        r"Summing over the $d/2$ pairs gives a function $K$ of $t - s$ alone; SymPy proves the pair term for a "
        r"symbolic pair index $r$ and sums it over a symbolic number of pairs.",
    ),
    scope=GENERAL,
)
def prove_kernel() -> None:
    pair_term = pair(t * omega(r, d)).dot(pair(s * omega(r, d)))
    dot = sum_over_pairs(pair_term, sp.cos(omega(r, d) * (t - s)), "pair r contributes cos(omega_r (t - s))")
    if dot != kernel_sum(t - s):
        raise ProofFailure(f"P(t).P(s) = {dot}, not K(t - s)")
    if dot.subs(t, s + delta).has(s):
        raise ProofFailure("P(t).P(s) depends on more than t - s")


@numeric_check("kernel")
def check_kernel(rng: np.random.Generator) -> None:
    width = random_width(rng)
    ids = rng.integers(0, 10**4, size=(2, 16))
    vectors_t, vectors_s = posenc.sinusoidal(ids[0], width), posenc.sinusoidal(ids[1], width)
    assert_close(np.sum(vectors_t * vectors_s, axis=1), posenc.kernel(ids[0] - ids[1], width), "P(t).P(s) = K(t - s)")


@derivation(
    "distance",
    title="The distance between two position vectors depends only on their offset",
    statement=(
        r"\lVert P(t) - P(s) \rVert^2 = d - 2K(t - s)"
        r" = 4 \sum_{r=0}^{d/2-1} \sin^2\Big(\frac{\omega_r (t - s)}{2}\Big)"
    ),
    summary=r"Expanding the squared distance leaves the two constant norms $d/2$ and twice the kernel, which the "
            r"half-angle formula rewrites as a sum of squared sines.",
    assumptions=("t, s real", "d a positive even integer"),
    steps=(
        r"Expand $\lVert P(t) - P(s)\rVert^2 = \lVert P(t)\rVert^2 + \lVert P(s)\rVert^2 - 2P(t)\cdot P(s)$.",
        r"Both norms are $d/2$ (`pair-norm`) and the dot product is $K(t - s)$ (`kernel`), "
        r"which gives $d - 2K(t - s)$.",
        r"Per pair this is $2 - 2\cos(\omega_r(t - s))$, and the half-angle formula $1 - \cos x = 2\sin^2(x/2)$ turns "
        r"it into $4\sin^2(\omega_r(t - s)/2)$.",
        r"The last form is a sum of squares, so it is never negative and it is computed without the cancellation that "
        r"$d - 2K$ suffers at small offsets.",
    ),
    scope=GENERAL,
)
def prove_distance() -> None:
    half = sp.Symbol("h", real=True)  # the half-angle identity for any angle u = 2h
    half_angle_gap = 2 - 2 * sp.cos(2 * half) - 4 * sp.sin(half) ** 2
    doubled = sp.expand_trig(half_angle_gap)
    assert_equal(doubled.subs(sp.cos(half) ** 2, 1 - sp.sin(half) ** 2), 0, "2 - 2 cos u = 4 sin^2(u/2)")
    difference = pair(t * omega(r, d)) - pair(s * omega(r, d))
    pair_term = 2 - 2 * sp.cos(omega(r, d) * (t - s))
    squared = sum_over_pairs(difference.dot(difference), pair_term, "pair r contributes 2 - 2 cos(omega_r (t - s))")
    if sp.expand(linear_parts(squared) - (d - 2 * kernel_sum(t - s))) != 0:
        raise ProofFailure(f"|P(t) - P(s)|^2 = {linear_parts(squared)}, not d - 2K(t - s)")
    # Pair r's term minus its half-angle form is the gap proved zero above, at u = omega_r (t - s),
    # so the sum of 2 - 2 cos equals the sum of 4 sin^2 term by term.
    half_angle = 4 * sp.sin(omega(r, d) * (t - s) / 2) ** 2
    if sp.expand(pair_term - half_angle - half_angle_gap.subs(half, omega(r, d) * (t - s) / 2)) != 0:
        raise ProofFailure("pair r's term is not the half-angle identity at u = omega_r (t - s)")


@numeric_check("distance")
def check_distance(rng: np.random.Generator) -> None:
    width = random_width(rng)
    ids = rng.integers(0, 10**4, size=(2, 16))
    offsets = ids[0] - ids[1]
    direct = np.sum((posenc.sinusoidal(ids[0], width) - posenc.sinusoidal(ids[1], width)) ** 2, axis=1)
    assert_close(posenc.squared_distance(offsets, width), direct, "|P(t) - P(s)|^2")
    assert_close(posenc.squared_distance(offsets, width), width - 2 * posenc.kernel(offsets, width), "d - 2K(t - s)")


@derivation(
    "kernel-symmetry-bound",
    title="The kernel is even, peaks at offset zero and stays within ±d/2",
    statement=r"K(-\Delta) = K(\Delta), \qquad K(0) = \frac{d}{2}, \qquad \lvert K(\Delta) \rvert \le \frac{d}{2}",
    summary=r"Swapping the two positions leaves the kernel unchanged, equal positions give $d/2$, and no offset gives "
            r"more than $d/2$ in absolute value.",
    assumptions=(r"$\Delta$ real", "d a positive even integer", r"$\omega_r = b^{-2r/d}$ with base $b > 0$"),
    steps=(
        r"Cosine is even, so every term $\cos(\omega_r\Delta)$ is unchanged when $\Delta$ becomes $-\Delta$.",
        r"At $\Delta = 0$ each of the $d/2$ terms is $\cos 0 = 1$.",
        r"By the half-angle formulas $\tfrac{d}{2} - K(\Delta) = \sum_r 2\sin^2(\omega_r\Delta/2)$ and "
        r"$\tfrac{d}{2} + K(\Delta) = \sum_r 2\cos^2(\omega_r\Delta/2)$; both are sums of squares, hence "
        r"$-\tfrac{d}{2} \le K(\Delta) \le \tfrac{d}{2}$.",
    ),
    scope=GENERAL,
)
def prove_kernel_symmetry_bound() -> None:
    offset, x = sp.Symbol("Delta", real=True), sp.Symbol("x", real=True)

    def kernel(value: sp.Expr) -> sp.Expr:
        return sp.Sum(sp.cos(omega(r, d) * value), (r, 0, d / 2 - 1))

    assert_equal(kernel(-offset), kernel(offset), "K(-Delta) = K(Delta)")
    assert_equal(kernel(0).doit(), d / 2, "K(0) = d/2")
    assert_equal(1 - sp.cos(x), 2 * sp.sin(x / 2) ** 2, "1 - cos x = 2 sin^2(x/2)")
    assert_equal(1 + sp.cos(x), 2 * sp.cos(x / 2) ** 2, "1 + cos x = 2 cos^2(x/2)")
    for name, square in (("d/2 - K", sp.sin), ("d/2 + K", sp.cos)):
        gap = sp.Sum(2 * square(omega(r, d) * offset / 2) ** 2, (r, 0, d / 2 - 1))
        if gap.is_nonnegative is not True:
            raise ProofFailure(f"{name} = {gap} is not shown to be nonnegative")


@numeric_check("kernel-symmetry-bound")
def check_kernel_symmetry_bound(rng: np.random.Generator) -> None:
    width = random_width(rng)
    offsets = rng.uniform(-1e4, 1e4, size=32)
    values = posenc.kernel(offsets, width)
    assert_close(posenc.kernel(-offsets, width), values, "K(-Delta) = K(Delta)")
    assert_close(posenc.kernel(0, width), width / 2, "K(0) = d/2")
    assert_close(np.clip(values, -width / 2, width / 2), values, "|K(Delta)| <= d/2")


@derivation(
    "normalized-ids-step",
    title="Normalizing position ids by the length makes the step depend on the length",
    statement=(
        r"u_t = \frac{t}{L - 1} \;\Longrightarrow\; u_{t+1} - u_t = \frac{1}{L - 1},"
        r" \qquad \text{which is } \tfrac{1}{4} \text{ at } L = 5 \text{ and } \tfrac{1}{8} \text{ at } L = 9"
    ),
    summary=r"Squeezing the ids of a length-$L$ sequence into $[0, 1]$ makes neighbouring tokens $1/(L - 1)$ apart, so "
            r"one token step means different offsets in sequences of different lengths.",
    assumptions=("t an integer position, 0 <= t < L - 1", "L an integer length, L > 1"),
    steps=(
        r"Subtract: $\frac{t + 1}{L - 1} - \frac{t}{L - 1} = \frac{1}{L - 1}$, the same for every $t$ but "
        r"not for every $L$.",
        r"At $L = 5$ the step is $1/4$; at $L = 9$ it is $1/8$, half as large for the same one-token move.",
        r"With raw integer ids the step is 1 at every length, which is what the sinusoidal shift and "
        r"kernel identities assume.",
    ),
    scope=GENERAL,
)
def prove_normalized_ids_step() -> None:
    length = sp.Symbol("L", integer=True, positive=True)
    position = sp.Symbol("t", integer=True, nonnegative=True)
    step = sp.simplify((position + 1) / (length - 1) - position / (length - 1))
    assert_equal(step, 1 / (length - 1), "u_(t+1) - u_t = 1/(L - 1)")
    if step.has(position):
        raise ProofFailure("the normalized step depends on t")
    for size, expected in ((5, sp.Rational(1, 4)), (9, sp.Rational(1, 8))):
        if step.subs(length, size) != expected:
            raise ProofFailure(f"step at L = {size} is {step.subs(length, size)}, not {expected}")


@numeric_check("normalized-ids-step")
def check_normalized_ids_step(rng: np.random.Generator) -> None:
    length = int(rng.integers(2, 200))
    normalized = np.arange(length) / (length - 1)
    assert_close(np.diff(normalized), np.full(length - 1, 1 / (length - 1)), "u_(t+1) - u_t = 1/(L - 1)")
    assert_close([np.diff(np.arange(size) / (size - 1))[0] for size in (5, 9)], [0.25, 0.125], "1/4 and 1/8")


@derivation(
    "attention-expansion",
    title="An attention score of summed inputs splits into four terms",
    statement=(
        r"\begin{aligned} q_t^\top k_s &= (E_t + P_t)^\top A\,(E_s + P_s), \qquad A = W_Q W_K^\top \\"
        r" &= E_t^\top A E_s + E_t^\top A P_s + P_t^\top A E_s + P_t^\top A P_s \end{aligned}"
    ),
    summary=r"With inputs $x = E + P$ and queries and keys $q = W_Q^\top x$, $k = W_K^\top x$, the score expands into "
            r"content-content, content-position, position-content and position-position parts, all weighted "
            r"by the same learned $A$.",
    assumptions=(
        r"$E_t, P_t \in \mathbb{R}^d$ column vectors",
        r"$W_Q, W_K \in \mathbb{R}^{d \times d_k}$",
        r"$q_t = W_Q^\top x_t$, $k_s = W_K^\top x_s$ with $x = E + P$",
        "the usual 1/sqrt(d_k) scale is left out",
    ),
    steps=(
        r"$q_t^\top k_s = (W_Q^\top x_t)^\top (W_K^\top x_s) = x_t^\top W_Q W_K^\top x_s = x_t^\top A\,x_s$.",
        r"Substitute $x_t = E_t + P_t$ and $x_s = E_s + P_s$; the bilinear form distributes over both sums "
        r"and gives four terms.",
        r"Only the last term involves positions alone, and even it is weighted by $A$ rather than the identity, so the "
        r"`kernel` identity does not apply to it directly.",
    ),
    scope=GENERAL,
)
def prove_attention_expansion() -> None:
    width, head = sp.symbols("d d_k", positive=True, integer=True)
    e_t, p_t, e_s, p_s = (sp.MatrixSymbol(name, width, 1) for name in ("E_t", "P_t", "E_s", "P_s"))
    w_q, w_k = sp.MatrixSymbol("W_Q", width, head), sp.MatrixSymbol("W_K", width, head)
    a = w_q * w_k.T
    score = (w_q.T * (e_t + p_t)).T * (w_k.T * (e_s + p_s))
    if sp.expand(score - (e_t + p_t).T * a * (e_s + p_s)) != sp.ZeroMatrix(1, 1):
        raise ProofFailure("q_t^T k_s is not x_t^T A x_s")
    terms = e_t.T * a * e_s + e_t.T * a * p_s + p_t.T * a * e_s + p_t.T * a * p_s
    if sp.expand(score - terms) != sp.ZeroMatrix(1, 1):
        raise ProofFailure("the score does not split into the four terms")


@numeric_check("attention-expansion")
def check_attention_expansion(rng: np.random.Generator) -> None:
    width, head = random_width(rng), int(rng.integers(1, 17))
    ids = rng.integers(0, 10**4, size=2)
    positions = posenc.sinusoidal(ids, width)
    contents = random_vectors(rng, 2, width)
    w_q, w_k = rng.standard_normal((width, head)), rng.standard_normal((width, head))
    a = w_q @ w_k.T
    score = (w_q.T @ (contents[0] + positions[0])) @ (w_k.T @ (contents[1] + positions[1]))
    terms = sum(first @ a @ second for first in (contents[0], positions[0]) for second in (contents[1], positions[1]))
    assert_close(score, terms, "four-term expansion", atol=1e-8)


@derivation(
    "position-only-counterexample",
    title="A learned matrix can make the position-only score depend on absolute position",
    statement=(
        r"\begin{gathered} A = e_0 e_0^\top: \quad P(t)^\top A\,P(s) = \sin t\,\sin s, \\"
        r" 0 \text{ at } (t, s) = (0, 1),"
        r" \qquad \sin 1 \sin 2 \approx 0.7651 \text{ at } (t, s) = (1, 2) \end{gathered}"
    ),
    summary=r"If $A$ keeps only the first sine channel, two position pairs with the same offset get different scores, "
            r"so the position-position term need not be a function of $t - s$.",
    assumptions=(
        r"$d$ any positive even integer (the deep dive uses $d = 8$)",
        r"interleaved layout, so channel 0 is $\sin(t\omega_0) = \sin t$ because $\omega_0 = b^0 = 1$",
        r"$e_0$ the first standard basis vector",
    ),
    steps=(
        r"$e_0^\top P(t)$ picks channel 0, which is $\sin(t\omega_0) = \sin t$, so the score is $\sin t \sin s$.",
        r"At $(t, s) = (0, 1)$ the factor $\sin 0$ makes the score exactly 0.",
        r"At $(t, s) = (1, 2)$ the score is $\sin 1 \sin 2 = 0.76514\ldots$, which rounds to 0.7651.",
        r"Both pairs have $t - s = -1$, yet the scores differ, so this score is not any function of $t - s$.",
    ),
    scope=GENERAL,
)
def prove_position_only_counterexample() -> None:
    # P(t) stacks pair 0 above the other pairs (`stacking_rules`), so e_0^T P(t) = (1, 0) pair_0(t)
    # plus 0 times the rest; and P(t)^T e_0 e_0^T P(s) = (e_0^T P(t)) (e_0^T P(s)).
    stacking_rules()
    first_channel = sp.Matrix([[1, 0]])
    if omega(0, d) != 1:
        raise ProofFailure(f"omega_0 = {omega(0, d)}, not 1")
    score = (first_channel * pair(t * omega(0, d)))[0] * (first_channel * pair(s * omega(0, d)))[0]
    assert_equal(score, sp.sin(t) * sp.sin(s), "P(t)^T A P(s) = sin t sin s")
    first, second = score.subs({t: 0, s: 1}), score.subs({t: 1, s: 2})
    if first != 0 or second != sp.sin(1) * sp.sin(2):
        raise ProofFailure(f"scores {first} and {second} are not 0 and sin(1) sin(2)")
    if round(float(second.evalf(30)), 4) != 0.7651:
        raise ProofFailure(f"sin(1) sin(2) = {second.evalf(10)} does not round to 0.7651")


@numeric_check("position-only-counterexample")
def check_position_only_counterexample(rng: np.random.Generator) -> None:
    width = random_width(rng)
    vectors = posenc.sinusoidal([0, 1, 2], width)
    keep_first = np.zeros((width, width))
    keep_first[0, 0] = 1.0
    scores = [vectors[0] @ keep_first @ vectors[1], vectors[1] @ keep_first @ vectors[2]]
    assert_close(scores, [0.0, np.sin(1.0) * np.sin(2.0)], "0 and sin 1 sin 2")
    assert_close(scores[1], 0.7651, "about 0.7651", atol=5e-5)
    start = int(rng.integers(0, 10**4))
    shifted = posenc.sinusoidal([start, start + 1], width)
    assert_close(shifted[0] @ keep_first @ shifted[1], np.sin(start) * np.sin(start + 1.0), "sin t sin s")


@derivation(
    "projection-parameters",
    title="Concatenating instead of adding doubles the query projection",
    statement=(
        r"W_Q \in \mathbb{R}^{d \times d_k}:\ d\,d_k \text{ weights for } E_t + P_t, \qquad"
        r" W_Q' \in \mathbb{R}^{2d \times d_k}:"
        r"\ 2\,d\,d_k \text{ weights for } \begin{pmatrix} E_t \\ P_t \end{pmatrix}"
    ),
    summary=r"A sum of two width-$d$ vectors still has width $d$, so its query projection needs $d\,d_k$ weights, "
            r"while the stacked width-$2d$ vector needs $2\,d\,d_k$.",
    assumptions=(r"$d, d_k$ positive integers", r"$E_t, P_t \in \mathbb{R}^d$"),
    steps=(
        r"$E_t + P_t$ has $d$ entries, so a projection to $d_k$ outputs is a $d \times d_k$ matrix: $d\,d_k$ weights.",
        r"Stacking $E_t$ on $P_t$ gives $2d$ entries, so the matrix is $2d \times d_k$: $2\,d\,d_k$ weights, "
        r"twice as many.",
        r"This compares shapes and parameter counts only; it says nothing about which choice trains better.",
    ),
    scope=GENERAL,
)
def prove_projection_parameters() -> None:
    width, head = sp.symbols("d d_k", positive=True, integer=True)
    added = sp.MatrixSymbol("W_Q", width, head)
    stacked = sp.MatrixSymbol("W_Q'", 2 * width, head)
    summed = sp.MatrixSymbol("E", width, 1) + sp.MatrixSymbol("P", width, 1)
    stack = sp.BlockMatrix([[sp.MatrixSymbol("E", width, 1)], [sp.MatrixSymbol("P", width, 1)]])
    if summed.shape != (width, 1) or stack.shape != (2 * width, 1):
        raise ProofFailure(f"input shapes {summed.shape} and {stack.shape} are not (d, 1) and (2d, 1)")
    if (added.T * summed).shape != (head, 1) or (stacked.T * stack).shape != (head, 1):
        raise ProofFailure("the projections do not map their inputs to d_k outputs")
    assert_equal(sp.Mul(*added.shape), width * head, "d x d_k weights")
    assert_equal(sp.Mul(*stacked.shape), 2 * width * head, "2d x d_k weights")


@numeric_check("projection-parameters")
def check_projection_parameters(rng: np.random.Generator) -> None:
    width, head = random_width(rng), int(rng.integers(1, 65))
    position = posenc.sinusoidal([int(rng.integers(0, 10**4))], width)[0]
    content = rng.standard_normal(width)
    added, stacked = rng.standard_normal((width, head)), rng.standard_normal((2 * width, head))
    outputs = [(added.T @ (content + position)).size, (stacked.T @ np.concatenate([content, position])).size]
    assert_close(outputs, [head, head], "both give d_k outputs")
    assert_close([added.size, stacked.size], [width * head, 2 * width * head], "d d_k and 2 d d_k weights")


@derivation(
    "sum-not-separable",
    title="A sum does not reveal its two summands",
    statement=r"(E_t + v) + (P_t - v) = E_t + P_t \quad \text{for every } v \in \mathbb{R}^d",
    summary=r"Moving any vector $v$ from one summand to the other leaves the sum unchanged, so the sum alone cannot "
            r"determine the content and position parts.",
    assumptions=(r"$E_t, P_t, v \in \mathbb{R}^d$",),
    steps=(
        r"Regroup: $(E_t + v) + (P_t - v) = E_t + P_t + (v - v) = E_t + P_t$.",
        r"Every choice of $v$ gives a different pair of summands with the same total, so infinitely "
        r"many splits produce the same input.",
        r"Only extra knowledge, such as knowing $P_t$ exactly, lets one recover $E_t$ by subtraction.",
    ),
    scope=GENERAL,
)
def prove_sum_not_separable() -> None:
    width = sp.Symbol("d", positive=True, integer=True)
    content, position, v = (sp.MatrixSymbol(name, width, 1) for name in ("E_t", "P_t", "v"))
    total = (content + v) + (position - v)
    if total != content + position or total.has(v):
        raise ProofFailure(f"(E + v) + (P - v) = {total}, not E + P")


@numeric_check("sum-not-separable")
def check_sum_not_separable(rng: np.random.Generator) -> None:
    width = random_width(rng)
    position = posenc.sinusoidal([int(rng.integers(0, 10**4))], width)[0]
    content, v = rng.standard_normal((2, width))
    assert_close((content + v) + (position - v), content + position, "(E + v) + (P - v) = E + P", atol=1e-12)


@derivation(
    "residual-jacobian",
    title="A residual block adds the identity to its Jacobian but can still erase its input",
    statement=(
        r"\frac{\partial}{\partial x}\big(x + F(x)\big) = I + J_F(x), \qquad"
        r" F(x) = -x \;\Longrightarrow\; x + F(x) = 0"
    ),
    summary=r"The skip path contributes an identity term to the derivative, yet an update $F(x) = -x$ cancels the "
            r"input, so the original vector is not guaranteed to survive.",
    assumptions=(r"$x \in \mathbb{R}^d$", r"$F: \mathbb{R}^d \to \mathbb{R}^d$ differentiable with Jacobian $J_F$"),
    steps=(
        r"Differentiate component by component: "
        r"$\partial(x_i + F_i(x))/\partial x_j = \delta_{ij} + \partial F_i/\partial x_j$, which is $I + J_F$.",
        r"The identity part carries signal and gradient straight through the block, whatever $F$ is.",
        r"For $F(x) = -x$ the output is $x - x = 0$ and the Jacobian is $I - I = 0$: this update removes "
        r"the input entirely.",
    ),
    scope=GENERAL,
)
def prove_residual_jacobian() -> None:
    # Entry (i, j) for symbolic indices: a partial derivative in x_j holds every other
    # coordinate fixed, so F_i is a function of x_j and of "the rest", a symbol free of x_j.
    i, j = sp.symbols("i j", integer=True, nonnegative=True)
    x, rest = sp.IndexedBase("x", real=True), sp.Symbol("rest", real=True)
    update = sp.Function("F")(i, x[j], rest)
    entry = sp.diff(x[i] + update, x[j])
    if entry != sp.KroneckerDelta(i, j) + sp.Derivative(update, x[j]):
        raise ProofFailure(f"entry (i, j) of the Jacobian of x + F is {entry}, not delta_ij + dF_i/dx_j")
    width = sp.Symbol("d", positive=True, integer=True)
    vector = sp.MatrixSymbol("x", width, 1)
    cancelled = vector + (-vector)
    if cancelled != sp.ZeroMatrix(width, 1):
        raise ProofFailure(f"x + F(x) with F(x) = -x is {cancelled}, not 0")
    if sp.diff(x[i] - x[i], x[j]) != 0:
        raise ProofFailure("the Jacobian of x - x is not 0")


@numeric_check("residual-jacobian")
def check_residual_jacobian(rng: np.random.Generator) -> None:
    width = random_width(rng)
    weights = rng.standard_normal((width, width)) / np.sqrt(width)
    x = posenc.sinusoidal([int(rng.integers(0, 10**4))], width)[0]

    def block(point: np.ndarray) -> np.ndarray:
        return point + np.tanh(weights @ point)

    step = 1e-6
    columns = [(block(x + step * unit) - block(x - step * unit)) / (2 * step) for unit in np.eye(width)]
    jacobian_f = (1 - np.tanh(weights @ x) ** 2)[:, None] * weights
    assert_close(np.stack(columns, axis=1), np.eye(width) + jacobian_f, "finite differences = I + J_F", atol=1e-7)
    assert_close(x + (-x), np.zeros(width), "F(x) = -x cancels the input")


@derivation(
    "rope-relative",
    title="RoPE scores depend only on the offset between query and key",
    statement=(
        r"\begin{aligned} \big(R(m\theta)\,q\big)^\top \big(R(n\theta)\,k\big)"
        r" &= q^\top R\big((n - m)\theta\big)\,k, \\"
        r" \big(R_\Theta(m)\,q\big)^\top \big(R_\Theta(n)\,k\big) &= q^\top R_\Theta(n - m)\,k, \\"
        r" R(\phi) &= \begin{pmatrix}\cos\phi & -\sin\phi\\ \sin\phi & \cos\phi\end{pmatrix}, \\"
        r" R_\Theta(m) &= \operatorname{diag}\big(R(m\theta_0), \ldots, R(m\theta_{d/2-1})\big) \end{aligned}"
    ),
    summary=r"Rotating a query at position $m$ and a key at position $n$ leaves a score that depends on $n - m$ only, "
            r"pair by pair and so for the whole vector.",
    assumptions=(
        r"$m, n$ real positions",
        r"$\theta_r = b^{-2r/d} > 0$",
        r"$q, k \in \mathbb{R}^2$ per pair, $\mathbb{R}^d$ for the full rotation",
    ),
    steps=(
        r"$(R(m\theta)q)^\top R(n\theta)k = q^\top R(m\theta)^\top R(n\theta)\,k$.",
        r"A rotation's transpose is the rotation by the opposite angle, and rotations add their angles, so "
        r"$R(m\theta)^\top R(n\theta) = R(-m\theta)R(n\theta) = R((n - m)\theta)$.",
        r"$R_\Theta$ is block diagonal, so its score is the sum of the per-pair scores, each a function of $n - m$; "
        r"shifting both positions by the same amount changes nothing.",
        r"SymPy proves the pair identity for a symbolic pair index $r$ and carries "
        r"$R_\Theta(m)^\top R_\Theta(n) = R_\Theta(n - m)$ from $n$ pairs to $n + 1$ (block-diagonal matrices multiply "
        r"block by block), so it holds at every even width.",
    ),
    scope=GENERAL,
)
def prove_rope_relative() -> None:
    m, n = sp.Symbol("m", real=True), sp.Symbol("n", real=True)
    blocks_multiply_pairwise(
        lambda q: rotation(m * omega(q, d)),
        lambda q: rotation(n * omega(q, d)),
        lambda q: rotation((n - m) * omega(q, d)),
        "R(m theta_r)^T R(n theta_r) = R((n - m) theta_r)",
    )
    # With that matrix identity, the score is plain matrix algebra at any width.
    width = sp.Symbol("d", positive=True, integer=True)
    query, key = sp.MatrixSymbol("q", width, 1), sp.MatrixSymbol("k", width, 1)
    at_m, at_n, relative = (sp.MatrixSymbol(name, width, width) for name in ("R_m", "R_n", "R_nm"))
    score = ((at_m * query).T * (at_n * key)).subs(at_m.T * at_n, relative)
    if score != query.T * relative * key:
        raise ProofFailure(f"the score {score} is not q^T R_Theta(n - m) k")


@numeric_check("rope-relative")
def check_rope_relative(rng: np.random.Generator) -> None:
    width = random_width(rng)
    query, key = random_vectors(rng, 2, width)
    m, n, c = (int(value) for value in rng.integers(0, 10**4, size=3))

    def score(query_position: int, key_position: int) -> float:
        rotated_query = posenc.rope(query[None, :], [query_position])[0]
        rotated_key = posenc.rope(key[None, :], [key_position])[0]
        return float(rotated_query @ rotated_key)

    assert_close(score(m, n), score(m + c, n + c), "shifting both positions keeps the score", atol=1e-8)
    if n >= m:  # position ids are non-negative, so rotate whichever side has the positive offset
        relative = query @ posenc.rope(key[None, :], [n - m])[0]
    else:
        relative = posenc.rope(query[None, :], [m - n])[0] @ key
    assert_close(score(m, n), relative, "score = q^T R((n - m) theta) k", atol=1e-8)


@derivation(
    "rope-norm",
    title="RoPE leaves the lengths of queries and keys unchanged",
    statement=r"\lVert R_\Theta(m)\,q \rVert = \lVert q \rVert, \qquad \lVert R_\Theta(n)\,k \rVert = \lVert k \rVert",
    summary="Each pair is rotated, and rotations preserve length, so RoPE changes directions but not norms.",
    assumptions=(r"$m, n$ real positions", r"$q, k \in \mathbb{R}^d$", r"$R_\Theta$ as in `rope-relative`"),
    steps=(
        r"For one pair, $R(\phi)^\top R(\phi) = I$ because $\cos^2\phi + \sin^2\phi = 1$ and the cross terms cancel.",
        r"Hence $\lVert R(\phi) x\rVert^2 = x^\top R(\phi)^\top R(\phi) x = \lVert x\rVert^2$ for every pair $x$.",
        r"The squared norm of the full vector is the sum over pairs, each unchanged, so "
        r"$\lVert R_\Theta(m) q\rVert = \lVert q\rVert$; SymPy proves $R_\Theta(m)^\top R_\Theta(m) = I$ for a "
        r"symbolic pair index and by induction on the number of pairs.",
    ),
    scope=GENERAL,
)
def prove_rope_norm() -> None:
    m = sp.Symbol("m", real=True)
    blocks_multiply_pairwise(
        lambda q: rotation(m * omega(q, d)), lambda q: rotation(m * omega(q, d)), lambda q: sp.eye(2), "R^T R = I"
    )
    width = sp.Symbol("d", positive=True, integer=True)
    query, full = sp.MatrixSymbol("q", width, 1), sp.MatrixSymbol("R_m", width, width)
    squared = ((full * query).T * (full * query)).subs(full.T * full, sp.Identity(width))
    if squared != query.T * query:
        raise ProofFailure(f"|R_Theta(m) q|^2 = {squared}, not |q|^2")


@numeric_check("rope-norm")
def check_rope_norm(rng: np.random.Generator) -> None:
    width = random_width(rng)
    vectors = random_vectors(rng, 16, width)
    ids = rng.integers(0, 10**6, size=16)
    for layout in ("interleaved", "halves"):
        rotated = posenc.rope(vectors, ids, layout=layout)
        assert_close(np.linalg.norm(rotated, axis=1), np.linalg.norm(vectors, axis=1), f"norms kept ({layout})")


# The two RoPE layouts keep member a (0 or 1) of pair r (0 <= r < d/2) in different channels.
# Statements about channels keep the pair indices r and s symbolic: SymPy settles the lower
# bounds r, s >= 0 from the symbols' assumptions while it builds an expression, and
# `at_most` then settles the upper bounds.
other_pair = sp.Symbol("s", nonnegative=True, integer=True)


def halves_channel(pair_index: sp.Expr, member: int) -> sp.Expr:
    """The channel of member ``member`` of pair ``pair_index`` in RoPE's halves layout: r + a d/2."""
    return pair_index + member * d / 2


def interleaved_channel(pair_index: sp.Expr, member: int) -> sp.Expr:
    """The channel of member ``member`` of pair ``pair_index`` in RoPE's interleaved layout: 2r + a."""
    return 2 * pair_index + member


def at_most(last: sp.Expr, expression: sp.Basic, *indices: sp.Symbol) -> sp.Basic:
    """``expression`` with each of ``indices`` written as ``last`` minus a gap >= 0.

    Every integer up to ``last`` is ``last`` minus such a gap, so whatever SymPy decides about
    the result holds for every index up to ``last``; this settles bounds ``index <= last``. Bounds
    from below must be settled before (SymPy settles them from the indices' assumptions).
    """
    gaps = {index: last - sp.Symbol(f"{index}_gap", nonnegative=True, integer=True) for index in indices}
    return expression.subs(gaps)


def fills_channels_once(channel: Callable[[sp.Expr, int], sp.Expr]) -> None:
    """Prove that ``channel`` puts the two members of each of the d/2 pairs in channels 0..d-1, one per channel.

    Every member lands in 0..d-1 and no two members share a channel; d/2 pairs of two members
    are d members for d channels, so the map is a bijection.
    """
    half = d / 2
    for a in (0, 1):
        inside = sp.Ge(channel(r, a), 0), at_most(half - 1, sp.Le(channel(r, a), d - 1), r)
        if inside != (sp.true, sp.true):
            raise ProofFailure(f"{channel.__name__}: member {a} of pair r is not always in channels 0..d-1: {inside}")
        for b in (0, 1):
            if a == b:
                one_to_one = sp.solve(channel(r, a) - channel(other_pair, b), other_pair) == [r]
            else:  # then the pair index whose member is 0 would have to exceed d/2 - 1
                shared = sp.KroneckerDelta(channel(r, a), channel(other_pair, b))
                one_to_one = at_most(half - 1, shared, r if a < b else other_pair) == 0
            if not one_to_one:
                raise ProofFailure(f"{channel.__name__}: member {a} of pair r and member {b} of pair s can "
                                   "share a channel")
    assert_equal(sp.Sum(2, (r, 0, half - 1)).doit(), d, "d/2 pairs of two members fill the d channels")


@derivation(
    "rope-layout-permutation",
    title="The halves and interleaved RoPE layouts differ by a fixed channel permutation",
    statement=(
        r"\begin{gathered} R^{\mathrm{halves}}_\Theta(m) = \Pi^\top R^{\mathrm{inter}}_\Theta(m)\,\Pi,"
        r" \qquad (\Pi x)_{2r} = x_r, \quad (\Pi x)_{2r+1} = x_{r + d/2}, \\"
        r" \big(R^{\mathrm{halves}}_\Theta(m)\,q\big)^\top \big(R^{\mathrm{halves}}_\Theta(n)\,k\big)"
        r" = \big(R^{\mathrm{inter}}_\Theta(m)\,\Pi q\big)^\top"
        r" \big(R^{\mathrm{inter}}_\Theta(n)\,\Pi k\big) \end{gathered}"
    ),
    summary=r"Pairing channel $r$ with $r + d/2$ is the interleaved pairing seen through a fixed permutation, so "
            r"permuting the output channels of $W_Q$ and $W_K$ converts one layout into the other "
            r"with identical scores.",
    assumptions=(
        r"$m, n$ real positions",
        "d a positive even integer",
        r"$\Pi$ the $d \times d$ permutation matrix defined above",
        "both layouts use the same frequencies",
    ),
    steps=(
        r"Member $a \in \{0, 1\}$ of pair $r$ ($0 \le r < d/2$) sits in channel $r + a\,d/2$ in the halves layout and "
        r"in channel $2r + a$ in the interleaved one. Both maps land in $0, \ldots, d - 1$ and are one-to-one: "
        r"$2r + a = 2s + b$ forces $a = b$ (parity) and then $r = s$, and $r + a\,d/2 = s + b\,d/2$ with $a \neq b$ "
        r"would put $r$ or $s$ outside $0, \ldots, d/2 - 1$. The $d$ members fill the $d$ channels, so each map is a "
        r"bijection, and so is $\pi(r + a\,d/2) = 2r + a$.",
        r"$\Pi$ moves channel $i$ to $\pi(i)$, so $\Pi_{ki} = \delta_{k\pi(i)}$ and, for every $d \times d$ matrix "
        r"$M$, $(\Pi^\top M\,\Pi)_{ij} = \sum_{k,l} \delta_{k\pi(i)} M_{kl}\, \delta_{l\pi(j)} = M_{\pi(i)\pi(j)}$. "
        r"With $M = I$ this is $\delta_{\pi(i)\pi(j)} = \delta_{ij}$, so $\Pi^\top\Pi = I$; and as $\pi(i)$ runs over "
        r"every channel once, $(\Pi\Pi^\top)_{kl} = \sum_i \delta_{k\pi(i)}\delta_{l\pi(i)}$ is the same sum, "
        r"$\delta_{kl}$, so $\Pi\Pi^\top = I$.",
        r"Both layouts are block diagonal in their own pairing: where member $a$ of pair $r$ meets member $b$ of pair "
        r"$s$ they hold $\delta_{rs} R(m\theta_r)_{ab}$. Entry $(r + a\,d/2,\ s + b\,d/2)$ of "
        r"$\Pi^\top R^{\mathrm{inter}}_\Theta(m)\,\Pi$ is entry $(2r + a,\ 2s + b)$ of $R^{\mathrm{inter}}_\Theta(m)$, "
        r"which is that same value, so the matrix is $R^{\mathrm{halves}}_\Theta(m)$.",
        r"In a score the outer permutations meet as $\Pi\Pi^\top = I$, leaving the interleaved score of $\Pi q$ and "
        r"$\Pi k$. Since $q = W_Q^\top x$, replacing $q$ by $\Pi q$ just reorders the output channels of $W_Q$ "
        r"(likewise for $W_K$), so a checkpoint converts between layouts without changing any score.",
        r"SymPy checks the four member cases for symbolic pair indices $r, s$ and width $d$, the sums over a symbolic "
        r"number of channels, and the score with symbolic $d \times d$ matrices.",
    ),
    scope=GENERAL,
)
def prove_rope_layout_permutation() -> None:
    half = d / 2
    fills_channels_once(halves_channel)
    fills_channels_once(interleaved_channel)  # so pi(r + a d/2) = 2r + a is a bijection of the channels

    # Pi^T M Pi picks entry (pi(i), pi(j)) of M, for any channels pi(i), pi(j) in 0..d - 1.
    row, column = sp.symbols("k l", integer=True)
    image_i, image_j = sp.symbols("c e", nonnegative=True, integer=True)
    entry = sp.Function("M")
    conjugated = sp.Sum(
        sp.KroneckerDelta(row, image_i) * entry(row, column) * sp.KroneckerDelta(column, image_j),
        (row, 0, d - 1),
        (column, 0, d - 1),
    ).doit()
    if at_most(d - 1, conjugated - entry(image_i, image_j), image_i, image_j) != 0:
        raise ProofFailure(f"(Pi^T M Pi)[i, j] = {conjugated}, not M[pi(i), pi(j)]")
    overlap = sp.Sum(sp.KroneckerDelta(row, image_i) * sp.KroneckerDelta(row, image_j), (row, 0, d - 1)).doit()
    if at_most(d - 1, overlap - sp.KroneckerDelta(image_i, image_j), image_i, image_j) != 0:
        raise ProofFailure(f"sum over k of delta(k, c) delta(k, e) is {overlap}, not delta(c, e), so Pi "
                           "is not orthogonal")

    # Both layouts hold delta_rs R(m theta_r)[a, b] where member a of pair r meets member b of pair s.
    m = sp.Symbol("m", real=True)
    for a in (0, 1):
        for b in (0, 1):
            block_entry = sp.KroneckerDelta(r, other_pair) * rotation(m * omega(r, d))[a, b]
            moved_from = interleaved_channel(r, a), interleaved_channel(other_pair, b)  # pi of the halves channels
            moved = conjugated.subs({image_i: moved_from[0], image_j: moved_from[1]})
            moved = moved.xreplace({entry(*moved_from): block_entry})
            if at_most(half - 1, moved - block_entry, r, other_pair) != 0:
                raise ProofFailure(f"(Pi^T R_inter Pi) differs from R_halves where member {a} of pair r "
                                   f"meets member {b} of pair s: {moved}")

    permutation = sp.MatrixSymbol("Pi", d, d)
    inter_m, inter_n = sp.MatrixSymbol("R_m", d, d), sp.MatrixSymbol("R_n", d, d)
    query, key = sp.MatrixSymbol("q", d, 1), sp.MatrixSymbol("k", d, 1)

    def halves_rotation(interleaved: sp.MatrixSymbol) -> sp.MatrixExpr:
        return permutation.T * interleaved * permutation

    score = ((halves_rotation(inter_m) * query).T * (halves_rotation(inter_n) * key)).doit()
    score = score.subs(permutation * permutation.T, sp.Identity(d))
    if score != ((inter_m * permutation * query).T * (inter_n * permutation * key)).doit():
        raise ProofFailure(f"the halves score is {score}, not the interleaved score of Pi q and Pi k")


@numeric_check("rope-layout-permutation")
def check_rope_layout_permutation(rng: np.random.Generator) -> None:
    width = random_width(rng)
    half = width // 2
    order = np.empty(width, dtype=int)  # (Pi x)[i] = x[order[i]]
    order[0::2], order[1::2] = np.arange(half), np.arange(half, width)
    vectors = random_vectors(rng, 8, width)
    ids = rng.integers(0, 10**4, size=8)
    halves = posenc.rope(vectors, ids, layout="halves")
    interleaved = posenc.rope(vectors[:, order], ids, layout="interleaved")
    assert_close(halves[:, order], interleaved, "Pi R_halves x = R_inter Pi x")
    assert_close(halves @ halves.T, interleaved @ interleaved.T, "identical scores", atol=1e-8)


@derivation(
    "rope-sinusoidal-link",
    title="With a repeated content pair, RoPE scores trace the sinusoidal kernel",
    statement=(
        r"q = k = (c, c, \ldots, c),\ c \in \mathbb{R}^2 \;\Longrightarrow\;"
        r" \big(R_\Theta(m)\,q\big)^\top \big(R_\Theta(n)\,k\big) = \lVert c \rVert^2\, K(m - n)"
    ),
    summary=r"When every pair of the query and key holds the same 2-vector $c$, the RoPE score is $\lVert c \rVert^2$ "
            r"times the sinusoidal kernel, so the two similarity curves have the same shape.",
    assumptions=(
        r"$m, n$ real positions",
        r"$\theta_r = \omega_r = b^{-2r/d}$ (the same frequencies as the sinusoidal encoding)",
        r"$R_\Theta$ as in `rope-relative`",
    ),
    steps=(
        r"By `rope-relative`, pair $r$ contributes $c^\top R((n - m)\theta_r)\,c$.",
        r"For any angle, "
        r"$c^\top R(\phi)\,c = (c_1^2 + c_2^2)\cos\phi + c_1c_2(\sin\phi - \sin\phi) = \lVert c\rVert^2 \cos\phi$: the "
        r"antisymmetric sine part cancels.",
        r"Summing over pairs gives $\lVert c\rVert^2 \sum_r \cos((n - m)\omega_r) = \lVert c\rVert^2 K(n - m)$, and "
        r"$K$ is even (`kernel-symmetry-bound`), so this is $\lVert c\rVert^2 K(m - n)$.",
    ),
    scope=GENERAL,
)
def prove_rope_sinusoidal_link() -> None:
    angle = sp.Symbol("phi", real=True)
    c = sp.Matrix(sp.symbols("c_1 c_2", real=True))
    assert_equal((c.T * rotation(angle) * c)[0], c.dot(c) * sp.cos(angle), "c^T R(phi) c = |c|^2 cos phi")
    m, n = sp.Symbol("m", real=True), sp.Symbol("n", real=True)
    pair_score = (rotation(m * omega(r, d)) * c).dot(rotation(n * omega(r, d)) * c)
    score = sum_over_pairs(pair_score, c.dot(c) * sp.cos((n - m) * omega(r, d)), "pair r scores |c|^2 cos((n "
                                                                                 "- m) theta_r)")
    if sp.expand(linear_parts(score) - c.dot(c) * kernel_sum(m - n)) != 0:
        raise ProofFailure(f"the RoPE score {linear_parts(score)} is not |c|^2 K(m - n)")


@numeric_check("rope-sinusoidal-link")
def check_rope_sinusoidal_link(rng: np.random.Generator) -> None:
    width = random_width(rng)
    c = rng.standard_normal(2)
    repeated = np.tile(c, width // 2)[None, :]
    m, n = (int(value) for value in rng.integers(0, 10**4, size=2))
    score = posenc.rope(repeated, [m])[0] @ posenc.rope(repeated, [n])[0]
    assert_close(score, (c @ c) * posenc.kernel(m - n, width), "RoPE score = |c|^2 K(m - n)", atol=1e-8)


@derivation(
    "alibi-slopes",
    title="ALiBi's head slopes form a geometric sequence",
    statement=(
        r"s_h = 2^{-8h/n} \ (h = 1, \ldots, n) \;\Longrightarrow\; \frac{s_{h+1}}{s_h} = 2^{-8/n},"
        r" \qquad s_1 = 2^{-8/n}, \quad s_n = 2^{-8}"
    ),
    summary=r"For $n$ heads, $n$ a power of two, each slope is $2^{-8/n}$ times the previous one, starting at "
            r"$2^{-8/n}$ and ending at $2^{-8} = 1/256$.",
    assumptions=("n the number of heads, a power of two", "h an integer head index, 1 <= h <= n"),
    steps=(
        r"Divide consecutive slopes: $2^{-8(h+1)/n} / 2^{-8h/n} = 2^{-8(h+1)/n + 8h/n} = 2^{-8/n}$, free of $h$, so "
        r"the sequence is geometric.",
        r"The first slope equals the common ratio, $s_1 = 2^{-8/n}$, so $s_h = (2^{-8/n})^h$.",
        r"The last slope is $s_n = 2^{-8} = 1/256$ for every head count $n$.",
    ),
    scope=GENERAL,
)
def prove_alibi_slopes() -> None:
    heads = sp.Symbol("n", positive=True, integer=True)
    head = sp.Symbol("h", positive=True, integer=True)

    def slope(index: sp.Expr) -> sp.Expr:
        return sp.Integer(2) ** (-8 * index / heads)

    ratio = sp.powsimp(slope(head + 1) / slope(head), force=True)
    assert_equal(ratio, sp.Integer(2) ** (-8 / heads), "s_(h+1)/s_h = 2^(-8/n)")
    if ratio.has(head):
        raise ProofFailure(f"the slope ratio {ratio} depends on h")
    assert_equal(slope(1), ratio, "s_1 = 2^(-8/n)")
    assert_equal(slope(heads), sp.Rational(1, 256), "s_n = 2^(-8)")


@numeric_check("alibi-slopes")
def check_alibi_slopes(rng: np.random.Generator) -> None:
    heads = int(2 ** rng.integers(0, 8))
    slopes = posenc.alibi_slopes(heads)
    assert_close(slopes, 2.0 ** (-8.0 * np.arange(1, heads + 1) / heads), "s_h = 2^(-8h/n)", atol=1e-15)
    assert_close(slopes[1:] / slopes[:-1], np.full(heads - 1, 2.0 ** (-8 / heads)), "constant ratio 2^(-8/n)")
    assert_close([slopes[0], slopes[-1]], [2.0 ** (-8 / heads), 1 / 256], "first and last slopes", atol=1e-15)


@derivation(
    "alibi-softmax-shift",
    title="ALiBi's distance penalty and a key-index bonus give the same attention weights",
    statement=(
        r"\begin{gathered} \operatorname{softmax}_{j \le i}\big(a_{ij} + m\,j\big)"
        r" = \operatorname{softmax}_{j \le i}\big(a_{ij} - m\,(i - j)\big), \\"
        r" \text{since } -m\,(i - j) = m\,j - m\,i \end{gathered}"
    ),
    summary=r"Subtracting $m\,(i - j)$ differs from adding $m\,j$ by $-m\,i$, a constant along the query's row, and "
            r"softmax ignores a constant added to every entry of a row.",
    assumptions=(
        "i the query index, keys j = 0, ..., i (causal mask), i any non-negative integer",
        "m a head's slope",
        r"$a_{ij}$ real scores",
    ),
    steps=(
        r"For a fixed query $i$, $-m(i - j) = m j - m i$, so the two biased rows differ by the constant $-m i$.",
        r"Softmax is unchanged by adding a constant $c$ to a row: "
        r"$e^{x_j + c} / \sum_l e^{x_l + c} = e^c e^{x_j} / (e^c \sum_l e^{x_l})$ and $e^c$ cancels.",
        r"Hence both biases give identical attention weights; only the relative key positions $j$ within "
        r"the row matter.",
    ),
    scope=GENERAL,
)
def prove_alibi_softmax_shift() -> None:
    slope = sp.Symbol("m", positive=True)
    query = sp.Symbol("i", integer=True, nonnegative=True)
    key = sp.Symbol("j", integer=True, nonnegative=True)
    gap = sp.expand((-slope * (query - key)) - slope * key)
    assert_equal(gap, -slope * query, "the biases differ by -m i")
    if gap.has(key):
        raise ProofFailure("the bias difference depends on the key index")
    # A row of any length i + 1: scores a_l, summed over the keys l = 0, ..., i.
    scores, other = sp.IndexedBase("a", real=True), sp.Symbol("l", integer=True, nonnegative=True)
    shift = sp.Symbol("c", real=True)

    def softmax_entry(bias: Callable[[sp.Expr], sp.Expr]) -> sp.Expr:
        return sp.exp(scores[key] + bias(key)) / sp.Sum(sp.exp(scores[other] + bias(other)), (other, 0, query))

    plain = softmax_entry(lambda index: 0)
    assert_equal(softmax_entry(lambda index: shift), plain, "softmax ignores a constant shift")
    bonus = softmax_entry(lambda index: slope * index)
    penalty = softmax_entry(lambda index: -slope * (query - index))
    assert_equal(bonus, penalty, "bonus m j and penalty -m (i - j) give the same weights")


@numeric_check("alibi-softmax-shift")
def check_alibi_softmax_shift(rng: np.random.Generator) -> None:
    heads, length = int(2 ** rng.integers(0, 5)), int(rng.integers(1, 33))
    bias = posenc.alibi_bias(heads, length)
    slopes = posenc.alibi_slopes(heads)
    scores = rng.standard_normal((length, length))
    keys = np.arange(length)
    hidden = keys[None, :] > keys[:, None]
    for h in range(heads):
        bonus = np.where(hidden, -np.inf, scores + slopes[h] * keys[None, :])
        assert_close(softmax(scores + bias[h]), softmax(bonus), f"head {h}: softmax(a - m(i - j)) = softmax(a + m j)")
        penalty = -slopes[h] * (keys[:, None] - keys[None, :])
        assert_close(np.where(hidden, 0.0, bias[h]), np.where(hidden, 0.0, penalty), "bias = -m(i - j) on visible keys")


@derivation(
    "rope-position-interpolation",
    title="Position interpolation is RoPE with every frequency divided by the scale",
    statement=(
        r"R_\Theta\!\left(m\,\frac{L}{L'}\right) = R_{\Theta/s}(m), \qquad s = \frac{L'}{L},"
        r"\quad \Theta/s = (\theta_0/s, \ldots, \theta_{d/2-1}/s)"
    ),
    summary=r"Rotating position $m$ as if it were $m L/L'$ gives the same rotation as keeping $m$ and dividing every "
            r"pair's frequency by $s = L'/L$.",
    assumptions=(r"$m$ a real position", r"$L, L' > 0$ the trained and the target context lengths", r"$\theta_r > 0$"),
    steps=(
        r"Pair $r$ of $R_\Theta(p)$ is the plane rotation by the angle $p\,\theta_r$.",
        r"At $p = mL/L'$ that angle is $m\,\theta_r L/L' = m\,(\theta_r/s)$ with $s = L'/L$.",
        r"Equal angles give equal rotations, pair by pair, so the two block-diagonal matrices agree.",
    ),
    scope=GENERAL,
)
def prove_rope_position_interpolation() -> None:
    m = sp.Symbol("m", real=True)
    trained, target, frequency = sp.symbols("L L_prime theta", positive=True)
    scale = target / trained
    assert_equal(rotation(m * trained / target * frequency), rotation(m * (frequency / scale)), "R(m L/L' theta) "
                                                                                                "= R(m theta/s)")


@numeric_check("rope-position-interpolation")
def check_rope_position_interpolation(rng: np.random.Generator) -> None:
    width = random_width(rng)
    trained, target = 2048, int(rng.integers(2049, 65536))
    positions = rng.uniform(0, target, size=8)
    theta = posenc.frequencies(width)
    interpolated = np.multiply.outer(positions * trained / target, theta)
    divided = np.multiply.outer(positions, theta / (target / trained))
    assert_close(np.cos(interpolated), np.cos(divided), "cos of the two angle tables", atol=1e-9)
    assert_close(np.sin(interpolated), np.sin(divided), "sin of the two angle tables", atol=1e-9)


@derivation(
    "rope-ntk-base",
    title="NTK-aware scaling keeps the fastest pair and slows the slowest by the scale",
    statement=(
        r"b' = b\,s^{d/(d-2)} \;\Longrightarrow\; \theta'_r = \theta_r\, s^{-2r/(d-2)},"
        r"\qquad \theta'_0 = \theta_0, \quad \theta'_{d/2-1} = \frac{\theta_{d/2-1}}{s}"
    ),
    summary=r"Raising the RoPE base to $b\,s^{d/(d-2)}$ (NTK-aware scaling, proposed by bloc97 and analysed in the "
            r"YaRN paper) leaves pair $0$ unchanged, divides the last pair's frequency by exactly $s$, and slows the "
            r"pairs between geometrically.",
    assumptions=(r"$b > 0$ the base, $s > 0$ the scale", r"$d > 2$ even", r"$\theta_r = b^{-2r/d}$"),
    steps=(
        r"With the new base, "
        r"$\theta'_r = (b\,s^{d/(d-2)})^{-2r/d} = b^{-2r/d}\, s^{-2r/(d-2)} = \theta_r\, s^{-2r/(d-2)}$.",
        r"At $r = 0$ the factor is $s^0 = 1$: the fastest pair keeps its frequency.",
        r"At $r = d/2 - 1$ the exponent is $-2(d/2 - 1)/(d - 2) = -1$: the slowest pair is divided by $s$, as position "
        r"interpolation would divide it.",
    ),
    scope=GENERAL,
)
def prove_rope_ntk_base() -> None:
    b, scale = sp.symbols("b s", positive=True)
    width = sp.Symbol("d", positive=True)
    pair_index = sp.Symbol("r", nonnegative=True)
    new_base = b * scale ** (width / (width - 2))

    def theta(index: sp.Expr, base: sp.Expr) -> sp.Expr:
        return base ** (-2 * index / width)

    # Compare logarithms: every quantity is positive, so equal logs mean equal values.
    log_ratio = sp.expand_log(sp.log(theta(pair_index, new_base) / theta(pair_index, b)), force=True)
    assert_equal(log_ratio, -2 * pair_index / (width - 2) * sp.log(scale), "log(theta'_r / theta_r) = -2r/(d-2) log s")
    assert_equal(log_ratio.subs(pair_index, 0), 0, "theta'_0 = theta_0")
    assert_equal(log_ratio.subs(pair_index, width / 2 - 1), -sp.log(scale), "theta'_(d/2-1) = theta_(d/2-1)/s")


@numeric_check("rope-ntk-base")
def check_rope_ntk_base(rng: np.random.Generator) -> None:
    width = int(2 * rng.integers(2, 65))
    scale = float(rng.uniform(1.5, 16))
    ratio = posenc.frequencies(width, base=10000.0 * scale ** (width / (width - 2))) / posenc.frequencies(width)
    expected = scale ** (-2.0 * np.arange(width // 2) / (width - 2))
    assert_close(ratio, expected, "frequency ratio under the NTK base", atol=1e-12)
    assert_close([ratio[0], ratio[-1] * scale], [1.0, 1.0], "first pair kept, last divided by s", atol=1e-12)


# ---------------------------------------------------------------------------------------
# Relative position in attention, and none at all (posenc.relative)


def transformer_xl_parts() -> tuple[sp.MatrixSymbol, ...]:
    """E_i, E_j, R (the sinusoid of i - j), W_q, W_{k,E}, W_{k,R}, u, v with symbolic sizes d and d_k."""
    width, head = sp.symbols("d d_k", positive=True, integer=True)
    e_i, e_j, rel = (sp.MatrixSymbol(name, width, 1) for name in ("E_i", "E_j", "R_{i-j}"))
    w_q, w_ke, w_kr = (sp.MatrixSymbol(name, width, head) for name in ("W_q", "W_{k,E}", "W_{k,R}"))
    u, v = sp.MatrixSymbol("u", head, 1), sp.MatrixSymbol("v", head, 1)
    return e_i, e_j, rel, w_q, w_ke, w_kr, u, v


@derivation(
    "transformer-xl-terms",
    title="Transformer-XL's score is four terms with two global biases",
    statement=(
        r"\begin{aligned} A^{\mathrm{rel}}_{ij}"
        r" &= \underbrace{q_i^\top k_j}_{(a)} + \underbrace{q_i^\top r_{i-j}}_{(b)}"
        r" + \underbrace{u^\top k_j}_{(c)} + \underbrace{v^\top r_{i-j}}_{(d)}"
        r" = (q_i + u)^\top k_j + (q_i + v)^\top r_{i-j}, \\"
        r" q_i &= W_q^\top E_i, \quad k_j = W_{k,E}^\top E_j, \quad r_{i-j} = W_{k,R}^\top R_{i-j} \end{aligned}"
    ),
    summary="Transformer-XL scores content against content (a), content against the relative position (b), a learned "
            "global content bias u against the key (c) and a learned global position bias v against the relative "
            "position (d); grouped, the query is shifted by u for the content key and by v for the position key.",
    assumptions=(
        r"$E_i, E_j, R_{i-j} \in \mathbb{R}^d$ column vectors, $R_{i-j}$ the sinusoid of the distance $i - j$",
        r"$W_q, W_{k,E}, W_{k,R} \in \mathbb{R}^{d \times d_k}$",
        r"$u, v \in \mathbb{R}^{d_k}$ shared by every query",
        "scale and mask left out",
    ),
    steps=(
        r"Write each term with the projections: (a) $= E_i^\top W_q W_{k,E}^\top E_j$, (b) "
        r"$= E_i^\top W_q W_{k,R}^\top R_{i-j}$, (c) $= u^\top W_{k,E}^\top E_j$, (d) $= v^\top W_{k,R}^\top R_{i-j}$.",
        r"Terms (a) and (c) share the key $k_j$, so they sum to $(q_i + u)^\top k_j$; terms (b) and (d) share "
        r"$r_{i-j}$ and sum to $(q_i + v)^\top r_{i-j}$.",
        r"Positions enter only through $R_{i-j}$, a function of $i - j$; no term holds an absolute position.",
    ),
    scope=GENERAL,
)
def prove_transformer_xl_terms() -> None:
    e_i, e_j, rel, w_q, w_ke, w_kr, u, v = transformer_xl_parts()
    q, k, r_ij = w_q.T * e_i, w_ke.T * e_j, w_kr.T * rel
    terms = q.T * k + q.T * r_ij + u.T * k + v.T * r_ij
    grouped = (q + u).T * k + (q + v).T * r_ij
    if sp.expand(grouped - terms) != sp.ZeroMatrix(1, 1):
        raise ProofFailure("(q + u)^T k + (q + v)^T r is not the sum of the four terms")
    written = e_i.T * w_q * w_ke.T * e_j + e_i.T * w_q * w_kr.T * rel + u.T * w_ke.T * e_j + v.T * w_kr.T * rel
    if sp.expand(terms - written) != sp.ZeroMatrix(1, 1):
        raise ProofFailure("the four terms are not the projected products (a)-(d)")


@numeric_check("transformer-xl-terms")
def check_transformer_xl_terms(rng: np.random.Generator) -> None:
    width, head = random_width(rng), int(rng.integers(1, 9))
    start = int(rng.integers(0, 10**4))
    ids = start + np.arange(int(rng.integers(1, 9)))
    q, k = rng.standard_normal((ids.size, head)), rng.standard_normal((ids.size, head))
    w_kr, u, v = rng.standard_normal((width, head)), rng.standard_normal(head), rng.standard_normal(head)
    terms = posenc.transformer_xl_terms(q, k, w_kr, u, v, query_ids=ids, key_ids=ids)
    omega = posenc.frequencies(width)
    distance = (ids[:, None] - ids[None, :])[..., None] * omega
    r = np.concatenate([np.sin(distance), np.cos(distance)], axis=-1) @ w_kr
    content = np.einsum("id,ijd->ij", q + u[None], np.broadcast_to(k[None], r.shape))
    expected = content + np.einsum("id,ijd->ij", q + v[None], r)
    assert_close(terms.total, expected, "(q + u).k + (q + v).r", atol=1e-9)


@derivation(
    "transformer-xl-from-expansion",
    title="Transformer-XL's terms are the four-term expansion with relative keys and global query biases",
    statement=(
        r"\begin{aligned} &E_i^\top A E_j + E_i^\top A P_j + P_i^\top A E_j + P_i^\top A P_j \\"
        r" &\xrightarrow{\;A P_j \,\to\, W_q W_{k,R}^\top R_{i-j},"
        r"\ \ W_q^\top P_i \,\to\, u \text{ (content key)},\ v \text{ (position key)}\;}"
        r" q_i^\top k_j + q_i^\top r_{i-j} + u^\top k_j + v^\top r_{i-j} \end{aligned}"
    ),
    summary="Starting from the sinusoidal expansion of attention-expansion, giving the key's position its own "
            "projection of the relative sinusoid and replacing the query's position by two learned vectors turns each "
            "of the four terms into one of Transformer-XL's.",
    assumptions=(
        r"$A = W_q W_{k,E}^\top$ as in `attention-expansion` (with $W_K = W_{k,E}$)",
        r"notation of `transformer-xl-terms`",
        r"$P_i, P_j$ the absolute sinusoids of the inputs",
    ),
    steps=(
        r"In `attention-expansion` the key of position $j$ is $W_{k,E}^\top (E_j + P_j)$; Transformer-XL keeps "
        r"$W_{k,E}^\top E_j = k_j$ and replaces $W_{k,E}^\top P_j$ by $r_{i-j} = W_{k,R}^\top R_{i-j}$, so terms 2 and "
        r"4 use a relative position with its own projection.",
        r"The query's position part $W_q^\top P_i$ appears in terms 3 and 4; Transformer-XL replaces it by $u$ in term "
        r"3 and by $v$ in term 4, vectors that do not depend on $i$.",
        r"Term by term: $E_i^\top A E_j = q_i^\top k_j$ (a), $E_i^\top A P_j \to q_i^\top r_{i-j}$ (b), "
        r"$P_i^\top A E_j \to u^\top k_j$ (c), $P_i^\top A P_j \to v^\top r_{i-j}$ (d).",
    ),
    scope=GENERAL,
)
def prove_transformer_xl_from_expansion() -> None:
    e_i, e_j, rel, w_q, w_ke, w_kr, u, v = transformer_xl_parts()
    p_i, p_j = (sp.MatrixSymbol(name, e_i.shape[0], 1) for name in ("P_i", "P_j"))
    # attention-expansion's terms, each as (query part)^T (key part)
    query_parts = {"content": w_q.T * e_i, "position": w_q.T * p_i}
    key_parts = {"content": w_ke.T * e_j, "position": w_ke.T * p_j}
    a = w_q * w_ke.T
    expansion = e_i.T * a * e_j + e_i.T * a * p_j + p_i.T * a * e_j + p_i.T * a * p_j
    split = sum((query_parts[x].T * key_parts[y] for x in query_parts for y in key_parts), sp.ZeroMatrix(1, 1))
    if sp.expand(expansion - split) != sp.ZeroMatrix(1, 1):
        raise ProofFailure("the expansion is not the sum of query part times key part")
    # Transformer-XL's replacements: the position key becomes relative; the position query a global bias
    relative_key = {"content": w_ke.T * e_j, "position": w_kr.T * rel}

    def query_for(x: str, y: str) -> sp.MatrixExpr:
        return query_parts["content"] if x == "content" else (u if y == "content" else v)

    replaced = sum((query_for(x, y).T * relative_key[y] for x in query_parts for y in key_parts), sp.ZeroMatrix(1, 1))
    q, k, r_ij = w_q.T * e_i, w_ke.T * e_j, w_kr.T * rel
    if sp.expand(replaced - (q.T * k + q.T * r_ij + u.T * k + v.T * r_ij)) != sp.ZeroMatrix(1, 1):
        raise ProofFailure("the replaced expansion is not Transformer-XL's four terms")


@numeric_check("transformer-xl-from-expansion")
def check_transformer_xl_from_expansion(rng: np.random.Generator) -> None:
    # With u = W_q^T P_i and v = W_q^T P_i for one fixed query, and W_{k,R} R_{i-j} set to the
    # absolute key W_{k,E} P_j, Transformer-XL's total equals the expansion's score for that pair.
    width, head = random_width(rng), int(rng.integers(1, 9))
    i, j = (int(value) for value in rng.integers(0, 10**4, size=2))
    e_i, e_j = random_vectors(rng, 2, width)
    p_i, p_j = posenc.sinusoidal([i, j], width)
    w_q, w_ke = rng.standard_normal((width, head)), rng.standard_normal((width, head))
    score = (w_q.T @ (e_i + p_i)) @ (w_ke.T @ (e_j + p_j))
    q, k, pos_query, r = w_q.T @ e_i, w_ke.T @ e_j, w_q.T @ p_i, w_ke.T @ p_j
    assert_close(q @ k + q @ r + pos_query @ k + pos_query @ r, score, "the four terms with u = v "
                                                                       "= W_q^T P_i", atol=1e-8)


def t5_distance_bucket(n: sp.Expr, exact: sp.Expr, span: sp.Expr, buckets: sp.Expr) -> sp.Expr:
    """T5's bucket of a distance n >= exact before the floor and the cap: exact + log(n/exact)/log(span) (B - exact)."""
    return exact + sp.log(n / exact) / sp.log(span) * (buckets - exact)


@derivation(
    "t5-bucket-monotone",
    title="T5's bucket never decreases with distance and saturates at max_distance",
    statement=(
        r"\begin{gathered} f(n) = \begin{cases} n & n < m \\"
        r" \min\!\Big(B - 1,\ m + \Big\lfloor \dfrac{\log(n/m)}{\log(D/m)}\,(B - m) \Big\rfloor\Big) & n \ge m"
        r" \end{cases} \\"
        r" \Longrightarrow\quad f(n + 1) \ge f(n), \qquad f(n) = B - 1 \text{ for } n \ge D \end{gathered}"
    ),
    summary="With B buckets for one direction, m = B/2 exact ones and max_distance D > m, the bucket of a distance is "
            "non-decreasing in the distance, and every distance from D on falls in the last bucket.",
    assumptions=(
        r"$n \ge 0$ an integer distance (for bidirectional T5, $n = |j - i|$ within each half)",
        r"$B \ge 2$ buckets, $m = \lfloor B/2 \rfloor \ge 1$, $D > m$",
        "exact arithmetic; posenc evaluates T5's float32 steps, checked numerically",
    ),
    steps=(
        r"Below $m$, $f(n) = n$ increases by one per step.",
        r"From $m$ on, $g(n) = m + \log(n/m)/\log(D/m)\,(B - m)$ has derivative $(B - m)/(n \log(D/m)) > 0$, so $g$ "
        r"increases; the floor and the minimum with $B - 1$ keep it non-decreasing.",
        r"At the seam, $g(m) = m$, so $f(m) = m \ge f(m - 1) = m - 1$.",
        r"At $n = D$, $g(D) = m + (B - m) = B$, so for $n \ge D$ the minimum gives $B - 1$: the last bucket.",
    ),
    scope=GENERAL,
)
def prove_t5_bucket_monotone() -> None:
    n, exact, buckets = sp.symbols("n m B", positive=True)
    excess = sp.Symbol("epsilon", positive=True)  # D = m (1 + epsilon) > m
    span = 1 + excess
    g = t5_distance_bucket(n, exact, span, buckets)
    slope = sp.simplify(sp.diff(g, n))
    assert_equal(slope, (buckets - exact) / (n * sp.log(span)), "g'(n) = (B - m)/(n log(D/m))")
    if not (sp.log(span).is_positive and (slope * n * sp.log(span)).equals(buckets - exact)):
        raise ProofFailure("log(D/m) is not positive")
    assert_equal(g.subs(n, exact), exact, "g(m) = m")
    assert_equal(sp.expand_log(g.subs(n, exact * span), force=True), buckets, "g(D) = B")


@numeric_check("t5-bucket-monotone")
def check_t5_bucket_monotone(rng: np.random.Generator) -> None:
    buckets = int(rng.integers(2, 65))
    max_distance = int(rng.integers(buckets // 2 + 1, 1000))
    distance = np.arange(0, 3 * max_distance)
    f = posenc.t5_relative_position_bucket(
        -distance, bidirectional=False, num_buckets=buckets, max_distance=max_distance
    )
    if np.any(np.diff(f) < 0):
        raise ProofFailure("posenc's T5 bucket decreases somewhere")
    assert_close(f[max_distance:], np.full(f.size - max_distance, buckets - 1), "last bucket from D on")
    assert_close(f[: buckets // 2], np.arange(buckets // 2), "exact below m")


@derivation(
    "deberta-bucket-symmetry",
    title="DeBERTa's log buckets are odd in the relative position",
    statement=(
        r"\begin{gathered} \beta(r) = \begin{cases} r & |r| \le m \\"
        r" \operatorname{sign}(r)\Big(m + \Big\lceil \dfrac{\log(|r|/m)}{\log((P - 1)/m)}\,(m - 1)\Big\rceil\Big)"
        r" & |r| > m \end{cases} \\"
        r" \Longrightarrow\quad \beta(-r) = -\beta(r) \end{gathered}"
    ),
    summary="A key r positions before the query gets the negative of the bucket of a key r positions after it, because "
            "the bucket depends on r only through |r| and its sign.",
    assumptions=(
        r"$r$ an integer relative position (query minus key)",
        r"$m = \lfloor \text{bucket\_size}/2 \rfloor$, $P$ = max_position",
        r"the logarithmic part written as any function $h(|r|)$",
    ),
    steps=(
        r"Write $\beta(r) = r$ for $|r| \le m$ and $\operatorname{sign}(r)\,h(|r|)$ otherwise.",
        r"Replacing $r$ by $-r$ leaves $|r|$, hence the case and $h(|r|)$, unchanged, and flips $r$ and "
        r"$\operatorname{sign}(r)$.",
        r"So each case gives $\beta(-r) = -\beta(r)$, and $\beta(0) = 0$.",
    ),
    scope=GENERAL,
)
def prove_deberta_bucket_symmetry() -> None:
    position = sp.Symbol("r", integer=True)
    mid = sp.Symbol("m", positive=True, integer=True)
    log_part = sp.Function("h")

    def bucket(value: sp.Expr) -> sp.Expr:
        return sp.Piecewise((value, sp.Abs(value) <= mid), (sp.sign(value) * log_part(sp.Abs(value)), True))

    assert_equal(sp.piecewise_fold(bucket(-position) + bucket(position)), 0, "beta(-r) + beta(r) = 0")


@numeric_check("deberta-bucket-symmetry")
def check_deberta_bucket_symmetry(rng: np.random.Generator) -> None:
    size = int(rng.integers(2, 513))
    max_position = int(rng.integers(size // 2 + 2, 4096))
    relative = np.arange(-4 * max_position, 4 * max_position + 1)
    buckets = posenc.deberta_log_bucket(relative, size, max_position)
    assert_close(buckets, -buckets[::-1], "beta(-r) = -beta(r)")


@derivation(
    "nope-causal-signal",
    title="Causal attention with no position encoding can still output its position",
    statement=(
        r"\begin{gathered} a_{ts} = c \ (s \le t), \quad v_0 = \mu, \ v_s = 0 \ (s \ge 1) \\"
        r" \Longrightarrow\quad o_t = \sum_{s=0}^{t} \operatorname{softmax}_{s \le t}(a_{ts})\, v_s"
        r" = \frac{\mu}{t + 1} \end{gathered}"
    ),
    summary="If a causal head gives every visible key the same score and only the first token (a marker such as a "
            "beginning-of-sequence token) has a non-zero value, the output at position t is the marker's value divided "
            "by t + 1, which differs at every position.",
    assumptions=(
        r"$t \ge 0$ the query position, keys $s = 0, \ldots, t$ visible (causal mask)",
        r"any equal score $c$ for the visible keys, as with zero queries",
        r"$v_s$ the values; the marker at $s = 0$ has value $\mu \ne 0$",
    ),
    steps=(
        r"Equal scores give equal weights: $e^c / \sum_{s=0}^{t} e^c = 1/(t + 1)$ for each of the "
        r"$t + 1$ visible keys.",
        r"Only $v_0$ is non-zero, so $o_t = \mu/(t + 1)$.",
        r"$1/(t + 1) - 1/(t + 2) = 1/((t + 1)(t + 2)) > 0$: the output is strictly monotone in $t$, so later layers "
        r"can read the position from it (Haviv et al., 2022; Kazemnejad et al., 2023).",
    ),
    scope=GENERAL,
)
def prove_nope_causal_signal() -> None:
    query = sp.Symbol("t", integer=True, nonnegative=True)
    key = sp.Symbol("s", integer=True, nonnegative=True)
    score, marker = sp.Symbol("c", real=True), sp.Symbol("mu", real=True)
    weight = sp.exp(score) / sp.Sum(sp.exp(score), (key, 0, query)).doit()
    assert_equal(weight, 1 / (query + 1), "each visible key gets 1/(t + 1)")
    output = sp.Sum(weight * marker * sp.KroneckerDelta(key, 0), (key, 0, query)).doit()
    assert_equal(output, marker / (query + 1), "o_t = mu/(t + 1)")
    gap = sp.factor(1 / (query + 1) - 1 / (query + 2))
    assert_equal(gap, 1 / ((query + 1) * (query + 2)), "1/(t+1) - 1/(t+2)")
    if not gap.is_positive:
        raise ProofFailure("1/(t + 1) is not strictly decreasing")


@numeric_check("nope-causal-signal")
def check_nope_causal_signal(rng: np.random.Generator) -> None:
    length, width = int(rng.integers(1, 200)), int(rng.integers(1, 9))
    marker = rng.standard_normal(width)
    values = np.zeros((length, width))
    values[0] = marker
    scores = np.full((length, length), float(rng.standard_normal()))
    scores[np.triu_indices(length, 1)] = -np.inf  # causal mask
    outputs = softmax(scores) @ values
    assert_close(outputs, marker[None] / (np.arange(length)[:, None] + 1), "o_t = mu/(t + 1)", atol=1e-12)


@derivation(
    "alibi-symmetric",
    title="Symmetric ALiBi depends on |i - j| alone",
    statement=r"b_h(i, j) = -m_h\,|i - j| \quad\Longrightarrow\quad b_h(j, i) = b_h(i, j) = b_h(i + c, j + c)",
    summary="The bidirectional form of ALiBi penalises a key by the slope times its distance from the query, whichever "
            "side it is on, so swapping query and key or shifting both by the same amount leaves the bias unchanged.",
    assumptions=(r"$i, j$ position ids, $c$ any shift", r"$m_h$ head $h$'s slope (any maximum bias)"),
    steps=(
        r"$|j - i| = |-(i - j)| = |i - j|$, so swapping the two ids keeps the bias.",
        r"$|(i + c) - (j + c)| = |i - j|$, so shifting both keeps it: the bias is a function of $|i - j|$ alone.",
        r"On keys $j \le i$, $|i - j| = i - j$ and the bias is causal ALiBi's $-m_h (i - j)$.",
    ),
    scope=GENERAL,
)
def prove_alibi_symmetric() -> None:
    query, key, shift = sp.symbols("i j c", integer=True)
    slope = sp.Symbol("m", positive=True)

    def bias(a: sp.Expr, b: sp.Expr) -> sp.Expr:
        return -slope * sp.Abs(a - b)

    assert_equal(bias(key, query), bias(query, key), "b(j, i) = b(i, j)")
    assert_equal(bias(query + shift, key + shift), bias(query, key), "b(i + c, j + c) = b(i, j)")
    below = sp.Symbol("g", nonnegative=True)  # i - j >= 0
    assert_equal(bias(key + below, key), -slope * below, "b = -m (i - j) for j <= i")


@numeric_check("alibi-symmetric")
def check_alibi_symmetric(rng: np.random.Generator) -> None:
    heads, length = int(rng.integers(1, 17)), int(rng.integers(1, 33))
    max_bias = float(rng.uniform(1, 16))
    ids = np.arange(length)
    start = int(rng.integers(0, 10**6))
    bias = posenc.alibi_symmetric_bias(heads, ids, ids, max_bias=max_bias)
    assert_close(bias, np.swapaxes(bias, 1, 2), "b(j, i) = b(i, j)")
    assert_close(posenc.alibi_symmetric_bias(heads, ids + start, ids + start, max_bias=max_bias), bias, "shifted ids")
    below = ids[:, None] >= ids[None, :]
    causal = posenc.alibi_bias(heads, length, max_bias=max_bias)
    assert_close(bias[:, below], causal[:, below], "causal ALiBi below the diagonal")


@derivation(
    "shaw-clipped-relative",
    title="Shaw's relative vectors depend on the clipped offset alone",
    statement=(
        r"\begin{gathered} e_{ij} = \frac{q_i^\top \big(k_j + a^K_{c(j - i)}\big)}{\sqrt{d}}, \quad"
        r" z_i = \sum_j \alpha_{ij} \big(v_j + a^V_{c(j - i)}\big), \quad c(r) = \max(-k, \min(k, r)) \\"
        r" \Longrightarrow\quad c\big((j + s) - (i + s)\big) = c(j - i), \qquad c(r) = k \ (r \ge k), \quad c(r) = "
        r"-k \ (r \le -k)"
        r" \end{gathered}"
    ),
    summary=(
        "Shaw et al. add to each key and each value a learned vector chosen by the offset j - i clipped to [-k, k]: "
        "shifting both positions selects the same vectors, and every key more than k positions away on one side "
        "shares one vector, so the tables have 2k + 1 rows whatever the length."
    ),
    assumptions=(
        r"$i, j$ integer positions, $s$ any integer shift",
        r"$k \ge 0$ the maximum distance",
        r"$a^K, a^V$ tables of $2k + 1$ learned vectors for offsets $-k, \ldots, k$",
    ),
    steps=(
        r"$(j + s) - (i + s) = j - i$, so the clipped offset, hence the vectors $a^K$ and $a^V$ chosen, are "
        r"unchanged by a common shift.",
        r"For $r = k + e$ with $e \ge 0$: $\min(k, k + e) = k$ and $\max(-k, k) = k$; symmetrically $c(-k - e) = -k$.",
        r"So only the offsets $-k, \ldots, k$ select distinct rows: a query sees at most $2k + 1$ different relative "
        r"vectors, however long the sequence.",
    ),
    scope=GENERAL,
)
def prove_shaw_clipped_relative() -> None:
    query, key, shift = sp.symbols("i j s", integer=True)
    limit = sp.Symbol("k", nonnegative=True, integer=True)
    excess = sp.Symbol("e", nonnegative=True, integer=True)

    def clipped(offset: sp.Expr) -> sp.Expr:
        return sp.Max(-limit, sp.Min(limit, offset))

    assert_equal(clipped((key + shift) - (query + shift)), clipped(key - query), "c((j + s) - (i + s)) = c(j - i)")
    assert_equal(clipped(limit + excess), limit, "c(k + e) = k")
    assert_equal(clipped(-limit - excess), -limit, "c(-k - e) = -k")


@numeric_check("shaw-clipped-relative")
def check_shaw_clipped_relative(rng: np.random.Generator) -> None:
    width, limit, length = random_width(rng), int(rng.integers(0, 6)), int(rng.integers(1, 20))
    ids = int(rng.integers(0, 10**6)) + np.arange(length)
    q, k_rows = rng.standard_normal((length, width)), rng.standard_normal((length, width))
    table = rng.standard_normal((2 * limit + 1, width))
    offset = np.clip(ids[None, :] - ids[:, None], -limit, limit) + limit
    expected = (q @ k_rows.T + np.einsum("id,ijd->ij", q, table[offset])) / np.sqrt(width)
    logits = posenc.shaw_logits(q, k_rows, table, query_ids=ids, key_ids=ids)
    assert_close(logits, expected, "Shaw logits with clipped offsets", atol=1e-9)
    assert_close(logits, posenc.shaw_logits(q, k_rows, table), "the same logits from position 0", atol=1e-9)


def deberta_delta(offset: sp.Expr, span: sp.Expr) -> sp.Expr:
    """DeBERTa's relative index delta of an offset i - j, for tables of 2k rows."""
    return sp.Piecewise((0, offset <= -span), (2 * span - 1, offset >= span), (offset + span, True))


@derivation(
    "deberta-disentangled",
    title="DeBERTa's score is the four-term expansion without its position-to-position term",
    statement=(
        r"\begin{gathered} \tilde A_{ij} = \underbrace{Q^c_i {K^c_j}^\top}_{\text{c2c}}"
        r" + \underbrace{Q^c_i {K^r_{\delta(i,j)}}^\top}_{\text{c2p}} + \underbrace{K^c_j "
        r"{Q^r_{\delta(j,i)}}^\top}_{\text{p2c}} \\"
        r" = \big(Q^c_i + Q^r_{\delta(j,i)}\big)\big(K^c_j + K^r_{\delta(i,j)}\big)^\top - Q^r_{\delta(j,i)} "
        r"{K^r_{\delta(i,j)}}^\top, \\"
        r" \delta(i, j) = \begin{cases} 0 & i - j \le -k \\ 2k - 1 & i - j \ge k \\ i - j + k & \text{otherwise} "
        r"\end{cases} \\"
        r" \Longrightarrow\quad \delta(i + s, j + s) = \delta(i, j) \end{gathered}"
    ),
    summary=(
        "DeBERTa scores content against content, the query's content against the key's relative position (c2p), and "
        "the key's content against the query's relative position (p2c); that is the four-term expansion of content "
        "plus relative position on each side with the position-to-position term left out. The index delta depends on "
        "i - j alone and saturates at distance k."
    ),
    assumptions=(
        r"$Q^c_i, K^c_j$ the content query and key (row vectors)",
        r"$Q^r_m = P_m W_{q,r}$, $K^r_m = P_m W_{k,r}$ from one shared table $P$ of $2k$ relative embeddings",
        r"$k \ge 1$; the scale $1/\sqrt{3d}$ and the mask left out",
    ),
    steps=(
        r"Expand $(Q^c_i + Q^r_{\delta(j,i)})(K^c_j + K^r_{\delta(i,j)})^\top$ into four products: c2c, c2p, "
        r"$Q^r_{\delta(j,i)} {K^c_j}^\top$ and the position-to-position product.",
        r"$Q^r_{\delta(j,i)} {K^c_j}^\top = K^c_j {Q^r_{\delta(j,i)}}^\top$ (a scalar equals its transpose): the "
        r"third product is p2c. Removing the position-to-position product leaves $\tilde A_{ij}$.",
        r"$\delta$ depends on $i$ and $j$ through $i - j$ only, and $(i + s) - (j + s) = i - j$: a common shift "
        r"changes no relative embedding chosen. Offsets beyond $\pm k$ share the first or last row.",
    ),
    scope=GENERAL,
)
def prove_deberta_disentangled() -> None:
    head = sp.Symbol("d", positive=True, integer=True)
    names = ("Q^c_i", "K^c_j", "Q^r_{delta(j,i)}", "K^r_{delta(i,j)}")
    q_c, k_c, q_r, k_r = (sp.MatrixSymbol(name, 1, head) for name in names)
    disentangled = q_c * k_c.T + q_c * k_r.T + (k_c * q_r.T).T  # p2c as a scalar, transposed to a row times column
    full = (q_c + q_r) * (k_c + k_r).T - q_r * k_r.T
    if sp.expand(full - disentangled) != sp.ZeroMatrix(1, 1):
        raise ProofFailure("the expansion without its position-to-position term is not c2c + c2p + p2c")
    query, key, shift = sp.symbols("i j s", integer=True)
    span = sp.Symbol("k", positive=True, integer=True)
    shifted = deberta_delta((query + shift) - (key + shift), span)
    assert_equal(sp.simplify(shifted - deberta_delta(query - key, span)), 0, "delta(i + s, j + s) = delta(i, j)")


@numeric_check("deberta-disentangled")
def check_deberta_disentangled(rng: np.random.Generator) -> None:
    span, head, length = int(rng.integers(1, 9)), int(rng.integers(1, 17)), int(rng.integers(1, 20))
    start = int(rng.integers(0, 10**6))
    ids = np.arange(length)
    delta = np.clip(posenc.deberta_relative_positions(ids, ids), -span, span - 1) + span
    shifted = np.clip(posenc.deberta_relative_positions(ids + start, ids + start), -span, span - 1) + span
    assert_close(shifted, delta, "delta(i + s, j + s) = delta(i, j)")
    q_c, k_c = rng.standard_normal((length, head)), rng.standard_normal((length, head))
    q_r, k_r = rng.standard_normal((2 * span, head)), rng.standard_normal((2 * span, head))
    c2p = np.take_along_axis(q_c @ k_r.T, delta, axis=1)
    p2c = np.take_along_axis(k_c @ q_r.T, delta, axis=1).T  # entry (j, i) of the gather is K^c_j . Q^r_delta(j, i)
    expected = q_c @ k_c.T + c2p + p2c
    full = np.einsum("ijd,ijd->ij", q_c[:, None] + q_r[delta.T], k_c[None] + k_r[delta])
    assert_close(full - np.einsum("ijd,ijd->ij", q_r[delta.T], k_r[delta]), expected, "c2c + c2p + p2c", atol=1e-9)


@derivation(
    "kerple-bias",
    title="Kerple's biases are zero at the query and fall with distance",
    statement=(
        r"\begin{gathered} b_{\text{power}}(i, j) = -r_1 |i - j|^{r_2}, \qquad b_{\text{log}}(i, j) = -r_1 "
        r"\log\big(1 + r_2 |i - j|\big) \\"
        r" \Longrightarrow\quad b(i, i) = 0, \qquad \frac{\partial b}{\partial |i - j|} < 0 \text{ for } |i - j| > 0,"
        r" \qquad b_{\text{power}}\big|_{r_2 = 1} = -r_1 |i - j| \end{gathered}"
    ),
    summary=(
        "Kerple adds to each logit a learned function of the distance alone: a power or a logarithm with two "
        "positive parameters per head. Both vanish at the query itself and decrease strictly with distance; the "
        "power variant with exponent 1 is ALiBi with a learned slope."
    ),
    assumptions=(
        r"$r_1 > 0$ and $r_2 > 0$ per head ($r_2 \le 2$ for the power variant, which the paper requires for its "
        r"kernel argument)",
        r"$|i - j| \ge 0$ the distance",
    ),
    steps=(
        r"At $|i - j| = 0$: $0^{r_2} = 0$ and $\log 1 = 0$.",
        r"With $n = |i - j| > 0$: $\frac{d}{dn}(-r_1 n^{r_2}) = -r_1 r_2 n^{r_2 - 1} < 0$ and $\frac{d}{dn}(-r_1 "
        r"\log(1 + r_2 n)) = -\frac{r_1 r_2}{1 + r_2 n} < 0$.",
        r"At $r_2 = 1$ the power variant is $-r_1 |i - j|$: symmetric ALiBi with slope $r_1$ (`alibi-symmetric`).",
    ),
    scope=GENERAL,
)
def prove_kerple_bias() -> None:
    distance = sp.Symbol("n", positive=True)
    scale, shape = sp.symbols("r_1 r_2", positive=True)
    power, logarithmic = -scale * distance**shape, -scale * sp.log(1 + shape * distance)
    assert_equal(sp.limit(power, distance, 0, "+"), 0, "b_power -> 0 at distance 0")
    assert_equal(logarithmic.subs(distance, 0), 0, "b_log(i, i) = 0")
    for name, bias in (("power", power), ("log", logarithmic)):
        if not sp.diff(bias, distance).is_negative:
            raise ProofFailure(f"the {name} variant does not decrease with distance: {sp.diff(bias, distance)}")
    assert_equal(power.subs(shape, 1), -scale * distance, "r_2 = 1 gives -r_1 n")


@numeric_check("kerple-bias")
def check_kerple_bias(rng: np.random.Generator) -> None:
    heads, length = int(rng.integers(1, 9)), int(rng.integers(2, 40))
    ids = int(rng.integers(0, 10**5)) + np.arange(length)
    r1, r2 = rng.uniform(0.01, 3, heads), rng.uniform(0.01, 2, heads)
    for variant in posenc.relative.KERPLE_VARIANTS:
        bias = posenc.kerple_bias(ids, ids, r1, r2, variant=variant)
        assert_close(np.diagonal(bias, axis1=1, axis2=2), np.zeros((heads, length)), f"{variant}: zero on the diagonal")
        if np.any(np.diff(bias[:, -1, ::-1], axis=-1) >= 0):  # the last query, keys ever further back
            raise ProofFailure(f"posenc's {variant} Kerple bias does not fall with distance")
    ones = np.ones(heads)
    assert_close(posenc.kerple_bias(ids, ids, r1, ones), -r1[:, None, None] * np.abs(ids[:, None] - ids[None, :]),
                 "r_2 = 1 is ALiBi with slope r_1")


@derivation(
    "fire-input-range",
    title="FIRE's normalised distance lies in [0, 1] at every length",
    statement=(
        r"\begin{gathered} b(i, j) = f_\theta\!\left(\frac{\psi(i - j)}{\psi(\max(L, i))}\right), \quad "
        r"\psi(x) = \log(1 + c\,x) \\"
        r" \Longrightarrow\quad 0 \le \frac{\psi(i - j)}{\psi(\max(L, i))} \le 1 \quad (0 \le j \le i) \end{gathered}"
    ),
    summary=(
        "FIRE feeds a learned MLP f with the distance i - j, compressed by psi and divided by psi of the query "
        "position (or of the threshold L while the query is earlier): however far the query is, the MLP only ever "
        "sees inputs between 0 and 1, the interval it was trained on."
    ),
    assumptions=(
        r"$c > 0$ and $L > 0$ (learned in FIRE)",
        r"causal keys $0 \le j \le i$",
        r"$f_\theta$ any function (an MLP, one output per head)",
    ),
    steps=(
        r"$\psi(0) = 0$ and $\psi'(x) = c/(1 + c x) > 0$ for $x \ge 0$: $\psi$ is non-negative and increasing.",
        r"$0 \le i - j \le i \le \max(L, i)$, so $0 \le \psi(i - j) \le \psi(\max(L, i))$, and $\psi(\max(L, i)) \ge "
        r"\psi(L) > 0$.",
        r"Dividing gives a ratio in $[0, 1]$; it equals 1 for the first key $j = 0$ of any query $i \ge L$.",
    ),
    scope=GENERAL,
)
def prove_fire_input_range() -> None:
    compress, threshold = sp.Symbol("c", positive=True), sp.Symbol("L", positive=True)
    distance, gap = sp.Symbol("n", nonnegative=True), sp.Symbol("e", nonnegative=True)

    def psi(x: sp.Expr) -> sp.Expr:
        return sp.log(1 + compress * x)

    assert_equal(psi(0), 0, "psi(0) = 0")
    if not sp.diff(psi(distance), distance).is_positive:
        raise ProofFailure("psi is not increasing")
    # normaliser argument M = n + e >= n: psi(M) - psi(n) = log((1 + cM) / (1 + cn)) with a ratio >= 1
    ratio_excess = sp.simplify((1 + compress * (distance + gap)) / (1 + compress * distance) - 1)
    if not ratio_excess.is_nonnegative:
        raise ProofFailure(f"(1 + cM)/(1 + cn) - 1 = {ratio_excess} is not shown non-negative")
    if not psi(threshold).is_positive:
        raise ProofFailure("psi(L) is not positive")
    query = threshold + gap  # a query past the threshold: its first key has distance i
    assert_equal(psi(query) / psi(query), 1, "the first key of a query i >= L maps to 1")


@numeric_check("fire-input-range")
def check_fire_input_range(rng: np.random.Generator) -> None:
    hidden, heads = int(rng.integers(1, 9)), int(rng.integers(1, 5))
    length, threshold, c = int(rng.integers(1, 300)), float(rng.uniform(1, 100)), float(rng.uniform(0.01, 5))
    ids = np.arange(length)
    identity = ([1.0], [0.0], [[1.0]], [0.0])  # f(x) = max(x, 0): the bias is the MLP's input
    inputs = posenc.fire_bias(ids, ids, *identity, c=c, threshold=threshold)[0]
    causal = ids[:, None] >= ids[None, :]
    if np.any(inputs[causal] < 0) or np.any(inputs[causal] > 1 + 1e-12):
        raise ProofFailure("a causal FIRE input lies outside [0, 1]")
    late = ids >= threshold
    assert_close(inputs[late, 0], np.ones(int(late.sum())), "the first key of a query past L maps to 1", atol=1e-12)
    w1, b1 = rng.standard_normal(hidden), rng.standard_normal(hidden)
    w2, b2 = rng.standard_normal((heads, hidden)), rng.standard_normal(heads)
    mlp = np.maximum(inputs[..., None] * w1 + b1, 0.0) @ w2.T + b2
    assert_close(posenc.fire_bias(ids, ids, w1, b1, w2, b2, c=c, threshold=threshold), np.moveaxis(mlp, -1, 0),
                 "f applied to the normalised distance", atol=1e-9)


@derivation(
    "cope-positions",
    title="CoPE's contextual positions count gates and fall with the key index",
    statement=(
        r"\begin{gathered} g_{ij} = \sigma(q_i^\top k_j), \qquad p_{ij} = \sum_{t=j}^{i} g_{it}, \\"
        r" a_{ij} = q_i^\top\big(k_j + e[p_{ij}]\big) \\"
        r" \Longrightarrow\quad p_{ij} - p_{i,j+1} = g_{ij} \in (0, 1), \qquad 0 < p_{ij} < i - j + 1, \\"
        r" g \equiv 1 \Rightarrow p_{ij} = i - j + 1 \end{gathered}"
    ),
    summary=(
        "CoPE counts, from the query back to each key, how many tokens its gates open; the count drops by one gate "
        "per step to the right, stays between 0 and the token distance plus one, and equals the token distance plus "
        "one when every gate is open. The position embedding e at a fractional p is interpolated between its two "
        "integer neighbours."
    ),
    assumptions=(
        r"causal keys $0 \le j \le i$",
        r"$\sigma(x) = 1/(1 + e^{-x})$ the logistic function",
        r"$e[p] = (p - \lfloor p \rfloor)\, e[\lceil p \rceil] + (1 - p + \lfloor p \rfloor)\, e[\lfloor p \rfloor]$ "
        r"for fractional $p$",
    ),
    steps=(
        r"$\sum_{t=j}^{i} g_{it} = g_{ij} + \sum_{t=j+1}^{i} g_{it}$, so $p_{ij} - p_{i,j+1} = g_{ij}$ (with "
        r"$p_{i,i+1} = 0$).",
        r"$\sigma(x) > 0$ and $1 - \sigma(x) = e^{-x}/(1 + e^{-x}) > 0$: each gate is in $(0, 1)$, so the sum of the "
        r"$i - j + 1$ gates lies strictly between 0 and $i - j + 1$.",
        r"With every gate equal to 1, $p_{ij} = \sum_{t=j}^{i} 1 = i - j + 1$: token counting, a relative position.",
    ),
    scope=GENERAL,
)
def prove_cope_positions() -> None:
    query, key, step = sp.symbols("i j t", integer=True)
    gate = sp.Function("g")
    first = sp.Sum(gate(step), (step, key, key))  # the term t = j alone
    assert_equal(first.doit(), gate(key), "the sum over t = j is g_ij")
    split = first + sp.Sum(gate(step), (step, key + 1, query))
    assert_equal(sp.simplify(split - sp.Sum(gate(step), (step, key, query))), 0, "p_ij = g_ij + p_i,j+1")
    logit = sp.Symbol("x", real=True)
    sigmoid = 1 / (1 + sp.exp(-logit))
    if not (sigmoid.is_positive and sp.simplify(1 - sigmoid).is_positive):
        raise ProofFailure("the logistic gate is not in (0, 1)")
    assert_equal(sp.Sum(1, (step, key, query)).doit(), query - key + 1, "all gates 1: p_ij = i - j + 1")


@numeric_check("cope-positions")
def check_cope_positions(rng: np.random.Generator) -> None:
    length, width = int(rng.integers(1, 30)), int(rng.integers(1, 9))
    logits = rng.normal(scale=3.0, size=(length, length))
    p = posenc.cope_positions(logits)
    gates = 1.0 / (1.0 + np.exp(-logits))
    i, j = np.indices((length, length))
    causal = i >= j
    next_key = np.concatenate([p[:, 1:], np.zeros((length, 1))], axis=1)
    assert_close((p - next_key)[causal], gates[causal], "p_ij - p_i,j+1 = g_ij", atol=1e-12)
    if np.any(p[causal] <= 0) or np.any(p[causal] >= (i - j + 1)[causal]):
        raise ProofFailure("a CoPE position lies outside (0, i - j + 1)")
    open_gates = posenc.cope_positions(np.full((length, length), 60.0))
    assert_close(open_gates[causal], (i - j + 1)[causal], "open gates count tokens", atol=1e-12)
    q, table = rng.standard_normal((length, width)), rng.standard_normal((length + 1, width))
    floor = np.floor(p).astype(int)
    weight = p - floor
    interpolated = weight[..., None] * table[np.minimum(floor + 1, length)] + (1 - weight[..., None]) * table[floor]
    expected = np.einsum("id,ijd->ij", q, interpolated)
    assert_close(posenc.cope_logits(q, p, table), expected, "interpolated position term", atol=1e-9)


# Long context (posenc.long_context): which pairs outgrow the training length, YaRN's ramp,
# re-rotating cached keys, xPos and the entropy of attention.


training_length = sp.Symbol("L", positive=True)


def wavelength_minus_exponential(critical: sp.Expr) -> sp.Expr:
    """``lambda_r - L exp(2 ln b (r - critical) / d)``, logs expanded: zero exactly at the true r_c."""
    wavelength = 2 * sp.pi / omega(r, d)
    as_exponential = training_length * sp.exp(2 * sp.log(base) / d * (r - critical))
    return sp.expand_log(sp.powsimp(sp.expand(wavelength - as_exponential), force=True), force=True).rewrite(sp.exp)


@derivation(
    "critical-dimension",
    title="The pairs whose wavelength exceeds the training length lie past one index",
    statement=(
        r"\lambda_r = 2\pi\, b^{2r/d} > L \iff r > r_c, \qquad r_c = \frac{d}{2}\,\frac{\ln(L/2\pi)}{\ln b}"
    ),
    summary="Pair r's wavelength exceeds the training length L exactly when r is past r_c = (d/2) ln(L/2 pi) / ln b; "
            "those pairs never complete a turn in training. r_c is the critical dimension of Liu et al. (2023), "
            "who count it in channels and round up, 2 ceil(r_c).",
    assumptions=(r"$b > 1$ the base", r"$d$ even, $0 \le r < d/2$", r"$L > 0$ the training length"),
    steps=(
        r"Pair $r$ turns at $\theta_r = b^{-2r/d}$ radians per position, so its wavelength is "
        r"$\lambda_r = 2\pi/\theta_r = 2\pi\,b^{2r/d}$.",
        r"With $r_c$ as stated, $\lambda_r = L\,\exp\!\big(\tfrac{2\ln b}{d}\,(r - r_c)\big)$.",
        r"Since $\ln b > 0$ and $d > 0$, the exponential exceeds 1 exactly when $r > r_c$, so "
        r"$\lambda_r > L \iff r > r_c$.",
    ),
    scope=GENERAL,
)
def prove_critical_dimension() -> None:
    critical = d / 2 * sp.log(training_length / (2 * sp.pi)) / sp.log(base)
    assert_equal(wavelength_minus_exponential(critical), 0, "lambda_r = L exp(2 ln b (r - r_c) / d)")
    assert_equal((2 * sp.pi / omega(r, d)).subs(r, critical), training_length, "the wavelength at r_c is L")
    # b > 1 written as 1 + epsilon: the exponent's coefficient is positive, so exp(...) > 1 iff r > r_c.
    epsilon = sp.Symbol("epsilon", positive=True)
    if not (2 * sp.log(1 + epsilon) / d).is_positive:
        raise ProofFailure("2 ln b / d is not positive for b > 1")


@numeric_check("critical-dimension")
def check_critical_dimension(rng: np.random.Generator) -> None:
    width = random_width(rng)
    base_value = float(rng.choice([10000.0, 500000.0, 1e6]))
    length = int(rng.integers(16, 2**17))
    r_c = posenc.critical_dimension(width, length, base=base_value)
    longer = posenc.wavelengths(width, base=base_value) > length
    assert_close(longer, np.arange(width // 2) > r_c, "lambda_r > L exactly past r_c", atol=0)


@derivation(
    "yarn-ramp-ends",
    title="YaRN's blend is no scaling at one end of its ramp and position interpolation at the other",
    statement=(
        r"\theta'_r = (1 - \gamma_r)\,\frac{\theta_r}{s} + \gamma_r\,\theta_r,"
        r"\qquad \gamma_r = 1 \Rightarrow \theta'_r = \theta_r,"
        r" \quad \gamma_r = 0 \Rightarrow \theta'_r = \frac{\theta_r}{s}"
    ),
    summary="YaRN gives pair r the frequency (1 - gamma_r) theta_r / s + gamma_r theta_r; where its ramp gamma_r is 1 "
            "the pair keeps its frequency, where it is 0 the pair is divided by s exactly as "
            "in position interpolation.",
    assumptions=(
        r"$\theta_r > 0$ pair $r$'s frequency",
        r"$s > 0$ the scale",
        r"$\gamma_r \in [0, 1]$ the ramp (transformers' weight $w_r$ of the divided frequency is $1 - \gamma_r$)",
    ),
    steps=(
        r"At $\gamma_r = 1$ the first term vanishes and $\theta'_r = \theta_r$: the fast pairs, which turn many times "
        r"within the training length, are not scaled.",
        r"At $\gamma_r = 0$ the second term vanishes and $\theta'_r = \theta_r/s$: the slow pairs are interpolated "
        r"exactly as in position interpolation.",
        r"Transformers writes the same blend as $\tfrac{\theta_r}{s}(1 - e_r) + \theta_r e_r$ with "
        r"$e_r = 1 - w_r = \gamma_r$.",
    ),
    scope=GENERAL,
)
def prove_yarn_ramp_ends() -> None:
    frequency, scale = sp.symbols("theta_r s", positive=True)
    ramp = sp.Symbol("gamma_r", real=True)
    blended = (1 - ramp) * frequency / scale + ramp * frequency
    assert_equal(blended.subs(ramp, 1), frequency, "gamma_r = 1 keeps theta_r")
    assert_equal(blended.subs(ramp, 0), frequency / scale, "gamma_r = 0 divides theta_r by s")
    weight = sp.Symbol("w_r", real=True)
    keep = 1 - weight
    transformers_form = frequency / scale * (1 - keep) + frequency * keep
    assert_equal(transformers_form, blended.subs(ramp, 1 - weight), "transformers' blend with e_r = 1 - w_r")


@numeric_check("yarn-ramp-ends")
def check_yarn_ramp_ends(rng: np.random.Generator) -> None:
    width = random_width(rng) + 16
    scale = float(rng.uniform(1.5, 32))
    original = int(rng.choice([2048, 4096, 8192]))
    weight = posenc.yarn_ramp(width, original_max_position_embeddings=original)
    theta = posenc.rope_frequencies(width)
    scaled, _ = posenc.yarn_frequencies(width, factor=scale, original_max_position_embeddings=original)
    assert_close(scaled, (1 - (1 - weight)) * theta / scale + (1 - weight) * theta, "the blend with gamma = "
                                                                                    "1 - w", atol=1e-15)
    assert_close(scaled[weight == 0], theta[weight == 0], "gamma = 1: unchanged", atol=0)
    assert_close(scaled[weight == 1], theta[weight == 1] / scale, "gamma = 0: divided by s", atol=1e-15)


@derivation(
    "rope-rerotation",
    title="Re-rotating a cached key by an offset is rotating it at the moved position",
    statement=r"R_\Theta(\delta)\,\big(R_\Theta(p)\,k\big) = R_\Theta(p + \delta)\,k",
    summary="A key stored already rotated at position p and then rotated by delta is exactly the key rotated at p + "
            "delta, so a cache can move its keys without keeping them unrotated.",
    assumptions=(
        r"$p, \delta$ real",
        r"$\theta_r = b^{-2r/d} > 0$",
        r"$k \in \mathbb{R}^d$, $R_\Theta(p) = \operatorname{diag}\big(R(p\theta_0), \ldots, R(p\theta_{d/2-1})\big)$",
    ),
    steps=(
        r"For one pair, $R(\delta\theta_r)R(p\theta_r) = R((p + \delta)\theta_r)$: rotations of the plane "
        r"add their angles.",
        r"$R(-\phi)^\top = R(\phi)$, so this is $R(-\delta\theta_r)^\top R(p\theta_r) = R((p + \delta)\theta_r)$, the "
        r"form SymPy carries from $n$ pairs to $n + 1$ (block-diagonal matrices multiply block by block), so "
        r"$R_\Theta(\delta)R_\Theta(p) = R_\Theta(p + \delta)$ at every even width.",
        r"Matrix products associate: "
        r"$R_\Theta(\delta)(R_\Theta(p)k) = (R_\Theta(\delta)R_\Theta(p))k = R_\Theta(p + \delta)k$.",
    ),
    scope=GENERAL,
)
def prove_rope_rerotation() -> None:
    position, offset, angle = sp.symbols("p delta phi", real=True)
    assert_equal(rotation(-angle).T, rotation(angle), "R(-phi)^T = R(phi)")
    blocks_multiply_pairwise(
        lambda q: rotation(-offset * omega(q, d)),
        lambda q: rotation(position * omega(q, d)),
        lambda q: rotation((position + offset) * omega(q, d)),
        "R(-delta theta_r)^T R(p theta_r) = R((p + delta) theta_r)",
    )
    width = sp.Symbol("d", positive=True, integer=True)
    key = sp.MatrixSymbol("k", width, 1)
    by_offset, at_p, moved = (sp.MatrixSymbol(name, width, width) for name in ("R_delta", "R_p", "R_p_delta"))
    if (by_offset * (at_p * key)).subs(by_offset * at_p, moved) != moved * key:
        raise ProofFailure("R_delta (R_p k) does not associate to (R_delta R_p) k")


@numeric_check("rope-rerotation")
def check_rope_rerotation(rng: np.random.Generator) -> None:
    width = random_width(rng)
    keys = random_vectors(rng, 4, width)
    positions = rng.integers(0, 2**40, size=4)
    offset = int(rng.integers(-(2**39), 2**39))
    moved = posenc.rerotate_keys(posenc.rope(keys, positions), offset)
    assert_close(moved, posenc.rope(keys, positions + offset), "re-rotated keys = keys rotated at "
                                                               "p + delta", atol=1e-13)


@derivation(
    "xpos-relative",
    title="xPos keeps the attention score a function of the offset",
    statement=(
        r"\big(\zeta_r^{m/B} R(m\theta_r)\,q\big)^\top \big(\zeta_r^{-n/B} R(n\theta_r)\,k\big)"
        r" = \zeta_r^{(m - n)/B}\; q^\top R\big((n - m)\theta_r\big)\,k"
    ),
    summary="xPos scales a rotated query at m by zeta_r^(m/B) and a rotated key at n by zeta_r^(-n/B); each pair's "
            "score is RoPE's times zeta_r^((m - n)/B), so the whole score still depends on m - n only.",
    assumptions=(
        r"$m, n$ real positions",
        r"$\zeta_r > 0$ pair $r$'s decay base, $B > 0$ the scale base",
        r"$\theta_r = b^{-2r/d} > 0$",
        r"$q, k \in \mathbb{R}^2$ per pair",
    ),
    steps=(
        r"The scalars come out of the dot product: "
        r"$\zeta_r^{m/B}\zeta_r^{-n/B} = \zeta_r^{(m - n)/B}$ since $\zeta_r > 0$.",
        r"What remains is RoPE's pair score, "
        r"$(R(m\theta_r)q)^\top R(n\theta_r)k = q^\top R((n - m)\theta_r)\,k$, as for RoPE without xPos.",
        r"Writing $m = n + \Delta$ removes $n$ from the right side: each pair's score, and so their sum over the $d/2$ "
        r"pairs (which SymPy carries from $n$ pairs to $n + 1$), depends on $\Delta = m - n$ alone.",
    ),
    scope=GENERAL,
)
def prove_xpos_relative() -> None:
    m, n, gap = sp.symbols("m n Delta", real=True)
    decay, scale_base = sp.symbols("zeta_r B", positive=True)
    q_pair = sp.Matrix(sp.symbols("q_a q_b", real=True))
    k_pair = sp.Matrix(sp.symbols("k_a k_b", real=True))
    frequency = omega(r, d)
    query = decay ** (m / scale_base) * rotation(m * frequency) * q_pair
    key = decay ** (-n / scale_base) * rotation(n * frequency) * k_pair
    summand = (query.T * key)[0, 0]
    value = decay ** ((m - n) / scale_base) * (q_pair.T * rotation((n - m) * frequency) * k_pair)[0, 0]
    stacking_rules()
    lemma = sp.powsimp(angle_sum(for_pair_r(summand - value, "xPos pair score")), force=True)
    assert_equal(lemma, 0, "xPos pair score = zeta^((m - n)/B) q^T R((n - m) theta) k, for a symbolic pair index r")
    if sp.expand(value.subs(m, n + gap)).has(n):
        raise ProofFailure("the xPos pair score depends on n beyond m - n")


@numeric_check("xpos-relative")
def check_xpos_relative(rng: np.random.Generator) -> None:
    width = random_width(rng)
    query, key = random_vectors(rng, 2, width)
    m, n, c = (int(value) for value in rng.integers(0, 2000, size=3))

    def score(query_position: int, key_position: int) -> float:
        rotated_query = posenc.apply_xpos(query[None, :], [query_position])[0]
        rotated_key = posenc.apply_xpos(key[None, :], [key_position], keys=True)[0]
        return float(rotated_query @ rotated_key)

    assert_close(score(m, n), score(m + c, n + c), "shifting both positions keeps the xPos score", atol=1e-8)


@derivation(
    "entropy-equal-scores",
    title="Attention over n equal scores has entropy ln n",
    statement=r"p_i = \frac{e^{c}}{\sum_{j=1}^{n} e^{c}} = \frac{1}{n}, \qquad H = -\sum_{i=1}^{n} p_i \ln p_i = \ln n",
    summary="When all n scores are equal the softmax is uniform and its entropy is ln n, which grows without "
            "bound as the window lengthens.",
    assumptions=(r"$n \ge 1$ keys", r"$c$ real, the common score"),
    steps=(
        r"The denominator is $n$ copies of $e^c$, so every weight is $e^c/(n e^c) = 1/n$.",
        r"$H = -\sum_{i=1}^{n} \tfrac1n \ln\tfrac1n = -\ln\tfrac1n = \ln n$.",
    ),
    scope=GENERAL,
)
def prove_entropy_equal_scores() -> None:
    count = sp.Symbol("n", positive=True, integer=True)
    index, other = sp.symbols("i j", positive=True, integer=True)
    score = sp.Symbol("c", real=True)
    weight = sp.exp(score) / sp.Sum(sp.exp(score), (other, 1, count)).doit()
    assert_equal(weight, 1 / count, "p_i = 1/n")
    entropy = -sp.Sum(weight * sp.log(weight), (index, 1, count)).doit()
    assert_equal(sp.expand_log(entropy, force=True), sp.log(count), "H = ln n")


@numeric_check("entropy-equal-scores")
def check_entropy_equal_scores(rng: np.random.Generator) -> None:
    count = int(rng.integers(1, 100000))
    common = float(rng.normal() * 10)
    assert_close(posenc.attention_entropy(np.full(count, common)), np.log(count), "entropy of equal scores", atol=1e-10)
    assert_close(softmax(np.full(count, common)), np.full(count, 1 / count), "uniform weights", atol=1e-15)
