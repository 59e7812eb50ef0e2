"""Grids and video: RoPE with several position axes (M-RoPE, axial and mixed 2-D RoPE), the 2-D
sin-cos table's kernel, and what resizing a table of patch positions does (a linear map, and the
cubic convolution weights that bicubic resizing uses).

The numeric checks build M-RoPE, the 2-D tables and the resizing with NumPy here, so each entry
is held to a computation of its own rather than to the functions it later documents.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike

import posenc

from ..registry import GENERAL, ProofFailure, assert_close, assert_equal, derivation, numeric_check
from .common import (
    blocks_act_pairwise,
    blocks_multiply_pairwise,
    d,
    for_pair_r,
    kernel_sum,
    omega,
    r,
    random_vectors,
    random_width,
    rotation,
    stacking_rules,
    sum_over_pairs,
    angle_sum,
    pair,
    s,
    t,
)
from .rope import at_most

# Pair r of M-RoPE turns by theta_r times the id of its own axis. The selectors (sigma_t, sigma_h,
# sigma_w) pick that axis: (1, 0, 0), (0, 1, 0) or (0, 0, 1). A lemma proved with sigma_t and sigma_h
# free symbols (and sigma_w = 1 - sigma_t - sigma_h) holds whichever axis each pair picks, so the
# induction over pairs covers every assignment of pairs to axes, chunked or interleaved.
select_t, select_h = sp.symbols("sigma_t sigma_h", real=True)
select_w = 1 - select_t - select_h


def mrope_phase(pair_index: sp.Expr, ids: tuple[sp.Expr, sp.Expr, sp.Expr]) -> sp.Expr:
    """The phase of pair ``pair_index`` at the ids (t, h, w): theta_r times its axis's id."""
    time, height, width = ids
    return omega(pair_index, d) * (select_t * time + select_h * height + select_w * width)


def rope_score(phase_q: sp.Expr, phase_k: sp.Expr, query: sp.Matrix, key: sp.Matrix) -> sp.Expr:
    """One pair's score (R(phase_q) q)^T (R(phase_k) k)."""
    return ((rotation(phase_q) * query).T * (rotation(phase_k) * key))[0]


def score_is_relative(what: str) -> None:
    """With R_a^T R_b = R_(b - a) proved, the score of full vectors is q^T R_(b - a) k (any width)."""
    width = sp.Symbol("d", positive=True, integer=True)
    query, key = sp.MatrixSymbol("q", width, 1), sp.MatrixSymbol("k", width, 1)
    at_a, at_b, relative = (sp.MatrixSymbol(name, width, width) for name in ("R_a", "R_b", "R_ba"))
    score = ((at_a * query).T * (at_b * key)).subs(at_a.T * at_b, relative)
    if score != query.T * relative * key:
        raise ProofFailure(f"{what}: the score {score} is not q^T R(offset) k")


@derivation(
    "mrope-equal-ids-is-rope",
    title="M-RoPE with equal temporal, height and width ids is 1-D RoPE",
    statement=(
        r"\begin{aligned} R^{\mathrm M}_\Theta(u) &= \operatorname{diag}\big(R(\theta_r\,u_{a(r)})\big)_{r < d/2}, \\ "
        r"u &= (t, h, w) \end{aligned}"
        r" \qquad\allowbreak R^{\mathrm M}_\Theta(p, p, p) = R_\Theta(p) \ \text{ for every } a"
    ),
    summary=r"M-RoPE gives each pair an axis $a(r)$ (temporal, height or width) and turns it by that axis's id; "
    r"when the three ids are the same position $p$, every pair turns by $p\,\theta_r$, which is RoPE at $p$, "
    r"however the pairs are split between the axes.",
    assumptions=(
        r"$t, h, w, p$ real ids",
        r"$a$ any assignment of the $d/2$ pairs to the axes: contiguous sections or interleaved",
        r"$\theta_r > 0$ the pairs' frequencies, the same in both",
    ),
    steps=(
        r"Write pair $r$'s axis as a selector $(\sigma_t, \sigma_h, \sigma_w)$, one of $(1, 0, 0)$, $(0, 1, 0)$, "
        r"$(0, 0, 1)$, so its phase is $\theta_r(\sigma_t t + \sigma_h h + \sigma_w w)$ and "
        r"$\sigma_t + \sigma_h + \sigma_w = 1$.",
        r"At $t = h = w = p$ the phase is $\theta_r\,p\,(\sigma_t + \sigma_h + \sigma_w) = p\,\theta_r$, RoPE's "
        r"phase for pair $r$, whichever axis the pair follows.",
        r"SymPy proves $R(\phi_r)\,x = R(p\,\theta_r)\,x$ for a symbolic pair index $r$, free selectors and any "
        r"$x \in \mathbb{R}^2$, and carries it from $n$ pairs to $n + 1$; each pair may take its own selector, so the "
        r"two block-diagonal matrices agree at every even width and for every split.",
    ),
    scope=GENERAL,
)
def prove_mrope_equal_ids_is_rope() -> None:
    position = sp.Symbol("p", real=True)
    vector = sp.Matrix(sp.symbols("x_1 x_2", real=True))
    blocks_act_pairwise(
        lambda q: rotation(mrope_phase(q, (position, position, position))),
        lambda q: vector,
        lambda q: rotation(position * omega(q, d)) * vector,
        "M-RoPE at (p, p, p) rotates pair r as RoPE at p",
    )


