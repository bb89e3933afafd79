"""Counting queries of the Pufferfish framework paper ([P] §7: Algorithms 1–4, Appendix E–G).

A database of n bits; the query is k = the number of ones.  Secrets (Eq. 12–13): σ_(i,t)
"individual i is in the data with value t" against ¬σ_i "i is not in the data (its record is
replaced by a fresh draw)".

* Algorithm 1 (single-prior privacy, Theorem 7.1): one binomial prior Binom(n, q).
* Algorithm 3 (hedging privacy, Theorem 7.3): the data publisher's q*, and every attacker
  prior f mixed with it, (1 − α)·f + α·f*.

Both form an interval [k_lo, k_hi] of "expected" counts.  Outside it the answer is k plus
two-sided geometric noise, Pr[r] = (1 − e^{−ε})/(1 + e^{−ε})·e^{−ε|r−k|}.  Inside it the noisy
counts in the interval get the smaller weight c·exp(−2ε − ε·min(|r−k_lo| + |k_lo−k|,
|r−k_hi| + |k_hi−k|)) and the leftover mass is spent on the output "true count k".

What the printed paper gets wrong, and what is implemented instead:

* The printed Pr["true count k"] is garbled.  It is the leftover mass; summing the noisy
  probabilities in closed form gives, with a = k − k_lo, b = k_hi − k,
  Pr["true count k"] = (1 − e^{−ε(a+1)})·(1 − e^{−ε(b+1)}), whose expansion has exactly the
  six exponentials of the printed expression.
* Algorithm 3, line 5, has a sign slip.  Claim G.1(2) for q > q*, read from its proof, is
  (q*)^j(1−q*)^{m−j} ≥ λ q^j (1−q)^{m−j}  ⇔  j ≤ [m·log((1−q*)/(1−q)) − log λ] / log(q(1−q*)/(q*(1−q))).
  Line 5 prints log((1−q_hi)/(1−q*)), which is negative.  The true-count ratio in Claim G.5
  needs the inequality for j = k and j = k − 1 with m = n − 1, so
  k_hi = min(n − 1, ⌊((n−1)·log((1−q*)/(1−q_hi)) − log λ) / log(q_hi(1−q*)/(q*(1−q_hi)))⌋),
  rounded down (the printed ceiling could admit a k outside the proven range); line 4 keeps
  its ceiling.
* λ = (1 − α)/(α(e^{ε/3} − 1)) is below 1 when α·e^{ε/3} > 1 (possible for α < 1/2 and large ε,
  contrary to Claim G.5's "λ > 1 because α < 0.5"), while Claim G.2 needs λ ≥ 1.  Using
  max(λ, 1) only shrinks the interval and keeps Claim G.5's bound (α + (1−α)/λ)/α ≤ e^{ε/3}.

Every endpoint is then re-checked against its defining inequality in log space and moved
inward if rounding error put it one step too far: the interval can only shrink.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom, multinomial

from ..validation import check_distribution, check_eps, check_probability, check_rng, check_whole
from .model import MAX_JOINT_CELLS, FiniteModel, SecretPair

SINGLE_PRIOR = "single-prior (Algorithm 1)"
HEDGING = "hedging (Algorithm 3)"


def _records(n: object) -> int:
    n = check_whole("n (the number of records)", n)
    if n > 1_000_000:
        raise ValueError(f"n = {n} records is over the limit of 1,000,000")
    return n


@dataclass(frozen=True)
class CountRelease:
    """One released count: ``exact`` is True for the output "true count k"."""

    value: int
    exact: bool

    @property
    def label(self) -> str:
        return f"true {self.value}" if self.exact else f"noisy {self.value}"


@dataclass(frozen=True)
class CountingMechanism:
    """Algorithm 1 or 3 of [P] §7 for a fixed (n, ε) and interval [k_lo, k_hi] (empty if k_lo > k_hi)."""

    n: int
    eps: float
    k_lo: int
    k_hi: int
    algorithm: str
    q: float
    alpha: float | None = None

    @property
    def interval(self) -> tuple[int, int] | None:
        """The counts that may be released exactly, or None when the interval is empty."""
        return (self.k_lo, self.k_hi) if self.k_lo <= self.k_hi else None

    def _in_interval(self, k: int) -> bool:
        return self.k_lo <= k <= self.k_hi

    def _count(self, k: object) -> int:
        return check_whole("the true count k", k, minimum=0, maximum=self.n)

    def noisy_probability(self, k: int, r: int | np.ndarray) -> np.ndarray | float:
        """Pr[output = "noisy count r"] when the true count is k (any integer r)."""
        k = self._count(k)
        r_arr = np.asarray(r, dtype=np.int64)
        c = -math.expm1(-self.eps) / (1.0 + math.exp(-self.eps))
        dist = np.abs(r_arr - k).astype(float)
        if self._in_interval(k):
            inside = (r_arr >= self.k_lo) & (r_arr <= self.k_hi)
            via_lo = np.abs(r_arr - self.k_lo) + (k - self.k_lo)
            via_hi = np.abs(r_arr - self.k_hi) + (self.k_hi - k)
            dist = np.where(inside, 2.0 + np.minimum(via_lo, via_hi), dist)
        out = c * np.exp(-self.eps * dist)
        return float(out) if np.ndim(out) == 0 else out

    def true_count_probability(self, k: int) -> float:
        """Pr["true count k"] = (1 − e^{−ε(k−k_lo+1)})(1 − e^{−ε(k_hi−k+1)}) inside the interval, else 0."""
        k = self._count(k)
        if not self._in_interval(k):
            return 0.0
        return math.expm1(-self.eps * (k - self.k_lo + 1)) * math.expm1(-self.eps * (self.k_hi - k + 1))

    def output_distribution(self, k: int) -> dict[str, float]:
        """Exact finite form of the output distribution, summing to 1.

        Outputs: "noisy ≤ 0", "noisy 1" … "noisy n−1", "noisy ≥ n" and, inside the interval,
        "true k".  Noisy counts ≤ 0 (or ≥ n) have likelihoods proportional across all true
        counts, since the interval lies inside [1, n−1]; lumping them loses no information
        about any secret, so the checker's ε is unchanged.
        """
        k = self._count(k)
        x = math.exp(-self.eps)
        c = -math.expm1(-self.eps) / (1.0 + x)
        out: dict[str, float] = {"noisy ≤ 0": c * x**k / (1 - x)}
        if self.n >= 2:
            middle = self.noisy_probability(k, np.arange(1, self.n))
            for r, p in zip(range(1, self.n), np.atleast_1d(middle)):
                out[f"noisy {r}"] = float(p)
        out[f"noisy ≥ {self.n}"] = c * x ** (self.n - k) / (1 - x)
        if self._in_interval(k):
            out[f"true {k}"] = self.true_count_probability(k)
        return out

    def sample(self, k: int, rng: np.random.Generator) -> CountRelease:
        """One release for true count k, drawn with ``rng``."""
        rng = check_rng(rng)
        k = self._count(k)
        x = math.exp(-self.eps)
        if not self._in_interval(k):
            step = rng.geometric(1 - x, size=2) - 1
            return CountRelease(int(k + step[0] - step[1]), False)
        inside = np.arange(self.k_lo, self.k_hi + 1)
        left, right = x ** (k - self.k_lo + 1) / (1 + x), x ** (self.k_hi - k + 1) / (1 + x)
        weights = np.concatenate(
            [[left, right], self.noisy_probability(k, inside), [self.true_count_probability(k)]]
        )
        pick = int(rng.choice(weights.size, p=weights / weights.sum()))
        if pick == 0:
            return CountRelease(int(self.k_lo - rng.geometric(1 - x)), False)
        if pick == 1:
            return CountRelease(int(self.k_hi + rng.geometric(1 - x)), False)
        if pick == weights.size - 1:
            return CountRelease(k, True)
        return CountRelease(int(inside[pick - 2]), False)

    def expected_absolute_error(self, k: int) -> float:
        """E|released count − k| (0 for the exact output): the utility cost of the noise."""
        k = self._count(k)
        x = math.exp(-self.eps)
        c = -math.expm1(-self.eps) / (1.0 + x)
        if not self._in_interval(k):
            return 2 * c * x / (1 - x) ** 2
        a, b = k - self.k_lo, self.k_hi - k
        tails = sum(c * x ** (d + 1) * ((d + 1) / (1 - x) + x / (1 - x) ** 2) for d in (a, b))
        inside = np.arange(self.k_lo, self.k_hi + 1)
        return float(tails + np.sum(self.noisy_probability(k, inside) * np.abs(inside - k)))


def _single_prior_ok(k: int, n: int, q: float, eps: float) -> bool:
    """Theorem 7.1's condition e^{−ε} ≤ k(1−q)/((n−k)q) ≤ e^{ε}, in log space."""
    log_ratio = math.log(k) - math.log(n - k) + math.log1p(-q) - math.log(q)
    return abs(log_ratio) <= eps


