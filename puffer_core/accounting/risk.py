"""ε as attacker risk: what a Pufferfish guarantee lets an attacker learn (docs/math.md §1, §13).

ε_puffer bounds, for every secret pair (X_t = x, X_t = x') and every prior θ in Θ, the ratio of
the probabilities of any output under the two secrets by e^ε.  By Bayes' rule the attacker's
odds of x against x' move by at most that factor, whatever the output:

    posterior odds ≤ e^ε · prior odds,   so   Pr[x | output, x or x'] ≤ e^ε·o / (1 + e^ε·o),  o = p(x)/p(x').

Taking every x' ≠ x at once (each pair's bound, summed over x'): Pr[X_t = x | output] ≤
e^ε·p / (e^ε·p + 1 − p) with p = Pr[X_t = x] under θ, and ≥ p / (p + e^ε·(1 − p)).

Any test that decides "x" against "x'" from the output has a true-positive rate TPR and a
false-positive rate FPR with TPR ≤ e^ε·FPR and 1 − FPR ≤ e^ε·(1 − TPR) (both follow from the
ratio bound on the test's rejection region and its complement): the pairs (FPR, TPR) an ε
allows form the region between the diagonal and the curve of :func:`tradeoff_curve`.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pandas as pd

from ..priors.models import MarkovChainPrior, as_theta
from ..validation import check_eps, check_probability, check_whole

_ROUNDING = 8.0 * sys.float_info.epsilon  # what one log, sum or exp below may lose, relative


def _logit(p: float) -> float:
    """log(p / (1 − p)) for 0 < p < 1, accurate for subnormal p and for p within an ulp of 1."""
    return math.log(p) - math.log1p(-p)


def _sigmoid(z: float) -> float:
    """1 / (1 + e^(−z)) to a few ulps, in the form that does not overflow."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z)) if z < 800 else 1.0
    return math.exp(z) / (1.0 + math.exp(z)) if z > -800 else 0.0


def bayes_posterior(log_odds: float, eps: float, upper: bool = True, scale: float | None = None) -> float:
    """The posterior of x between two values from prior log-odds log(p(x)/p(x')), moved by e^(±ε) (docs/math.md §13).

    Log space throughout: σ(log_odds ± ε), rounded outwards — ``upper`` never below Bayes' value
    e^ε·o/(1 + e^ε·o), the lower one never above o/(o + e^ε): the argument is moved by a bound on the
    rounding of the logs and the sum (8 ulps of ``scale`` + |ε| + 1; ``scale`` = |log_odds| unless the
    log-odds came from larger terms) and the result by 4 ulps, so an understated risk cannot come from
    rounding.
    """
    slack = _ROUNDING * ((abs(log_odds) if scale is None else scale) + abs(eps) + 1.0)
    if upper:
        value = _sigmoid(log_odds + eps + slack)
        return min(1.0, value + 4.0 * math.ulp(value))
    value = _sigmoid(log_odds - eps - slack)
    return max(0.0, value - 4.0 * math.ulp(value))


def max_posterior(prior_probability: float, eps: float) -> float:
    """The largest Pr[secret | output] an ε guarantee allows from a prior probability (module docstring).

    Computed in log space (σ(logit p + ε)), never below Bayes' value e^ε·p/(e^ε·p + 1 − p) and above
    it by at most ~2e-15·(|log p| + |log(1 − p)| + ε + 1) relative (3e-12 at p = 5e-324, ε = 744): at
    every ε and p, a subnormal p or an ε beyond 709 (where e^ε overflows) too.
    """
    p = check_probability("the prior probability", prior_probability)
    eps = check_eps("eps", eps, allow_zero=True)
    if p in (0.0, 1.0):
        return p
    return bayes_posterior(_logit(p), eps, upper=True, scale=abs(math.log(p)) + abs(math.log1p(-p)))


def min_posterior(prior_probability: float, eps: float) -> float:
    """The smallest Pr[secret | output] an ε guarantee allows from a prior probability (never above Bayes' value)."""
    p = check_probability("the prior probability", prior_probability)
    eps = check_eps("eps", eps, allow_zero=True)
    if p in (0.0, 1.0):
        return p
    return bayes_posterior(_logit(p), eps, upper=False, scale=abs(math.log(p)) + abs(math.log1p(-p)))


def tradeoff_curve(eps: float, points: int = 201) -> tuple[np.ndarray, np.ndarray]:
    """The upper edge of the (FPR, TPR) region: TPR_max(FPR) = min(e^ε·FPR, 1 − e^(−ε)·(1 − FPR)).

    Returns ``points`` FPR values on [0, 1] (with the corner at FPR = 1/(1 + e^ε)) and TPR_max.
    """
    eps = check_eps("eps", eps, allow_zero=True)
    points = check_whole("points", points, minimum=3, maximum=10**7)
    corner = 1.0 / (1.0 + math.exp(eps)) if eps < 709 else math.exp(-eps)  # 1/(1 + e^ε), e^ε beyond a double
    fpr = np.unique(np.concatenate([np.linspace(0.0, 1.0, points), [corner]]))
    return fpr, np.clip(_region_edge(fpr, eps), 0.0, 1.0)


