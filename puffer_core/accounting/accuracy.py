"""Accuracy first: from an error target to the ε each mechanism needs, and back (docs/math.md §13).

An analyst asks "how accurate will my numbers be, and what does that cost?".  This module
answers with the exact error law of each mechanism's noise, inverted, then translated into the
privacy each mechanism's own accounting charges for that noise:

- **Counts** (:class:`CountTarget`): every released count within ±α of the truth with
  probability ≥ 1 − β — for each count on its own (``joint="each"``), for all m counts at once
  by the union bound (``"union"``, per-count β/m) or by the exact law of the largest of m
  independent noises (``"all"``: Pr[max |Z_j| ≤ α] = Pr[|Z| ≤ α]^m).
- **Top-k** (:class:`TopKTarget`): the released top-k set is the true one with probability
  ≥ h — either for *every* count vector whose k-th largest count exceeds the (k+1)-th by at
  least ``gap`` (a data-free guarantee: the worst case is all top counts tied at the boundary
  and all others tied ``gap`` below, because raising a top count or lowering another can only
  help, draw by draw), or for the given ``counts``.

**The neighbour relation** (per-entry DP, docs/math.md §1): neighbouring datasets differ in the
value of one entry (replace-one).  A histogram of all entries changes by one in two counts, so
its L1 sensitivity is Δ = 2; a single count has Δ = 1; the papers' top-k baseline releases the
m counts as m separate 1-Lipschitz queries with ε/m each (docs/math.md §5).

**The noise laws.**
- Laplace of scale s: Pr[|Z| ≤ α] = 1 − e^(−α/s).
- The sampler the project's Laplace mechanisms call (OpenDP 0.16 ``make_laplace`` on floats,
  :mod:`puffer_core.mechanisms.laplace`) draws a *discrete* Laplace on the lattice g·ℤ with
  g = 2^−1074 (OpenDP's default granularity for 64-bit floats, the smallest subnormal), then rounds
  x + noise to the nearest float: Pr[Z = g·z] ∝ e^(−g|z|/s).  On a lattice g,
  Pr[|Z| ≤ α] = 1 − 2·e^(−(n+1)g/s)/(1 + e^(−g/s)) with n = ⌊α/g⌋, inverted here exactly
  (``law="opendp"``); with g = 2^−1074 every float α is a multiple of g and the formula equals
  the continuous one to a relative 10^−300 (below double precision), and the final rounding of
  x + noise to a float moves the probability by at most ulp(x + α)/(2s).  ``law="integer"`` is
  OpenDP's sampler on integer counts (g = 1: Pr[Z = z] ∝ e^(−|z|/s)), for releases made that way.
- Exponential top-k = Gumbel noise of scale λ = 2k/ε_DP on every count, keep the k largest
  (docs/math.md §5).  The probability of a given set is a finite sum over its k! orders of
  products of softmax terms (exact, used when the true top-k sets have few orders); at the worst
  case of a gap it is Π_{j<k} (k−j)w / ((k−j)w + m − k), w = e^(gap/λ).
- Laplace counts sorted for top-k: the worst case at a gap is the one-dimensional integral
  ∫ k·f(y)(1 − F(y))^(k−1)·F(y + gap)^(m−k) dy (f, F: the Laplace density and distribution).
- Any other case (Laplace at given counts; exponential when the sets have too many orders) is
  simulated, seeded: for each draw of standardised noise the largest scale at which the set is
  still right is computed exactly (the event is an intersection of "λ·(G_j − G_i) < c_i − c_j",
  each a down-set in λ), so one set of draws serves every scale, the probability is monotone in
  the scale, and the scale meeting h is an order statistic chosen so that it meets h with the
  stated confidence (a distribution-free bound on a quantile).

Every probability above is non-increasing in the noise scale, so each inversion has one answer.

**Privacy of a noise scale.**  Curve-calibrated mechanisms (docs/math.md §3): ε_DP = Δ/s (or
2k/λ), ε_puffer = min_b (b·ε_DP + a(b)) (certify).  Group DP: ε_puffer = T_max·ε_DP.  MQM
(docs/math.md §5): the smallest ε with L·σ_max(ε) ≤ s (:func:`mqm_eps_for_scale`).  Each
answer is checked by building the mechanism at that ε (:func:`puffer_core.mechanisms.make_mechanism`):
its noise is never above the noise the target allows.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy import integrate, optimize, stats

from ..engine.curve import InfluenceCurve
from ..engine.mqm import mqm_noise_scale
from ..mechanisms import MECHANISMS, MechanismSpec, Output, make_mechanism
from ..mechanisms.base import HISTOGRAM_SENSITIVITY
from ..mechanisms.laplace import group_dp_laplace, mqm_laplace, pufferfish_laplace
from ..priors.models import MarkovChainPrior, as_theta, theta_or_none
from ..validation import check_choice, check_eps, check_positive, check_probability, check_whole, is_number
from .calibration import certify, check_curve

NEIGHBOURS = (
    "Neighbouring datasets differ in the value of one entry (replace-one, per-entry DP). A histogram of all"
    " entries then changes by one in two counts: L1 sensitivity Δ = 2; a single count has Δ = 1; the top-k"
    " baseline releases the m counts as m separate 1-Lipschitz queries with ε/m each."
)
OPENDP_GRANULARITY = 2.0**-1074  # OpenDP's default noise lattice for 64-bit floats (its get_min_k: 2^(−1074))
LAWS = ("opendp", "continuous", "integer")
JOINT = ("each", "union", "all")
JOINT_WORDS = {
    "each": "each count on its own",
    "union": "all counts at once (union bound)",
    "all": "all counts at once (exact: independent noise)",
}
_JOINT_SENTENCE = {
    "each": "each of the {m} counts on its own",
    "union": "all {m} counts at once (by the union bound)",
    "all": "all {m} counts at once (the exact law of independent noise)",
}
COUNT_MECHANISMS = ("pufferfish_laplace", "mqm", "group_dp_laplace")
TOPK_MECHANISMS = ("pufferfish_exponential", "pufferfish_laplace", "mqm", "group_dp_exponential", "group_dp_laplace")
EXACT_ORDERS = 50_000  # ordered k-tuples summed exactly for the exponential mechanism at given counts
DEFAULT_DRAWS = 20_000
MAX_DRAW_CELLS = 20_000_000  # draws × |A| × |B| pair thresholds held at once
_RELATIVE = 1e-12  # how far a found ε is nudged up until the built mechanism's noise fits


# --------------------------------------------------------------------------------------------
# the Laplace laws


def _granularity(law: str) -> float:
    return {"opendp": OPENDP_GRANULARITY, "continuous": 0.0, "integer": 1.0}[law]


def _lattice_floor(alpha: float, g: float) -> float:
    """g·⌊α/g⌋: the largest lattice point ≤ α (every float α is a multiple of 2^−1074)."""
    if g == OPENDP_GRANULARITY:
        return alpha
    return g * math.floor(alpha / g)


def laplace_failure(alpha: float, scale: float, law: str = "opendp") -> float:
    """Pr[|Z| > α] for one count with Laplace noise of ``scale`` under ``law`` (module docstring)."""
    alpha = check_positive("α (the error bound)", alpha)
    scale = check_positive("the noise scale", scale)
    check_choice("law", law, LAWS)
    return _failure(alpha, scale, _granularity(law))


def _failure(alpha: float, scale: float, g: float) -> float:
    """Pr[|Z| > α], α ≥ 0, on the lattice g (0: continuous)."""
    if g == 0.0:
        return math.exp(-alpha / scale)
    edge = _lattice_floor(alpha, g)
    # 2·e^(−(edge+g)/s) / (1 + e^(−g/s)) = e^(−edge/s) · (1 − tanh(g/(2s)))
    return math.exp(-edge / scale) * (1.0 - math.tanh(g / (2.0 * scale)))


def per_count_failure(beta: float, counts: int, joint: str) -> float:
    """The failure probability one count may have so that ``joint`` holds with probability 1 − β."""
    beta = check_probability("β (the failure probability)", beta, open_interval=True)
    counts = check_whole("m (how many counts are released)", counts)
    check_choice("joint", joint, JOINT)
    if joint == "each":
        return beta
    if joint == "union":
        return beta / counts
    return -math.expm1(math.log1p(-beta) / counts)  # (1 − q)^m = 1 − β


def joint_failure(failure: float, counts: int, joint: str) -> float:
    """The probability that ``joint`` fails when each count fails with probability ``failure``."""
    if joint == "each":
        return failure
    if joint == "union":
        return min(1.0, counts * failure)
    if failure >= 1.0:
        return 1.0
    return -math.expm1(counts * math.log1p(-failure))


def laplace_scale_for(alpha: float, failure: float, law: str = "opendp") -> float:
    """The largest Laplace scale with Pr[|Z| > α] ≤ ``failure`` under ``law`` (exact inversion)."""
    alpha = check_positive("α (the error bound)", alpha)
    failure = check_probability("the failure probability", failure, open_interval=True)
    check_choice("law", law, LAWS)
    g = _granularity(law)
    if g == OPENDP_GRANULARITY or g == 0.0:
        # 1 − tanh(2^−1074/(2s)) is 1 in double precision for every scale this returns
        scale = alpha / math.log(1.0 / failure)
        while _failure(alpha, scale, g) > failure:  # rounding: stay on the side that meets the target
            scale = math.nextafter(scale, 0.0)
        return scale
    edge = _lattice_floor(alpha, g)

    def excess(u: float) -> float:  # u = 1/s; log of the failure minus log of the target, decreasing in u
        return -(edge + g) * u + math.log(2.0) - math.log1p(math.exp(-g * u)) - math.log(failure)

    high = math.log(2.0 / failure) / (edge + g)  # there the failure is ≤ 2e^(−(edge+g)u) = failure
    root = optimize.brentq(excess, 1e-300, high, xtol=1e-300, rtol=1e-15)
    scale = 1.0 / root
    while _failure(alpha, scale, g) > failure:  # stay on the side that meets the target
        scale = math.nextafter(scale, 0.0)
    return scale


def laplace_alpha_for(scale: float, failure: float, law: str = "opendp") -> float:
    """The smallest α with Pr[|Z| > α] ≤ ``failure`` for one count with Laplace noise of ``scale``.

    On the integer lattice the answer is a whole number (0: the noise is 0 often enough).
    """
    scale = check_positive("the noise scale", scale)
    failure = check_probability("the failure probability", failure, open_interval=True)
    check_choice("law", law, LAWS)
    g = _granularity(law)
    if g == OPENDP_GRANULARITY or g == 0.0:
        return scale * math.log(1.0 / failure)
    # integer lattice: the failure depends on ⌊α⌋ = n only, 2e^(−(n+1)/s)/(1+e^(−1/s)) ≤ q
    # ⇔ n + 1 ≥ s·(log 2 − log q − log(1 + e^(−1/s))); the smallest such whole n ≥ 0
    need = scale * (math.log(2.0) - math.log(failure) - math.log1p(math.exp(-1.0 / scale))) - 1.0
    n = max(0, math.ceil(need))
    while n > 0 and _failure(float(n - 1), scale, 1.0) <= failure:
        n -= 1
    while _failure(float(n), scale, 1.0) > failure:
        n += 1
    return float(n)


# --------------------------------------------------------------------------------------------
# top-k laws


def _chance(k: int, m: int) -> float:
    return 1.0 / math.comb(m, k)


def _check_topk_shape(k: int, m: int) -> tuple[int, int]:
    m = check_whole("m (the number of states)", m, minimum=2)
    k = check_whole("k (how many top states are released)", k, maximum=m)
    return k, m


def topk_hit_at_gap(k: int, m: int, gap: float, scale: float, noise: str) -> float:
    """Pr[the released top-k set is the true one] in the worst case of a ``gap`` (module docstring).

    ``noise`` is ``"gumbel"`` (exponential top-k, scale λ = 2k/ε_DP) or ``"laplace"`` (noisy
    counts sorted).  Every count vector whose k-th largest count exceeds the (k+1)-th by at least
    ``gap`` has at least this probability.
    """
    k, m = _check_topk_shape(k, m)
    gap = check_positive("the gap between the k-th and the (k+1)-th count", gap)
    scale = check_positive("the noise scale", scale)
    check_choice("noise", noise, ("gumbel", "laplace"))
    if k == m:
        return 1.0
    z = gap / scale
    if noise == "gumbel":
        ratio = math.exp(-z) if z < 745 else 0.0
        return math.exp(sum(-math.log1p((m - k) / (k - j) * ratio) for j in range(k)))

    def integrand(y: float) -> float:
        # k·f(y)(1 − F(y))^(k−1)·F(y + z)^(m−k), standard Laplace
        dens = 0.5 * math.exp(-abs(y))
        upper = 0.5 * math.exp(-y) if y > 0 else 1.0 - 0.5 * math.exp(y)
        shifted = y + z
        below = 1.0 - 0.5 * math.exp(-shifted) if shifted > 0 else 0.5 * math.exp(shifted)
        return k * dens * upper ** (k - 1) * below ** (m - k)

    pieces = sorted({-z, 0.0})
    total = 0.0
    edges = [-math.inf, *pieces, math.inf]
    for lo, hi in zip(edges[:-1], edges[1:]):
        value, _ = integrate.quad(integrand, lo, hi, epsabs=1e-13, epsrel=1e-11, limit=200)
        total += value
    return min(1.0, max(0.0, total))


def topk_gap_for(k: int, m: int, hit: float, scale: float, noise: str) -> float:
    """The smallest gap between the k-th and (k+1)-th count for which top-k is right with probability ≥ ``hit``.

    The reverse of :func:`topk_hit_at_gap` (increasing in the gap): with this noise, any count
    vector whose k-th largest count exceeds the next by at least the answer gets the true top-k
    set with probability ≥ ``hit``.
    """
    k, m = _check_topk_shape(k, m)
    hit = check_probability("h (the top-k hit rate)", hit, open_interval=True)
    scale = check_positive("the noise scale", scale)
    if k == m or hit <= _chance(k, m):
        return 0.0
    lo, hi = 0.0, scale
    while topk_hit_at_gap(k, m, hi, scale, noise) < hit:
        lo, hi = hi, 2.0 * hi
    for _ in range(100):
        if hi - lo <= 1e-10 * hi:
            break
        mid = 0.5 * (lo + hi)
        if mid > 0 and topk_hit_at_gap(k, m, mid, scale, noise) >= hit:
            hi = mid
        else:
            lo = mid
    return hi


def _invert_scale(probability, target: float, start: float) -> float:
    """The largest scale λ with probability(λ) ≥ target; ``probability`` is non-increasing in λ."""
    lo = hi = start
    while probability(lo) < target:
        lo /= 2.0
        if lo < 1e-300:
            raise ValueError("no noise scale reaches this target")
    while probability(hi) >= target:
        hi *= 2.0
        if hi > 1e300:
            return math.inf
    for _ in range(200):  # bisection in log λ to a relative 1e-12
        if hi / lo - 1.0 < 1e-12:
            break
        mid = math.sqrt(lo * hi)
        if probability(mid) >= target:
            lo = mid
        else:
            hi = mid
    return lo


def _top_split(counts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """A = the states that may be in a true top-k set (count ≥ the k-th largest), B = the others."""
    threshold = np.sort(counts)[::-1][k - 1]
    return np.flatnonzero(counts >= threshold), np.flatnonzero(counts < threshold)


def _sure(counts: np.ndarray, k: int) -> np.ndarray:
    """The states in every true top-k set: count above the k-th largest."""
    threshold = np.sort(counts)[::-1][k - 1]
    return np.flatnonzero(counts > threshold)


def _exact_orders(a: np.ndarray, k: int) -> int:
    return math.perm(a.size, k)


def gumbel_hit_at_counts(counts: Sequence[float], k: int, scale: float) -> float:
    """Pr[exponential top-k returns a true top-k set] for these counts, exactly (Gumbel noise of ``scale``).

    A true top-k set holds every state whose count is above the k-th largest count and fills
    the rest with states at exactly the k-th largest count (ties make several such sets).  The
    sum runs over the ordered k-tuples of such sets of the product of the k rounds' softmax
    probabilities, in log space.
    """
    values = _check_counts(counts, k)
    scale = check_positive("the noise scale", scale)
    a, b = _top_split(values, k)
    if b.size == 0:
        return 1.0
    if _exact_orders(a, k) > EXACT_ORDERS:
        raise ValueError(
            f"{_exact_orders(a, k):,} orders of the possible top-{k} states are too many to sum exactly;"
            " use topk_hit (simulated)"
        )
    logw = (values - values.max()) / scale
    log_b = float(np.logaddexp.reduce(logw[b]))  # the states outside every true top-k set stay unpicked
    sure = np.flatnonzero(np.isin(a, _sure(values, k)))  # positions in A of the states every true set holds
    orders = np.array(list(itertools.permutations(range(a.size), k)), dtype=np.int64)  # indices into A
    if sure.size:
        orders = orders[np.isin(orders, sure).sum(axis=1) == sure.size]
    rows = np.arange(orders.shape[0])
    unpicked = np.ones((orders.shape[0], a.size), dtype=bool)
    log_a = logw[a]
    log_p = np.zeros(orders.shape[0])
    for j in range(k):
        masked = np.where(unpicked, log_a[None, :], -np.inf)
        left = np.logaddexp(np.logaddexp.reduce(masked, axis=1), log_b)  # log Σ of the weights still in play
        log_p += log_a[orders[:, j]] - left
        unpicked[rows, orders[:, j]] = False
    return float(min(1.0, math.exp(np.logaddexp.reduce(log_p))))


def _check_counts(counts: Sequence[float], k: int) -> np.ndarray:
    try:
        values = np.asarray(counts, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError("counts must be numbers, one per state") from None
    if values.size < 2 or not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError(f"counts must be at least 2 finite numbers ≥ 0, one per state; got {values.size}")
    check_whole("k (how many top states are released)", k, maximum=values.size)
    return values


@dataclass(frozen=True)
class SimulatedHit:
    """Critical scales of a seeded simulation: the set is right at scale λ exactly when λ < ``critical[d]``."""

    critical: np.ndarray
    draws: int
    seed: int
    noise: str

    def probability(self, scale: float, confidence: float = 0.95) -> tuple[float, float, float]:
        """(estimate, low, high): Pr[right set] at ``scale`` with a Clopper–Pearson interval."""
        hits = int(np.count_nonzero(self.critical > scale))
        low, high = _clopper_pearson(hits, self.draws, confidence)
        return hits / self.draws, low, high

    def scale_for(self, hit: float, confidence: float = 0.95) -> tuple[float, float]:
        """(estimate, guaranteed): the largest scale meeting ``hit``, and one that meets it with ``confidence``.

        The estimate is the empirical (1 − hit)-quantile of the critical scales; the guaranteed
        scale is the order statistic X_(j) with Pr[Bin(n, 1 − hit) ≥ j] ≥ confidence, so that
        Pr[X_(j) ≤ the true quantile] ≥ confidence over the simulation.
        """
        n = self.draws
        ordered = np.sort(self.critical)
        estimate = float(np.quantile(ordered, 1.0 - hit, method="inverted_cdf"))
        j_minus_1 = int(stats.binom.ppf(1.0 - confidence, n, 1.0 - hit))  # smallest i with cdf(i) ≥ 1 − conf
        while j_minus_1 >= 0 and stats.binom.cdf(j_minus_1, n, 1.0 - hit) > 1.0 - confidence:
            j_minus_1 -= 1
        if j_minus_1 < 0:
            raise ValueError(
                f"{n:,} draws cannot certify a hit rate of {hit:g} with confidence {confidence:g};"
                " use more draws"
            )
        return estimate, float(ordered[j_minus_1])


def _clopper_pearson(hits: int, n: int, confidence: float) -> tuple[float, float]:
    tail = (1.0 - confidence) / 2.0
    low = 0.0 if hits == 0 else float(stats.beta.ppf(tail, hits, n - hits + 1))
    high = 1.0 if hits == n else float(stats.beta.ppf(1.0 - tail, hits + 1, n - hits))
    return low, high


def simulate_critical_scales(
    counts: Sequence[float], k: int, noise: str, draws: int = DEFAULT_DRAWS, seed: int = 0
) -> SimulatedHit:
    """For ``draws`` seeded draws of standardised noise, the largest scale at which top-k is still right.

    With standard noise G (Gumbel or Laplace, scale 1) the noisy counts at scale λ are c + λG,
    and state i stays above state j (c_i > c_j) while λ·(G_j − G_i) < c_i − c_j, i.e. for
    λ < t_ij = (c_i − c_j)/(G_j − G_i) (∞ when G_j ≤ G_i).  Let A hold the states with a count
    ≥ the k-th largest, S ⊆ A those above it (in every true top-k set), r = k − |S|.  The
    released set is a true one exactly when (i) k states of A beat every state outside A —
    λ below the k-th largest over i ∈ A of min_{j ∉ A} t_ij — and (ii) every i ∈ S beats all but
    at most r of the states outside S — λ below the (n − r)-th largest of t_ij over those n
    states.  Each is a down-set in λ, so the set is right exactly for λ below the smaller of
    the two, the draw's critical scale.
    """
    values = _check_counts(counts, k)
    check_choice("noise", noise, ("gumbel", "laplace"))
    draws = check_whole("draws", draws, minimum=100)
    seed = check_whole("seed", seed, minimum=0)
    a, b = _top_split(values, k)
    if b.size == 0:
        return SimulatedHit(np.full(draws, math.inf), draws, seed, noise)
    sure = _sure(values, k)
    others = np.setdiff1d(np.arange(values.size), sure)  # the states outside S
    spare = k - sure.size
    rng = np.random.default_rng(seed)
    out = np.empty(draws)
    chunk = max(1, MAX_DRAW_CELLS // (values.size * values.size))
    for start in range(0, draws, chunk):
        n = min(chunk, draws - start)
        sample = rng.gumbel(size=(n, values.size)) if noise == "gumbel" else rng.laplace(size=(n, values.size))
        critical = -np.sort(-_thresholds(values, sample, a, b).min(axis=2), axis=1)[:, k - 1]
        if sure.size:
            beaten = _thresholds(values, sample, sure, others)  # (n, |S|, n_others)
            needed = others.size - spare  # how many of the others each sure state must stay above
            per_sure = -np.sort(-beaten, axis=2)[:, :, needed - 1]
            critical = np.minimum(critical, per_sure.min(axis=1))
        out[start : start + n] = critical
    return SimulatedHit(out, draws, seed, noise)


def _thresholds(values: np.ndarray, sample: np.ndarray, upper: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """t_ij for i in ``upper``, j in ``lower`` (c_i > c_j): the scale below which i stays above j; (n, |U|, |L|)."""
    diff = values[upper][:, None] - values[lower][None, :]
    gap = sample[:, lower][:, None, :] - sample[:, upper][:, :, None]  # G_j − G_i
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(gap > 0, diff[None] / np.where(gap > 0, gap, 1.0), np.inf)


# --------------------------------------------------------------------------------------------
# targets


@dataclass(frozen=True)
class CountTarget:
    """Released counts within ±``alpha`` of the truth with probability ≥ 1 − ``beta``.

    ``counts``: how many counts are released together (m); ``joint``: ``"each"`` (every count on
    its own), ``"union"`` (all m at once, union bound) or ``"all"`` (all m at once, exact law);
    ``law``: the noise law (module docstring); ``sensitivity``: the released vector's L1
    sensitivity to one entry (2 for a histogram under replace-one).
    """

    alpha: float
    beta: float
    counts: int = 1
    joint: str = "each"
    law: str = "opendp"
    sensitivity: float = HISTOGRAM_SENSITIVITY

    def __post_init__(self) -> None:
        if not is_number(self.alpha) or not self.alpha > 0:
            raise ValueError(
                f"α (the error bound, ± counts) must be a number > 0; got {self.alpha!r}: an error of 0 needs"
                " infinite ε"
            )
        check_positive("α (the error bound)", self.alpha)
        check_probability("β (the failure probability)", self.beta, open_interval=True)
        check_whole("m (how many counts are released together)", self.counts)
        check_choice("joint", self.joint, JOINT)
        check_choice("law", self.law, LAWS)
        check_positive("sensitivity", self.sensitivity)

    @property
    def failure(self) -> float:
        """The failure probability each count may have."""
        return per_count_failure(self.beta, self.counts, self.joint)

    def scale(self) -> float:
        """The largest Laplace scale per count that meets the target."""
        return laplace_scale_for(self.alpha, self.failure, self.law)

    def achieved(self, scale: float) -> float:
        """Pr[the target holds] for Laplace noise of ``scale`` per count."""
        return 1.0 - joint_failure(laplace_failure(self.alpha, scale, self.law), self.counts, self.joint)

    def describe(self) -> str:
        which = _JOINT_SENTENCE[self.joint].format(m=self.counts) if self.counts > 1 else "one count"
        return f"counts within ±{self.alpha:g} with probability ≥ {1 - self.beta:g}, {which}"


@dataclass(frozen=True)
class TopKTarget:
    """The released top-k set is the true one with probability ≥ ``hit``.

    Give ``gap`` (a guarantee for every count vector whose k-th largest count exceeds the
    (k+1)-th by at least ``gap``) or ``counts`` (these counts; simulated for sorted Laplace
    counts, and for the exponential mechanism when its sum is too long).  ``n_states`` is m.
    ``draws``, ``seed`` and ``confidence`` set the simulation.
    """

    k: int
    hit: float
    n_states: int
    gap: float | None = None
    counts: tuple[float, ...] | None = None
    draws: int = DEFAULT_DRAWS
    seed: int = 0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        k, m = _check_topk_shape(self.k, self.n_states)
        hit = check_probability("h (the top-k hit rate)", self.hit)
        if hit >= 1.0:
            raise ValueError("h = 1 cannot be reached with any noise (ε would be infinite); ask for h < 1")
        if k == m:
            raise ValueError(f"k = m = {m}: every state is released, so the top-k set is always right; lower k")
        if (self.gap is None) == (self.counts is None):
            raise ValueError("give either gap (a guarantee for every count vector) or counts (these counts)")
        if self.gap is not None:
            check_positive("the gap between the k-th and the (k+1)-th count", self.gap)
        if self.counts is not None:
            values = _check_counts(self.counts, k)
            if values.size != m:
                raise ValueError(f"{values.size} counts for n_states = {m}; give one count per state")
        check_whole("draws", self.draws, minimum=100)
        check_whole("seed", self.seed, minimum=0)
        check_probability("confidence", self.confidence, open_interval=True)
        if hit <= self.chance:
            raise ValueError(
                f"h = {hit:g} is reached by pure noise: a random set of {k} of {m} states is right with probability"
                f" {self.chance:.4g}; ask for more"
            )

    @property
    def chance(self) -> float:
        """Pr[right set] with infinite noise: 1/C(m, k) for a gap; with ties in the counts possibly more."""
        if self.counts is None:
            return _chance(self.k, self.n_states)
        values = np.asarray(self.counts, dtype=float)
        a, _ = _top_split(values, self.k)
        sure = _sure(values, self.k).size
        return math.comb(a.size - sure, self.k - sure) / math.comb(self.n_states, self.k)

    def exact(self, noise: str) -> bool:
        """Whether the probability under ``noise`` is computed exactly (else simulated)."""
        if self.gap is not None:
            return True
        if noise == "laplace":
            return False
        a, _ = _top_split(np.asarray(self.counts, dtype=float), self.k)
        return _exact_orders(a, self.k) <= EXACT_ORDERS

    @cached_property
    def _simulations(self) -> dict[str, SimulatedHit]:
        return {}

    def simulation(self, noise: str) -> SimulatedHit:
        """The seeded simulation of critical scales for ``noise`` (drawn once per target and noise)."""
        if noise not in self._simulations:
            counts = tuple(float(c) for c in self.counts or ())
            self._simulations[noise] = simulate_critical_scales(counts, self.k, noise, self.draws, self.seed)
        return self._simulations[noise]

    def probability(self, scale: float, noise: str) -> tuple[float, float, float]:
        """(estimate, low, high) of Pr[right set] at ``scale``; low = high = estimate when exact."""
        if self.gap is not None:
            p = topk_hit_at_gap(self.k, self.n_states, self.gap, scale, noise)
            return p, p, p
        if self.exact(noise):
            p = gumbel_hit_at_counts(self.counts, self.k, scale)
            return p, p, p
        return self.simulation(noise).probability(scale, self.confidence)

    def scale(self, noise: str) -> tuple[float, float]:
        """(estimate, guaranteed): the largest noise scale meeting the target (equal when exact)."""
        if self.gap is not None:
            found = _invert_scale(lambda s: topk_hit_at_gap(self.k, self.n_states, self.gap, s, noise), self.hit,
                                  self.gap)
            return found, found
        if self.exact(noise):
            start = float(np.ptp(np.asarray(self.counts))) or 1.0
            found = _invert_scale(lambda s: gumbel_hit_at_counts(self.counts, self.k, s), self.hit, start)
            return found, found
        return self.simulation(noise).scale_for(self.hit, self.confidence)

    def describe(self) -> str:
        where = (
            f"whenever the {_ordinal(self.k)} largest count exceeds the next by ≥ {self.gap:g}"
            if self.gap is not None
            else "for the given counts"
        )
        return (
            f"the released top-{self.k} of {self.n_states} states to be the true top-{self.k} set with probability"
            f" ≥ {self.hit:g}, {where}"
        )


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# --------------------------------------------------------------------------------------------
# MQM: the ε whose noise is a given scale


def mqm_eps_for_scale(prior_or_priors: MarkovChainPrior | list[MarkovChainPrior], sigma: float) -> float:
    """The smallest ε_puffer whose MQM noise scale σ_max(ε) is ≤ ``sigma`` (docs/math.md §5, §13).

    σ_max(ε) = max_θ max_t min over usable quilts of card/(ε − e) is continuous and strictly
    decreasing in ε: every quilt's score card/(ε − e) is strictly decreasing on ε > e; raising ε
    only adds usable quilts, each entering at +∞; min and max keep both properties.  Every
    quilt has card ≥ 1 and e ≥ 0 and the empty quilt (card T, e = 0) is always usable, so
    1/ε ≤ σ_max(ε) ≤ T/ε and the answer lies in [1/σ, T/σ].  Bisection in log ε keeps the upper
    end, where σ_max ≤ ``sigma`` as computed by the same function that builds the mechanism.
    """
    sigma = check_positive("σ (the noise scale MQM may add per unit of sensitivity)", sigma)
    priors = as_theta(prior_or_priors, "mqm_eps_for_scale")
    length = priors.max_length
    lo, hi = 1.0 / sigma, length / sigma
    if mqm_noise_scale(priors, hi) > sigma * (1 + 1e-12):
        raise ValueError(f"MQM's σ_max at ε = T/σ = {hi:g} is above σ = {sigma:g}; this should not happen")
    if mqm_noise_scale(priors, lo) <= sigma:
        return lo
    while hi / lo - 1.0 > 1e-9:
        mid = math.sqrt(lo * hi)
        if mqm_noise_scale(priors, mid) <= sigma:
            hi = mid
        else:
            lo = mid
    return hi


# --------------------------------------------------------------------------------------------
# accuracy first, and the accuracy of a given ε


@dataclass(frozen=True)
class Cost:
    """One mechanism's answer: the noise it adds and the privacy that noise costs (docs/math.md §13).

    ``noise_scale`` is the built mechanism's (≤ ``needed``); ``achieved`` the probability that the
    target holds at that noise (an estimate, with ``achieved_low``/``achieved_high`` its interval,
    for simulated targets).  ``b``, ``a`` and ``fallback`` (the curve chose (T, 0)) for curve
    mechanisms; ``sigma_max`` for MQM.
    """

    mechanism: str
    label: str
    noise: str
    needed: float
    noise_scale: float
    eps_dp: float
    eps_puffer: float
    accounting: str
    b: int | None = None
    a: float | None = None
    fallback: bool = False
    sigma_max: float | None = None
    achieved: float = math.nan
    achieved_low: float = math.nan
    achieved_high: float = math.nan


@dataclass(frozen=True)
class AccuracyPlan:
    """The privacy each mechanism needs for one target, side by side; ``skipped``: mechanism → why not."""

    target: CountTarget | TopKTarget
    costs: tuple[Cost, ...]
    skipped: dict[str, str] = field(default_factory=dict)
    neighbours: str = NEIGHBOURS
    exact: bool = True

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "mechanism": [c.label for c in self.costs],
                "noise": [c.noise for c in self.costs],
                "noise scale": [c.noise_scale for c in self.costs],
                "ε_DP per entry": [c.eps_dp for c in self.costs],
                "ε_puffer": [c.eps_puffer for c in self.costs],
                "accounting": [c.accounting for c in self.costs],
                "b": pd.array([c.b for c in self.costs], dtype="Int64"),
                "a(b)": pd.array([c.a for c in self.costs], dtype="Float64"),
                "achieved": [c.achieved for c in self.costs],
            }
        )

    def cheapest(self) -> Cost:
        return min(self.costs, key=lambda c: c.eps_puffer)


def _noise_of(spec: MechanismSpec) -> str:
    """The noise a mechanism adds: Gumbel for rankings (exponential top-k), Laplace for counts."""
    return "gumbel" if spec.releases is Output.RANKING else "laplace"


def _chain_priors(priors: object) -> list[MarkovChainPrior] | None:
    chains = theta_or_none(priors, "accuracy with the prior")
    return None if chains is None else list(chains)


def _query(target: CountTarget | TopKTarget) -> str:
    return "histogram" if isinstance(target, CountTarget) else "topk"


def _check_mechanisms(names: Sequence[str] | None, target: CountTarget | TopKTarget) -> tuple[str, ...]:
    default = COUNT_MECHANISMS if isinstance(target, CountTarget) else TOPK_MECHANISMS
    if names is None:
        return default
    chosen = tuple(names)
    for name in chosen:
        if name not in MECHANISMS:
            raise ValueError(f"unknown mechanism {name!r}; choose from {', '.join(MECHANISMS)}")
        if name not in default:
            raise ValueError(f"{name} cannot answer this target; choose from {', '.join(default)}")
    return chosen


def _design(target: CountTarget | TopKTarget, topk_laplace: str) -> tuple[int, float]:
    """(queries, L): Laplace counts of a top-k release are m queries of sensitivity 1, or one histogram."""
    if isinstance(target, CountTarget):
        return 1, target.sensitivity
    if topk_laplace == "split":
        return target.n_states, 1.0
    return 1, HISTOGRAM_SENSITIVITY


def _build(name: str, eps: float, curve: InfluenceCurve, priors: Any, target: Any, topk_laplace: str) -> Any:
    if isinstance(target, CountTarget):
        if name == "mqm":
            return mqm_laplace(priors, eps, sensitivity=target.sensitivity)
        builder = pufferfish_laplace if name == "pufferfish_laplace" else group_dp_laplace
        return builder(curve, eps, sensitivity=target.sensitivity)
    return make_mechanism(name, eps, curve, priors or [], "topk", target.k, target.n_states, topk_laplace)


def _eps_for(name: str, needed: float, curve: InfluenceCurve, priors: list[MarkovChainPrior] | None,
             target: Any, topk_laplace: str) -> float:
    """The ε_puffer at which ``name``'s noise is exactly ``needed`` (before the check by building it)."""
    spec = MECHANISMS[name]
    if _noise_of(spec) == "gumbel":
        eps_dp = 2.0 * target.k / needed
    else:
        queries, sensitivity = _design(target, topk_laplace)
        if name == "mqm":
            if queries > 1:
                return queries * mqm_eps_for_scale(priors, needed)
            return mqm_eps_for_scale(priors, needed / sensitivity)
        eps_dp = (queries if queries > 1 else sensitivity) / needed
    if spec.calibrated == "group_dp":
        return curve.length * eps_dp
    return certify(curve, eps_dp).eps_puffer