def counting_mechanism(q: float, n: int, eps: float) -> CountingMechanism:
    """[P] Algorithm 1 (SinglePriorCountingQuery): ε-Pufferfish under the one prior Binom(n, q).

    k_lo = max(1, ⌈n·e^{−ε}q/(e^{−ε}q + 1 − q)⌉), k_hi = min(n−1, ⌊n·e^{ε}q/(e^{ε}q + 1 − q)⌋)
    (Theorem 7.1, Appendix E).
    """
    q = check_probability("q", q)
    n = _records(n)
    eps = check_eps("eps", eps)
    if 0.0 < q < 1.0:
        lo = max(1, math.ceil(n * math.exp(-eps) * q / (math.exp(-eps) * q + 1 - q)))
        hi = min(n - 1, math.floor(n * math.exp(eps) * q / (math.exp(eps) * q + 1 - q)))
        while lo <= hi and not _single_prior_ok(lo, n, q, eps):
            lo += 1
        while hi >= lo and not _single_prior_ok(hi, n, q, eps):
            hi -= 1
    else:
        lo, hi = 1, 0
    return CountingMechanism(n, eps, lo, hi, SINGLE_PRIOR, q)


def _log_odds_gap(j: int, m: int, q: float, q_star: float, log_lambda: float) -> float:
    """log[(q*)^j (1−q*)^{m−j}] − log λ − log[q^j (1−q)^{m−j}] (Claim G.1's inequality is ≥ 0)."""
    return (
        j * (math.log(q_star) - math.log(q)) + (m - j) * (math.log1p(-q_star) - math.log1p(-q)) - log_lambda
    )


