"""Relative position in attention, and none at all (posenc.relative): Transformer-XL, T5 and
DeBERTa buckets, causal NoPE, Shaw, DeBERTa's disentangled terms, Kerple, FIRE and CoPE.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

import posenc

from ..registry import GENERAL, ProofFailure, assert_close, assert_equal, derivation, numeric_check
from .common import random_vectors, random_width, softmax


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
        r" &= \underbrace{q_i^\top k_j}_{(a)} + \underbrace{q_i^\top r_{i-j}}_{(b)} + \underbrace{u^\top"
        r" k_j}_{(c)} + \underbrace{v^\top r_{i-j}}_{(d)} \\ "
        r"&= (q_i + u)^\top k_j + (q_i + v)^\top r_{i-j}, \end{aligned}"
        r" \qquad\allowbreak q_i = W_q^\top E_i, \quad k_j = W_{k,E}^\top E_j, \quad r_{i-j}"
        r" = W_{k,R}^\top R_{i-j}"
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
        r"\begin{gathered} E_i^\top A E_j + E_i^\top A P_j + P_i^\top A E_j + P_i^\top A P_j \\ "
        r"\Big\downarrow \quad \begin{aligned} A P_j &\to W_q W_{k,R}^\top R_{i-j}, \\ "
        r"W_q^\top P_i &\to u \text{ (content key)},\ v \text{ (position key)} \end{aligned} \\ "
        r"q_i^\top k_j + q_i^\top r_{i-j} + u^\top k_j + v^\top r_{i-j} \end{gathered}"
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
    assert_close(
        q @ k + q @ r + pos_query @ k + pos_query @ r, score, "the four terms with u = v = W_q^T P_i", atol=1e-8
    )


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
    f = np.asarray(
        posenc.t5_relative_position_bucket(
            -distance, bidirectional=False, num_buckets=buckets, max_distance=max_distance
        )
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
    buckets = np.asarray(posenc.deberta_log_bucket(relative, size, max_position))
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
    "by t + 1, which differs at every position. This is the attention step of the read-out that Kazemnejad et al. "
    "(2023, Theorem 1) construct; Haviv et al. (2022) probed positions in such models and conjectured that the "
    "causal mask is how they find them.",
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
        r"can read the position from it, as in the construction of Kazemnejad et al. (2023, Theorem 1).",
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
    "shaw-clipped-relative",
    title="Shaw's relative vectors depend on the clipped offset alone",
    statement=(
        r"e_{ij} = \frac{q_i^\top \big(k_j + a^K_{c(j - i)}\big)}{\sqrt{d}},"
        r" \qquad\allowbreak z_i = \sum_j \alpha_{ij} \big(v_j + a^V_{c(j - i)}\big),"
        r" \qquad\allowbreak c(r) = \max(-k, \min(k, r))"
        r" \qquad\allowbreak \Longrightarrow\quad c\big((j + s) - (i + s)\big) = c(j - i),"
        r" \qquad\allowbreak c(r) = k \ (r \ge k), \quad c(r) = -k \ (r \le -k)"
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
    """DeBERTa's relative index delta of an offset i - j, for tables of 2k rows: i - j + k clamped to [0, 2k - 1]."""
    return sp.Piecewise((0, offset <= -span), (2 * span - 1, offset >= span - 1), (offset + span, True))