def _cost(name: str, needed: float, curve: InfluenceCurve, priors: list[MarkovChainPrior] | None, target: Any,
          topk_laplace: str) -> tuple[Cost, Any]:
    spec = MECHANISMS[name]
    eps = _eps_for(name, needed, curve, priors, target, topk_laplace)
    if not math.isfinite(eps):
        raise ValueError("the target needs no noise at all")
    mechanism = _build(name, eps, curve, priors, target, topk_laplace)
    tries = 0
    while mechanism.noise_scale > needed * (1 + 1e-13) and tries < 30:  # rounding: move up until the noise fits
        eps *= 1 + _RELATIVE * 2**tries
        mechanism = _build(name, eps, curve, priors, target, topk_laplace)
        tries += 1
    if mechanism.noise_scale > needed * (1 + 1e-9):
        raise ValueError(f"{name}: no ε found whose noise {mechanism.noise_scale:g} fits {needed:g}")
    return _describe_cost(spec, mechanism, needed), mechanism


def _describe_cost(spec: Any, mechanism: Any, needed: float) -> Cost:
    event = mechanism.accounting
    fields = event.to_dict()
    return Cost(
        mechanism=spec.name,
        label=spec.label,
        noise=mechanism.noise,
        needed=needed,
        noise_scale=float(mechanism.noise_scale),
        eps_dp=float(event.eps_dp),
        eps_puffer=float(event.eps_puffer),
        accounting=str(spec.calibrated),
        b=fields.get("b"),
        a=fields.get("a"),
        fallback=bool(fields.get("group_dp")) and str(spec.calibrated) == "curve",
        sigma_max=fields.get("sigma_max"),
    )


