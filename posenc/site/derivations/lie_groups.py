"""Rotations from Lie groups (posenc.lie_groups): RoPE's block as the exponential of a 2x2
generator, commuting generators give relative scores and relative scores at every real position
need commuting generators, and STRING's commuting generators are RoPE's in a rotated basis.

The general proofs work with SymPy's noncommutative symbols (matrices of any size whose products
keep their order) and with the power series or the matrix ODE of the exponential; only the
2x2 block of RoPE is an explicit matrix.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

import posenc

from ..registry import GENERAL, ProofFailure, assert_close, assert_equal, derivation, numeric_check
from .common import rotation, stacking_rules

#: RoPE's 2x2 generator: exp(phi J) turns a pair by phi.
J_BLOCK = sp.Matrix([[0, -1], [1, 0]])
phase = sp.Symbol("phi", real=True)
power = sp.Symbol("n", integer=True, nonnegative=True)
half_power = sp.Symbol("m", integer=True, nonnegative=True)
time = sp.Symbol("t", real=True)


def apply_until_fixed(expression: sp.Expr, rules: list[tuple[sp.Expr, sp.Expr]]) -> sp.Expr:
    """``expression`` with every rule ``a -> b`` (products of noncommuting factors) applied until none changes it."""
    while True:
        rewritten = sp.expand(expression)
        for pattern, replacement in rules:
            rewritten = sp.expand(rewritten.subs(pattern, replacement))
        if rewritten == expression:
            return rewritten
        expression = rewritten


def flow(name: str) -> sp.Expr:
    """``exp(t X)`` for a noncommuting X, as an unknown noncommuting function of t."""
    return sp.Function(name, commutative=False)(time)


def commutes_with_powers(first: sp.Expr, second: sp.Expr) -> None:
    """If B A = A B, then B A^n = A^n B for every n >= 0 (induction), hence B commutes with exp(t A)."""
    hypothesis = first**power * second  # A^n B, what B A^n is assumed to equal
    step = sp.powsimp(apply_until_fixed(second * first**power * first, [(second * first**power, hypothesis)]))
    step = sp.powsimp(apply_until_fixed(step, [(second * first, first * second)]))
    if step != first ** (power + 1) * second:
        raise ProofFailure(f"B A^(n+1) = {step}, not A^(n+1) B")


def product_of_flows_is_constant(generators: list[sp.Expr], what: str) -> None:
    """d/dt [exp(-t sum X) prod_j exp(t X_j)] = 0 when the X_j commute with each other's flows.

    Each flow satisfies d/dt exp(t X) = X exp(t X); a generator may move left past any flow of
    a generator it commutes with (`commutes_with_powers`, term by term of the series).
    """
    names = [f"E_{index}" for index, _ in enumerate(generators)]
    flows = [flow(name) for name in names]
    total = sp.Add(*generators)
    inverse = flow("E_minus")
    product = sp.Mul(inverse, *flows)
    rules = {sp.Derivative(inverse, time): -total * inverse}
    rules.update({sp.Derivative(f, time): x * f for f, x in zip(flows, generators, strict=True)})
    derivative = sp.expand(sp.diff(product, time).subs(rules))
    moves = [(inverse * x, x * inverse) for x in generators]
    moves += [(f * x, x * f) for f in flows for x in generators]
    if apply_until_fixed(derivative, moves) != 0:
        raise ProofFailure(f"{what}: the derivative of the product is not zero")


@derivation(
    "lie-block-exponential",
    title="RoPE's 2x2 rotation is the exponential of a multiple of J",
    statement=(
        r"e^{\phi J} = \begin{pmatrix}\cos\phi & -\sin\phi\\ \sin\phi & \cos\phi\end{pmatrix}, \qquad\allowbreak"
        r" J = \begin{pmatrix}0 & -1\\ 1 & 0\end{pmatrix}, \ \phi = p\,\theta"
    ),
    summary=r"The exponential of $p\theta J$ is the rotation of a pair by $p\theta$, so RoPE's block for pair $r$ "
    r"at position $p$ is $\exp(p\,\theta_r J)$.",
    assumptions=(r"$\phi = p\theta$ real", r"$e^{X} = \sum_{n \ge 0} X^n / n!$"),
    steps=(
        r"$J^2 = -I$, so by induction $J^{2m} = (-1)^m I$ and $J^{2m+1} = (-1)^m J$ for every $m \ge 0$.",
        r"Splitting the series into even and odd powers gives $e^{\phi J} = \big(\sum_m (-1)^m \phi^{2m}/(2m)!\big) I"
        r" + \big(\sum_m (-1)^m \phi^{2m+1}/(2m+1)!\big) J = \cos\phi\, I + \sin\phi\, J$.",
        r"SymPy proves the induction step for a symbolic $m$, sums both series in closed form and checks "
        r"$\cos\phi\, I + \sin\phi\, J$ against the rotation; it also checks that the rotation solves "
        r"$\tfrac{d}{dp} R = \theta J R$ with $R(0) = I$.",
    ),
    scope=GENERAL,
)
def prove_lie_block_exponential() -> None:
    identity = sp.eye(2)
    assert_equal(J_BLOCK * J_BLOCK, -identity, "J^2 = -I")
    even = (-1) ** half_power * identity  # J^(2m), the hypothesis
    assert_equal(even * J_BLOCK * J_BLOCK, (-1) ** (half_power + 1) * identity, "J^(2m+2) = (-1)^(m+1) I")
    assert_equal(even * J_BLOCK, (-1) ** half_power * J_BLOCK, "J^(2m+1) = (-1)^m J")
    cosine = sp.Sum(
        (-1) ** half_power * phase ** (2 * half_power) / sp.factorial(2 * half_power), (half_power, 0, sp.oo)
    )
    sine = sp.Sum(
        (-1) ** half_power * phase ** (2 * half_power + 1) / sp.factorial(2 * half_power + 1), (half_power, 0, sp.oo)
    )
    if sp.simplify(cosine.doit() - sp.cos(phase)) != 0 or sp.simplify(sine.doit() - sp.sin(phase)) != 0:
        raise ProofFailure("the even and odd parts of the series are not cos and sin")
    assert_equal(sp.cos(phase) * identity + sp.sin(phase) * J_BLOCK, rotation(phase), "cos I + sin J = R(phi)")
    position, frequency = sp.symbols("p theta", real=True)
    turning = rotation(position * frequency)
    assert_equal(turning.diff(position), frequency * J_BLOCK * turning, "d/dp R(p theta) = theta J R(p theta)")
    assert_equal(turning.subs(position, 0), identity, "R(0) = I")


@numeric_check("lie-block-exponential")
def check_lie_block_exponential(rng: np.random.Generator) -> None:
    generator = np.array([[0.0, -1.0], [1.0, 0.0]])
    for _ in range(6):
        position, frequency = float(rng.uniform(-100, 100)), float(rng.uniform(0, 2))
        angle = position * frequency
        expected = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        got = posenc.lie_rotation([frequency * generator], [[position]])[0]
        assert_close(got, expected, "lie_rotation(theta J, p) = R(p theta)", atol=1e-11)
    pair = rng.standard_normal(2)
    step = int(rng.integers(0, 1000))
    assert_close(
        posenc.lie_rotation(posenc.rope_generators(2), [[float(step)]])[0] @ pair,
        posenc.rope(pair[None, :], [step])[0],
        "one pair of RoPE is exp(p theta_0 J)",
        atol=1e-11,
    )


@derivation(
    "lie-commuting-relative",
    title="Commuting skew-symmetric generators make every score depend on the offset alone",
    statement=(
        r"R(p) = \exp\Big(\sum_k p_k L_k\Big), \qquad\allowbreak L_k^\top = -L_k, \ L_k L_l = L_l L_k"
        r" \qquad\allowbreak \Longrightarrow\ R(p)^\top R(q) = R(q - p)"
    ),
    summary=r"When the generators are skew-symmetric and commute, $R(p)^\top R(q) = R(q - p)$, so the score "
    r"$(R(p)\,x)^\top (R(q)\,y) = x^\top R(q - p)\, y$ depends on the positions only through $q - p$.",
    assumptions=(
        r"$L_1, \ldots, L_k$ real skew-symmetric $d \times d$ matrices that commute pairwise, any $d$ and $k$",
        r"$p, q \in \mathbb{R}^k$; $e^{X} = \sum_{n \ge 0} X^n / n!$, which converges for every matrix",
    ),
    steps=(
        r"$(X^n)^\top = (X^\top)^n$ term by term, so $\exp(X)^\top = \exp(X^\top)$; with $A(p) = \sum_k p_k L_k$ "
        r"skew, $R(p)^\top = \exp(-A(p))$.",
        r"$A(p)$ and $A(q)$ commute because the $L_k$ do. If $BA = AB$ then $BA^n = A^nB$ (induction), so $B$ "
        r"commutes with $e^{tA}$, term by term.",
        r"For commuting $X$, $Y$: $F(t) = e^{-t(X+Y)} e^{tX} e^{tY}$ has $F' = 0$ (each factor obeys "
        r"$\tfrac{d}{dt}e^{tX} = X e^{tX}$ and the generators move past the flows), so $F(t) = F(0) = I$; the same "
        r"with $Y = 0$ gives $e^{-tX}e^{tX} = I$. Hence $e^{X}e^{Y} = e^{X+Y}$.",
        r"So $R(p)^\top R(q) = e^{-A(p)} e^{A(q)} = e^{A(q) - A(p)} = e^{A(q - p)} = R(q - p)$, $A$ being linear.",
        r"SymPy proves the transpose and power steps, the induction and $F' = 0$ with noncommuting symbols, which "
        r"stand for matrices of any size.",
    ),
    scope=GENERAL,
)
def prove_lie_commuting_relative() -> None:
    width = sp.Symbol("d", positive=True, integer=True)
    square = sp.MatrixSymbol("X", width, width)
    transposed_step = sp.transpose(square**power * square)
    if transposed_step != sp.transpose(square) * sp.transpose(square**power):
        raise ProofFailure(f"(X^n X)^T = {transposed_step}, not X^T (X^n)^T")
    first, second = sp.symbols("X Y", commutative=False)
    commutes_with_powers(first, second)
    product_of_flows_is_constant([first, second], "exp(-t(X+Y)) exp(tX) exp(tY)")
    product_of_flows_is_constant([first], "exp(-tX) exp(tX)")
    # A(p) = sum_k p_k L_k is linear: A(q) - A(p) = A(q - p), coordinate by coordinate.
    p_k, q_k = sp.symbols("p_k q_k", real=True)
    generator = sp.Symbol("L_k", commutative=False)
    if sp.expand(q_k * generator - p_k * generator - (q_k - p_k) * generator) != 0:
        raise ProofFailure("A(q) - A(p) is not A(q - p)")


@numeric_check("lie-commuting-relative")
def check_lie_commuting_relative(rng: np.random.Generator) -> None:
    width = 2 * int(rng.integers(2, 6))
    basis = np.linalg.qr(rng.standard_normal((width, width)))[0]
    for generators in (posenc.rope_generators(width, base=100.0), posenc.string_generators(basis, base=100.0)):
        p, q = rng.uniform(-50, 50, size=(2, 1))
        at_p, at_q, offset = posenc.lie_rotation(generators, np.stack([p, q, q - p]))
        assert_close(at_p.T @ at_q, offset, "R(p)^T R(q) = R(q - p)", atol=1e-10)
        assert_close(posenc.relativity_error(generators, rng.uniform(-9, 9, size=(4, 1))), 0.0, "no error", atol=1e-10)
    if 4 * (width // 4) == width:
        axial = posenc.string_generators(basis, axes=2)
        p, q = rng.uniform(-5, 5, size=(2, 2))
        at_p, at_q, offset = posenc.lie_rotation(axial, np.stack([p, q, q - p]))
        assert_close(at_p.T @ at_q, offset, "R(p)^T R(q) = R(q - p) on a 2-D grid", atol=1e-10)


@derivation(
    "lie-relative-needs-commuting",
    title="Scores that depend only on the offset at every real position need commuting generators",
    statement=(
        r"R(p)^\top R(q) = R(q - p) \ \ \forall p, q \in \mathbb{R}^k"
        r" \qquad\allowbreak \Longrightarrow\ L_k L_l = L_l L_k \ \ \forall k, l"
    ),
    summary=r"Conversely, if $R(p)^\top R(q)$ is a function of $q - p$ for every pair of real positions, the "
    r"generators commute: non-commuting generators make some score, at some real positions, depend on more than "
    r"the offset. The proof differentiates at position 0, so it says nothing about positions confined to a grid. "
    r"ComRoPE (Yu et al., 2025) states this converse with the direction of `lie-commuting-relative` as one "
    r"equivalence, and STRING's universality result (Schenck et al., 2025) contains it.",
    assumptions=(
        r"$R(p) = \exp\big(\sum_k p_k L_k\big)$ with real $d \times d$ generators, any $d$ and $k$",
        r"$R(p)^\top R(q) = G(q - p)$ for some function $G$ and all $p, q \in \mathbb{R}^k$",
    ),
    steps=(
        r"$R(0) = e^0 = I$, so $p = q$ gives $G(0) = I$ and $p = 0$ gives $G = R$: $R(p)^\top R(q) = R(q - p)$; "
        r"with $q = 0$, $R(p)^\top = R(-p)$.",
        r"Then $R(p)R(q) = R(-p)^\top R(q) = R(q + p)$: $R$ turns sums into products, and as $p + q = q + p$, "
        r"$R(p)R(q) = R(q)R(p)$.",
        r"Take $p = s e_k$, $q = t e_l$: $e^{sL_k} e^{tL_l} = e^{tL_l} e^{sL_k}$ for all real $s, t$. "
        r"Differentiating once in $s$ and once in $t$ at $0$ gives $L_k L_l = L_l L_k$; this step needs the "
        r"identity for every real $s, t$ near $0$, which positions on a grid do not give.",
        r"SymPy checks the algebra with noncommuting symbols and the mixed derivative with flows obeying "
        r"$\tfrac{d}{ds} e^{sL} = L e^{sL}$, $e^{0} = I$.",
    ),
    scope=GENERAL,
)
def prove_lie_relative_needs_commuting() -> None:
    relative = sp.Function("R", commutative=False)
    transpose = sp.Function("T", commutative=False)  # T(M) stands for M^T
    p, q = sp.symbols("p q", real=True)
    # R(p)^T R(q) = R(q - p), applied at (-p, q) with R(-p)^T = R(p) (its case q = 0, transposed).
    product = relative(p) * relative(q)
    rewritten = product.subs(relative(p), transpose(relative(-p)))
    if rewritten.subs(transpose(relative(-p)) * relative(q), relative(q - (-p))) != relative(p + q):
        raise ProofFailure("R(p) R(q) is not R(p + q)")
    if relative(p + q) != relative(q + p):
        raise ProofFailure("R(p + q) is not R(q + p)")
    s, t = sp.symbols("s t", real=True)
    first, second = sp.symbols("L_k L_l", commutative=False)
    along_k, along_l = sp.Function("E_k", commutative=False)(s), sp.Function("E_l", commutative=False)(t)
    rules = {sp.Derivative(along_k, s): first * along_k, sp.Derivative(along_l, t): second * along_l}
    mixed = sp.diff(along_k * along_l, s, t).subs(rules)
    reversed_mixed = sp.diff(along_l * along_k, s, t).subs(rules)
    at_zero = {along_k: 1, along_l: 1}
    if sp.expand(mixed.subs(at_zero)) != first * second or sp.expand(reversed_mixed.subs(at_zero)) != second * first:
        raise ProofFailure("the mixed derivatives at 0 are not L_k L_l and L_l L_k")


@numeric_check("lie-relative-needs-commuting")
def check_lie_relative_needs_commuting(rng: np.random.Generator) -> None:
    generators = posenc.liere_generators(6, 2, seed=int(rng.integers(0, 2**31)), scale=0.5)
    if posenc.commutator_norm(generators) < 1e-3:
        raise ProofFailure("random dense generators should not commute")
    positions = rng.uniform(-2, 2, size=(5, 2))
    if posenc.relativity_error(generators, positions) < 1e-6:
        raise ProofFailure("non-commuting generators gave offset-only scores at random positions")
    # The mixed derivative of exp(s L_0) exp(t L_1) at 0, by central differences, is L_0 L_1.
    h = 1e-4
    corners = [[a * h, 0.0] for a in (1, -1)], [[0.0, b * h] for b in (1, -1)]
    along_0 = posenc.lie_rotation(generators, corners[0])
    along_1 = posenc.lie_rotation(generators, corners[1])
    mixed = (along_0[0] - along_0[1]) @ (along_1[0] - along_1[1]) / (4 * h * h)
    assert_close(mixed, generators[0] @ generators[1], "d2/ds dt exp(s L_0) exp(t L_1) at 0", atol=1e-6)


@derivation(
    "string-is-rotated-rope",
    title="STRING: commuting generators are RoPE's in a rotated basis",
    statement=(
        r"Q_k = P^\top L_k P, \ P^\top P = I \qquad\allowbreak \Longrightarrow\ Q_k Q_l = Q_l Q_k,"
        r" \qquad\allowbreak \exp\Big(\sum_k p_k Q_k\Big) = P^\top R_{\mathrm{rope}}(p)\, P"
    ),
    summary=r"Conjugating RoPE's block-diagonal generators by any orthogonal $P$ keeps them skew-symmetric and "
    r"commuting, and the rotation they generate is RoPE's seen in the basis $P$. The converse, that every commuting "
    r"family of real skew-symmetric matrices is of this form for some $P$ and some block frequencies, is the "
    r"spectral theorem for commuting normal matrices; it is cited and checked numerically, not proved here.",
    assumptions=(
        r"$L_k$: block-diagonal with $2 \times 2$ blocks $c_{k,r} J$ (RoPE's generators; any real $c_{k,r}$), "
        r"any even width",
        r"$P$ real orthogonal, $P^\top P = P P^\top = I$; $R_{\mathrm{rope}}(p) = \exp(\sum_k p_k L_k)$",
    ),
    steps=(
        r"Block-diagonal matrices multiply block by block and $(xJ)(yJ) = xy J^2 = (yJ)(xJ)$, so the $L_k$ commute "
        r"at every width.",
        r"$(P^\top A P)(P^\top B P) = P^\top A B P$, so conjugates of commuting matrices commute, and by induction "
        r"$(P^\top A P)^n = P^\top A^n P$; summing the series, $\exp(P^\top A P) = P^\top e^{A} P$ with "
        r"$A = \sum_k p_k L_k$.",
        r"$(P^\top L P)^\top = P^\top L^\top P = -P^\top L P$: the conjugates are skew-symmetric.",
        r"SymPy proves each identity with noncommuting symbols for $P$, $P^\top$ and the generators (any size), "
        r"and the block lemma for symbolic coefficients; the numeric check recovers a basis $P$ from random "
        r"commuting generators, as the spectral theorem promises.",
    ),
    scope=GENERAL,
)
def prove_string_is_rotated_rope() -> None:
    stacking_rules()  # block-diagonal matrices multiply block by block, at any number of pairs
    x, y = sp.symbols("x y", real=True)
    assert_equal((x * J_BLOCK) * (y * J_BLOCK), (y * J_BLOCK) * (x * J_BLOCK), "(xJ)(yJ) = (yJ)(xJ)")
    basis, transposed = sp.symbols("P P^T", commutative=False)
    first, second = sp.symbols("A B", commutative=False)
    orthogonal = [(basis * transposed, 1)]
    left = apply_until_fixed(transposed * first * basis * transposed * second * basis, orthogonal)
    right = apply_until_fixed(transposed * second * basis * transposed * first * basis, orthogonal)
    if sp.expand(left - right).subs(first * second, second * first) != 0:
        raise ProofFailure("conjugates of commuting matrices do not commute")
    step = apply_until_fixed(transposed * first**power * basis * transposed * first * basis, orthogonal)
    if sp.powsimp(step) != transposed * first ** (power + 1) * basis:
        raise ProofFailure(f"(P^T A P)^(n+1) = {step}, not P^T A^(n+1) P")
    width = sp.Symbol("d", positive=True, integer=True)
    matrix_p, matrix_l = sp.MatrixSymbol("P", width, width), sp.MatrixSymbol("L", width, width)
    conjugate_t = sp.transpose(matrix_p.T * matrix_l * matrix_p)
    if conjugate_t != matrix_p.T * matrix_l.T * matrix_p:
        raise ProofFailure(f"(P^T L P)^T = {conjugate_t}, not P^T L^T P")


@numeric_check("string-is-rotated-rope")
def check_string_is_rotated_rope(rng: np.random.Generator) -> None:
    width = 4 * int(rng.integers(1, 4))
    basis = np.linalg.qr(rng.standard_normal((width, width)))[0]
    generators = posenc.string_generators(basis, axes=2, base=10.0)
    assert_close(posenc.commutator_norm(generators), 0.0, "STRING's generators commute", atol=1e-12)
    positions = rng.uniform(-10, 10, size=(3, 2))
    rope = posenc.lie_rotation(posenc.rope_generators(width, axes=2, base=10.0), positions)
    assert_close(posenc.lie_rotation(generators, positions), basis.T @ rope @ basis, "P^T R_rope P", atol=1e-11)
    # The converse, numerically: a generic combination M of the commuting generators is normal; the real and
    # imaginary parts of the eigenvectors of i M for its positive eigenvalues span invariant planes, and in that
    # orthonormal basis every generator is block diagonal with 2x2 blocks.
    combination = np.tensordot(rng.standard_normal(2), generators, axes=1)
    values, vectors = np.linalg.eigh(1j * combination)
    planes = [np.sqrt(2) * part for v in vectors[:, values > 1e-9].T for part in (v.real, v.imag)]
    recovered = np.array(planes).T
    assert_close(recovered.T @ recovered, np.eye(width), "the recovered basis is orthonormal", atol=1e-8)
    mask = np.kron(np.eye(width // 2), np.ones((2, 2))) == 0
    for generator in generators:
        in_basis = recovered.T @ generator @ recovered
        assert_close(in_basis[mask], np.zeros(int(mask.sum())), "off the 2x2 blocks", atol=1e-8)


# ComRoPE: block-diagonal generators with blocks of any size b, at any number of blocks.
block_size = sp.Symbol("b", positive=True, integer=True)
block_count = sp.Symbol("n", positive=True, integer=True)


def block_diagonals_commute_blockwise() -> None:
    """Block-diagonal matrices whose blocks commute pairwise commute, at any number of b x b blocks.

    Induction over the number of blocks, b symbolic: with A, C the parts on the first n blocks
    and P, Q block n, diag(A, P) diag(C, Q) = diag(AC, PQ); if AC = CA (the hypothesis) and
    PQ = QP (the lemma at block n), the product in the other order is the same. Transposes are
    taken block by block, so skew-symmetric blocks give a skew-symmetric matrix.
    """
    size = block_count * block_size
    first_a, first_c = sp.MatrixSymbol("A", size, size), sp.MatrixSymbol("C", size, size)
    next_p, next_q = sp.MatrixSymbol("P", block_size, block_size), sp.MatrixSymbol("Q", block_size, block_size)
    forward = sp.block_collapse(sp.BlockDiagMatrix(first_a, next_p) * sp.BlockDiagMatrix(first_c, next_q))
    backward = sp.block_collapse(sp.BlockDiagMatrix(first_c, next_q) * sp.BlockDiagMatrix(first_a, next_p))
    if not isinstance(forward, sp.BlockDiagMatrix) or forward.diag != (first_a * first_c, next_p * next_q):
        raise ProofFailure(f"block-diagonal matrices do not multiply block by block: {forward}")
    if not isinstance(backward, sp.BlockDiagMatrix) or backward.diag != (first_c * first_a, next_q * next_p):
        raise ProofFailure(f"block-diagonal matrices do not multiply block by block: {backward}")
    hypothesis = {first_c * first_a: first_a * first_c, next_q * next_p: next_p * next_q}
    if tuple(block.xreplace(hypothesis) for block in backward.diag) != forward.diag:
        raise ProofFailure("commuting blocks do not give commuting block-diagonal matrices")
    transposed = sp.block_collapse(sp.BlockDiagMatrix(first_a, next_p).T)
    if not isinstance(transposed, sp.BlockDiagMatrix) or transposed.diag != (first_a.T, next_p.T):
        raise ProofFailure(f"a block-diagonal matrix is not transposed block by block: {transposed}")


def trained_block_is_skew() -> sp.MatrixExpr:
    """``S = P - P^T`` for a b x b matrix P of any size: ``S^T = -S``; returns S."""
    trained = sp.MatrixSymbol("P", block_size, block_size)
    skew = trained - trained.T
    if sp.simplify(skew.T + skew) != sp.ZeroMatrix(block_size, block_size):
        raise ProofFailure(f"(P - P^T)^T + (P - P^T) = {sp.simplify(skew.T + skew)}, not 0")
    return skew


@derivation(
    "comrope-ap-commute",
    title="ComRoPE-AP: axes that own disjoint blocks have commuting generators",
    statement=(
        r"L_i = \operatorname{diag}(B_{i1}, \ldots, B_{im}), \qquad\allowbreak"
        r" B_{ij} = \begin{cases} P_j - P_j^\top & j \equiv i \pmod N \\ 0 & \text{otherwise} \end{cases}"
        r" \qquad\allowbreak \Longrightarrow\ L_i^\top = -L_i, \ L_i L_k = L_k L_i"
    ),
    summary=r"ComRoPE-AP gives each block of $b$ channels to one axis, $j \bmod N$; a generator is zero on the "
    r"blocks of every other axis, so two generators of different axes multiply to zero in either order. They "
    r"are skew-symmetric and commute, so the scores are relative (`lie-commuting-relative`).",
    assumptions=(
        r"$P_1, \ldots, P_m$ real $b \times b$ matrices, any block size $b$ and any number of blocks $m$",
        r"$N$ axes with $m$ a multiple of $N$; block $j$ belongs to the one axis $i$ with $j \equiv i \pmod N$",
    ),
    steps=(
        r"$(P_j - P_j^\top)^\top = P_j^\top - P_j$, so every block, and with it every generator, is skew-symmetric "
        r"(a block-diagonal matrix is transposed block by block).",
        r"Block-diagonal matrices multiply block by block, so $L_i L_k = \operatorname{diag}(B_{ij} B_{kj})$ and "
        r"$L_k L_i = \operatorname{diag}(B_{kj} B_{ij})$: they are equal when every pair of blocks commutes.",
        r"For $i \ne k$ block $j$ has one owner, so $B_{ij}$ or $B_{kj}$ is $0$ and both products are $0$; for "
        r"$i = k$ a block commutes with itself.",
        r"SymPy proves the block lemmas for $b \times b$ matrix symbols with $b$ symbolic, and the step from $n$ "
        r"blocks to $n + 1$ for a symbolic $n$.",
    ),
    scope=GENERAL,
)
def prove_comrope_ap_commute() -> None:
    block_diagonals_commute_blockwise()
    skew = trained_block_is_skew()
    zero = sp.ZeroMatrix(block_size, block_size)
    other = sp.MatrixSymbol("S_k", block_size, block_size)
    # Block j of axes i != k: owned by i, by k or by neither; the product is zero in both orders.
    for mine, theirs in ((skew, zero), (zero, other), (zero, zero)):
        for product in (mine * theirs, theirs * mine):
            if sp.simplify(product) != zero:
                raise ProofFailure(f"a block product with a zero block is {product}, not 0")
    if sp.expand(skew * skew - skew * skew) != zero:
        raise ProofFailure("a block does not commute with itself")


@numeric_check("comrope-ap-commute")
def check_comrope_ap_commute(rng: np.random.Generator) -> None:
    axes = int(rng.integers(1, 4))
    size = int(rng.integers(1, 5))
    count = axes * int(rng.integers(1, 4))
    matrices = rng.standard_normal((count, size, size))
    generators = posenc.comrope_ap_generators(matrices, axes=axes)
    assert_close(generators, -generators.transpose(0, 2, 1), "L_i^T = -L_i", atol=0.0)
    for i in range(axes):
        for k in range(axes):
            if i != k:
                assert_close(generators[i] @ generators[k], np.zeros_like(generators[i]), "L_i L_k = 0", atol=0.0)
    positions = rng.uniform(-5, 5, size=(4, axes))
    assert_close(posenc.relativity_error(generators, positions), 0.0, "relative scores", atol=1e-10)


@derivation(
    "comrope-ld-commute",
    title="ComRoPE-LD: multiples of one block per block commute",
    statement=(
        r"L_i = \operatorname{diag}\big(\theta_{i1} (P_1 - P_1^\top), \ldots, \theta_{im} (P_m - P_m^\top)\big)"
        r" \qquad\allowbreak \Longrightarrow\ L_i^\top = -L_i, \ L_i L_k = L_k L_i"
    ),
    summary=r"ComRoPE-LD gives every axis the same blocks $P_j - P_j^\top$, each scaled by a multiplier of its "
    r"own. Within a block two axes' generators are multiples of one matrix, so they commute; the generators are "
    r"skew-symmetric and commute, so the scores are relative (`lie-commuting-relative`).",
    assumptions=(
        r"$P_1, \ldots, P_m$ real $b \times b$ matrices, any block size $b$ and any number of blocks $m$",
        r"real multipliers $\theta_{ij}$, one per axis $i$ and block $j$, any number of axes",
    ),
    steps=(
        r"$\big(\theta (P - P^\top)\big)^\top = \theta (P^\top - P)$: every block, hence every generator, is "
        r"skew-symmetric.",
        r"With $S_j = P_j - P_j^\top$, $(\theta_{ij} S_j)(\theta_{kj} S_j) = \theta_{ij}\theta_{kj} S_j^2 = "
        r"(\theta_{kj} S_j)(\theta_{ij} S_j)$, because scalars commute with matrices.",
        r"Block-diagonal matrices multiply block by block, so blocks that commute pairwise give commuting "
        r"generators.",
        r"SymPy proves the product with a noncommuting symbol for $S_j$ (a matrix of any size) and commuting "
        r"multipliers, and the block-by-block step from $n$ blocks to $n + 1$ with $n$ and $b$ symbolic.",
    ),
    scope=GENERAL,
)
def prove_comrope_ld_commute() -> None:
    block_diagonals_commute_blockwise()
    skew = trained_block_is_skew()
    multiplier = sp.Symbol("theta", real=True)
    if sp.expand((multiplier * skew).T + multiplier * skew) != sp.ZeroMatrix(block_size, block_size):
        raise ProofFailure("theta (P - P^T) is not skew-symmetric")
    shared = sp.Symbol("S_j", commutative=False)
    theta_i, theta_k = sp.symbols("theta_ij theta_kj", real=True)
    if sp.expand((theta_i * shared) * (theta_k * shared) - (theta_k * shared) * (theta_i * shared)) != 0:
        raise ProofFailure("multiples of one matrix do not commute")


@numeric_check("comrope-ld-commute")
def check_comrope_ld_commute(rng: np.random.Generator) -> None:
    axes = int(rng.integers(1, 4))
    size = int(rng.integers(1, 5))
    count = int(rng.integers(1, 5))
    generators = posenc.comrope_ld_generators(
        rng.standard_normal((count, size, size)), rng.standard_normal((axes, count))
    )
    assert_close(generators, -generators.transpose(0, 2, 1), "L_i^T = -L_i", atol=0.0)
    assert_close(posenc.commutator_norm(generators), 0.0, "the generators commute", atol=1e-12)
    positions = rng.uniform(-5, 5, size=(4, axes))
    assert_close(posenc.relativity_error(generators, positions), 0.0, "relative scores", atol=1e-10)
