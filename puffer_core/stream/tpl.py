"""Temporal privacy leakage of a stream: BPL, FPL and TPL (docs/math.md §10, [TPL]).

A *stream* releases r_t at every time t = 1..T from the entries at time t only (say a noisy
count of users in each state at t); each release M_t is ε_t-DP with respect to one entry.  A
user's entries are a Markov chain, so what r_s says about X_s also says something about X_t.

 **TPL** ([TPL], Cao, Yoshikawa, Xiao and Xiong).  With the backward matrix
``P^B_t[i, j] = Pr(X_{t−1}=j | X_t=i) = p_{t−1}[j]·P[j, i] / p_t[i]`` and the forward matrix
``P^F = P``::

    BPL_1 = ε_1,   BPL_t = L(BPL_{t−1}; P^B_t) + ε_t         (backward privacy leakage)
    FPL_T = ε_T,   FPL_t = L(FPL_{t+1}; P^F)  + ε_t          (forward privacy leakage)
    TPL_t = BPL_t + FPL_t − ε_t,        the stream leaks at most max_t TPL_t.

Why: given X_t the past outputs r_1..r_{t−1}, r_t and the future outputs r_{t+1}..r_T are
independent (Markov property), so ``log Pr[r | X_t=x] / Pr[r | X_t=x']`` splits into a past,
a present (≤ ε_t) and a future term.  The past term is
``log Σ_j P^B_t[x, j]·f(j) / Σ_j P^B_t[x', j]·f(j)`` with ``f(j) = Pr[r_1..r_{t−1} | X_{t−1}=j]``,
and any two values of f are within a factor e^{BPL_{t−1}} of each other; the largest such
ratio over all such f is :func:`leakage_function` (the maximum of a linear-fractional function
over a box is at a vertex: f takes two values, on a set S and off it).  The future term is the
same with P.

The supremum of an unbounded stream and where it turns infinite: :func:`leakage_supremum`,
:func:`tpl_supremum` and :func:`tpl_divergence_threshold` (finite exactly when ε < −log m, with m
the largest mass that one row of the matrix puts on the columns where another row is 0).  The
other bound, [C]'s translation, is :mod:`puffer_core.stream.bounds`; the output laws of the
releases are :mod:`puffer_core.stream.laws`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..priors.models import MarkovChainPrior, Theta, as_theta
from ..validation import WORK_LIMIT_SECONDS, check_eps, check_flag, check_rows, check_whole
from ..work import FRONT, SECONDS_PER_UNIT, WorkCounter, WorkEstimate

MAX_STATES = 500  # building a leakage front costs ~K³/2 ratio evaluations (K = 500: ~10 s)
MAX_LENGTH = 100_000  # time steps of a stream (the recursions are sequential)
MAX_LENGTH_CELLS = 20_000_000  # T × K marginal probabilities held at once
_CHUNK_CELLS = 1_000_000  # (pairs × K) cells of one chunk of the front construction
# what one front costs is counted in puffer_core.work's "front" units (K(K−1)/2·K per front), plus:
_FRONT_OVERHEAD_US = 5_000  # microseconds of interpreter work per front (what dominates small K)
_STEP_OVERHEAD_US = 150  # per step of a prior: both recursions' leakage calls (measured ~100 µs at K = 20)
_FRONT_BYTES = 12 * 8 * _CHUNK_CELLS  # the arrays of one chunk of pairs (rows, ratios, order, prefix sums, masks)
_CONVERGED = 1e-12  # relative distance to π below which a non-stationary step uses the stationary front
_INFINITE_MARGIN = 1e-12  # e^ε·q within this of 1 counts as unbounded (never a huge truncated number)
_SUBNORMAL = 1e-300  # added to every small-α leakage: rounding below the normal range, far below any ε shown


# --------------------------------------------------------------------------------------------
# input checks


def check_row_stochastic(name: str, matrix: object) -> np.ndarray:
    """A square K×K matrix (2 ≤ K ≤ ``MAX_STATES``) whose rows are probability distributions
    (:func:`puffer_core.validation.check_rows`)."""
    m = check_rows(matrix, name)
    if m.shape[0] > MAX_STATES:
        raise ValueError(
            f"{name} has {m.shape[0]} states; temporal leakage needs about K³/2 = {m.shape[0] ** 3 / 2:.2g} ratio"
            f" evaluations per matrix and is limited to K ≤ {MAX_STATES} states (merge rare states)"
        )
    return m


def check_schedule(eps: object, length: int | None = None) -> np.ndarray:
    """ε_1..ε_T as a float array: a number (repeated ``length`` times) or one value per step."""
    if hasattr(eps, "__len__") and not isinstance(eps, (str, bytes)) and len(eps) > MAX_LENGTH:
        raise ValueError(f"a schedule has at most {MAX_LENGTH:,} time steps; got {len(eps):,}")
    if isinstance(eps, (int, float, np.integer, np.floating)) and not isinstance(eps, bool):
        if length is None:
            raise ValueError(f"give one ε per time step (a list such as [{eps}] * 10); got the single number {eps}")
        return np.full(length, check_eps("eps", eps))
    raw = np.asarray(eps, dtype=object)
    if raw.ndim != 1 or raw.size == 0:
        raise ValueError(f"eps must be a number or a non-empty 1-D sequence of numbers (one per step); got {eps!r}")
    values = [check_eps(f"eps[{t + 1}]", v, allow_zero=True) for t, v in enumerate(raw)]
    if length is not None and len(values) != length:
        raise ValueError(
            f"the schedule has {len(values)} values of ε but the stream has T = {length} time steps;"
            " give one ε per time step"
        )
    return np.array(values, dtype=float)


def stream_priors(prior_or_priors: object, finite: bool = True) -> Theta:
    """The set Θ of a stream (one length for all priors); ``finite``: the length is a stream to walk step by step."""
    priors = as_theta(prior_or_priors, "temporal privacy leakage", same_length=True)
    k, length = priors.n_states, priors.max_length
    if finite and (length > MAX_LENGTH or length * k > MAX_LENGTH_CELLS):
        raise ValueError(
            f"a stream of T = {length} steps over {k} states is too long: at most {MAX_LENGTH:,} steps and"
            f" T × K ≤ {MAX_LENGTH_CELLS:.0e} (shorten the stream; for a long stationary stream use the"
            " unbounded supremum, tpl_supremum)"
        )
    if k > MAX_STATES:
        raise ValueError(
            f"the prior has {k} states; temporal leakage needs about K³/2 = {k**3 / 2:.2g} ratio evaluations"
            f" per matrix and is limited to K ≤ {MAX_STATES} states (merge rare states)"
        )
    return priors


@dataclass(frozen=True, eq=False)
class Directions:
    """The backward and forward matrices an attacker is taken to know (docs/math.md §10).

    ``None`` in a direction: the prior's own matrix (P^B by Bayes' rule from the marginals,
    P^F = P), which is the default.  A K×K matrix: that matrix at every step — an attacker may know
    only one direction (a matrix whose rows are all equal says "no correlation known this way":
    its leakage function is 0).  Such a TPL bounds the leakage for an attacker whose knowledge is
    these matrices; only the default bounds it for the prior itself.
    """

    backward: np.ndarray | None = None
    forward: np.ndarray | None = None

    @property
    def default(self) -> bool:
        return self.backward is None and self.forward is None


def check_directions(backward: object, forward: object, n_states: int) -> Directions:
    """The backward and forward matrices checked against the chain's K states (None: the prior's own)."""
    out = []
    for name, matrix in (("the backward matrix P^B", backward), ("the forward matrix P^F", forward)):
        if matrix is None:
            out.append(None)
            continue
        checked = check_row_stochastic(name, matrix)
        if checked.shape[0] != n_states:
            raise ValueError(f"{name} has {checked.shape[0]} states but the chain has {n_states}")
        checked.setflags(write=False)
        out.append(checked)
    return Directions(*out)


# --------------------------------------------------------------------------------------------
# the leakage function


_ROUNDING = 8.0 * np.finfo(float).eps  # a few ulps: what one evaluation of a ratio's log may lose


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
class _Front:
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
        values = (top - bottom + _ROUNDING * (top + bottom) + _SUBNORMAL).max(axis=1)
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
            values = values + _ROUNDING * (np.abs(values) + 1.0)
        if top_zero is not None:  # d = 0: α + log(q + (1 − q)e^{−α}), largest at the largest q
            with np.errstate(divide="ignore"):
                t = np.log(top_zero + (1.0 - top_zero) * u[:, 0])
            values = np.maximum(values, alpha + t + _ROUNDING * (alpha + np.abs(t) + 1.0))
        return np.minimum(values, alpha)

    def supremum(self, eps: float) -> float:
        """The least fixed point α* = L(α*) + ε, or +inf when there is none (see :func:`leakage_supremum`)."""
        if self.q.size == 0:
            return eps
        q, d = self.q, self.d
        u = math.exp(-eps)
        zero = d == 0
        if np.any(q[zero] >= u * (1.0 - _INFINITE_MARGIN)):
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


def _build_front(matrix: np.ndarray, secrets: np.ndarray | None = None, work: WorkCounter | None = None) -> _Front:
    """The Pareto front of prefix points of every ordered pair of rows among ``secrets``.

    One sort per *unordered* pair {i, i'} serves both orders: sorted by Q[i', j]/Q[i, j]
    ascending, the elements with Q[i, j] > Q[i', j] come first (the prefixes of (i, i')) and
    those with Q[i', j] > Q[i, j] come last, in reverse (the prefixes of (i', i)).  Division is
    correctly rounded, so the computed order never reverses two ratios (ties aside).
    """
    k = matrix.shape[0]
    states = np.arange(k) if secrets is None else np.flatnonzero(secrets)
    first, second = np.triu_indices(states.size, k=1)
    first, second = states[first], states[second]
    front_d = np.empty(0)
    front_q = np.empty(0)
    step = max(1, _CHUNK_CELLS // k)
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
        for numerator, denominator, count, columns in (
            (a, b, (key < 1).sum(axis=1), order),
            (b, a, (key > 1).sum(axis=1), order[:, ::-1]),
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
    return _Front(front_d, front_q)


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
    return float(_build_front(matrix).leakage(np.array([alpha]))[0])


# --------------------------------------------------------------------------------------------
# backward and forward matrices of a prior


def _check_prior(prior: object) -> MarkovChainPrior:
    if not isinstance(prior, MarkovChainPrior):
        raise ValueError(f"expected a MarkovChainPrior; got {type(prior).__name__}")
    return prior


def _backward_from(previous: np.ndarray, current: np.ndarray, transition: np.ndarray) -> np.ndarray:
    """P^B[i, j] = previous[j]·P[j, i] / current[i]; rows of states with no mass at t become ``previous``."""
    joint = previous[None, :] * transition.T  # joint[i, j] = Pr(X_{t−1}=j, X_t=i)
    out = np.empty_like(joint)
    possible = current > 0
    out[possible] = joint[possible] / current[possible, None]
    out[~possible] = previous
    return out


def backward_matrix(prior: MarkovChainPrior, t: int | None = None) -> np.ndarray:
    """The backward matrix P^B_t[i, j] = Pr(X_{t−1}=j | X_t=i) of a prior (docs/math.md §10).

    ``P^B_t[i, j] = p_{t−1}[j]·P[j, i] / p_t[i]`` with p_t the marginal of X_t.  For a prior
    with the stationary initial distribution π it is the same at every step (``t`` may be
    omitted); otherwise it depends on t = 2..T.  A state with p_t[i] = 0 is no secret at t; its
    row is set to p_{t−1} so the matrix stays row-stochastic (the stream functions skip it).
    """
    prior = _check_prior(prior)
    if t is None:
        if not prior.stationary_initial:
            raise ValueError("this prior's initial distribution is not stationary: give the time step t = 2..T")
        pi = np.asarray(prior.initial)
        return _backward_from(pi, pi, prior.transition)
    t = check_whole("t", t, minimum=2)
    if t > prior.length:
        raise ValueError(f"t = {t} is beyond the chain's length T = {prior.length}")
    marginals = prior.marginals(t)
    return _backward_from(marginals[t - 2], marginals[t - 1], prior.transition)


def forward_matrix(prior: MarkovChainPrior) -> np.ndarray:
    """The forward matrix P^F[i, j] = Pr(X_{t+1}=j | X_t=i): the transition matrix P (docs/math.md §10)."""
    return np.array(_check_prior(prior).transition)


# --------------------------------------------------------------------------------------------
# BPL, FPL, TPL


def _recurse(fronts: Sequence[_Front], slack: np.ndarray, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """α_1 = ε_1, α_s = L_s(α_{s−1}) + slack_s + ε_s along the schedule (columns: steps; rows: schedules).

    Returns (α, gain) with gain_s = L_s(α_{s−1}) + slack_s (gain_1 = 0): what the neighbours add to
    step s, so that TPL = BPL + (the forward gain) needs no subtraction.  Every sum is rounded up.
    ``fronts[s − 1]`` and ``slack[s − 1]`` serve step s = 1..T−1 (0-based).  Once the front,
    the slack and ε stay the same for the rest and a step repeats its input exactly, every
    later step repeats it too (the map is deterministic), so the rest is filled at once.
    """
    n, steps = eps.shape
    out = np.empty((n, steps))
    gain = np.zeros((n, steps))
    out[:, 0] = eps[:, 0]
    same = np.zeros(steps, dtype=bool)  # same[s]: steps s..T−1 use one front, zero slack and one ε
    for s in range(steps - 2, 0, -1):
        same[s] = (
            fronts[s] is fronts[s - 1]
            and slack[s] == 0
            and slack[s - 1] == 0
            and np.array_equal(eps[:, s + 1], eps[:, s])
            and (s == steps - 2 or same[s + 1])
        )
    for s in range(1, steps):
        gain[:, s] = add_up(fronts[s - 1].leakage(out[:, s - 1]), slack[s - 1])
        out[:, s] = add_up(gain[:, s], eps[:, s])
        if s < steps - 1 and same[s] and np.array_equal(out[:, s], out[:, s - 1]):
            out[:, s + 1 :] = out[:, s : s + 1]
            gain[:, s + 1 :] = gain[:, s : s + 1]
            break
    return out, gain


@dataclass(frozen=True, eq=False)
class _PriorFronts:
    """The fronts one prior needs for a stream of its length: backward per step, forward per step."""

    backward: list[_Front]
    backward_slack: np.ndarray
    forward: list[_Front]
    shortcut_steps: int


@dataclass(frozen=True, eq=False)
class _FrontPlan:
    """Which steps of a non-stationary prior need a backward front of their own (the marginals have not
    settled), decided before any front is built so that the work can be estimated and refused up front."""

    marginals: np.ndarray | None  # None: stationary start, one backward front serves every step
    pi: np.ndarray | None
    rhos: list[float | None]  # step t = 2..T: ρ_t when close enough to π for the stationary front, else None
    given_backward: bool = False  # a backward matrix was given: one front per support, as forward

    def fronts(self) -> int:
        """How many fronts :func:`_prior_fronts` builds (an upper bound: forward fronts shared by support)."""
        if self.marginals is None:
            return 2
        supports = len({row.tobytes() for row in (self.marginals[:-1] > 0)}) if len(self.rhos) else 0
        if self.given_backward:
            return 2 * supports
        own = sum(rho is None for rho in self.rhos)
        return own + (own < len(self.rhos)) + supports


def _plan_fronts(prior: MarkovChainPrior, directions: Directions = Directions()) -> _FrontPlan:
    T = prior.length
    if prior.stationary_initial or T == 1:
        return _FrontPlan(None, None, [])
    marginals = prior.marginals()
    if directions.backward is not None:
        return _FrontPlan(marginals, None, [1.0] * (T - 1), given_backward=True)
    pi = prior.stationary_or_none
    if pi is None:
        return _FrontPlan(marginals, pi, [None] * (T - 1))
    # ρ_t = max(r_{t−1}/s_t, r_t/s_{t−1}), r and s the max and min of p_t/π, for the steps where p_{t−1}
    # and p_t have π's support (else no ρ: the step needs its own front)
    support = pi > 0
    same = np.all((marginals > 0) == support, axis=1)
    ratio = marginals[:, support] / pi[support]
    high, low = ratio.max(axis=1), ratio.min(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.maximum(high[:-1] / low[1:], high[1:] / low[:-1])
    settled = same[:-1] & same[1:] & (rho - 1.0 <= _CONVERGED)
    return _FrontPlan(marginals, pi, [float(r) if ok else None for r, ok in zip(rho, settled)])


def _front_seconds(k: int) -> float:
    """Estimated seconds of one leakage front over K states (its units times their rates)."""
    return _front_units(k) * SECONDS_PER_UNIT["front"] + _FRONT_OVERHEAD_US * SECONDS_PER_UNIT["overhead"]


def _front_units(k: int) -> float:
    """Front units of one front over K states: every unordered pair of rows, each sorted over its K elements."""
    return k * (k - 1) / 2 * k


def _front_estimate(priors: Sequence[MarkovChainPrior], plans: Sequence[_FrontPlan]) -> WorkEstimate:
    """The work of building these priors' fronts and running both recursions once (see :func:`tpl_estimate`)."""
    k = priors[0].n_states
    count = sum(plan.fronts() for plan in plans)
    steps = sum(max(p.length - 1, 0) for p in priors)
    units = {
        "front": count * _front_units(k),
        "overhead": count * _FRONT_OVERHEAD_US + steps * _STEP_OVERHEAD_US,
    }
    nbytes = _FRONT_BYTES + 3 * 8 * sum(p.length for p in priors) * k  # a chunk of pairs; marginals, ρ, the arrays
    each = _front_seconds(k)
    unsettled = max(sum(rho is None for rho in plan.rhos) for plan in plans)
    why = (
        f"; the chain's marginals are still away from its stationary distribution at {unsettled} steps, and each"
        " of those steps needs a front of its own"
        if unsettled
        else ""
    )
    priors_text = f", {len(priors)} priors" if len(priors) > 1 else ""
    dominant = f"{count} leakage fronts over K = {k} states{priors_text}, about {each:.2g} s each{why}"
    if unsettled:
        affordable = max(1, int(WORK_LIMIT_SECONDS / each) // max(1, len(priors)) - 3)
        largest = {"T": affordable + 1}
        advice = (
            f"start the chain from its stationary distribution, shorten the stream to about {affordable + 1} steps,"
            " or merge rarely used states"
        )
    else:
        per_prior = max(1, count // max(1, len(priors)))
        fits = 2
        while fits < k and len(priors) * per_prior * _front_seconds(fits + 1) <= WORK_LIMIT_SECONDS:
            fits += 1
        largest = {"K": fits}
        advice = f"use fewer priors in Θ, or merge rarely used states (K ≤ {fits} fits)"
    return WorkEstimate("this stream", units, nbytes, dominant, advice, largest, limit=WORK_LIMIT_SECONDS)


def tpl_estimate(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], backward: object = None, forward: object = None
) -> WorkEstimate:
    """The work of the TPL of a stream over the prior's length (docs/math.md §10; cost: §2.1), before any work.

    Cheap (O(T·K), no front is built).  Counts "front" units, one per element of every pair of rows
    sorted while a leakage front is built (K(K−1)/2·K per front: every pair of states, each row of K
    elements), one front per distinct matrix (:class:`_FrontPlan`: two for a stationary start, one
    more per step until a non-stationary prior's marginals settle near π), plus the interpreter's
    share per front and per step of the two recursions.  ``largest`` is the longest stream ("T")
    when unsettled steps dominate, else the most states ("K") that fit.  The schedule searches
    (:func:`max_eps_for_tpl`, ``plan_stream``) build the same fronts and then run the recursions
    many times: this counts the fronts and one run.
    """
    priors = stream_priors(prior_or_priors)
    directions = check_directions(backward, forward, priors.n_states)
    return _front_estimate(priors, [_plan_fronts(p, directions) for p in priors])


def tpl_refusal(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], backward: object = None, forward: object = None
) -> str | None:
    """Why TPL over the prior's length would be refused as out of reach (with the estimate), or None.

    Cheap (O(T·K), no front is built): :func:`temporal_privacy_leakage`, :func:`max_eps_for_tpl` and
    :func:`plan_stream` raise ValueError with this message (:func:`tpl_estimate`'s ``message``).  A
    stationary start needs two fronts; a non-stationary one also needs a front per step until its
    marginals settle near π.
    """
    estimate = tpl_estimate(prior_or_priors, backward, forward)
    return None if estimate.fits else estimate.message