def accuracy_first(
    target: CountTarget | TopKTarget,
    curve: InfluenceCurve,
    priors: MarkovChainPrior | list[MarkovChainPrior] | None = None,
    mechanisms: Sequence[str] | None = None,
    topk_laplace: str = "split",
) -> AccuracyPlan:
    """The ε_puffer each mechanism needs to meet ``target``, side by side (docs/math.md §13).

    ``curve``: the prior's a(b) curve (curve and group-DP mechanisms); ``priors``: the Markov
    chain prior or Θ (MQM; without it MQM is skipped and ``skipped`` says why).  ``mechanisms``
    default to the Laplace ones and MQM for counts, and to all five for top-k.
    ``topk_laplace`` as in :func:`puffer_core.mechanisms.make_mechanism`.
    """
    if not isinstance(target, (CountTarget, TopKTarget)):
        raise ValueError(f"target must be a CountTarget or a TopKTarget; got {type(target).__name__}")
    curve = check_curve(curve, "accuracy_first")
    check_choice("topk_laplace", topk_laplace, ("split", "histogram"))
    names = _check_mechanisms(mechanisms, target)
    chains = _chain_priors(priors)
    costs, skipped = [], {}
    needed_by_noise: dict[str, tuple[float, float]] = {}
    for name in names:
        if name == "mqm" and chains is None:
            skipped[name] = "MQM needs the Markov chain prior itself (its quilts), not only the a(b) curve"
            continue
        noise = _noise_of(MECHANISMS[name])
        if noise not in needed_by_noise:
            if isinstance(target, CountTarget):
                needed_by_noise[noise] = (target.scale(), target.scale())
            else:
                needed_by_noise[noise] = target.scale(noise)
        needed = needed_by_noise[noise][1]
        if not math.isfinite(needed):
            skipped[name] = "the target holds with any amount of noise"
            continue
        cost, mechanism = _cost(name, needed, curve, chains, target, topk_laplace)
        if isinstance(target, CountTarget):
            p = target.achieved(mechanism.noise_scale)
            cost = _with_achieved(cost, p, p, p)
        else:
            cost = _with_achieved(cost, *target.probability(mechanism.noise_scale, noise))
        costs.append(cost)
    exact = isinstance(target, CountTarget) or all(target.exact(c.noise) for c in costs)
    return AccuracyPlan(target, tuple(costs), skipped, NEIGHBOURS, exact)


