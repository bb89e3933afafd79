"""Privacy collapse, as ready-made models (docs/math.md §8; [C] §4, [S] Thm III.4, [P] App. J, Ex. 10.5).

Each function builds the construction of a paper as a :class:`FiniteModel` (or computes its
continuous-output leakage exactly), so that :func:`check` reproduces the paper's numbers and
:func:`posterior_trace` shows the collapse happening.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np
from scipy.special import logsumexp

from ..validation import check_distribution, check_eps, check_probability, check_whole
from .model import FiniteModel, SecretPair

MAX_EXAMPLE_2_BITS = 10
MAX_LAPLACE_VERTICES = 2_000_000


def _distribution(values: Sequence[float], name: str) -> np.ndarray:
    try:
        arr = np.array(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of probabilities") from None
    if arr.size < 2:
        raise ValueError(
            f"{name} needs at least 2 datasets (the example needs two possible datasets per secret)"
        )
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(
            f"{name} must contain positive probabilities only (a dataset with probability 0 is not in U)"
        )
    return check_distribution(arr, name)


def example_1(
    first: Sequence[float] = (0.5, 0.3, 0.2),
    second: Sequence[float] = (0.6, 0.4),
    prob_first: float = 0.5,
) -> FiniteModel:
    """[C] §4 Example 1: one prior, one secret pair, zero leakage per run.

    Datasets "A1", "A2", … make s1 true with Pr[A_i | s1] = ``first[i]``; "B1", … make s2 = ¬s1
    true with Pr[B_j | s2] = ``second[j]``; Pr[s1] = ``prob_first``.  On A_i the mechanism
    draws B ~ Pr[· | s2] and outputs (A_i, B); on B_j it draws A ~ Pr[· | s1] and outputs
    (A, B_j).  Every output is equally likely under s1 and s2, yet two different outputs
    reveal the dataset: the component that did not change is the true one.  Expected runs
    for a true A-dataset: 1 + Σ_j q_j / (1 − q_j) with q = ``second`` (docs/math.md §8).
    """
    p1 = _distribution(first, "first (Pr[dataset | s1])")
    p2 = _distribution(second, "second (Pr[dataset | s2])")
    w = check_probability("prob_first", prob_first, open_interval=True)
    a_sets = [f"A{i + 1}" for i in range(p1.size)]
    b_sets = [f"B{j + 1}" for j in range(p2.size)]
    outputs = [(a, b) for a in a_sets for b in b_sets]
    mechanism = {}
    for a in a_sets:
        mechanism[a] = {(a, b): float(p2[j]) for j, b in enumerate(b_sets)}
    for b in b_sets:
        mechanism[b] = {(a, b): float(p1[i]) for i, a in enumerate(a_sets)}
    prior = {a: w * float(p1[i]) for i, a in enumerate(a_sets)}
    prior.update({b: (1 - w) * float(p2[j]) for j, b in enumerate(b_sets)})
    in_first = set(a_sets)
    pair = SecretPair(
        "s1 (an A dataset)", lambda d: d in in_first, "s2 (a B dataset)", lambda d: d not in in_first
    )
    return FiniteModel(a_sets + b_sets, prior, [pair], mechanism, outputs=outputs, name="[C] Example 1")


def _xor(bits: Sequence[int]) -> int:
    return int(sum(bits) % 2)


def example_2(n: int = 3) -> FiniteModel:
    """[C] §4 Example 2: n ≥ 3 fair bits, a secret pair (x_i = 0, x_i = 1) for every bit.

    With probability 1/2 the output is type A, ("A", (x_2⊕x_1, …, x_n⊕x_1)); otherwise type
    B, ("B", parity) with parity = x_1⊕…⊕x_n for odd n and x_2⊕…⊕x_n for even n.  Each
    output alone leaks nothing about any bit, but one output of each type reveals the whole
    dataset: 3 runs in expectation (docs/math.md §8).
    """
    n = check_whole("n (Example 2's number of bits)", n, minimum=3)
    if n > MAX_EXAMPLE_2_BITS:
        raise ValueError(f"n = {n} bits is too many to enumerate here; use at most {MAX_EXAMPLE_2_BITS}")
    datasets = list(itertools.product((0, 1), repeat=int(n)))

    def mech(d: tuple[int, ...]) -> dict:
        type_a = ("A", tuple(x ^ d[0] for x in d[1:]))
        type_b = ("B", _xor(d) if n % 2 == 1 else _xor(d[1:]))
        return {type_a: 0.5, type_b: 0.5}

    pairs = [
        SecretPair(f"x_{i + 1} = 0", lambda d, i=i: d[i] == 0, f"x_{i + 1} = 1", lambda d, i=i: d[i] == 1)
        for i in range(n)
    ]
    uniform = np.full(len(datasets), 1.0 / len(datasets))
    return FiniteModel(datasets, uniform, pairs, mech, name=f"[C] Example 2 (n = {n})")


def example_3_epsilon(lower_t: float, upper_t: float, lower_f: float, upper_f: float) -> float:
    """The ε of [C] Theorem (Example 3): max of |log| of the eight ratios of the interval ends."""
    lt, ut, lf, uf = (
        check_probability(name, value, open_interval=True)
        for name, value in (("lower_t", lower_t), ("upper_t", upper_t), ("lower_f", lower_f), ("upper_f", upper_f))
    )
    ratios = (
        ut / lf,
        lt / uf,
        (1 - ut) / uf,
        (1 - lt) / lf,
        lt / (1 - lf),
        ut / (1 - uf),
        (1 - ut) / (1 - lf),
        (1 - lt) / (1 - uf),
    )
    return max(abs(math.log(r)) for r in ratios)


def example_3(
    lower_t: float = 0.35,
    upper_t: float = 0.65,
    lower_f: float = 0.4,
    upper_f: float = 0.6,
    prob_s1: float = 0.5,
) -> FiniteModel:
    """[C] §4 Example 3: many priors, finite ε per run, the secret after 3 runs in expectation.

    Four datasets: s1 true and in U_T ("1a"), s1 true and not in U_T ("1b"), s1 false and in
    U_F ("2a"), s1 false and not in U_F ("2b").  Θ contains the priors with
    Pr[U_T | s1] = a ∈ [lower_t, upper_t] and Pr[U_F | ¬s1] = b ∈ [lower_f, upper_f]; every
    likelihood ratio is monotone in a and b, so the four corner priors attain the sup over
    the whole rectangle and are the ones listed.  On its true case the mechanism returns a
    tuple of two case names, one of which is the true case, each of the two tuples with
    probability 1/2.  ε per run is :func:`example_3_epsilon`; two different outputs reveal
    the case, so two runs leak +inf (docs/math.md §8).
    """
    lt, ut, lf, uf = (
        check_probability(name, value, open_interval=True)
        for name, value in (("lower_t", lower_t), ("upper_t", upper_t), ("lower_f", lower_f), ("upper_f", upper_f))
    )
    w = check_probability("prob_s1", prob_s1, open_interval=True)
    if lt > ut or lf > uf:
        raise ValueError(
            "each lower bound must be at most its upper bound (lower_t ≤ upper_t, lower_f ≤ upper_f)"
        )
    datasets = ["1a", "1b", "2a", "2b"]
    mechanism = {
        "1a": {("1a", "2a"): 0.5, ("1a", "2b"): 0.5},
        "1b": {("1b", "2a"): 0.5, ("1b", "2b"): 0.5},
        "2a": {("1a", "2a"): 0.5, ("1b", "2a"): 0.5},
        "2b": {("1a", "2b"): 0.5, ("1b", "2b"): 0.5},
    }
    priors, labels = [], []
    for a in (lt, ut):
        for b in (lf, uf):
            priors.append([w * a, w * (1 - a), (1 - w) * b, (1 - w) * (1 - b)])
            labels.append(f"Pr[U_T|s1] = {a:g}, Pr[U_F|¬s1] = {b:g}")
    pair = SecretPair.complement("s1", lambda d: d.startswith("1"))
    outputs = [("1a", "2a"), ("1a", "2b"), ("1b", "2a"), ("1b", "2b")]
    return FiniteModel(
        datasets, priors, [pair], mechanism, outputs=outputs, name="[C] Example 3", prior_labels=labels
    )


def appendix_j_example(prior: Mapping[tuple[int, int], float] | None = None) -> FiniteModel:
    """[P] Appendix J (proof of Theorem 9.1) on {0,1}²: 0 for one run, +inf for two.

    Secret pair (x_1 = 0, x_1 = 1), D* = (0, 0).  The mechanism outputs "ω1" on D*, "ω2" on
    the other dataset with x_1 = 0, and each with probability 1/2 when x_1 = 1.  Under the
    uniform prior Pr[ω1 | x_1 = 0] = Pr[D* | x_1 = 0] = 1/2 = Pr[ω1 | x_1 = 1]: no leakage.
    Two runs give (ω1, ω2) with probability 0 under x_1 = 0 and 1/4 under x_1 = 1: +inf.
    ``prior`` (default uniform) must keep 0 < Pr[D* | x_1 = 0] < 1 and Pr[x_1 = 1] > 0.
    """
    datasets = [(0, 0), (0, 1), (1, 0), (1, 1)]
    prior = dict.fromkeys(datasets, 0.25) if prior is None else dict(prior)
    p00, p01 = float(prior.get((0, 0), 0.0)), float(prior.get((0, 1), 0.0))
    if p00 <= 0 or p01 <= 0:
        raise ValueError(
            "the construction needs 0 < Pr[D* = (0,0) | x_1 = 0] < 1:"
            " give (0,0) and (0,1) positive probability"
        )
    if float(prior.get((1, 0), 0.0)) + float(prior.get((1, 1), 0.0)) <= 0:
        raise ValueError("the secret x_1 = 1 needs positive probability")
    mechanism = {
        (0, 0): {"ω1": 1.0},
        (0, 1): {"ω2": 1.0},
        (1, 0): {"ω1": 0.5, "ω2": 0.5},
        (1, 1): {"ω1": 0.5, "ω2": 0.5},
    }
    pair = SecretPair("x_1 = 0", lambda d: d[0] == 0, "x_1 = 1", lambda d: d[0] == 1)
    return FiniteModel(datasets, prior, [pair], mechanism, outputs=["ω1", "ω2"], name="[P] Appendix J")


def exam_order_example(eps: float, n: int) -> float:
    """[P] Example 10.5: leakage of ε-DP Laplace noise on the exam count, ln((e^{εn}−1)/(n(1−e^{−ε}))).

    Students take an oral exam in ID order, so the only possible datasets are D_0..D_n (the
    first j have taken it).  Under the uniform prior the pair (σ_(1,0), σ_(1,1)) compares D_0
    with a uniformly random D_1..D_n; at a noisy count ≥ n the density ratio is
    (1/n) Σ_j e^{εj}, which is the value returned (computed in log space).
    """
    e = check_eps("eps", eps)
    n = check_whole("n", n)
    return e * n + math.log(-math.expm1(-e * n)) - math.log(n) - math.log(-math.expm1(-e))


def exam_order_model(eps: float, n: int) -> FiniteModel:
    """[P] Examples 10.1/10.5 as a finite model with the discrete Laplace (two-sided geometric) count.

    Datasets are the n+1 exam states as bit tuples; the prior is uniform over them; secret
    pairs (σ_(i,0), σ_(i,1)) = (r_i = 0, r_i = 1) for every student i.  The mechanism adds
    noise with Pr[r] ∝ e^{−ε|r−j|}, r ∈ ℤ (ε-DP for a count); noisy counts ≤ 0 and ≥ n are
    lumped into "≤ 0" and "≥ n", which is exact because their likelihoods are proportional
    across datasets.  The pair for student 1 reaches :func:`exam_order_example` exactly.
    """
    e = check_eps("eps", eps)
    n = check_whole("n", n)
    if n > 200:
        raise ValueError(f"n = {n} students is too many for this classroom model; use at most 200")
    datasets = [tuple(1 if i < j else 0 for i in range(n)) for j in range(n + 1)]
    x = math.exp(-e)
    c = (1 - x) / (1 + x)
    outputs: list[object] = ["≤ 0", *range(1, n), f"≥ {n}"]

    def mech(d: tuple[int, ...]) -> dict:
        j = sum(d)
        row: dict[object, float] = {"≤ 0": x**j / (1 + x), f"≥ {n}": x ** (n - j) / (1 + x)}
        for r in range(1, n):
            row[r] = c * x ** abs(r - j)
        return row

    pairs = [
        SecretPair(f"r_{i + 1} = 0", lambda d, i=i: d[i] == 0, f"r_{i + 1} = 1", lambda d, i=i: d[i] == 1)
        for i in range(n)
    ]
    uniform = np.full(n + 1, 1.0 / (n + 1))
    return FiniteModel(datasets, uniform, pairs, mech, outputs=outputs, name=f"[P] Example 10.5 (n = {n})")


def _laplace_vertex_logs(values: np.ndarray, vertices: np.ndarray, scale: float) -> np.ndarray:
    """h[v, F] = log-density factor of output vertex v given F (up to a common constant per v)."""
    h = np.empty((vertices.size, values.size))
    for r, v in enumerate(vertices):
        if v == np.inf:
            h[r] = values / scale
        elif v == -np.inf:
            h[r] = -values / scale
        else:
            h[r] = -np.abs(v - values) / scale
    return h


def laplace_noise_leakage(
    given_first: Mapping[float, float],
    given_second: Mapping[float, float],
    scale: float = 1.0,
    releases: int = 1,
) -> float:
    """Exact sup over outputs of |log| density ratio for F + Lap(scale), k independent noises.

    ``given_first``/``given_second`` are the distributions of the query value F under the two
    secrets.  The output w ∈ ℝ^k has density Σ_F Pr[F|s] Π_l e^{−|w_l−F|/b}/(2b).  Between
    consecutive values of F every factor is A·e^{−w_l/b} + B·e^{w_l/b}, so the ratio is a
    linear-fractional, hence monotone, function of e^{2w_l/b} in each coordinate: the sup is
    attained at the grid of F values or in the limits w_l → ±∞, all of which are enumerated.
    This is how the numbers of [S] Thm III.4 and [P] Example 10.5 are computed (docs/math.md §8).
    """
    b = check_eps("scale", scale)
    k = check_whole("releases", releases)
    dists = []
    for name, dist in (("given_first", given_first), ("given_second", given_second)):
        if not isinstance(dist, Mapping) or not dist:
            raise ValueError(f"{name} must be a non-empty mapping value → probability")
        vals = np.array([float(v) for v in dist.keys()])
        probs = np.array([float(p) for p in dist.values()])
        if not np.all(np.isfinite(vals)):
            raise ValueError(f"{name}: query values must be finite numbers")
        check_distribution(probs, f"{name}'s distribution")
        dists.append((vals[probs > 0], probs[probs > 0]))
    grid = np.concatenate([[-np.inf], np.unique(np.concatenate([dists[0][0], dists[1][0]])), [np.inf]])
    if grid.size**k > MAX_LAPLACE_VERTICES:
        raise ValueError(
            f"{grid.size}^{k} output corners is too many; use fewer releases or fewer query values"
        )
    logs = []
    for vals, probs in dists:
        h = _laplace_vertex_logs(vals, grid, b)
        total = np.zeros((1, vals.size)) + np.log(probs)[None, :]
        for _ in range(k):
            total = (total[:, None, :] + h[None, :, :]).reshape(-1, vals.size)
        logs.append(logsumexp(total, axis=1))
    return float(np.max(np.abs(logs[0] - logs[1])))


def laplace_sum_leakage(p: float, q: float, releases: int = 1, scale: float = 1.0) -> float:
    """[S] Thm III.4's chain: X_1 → X_2 with P(X_2=1|X_1=1) = p, P(X_2=1|X_1=0) = q.

    Secret pair (X_1 = 0, X_1 = 1); the mechanism releases X_1 + X_2 + Lap(scale), ``releases``
    times with independent noise.  Returns the exact ε_puffer (the initial distribution of
    X_1 does not matter once both secrets have positive probability).
    """
    p = check_probability("p", p)
    q = check_probability("q", q)
    given_one = {2.0: p, 1.0: 1.0 - p}
    given_zero = {1.0: q, 0.0: 1.0 - q}
    return laplace_noise_leakage(given_one, given_zero, scale=scale, releases=releases)


def laplace_sum_counterexample(p: float = 0.9, q: float = 0.01) -> tuple[float, float]:
    """[S] Thm III.4: (ε of one release, ε of two releases) of X_1 + X_2 + Lap(1).

    For p = 0.9, q = 0.01: ≈ (1.9177, 3.8476), and 3.8476 > 2 × 1.9177: the second release
    costs more than the first (docs/math.md §8).
    """
    return laplace_sum_leakage(p, q, releases=1), laplace_sum_leakage(p, q, releases=2)