def _prepare(
    priors: Sequence[MarkovChainPrior], directions: Directions = Directions(), work: WorkCounter | None = None
) -> list[_PriorFronts]:
    """Every prior's fronts, after checking that building them is within reach."""
    plans = [_plan_fronts(p, directions) for p in priors]
    _front_estimate(priors, plans).check()
    return [_prior_fronts(p, plan, directions, work) for p, plan in zip(priors, plans)]


def _prior_fronts(
    prior: MarkovChainPrior,
    plan: _FrontPlan | None = None,
    directions: Directions = Directions(),
    work: WorkCounter | None = None,
) -> _PriorFronts:
    T = prior.length
    if T == 1:
        return _PriorFronts([], np.zeros(0), [], 0)
    P = prior.transition if directions.forward is None else directions.forward
    plan = _plan_fronts(prior, directions) if plan is None else plan
    cache: dict[tuple[str, bytes], _Front] = {}

    def front(direction: str, matrix: np.ndarray, support: np.ndarray) -> _Front:
        key = (direction, support.tobytes())
        if key not in cache:
            cache[key] = _build_front(matrix, support, work)
        return cache[key]

    if plan.marginals is None:
        pi = np.asarray(prior.initial)
        support = pi > 0
        own = _backward_from(pi, pi, prior.transition) if directions.backward is None else directions.backward
        back = front("backward", own, support)
        fwd = front("forward", P, support)
        return _PriorFronts([back] * (T - 1), np.zeros(T - 1), [fwd] * (T - 1), 0)
    marginals, pi = plan.marginals, plan.pi
    support = marginals > 0
    forward = [front("forward", P, support[t - 1]) for t in range(1, T)]  # FPL_t uses the pairs possible at t
    if directions.backward is not None:
        backward = [front("backward", directions.backward, support[t - 1]) for t in range(2, T + 1)]
        return _PriorFronts(backward, np.zeros(T - 1), forward, 0)
    stationary_front: _Front | None = None
    backward = []
    slack = np.zeros(T - 1)
    shortcut = 0
    for t, rho in zip(range(2, T + 1), plan.rhos):
        previous, current = marginals[t - 2], marginals[t - 1]
        if rho is not None:
            # P^B_t = P^B_π entrywise times p_{t−1}[j]/π[j] · π[i]/p_t[i] ∈ [1/ρ, ρ], so every
            # ratio (1 + c·Q_t[i,S]) / (1 + c·Q_t[i',S]) is at most ρ² times the stationary one
            if stationary_front is None:
                stationary_front = _build_front(_backward_from(pi, pi, prior.transition), pi > 0, work)
            backward.append(stationary_front)
            slack[t - 2] = 2.0 * math.log(max(rho, 1.0)) + 1e-15  # rounding in ρ itself: a few ulps more
            shortcut += 1
        else:
            backward.append(_build_front(_backward_from(previous, current, prior.transition), support[t - 1], work))
    return _PriorFronts(backward, slack, forward, shortcut)