def hedging_parameters(q_star: float, eps: float, alpha: float) -> tuple[float, float, float]:
    """(q_lo, q_hi, λ) of [P] Algorithm 3 lines 1–3, with λ raised to 1 when it falls below."""
    t = math.exp(eps / 3)
    q_lo = q_star / (q_star + t * (1 - q_star))
    q_hi = t * q_star / (t * q_star + 1 - q_star)
    lam = (1 - alpha) / (alpha * math.expm1(eps / 3))
    return q_lo, q_hi, max(lam, 1.0)


def hedging_counting_mechanism(q_star: float, n: int, eps: float, alpha: float = 0.001) -> CountingMechanism:
    """[P] Algorithm 3 (HedgingPrivacyCountingQuery): ε-hedging privacy around the publisher's q*.

    k_lo = 1 + ⌈((n−1)·log((1−q_lo)/(1−q*)) + log λ) / log(q*(1−q_lo)/(q_lo(1−q*)))⌉ (line 4) and
    k_hi from Claim G.1(2) with the sign corrected and rounded down (see the module docstring).
    The interval is empty for small n: then every answer is noisy.
    """
    q_star = check_probability("q_star", q_star, open_interval=True)
    n = _records(n)
    eps = check_eps("eps", eps)
    alpha = check_probability("alpha", alpha, open_interval=True)
    if alpha >= 0.5:
        raise ValueError(f"alpha must be below 1/2 (the attacker's own belief must weigh more); got {alpha}")
    q_lo, q_hi, lam = hedging_parameters(q_star, eps, alpha)
    log_lam = math.log(lam)
    m = n - 1
    b_lo = math.log(q_star) - math.log1p(-q_star) - math.log(q_lo) + math.log1p(-q_lo)
    b_hi = math.log(q_hi) - math.log1p(-q_hi) - math.log(q_star) + math.log1p(-q_star)
    t_lo = (m * (math.log1p(-q_lo) - math.log1p(-q_star)) + log_lam) / b_lo
    t_hi = (m * (math.log1p(-q_star) - math.log1p(-q_hi)) - log_lam) / b_hi
    lo = max(1, 1 + math.ceil(t_lo))
    hi = min(n - 1, math.floor(t_hi))

    def ok(k: int) -> bool:
        return all(_log_odds_gap(j, m, q, q_star, log_lam) >= 0 for j in (k - 1, k) for q in (q_lo, q_hi))

    while lo <= hi and not ok(lo):
        lo += 1
    while hi >= lo and not ok(hi):
        hi -= 1
    return CountingMechanism(n, eps, lo, hi, HEDGING, q_star, alpha)


