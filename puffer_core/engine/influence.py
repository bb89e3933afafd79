"""Exact a(b)-influence curves (docs/math.md §2).

For a split of one user's entries into a high-influence set H (|H| ≤ b, containing the
secret's entry) and the rest L, the curve is

    a(b) = max over secret pairs of  min over H  of  sup_θ max_{D_L} log Pr[D_L | s_i, θ] / Pr[D_L | s_j, θ].

Markov chains (§2.1): only the nearest L node on each side of the secret's node t matters,
at distances dL (left) and dR (right); a side may have no L node (H runs to the chain's end).
The left and right terms, their tables and the proof that they are non-increasing in the
distance are in :mod:`puffer_core.engine.chain_terms`; the compiled loops in :mod:`puffer_core.engine.kernels`.
The best split of b nodes uses dL + dR = b + 1.  The sup over θ is inside the min over splits,
the max over pairs and nodes outside.  Terms 0/0 are skipped, positive/0 is +inf.

How the work stays bounded, each step an upper bound that is exact or above by at most
a few ``TAIL_TOL`` (10⁻¹²), never below the definition:

1. **Cutoff.**  Once a prior's P^D has nearly equal rows (2ρ(D) ≤ TAIL_TOL, see
   :mod:`puffer_core.engine.chain_terms`), distances beyond D use the terms at D (an upper bound,
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
   dominated (see :func:`puffer_core.engine.kernels.far_zone`), so one interior node decides when
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
Gaussian processes (§2.3) are in :mod:`puffer_core.engine.gaussian`.
"""

from __future__ import annotations

import time

import numpy as np

from ..priors.models import MAX_LENGTH, GaussianProcessPrior, MarkovChainPrior, as_theta
from ..secrets.events import EventSecrets
from ..secrets.values import ALL_SECRETS, Secrets
from ..validation import WORK_LIMIT_SECONDS, check_whole
from ..work import (
    SECONDS_PER_UNIT,
    SPLIT,
    Progress,
    ProgressCallback,
    WorkCounter,
    WorkEstimate,
    chunk_size,
    combine,
    one_blas_thread,
)
from .chain_terms import ChainProfile, attach_arena, node_arrays, shared_tables
from .curve import InfluenceCurve
from .gaussian import gaussian_estimate, gaussian_influence_curve, protected_coordinates
from .kernels import far_zone, start_zone

MAX_B = MAX_LENGTH  # a(b) = 0 from the longest sequence on; longer curves only add zeros
# The split phase (units "split": prior-split terms and pair bounds, counted by the kernels), per b:
# - the far zone: every pair's bounds (FAR_UNITS per pair and prior, plus the binary searches of the crossing
#   when several nodes are candidates) and full scans of every split: FAR_SCAN pairs at the one node that
#   decides when T_min ≥ 2b + 1 (the first pair of each b is scanned against a threshold of 0, so one such scan
#   is certain), FAR_SCAN_MULTI times every split of every candidate node beyond (a pair is scanned in full at
#   each node where its value rises: measured up to every node on lazy random walks);
# - the start zone: the first EARLY_NODES nodes scan every pair (START_UNITS per pair, prior and node), later
#   nodes walk lists sorted by their bounds (LATE_UNITS); at nodes t ≤ b (where a split may drop its left L
#   node) SCAN_PAIRS pairs scan every split, and a share of the pairs that grows with how far the marginals
#   still are from the stationary law: φ(η) = min(SCAN_MAX, SCAN_SCALE·η^(1/5)), η bounded before the tables
#   by η_t ≤ min(η_1, ρ(t − 1)) (ρ at powers of two from the cutoff's squarings, ChainProfile).  Nodes after b
#   scan LATE_SCAN of that share for one prior (every split has both L nodes, and the node's terms are the
#   stationary ones shifted by a constant), LATE_SCAN_THETA for Θ (the max over priors moves the best split).
# Measured with margin on every family, slowly mixing ones too (near-periodic, sticky 0.99/0.999, lazy random
# walks, slow rings; benchmarks/bench_estimates.py), against the units the kernels count.
FAR_UNITS = 8.0
FAR_SCAN = 1.5
FAR_SCAN_MULTI = 1.25
START_UNITS = 12.0
LATE_UNITS = 0.5
SCAN_PAIRS = 1.5
SCAN_MAX = 0.5
SCAN_SCALE = 0.35
LATE_SCAN = 0.05
LATE_SCAN_THETA = 0.25
EARLY_NODES = 9  # nodes 1..8 scan every pair (kernels.start_zone)
SCATTERED_BYTES = 256e6  # tables of this size make a split unit twice as costly (cache misses), measured
# Interpreter work (microseconds, unit "overhead") per call, per prior and per table distance: what tiny
# inputs cost (measured with margin by benchmarks/bench_estimates.py).
OVERHEAD_CALL = 3000.0
OVERHEAD_PRIOR = 500.0
OVERHEAD_DISTANCE = 60.0
# Above this estimate the cutoff bound is refined from the power of two past it to the cutoff itself
# (about log₂ D more matrix products, negligible next to such work; below it the estimate may be up to 2× high).
REFINE_SECONDS = 1.0


