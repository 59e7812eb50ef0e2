"""RoPE: scores that depend on the offset alone, norms kept, the two layouts, the link to the
sinusoidal shift, and the scaled frequencies of position interpolation and NTK.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import sympy as sp

import posenc

from ..registry import GENERAL, ProofFailure, assert_close, assert_equal, derivation, numeric_check
from .common import (
    blocks_multiply_pairwise,
    d,
    kernel_sum,
    linear_parts,
    omega,
    r,
    random_vectors,
    random_width,
    rotation,
    sum_over_pairs,
)


@derivation(
    "rope-relative",
    title="RoPE scores depend only on the offset between query and key",
    statement=(
        r"\begin{aligned} \big(R(m\theta)\,q\big)^\top \big(R(n\theta)\,k\big)"
        r" &= q^\top R\big((n - m)\theta\big)\,k, \\ "
        r"\big(R_\Theta(m)\,q\big)^\top \big(R_\Theta(n)\,k\big) &= q^\top R_\Theta(n - m)\,k, \end{aligned}"
        r" \qquad\allowbreak \begin{aligned} R(\phi) &= \begin{pmatrix}\cos\phi & -\sin\phi\\ "
        r"\sin\phi & \cos\phi\end{pmatrix}, \\ "
        r"R_\Theta(m) &= \operatorname{diag}\big(R(m\theta_0), \ldots, R(m\theta_{d/2-1})\big) \end{aligned}"
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
                raise ProofFailure(
                    f"{channel.__name__}: member {a} of pair r and member {b} of pair s can share a channel"
                )
    assert_equal(sp.Sum(2, (r, 0, half - 1)).doit(), d, "d/2 pairs of two members fill the d channels")


@derivation(
    "rope-layout-permutation",
    title="The halves and interleaved RoPE layouts differ by a fixed channel permutation",
    statement=(
        r"\begin{gathered} R^{\mathrm{halves}}_\Theta(m) = \Pi^\top R^{\mathrm{inter}}_\Theta(m)\,\Pi, \\ "
        r"(\Pi x)_{2r} = x_r, \quad (\Pi x)_{2r+1} = x_{r + d/2}, \\ "
        r"\big(R^{\mathrm{halves}}_\Theta(m)\,q\big)^\top \big(R^{\mathrm{halves}}_\Theta(n)\,k\big) \\ "
        r"= \big(R^{\mathrm{inter}}_\Theta(m)\,\Pi q\big)^\top \big(R^{\mathrm{inter}}_\Theta(n)\,\Pi k\big)"
        r" \end{gathered}"
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
        raise ProofFailure(
            f"sum over k of delta(k, c) delta(k, e) is {overlap}, not delta(c, e), so Pi is not orthogonal"
        )

    # Both layouts hold delta_rs R(m theta_r)[a, b] where member a of pair r meets member b of pair s.
    m = sp.Symbol("m", real=True)
    for a in (0, 1):
        for b in (0, 1):
            block_entry = sp.KroneckerDelta(r, other_pair) * rotation(m * omega(r, d))[a, b]
            moved_from = interleaved_channel(r, a), interleaved_channel(other_pair, b)  # pi of the halves channels
            moved = conjugated.subs({image_i: moved_from[0], image_j: moved_from[1]})
            moved = moved.xreplace({entry(*moved_from): block_entry})
            if at_most(half - 1, moved - block_entry, r, other_pair) != 0:
                raise ProofFailure(
                    f"(Pi^T R_inter Pi) differs from R_halves where member {a} of pair r "
                    f"meets member {b} of pair s: {moved}"
                )

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
        r"q = k = (c, c, \ldots, c),\ c \in \mathbb{R}^2"
        r" \qquad\allowbreak \Longrightarrow\; \big(R_\Theta(m)\,q\big)^\top \big(R_\Theta(n)\,k\big)"
        r" = \lVert c \rVert^2\, K(m - n)"
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
    score = sum_over_pairs(
        pair_score, c.dot(c) * sp.cos((n - m) * omega(r, d)), "pair r scores |c|^2 cos((n - m) theta_r)"
    )
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
    "rope-position-interpolation",
    title="Position interpolation is RoPE with every frequency divided by the scale",
    statement=(
        r"R_\Theta\!\left(m\,\frac{L}{L'}\right) = R_{\Theta/s}(m),"
        r" \qquad\allowbreak s = \frac{L'}{L},\quad \Theta/s = (\theta_0/s, \ldots, \theta_{d/2-1}/s)"
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
    assert_equal(
        rotation(m * trained / target * frequency), rotation(m * (frequency / scale)), "R(m L/L' theta) = R(m theta/s)"
    )


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
        r"b' = b\,s^{d/(d-2)}"
        r" \qquad\allowbreak \Longrightarrow\; \theta'_r"
        r" = \theta_r\, s^{-2r/(d-2)},\qquad\allowbreak \theta'_0 = \theta_0, \quad \theta'_{d/2-1}"
        r" = \frac{\theta_{d/2-1}}{s}"
    ),
    summary=r"Raising the RoPE base to $b\,s^{d/(d-2)}$ (NTK-aware scaling, proposed by bloc97, Bowen Peng, and "
    r"defined formally in the YaRN paper, of which he is the first author) leaves pair $0$ unchanged, divides the "
    r"last pair's frequency by exactly $s$, and slows the pairs between geometrically.",
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
