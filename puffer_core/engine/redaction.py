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

Speed (docs/math.md §16, "The search").  The terms at a distance d come from P^d (the engine's max log-ratio
kernel on its logarithms), and P^d from the nearest power already known and saved squarings of P, so any
distance costs a few matrix products: the search never walks every distance.  Every term is ≥ 0 and
non-increasing in d, so with Lmax(d), Rmax(d) the largest left and right term over the secret pairs,
max(Lmax(d_L), Rmax(d_R)) ≤ leak ≤ Lmax(d_L) + Rmax(d_R); for cliques and stars of pairs (all pairs, within
groups, sensitive states against the rest) Lmax and Rmax cost O(K²) (:mod:`.redaction_terms`).  The first
distances d_L⁰, d_R⁰ with Lmax, Rmax ≤ ε (a binary search each) give a size below which no window can meet ε:
d_L⁰ + d_R⁰ − 1 for a window released on both sides, t + d_R⁰ − 1 or (T − t) + d_L⁰ for one released on one
side only, T for none.  A larger window never leaks more (it releases a subset: docs/math.md §16 proves it),
and withholding everything leaks nothing, so a binary search over the sizes above that bound finds the
smallest that works.  A window is evaluated pair by pair (2K³) only when neither those bounds nor the exact
leak over a few candidate pairs (O(K²), a lower bound) decides it.  Every smaller size leaks more than ε
(``exact`` False: its value is that bound); with ``max_size`` every size up to it is evaluated exactly (the
chart), with ``sizes`` the stated ones.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..priors.models import as_theta
from ..secrets.values import ALL_SECRETS, Secrets
from ..validation import check_eps, check_whole
from ..work import WorkCounter, one_blas_thread
from .chain_terms import TAIL_TOL
from .redaction_terms import WindowTerms

VISIT = 48  # spans of at most this many splits get their tops built in increasing distance first
ZERO = TAIL_TOL  # a leak at most this is reported as nothing revealed (a strong stationary time)


