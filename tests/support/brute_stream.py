"""Brute-force references for streams (docs/math.md §10–§11) that share no code with puffer_core.

Plain Python over every subset, every sequence and every window: slow, obviously right.
"""

from __future__ import annotations

import itertools
import math

from puffer_core import MarkovChainPrior
from tests.support.brute import random_chain, random_distribution, sequence_probabilities


def random_prior(rng, k, length, stationary=True, zeros=False):
    """A random Markov chain prior (stationary or with a random start); redrawn until it is valid."""
    while True:
        try:
            return MarkovChainPrior(
                random_chain(rng, k, zeros=zeros), None if stationary else random_distribution(rng, k), length
            )
        except ValueError:
            continue


def leakage_function(Q, alpha, secrets=None, pairs=None):
    """L(α; Q) over every ordered pair of rows (in ``secrets``; and in ``pairs``, a set of ordered pairs,
    when given) and every subset S of columns."""
    k = len(Q)
    rows = range(k) if secrets is None else [i for i in range(k) if secrets[i]]
    c = math.expm1(alpha)
    best = 0.0
    for i in rows:
        for ip in rows:
            if i == ip or (pairs is not None and (i, ip) not in pairs):
                continue
            for size in range(k + 1):
                for S in itertools.combinations(range(k), size):
                    q = sum(Q[i][j] for j in S)
                    d = sum(Q[ip][j] for j in S)
                    best = max(best, math.log1p(c * q) - math.log1p(c * d))
    return best


def marginals(transition, initial, length):
    """p_t for t = 1..length by enumerating every sequence."""
    k = len(transition)
    out = [[0.0] * k for _ in range(length)]
    for seq, p in sequence_probabilities(transition, initial, length).items():
        for t, x in enumerate(seq):
            out[t][x] += p
    return out


def backward(transition, initial, t):
    """Pr(X_{t−1} = j | X_t = i) (t ≥ 2, 1-based) by enumerating sequences of length t; None rows for p_t[i] = 0."""
    k = len(transition)
    joint = [[0.0] * k for _ in range(k)]
    for seq, p in sequence_probabilities(transition, initial, t).items():
        joint[seq[t - 1]][seq[t - 2]] += p
    rows = []
    for i in range(k):
        total = sum(joint[i])
        rows.append([v / total for v in joint[i]] if total > 0 else None)
    return rows


def tpl(transition, initial, length, eps):
    """(BPL, FPL, TPL) lists from the definitions: subsets for L, enumeration for the backward matrices."""
    k = len(transition)
    marg = marginals(transition, initial, length)
    bpl = [eps[0]]
    for t in range(2, length + 1):
        rows = backward(transition, initial, t)
        secrets = [marg[t - 1][i] > 0 for i in range(k)]
        Q = [r if r is not None else [0.0] * k for r in rows]
        bpl.append(leakage_function(Q, bpl[-1], secrets) + eps[t - 1])
    fpl = [0.0] * length
    fpl[-1] = eps[-1]
    for t in range(length - 1, 0, -1):
        secrets = [marg[t - 1][i] > 0 for i in range(k)]
        fpl[t - 1] = leakage_function(transition, fpl[t], secrets) + eps[t - 1]
    return bpl, fpl, [b + f - e for b, f, e in zip(bpl, fpl, eps)]


def translation_per_entry(points, eps, contiguous):
    """min over curve points (b, a) of [max Σ_{s∈H} ε_s over H ∋ t with |H| ≤ b] + a, for each entry t.

    H ranges over windows of consecutive steps when ``contiguous``, over all subsets otherwise.
    """
    T = len(eps)
    out = []
    for t in range(T):
        best = math.inf
        for b, a in points:
            cost = 0.0
            if contiguous:
                for lo in range(T):
                    for hi in range(lo, T):
                        if lo <= t <= hi and hi - lo + 1 <= b:
                            cost = max(cost, sum(eps[lo : hi + 1]))
            else:
                others = [s for s in range(T) if s != t]
                for size in range(min(b, T)):
                    for extra in itertools.combinations(others, size):
                        cost = max(cost, eps[t] + sum(eps[s] for s in extra))
            best = min(best, cost + a)
        out.append(best)
    return out


