"""ALiBi: the head slopes, the softmax's indifference to a per-row shift, and the symmetric bias."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import sympy as sp

import posenc

from ..registry import GENERAL, ProofFailure, assert_close, assert_equal, derivation, numeric_check
from .common import softmax


@derivation(
    "alibi-slopes",
    title="ALiBi's head slopes form a geometric sequence",
    statement=(
        r"s_h = 2^{-8h/n} \ (h = 1, \ldots, n)"
        r" \qquad\allowbreak \Longrightarrow\; \frac{s_{h+1}}{s_h} = 2^{-8/n},"
        r" \qquad\allowbreak s_1 = 2^{-8/n}, \quad s_n = 2^{-8}"
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
        r"\begin{gathered} \begin{aligned} &\operatorname{softmax}_{j \le i}\big(a_{ij} + m\,j\big) \\ "
        r"&\quad = \operatorname{softmax}_{j \le i}\big(a_{ij} - m\,(i - j)\big), \end{aligned} \\ "
        r"\text{since } -m\,(i - j) = m\,j - m\,i \end{gathered}"
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
    "alibi-symmetric",
    title="Symmetric ALiBi depends on |i - j| alone",
    statement=(
        r"b_h(i, j) = -m_h\,|i - j|"
        r" \qquad\allowbreak \Longrightarrow\quad b_h(j, i) = b_h(i, j) = b_h(i + c, j + c)"
    ),
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