@dataclass(frozen=True, eq=False)
class RedactionPlan:
    """The smallest window to withhold around entry ``node`` (0-based) so that the rest leaks ≤ ``eps``.

    ``before`` and ``after``: how many entries the window withholds on each side (``None`` when the
    target cannot be met even by withholding the whole sequence but the entry itself — it then is the
    whole sequence); ``size`` = before + 1 + after; ``leakage`` its leak.  ``sizes`` and ``leakages``:
    the chart, ``leakages[i]`` the smallest leak of a window of ``sizes[i]`` entries — every size 1..len(sizes),
    or with ``redaction_plan(sizes=...)`` the stated sizes.
    ``zero_size``: the smallest size with leak ≤ 10⁻¹² among those computed (None if none).  ``feasible``:
    whether some window meets the target.  ``secrets``: the pairs whose leakage counts.  ``exact[i]``: whether
    ``leakages[i]`` is the exact smallest leak of size ``sizes[i]``, or (False) a proven lower bound — sizes the
    search ruled out by bounds alone leak more than ε.
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
    exact: np.ndarray | None = None

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


class _Leaks:
    """The leak of a window, and the bounds on its terms, over every prior of Θ."""

    def __init__(self, terms: list[WindowTerms], t: int, t_max: int) -> None:
        self.terms = terms
        self.t, self.t_max = t, t_max
        self._first: dict[tuple[float, bool], int | None] = {}

    def top(self, d: int, left: bool) -> float:
        value = max((term.top(d, left) for term in self.terms), default=0.0)
        for term in self.terms:  # the other side from the same power, while its logarithms are at hand
            term.top(d, not left)
        return value

    def visit(self, lo: int, hi: int, b: int, every: bool = False) -> None:
        """Build the tops of the splits d_L = lo..hi of size b (d_R = b + 1 − d_L) in increasing order of
        distance, so that each new power of P is one product from the last — when ``every`` split will be visited,
        or the span is short (a long one is usually decided by its first splits)."""
        if hi - lo > VISIT and not every:
            return
        for d in sorted(set(range(lo, hi + 1)) | {b + 1 - dl for dl in range(lo, hi + 1)}):
            self.top(d, True)

    def leak(self, dl: int, dr: int) -> float:
        return max((term.leak(dl, dr) for term in self.terms), default=0.0)

    def lower(self, dl: int, dr: int) -> tuple[float, bool]:
        """(a lower bound on the leak of window (dl, dr), whether it is the leak itself)."""
        found = [term.lower(dl, dr) for term in self.terms]
        return max((v for v, _ in found), default=0.0), all(e for _, e in found)

    def first_within(self, eps: float, left: bool) -> int | None:
        key = (eps, left)
        if key not in self._first:
            self._first[key] = self._search(eps, left)
        return self._first[key]

    def _search(self, eps: float, left: bool) -> int | None:
        """The first distance d whose largest term is ≤ ε on that side (None: none before the side runs out);
        binary search over the non-increasing terms, doubling first."""
        last = self.t - 1 if left else self.t_max - self.t
        if last < 1:
            return None
        hi = 1
        while hi < last and self.top(hi, left) > eps:
            hi = min(last, 2 * hi)
        if self.top(hi, left) > eps:
            return None
        lo = hi // 2 if hi > 1 else 0  # top(lo) > ε (or lo = 0)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if self.top(mid, left) <= eps else (mid, hi)
        return hi


def redaction_plan(prior_or_priors: object, node: int, eps: float, secrets: Secrets | None = None,
                   max_size: int | None = None, work: WorkCounter | None = None,
                   sizes: Iterable[int] | None = None) -> RedactionPlan:
    """The smallest window around entry ``node`` (0-based) to withhold so that the rest leaks ≤ ``eps``
    about it (module docstring).

    ``prior_or_priors``: a :class:`MarkovChainPrior` or Θ; ``secrets``: the value pairs whose leakage counts
    (:class:`~puffer_core.secrets.Secrets`; positions are not used: the node is given).  ``eps`` may be 0
    (nothing revealed: only a strong stationary time gets there).  Without ``max_size`` the sizes the bounds
    rule out are not evaluated (their ``leakages`` are the bound ε, ``exact`` False); with it, every size up to
    ``max_size`` is evaluated exactly — the chart of leakage against window size.  ``sizes`` instead: the plan
    of the planner (its smallest window) with the chart evaluated exactly at these sizes only, plus the plan's
    own size (``RedactionPlan.sizes`` lists them; :func:`chart_sizes` states a set).
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
    wanted = None if sizes is None else _stated_sizes(sizes, t_max, max_size)
    counter = work if work is not None else WorkCounter()
    use = chosen.pair_matrix(priors.n_states).reshape(-1)
    t = node + 1
    with one_blas_thread():
        leaks = _Leaks([WindowTerms(p, t, use, counter) for p in priors if t <= p.length], t, t_max)
        if wanted is not None:
            return _stated_chart(leaks, wanted, node, eps, chosen)
        first = 1 if max_size is not None else _first_size(leaks, eps, t, t_max)
        limit = t_max if max_size is None else max_size
        leakages = [eps] * (first - 1)  # ruled out: each of these sizes leaks more than ε
        exact = [False] * (first - 1)
        splits: list[tuple[int, int]] = [(1, 1)] * (first - 1)
        answer: int | None = None
        for b in range(first, limit + 1):
            value, split = _smallest(leaks, b, t, t_max, None if max_size is not None else eps, max_size is None)
            leakages.append(value)
            exact.append(True)
            splits.append(split)
            if answer is None and value <= eps:
                answer = b
                if max_size is None:
                    break
    sizes = np.arange(1, len(leakages) + 1)
    raw = np.array(leakages)
    values = np.where(exact, np.minimum.accumulate(np.where(exact, raw, np.inf)), raw)
    zero = np.flatnonzero(np.array(exact) & (values <= ZERO))
    feasible = answer is not None
    pick = (answer if answer is not None else len(leakages)) - 1
    candidates = np.flatnonzero(np.array(exact) & (raw <= values[pick]))
    pick = int(candidates[0]) if candidates.size else pick  # the smallest window with that leak
    dl, dr = splits[pick]
    return RedactionPlan(node, eps, dl - 1, dr - 1, float(raw[pick]), sizes, values,
                         int(zero[0]) + 1 if zero.size else None, feasible, chosen, np.array(exact))