@dataclass(frozen=True)
class HistogramMechanism:
    """[P] Algorithms 2 and 4: each cell's count released by Algorithm 1 or 3 with its own q_i.

    Theorems 7.2 and 7.3 claim 2ε for the whole histogram (:attr:`paper_eps`).  With three or
    more cells the claim can fail: exact counts released for some cells can add up to n and
    so prove that another cell is empty, which is impossible when individual i is in that
    cell — an output possible under ¬σ_i and impossible under σ_(i,t), leakage +inf.  The
    proof of Theorem 7.2 bounds the released exact cells like one count K = Σ_T H[j], but
    nothing keeps K inside an interval [1, n−1].  :func:`histogram_model` + :func:`check`
    show it (e.g. q = (0.45, 0.45, 0.1), n = 10, ε = 1: outputs "true 4", "true 6").
    """

    cells: tuple[CountingMechanism, ...]

    @property
    def n(self) -> int:
        return self.cells[0].n

    @property
    def paper_eps(self) -> float:
        """2ε, what Theorems 7.2/7.3 claim (see the class docstring for when it fails)."""
        return 2 * self.cells[0].eps

    def _histogram(self, histogram: Sequence[int]) -> list[int]:
        h = [int(v) for v in histogram]
        if len(h) != len(self.cells):
            raise ValueError(f"the histogram needs {len(self.cells)} cells; got {len(h)}")
        if any(v < 0 for v in h) or sum(h) != self.n:
            raise ValueError(f"histogram counts must be non-negative and add up to n = {self.n}; got {h}")
        return h

    def sample(self, histogram: Sequence[int], rng: np.random.Generator) -> tuple[CountRelease, ...]:
        """One sanitized histogram (one release per cell)."""
        return tuple(cell.sample(v, rng) for cell, v in zip(self.cells, self._histogram(histogram)))

    def output_distribution(self, histogram: Sequence[int]) -> dict[tuple[str, ...], float]:
        """Exact joint distribution of the per-cell outputs (independent given the histogram)."""
        joint: dict[tuple[str, ...], float] = {(): 1.0}
        for cell, v in zip(self.cells, self._histogram(histogram)):
            dist = cell.output_distribution(v)
            joint = {key + (o,): p * po for key, p in joint.items() for o, po in dist.items()}
        return joint


