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

import numpy as np
import pandas as pd

from ..priors.models import MarkovChainPrior, as_theta
from ..validation import check_eps, check_probability, check_whole


def _expm(eps: float) -> float:
    return math.exp(min(eps, 700.0))


def max_posterior(prior_probability: float, eps: float) -> float:
    """The largest Pr[secret | output] an ε guarantee allows from a prior probability (module docstring)."""
    p = check_probability("the prior probability", prior_probability)
    eps = check_eps("eps", eps, allow_zero=True)
    if p in (0.0, 1.0):
        return p
    e = _expm(eps)
    return e * p / (e * p + 1.0 - p)


def min_posterior(prior_probability: float, eps: float) -> float:
    """The smallest Pr[secret | output] an ε guarantee allows from a prior probability."""
    p = check_probability("the prior probability", prior_probability)
    eps = check_eps("eps", eps, allow_zero=True)
    if p in (0.0, 1.0):
        return p
    e = _expm(eps)
    return p / (p + e * (1.0 - p))


def tradeoff_curve(eps: float, points: int = 201) -> tuple[np.ndarray, np.ndarray]:
    """The upper edge of the (FPR, TPR) region: TPR_max(FPR) = min(e^ε·FPR, 1 − e^(−ε)·(1 − FPR)).

    Returns ``points`` FPR values on [0, 1] (with the corner at FPR = 1/(1 + e^ε)) and TPR_max.
    """
    eps = check_eps("eps", eps, allow_zero=True)
    points = check_whole("points", points, minimum=3)
    e = _expm(eps)
    corner = 1.0 / (1.0 + e)
    fpr = np.unique(np.concatenate([np.linspace(0.0, 1.0, points), [corner]]))
    tpr = np.minimum(e * fpr, 1.0 - (1.0 - fpr) / e)
    return fpr, np.clip(tpr, 0.0, 1.0)


def region_excess(fpr: np.ndarray, tpr: np.ndarray, eps: float) -> np.ndarray:
    """How far each (FPR, TPR) lies above the region of ``eps`` (≤ 0: inside)."""
    e = _expm(check_eps("eps", eps, allow_zero=True))
    fpr = np.asarray(fpr, dtype=float)
    tpr = np.asarray(tpr, dtype=float)
    return tpr - np.minimum(e * fpr, 1.0 - (1.0 - fpr) / e)


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
    return pd.DataFrame(
        {
            "state": list(labels),
            "prior probability (largest over t)": worst,
            "largest posterior after the release": after,
            "times more likely at most": np.where(worst > 0, after / np.where(worst > 0, worst, 1.0), 1.0),
        }
    )


def pair_table(prior_or_priors: MarkovChainPrior | list[MarkovChainPrior], eps: float) -> pd.DataFrame:
    """Per secret pair (x, x'): the prior odds of x against x' (largest over t and Θ) and the largest after.

    ``posterior of x (between the two)`` = e^ε·o / (1 + e^ε·o).
    """
    priors = as_theta(prior_or_priors, "pair_table")
    eps = check_eps("eps", eps, allow_zero=True)
    labels = priors[0].labels
    e = _expm(eps)
    rows = []
    marginals = [p.marginals() for p in priors]
    k = priors[0].n_states
    for x in range(k):
        for y in range(k):
            if x == y:
                continue
            odds = 0.0
            for marg in marginals:
                both = (marg[:, x] > 0) & (marg[:, y] > 0)
                if both.any():
                    odds = max(odds, float((marg[both, x] / marg[both, y]).max()))
            if odds == 0.0:
                continue
            rows.append(
                {
                    "secret": labels[x],
                    "against": labels[y],
                    "prior odds": odds,
                    "largest posterior odds": e * odds,
                    "largest posterior of the secret (between the two)": e * odds / (1.0 + e * odds),
                }
            )
    return pd.DataFrame(rows)
