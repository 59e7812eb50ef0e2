"""The sinusoidal encoding: pair norms, wavelengths, the shift operator, the kernel and distance,
and what happens to positions inside attention (posenc.encodings).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

import posenc

from ..registry import GENERAL, ProofFailure, assert_close, assert_equal, derivation, numeric_check
from .common import (
    angle_sum,
    base,
    blocks_act_pairwise,
    d,
    delta,
    k,
    kernel_sum,
    linear_parts,
    omega,
    pair,
    r,
    random_vectors,
    random_width,
    rotation,
    s,
    shift_block,
    stacking_rules,
    sum_over_pairs,
    t,
    theta,
)


@derivation(
    "pair-norm",
    title="Every pair has unit norm, so every position vector has the same length",
    statement=(
        r"\sin^2(t\,\omega_r) + \cos^2(t\,\omega_r) = 1"
        r" \qquad\allowbreak \Longrightarrow\quad \lVert P(t) \rVert^2 = \frac{d}{2}"
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
        r"\lambda_r = \frac{2\pi}{\omega_r} = 2\pi\, b^{2r/d},"
        r" \qquad\allowbreak \frac{\lambda_{r+1}}{\lambda_r} = b^{2/d} > 1,"
        r" \qquad\allowbreak \lambda_0 = 2\pi, \quad \lambda_{d/2-1} = 2\pi\, b^{(d-2)/d}"
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
        r"\cos\theta = \sin\Big(\theta + \frac{\pi}{2}\Big), \qquad\allowbreak \sin(\pi - \theta) = \sin\theta"
        r" \qquad\allowbreak \text{while}\quad \cos(\pi - \theta) = -\cos\theta"
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
        r"M \begin{pmatrix}\sin\theta\\ \cos\theta\end{pmatrix} = \begin{pmatrix}\sin(\theta + \delta)\\ "
        r"\cos(\theta + \delta)\end{pmatrix} \text{ at } \theta = 0 \text{ and } \theta = \tfrac{\pi}{2}"
        r" \qquad\allowbreak \Longleftrightarrow\quad M = \begin{pmatrix}\cos\delta & \sin\delta\\ "
        r"-\sin\delta & \cos\delta\end{pmatrix}"
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
        r"S_\omega(k) = \begin{pmatrix}\cos k\omega & \sin k\omega\\ "
        r"-\sin k\omega & \cos k\omega\end{pmatrix}:"
        r" \qquad\allowbreak S_\omega(k) \begin{pmatrix}\sin\theta\\ "
        r"\cos\theta\end{pmatrix} = \begin{pmatrix}\sin(\theta + k\omega)\\ "
        r"\cos(\theta + k\omega)\end{pmatrix} \quad\text{for every } \theta"
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
        r"S_\omega(a)\,S_\omega(b) = S_\omega(a + b), \qquad\allowbreak S_\omega(0) = I,"
        r" \qquad\allowbreak S_\omega(-k) = S_\omega(k)^{-1} = S_\omega(k)^\top,"
        r" \qquad\allowbreak \det S_\omega(k) = 1"
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
        r" \qquad\allowbreak T_k = \operatorname{diag}\big(S_{\omega_0}(k), \ldots, S_{\omega_{d/2-1}}(k)\big)"
        r" \qquad\allowbreak \text{does not depend on } t"
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
    blocks_act_pairwise(
        block, lambda q: pair(t * omega(q, d)), lambda q: pair((t + k) * omega(q, d)), "P(t + k) = T_k P(t)"
    )


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
        r"\begin{aligned} \lVert P(t) - P(s) \rVert^2 &= d - 2K(t - s) \\ "
        r"&= 4 \sum_{r=0}^{d/2-1} \sin^2\Big(\frac{\omega_r (t - s)}{2}\Big) \end{aligned}"
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
    statement=(
        r"K(-\Delta) = K(\Delta), \qquad\allowbreak K(0) = \frac{d}{2},"
        r" \qquad\allowbreak \lvert K(\Delta) \rvert \le \frac{d}{2}"
    ),
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
        r" \qquad\allowbreak \text{which is } \tfrac{1}{4} \text{ at } L = 5 \text{ and } \tfrac{1}{8}"
        r" \text{ at } L = 9"
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
        r"\begin{aligned} q_t^\top k_s &= (E_t + P_t)^\top A\,(E_s + P_s), \quad A = W_Q W_K^\top \\ "
        r"&= E_t^\top A E_s + E_t^\top A P_s \\ &\quad + P_t^\top A E_s + P_t^\top A P_s \end{aligned}"
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
        r"A = e_0 e_0^\top: \quad P(t)^\top A\,P(s) = \sin t\,\sin s,"
        r" \qquad\allowbreak 0 \text{ at } (t, s) = (0, 1),"
        r" \qquad\allowbreak \sin 1 \sin 2 \approx 0.7651 \text{ at } (t, s) = (1, 2)"
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
        r"W_Q \in \mathbb{R}^{d \times d_k}:\ d\,d_k \text{ weights for } E_t + P_t,"
        r" \qquad\allowbreak W_Q' \in \mathbb{R}^{2d \times d_k}:\ 2\,d\,d_k"
        r" \text{ weights for } \begin{pmatrix} E_t \\ "
        r"P_t \end{pmatrix}"
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
    statement=r"(E_t + v) + (P_t - v) = E_t + P_t \qquad\allowbreak \text{for every } v \in \mathbb{R}^d",
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
        r"\frac{\partial}{\partial x}\big(x + F(x)\big) = I + J_F(x),"
        r" \qquad\allowbreak F(x) = -x \;\Longrightarrow\; x + F(x) = 0"
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
        moved: np.ndarray = point + np.tanh(weights @ point)
        return moved

    step = 1e-6
    columns = [(block(x + step * unit) - block(x - step * unit)) / (2 * step) for unit in np.eye(width)]
    jacobian_f = (1 - np.tanh(weights @ x) ** 2)[:, None] * weights
    assert_close(np.stack(columns, axis=1), np.eye(width) + jacobian_f, "finite differences = I + J_F", atol=1e-7)
    assert_close(x + (-x), np.zeros(width), "F(x) = -x cancels the input")
