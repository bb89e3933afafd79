"""The left and right terms of docs/math.md §2.1 for one Markov chain prior: one kernel for a(b) and MQM.

For a prior θ = (init, P) of length T, node t and a pair (x, x') of values with positive
mass at t (p_t = init·P^(t−1)):

    right(d)[x, x'] = max_r log P^d[x, r] / P^d[x', r]                                 (node t+d)
    left_t(d)[x, x'] = h_S(d)[x, x'] + log p_t[x'] − log p_t[x],   S = supp p_{t−d}      (node t−d)
    h_S(d)[x, x']  = max_{l ∈ S, P^d[l, x] > 0} log P^d[l, x] / P^d[l, x']

(0/0 skipped, positive/0 = +inf; a stationary prior has p_t = π at every node).  Tables are
stored distance-major: ``right_table(n)[d−1, x·K + x']``.

**Tail bound (proof).** Both terms are max log-ratios of two conditional distributions that
reach the far node through the same Markov kernel, so they are non-increasing in d (data
processing): if P^d[x, ·] ≤ e^R P^d[x', ·] entrywise then P^{d+1}[x, ·] = P^d[x, ·]P ≤
e^R P^{d+1}[x', ·]; on the left, X_{t−d−1} depends on X_t only through X_{t−d}, with a
backward kernel that does not depend on x.  Let ρ(d) be the largest spread
max_l log P^d[l, c] − min_l log P^d[l, c] of a column c over the rows l that can hold mass
(the union U of the registered supports).  Then right(d) ≤ ρ(d) (take l = x, x'), and since
p_t[x] = Σ_l p_{t−d}[l] P^d[l, x] lies between the smallest and largest P^d[l, x],
left_t(d) ≤ 2ρ(d) for every node t.  ρ is non-increasing too (a column of P^{d+1} is a
convex combination of entries of the same column of P^d over rows of the forward-closed U).
So once 2ρ(D) ≤ ``TAIL_TOL`` the tables stop at the *cutoff* D: for d > D every term is
replaced by its value at D, an upper bound that exceeds the exact term by at most
``TAIL_TOL``.  Chains that never mix (periodic, zeros that persist) have no cutoff.

Every structurally positive probability of every power is checked against underflow
(docs/math.md §2.1): a probability that double precision cannot hold is an error, never a
silent zero.
"""

from __future__ import annotations

import numpy as np

from ..priors.models import TINY, MarkovChainPrior, check_no_underflow
from ..work import MARGINAL, MAX_PLUS, MEMORY_LIMIT_BYTES, PRODUCT, Progress, WorkCounter, WorkEstimate
from .kernels import NEG, column_log_range, log_or_neg, max_log_ratio, stream_marginals

TAIL_TOL = 1e-12  # a clamped term exceeds the exact one by at most this much
TABLE_LIMIT_BYTES = MEMORY_LIMIT_BYTES  # term tables beyond this are refused up front
_ROW_CHUNK_STEPS = 2e8  # max-plus steps per kernel call (progress is reported between calls)


