"""Brute-force references for synthetic sequences that share no code with puffer_core (docs/math.md §19).

- :func:`counts_of`: the released vector of a dataset (per group: K×K transition counts, then K first-state
  counts), by plain loops.
- :func:`exact_release_leakage`: the exact Pufferfish leakage of "those counts + discrete Laplace noise of scale
  s on every count", by enumerating every dataset of 1–2 users under a Markov chain prior (docs/math.md §9).
  The output space is infinite, but the log ratio of two mixtures of products of e^(−|ω_c − n_c|/s) depends on
  each ω_c only through its value clamped to [min_c n_c, max_c n_c] (beyond, every term gains the same factor),
  so the maximum over the finite box of clamped outputs is the supremum over all outputs.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def counts_of(dataset, groups, k, n_groups):
    """The released vector of ``dataset`` (a list of state tuples, one per user) with user u in group groups[u]."""
    out = [0] * (n_groups * (k * k + k))
    for seq, g in zip(dataset, groups):
        base = g * k * k
        for a, b in zip(seq, seq[1:]):
            out[base + a * k + b] += 1
        out[n_groups * k * k + g * k + seq[0]] += 1
    return out


def _sequence_table(transition, initial, length):
    k = len(transition)
    table = {}
    for seq in itertools.product(range(k), repeat=length):
        p = initial[seq[0]]
        for a, b in zip(seq, seq[1:]):
            p *= transition[a][b]
        table[seq] = p
    return table


def _marginal(transition, initial, t):
    p = list(initial)
    for _ in range(t):
        p = [sum(p[a] * transition[a][b] for a in range(len(p))) for b in range(len(p))]
    return p


def exact_release_leakage(transition, initial, lengths, groups, n_groups, scale):
    """max over users u, positions t, pairs x ≠ x' (positive prior probability) and outputs ω of
    log Pr[ω | X_{u,t} = x] / Pr[ω | X_{u,t} = x'] for the counts of :func:`counts_of` + discrete Laplace(scale).

    ``transition``, ``initial``: the prior as plain lists (every user's sequence is its chain, independently);
    ``lengths``, ``groups``: each user's length and group.
    """
    k = len(transition)
    tables = [_sequence_table(transition, initial, T) for T in lengths]
    alpha = math.exp(-1.0 / scale)
    datasets = [(seqs, math.prod(t[s] for t, s in zip(tables, seqs)))
                for seqs in itertools.product(*[list(t) for t in tables])]
    vectors = {}
    for seqs, p in datasets:
        if p > 0:
            vectors.setdefault(tuple(counts_of(seqs, groups, k, n_groups)), []).append((seqs, p))
    keys = list(vectors)
    matrix = np.array(keys, dtype=np.int64)
    lo, hi = matrix.min(axis=0), matrix.max(axis=0)
    varying = np.flatnonzero(hi > lo)  # a cell equal in every dataset cancels from every ratio
    worst = 0.0
    for u, T in enumerate(lengths):
        for t in range(T):
            marginal = _marginal(transition, initial, t)
            weights = {}
            for x in range(k):
                if marginal[x] <= 0:
                    continue
                w = np.array([sum(p for seqs, p in vectors[key] if seqs[u][t] == x) for key in keys]) / marginal[x]
                weights[x] = w
            for x, xp in itertools.permutations(weights, 2):
                worst = max(worst, _max_log_ratio(matrix[:, varying], lo[varying], hi[varying], weights[x],
                                                  weights[xp], alpha))
    return worst


def _max_log_ratio(n, lo, hi, w_num, w_den, alpha):
    """max over ω in the box of log Σ_j w_num[j] Π_c α^|ω_c − n_jc| / Σ_j w_den[j] Π_c α^|ω_c − n_jc|."""
    if n.shape[1] == 0:
        return math.log(w_num.sum() / w_den.sum())
    grids = [np.arange(a, b + 1) for a, b in zip(lo, hi)]
    # Φ[c][value, j] = α^|value − n_jc|, built cell by cell into the box (first cells slowest)
    phi = [alpha ** np.abs(g[:, None] - n[None, :, c]) for c, g in enumerate(grids)]
    first, rest = phi[0], phi[1:]
    best = -math.inf
    for row in first:  # one value of the first cell at a time keeps the box × datasets array small
        block = row[None, :]
        for factor in rest:
            block = (block[:, None, :] * factor[None, :, :]).reshape(-1, n.shape[0])
        num = block @ w_num
        den = block @ w_den
        with np.errstate(divide="ignore"):
            ratio = np.where(num > 0, np.log(num) - np.log(den), -np.inf)
        best = max(best, float(ratio.max()))
    return best


def window_changes(k, length):
    """Every change of a window of consecutive entries of one sequence: (window size h, whether the window is the
    whole sequence, the L1 and L2 norms of the change of :func:`counts_of`), by enumeration."""
    out = []
    for seq in itertools.product(range(k), repeat=length):
        before = np.array(counts_of([seq], [0], k, 1))
        for start in range(length):
            for stop in range(start + 1, length + 1):
                for values in itertools.product(range(k), repeat=stop - start):
                    other = seq[:start] + values + seq[stop:]
                    if other == seq:
                        continue
                    diff = np.array(counts_of([other], [0], k, 1)) - before
                    out.append((stop - start, stop - start == length, int(np.abs(diff).sum()),
                                float(np.sqrt((diff**2).sum()))))
    return out
