"""Brute-force references that share no code with puffer_core (MATH.md §2 and §9 by enumeration)."""

from __future__ import annotations

import itertools
import math

import numpy as np


def sequence_probabilities(transition, initial, length):
    """Every state sequence of the chain with its probability (plain Python loops)."""
    k = len(transition)
    out = {}
    for seq in itertools.product(range(k), repeat=length):
        p = initial[seq[0]]
        for a, b in zip(seq, seq[1:]):
            p *= transition[a][b]
        out[seq] = p
    return out


def brute_influence(priors, b):
    """a(b) straight from the definition: every H ∋ t with |H| ≤ b, every D_L, sup over Θ inside the min.

    ``priors``: list of (transition, initial, length) with plain lists/arrays.
    """
    t_max = max(length for _, _, length in priors)
    k = len(priors[0][0])
    tables = [sequence_probabilities(P, init, T) for P, init, T in priors]
    worst = 0.0
    for t in range(t_max):
        others = [i for i in range(t_max) if i != t]
        for x in range(k):
            for xp in range(k):
                if x == xp:
                    continue
                best_split = math.inf
                any_valid = False
                for size in range(0, b):
                    for extra in itertools.combinations(others, size):
                        H = set(extra) | {t}
                        sup_theta = -math.inf
                        for (P, init, T), table in zip(priors, tables):
                            if t >= T:
                                continue
                            L = [i for i in range(T) if i not in H]
                            num = {}
                            den = {}
                            px = pxp = 0.0
                            for seq, pr in table.items():
                                key = tuple(seq[i] for i in L)
                                if seq[t] == x:
                                    num[key] = num.get(key, 0.0) + pr
                                    px += pr
                                elif seq[t] == xp:
                                    den[key] = den.get(key, 0.0) + pr
                                    pxp += pr
                            if px <= 0 or pxp <= 0:
                                continue  # secret pair has zero prior probability under θ
                            any_valid = True
                            m = -math.inf
                            for key in set(num) | set(den):
                                a_ = num.get(key, 0.0) / px
                                c_ = den.get(key, 0.0) / pxp
                                if a_ <= 0:
                                    continue
                                m = max(m, math.inf if c_ <= 0 else math.log(a_ / c_))
                            sup_theta = max(sup_theta, m)
                        best_split = min(best_split, sup_theta)
                if any_valid:
                    worst = max(worst, best_split)
    return worst


def random_chain(rng, k, zeros=False):
    m = rng.random((k, k)) + 0.05
    if zeros:
        mask = rng.random((k, k)) < 0.3
        for i in range(k):
            if mask[i].all():
                mask[i, rng.integers(k)] = False
        m = np.where(mask, 0.0, m)
    return m / m.sum(axis=1, keepdims=True)


def random_distribution(rng, k, zeros=False):
    v = rng.random(k) + 0.05
    if zeros:
        v[rng.integers(k)] = 0.0
    return v / v.sum()
