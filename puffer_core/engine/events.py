"""a(b) for event secrets: "in a state of A at some entry of a window W" against "never in A during W"
(docs/math.md §16; [ST]: PriSTE, Cao, Xiao, Xiong & Bai, ICDE 2019).

Fix a window W = [u, v] of entries (1-based) and a prior θ, with s = "X_t ∈ A for some t ∈ W" and
s' = "X_t ∉ A for every t ∈ W", both of positive probability (otherwise θ holds no such secret).

- **H must hold the window.**  Given s', an entry of W in A is impossible; given s it is possible
  wherever p_t(A) > 0.  So a split whose L holds such an entry has a† = ∞: a(b) = ∞ for b below the
  number of those entries.  The window is first trimmed to the span W' of the entries where A is
  possible under some θ (outside it, within W, A is impossible under every θ, so the events over W and
  W' are the same almost surely); below |W'| the curve reports ∞.
- **With H ⊇ W' only the nearest L node on each side matters**, at u − d_L and v + d_R (Markov: given
  those nodes, the farther ones are independent of the window), and a†(d_L, d_R) is non-increasing in
  each distance (the farther node is the nearer one passed through a kernel that does not depend on the
  secret).  So the best H with |H| ≤ b is a window of b entries around W', and

      a†(d_L, d_R) = sup_θ max_{l, r} | log [Pr(l, r | s) / Pr(l, r | s')] |,
      Pr(l, r, s)  ∝ (P^{d_L} V P^{d_R})[l, r],   Pr(l, r, s') ∝ (P^{d_L} U P^{d_R})[l, r],

  over l with p_{u−d_L}[l] > 0, the factor p_{u−d_L}[l] cancelling; U[x, y] = Pr(X_v = y, no entry of
  W' in A | X_u = x) and V[x, y] = Pr(X_v = y, some entry in A | X_u = x), both built entry by entry
  from sums of non-negative terms (U_1 = D_Ā, V_1 = D_A; U ← U·P·D_Ā, V ← V·P + U·P·D_A: no
  subtraction).  A side with no L node keeps p_u (left) or sums over y (right).  Unlike a value pair
  the ratio does not split into a left and a right term: the two observations are joined through the
  window.

**Exact or bound.**  Every split around W' is evaluated ("exact": the min over every H, up to rounding)
when the work fits; past a distance D_c where P^{D_c} has equal rows to within 10⁻¹² over the reachable
states, the terms at D_c are used — an upper bound, since a† is non-increasing.  When every split is
out of reach, only the balanced split of each b is evaluated: a sound upper bound (the minimum over a
subset of splits), and the curve says so.  When W' has an interior entry where A is impossible under
every θ, H is still made to hold it: an upper bound, said too.
"""

from __future__ import annotations

import math

import numpy as np

from ..priors.models import TINY, MarkovChainPrior
from ..secrets.events import EventSecrets
from ..work import PRODUCT, Progress, ProgressCallback, WorkCounter, WorkEstimate
from .chain_terms import lifted_cutoff
from .curve import InfluenceCurve


