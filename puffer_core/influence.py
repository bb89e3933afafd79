"""Exact a(b)-influence curves (docs/math.md §2).

For a split of one user's entries into a high-influence set H (|H| ≤ b, containing the
secret's entry) and the rest L, the curve is

    a(b) = max over secret pairs of  min over H  of  sup_θ max_{D_L} log Pr[D_L | s_i, θ] / Pr[D_L | s_j, θ].

Markov chains (§2.1): only the nearest L node on each side of the secret's node t matters,
at distances dL (left) and dR (right); a side may have no L node (H runs to the chain's end).
For node t and pair (x, x') under prior θ:

    left(d)  = max_l log[ Pr(X_{t-d}=l | X_t=x) / Pr(X_{t-d}=l | X_t=x') ]
             = max_{l : p_{t-d}[l] > 0} log[ P^d[l,x] / P^d[l,x'] ] + log p_t[x'] − log p_t[x]
    right(d) = max_r log[ P^d[x,r] / P^d[x',r] ]

Both are non-increasing in d (the max-divergence obeys data processing along the chain),
so the best split of b nodes uses dL + dR = b + 1.  The sup over θ is inside the min over
splits, the max over pairs and nodes outside.  Terms 0/0 are skipped, positive/0 is +inf.

Gaussian processes (§2.3) are in :mod:`puffer_core.gaussian`.
"""

from __future__ import annotations

import numpy as np

from .curve import InfluenceCurve
from .priors import GaussianProcessPrior, MarkovChainPrior, check_no_underflow

_BIG = 1e300  # sentinel for log(0) in max-ratio computations; real logs are > -800


_CHUNK_CELLS = 500_000  # cells of the (D, K, K, K) difference array built at once


