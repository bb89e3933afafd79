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


def secret_pairs(k, kind="all", states=(), groups=(), listed=(), ordered=False):
    """The protected ordered pairs (x, x') as a plain set, written from docs/math.md §16 (not the library's)."""
    out = set()
    for x in range(k):
        for y in range(k):
            if x == y:
                continue
            if kind == "all":
                out.add((x, y))
            elif kind == "sensitive" and (x in states or y in states):
                out.add((x, y))
            elif kind == "groups" and any(x in g and y in g for g in groups):
                out.add((x, y))
            elif kind == "list" and ((x, y) in listed or (not ordered and (y, x) in listed)):
                out.add((x, y))
    return out


def brute_influence_all(priors, pairs=None, positions=None):
    """[a(1), ..., a(T_max)] straight from the definition (docs/math.md §2).

    Every secret node t and ordered pair (x, x'); every H ∋ t; every D_L; the sup over Θ
    inside the min over H, the max over pairs outside.  ``priors``: list of
    (transition, initial, length) as plain lists.  Users are independent, so one sequence.
    ``pairs``: the protected ordered pairs (a set; None: all), ``positions``: the protected 0-based
    nodes (None: all) — docs/math.md §16: only the outer max changes.
    """
    t_max = max(length for _, _, length in priors)
    k = len(priors[0][0])
    tables = [sequence_probabilities(P, init, T) for P, init, T in priors]
    result = [0.0] * t_max
    for t in range(t_max):
        if positions is not None and t not in positions:
            continue
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
                            if pairs is not None and (x, xp) not in pairs:
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


def reference_curve(priors, max_b, pairs=None, positions=None):
    """[a(1), ..., a(max_b)] from docs/math.md §2.1 with no pruning, no bound and no shortcut.

    For every node t, every pair (x, x') and every prior: the left term at every available
    distance from the node's own marginals p_{t−d}, p_t, the right term at every distance;
    then every H = [t − dL + 1, t + dR − 1] with |H| ≤ b (both sides may run to the ends),
    the max over priors inside, the min over H, the max over pairs and nodes outside.
    ``priors``: list of (transition, initial, length).  Plain numpy; shares no code with
    puffer_core.  Cost about T_max³·K² per prior, for chains up to a few dozen entries.
    ``pairs`` (a set of ordered pairs) and ``positions`` (0-based nodes) restrict the outer max.
    """
    t_max = max(length for _, _, length in priors)
    k = len(priors[0][0])
    prepared = []
    for transition, initial, length in priors:
        p = np.asarray(transition, dtype=float)
        marg = [np.asarray(initial, dtype=float)]
        for _ in range(length - 1):
            marg.append(marg[-1] @ p)
        powers = [np.eye(k)]
        for _ in range(length):
            powers.append(powers[-1] @ p)
        prepared.append((powers, marg, length))

    def log_ratio(num, den):
        best = -math.inf
        for u, v in zip(num, den):
            if u > 0:
                best = max(best, math.inf if v <= 0 else math.log(u / v))
        return best

    result = np.zeros(max_b)
    for t in range(1, t_max + 1):
        if positions is not None and t - 1 not in positions:
            continue
        n_left, n_right = t, t_max - t + 1  # dL = t: no left L node; dR = t_max − t + 1: none on the right
        for x in range(k):
            for xp in range(k):
                if x == xp or (pairs is not None and (x, xp) not in pairs):
                    continue
                value = np.full((n_left, n_right), -math.inf)  # value[dL−1, dR−1]
                secret = False
                for powers, marg, length in prepared:
                    if t > length or marg[t - 1][x] <= 0 or marg[t - 1][xp] <= 0:
                        continue
                    secret = True
                    shift = math.log(marg[t - 1][xp]) - math.log(marg[t - 1][x])
                    left = np.zeros(n_left)
                    for d in range(1, t):
                        keep = marg[t - d - 1] > 0
                        left[d - 1] = log_ratio(powers[d][keep, x], powers[d][keep, xp]) + shift
                    right = np.zeros(n_right)
                    for d in range(1, n_right + 1):
                        if t + d <= length:
                            right[d - 1] = log_ratio(powers[d][x], powers[d][xp])
                    value = np.maximum(value, left[:, None] + right[None, :])
                if not secret:
                    continue
                size = np.arange(n_left)[:, None] + np.arange(n_right)[None, :] + 1  # |H| = dL + dR − 1
                for b in range(1, max_b + 1):
                    result[b - 1] = max(result[b - 1], float(value[size <= b].min()))
    return result