def _prepare(priors: list[MarkovChainPrior], n_eff: int, work: WorkCounter | None) -> list[ChainProfile]:
    """The priors as ChainProfiles, refusing first what even 16 distances of tables put out of reach."""
    k = priors[0].n_states
    first = [min(n_eff, p.length - 1, 16) for p in priors]
    units = sum(2.0 * d * k**3 for d in first)
    early = WorkEstimate("this a(b) curve", {"max-plus": units, "product": units}, 16.0 * k * k * max(first),
                         f"K = {k} states: the first {max(first)} distances of the left and right terms alone",
                         _states_advice(k, units))
    if early.seconds > WORK_LIMIT_SECONDS:  # before any O(K³) work on the priors themselves
        early.check()
    return [ChainProfile(p, n_eff, work, exact=False) for p in priors]


def _states_advice(k: int, units: float) -> str:
    fits = int(k * (WORK_LIMIT_SECONDS / max(units * SECONDS_PER_UNIT["max-plus"] * 2, 1e-9)) ** (1 / 3))
    return f"merge rarely used states (about K ≤ {max(2, min(fits, k - 1))} fits) or use fewer priors in Θ"


def _zones(profiles: list[ChainProfile], n_eff: int, t_max: int, bound: bool) -> tuple[int, int, int, int]:
    """(n_b, t_c, nodes of the start zone, priors in the far zone), from the bounds known before the tables
    (``bound``) or from the built profiles."""
    depth = [p.table_distances() if bound else p.D for p in profiles]
    cut = [p.D_bound is not None if bound else p.terms.cutoff is not None for p in profiles]
    n_b = min(n_eff, 2 * max(depth) - 1) if all(cut) else n_eff
    t_c = max(p.t_c_bound if bound else p.t_c for p in profiles)
    start = min(t_c - 1, t_max)
    far = sum(1 for p in profiles if p.T >= t_c) if t_c <= t_max else 0
    return max(n_b, 1), t_c, start, far


def split_sums(b: np.ndarray, lo: np.ndarray | int, hi: np.ndarray | int, t_max: int) -> np.ndarray:
    """Σ over nodes t = lo..hi of the number of splits of node t at b: min(t, b) − max(1, b + t − t_max) + 1.

    Closed form per b (0 where hi < lo): the work of scanning every split of every node in the range.
    """
    b = np.asarray(b, dtype=float)
    lo = np.broadcast_to(np.asarray(lo, dtype=float), b.shape)
    hi = np.broadcast_to(np.asarray(hi, dtype=float), b.shape)
    count = np.maximum(hi - lo + 1.0, 0.0)

    def run(first: np.ndarray, last: np.ndarray) -> np.ndarray:  # Σ_{t=first}^{last} t
        return (first + last) * np.maximum(last - first + 1.0, 0.0) / 2.0

    below = run(lo, np.minimum(hi, b)) + b * np.maximum(hi - np.maximum(lo, b + 1.0) + 1.0, 0.0)  # Σ min(t, b)
    star = t_max - b + 1.0  # from here on b + t − t_max ≥ 1
    ones = np.maximum(np.minimum(hi, star - 1.0) - lo + 1.0, 0.0)
    start = np.maximum(lo, star)
    over = ones + run(start + b - t_max, hi + b - t_max)  # Σ max(1, b + t − t_max)
    return np.where(count > 0, below - over + count, 0.0)