def stream_log_likelihoods(transition, initial, length, laws, outputs):
    """log Pr[r | X_t = x] by summing over every sequence; None where p_t[x] = 0."""
    k = len(transition)
    joint = [[0.0] * k for _ in range(length)]
    mass = [[0.0] * k for _ in range(length)]
    for seq, p in sequence_probabilities(transition, initial, length).items():
        like = p
        for t, x in enumerate(seq):
            like *= laws[t][x][outputs[t]]
        for t, x in enumerate(seq):
            joint[t][x] += like
            mass[t][x] += p
    return [
        [math.log(joint[t][x] / mass[t][x]) if mass[t][x] > 0 and joint[t][x] > 0 else None for x in range(k)]
        for t in range(length)
    ]


def count_weights(transition, initial, length, entry):
    """{(x, counts): Pr[N = counts, X_entry = x]} by enumerating every sequence (0-based entry)."""
    k = len(transition)
    out = {}
    for seq, p in sequence_probabilities(transition, initial, length).items():
        counts = tuple(seq.count(s) for s in range(k))
        key = (seq[entry], counts)
        out[key] = out.get(key, 0.0) + p
    return out


def marginals_by_products(transition, initial, length):
    """p_t for t = 1..length by repeated vector × matrix products in plain Python (no enumeration)."""
    k = len(transition)
    p = list(initial)
    out = [p]
    for _ in range(length - 1):
        p = [sum(p[i] * transition[i][j] for i in range(k)) for j in range(k)]
        out.append(p)
    return out


def tpl_recursion(transition, initial, length, eps, backward=None, forward=None, pairs=None, positions=None):
    """(BPL, FPL, TPL) lists of any length: P^B_t by Bayes' rule from the marginals (or ``backward``),
    P^F = ``forward`` or the transition matrix, L over every subset; secrets at t: states with p_t > 0.

    ``pairs`` (ordered pairs) and ``positions`` (0-based steps): docs/math.md §16 — BPL and FPL stay over every
    pair; TPL at a protected step t is ε_t + L_pairs(BPL_{t−1}; P^B_t) + L_pairs(FPL_{t+1}; P^F), 0 elsewhere."""
    k = len(transition)
    marg = marginals_by_products(transition, initial, length)
    fwd = transition if forward is None else forward
    bpl = [eps[0]]
    for t in range(2, length + 1):
        previous, current = marg[t - 2], marg[t - 1]
        if backward is None:
            Q = [
                [previous[j] * transition[j][i] / current[i] for j in range(k)] if current[i] > 0 else [0.0] * k
                for i in range(k)
            ]
        else:
            Q = backward
        secrets = [current[i] > 0 for i in range(k)]
        bpl.append(leakage_function(Q, bpl[-1], secrets) + eps[t - 1])
    fpl = [0.0] * length
    fpl[-1] = eps[-1]
    for t in range(length - 1, 0, -1):
        secrets = [marg[t - 1][i] > 0 for i in range(k)]
        fpl[t - 1] = leakage_function(fwd, fpl[t], secrets) + eps[t - 1]
    if pairs is None and positions is None:
        return bpl, fpl, [b + f - e for b, f, e in zip(bpl, fpl, eps)]
    tpl = []
    for t in range(1, length + 1):
        if positions is not None and t - 1 not in positions:
            tpl.append(0.0)
            continue
        secrets = [marg[t - 1][i] > 0 for i in range(k)]
        past = future = 0.0
        if t >= 2:
            previous, current = marg[t - 2], marg[t - 1]
            Q = backward if backward is not None else [
                [previous[j] * transition[j][i] / current[i] for j in range(k)] if current[i] > 0 else [0.0] * k
                for i in range(k)
            ]
            past = leakage_function(Q, bpl[t - 2], secrets, pairs)
        if t <= length - 1:
            future = leakage_function(fwd, fpl[t], secrets, pairs)
        tpl.append(eps[t - 1] + past + future)
    return bpl, fpl, tpl


def largest_constant_eps(priors, target, length, steps=60):
    """The largest constant ε with max_t TPL_t ≤ target over every prior ((transition, initial) pairs), by bisection."""
    lo, hi = 0.0, target
    for _ in range(steps):
        mid = (lo + hi) / 2
        worst = max(max(tpl_recursion(P, init, length, [mid] * length)[2]) for P, init in priors)
        lo, hi = (mid, hi) if worst <= target else (lo, mid)
    return lo
