"""The leakage function L(α; Q) of [TPL] and its Pareto front of prefix points (docs/math.md §10).

How much a leakage α about X_{t∓1} adds about X_t through a backward or forward matrix Q:
``L(α; Q) = max_{i≠i'} max_S log (1 + (e^α − 1)·Q[i, S]) / (1 + (e^α − 1)·Q[i', S])``.  A
:class:`LeakageFront` holds the Pareto-optimal prefix points (Q[i', S], Q[i, S]) once, so that L is
evaluated at many α cheaply; the recursions of :mod:`puffer_core.stream.tpl` and the suprema of
:mod:`puffer_core.stream.supremum` read it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..validation import check_eps
from ..work import FRONT, WorkCounter
from .checks import check_row_stochastic

CHUNK_CELLS = 1_000_000  # (pairs × K) cells of one chunk of the front construction
INFINITE_MARGIN = 1e-12  # e^ε·q within this of 1 counts as unbounded (never a huge truncated number)
SUBNORMAL = 1e-300  # added to every small-α leakage: rounding below the normal range, far below any ε shown




# --------------------------------------------------------------------------------------------
# the leakage function


ROUNDING = 8.0 * np.finfo(float).eps  # a few ulps: what one evaluation of a ratio's log may lose


def add_up(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """a + b rounded up: the next double above when the rounded sum lost something (TwoSum error > 0).

    Leakages are upper bounds, and a sum such as 1e17 + 2.08 rounds to 1e17 — below the truth.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        total = a + b
        virtual = total - a
        error = (a - (total - virtual)) + (b - virtual)
        return np.where(error > 0, np.nextafter(total, np.inf), total)


@dataclass(frozen=True, eq=False)
class LeakageFront:
    """The Pareto-optimal prefix points (d, q) = (Q[i', S], Q[i, S]) over all ordered pairs (i, i').

    Sorted by d ascending (q then strictly increasing).  L(α) is the largest
    ``log(1 + c·q) − log(1 + c·d)`` (c = e^α − 1) over them, and 0 for the empty set S.
    """

    d: np.ndarray
    q: np.ndarray

    def leakage(self, alpha: np.ndarray) -> np.ndarray:
        """L(α) for every α of a 1-D array — never below the exact value.

        For each point, log(1 + c·q) − log(1 + c·d) with c = e^α − 1.  Small α (≤ 1): log1p(c·q) −
        log1p(c·d).  Larger α: the α in both logs cancels *before* rounding,
        log(q + (1 − q)e^{−α}) − log(d + (1 − d)e^{−α}) (d = 0: α + log(q + (1 − q)e^{−α})), so the
        log term survives at any α (α + log x rounds to α from α ≈ 1e13 on).  Each log is accurate to
        a few ulps: every value is raised by a bound on that rounding, then capped at α (L ≤ α).
        """
        alpha = np.asarray(alpha, dtype=float)
        out = np.zeros(alpha.shape)
        if self.q.size == 0 or alpha.size == 0:
            return out
        small = alpha <= 1.0
        if small.any():
            out[small] = self._small(alpha[small])
        if not small.all():
            out[~small] = self._large(alpha[~small])
        return np.maximum(out, 0.0)

    def _small(self, alpha: np.ndarray) -> np.ndarray:
        c = np.expm1(alpha)[:, None]
        top = np.log1p(c * self.q[None, :])
        bottom = np.log1p(c * self.d[None, :])
        # the relative bound on rounding, and an absolute one for values below the normal range (a subnormal
        # log1p keeps only a few digits: 2.7e-311 → 4.70560489606e-311, below the true 4.705604896063895e-311)
        values = (top - bottom + ROUNDING * (top + bottom) + SUBNORMAL).max(axis=1)
        return np.minimum(values, alpha)

    @cached_property
    def _positive(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float | None]:
        """The points with d > 0 as (q, 1 − q, d, 1 − d) rows, and the largest q of the points with d = 0."""
        zero = self.d == 0
        q, d = self.q[~zero][None, :], self.d[~zero][None, :]
        top_zero = float(self.q[zero].max()) if zero.any() else None
        return q, 1.0 - q, d, 1.0 - d, top_zero

    def _large(self, alpha: np.ndarray) -> np.ndarray:
        q, q_rest, d, d_rest, top_zero = self._positive
        u = np.exp(-alpha)[:, None]  # 0 beyond α ≈ 745: then q + (1 − q)u = q exactly
        values = np.full(alpha.shape, -np.inf)
        if q.size:
            # the largest ratio first, then one log (log is increasing): each ratio is within a few ulps
            ratio = ((q + q_rest * u) / (d + d_rest * u)).max(axis=1)
            values = np.log(ratio)
            values = values + ROUNDING * (np.abs(values) + 1.0)
        if top_zero is not None:  # d = 0: α + log(q + (1 − q)e^{−α}), largest at the largest q
            with np.errstate(divide="ignore"):
                t = np.log(top_zero + (1.0 - top_zero) * u[:, 0])
            values = np.maximum(values, alpha + t + ROUNDING * (alpha + np.abs(t) + 1.0))
        return np.minimum(values, alpha)

    def supremum(self, eps: float) -> float:
        """The least fixed point α* = L(α*) + ε, or +inf when there is none (see :func:`leakage_supremum`)."""
        if self.q.size == 0:
            return eps
        q, d = self.q, self.d
        u = math.exp(-eps)
        zero = d == 0
        if np.any(q[zero] >= u * (1.0 - INFINITE_MARGIN)):
            return math.inf
        with np.errstate(divide="ignore", invalid="ignore"):
            # d > 0: x = e^α solves d·u·x² + (u(1−d) − q)·x − (1 − q) = 0 (the fixed point times e^−ε)
            b = u * (1.0 - d) - q
            root = np.sqrt(b * b + 4.0 * d * u * (1.0 - q))
            log_x = np.where(
                b < 0,
                np.log(root - b) - np.log(2.0 * d) + eps,
                np.log(2.0 * (1.0 - q)) - np.log(b + root),
            )
            # d = 0: x·(u − q) = 1 − q
            log_x = np.where(zero, np.log1p(-q) - np.log(u - q), log_x)
        alpha = max(float(np.max(log_x)), eps)
        # certify: α − L(α) ≥ ε means α is at or above the least fixed point (α − L(α) never decreases)
        step = max(abs(alpha), 1.0) * 4.0 * np.finfo(float).eps
        for _ in range(200):
            if alpha - float(self.leakage(np.array([alpha]))[0]) >= eps:
                return alpha
            alpha += step
            step *= 2.0
        raise RuntimeError("the fixed point of the leakage recursion could not be certified")  # pragma: no cover