def _region_edge(fpr: np.ndarray, eps: float) -> np.ndarray:
    """min(e^ε·FPR, 1 − e^(−ε)·(1 − FPR)) for any ε: e^ε·FPR from log FPR + ε (above 1 it loses to the other term)."""
    with np.errstate(divide="ignore"):
        log_fpr = np.log(fpr)
    first = np.exp(np.minimum(log_fpr + eps, 0.0))
    first = np.where(log_fpr + eps > 0.0, np.inf, first)
    return np.minimum(first, 1.0 - (1.0 - fpr) * math.exp(-eps))


def region_excess(fpr: np.ndarray, tpr: np.ndarray, eps: float) -> np.ndarray:
    """How far each (FPR, TPR) lies above the region of ``eps`` (≤ 0: inside)."""
    eps = check_eps("eps", eps, allow_zero=True)
    fpr = np.asarray(fpr, dtype=float)
    tpr = np.asarray(tpr, dtype=float)
    return tpr - _region_edge(fpr, eps)


def implied_eps(fpr: float, tpr: float) -> float:
    """The smallest ε whose region holds (FPR, TPR): max(log(TPR/FPR), log((1 − FPR)/(1 − TPR)), 0)."""
    values = [0.0]
    if tpr > 0:
        values.append(math.inf if fpr == 0 else math.log(tpr / fpr))
    if fpr < 1:
        values.append(math.inf if tpr == 1 else math.log((1.0 - fpr) / (1.0 - tpr)))
    return max(values)


def attacker_table(prior_or_priors: MarkovChainPrior | list[MarkovChainPrior], eps: float) -> pd.DataFrame:
    """Per state x: its prior probability at an entry and the most an attacker can believe after the release.

    The prior probability of X_t = x is taken at its largest over t and over the priors of Θ
    (the worst case for the guarantee's bound, which grows with it); ``after`` is
    :func:`max_posterior` of it.  ``odds x : rest`` before and after, for reading aloud.
    """
    priors = as_theta(prior_or_priors, "attacker_table")
    eps = check_eps("eps", eps, allow_zero=True)
    worst = np.max([p.marginals().max(axis=0) for p in priors], axis=0)
    labels = priors[0].labels
    after = np.array([max_posterior(float(q), eps) for q in worst])
    with np.errstate(over="ignore"):  # after/q beyond a double (q subnormal) is +inf: above the truth, never below
        times = np.where(worst > 0, after / np.where(worst > 0, worst, 1.0), 1.0)
    return pd.DataFrame(
        {
            "state": list(labels),
            "prior probability (largest over t)": worst,
            "largest posterior after the release": after,
            "times more likely at most": times,
        }
    )


def pair_table(prior_or_priors: MarkovChainPrior | list[MarkovChainPrior], eps: float) -> pd.DataFrame:
    """Per secret pair (x, x'): the prior odds of x against x' (largest over t and Θ) and the largest after.

    ``posterior of x (between the two)`` = e^ε·o / (1 + e^ε·o), computed as σ(log o + ε) and never below
    it (:func:`bayes_posterior`); the odds are taken as differences of log marginals, so odds beyond a
    double (1/1e-300 · e^50) stay exact in the posterior and show as +inf in the odds columns.
    """
    priors = as_theta(prior_or_priors, "pair_table")
    eps = check_eps("eps", eps, allow_zero=True)
    labels = priors[0].labels
    rows = []
    logs = []
    for p in priors:
        marg = p.marginals()
        with np.errstate(divide="ignore"):
            logs.append((marg > 0, np.log(marg)))
    k = priors[0].n_states
    for x in range(k):
        for y in range(k):
            if x == y:
                continue
            log_odds, scale = -math.inf, 0.0
            for positive, log_marg in logs:
                both = positive[:, x] & positive[:, y]
                if both.any():
                    log_odds = max(log_odds, float((log_marg[both, x] - log_marg[both, y]).max()))
                    scale = max(scale, float(np.abs(log_marg[both][:, [x, y]]).sum(axis=1).max()))
            if log_odds == -math.inf:
                continue
            with np.errstate(over="ignore"):
                odds = float(np.exp(log_odds))
                after = float(np.exp(log_odds + eps))
            rows.append(
                {
                    "secret": labels[x],
                    "against": labels[y],
                    "prior odds": odds,
                    "largest posterior odds": after,
                    "largest posterior of the secret (between the two)": bayes_posterior(log_odds, eps, scale=scale),
                }
            )
    return pd.DataFrame(rows)