class ChainTerms:
    """right(d) and h_S(d) of one prior for d = 1..n, grown on demand, stopped at the cutoff.

    ``supports`` lists the sets S (boolean masks) for which h_S is wanted; they must all be
    given here, because the matrix powers are streamed and not kept.  The stationary
    support supp π is always included when π exists.
    """

    def __init__(
        self, prior: MarkovChainPrior, supports: list[np.ndarray] | None = None, pi: np.ndarray | None = None
    ) -> None:
        """``pi``: the stationary distribution when the caller has it (computed here otherwise)."""
        self.prior = prior
        self.K = prior.n_states
        self.T = prior.length
        self.stationary = prior.stationary_initial
        if self.stationary:
            self.pi: np.ndarray | None = np.asarray(prior.initial)
        elif pi is not None:
            self.pi = np.asarray(pi)
        else:
            self.pi = prior.stationary_or_none  # None: several closed classes (allowed with a given initial)
        masks = [] if self.pi is None else [self.pi > 0]
        for s in supports or []:
            masks.append(np.asarray(s, dtype=bool))
        self._keys: dict[bytes, int] = {}
        self.supports: list[np.ndarray] = []
        for m in masks:
            if m.tobytes() not in self._keys:
                self._keys[m.tobytes()] = len(self.supports)
                self.supports.append(m)
        self.mass_rows = np.zeros(self.K, dtype=bool)
        for m in self.supports:
            self.mass_rows |= m
        self.n = 0
        self.cutoff: int | None = None
        p = prior.transition
        self._transition = np.ascontiguousarray(p)
        self._structure = (p > 0).astype(float)
        self._power = np.eye(self.K)
        self._struct = np.eye(self.K, dtype=bool)
        self._struct_full = False
        self.stride = 1 + len(self.supports)  # row (d−1)·stride + j: j = 0 right, j = 1 + s for h of support s
        self._buf = np.empty((0, self.K * self.K))
        self.attached = False
        self._expected: int | None = None
        self._all = np.ones(self.K, dtype=bool)
        self.stop_at: int | None = None  # a proven cutoff (see ChainProfile): the tables stop there
        self.tail = np.inf  # 2ρ at the cutoff (≤ TAIL_TOL) once there is one

    # ------------------------------------------------------------------ growth

    def support_index(self, support: np.ndarray) -> int:
        key = np.asarray(support, dtype=bool).tobytes()
        if key not in self._keys:
            raise KeyError("h_S was asked for a support S not registered with ChainTerms")
        return self._keys[key]

    def expect(self, distances: int) -> None:
        """Size the first allocation for about this many distances (e.g. an estimated cutoff)."""
        self._expected = max(1, int(distances))

    def ensure(
        self, n: int, expected: int | None = None, progress: Progress | None = None, work: WorkCounter | None = None
    ) -> int:
        """Compute the tables up to distance n (or the cutoff); return how many distances are stored.

        ``expected`` (e.g. an estimated cutoff) sizes the first allocation; storage otherwise
        grows geometrically.  ``progress`` hears of every distance (and of parts of one when K
        is large); ``work`` counts the max-plus steps and matrix-product multiply-adds.
        """
        n = max(0, min(int(n), self.T - 1))
        if self.cutoff is not None or n <= self.n:
            return self.n
        k = self.K
        logs_t = np.empty((k, k))
        sizes = [k] + [int(s.sum()) for s in self.supports]  # rows r used by each table
        rows = max(1, int(_ROW_CHUNK_STEPS / max(1, k * max(sizes))))
        while self.n < n:
            d = self.n + 1
            if d > self.capacity:
                hint = expected if expected is not None else self._expected
                first = hint if hint is not None and self.n == 0 else 16
                # geometric growth (a caller growing the tables distance by distance copies O(n) rows, not
                # O(n²)), never past the distances the chain can use
                most = self.T - 1 if self.stop_at is None else min(self.T - 1, self.stop_at)
                self._grow(min(max(n, most), max(d, first, 2 * self.capacity)))
            self._power = self._power @ self._transition
            if work is not None:
                work.add(PRODUCT, float(k) ** 3)
            if not self._struct_full:
                self._struct = (self._struct.astype(float) @ self._structure) > 0
                self._struct_full = bool(self._struct.all())
                if work is not None:
                    work.add(PRODUCT, float(k) ** 3)
            check_no_underflow(self._power, self._struct, f"the {d}-step transition matrix")
            logs = log_or_neg(self._power)
            logs_t[:] = logs.T
            row = (d - 1) * self.stride
            chunked = progress is not None and rows < k  # a distance takes long: report within it
            for j, size in enumerate(sizes):
                out = self._buf[row + j].reshape(k, k)
                for x in range(0, k, rows):
                    if j == 0:
                        max_log_ratio(logs[x : x + rows], logs_t, self._all, out[x : x + rows])
                    else:
                        max_log_ratio(logs_t[x : x + rows], logs, self.supports[j - 1], out[x : x + rows])
                    if chunked:
                        done = float(min(rows, k - x)) * size * k
                        progress.advance(f"left and right terms, distance {d} of {n}", done)
            steps = float(k) * k * sum(sizes)
            if work is not None:
                work.add(MAX_PLUS, steps)
            if progress is not None and not chunked:
                progress.advance(f"left and right terms, distance {d} of {n}", steps)
            self.n = d
            spread = 2.0 * column_log_range(logs, self.mass_rows)
            if spread <= TAIL_TOL or (self.stop_at is not None and d >= self.stop_at):
                self.cutoff = d
                self.tail = min(spread, TAIL_TOL)
                break
        return self.n

    @property
    def capacity(self) -> int:
        return self._buf.shape[0] // self.stride

    def attach(self, buffer: np.ndarray) -> None:
        """Write the tables into ``buffer`` ((capacity·stride, K²), e.g. a slice of a shared arena).

        Should more distances be needed than it holds, the tables move to storage of their own
        and ``attached`` becomes False.
        """
        if self.n:
            raise RuntimeError("attach a buffer before computing any distance")
        self._buf = buffer
        self.attached = True

    def _grow(self, capacity: int) -> None:
        new = np.empty((capacity * self.stride, self.K * self.K))
        new[: self.n * self.stride] = self._buf[: self.n * self.stride]
        self._buf = new
        self.attached = False

    # ------------------------------------------------------------------ tables

    def stored_rows(self) -> np.ndarray:
        """Every stored row, (n·stride, K²): distance d's right term at row (d − 1)·stride, h_S at + 1 + s."""
        return self._buf[: self.n * self.stride]

    def _table(self, j: int) -> np.ndarray:
        """Table j (0: right, 1 + s: h of support s) for d = 1..n, a strided view."""
        return self._buf[j : self.n * self.stride : self.stride]

    def _clamped(self, j: int, n: int) -> np.ndarray:
        """Rows d = 1..n of table j, distances past the cutoff repeating the cutoff row."""
        self.ensure(n)
        table = self._table(j)
        if n <= self.n:
            return table[:n]
        if self.cutoff is None:
            raise ValueError(f"distance {n} is beyond the chain (length {self.T})")
        return table[np.minimum(np.arange(n), self.n - 1)]

    def right_table(self, n: int) -> np.ndarray:
        """right(d)[x·K + x'] for d = 1..n, shape (n, K²)."""
        return self._clamped(0, n)

    def h_table(self, n: int, support: np.ndarray) -> np.ndarray:
        """h_S(d)[x·K + x'] for d = 1..n, shape (n, K²)."""
        return self._clamped(1 + self.support_index(support), n)

    def shift_pi(self) -> tuple[np.ndarray, np.ndarray]:
        """(log π[x'] − log π[x], pairs x ≠ x' with π[x], π[x'] > 0), both flat over x·K + x'."""
        if self.pi is None:
            raise ValueError("this chain has no unique stationary distribution")
        lp = log_or_neg(self.pi)
        ok = self.pi > 0
        valid = ok[:, None] & ok[None, :]
        np.fill_diagonal(valid, False)
        shift = np.where(valid, lp[None, :] - np.where(ok, lp, 0.0)[:, None], 0.0)
        return shift.reshape(-1), valid.reshape(-1)


