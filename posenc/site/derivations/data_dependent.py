"""Position from the data (posenc.data_dependent): a constant forget gate is ALiBi, the stick-breaking
weights leave exactly the product of what no key took, and PaTH's reflections are NoPE at beta = 0
and never lengthen a vector for beta in [0, 2].
"""

from __future__ import annotations

import numpy as np
import sympy as sp

import posenc

from ..registry import GENERAL, ProofFailure, assert_close, assert_equal, derivation, numeric_check

# Query i, key j, the step l between them.
query, key, step = sp.symbols("i j l", integer=True)


# ---------------------------------------------------------------------------------------
# The Forgetting Transformer


@derivation(
    "fox-constant-gate-is-alibi",
    title="A constant forget gate is ALiBi with slope minus its log",
    statement=(
        r"D_{ij} = \sum_{l=j+1}^{i} \log f_l \ \ (j \le i)"
        r" \qquad\allowbreak f_l = f \;\Longrightarrow\; D_{ij} = -m\,(i - j), \quad m = -\log f"
    ),
    summary=r"The Forgetting Transformer adds $D_{ij}$, the sum of the log forget gates after key $j$ up to "
    r"query $i$, to the logit of query $i$ on key $j$. When every gate is the same $f \in (0, 1)$ (FoX's gate is a "
    r"sigmoid), the bias is $-m(i - j)$ with $m = -\log f > 0$: ALiBi's causal bias with slope $m$.",
    assumptions=(
        r"$i, j$ integer positions with $j \le i$ (a key at or before the query)",
        r"$f_l \in (0, 1)$ the forget gate of step $l$, a sigmoid; a constant gate $f \in (0, 1)$",
    ),
    steps=(
        r"With $f_l = f$ every term of the sum is $\log f$, and the sum runs over the $i - j$ steps "
        r"$l = j + 1, \ldots, i$, so $D_{ij} = (i - j)\log f$ (an empty sum, $0$, when $i = j$).",
        r"Writing $m = -\log f$ gives $D_{ij} = -m(i - j)$, ALiBi's bias for key $j$ at distance $i - j$; "
        r"$f \in (0, 1)$ makes $m > 0$ (write $f = 1/(1 + u)$ with $u > 0$: $m = \log(1 + u)$); ALiBi's "
        r"slope $m > 0$ is the gate $f = e^{-m}$. A gate of one, which a sigmoid only approaches, would give "
        r"$m = 0$: no bias.",
        r"SymPy sums the constant term for symbolic $i$ and $j$.",
    ),
    scope=GENERAL,
)
def prove_fox_constant_gate_is_alibi() -> None:
    gate = sp.Symbol("f", positive=True)
    distance = sp.Symbol("n", nonnegative=True, integer=True)
    bias = sp.Sum(sp.log(gate), (step, key + 1, key + distance)).doit()
    assert_equal(bias, distance * sp.log(gate), "sum_{l=j+1}^{j+n} log f = n log f")
    slope = -sp.log(gate)
    assert_equal(bias.subs(distance, query - key), -slope * (query - key), "D_ij = -m (i - j) with m = -log f")
    # Every f in (0, 1), a sigmoid's values, is 1 / (1 + u) for u = 1/f - 1 > 0, and then m = log(1 + u) > 0.
    spare = sp.Symbol("u", positive=True)
    if not sp.expand_log(slope.subs(gate, 1 / (1 + spare)), force=True).is_positive:
        raise ProofFailure("m = -log f is not shown positive for f in (0, 1)")


@numeric_check("fox-constant-gate-is-alibi")
def check_fox_constant_gate_is_alibi(rng: np.random.Generator) -> None:
    heads = int(rng.integers(1, 9))
    length = int(rng.integers(1, 40))
    slopes = posenc.alibi_slopes(heads)
    gates = np.repeat(np.exp(-slopes)[:, None], length, axis=1)
    bias = posenc.forgetting_bias(gates)
    alibi = posenc.alibi_bias(heads, length)
    if not np.array_equal(np.isinf(bias), np.isinf(alibi)):
        raise ProofFailure("FoX and ALiBi mask different keys")
    seen = np.isfinite(alibi)
    assert_close(bias[seen], alibi[seen], "D_ij = -m (i - j) for a constant gate e^(-m)", atol=1e-12)
    scores = rng.standard_normal((heads, length, length))
    causal_alibi = np.where(seen, scores + alibi, -np.inf)
    weights = np.exp(causal_alibi - causal_alibi.max(axis=-1, keepdims=True))
    assert_close(
        posenc.forgetting_attention(scores, gates),
        weights / weights.sum(axis=-1, keepdims=True),
        "FoX's attention is ALiBi's attention for a constant gate",
        atol=1e-12,
    )