def _cell_probabilities(q: Sequence[float], name: str) -> list[float]:
    try:
        qs = [float(v) for v in q]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of cell probabilities") from None
    if len(qs) < 2:
        raise ValueError(f"{name} needs at least 2 cells")
    if any(not 0.0 < v <= 1.0 for v in qs):
        raise ValueError(f"no component of {name} can be 0 (Algorithms 2 and 4 require it); got {qs}")
    check_distribution(qs, name)
    return qs


def single_prior_histogram(q: Sequence[float], n: int, eps: float) -> HistogramMechanism:
    """[P] Algorithm 2 (SinglePriorSanitizedHistogram): Algorithm 1 on every cell (claimed 2ε, Thm 7.2)."""
    qs = _cell_probabilities(q, "q")
    return HistogramMechanism(tuple(counting_mechanism(v, n, eps) for v in qs))


def hedging_histogram(
    q_star: Sequence[float], n: int, eps: float, alpha: float = 0.001
) -> HistogramMechanism:
    """[P] Algorithm 4 (HedgingPrivacySanitizedHistogram): Algorithm 3 on every cell (claimed 2ε, Thm 7.3)."""
    qs = _cell_probabilities(q_star, "q_star")
    if any(v >= 1.0 for v in qs):
        raise ValueError("every cell probability must be below 1 for hedging privacy")
    return HistogramMechanism(tuple(hedging_counting_mechanism(v, n, eps, alpha) for v in qs))


def counting_model(mechanism: CountingMechanism, attacker_q: Sequence[float] | None = None) -> FiniteModel:
    """The secrets and priors of [P] §7 as a :class:`FiniteModel`, to audit a counting mechanism.

    Datasets: ("in", t, k) — individual i is in the data with bit t and the other n−1 records
    have k ones — and ("out", k) — i is absent and the n records have k ones.  Pairs (Eq. 13):
    (σ_(i,0), ¬σ_i) and (σ_(i,1), ¬σ_i).  Only the conditionals Pr[D | secret] matter, so the
    secrets get fixed weights ¼, ¼, ½.  Each attacker f = Bernoulli(q) gives one prior:
    the others' count is Binom(n−1, q) (in) or Binom(n, q) (out); for a hedging mechanism it
    is the mixture (1−α)·Binom(·, q) + α·Binom(·, q*) (§7.2).  ``attacker_q`` defaults to the
    mechanism's own q for Algorithm 1 and to 0, 0.05, …, 1 for Algorithm 3.
    """
    n = mechanism.n
    if (3 * n + 1) * (2 * n + 2) > MAX_JOINT_CELLS:  # datasets × (at most) outputs of the table built below
        raise ValueError(
            f"n = {n} records give too many datasets and outputs for the classroom checker; use a smaller n"
        )
    if attacker_q is None:
        qs = [mechanism.q] if mechanism.alpha is None else [i / 20 for i in range(21)]
    else:
        qs = [check_probability("attacker q", v) for v in attacker_q]
        if not qs:
            raise ValueError("give at least one attacker q")
    datasets = [("in", t, k) for t in (0, 1) for k in range(n)] + [("out", k) for k in range(n + 1)]
    priors, labels = [], []
    for q in qs:
        others = binom.pmf(np.arange(n), n - 1, q)
        everyone = binom.pmf(np.arange(n + 1), n, q)
        if mechanism.alpha is not None:
            a = mechanism.alpha
            others = (1 - a) * others + a * binom.pmf(np.arange(n), n - 1, mechanism.q)
            everyone = (1 - a) * everyone + a * binom.pmf(np.arange(n + 1), n, mechanism.q)
        prior = np.concatenate([0.25 * others, 0.25 * others, 0.5 * everyone])
        priors.append(prior / prior.sum())
        labels.append(f"attacker q = {q:g}")

    def mech(d: tuple) -> dict[str, float]:
        k = d[1] + d[2] if d[0] == "in" else d[1]
        return mechanism.output_distribution(k)

    pairs = _presence_pairs({t: f"with bit {t}" for t in (0, 1)})
    return FiniteModel(datasets, priors, pairs, mech, name=f"[P] {mechanism.algorithm}", prior_labels=labels)


