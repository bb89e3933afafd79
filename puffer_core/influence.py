"""Exact a(b)-influence curves (docs/math.md §2).

For a split of one user's entries into a high-influence set H (|H| ≤ b, containing the
secret's entry) and the rest L, the curve is

    a(b) = max over secret pairs of  min over H  of  sup_θ max_{D_L} log Pr[D_L | s_i, θ] / Pr[D_L | s_j, θ].

Markov chains (§2.1): only the nearest L node on each side of the secret's node t matters,
at distances dL (left) and dR (right); a side may have no L node (H runs to the chain's end).
The left and right terms, their tables and the proof that they are non-increasing in the
distance are in :mod:`puffer_core.chain_terms`; the compiled loops in :mod:`puffer_core.kernels`.
The best split of b nodes uses dL + dR = b + 1.  The sup over θ is inside the min over splits,
the max over pairs and nodes outside.  Terms 0/0 are skipped, positive/0 is +inf.

How the work stays bounded, each step an upper bound that is exact or above by at most
a few ``TAIL_TOL`` (10⁻¹²), never below the definition:

1. **Cutoff.**  Once a prior's P^D has nearly equal rows (2ρ(D) ≤ TAIL_TOL, see
   :mod:`puffer_core.chain_terms`), distances beyond D use the terms at D (an upper bound,
   off by ≤ TAIL_TOL).  When every prior has a cutoff and b ≥ 2·max D − 1, every node has
   a split whose L nodes are all at distance ≥ D or absent (at most D − 1 nodes of H on each
   side), so 0 ≤ a(b) ≤ 3·TAIL_TOL; those b get a(2·max D − 1), which bounds them because
   a(b) is non-increasing.
2. **Far nodes of non-stationary priors.**  For a prior whose marginals reach the support of π
   (from node s_f on) and then stay within η of it in log terms (η_t = max_x |log p_t[x] −
   log π[x]|), every node t ≥ t_c = max(s_f + D, first t with η_t ≤ TAIL_TOL) has
   left_t(d) = h_{supp π}(d) + log p_t[x'] − log p_t[x] ≤ left_π(d) + 2·max_{u ≥ t_c} η_u, and
   the same pairs and right terms as the stationary chain.  So the nodes t ≥ t_c are bounded
   by the stationary evaluation with that addition (off by ≤ 4η), restricted to t ≥ t_c.
3. **Which nodes.**  With node-independent terms, nodes before T_min − b and after b + 1 are
   dominated (see :func:`puffer_core.kernels.far_zone`), so one interior node decides when
   T_min ≥ 2b + 1.  The remaining nodes t < t_c are evaluated one by one with their own
   terms.  A pair is skipped at such a node when max over priors of bal_θ + max(0, dev_θ)
   cannot beat the best value found: bal_θ is prior θ's value, with its stationary terms,
   of one split chosen per pair (at node t the same split, or its truncation where H reaches
   an end, has no larger terms), and dev_θ = (log p_t − log π)[x'] − (log p_t − log π)[x]
   bounds how much larger θ's left terms are at node t than the stationary ones — valid when
   every support within reach of node t lies inside supp π (h over a smaller set of l is no
   larger); otherwise every pair is evaluated.
4. **Pairs and splits.**  A pair is evaluated only when its balanced split (an upper bound on
   its value) beats the best value found; its splits are scanned outwards from the balanced
   one and the scan stops at the first split that cannot beat it.

Anything whose tables would still be out of reach is refused up front with an estimate.
Gaussian processes (§2.3) are in :mod:`puffer_core.gaussian`.
"""

from __future__ import annotations

import numpy as np

from .chain_terms import (
    TABLE_LIMIT_BYTES,
    TAIL_TOL,
    ChainTerms,
    estimate_cutoff,
    marginal_profile,
    table_cost,
)
from .curve import InfluenceCurve
from .gaussian import gaussian_influence_curve
from .kernels import far_zone, log_or_neg, start_zone
from .priors import MAX_LENGTH, GaussianProcessPrior, MarkovChainPrior, stationary_distribution
from .validation import WORK_LIMIT_SECONDS, human_seconds

