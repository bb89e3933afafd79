"""One prior's left and right terms about a protected entry at any distance, for the redaction planner
(docs/math.md §16, "Redaction").

For one prior θ, protected node t (1-based) and the secret pairs E (restricted to states with mass at t):

    left(d)[x, x']  = max_{l ∈ supp p_{t−d}, P^d[l, x] > 0} (log P^d[l, x] − log P^d[l, x']) + log p_t[x'] − log p_t[x]
    right(d)[x, x'] = max_{r, P^d[x, r] > 0} (log P^d[x, r] − log P^d[x', r])

(+∞ where the denominator is 0): the engine's inner term for one split (docs/math.md §2.1), from the engine's
max log-ratio kernel on log P^d exactly as :class:`~puffer_core.engine.chain_terms.ChainTerms` builds it.
A side whose released entry does not exist (t − d < 1, or t + d past the prior's end) has terms 0.

What this module adds is the cheap part.  With A_l[x] = log P^d[l, x] − log p_t[x] (left) or A_r[x] =
log P^d[x, r] (right), a term is max over one index of A[x] − A[x'], so the largest term over a pair set of one
of two shapes is a range per row, O(K²) instead of the kernel's K³ (docs/math.md §16, "Separable tops"):

- *cliques* (every pair inside each of some disjoint groups: "all pairs", "within groups"): max over rows and
  groups of (max − min over the group);
- a *star* (every pair with at least one state in S, both ways: "each sensitive state against the rest"):
  max over rows of max(max_S A − min A, max A − min_S A).

A row mixing a zero and a positive entry where a pair meets both gives +∞; rows of zeros are skipped.  The
same pass records, for each row, the pair that reaches its range: the *candidate pairs*, on which the exact
terms cost O(K) a pair and give a lower bound on a window's leak (the exact leak restricted to some pairs).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.sparse.csgraph import connected_components

from ..priors.models import MarkovChainPrior, check_no_underflow
from ..work import MAX_PLUS, PRODUCT, SPLIT, WorkCounter
from .kernels import HUGE, log_or_neg, max_log_ratio

KEEP_BYTES = 48e6  # powers of P (and as many of their logarithms) kept at once; others are rebuilt
CANDIDATES = 16  # rows per group whose range-reaching pairs are kept as candidates for the lower bound


@njit(cache=True, nogil=True)
def pair_ratios(logs: np.ndarray, rows: np.ndarray, xs: np.ndarray, xps: np.ndarray, across: bool) -> np.ndarray:
    """For each listed pair (x, x') = (xs[i], xps[i]): max over the indices j with a numerator above log 0 of
    numerator − denominator, +inf where such a j has a log-0 denominator (positive over zero) — the max
    log-ratio kernel's rule and arithmetic, for these pairs only.  ``across`` True (the right side): numerator
    logs[x, j], denominator logs[x', j], every j; False (the left side): logs[j, x] and logs[j, x'], the j with
    ``rows[j]``."""
    n = logs.shape[1] if across else logs.shape[0]
    out = np.full(xs.size, -np.inf)
    for i in range(xs.size):
        x, y = xs[i], xps[i]
        best = -np.inf
        for j in range(n):
            if across:
                a, b = logs[x, j], logs[y, j]
            elif rows[j]:
                a, b = logs[j, x], logs[j, y]
            else:
                continue
            if a < -HUGE:
                continue
            if b < -HUGE:
                best = np.inf
                break
            if a - b > best:
                best = a - b
        out[i] = best
    return out


def pair_shape(pairs: np.ndarray) -> tuple[str, list[np.ndarray]] | None:
    """("cliques", [each group's states]) or ("star", [S, the states in some pair] as boolean masks) when the
    K×K pair matrix (diagonal False, rows and columns of states without mass all False) is exactly one of those
    shapes; None otherwise."""
    k = pairs.shape[0]
    if not pairs.any() or not np.array_equal(pairs, pairs.T):
        return None
    live: np.ndarray = np.asarray(pairs.any(axis=1))
    count, label = connected_components(pairs, directed=False)
    groups = [np.flatnonzero(live & (label == c)) for c in range(count)]
    groups = [g for g in groups if g.size >= 2]
    rebuilt = np.zeros((k, k), dtype=bool)
    for g in groups:
        rebuilt[np.ix_(g, g)] = True
    np.fill_diagonal(rebuilt, False)
    if np.array_equal(rebuilt, pairs):
        return "cliques", groups
    centre: np.ndarray = np.asarray(pairs.sum(axis=1) == live.sum() - 1)  # paired with every other state that has pairs
    star = (centre[:, None] | centre[None, :]) & live[:, None] & live[None, :]
    np.fill_diagonal(star, False)
    if centre.any() and np.array_equal(star, pairs):
        return "star", [centre & live, live]
    return None


@njit(cache=True, nogil=True)
def row_ranges(logs: np.ndarray, rows: np.ndarray, shift: np.ndarray, group: np.ndarray, across: bool
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row i of M over the columns ``group``: (max, min, the positions in ``group`` of both, how many
    entries are log 0), the log-0 entries (below −``HUGE``) left out of max and min (±inf if every one is).

    M[i, j] = logs[i, group[j]] − shift[group[j]] for the rows with ``rows[i]`` (``across`` False: the left
    side, rows l of log P^d), or M[i, j] = logs[group[j], i] (``across`` True: the right side, columns r of
    log P^d; ``rows`` and ``shift`` unused).  One pass, no K²-sized temporaries.
    """
    n = logs.shape[1] if across else logs.shape[0]
    hi = np.full(n, -np.inf)
    lo = np.full(n, np.inf)
    arg_hi = np.zeros(n, dtype=np.int64)
    arg_lo = np.zeros(n, dtype=np.int64)
    zeros = np.zeros(n, dtype=np.int64)
    for j in range(group.size):
        x = group[j]
        for i in range(n):
            if across:
                v = logs[x, i]
            elif rows[i]:
                v = logs[i, x]
            else:
                continue
            if v < -HUGE:
                zeros[i] += 1
                continue
            if not across:
                v -= shift[x]
            if v > hi[i]:
                hi[i] = v
                arg_hi[i] = j
            if v < lo[i]:
                lo[i] = v
                arg_lo[i] = j
    return hi, lo, arg_hi, arg_lo, zeros


def _best_rows(gaps: np.ndarray) -> np.ndarray:
    """The rows with the ``CANDIDATES`` largest gaps (all rows when there are fewer)."""
    if gaps.size <= CANDIDATES:
        return np.arange(gaps.size)
    return np.argpartition(gaps, gaps.size - CANDIDATES)[gaps.size - CANDIDATES:]


def _clique_top(logs: np.ndarray, rows: np.ndarray, shift: np.ndarray, group: np.ndarray, across: bool,
                k: int) -> tuple[float, np.ndarray]:
    """max over rows of the range of M (:func:`row_ranges`) over ``group`` (+inf if a row mixes zeros and
    positives), and the (argmax, argmin) pairs of the rows with the largest ranges as flat indices x·K + x'
    (rows of zeros skipped)."""
    hi, lo, arg_hi, arg_lo, zeros = row_ranges(logs, rows, shift, group, across)
    used = rows if not across else np.ones(hi.size, dtype=bool)
    keep = used & (zeros < group.size)
    if not keep.any():
        return 0.0, np.empty(0, dtype=np.int64)
    gaps = (hi - lo)[keep]
    best = _best_rows(gaps)
    pick_hi, pick_lo = arg_hi[keep][best], arg_lo[keep][best]
    flat = (group[pick_hi] * k + group[pick_lo])[pick_hi != pick_lo]
    if np.any(keep & (zeros > 0)):
        return math.inf, flat
    return float(max(0.0, gaps.max())), flat


def _star_top(logs: np.ndarray, rows: np.ndarray, shift: np.ndarray, centre: np.ndarray, live: np.ndarray,
              across: bool, k: int) -> tuple[float, np.ndarray]:
    """max over rows of max over the pairs (x, x') with x or x' in ``centre`` (both in ``live``) of
    M[x] − M[x'] (+inf where such a pair has a positive numerator over a zero), and candidates."""
    inner, states = np.flatnonzero(centre), np.flatnonzero(live)
    hi_s, lo_s, arg_hi_s, arg_lo_s, zeros_s = row_ranges(logs, rows, shift, inner, across)
    hi_a, lo_a, arg_hi_a, arg_lo_a, zeros_a = row_ranges(logs, rows, shift, states, across)
    used = rows if not across else np.ones(hi_a.size, dtype=bool)
    keep = used & (zeros_a < states.size)
    if not keep.any():
        return 0.0, np.empty(0, dtype=np.int64)
    mixed = keep & (((zeros_s > 0) & (zeros_a < states.size)) | ((zeros_s < inner.size) & (zeros_a > 0)))
    with np.errstate(invalid="ignore"):
        out_gap, in_gap = (hi_s - lo_a)[keep], (hi_a - lo_s)[keep]
    best = _best_rows(np.maximum(out_gap, in_gap))
    one = (inner[arg_hi_s[keep][best]], states[arg_lo_a[keep][best]])
    two = (states[arg_hi_a[keep][best]], inner[arg_lo_s[keep][best]])
    flat = np.concatenate([(one[0] * k + one[1])[one[0] != one[1]], (two[0] * k + two[1])[two[0] != two[1]]])
    if np.any(mixed):
        return math.inf, flat
    return float(max(0.0, out_gap.max(), in_gap.max())), flat


def _reach(first: np.ndarray, then: np.ndarray) -> np.ndarray:
    """The support of a product of two supports: counts of paths in float32 (exact below 2²⁴ states)."""
    return (first.astype(np.float32) @ then.astype(np.float32)) > 0


class WindowTerms:
    """One prior's left and right terms at node t (1-based) over the secret pairs, at any distance d.

    P^d comes from the nearest power already known and saved squarings of P (a few products), and every
    structurally positive probability is checked against underflow.  :meth:`side` is the exact term row over
    the secret pairs (the kernel, or O(pairs·K) for a few pairs); :meth:`top` its largest entry, in O(K²) for
    cliques and stars; :meth:`leak` the exact leak of one window; :meth:`lower` a lower bound on it from
    candidate pairs (exact when it costs no kernel).
    """

    def __init__(self, prior: MarkovChainPrior, t: int, use: np.ndarray, work: WorkCounter) -> None:
        self.T = prior.length
        self.t = t
        self.K = k = prior.n_states
        self.P = np.ascontiguousarray(prior.transition, dtype=float)
        self.marg = prior.marginals(t)
        self.lp = log_or_neg(self.marg[t - 1])
        self.mass = self.marg[t - 1] > 0
        pairs = self.mass[:, None] & self.mass[None, :] & use.reshape(k, k)
        np.fill_diagonal(pairs, False)
        self.shape = pair_shape(pairs)
        self.pairs = np.flatnonzero(pairs.reshape(-1))
        self.shift = (self.lp[None, :] - np.where(self.mass, self.lp, 0.0)[:, None]).reshape(-1)[self.pairs]
        self.work = work
        self.keep = max(4, int(KEEP_BYTES // (8 * k * k)))
        self.squarings = [(self.P, self.P > 0)]
        self.powers: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.rows: dict[tuple[int, bool], np.ndarray] = {}
        self.tops: dict[tuple[int, bool], float] = {}
        self.candidates: dict[tuple[int, bool], np.ndarray] = {}
        self._logs: dict[int, np.ndarray] = {}

    def exists(self, d: int, left: bool) -> bool:
        return d <= self.t - 1 if left else self.t + d <= self.T

    def power(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        """(P^d, its structural support), from the nearest power already known and saved squarings."""
        if d in self.powers:
            return self.powers[d]
        base = max((e for e in self.powers if e < d), default=0)
        if base:
            value, struct = self.powers[base]
        else:
            value, struct = np.eye(self.K), np.eye(self.K, dtype=bool)
        gap, j = d - base, 0
        while gap:
            while len(self.squarings) <= j:
                last, last_s = self.squarings[-1]
                self.squarings.append((last @ last, last_s if last_s.all() else _reach(last_s, last_s)))
                self.work.add(PRODUCT, 2.0 * self.K**3)
            if gap & 1:
                value = value @ self.squarings[j][0]
                step = self.squarings[j][1]
                struct = step if step.all() else _reach(struct, step)
                self.work.add(PRODUCT, 2.0 * self.K**3)
            gap >>= 1
            j += 1
        check_no_underflow(value, struct, f"the {d}-step transition matrix")
        if len(self.powers) >= self.keep:
            self.powers.pop(next(iter(self.powers)))
        self.powers[d] = (value, struct)
        return value, struct

    def logs(self, d: int) -> np.ndarray:
        """log P^d (``NEG`` for zeros), the last few kept."""
        if d not in self._logs:
            if len(self._logs) >= self.keep:
                self._logs.pop(next(iter(self._logs)))
            self._logs[d] = log_or_neg(self.power(d)[0])
        return self._logs[d]

    def side(self, d: int, left: bool) -> np.ndarray:
        """The term row over the secret pairs at distance d (left: the released entry t − d; right: t + d)."""
        key = (d, left)
        if key not in self.rows:
            if not self.pairs.size or not self.exists(d, left):
                self.rows[key] = np.zeros(max(1, self.pairs.size))
            elif self.pairs.size * 4 <= self.K * self.K:  # a few pairs: only their entries, O(pairs·K)
                self.rows[key] = self.pair_terms(d, left, self.pairs, self.shift)
            else:
                logs = self.logs(d)
                out = np.empty((self.K, self.K))
                if left:  # h_S(d)[x, x'] = max_{l ∈ supp p_{t−d}} log P^d[l, x] / P^d[l, x']
                    max_log_ratio(np.ascontiguousarray(logs.T), logs, self.marg[self.t - d - 1] > 0, out)
                    self.rows[key] = out.reshape(-1)[self.pairs] + self.shift
                else:  # right(d)[x, x'] = max_r log P^d[x, r] / P^d[x', r]
                    max_log_ratio(logs, np.ascontiguousarray(logs.T), np.ones(self.K, dtype=bool), out)
                    self.rows[key] = out.reshape(-1)[self.pairs]
                self.work.add(MAX_PLUS, float(self.K) ** 3)
        return self.rows[key]

    def pair_terms(self, d: int, left: bool, flat: np.ndarray, shift: np.ndarray | None = None) -> np.ndarray:
        """The exact terms of the pairs ``flat`` (indices x·K + x' of pairs with mass at t) at distance d on a
        side that exists, O(pairs·K): the same differences, in the same order, as the kernel."""
        logs = self.logs(d)
        xs, xps = np.divmod(flat, self.K)
        self.work.add(MAX_PLUS, float(flat.size) * self.K)
        if left:
            terms = pair_ratios(logs, self.marg[self.t - d - 1] > 0, xs, xps, False)
            return terms + (self.lp[xps] - self.lp[xs] if shift is None else shift)
        return pair_ratios(logs, self.mass, xs, xps, True)

    def top(self, d: int, left: bool) -> float:
        """Lmax(d) or Rmax(d): the largest term over the secret pairs; in O(K²) for cliques and stars (a range
        per row, recording candidate pairs), else from the term row."""
        key = (d, left)
        if key in self.tops:
            return self.tops[key]
        if not self.pairs.size or not self.exists(d, left):
            value = 0.0
        elif key in self.rows or self.shape is None:
            value = float(self.side(d, left).max())
        else:
            logs = self.logs(d)
            rows = self.marg[self.t - d - 1] > 0 if left else self.mass
            kind, parts = self.shape
            self.work.add(MAX_PLUS, float(self.K) ** 2)
            if kind == "cliques":
                value, found = 0.0, []
                for group in parts:
                    v, flat = _clique_top(logs, rows, self.lp, group, not left, self.K)
                    value = max(value, v)
                    found.append(flat)
                candidates = np.unique(np.concatenate(found))
            else:
                value, candidates = _star_top(logs, rows, self.lp, parts[0], parts[1], not left, self.K)
            self.candidates[key] = candidates
        self.tops[key] = value
        return value

    def leak(self, dl: int, dr: int) -> float:
        """The exact leak of the window whose nearest released entries are t − dl and t + dr."""
        if not self.pairs.size:
            return 0.0
        if not self.exists(dl, True) or not self.exists(dr, False):  # one side: the other side's largest term
            return max(self.top(dl, True), self.top(dr, False))
        self.work.add(SPLIT, float(self.pairs.size))
        return float((self.side(dl, True) + self.side(dr, False)).max())

    def lower(self, dl: int, dr: int) -> tuple[float, bool]:
        """(a lower bound on the leak of window (dl, dr), whether it is exact): the exact leak where it costs no
        new kernel (one side, a few pairs, both term rows known, or a pair set of no shape, whose tops built the
        rows); else the exact leak over the candidate pairs of both sides' tops — a maximum over fewer pairs of
        the same terms."""
        if (not self.pairs.size or not self.exists(dl, True) or not self.exists(dr, False)
                or ((dl, True) in self.rows and (dr, False) in self.rows) or self.shape is None
                or self.pairs.size * 4 <= self.K * self.K):
            return self.leak(dl, dr), True
        self.top(dl, True)
        self.top(dr, False)
        flat = np.union1d(self.candidates.get((dl, True), np.empty(0, dtype=np.int64)),
                          self.candidates.get((dr, False), np.empty(0, dtype=np.int64)))
        if not flat.size:
            return 0.0, False
        both = self.pair_terms(dl, True, flat) + self.pair_terms(dr, False, flat)
        return float(both.max()), False