def chart_sizes(t_max: int, limit: int = 120, count: int = 32) -> tuple[int, ...]:
    """A stated set of window sizes for the chart: every size up to 12, then about ``count`` sizes spread
    geometrically up to min(T, ``limit``) (docs/math.md §16: the leakage between two of them lies between their
    values, as it never grows with the size)."""
    top = max(1, min(int(t_max), int(limit)))
    spread = np.unique(np.round(np.geomspace(1, top, max(2, count))).astype(int))
    return tuple(sorted(set(range(1, min(12, top) + 1)) | {int(v) for v in spread}))


def _stated_sizes(sizes: Iterable[int], t_max: int, max_size: int | None) -> list[int]:
    if max_size is not None:
        raise ValueError("give max_size (every size up to it) or sizes (a stated set of sizes), not both")
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Iterable):
        raise TypeError(f"sizes must be a list of window sizes (whole numbers 1..{t_max}); got {sizes!r}")
    wanted = sorted({check_whole("each window size", b, minimum=1, maximum=t_max) for b in sizes})
    if not wanted:
        raise ValueError(f"sizes is empty: give at least one window size between 1 and {t_max}")
    return wanted


def _stated_chart(leaks: _Leaks, wanted: list[int], node: int, eps: float, chosen: Secrets) -> RedactionPlan:
    """The planner's window, and the smallest leak of every size of ``wanted`` (and of the window's own size),
    each exact; a larger size never leaks more, so the values are made non-increasing (rounding only)."""
    t, t_max = leaks.t, leaks.t_max
    first = _first_size(leaks, eps, t, t_max)
    value, (dl, dr) = _smallest(leaks, first, t, t_max, eps)
    chart = {b: _smallest(leaks, b, t, t_max, None)[0] for b in wanted if b != first}
    chart[first] = value
    order = sorted(chart)
    values = np.minimum.accumulate(np.array([chart[b] for b in order]))
    zero = [b for b, v in zip(order, values) if v <= ZERO]
    return RedactionPlan(node, eps, dl - 1, dr - 1, float(value), np.array(order), values,
                         zero[0] if zero else None, value <= eps, chosen, np.ones(len(order), dtype=bool))


def _first_size(leaks: _Leaks, eps: float, t: int, t_max: int) -> int:
    """The smallest size with a window that leaks ≤ ε: below the bound of :func:`_smallest_possible` none does,
    withholding everything (size T) always does, and a larger window never leaks more (it releases a subset
    of what a smaller one releases), so a binary search over the sizes between finds it."""
    low = _smallest_possible(leaks, eps, t, t_max) - 1  # every size ≤ low leaks more than ε
    high = t_max
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if _possible(leaks, middle, t, t_max, eps) else (middle, high)
    return high


def _smallest_possible(leaks: _Leaks, eps: float, t: int, t_max: int) -> int:
    """A size below which no window can leak ≤ ε (module docstring): from the first distances whose largest
    terms are within ε on each side."""
    dl0, dr0 = leaks.first_within(eps, True), leaks.first_within(eps, False)
    options = [t_max]
    if dl0 is not None and dr0 is not None:
        options.append(dl0 + dr0 - 1)
    if dr0 is not None:
        options.append(t + dr0 - 1)  # nothing released before t
    if dl0 is not None:
        options.append(t_max - t + dl0)  # nothing released after t
    if t == 1:
        options.append(t_max - t + 1 if dr0 is None else dr0)
    return max(1, min(options))