def mrope_rotate(x: np.ndarray, ids: np.ndarray, axes: np.ndarray, frequencies: np.ndarray) -> np.ndarray:
    """M-RoPE in the interleaved layout: pair r of each row turns by ids[row, axes[r]] * frequencies[r]."""
    angles = ids[:, axes] * frequencies
    first, second = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = first * np.cos(angles) - second * np.sin(angles)
    out[..., 1::2] = first * np.sin(angles) + second * np.cos(angles)
    return out


def random_axes(rng: np.random.Generator, pairs: int, count: int) -> np.ndarray:
    """A split of ``pairs`` pairs between ``count`` axes: contiguous sections or any assignment."""
    if rng.random() < 0.5:
        cuts = np.sort(rng.integers(0, pairs + 1, size=count - 1))
        return np.searchsorted(cuts, np.arange(pairs), side="right")
    return rng.integers(0, count, size=pairs)


@numeric_check("mrope-equal-ids-is-rope")
def check_mrope_equal_ids_is_rope(rng: np.random.Generator) -> None:
    width = random_width(rng)
    vectors = random_vectors(rng, 8, width)
    positions = rng.integers(0, 10**4, size=8)
    axes = random_axes(rng, width // 2, 3)
    equal_ids = np.repeat(positions[:, None], 3, axis=1)
    rotated = mrope_rotate(vectors, equal_ids, axes, posenc.frequencies(width))
    assert_close(rotated, posenc.rope(vectors, positions), "M-RoPE at (p, p, p) = RoPE at p", atol=1e-9)


@derivation(
    "mrope-relative",
    title="M-RoPE scores depend only on the temporal, height and width offsets",
    statement=(
        r"\begin{aligned} &\big(R^{\mathrm M}_\Theta(t, h, w)\,q\big)^\top R^{\mathrm M}_\Theta(t', h', w')\,k \\ "
        r"&= q^\top R^{\mathrm M}_\Theta(t' - t,\ h' - h,\ w' - w)\,k \end{aligned}"
    ),
    summary=r"Each pair of M-RoPE is a RoPE rotation by its own axis's id, so the query's and key's rotations "
    r"meet as one rotation by that axis's offset, and the score depends on the three offsets alone.",
    assumptions=(
        r"$(t, h, w)$ the query's ids and $(t', h', w')$ the key's, real",
        r"$R^{\mathrm M}_\Theta$ as in `mrope-equal-ids-is-rope`, any assignment of pairs to axes",
        r"$q, k \in \mathbb{R}^d$",
    ),
    steps=(
        r"Pair $r$'s phase $\phi_r(t, h, w) = \theta_r(\sigma_t t + \sigma_h h + \sigma_w w)$ is linear in the ids, "
        r"so $\phi_r(t', h', w') - \phi_r(t, h, w) = \phi_r(t' - t, h' - h, w' - w)$.",
        r"Rotations compose by adding angles and a transpose is the rotation back (`rope-relative`), so "
        r"$R(\phi_r(t, h, w))^\top R(\phi_r(t', h', w')) = R(\phi_r(t' - t, h' - h, w' - w))$.",
        r"SymPy proves the linearity for free selectors, and the block identity for a symbolic pair index and any "
        r"selected ids $x, x'$ (each pair has its own), carried from $n$ pairs to $n + 1$; then "
        r"$(R_a q)^\top R_b k = q^\top R_a^\top R_b\,k$ gives the score at every width.",
    ),
    scope=GENERAL,
)
def prove_mrope_relative() -> None:
    query_ids = sp.symbols("t h w", real=True)
    key_ids = sp.symbols("t' h' w'", real=True)
    offsets = tuple(key - query for query, key in zip(query_ids, key_ids, strict=True))
    assert_equal(
        mrope_phase(r, key_ids) - mrope_phase(r, query_ids),
        mrope_phase(r, offsets),
        "phi_r(t', h', w') - phi_r(t, h, w) = phi_r(offsets)",
    )
    # So pair r turns by theta_r times its selected id, x at the query and x' at the key; the
    # lemma holds for every pair's own x and x'.
    selected, selected_k = sp.symbols("x x'", real=True)
    blocks_multiply_pairwise(
        lambda q: rotation(selected * omega(q, d)),
        lambda q: rotation(selected_k * omega(q, d)),
        lambda q: rotation((selected_k - selected) * omega(q, d)),
        "R(x theta_r)^T R(x' theta_r) = R((x' - x) theta_r)",
    )
    score_is_relative("M-RoPE")


@numeric_check("mrope-relative")
def check_mrope_relative(rng: np.random.Generator) -> None:
    width = random_width(rng)
    query, key = random_vectors(rng, 2, width)
    axes, frequencies = random_axes(rng, width // 2, 3), posenc.frequencies(width)
    query_ids, key_ids, shift = rng.integers(0, 10**3, size=(3, 3))

    def score(at_query: np.ndarray, at_key: np.ndarray) -> float:
        rotated_query = mrope_rotate(query[None, :], at_query[None, :], axes, frequencies)[0]
        return float(rotated_query @ mrope_rotate(key[None, :], at_key[None, :], axes, frequencies)[0])

    assert_close(score(query_ids, key_ids), score(query_ids + shift, key_ids + shift), "shifted ids", atol=1e-8)
    relative = query @ mrope_rotate(key[None, :], (key_ids - query_ids)[None, :], axes, frequencies)[0]
    assert_close(score(query_ids, key_ids), relative, "q^T R^M(offsets) k", atol=1e-8)


@derivation(
    "axial-rope-2d-relative",
    title="Axial 2-D RoPE scores are a row part plus a column part",
    statement=(
        r"\begin{aligned} &\big(R_\Theta(i, j)\,q\big)^\top R_\Theta(i', j')\,k \\ "
        r"&= S_{\mathrm{row}}(i' - i) + S_{\mathrm{col}}(j' - j), \end{aligned}"
        r" \qquad\allowbreak S_{\mathrm{row}}(\Delta) = \textstyle\sum_{a(r) = \mathrm{row}} "
        r"q_r^\top R(\Delta\theta_r)\,k_r"
    ),
    summary=r"In axial RoPE each pair turns by its row id or by its column id, so the score of a patch at "
    r"$(i, j)$ and one at $(i', j')$ is the sum of a part that depends on the row offset alone and a part that "
    r"depends on the column offset alone ($S_{\mathrm{col}}$ sums the column pairs the same way).",
    assumptions=(
        r"$(i, j)$ and $(i', j')$ real (row, column) positions",
        r"$a(r) \in \{\mathrm{row}, \mathrm{col}\}$ the axis of pair $r$: half the pairs each in axial RoPE, "
        r"but any split",
        r"$q_r, k_r \in \mathbb{R}^2$ pair $r$ of $q, k \in \mathbb{R}^d$; $\theta_r > 0$",
    ),
    steps=(
        r"A row pair turns by $i\,\theta_r$ in the query and $i'\theta_r$ in the key, so by `rope-relative` it "
        r"scores $q_r^\top R((i' - i)\theta_r)\,k_r$; a column pair scores $q_r^\top R((j' - j)\theta_r)\,k_r$.",
        r"With $\sigma_r = 1$ for a row pair and $0$ for a column pair, pair $r$ scores "
        r"$\sigma_r\,g_r(i' - i) + (1 - \sigma_r)\,g_r(j' - j)$, where "
        r"$g_r(\Delta) = q_r^\top R(\Delta\theta_r)\,k_r$; "
        r"SymPy proves both cases for a symbolic pair index.",
        r"The score is the sum over pairs (`stacking_rules`), and a sum of such terms splits by linearity into "
        r"$\sum_r \sigma_r g_r(i' - i) = S_{\mathrm{row}}(i' - i)$ plus "
        r"$\sum_r (1 - \sigma_r) g_r(j' - j) = S_{\mathrm{col}}(j' - j)$.",
    ),
    scope=GENERAL,
)
def prove_axial_rope_2d_relative() -> None:
    row, column, row_k, column_k = sp.symbols("i j i' j'", real=True)
    query, key = sp.Matrix(sp.symbols("q_1 q_2", real=True)), sp.Matrix(sp.symbols("k_1 k_2", real=True))

    def part(offset: sp.Expr) -> sp.Expr:  # g_r(offset)
        return (query.T * rotation(offset * omega(r, d)) * key)[0]

    for is_row in (0, 1):
        position_q = is_row * row + (1 - is_row) * column
        position_k = is_row * row_k + (1 - is_row) * column_k
        pair_score = rope_score(position_q * omega(r, d), position_k * omega(r, d), query, key)
        split = is_row * part(row_k - row) + (1 - is_row) * part(column_k - column)
        assert_equal(angle_sum(for_pair_r(pair_score - split, "axial pair")), 0, "pair r scores its own axis's offset")
    stacking_rules()
    follows_row, term = sp.Function("sigma"), sp.Function("g")
    delta_row, delta_column = sp.symbols("Delta_i Delta_j", real=True)
    total = sp.Sum(
        follows_row(r) * term(r, delta_row) + (1 - follows_row(r)) * term(r, delta_column), (r, 0, d / 2 - 1)
    )
    row_part = sp.Sum(follows_row(r) * term(r, delta_row), (r, 0, d / 2 - 1))
    column_part = sp.Sum((1 - follows_row(r)) * term(r, delta_column), (r, 0, d / 2 - 1))
    if sp.expand(total - row_part - column_part) != 0:
        raise ProofFailure(f"the sum over pairs {total} does not split into a row part and a column part")
    if row_part.has(delta_column) or column_part.has(delta_row):
        raise ProofFailure("a part depends on the other axis's offset")


def axial_rope(x: np.ndarray, rows: ArrayLike, columns: ArrayLike) -> np.ndarray:
    """Axial 2-D RoPE: the first half of the channels is RoPE of width d/2 at the row, the second at the column."""
    half = x.shape[-1] // 2
    return np.concatenate([posenc.rope(x[..., :half], rows), posenc.rope(x[..., half:], columns)], axis=-1)


def relative_score(query: np.ndarray, key: np.ndarray, offset: int) -> float:
    """q^T R_Theta(offset) k with posenc's RoPE, whose ids are non-negative: the side with the positive offset turns."""
    if offset >= 0:
        return float(query @ posenc.rope(key[None, :], [offset])[0])
    return float(posenc.rope(query[None, :], [-offset])[0] @ key)


@numeric_check("axial-rope-2d-relative")
def check_axial_rope_2d_relative(rng: np.random.Generator) -> None:
    width = 4 * int(rng.integers(1, 17))  # two halves of even width
    half = width // 2
    query, key = random_vectors(rng, 2, width)
    (i, j), (i_k, j_k), shift = rng.integers(0, 10**3, size=(3, 2))

    def score(at_query: tuple[int, int], at_key: tuple[int, int]) -> float:
        rotated_query = axial_rope(query[None, :], [at_query[0]], [at_query[1]])[0]
        return float(rotated_query @ axial_rope(key[None, :], [at_key[0]], [at_key[1]])[0])

    moved = score((i + shift[0], j + shift[1]), (i_k + shift[0], j_k + shift[1]))
    assert_close(score((i, j), (i_k, j_k)), moved, "shifting both patches keeps the score", atol=1e-8)
    row_part = relative_score(query[:half], key[:half], int(i_k - i))
    column_part = relative_score(query[half:], key[half:], int(j_k - j))
    assert_close(score((i, j), (i_k, j_k)), row_part + column_part, "score = S_row + S_col", atol=1e-8)


@derivation(
    "mixed-rope-2d-relative",
    title="RoPE-Mixed scores depend only on the 2-D offset, and its pairs can follow oblique lines",
    statement=(
        r"\phi_r(i, j) = f^x_r\,j + f^y_r\,i, \qquad\allowbreak"
        r" \begin{aligned} &\big(R_\phi(i, j)\,q\big)^\top R_\phi(i', j')\,k \\ "
        r"&= \textstyle\sum_r q_r^\top R\big(\phi_r(\Delta_i, \Delta_j)\big)\,k_r, \end{aligned}"
        r" \qquad\allowbreak \begin{aligned} &\phi_r(\Delta_i, \Delta_j) \text{ is constant} \\ "
        r"&\text{along } (\Delta_j, \Delta_i) \parallel (-f^y_r, f^x_r) \end{aligned}"
    ),
    summary=r"With a learned 2-D frequency $(f^x_r, f^y_r)$ per pair, the score of patches $(i, j)$ and $(i', j')$ "
    r"depends only on $\Delta_i = i' - i$ and $\Delta_j = j' - j$. Pair $r$ sees them only through "
    r"$f^x_r\Delta_j + f^y_r\Delta_i$, constant along lines of direction $(-f^y_r, f^x_r)$; an axial pair "
    r"($f^x_r f^y_r = 0$) is constant along columns or rows, a mixed pair along an oblique line.",
    assumptions=(
        r"$(i, j)$ and $(i', j')$ real (row, column) positions",
        r"$f^x_r, f^y_r$ any real numbers, not both $0$, one pair per $r$",
        r"$q_r, k_r \in \mathbb{R}^2$ pair $r$ of $q, k \in \mathbb{R}^d$",
    ),
    steps=(
        r"The phase is linear in the position, so $\phi_r(i', j') - \phi_r(i, j) = \phi_r(\Delta_i, \Delta_j)$, and "
        r"$R(\phi_r(i, j))^\top R(\phi_r(i', j')) = R(\phi_r(\Delta_i, \Delta_j))$ as in `rope-relative`.",
        r"SymPy proves that block identity for free $f^x_r, f^y_r$ (each pair may have its own) and carries it from "
        r"$n$ pairs to $n + 1$; the score is then $q^\top R_\phi(\Delta_i, \Delta_j)\,k$, pair by pair as displayed.",
        r"Moving the offset by $s\,(-f^y_r, f^x_r)$ adds $s(-f^x_r f^y_r + f^y_r f^x_r) = 0$ to the phase, so each "
        r"pair's term is constant along those lines; the directions that keep the phase are exactly these, since "
        r"$f^x_r v_j + f^y_r v_i = 0$ has a one-dimensional set of solutions.",
        r"For $f^y_r = 0$ the direction is $(0, f^x_r)$: only $\Delta_i$ changes, a column. For $f^x_r = 0$ it is "
        r"$(-f^y_r, 0)$, a row. With both nonzero both components are nonzero: an oblique line, which axial RoPE "
        r"cannot give.",
    ),
    scope=GENERAL,
)
def prove_mixed_rope_2d_relative() -> None:
    row, column, row_k, column_k, step = sp.symbols("i j i' j' s", real=True)
    along_x, along_y = sp.symbols("f_x f_y", real=True)

    def phase(at_row: sp.Expr, at_column: sp.Expr) -> sp.Expr:
        return along_x * at_column + along_y * at_row

    blocks_multiply_pairwise(
        lambda q: rotation(phase(row, column)),
        lambda q: rotation(phase(row_k, column_k)),
        lambda q: rotation(phase(row_k - row, column_k - column)),
        "R(phi_r(i, j))^T R(phi_r(i', j')) = R(phi_r(offsets))",
    )
    score_is_relative("RoPE-Mixed")
    delta_row, delta_column = sp.symbols("Delta_i Delta_j", real=True)
    moved = phase(delta_row + step * along_x, delta_column - step * along_y)
    assert_equal(moved, phase(delta_row, delta_column), "the phase is constant along (-f_y, f_x)")
    v_row, v_column = sp.symbols("v_i v_j", real=True)
    # With f_y != 0 the directions that keep the phase are (v_j, v_i) = v_j (1, -f_x / f_y), one line
    # through (-f_y, f_x); with f_y = 0 (so f_x != 0) the phase holds v_row alone: v_j = 0, a column.
    kept = sp.solve(phase(v_row, v_column), v_row, dict=True)
    if kept != [{v_row: -along_x * v_column / along_y}]:
        raise ProofFailure(f"the directions that keep the phase are not one line: {kept}")
    if phase(v_row, v_column).subs(along_y, 0).has(v_row) or phase(v_row, v_column).subs(along_x, 0).has(v_column):
        raise ProofFailure("an axial pair's phase depends on both offsets")


def mixed_rope(
    x: np.ndarray, rows: ArrayLike, columns: ArrayLike, along_x: np.ndarray, along_y: np.ndarray
) -> np.ndarray:
    """RoPE-Mixed in the interleaved layout: pair r of each row turns by f_x[r] column + f_y[r] row."""
    angles = np.multiply.outer(columns, along_x) + np.multiply.outer(rows, along_y)
    first, second = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = first * np.cos(angles) - second * np.sin(angles)
    out[..., 1::2] = first * np.sin(angles) + second * np.cos(angles)
    return out


@numeric_check("mixed-rope-2d-relative")
def check_mixed_rope_2d_relative(rng: np.random.Generator) -> None:
    width = random_width(rng)
    along_x, along_y = rng.normal(0, 1, size=(2, width // 2))
    query, key = random_vectors(rng, 2, width)
    (i, j), (i_k, j_k), shift = rng.integers(-100, 100, size=(3, 2))

    def pair_scores(at_query: tuple[float, float], at_key: tuple[float, float]) -> np.ndarray:
        rotated_query = mixed_rope(query[None, :], [at_query[0]], [at_query[1]], along_x, along_y)[0]
        rotated_key = mixed_rope(key[None, :], [at_key[0]], [at_key[1]], along_x, along_y)[0]
        scores: np.ndarray = (rotated_query * rotated_key).reshape(-1, 2).sum(axis=1)
        return scores

    scores = pair_scores((i, j), (i_k, j_k))
    moved = pair_scores((i + shift[0], j + shift[1]), (i_k + shift[0], j_k + shift[1]))
    assert_close(scores.sum(), moved.sum(), "shifting both patches keeps the score", atol=1e-8)
    relative = mixed_rope(key[None, :], [i_k - i], [j_k - j], along_x, along_y)[0]
    assert_close(scores, (query * relative).reshape(-1, 2).sum(axis=1), "q_r^T R(phi_r(offsets)) k_r", atol=1e-8)
    # Moving the key by s (-f_y, f_x) in (column, row) keeps each pair's own score.
    s_step = float(rng.uniform(-5, 5))
    for pair_index in range(width // 2):
        along = (i_k + s_step * along_x[pair_index], j_k - s_step * along_y[pair_index])
        moved_key = pair_scores((i, j), along)[pair_index]
        assert_close(moved_key, scores[pair_index], f"pair {pair_index} constant along its line", atol=1e-8)


@derivation(
    "sincos-2d-kernel-sum",
    title="The 2-D sin-cos table's dot product is a row kernel plus a column kernel",
    statement=(
        r"\begin{aligned} P_2(i, j) &= \Pi \begin{pmatrix} P_{d/2}(i) \\ P_{d/2}(j) \end{pmatrix}, \\ "
        r"P_2(i, j) \cdot P_2(i', j') &= K_{d/2}(i - i') + K_{d/2}(j - j') \end{aligned}"
    ),
    summary=r"A 2-D sin-cos table puts one 1-D sinusoidal table of width $d/2$ for the row beside one for the "
    r"column, so the dot product of two of its rows is the 1-D kernel of the row offset plus that of the column "
    r"offset, whatever order the $d$ channels are stored in.",
    assumptions=(
        r"$i, j, i', j'$ real (row, column) positions",
        r"$d$ a multiple of 4, so each axis has an even width $d/2$",
        r"$P_{d/2}$ the 1-D encoding and $K_{d/2}$ its kernel (`kernel`) at width $d/2$",
        r"$\Pi$ any fixed permutation of the $d$ channels: sines then cosines, interleaved, column first",
    ),
    steps=(
        r"For stacked vectors the dot product adds over the parts: "
        r"$(U; X) \cdot (V; Y) = U \cdot V + X \cdot Y$ (`stacking_rules`).",
        r"The `kernel` identity $P_w(t) \cdot P_w(s) = K_w(t - s)$ holds at every even width $w$, here $w = d/2$, "
        r"which gives the two kernels.",
        r"A permutation matrix is orthogonal, $\Pi^\top\Pi = I$ (entry $(i, j)$ is "
        r"$\sum_k \delta_{k\pi(i)}\delta_{k\pi(j)} = \delta_{\pi(i)\pi(j)} = \delta_{ij}$), so "
        r"$(\Pi x) \cdot (\Pi y) = x \cdot y$: the sum over pairs does not depend on the order.",
    ),
    scope=GENERAL,
)
def prove_sincos_2d_kernel_sum() -> None:
    # The kernel identity at a symbolic even width d, as in `kernel`, then taken at the width d/2.
    pair_term = pair(t * omega(r, d)).dot(pair(s * omega(r, d)))
    dot = sum_over_pairs(pair_term, sp.cos(omega(r, d) * (t - s)), "pair r contributes cos(omega_r (t - s))")
    if dot != kernel_sum(t - s):
        raise ProofFailure(f"P(t).P(s) = {dot}, not K(t - s)")
    axis_width = sp.Symbol("w", positive=True, integer=True, even=True)  # d/2 when 4 divides d
    row, column, row_k, column_k = sp.symbols("i j i' j'", real=True)

    def axis_kernel(offset: sp.Expr) -> sp.Expr:
        return kernel_sum(offset).subs(d, axis_width)

    row_kernel = dot.subs({t: row, s: row_k}).subs(d, axis_width)
    column_kernel = dot.subs({t: column, s: column_k}).subs(d, axis_width)
    if row_kernel != axis_kernel(row - row_k) or column_kernel != axis_kernel(column - column_k):
        raise ProofFailure("the kernel identity does not carry over to the width d/2")

    stacking_rules()
    parts = {name: sp.MatrixSymbol(name, axis_width, 1) for name in ("U", "X", "V", "Y")}
    stacked_dot = sp.block_collapse(
        sp.BlockMatrix([[parts["U"]], [parts["X"]]]).T * sp.BlockMatrix([[parts["V"]], [parts["Y"]]])
    )
    if stacked_dot != parts["U"].T * parts["V"] + parts["X"].T * parts["Y"]:
        raise ProofFailure(
            f"the dot product of the stacked rows is {stacked_dot}, not the row part plus the column part"
        )

    # A permutation matrix Pi_{k i} = delta(k, pi(i)) is orthogonal, for channels pi(i), pi(j) in 0..d - 1.
    channel = sp.Symbol("k", integer=True)
    image_i, image_j = sp.symbols("c e", nonnegative=True, integer=True)
    overlap = sp.Sum(sp.KroneckerDelta(channel, image_i) * sp.KroneckerDelta(channel, image_j), (channel, 0, d - 1))
    if at_most(d - 1, overlap.doit() - sp.KroneckerDelta(image_i, image_j), image_i, image_j) != 0:
        raise ProofFailure("a permutation matrix is not orthogonal")
    permutation = sp.MatrixSymbol("Pi", d, d)
    first, second = sp.MatrixSymbol("x", d, 1), sp.MatrixSymbol("y", d, 1)
    permuted = (
        ((permutation * first).T * (permutation * second)).doit().subs(permutation.T * permutation, sp.Identity(d))
    )
    if permuted != first.T * second:
        raise ProofFailure(f"(Pi x).(Pi y) = {permuted}, not x.y")


def sincos_2d_table(rows: np.ndarray, columns: np.ndarray, width: int, order: str) -> np.ndarray:
    """A 2-D sin-cos table of ``width`` channels: the row's 1-D table of width d/2, then the column's.

    "interleaved" uses posenc's sinusoidal encoding; "sin-then-cos" writes each axis as all its
    sines then all its cosines, the order of MAE's 2-D table, computed here from the phases.
    """
    half = width // 2
    if order == "interleaved":
        return np.concatenate([posenc.sinusoidal(rows, half), posenc.sinusoidal(columns, half)], axis=1)
    parts = []
    for ids in (rows, columns):
        phases = np.multiply.outer(ids, posenc.frequencies(half))
        parts.extend([np.sin(phases), np.cos(phases)])
    return np.concatenate(parts, axis=1)


@numeric_check("sincos-2d-kernel-sum")
def check_sincos_2d_kernel_sum(rng: np.random.Generator) -> None:
    width = 4 * int(rng.integers(1, 17))
    rows, columns = rng.integers(0, 10**3, size=(2, 16))
    shuffle = rng.permutation(width)
    for order in ("interleaved", "sin-then-cos"):
        table = sincos_2d_table(rows, columns, width, order)[:, shuffle]
        dots = table @ table.T
        expected = posenc.kernel(np.subtract.outer(rows, rows), width // 2) + posenc.kernel(
            np.subtract.outer(columns, columns), width // 2
        )
        assert_close(dots, expected, f"P_2 . P_2 = K(row offset) + K(column offset) ({order})", atol=1e-8)


@derivation(
    "resampling-linear-map",
    title="Resizing a table of patch positions is one linear map for every channel",
    statement=(
        r"\begin{aligned} T'_{(i', j'), c} &= \textstyle\sum_{i, j} (W_r)_{i' i}\,(W_c)_{j' j}\,T_{(i, j), c}, \\ "
        r"T' &= (W_r \otimes W_c)\,T, \end{aligned}"
        r" \qquad\allowbreak (W_r \otimes W_c)(T M) = \big((W_r \otimes W_c)\,T\big) M"
    ),
    summary=r"Resizing each channel's $R \times C$ grid separably, rows by $W_r$ and columns by $W_c$, maps the "
    r"row-major table $T$ ($RC \times d$) to $(W_r \otimes W_c)\,T$: one matrix, the same for every channel, so "
    r"resizing commutes with any linear map $M$ of the channels.",
    assumptions=(
        r"$T$ the $RC \times d$ table, row $(i, j)$ at index $iC + j$; $T' $ the $R'C' \times d$ result",
        r"$W_r \in \mathbb{R}^{R' \times R}$, $W_c \in \mathbb{R}^{C' \times C}$ the weights of any 1-D "
        r"interpolation (nearest, linear, cubic, with or without antialias)",
        r"$M \in \mathbb{R}^{d \times e}$ any matrix",
    ),
    steps=(
        r"Channel $c$ of the table is the grid $G_c$ with $(G_c)_{ij} = T_{(i, j), c}$; resizing it separably gives "
        r"$W_r G_c W_c^\top$, whose entry $(i', j')$ is $\sum_{i, j} (W_r)_{i'i}(G_c)_{ij}(W_c)_{j'j}$.",
        r"In row-major order, $(W_r \otimes W_c)_{(i', j'), (i, j)} = (W_r)_{i'i}(W_c)_{j'j}$, and "
        r"$(i, j) \mapsto iC + j$ takes the $RC$ cells to the $RC$ rows one to one, so row $(i', j')$ of "
        r"$(W_r \otimes W_c)\,T$ is that same sum: the same weights for every channel $c$.",
        r"Matrix products associate, so applying $M$ to the channels before or after resizing gives the same table.",
    ),
    scope=GENERAL,
)
def prove_resampling_linear_map() -> None:
    rows, columns, new_rows, new_columns, width, out = sp.symbols("R C R' C' d e", positive=True, integer=True)
    row_weights, column_weights = sp.MatrixSymbol("W_r", new_rows, rows), sp.MatrixSymbol("W_c", new_columns, columns)
    grid = sp.MatrixSymbol("G_c", rows, columns)
    i, j, i_new, j_new = sp.symbols("i j i' j'", nonnegative=True, integer=True)
    resized = (row_weights * grid * column_weights.T)[i_new, j_new]
    resized = resized.xreplace(dict(zip(resized.variables, (i, j), strict=True)))
    through_kronecker = sp.Sum(
        row_weights[i_new, i] * column_weights[j_new, j] * grid[i, j], (i, 0, rows - 1), (j, 0, columns - 1)
    )
    if resized != through_kronecker:
        raise ProofFailure(f"entry (i', j') of W_r G W_c^T is {resized}, not the Kronecker row times the column")

    # The row-major index i C + j takes the cells 0 <= i < R, 0 <= j < C to the rows 0..RC - 1 one to one.
    index = i * columns + j
    ahead = sp.Symbol("g", nonnegative=True, integer=True)
    last = at_most(rows - 1, at_most(columns - 1, index, j), i)
    if sp.expand(rows * columns - 1 - last).is_nonnegative is not True:
        raise ProofFailure(f"the index {index} can pass the last row R C - 1")
    other_j = sp.Symbol("j_2", nonnegative=True, integer=True)
    # A later grid row: i_2 = i + 1 + g puts i_2 C + j_2 past i C + j for every j <= C - 1.
    later = (i + 1 + ahead) * columns + other_j - at_most(columns - 1, index, j)
    if sp.expand(later).is_positive is not True:
        raise ProofFailure(f"cells of different grid rows can share an index: difference {later}")
    if sp.solve(index - (i * columns + other_j), other_j) != [j]:
        raise ProofFailure("cells of the same grid row can share an index")

    kronecker = sp.MatrixSymbol("K", new_rows * new_columns, rows * columns)
    table, channels = sp.MatrixSymbol("T", rows * columns, width), sp.MatrixSymbol("M", width, out)
    if (kronecker * (table * channels)).doit() != ((kronecker * table) * channels).doit():
        raise ProofFailure("resizing does not commute with a linear map of the channels")


def interpolation_weights(sizes: tuple[int, int]) -> np.ndarray:
    """Linear interpolation from ``sizes[0]`` samples to ``sizes[1]`` at pixel centres (align_corners=False).

    Column i holds where the i-th unit impulse goes, so W @ signal interpolates any signal.
    """
    old, new = sizes
    at = np.clip((np.arange(new) + 0.5) * old / new - 0.5, 0, old - 1)
    return np.stack([np.interp(at, np.arange(old), unit) for unit in np.eye(old)], axis=1)


@numeric_check("resampling-linear-map")
def check_resampling_linear_map(rng: np.random.Generator) -> None:
    rows, columns, new_rows, new_columns = (int(size) for size in rng.integers(2, 9, size=4))
    width = random_width(rng)
    table = rng.standard_normal((rows * columns, width))
    row_weights = interpolation_weights((rows, new_rows))
    column_weights = interpolation_weights((columns, new_columns))
    # Resize each channel's grid directly: rows with np.interp, then columns.
    at_rows = np.clip((np.arange(new_rows) + 0.5) * rows / new_rows - 0.5, 0, rows - 1)
    at_columns = np.clip((np.arange(new_columns) + 0.5) * columns / new_columns - 0.5, 0, columns - 1)
    grids = table.T.reshape(width, rows, columns)
    resized = np.empty((width, new_rows, new_columns))
    for c in range(width):
        by_rows = np.stack([np.interp(at_rows, np.arange(rows), grids[c][:, j]) for j in range(columns)], axis=1)
        resized[c] = np.stack([np.interp(at_columns, np.arange(columns), line) for line in by_rows])
    kronecker = np.kron(row_weights, column_weights)
    assert_close(resized.reshape(width, -1).T, kronecker @ table, "resized table = (W_r kron W_c) T", atol=1e-12)
    mixing = rng.standard_normal((width, 3))
    assert_close(kronecker @ (table @ mixing), (kronecker @ table) @ mixing, "resizing commutes with M", atol=1e-10)


@derivation(
    "cubic-convolution-weights",
    title="Cubic convolution's four weights sum to one and interpolate",
    statement=(
        r"\begin{aligned} w_{-1} &= a\,t(1 - t)^2, \\ w_0 &= (a + 2)t^3 - (a + 3)t^2 + 1, \\ "
        r"w_1 &= -a\,t + (2a + 3)t^2 - (a + 2)t^3, \\ w_2 &= a\,t^2(1 - t) \end{aligned}"
        r" \qquad\allowbreak w_{-1} + w_0 + w_1 + w_2 = 1, \qquad\allowbreak (w_k)_{t = 0} = (0, 1, 0, 0)"
    ),
    summary=r"Keys' cubic convolution kernel with parameter $a$ gives the samples at $x - 1, x, x + 1, x + 2$ "
    r"these weights when the point lies a fraction $t$ past $x$; they sum to 1 for every $a$ and $t$, and at "
    r"$t = 0$ they return the sample itself. PyTorch's bicubic resize uses $a = -0.75$, and $a = -0.5$ with "
    r"antialias.",
    assumptions=(
        r"$t \in [0, 1)$ the fractional offset, $a$ any real parameter",
        r"$W(x) = (a + 2)|x|^3 - (a + 3)|x|^2 + 1$ for $|x| \le 1$, $a|x|^3 - 5a|x|^2 + 8a|x| - 4a$ for "
        r"$1 < |x| < 2$, $0$ otherwise",
        r"$w_k = W(t - k)$, the weight of the sample $k$ steps from $x$",
    ),
    steps=(
        r"The distances $|t - k|$ are $1 + t \in [1, 2)$, $t \in [0, 1)$, $1 - t \in (0, 1]$ and $2 - t \in (1, 2]$; "
        r"the outer piece is $0$ at $2$ and both pieces are $0$ at $1$, so the inner piece gives $w_0, w_1$ and "
        r"the outer piece $w_{-1}, w_2$ even at the ends.",
        r"Expanding the cubics gives the four polynomials displayed; their sum has the coefficients "
        r"$0, 0, 0$ on $t^3, t^2, t$ and $1$ as the constant, for every $a$.",
        r"At $t = 0$: $w_{-1} = w_2 = 0$ (a factor $t$), $w_0 = 1$ and $w_1 = 0$, so resizing to the same grid "
        r"returns every sample unchanged.",
    ),
    scope=GENERAL,
)
def prove_cubic_convolution_weights() -> None:
    a = sp.Symbol("a", real=True)
    offset = sp.Symbol("t", nonnegative=True)

    def inner(distance: sp.Expr) -> sp.Expr:
        return (a + 2) * distance**3 - (a + 3) * distance**2 + 1

    def outer(distance: sp.Expr) -> sp.Expr:
        return a * distance**3 - 5 * a * distance**2 + 8 * a * distance - 4 * a

    if (sp.expand(inner(1)), sp.expand(outer(1)), sp.expand(outer(2))) != (0, 0, 0):
        raise ProofFailure("the kernel's pieces do not meet at 0 where |x| = 1 and |x| = 2")
    weights = (outer(1 + offset), inner(offset), inner(1 - offset), outer(2 - offset))
    displayed = (
        a * offset * (1 - offset) ** 2,
        (a + 2) * offset**3 - (a + 3) * offset**2 + 1,
        -a * offset + (2 * a + 3) * offset**2 - (a + 2) * offset**3,
        a * offset**2 * (1 - offset),
    )
    for weight, shown in zip(weights, displayed, strict=True):
        assert_equal(sp.expand(weight), sp.expand(shown), "the weight is the displayed polynomial")
    assert_equal(sp.expand(sum(weights)), 1, "the four weights sum to 1")
    if [sp.expand(weight).subs(offset, 0) for weight in weights] != [0, 1, 0, 0]:
        raise ProofFailure("at t = 0 the weights are not (0, 1, 0, 0)")


def keys_kernel(distance: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel W(x) with parameter a."""
    x = np.abs(distance)
    inner = (a + 2) * x**3 - (a + 3) * x**2 + 1
    outer = a * x**3 - 5 * a * x**2 + 8 * a * x - 4 * a
    return np.where(x <= 1, inner, np.where(x < 2, outer, 0.0))


@numeric_check("cubic-convolution-weights")
def check_cubic_convolution_weights(rng: np.random.Generator) -> None:
    offsets = np.concatenate([[0.0], rng.uniform(0, 1, size=31)])
    for a in (-0.75, -0.5, float(rng.uniform(-2, 1))):
        weights = np.stack([keys_kernel(offsets - k, a) for k in (-1, 0, 1, 2)])
        shown = np.stack(
            [
                a * offsets * (1 - offsets) ** 2,
                (a + 2) * offsets**3 - (a + 3) * offsets**2 + 1,
                -a * offsets + (2 * a + 3) * offsets**2 - (a + 2) * offsets**3,
                a * offsets**2 * (1 - offsets),
            ]
        )
        assert_close(weights, shown, f"the displayed weights at a = {a}", atol=1e-12)
        assert_close(weights.sum(axis=0), np.ones(offsets.size), f"the weights sum to 1 at a = {a}", atol=1e-12)
        assert_close(weights[:, 0], [0.0, 1.0, 0.0, 0.0], f"t = 0 returns the sample at a = {a}", atol=0)
