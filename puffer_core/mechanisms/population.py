"""Whole-population secrets: the Wasserstein mechanism between a count's laws under two priors (docs/math.md §16;
[AP] Zhang, Ohrimenko & Cummings, arXiv:2009.04013; Song, Wang & Chaudhuri, SIGMOD 2017).

The secret pair is (θ₁, θ₂): every user's sequence is drawn from θ₁, or every one from θ₂
(:class:`~puffer_core.secrets.PopulationSecrets`).  The query is F = the number of entries, over all users,
whose state is in a set B (the visits to the clinic).  Users are independent, so F's law under θ is the
convolution of one law per user, each the law of that user's count under θ (a dynamic programme over
(step, count, state)).  With W = W∞(law(F | θ₁), law(F | θ₂)) — the smallest w such that the two laws can
be coupled with |F − F'| ≤ w surely — the release F + Lap(W/ε) satisfies
Pr[ω | θ₁] ≤ e^ε·Pr[ω | θ₂] (and back): under the coupling the Laplace density moves by at most
e^{ε|F − F'|/W} ≤ e^ε, and averaging over the coupling keeps the factor.  Repeated releases of the same F
reuse the coupling: k of them cost kε.

**Computed, never below the truth.**  In one dimension W∞ ≤ w exactly when F₁(k) ≤ F₂(k + w) and
F₂(k) ≤ F₁(k + w) for every k (F the distribution functions).  The laws live far into their tails (the
probability that 2,000 users all avoid B), so they are computed in log space: the per-user programme and the
convolutions by log-sum-exp of non-negative terms, whose relative error is bounded (each step adds at most
(n + 3)·u for n terms, u the unit roundoff, and errors of the inputs add up); every comparison is made with
that bound against it, F₁(k)·(1 + η) ≤ F₂(k + w)·(1 − η), so the w returned is at least the exact W∞.  Where
the distribution functions are within rounding of 1 (the upper tails of a large population), the same condition
is read on the survival functions summed from the top, S₂(k + w)·(1 + η) ≤ S₁(k)·(1 − η), which resolve those
tails: without them W would be sound but far from W∞ (181 against 307 for 100 users of a two-state chain).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..accounting.events import Composition, NoiseEvent
from ..priors.models import MarkovChainPrior
from ..secrets.population import PopulationSecrets
from ..validation import WORK_LIMIT_SECONDS, check_eps, check_whole, human_seconds
from .base import Refused
from .laplace import LaplaceCounts

_U = np.finfo(float).eps / 2
_SECONDS_PER_CELL = 4e-8  # one log-sum-exp term of the programmes (numpy, measured with margin)


@dataclass(frozen=True)
class PopulationScale:
    """W (a whole number of entries, ≥ the exact W∞) of the count's laws under the worst pair, and its means."""

    w: int
    pair_index: int
    means: tuple[float, float]
    total: int  # the largest possible count: every entry of every user


def _lse(values: np.ndarray, axis: int) -> np.ndarray:
    top = values.max(axis=axis, keepdims=True)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.exp(values - safe).sum(axis=axis, keepdims=True)) + safe
    return np.squeeze(out, axis=axis)


def _step_error(terms: int, *logs: np.ndarray) -> float:
    """A bound on the relative error one log-sum-exp step adds to the linear values: each log (of magnitude up
    to M) is off by at most u·M, each sum of n non-negative terms by n·u, each exp and log by a few u."""
    largest = max((float(np.abs(v[np.isfinite(v)]).max()) for v in logs if np.isfinite(v).any()), default=0.0)
    return 1.01 * (terms + 4 + 3 * largest) * _U


