"""The law of a count under every protected secret, and its ∞-Wasserstein distances (docs/math.md §17).

A **count query** F = the number of a user's T entries whose state lies in a set A.  For a Markov chain
prior θ, a protected position t and a state x, the law of F given X_t = x is a dynamic programme over
(t, partial count, state): forward α_t(c, x) = Pr[X_t = x, count of A among X_1..X_t = c], backward
β_t(c, x) = Pr[count of A among X_{t+1}..X_T = c | X_t = x], and

    Pr[F = n | X_t = x, θ] = Σ_c α_t(c, x)·β_t(n − c, x) / p_t(x),       p_t(x) = Σ_c α_t(c, x).

It is the Wasserstein mechanism's programme (:mod:`puffer_core.mechanisms.wasserstein`, docs/math.md §15)
with the K-vector of counts folded into one count, so it costs O(T²·K² + T³·K) instead of growing with the
number of count vectors.  Every value is computed in log space (``logaddexp``), so a probability of 10⁻⁵⁰⁰
stays positive and an impossible count is exactly −∞: the **supports are exact**.  Each probability carries
a relative rounding error of at most :attr:`CountLaws.rounding` (a bound counted from the operations).

**Secrets.**  The pairs (X_t = x, X_t = x') protected are those of a
:class:`~puffer_core.secrets.Secrets` value (``pair_mask(K, T)``), at positions t where both values have
positive probability under θ; each ordered pair (law under x, law under x') is one row of
:attr:`CountLaws.pairs`.  Θ may hold chains of different lengths: the laws share the grid 0..T_max.

**W∞ of two laws on the integers** is the smallest w with F_i(c) ≤ F_j(c + w) and F_j(c) ≤ F_i(c + w) for
every c (the quantile coupling).  The comparisons use the distribution function from below where it is
below ½ and the survival function from above otherwise, both in log space, so each is relatively accurate;
a comparison closer than the rounding bound is settled in exact integer arithmetic (:class:`_Exact`: an
i.i.d. chain makes the laws exact shifts of each other, and every such comparison a tie).  Beyond a budget of
big-integer products a near-tie counts as failed, so the w returned is never below the true one, and
``near_tie`` says when that happened.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..priors.models import MarkovChainPrior, as_theta
from ..secrets.values import Secrets, as_secrets
from ..validation import InvalidParameter, check_whole, is_whole
from ..work import WorkCounter, WorkEstimate

_UNIT = 2.0**-53  # double precision's unit roundoff
MAX_COUNT_LENGTH = 2_000  # longest chain whose count laws are built (O(T³K) work)


@dataclass(frozen=True, eq=False)
class CountLaws:
    """The law of the count of ``states`` under every protected secret of every prior (module docstring).

    ``log_laws[l, c]`` = log Pr[F = c | X_t = x, θ] for law l, with its ``prior_index``, 0-based
    ``position`` t and ``state`` x; ``pairs[r] = (i, j)``: the ordered pair (law i under x, law j under x')
    at one position of one prior.  ``log_marginal[θ, c]`` = log Pr[F = c | θ] (no secret).
    ``lengths`` holds each prior's T; every law lives on 0..max(lengths).  ``rounding`` bounds the relative
    error of every probability.
    """

    states: tuple[int, ...]
    n_states: int
    lengths: tuple[int, ...]
    log_laws: np.ndarray
    prior_index: np.ndarray
    position: np.ndarray
    state: np.ndarray
    pairs: np.ndarray
    log_marginal: np.ndarray
    rounding: float

    @property
    def size(self) -> int:
        """How many count values: T_max + 1."""
        return self.log_laws.shape[1] if self.log_laws.size else max(self.lengths) + 1

    @property
    def n_pairs(self) -> int:
        return int(self.pairs.shape[0])

    def laws(self) -> np.ndarray:
        """The laws as probabilities (rows sum to 1)."""
        return np.exp(self.log_laws)

    def support(self, law: int) -> tuple[int, int]:
        """The smallest and largest possible count under law ``law``."""
        possible = np.flatnonzero(np.isfinite(self.log_laws[law]))
        return int(possible[0]), int(possible[-1])

    def describe_pair(self, pair: int) -> str:
        """"entry 3, state 1 rather than 0 (prior 1)" for pair row ``pair``."""
        i, j = self.pairs[pair]
        prior = f" (prior {int(self.prior_index[i]) + 1})" if len(self.lengths) > 1 else ""
        return f"entry {int(self.position[i]) + 1}, state {int(self.state[i])} rather than {int(self.state[j])}{prior}"


def check_count_states(states: object, n_states: int) -> tuple[int, ...]:
    """The states counted: a non-empty list of distinct state indices 0..K−1 (not all K: that count is T)."""
    if isinstance(states, (str, bytes)) or not isinstance(states, (Sequence, np.ndarray, set, frozenset)):
        raise InvalidParameter(f"states (the states counted) must be a list of state indices; got {states!r}")
    values = list(states)
    if not all(is_whole(s) for s in values):
        raise InvalidParameter(
            f"states (the states counted) must be a list of state indices 0..{n_states - 1}; got {states!r}")
    if not values or not all(0 <= int(s) < n_states for s in values):
        raise ValueError(
            f"states (the states counted) must be a non-empty list of state indices 0..{n_states - 1}; got {states!r}"
        )
    out = tuple(sorted({int(s) for s in values}))
    if len(out) == n_states:
        raise ValueError(
            "states (the states counted) names every state: that count is always T and needs no noise; count fewer"
        )
    return out


def count_laws_estimate(n_states: int, length: int, n_priors: int = 1) -> WorkEstimate:
    """The work of :func:`count_laws`: T steps of a K×K log-sum-exp over T+1 counts, forward and backward, and
    one convolution of T+1 counts per position and state ("forward-backward" units)."""
    k, T = check_whole("n_states", n_states), check_whole("length", length)
    n_priors = check_whole("n_priors", n_priors)
    size = T + 1
    units = n_priors * (2.0 * T * size * k * k + T * k * size * size)
    nbytes = 8.0 * (2 * T * size * k + T * k * size + k * size * size) * 2
    return WorkEstimate(
        "the count's laws under every secret",
        {"forward-backward": units, "overhead": n_priors * T * 40.0},
        nbytes,
        f"{k} states over T = {T} entries: T³·K = {T**3 * k:,} cells",
        "use shorter sequences or fewer states",
    )


def _log_matmul(a: np.ndarray, log_p: np.ndarray) -> np.ndarray:
    """log(exp(a) @ exp(log_p)) for a (n, K) and log_p (K, K), in log space (−inf stays −inf)."""
    cells = a[:, :, None] + log_p[None, :, :]
    top = cells.max(axis=1)
    finite = np.isfinite(top)
    safe = np.where(finite, top, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.exp(cells - safe[:, None, :]).sum(axis=1)) + safe
    return np.where(finite, out, -np.inf)


def _logsumexp(a: np.ndarray, axis: int) -> np.ndarray:
    top = a.max(axis=axis, keepdims=True)
    finite = np.isfinite(top)
    safe = np.where(finite, top, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.exp(a - safe).sum(axis=axis, keepdims=True)) + safe
    return np.squeeze(np.where(finite, out, -np.inf), axis=axis)


def _one_prior(prior: MarkovChainPrior, counted: np.ndarray, mask: np.ndarray, size: int) -> tuple:
    """Forward and backward passes of one prior; the laws at the protected positions and the marginal law."""
    k, T = prior.n_states, prior.length
    with np.errstate(divide="ignore"):
        log_p = np.log(np.asarray(prior.transition, dtype=float))
        log_init = np.log(np.asarray(prior.initial, dtype=float))
    shift = counted.astype(int)
    forward = np.full((T, size, k), -np.inf)
    for x in range(k):
        forward[0, shift[x], x] = log_init[x]
    for t in range(1, T):
        moved = _log_matmul(forward[t - 1], log_p)  # (size, K): count so far, next state
        step = np.full((size, k), -np.inf)
        step[:, ~counted] = moved[:, ~counted]
        step[1:, counted] = moved[:-1, counted]
        forward[t] = step
    backward = np.full((T, size, k), -np.inf)
    backward[T - 1, 0, :] = 0.0
    for t in range(T - 2, -1, -1):
        later = np.full((size, k), -np.inf)  # count of A among X_{t+1}.. given X_{t+1} = y, including y
        later[:, ~counted] = backward[t + 1][:, ~counted]
        later[1:, counted] = backward[t + 1][:-1, counted]
        backward[t] = _log_matmul(later, log_p.T)  # Σ_y P[x, y]·later[c, y]
    laws, where = [], []
    n = np.arange(size)
    for t in range(T):
        log_pt = _logsumexp(forward[t], axis=0)  # (K,)
        states = [x for x in range(k) if mask[t, x] and np.isfinite(log_pt[x])]
        if not states:
            continue
        index = n[:, None] - n[None, :]  # (n, c) → n − c
        valid = index >= 0
        for x in states:
            b = np.where(valid, backward[t][np.clip(index, 0, size - 1), x], -np.inf)
            joint = _logsumexp(forward[t][None, :, x] + b, axis=1)
            laws.append(joint - log_pt[x])
            where.append((t, x))
    marginal = _logsumexp(forward[T - 1], axis=1)
    return laws, where, marginal


def count_laws(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    states: object,
    secrets: Secrets | None = None,
    work: WorkCounter | None = None,
) -> CountLaws:
    """The law of the count of ``states`` under every protected secret (module docstring, docs/math.md §17).

    ``states``: the states counted (the set A); ``secrets``: which positions and value pairs are protected
    (None: every entry and every pair).  Refused up front beyond the work limit, with the estimate.
    """
    priors = as_theta(prior_or_priors, "the count's laws")
    k = priors.n_states
    counted_states = check_count_states(states, k)
    chosen = as_secrets(secrets)
    t_max = priors.max_length
    chosen.check_within(t_max)
    if t_max > MAX_COUNT_LENGTH:
        raise ValueError(
            f"the count's laws are built for sequences of at most {MAX_COUNT_LENGTH:,} entries; got T = {t_max:,}"
        )
    estimate = count_laws_estimate(k, t_max, len(priors))
    estimate.check()
    counted = np.zeros(k, dtype=bool)
    counted[list(counted_states)] = True
    size = t_max + 1
    rows: list[np.ndarray] = []
    prior_of: list[int] = []
    position: list[int] = []
    state: list[int] = []
    pairs: list = []
    marginals: list = []
    for index, prior in enumerate(priors):
        pair_mask = chosen.pair_mask(k, prior.length)
        involved = np.asarray(pair_mask.any(axis=2) | pair_mask.any(axis=1))  # (T, K): the states some pair names
        laws, where, marginal = _one_prior(prior, counted, involved, size)
        first = len(rows)
        slot = {tx: first + i for i, tx in enumerate(where)}
        rows.extend(laws)
        prior_of.extend([index] * len(laws))
        position.extend(t for t, _ in where)
        state.extend(x for _, x in where)
        for (t, x) in where:
            for xp in range(k):
                if pair_mask[t, x, xp] and (t, xp) in slot:
                    pairs.append((slot[(t, x)], slot[(t, xp)]))
        marginals.append(marginal)
    if work is not None:
        work.add(7, estimate.units["forward-backward"])  # FORWARD_BACKWARD
    log_laws = np.array(rows) if rows else np.zeros((0, size))
    finite = log_laws[np.isfinite(log_laws)]
    largest = float(np.abs(finite).max()) if finite.size else 0.0
    # every log value went through at most T·(K + 2) + 2(T + 1) log-sum-exp steps, each with a relative error
    # of a few units in the last place of the log value (whose size is at most `largest`)
    rounding = 8.0 * _UNIT * (t_max * (k + 2) + 2 * size) * (1.0 + largest)
    return CountLaws(
        counted_states,
        k,
        priors.lengths,
        log_laws,
        np.array(prior_of, dtype=int),
        np.array(position, dtype=int),
        np.array(state, dtype=int),
        np.array(pairs, dtype=int).reshape(-1, 2),
        np.array(marginals),
        rounding,
    )


@dataclass(frozen=True)
class CountScale:
    """W∞ of the count over every protected pair, and where it is attained.

    ``w`` is in counts; ``pair`` indexes :attr:`CountLaws.pairs` (None when no pair is protected: then w = 0).
    ``near_tie``: a comparison closer than the rounding bound could not be settled in exact arithmetic within
    its budget and was counted as failed, so ``w`` may be one or more above the true W∞ (never below).
    """

    w: int
    pair: int | None
    near_tie: bool = False


class _Exact:
    """The count programme of one prior in exact integer arithmetic, built when a near-tie needs it.

    Each row of the chain is made exact by dividing it by its own sum (as :mod:`.wasserstein` does); then
    α_t(c, x)·(s₀·L^(t−1)) and β_t(c, x)·L^(T−t) are integers.  Only ratios within one position are compared,
    so the scales cancel.
    """

    def __init__(self, prior: MarkovChainPrior, counted: np.ndarray, size: int) -> None:
        k, T = prior.n_states, prior.length
        init = _integer_row(np.asarray(prior.initial, dtype=float))
        rows = [_integer_row(r) for r in np.asarray(prior.transition, dtype=float)]
        common = math.lcm(*(sum(r) for r in rows))
        c = [[a * (common // sum(r)) for a in r] for r in rows]
        sh = [int(v) for v in counted]
        zero = [[0] * k for _ in range(size)]
        forward = [[row[:] for row in zero] for _ in range(T)]
        for x in range(k):
            forward[0][sh[x]][x] = init[x]
        for t in range(1, T):
            prev, step = forward[t - 1], forward[t]
            for n in range(size):
                for x in range(k):
                    a = prev[n][x]
                    if not a:
                        continue
                    for y in range(k):
                        if c[x][y] and n + sh[y] < size:
                            step[n + sh[y]][y] += a * c[x][y]
        backward = [[row[:] for row in zero] for _ in range(T)]
        for x in range(k):
            backward[T - 1][0][x] = 1
        for t in range(T - 2, -1, -1):
            later, step = backward[t + 1], backward[t]
            for n in range(size):
                for y in range(k):
                    b = later[n][y]
                    if not b or n + sh[y] >= size:
                        continue
                    for x in range(k):
                        if c[x][y]:
                            step[n + sh[y]][x] += c[x][y] * b
        self.forward, self.backward, self.size = forward, backward, size
        self.products = T * size * k * k * 2
        self._cdfs: dict[tuple[int, int], tuple[list[int], int]] = {}

    def cdf(self, t: int, x: int) -> tuple[list[int], int]:
        """(Z·F(c) for c = 0..C−1, Z) exactly: the count's distribution function given X_t = x."""
        if (t, x) not in self._cdfs:
            a = [self.forward[t][n][x] for n in range(self.size)]
            b = [self.backward[t][n][x] for n in range(self.size)]
            joint = [0] * self.size
            for i, ai in enumerate(a):
                if ai:
                    for j in range(self.size - i):
                        if b[j]:
                            joint[i + j] += ai * b[j]
            self.products += self.size * self.size
            cumulative, total = [], 0
            for v in joint:
                total += v
                cumulative.append(total)
            self._cdfs[(t, x)] = (cumulative, total)
        return self._cdfs[(t, x)]


def _integer_row(row: np.ndarray) -> list[int]:
    """Integers a_j with row_j = a_j / Σ a exactly (the row divided by its own sum)."""
    fractions = [Fraction(float(v)) for v in row]
    scale = math.lcm(*(f.denominator for f in fractions))
    return [int(f * scale) for f in fractions]


EXACT_PRODUCTS = 400_000  # big-integer products spent settling near-ties exactly (about 2–10 s); beyond, round up


class _Distances:
    """W∞ of pairs of count laws: float comparisons, settled exactly where they are too close to call."""

    def __init__(self, laws: CountLaws, priors: Sequence[MarkovChainPrior]) -> None:
        self.laws, self.priors = laws, priors
        self.tolerance = 4.0 * laws.rounding + 1e-13
        self.counted = np.zeros(laws.n_states, dtype=bool)
        self.counted[list(laws.states)] = True
        self._exact: dict[int, _Exact] = {}
        self._cdfs: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.products = 0
        self.near_tie = False

    def _log_cdfs(self, law: int) -> tuple[np.ndarray, np.ndarray]:
        """log F(c) = log Pr[X ≤ c] and log S(c) = log Pr[X > c], each summed from its own end."""
        if law not in self._cdfs:
            log_law = self.laws.log_laws[law]
            below = np.logaddexp.accumulate(log_law)
            above = np.concatenate([np.logaddexp.accumulate(log_law[::-1])[::-1][1:], [-np.inf]])
            self._cdfs[law] = (below, above)
        return self._cdfs[law]

    def _exact_covers(self, i: int, j: int, cs: np.ndarray, w: int) -> bool | None:
        """F_i(c) ≤ F_j(c + w) for every c of ``cs``, exactly; None when the budget is spent."""
        prior = int(self.laws.prior_index[i])
        if prior not in self._exact:
            exact = _Exact(self.priors[prior], self.counted, self.laws.size)
            if self.products + exact.products > EXACT_PRODUCTS:
                return None
            self._exact[prior] = exact
            self.products += exact.products
        exact = self._exact[prior]
        before = exact.products
        needed = (self.laws.size**2) * 2
        if self.products + needed > EXACT_PRODUCTS:
            return None
        t = int(self.laws.position[i])
        first, z_first = exact.cdf(t, int(self.laws.state[i]))
        second, z_second = exact.cdf(t, int(self.laws.state[j]))
        self.products += exact.products - before
        return all(first[c] * z_second <= second[min(c + w, self.laws.size - 1)] * z_first for c in cs)

    def covers(self, i: int, j: int, w: int) -> bool:
        """F_i(c) ≤ F_j(c + w) for every c (module docstring); a near-tie beyond the budget counts as failed."""
        below_i, above_i = self._log_cdfs(i)
        below_j, above_j = self._log_cdfs(j)
        size = below_i.size
        c = np.arange(max(0, size - 1 - w))  # beyond, F_j(c + w) = 1
        if c.size == 0:
            return True
        d = c + w
        low_half = below_i[c] < math.log(0.5)
        with np.errstate(invalid="ignore"):
            # F_i ≤ F_j: compare distribution functions where F_i < ½, survival functions (S_i ≥ S_j) elsewhere
            gap = np.where(low_half, below_j[d] - below_i[c], above_i[c] - above_j[d])
        gap = np.where(np.isneginf(below_i[c]), np.inf, gap)  # F_i(c) = 0
        both_zero = ~low_half & np.isneginf(above_i[c]) & np.isneginf(above_j[d])
        gap = np.where(both_zero, np.inf, gap)  # S_i = S_j = 0: both are 1 exactly
        gap = np.where(np.isnan(gap), -np.inf, gap)
        if np.any(gap < -self.tolerance):
            return False
        close = c[gap <= self.tolerance]
        if close.size == 0:
            return True
        settled = self._exact_covers(i, j, close, w)
        if settled is None:
            self.near_tie = True
            return False
        return settled

    def shift(self, i: int, j: int) -> int:
        """The smallest w with F_i(c) ≤ F_j(c + w) for every c: a first guess from the float quantile coupling
        (over the counts where F_i is clearly below 1), then a bisection on the certified test (monotone in w)."""
        below_i, _ = self._log_cdfs(i)
        below_j, _ = self._log_cdfs(j)
        c = np.flatnonzero(np.isfinite(self.laws.log_laws[i]) & (below_i < -self.tolerance))
        d = np.searchsorted(below_j, below_i[c], side="left")
        guess = max(0, int(np.max(np.minimum(d, below_i.size - 1) - c))) if c.size else 0
        high = guess
        while not self.covers(i, j, high):
            high = min(below_i.size - 1, 2 * high + 1)
        low = -1  # covers(low) is false (or low = −1)
        if high > 0 and not self.covers(i, j, high - 1):
            return high
        while high - low > 1:
            mid = (low + high) // 2
            if self.covers(i, j, mid):
                high = mid
            else:
                low = mid
        return high


def count_wasserstein(
    laws: CountLaws, prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior]
) -> CountScale:
    """W∞ of the count: the largest over protected pairs and priors (module docstring, docs/math.md §17).

    ``prior_or_priors`` must be the Θ the laws were built from (the exact arithmetic settles near-ties on it).
    Each unordered pair is measured once (W∞ is symmetric).
    """
    priors = as_theta(prior_or_priors, "the count's W∞")
    if priors.lengths != laws.lengths or priors.n_states != laws.n_states:
        raise ValueError("count_wasserstein needs the priors the count laws were built from")
    distances = _Distances(laws, priors)
    best: CountScale | None = None
    seen: set[tuple[int, int]] = set()
    for r, (i, j) in enumerate(laws.pairs):
        key = (min(i, j), max(i, j))
        if key in seen:
            continue
        seen.add(key)
        w = max(distances.shift(i, j), distances.shift(j, i))
        if best is None or w > best.w:
            best = CountScale(w, r)
    if best is None:
        return CountScale(0, None)
    return CountScale(best.w, best.pair, distances.near_tie)