def _far_nodes(b: np.ndarray, t_lo: int, t_max: int, t_min: int) -> tuple[np.ndarray, np.ndarray]:
    """The nodes [lo, hi] the far zone evaluates at each b (kernels.far_zone: one interior node when T_min ≥ 2b + 1)."""
    single = t_min - b >= b + 1
    lo = np.where(single, np.maximum(t_lo, b + 1), np.maximum(t_lo, t_min - b))
    hi = np.minimum(np.where(single, lo, np.maximum(t_lo, b + 1)), t_max)
    return lo, hi


def _eta_blocks(profiles: list[ChainProfile], m: int) -> list[tuple[int, int, float]]:
    """(first node, last node, a bound on η_t there) for the start zone's nodes EARLY_NODES..m, by powers of two.

    η_t = max_x |log p_t[x] − log π[x]| is at most η_1 (it never grows once finite) and at most ρ(t − 1) ≤ ρ(2^j)
    for t − 1 ≥ 2^j (:class:`puffer_core.engine.chain_terms.ChainProfile`); the largest over the moving priors.
    """
    blocks = []
    first = EARLY_NODES
    while first <= m:
        j = int(first - 1).bit_length() - 1  # 2^j ≤ first − 1 < 2^(j+1)
        last = min(m, 2 ** (j + 1))
        eta = 0.0
        for p in profiles:
            if not p.stationary:
                eta = max(eta, min(p.initial_divergence, p.spread_at(2**j)))
        blocks.append((first, last, eta))
        first = last + 1
    return blocks


def _split_units(profiles: list[ChainProfile], n_eff: int, t_max: int) -> tuple[float, float]:
    """(far-zone units, start-zone units) of the min over splits (the module constants say what is counted)."""
    n_b, t_c, start, far = _zones(profiles, n_eff, t_max, bound=True)
    pairs = float(profiles[0].K) ** 2
    n = len(profiles)
    b = np.arange(1, n_b + 1, dtype=float)
    far_units = 0.0
    if far:
        t_min = min(p.T for p in profiles if p.T >= t_c)
        lo, hi = _far_nodes(b, t_c, t_max, t_min)
        nodes = hi - lo + 1.0
        bounds = FAR_UNITS + np.where(nodes > 1, 4.0 * (1.0 + np.log2(np.maximum(nodes, 1.0))), 0.0)
        scans = split_sums(b, lo, hi, t_max) * np.where(nodes > 1, FAR_SCAN_MULTI, FAR_SCAN)
        far_units = pairs * n * float(bounds.sum()) + n * float(scans.sum())
    m = min(start, t_max) if t_c > 1 else 0
    start_units = 0.0
    if m:
        early = min(m, EARLY_NODES - 1)
        start_units = pairs * n * n_b * (START_UNITS * early + LATE_UNITS * (m - early))
        late_share = LATE_SCAN_THETA if n > 1 else LATE_SCAN
        for first, last, eta in _eta_blocks(profiles, m):
            share = min(SCAN_MAX, SCAN_SCALE * eta**0.2) * pairs
            near = float(split_sums(b, first, np.minimum(last, b), t_max).sum())  # nodes t ≤ b
            after = float(split_sums(b, np.maximum(first, b + 1.0), last, t_max).sum())  # nodes t > b
            start_units += n * ((SCAN_PAIRS + share) * near + late_share * share * after)
    return far_units, start_units