def _user_law(prior: MarkovChainPrior, chosen: np.ndarray, length: int) -> tuple[np.ndarray, float]:
    """log Pr[C = c], c = 0..length, of one user's count of entries in ``chosen``, and its relative error bound."""
    k = prior.n_states
    with np.errstate(divide="ignore"):
        log_p = np.log(prior.transition)
        law = np.full((k, length + 1), -np.inf)  # law[x, n]: log Pr[X_t = x, count so far = n]
        init = np.log(np.asarray(prior.initial))
    law[np.arange(k), chosen.astype(int)] = init
    error = _step_error(1, init)
    for _ in range(1, length):
        moved = _lse(law[:, None, :] + log_p[:, :, None], axis=0)  # [y, n]: log Σ_x Pr[x, n]·P[x, y]
        error += _step_error(k, law, log_p, moved)
        step = np.full_like(law, -np.inf)
        step[~chosen] = moved[~chosen]
        step[chosen, 1:] = moved[chosen, :-1]
        law = step
    out = _lse(law, axis=0)
    return out, error + _step_error(k, law, out)


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log of the convolution of two laws given as logs (every term non-negative: no cancellation)."""
    n = a.size + b.size - 1
    out = np.full(n, -np.inf)
    step = max(1, 4_000_000 // max(1, b.size))
    for start in range(0, a.size, step):
        block = a[start : start + step, None] + b[None, :]  # (rows, b): term a_i·b_j at i + j
        for i, row in enumerate(block):
            lo = start + i
            out[lo : lo + b.size] = np.logaddexp(out[lo : lo + b.size], row)
    return out


def _power(law: np.ndarray, error: float, times: int) -> tuple[np.ndarray, float]:
    """The law of the sum of ``times`` independent copies, by squaring, and its relative error bound."""
    result: np.ndarray | None = None
    result_error = 0.0
    base, base_error = law, error
    while times:
        if times & 1:
            if result is None:
                result, result_error = base, base_error
            else:
                joined = _convolve(result, base)
                result_error += base_error + _step_error(min(result.size, base.size), result, base, joined)
                result = joined
        times >>= 1
        if times:
            squared = _convolve(base, base)
            base_error = 2 * base_error + _step_error(base.size, base, squared)
            base = squared
    assert result is not None
    return result, result_error


def _population_law(prior: MarkovChainPrior, chosen: np.ndarray, lengths: Counter) -> tuple[np.ndarray, float]:
    """log Pr[F = f] for f = 0..Σ lengths, F the total count of the users (``lengths``: length → users)."""
    total: np.ndarray | None = None
    error = 0.0
    for length, users in sorted(lengths.items()):
        law, law_error = _user_law(prior, chosen, length)
        part, part_error = _power(law, law_error, users)
        if total is None:
            total, error = part, part_error
        else:
            joined = _convolve(total, part)
            error += part_error + _step_error(min(total.size, part.size), total, part, joined)
            total = joined
    assert total is not None
    return total, error


def _log_cdf(log_pmf: np.ndarray) -> np.ndarray:
    return np.logaddexp.accumulate(log_pmf)


def _log_survival(log_pmf: np.ndarray) -> np.ndarray:
    """log Pr[F > k], k = 0..n − 1 (−inf at the top): summed from the top, so it stays exact where F(k) ≈ 1."""
    upper = np.logaddexp.accumulate(log_pmf[::-1])[::-1]
    return np.append(upper[1:], -np.inf)


def _shift(first: tuple[np.ndarray, np.ndarray], second: tuple[np.ndarray, np.ndarray], margin: float) -> int:
    """The smallest w ≥ 0 with F₁(k) ≤ F₂(k + w) for every k, certified; ``first`` and ``second`` are each
    (log F, log S), S = 1 − F summed from the top.  F₁(k) ≤ F₂(k + w) exactly when S₂(k + w) ≤ S₁(k): either
    comparison, certified with the margin (log F₁ + margin ≤ log F₂ − margin, or the same of S₂ and S₁), proves
    it.  Near F ≈ 1 only the survival functions resolve the tail (1 − 10⁻²⁰ and 1 − 10⁻²⁵ are one float)."""
    (cdf_1, surv_1), (cdf_2, surv_2) = first, second
    n = cdf_1.size
    w = 0
    for k in range(n):
        if cdf_1[k] == -np.inf:
            continue
        while k + w < n - 1 and cdf_1[k] + margin > cdf_2[k + w] - margin and (
            surv_2[k + w] + margin > surv_1[k] - margin
        ):
            w += 1
    return w


def _population_mean(prior: MarkovChainPrior, chosen: np.ndarray, counts: Counter) -> float:
    """E[F]: Σ over users of Σ_t Pr[X_t ∈ B]."""
    return sum(m * float(prior.with_length(n).marginals()[:, chosen].sum()) for n, m in counts.items())


def population_estimate(secrets: PopulationSecrets, lengths: Sequence[int]) -> float:
    """Estimated seconds of :func:`population_scale` (the programmes' log-sum-exp terms)."""
    counts = Counter(int(n) for n in lengths)
    k = secrets.n_states
    total = sum(n * m for n, m in counts.items())
    cells = sum(n * n * k * k for n in counts) + sum(total * min(total, n * m) * math.log2(m + 1)
                                                     for n, m in counts.items())
    return 2 * len(secrets.pairs) * (cells * _SECONDS_PER_CELL + 2e-6 * total * total / 1e3)


def population_scale(secrets: PopulationSecrets, states: Sequence[int], lengths: Sequence[int]) -> PopulationScale:
    """W for the count of entries in ``states`` over users with sequence ``lengths`` (module docstring).

    The max over the pairs of ``secrets``.  Refused up front (Refused "out_of_reach", with the estimate)
    beyond the work limit.
    """
    if not isinstance(secrets, PopulationSecrets):
        raise TypeError(f"secrets must be PopulationSecrets; got {type(secrets).__name__}")
    k = secrets.n_states
    if isinstance(states, (str, bytes)) or not len(states):
        raise ValueError("states must name the states B whose entries are counted (a list of state indices)")
    chosen = np.zeros(k, dtype=bool)
    for s in states:
        chosen[check_whole("each counted state", s, minimum=0, maximum=k - 1)] = True
    counts = Counter(check_whole("each user's length", n) for n in lengths)
    if not counts:
        raise ValueError("lengths must hold each user's number of entries (at least one user)")
    seconds = population_estimate(secrets, lengths)
    if seconds > WORK_LIMIT_SECONDS:
        raise Refused("out_of_reach", f"the count's laws over {sum(counts.values()):,} users would take about"
                                      f" {human_seconds(seconds)}; the limit is {WORK_LIMIT_SECONDS:g} s"
                                      " (fewer or shorter users)")
    best: PopulationScale | None = None
    for index, (first, second) in enumerate(secrets.pairs):
        if np.array_equal(np.asarray(first.transition), np.asarray(second.transition)) and np.array_equal(
            np.asarray(first.initial), np.asarray(second.initial)
        ):
            mean = float(_population_mean(first, chosen, counts))
            best = best if best is not None and best.w > 0 else PopulationScale(0, index, (mean, mean),
                                                                                 sum(n * m for n, m in counts.items()))
            continue  # one prior twice: the same law, W = 0 exactly
        laws = []
        for prior in (first, second):
            if max(counts) > prior.length:
                raise ValueError(f"a user has {max(counts)} entries, more than the priors' length {prior.length}")
            laws.append(_population_law(prior, chosen, counts))
        (law_1, err_1), (law_2, err_2) = laws
        cdf_1, cdf_2 = _log_cdf(law_1), _log_cdf(law_2)
        surv_1, surv_2 = _log_survival(law_1), _log_survival(law_2)
        # the distribution and survival functions add a running sum (n terms) to each law's error; each side gets
        # its own
        margin = 2.0 * (err_1 + err_2 + _step_error(law_1.size, law_1, law_2, cdf_1, cdf_2, surv_1, surv_2)) + 1e-13
        w = max(_shift((cdf_1, surv_1), (cdf_2, surv_2), margin), _shift((cdf_2, surv_2), (cdf_1, surv_1), margin))
        support = np.arange(law_1.size)
        means = (float(np.exp(_lse(law_1 + np.log(np.maximum(support, 1e-300)), 0))),
                 float(np.exp(_lse(law_2 + np.log(np.maximum(support, 1e-300)), 0))))
        if best is None or w > best.w:
            best = PopulationScale(int(w), index, means, int(law_1.size - 1))
    assert best is not None
    return best


def population_laplace(secrets: PopulationSecrets, states: Sequence[int], lengths: Sequence[int],
                       eps_puffer: float) -> LaplaceCounts:
    """The count of entries in ``states`` over all users + Lap(W/ε): ε-Pufferfish for the population pairs.

    Its per-entry DP level is 1/scale = ε/W (one entry moves the count by at most 1); repeated releases of
    the same count add up (one coupling).  W = 0 (the two priors give the count one law) needs no noise:
    refused as a Laplace release, since the count then reveals nothing about the pair.
    """
    eps = check_eps("eps_puffer", eps_puffer)
    w = population_scale(secrets, states, lengths).w
    if w == 0:
        raise Refused("no_guarantee", "the count has the same law under both priors: it tells them apart not at all,"
                                      " and no noise is needed")
    scale = w / eps
    event = NoiseEvent("population", eps, 1.0 / scale, float(w), Composition.SAME_QUERY, 1, secrets)
    return LaplaceCounts(event, scale, 1.0)
