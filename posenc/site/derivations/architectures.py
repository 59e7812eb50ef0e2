"""Today's models (posenc.architectures): proportional RoPE as partial RoPE in disguise, why
multi-head latent attention cannot absorb its key projection once RoPE sits between, its decoupled
score and cache, Llama 4's temperature steps and the quantity that bounds RoPE's base.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

import posenc

from ..registry import GENERAL, ProofFailure, assert_close, assert_equal, derivation, numeric_check
from .common import (
    base,
    blocks_multiply_pairwise,
    d,
    kernel_sum,
    omega,
    r,
    random_vectors,
    random_width,
    rotation,
    stacked_pairs,
    stacking_rules,
)

# RoPE's score identity R_Theta(m)^T R_Theta(n) = R_Theta(n - m), used by the MLA entries.
m_position, n_position = sp.symbols("m n", real=True)


def rope_blocks_are_relative() -> None:
    """Prove R_Theta(m)^T R_Theta(n) = R_Theta(n - m) at every even width (as `rope-relative` does)."""
    blocks_multiply_pairwise(
        lambda q: rotation(m_position * omega(q, d)),
        lambda q: rotation(n_position * omega(q, d)),
        lambda q: rotation((n_position - m_position) * omega(q, d)),
        "R(m theta_r)^T R(n theta_r) = R((n - m) theta_r)",
    )


# ---------------------------------------------------------------------------------------
# Proportional RoPE

rotated_pairs = sp.Symbol("a", positive=True, integer=True)


def tiles_channels(intervals: list[tuple[sp.Expr, sp.Expr]], what: str) -> None:
    """Consecutive intervals [first, last] of integers (some may be empty) that cover 0 .. d - 1 exactly once."""
    expected_first = sp.Integer(0)
    for first, last in intervals:
        if sp.simplify(first - expected_first) != 0:
            raise ProofFailure(f"{what}: an interval starts at {first}, not right after the previous one")
        expected_first = last + 1
    if sp.simplify(expected_first - d) != 0:
        raise ProofFailure(f"{what}: the intervals end at {expected_first - 1}, not at d - 1")


@derivation(
    "proportional-rope-is-partial-rope",
    title="Proportional RoPE is partial RoPE with a smaller base, up to a channel permutation",
    statement=(
        r"\theta_r = \begin{cases} b^{-2r/D}, & r < a \\ 0, & a \le r < D/2 \end{cases}, \quad a = \lfloor pD/2 \rfloor"
        r" \qquad\allowbreak R^{\mathrm{prop}}_\Theta(m) = \Pi^\top \big(R^{2a}_{b'}(m) \oplus I_{D - 2a}\big)\,\Pi,"
        r" \qquad\allowbreak b' = b^{2a/D}, \ \text{so } b' = b^p \text{ when } pD = 2a"
    ),
    summary=r"Proportional RoPE (transformers' \"proportional\" type, Gemma 4's global layers) keeps the full-width "
    r"frequencies $b^{-2r/D}$ on its first $a$ pairs and gives the others frequency $0$. It is partial RoPE on "
    r"$2a$ channels with base $b^{2a/D}$, which is $b^p$ when $pD = 2a$, once the channels are permuted; the "
    r"pairs of frequency $0$ are the channels partial RoPE passes through.",
    assumptions=(
        r"$D$ the even head width, $p \in (0, 1]$ the fraction, $b > 0$ the base, $m$ a real position",
        r"$a = \lfloor pD/2 \rfloor \ge 1$ with $pD$ the float64 product (so $p = 30/44$ at $D = 44$ gives "
        r"$a = 14$: the product rounds just below 30)",
        r"proportional RoPE pairs channel $r$ with $r + D/2$ over the whole head, a pair of frequency $0$ "
        r"included",
        r"$R^{2a}_{b'}(m)$: partial RoPE's rotation of the first $2a$ channels in the halves layout (channel $r$ "
        r"with $r + a$) at frequencies $b'^{-2r/(2a)}$; $I_{D - 2a}$ passes the rest through",
    ),
    steps=(
        r"For $r < a$, $b'^{-2r/(2a)} = (b^{2a/D})^{-r/a} = b^{-2r/D}$: the rotated pairs turn at the same "
        r"frequencies. When $pD = 2a$ exactly, $b^{2a/D} = b^p$ and partial RoPE's width $\mathrm{int}(pD)$ is $2a$.",
        r"A pair of frequency $0$ is rotated by $R(0) = I$ at every position: it is left as it is.",
        r"Member $\alpha \in \{0, 1\}$ of pair $r$ sits in channel $r + \alpha D/2$ in proportional RoPE, and in "
        r"channel $r + \alpha a$ ($r < a$) or $r + a + \alpha(D/2 - a)$ ($r \ge a$) in partial RoPE. In each "
        r"layout the four groups ($\alpha$, rotated or not) are shifts of an interval and fill consecutive intervals "
        r"that tile $0, \ldots, D - 1$, so $\Pi$, moving each proportional channel to the partial one of the same "
        r"member, is a permutation.",
        r"Indexed by (pair, member), both matrices hold $\delta_{rs} R(m\theta_r)_{\alpha\beta}$: by definition for "
        r"the rotated pairs, and for the others because $I_{D-2a}$ holds $\delta_{rs}\delta_{\alpha\beta}$ = "
        r"$\delta_{rs} R(0)_{\alpha\beta}$. As in `rope-layout-permutation`, entry $(i, j)$ of $\Pi^\top M\,\Pi$ "
        r"is $M_{\pi(i)\pi(j)}$, which gives the displayed identity.",
        r"SymPy proves the frequencies and the tiling for symbolic $D$, $a$ and $b$, and the entry rule over a "
        r"symbolic number of channels.",
    ),
    scope=GENERAL,
)
def prove_proportional_rope_is_partial_rope() -> None:
    width, position = d, sp.Symbol("m", real=True)
    partial_base = base ** (2 * rotated_pairs / width)
    assert_equal(
        partial_base ** (-2 * r / (2 * rotated_pairs)), omega(r, width), "b'^(-2r/(2a)) = b^(-2r/D) for b' = b^(2a/D)"
    )
    fraction = sp.Symbol("p", positive=True)
    if partial_base.subs(rotated_pairs, fraction * width / 2) != base**fraction:
        raise ProofFailure("b^(2a/D) is not b^p when pD = 2a")
    assert_equal(rotation(position * 0), sp.eye(2), "a pair of frequency 0 is left as it is")

    half = width / 2
    rotated, unrotated = (sp.Integer(0), rotated_pairs - 1), (rotated_pairs, half - 1)

    def shifted(pairs: tuple[sp.Expr, sp.Expr], by: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
        return pairs[0] + by, pairs[1] + by

    # Proportional RoPE: member alpha of pair r in channel r + alpha D/2.
    tiles_channels(
        [shifted(rotated, 0), shifted(unrotated, 0), shifted(rotated, half), shifted(unrotated, half)],
        "proportional RoPE's channels",
    )
    # Partial RoPE: rotated pairs at r + alpha a, the rest passed through at r + a + alpha (D/2 - a).
    tiles_channels(
        [
            shifted(rotated, 0),
            shifted(rotated, rotated_pairs),
            shifted(unrotated, rotated_pairs),
            shifted(unrotated, rotated_pairs + half - rotated_pairs),
        ],
        "partial RoPE's channels",
    )

    # Pi^T M Pi picks entry (pi(i), pi(j)) of M, for any channels pi(i), pi(j) in 0 .. D - 1.
    row, column = sp.symbols("k l", integer=True)
    image_i, image_j = sp.symbols("c e", nonnegative=True, integer=True)
    entry = sp.Function("M")
    conjugated = sp.Sum(
        sp.KroneckerDelta(row, image_i) * entry(row, column) * sp.KroneckerDelta(column, image_j),
        (row, 0, width - 1),
        (column, 0, width - 1),
    ).doit()
    gaps = {
        image: width - 1 - sp.Symbol(f"{image}_gap", nonnegative=True, integer=True) for image in (image_i, image_j)
    }
    if sp.simplify((conjugated - entry(image_i, image_j)).subs(gaps)) != 0:
        raise ProofFailure(f"(Pi^T M Pi)[i, j] = {conjugated}, not M[pi(i), pi(j)]")


def proportional_rotate(x: np.ndarray, ids: np.ndarray, frequencies: np.ndarray) -> np.ndarray:
    """Rotate pair r of each row (channels r and r + D/2) by ids[row] * frequencies[r]."""
    half = x.shape[-1] // 2
    angles = np.multiply.outer(ids, frequencies)
    first, second = x[..., :half], x[..., half:]
    return np.concatenate(
        [first * np.cos(angles) - second * np.sin(angles), first * np.sin(angles) + second * np.cos(angles)], axis=-1
    )


@numeric_check("proportional-rope-is-partial-rope")
def check_proportional_rope_is_partial_rope(rng: np.random.Generator) -> None:
    assert_close(
        np.count_nonzero(posenc.proportional_rope_frequencies(44, partial_rotary_factor=30 / 44)),
        14,
        "p = 30/44 at D = 44 rotates 14 pairs",
        atol=0,
    )
    for _ in range(8):
        width = random_width(rng) + 2
        fraction = float(rng.choice([2 * int(rng.integers(1, width // 2 + 1)) / width, rng.uniform(2 / width, 1)]))
        base_value = float(rng.choice([1e4, 1e6]))
        proportional = posenc.proportional_rope_frequencies(width, base=base_value, partial_rotary_factor=fraction)
        pairs = int(fraction * width // 2)
        if pairs < 1:
            continue
        assert_close(np.count_nonzero(proportional), pairs, "a = floor(pD / 2) pairs rotate", atol=0)
        partial = posenc.rope_frequencies(2 * pairs, base=base_value ** (2 * pairs / width))
        assert_close(proportional[:pairs], partial, "theta_r = b'^(-2r/(2a)) for r < a", atol=1e-14)
        if fraction * width == 2 * pairs:
            same = posenc.partial_rope_frequencies(width, base=base_value**fraction, partial_rotary_factor=fraction)
            assert_close(proportional[:pairs], same, "b' = b^p when pD = 2a", atol=1e-14)
        # The matrices: partial RoPE of Pi x is Pi times proportional RoPE of x.
        half = width // 2
        channels = np.arange(half)
        order = np.empty(width, dtype=int)  # order[partial channel] = proportional channel
        order[:pairs], order[pairs : 2 * pairs] = channels[:pairs], channels[:pairs] + half
        order[2 * pairs : pairs + half], order[pairs + half :] = channels[pairs:], channels[pairs:] + half
        vectors = random_vectors(rng, 6, width)
        ids = rng.integers(0, 10**4, size=6)
        factor = 2 * pairs / width
        if int(width * factor) != 2 * pairs:
            continue
        moved = posenc.apply_partial_rope(
            vectors[:, order], ids, base=base_value**factor, partial_rotary_factor=factor, layout="halves"
        )
        assert_close(
            moved, proportional_rotate(vectors, ids, proportional)[:, order], "Pi R_prop = R_part Pi", atol=1e-9
        )


# ---------------------------------------------------------------------------------------
# Multi-head latent attention

# Sizes of one head: the model width d_x, the latent width d_c, the head width d_h.
model_width, latent_width, head_width = sp.symbols("d_x d_c d_h", positive=True, integer=True)


@derivation(
    "mla-absorption-without-rope",
    title="Without RoPE, latent attention folds the key up-projection into the query projection",
    statement=(
        r"\begin{aligned} q_h^\top k_h &= \big(W^{Q}_h x\big)^\top \big(W^{UK}_h c\big) \\ "
        r"&= x^\top M_h\, c, \qquad M_h = {W^{Q}_h}^{\!\top} W^{UK}_h \end{aligned}"
    ),
    summary=r"When head $h$'s key is the up-projection $W^{UK}_h c$ of a latent $c$ and nothing sits between query "
    r"and key, the score is $x^\top M_h c$ with one fixed matrix $M_h$: the up-projection folds into the query "
    r"side and only the latent $c$ needs to be cached.",
    assumptions=(
        r"$x \in \mathbb{R}^{d_x}$ the query token's input, $c \in \mathbb{R}^{d_c}$ the key token's latent",
        r"$W^{Q}_h \in \mathbb{R}^{d_h \times d_x}$, $W^{UK}_h \in \mathbb{R}^{d_h \times d_c}$, any sizes",
    ),
    steps=(
        r"$(W^{Q}_h x)^\top = x^\top {W^{Q}_h}^{\top}$, and matrix products associate, so the score is "
        r"$x^\top ({W^{Q}_h}^{\top} W^{UK}_h)\,c$.",
        r"$M_h$ depends on the weights alone, not on $x$, $c$ or the positions: it can be computed once, and every "
        r"key of head $h$ enters only through $c$, which is all the cache keeps for this term.",
        r"SymPy checks the identity with matrix symbols of symbolic sizes.",
    ),
    scope=GENERAL,
)
def prove_mla_absorption_without_rope() -> None:
    query_weight = sp.MatrixSymbol("W_Q", head_width, model_width)
    key_weight = sp.MatrixSymbol("W_UK", head_width, latent_width)
    token, latent = sp.MatrixSymbol("x", model_width, 1), sp.MatrixSymbol("c", latent_width, 1)
    absorbed = query_weight.T * key_weight
    score = ((query_weight * token).T * (key_weight * latent)).doit()
    if score != (token.T * absorbed * latent).doit():
        raise ProofFailure(f"the score {score} is not x^T (W_Q^T W_UK) c")
    if absorbed.has(token) or absorbed.has(latent):
        raise ProofFailure("the absorbed matrix depends on the tokens")


@numeric_check("mla-absorption-without-rope")
def check_mla_absorption_without_rope(rng: np.random.Generator) -> None:
    heads, width, rank, head = (int(value) for value in rng.integers(1, 24, size=4))
    query_weight = rng.standard_normal((heads, head, width))
    key_weight = rng.standard_normal((heads, head, rank))
    tokens, latents = rng.standard_normal((5, width)), rng.standard_normal((7, rank))
    q_nope = np.einsum("hdx,nx->hnd", query_weight, tokens)
    k_nope = np.einsum("hdc,mc->hmd", key_weight, latents)
    no_rotation = np.zeros((heads, 5, 2)), np.zeros((7, 2))
    scores = posenc.mla_scores(
        q_nope, no_rotation[0], k_nope, no_rotation[1], query_ids=np.arange(5), key_ids=np.arange(7), scaling=1.0
    )
    absorbed = np.einsum("hdx,hdc->hxc", query_weight, key_weight)
    assert_close(scores, np.einsum("nx,hxc,mc->hnm", tokens, absorbed, latents), "q^T k = x^T M_h c", atol=1e-9)


@derivation(
    "mla-absorption-fails-with-rope",
    title="With RoPE between them, no fixed matrix absorbs the key up-projection",
    statement=(
        r"\begin{aligned} \big(R_\Theta(m) W_q x\big)^\top R_\Theta(n) W_k c &= x^\top A(n - m)\,c, \\ "
        r"A(\Delta) &= W_q^\top R_\Theta(\Delta)\, W_k \end{aligned}"
        r" \qquad\allowbreak A(0) = A(1) = \cdots = A(d_R) \Rightarrow A \equiv 0"
    ),
    summary=r"Rotating the projected query and key leaves $x^\top A(n - m)\,c$, whose matrix changes with the offset. "
    r"Over the $d_R/2$ rotating pairs, $A(\Delta)$ is a sum of sinusoids of the offset at distinct frequencies, "
    r"which are linearly independent: if $A$ takes one value at the offsets $0, 1, \ldots, d_R$, it is zero at "
    r"every offset. So unless the rotary part of the score vanishes for every input, one fixed matrix cannot "
    r"stand for $A$ at all offsets, whatever the weights and the number of pairs.",
    assumptions=(
        r"$m, n$ positions, $\Delta$ their offset; $R_\Theta$ as in `rope-relative`, with $d_R/2$ pairs",
        r"$W_q \in \mathbb{R}^{d_R \times d_x}$, $W_k \in \mathbb{R}^{d_R \times d_c}$, any weights and any sizes",
        r"the pairs' frequencies $\theta_r$ distinct and each in $(0, \pi)$, as RoPE's $b^{-2r/d_R}$ are for a "
        r"base $b > 1$ (all at most 1)",
    ),
    steps=(
        r"As in `rope-relative`, $R_\Theta(m)^\top R_\Theta(n) = R_\Theta(n - m)$, so the score is "
        r"$x^\top W_q^\top R_\Theta(n - m) W_k\,c$. Split $W_q$, $W_k$ into pair $r$'s two rows $w_r$, $u_r$. "
        r"The block-diagonal $R_\Theta$ meets each pair "
        r"alone, so $A(\Delta) = \sum_r w_r^\top R(\Delta\theta_r)\,u_r$ (SymPy carries the sum from $n$ pairs to "
        r"$n + 1$), and $R(\varphi) = \cos\varphi\,I + \sin\varphi\,J$ with $J = R(\pi/2)$ gives "
        r"$A(\Delta) = \sum_r \cos(\Delta\theta_r)\,P_r + \sin(\Delta\theta_r)\,Q_r$, $P_r = w_r^\top u_r$, "
        r"$Q_r = w_r^\top J u_r$.",
        r"Entry by entry, $\cos(\Delta\theta_r)P_r + \sin(\Delta\theta_r)Q_r = \alpha_r z_r^\Delta + "
        r"\bar\alpha_r \bar z_r^{\Delta}$ with $z_r = e^{i\theta_r}$ and $\alpha_r = (P_r - iQ_r)/2$, so "
        r"$A(\Delta) - A(0)$ is a combination of $\zeta^\Delta$ over the $d_R + 1$ numbers $\zeta = 1$, $z_r$, "
        r"$\bar z_r$, with the coefficient $-\sum_r P_r$ on $1$.",
        r"These numbers are distinct: with $\theta = 2\arctan t$, $t > 0$ (all of $(0, \pi)$), "
        r"$\sin\theta = 2t/(1 + t^2) > 0$, so no $z_r$ is real or equal to any $\bar z_s$, and "
        r"$\cos\theta = (1 - t^2)/(1 + t^2)$ falls strictly with $t$, so distinct frequencies give distinct $z_r$.",
        r"A combination $f(\Delta) = \sum_{k=0}^{N} c_k \zeta_k^\Delta$ of $N + 1$ distinct $\zeta_k$ that vanishes "
        r"at $\Delta = 0, \ldots, N$ has every $c_k = 0$. For $N = 0$, $f(0) = c_0$. From $N - 1$ to $N$: "
        r"$f(\Delta + 1) - \zeta_N f(\Delta) = \sum_{k<N} c_k(\zeta_k - \zeta_N)\zeta_k^\Delta$ vanishes at "
        r"$\Delta = 0, \ldots, N - 1$, so each $c_k(\zeta_k - \zeta_N) = 0$ and $c_k = 0$ for $k < N$; then "
        r"$f(0) = c_N = 0$. SymPy checks each term of that step for symbolic $k$ and $N$.",
        r"With $N = d_R$, $A(0) = \cdots = A(d_R)$ makes every $\alpha_r = 0$, so $P_r = Q_r = 0$ and "
        r"$A(\Delta) = 0$ at every offset. A fixed $M$ with $x^\top M c = x^\top A(n - m)\,c$ for all $x$, $c$ "
        r"would need $A$ constant, hence zero.",
    ),
    scope=GENERAL,
)
def prove_mla_absorption_fails_with_rope() -> None:
    rope_blocks_are_relative()
    rotary_width = sp.Symbol("d_R", positive=True, integer=True)
    query_weight = sp.MatrixSymbol("W_q", rotary_width, model_width)
    key_weight = sp.MatrixSymbol("W_k", rotary_width, latent_width)
    token, latent = sp.MatrixSymbol("x", model_width, 1), sp.MatrixSymbol("c", latent_width, 1)
    at_m, at_n, relative = (sp.MatrixSymbol(name, rotary_width, rotary_width) for name in ("R_m", "R_n", "R_nm"))
    score = ((at_m * query_weight * token).T * (at_n * key_weight * latent)).doit().subs(at_m.T * at_n, relative)
    if score != token.T * query_weight.T * relative * key_weight * latent:
        raise ProofFailure(f"the score {score} is not x^T W_q^T R_Theta(n - m) W_k c")

    # From n pairs to n + 1: the rows of the first n pairs and those of pair r = n, each meeting its own block.
    stacking_rules()
    first_q, first_k = (
        sp.MatrixSymbol("V_q", 2 * stacked_pairs, model_width),
        sp.MatrixSymbol("V_k", 2 * stacked_pairs, latent_width),
    )
    rows_q, rows_k = sp.MatrixSymbol("w", 2, model_width), sp.MatrixSymbol("u", 2, latent_width)
    first_blocks, block = sp.MatrixSymbol("S", 2 * stacked_pairs, 2 * stacked_pairs), sp.MatrixSymbol("R_r", 2, 2)
    product = sp.block_collapse(
        sp.BlockMatrix([[first_q], [rows_q]]).T
        * sp.BlockDiagMatrix(first_blocks, block)
        * sp.BlockMatrix([[first_k], [rows_k]])
    )
    if product != first_q.T * first_blocks * first_k + rows_q.T * block * rows_k:
        raise ProofFailure(f"A over n + 1 pairs is {product}, not A over n pairs plus pair n's term")

    angle, frequency = sp.Symbol("phi", real=True), sp.Symbol("theta_r", positive=True)
    turn = rotation(sp.pi / 2)
    assert_equal(rotation(angle), sp.cos(angle) * sp.eye(2) + sp.sin(angle) * turn, "R(phi) = cos phi I + sin phi J")

    # One pair's term as two exponentials of the offset.
    offset = sp.Symbol("Delta", nonnegative=True, integer=True)
    entry_p, entry_q = sp.symbols("P Q", real=True)
    weight = (entry_p - sp.I * entry_q) / 2
    pair_term = sp.cos(offset * frequency) * entry_p + sp.sin(offset * frequency) * entry_q
    exponentials = weight * sp.exp(sp.I * offset * frequency) + sp.conjugate(weight) * sp.exp(
        -sp.I * offset * frequency
    )
    assert_equal(
        sp.expand((pair_term - exponentials).rewrite(sp.exp)), 0, "cos(D th) P + sin(D th) Q = a z^D + a* z*^D"
    )
    if sp.solve([weight, sp.conjugate(weight)], [entry_p, entry_q], dict=True) != [{entry_p: 0, entry_q: 0}]:
        raise ProofFailure("alpha_r = 0 does not force P_r = Q_r = 0")

    # The numbers 1, z_r, conj(z_r) are distinct: theta = 2 atan(t) for t > 0 runs over (0, pi).
    half_tangent = sp.Symbol("t", positive=True)
    sine, cosine = 2 * half_tangent / (1 + half_tangent**2), (1 - half_tangent**2) / (1 + half_tangent**2)
    assert_equal(sp.sin(2 * sp.atan(half_tangent)), sine, "sin(2 atan t) = 2t / (1 + t^2)")
    assert_equal(sp.cos(2 * sp.atan(half_tangent)), cosine, "cos(2 atan t) = (1 - t^2) / (1 + t^2)")
    if sine.is_positive is not True:
        raise ProofFailure("sin theta is not positive on (0, pi)")
    if sp.simplify(sp.diff(cosine, half_tangent)).is_negative is not True:
        raise ProofFailure("cos theta does not fall strictly on (0, pi)")

    # Sums of exponentials: the step from N - 1 to N of the independence lemma.
    last, index = sp.Symbol("N", positive=True, integer=True), sp.Symbol("k", nonnegative=True, integer=True)
    coefficient, node = sp.IndexedBase("c"), sp.IndexedBase("zeta")
    differenced = (
        coefficient[index] * node[index] ** (offset + 1) - node[last] * coefficient[index] * node[index] ** offset
    )
    assert_equal(
        sp.expand(differenced - coefficient[index] * (node[index] - node[last]) * node[index] ** offset),
        0,
        "c_k zeta_k^(D+1) - zeta_N c_k zeta_k^D = c_k (zeta_k - zeta_N) zeta_k^D",
    )
    assert_equal(differenced.subs(index, last), 0, "the term k = N of f(D + 1) - zeta_N f(D) vanishes")
    assert_equal(sp.Sum(coefficient[index] * node[index] ** 0, (index, 0, 0)).doit(), coefficient[0], "f(0) = c_0")


@numeric_check("mla-absorption-fails-with-rope")
def check_mla_absorption_fails_with_rope(rng: np.random.Generator) -> None:
    rotary = random_width(rng)
    width, rank = (int(value) for value in rng.integers(1, 24, size=2))
    query_weight, key_weight = rng.standard_normal((rotary, width)), rng.standard_normal((rotary, rank))
    token, latent = rng.standard_normal(width), rng.standard_normal(rank)
    m, n = (int(value) for value in rng.integers(0, 10**4, size=2))
    q_rope, k_rope = (query_weight @ token)[None, None, :], (key_weight @ latent)[None, :]
    score = posenc.mla_scores(
        np.zeros((1, 1, 1)), q_rope, np.zeros((1, 1, 1)), k_rope, query_ids=[m], key_ids=[n], scaling=1.0
    )[0, 0, 0]

    def product(offset: int) -> np.ndarray:  # A(offset) = W_q^T R_Theta(offset) W_k; ids are non-negative
        if offset >= 0:
            return query_weight.T @ posenc.rope(key_weight.T, np.full(rank, offset)).T
        return posenc.rope(query_weight.T, np.full(width, -offset)) @ key_weight

    assert_close(score, token @ product(n - m) @ latent, "score = x^T A(n - m) c", atol=1e-8)
    # Every pair at once (interleaved channels 2r, 2r + 1): A(Delta) = sum_r cos(Delta theta_r) P_r + sin(...) Q_r.
    turn = np.array([[0.0, -1.0], [1.0, 0.0]])
    rows_q, rows_k = query_weight.reshape(rotary // 2, 2, width), key_weight.reshape(rotary // 2, 2, rank)
    cosine_parts = np.einsum("rax,rac->rxc", rows_q, rows_k)
    sine_parts = np.einsum("rax,ab,rbc->rxc", rows_q, turn, rows_k)
    frequencies = posenc.frequencies(rotary)
    for offset in (0, 1, 2, int(rng.integers(-(10**4), 10**4))):
        expected = np.einsum("r,rxc->xc", np.cos(offset * frequencies), cosine_parts) + np.einsum(
            "r,rxc->xc", np.sin(offset * frequencies), sine_parts
        )
        assert_close(
            product(offset), expected, "A(Delta) = sum_r cos(Delta theta_r) P_r + sin(Delta theta_r) Q_r", atol=1e-8
        )
    # Nonzero weights: A is not the same at every offset 0 .. d_R.
    if all(np.allclose(product(offset), product(0), atol=1e-9) for offset in range(1, rotary + 1)):
        raise ProofFailure("A(Delta) is the same at offsets 0 .. d_R for nonzero weights")
    # Powers 0 .. 2k of 1 and exp(+-i theta_r) for k distinct frequencies in (0, pi) form an invertible matrix
    # (frequencies spread apart here, so that the rank is not lost to rounding as RoPE's nearly equal slow ones would).
    spread = np.array([0.4, 1.2, 2.0, 2.8]) + rng.uniform(0.0, 0.3, size=4)
    nodes = np.concatenate([[1.0], np.exp(1j * spread), np.exp(-1j * spread)])
    vandermonde = nodes[None, :] ** np.arange(nodes.size)[:, None]
    if np.linalg.matrix_rank(vandermonde) != nodes.size:
        raise ProofFailure("the powers of 1 and exp(+-i theta_r) are not linearly independent")


@derivation(
    "mla-decoupled-score",
    title="Latent attention's decoupled score: a position-free term plus a relative rotary term",
    statement=(
        r"\begin{aligned} s_h(m, n) &= q_{C,h}^\top k_{C,h} \\ &\quad + \big(R_\Theta(m)\,q_{R,h}\big)^\top "
        r"R_\Theta(n)\,k_R \\ &= x^\top M_h\,c \\ &\quad + q_{R,h}^\top R_\Theta(n - m)\,k_R \end{aligned}"
        r" \qquad\allowbreak \text{cache per token} = d_c + d_R,"
        r" \qquad\allowbreak \text{DeepSeek-V3: } 512 + 64 = 576"
    ),
    summary=r"Multi-head latent attention gives each head a content key $k_{C,h} = W^{UK}_h c$ without RoPE and one "
    r"rotary key $k_R$ shared by every head. The first term absorbs into $x^\top M_h c$ and carries no position, "
    r"the second depends on the positions only through $n - m$, and a token's cache is its latent and its "
    r"rotary key: $d_c + d_R$ values per layer, 576 in DeepSeek-V3.",
    assumptions=(
        r"$q_{C,h} = W^{Q}_h x$, $k_{C,h} = W^{UK}_h c$, $M_h = {W^{Q}_h}^{\!\top} W^{UK}_h$ as in "
        r"`mla-absorption-without-rope`",
        r"$q_{R,h}, k_R \in \mathbb{R}^{d_R}$, $k_R$ the same for every head; $R_\Theta$ as in `rope-relative`",
        r"$c \in \mathbb{R}^{d_c}$ the key token's latent; DeepSeek-V3: $d_c = 512$ (kv_lora_rank), "
        r"$d_R = 64$ (qk_rope_head_dim)",
    ),
    steps=(
        r"The content term is `mla-absorption-without-rope`: $x^\top M_h c$, with neither $m$ nor $n$ in it.",
        r"The rotary term is `rope-relative`: $R_\Theta(m)^\top R_\Theta(n) = R_\Theta(n - m)$, which SymPy carries "
        r"from $n$ pairs to $n + 1$, so it depends on the positions through $n - m$ alone.",
        r"On the key side every head's score uses only $c$ and $k_R$, both the same for all heads: caching them "
        r"takes $d_c + d_R$ values per token and layer, which at DeepSeek-V3's sizes is $512 + 64 = 576$.",
    ),
    scope=GENERAL,
)
def prove_mla_decoupled_score() -> None:
    rope_blocks_are_relative()
    rotary_width = sp.Symbol("d_R", positive=True, integer=True)
    query_weight = sp.MatrixSymbol("W_Q", head_width, model_width)
    key_weight = sp.MatrixSymbol("W_UK", head_width, latent_width)
    token, latent = sp.MatrixSymbol("x", model_width, 1), sp.MatrixSymbol("c", latent_width, 1)
    query_rope, key_rope = sp.MatrixSymbol("q_R", rotary_width, 1), sp.MatrixSymbol("k_R", rotary_width, 1)
    at_m, at_n, relative = (sp.MatrixSymbol(name, rotary_width, rotary_width) for name in ("R_m", "R_n", "R_nm"))
    content = ((query_weight * token).T * (key_weight * latent)).doit()
    rotary = ((at_m * query_rope).T * (at_n * key_rope)).doit().subs(at_m.T * at_n, relative)
    if content != (token.T * (query_weight.T * key_weight) * latent).doit():
        raise ProofFailure(f"the content term {content} is not x^T M_h c")
    if rotary != query_rope.T * relative * key_rope:
        raise ProofFailure(f"the rotary term {rotary} is not q_R^T R_Theta(n - m) k_R")
    key_side = {symbol for symbol in (content + rotary).free_symbols if symbol in (latent, key_rope, token, query_rope)}
    if key_side - {token, query_rope} != {latent, key_rope}:
        raise ProofFailure(f"the key side of the score is {key_side}, not c and k_R")
    cached = latent.shape[0] + key_rope.shape[0]
    if cached != latent_width + rotary_width or cached.subs({latent_width: 512, rotary_width: 64}) != 576:
        raise ProofFailure(f"a token caches {cached} values")


@numeric_check("mla-decoupled-score")
def check_mla_decoupled_score(rng: np.random.Generator) -> None:
    heads, rank, content_width = (int(value) for value in rng.integers(1, 12, size=3))
    rotary = random_width(rng)
    q_nope, k_nope = rng.standard_normal((heads, 4, content_width)), rng.standard_normal((heads, 6, content_width))
    q_rope, k_rope = rng.standard_normal((heads, 4, rotary)), rng.standard_normal((6, rotary))
    query_ids, key_ids = rng.integers(0, 10**4, size=4), rng.integers(0, 10**4, size=6)
    scores = posenc.mla_scores(q_nope, q_rope, k_nope, k_rope, query_ids=query_ids, key_ids=key_ids, scaling=1.0)
    shift = int(rng.integers(0, 10**4))
    shifted = posenc.mla_scores(
        q_nope, q_rope, k_nope, k_rope, query_ids=query_ids + shift, key_ids=key_ids + shift, scaling=1.0
    )
    assert_close(scores, shifted, "shifting every position keeps the scores", atol=1e-8)
    rotated_q = posenc.rope(q_rope, query_ids)
    rotated_k = posenc.rope(k_rope, key_ids)
    expected = q_nope @ np.swapaxes(k_nope, -1, -2) + rotated_q @ rotated_k.T
    assert_close(scores, expected, "content term plus rotary term with a shared k_R", atol=1e-8)
    assert_close(posenc.mla_cache_values(512, 64), 576, "DeepSeek-V3 caches 576 values per token", atol=0)
    assert_close(posenc.mla_cache_values(rank, rotary), rank + rotary, "d_c + d_R values per token", atol=0)


# ---------------------------------------------------------------------------------------
# Llama 4's attention temperature

steps_taken = sp.Symbol("k", nonnegative=True, integer=True)
floor_scale = sp.Symbol("F", positive=True, integer=True)
attn_scale = sp.Symbol("a", real=True)


def llama4_scale(position: sp.Expr) -> sp.Expr:
    """s(t) = 1 + a ln(floor((t + 1) / F) + 1)."""
    return 1 + attn_scale * sp.log(sp.floor((position + 1) / floor_scale) + 1)


@derivation(
    "llama4-temperature-steps",
    title="Llama 4's query temperature is a staircase with a step every F tokens",
    statement=(
        r"s(t) = 1 + a \ln\!\big(\lfloor (t + 1)/F \rfloor + 1\big)"
        r" \qquad\allowbreak \begin{aligned} &kF - 1 \le t < (k + 1)F - 1 \\ &\Longrightarrow\; s(t) = 1 + a\ln(k + 1) "
        r"\end{aligned} \qquad\allowbreak \begin{aligned} s(t) &= 1, & t &< F - 1, \\ s(t) &= 1 + a \ln 2, "
        r"& F - 1 \le t &< 2F - 1 \end{aligned}"
    ),
    summary=r"Llama 4 multiplies the queries of its NoPE layers by $s(t)$ at token index $t$. It is exactly 1 for the "
    r"first $F - 1$ tokens, steps to $1 + a\ln 2$ at $t = F - 1$, and holds $1 + a\ln(k + 1)$ on each stretch "
    r"$kF - 1 \le t < (k + 1)F - 1$ (transformers' defaults: $F = 8192$, $a = 0.1$).",
    assumptions=(
        r"$t \ge 0$ an integer token index, $F \ge 1$ an integer (floor_scale), $a$ real (attn_scale)",
        r"$k \ge 0$ an integer",
    ),
    steps=(
        r"$kF - 1 \le t < (k + 1)F - 1$ means $t + 1 = kF + j$ with an integer $0 \le j \le F - 1$.",
        r"Then $(t + 1)/F - k = j/F \ge 0$ and $k + 1 - (t + 1)/F = (F - j)/F > 0$, so "
        r"$k \le (t + 1)/F < k + 1$ and $\lfloor (t + 1)/F \rfloor = k$; SymPy settles both bounds for symbolic "
        r"$k$, $F$ and $j$, and the floor itself.",
        r"So $s(t) = 1 + a\ln(k + 1)$ on that stretch: at $k = 0$ this is $1 + a\ln 1 = 1$ (for $t < F - 1$), at "
        r"$k = 1$ it is $1 + a\ln 2$ (for $F - 1 \le t < 2F - 1$).",
    ),
    scope=GENERAL,
)
def prove_llama4_temperature_steps() -> None:
    offset = sp.Symbol("j", nonnegative=True, integer=True)
    gap = sp.Symbol("g", nonnegative=True, integer=True)  # j = F - 1 - g: every j up to F - 1
    position = steps_taken * floor_scale + offset - 1
    ratio = (position + 1) / floor_scale
    if sp.simplify(ratio - steps_taken - offset / floor_scale) != 0:
        raise ProofFailure("(t + 1)/F is not k + j/F")
    if (offset / floor_scale).is_nonnegative is not True:
        raise ProofFailure("j/F is not at least 0")
    if sp.simplify(1 - offset / floor_scale).subs(offset, floor_scale - 1 - gap).is_positive is not True:
        raise ProofFailure("j/F is not below 1")
    # floor(k + j/F) = k + floor(j/F) for an integer k; 0 <= j/F < 1 makes floor(j/F) = 0 (the floor's definition).
    floored = sp.floor(sp.expand(ratio))
    if floored != steps_taken + sp.floor(offset / floor_scale):
        raise ProofFailure(f"floor((t + 1)/F) = {floored}, not k + floor(j/F)")
    value = (
        llama4_scale(position)
        .replace(sp.floor, lambda inner: sp.floor(sp.expand(inner)))
        .subs(sp.floor(offset / floor_scale), 0)
    )
    assert_equal(value, 1 + attn_scale * sp.log(steps_taken + 1), "s(t) = 1 + a ln(k + 1)")
    assert_equal(value.subs(steps_taken, 0), 1, "s(t) = 1 below the first step")
    assert_equal(value.subs(steps_taken, 1), 1 + attn_scale * sp.log(2), "s(t) = 1 + a ln 2 on the first step")


@numeric_check("llama4-temperature-steps")
def check_llama4_temperature_steps(rng: np.random.Generator) -> None:
    floor_value = int(rng.choice([1, 2, 7, 8192, int(rng.integers(1, 10**5))]))
    scale_value = float(rng.uniform(-1, 1))

    def scale(positions: np.ndarray) -> np.ndarray:
        return posenc.llama4_query_scale(positions, floor_scale=floor_value, attn_scale=scale_value)

    step = int(rng.integers(0, 10**4))
    inside = step * floor_value - 1 + rng.integers(0, floor_value, size=16)
    inside = inside[inside >= 0]
    assert_close(scale(inside), np.full(inside.size, 1 + scale_value * np.log(step + 1)), "1 + a ln(k + 1)", atol=1e-12)
    below, first_step = np.arange(0, floor_value - 1), np.arange(floor_value - 1, 2 * floor_value - 1)
    assert_close(scale(below), np.ones(below.size), "s(t) = 1 for t < F - 1", atol=0)
    assert_close(scale(first_step), np.full(first_step.size, 1 + scale_value * np.log(2)), "1 + a ln 2", atol=1e-15)


# ---------------------------------------------------------------------------------------
# The quantity that bounds RoPE's base


@derivation(
    "rope-base-bound-condition",
    title="The quantity that bounds RoPE's base is the sinusoidal kernel, with a first term no base changes",
    statement=(
        r"B_b(m) = \sum_{i=0}^{d/2-1} \cos\!\big(m\,b^{-2i/d}\big) = K(m),"
        r" \qquad\allowbreak B_b(0) = \frac{d}{2}, \quad B_b(-m) = B_b(m),"
        r" \qquad\allowbreak B_b(m) = \cos m + \sum_{i=1}^{d/2-1} \cos(m\,\theta_i)"
    ),
    summary=r"Men et al. (2024) ask RoPE's base to keep $B_b(m) = \sum_i \cos(m\theta_i)$ non-negative over the "
    r"context. $B_b$ is the sinusoidal kernel $K$ at base $b$: it starts at $d/2$, is even in $m$, and its first "
    r"term is $\cos m$ whatever the base, since $\theta_0 = b^0 = 1$.",
    assumptions=(r"$m$ real", r"$d$ a positive even integer", r"$b > 0$ the base, $\theta_i = b^{-2i/d}$"),
    steps=(
        r"$B_b(m)$ and $K(m) = \sum_r \cos(\omega_r m)$ are the same sum over the $d/2$ pairs with the same "
        r"frequencies $b^{-2i/d}$.",
        r"At $m = 0$ each of the $d/2$ terms is $\cos 0 = 1$; cosine is even, so each term, and the sum, is "
        r"unchanged when $m$ becomes $-m$.",
        r"The term $i = 0$ has $\theta_0 = b^0 = 1$ at every base, so it is $\cos m$, negative for some "
        r"offsets (at $m = 2$, for one) whatever the base: the other pairs must outweigh it.",
    ),
    scope=GENERAL,
)
def prove_rope_base_bound_condition() -> None:
    offset, index = sp.Symbol("m", real=True), sp.Symbol("i", nonnegative=True, integer=True)

    def bound_sum(value: sp.Expr) -> sp.Sum:
        return sp.Sum(sp.cos(value * base ** (-2 * index / d)), (index, 0, d / 2 - 1))

    if bound_sum(offset).xreplace({index: r}) != kernel_sum(offset):
        raise ProofFailure("B_b(m) is not the kernel's sum")
    assert_equal(bound_sum(0).doit(), d / 2, "B_b(0) = d/2")
    assert_equal(bound_sum(-offset), bound_sum(offset), "B_b(-m) = B_b(m)")
    first = sp.Sum(sp.cos(offset * base ** (-2 * index / d)), (index, 0, 0))
    rest = sp.Sum(sp.cos(offset * base ** (-2 * index / d)), (index, 1, d / 2 - 1))
    assert_equal(first.doit(), sp.cos(offset), "the term i = 0 is cos m at every base")
    if sp.cos(2).is_negative is not True:
        raise ProofFailure("cos 2 is not negative")
    if sp.simplify(first + rest - bound_sum(offset)) != 0:
        raise ProofFailure("B_b(m) does not split into cos m and the other pairs")


@numeric_check("rope-base-bound-condition")
def check_rope_base_bound_condition(rng: np.random.Generator) -> None:
    width = random_width(rng) + 2
    base_value = float(rng.choice([10.0, 1e4, 5e5]))
    offsets = rng.integers(-(10**4), 10**4, size=32)
    direct = np.cos(np.multiply.outer(offsets, base_value ** (-2.0 * np.arange(width // 2) / width))).sum(axis=-1)
    assert_close(posenc.kernel(offsets, width, base=base_value), direct, "B_b(m) = K(m)", atol=1e-8)
    assert_close(posenc.kernel(0, width, base=base_value), width / 2, "B_b(0) = d/2", atol=1e-12)
    assert_close(posenc.kernel(-offsets, width, base=base_value), direct, "B_b(-m) = B_b(m)", atol=1e-8)
    # The library's bound is defined by this quantity: at the base it returns, B stays non-negative.
    length, head = int(rng.integers(8, 129)), int(2 * rng.integers(2, 9))
    bound = posenc.rope_base_lower_bound(length, head, rtol=1e-3)
    if np.min(posenc.kernel(np.arange(length + 1), head, base=bound)) < 0:
        raise ProofFailure("B is negative within the context at the returned base")