def _estimate(profiles: list[ChainProfile], n_eff: int, t_max: int) -> WorkEstimate:
    k = profiles[0].K
    pieces = [p.estimate() for p in profiles]
    far_units, start_units = _split_units(profiles, n_eff, t_max)
    arena = sum(e.nbytes for e in pieces)
    _, _, start, _ = _zones(profiles, n_eff, t_max, bound=True)
    node_bytes = 8.0 * 3 * k * start * len(profiles)  # marginals, their logs and deviations per node
    tables = combine("", pieces, "")
    units = dict(tables.units)
    if start:  # Θ: a prior's marginals are needed up to the latest far-node start of all priors
        units["marginal"] = units.get("marginal", 0.0) + sum(
            float(k) ** 2 * min(p.T, start) for p in profiles if not p.stationary)
    # the split phase reads the tables at scattered rows: once they outgrow the caches each read costs more
    units["split"] = (far_units + start_units) * (1.0 + min(1.0, arena / SCATTERED_BYTES))
    # the interpreter's share: the call, each prior, each table distance and each chunk of b
    units["overhead"] = OVERHEAD_CALL + sum(OVERHEAD_PRIOR + OVERHEAD_DISTANCE * p.table_distances() for p in profiles)
    distances = max(p.table_distances() for p in profiles)
    parts = [f"K = {k} states", f"{len(profiles)} prior{'s' if len(profiles) > 1 else ''}",
             f"left/right terms up to distance {distances}"]
    if start_units > 0.25 * (far_units + start_units) and start:
        parts.append(f"{start:,} nodes evaluated one by one (marginals away from the stationary law)")
    dominant = ", ".join(parts)
    return WorkEstimate("this a(b) curve", units, arena + node_bytes + 8.0 * k * k * 4, dominant)


def _with_advice(estimate: WorkEstimate, profiles: list[ChainProfile], n_eff: int, t_max: int) -> WorkEstimate:
    """The estimate with what to change: the largest max_b that fits (found on the same estimate)."""
    if estimate.fits:
        return estimate
    loose = [p for p in profiles if not p.stationary and p.t_c_bound > p.T]
    lo, hi = 0, n_eff - 1
    while lo < hi:  # the largest n < n_eff whose estimate fits
        mid = (lo + hi + 1) // 2
        trial = _estimate_for(profiles, mid, t_max)
        if trial.fits:
            lo = mid
        else:
            hi = mid - 1
    largest = {"max_b": lo} if lo >= 1 else {}
    if lo >= 1:
        advice = f"pass max_b ≤ {lo} (a(b) for larger b is then bounded by a(max_b))"
        advice += ", give the stationary initial distribution or shorten the sequences" if loose else \
            ", merge rarely used states, or use fewer priors in Θ"
    elif loose:
        advice = "give the stationary initial distribution, shorten the sequences, or merge rarely used states"
    else:
        advice = _states_advice(profiles[0].K, estimate.units.get("max-plus", 0.0))
    return WorkEstimate(estimate.task, estimate.units, estimate.nbytes, estimate.dominant, advice, largest)


def _estimate_for(profiles: list[ChainProfile], n: int, t_max: int) -> WorkEstimate:
    """The estimate with every prior's tables capped at n distances (for the max_b search)."""
    saved = [(p.need, p.D_bound, p.t_c_bound) for p in profiles]
    try:
        for p in profiles:
            p.need = min(p.need, n)
            if p.D_bound is not None and p.D_bound > p.need:
                p.D_bound = None
                p.t_c_bound = p.T + 1 if not p.stationary else 1
        return _estimate(profiles, n, t_max)
    finally:
        for p, (need, bound, t_c) in zip(profiles, saved):
            p.need, p.D_bound, p.t_c_bound = need, bound, t_c