def _max_log_ratio(rows: np.ndarray, support: np.ndarray | None = None) -> np.ndarray:
    """out[d, x, x'] = max_r log(rows[d, x, r] / rows[d, x', r]) over r with rows[d, x, r] > 0.

    ``rows`` is a stack (D, K, K); only r in ``support`` count when it is given.  +inf where
    some such r has rows[d, x', r] = 0 (positive/0); -inf where no r qualifies; 0/0 skipped.
    """
    n, k, _ = rows.shape
    out = np.empty((n, k, k))
    step = max(1, _CHUNK_CELLS // (k**3))
    positive = rows > 0
    numerator_ok = positive if support is None else positive & support[None, None, :]
    with np.errstate(divide="ignore"):
        logs = np.log(rows)
    num = np.where(numerator_ok, logs, -np.inf)
    den = np.where(positive, logs, 0.0)  # zero denominators are handled by ``blocked``
    for start in range(0, n, step):
        stop = min(n, start + step)
        out[start:stop] = (num[start:stop, :, None, :] - den[start:stop, None, :, :]).max(axis=3)
    if not positive.all():
        blocked = np.matmul(numerator_ok.astype(float), np.swapaxes(~positive, 1, 2).astype(float)) > 0
        out[blocked] = np.inf
    return out


def _pair_log_ratio(rows: np.ndarray, xs: np.ndarray, xps: np.ndarray, support: np.ndarray | None = None) -> np.ndarray:
    """Like :func:`_max_log_ratio` for a stack of row matrices (D, K, K) and chosen pairs: (D, len(xs))."""
    num_rows = rows[:, xs, :]
    den_rows = rows[:, xps, :]
    positive = num_rows > 0
    if support is not None:
        positive = positive & support[None, None, :]
    with np.errstate(divide="ignore"):
        num = np.where(positive, np.log(num_rows), -4 * _BIG)
        den = np.where(den_rows > 0, np.log(den_rows), -_BIG)
    out = (num - den).max(axis=2)
    out = np.where(out > _BIG / 2, np.inf, out)
    return np.where(out < -_BIG / 2, -np.inf, out)


class _ChainTerms:
    """Per-prior left/right terms of §2.1, computed lazily and cached."""

    def __init__(self, prior: MarkovChainPrior, max_d: int) -> None:
        self.prior = prior
        self.T = prior.length
        self.K = prior.n_states
        self.max_d = max(0, min(max_d, self.T - 1))
        p = prior.transition
        structure = (p > 0).astype(float)
        support = np.eye(self.K, dtype=bool)
        self.powers = np.empty((self.max_d + 1, self.K, self.K))
        self.powers[0] = np.eye(self.K)
        for d in range(1, self.max_d + 1):
            self.powers[d] = self.powers[d - 1] @ p
            support = (support.astype(float) @ structure) > 0
            check_no_underflow(self.powers[d], support, f"the {d}-step transition matrix")
        self.stationary = prior.stationary_initial
        if self.stationary:
            pi = np.asarray(prior.initial)
            self.marg = None
            self._pi = pi
        else:
            self.marg = prior.marginals(self.T)
            self._pi = None
        self._right: np.ndarray | None = None
        self._h: dict[tuple[int, bytes], np.ndarray] = {}

    def p(self, t: int) -> np.ndarray:
        """Marginal of X_t, t = 1..T."""
        return self._pi if self.marg is None else self.marg[t - 1]

    def right(self, upto: int | None = None) -> np.ndarray:
        """right[d-1, x, x'] for d = 1..min(upto, max_d) (all distances by default), cached."""
        n = self.max_d if upto is None else min(upto, self.max_d)
        have = 0 if self._right is None else self._right.shape[0]
        if n > have:
            more = _max_log_ratio(self.powers[have + 1 : n + 1])
            self._right = more if self._right is None else np.concatenate([self._right, more])
        return self._right[:n] if self._right is not None else np.zeros((0, self.K, self.K))

    def h(self, d: int, support: np.ndarray) -> np.ndarray:
        """max over l in support with P^d[l,x] > 0 of log P^d[l,x] / P^d[l,x']."""
        key = (d, support.tobytes())
        if key not in self._h:
            self._h[key] = _max_log_ratio(self.powers[d].T[None], support)[0]
        return self._h[key]

    def shift(self, t: int) -> np.ndarray:
        """log p_t[x'] − log p_t[x] (NaN-free: -inf/+inf where a state has no mass)."""
        p = self.p(t)
        with np.errstate(divide="ignore"):
            lp = np.log(p)
        valid = (p[:, None] > 0) & (p[None, :] > 0)
        return np.where(valid, lp[None, :] - np.where(np.isfinite(lp), lp, 0)[:, None], 0.0)

    def valid(self, t: int) -> np.ndarray:
        """Pairs (x, x') with positive prior probability at node t."""
        if t > self.T:
            return np.zeros((self.K, self.K), dtype=bool)
        p = self.p(t)
        return (p[:, None] > 0) & (p[None, :] > 0)

    def left_stationary(self, upto: int | None = None) -> np.ndarray:
        """left[d-1, x, x'] for a stationary prior (independent of t when the node exists), d ≤ upto."""
        n = self.max_d if upto is None else min(upto, self.max_d)
        columns = np.swapaxes(self.powers[1 : n + 1], 1, 2)
        return _max_log_ratio(columns, self._pi > 0) + self.shift(1)[None]

    def stationary_tails(self, start: int, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(left, right) for d = start..max_d and the given flat pair indices: (D, len(pairs)) each."""
        if start > self.max_d:
            return np.zeros((0, pairs.size)), np.zeros((0, pairs.size))
        xs, xps = np.divmod(pairs, self.K)
        stack = self.powers[start : self.max_d + 1]
        right = _pair_log_ratio(stack, xs, xps)
        left = _pair_log_ratio(stack.transpose(0, 2, 1), xs, xps, self._pi > 0) + self.shift(1)[xs, xps][None, :]
        return left, right

    def left_at(self, t: int, n_d: int) -> np.ndarray:
        """left[d-1, x, x'] at node t for d = 1..min(n_d, t-1) (non-stationary priors)."""
        shift = self.shift(t)
        n = min(n_d, t - 1, self.max_d)
        out = np.empty((n, self.K, self.K))
        for d in range(1, n + 1):
            out[d - 1] = self.h(d, self.p(t - d) > 0) + shift
        return out


class _StationaryTable:
    """left/right of every stationary prior as (Θ, n_b, P) arrays, filled lazily beyond the head.

    The balanced split of any b ≤ n_b only uses distances ≤ ⌈(n_b+1)/2⌉, computed for every
    pair up front; longer distances are computed per pair, only for pairs that can still
    reach the maximum.
    """

    def __init__(self, terms: list[_ChainTerms], n_b: int) -> None:
        self.terms = terms
        self.n_b = n_b
        k = terms[0].K
        self.head = min(n_b, (n_b + 2) // 2)
        shape = (len(terms), n_b, k * k)
        self.left = np.zeros(shape)
        self.right = np.zeros(shape)
        self.invalid = []
        for i, term in enumerate(terms):
            lh = term.left_stationary(self.head)
            rh = term.right(self.head)
            self.left[i, : lh.shape[0]] = lh.reshape(lh.shape[0], k * k)
            self.right[i, : rh.shape[0]] = rh.reshape(rh.shape[0], k * k)
            invalid = ~term.valid(1).reshape(-1)
            self.invalid.append(invalid)
            self.left[i, :, invalid] = -np.inf
            self.right[i, :, invalid] = -np.inf
        self.filled = np.zeros(k * k, dtype=bool)
        if all(t.max_d <= self.head for t in terms):
            self.filled[:] = True

    def ensure(self, pairs: np.ndarray) -> None:
        todo = pairs[~self.filled[pairs]]
        if todo.size == 0:
            return
        start = self.head + 1
        for i, term in enumerate(self.terms):
            left, right = term.stationary_tails(start, todo)
            n = left.shape[0]
            self.left[i, start - 1 : start - 1 + n][:, todo] = left
            self.right[i, start - 1 : start - 1 + n][:, todo] = right
            bad = todo[self.invalid[i][todo]]
            self.left[i, :, bad] = -np.inf
            self.right[i, :, bad] = -np.inf
        self.filled[todo] = True


def _min_plus(
    left: np.ndarray, right: np.ndarray, n_b: int, floor: np.ndarray, ensure=None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-pair values F[b-1, p] = min_{dL=1..b} max_θ (left[θ, dL-1, p] + right[θ, b-dL, p]).

    left, right: (Θ, n_b, P); -inf marks priors under which the pair has no mass.
    Returns (max(floor[b-1], max_p F[b-1, p]), upper) where ``upper[b-1, p] ≥ F[b-1, p]``:
    exact for pairs that could reach the max, the balanced split's value (an upper bound)
    for pairs pruned because that bound is already below an exact value.
    """
    best = floor.astype(float).copy()
    upper = np.empty((n_b, left.shape[2]))
    for b in range(1, n_b + 1):
        d = (b + 1) // 2
        u = (left[:, d - 1] + right[:, b - d]).max(axis=0)
        top = int(np.argmax(u))
        for cand in (np.array([top]), None):
            if cand is None:
                cand = np.flatnonzero(u > best[b - 1])
                if cand.size == 0:
                    break
            if ensure is not None:
                ensure(cand)
            s = left[:, :b, cand] + right[:, b - 1 :: -1, cand][:, :b]
            exact = (s[0] if s.shape[0] == 1 else s.max(axis=0)).min(axis=0)
            u[cand] = exact
            best[b - 1] = max(best[b - 1], float(exact.max()))
        upper[b - 1] = u
    return best, upper


def _as_priors(prior_or_priors: object) -> list:
    if isinstance(prior_or_priors, (MarkovChainPrior, GaussianProcessPrior)):
        return [prior_or_priors]
    if isinstance(prior_or_priors, (list, tuple)):
        priors = list(prior_or_priors)
        if not priors:
            raise ValueError("the set of priors Θ is empty; give at least one prior")
        return priors
    raise ValueError(
        f"expected a MarkovChainPrior, a GaussianProcessPrior or a list of them; got {type(prior_or_priors).__name__}"
    )


def influence_curve(prior_or_priors: object, max_b: int | None = None) -> InfluenceCurve:
    """The exact a(b)-influence curve of a prior or a set Θ of priors (docs/math.md §2).

    A list of :class:`MarkovChainPrior` (same number of states, lengths may differ) is Θ;
    node indices are shared, so one split H serves every prior.  ``max_b`` defaults to the
    longest sequence (where a = 0).
    """
    priors = _as_priors(prior_or_priors)
    if max_b is not None and (isinstance(max_b, bool) or not isinstance(max_b, (int, np.integer)) or max_b < 1):
        raise ValueError(f"max_b must be a whole number ≥ 1; got {max_b!r}")
    if all(isinstance(p, GaussianProcessPrior) for p in priors):
        from .gaussian import gaussian_influence_curve

        if len(priors) != 1:
            raise ValueError("a set of Gaussian-process priors is not supported; give one at a time")
        return gaussian_influence_curve(priors[0], max_b=max_b)
    if not all(isinstance(p, MarkovChainPrior) for p in priors):
        raise ValueError("a set Θ must contain Markov-chain priors only (no mixing with Gaussian priors)")
    ks = {p.n_states for p in priors}
    if len(ks) != 1:
        raise ValueError(f"all priors in Θ must have the same number of states; got {sorted(ks)}")
    return _markov_curve(priors, max_b)


def _markov_curve(priors: list[MarkovChainPrior], max_b: int | None) -> InfluenceCurve:
    t_max = max(p.length for p in priors)
    n_b = t_max if max_b is None else int(max_b)
    n_eff = min(n_b, t_max - 1)  # a(b) = 0 for b ≥ t_max
    a = np.zeros(n_b)
    if n_eff >= 1:
        terms = [_ChainTerms(p, n_eff) for p in priors]
        if all(t.stationary for t in terms):
            a[:n_eff] = _stationary_values(terms, n_eff, t_max)
        else:
            a[:n_eff] = _general_values(terms, n_eff, t_max)
    a = np.minimum.accumulate(a)  # |H| ≤ b allows every smaller H
    label = f"Θ of {len(priors)} priors" if len(priors) > 1 else "Markov chain"
    return InfluenceCurve(np.arange(1, n_b + 1), a, t_max, label)


def _stack(terms: list[_ChainTerms], arrays: list[np.ndarray], n: int, valid: list[np.ndarray]) -> np.ndarray:
    """(Θ, n, K*K): values for d = 1..n (0 where no L node exists), -inf where the pair has no mass."""
    k = terms[0].K
    out = np.zeros((len(terms), n, k * k))
    for i, (arr, ok) in enumerate(zip(arrays, valid)):
        m = min(n, arr.shape[0])
        out[i, :m] = arr[:m].reshape(m, k * k)
        out[i, :, ~ok.reshape(-1)] = -np.inf
    return out


def _stationary_values(terms: list[_ChainTerms], n_b: int, t_max: int) -> np.ndarray:
    """a(b) for b = 1..n_b when every prior starts in its stationary distribution."""
    table = _StationaryTable(terms, n_b)
    left, right = table.left, table.right
    # the interior node (an L node at every distance ≤ b on both sides) bounds every node
    values, interior = _min_plus(left, right, n_b, np.zeros(n_b), table.ensure)
    t_min = min(t.T for t in terms)
    lengths = np.array([t.T for t in terms])
    for b in range(1, n_b + 1):
        if t_min >= 2 * b + 1:
            continue  # node b+1 is interior for every prior: the bound is attained
        # every node is truncated somewhere: refine pairs by their interior upper bound
        upper = interior[b - 1]
        order = np.argsort(-upper)
        best = 0.0
        same_length = bool(np.all(lengths == t_max))
        for start in range(0, order.size, 16):
            chunk = order[start : start + 16]
            chunk = chunk[upper[chunk] > best]
            if chunk.size == 0:
                break
            table.ensure(chunk)
            if same_length:
                value = _truncated_windows(left[:, :, chunk], right[:, :, chunk], b, t_max)
            else:
                value = _truncated_nodes(left[:, :, chunk], right[:, :, chunk], lengths, b, t_max)
            best = max(best, value)
        values[b - 1] = best
    return values


def _window_min(g: np.ndarray, width: int) -> np.ndarray:
    """min of g[..., s : s + width] for every start s (doubling: O(n log width))."""
    step = 1
    m = g
    while 2 * step <= width:
        m = np.minimum(m[..., :-step], m[..., step:])  # windows of size 2·step
        step *= 2
    n_windows = g.shape[-1] - width + 1
    return np.minimum(m[..., :n_windows], m[..., width - step : width - step + n_windows])


def _truncated_windows(left: np.ndarray, right: np.ndarray, b: int, length: int) -> float:
    """max over nodes of min over splits of b when every prior has the same length T < 2b+1.

    For the nodes that can be worst (T−b ≤ t ≤ b+1, see :func:`_truncated_nodes`), node t may
    (i) keep L nodes on both sides: dL in the window [b+1−T+t, t−1] of fixed width T−b−1 over
    g(dL) = max_θ (left_θ(dL) + right_θ(b+1−dL)); (ii) drop the left side: right(b+1−t) when
    t ≤ b; (iii) drop the right side: left(b−T+t) when b−T+t ≥ 1.  Exact, O(b log b) per pair.
    """
    nodes = np.arange(max(1, length - b), min(length, b + 1) + 1)
    g = left[:, :b] + right[:, b - 1 :: -1][:, :b]  # (Θ, b, P), index dL − 1
    g = g[0] if g.shape[0] == 1 else g.max(axis=0)
    options = np.full((nodes.size, g.shape[1]), np.inf)
    width = length - b - 1
    if width >= 1:
        starts = b + 1 - length + nodes  # window [start, t−1], 1-based
        mins = _window_min(g.T, width).T  # (b − width + 1, P), index start − 1
        options = np.minimum(options, mins[starts - 1])
    drop_left = nodes <= b
    if np.any(drop_left):
        d = b + 1 - nodes[drop_left]
        r = right[:, d - 1]
        options[drop_left] = np.minimum(options[drop_left], r[0] if r.shape[0] == 1 else r.max(axis=0))
    drop_right = b - length + nodes >= 1
    if np.any(drop_right):
        d = b - length + nodes[drop_right]
        lv = left[:, d - 1]
        options[drop_right] = np.minimum(options[drop_right], lv[0] if lv.shape[0] == 1 else lv.max(axis=0))
    return float(max(options.max(), 0.0))


def _truncated_nodes(left: np.ndarray, right: np.ndarray, lengths: np.ndarray, b: int, t_max: int) -> float:
    """max over nodes t of min over splits of b, for a few pairs (stationary priors)."""
    d_left = np.arange(1, b + 1)
    d_right = b + 1 - d_left
    # Node b+1 has every left term and the most right terms of all nodes after it; node
    # T_min − b has every right term and the most left terms of all nodes before it: only
    # the nodes in between can be the worst.
    first = max(1, int(lengths.min()) - b)
    last = min(t_max, b + 1)
    nodes = np.arange(first, last + 1)
    # left term exists when dL < t; right term when t + dR ≤ T_θ; node exists when t ≤ T_θ
    has_left = d_left[None, :] < nodes[:, None]  # (T, b)
    lval = np.where(has_left[None, :, :, None], left[:, None, :b, :], 0.0)  # (Θ, T, b, P)
    has_right = nodes[None, :, None] + d_right[None, None, :] <= lengths[:, None, None]  # (Θ, T, b)
    rval = np.where(has_right[..., None], right[:, None, d_right - 1, :], 0.0)
    exists = nodes[None, :] <= lengths[:, None]  # (Θ, T)
    # pairs invalid under θ are -inf in left/right; keep them -inf even where the term is absent
    invalid = np.isneginf(left[:, :1, :])  # (Θ, 1, P)
    total = np.where(invalid[:, None, :, :], -np.inf, lval + rval)
    total = np.where(exists[:, :, None, None], total, -np.inf)
    per_node = total.max(axis=0).min(axis=1)  # (T, P)
    return float(max(per_node.max(), 0.0))


def _general_values(terms: list[_ChainTerms], n_b: int, t_max: int) -> np.ndarray:
    """a(b) by evaluating every node (non-stationary initial distributions)."""
    k = terms[0].K
    best = np.zeros(n_b)
    rights = [t.right() for t in terms]
    stationary_lefts = {i: t.left_stationary() for i, t in enumerate(terms) if t.stationary}
    for node in range(1, t_max + 1):
        valid = [t.valid(node) for t in terms]
        if not any(v.any() for v in valid):
            continue
        lefts = []
        rs = []
        for i, (term, r) in enumerate(zip(terms, rights)):
            if node > term.T:
                lefts.append(np.zeros((0, k, k)))
                rs.append(np.zeros((0, k, k)))
                continue
            lefts.append(stationary_lefts[i][: node - 1] if term.stationary else term.left_at(node, n_b))
            rs.append(r[: max(0, term.T - node)])
        left = _stack(terms, lefts, n_b, valid)
        right = _stack(terms, rs, n_b, valid)
        best, _ = _min_plus(left, right, n_b, best)
    return best
