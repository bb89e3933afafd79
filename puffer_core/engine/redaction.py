"""The redaction planner: how many entries around a protected one to withhold (docs/math.md §16).

Release every entry of a user's sequence unchanged except a window H ∋ t, withheld.  What the released
entries L (the complement of H) reveal about X_t is exactly the engine's inner term for that one split
(docs/math.md §2.1): with the nearest released entries at t − d_L and t + d_R,

    leak(d_L, d_R) = sup_θ max_{(x, x') secret} [ left_{θ,t}(d_L)[x, x'] + right_θ(d_R)[x, x'] ],

the same left and right terms (:class:`puffer_core.engine.chain_terms.ChainTerms`) that the a(b) curve
uses, the maximum over pairs *inside* (one window must serve every pair) and a side with no released
entry contributing 0.  The window withholds d_L − 1 entries before t and d_R − 1 after it.  The leakage of
a window size b is the smallest leak over the windows of b entries holding t, non-increasing in b; the
planner returns the smallest window with leak ≤ ε.  A leak of 0 (to within 10⁻¹²) needs P^{d} with equal
rows on both sides — a strong stationary time; a chain that only mixes never gets exactly there.

Speed: the tables grow distance by distance only as far as the search needs; each window's leak is
bounded by max(Lmax(d_L), Rmax(d_R)) ≤ leak ≤ Lmax(d_L) + Rmax(d_R) (every term is ≥ 0; Lmax, Rmax the
largest term over the secret pairs), and only windows whose lower bound beats the best found are
evaluated pair by pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..priors.models import MarkovChainPrior, as_theta
from ..secrets.values import ALL_SECRETS, Secrets
from ..validation import check_eps, check_whole
from ..work import SPLIT, WorkCounter, one_blas_thread
from .chain_terms import TAIL_TOL, ChainProfile
from .kernels import log_or_neg

ZERO = TAIL_TOL  # a leak at most this is reported as nothing revealed (a strong stationary time)


@dataclass(frozen=True, eq=False)
class RedactionPlan:
    """The smallest window to withhold around entry ``node`` (0-based) so that the rest leaks ≤ ``eps``.

    ``before`` and ``after``: how many entries the window withholds on each side (``None`` when the
    target cannot be met even by withholding the whole sequence but the entry itself — it then is the
    whole sequence); ``size`` = before + 1 + after; ``leakage`` its leak.  ``sizes`` and ``leakages``:
    the smallest leak of every window size 1..len(sizes) (the chart), ``leakages[i]`` for size i + 1.
    ``zero_size``: the smallest size with leak ≤ 10⁻¹² among those computed (None if none).  ``feasible``:
    whether some window meets the target.  ``secrets``: the pairs whose leakage counts.
    """

    node: int
    eps: float
    before: int
    after: int
    leakage: float
    sizes: np.ndarray
    leakages: np.ndarray
    zero_size: int | None
    feasible: bool
    secrets: Secrets

    @property
    def size(self) -> int:
        return self.before + 1 + self.after

    def describe(self) -> str:
        if not self.feasible:
            return (f"no window around entry {self.node + 1} keeps the leakage within ε = {self.eps:g}: even"
                    f" withholding {self.size} entries leaves {self.leakage:.4g}")
        zero = " (nothing is revealed: a strong stationary time)" if self.leakage <= ZERO else ""
        return (f"withhold {self.before} entr{'y' if self.before == 1 else 'ies'} before entry {self.node + 1}"
                f" and {self.after} after it ({self.size} in all): the rest reveals {self.leakage:.4g} ≤ ε ="
                f" {self.eps:g}{zero}")


class _Terms:
    """One prior's left and right terms at node t (1-based) for the secret pairs, grown on demand.

    ``side(d, left)`` is the term row over the secret pairs at distance d: left (released entry t − d)
    or right (t + d); zeros where that entry does not exist (a side with no released entry adds 0).
    """

    def __init__(self, prior: MarkovChainPrior, t: int, use: np.ndarray, work: WorkCounter) -> None:
        self.T = prior.length
        self.t = t
        self.terms = ChainProfile(prior, prior.length - 1, work).terms
        self.marg = prior.marginals(t)
        k = prior.n_states
        lp = log_or_neg(self.marg[t - 1])
        mass = self.marg[t - 1] > 0
        pairs = mass[:, None] & mass[None, :] & use.reshape(k, k)
        np.fill_diagonal(pairs, False)
        self.pairs = np.flatnonzero(pairs.reshape(-1))
        self.shift = (lp[None, :] - np.where(mass, lp, 0.0)[:, None]).reshape(-1)[self.pairs]
        self.work = work
        self.rows: dict[tuple[int, bool], np.ndarray] = {}

    def exists(self, d: int, left: bool) -> bool:
        return d <= self.t - 1 if left else self.t + d <= self.T

    def side(self, d: int, left: bool) -> np.ndarray:
        key = (d, left)
        if key not in self.rows:
            if not self.pairs.size or not self.exists(d, left):
                self.rows[key] = np.zeros(max(1, self.pairs.size))
            else:
                self.terms.ensure(d, None, None, self.work)
                if left:
                    support = self.marg[self.t - d - 1] > 0
                    self.rows[key] = self.terms.h_table(d, support)[d - 1][self.pairs] + self.shift
                else:
                    self.rows[key] = self.terms.right_table(d)[d - 1][self.pairs]
        return self.rows[key]

    def most(self, d: int, left: bool) -> float:
        """The largest term over the secret pairs at distance d (0 where that side has no released entry)."""
        return float(self.side(d, left).max())


class _Leaks:
    """The leak of every window, with bounds from the terms already computed (module docstring)."""

    def __init__(self, terms: list[_Terms], work: WorkCounter) -> None:
        self.terms = terms
        self.work = work
        self.known = 0  # distances 1..known have their terms for every prior
        self.top = {True: [0.0], False: [0.0]}  # top[left][d]: the largest term at distance d, d ≤ known

    def grow(self, d: int) -> None:
        while self.known < d:
            self.known += 1
            for left in (True, False):
                self.top[left].append(max((term.most(self.known, left) for term in self.terms), default=0.0))

    def bound(self, d: int, left: bool, none: bool) -> tuple[float, float]:
        """(lower, upper) bounds on the largest term at distance d: exact once known; else 0 and the value at
        the largest known distance (the terms are non-increasing in d).  ``none``: no prior has that entry."""
        if none:
            return 0.0, 0.0
        if d <= self.known:
            return self.top[left][d], self.top[left][d]
        return 0.0, (self.top[left][self.known] if self.known else math.inf)

    def leak(self, dl: int, dr: int) -> float:
        self.grow(max(dl, dr))
        value = 0.0
        for term in self.terms:
            if term.pairs.size:
                self.work.add(SPLIT, float(term.pairs.size))
                value = max(value, float((term.side(dl, True) + term.side(dr, False)).max()))
        return value


def redaction_plan(prior_or_priors: object, node: int, eps: float, secrets: Secrets | None = None,
                   max_size: int | None = None, work: WorkCounter | None = None) -> RedactionPlan:
    """The smallest window around entry ``node`` (0-based) to withhold so that the rest leaks ≤ ``eps``
    about it (module docstring), with the leakage of every window size up to the answer (or ``max_size``).

    ``prior_or_priors``: a :class:`MarkovChainPrior` or Θ; ``secrets``: the value pairs whose leakage counts
    (:class:`~puffer_core.secrets.Secrets`; positions are not used: the node is given).  ``eps`` may be 0
    (nothing revealed: only a strong stationary time gets there).
    """
    priors = as_theta(prior_or_priors, "the redaction planner")
    chosen = ALL_SECRETS if secrets is None else secrets
    if not isinstance(chosen, Secrets):
        raise TypeError(f"secrets must be a Secrets value or None; got {type(chosen).__name__}")
    eps = check_eps("eps", eps, allow_zero=True)
    t_max = max(p.length for p in priors)
    node = check_whole("node", node, minimum=0, maximum=t_max - 1)
    if max_size is not None:
        max_size = check_whole("max_size", max_size, maximum=t_max)
    counter = work if work is not None else WorkCounter()
    use = chosen.pair_matrix(priors.n_states).reshape(-1)
    t = node + 1
    with one_blas_thread():
        leaks = _Leaks([_Terms(p, t, use, counter) for p in priors if t <= p.length], counter)
        limit = t_max if max_size is None else max_size
        leakages: list[float] = []
        splits: list[tuple[int, int]] = []
        answer: int | None = None
        for b in range(1, limit + 1):
            value, split = _smallest(leaks, b, t, t_max)
            leakages.append(value)
            splits.append(split)
            if answer is None and value <= eps:
                answer = b
                if max_size is None:
                    break
    sizes = np.arange(1, len(leakages) + 1)
    values = np.minimum.accumulate(np.array(leakages))  # |H| ≤ b allows every smaller window
    zero = np.flatnonzero(values <= ZERO)
    feasible = answer is not None
    pick = (answer if feasible else len(leakages)) - 1
    pick = int(np.flatnonzero(np.array(leakages) <= values[pick])[0])  # the smallest window with that leak
    dl, dr = splits[pick]
    return RedactionPlan(node, eps, dl - 1, dr - 1, float(leakages[pick]), sizes, values,
                         int(zero[0]) + 1 if zero.size else None, feasible, chosen)


def _smallest(leaks: _Leaks, b: int, t: int, t_max: int) -> tuple[float, tuple[int, int]]:
    """min over the windows of b entries holding node t (d_L + d_R = b + 1) of their leak, and the split.

    Windows are visited by their lower bound; a window is evaluated pair by pair only when its lower
    bound beats the best leak found and its bounds do not already pin it down.
    """
    lo, hi = max(1, b + t - t_max), min(t, b)
    order = []
    for dl in range(lo, hi + 1):
        dr = b + 1 - dl
        l_low, l_high = leaks.bound(dl, True, dl >= t)
        r_low, r_high = leaks.bound(dr, False, t + dr > t_max)
        order.append((max(l_low, r_low), l_high + r_high, dl, dr))
    order.sort()
    best, split = math.inf, (order[0][2], order[0][3])
    for low, high, dl, dr in order:
        if low >= best:
            break
        value = high if high <= low else leaks.leak(dl, dr)
        if value < best:
            best, split = value, (dl, dr)
    return best, split