def _plan(priors: list[MarkovChainPrior], max_b: int | None, work: WorkCounter | None
          ) -> tuple[int, int, int, list[ChainProfile] | None, WorkEstimate]:
    t_max = max(p.length for p in priors)
    n_b = t_max if max_b is None else int(max_b)
    n_eff = min(n_b, t_max - 1)
    if n_eff < 1:
        return t_max, n_b, n_eff, None, WorkEstimate("this a(b) curve", {}, 0.0, "a chain of length 1: a(b) = 0")
    profiles = _prepare(priors, n_eff, work)
    estimate = _estimate(profiles, n_eff, t_max)
    if estimate.seconds > REFINE_SECONDS or not estimate.fits:  # worth log₂ D more products: the exact cutoff
        for profile in profiles:
            profile.refine(work)
        estimate = _estimate(profiles, n_eff, t_max)
    estimate = _with_advice(estimate, profiles, n_eff, t_max)
    return t_max, n_b, n_eff, profiles, estimate


def influence_estimate(prior_or_priors: object, max_b: int | None = None,
                       secrets: Secrets | EventSecrets | None = None) -> WorkEstimate:
    """What :func:`influence_curve` will cost for these arguments, before doing it (a :class:`WorkEstimate`).

    Costs O(K³·log D) for each Markov prior (its stationary law, the supports of its marginals
    and a proven bound on its cutoff D, see :class:`puffer_core.chain_terms.ChainProfile`), or
    nothing for sizes refused on K alone.  ``estimate.fits`` tells whether the curve will be
    computed; ``estimate.message`` is the refusal otherwise, with the largest ``max_b`` that fits
    when there is one.  ``secrets``: as for :func:`influence_curve` (chosen value pairs and positions cost
    no more than every pair; protected Gaussian coordinates and event secrets have estimates of their own).
    """
    priors = _check(prior_or_priors, max_b)
    chosen = _check_secrets(secrets, priors)  # chosen pairs and positions never cost more than every pair
    if isinstance(priors[0], GaussianProcessPrior):
        coordinates = protected_coordinates(priors[0].n, chosen if isinstance(chosen, Secrets) else None)
        return gaussian_estimate(priors[0], max_b, coordinates)
    if isinstance(chosen, EventSecrets):
        from .events import event_work

        return event_work(priors, chosen, max_b)
    try:
        with one_blas_thread():
            return _plan(priors, max_b, None)[4]
    except ValueError as exc:
        if "out of reach" not in str(exc):
            raise
        k = priors[0].n_states
        return WorkEstimate("this a(b) curve", {"max-plus": np.inf}, np.inf, f"K = {k} states",
                            _states_advice(k, 1e30))