MAX_B = MAX_LENGTH  # a(b) = 0 from the longest sequence on; longer curves only add zeros
NODE_RATE = 2e8  # node × pair × b evaluations per second when no pruning bound applies


class _Prior:
    """One prior of Θ prepared for evaluation: supports and convergence of its marginals, its terms."""

    def __init__(self, prior: MarkovChainPrior, n_eff: int) -> None:
        self.prior = prior
        self.T = prior.length
        self.K = prior.n_states
        self.stationary = prior.stationary_initial
        self.need = min(n_eff, self.T - 1)
        if self.stationary:
            self.pi: np.ndarray | None = np.asarray(prior.initial)
            supports: list[np.ndarray] = []
            self.s_f = 1
            self.t_eta = 1
            self.eta = np.zeros(0)
            self.node_support = np.zeros(0, dtype=np.int64)
        else:
            try:
                self.pi = stationary_distribution(prior.transition)
            except ValueError:
                self.pi = None
            _, support, self.eta = marginal_profile(prior, self.pi)
            unique, inverse = np.unique(support, axis=0, return_inverse=True)
            supports = list(unique)
            self.unique_supports = unique
            self.node_local = inverse.reshape(-1)
            converged = np.flatnonzero(np.isfinite(self.eta))
            self.s_f = int(converged[0]) + 1 if converged.size else self.T + 1
            small = np.flatnonzero(self.eta <= TAIL_TOL)
            self.t_eta = int(small[0]) + 1 if small.size else self.T + 1
            pi_rows = np.zeros(self.K, dtype=bool) if self.pi is None else self.pi > 0
            self.inside_pi = np.all(support <= pi_rows[None, :], axis=1)  # supp p_t ⊆ supp π
        self.terms = ChainTerms(prior, supports, self.pi)
        if not self.stationary:
            self.node_support = np.array([self.terms.support_index(u) for u in self.unique_supports])[self.node_local]
        self.expected: int | None = None

    def estimate(self) -> tuple[int, float, float]:
        """(distances, seconds, bytes) of this prior's tables, an upper estimate (docs in chain_terms)."""
        n_sup = len(self.terms.supports)
        if self.need < 1:
            return 0, 0.0, 0.0
        seconds, nbytes = table_cost(self.K, min(self.need, 16), n_sup)
        if seconds > WORK_LIMIT_SECONDS or nbytes > TABLE_LIMIT_BYTES:
            distances = min(self.need, 16)
        else:
            distances = estimate_cutoff(self.prior, self.terms.mass_rows, self.need)
            self.expected = distances
            seconds, nbytes = table_cost(self.K, distances, n_sup)
        return distances, seconds, nbytes

    def build(self) -> None:
        self.D = self.terms.ensure(self.need, self.expected)
        if self.stationary:
            self.t_c = 1
        elif self.pi is None or self.t_eta > self.T:
            self.t_c = self.T + 1
        else:
            self.t_c = max(self.t_eta, self.s_f + self.D)
            if self.t_c > self.T:
                self.t_c = self.T + 1

    def far_addition(self, t_c: int) -> float:
        """2·max over nodes t ≥ t_c of η_t (0 for a stationary prior), plus a rounding allowance."""
        if self.stationary or t_c > self.T:
            return 0.0
        return 2.0 * float(self.eta[t_c - 1 :].max()) + 1e-15

    def bounded_nodes(self, m: int) -> np.ndarray:
        """bounded[t−1] for t = 1..m: every support within reach of node t (t − D ≤ s ≤ t) lies in supp π."""
        if self.stationary:
            return np.ones(m, dtype=bool)
        if self.pi is None:
            return np.zeros(m, dtype=bool)
        n = min(m, self.T)
        outside = np.concatenate([[0], np.cumsum(~self.inside_pi[:n])])
        t = np.arange(1, n + 1)
        first = np.maximum(1, t - max(self.D, 1))
        ok = np.ones(m, dtype=bool)
        ok[:n] = outside[t] - outside[first - 1] == 0
        return ok