# ---------------------------------------------------------------------------------------
# Stick-breaking attention

# The keys a query sees, counted from the nearest (m = 1) outwards; n of them.
near, seen_keys = sp.symbols("m n", positive=True, integer=True)
breaks = sp.Function("beta")


def stick_weight(index: sp.Expr) -> sp.Expr:
    """The share of the index-th nearest key: its beta times what the nearer keys left."""
    inner = sp.Symbol("k", positive=True, integer=True)
    return breaks(index) * sp.Product(1 - breaks(inner), (inner, 1, index - 1))


def stick_left(count: sp.Expr) -> sp.Expr:
    """What the nearest ``count`` keys leave: the product of their (1 - beta)."""
    inner = sp.Symbol("k", positive=True, integer=True)
    return sp.Product(1 - breaks(inner), (inner, 1, count))


@derivation(
    "stick-breaking-remainder",
    title="Stick-breaking weights sum to one minus the stick no key took, so at most one",
    statement=(
        r"A_{ij} = \beta_{ij} \prod_{j < k < i} (1 - \beta_{ik}), \quad \beta_{ij} = \sigma(z_{ij})"
        r" \qquad\allowbreak \sum_{j < i} A_{ij} = 1 - \prod_{j < i} (1 - \beta_{ij}) \;\in [0, 1)"
    ),
    summary=r"Query $i$ gives key $j < i$ the share $\beta_{ij}$ of the stick that the keys between them left. "
    r"For any number of keys the shares sum to $1$ minus the product of the $1 - \beta_{ij}$, which lies in "
    r"$(0, 1]$, so the weights sum to less than one. With the query's own key included ($j \le i$, the "
    r"product over $j < k \le i$) the same holds with the sums and products over $j \le i$.",
    assumptions=(
        r"$z_{ij}$ a finite logit and $\sigma(z) = 1/(1 + e^{-z})$, so $\beta_{ij} \in (0, 1)$",
        r"the keys counted from the nearest: key $j$ is the $m$-th nearest of the $n$ keys query $i$ sees, and "
        r"$A_{ij} = \beta_m \prod_{k=1}^{m-1} (1 - \beta_k)$ in that count",
    ),
    steps=(
        r"Let $S_n$ be the sum of the $n$ nearest shares and $P_n = \prod_{k=1}^{n} (1 - \beta_k)$. With no key, "
        r"$S_0 = 0 = 1 - P_0$.",
        r"If $S_n = 1 - P_n$, the next key adds $\beta_{n+1} P_n$, so $S_{n+1} = 1 - P_n + \beta_{n+1} P_n = "
        r"1 - P_n (1 - \beta_{n+1}) = 1 - P_{n+1}$: by induction $S_n = 1 - P_n$ for every $n$.",
        r"$1 - \sigma(z) = \sigma(-z) \in (0, 1)$, so $P_n \in (0, 1]$ and every share is positive: "
        r"$0 \le S_n < 1$.",
        r"SymPy proves the base, the step (with the sums and products over a symbolic $n$) and "
        r"$1 - \sigma(z) = \sigma(-z)$.",
    ),
    scope=GENERAL,
)
def prove_stick_breaking_remainder() -> None:
    # Base: no key takes nothing and leaves the whole stick.
    assert_equal(sp.Sum(stick_weight(near), (near, 1, 0)).doit(), 1 - stick_left(0).doit(), "S_0 = 0 = 1 - P_0")
    # Step, for a symbolic n: the sum and the product over n + 1 keys are those over n keys joined
    # to their (n+1)-th term (SymPy joins the adjacent ranges), and that term is beta_(n+1) P_n.
    last_share = sp.Sum(stick_weight(near), (near, seen_keys + 1, seen_keys + 1))
    last_factor = sp.Product(1 - breaks(near), (near, seen_keys + 1, seen_keys + 1))
    if sp.simplify(sp.Sum(stick_weight(near), (near, 1, seen_keys)) + last_share) != sp.Sum(
        stick_weight(near), (near, 1, seen_keys + 1)
    ):
        raise ProofFailure("S_(n+1) is not S_n plus the (n+1)-th share")
    inner = sp.Symbol("k", positive=True, integer=True)
    if sp.simplify(stick_left(seen_keys) * last_factor.xreplace({near: inner})) != stick_left(seen_keys + 1):
        raise ProofFailure("P_(n+1) is not P_n times the (n+1)-th factor")
    assert_equal(last_share.doit(), breaks(seen_keys + 1) * stick_left(seen_keys), "the (n+1)-th share is beta P_n")
    assert_equal(last_factor.doit(), 1 - breaks(seen_keys + 1), "the (n+1)-th factor is 1 - beta_(n+1)")
    # With the hypothesis S_n = 1 - P_n (P_n one symbol): S_(n+1) = 1 - P_(n+1).
    left = sp.Symbol("P_n")
    assert_equal((1 - left) + breaks(seen_keys + 1) * left, 1 - left * (1 - breaks(seen_keys + 1)), "the step")
    # Each factor lies in (0, 1): 1 - sigma(z) = sigma(-z).
    logit = sp.Symbol("z", real=True)
    assert_equal(1 - 1 / (1 + sp.exp(-logit)), 1 / (1 + sp.exp(logit)), "1 - sigma(z) = sigma(-z)")


