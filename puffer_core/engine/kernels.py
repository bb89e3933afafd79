"""Compiled inner loops of the exact Markov computations (docs/math.md §2.1, §5).

The a(b) curve and MQM's σ_max spend their time in two loops: the pairwise max log-ratio
``max_r (log P^d[x, r] − log P^d[x', r])`` (K³ operations per distance) and the min over
splits of the left and right terms.  Written as plain loops and compiled by numba (about ten
times numpy's broadcasting, without its K³-sized temporaries).  Every function here computes
exactly what its docstring states; the bounds that let callers skip work live with the callers.

Logarithms of probabilities are passed with ``NEG`` in place of log 0, so no NaN or infinity
enters the arithmetic; results above ``HUGE`` mean "positive over zero" (+inf).
"""

from __future__ import annotations

import numpy as np
from numba import njit

NEG = -1e300  # stands for log 0; real logarithms of probabilities are > -750
HUGE = 1e299  # a difference above this had a log-0 denominator: +inf


def log_or_neg(values: np.ndarray) -> np.ndarray:
    """log of non-negative ``values`` with ``NEG`` for zeros."""
    out = np.full(values.shape, NEG)
    np.log(values, out=out, where=values > 0)
    return out


_NUM_ZERO = -4e300  # a log-0 numerator: minus any denominator stays far below -HUGE
_START = -1e308


@njit(cache=True, nogil=True, fastmath=True)
def max_log_ratio(numer: np.ndarray, den_t: np.ndarray, use: np.ndarray, out: np.ndarray) -> None:
    """out[x, y] = max over r with use[r] and numer[x, r] > NEG of numer[x, r] − den_t[r, y].

    +inf where some such r has den_t[r, y] = NEG (positive over zero); −inf where no r
    qualifies (0/0 terms are skipped).  Four rows x share each load of den_t[r] and the inner
    loop runs over y; every operand is finite (a log-0 numerator becomes ``_NUM_ZERO``, whose
    differences stay below −HUGE), so the loop is vectorised safely.
    """
    n_x, n_r = numer.shape
    n_y = den_t.shape[1]
    for x in range(n_x):
        for y in range(n_y):
            out[x, y] = _START
    x = 0
    while x + 4 <= n_x:
        r0 = out[x]
        r1 = out[x + 1]
        r2 = out[x + 2]
        r3 = out[x + 3]
        for r in range(n_r):
            if not use[r]:
                continue
            a0 = numer[x, r]
            a1 = numer[x + 1, r]
            a2 = numer[x + 2, r]
            a3 = numer[x + 3, r]
            if a0 < -HUGE and a1 < -HUGE and a2 < -HUGE and a3 < -HUGE:
                continue
            a0 = a0 if a0 >= -HUGE else _NUM_ZERO
            a1 = a1 if a1 >= -HUGE else _NUM_ZERO
            a2 = a2 if a2 >= -HUGE else _NUM_ZERO
            a3 = a3 if a3 >= -HUGE else _NUM_ZERO
            den = den_t[r]
            for y in range(n_y):
                d = den[y]
                r0[y] = max(r0[y], a0 - d)
                r1[y] = max(r1[y], a1 - d)
                r2[y] = max(r2[y], a2 - d)
                r3[y] = max(r3[y], a3 - d)
        x += 4
    while x < n_x:
        row = out[x]
        for r in range(n_r):
            a = numer[x, r]
            if not use[r] or a < -HUGE:
                continue
            den = den_t[r]
            for y in range(n_y):
                row[y] = max(row[y], a - den[y])
        x += 1
    _infinities(out)


@njit(cache=True, nogil=True)
def _infinities(out: np.ndarray) -> None:
    """Map sentinel-sized results to ±inf (outside the fast-math kernel, where infinities are exact)."""
    n_x, n_y = out.shape
    for x in range(n_x):
        for y in range(n_y):
            v = out[x, y]
            if v > HUGE:
                out[x, y] = np.inf
            elif v < -HUGE:
                out[x, y] = -np.inf