@derivation(
    "deberta-disentangled",
    title="DeBERTa's score is the four-term expansion without its position-to-position term",
    statement=(
        r"\begin{gathered} \begin{aligned} \tilde A_{ij}"
        r" &= \underbrace{Q^c_i {K^c_j}^\top}_{\text{c2c}} + \underbrace{Q^c_i"
        r" {K^r_{\delta(i,j)}}^\top}_{\text{c2p}} + \underbrace{K^c_j {Q^r_{\delta(j,i)}}^\top}_{\text{p2c}}"
        r" \\ "
        r"&= \big(Q^c_i + Q^r_{\delta(j,i)}\big)\big(K^c_j + K^r_{\delta(i,j)}\big)^\top \\ "
        r"&\quad - Q^r_{\delta(j,i)} {K^r_{\delta(i,j)}}^\top, \end{aligned} \\ "
        r"\delta(i, j) = \begin{cases} 0 & i - j \le -k \\ 2k - 1 & i - j \ge k - 1 \\ "
        r"i - j + k & \text{otherwise} \end{cases} \\ "
        r"\Longrightarrow\quad \delta(i + s, j + s) = \delta(i, j) \end{gathered}"
    ),
    summary=(
        "DeBERTa scores content against content, the query's content against the key's relative position (c2p), and "
        "the key's content against the query's relative position (p2c); that is the four-term expansion of content "
        "plus relative position on each side with the position-to-position term left out. The index delta is i - j + k "
        "clamped to the table's rows 0 to 2k - 1, so it depends on i - j alone, and its two saturated rows are not "
        "mirror images: row 2k - 1 is reached at i - j = k - 1, row 0 only at i - j = -k."
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
        r"changes no relative embedding chosen.",
        r"$\delta$ is $i - j + k$ clamped to $[0, 2k - 1]$: the middle case reaches $2k - 1$ at $i - j = k - 1$ "
        r"and 0 at $i - j = -k$, so every offset $\ge k - 1$ shares the last row and every offset $\le -k$ the "
        r"first.",
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
    # Where the rows are reached: the middle case i - j + k is already 2k - 1 at i - j = k - 1, where the top case
    # begins, but 0 only at i - j = -k, where the bottom case ends: one row per direction, not mirror images.
    offset = sp.Symbol("o", integer=True)
    assert_equal((offset + span).subs(offset, span - 1), 2 * span - 1, "i - j + k = 2k - 1 at i - j = k - 1")
    assert_equal((offset + span).subs(offset, -span), 0, "i - j + k = 0 at i - j = -k")
    assert_equal(deberta_delta(span - 1, span), 2 * span - 1, "delta = 2k - 1 at i - j = k - 1")
    assert_equal(deberta_delta(-span, span), 0, "delta = 0 at i - j = -k")


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
        r"b_{\text{power}}(i, j) = -r_1 |i - j|^{r_2},"
        r" \qquad\allowbreak b_{\text{log}}(i, j) = -r_1 \log\big(1 + r_2 |i - j|\big)"
        r" \qquad\allowbreak \Longrightarrow\quad b(i, i) = 0,"
        r" \qquad\allowbreak \frac{\partial b}{\partial |i - j|} < 0 \text{ for } |i - j| > 0,"
        r" \qquad\allowbreak b_{\text{power}}\big|_{r_2 = 1} = -r_1 |i - j|"
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
    assert_close(
        posenc.kerple_bias(ids, ids, r1, ones),
        -r1[:, None, None] * np.abs(ids[:, None] - ids[None, :]),
        "r_2 = 1 is ALiBi with slope r_1",
    )


@derivation(
    "fire-input-range",
    title="FIRE's normalised distance lies in [0, 1] at every length",
    statement=(
        r"b(i, j) = f_\theta\!\left(\frac{\psi(i - j)}{\psi(\max(L, i))}\right),"
        r" \qquad\allowbreak \psi(x) = \log(1 + c\,x)"
        r" \qquad\allowbreak \Longrightarrow\quad 0 \le \frac{\psi(i - j)}{\psi(\max(L, i))} \le 1"
        r" \quad (0 \le j \le i)"
    ),
    summary=(
        "FIRE feeds a learned MLP f with the distance i - j, compressed by psi and divided by psi of the query "
        "position (or of the threshold L while the query is earlier): for every causal key of every query, however "
        "far, the input lies in [0, 1]; it is 1 for the first key of any query at or past L, and below 1 for every "
        "key of a query before L. The range is all that is shown: which points of [0, 1] training reached depends on "
        "the training length and the learned c and L, so a longer input can still give the MLP values that training "
        "never did, between those it produced or, when every training query was before L, above them up to 1."
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
        r"For a query $i < L$ the normaliser is $\psi(L)$ and $\psi(i - j) \le \psi(i) < \psi(L)$: every input is "
        r"below 1, so a training run whose queries all lie before $L$ never shows the MLP the inputs near 1 that "
        r"later queries give their first keys.",
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
    # a query i >= 0 before the threshold, L = i + e with e > 0: its largest input psi(i) / psi(L) is below 1
    early, shortfall = sp.Symbol("i", nonnegative=True), sp.Symbol("e", positive=True)
    below = sp.simplify((1 + compress * (early + shortfall)) / (1 + compress * early) - 1)
    if not below.is_positive:
        raise ProofFailure(f"(1 + c(i + e))/(1 + ci) - 1 = {below} is not shown positive: psi(i) < psi(L) fails")


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
    if np.any(inputs[~late][causal[~late]] >= 1):
        raise ProofFailure("a query before L gives some key the input 1")
    w1, b1 = rng.standard_normal(hidden), rng.standard_normal(hidden)
    w2, b2 = rng.standard_normal((heads, hidden)), rng.standard_normal(heads)
    mlp = np.maximum(inputs[..., None] * w1 + b1, 0.0) @ w2.T + b2
    assert_close(
        posenc.fire_bias(ids, ids, w1, b1, w2, b2, c=c, threshold=threshold),
        np.moveaxis(mlp, -1, 0),
        "f applied to the normalised distance",
        atol=1e-9,
    )


@derivation(
    "cope-positions",
    title="CoPE's contextual positions count gates and fall with the key index",
    statement=(
        r"g_{ij} = \sigma(q_i^\top k_j), \qquad\allowbreak p_{ij} = \sum_{t=j}^{i} g_{it},"
        r" \qquad\allowbreak a_{ij} = q_i^\top\big(k_j + e[p_{ij}]\big)"
        r" \qquad\allowbreak \Longrightarrow\quad p_{ij} - p_{i,j+1} = g_{ij} \in (0, 1),"
        r" \qquad\allowbreak 0 < p_{ij} < i - j + 1,"
        r" \qquad\allowbreak g \equiv 1 \Rightarrow p_{ij} = i - j + 1"
    ),
    summary=(
        "Each gate belongs to a (query, key) pair, the sigmoid of the query's logit on that key; CoPE's position of "
        "key j seen from query i sums query i's gates on the keys from j to i. The sum drops by the gate g_ij per step "
        "to the right, stays strictly between 0 and the token distance plus one (a sigmoid never reaches 0 or 1), and "
        "would be the token distance plus one with every gate 1, the limit as the gates open. The position embedding "
        "e at a fractional p is interpolated between its two integer neighbours."
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
        r"With every gate equal to 1, $p_{ij} = \sum_{t=j}^{i} 1 = i - j + 1$: token counting, a relative position "
        r"(a logistic gate only approaches 1, so this is the limit as every logit grows).",
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