@numeric_check("stick-breaking-remainder")
def check_stick_breaking_remainder(rng: np.random.Generator) -> None:
    length = int(rng.integers(1, 30))
    logits = rng.standard_normal((3, length, length)) * float(rng.choice([0.5, 3.0, 10.0]))
    for current in (False, True):
        weights = posenc.stick_breaking_weights(logits, attend_current=current)
        remainder = posenc.stick_breaking_remainder(logits, attend_current=current)
        assert_close(weights.sum(axis=-1), 1 - remainder, "sum_j A_ij = 1 - prod (1 - beta_ij)", atol=1e-13)
        if np.any(weights < 0) or np.any(weights.sum(axis=-1) > 1 + 1e-15):
            raise ProofFailure("a stick-breaking row has a negative weight or sums above one")
        beta = 1 / (1 + np.exp(-logits))
        product = np.prod(
            np.where(np.tril(np.ones((length, length), dtype=bool), 0 if current else -1), 1 - beta, 1.0), -1
        )
        assert_close(remainder, product, "the remainder is the product of 1 - beta", atol=1e-13)


# ---------------------------------------------------------------------------------------
# PaTH attention


@derivation(
    "path-reflections",
    title="PaTH's transforms: the identity at beta = 0, a reflection at beta = 2, never lengthening between",
    statement=(
        r"s_{ij} = q_i^\top H_i H_{i-1} \cdots H_{j+1}\, k_j,"
        r" \qquad\allowbreak H_t = I - \beta_t w_t w_t^\top, \ \lVert w_t \rVert = 1"
        r" \qquad\allowbreak H_t^\top H_t = I - \beta_t (2 - \beta_t)\, w_t w_t^\top"
        r" \qquad\allowbreak \beta_t = 0 \Rightarrow s_{ij} = q_i^\top k_j,"
        r" \qquad\allowbreak \beta_t = 2 \Rightarrow H_t^\top H_t = I,"
        r" \qquad\allowbreak \beta_t \in [0, 2] \Rightarrow \lVert H_t x \rVert \le \lVert x \rVert"
    ),
    summary=r"PaTH scores query $i$ on key $j \le i$ through the product of one Householder-like transform per "
    r"token after the key, up to the query. With every $\beta_t = 0$ each transform is the identity and the score "
    r"is NoPE's $q_i^\top k_j$. At any width, $H_t^\top H_t = I - \beta_t(2 - \beta_t) w_t w_t^\top$: at "
    r"$\beta_t = 2$ it is $I$ ($H_t$ is the reflection across the plane orthogonal to $w_t$), and for "
    r"$\beta_t \in [0, 2]$ no vector gets longer, so neither does any product of them.",
    assumptions=(
        r"$w_t$ a unit vector of any width $d$, $\beta_t$ real; $q_i$, $k_j$, $x$ vectors of width $d$",
        r"the product runs from $H_i$ next to the query to $H_{j+1}$ next to the key (an empty product, $I$, "
        r"when $j = i$), the order of fla-core's reference",
    ),
    steps=(
        r"$H_t$ is symmetric, so $H_t^\top H_t = (I - \beta_t P)^2 = I - 2\beta_t P + \beta_t^2 P^2$ with "
        r"$P = w_t w_t^\top$, and $P^2 = w_t (w_t^\top w_t) w_t^\top = P$ for a unit $w_t$.",
        r"So $H_t^\top H_t = I - \beta_t(2 - \beta_t) P$: the identity at $\beta_t = 0$ (then $H_t = I$ and the "
        r"product is $I$) and at $\beta_t = 2$.",
        r"$\lVert H_t x\rVert^2 = x^\top H_t^\top H_t x = \lVert x\rVert^2 - \beta_t(2 - \beta_t)(w_t^\top x)^2$, "
        r"and $\beta_t(2 - \beta_t) \ge 0$ for $\beta_t \in [0, 2]$.",
        r"SymPy expands $(I - \beta P)^2$ with $P$ a non-commuting symbol (no width is fixed), reduces $P^2$ to "
        r"$P$, and shows the sign from $\beta \ge 0$ and $2 - \beta \ge 0$.",
    ),
    scope=GENERAL,
)
def prove_path_reflections() -> None:
    beta = sp.Symbol("beta", real=True)
    projector = sp.Symbol("P", commutative=False)
    identity = sp.Integer(1)  # the identity matrix, which commutes with P
    gram = sp.expand((identity - beta * projector) * (identity - beta * projector))
    reduced = gram.subs(projector**2, projector)
    assert_equal(reduced, identity - beta * (2 - beta) * projector, "H^T H = I - beta (2 - beta) w w^T")
    if (identity - 0 * projector) != identity:
        raise ProofFailure("H is not the identity at beta = 0")
    assert_equal(reduced.subs(beta, 2), identity, "H^T H = I at beta = 2")
    # The squared length: |x|^2 - beta (2 - beta) c^2 with c = w^T x.
    along = sp.Symbol("c", real=True)
    low, high = sp.Symbol("beta", nonnegative=True), sp.Symbol("gamma", nonnegative=True)  # beta and 2 - beta
    loss = (beta * (2 - beta) * along**2).subs(beta, low).subs(2 - low, high)
    if not loss.is_nonnegative:
        raise ProofFailure(f"beta (2 - beta) (w^T x)^2 = {loss} is not shown non-negative for beta in [0, 2]")


