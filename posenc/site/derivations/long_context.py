"""Long context (posenc.long_context): which pairs outgrow the training length, YaRN's ramp,
re-rotating cached keys, xPos and the entropy of attention.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

import posenc

from ..registry import GENERAL, ProofFailure, assert_close, assert_equal, derivation, numeric_check
from .common import (
    angle_sum,
    base,
    blocks_multiply_pairwise,
    d,
    for_pair_r,
    omega,
    r,
    random_vectors,
    random_width,
    rotation,
    softmax,
    stacking_rules,
)


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
        r"\lambda_r = 2\pi\, b^{2r/d} > L \iff r > r_c,"
        r" \qquad\allowbreak r_c = \frac{d}{2}\,\frac{\ln(L/2\pi)}{\ln b}"
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
        r"\theta'_r = (1 - \gamma_r)\,\frac{\theta_r}{s} + \gamma_r\,\theta_r,\qquad\allowbreak \gamma_r"
        r" = 1 \Rightarrow \theta'_r = \theta_r, \quad \gamma_r = 0 \Rightarrow \theta'_r = \frac{\theta_r}{s}"
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
    assert_close(
        scaled, (1 - (1 - weight)) * theta / scale + (1 - weight) * theta, "the blend with gamma = 1 - w", atol=1e-15
    )
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
    assert_close(
        moved, posenc.rope(keys, positions + offset), "re-rotated keys = keys rotated at p + delta", atol=1e-13
    )


@derivation(
    "xpos-relative",
    title="xPos keeps the attention score a function of the offset",
    statement=(
        r"\begin{aligned} &\big(\zeta_r^{m/B} R(m\theta_r)\,q\big)^\top \big(\zeta_r^{-n/B}"
        r" R(n\theta_r)\,k\big) \\ "
        r"&\qquad = \zeta_r^{(m - n)/B}\; q^\top R\big((n - m)\theta_r\big)\,k \end{aligned}"
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
    statement=(
        r"p_i = \frac{e^{c}}{\sum_{j=1}^{n} e^{c}} = \frac{1}{n},"
        r" \qquad\allowbreak H = -\sum_{i=1}^{n} p_i \ln p_i = \ln n"
    ),
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