def _window_kernels(P: np.ndarray, in_a: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(U, V) over a window of n entries: Pr(X_last = y, none / some of the window in A | X_first = x)."""
    out_a = (~in_a).astype(float)
    ind_a = in_a.astype(float)
    U = np.diag(out_a)
    V = np.diag(ind_a)
    for _ in range(n - 1):
        UP = U @ P
        V = V @ P + UP * ind_a[None, :]
        U = UP * out_a[None, :]
    return U, V


class _Prior:
    """One prior's pieces for one window: marginals, window kernels, the powers of P (capped at D_c)."""

    def __init__(self, prior: MarkovChainPrior, in_a: np.ndarray, u: int, v: int, cap: int) -> None:
        self.T = prior.length
        self.P = np.asarray(prior.transition, dtype=float)
        self.marg = prior.marginals()
        self.u, self.v = u, v
        self.U, self.V = _window_kernels(self.P, in_a, v - u + 1)
        structure = (self.P > 0).astype(float)
        self.U_s, self.V_s = _window_kernels(structure, in_a, v - u + 1)
        self.U_s, self.V_s = self.U_s > 0, self.V_s > 0
        pu = self.marg[u - 1]
        self.pr_not = float(pu @ self.U.sum(axis=1))
        self.pr_some = float(pu @ self.V.sum(axis=1))
        self.secret = bool((pu > 0) @ self.U_s.any(axis=1)) and bool((pu > 0) @ self.V_s.any(axis=1))
        if self.secret and (self.pr_not < TINY or self.pr_some < TINY):
            raise ValueError("the probability of the event (or of its absence) underflows double precision;"
                             " the exact computation would be wrong — set such tiny transition probabilities to 0")
        self.cap = cap
        self.powers = [np.eye(len(pu))]
        self.structs = [np.eye(len(pu), dtype=bool)]

    def power(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        d = min(d, self.cap)
        while len(self.powers) <= d:
            self.powers.append(self.powers[-1] @ self.P)
            self.structs.append((self.structs[-1].astype(float) @ (self.P > 0).astype(float)) > 0)
        return self.powers[d], self.structs[d]

    def value(self, dl: int, dr: int, work: WorkCounter | None) -> float:
        """a†_θ(d_L, d_R): the largest |log ratio| over the nearest L nodes' values (module docstring)."""
        u, v = self.u, self.v
        if dl <= u - 1:
            left, left_s = self.power(dl)
            rows = self.marg[u - dl - 1] > 0
            left, left_s = left[rows], left_s[rows]
        else:
            left, left_s = self.marg[u - 1][None, :], (self.marg[u - 1] > 0)[None, :]
        if v + dr <= self.T:
            right, right_s = self.power(dr)
        else:
            right, right_s = np.ones((self.P.shape[0], 1)), np.ones((self.P.shape[0], 1), dtype=bool)
        some = left @ self.V @ right
        none = left @ self.U @ right
        if work is not None:
            work.add(PRODUCT, 2.0 * left.shape[0] * self.P.shape[0] * (self.P.shape[0] + right.shape[1]))
        f = left_s.astype(float)
        some_s = ((f @ self.V_s.astype(float)) @ right_s.astype(float)) > 0
        none_s = ((f @ self.U_s.astype(float)) @ right_s.astype(float)) > 0
        for values, support in ((some, some_s), (none, none_s)):
            if np.any(support & ~(values >= TINY)):
                raise ValueError("a probability of the window's neighbours underflows double precision; the"
                                 " exact computation would be wrong — set such tiny transition probabilities to 0")
        if np.any(some_s != none_s):
            return math.inf  # an observation possible under one secret and impossible under the other
        keep = some_s
        if not keep.any():
            return 0.0
        ratio = np.log(some[keep]) - np.log(none[keep]) + math.log(self.pr_not) - math.log(self.pr_some)
        return float(max(ratio.max(), -ratio.min(), 0.0))


def _span(priors: list[MarkovChainPrior], in_a: np.ndarray, first: int, last: int) -> tuple[int, int] | None:
    """The 1-based span [u, v] of the window's entries where A is possible under some prior (None: nowhere)."""
    possible = np.zeros(last - first + 1, dtype=bool)
    for prior in priors:
        marg = prior.marginals(last + 1)[first : last + 1]
        possible |= (marg[:, in_a] > 0).any(axis=1)
    if not possible.any():
        return None
    inside = np.flatnonzero(possible)
    return first + 1 + int(inside[0]), first + 1 + int(inside[-1])


def event_estimate(priors: list[MarkovChainPrior], events: EventSecrets, n_b: int, every: bool = True
                   ) -> WorkEstimate:
    """The work of :func:`event_curve`: one K×K×K product per prior and split (every split of each b, or the
    balanced one with ``every=False``), plus the window kernels and the powers of P."""
    k = priors[0].n_states
    t_max = max(p.length for p in priors)
    splits = 0.0
    for first, last in events.windows:
        n_w = last - first + 1
        top = max(0, min(n_b, t_max - 1) - n_w + 1)  # b = n_W .. n_b
        splits += top * (top + 3) / 2 if every else 2.0 * top
    units = {"product": len(priors) * (2.0 * splits + 4.0 * t_max) * 2.0 * k**3}
    how = "every split around the window" if every else "the balanced split of each b"
    return WorkEstimate("this event curve", units, 8.0 * k * k * (t_max + 4) * len(priors),
                        f"K = {k} states, {len(priors)} prior{'s' if len(priors) > 1 else ''}, {how}",
                        "use shorter windows, fewer states or a smaller max_b")


def event_curve(priors: list[MarkovChainPrior], events: EventSecrets, max_b: int | None = None, *,
                progress: ProgressCallback | None = None, work: WorkCounter | None = None) -> InfluenceCurve:
    """The a(b) curve of event secrets (module docstring); ``priors`` is Θ (every window inside every prior).

    The curve's ``note`` says whether it is exact or an upper bound, and from which b it is finite.
    """
    k = priors[0].n_states
    in_a = events.state_mask(k)
    t_max = max(p.length for p in priors)
    n_b = t_max if max_b is None else int(max_b)
    every = event_estimate(priors, events, n_b, True)
    estimate = every if every.fits else event_estimate(priors, events, n_b, False)
    estimate.check()
    report = Progress(progress, estimate.total_units)
    cap = _cutoff(priors)
    a = np.zeros(n_b)
    exact, finite_from = every.fits, 1
    for first, last in events.windows:
        span = _span(priors, in_a, first, last)
        if span is None:
            continue
        u, v = span
        pieces = [p for p in (_Prior(prior, in_a, u, v, cap) for prior in priors) if p.secret]
        if not pieces:
            continue
        if (v - u + 1) > sum(1 for t in range(u, v + 1) if _possible(priors, in_a, t)):
            exact = False
        n_w = v - u + 1
        finite_from = max(finite_from, n_w)
        values = np.full(n_b, np.inf)
        for b in range(n_w, min(n_b, t_max - 1) + 1):
            values[b - 1] = _best_split(pieces, b, n_w, u, v, t_max, every.fits, work)
            report.advance(f"event window {first + 1}–{last + 1}, b = {b}", estimate.total_units / max(n_b, 1))
        values[t_max - 1 :] = 0.0
        a = np.maximum(a, values)
    report.finish()
    a = np.minimum.accumulate(a)
    note = ("exact (every split around the window)" if exact else
            "an upper bound (" + ("only the balanced split of each b" if not every.fits else
                                  "the window holds entries where A is impossible, kept in H") + ")")
    if finite_from > 1:
        note += (f"; a(b) = ∞ for b < {finite_from}: the high-influence set must hold the whole window"
                 " (an entry of the window seen in A would rule out 'never')")
    label = f"event secrets, {len(events.windows)} window{'s' if len(events.windows) > 1 else ''}"
    return InfluenceCurve(np.arange(1, n_b + 1), a, t_max, label, events, note)


def _possible(priors: list[MarkovChainPrior], in_a: np.ndarray, t: int) -> bool:
    return any(t <= p.length and bool((p.marginals(t)[t - 1][in_a] > 0).any()) for p in priors)


def _cutoff(priors: list[MarkovChainPrior]) -> int:
    """A distance D_c past which P^d has equal rows to within 10⁻¹² for every prior (capped at the longest
    chain): the terms at D_c then bound every farther one (a† is non-increasing in each distance)."""
    t_max = max(p.length for p in priors)
    caps = []
    for prior in priors:
        rows = np.ones(prior.n_states, dtype=bool)
        d = lifted_cutoff(np.asarray(prior.transition, dtype=float), rows, t_max)
        caps.append(t_max if d is None else d)
    return max(1, max(caps))


def _best_split(pieces: list[_Prior], b: int, n_w: int, u: int, v: int, t_max: int, every: bool,
                work: WorkCounter | None) -> float:
    """min over the windows of b entries holding [u, v] (or only the balanced one) of max over θ of a†."""
    spare = b - n_w  # entries of H outside the window: d_L − 1 + d_R − 1 = spare
    total = spare + 2
    lo = max(1, total - (t_max - v + 1))
    hi = min(u, total - 1)
    if lo > hi:
        return 0.0
    if every:
        candidates: list[int] | range = range(lo, hi + 1)
    else:
        mid = min(max(total // 2, lo), hi)
        candidates = sorted({mid, lo, hi})
    best = math.inf
    for dl in candidates:
        dr = total - dl
        value = 0.0
        for piece in pieces:
            value = max(value, piece.value(dl, dr, work))
            if value >= best:
                break
        best = min(best, value)
    return best


def event_work(priors: list[MarkovChainPrior], events: EventSecrets, max_b: int | None = None) -> WorkEstimate:
    """The estimate :func:`event_curve` checks: every split when it fits, else the balanced splits only."""
    n_b = max(p.length for p in priors) if max_b is None else int(max_b)
    every = event_estimate(priors, events, n_b, True)
    return every if every.fits else event_estimate(priors, events, n_b, False)
