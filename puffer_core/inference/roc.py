"""An attacker's test of one secret against another, measured: empirical (FPR, TPR) points (docs/math.md §11, §13).

For a stream released step by step (emission E_t[k, o] = Pr[r_t = o | X_t = k]) and a Markov
prior, the most powerful test of X_t = x against X_t = x' thresholds the log-likelihood ratio
log Pr[outputs | X_t = x] − log Pr[outputs | X_t = x'] (Neyman–Pearson), computed exactly for
each output by forward–backward (:mod:`puffer_core.inference.posterior`).  Outputs are drawn
from the prior conditioned on each secret (seeded); each threshold gives one point
(FPR, TPR).  A release that is ε-Pufferfish for this prior keeps every point in the region
TPR ≤ e^ε·FPR, 1 − FPR ≤ e^ε·(1 − TPR) (:mod:`puffer_core.accounting.risk`), up to sampling
noise, which the Clopper–Pearson intervals bound; :attr:`TestPoints.eps_lower` is the ε those
intervals certify at 95% confidence over the (at most 60) thresholds kept, a lower bound on the
true leakage of that entry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..mechanisms.laws import check_emissions
from ..priors.models import MarkovChainPrior
from ..validation import check_whole
from .posterior import check_prior, draw_indices, forward_backward, log_emissions, safe_log, sample_outputs

MAX_POINTS = 60  # thresholds kept for a chart


def sample_given(prior: MarkovChainPrior, entry: int, state: int, n: int, length: int,
                 rng: np.random.Generator) -> np.ndarray:
    """``n`` sequences drawn from the prior conditioned on X_entry = state (0-based entry), shape (n, length).

    Backwards from the entry with Pr[X_(s−1) = l | X_s = j] = p_(s−1)(l)·P[l, j] / p_s(j), forwards with P.
    """
    marg = prior.marginals(length)
    if marg[entry, state] <= 0:
        raise ValueError(f"state {prior.labels[state]} has no prior probability at step {entry + 1}")
    states = np.empty((n, length), dtype=np.int64)
    states[:, entry] = state
    for s in range(entry, 0, -1):
        weights = marg[s - 1][None, :] * prior.transition[:, states[:, s]].T  # (n, K)
        states[:, s - 1] = draw_indices(weights / weights.sum(axis=1, keepdims=True), rng)
    for s in range(entry + 1, length):
        states[:, s] = draw_indices(prior.transition[states[:, s - 1]], rng)
    return states


@dataclass(frozen=True)
class TestPoints:
    """Empirical (FPR, TPR) of the likelihood-ratio test at ``entry`` (0-based) for the pair (x, x')."""

    fpr: np.ndarray
    tpr: np.ndarray
    entry: int
    pair: tuple[int, int]
    draws: int
    seed: int
    eps_lower: float  # certified at 95% from the intervals of the best threshold
    eps_point: float  # the same from the point estimates


def _lower_eps(tp: np.ndarray, fp: np.ndarray, n: int) -> tuple[float, float]:
    """ε certified at 95% over the thresholds given, and the point estimate.

    Each ratio uses a one-sided Clopper–Pearson bound on its numerator and on its denominator;
    the 5% is split (Bonferroni) over the 4 bounds of every threshold, so the maximum over
    thresholds holds at 95% simultaneously.
    """
    tail = 0.05 / (4 * max(1, len(tp)))
    best_lower = best_point = 0.0
    for hits, false in zip(tp, fp):
        tpr_lo = 0.0 if hits == 0 else stats.beta.ppf(tail, hits, n - hits + 1)
        fpr_hi = 1.0 if false == n else stats.beta.ppf(1 - tail, false + 1, n - false)
        tnr_lo = 0.0 if false == n else stats.beta.ppf(tail, n - false, false + 1)
        fnr_hi = 1.0 if hits == 0 else stats.beta.ppf(1 - tail, n - hits + 1, hits)
        for num, den in ((tpr_lo, fpr_hi), (tnr_lo, fnr_hi)):
            if num > 0 and den > 0:
                best_lower = max(best_lower, math.log(num / den))
        for num, den in ((hits / n, false / n), (1 - false / n, 1 - hits / n)):
            if num > 0 and den > 0:
                best_point = max(best_point, math.log(num / den))
    return best_lower, best_point


def likelihood_ratio_points(
    prior: MarkovChainPrior,
    emission: object,
    entry: int,
    pair: tuple[int, int],
    draws: int = 2000,
    seed: int = 0,
) -> TestPoints:
    """Empirical (FPR, TPR) points of the best test of X_entry = pair[0] against pair[1] (module docstring)."""
    prior = check_prior(prior)
    length = prior.length
    entry = check_whole("entry (0-based)", entry, minimum=0, maximum=length - 1)
    x, y = (check_whole("a state of the pair", s, minimum=0, maximum=prior.n_states - 1) for s in pair)
    if x == y:
        raise ValueError("the pair must name two different states")
    draws = check_whole("draws", draws, minimum=10)
    seed = check_whole("seed", seed, minimum=0)
    laws = check_emissions(emission, prior.n_states, length)
    log_laws = [safe_log(w) for w in laws]
    rng = np.random.default_rng(seed)
    log_init, log_p = safe_log(np.asarray(prior.initial)), safe_log(prior.transition)
    marg = prior.marginals(length)[entry]
    shift = math.log(marg[x]) - math.log(marg[y])
    ratios = []
    for state in (x, y):
        outputs = sample_outputs(laws, sample_given(prior, entry, state, draws, length, rng), rng)
        log_post, _ = forward_backward(log_init, log_p, log_emissions(log_laws, outputs))
        with np.errstate(invalid="ignore"):
            ratio = log_post[:, entry, x] - log_post[:, entry, y] - shift
        ratios.append(np.nan_to_num(ratio, nan=0.0))
    under_x, under_y = ratios
    thresholds = np.unique(np.concatenate([under_x, under_y]))
    sx, sy = np.sort(under_x), np.sort(under_y)
    tp = draws - np.searchsorted(sx, thresholds, side="left")  # decide "x" when the ratio ≥ threshold
    fp = draws - np.searchsorted(sy, thresholds, side="left")
    tp = np.concatenate([tp, [0]])
    fp = np.concatenate([fp, [0]])
    keep = np.unique(np.linspace(0, tp.size - 1, min(tp.size, MAX_POINTS)).round().astype(int))
    lower, point = _lower_eps(tp[keep], fp[keep], draws)
    return TestPoints(fp[keep] / draws, tp[keep] / draws, entry, (x, y), draws, seed, lower, point)