@njit(cache=True, nogil=True)
def column_log_range(logs: np.ndarray, rows: np.ndarray) -> float:
    """max over columns c of (max − min over r in ``rows`` of logs[r, c]); +inf if a column mixes NEG and real.

    Columns that are NEG on every row of ``rows`` count as 0.
    """
    n_r, n_c = logs.shape
    worst = 0.0
    for c in range(n_c):
        hi = -np.inf
        lo = np.inf
        zero = False
        for r in range(n_r):
            if not rows[r]:
                continue
            v = logs[r, c]
            if v < -HUGE:
                zero = True
                continue
            if v > hi:
                hi = v
            if v < lo:
                lo = v
        if hi == -np.inf:
            continue
        if zero:
            return np.inf
        if hi - lo > worst:
            worst = hi - lo
    return worst


@njit(cache=True, nogil=True)
def stream_marginals(
    transition: np.ndarray, initial: np.ndarray, length: int, tiny: float, store: int, pi: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """p_t = initial · P^(t−1) for t = 1..length, keeping the first ``store`` of them.

    Returns (stored marginals (store, K); the structural support of every p_t (length, K);
    the first t whose structurally positive mass is below ``tiny``, 0 if none; and
    η[t−1] = max_x |log p_t[x] − log π[x]| where supp p_t = supp π, +inf elsewhere or when
    ``pi`` is empty).
    """
    k = transition.shape[0]
    kept = np.empty((store, k))
    support = np.zeros((length, k), dtype=np.bool_)
    eta = np.full(length, np.inf)
    has_pi = pi.shape[0] == k
    p = initial.copy()
    s = initial > 0
    bad = 0
    nxt = np.empty(k)
    s_next = np.zeros(k, dtype=np.bool_)
    for t in range(length):
        if t < store:
            kept[t] = p
        support[t] = s
        if bad == 0:
            for x in range(k):
                if s[x] and not p[x] >= tiny:
                    bad = t + 1
                    break
        if has_pi:
            worst = 0.0
            for x in range(k):
                if s[x] != (pi[x] > 0):
                    worst = np.inf
                    break
                if s[x]:
                    g = abs(np.log(p[x]) - np.log(pi[x]))
                    if g > worst:
                        worst = g
            eta[t] = worst
        for y in range(k):
            nxt[y] = 0.0
            s_next[y] = False
        for x in range(k):
            px = p[x]
            sx = s[x]
            if px == 0.0 and not sx:
                continue
            row = transition[x]
            for y in range(k):
                nxt[y] += px * row[y]
                if sx and row[y] > 0:
                    s_next[y] = True
        for y in range(k):
            p[y] = nxt[y]
            s[y] = s_next[y]
    return kept, support, bad, eta


# --------------------------------------------------------------------------- a(b): min over splits
#
# Conventions shared by the functions below (docs/math.md §2.1).  Θ has n priors; prior i has
# length T[i] and stored distances 1..D[i] (a distance d > D[i] reads row D[i], the cutoff
# bound); pair p = x·K + x'.  Prior i's tables are rows of tab[i] (the layout of
# :class:`puffer_core.engine.chain_terms.ChainTerms`): its right term at distance d is
# tab[i, (d − 1)·stride[i]], its h_S for support index s is tab[i, (d − 1)·stride[i] + 1 + s];
# hpi[i] is the support index of supp π, sid[i, s − 1] that of supp p_s.  At node t
# (1-based) a split is (dL, dR) with dL in 1..t and dR in 1..t_max − t + 1: H holds the
# dL + dR − 1 nodes strictly between t − dL and t + dR.
# dL = t means no L node on the left; prior i has an L node on the right iff t + dR ≤ T[i].
# The value of a split for prior i is left_i(dL) + right_i(dR) over the L nodes that exist;
# a node's value for pair p at b is the min over splits with dL + dR = b + 1 (the terms are
# non-increasing, so a smaller H never helps) of the max over the priors present.


@njit(cache=True, nogil=True, inline="always")
def _scan(step: int, d0: int, lo: int, hi: int) -> int:
    """The split dL visited at ``step`` = −2, −1, 0, 1, …: the balanced d0, both ends (a side
    dropped), then outwards from d0; 0 where the step has nothing new (every dL in [lo, hi]
    is visited exactly once over steps −2 .. 2(hi − lo) + 1)."""
    if step == -2:
        return d0
    if step == -1:
        return 0 if hi == d0 else hi
    if step == 0:
        return 0 if lo == d0 or lo == hi else lo
    dl = d0 + (step + 1) // 2 if step % 2 == 1 else d0 - step // 2
    if dl == d0 or dl == hi or dl == lo or dl < lo or dl > hi:
        return 0
    return dl


@njit(cache=True, nogil=True)
def far_node(t, b, p, thresh, t_max, tab, stride, hpi, D, T, shift, add, valid, work):
    """min over splits of node t for pair p with t-independent terms (left = H + shift + add).

    Returns early with some split value ≤ ``thresh`` once one is found (the node cannot
    raise a maximum that is already ``thresh``); −inf when no prior holds the pair at t.
    """
    n = T.shape[0]
    present = False
    for i in range(n):
        if valid[i, p] and t <= T[i]:
            present = True
            break
    if not present:
        return -np.inf
    lo = max(1, b + t - t_max)
    hi = min(t, b)
    d0 = min(max((b + 1) // 2, lo), hi)
    cur = np.inf
    # the balanced split, then both ends (a side dropped), then outwards from the balanced one
    for step in range(-2, 2 * (hi - lo) + 2):
        dl = _scan(step, d0, lo, hi)
        if dl == 0:
            continue
        dr = b + 1 - dl
        m = -np.inf
        work[2] += n
        for i in range(n):
            if valid[i, p] and t <= T[i]:
                # inlined by hand: a call passing the arrays costs more than the arithmetic
                v = 0.0
                if dl <= t - 1:
                    d = dl if dl < D[i] else D[i]
                    v += tab[i, (d - 1) * stride[i] + 1 + hpi[i], p] + shift[i, p] + add[i]
                if t + dr <= T[i]:
                    d = dr if dr < D[i] else D[i]
                    v += tab[i, (d - 1) * stride[i], p]
                if v > m:
                    m = v
        if m < cur:
            cur = m
            if cur <= thresh:
                return cur
    return cur


@njit(cache=True, nogil=True)
def _balanced(b, lo, tab, stride, hpi, D, T, shift, add, valid, out):
    """out[p] = the balanced split's value bounding every node t ≥ lo (−inf for pairs no prior holds).

    At any node t ≥ lo the balanced split (or its truncation where H reaches an end) has no
    larger terms: prior i contributes its left term at most, its right term only if some node
    t ≥ lo has t + dR ≤ T[i], and nothing if it has no node ≥ lo.
    """
    dl = (b + 1) // 2
    dr = b + 1 - dl
    n_pairs = out.shape[0]
    for p in range(n_pairs):
        out[p] = -np.inf
    for i in range(D.shape[0]):
        if T[i] < lo:
            continue
        if D[i] == 0:
            for p in range(n_pairs):
                if valid[i, p] and out[p] < 0.0:
                    out[p] = 0.0
            continue
        left = tab[i, ((dl if dl < D[i] else D[i]) - 1) * stride[i] + 1 + hpi[i]]
        right = tab[i, ((dr if dr < D[i] else D[i]) - 1) * stride[i]]
        has_right = lo + dr <= T[i]
        sh = shift[i]
        ok = valid[i]
        extra = add[i]
        for p in range(n_pairs):
            if ok[p]:
                v = left[p] + sh[p] + extra
                if has_right:
                    v += right[p]
                if v > out[p]:
                    out[p] = v


@njit(cache=True, nogil=True, inline="always")
def _drop_left(t, b, p, tab, stride, D, T, valid):
    """An upper bound on node t's split with no left L node (dL = t): max over priors of their right term.

    +inf where that split does not exist (t > b).  Non-decreasing in t.  Priors absent at t are
    included (a larger max), so the bound holds for every prior present.
    """
    if t > b:
        return np.inf
    m = -np.inf
    for i in range(T.shape[0]):
        if valid[i, p]:
            v = 0.0
            if b + 1 <= T[i] and D[i] > 0:
                d = b + 1 - t
                d = d if d < D[i] else D[i]
                v = tab[i, (d - 1) * stride[i], p]
            if v > m:
                m = v
    return m


@njit(cache=True, nogil=True, inline="always")
def _drop_right(t, b, p, t_max, tab, stride, hpi, D, valid, shift, add):
    """An upper bound on node t's split with no right L node (dR = t_max − t + 1): max of the left terms.

    +inf where that split does not exist (dL = b + t − t_max < 1).  Non-increasing in t.
    """
    dl = b + t - t_max
    if dl < 1:
        return np.inf
    m = -np.inf
    for i in range(D.shape[0]):
        if valid[i, p]:
            v = 0.0
            if D[i] > 0:
                d = dl if dl < D[i] else D[i]
                v = tab[i, (d - 1) * stride[i] + 1 + hpi[i], p] + shift[i, p] + add[i]
            if v > m:
                m = v
    return m


@njit(cache=True, nogil=True)
def _first_left_above(lo, hi, thresh, b, p, tab, stride, D, T, valid):
    """The first t in [lo, hi] with _drop_left(t) > thresh (hi + 1 if none); binary search."""
    a, c = lo, hi + 1
    while a < c:
        m = (a + c) // 2
        if _drop_left(m, b, p, tab, stride, D, T, valid) > thresh:
            c = m
        else:
            a = m + 1
    return a


@njit(cache=True, nogil=True)
def _last_right_above(lo, hi, thresh, b, p, t_max, tab, stride, hpi, D, valid, shift, add):
    """The last t in [lo, hi] with _drop_right(t) > thresh (lo − 1 if none); binary search."""
    a, c = lo - 1, hi
    while a < c:
        m = (a + c + 1) // 2
        if _drop_right(m, b, p, t_max, tab, stride, hpi, D, valid, shift, add) > thresh:
            a = m
        else:
            c = m - 1
    return a


@njit(cache=True, nogil=True)
def _crossing(lo, hi, b, p, t_max, tab, stride, hpi, D, T, valid, shift, add):
    """max over t in [lo, hi] of min(_drop_left(t), _drop_right(t)): one is non-decreasing, the other
    non-increasing in t, so the maximum is where they cross (found by binary search)."""
    a, c = lo, hi + 1  # first t with left ≥ right
    while a < c:
        m = (a + c) // 2
        if _drop_left(m, b, p, tab, stride, D, T, valid) >= _drop_right(
            m, b, p, t_max, tab, stride, hpi, D, valid, shift, add
        ):
            c = m
        else:
            a = m + 1
    out = -np.inf
    if a <= hi:
        out = _drop_right(a, b, p, t_max, tab, stride, hpi, D, valid, shift, add)
    if a - 1 >= lo:
        v = _drop_left(a - 1, b, p, tab, stride, D, T, valid)
        if v > out:
            out = v
    return out


@njit(cache=True, nogil=True)
def far_zone(best, b_from, b_to, t_lo, t_max, t_min, tab, stride, hpi, D, T, shift, add, valid, carried,
             prot, before, after, work):
    """best[b−1] = max(best[b−1], max over protected nodes t ≥ t_lo and pairs of the node value), b = b_from..b_to.

    Nodes before T_min − b are dominated by node T_min − b (all right terms, fewer left ones,
    a cheaper way to drop the left side) and nodes after b + 1 by node b + 1 (all left terms,
    fewer right ones and priors), so only nodes in [max(t_lo, T_min − b), max(t_lo, b + 1)]
    are evaluated — a single interior node when T_min ≥ 2b + 1.  A node's value is
    non-decreasing in t up to T_min − b and non-increasing from b + 1 on (docs/math.md §16), so
    with protected nodes only (``prot[t − 1]``; ``before[t − 1]`` / ``after[t − 1]`` the nearest
    protected node at or before / after t, 0 / t_max + 1 if none) the protected nodes of that
    range count, and when an end of the range is not protected, the nearest protected node
    beyond it.  Pairs that are not secrets are left out of ``valid``.

    A pair is evaluated only when an upper bound on its value beats the best value found (the pair
    with the largest bound first, then the others in order). The bounds, each valid at every node
    of the range: the balanced split; ``carried[p]``, the pair's bound from smaller b (a node's
    value is non-increasing in b, since |H| ≤ b allows every smaller H; the caller starts it at
    +inf and passes it back between calls); and, when the range holds several nodes, max over
    nodes of the smaller of the two one-sided splits (no left L node: non-decreasing in t; no
    right L node: non-increasing), found by binary search — only the nodes where both beat the
    best value are then evaluated. ``work[2]`` counts the prior-split terms and pair bounds
    evaluated.
    """
    n_pairs = valid.shape[1]
    n = T.shape[0]
    upper = np.empty(n_pairs)
    for b in range(b_from, b_to + 1):
        a = t_min - b
        c = b + 1
        if a >= c:
            lo = max(t_lo, c)
            hi = lo
        else:
            lo = max(t_lo, a)
            hi = max(t_lo, c)
        hi = min(hi, t_max)
        left_extra = 0 if prot[lo - 1] else before[lo - 1]  # the nearest protected node before the range
        if left_extra < t_lo:
            left_extra = 0
        right_extra = 0 if prot[hi - 1] else after[hi - 1]  # and after it
        if right_extra > t_max:
            right_extra = 0
        if before[hi - 1] < lo and left_extra == 0 and right_extra == 0:
            continue  # no protected node at t ≥ t_lo
        _balanced(b, left_extra if left_extra else lo, tab, stride, hpi, D, T, shift, add, valid, upper)
        work[2] += n_pairs * n
        top = 0
        for p in range(n_pairs):
            if upper[p] < carried[p]:
                carried[p] = upper[p]
            if carried[p] > carried[top]:
                top = p
        if carried[top] == -np.inf:
            continue
        bb = best[b - 1]
        # the pair with the largest bound first (it usually sets the best value), then the others
        for j in range(n_pairs + 1):
            p = top if j == 0 else j - 1
            if j > 0 and p == top:
                continue
            if carried[p] <= bb:
                continue
            first, last = lo, hi
            if hi > lo:
                cross = _crossing(lo, hi, b, p, t_max, tab, stride, hpi, D, T, valid, shift, add)
                work[2] += 4 * n * (1 + int(np.log2(hi - lo + 1)))
                if cross < carried[p]:
                    carried[p] = cross
                if cross <= bb:
                    continue
                first = max(lo, _first_left_above(lo, hi, bb, b, p, tab, stride, D, T, valid))
                last = min(hi, _last_right_above(lo, hi, bb, b, p, t_max, tab, stride, hpi, D, valid, shift, add))
            for t in range(last, first - 1, -1):
                if not prot[t - 1]:
                    continue
                v = far_node(t, b, p, bb, t_max, tab, stride, hpi, D, T, shift, add, valid, work)
                if v > bb:
                    bb = v
                if bb >= carried[p]:
                    break
            for t in (left_extra, right_extra):
                if t and bb < carried[p]:
                    v = far_node(t, b, p, bb, t_max, tab, stride, hpi, D, T, shift, add, valid, work)
                    if v > bb:
                        bb = v
            # every protected node's value is now ≤ bb: evaluated ones by far_node (exact, or some
            # split ≤ the threshold), the others by the bounds or by the node that dominates them
            if bb < carried[p]:
                carried[p] = bb
        best[b - 1] = bb


@njit(cache=True, nogil=True)
def _sorted_above(values, floor):
    """Indices p with values[p] > floor, by decreasing value."""
    keep = np.flatnonzero(values > floor)
    return keep[np.argsort(-values[keep])]


@njit(cache=True, nogil=True)
def start_zone(
    best, b_from, b_to, t_end, t_max, k, tab, stride, sid, lm, D, T,
    hpi, shift, valid, moving, dev, delta, bounded, prot, use, work,
):
    """best[b−1] = max(best[b−1], max over protected nodes t < t_end and secret pairs of the node value),
    b = b_from..b_to (``prot[t − 1]``: node t is protected; ``use[p]``: pair p is a secret, and ``valid``
    holds no other pair).

    ``work[2]`` counts the prior-split terms and pair bounds evaluated.

    Pruning (proved in :mod:`puffer_core.engine.influence`): where ``bounded[t−1]``, pair p's value at
    node t is at most max over priors i of bal_i[p] + max(0, dev[i, t−1, x'] − dev[i, t−1, x])
    (dev = log p_t − log π, zero for a stationary prior), bal_i prior i's value, with its
    stationary terms and both L nodes present, of one split chosen per pair (the balanced
    one, or the best one for the stationary priors); ``delta[i, t−1]`` bounds prior i's
    deviation over all pairs.  Pairs are visited by decreasing bound and the visit stops once
    the bound cannot beat the best value.
    """
    n_pairs = valid.shape[1]
    n = T.shape[0]
    zero_add = np.zeros(n)
    bal = np.empty((n, n_pairs))
    fixed = np.empty(n_pairs)
    stamp = np.full(n_pairs, -1, dtype=np.int64)
    cand = np.empty(n_pairs, dtype=np.int64)
    cand_bound = np.empty(n_pairs)
    # nodes before ``early`` are scanned pair by pair; later ones walk a list sorted by the
    # bound, holding the pairs within ``widest`` (their largest deviation) of the best value
    early = min(t_end, 9)
    widest = np.zeros(n)
    for i in range(n):
        for t in range(early, t_end):
            if bounded[t - 1] and delta[i, t - 1] > widest[i]:
                widest[i] = delta[i, t - 1]
    for b in range(b_from, b_to + 1):
        work[2] += n_pairs * n * (n + 1)
        for i in range(n):
            _balanced(b, 1, tab[i : i + 1], stride[i : i + 1], hpi[i : i + 1], D[i : i + 1], T[i : i + 1],
                      shift[i : i + 1], zero_add[i : i + 1], valid[i : i + 1], bal[i])
        for p in range(n_pairs):
            fixed[p] = -np.inf
        for i in range(n):
            if not moving[i]:
                for p in range(n_pairs):
                    if bal[i, p] > fixed[p]:
                        fixed[p] = bal[i, p]
        floor = best[b - 1]
        # where the balanced split is not good enough for the stationary priors, use their best
        # interior split instead (any one split bounds a node, the same split for every prior)
        for p in range(n_pairs):
            if fixed[p] <= floor:
                continue
            best_dl = (b + 1) // 2
            work[2] += b * n
            for dl in range(1, b + 1):
                m = -np.inf
                for i in range(n):
                    if not moving[i] and valid[i, p]:
                        v = 0.0
                        if D[i] > 0:
                            d = dl if dl < D[i] else D[i]
                            v = tab[i, (d - 1) * stride[i] + 1 + hpi[i], p] + shift[i, p]
                            d = b + 1 - dl if b + 1 - dl < D[i] else D[i]
                            v += tab[i, (d - 1) * stride[i], p]
                        if v > m:
                            m = v
                if m < fixed[p]:
                    fixed[p] = m
                    best_dl = dl
            for i in range(n):
                if moving[i]:
                    if not valid[i, p]:
                        bal[i, p] = -np.inf
                    elif D[i] == 0:
                        bal[i, p] = 0.0
                    else:
                        d = best_dl if best_dl < D[i] else D[i]
                        v = tab[i, (d - 1) * stride[i] + 1 + hpi[i], p] + shift[i, p]
                        d = b + 1 - best_dl if b + 1 - best_dl < D[i] else D[i]
                        bal[i, p] = v + tab[i, (d - 1) * stride[i], p]
        order_fixed = _sorted_above(fixed, floor)
        orders = []
        for i in range(n):
            orders.append(_sorted_above(bal[i], floor - widest[i]) if moving[i] else np.empty(0, dtype=np.int64))
        for t in range(1, min(t_end, t_max + 1)):
            if not prot[t - 1]:
                continue
            key = t * (b_to + 1) + b
            bb = best[b - 1]
            # 1. candidates: pairs whose bound at node t beats the best value so far
            count = 0
            if not bounded[t - 1] or t < early:
                work[2] += n_pairs * n
                for p in range(n_pairs):
                    x = p // k
                    y = p - x * k
                    if x == y or not use[p]:
                        continue
                    u = np.inf
                    if bounded[t - 1]:
                        u_nb = fixed[p]
                        for i_nb in range(n):
                            if moving[i_nb] and t <= T[i_nb] and min(lm[i_nb, t - 1, x], lm[i_nb, t - 1, y]) > -HUGE:
                                e_nb = dev[i_nb, t - 1, y] - dev[i_nb, t - 1, x]
                                w_nb = bal[i_nb, p] + (e_nb if e_nb > 0.0 else 0.0)
                                if w_nb > u_nb:
                                    u_nb = w_nb
                        u = u_nb
                        if u <= bb:
                            continue
                    cand[count] = p
                    cand_bound[count] = u
                    count += 1
            else:
                for j in range(order_fixed.shape[0]):
                    p = order_fixed[j]
                    if fixed[p] <= bb:
                        break
                    work[2] += n
                    stamp[p] = key
                    x = p // k
                    y = p - x * k
                    u_nb = fixed[p]
                    for i_nb in range(n):
                        if moving[i_nb] and t <= T[i_nb] and min(lm[i_nb, t - 1, x], lm[i_nb, t - 1, y]) > -HUGE:
                            e_nb = dev[i_nb, t - 1, y] - dev[i_nb, t - 1, x]
                            w_nb = bal[i_nb, p] + (e_nb if e_nb > 0.0 else 0.0)
                            if w_nb > u_nb:
                                u_nb = w_nb
                    cand[count] = p
                    cand_bound[count] = u_nb
                    count += 1
                for i in range(n):
                    if not moving[i] or t > T[i]:
                        continue
                    order = orders[i]
                    for j in range(order.shape[0]):
                        p = order[j]
                        u = bal[i, p]
                        work[2] += 1
                        if u + delta[i, t - 1] <= bb:
                            break
                        if stamp[p] == key:
                            continue
                        x = p // k
                        y = p - x * k
                        if lm[i, t - 1, x] < -HUGE or lm[i, t - 1, y] < -HUGE:
                            continue
                        e = dev[i, t - 1, y] - dev[i, t - 1, x]
                        if u + (e if e > 0.0 else 0.0) <= bb:
                            continue
                        stamp[p] = key
                        u_nb = fixed[p]
                        for i_nb in range(n):
                            if moving[i_nb] and t <= T[i_nb] and min(lm[i_nb, t - 1, x], lm[i_nb, t - 1, y]) > -HUGE:
                                e_nb = dev[i_nb, t - 1, y] - dev[i_nb, t - 1, x]
                                w_nb = bal[i_nb, p] + (e_nb if e_nb > 0.0 else 0.0)
                                if w_nb > u_nb:
                                    u_nb = w_nb
                        cand[count] = p
                        cand_bound[count] = u_nb
                        count += 1
            # 2. their values at node t, as far_node does, with this node's own terms (inlined: a call
            # passing the arrays costs more than the work)
            lo = max(1, b + t - t_max)
            hi = min(t, b)
            d0 = min(max((b + 1) // 2, lo), hi)
            work[2] += count * n
            for c in range(count):
                if cand_bound[c] <= bb:
                    continue
                p = cand[c]
                x = p // k
                y = p - x * k
                cur = np.inf
                present = False
                for step in range(-2, 2 * (hi - lo) + 2):
                    dl = _scan(step, d0, lo, hi)
                    if dl == 0:
                        continue
                    dr = b + 1 - dl
                    m = -np.inf
                    work[2] += n
                    for i in range(n):
                        if t <= T[i] and lm[i, t - 1, x] > -HUGE and lm[i, t - 1, y] > -HUGE:
                            present = True
                            v = 0.0
                            if dl <= t - 1:
                                d = dl if dl < D[i] else D[i]
                                v += tab[i, (d - 1) * stride[i] + 1 + sid[i, t - d - 1], p] + lm[i, t - 1, y] \
                                    - lm[i, t - 1, x]
                            if t + dr <= T[i]:
                                d = dr if dr < D[i] else D[i]
                                v += tab[i, (d - 1) * stride[i], p]
                            if v > m:
                                m = v
                    if not present:
                        break
                    if m < cur:
                        cur = m
                        if cur <= bb:
                            break
                if present and cur > bb:
                    bb = cur
            best[b - 1] = bb
