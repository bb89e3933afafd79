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

from ..priors.models import TINY, MarkovChainPrior, check_no_underflow, stationary_distribution
from .kernels import column_log_range, log_or_neg, max_log_ratio, stream_marginals

TAIL_TOL = 1e-12  # a clamped term exceeds the exact one by at most this much

# Throughput assumed by the up-front estimates (one shared core, measured with margin).
MAX_PLUS_RATE = 3e9  # pairwise max log-ratio operations per second (compiled kernel)
GEMM_RATE = 5e9  # floating-point operations per second of a matrix product
TABLE_LIMIT_BYTES = 1_500_000_000  # term tables beyond this are refused up front


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
            try:
                self.pi = stationary_distribution(prior.transition)
            except ValueError:
                self.pi = None  # several closed classes: no stationary law (allowed with a given initial)
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

    # ------------------------------------------------------------------ growth

    def support_index(self, support: np.ndarray) -> int:
        key = np.asarray(support, dtype=bool).tobytes()
        if key not in self._keys:
            raise KeyError("h_S was asked for a support S not registered with ChainTerms")
        return self._keys[key]

    def expect(self, distances: int) -> None:
        """Size the first allocation for about this many distances (e.g. an estimated cutoff)."""
        self._expected = max(1, int(distances))

    def ensure(self, n: int, expected: int | None = None) -> int:
        """Compute the tables up to distance n (or the cutoff); return how many distances are stored.

        ``expected`` (e.g. an estimated cutoff) sizes the first allocation; storage otherwise
        grows geometrically.
        """
        n = max(0, min(int(n), self.T - 1))
        if self.cutoff is not None or n <= self.n:
            return self.n
        k = self.K
        logs_t = np.empty((k, k))
        while self.n < n:
            d = self.n + 1
            if d > self.capacity:
                hint = expected if expected is not None else self._expected
                first = hint if hint is not None and self.n == 0 else 16
                self._grow(min(n, max(d, first, 2 * self.capacity)))
            self._power = self._power @ self._transition
            if not self._struct_full:
                self._struct = (self._struct.astype(float) @ self._structure) > 0
                self._struct_full = bool(self._struct.all())
            check_no_underflow(self._power, self._struct, f"the {d}-step transition matrix")
            logs = log_or_neg(self._power)
            logs_t[:] = logs.T
            row = (d - 1) * self.stride
            max_log_ratio(logs, logs_t, self._all, self._buf[row].reshape(k, k))
            for j, s in enumerate(self.supports):
                max_log_ratio(logs_t, logs, s, self._buf[row + 1 + j].reshape(k, k))
            self.n = d
            if 2.0 * column_log_range(logs, self.mass_rows) <= TAIL_TOL:
                self.cutoff = d
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


def estimate_cutoff(prior: MarkovChainPrior, rows: np.ndarray, n: int) -> int:
    """An upper bound on the cutoff (at most n): the first power of two 2^j with 2ρ(2^j) ≤ TAIL_TOL.

    ρ is non-increasing (see the module docstring), so the cutoff is ≤ that power of two.
    Uses j squarings, cheap next to the tables themselves.
    """
    power = np.array(prior.transition, dtype=float)
    d = 1
    while d < n:
        if 2.0 * column_log_range(log_or_neg(power), rows) <= TAIL_TOL:
            return d
        power = power @ power
        d *= 2
    return n


def table_cost(k: int, distances: int, supports: int) -> tuple[float, float]:
    """(seconds, bytes) to build right and ``supports`` h tables up to ``distances`` for K = k."""
    seconds = distances * (k**3 * (1 + supports) / MAX_PLUS_RATE + 3 * k**3 / GEMM_RATE)
    return seconds, 8.0 * k * k * distances * (1 + supports)