def _refuse_if_out_of_reach(plans: list[_Prior], n_eff: int) -> None:
    """Estimate the work before doing it; refuse with the estimate and what to change."""
    k = plans[0].K
    seconds = 0.0
    nbytes = 0.0
    distances = []
    for plan in plans:
        d, s, b = plan.estimate()
        distances.append(d)
        seconds += s
        nbytes += b
    # nodes that no bound covers (no stationary law to converge to) are evaluated one by one
    loose = [p for p in plans if not p.stationary and (p.pi is None or p.t_eta > p.T)]
    if loose:
        nodes = max(p.T for p in loose)
        seconds += nodes * n_eff * k * k * len(plans) / NODE_RATE
    if seconds <= WORK_LIMIT_SECONDS and nbytes <= TABLE_LIMIT_BYTES:
        return
    per_distance_s = sum(table_cost(k, 1, len(p.terms.supports))[0] for p in plans)
    per_distance_b = sum(table_cost(k, 1, len(p.terms.supports))[1] for p in plans)
    fits = int(min(WORK_LIMIT_SECONDS / per_distance_s, TABLE_LIMIT_BYTES / per_distance_b))
    if loose:
        advice = "give the stationary initial distribution, shorten the sequences, or pass a smaller max_b"
    elif fits >= 1:
        advice = (
            f"pass max_b ≤ {fits} (a(b) for larger b is then bounded by a(max_b)), merge rarely used states,"
            " or use fewer priors in Θ"
        )
    else:
        advice = "reduce the number of states (merge rarely used ones) or the number of priors in Θ"
    raise ValueError(
        f"this a(b) curve is out of reach: it needs about {human_seconds(seconds)} and {nbytes / 2**30:.1f} GB"
        f" (K = {k} states, {len(plans)} prior{'s' if len(plans) > 1 else ''}, left/right terms up to"
        f" distance {max(distances)}); limits are {WORK_LIMIT_SECONDS:.0f} s and"
        f" {TABLE_LIMIT_BYTES / 2**30:.1f} GB — {advice}"
    )