def _pareto(d: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points not dominated by another with d' ≤ d and q' ≥ q, sorted by d (exact comparisons)."""
    if d.size == 0:
        return d, q
    order = np.lexsort((-q, d))
    d, q = d[order], q[order]
    best = np.maximum.accumulate(q)
    keep = np.empty(d.size, dtype=bool)
    keep[0] = True
    keep[1:] = q[1:] > best[:-1]
    return d[keep], q[keep]


def _dominated(front_d: np.ndarray, front_q: np.ndarray, d: np.ndarray, q: np.ndarray) -> np.ndarray:
    """True where a front point has d' ≤ d and q' ≥ q (the front is sorted, q increasing).

    A coarse grid test first (front points with d' below the grid cell of d), then an exact
    search for the points that pass it.
    """
    if front_d.size == 0:
        return np.zeros(d.shape, dtype=bool)
    cells = 1 << 16
    edges = np.searchsorted(front_d, np.arange(cells + 1) / cells, side="left") - 1
    stair = np.where(edges >= 0, front_q[np.maximum(edges, 0)], -np.inf)
    out = q <= stair[np.minimum((d * cells).astype(np.int64), cells)]
    rest = np.flatnonzero(~out)
    idx = np.searchsorted(front_d, d[rest], side="right") - 1
    out[rest] = (idx >= 0) & (q[rest] <= front_q[np.maximum(idx, 0)])
    return out


def build_front(matrix: np.ndarray, secrets: np.ndarray | None = None, work: WorkCounter | None = None,
                pairs: np.ndarray | None = None) -> LeakageFront:
    """The Pareto front of prefix points of every ordered pair of rows among ``secrets``.

    One sort per *unordered* pair {i, i'} serves both orders: sorted by Q[i', j]/Q[i, j]
    ascending, the elements with Q[i, j] > Q[i', j] come first (the prefixes of (i, i')) and
    those with Q[i', j] > Q[i, j] come last, in reverse (the prefixes of (i', i)).  Division is
    correctly rounded, so the computed order never reverses two ratios (ties aside).
    ``pairs`` (a K×K boolean matrix): only the ordered pairs (i, i') it holds count — the secret pairs
    of docs/math.md §16 (L of the row i against the row i': "X_t = i rather than i'").
    """
    k = matrix.shape[0]
    states = np.arange(k) if secrets is None else np.flatnonzero(secrets)
    first, second = np.triu_indices(states.size, k=1)
    first, second = states[first], states[second]
    forward_ok = backward_ok = None
    if pairs is not None:
        keep = pairs[first, second] | pairs[second, first]
        first, second = first[keep], second[keep]
        forward_ok, backward_ok = pairs[first, second], pairs[second, first]
    front_d = np.empty(0)
    front_q = np.empty(0)
    step = max(1, CHUNK_CELLS // k)
    for start in range(0, first.size, step):
        a = matrix[first[start : start + step]]
        b = matrix[second[start : start + step]]
        if work is not None:
            work.add(FRONT, a.size)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            key = b / a  # b > 0 = a gives +inf
        key[np.isnan(key)] = 1.0  # 0/0: neither order gains from the element
        order = np.argsort(key, axis=1)
        order += (np.arange(order.shape[0]) * k)[:, None]  # flat indices into the (pairs, K) rows
        chunk_d, chunk_q, tv_d, tv_q = [], [], [], []
        ahead, behind = (key < 1).sum(axis=1), (key > 1).sum(axis=1)
        if forward_ok is not None and backward_ok is not None:  # orders that are not secret pairs add nothing
            ahead = np.where(forward_ok[start : start + step], ahead, 0)
            behind = np.where(backward_ok[start : start + step], behind, 0)
        for numerator, denominator, count, columns in (
            (a, b, ahead, order),
            (b, a, behind, order[:, ::-1]),
        ):
            width = int(count.max(initial=0))
            if width == 0:
                continue
            cols = columns[:, :width]
            qs = np.cumsum(np.take(numerator, cols), axis=1)
            ds = np.cumsum(np.take(denominator, cols), axis=1)
            used = np.arange(width)[None, :] < count[:, None]
            chunk_d.append(ds[used])
            chunk_q.append(qs[used])
            rows = np.flatnonzero(count > 0)
            tv_d.append(ds[rows, count[rows] - 1])  # all elements with Q[i,j] > Q[i',j]: the largest q − d
            tv_q.append(qs[rows, count[rows] - 1])
        if not chunk_d:
            continue
        front_d, front_q = _pareto(np.concatenate([front_d, *tv_d]), np.concatenate([front_q, *tv_q]))
        d = np.concatenate(chunk_d)
        q = np.concatenate(chunk_q)
        # a strided sample (a few prefixes of every pair) sharpens the front before the filter
        sample = slice(None, None, max(1, d.size // 10_000))
        front_d, front_q = _pareto(np.concatenate([front_d, d[sample]]), np.concatenate([front_q, q[sample]]))
        keep = ~_dominated(front_d, front_q, d, q)
        front_d, front_q = _pareto(np.concatenate([front_d, d[keep]]), np.concatenate([front_q, q[keep]]))
    return LeakageFront(front_d, front_q)


def leakage_function(Q: object, alpha: float) -> float:
    """L(α; Q) of [TPL]: how much a leakage α about X_{t∓1} adds about X_t (docs/math.md §10).

    ``L(α; Q) = max_{i≠i'} max_{S ⊆ states} log (1 + (e^α − 1)·Q[i, S]) / (1 + (e^α − 1)·Q[i', S])``

    for a K×K row-stochastic ``Q`` (a backward or forward matrix) and ``α ≥ 0``; ``Q[i, S]`` is
    the sum of row i over the columns in S.  Always ``0 ≤ L(α; Q) ≤ α``.

    **The prefix rule.**  For one ordered pair of rows q = Q[i, ·], d = Q[i', ·] and
    c = e^α − 1 > 0, let R(S) = (1 + c·q(S)) / (1 + c·d(S)).  Adding an element j ∉ S gives
    (1 + c·q(S) + c·q_j) / (1 + c·d(S) + c·d_j), a *mediant* of R(S) and q_j/d_j, so it raises R
    exactly when q_j/d_j > R(S) (q_j/0 = ∞ for q_j > 0); removing j ∈ S raises R exactly when
    q_j/d_j < R(S).  So a maximiser S* with value R* contains every j with q_j/d_j > R* and no j
    with q_j/d_j < R*; elements with ratio exactly R* do not change R.  Hence the set
    {j : q_j/d_j > R*} attains the maximum, and it is a *prefix* of the states sorted by
    q_j/d_j in decreasing order.  As R* ≥ R(∅) = 1, only elements with q_j > d_j ever enter
    it: the maximum over all 2^K sets is the maximum over at most K + 1 prefixes.  Sorting
    costs O(K log K) per pair, O(K³ log K) for the K(K−1) pairs.

    **Many α at once.**  (1 + c·q)/(1 + c·d) grows with q and falls with d, so a prefix point
    (d, q) dominated by another one (d' ≤ d, q' ≥ q, from any pair) never attains the maximum.
    The non-dominated points (the Pareto front, usually a few hundred) do not depend on α:
    :func:`backward_privacy_leakage` builds them once and evaluates L at every step from them.
    """
    matrix = check_row_stochastic("the matrix Q", Q)
    alpha = check_eps("alpha", alpha, allow_zero=True)
    return float(build_front(matrix).leakage(np.array([alpha]))[0])

