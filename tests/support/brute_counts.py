"""Brute-force references for counts of a chain and their Gaussian releases (docs/math.md §17–§18).

Nothing here shares code with puffer_core: the count's laws come from enumerating every sequence (in exact
fractions), divergences from plain quadrature of the mixture densities (numpy on a fine grid, or mpmath), and
output laws of a table from the sequences again.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np


def sequences(transition, initial, length):
    """Every sequence with its exact probability (fractions of the given floats)."""
    k = len(transition)
    p = [[Fraction(float(v)) for v in row] for row in transition]
    init = [Fraction(float(v)) for v in initial]
    out = {}
    for seq in itertools.product(range(k), repeat=length):
        pr = init[seq[0]]
        for a, b in zip(seq, seq[1:]):
            pr *= p[a][b]
        if pr:
            out[seq] = pr
    return out


def count_laws(transition, initial, length, states, protected=None):
    """{(t, x): exact law of the count of ``states`` given X_t = x} for every t, x with Pr[X_t = x] > 0.

    ``protected(t, x)`` may restrict which (t, x) are computed.
    """
    table = sequences(transition, initial, length)
    k = len(transition)
    counted = set(states)
    out = {}
    for t in range(length):
        for x in range(k):
            if protected is not None and not protected(t, x):
                continue
            law = [Fraction(0)] * (length + 1)
            total = Fraction(0)
            for seq, pr in table.items():
                if seq[t] == x:
                    law[sum(v in counted for v in seq)] += pr
                    total += pr
            if total:
                out[(t, x)] = [v / total for v in law]
    return out


def marginal_count_law(transition, initial, length, states):
    """The exact law of the count with no secret."""
    counted = set(states)
    law = [Fraction(0)] * (length + 1)
    for seq, pr in sequences(transition, initial, length).items():
        law[sum(v in counted for v in seq)] += pr
    return law


def w_infinity(first, second):
    """W∞ of two laws on 0..C−1 (exact fractions): the smallest shift of the quantile coupling."""
    n = len(first)
    fa = list(itertools.accumulate(first))
    fb = list(itertools.accumulate(second))

    def ok(f, g, w):
        return all(f[c] <= g[min(c + w, n - 1)] for c in range(n))

    return max(next(w for w in range(n) if ok(fa, fb, w)), next(w for w in range(n) if ok(fb, fa, w)))


def _log_mixture(law, y, sigma):
    """log Σ_c law_c·φ_σ(y − c) on an array y (log space, plain numpy)."""
    c = np.arange(len(law))
    with np.errstate(divide="ignore"):
        logs = np.log(np.array([float(v) for v in law]))
    terms = logs[None, :] - (y[:, None] - c[None, :]) ** 2 / (2 * sigma**2) - math.log(sigma * math.sqrt(2 * math.pi))
    top = terms.max(axis=1)
    return top + np.log(np.exp(terms - top[:, None]).sum(axis=1))


def renyi_reference(p, q, sigma, alpha, points_per_sigma=40):
    """D_α(p * N(0, σ²) ‖ q * N(0, σ²)) by the trapezoid rule on a fine grid far into both tails.

    The integrand is smooth and decays like a Gaussian, so the trapezoid rule's error falls like
    exp(−2π²·(σ/h)²): 40 points per σ leave it far below double precision.
    """
    n = len(p)
    reach = 14 * sigma + (alpha + 1) * n + 4
    y = np.linspace(-reach, n - 1 + reach, int((n - 1 + 2 * reach) / sigma * points_per_sigma) + 1)
    log_f = alpha * _log_mixture(p, y, sigma) + (1 - alpha) * _log_mixture(q, y, sigma)
    top = log_f.max()
    integral = np.trapezoid(np.exp(log_f - top), y)
    return (math.log(integral) + top) / (alpha - 1)


def renyi_mpmath(p, q, sigma, alpha, digits=25):
    """The same divergence by mpmath quadrature at ``digits`` digits, split at every count and half-count."""
    import mpmath as mp

    mp.mp.dps = digits
    pf = [mp.mpf(Fraction(v).numerator) / Fraction(v).denominator for v in p]
    qf = [mp.mpf(Fraction(v).numerator) / Fraction(v).denominator for v in q]
    s = mp.mpf(sigma)
    a = mp.mpf(alpha)

    def density(w, y):
        return mp.fsum(wc * mp.npdf(y, c, s) for c, wc in enumerate(w) if wc)

    def f(y):
        dp, dq = density(pf, y), density(qf, y)
        if dp == 0:
            return mp.mpf(0)
        return dp**a * dq ** (1 - a)

    n = len(p)
    reach = 14 * sigma + (alpha + 1) * n + 4
    cuts = [-mp.inf, -reach] + [mp.mpf(c) for c in range(-1, n + 1)] + [n - 1 + reach, mp.inf]
    value = mp.quad(f, cuts)
    return float(mp.log(value) / (a - 1))


def log_ratio_reference(p, q, sigma, points_per_sigma=400):
    """sup_y log p(y)/q(y) on a fine grid and at its two limits (lowest/highest counts)."""
    n = len(p)
    y = np.linspace(-30 * sigma - 5, n + 30 * sigma + 5, int((n + 60 * sigma + 10) / sigma * points_per_sigma))
    grid = float(np.max(_log_mixture(p, y, sigma) - _log_mixture(q, y, sigma)))
    lo_p = next(c for c in range(n) if p[c])
    lo_q = next(c for c in range(n) if q[c])
    hi_p = max(c for c in range(n) if p[c])
    hi_q = max(c for c in range(n) if q[c])
    if lo_p < lo_q or hi_p > hi_q:
        return math.inf
    limits = []
    if lo_p == lo_q:
        limits.append(math.log(p[lo_p] / q[lo_q]))
    if hi_p == hi_q:
        limits.append(math.log(p[hi_p] / q[hi_q]))
    return max([grid, *limits])


def table_leakage(transition, initial, length, states, table, runs=1):
    """Exact leakage of ``runs`` independent runs of a table q(y | count) by enumeration (floats, log space).

    Returns the largest log-ratio over every ordered pair of states at every position, and over output tuples.
    """
    table = np.asarray(table, dtype=float)
    k = len(transition)
    counted = set(states)
    seqs = sequences(transition, initial, length)
    n_out = table.shape[1]
    outputs = list(itertools.product(range(n_out), repeat=runs))
    with np.errstate(divide="ignore"):
        log_table = np.log(table)
    best = -math.inf
    for t in range(length):
        laws = {}
        for x in range(k):
            joint = np.full(len(outputs), -np.inf)
            total = 0.0
            for seq, pr in seqs.items():
                if seq[t] != x:
                    continue
                c = sum(v in counted for v in seq)
                rows = np.array([sum(log_table[c, y] for y in out) for out in outputs])
                joint = np.logaddexp(joint, math.log(float(pr)) + rows)
                total += float(pr)
            if total > 0:
                laws[x] = joint - math.log(total)
        for x, a in laws.items():
            for xp, b in laws.items():
                if x == xp:
                    continue
                with np.errstate(invalid="ignore"):
                    ratio = np.where(np.isneginf(a), -np.inf, a - b)
                best = max(best, float(np.nanmax(ratio)))
    return max(best, 0.0)
