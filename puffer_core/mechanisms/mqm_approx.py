"""MQMApprox: the Markov quilt mechanism with the eigen-gap bound on the max-influence (docs/math.md §15).

[S] Lemma II.3 (from Song, Wang & Chaudhuri's MQMApprox).

Exact MQM (:mod:`puffer_core.engine.mqm`) computes every quilt's max-influence e(X_Q | X_t) from
powers of P; MQMApprox bounds it from two numbers of the chain, so it costs O(T·D) whatever K is:

    e({X_{t−a}, X_{t+b}} | X_t) ≤ 2·h(a) + h(b),   h(d) = log((π_min + e^{−g·d/2}) / (π_min − e^{−g·d/2})),

for a, b ≥ 2·log(1/π_min)/g, with π_min the smallest stationary probability and g = 1 − λ₂(P P*)
the eigen-gap of the multiplicative reversiblization (P* the time reversal).  One-sided quilts
take 2·h(a) or h(b) alone.  Then σ_max = max_t min over quilts card(X_N)/(ε − e) as in exact MQM,
and the release is F + Lap(L·σ_max).

**Why the bound holds** (for any initial distribution).  With k_d(y) = P^d(x, y)/π(y), k_d − 1 =
(P*)^d(k_0 − 1), and ‖P* f‖_π ≤ √λ₂·‖f‖_π for f ⊥ 1, so |P^d(x, y)/π(y) − 1| ≤
λ₂^{d/2}/√(π(x)π(y)) ≤ e^{−g·d/2}/π_min =: ε_d.  The right term log P^b(x, r)/P^b(x', r) is then at
most log((1 + ε_b)/(1 − ε_b)) = h(b); the left one, log (P^a(l, x)/p_t(x)) / (P^a(l, x')/p_t(x')),
has p_t(x) = Σ_l p_{t−a}(l)P^a(l, x) within the same factors, so at most 2·h(a).  Computed g is
lowered and π_min raised by a hair for rounding, which only raises h.  The search examines
distances up to D, where 3·h(D) ≤ ε/(8T²); further quilts are not examined, which can only raise
σ_max (more noise, never less).  MQMApprox releases compose additively, as exact MQM's ([S] §IV).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..accounting.events import MQMEvent
from ..priors.models import MarkovChainPrior, as_theta
from ..validation import WORK_LIMIT_SECONDS, check_eps, check_positive, check_whole, human_seconds
from .base import HISTOGRAM_SENSITIVITY, Refused
from .laplace import LaplaceCounts

MAX_STATES = 2_000  # the singular values of a K×K matrix
_SECONDS_PER_CELL = 2e-8  # the (D × D) quilt table and the T × D one-sided scores
_ROUNDING = 1e-10  # relative margin on g and π_min


@dataclass(frozen=True)
class EigenGap:
    """The chain's numbers behind MQMApprox: π_min, the eigen-gap g and the smallest usable quilt distance."""

    pi_min: float
    gap: float
    first: int  # ceil(2 log(1/π_min)/g): quilts nearer than this are not bounded by [S] Lemma II.3

    def influence(self, distance: np.ndarray) -> np.ndarray:
        """h(d) of the module docstring (+inf where the bound does not apply)."""
        d = np.asarray(distance, dtype=float)
        spread = np.exp(-self.gap * d / 2.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            h = np.log((self.pi_min + spread) / (self.pi_min - spread))
        return np.where((d >= self.first) & (spread < self.pi_min), h, np.inf)


def eigen_gap(prior: MarkovChainPrior) -> EigenGap:
    """π_min and g = 1 − λ₂(P P*) of a prior's chain; Refused when the bound does not apply."""
    if prior.n_states > MAX_STATES:
        raise ValueError(f"MQMApprox is limited to {MAX_STATES} states; the prior has {prior.n_states}")
    pi = prior.stationary_or_none
    if pi is None or np.any(pi <= 0):
        raise Refused(
            "no_guarantee",
            "MQMApprox needs one stationary distribution that gives every state positive probability;"
            " this chain has none (it is reducible or has transient states)",
        )
    root = np.sqrt(pi)
    A = root[:, None] * np.asarray(prior.transition) / root[None, :]  # D^{1/2} P D^{−1/2}: A Aᵀ ~ P P*
    singular = np.linalg.svd(A, compute_uv=False)
    second = float(singular[1]) if singular.size > 1 else 0.0
    gap = (1.0 - min(1.0, second) ** 2) * (1 - _ROUNDING) - 1e-15
    pi_min = float(pi.min()) * (1 - _ROUNDING)
    if gap <= 0:
        raise Refused(
            "no_guarantee",
            "MQMApprox needs an eigen-gap: P P* has a second eigenvalue of 1 (the chain is periodic or its"
            " time reversal never mixes it), so [S] Lemma II.3 bounds nothing",
        )
    first = math.ceil(2.0 * math.log(1.0 / pi_min) / gap)
    return EigenGap(pi_min, gap, max(1, first))


def _depth(gap: EigenGap, eps: float, length: int) -> int:
    """D: the distance from which 3·h(d) ≤ ε/(8T²) (further quilts are not examined)."""
    target = eps / (8.0 * length * length) / 3.0
    # h(d) ≤ target when e^{−g d/2} ≤ π_min·tanh(target/2) (h = 2·artanh(spread/π_min))
    spread = gap.pi_min * math.tanh(target / 2.0)
    if spread <= 0:  # ε/(8T²) below what a double holds: examine every distance
        return length
    return max(gap.first, math.ceil(2.0 * math.log(1.0 / spread) / gap.gap))


def mqm_approx_refusal(prior_or_priors: object, eps_puffer: float) -> str | None:
    """Why MQMApprox would take longer than the work limit (with the estimate), or None."""
    priors = as_theta(prior_or_priors, "MQMApprox")
    eps = check_eps("eps_puffer", eps_puffer)
    seconds = 0.0
    for prior in priors:
        gap = eigen_gap(prior)
        depth = min(prior.length, _depth(gap, eps, prior.length))
        seconds += _SECONDS_PER_CELL * (depth * depth + 2 * prior.length * depth)
    if seconds <= WORK_LIMIT_SECONDS:
        return None
    return (
        f"MQMApprox would take about {human_seconds(seconds)} (quilts up to distance {depth:,} over T ="
        f" {priors.max_length:,}, a slowly mixing chain); the limit is {WORK_LIMIT_SECONDS:g} s."
        " Raise ε_puffer or shorten the sequences"
    )


def _sigma(prior: MarkovChainPrior, eps: float) -> float:
    """σ_max of one prior (module docstring)."""
    T = prior.length
    gap = eigen_gap(prior)
    depth = min(T, _depth(gap, eps, T))
    d = np.arange(1, depth + 1)
    h = gap.influence(d)
    left_e, right_e = 2.0 * h, h
    nodes = np.arange(1, T + 1)
    sigma = np.full(T, T / eps)  # the empty quilt
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # two-sided {t − a, t + b}: card a + b − 1; best over a ≤ A, b ≤ B by a running minimum
        e2 = left_e[:, None] + right_e[None, :]
        card = (d[:, None] + d[None, :] - 1).astype(float)
        s2 = np.where(e2 < eps, card / (eps - e2), np.inf)
        running = np.minimum.accumulate(np.minimum.accumulate(s2, axis=0), axis=1)
        a_max = np.minimum(nodes - 1, depth)
        b_max = np.minimum(T - nodes, depth)
        both = (a_max >= 1) & (b_max >= 1)
        sigma[both] = np.minimum(sigma[both], running[a_max[both] - 1, b_max[both] - 1])
        # left-only {t − a}: card T − t + a; right-only {t + b}: card t + b − 1
        s_left = np.where(left_e < eps, 1.0 / (eps - left_e), np.inf)  # times card
        s_right = np.where(right_e < eps, 1.0 / (eps - right_e), np.inf)
        for t in range(1, T + 1):
            a = min(t - 1, depth)
            if a >= 1:
                sigma[t - 1] = min(sigma[t - 1], float(np.min((T - t + d[:a]) * s_left[:a])))
            b = min(T - t, depth)
            if b >= 1:
                sigma[t - 1] = min(sigma[t - 1], float(np.min((t + d[:b] - 1) * s_right[:b])))
    return float(sigma.max())


def mqm_approx_scale(prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], eps_puffer: float) -> float:
    """σ_max of MQMApprox for ε_puffer: the max over Θ (docs/math.md §15, [S] Lemma II.3)."""
    priors = as_theta(prior_or_priors, "MQMApprox")
    eps = check_eps("eps_puffer", eps_puffer)
    if not math.isfinite(priors.max_length / eps):
        raise ValueError(
            f"ε_puffer = {eps:g} is too small: the noise scale σ_max ≥ T/ε_puffer exceeds the largest double;"
            f" use ε_puffer ≥ {priors.max_length / 1e300:.1e}"
        )
    refusal = mqm_approx_refusal(priors, eps)
    if refusal is not None:
        raise Refused("out_of_reach", refusal)
    return max(_sigma(p, eps) for p in priors)


def mqm_approx_laplace(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps_puffer: float,
    sensitivity: float = HISTOGRAM_SENSITIVITY,
    queries: int = 1,
) -> LaplaceCounts:
    """MQMApprox on an L-Lipschitz query: counts + Lap(L·σ_max) (``queries = m``: m counts with ε/m each)."""
    eps = check_eps("eps_puffer", eps_puffer)
    sensitivity = check_positive("sensitivity", sensitivity)
    queries = check_whole("queries", queries)
    if queries > 1:
        sigma = mqm_approx_scale(prior_or_priors, eps / queries)
        return LaplaceCounts(MQMEvent("mqm_approx", eps, 2.0 / sigma, sigma, queries), sigma, HISTOGRAM_SENSITIVITY)
    sigma = mqm_approx_scale(prior_or_priors, eps)
    scale = sensitivity * sigma
    return LaplaceCounts(MQMEvent("mqm_approx", eps, sensitivity / scale, sigma, 1), scale, sensitivity)