def _presence_pairs(values: dict[int, str]) -> list[SecretPair]:
    """[P] §7's secrets σ_(i,t) against ¬σ_i: record i is in the data with value t, or it is not.

    Datasets are ``("in", t, …)`` or ``("out", …)``; ``values`` maps each t to how it is read.
    """
    return [
        SecretPair(
            f"i in the data {where}",
            lambda d, t=t: d[0] == "in" and d[1] == t,
            "i not in the data",
            lambda d: d[0] == "out",
        )
        for t, where in values.items()
    ]


def _compositions(total: int, parts: int) -> list[tuple[int, ...]]:
    """All tuples of ``parts`` non-negative integers adding up to ``total``."""
    if parts == 1:
        return [(total,)]
    return [(first, *rest) for first in range(total + 1) for rest in _compositions(total - first, parts - 1)]


def histogram_model(
    mechanism: HistogramMechanism, attacker_q: Sequence[Sequence[float]] | None = None
) -> FiniteModel:
    """The secrets and priors of [P] §7.1.2 / §7.2 for a sanitized histogram, as a :class:`FiniteModel`.

    Datasets: ("in", t, H) — individual i is in the data in cell t and the other n−1 records
    form histogram H — and ("out", H) — i is absent and the n records form H.  Pairs
    (σ_(i,t), ¬σ_i) for every cell t.  Each attacker distribution f over cells gives a prior
    (multinomial counts; mixed with the publisher's q* for Algorithm 4); ``attacker_q``
    defaults to the mechanism's own q.  Secret weights are fixed (only conditionals matter).
    """
    cells = mechanism.cells
    m, n = len(cells), mechanism.n
    own = [c.q for c in cells]
    fs = [own] if attacker_q is None else [list(_cell_probabilities_or_zero(f, m)) for f in attacker_q]
    if not fs:
        raise ValueError("give at least one attacker distribution")
    if math.comb(n + m - 1, m - 1) * (m + 1) > 20_000:
        raise ValueError(
            "this histogram has too many possible datasets for the classroom checker;"
            " use a smaller n or fewer cells"
        )
    rest, full = np.array(_compositions(n - 1, m)), np.array(_compositions(n, m))
    datasets = [("in", t, tuple(h)) for t in range(m) for h in rest.tolist()]
    datasets += [("out", tuple(h)) for h in full.tolist()]
    alpha = cells[0].alpha

    def pmf(hists: np.ndarray, f: list[float]) -> np.ndarray:
        size = int(hists[0].sum())
        p = np.asarray(multinomial.pmf(hists, size, f), dtype=float)
        return p if alpha is None else (1 - alpha) * p + alpha * multinomial.pmf(hists, size, own)

    priors, labels = [], []
    for f in fs:
        others, everyone = pmf(rest, f), pmf(full, f)
        prior = np.concatenate([*(others / (2 * m) for _ in range(m)), everyone / 2])
        priors.append(prior / prior.sum())
        labels.append("attacker f = (" + ", ".join(f"{v:g}" for v in f) + ")")

    def mech(d: tuple) -> dict[tuple[str, ...], float]:
        if d[0] == "in":
            h = list(d[2])
            h[d[1]] += 1
        else:
            h = list(d[1])
        return mechanism.output_distribution(h)

    pairs = _presence_pairs({t: f"in cell {t + 1}" for t in range(m)})
    return FiniteModel(datasets, priors, pairs, mech, name="[P] sanitized histogram", prior_labels=labels)


def _cell_probabilities_or_zero(f: Sequence[float], m: int) -> list[float]:
    vals = [check_probability("attacker cell probability", v) for v in f]
    if len(vals) != m:
        raise ValueError(f"each attacker distribution needs {m} probabilities summing to 1; got {list(f)}")
    check_distribution(vals, f"the attacker distribution {list(f)}")
    return vals