def protected_neighbours(prot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(before, after): for node t (index t − 1), the last protected node ≤ t (0: none) and the first ≥ t
    (len + 1: none), 1-based."""
    n = prot.size
    idx = np.where(prot, np.arange(1, n + 1), 0)
    before = np.maximum.accumulate(idx)
    later = np.where(prot, np.arange(1, n + 1), n + 1)
    after = np.minimum.accumulate(later[::-1])[::-1]
    return before.astype(np.int64), after.astype(np.int64)


def _markov_values(profiles: list[ChainProfile], n_eff: int, t_max: int, estimate: WorkEstimate,
                   progress: Progress, work: WorkCounter, secrets: Secrets = ALL_SECRETS) -> np.ndarray:
    """a(b) for b = 1..B (B ≤ n_eff, see the module docstring: larger b take a(B)), over the protected nodes
    and secret pairs of ``secrets`` (docs/math.md §16)."""
    k = profiles[0].K
    arena = attach_arena(profiles)
    for prof in profiles:
        prof.build(progress, work)
    arrays = shared_tables(profiles, arena)
    n_b, t_c, start, _ = _zones(profiles, n_eff, t_max, bound=False)
    n_pairs = k * k
    best = np.zeros(n_b)
    tab, stride, hpi, shift, valid = arrays["tab"], arrays["stride"], arrays["hpi"], arrays["shift"], arrays["valid"]
    use = secrets.pair_matrix(k).reshape(-1)
    prot = secrets.position_mask(t_max)
    if not use.all():
        valid = valid & use[None, :]
    before, after = protected_neighbours(prot)
    depth, lengths = arrays["depth"], arrays["lengths"]
    units = work.units
    per_b = max(1.0, estimate.units.get("split", 0.0) / max(n_b, 1))

    def chunked(stage: str, run) -> None:
        """Run b = 1..n_b in chunks of ~0.05 s, reporting progress between them."""
        b = 1
        size = n_b if per_b * n_b * SECONDS_PER_UNIT["split"] < 0.05 else 1  # short work: one call
        while b <= n_b:
            last = min(n_b, b + size - 1)
            before = units[SPLIT]
            clock = time.perf_counter()
            run(b, last)
            spent = time.perf_counter() - clock
            progress.advance(f"{stage}, b = {last} of {n_b}", max(units[SPLIT] - before, per_b * (last - b + 1)))
            size = chunk_size(spent / (last - b + 1), most=4 * size)
            b = last + 1

    if t_c <= t_max and after[t_c - 1] <= t_max:
        add = np.array([p.far_addition if p.T >= t_c else 0.0 for p in profiles])
        members = lengths >= t_c
        t_min = int(lengths[members].min())
        carried = np.full(n_pairs, np.inf)
        far_valid = valid & members[:, None]
        chunked("the min over splits", lambda b0, b1: far_zone(
            best, b0, b1, t_c, t_max, t_min, tab, stride, hpi, depth, lengths, shift, add, far_valid, carried, prot,
            before, after, units))
    m = int(before[start - 1]) if t_c > 1 and start >= 1 else 0  # the last protected node of the start zone
    if m:
        nodes = node_arrays(profiles, m, hpi, work)
        chunked("nodes near the start", lambda b0, b1: start_zone(
            best, b0, b1, m + 1, t_max, k, tab, stride, nodes["sid"], nodes["lm"], depth, lengths,
            hpi, shift, valid, nodes["moving"], nodes["dev"], nodes["delta"], nodes["bounded"], prot, use, units))
    return best


def _check(prior_or_priors: object, max_b: object) -> list:
    """The priors as a list, with max_b and the kinds checked (shared by the curve and its estimate)."""
    if isinstance(prior_or_priors, GaussianProcessPrior):
        priors: list = [prior_or_priors]
    elif isinstance(prior_or_priors, (list, tuple)) and prior_or_priors and all(
        isinstance(p, GaussianProcessPrior) for p in prior_or_priors
    ):
        raise ValueError("a set of Gaussian-process priors is not supported; give one at a time")
    else:
        priors = list(as_theta(prior_or_priors, "influence_curve"))
    if max_b is not None:
        max_b = check_whole("max_b", max_b)
    if max_b is not None and max_b > MAX_B:
        longest = max(getattr(p, "length", 0) for p in priors)
        raise ValueError(
            f"max_b = {max_b} is over the limit of {MAX_B:,}; a(b) = 0 from the longest sequence on"
            f" (here {longest:,} entries), so max_b = {longest:,} already gives the whole curve"
        )
    return priors


def influence_curve(
    prior_or_priors: object,
    max_b: int | None = None,
    *,
    progress: ProgressCallback | None = None,
    work: WorkCounter | None = None,
    secrets: Secrets | EventSecrets | None = None,
) -> InfluenceCurve:
    """The exact a(b)-influence curve of a prior or a set Θ of priors (docs/math.md §2), for ``secrets``.

    ``secrets`` (docs/math.md §16): ``None`` or :data:`~puffer_core.secrets.ALL_SECRETS` — every pair
    of distinct states at every entry, today's curve; a :class:`~puffer_core.secrets.Secrets` — a(b)
    as the max over its protected positions and value pairs only (the splits, the sup over Θ and the
    min over splits are unchanged, so the curve is never above the full one); an
    :class:`~puffer_core.secrets.EventSecrets` — "in A at some entry of a window" against "never"
    (:mod:`puffer_core.engine.events`).  A Gaussian process takes positions only (its secrets are
    intervals of one coordinate, docs/math.md §2.3).  The curve remembers its secrets.

    A list of :class:`MarkovChainPrior` (same number of states, lengths may differ) is Θ;
    node indices are shared, so one split H serves every prior.  ``max_b`` defaults to the
    longest sequence (where a = 0) and may not exceed ``MAX_B``.  Every value is the exact
    a(b) or above it by at most a few 10⁻¹² (the proven bounds in the module docstring),
    never below.

    The work is estimated first (:func:`influence_estimate`); what would exceed
    ``WORK_LIMIT_SECONDS`` or ``work.MEMORY_LIMIT_BYTES`` raises ValueError at once with the
    estimate and what to change (the largest ``max_b`` that fits, when there is one).
    ``progress(stage, fraction)`` is called at least every ~0.2 s of a long computation and may
    raise to stop it (the contract: :class:`puffer_core.work.Progress`).  ``work``, a
    :class:`puffer_core.work.WorkCounter`, receives the units actually performed.
    """
    priors = _check(prior_or_priors, max_b)
    chosen = _check_secrets(secrets, priors)
    if isinstance(priors[0], GaussianProcessPrior) and isinstance(chosen, Secrets):  # events refused by the check
        return gaussian_influence_curve(priors[0], max_b=max_b, progress=progress, work=work, secrets=chosen)
    if isinstance(chosen, EventSecrets):
        from .events import event_curve

        with one_blas_thread():
            return event_curve(priors, chosen, max_b, progress=progress, work=work)
    with one_blas_thread():
        return _markov_curve(priors, max_b, progress, work, chosen)


def _check_secrets(secrets: object, priors: list) -> Secrets | EventSecrets:
    """The secrets checked against the priors' states and lengths (None: every pair at every entry)."""
    if secrets is None:
        return ALL_SECRETS
    if isinstance(secrets, EventSecrets):
        if isinstance(priors[0], GaussianProcessPrior):
            raise ValueError("event secrets need Markov chain priors (a Gaussian process has interval secrets)")
        for prior in priors:
            secrets.check(prior.n_states, prior.length)
        return secrets
    if not isinstance(secrets, Secrets):
        raise TypeError(f"secrets must be a Secrets or EventSecrets value (puffer_core.secrets) or None;"
                        f" got {type(secrets).__name__}")
    longest = max(getattr(p, "length", getattr(p, "n", 0)) for p in priors)
    if isinstance(priors[0], GaussianProcessPrior):
        if secrets.pairs != "all":
            raise ValueError("a Gaussian process's secrets are intervals of one coordinate (docs/math.md §2.3):"
                             " value pairs of states do not apply; choose positions only (pairs='all')")
    else:
        secrets.check(priors[0].n_states)
    if not secrets.position_mask(longest).any():
        raise ValueError(f"every protected position ({secrets.positions[0] + 1}…, 1-based) lies beyond the"  # type: ignore[index]
                         f" sequences' {longest} entries: nothing would be protected")
    return secrets


def _markov_curve(priors: list[MarkovChainPrior], max_b: int | None, progress: ProgressCallback | None,
                  work: WorkCounter | None, secrets: Secrets = ALL_SECRETS) -> InfluenceCurve:
    counter = work if work is not None else WorkCounter()
    t_max, n_b, n_eff, profiles, estimate = _plan(priors, max_b, counter)
    estimate.check()
    a = np.zeros(n_b)
    if profiles is not None:
        report = Progress(progress, estimate.total_units)
        report.report("preparing the chain", force=True)
        values = _markov_values(profiles, n_eff, t_max, estimate, report, counter, secrets)
        a[: values.size] = values
        a[values.size : n_eff] = values[-1]
        report.finish()
    a = np.minimum.accumulate(a)  # |H| ≤ b allows every smaller H
    label = f"Θ of {len(priors)} priors" if len(priors) > 1 else "Markov chain"
    return InfluenceCurve(np.arange(1, n_b + 1), a, t_max, label, secrets)