@dataclass(frozen=True, eq=False)
class TemporalLeakage:
    """BPL, FPL and TPL of a stream at every time step (docs/math.md §10, [TPL]); arrays of length T.

    For one prior ``tpl[t] = bpl[t] + fpl[t] − eps[t]``.  For a set Θ each array is the maximum
    over the priors, taken separately, so ``tpl`` (the max of each prior's TPL) can be below
    ``bpl + fpl − eps``.  The stream leaks at most :attr:`max_tpl` about any entry.
    ``shortcut_steps`` counts the steps of a non-stationary prior that has reached its
    stationary distribution to within 1e-12 and uses the stationary backward matrix plus the
    proven slack 2·log ρ_t (≤ 2e-12, plus 1e-15 for rounding) instead of its own (0 for stationary priors; the largest
    count over Θ).
    """

    eps: np.ndarray
    bpl: np.ndarray
    fpl: np.ndarray
    tpl: np.ndarray
    shortcut_steps: int = 0

    def __post_init__(self) -> None:
        for name in ("eps", "bpl", "fpl", "tpl"):
            value = np.array(getattr(self, name), dtype=float)
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def max_tpl(self) -> float:
        return float(self.tpl.max())

    @property
    def worst_entry(self) -> int:
        """The (0-based) time step with the largest TPL."""
        return int(np.argmax(self.tpl))