@numeric_check("path-reflections")
def check_path_reflections(rng: np.random.Generator) -> None:
    width = int(rng.integers(1, 9))
    length = int(rng.integers(1, 12))
    q, k, w = (rng.standard_normal((length, width)) for _ in range(3))
    nope = posenc.path_scores(q, k, w, np.zeros(length))
    lower = np.tril(np.ones((length, length), dtype=bool))
    assert_close(nope[lower], (q @ k.T)[lower], "beta = 0 gives q_i . k_j", atol=1e-12)
    unit = w[0] / np.linalg.norm(w[0])
    for beta in (0.0, float(rng.uniform(0, 2)), 2.0):
        matrix = np.eye(width) - beta * np.outer(unit, unit)
        assert_close(
            matrix.T @ matrix,
            np.eye(width) - beta * (2 - beta) * np.outer(unit, unit),
            "H^T H = I - beta (2 - beta) w w^T",
            atol=1e-13,
        )
    betas = rng.uniform(0, 2, size=length)
    scores = posenc.path_scores(q, k, w, betas)
    bound = np.linalg.norm(q, axis=1)[:, None] * np.linalg.norm(k, axis=1)[None, :]
    if np.any(np.abs(scores[lower]) > bound[lower] * (1 + 1e-12)):
        raise ProofFailure("a PaTH score exceeds |q_i| |k_j| although every transform is a contraction")
    reflections = posenc.path_scores(q, k, np.repeat(w[:1], length, axis=0), np.full(length, 2.0))
    flipped = q @ (np.eye(width) - 2 * np.outer(unit, unit)) @ k.T
    parity = (np.arange(length)[:, None] - np.arange(length)[None, :]) % 2 == 1
    expected = np.where(parity, flipped, q @ k.T)
    assert_close(reflections[lower], expected[lower], "one reflection twice is the identity", atol=1e-12)
