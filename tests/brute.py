"""Brute-force references that share no code with puffer_core (docs/math.md §2 and §9 by enumeration)."""

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


def brute_influence_all(priors):
    """[a(1), ..., a(T_max)] straight from the definition (docs/math.md §2).

    Every secret node t and ordered pair (x, x'); every H ∋ t; every D_L; the sup over Θ
    inside the min over H, the max over pairs outside.  ``priors``: list of
    (transition, initial, length) as plain lists.  Users are independent, so one sequence.
    """
    t_max = max(length for _, _, length in priors)
    k = len(priors[0][0])
    tables = [sequence_probabilities(P, init, T) for P, init, T in priors]
    result = [0.0] * t_max
    for t in range(t_max):
        others = [i for i in range(t_max) if i != t]
        # value[(x, x')][h_size] = min over H of that size of sup_θ max_{D_L} log ratio
        best = {}
        for size in range(0, t_max):
            for extra in itertools.combinations(others, size):
                H = set(extra) | {t}
                sup = {}
                for (_, _, T), table in zip(priors, tables):
                    if t >= T:
                        continue
                    L = [i for i in range(T) if i not in H]
                    joint = {}
                    mass = [0.0] * k
                    for seq, pr in table.items():
                        key = (seq[t], tuple(seq[i] for i in L))
                        joint[key] = joint.get(key, 0.0) + pr
                        mass[seq[t]] += pr
                    keys = {key for (_, key) in joint}
                    for x in range(k):
                        for xp in range(k):
                            if x == xp or mass[x] <= 0 or mass[xp] <= 0:
                                continue
                            m = -math.inf
                            for key in keys:
                                a_ = joint.get((x, key), 0.0) / mass[x]
                                c_ = joint.get((xp, key), 0.0) / mass[xp]
                                if a_ <= 0:
                                    continue
                                m = max(m, math.inf if c_ <= 0 else math.log(a_ / c_))
                            sup[(x, xp)] = max(sup.get((x, xp), -math.inf), m)
                for pair, value in sup.items():
                    row = best.setdefault(pair, [math.inf] * t_max)
                    row[size] = min(row[size], value)
        for row in best.values():
            running = math.inf
            for size in range(t_max):
                running = min(running, row[size])  # |H| = size + 1 ≤ b
                result[size] = max(result[size], running)
    return result


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