def backward_privacy_leakage(backward: object, eps: Sequence[float]) -> np.ndarray:
    """BPL_1..BPL_T for the schedule ``eps`` with one backward matrix at every step (docs/math.md §10).

    ``BPL_1 = ε_1`` and ``BPL_t = L(BPL_{t−1}; backward) + ε_t`` (:func:`leakage_function`);
    ``backward`` is K×K row-stochastic, every pair of its rows counts as a secret.
    """
    front = _build_front(check_row_stochastic("the backward matrix", backward))
    schedule = check_schedule(eps)
    return _recurse([front] * (schedule.size - 1), np.zeros(schedule.size - 1), schedule[None, :])[0][0]


def forward_privacy_leakage(forward: object, eps: Sequence[float]) -> np.ndarray:
    """FPL_1..FPL_T for the schedule ``eps``: ``FPL_T = ε_T``, ``FPL_t = L(FPL_{t+1}; forward) + ε_t``."""
    front = _build_front(check_row_stochastic("the forward matrix", forward))
    schedule = check_schedule(eps)
    return _recurse([front] * (schedule.size - 1), np.zeros(schedule.size - 1), schedule[None, ::-1])[0][0][::-1]


def _leakages(
    priors: list[MarkovChainPrior], schedules: np.ndarray, prepared: list[_PriorFronts]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(BPL, FPL, TPL) of a batch of schedules (n, T), each the max over Θ per step."""
    bpl = np.zeros(schedules.shape)
    fpl = np.zeros(schedules.shape)
    tpl = np.zeros(schedules.shape)
    for fronts in prepared:
        backward, _ = _recurse(fronts.backward, fronts.backward_slack, schedules)
        forward, forward_gain = _recurse(fronts.forward[::-1], np.zeros(len(fronts.forward)), schedules[:, ::-1])
        forward, forward_gain = forward[:, ::-1], forward_gain[:, ::-1]
        bpl = np.maximum(bpl, backward)
        fpl = np.maximum(fpl, forward)
        tpl = np.maximum(tpl, add_up(backward, forward_gain))  # BPL + FPL − ε, with FPL − ε kept exactly
    return bpl, fpl, tpl


def temporal_privacy_leakage(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps: object,
    backward: object = None,
    forward: object = None,
    work: WorkCounter | None = None,
) -> TemporalLeakage:
    """BPL, FPL and TPL of a stream over a prior's chain (docs/math.md §10, [TPL]).

    ``eps`` is one number (the same ε at every step) or one ε_t ≥ 0 per time step
    t = 1..T (T = the prior's length).  The backward matrix follows the prior
    (:func:`backward_matrix`: time-varying when the initial distribution is not stationary),
    the forward matrix is the transition matrix; ``backward`` and ``forward`` replace them by
    matrices of the user's (:class:`Directions`: an attacker who knows only one direction).  A pair
    (x, x') counts at step t when both have positive probability p_t.  For a set Θ of priors (same
    length) every value is the maximum over the priors.  Every sum is rounded up, so no value is
    below the exact recursion.  Cost: one O(K³ log K) front per distinct matrix, then
    O(T × front size); a stream whose fronts would take longer than ``WORK_LIMIT_SECONDS`` is
    refused up front with the estimate (:func:`tpl_estimate`).  Given ``work``, the front units
    performed are added to it (never more than the estimate's).
    """
    priors = stream_priors(prior_or_priors)
    directions = check_directions(backward, forward, priors.n_states)
    schedule = check_schedule(eps, priors[0].length)
    prepared = _prepare(priors, directions, work)
    bpl, fpl, tpl = _leakages(priors, schedule[None, :], prepared)
    shortcut = max(f.shortcut_steps for f in prepared)
    return TemporalLeakage(schedule, bpl[0], fpl[0], tpl[0], shortcut)


@dataclass(frozen=True, eq=False)
class StreamFronts:
    """A stream's leakage fronts, built once for its priors and :class:`Directions` (see :func:`stream_fronts`).

    Evaluates BPL, FPL and TPL of many schedules at once, and one step of either recursion — what
    a schedule search (:mod:`puffer_core.stream.schedule`) needs.
    """

    priors: Theta
    directions: Directions
    prepared: tuple[_PriorFronts, ...]

    @property
    def length(self) -> int:
        return self.priors[0].length

    def leakages(self, schedules: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(BPL, FPL, TPL) of a batch of schedules (n, T), each the max over Θ per step (rounded up)."""
        batch = np.atleast_2d(np.asarray(schedules, dtype=float))
        if batch.ndim != 2 or batch.shape[1] != self.length:
            raise ValueError(f"give schedules of T = {self.length} steps as an (n, T) array")
        return _leakages(list(self.priors), batch, list(self.prepared))

    def max_tpl(self, schedules: object) -> np.ndarray:
        """max_t TPL_t of each schedule of a batch (n, T)."""
        return self.leakages(schedules)[2].max(axis=1)

    def backward_gains(self, index: int, alphas: object) -> np.ndarray:
        """What BPL_{t−1} = α_t adds to BPL_t under prior ``index``, for t = 2..T: L(α_t; P^B_t) + slack_t.

        ``alphas`` holds T − 1 values (one per step t = 2..T); steps sharing a front are evaluated together.
        """
        fronts = self.prepared[index]
        gains = _gains(fronts.backward, np.asarray(alphas, dtype=float))
        return add_up(gains, fronts.backward_slack)

    def forward_gains(self, index: int, alphas: object) -> np.ndarray:
        """What FPL_{t+1} = α_t adds to FPL_t under prior ``index``, for t = 1..T−1: L(α_t; P^F)."""
        return _gains(self.prepared[index].forward, np.asarray(alphas, dtype=float))


def _gains(fronts: Sequence[_Front], alphas: np.ndarray) -> np.ndarray:
    """fronts[i].leakage(alphas[i]) for every i, one call per distinct front."""
    if alphas.shape != (len(fronts),):
        raise ValueError(f"give one value per step ({len(fronts)}); got shape {alphas.shape}")
    out = np.empty(len(fronts))
    groups: dict[int, list[int]] = {}
    for i, front in enumerate(fronts):
        groups.setdefault(id(front), []).append(i)
    for members in groups.values():
        out[members] = fronts[members[0]].leakage(alphas[members])
    return out


def stream_fronts(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], backward: object = None, forward: object = None
) -> StreamFronts:
    """The fronts of a finite stream over the priors' length (refused up front when out of reach, as TPL is)."""
    priors = stream_priors(prior_or_priors)
    directions = check_directions(backward, forward, priors.n_states)
    return StreamFronts(priors, directions, tuple(_prepare(priors, directions)))


# --------------------------------------------------------------------------------------------
# unbounded streams and the inverse question


def leakage_supremum(matrix: object, eps: float) -> float:
    """sup_t of the leakage recursion α_1 = ε, α_t = L(α_{t−1}; matrix) + ε (docs/math.md §10).

    With a backward matrix this is sup_t BPL_t, with a forward matrix sup_t FPL_t, of an
    unbounded stream with the same ε at every step.  The value is the least fixed point
    α* = L(α*) + ε, or ``inf`` when the recursion grows without bound — never a truncated number.

    **Proof.**  L is the maximum over the prefix points (d, q) of
    g(α) = log(1 + (e^α−1)q) − log(1 + (e^α−1)d), and g'(α) ≤ e^α q / (1 + (e^α−1)q) ≤ 1, so
    D(α) = α − L(α) never decreases.  The iterates rise (α_2 = L(ε) + ε ≥ α_1, and L is
    increasing) and stay below every fixed point, so they converge to the least fixed point,
    the least root of D(α) = ε, or grow without bound if there is none.  Each point's own
    recursion has the fixed point x = e^α of d·x² + (1 − d − e^ε q)·x − e^ε(1 − q) = 0
    (closed form), and the least fixed point of the maximum is the maximum of the points'
    (each α − g(α) never decreases, so α ≥ α*_point gives g(α) + ε ≤ α).  As α → ∞, α − g(α)
    tends to −log q if d = 0 and to +∞ if d > 0, and approaches −log q strictly from below:
    so the supremum is finite exactly when e^ε·q < 1 for every point with d = 0, i.e. when
    ε < −log m with m the largest mass that one row of ``matrix`` puts on the columns where
    another row is 0 (always finite when m = 0, never when m = 1 — a deterministic chain).
    Values of e^ε·q within 1e-12 of 1 count as unbounded.  The result is certified: α − L(α) ≥ ε
    is checked at the returned α, so rounding never reports a value below the fixed point.
    """
    front = _build_front(check_row_stochastic("the matrix", matrix))
    return front.supremum(check_eps("eps", eps))


def _stationary_fronts(prior: MarkovChainPrior, directions: Directions = Directions()) -> tuple[_Front, _Front]:
    if not prior.stationary_initial:
        raise ValueError(
            "an unbounded stream needs a prior with the stationary initial distribution (initial=None);"
            " for a non-stationary prior use temporal_privacy_leakage over its length"
        )
    pi = np.asarray(prior.initial)
    back = _backward_from(pi, pi, prior.transition) if directions.backward is None else directions.backward
    fwd = prior.transition if directions.forward is None else directions.forward
    return _build_front(back, pi > 0), _build_front(fwd, pi > 0)


def tpl_supremum(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps: float,
    backward: object = None,
    forward: object = None,
) -> float:
    """sup_t TPL_t of an unbounded stream with constant ε: sup BPL + sup FPL − ε (docs/math.md §10).

    The middle entries of a long stream approach it.  Needs stationary priors; ``inf`` when
    either supremum is infinite (:func:`leakage_supremum`).  Θ: the maximum over the priors.
    ``backward``, ``forward``: the matrices of :class:`Directions` (default: the prior's own).
    """
    priors = stream_priors(prior_or_priors, finite=False)
    directions = check_directions(backward, forward, priors.n_states)
    eps = check_eps("eps", eps)
    return max(_supremum_tpl(_stationary_fronts(p, directions), eps) for p in priors)


def leakage_suprema(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps: float,
    backward: object = None,
    forward: object = None,
) -> np.ndarray:
    """sup_t BPL_t, sup_t FPL_t and L(sup FPL; P^F) of an unbounded constant-ε stream, one row per prior.

    Each supremum is the certified least fixed point of :func:`leakage_supremum` (``inf`` when
    there is none); the third column is what the future adds to an entry at that supremum
    (sup FPL − ε, never rounded below).  Stationary priors; ``backward``, ``forward``: :class:`Directions`.
    """
    priors = stream_priors(prior_or_priors, finite=False)
    directions = check_directions(backward, forward, priors.n_states)
    eps = check_eps("eps", eps)
    rows = []
    for prior in priors:
        back, fwd = _stationary_fronts(prior, directions)
        top_back, top_fwd = back.supremum(eps), fwd.supremum(eps)
        gain = float(fwd.leakage(np.array([top_fwd]))[0]) if math.isfinite(top_fwd) else math.inf
        rows.append((top_back, top_fwd, gain))
    return np.array(rows)


def _supremum_tpl(fronts: tuple[_Front, _Front], eps: float) -> float:
    """sup BPL + sup FPL − ε, as sup BPL + L(sup FPL) (= sup FPL − ε at the fixed point), rounded up."""
    back, fwd = fronts
    top_back, top_fwd = back.supremum(eps), fwd.supremum(eps)
    if not (math.isfinite(top_back) and math.isfinite(top_fwd)):
        return math.inf
    return float(add_up(top_back, fwd.leakage(np.array([top_fwd]))[0]))


def _largest_within(evaluate, target: float) -> float:
    """The largest ε in [0, target] with evaluate(ε) ≤ target, for an increasing ``evaluate`` of arrays.

    Grid refinement (33 points a round) until the bracket is below 1e-12 relative (or below 1e-300:
    nothing positive within reach, e.g. a deterministic chain over an unbounded stream); returns the
    lower end, whose value was checked to be within the target.
    """
    lo, hi = 0.0, target
    top = evaluate(np.array([hi]))[0]
    if top <= target:
        return hi
    while hi - lo > 1e-12 * hi and hi > 1e-300:
        grid = np.linspace(lo, hi, 34)[1:-1]
        ok = evaluate(grid) <= target
        below = np.flatnonzero(ok)
        if below.size:
            lo = float(grid[below[-1]])
        above = np.flatnonzero(~ok)
        hi = float(grid[above[0]]) if above.size else hi
    return lo


def max_eps_for_tpl(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    target: float,
    unbounded: bool = False,
    backward: object = None,
    forward: object = None,
) -> float:
    """The largest constant ε whose stream stays within a TPL target (docs/math.md §10).

    Over the prior's length T: max_t TPL_t ≤ ``target``.  ``unbounded=True``: sup_t TPL_t of an
    unbounded stream ≤ ``target`` (stationary priors).  TPL grows with ε and TPL_t ≥ ε, so the
    answer lies in (0, target]; it is found by grid refinement to 1e-12 relative and the value
    returned was checked to meet the target.  ``backward``, ``forward``: see :class:`Directions`.
    """
    unbounded = check_flag("unbounded", unbounded)
    priors = stream_priors(prior_or_priors, finite=not unbounded)
    directions = check_directions(backward, forward, priors.n_states)
    target = check_eps("target", target)
    if unbounded:
        fronts = [_stationary_fronts(p, directions) for p in priors]

        def evaluate(values: np.ndarray) -> np.ndarray:
            return np.array([max(_supremum_tpl(f, float(e)) for f in fronts) if e > 0 else 0.0 for e in values])

    else:
        prepared = _prepare(priors, directions)
        length = priors[0].length

        def evaluate(values: np.ndarray) -> np.ndarray:
            return _leakages(priors, np.repeat(values[:, None], length, axis=1), prepared)[2].max(axis=1)

    return _largest_within(evaluate, target)


# --------------------------------------------------------------------------------------------
# where the supremum turns infinite


@dataclass(frozen=True)
class DivergenceThreshold:
    """sup_t TPL_t of an unbounded stream with constant ε is finite exactly when ε < ``eps``.

    ``eps = −log m`` (``inf`` when m = 0: always finite; 0 when m = 1: never finite).  ``m`` is
    attained by ``direction`` ("backward" or "forward") of prior ``prior_index`` for the states
    ``pair = (i, i')``: row i puts mass m on the states row i' rules out.
    """

    eps: float
    m: float
    direction: str | None
    prior_index: int | None
    pair: tuple[int, int] | None


def excluded_mass(matrix: np.ndarray, secrets: np.ndarray) -> tuple[float, tuple[int, int] | None]:
    """m = max over ordered pairs (i, i') of secret states of Σ_{j : Q[i', j] = 0} Q[i, j], and the pair.

    (0, None) when no row puts mass where another has none.  For i = i' the sum is 0, so the
    diagonal never counts.
    """
    states = np.flatnonzero(secrets)
    rows = np.asarray(matrix, dtype=float)[states]
    masses = rows @ (rows == 0).astype(float).T  # masses[a, b] = Σ_j rows[a, j]·[rows[b, j] = 0]
    if masses.size == 0 or masses.max() <= 0:
        return 0.0, None
    a, b = np.unravel_index(int(np.argmax(masses)), masses.shape)
    return float(masses[a, b]), (int(states[a]), int(states[b]))


def tpl_divergence_threshold(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], backward: object = None, forward: object = None
) -> DivergenceThreshold:
    """The ε from which sup_t TPL_t of an unbounded constant-ε stream is +inf (docs/math.md §10).

    TPL's supremum is sup BPL + sup FPL − ε, infinite when either is; each is infinite exactly
    when ε ≥ −log m of its matrix (P^B of the stationary prior, or P; or the matrices given, see
    :class:`Directions`), over the pairs of states with positive stationary probability.  For a
    set Θ the smallest threshold counts.  Needs priors with the stationary initial distribution,
    as :func:`puffer_core.stream.tpl_supremum`.
    """
    priors = as_theta(prior_or_priors, "tpl_divergence_threshold")
    directions = check_directions(backward, forward, priors.n_states)
    best = DivergenceThreshold(math.inf, 0.0, None, None, None)
    for index, prior in enumerate(priors):
        if not prior.stationary_initial:
            raise ValueError(
                "an unbounded stream needs a prior with the stationary initial distribution (initial=None)"
            )
        secrets = np.asarray(prior.initial) > 0
        back = backward_matrix(prior) if directions.backward is None else directions.backward
        fwd = forward_matrix(prior) if directions.forward is None else directions.forward
        for direction, matrix in (("backward", back), ("forward", fwd)):
            m, pair = excluded_mass(matrix, secrets)
            if m > best.m:
                eps = max(0.0, -math.log(m))
                best = DivergenceThreshold(eps, m, direction, index, pair)
    return best