def _markov_values(priors: list[MarkovChainPrior], n_eff: int, t_max: int) -> np.ndarray:
    """a(b) for b = 1..B (B ≤ n_eff, see the module docstring: larger b take a(B))."""
    k = priors[0].n_states
    smallest = sum(table_cost(k, min(n_eff, p.length - 1, 16), 1)[0] for p in priors)
    if smallest > WORK_LIMIT_SECONDS:  # before any O(K³) work on the priors themselves
        raise ValueError(
            f"this a(b) curve is out of reach: even the first 16 distances need about {human_seconds(smallest)}"
            f" (K = {k} states); the limit is {WORK_LIMIT_SECONDS:.0f} s — merge rarely used states"
        )
    plans = [_Prior(p, n_eff) for p in priors]
    _refuse_if_out_of_reach(plans, n_eff)
    arena = None
    if len(plans) > 1:  # every prior writes its tables straight into tab[i]
        caps = [p.need if p.expected is None else min(p.need, 2 * p.expected + 16) for p in plans]
        arena = np.empty((len(plans), max(1, max(c * p.terms.stride for c, p in zip(caps, plans))), k * k))
        for i, (cap, plan) in enumerate(zip(caps, plans)):
            plan.terms.attach(arena[i, : cap * plan.terms.stride])
    for plan in plans:
        plan.build()
    n_pairs = k * k
    if all(p.terms.cutoff is not None for p in plans):
        n_b = min(n_eff, 2 * max(p.D for p in plans) - 1)
    else:
        n_b = n_eff
    t_c = max(p.t_c for p in plans)
    best = np.zeros(n_b)

    # prior i's tables are tab[i] (one prior: its own storage, no copy)
    hpi = np.zeros(len(plans), dtype=np.int64)
    stride = np.array([p.terms.stride for p in plans], dtype=np.int64)
    shift = np.zeros((len(plans), n_pairs))
    valid = np.zeros((len(plans), n_pairs), dtype=bool)
    for i, plan in enumerate(plans):
        if plan.pi is not None:
            hpi[i] = plan.terms.support_index(plan.pi > 0)
            shift[i], valid[i] = plan.terms.shift_pi()
    if len(plans) == 1:
        tab = plans[0].terms.stored_rows()[None]
    elif all(p.terms.attached for p in plans):
        tab = arena
    else:  # a prior outgrew its share of the arena (not expected): gather everything
        tab = np.empty((len(plans), max(1, max(p.terms.stored_rows().shape[0] for p in plans)), n_pairs))
        for i, plan in enumerate(plans):
            rows = plan.terms.stored_rows()
            tab[i, : rows.shape[0]] = rows
            plan.terms = None  # type: ignore[assignment]  # copied: free its storage now
    depth = np.array([p.D for p in plans], dtype=np.int64)
    lengths = np.array([p.T for p in plans], dtype=np.int64)

    if t_c <= t_max:
        add = np.array([p.far_addition(t_c) for p in plans])
        members = lengths >= t_c
        t_min = int(lengths[members].min())
        work = np.zeros(4, dtype=np.int64)
        far_zone(best, 1, n_b, t_c, t_max, t_min, tab, stride, hpi, depth, lengths, shift, add,
                 valid & members[:, None], np.full(n_pairs, np.inf), work)
    if t_c > 1:
        m = min(t_c - 1, t_max)
        sid = np.zeros((len(plans), m), dtype=np.int64)
        lm = np.full((len(plans), m, k), -1e300)
        dev = np.zeros((len(plans), m, k))
        bounded = np.ones(m, dtype=bool)
        delta = np.zeros((len(plans), m))
        moving = np.array([not p.stationary for p in plans])
        for i, plan in enumerate(plans):
            n = min(m, plan.T)
            bounded &= plan.bounded_nodes(m)
            if plan.stationary:
                sid[i, :n] = hpi[i]
                lm[i, :n] = log_or_neg(plan.pi)[None, :]
                continue
            marg, _, _ = marginal_profile(plan.prior, plan.pi, length=n, store=n)
            lm[i, :n] = log_or_neg(marg)
            sid[i, :n] = plan.node_support[:n]
            if plan.pi is not None:
                lp = log_or_neg(plan.pi)
                inside = (marg > 0) & (plan.pi > 0)[None, :]
                dev[i, :n] = np.where(inside, lm[i, :n] - lp[None, :], 0.0)
                hi = np.where(inside, dev[i, :n], -np.inf).max(axis=1)
                lo = np.where(inside, dev[i, :n], np.inf).min(axis=1)
                delta[i, :n] = np.where(np.isfinite(hi) & np.isfinite(lo), hi - lo, 0.0)
        start_zone(best, n_b, m + 1, t_max, k, tab, stride, sid, lm, depth, lengths,
                   hpi, shift, valid, moving, dev, delta, bounded)
    return best
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
    longest sequence (where a = 0) and may not exceed ``MAX_B``.  Every value is the exact
    a(b) or above it by at most a few 10⁻¹² (the proven bounds in the module docstring),
    never below.  Raises ValueError up front, with an estimate and what to change, when the
    work would exceed ``WORK_LIMIT_SECONDS`` or the tables ``TABLE_LIMIT_BYTES``.
    """
    priors = _as_priors(prior_or_priors)
    if max_b is not None and (isinstance(max_b, bool) or not isinstance(max_b, (int, np.integer)) or max_b < 1):
        raise ValueError(f"max_b must be a whole number ≥ 1; got {max_b!r}")
    if max_b is not None and max_b > MAX_B:
        longest = max(getattr(p, "length", 0) for p in priors)
        raise ValueError(
            f"max_b = {max_b} is over the limit of {MAX_B:,}; a(b) = 0 from the longest sequence on"
            f" (here {longest:,} entries), so max_b = {longest:,} already gives the whole curve"
        )
    if all(isinstance(p, GaussianProcessPrior) for p in priors):
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
        values = _markov_values(priors, n_eff, t_max)
        a[: values.size] = values
        a[values.size : n_eff] = values[-1]
    a = np.minimum.accumulate(a)  # |H| ≤ b allows every smaller H
    label = f"Θ of {len(priors)} priors" if len(priors) > 1 else "Markov chain"
    return InfluenceCurve(np.arange(1, n_b + 1), a, t_max, label)
