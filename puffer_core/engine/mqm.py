"""The exact Markov Quilt Mechanism's noise scale σ_max (docs/math.md §5, [S] Algorithm 1).

MQM answers a query F that is L-Lipschitz in the entries of one user's chain by adding
Lap(L·σ_max) noise, with

    σ_max = max_θ max_t min over Markov quilts X_Q of X_t  card(X_N) / (ε − e_θ(X_Q | X_t))

over the minimal quilts of [S] Lemma II.5, for a chain X_1..X_T (1-based):

    two-sided  {X_{t−a}, X_{t+b}}   1 ≤ a ≤ t−1, 1 ≤ b ≤ T−t   X_N = X_{t−a+1..t+b−1}   card a+b−1
    left-only  {X_{t−a}}            1 ≤ a ≤ t−1                 X_N = X_{t−a+1..T}       card T−t+a
    right-only {X_{t+b}}            1 ≤ b ≤ T−t                 X_N = X_{1..t+b−1}       card t+b−1
    empty      {}                                               X_N = X_{1..T}           card T, e = 0

A quilt is usable only if e < ε (strictly).  The max over θ is outside the min (each prior
picks its own quilts, as in [S] Algorithm 1).  The max-influence e_θ(X_Q | X_t) takes the
max over value pairs (x, x') *inside*, one quilt for all pairs:

    e_θ(X_Q | X_t) = max_{x, x'} max_{x_Q} log Pr(X_Q = x_Q | X_t = x) / Pr(X_Q = x_Q | X_t = x')

over pairs with positive prior probability at node t (a node where only one state has
mass holds no secret).  Given X_t the past and the future are independent, so for the
two-sided quilt the log ratio is a sum of a left and a right term, each maximised over its
own node's value; the terms are those of docs/math.md §2.1:

    left_t(a, x, x') = max_{l: p_{t−a}[l] > 0} log P^a[l,x] / P^a[l,x'] + log p_t[x'] − log p_t[x]
    right(b, x, x')  = max_r log P^b[x,r] / P^b[x',r]

with 0/0 skipped and positive/0 = +inf.  All max-influences are ≥ 0 (two conditional
distributions) and shrink with distance.

Speed, exactly (no approximation is made; every shortcut is a proven bound):

- A quilt's score is at least card/ε, so once every node has a quilt scoring at most
  (n+1)/ε no quilt with more than n nearby nodes can matter.  The search looks at quilts
  with card ≤ n for n = 16, 32, … (or the card the best score so far needs) and stops as
  soon as that certificate holds (or n = T, when every quilt has been seen).
- Every per-pair term is ≥ 0, so max(Lmax[a], Rmax[b]) ≤ E[a, b] ≤ Lmax[a] + Rmax[b]
  (Lmax, Rmax: the largest left/right term over pairs).  Cells of the two-sided table are
  evaluated exactly (max over all pairs) only when their lower-bound score could beat an
  upper bound on the answer.
- Stationary prior: the terms do not depend on t, so one table E[a, b] serves every node,
  and node t reads its best score among a ≤ t−1, b ≤ T−t from a two-dimensional running
  minimum ("nodes far from the ends are equivalent").
- Non-stationary prior: nodes are visited in order; E_t and E_{t−1} differ only through
  log p_t (and the supports of the left nodes), so E_t ∈ [lo_{t−1} − η, hi_{t−1} + η]
  with η = max_p |shift_t − shift_{t−1}|, and a node whose upper bound cannot raise the
  maximum found so far is skipped.
- Θ: a prior whose upper bound cannot exceed the σ already found is not refined.
- Tables: the left/right terms are the shared :class:`puffer_core.engine.chain_terms.ChainTerms`
  (one compiled kernel with the a(b) curves).  Past a prior's cutoff D (P^D with nearly equal
  rows, see that module) a term is replaced by its value at D, an upper bound within
  TAIL_TOL; an upper bound on an influence only raises σ (card / (ε − e) grows with e).
- Far nodes of a non-stationary prior (see :class:`_Quilts`) are bounded together like a
  stationary prior with every left term raised by 2·max η; only the nodes before them are
  visited one by one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..priors.models import MarkovChainPrior, as_theta
from ..secrets.values import ALL_SECRETS, Secrets, as_secrets
from ..validation import check_eps
from ..work import MARGINAL, Progress, ProgressCallback, WorkCounter, WorkEstimate, combine, one_blas_thread
from .chain_terms import ChainProfile

_FIRST_LIMIT = 16
_CHUNK_CELLS = 4_000_000  # elements per temporary array in the batched computations
# Cells of the far nodes' quilt table evaluated per pair and table distance, with margin (measured at most ~3
# on every family, benchmarks/bench_estimates.py).
CELL_UNITS = 4.0


@dataclass(frozen=True)
class MQMScale:
    """σ_max of MQM for ε_puffer and where it is attained (docs/math.md §5).

    ``node`` is 1-based; ``quilt`` is ``("two-sided", a, b)``, ``("left-only", a, 0)``,
    ``("right-only", 0, b)`` or ``("empty", 0, 0)``; ``card`` is card(X_N) and ``influence``
    is e_θ(X_Q | X_t) of that quilt; ``prior_index`` says which θ of Θ is the worst.
    ``sigma_max`` is 0 only when no prior has a secret (a single state with mass).
    """

    sigma_max: float
    eps_puffer: float
    node: int
    quilt: tuple[str, int, int]
    card: int
    influence: float
    prior_index: int

    def describe(self) -> str:
        kind, a, b = self.quilt
        where = {
            "two-sided": f"quilt {{X_{self.node - a}, X_{self.node + b}}}",
            "left-only": f"quilt {{X_{self.node - a}}}",
            "right-only": f"quilt {{X_{self.node + b}}}",
            "empty": "the empty quilt",
        }[kind]
        return (
            f"σ_max = {self.sigma_max:.4g} at node {self.node} of prior {self.prior_index + 1}: {where},"
            f" card(X_N) = {self.card}, max-influence = {self.influence:.4g} < ε = {self.eps_puffer:.4g}"
        )


class _Rows:
    """Rows 1..n of a table computed on demand, kept in a buffer that doubles when full.

    ``compute(start, stop)`` returns the rows for distances start+1..stop.
    """

    def __init__(self, compute: Callable[[int, int], np.ndarray]) -> None:
        self._compute = compute
        self._buffer: np.ndarray | None = None
        self._filled = 0

    def get(self, n: int) -> np.ndarray:
        if n > self._filled:
            new = self._compute(self._filled, n)
            if self._buffer is None or n > self._buffer.shape[0]:
                capacity = max(n, 2 * (0 if self._buffer is None else self._buffer.shape[0]))
                buffer = np.empty((capacity,) + new.shape[1:])
                if self._buffer is not None:
                    buffer[: self._filled] = self._buffer[: self._filled]
                self._buffer = buffer
            self._buffer[self._filled : n] = new
            self._filled = n
        return self._buffer[:n] if self._buffer is not None else np.empty(0)


class _Quilts:
    """One prior's left and right terms (the shared :class:`ChainProfile`) restricted to value pairs, cached.

    Non-stationary prior: nodes t ≥ ``t_c`` are *far* (see :class:`ChainProfile`): every such
    node reads left terms at supports equal to supp π, so left_t(a) ≤ h_π(a) + log π[x'] −
    log π[x] + ``extra`` with extra = 2η_{t_c}.  Those nodes are bounded together like a
    stationary prior (each influence raised by at most 2η, so σ by a relative ≈ 2η/ε); the nodes
    before t_c are visited one by one.  ``marg`` holds p_t for t < t_c (π alone for a stationary
    prior).  The tables grow on demand, never past the proven cutoff.
    """

    def __init__(self, profile: ChainProfile, report: Progress, work: WorkCounter,
                 secrets: Secrets = ALL_SECRETS) -> None:
        self.profile = profile
        self.prior = profile.prior
        self.T = profile.T
        self.K = profile.K
        self.pi = profile.pi
        self.terms = profile.terms
        self.report = report
        self.work = work
        profile.build(report, work, tables=False)
        self.t_c = profile.t_c
        self.extra = profile.far_addition if self.t_c <= self.T else 0.0
        self.marg = profile.marg if not profile.stationary else self.pi[None, :]
        self._pairs: dict[tuple[bytes, bytes], _Rows] = {}
        self.use = secrets.pair_matrix(self.K)  # the secret pairs (docs/math.md §16)
        self.every_pair = bool(self.use[~np.eye(self.K, dtype=bool)].all())
        self.protected = secrets.position_mask(self.T)  # the protected nodes

    def count(self, units: float, stage: str) -> None:
        """``units`` of array work done (elements of the quilt arrays touched): counted and reported."""
        self.work.add(MARGINAL, units)
        self.report.advance(stage, units)

    def depth(self, a: np.ndarray) -> np.ndarray:
        """The distance whose table row serves distance a: a itself, or the cutoff beyond it."""
        return a if self.terms.cutoff is None else np.minimum(a, self.terms.cutoff)

    def right(self, n: int) -> np.ndarray:
        """right[b-1, x·K + x'] for b = 1..n (past the cutoff: the cutoff row)."""
        self.terms.ensure(n, None, self.report, self.work)
        return self.terms.right_table(n)

    def h(self, n: int, support: np.ndarray) -> np.ndarray:
        """h[a-1, x·K + x'] = max_{l in support, P^a[l,x] > 0} log P^a[l,x] / P^a[l,x'], a = 1..n."""
        self.terms.ensure(n, None, self.report, self.work)
        return self.terms.h_table(n, support)

    def _every(self, pairs: np.ndarray) -> bool:
        return pairs.size == self.K * self.K

    def right_pairs(self, n: int, pairs: np.ndarray) -> np.ndarray:
        """right[b-1, p] for b = 1..n restricted to ``pairs``."""
        if self._every(pairs):
            return self.right(n)
        key = (b"right", pairs.tobytes())
        if key not in self._pairs:
            self._pairs[key] = _Rows(lambda s, e: self.right(e)[s:e][:, pairs])
        return self._pairs[key].get(n)

    def h_pairs(self, n: int, support: np.ndarray, pairs: np.ndarray) -> np.ndarray:
        """h[a-1, p] for a = 1..n restricted to ``pairs``."""
        if self._every(pairs):
            return self.h(n, support)
        key = (support.tobytes(), pairs.tobytes())
        if key not in self._pairs:
            self._pairs[key] = _Rows(lambda s, e: self.h(e, support)[s:e][:, pairs])
        return self._pairs[key].get(n)

    def right_max(self, n: int, pairs: np.ndarray) -> np.ndarray:
        """max_p right[b-1, p] for b = 1..n over ``pairs``."""
        key = (b"right-max", pairs.tobytes())
        if key not in self._pairs:
            self._pairs[key] = _Rows(lambda s, e: self.right_pairs(e, pairs)[s:e].max(axis=1))
        return self._pairs[key].get(n)

    def pairs_of(self, p: np.ndarray) -> np.ndarray:
        """Flat indices x·K + x' of the pairs x ≠ x' with positive mass under the marginal p.

        When every state has mass, all K² indices: the terms of x = x' are 0 and never raise a
        max of influences, which are ≥ 0; whole tables are then used without copies.
        """
        if np.all(p > 0) and self.every_pair:
            return np.arange(self.K * self.K)
        ok = (p[:, None] > 0) & (p[None, :] > 0) & self.use
        np.fill_diagonal(ok, False)
        return np.flatnonzero(ok.reshape(-1))

    def shift_of(self, p: np.ndarray, pairs: np.ndarray) -> np.ndarray:
        """log p[x'] − log p[x] for the given valid pairs."""
        with np.errstate(divide="ignore"):
            lp = np.log(p)
        return lp[pairs % self.K] - lp[pairs // self.K]

    def pairs(self, t: int) -> np.ndarray:
        """Valid pairs at node t (1-based, t < t_c)."""
        return self.pairs_of(self.marg[t - 1])

    def shift(self, t: int, pairs: np.ndarray) -> np.ndarray:
        return self.shift_of(self.marg[t - 1], pairs)


def _scores(card: np.ndarray, influence: np.ndarray, eps: float) -> np.ndarray:
    """card / (ε − e) where e < ε, else +inf; e is clamped at 0 (it is ≥ 0 exactly)."""
    e = np.maximum(influence, 0.0)
    usable = e < eps
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(usable, card / np.where(usable, eps - e, 1.0), np.inf)


def _cells_max_plus(left: np.ndarray, right: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """E[i] = max_p (left[rows[i], p] + right[cols[i], p]) for a list of cells (0-based indices)."""
    out = np.empty(rows.size)
    step = max(1, _CHUNK_CELLS // max(1, left.shape[1]))
    order = np.argsort(rows, kind="stable")
    for start in range(0, order.size, step):
        chunk = order[start : start + step]
        out[chunk] = (left[rows[chunk]] + right[cols[chunk]]).max(axis=1)
    return out


@dataclass(frozen=True)
class _NodeBest:
    sigma: float
    quilt: tuple[str, int, int]
    card: int
    influence: float


def _best_at_node(
    t: int, T: int, eps: float, limit: int, left: np.ndarray, right: np.ndarray, two: np.ndarray
) -> _NodeBest:
    """The best quilt of card ≤ limit at node t (the empty quilt always counts).

    left (A, P), right (B, P) hold the terms for distances available at t; two (A, B) holds
    the two-sided influences (restricted to card ≤ limit).
    """
    best = _NodeBest(T / eps, ("empty", 0, 0), T, 0.0)
    n_a, n_b = two.shape
    if n_a and n_b:
        a = np.arange(1, n_a + 1)[:, None]
        b = np.arange(1, n_b + 1)[None, :]
        s = _scores((a + b - 1).astype(float), two, eps)
        i = int(np.argmin(s))
        if s.flat[i] < best.sigma:
            ia, ib = divmod(i, n_b)
            best = _NodeBest(float(s.flat[i]), ("two-sided", ia + 1, ib + 1), ia + ib + 1, float(two[ia, ib]))
    if left.shape[0]:
        a = np.arange(1, left.shape[0] + 1)
        card = T - t + a
        e = left.max(axis=1) if left.shape[1] else np.zeros(a.size)
        s = np.where(card <= limit, _scores(card.astype(float), e, eps), np.inf)
        i = int(np.argmin(s))
        if s[i] < best.sigma:
            best = _NodeBest(float(s[i]), ("left-only", i + 1, 0), int(card[i]), float(e[i]))
    if right.shape[0]:
        b = np.arange(1, right.shape[0] + 1)
        card = t + b - 1
        e = right.max(axis=1) if right.shape[1] else np.zeros(b.size)
        s = np.where(card <= limit, _scores(card.astype(float), e, eps), np.inf)
        i = int(np.argmin(s))
        if s[i] < best.sigma:
            best = _NodeBest(float(s[i]), ("right-only", 0, i + 1), int(card[i]), float(e[i]))
    return best


def _next_limit(limit: int, sigma: float, eps: float, T: int) -> int:
    """The next card limit: quilts with card > ε·σ cannot beat σ; never more than doubling."""
    needed = math.ceil(eps * sigma) if math.isfinite(sigma) else T
    return min(T, 2 * limit, max(limit + 1, needed))


def _node_sigmas(
    table: np.ndarray, lmax: np.ndarray, rmax: np.ndarray, T: int, limit: int, eps: float
) -> np.ndarray:
    """Best score of every node t = 1..T from a two-sided table E[a, b] (a, b ≤ d) and one-sided maxima."""
    d = table.shape[0]
    nodes = np.arange(1, T + 1)
    sigma = np.full(T, T / eps)
    if d == 0:
        return sigma
    card = (np.arange(1, d + 1)[:, None] + np.arange(1, d + 1)[None, :] - 1).astype(float)
    s2 = _scores(card, table, eps)
    running = np.minimum.accumulate(np.minimum.accumulate(s2, axis=0), axis=1)
    n_left = np.minimum(nodes - 1, d)
    n_right = np.minimum(T - nodes, d)
    both = (n_left >= 1) & (n_right >= 1)
    sigma[both] = np.minimum(sigma[both], running[n_left[both] - 1, n_right[both] - 1])
    dist = np.arange(1, d + 1)[None, :]
    card_l = T - nodes[:, None] + dist
    ok_l = (dist <= nodes[:, None] - 1) & (card_l <= limit)
    s_l = np.where(ok_l, _scores(card_l.astype(float), lmax[None, :], eps), np.inf).min(axis=1)
    card_r = nodes[:, None] + dist - 1
    ok_r = (dist <= T - nodes[:, None]) & (card_r <= limit)
    s_r = np.where(ok_r, _scores(card_r.astype(float), rmax[None, :], eps), np.inf).min(axis=1)
    return np.minimum(sigma, np.minimum(s_l, s_r))


def _stationary_sigma(
    terms: _Quilts, eps: float, floor: float, t_from: int = 1
) -> tuple[float, int, _NodeBest] | None:
    """max over nodes t ≥ t_from of min_Q score with the stationary terms, or None when ≤ ``floor``.

    For a stationary prior (t_from = 1) this is exact.  For the far nodes of a non-stationary
    prior the left terms are raised by ``terms.extra`` (see :class:`_Quilts`): an upper bound.
    Every per-pair term is ≥ 0, so max(Lmax[a], Rmax[b]) ≤ E[a, b] ≤ Lmax[a] + Rmax[b].  The
    upper bounds give an upper bound M on max_t σ_t; only cells whose lower-bound score is
    below M are evaluated exactly (a cell scoring ≥ M cannot lower the worst node's σ).
    """
    T = terms.T
    pairs = terms.pairs_of(terms.pi)
    if pairs.size == 0:
        return None
    shift = terms.shift_of(terms.pi, pairs) + terms.extra
    support = terms.pi > 0
    limit = min(T, _FIRST_LIMIT)
    while True:
        d = min(limit, T - 1)
        left = terms.h_pairs(d, support, pairs) + shift[None, :] if d else np.empty((0, pairs.size))
        right = terms.right_pairs(d, pairs) if d else np.empty((0, pairs.size))
        lmax, rmax = left.max(axis=1), right.max(axis=1)
        card = (np.arange(1, d + 1)[:, None] + np.arange(1, d + 1)[None, :] - 1).astype(float)
        inside = card <= limit
        table = np.where(inside, np.maximum(lmax[:, None] + rmax[None, :], 0.0), np.inf)
        protected = terms.protected[t_from - 1 :]
        if not protected.any():
            return None
        bound = float(_node_sigmas(table, lmax, rmax, T, limit, eps)[t_from - 1 :][protected].max())
        lower = np.maximum(lmax[:, None], rmax[None, :])
        rows, cols = np.nonzero(inside & (_scores(card, lower, eps) <= bound))
        table[rows, cols] = _cells_max_plus(left, right, rows, cols)
        # the tables' rows, the cells evaluated, the (d, d) score arrays and twice the (T, d) node arrays
        terms.count((2.0 * d + rows.size) * pairs.size + 12.0 * d * d + 24.0 * T * d, "quilts of the far nodes")
        sigma = np.where(protected, _node_sigmas(table, lmax, rmax, T, limit, eps)[t_from - 1 :], -np.inf)
        worst = float(sigma.max())
        if worst <= floor:
            return None
        if limit >= T or worst <= (limit + 1) / eps:
            t = int(np.argmax(sigma)) + t_from
            a_avail, b_avail = min(t - 1, d), min(T - t, d)
            node = _best_at_node(t, T, eps, limit, left[:a_avail], right[:b_avail], table[:a_avail, :b_avail])
            return worst, t, node
        limit = _next_limit(limit, worst, eps, T)


@dataclass
class _Bounds:
    """Interval bounds lo ≤ E[a, b] ≤ hi on the two-sided influences of one node (equal = exact)."""

    pairs: np.ndarray
    shift: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def _left_rows(terms: _Quilts, t: int, dist: np.ndarray, pairs: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """left_t[a, p] for the distances ``dist`` (1-based, increasing) at node t (past the cutoff: its bound)."""
    out = np.empty((dist.size, pairs.size))
    terms.count(float(dist.size) * pairs.size, f"quilts of node {t}")
    supports = terms.marg[t - 1 - terms.depth(dist)] > 0  # support of p_{t−a} (a capped at the cutoff)
    done = np.zeros(dist.size, dtype=bool)
    while not done.all():
        first = int(np.flatnonzero(~done)[0])
        same = ~done & np.all(supports == supports[first], axis=1)
        rows = dist[same]
        out[same] = terms.h_pairs(int(rows.max()), supports[first], pairs)[rows - 1] + shift[None, :]
        done |= same
    return out


def _exact_cells(
    terms: _Quilts, t: int, pairs: np.ndarray, shift: np.ndarray, rows: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """E_t[a, b] = max_p (left_t[a, p] + right[b, p]) for the cells (rows[i], cols[i]), 1-based."""
    if rows.size == 0:
        return np.empty(0)
    dist = np.unique(rows)
    left = _left_rows(terms, t, dist, pairs, shift)
    ucols = np.unique(cols)
    right = terms.right_pairs(int(ucols[-1]), pairs)[ucols - 1]
    terms.count(float(rows.size) * pairs.size, f"quilts of node {t}")
    return _cells_max_plus(left, right, np.searchsorted(dist, rows), np.searchsorted(ucols, cols))


def _one_sided(
    terms: _Quilts, t: int, pairs: np.ndarray, shift: np.ndarray, limit: int, eps: float, upper: float
) -> _NodeBest | None:
    """The best left-only or right-only quilt at node t with card ≤ limit that could score below ``upper``."""
    T = terms.T
    best: _NodeBest | None = None
    useful = math.floor(eps * upper) + 1 if math.isfinite(upper) else T  # a score is ≥ card/ε
    n_left = min(t - 1, limit - (T - t), useful - (T - t))  # card T − t + a
    if n_left >= 1:
        dist = np.arange(1, n_left + 1)
        e = _left_rows(terms, t, dist, pairs, shift).max(axis=1)
        card = (T - t + dist).astype(float)
        s = _scores(card, e, eps)
        i = int(np.argmin(s))
        best = _NodeBest(float(s[i]), ("left-only", i + 1, 0), int(card[i]), float(e[i]))
    n_right = min(T - t, limit + 1 - t, useful + 1 - t)  # card t + b − 1
    if n_right >= 1:
        e = terms.right_pairs(n_right, pairs).max(axis=1)
        card = (t + np.arange(1, n_right + 1) - 1).astype(float)
        s = _scores(card, e, eps)
        i = int(np.argmin(s))
        if best is None or s[i] < best.sigma:
            best = _NodeBest(float(s[i]), ("right-only", 0, i + 1), int(card[i]), float(e[i]))
    return best


def _general_sigma(terms: _Quilts, eps: float, floor: float) -> tuple[float, int, _NodeBest] | None:
    """max over nodes t < t_c of min_Q score node by node (non-stationary priors), or None when ≤ ``floor``.

    Consecutive nodes share their distances: E_t[a, b] and E_{t−1}[a, b] differ only through
    log p_t (and the supports of the left nodes), so with η = max_p |shift_t − shift_{t−1}|,
    E_t ∈ [lo_{t−1} − η, hi_{t−1} + η].  Only cells whose lower-bound score can beat the best
    upper-bound score are evaluated exactly; the rest keep their (widened) bounds.
    """
    T = terms.T
    best: tuple[float, int, _NodeBest] | None = None
    bar = floor
    limit = min(T, _FIRST_LIMIT)
    last = min(T, terms.t_c - 1)
    support_changes = np.ones(last + 1, dtype=bool)  # [s]: supp(p_s) differs from supp(p_{s−1}), 1-based
    positive = terms.marg[:last] > 0
    support_changes[2:] = np.any(positive[1:] != positive[:-1], axis=1)
    prev: _Bounds | None = None
    for t in range(1, last + 1):
        pairs = terms.pairs(t) if terms.protected[t - 1] else np.zeros(0, dtype=np.int64)
        if pairs.size == 0:  # no secret at this node (unprotected, or fewer than two states with mass)
            prev = None
            continue
        shift = terms.shift(t, pairs)
        while True:
            d = min(limit, T - 1)
            n_a, n_b = min(t - 1, d), min(T - t, d)
            terms.count(16.0 * n_a * n_b + 4.0 * pairs.size, f"quilts of node {t}")  # the (a, b) bound arrays
            card = (np.arange(1, n_a + 1)[:, None] + np.arange(1, n_b + 1)[None, :] - 1).astype(float)
            inside = card <= limit
            lo = np.zeros((n_a, n_b))  # max-influences are ≥ 0
            hi = np.full((n_a, n_b), np.inf)
            if prev is not None and np.array_equal(prev.pairs, pairs):
                eta = float(np.abs(shift - prev.shift).max()) * (1 + 1e-9) + 1e-12
                r, c = min(n_a, prev.lo.shape[0]), min(n_b, prev.lo.shape[1])
                same = ~support_changes[t - terms.depth(np.arange(1, r + 1))]  # supp(p_{t−a}) = supp(p_{t−1−a})
                lo[:r, :c] = np.where(same[:, None], np.maximum(prev.lo[:r, :c] - eta, 0.0), 0.0)
                hi[:r, :c] = np.where(same[:, None], prev.hi[:r, :c] + eta, np.inf)
            fresh = np.flatnonzero(np.any(inside & np.isinf(hi), axis=1))
            if fresh.size:  # every per-pair term is ≥ 0: max(Lmax, Rmax) ≤ E ≤ Lmax + Rmax
                lmax = _left_rows(terms, t, fresh + 1, pairs, shift).max(axis=1)[:, None]
                rmax = terms.right_max(n_b, pairs)[None, :]
                unknown = np.isinf(hi[fresh])
                lo[fresh] = np.where(unknown, np.maximum(lmax, rmax), lo[fresh])
                hi[fresh] = np.where(unknown, lmax + rmax, hi[fresh])
            node = _NodeBest(T / eps, ("empty", 0, 0), T, 0.0)
            s_hi = np.where(inside, _scores(card, hi, eps), np.inf)
            upper = min(node.sigma, float(s_hi.min())) if s_hi.size else node.sigma
            side = _one_sided(terms, t, pairs, shift, limit, eps, upper)
            if side is not None and side.sigma < node.sigma:
                node = side
                upper = min(upper, side.sigma)
            if upper <= bar:
                break  # this node cannot raise the maximum
            s_lo = np.where(inside, _scores(card, lo, eps), np.inf)
            todo = (s_lo <= upper) & (lo < hi)
            rows, cols = np.nonzero(todo)
            exact = _exact_cells(terms, t, pairs, shift, rows + 1, cols + 1)
            lo[rows, cols] = exact
            hi[rows, cols] = exact
            known = inside & (lo == hi) & (s_lo <= upper)
            if known.any():
                s = np.where(known, _scores(card, hi, eps), np.inf)
                i = int(np.argmin(s))
                if s.flat[i] < node.sigma:
                    ia, ib = divmod(i, n_b)
                    node = _NodeBest(float(s.flat[i]), ("two-sided", ia + 1, ib + 1), ia + ib + 1, float(hi[ia, ib]))
            if limit >= T or node.sigma <= (limit + 1) / eps:
                if node.sigma > bar:
                    bar = node.sigma
                    best = (node.sigma, t, node)
                break
            limit = _next_limit(limit, node.sigma, eps, T)
        prev = _Bounds(pairs, shift, lo, hi)
    return best


def _needed_distances(profile: ChainProfile, eps: float) -> int:
    """An upper bound on the table distances the quilt search reads (see :func:`mqm_estimate`)."""
    T = profile.T
    sigma = T / eps
    for d, rho in profile.spreads:  # the quilt at distance d on both sides (or one, near an end): e ≤ 3ρ(d)
        if 3.0 * rho < eps:
            sigma = min(sigma, (2 * d - 1) / (eps - 3.0 * rho))
    limit = max(_FIRST_LIMIT, 2 * math.ceil(eps * sigma) + 2)
    n = min(T - 1, limit)
    return n if profile.D_bound is None else min(n, profile.D_bound)


def _estimate(profiles: list[ChainProfile], eps: float) -> WorkEstimate:
    pieces = []
    for profile in profiles:
        n = _needed_distances(profile, eps)
        tables = profile.estimate(n)
        k = float(profile.K)
        nodes = 0 if profile.stationary else min(profile.T, profile.t_c_bound) - 1
        pairs = k * k
        # the far nodes: the rows of the tables and the cells evaluated (about n of them per pair), the (d, d)
        # score arrays and the (T, d) node arrays, over rounds whose d add up to at most 3n (d² to 3n²)
        far = (6.0 + CELL_UNITS) * n * pairs + 36.0 * n * n + 72.0 * profile.T * n
        # each node visited one by one: its bound arrays, its rows and the cells its bounds cannot settle (on
        # slowly converging chains up to about n²/50 per pair; see benchmarks/bench_estimates.py)
        per_node = pairs * n * (1.0 + n / 50.0) + 16.0 * n * n + 4.0 * pairs
        units = dict(tables.units)
        units["marginal"] = units.get("marginal", 0.0) + far + nodes * per_node
        # the interpreter's share (microseconds): a call of a small prior takes 2–10 ms on a busy machine
        units["overhead"] = 3000.0 + 80.0 * n + 600.0 * nodes
        pieces.append(WorkEstimate("", units, 2.0 * tables.nbytes + 8.0 * 2 * _CHUNK_CELLS, f"distance {n}"))
    k = profiles[0].K
    n = max(_needed_distances(p, eps) for p in profiles)
    loose = sum(1 for p in profiles if not p.stationary and p.t_c_bound > p.T)
    plural = "s" if len(profiles) > 1 else ""
    dominant = f"K = {k} states, {len(profiles)} prior{plural}, quilts spanning up to {n} nodes"
    if loose:
        dominant += f", {loose} prior{'s' if loose > 1 else ''} whose every node is visited one by one"
    advice = (
        "raise ε_puffer (smaller quilts then suffice), shorten the sequences, merge rarely used states"
        + (" or give the stationary initial distribution" if loose else "")
        + (", or use fewer priors in Θ" if len(profiles) > 1 else "")
    )
    return combine("MQM for this prior", pieces, dominant, advice)


def _profiles(priors: list[MarkovChainPrior], work: WorkCounter | None) -> list[ChainProfile]:
    k = priors[0].n_states
    first = sum(2.0 * min(p.length - 1, _FIRST_LIMIT) * float(k) ** 3 for p in priors)
    early = WorkEstimate("MQM for this prior", {"max-plus": first, "product": first}, 0.0,
                         f"K = {k} states: the first {_FIRST_LIMIT} distances of the influence tables alone",
                         "merge rarely used states or use fewer priors in Θ")
    if not early.fits:  # before any O(K³) work
        early.check()
    return [ChainProfile(p, p.length - 1, work) for p in priors]


def mqm_estimate(prior_or_priors: MarkovChainPrior | list[MarkovChainPrior], eps_puffer: float) -> WorkEstimate:
    """What :func:`mqm_scale` will cost, before doing it (a :class:`puffer_core.work.WorkEstimate`).

    The quilt search never reads tables past the proven cutoff, nor past twice the card a
    quilt of the ρ-bounds already certifies (a quilt at distance d has influence ≤ 3ρ(d), see
    :mod:`puffer_core.chain_terms`); costs O(K³·log T) per prior.
    """
    priors = as_theta(prior_or_priors, "MQM (it needs the prior itself, not only its a(b) curve)")
    eps = check_eps("eps_puffer", eps_puffer)
    try:
        with one_blas_thread():
            return _estimate(_profiles(priors, None), eps)
    except ValueError as exc:
        if "out of reach" not in str(exc):
            raise
        return WorkEstimate("MQM for this prior", {"max-plus": math.inf}, math.inf,
                            f"K = {priors[0].n_states} states", "merge rarely used states")


def mqm_scale(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps_puffer: float,
    *,
    progress: ProgressCallback | None = None,
    work: WorkCounter | None = None,
    secrets: Secrets | None = None,
) -> MQMScale:
    """σ_max of the exact MQM with where it is attained (docs/math.md §5, [S] Algorithm 1).

    ``secrets`` (docs/math.md §16): the max over nodes runs over the protected nodes and the
    max-influence over the secret pairs only (the quilts and their cards are unchanged: the nearby
    entries X_N are data whether protected or not); ``None`` is every pair at every node.

    ``prior_or_priors`` is a :class:`MarkovChainPrior` or a list Θ of them (same states;
    lengths and initial distributions may differ).  Adding Lap(L·σ_max) to an L-Lipschitz
    query F of the users' chains is ε_puffer-Pufferfish private.  The work is estimated first
    (:func:`mqm_estimate`) and refused at once, with the estimate, beyond the limits;
    ``progress`` and ``work`` as in :func:`puffer_core.influence.influence_curve`.
    """
    priors = as_theta(prior_or_priors, "MQM (it needs the prior itself, not only its a(b) curve)")
    eps = check_eps("eps_puffer", eps_puffer)
    chosen = as_secrets(secrets).check(priors.n_states)
    longest = max(p.length for p in priors)
    if not math.isfinite(longest / eps):
        raise ValueError(
            f"ε_puffer = {eps:g} is too small: the noise scale σ_max ≥ T/ε_puffer = {longest}/{eps:g} exceeds the"
            f" largest double-precision number; use ε_puffer ≥ {longest / 1e300:.1e}"
        )
    counter = work if work is not None else WorkCounter()
    with one_blas_thread():
        profiles = _profiles(priors, counter)
        estimate = _estimate(profiles, eps)
        estimate.check()
        report = Progress(progress, estimate.total_units)
        best: MQMScale | None = None
        for index, profile in enumerate(profiles):
            floor = best.sigma_max if best is not None else 0.0
            terms = _Quilts(profile, report, counter, chosen)
            for zone in ("far", "start"):
                if zone == "far":
                    found = _stationary_sigma(terms, eps, floor, terms.t_c) if terms.t_c <= terms.T else None
                else:
                    found = _general_sigma(terms, eps, floor) if terms.t_c > 1 else None
                if found is not None and found[0] > floor:
                    sigma, t, node = found
                    floor = sigma
                    best = MQMScale(sigma, eps, t, node.quilt, node.card, node.influence, index)
            report.report(f"prior {index + 1} of {len(profiles)} done")
    report.finish()
    if best is None:
        return MQMScale(0.0, eps, 1, ("empty", 0, 0), 0, 0.0, 0)
    return best


def mqm_noise_scale(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps_puffer: float,
    *,
    progress: ProgressCallback | None = None,
    work: WorkCounter | None = None,
    secrets: Secrets | None = None,
) -> float:
    """σ_max for a 1-Lipschitz query, exact over all quilts of Lemma II.5 (docs/math.md §5, [S] Algorithm 1).

    The MQM release of an L-Lipschitz F is F(D) + Lap(L·σ_max).  Raises ValueError for a
    non-positive ε or something other than Markov chain priors.
    """
    sigma = mqm_scale(prior_or_priors, eps_puffer, progress=progress, work=work, secrets=secrets).sigma_max
    if not math.isfinite(sigma):
        raise ValueError("σ_max is not finite; this should not happen because the empty quilt is always usable")
    return sigma