def _with_achieved(cost: Cost, p: float, low: float, high: float) -> Cost:
    return replace(cost, achieved=p, achieved_low=low, achieved_high=high)


@dataclass(frozen=True)
class MechanismAccuracy:
    """How accurate one mechanism is at a given ε_puffer: its noise and what that noise allows.

    Counts: ``alpha`` is the error bound reached with probability 1 − β (``beta`` of the target
    given), ``beta`` the failure probability of the target's α.  Top-k: ``hit`` (with its
    interval) is the probability of the right set.
    """

    mechanism: str
    label: str
    eps_puffer: float
    eps_dp: float
    noise: str
    noise_scale: float
    alpha: float = math.nan
    beta: float = math.nan
    hit: float = math.nan
    hit_low: float = math.nan
    hit_high: float = math.nan
    fallback: bool = False


def accuracy_at(
    eps_puffer: float,
    target: CountTarget | TopKTarget,
    curve: InfluenceCurve,
    priors: MarkovChainPrior | list[MarkovChainPrior] | None = None,
    mechanisms: Sequence[str] | None = None,
    topk_laplace: str = "split",
) -> tuple[MechanismAccuracy, ...]:
    """The reverse of :func:`accuracy_first`: each mechanism built at ``eps_puffer``, and its accuracy.

    For a :class:`CountTarget` the α reached with the target's β (and the β of its α); for a
    :class:`TopKTarget` the probability of the right set (its ``hit`` is not used).
    """
    eps = check_eps("eps_puffer", eps_puffer)
    if not isinstance(target, (CountTarget, TopKTarget)):
        raise ValueError(f"target must be a CountTarget or a TopKTarget; got {type(target).__name__}")
    curve = check_curve(curve, "accuracy_at")
    names = _check_mechanisms(mechanisms, target)
    chains = _chain_priors(priors)
    out = []
    for name in names:
        if name == "mqm" and chains is None:
            continue
        spec = MECHANISMS[name]
        mechanism = _build(name, eps, curve, chains, target, topk_laplace)
        scale = float(mechanism.noise_scale)
        fields = mechanism.accounting.to_dict()
        common = dict(
            mechanism=name,
            label=spec.label,
            eps_puffer=eps,
            eps_dp=float(mechanism.accounting.eps_dp),
            noise=mechanism.noise,
            noise_scale=scale,
            fallback=bool(fields.get("group_dp")) and str(spec.calibrated) == "curve",
        )
        if isinstance(target, CountTarget):
            if scale == 0:
                out.append(MechanismAccuracy(**common, alpha=0.0, beta=0.0))
                continue
            alpha = laplace_alpha_for(scale, target.failure, target.law)
            beta = joint_failure(laplace_failure(target.alpha, scale, target.law), target.counts, target.joint)
            out.append(MechanismAccuracy(**common, alpha=alpha, beta=beta))
        else:
            p, low, high = target.probability(scale, mechanism.noise) if scale > 0 else (1.0, 1.0, 1.0)
            out.append(MechanismAccuracy(**common, hit=p, hit_low=low, hit_high=high))
    return tuple(out)


__all__ = [
    "AccuracyPlan",
    "COUNT_MECHANISMS",
    "Cost",
    "CountTarget",
    "JOINT",
    "LAWS",
    "MechanismAccuracy",
    "NEIGHBOURS",
    "OPENDP_GRANULARITY",
    "SimulatedHit",
    "TOPK_MECHANISMS",
    "TopKTarget",
    "accuracy_at",
    "accuracy_first",
    "gumbel_hit_at_counts",
    "joint_failure",
    "laplace_alpha_for",
    "laplace_failure",
    "laplace_scale_for",
    "mqm_eps_for_scale",
    "per_count_failure",
    "simulate_critical_scales",
    "topk_gap_for",
    "topk_hit_at_gap",
]