def marginal_profile(
    prior: MarkovChainPrior, pi: np.ndarray | None, length: int | None = None, store: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p_t for t = 1..store, supp p_t and η_t for t = 1..length) of a prior (length: its own by default).

    η_t = max_x |log p_t[x] − log π[x]| where supp p_t = supp π, +inf elsewhere (or without
    π).  A structurally positive marginal that underflows is refused (docs/math.md §2.1).
    """
    n = prior.length if length is None else length
    kept, support, bad, eta = stream_marginals(
        np.ascontiguousarray(prior.transition, dtype=float),
        np.asarray(prior.initial, dtype=float),
        n,
        TINY,
        max(1, min(store, n)),
        np.zeros(0) if pi is None else np.asarray(pi, dtype=float),
    )
    if bad:
        raise ValueError(
            f"the distribution of entry {bad} has positive probabilities below {TINY:g} that double precision"
            " cannot hold; the exact computation would be wrong — set such tiny transition probabilities to 0"
            " or raise them"
        )
    return kept, support, eta


def squarings(
    transition: np.ndarray, rows: np.ndarray, n: int, work: WorkCounter | None = None,
    spreads: list[tuple[int, float]] | None = None,
) -> tuple[list[np.ndarray], int | None]:
    """(P, P², P⁴, …, P^span) up to the first power of two ``span`` with 2ρ(span) ≤ ``TAIL_TOL`` over ``rows``.

    span is None when no power of two up to the first one ≥ n qualifies (then no d ≤ n does:
    ρ is non-increasing when ``rows`` is closed under the chain's moves, see the module
    docstring).  Otherwise the cutoff — the first such d — lies in (span/2, span];
    :func:`walk_back` finds it.  ``spreads`` receives (2^j, ρ(2^j)) for every power computed.
    """
    k = transition.shape[0]
    powers = [np.asarray(transition, dtype=float)]
    span = 1
    while True:
        rho = column_log_range(log_or_neg(powers[-1]), rows)
        if spreads is not None:
            spreads.append((span, float(rho)))  # ρ(span): right ≤ ρ, left ≤ 2ρ at that distance
        if 2.0 * rho <= TAIL_TOL:
            return powers, span
        if span >= n:
            return powers, None
        powers.append(powers[-1] @ powers[-1])
        span *= 2
        if work is not None:
            work.add(PRODUCT, float(k) ** 3)


def walk_back(powers: list[np.ndarray], rows: np.ndarray, n: int, work: WorkCounter | None = None) -> int | None:
    """The first d ≤ n with 2ρ(d) ≤ ``TAIL_TOL`` (None if none), from the squarings of :func:`squarings`.

    Binary lifting: the largest d < span with 2ρ(d) > TAIL_TOL is found bit by bit from the top,
    each bit one product of saved squarings (log₂(span) products instead of span).
    """
    if len(powers) == 1:
        return 1
    k = powers[0].shape[0]
    below = np.eye(k)
    d = 0
    for j in range(len(powers) - 2, -1, -1):
        trial = below @ powers[j]
        if work is not None:
            work.add(PRODUCT, float(k) ** 3)
        if 2.0 * column_log_range(log_or_neg(trial), rows) > TAIL_TOL:
            below = trial
            d += 2**j
    return d + 1 if d + 1 <= n else None


def lifted_cutoff(
    transition: np.ndarray, rows: np.ndarray, n: int, work: WorkCounter | None = None,
    spreads: list[tuple[int, float]] | None = None,
) -> int | None:
    """The first d ≤ n with 2ρ(d) ≤ ``TAIL_TOL`` over ``rows`` (None if none), by squaring and binary lifting.

    About 2·log₂(d) matrix products instead of d (:func:`squarings`, then :func:`walk_back`).
    """
    powers, span = squarings(transition, rows, n, work, spreads)
    return None if span is None else walk_back(powers, rows, n, work)


def support_sequence(prior: MarkovChainPrior) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The structural supports of the marginals p_t, t = 1..T, without the marginals themselves.

    Returns (unique supports (n, K), ids of the supports of t = 1..m (m ≤ T), start s and
    period q of the cycle they end in: for t > m, supp p_t is the support of t = s + (t − s) mod q).
    Each step costs K² (a Boolean vector times the structure of P); the sequence is periodic
    from its first repetition on, which comes after at most about K² steps, in practice ~K.
    """
    structure = (np.asarray(prior.transition) > 0).astype(float)
    current = np.asarray(prior.initial) > 0
    seen: dict[bytes, int] = {}
    unique: list[np.ndarray] = []
    ids: list[int] = []
    first_at: dict[int, int] = {}
    for t in range(1, prior.length + 1):
        key = current.tobytes()
        if key not in seen:
            seen[key] = len(unique)
            unique.append(current)
        sid = seen[key]
        if sid in first_at:
            start = first_at[sid]
            return np.array(unique), np.array(ids, dtype=np.int64), start, t - start
        first_at[sid] = t
        ids.append(sid)
        current = (current.astype(float) @ structure) > 0
    return np.array(unique), np.array(ids, dtype=np.int64), prior.length, 1