def chain_of_kind(rng, k, kind):
    """A random transition matrix of a named kind (the shapes real priors take, and hard ones)."""
    if kind == "dense":  # fast mixing, like a smoothed fitted prior
        m = rng.dirichlet(np.full(k, 0.3), size=k)
        m = 0.999 * m + 0.001 / k
    elif kind == "sticky":
        m = 0.7 * np.eye(k) + 0.3 * rng.dirichlet(np.ones(k), size=k)
    elif kind == "sparse":  # zeros; irreducible and aperiodic through the self-loop of state 0
        m = np.zeros((k, k))
        for i in range(k):
            m[i, rng.choice(k, 2, replace=False)] = rng.random(2) + 0.1
            m[i, (i + 1) % k] += 0.3
        m[0, 0] += 0.2
    elif kind == "near-periodic":
        m = 0.9 * np.roll(np.eye(k), 1, axis=1) + 0.1 * rng.dirichlet(np.ones(k), size=k)
    elif kind == "periodic":  # never mixes: a cycle of period 2 on top of random rows
        m = np.zeros((k, k))
        half = k // 2
        m[:half, half:] = rng.random((half, k - half)) + 0.1
        m[half:, :half] = rng.random((k - half, half)) + 0.1
    elif kind == "ring":  # a walk on a ring moving at most 2 places: P^d has zeros below ~k/4
        m = np.zeros((k, k))
        for i in range(k):
            for s in range(-2, 3):
                m[i, (i + s) % k] = rng.random() + 0.1
    elif kind == "grid":  # stay or move to a neighbour on a √k × √k grid (k a square)
        side = int(round(k**0.5))
        m = np.zeros((k, k))
        for i in range(side * side):
            r, c = divmod(i, side)
            m[i, i] = rng.random() + 0.1
            for rr, cc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                if 0 <= rr < side and 0 <= cc < side:
                    m[i, rr * side + cc] = rng.random() + 0.1
        m = m[:k, :k] if side * side == k else np.eye(k) * 0.5 + 0.5 / k
    elif kind == "fitted":  # fitted with smoothing 1e-5 to a few walks on a ring: unseen transitions hold 1e-5
        true = np.zeros((k, k))
        for i in range(k):
            for s in (-1, 0, 1):
                true[i, (i + s) % k] = rng.random() + 0.1
        true /= true.sum(axis=1, keepdims=True)
        counts = np.zeros((k, k))
        state = int(rng.integers(k))
        for _ in range(20 * k):
            nxt = int(rng.choice(k, p=true[state]))
            counts[state, nxt] += 1
            state = nxt
        rows = counts.sum(axis=1, keepdims=True)
        m = np.where(rows > 0, counts / np.maximum(rows, 1), 1.0 / k)
        zero = m == 0
        m = np.where(zero, 1e-5, m * (1 - zero.sum(axis=1, keepdims=True) * 1e-5))
    elif kind == "transient":  # state 0 is left forever after the first step
        m = rng.dirichlet(np.ones(k), size=k)
        m[:, 0] = 0.0
        m[0, 1:] += 1e-3
    else:
        raise ValueError(kind)
    return m / m.sum(axis=1, keepdims=True)


def cutoff_distance(transition, rows):
    """First d with 2·max over columns of the log spread over ``rows`` of P^d ≤ 1e-12 (None if none ≤ 400)."""
    power = np.eye(len(transition))
    for d in range(1, 401):
        power = power @ transition
        sub = power[rows]
        if np.any(sub == 0):
            continue
        logs = np.log(sub)
        if 2 * (logs.max(axis=0) - logs.min(axis=0)).max() <= 1e-12:
            return d
    return None