def _span(leaks: _Leaks, b: int, t: int, t_max: int, eps: float) -> tuple[int, int]:
    """The left distances d_L of the windows of b entries holding t (d_R = b + 1 − d_L) that may leak ≤ ε:
    a released entry nearer than d_L⁰ (or d_R⁰) leaks more than ε on its own, and with no such first distance
    on a side that side must release nothing."""
    lo, hi = max(1, b + t - t_max), min(t, b)
    dl0, dr0 = leaks.first_within(eps, True), leaks.first_within(eps, False)
    lo = max(lo, t if dl0 is None else min(dl0, t))
    hi = min(hi, b + t - t_max if dr0 is None else b + 1 - dr0)
    return lo, hi


def _possible(leaks: _Leaks, b: int, t: int, t_max: int, eps: float) -> bool:
    """Whether some window of b entries holding t leaks ≤ ε: a window whose bound Lmax + Rmax is within ε
    decides it at once; windows whose lower bound max(Lmax, Rmax) or whose candidate pairs' leak is above ε
    are passed over; the rest are evaluated pair by pair, the most promising first."""
    lo, hi = _span(leaks, b, t, t_max, eps)
    for dl in sorted({lo, (lo + hi) // 2, hi}) if lo <= hi else ():  # often decided at once, before the visit
        if leaks.top(dl, True) + leaks.top(b + 1 - dl, False) <= eps:
            return True
    leaks.visit(lo, hi, b)
    open_ = []
    for dl in range(lo, hi + 1):
        dr = b + 1 - dl
        left, right = leaks.top(dl, True), leaks.top(dr, False)
        if left + right <= eps:
            return True
        if max(left, right) <= eps:
            open_.append((left + right, dl, dr))
    rest = []
    for _, dl, dr in sorted(open_):
        bound, exact = leaks.lower(dl, dr)
        if bound <= eps:
            if exact:
                return True
            rest.append((bound, dl, dr))
    return any(leaks.leak(dl, dr) <= eps for _, dl, dr in sorted(rest))


def _smallest(leaks: _Leaks, b: int, t: int, t_max: int, eps: float | None,
              bounds: bool = True) -> tuple[float, tuple[int, int]]:
    """min over the windows of b entries holding node t (d_L + d_R = b + 1) of their leak, and the split.

    With ``eps`` (a size known to have a window within ε) only the windows of :func:`_span` can reach the
    minimum.  Windows are visited by their lower bound max(Lmax, Rmax), the one with the smallest upper bound
    Lmax + Rmax first; a window is evaluated pair by pair only when neither that bound nor its candidate
    pairs' leak reaches the best leak found.
    """
    lo, hi = max(1, b + t - t_max), min(t, b)
    if eps is not None:
        lo, hi = _span(leaks, b, t, t_max, eps)
    leaks.visit(lo, hi, b, every=True)
    order = []
    for dl in range(lo, hi + 1):
        dr = b + 1 - dl
        left, right = leaks.top(dl, True), leaks.top(dr, False)
        order.append((max(left, right), left + right, dl, dr))
    order.sort()
    best, split = math.inf, (order[0][2], order[0][3])
    if not bounds:  # every size of the chart: the kernels kept by distance serve the next sizes
        for low, high, dl, dr in order:
            if low >= best:
                break
            value = high if high <= low else leaks.leak(dl, dr)  # high ≤ low: one side adds nothing
            if value < best:
                best, split = value, (dl, dr)
        return best, split
    bounded = []
    for low, high, dl, dr in order:
        if low >= best:
            break
        value, exact = (high, True) if high <= low else leaks.lower(dl, dr)
        if exact:
            if value < best:
                best, split = value, (dl, dr)
        else:
            bounded.append((max(low, value), dl, dr))
    for bound, dl, dr in sorted(bounded):
        if bound >= best:
            break
        value = leaks.leak(dl, dr)
        if value < best:
            best, split = value, (dl, dr)
    return best, split