class ChainProfile:
    """One prior prepared for the exact computations of docs/math.md §2.1 (a(b)) and §5 (MQM).

    Holds everything both need, written once:

    - π (``None`` when the chain has several closed classes) and the supports of the marginals
      (:func:`support_sequence`); ``mass_rows`` their union (closed under the chain's moves);
    - the cutoff D, bounded before any table is built (:func:`squarings`: a power of two past it;
      :meth:`refine`: D itself, by binary lifting) and imposed on the tables
      (``ChainTerms.stop_at``), so that an estimate made from it is never exceeded;
    - the far nodes: for a non-stationary prior with a stationary law, every node
      t ≥ t_c = max(s_f + D, t_η) (s_f: the first node whose marginal has the support of π;
      t_η: the first with η_t ≤ ``TAIL_TOL``, η_t = max_x |log p_t[x] − log π[x]|) has
      left_t(d) ≤ left_π(d) + 2η_{t_c}: η is non-increasing once finite (the max-divergences
      D∞(p_t‖π) and D∞(π‖p_t) both shrink under the kernel P, data processing), so
      ``far_addition`` = 2η_{t_c} and the marginals are needed only before t_c.  With a cutoff,
      η_t ≤ ρ(t − 1) (p_t[x] and π[x] both lie between the extremes of column x of P^(t−1)
      over ``mass_rows``), so t_η ≤ D + 1 and s_f ≤ D + 1: t_c ≤ 2D + 1 is known in advance.

    ``need`` is the largest distance the caller can use (≤ T − 1).  With ``exact=False`` the
    cutoff bound stays the power of two past it until :meth:`refine` (callers refine when the
    work is long enough for a tighter estimate to matter).
    """

    def __init__(self, prior: MarkovChainPrior, need: int, work: WorkCounter | None = None, exact: bool = True
                 ) -> None:
        self.prior = prior
        self.T = prior.length
        self.K = prior.n_states
        self.stationary = prior.stationary_initial
        self.need = max(0, min(int(need), self.T - 1))
        if self.stationary:
            self.pi: np.ndarray | None = np.asarray(prior.initial)
            unique = np.zeros((0, self.K), dtype=bool)
            self._ids = np.zeros(0, dtype=np.int64)
            self._cycle = (1, 1)
        else:
            self.pi = prior.stationary_or_none
            if work is not None:
                work.add(PRODUCT, float(self.K) ** 3)
            unique, self._ids, start, period = support_sequence(prior)
            self._cycle = (start, period)
            if work is not None:
                work.add(MARGINAL, float(self.K) ** 2 * (len(self._ids) + 1))
        self.terms = ChainTerms(prior, list(unique), self.pi)
        self.unique_supports = unique
        self._local_to_terms = np.array([self.terms.support_index(u) for u in unique], dtype=np.int64)
        self.spreads: list[tuple[int, float]] = []  # (d, ρ(d)) at powers of two d
        self._powers: list[np.ndarray] = []  # the squarings, kept until the cutoff bound is refined
        self.D_bound: int | None = None
        if self.need >= 1:
            self._powers, self.D_bound = squarings(
                prior.transition, self.terms.mass_rows, self.need, work, self.spreads)
        pi_rows = np.zeros(self.K, dtype=bool) if self.pi is None else self.pi > 0
        self._inside_pi = np.all(unique <= pi_rows[None, :], axis=1) if len(unique) else np.zeros(0, dtype=bool)
        self._pi_id = -1
        if self.pi is not None:
            matches = np.flatnonzero(np.all(unique == pi_rows[None, :], axis=1)) if len(unique) else []
            self._pi_id = int(matches[0]) if len(matches) else -1
        self.D = 0
        self.t_c = 1 if self.stationary else self.T + 1
        self.far_addition = 0.0
        self.marg = np.zeros((0, self.K))
        self.t_c_bound = self._far_start_bound()
        self.terms.stop_at = self.D_bound
        if self._powers and (exact or self.D_bound is None or self.D_bound > self.need):
            self.refine(work)

    def refine(self, work: WorkCounter | None = None) -> None:
        """Bring the cutoff bound from the power of two past it down to the cutoff itself (:func:`walk_back`).

        Until then ``D_bound`` is that power of two (an upper bound within a factor 2): estimates made
        from it are upper estimates.  Costs about log₂ D matrix products; a no-op once done.
        """
        if not self._powers:
            return
        if self.D_bound is not None:
            self.D_bound = walk_back(self._powers, self.terms.mass_rows, self.need, work)
            self.terms.stop_at = self.D_bound
            self.t_c_bound = self._far_start_bound()
        self._powers = []

    # ------------------------------------------------------------------ structure, before any table

    def support_ids(self, m: int) -> np.ndarray:
        """Indices (into ``unique_supports``) of supp p_t for t = 1..m (non-stationary priors)."""
        t = np.arange(1, m + 1)
        start, period = self._cycle
        known = len(self._ids)
        at = np.where(t <= known, t, start + (t - start) % period) - 1
        return self._ids[at]

    def node_support(self, m: int) -> np.ndarray:
        """The ChainTerms support index of supp p_t for t = 1..m (m ≤ T)."""
        return self._local_to_terms[self.support_ids(m)]

    def _first_pi_support(self) -> int:
        """s_f: the first node from which supp p_t = supp π for good (T + 1 if never within the chain)."""
        if self.pi is None or self._pi_id < 0:
            return self.T + 1
        start, period = self._cycle
        cycle = self._ids[start - 1 : start - 1 + period] if len(self._ids) >= start else self._ids[-1:]
        if not np.all(cycle == self._pi_id):
            return self.T + 1
        t = len(self._ids)
        while t >= 1 and self._ids[t - 1] == self._pi_id:
            t -= 1
        return t + 1

    def _far_start_bound(self) -> int:
        """An upper bound on t_c known before the tables (T + 1 when no far node is certain)."""
        if self.stationary:
            return 1
        s_f = self._first_pi_support()
        if s_f > self.T or self.D_bound is None:
            return self.T + 1
        d = self.D_bound
        return min(self.T + 1, max(d + 1, s_f + d))

    def bounded_nodes(self, m: int) -> np.ndarray:
        """bounded[t−1] for t = 1..m: every support within reach of node t (t − D ≤ s ≤ t) lies in supp π."""
        if self.stationary:
            return np.ones(m, dtype=bool)
        if self.pi is None:
            return np.zeros(m, dtype=bool)
        n = min(m, self.T)
        inside = self._inside_pi[self.support_ids(n)]
        outside = np.concatenate([[0], np.cumsum(~inside)])
        t = np.arange(1, n + 1)
        first = np.maximum(1, t - max(self.D, 1))
        ok = np.ones(m, dtype=bool)
        ok[:n] = outside[t] - outside[first - 1] == 0
        return ok

    # ------------------------------------------------------------------ estimate

    def table_distances(self) -> int:
        """The most distances the tables will hold (the proven cutoff, or ``need``)."""
        return self.need if self.D_bound is None else min(self.need, self.D_bound)

    def spread_at(self, d: int) -> float:
        """An upper bound on ρ(d) known before the tables: ρ at the largest power of two ≤ d (ρ never grows)."""
        known = [rho for span, rho in self.spreads if span <= d]
        return known[-1] if d >= 1 and known else np.inf

    @property
    def initial_divergence(self) -> float:
        """η_1 = max_x |log p_1[x] − log π[x]| (+inf when the supports differ or there is no π); η_t ≤ η_1."""
        if self.pi is None:
            return np.inf
        init = np.asarray(self.prior.initial, dtype=float)
        mass = init > 0
        if not np.array_equal(mass, self.pi > 0):
            return np.inf
        return float(np.max(np.abs(np.log(init[mass]) - np.log(self.pi[mass]))))

    def estimate(self, distances: int | None = None) -> WorkEstimate:
        """Units and bytes of the tables up to ``distances`` (default: :meth:`table_distances`) and the marginals."""
        n = self.table_distances() if distances is None else min(distances, self.T - 1)
        k = float(self.K)
        sizes = k + float(sum(int(s.sum()) for s in self.terms.supports))
        nodes = 0 if self.stationary else min(self.T, self.t_c_bound)
        steps = 2 * max(1, int(self.need).bit_length()) + 2  # the lifted cutoff and π
        units = {
            "max-plus": n * k * k * sizes,
            "product": (2.0 * n + steps) * k**3,
            "marginal": (nodes + len(self._ids) + 1) * k * k,
        }
        nbytes = 8.0 * k * k * n * self.terms.stride
        return WorkEstimate("the left and right terms", units, nbytes, f"terms up to distance {n}")

    # ------------------------------------------------------------------ build

    def build(self, progress: Progress | None = None, work: WorkCounter | None = None, tables: bool = True) -> None:
        """The tables (up to the cutoff or ``need``), then the far-node start and the marginals before it.

        With ``tables=False`` (MQM grows its tables on demand) the far nodes are located with the
        proven cutoff bound instead of the built tables.
        """
        self._powers = []  # the squarings are no longer needed
        if tables:
            self.D = self.terms.ensure(self.need, self.table_distances(), progress, work)
            has_cutoff = self.terms.cutoff is not None
        else:
            has_cutoff = self.D_bound is not None
            self.D = self.D_bound if has_cutoff else self.need
        if self.stationary:
            self.t_c = 1
            self.marg = np.asarray(self.prior.initial)[None, :]
            return
        s_f = self._first_pi_support()
        if self.pi is None or s_f > self.T:
            horizon = self.T
        elif has_cutoff:
            horizon = min(self.T, max(self.D + 1, s_f + self.D))
        else:
            horizon = self.T
        marg, _, eta = marginal_profile(self.prior, self.pi, length=horizon, store=horizon)
        if work is not None:
            work.add(MARGINAL, float(self.K) ** 2 * horizon)
        self.marg = marg
        small = np.flatnonzero(eta <= TAIL_TOL)
        if self.pi is None or s_f > self.T:
            self.t_c = self.T + 1
        elif small.size:
            self.t_c = max(int(small[0]) + 1, s_f + self.D)
        elif has_cutoff:
            self.t_c = max(horizon + 1, s_f + self.D)  # η_t ≤ ρ(t − 1) ≤ TAIL_TOL / 2 from D + 1 on
        else:
            self.t_c = self.T + 1
        if self.t_c > self.T:
            self.t_c = self.T + 1
            return
        # η is non-increasing once finite: the largest η over the far nodes is η at t_c
        eta_c = float(eta[self.t_c - 1]) if self.t_c <= horizon else TAIL_TOL / 2.0
        self.far_addition = 2.0 * eta_c + 1e-15