def converged_from(prior):
    """First t with supp p_t = supp π and max |log p_t − log π| ≤ 1e-12 (None if never within the chain)."""
    values, vectors = np.linalg.eig(prior.transition.T)
    pi = np.abs(np.real(vectors[:, np.argmin(np.abs(values - 1))]))
    pi /= pi.sum()
    p = prior.initial.copy()
    for t in range(1, prior.length + 1):
        same = np.array_equal(p > 1e-300, pi > 1e-300)
        if same and np.max(np.abs(np.log(p[pi > 0]) - np.log(pi[pi > 0]))) <= 1e-12:
            return t
        p = p @ prior.transition
    return None


def brute_event_curve(priors, states, first, last):
    """[a(1), ..., a(T_max)] of the event pair "X_t ∈ A for some t in first..last" vs "for none" (0-based,
    inclusive), straight from the definition (docs/math.md §2, §16): every H (any subset, not only windows),
    every D_L, both directions, the sup over Θ inside the min over H.  Priors where either event has
    probability 0 hold no such secret.  Plain Python; shares no code with puffer_core."""
    t_max = max(length for _, _, length in priors)
    tables = [sequence_probabilities(P, init, T) for P, init, T in priors]
    window = range(first, last + 1)
    result = []
    for b in range(1, t_max + 1):
        best = math.inf
        for size in range(0, b + 1):
            for H in itertools.combinations(range(t_max), size):
                worst = 0.0
                for (_, _, T), table in zip(priors, tables):
                    L = [i for i in range(T) if i not in H]
                    some, none = {}, {}
                    p_some = p_none = 0.0
                    for seq, pr in table.items():
                        if pr <= 0:
                            continue
                        key = tuple(seq[i] for i in L)
                        if any(seq[t] in states for t in window):
                            some[key] = some.get(key, 0.0) + pr
                            p_some += pr
                        else:
                            none[key] = none.get(key, 0.0) + pr
                            p_none += pr
                    if p_some <= 0 or p_none <= 0:
                        continue
                    for key in set(some) | set(none):
                        a_ = some.get(key, 0.0) / p_some
                        c_ = none.get(key, 0.0) / p_none
                        if a_ > 0 and c_ > 0:
                            worst = max(worst, abs(math.log(a_ / c_)))
                        elif a_ > 0 or c_ > 0:
                            worst = math.inf
                best = min(best, worst)
        result.append(best)
    return result


def brute_redaction(priors, node, pairs=None):
    """[leak(size 1), ..., leak(size T_max)]: for each window size the smallest leakage about entry ``node``
    (0-based) over the windows [i, j] ∋ node of that size, withheld while every other entry is released —
    max over θ, secret pairs (a set of ordered pairs; None: all) and released values of the log ratio, by
    enumerating every sequence (docs/math.md §16).  Shares no code with puffer_core."""
    t_max = max(length for _, _, length in priors)
    tables = [sequence_probabilities(P, init, T) for P, init, T in priors]
    k = len(priors[0][0])
    out = [math.inf] * t_max
    for i in range(node + 1):
        for j in range(node, t_max):
            worst = 0.0
            for (_, _, T), table in zip(priors, tables):
                if node >= T:
                    continue
                released = [s for s in range(T) if s < i or s > j]
                joint, mass = {}, [0.0] * k
                for seq, pr in table.items():
                    key = (seq[node], tuple(seq[s] for s in released))
                    joint[key] = joint.get(key, 0.0) + pr
                    mass[seq[node]] += pr
                keys = {key for (_, key) in joint}
                for x in range(k):
                    for xp in range(k):
                        if x == xp or mass[x] <= 0 or mass[xp] <= 0 or (pairs is not None and (x, xp) not in pairs):
                            continue
                        for key in keys:
                            a_ = joint.get((x, key), 0.0) / mass[x]
                            c_ = joint.get((xp, key), 0.0) / mass[xp]
                            if a_ > 0:
                                worst = max(worst, math.inf if c_ <= 0 else math.log(a_ / c_))
            size = j - i + 1
            out[size - 1] = min(out[size - 1], worst)
    running = math.inf
    for s in range(t_max):
        running = min(running, out[s])
        out[s] = running
    return out