def profile_marginals(profile: ChainProfile, n: int, work: WorkCounter | None = None) -> np.ndarray:
    """p_t for t = 1..n (n ≤ T): the profile's own, extended when a caller needs more nodes (Θ)."""
    if profile.marg.shape[0] >= n:
        return profile.marg[:n]
    marg, _, _ = marginal_profile(profile.prior, profile.pi, length=n, store=n)
    if work is not None:
        work.add(MARGINAL, float(profile.K) ** 2 * n)
    return marg


def shared_tables(profiles: list[ChainProfile], arena: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The arrays the compiled a(b) kernels read (the layout is documented in :mod:`puffer_core.kernels`).

    ``tab[i]`` holds prior i's rows (one prior: its own storage, no copy; several: ``arena``, into
    which they were written, or a gathered copy); ``stride``, ``hpi`` (index of supp π), ``shift``
    and ``valid`` (log π[x'] − log π[x] and the pairs with mass under π), ``depth`` (the stored
    distances) and ``lengths``.
    """
    k = profiles[0].K
    n = len(profiles)
    n_pairs = k * k
    hpi = np.zeros(n, dtype=np.int64)
    shift = np.zeros((n, n_pairs))
    valid = np.zeros((n, n_pairs), dtype=bool)
    for i, prof in enumerate(profiles):
        if prof.pi is not None:
            hpi[i] = prof.terms.support_index(prof.pi > 0)
            shift[i], valid[i] = prof.terms.shift_pi()
    if n == 1:
        tab = profiles[0].terms.stored_rows()[None]
    elif arena is not None and all(p.terms.attached for p in profiles):
        tab = arena
    else:
        tab = np.empty((n, max(1, max(p.terms.stored_rows().shape[0] for p in profiles)), n_pairs))
        for i, prof in enumerate(profiles):
            rows = prof.terms.stored_rows()
            tab[i, : rows.shape[0]] = rows
    return {
        "tab": tab,
        "stride": np.array([p.terms.stride for p in profiles], dtype=np.int64),
        "hpi": hpi,
        "shift": shift,
        "valid": valid,
        "depth": np.array([p.D for p in profiles], dtype=np.int64),
        "lengths": np.array([p.T for p in profiles], dtype=np.int64),
    }


def node_arrays(profiles: list[ChainProfile], m: int, hpi: np.ndarray, work: WorkCounter | None = None
                ) -> dict[str, np.ndarray]:
    """The per-node arrays of the first m nodes that :func:`puffer_core.engine.kernels.start_zone` reads.

    For prior i and node t (row t − 1): ``sid`` the support index of supp p_t (``hpi[i]``, supp π,
    for a stationary prior); ``lm`` log p_t (``NEG`` for zeros and past the prior's end); ``dev``
    log p_t − log π where both are positive (0 elsewhere); ``delta`` max − min of ``dev`` over those
    states; ``bounded[t − 1]``: every support within reach of node t lies in supp π, for every
    prior; ``moving[i]``: prior i is not stationary.
    """
    k = profiles[0].K
    n_priors = len(profiles)
    sid = np.zeros((n_priors, m), dtype=np.int64)
    lm = np.full((n_priors, m, k), NEG)
    dev = np.zeros((n_priors, m, k))
    bounded = np.ones(m, dtype=bool)
    delta = np.zeros((n_priors, m))
    moving = np.array([not p.stationary for p in profiles])
    for i, prof in enumerate(profiles):
        n = min(m, prof.T)
        bounded &= prof.bounded_nodes(m)
        if prof.stationary:
            sid[i, :n] = hpi[i]
            lm[i, :n] = log_or_neg(prof.pi)[None, :]
            continue
        marg = profile_marginals(prof, n, work)
        lm[i, :n] = log_or_neg(marg)
        sid[i, :n] = prof.node_support(n)
        if prof.pi is not None:
            lp = log_or_neg(prof.pi)
            inside = (marg > 0) & (prof.pi > 0)[None, :]
            dev[i, :n] = np.where(inside, lm[i, :n] - lp[None, :], 0.0)
            hi = np.where(inside, dev[i, :n], -np.inf).max(axis=1)
            lo = np.where(inside, dev[i, :n], np.inf).min(axis=1)
            delta[i, :n] = np.where(np.isfinite(hi) & np.isfinite(lo), hi - lo, 0.0)
    return {"sid": sid, "lm": lm, "dev": dev, "delta": delta, "bounded": bounded, "moving": moving}


def attach_arena(profiles: list[ChainProfile]) -> np.ndarray | None:
    """For Θ: one arena (n, rows, K²) into which every prior writes its tables (None for one prior)."""
    if len(profiles) < 2:
        return None
    k = profiles[0].K
    caps = [p.table_distances() for p in profiles]
    arena = np.empty((len(profiles), max(1, max(c * p.terms.stride for c, p in zip(caps, profiles))), k * k))
    for i, (cap, prof) in enumerate(zip(caps, profiles)):
        prof.terms.attach(arena[i, : cap * prof.terms.stride])
    return arena
