"""The noise laws the mechanisms add, and their error laws exactly (docs/math.md §13).

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
"""

import itertools
import math
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize, special, stats

from ..validation import SMALLEST_NORMAL, check_choice, check_positive, check_probability, check_whole

OPENDP_GRANULARITY = 2.0**-1074  # OpenDP's default noise lattice for 64-bit floats (its get_min_k: 2^(−1074))
LAWS = ("opendp", "continuous", "integer")
JOINT = ("each", "union", "all")
JOINT_WORDS = {
    "each": "each count on its own",
    "union": "all counts at once (union bound)",
    "all": "all counts at once (exact: independent noise)",
}
EXACT_ORDERS = 50_000  # ordered k-tuples summed exactly for the exponential mechanism at given counts
DEFAULT_DRAWS = 20_000
MAX_DRAW_CELLS = 20_000_000  # draws × |A| × |B| pair thresholds held at once
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
        scale = alpha / -math.log(failure)  # −log q, not log(1/q): 1/q overflows for a subnormal q
        return _within(alpha, scale, g, failure) if math.isfinite(scale) else math.inf
    edge = _lattice_floor(alpha, g)

    def excess(u: float) -> float:  # u = 1/s; log of the failure minus log of the target, decreasing in u
        return -edge * u + _log_tail(g * u / 2.0) - math.log(failure)

    # the root u lies between low (there excess ≥ −log(q)/2 > 0, as log 2 − log(1 + e^(−gu)) ≥ 0) and high (there
    # the failure is ≤ 2e^(−(edge+g)u) = q); solved for log u, so that no bracket or tolerance underflows
    low = -math.log(failure) / (2.0 * (edge + g))
    high = (math.log(2.0) - math.log(failure)) / (edge + g)
    if low == 0.0 or high == 0.0:  # α beyond what a double scale can follow
        return math.inf
    top = math.log(high)
    while excess(math.exp(top)) >= 0.0 and top < 700.0:  # rounding at the bracket's end (a subnormal q)
        top += 1.0
    log_root = optimize.brentq(lambda v: excess(math.exp(v)), math.log(low), top, xtol=1e-15, rtol=1e-15)
    if -log_root > math.log(sys.float_info.max):  # the scale is beyond the largest double
        return math.inf
    scale = math.exp(-log_root)
    return _within(alpha, scale, g, failure)


def _within(alpha: float, scale: float, g: float, failure: float) -> float:
    """``scale``, or the nearest smaller one that meets the target (rounding): steps of 1 ulp, doubling each time
    (a failure within an ulp of 1 moves only every ~10^14 ulps of the scale)."""
    step = math.ulp(scale)
    while not _meets(alpha, scale, g, failure):
        scale = max(scale - step, scale / 2.0)
        step *= 2.0
        if scale < SMALLEST_NORMAL:
            raise ValueError(f"no Laplace scale keeps Pr[|Z| > {alpha:g}] ≤ {failure:g} in double precision")
    return scale


def _log_tail(y: float) -> float:
    """log(1 − tanh y) for y ≥ 0, accurate at both ends (log1p(−tanh y) rounds to log 0 beyond y ≈ 19)."""
    if y < 1.0:
        return math.log1p(-math.tanh(y))
    return math.log(2.0) - 2.0 * y - math.log1p(math.exp(-2.0 * y))


def _meets(alpha: float, scale: float, g: float, failure: float) -> bool:
    """Pr[|Z| > α] ≤ ``failure``, decided in doubles and in logs (a subnormal failure keeps too few digits to
    be compared as a probability: its log is compared, with 4 ulps to spare)."""
    if _failure(alpha, scale, g) > failure:
        return False
    edge = alpha if g == 0.0 else _lattice_floor(alpha, g)
    log_failure = -edge / scale + _log_tail(g / (2.0 * scale))
    return log_failure <= math.log(failure) * (1.0 + 4.0 * sys.float_info.epsilon)


def laplace_alpha_for(scale: float, failure: float, law: str = "opendp") -> float:
    """The smallest α with Pr[|Z| > α] ≤ ``failure`` for one count with Laplace noise of ``scale``.

    On the integer lattice the answer is a whole number (0: the noise is 0 often enough).
    """
    scale = check_positive("the noise scale", scale)
    failure = check_probability("the failure probability", failure, open_interval=True)
    check_choice("law", law, LAWS)
    g = _granularity(law)
    if g == OPENDP_GRANULARITY or g == 0.0:
        return scale * -math.log(failure)
    # integer lattice: the failure depends on ⌊α⌋ = n only, 2e^(−(n+1)/s)/(1+e^(−1/s)) ≤ q
    # ⇔ n + 1 ≥ s·(log 2 − log q − log(1 + e^(−1/s))); the smallest such whole n ≥ 0
    need = scale * (math.log(2.0) - math.log(failure) - math.log1p(math.exp(-1.0 / scale))) - 1.0
    if not math.isfinite(need):  # the answer is beyond the largest double
        return math.inf
    n = max(0, math.ceil(need))
    while n > 0 and _failure(float(n - 1), scale, 1.0) <= failure:
        n -= 1
    while _failure(float(n), scale, 1.0) > failure:
        n += 1
    return float(n)


# --------------------------------------------------------------------------------------------
# the Gaussian law (Rényi Pufferfish releases, docs/math.md §17): Pr[|Z| > α] = erfc(α/(σ√2)); OpenDP's
# make_gaussian on floats draws a discrete Gaussian on a lattice far below double precision, so the
# continuous law is the law of the floats it returns, as for Laplace above.


def gaussian_failure(alpha: float, sigma: float) -> float:
    """Pr[|Z| > α] for one count with N(0, σ²) noise."""
    alpha = check_positive("α (the error bound)", alpha)
    sigma = check_positive("σ (the noise's standard deviation)", sigma)
    return float(special.erfc(alpha / (sigma * math.sqrt(2.0))))


def gaussian_alpha_for(sigma: float, failure: float) -> float:
    """The smallest α with Pr[|Z| > α] ≤ ``failure`` for N(0, σ²) noise: σ·√2·erfc⁻¹(failure)."""
    sigma = check_positive("σ (the noise's standard deviation)", sigma)
    failure = check_probability("the failure probability", failure, open_interval=True)
    alpha = sigma * math.sqrt(2.0) * float(special.erfcinv(failure))
    while gaussian_failure(alpha, sigma) > failure:  # rounding: stay on the side that meets the target
        alpha = math.nextafter(alpha, math.inf)
    return alpha


def gaussian_scale_for(alpha: float, failure: float) -> float:
    """The largest σ with Pr[|Z| > α] ≤ ``failure``: α/(√2·erfc⁻¹(failure))."""
    alpha = check_positive("α (the error bound)", alpha)
    failure = check_probability("the failure probability", failure, open_interval=True)
    sigma = alpha / (math.sqrt(2.0) * float(special.erfcinv(failure)))
    while gaussian_failure(alpha, sigma) > failure:  # rounding: stay on the side that meets the target
        sigma = math.nextafter(sigma, 0.0)
    return sigma


# --------------------------------------------------------------------------------------------
# top-k laws


def chance_of_a_set(k: int, m: int) -> float:
    return 1.0 / math.comb(m, k)


def check_topk_shape(k: int, m: int) -> tuple[int, int]:
    m = check_whole("m (the number of states)", m, minimum=2)
    k = check_whole("k (how many top states are released)", k, maximum=m)
    return k, m


def topk_hit_at_gap(k: int, m: int, gap: float, scale: float, noise: str) -> float:
    """Pr[the released top-k set is the true one] in the worst case of a ``gap`` (module docstring).

    ``noise`` is ``"gumbel"`` (exponential top-k, scale λ = 2k/ε_DP) or ``"laplace"`` (noisy
    counts sorted).  Every count vector whose k-th largest count exceeds the (k+1)-th by at least
    ``gap`` has at least this probability.
    """
    k, m = check_topk_shape(k, m)
    gap = check_positive("the gap between the k-th and the (k+1)-th count", gap)
    scale = check_positive("the noise scale", scale)
    check_choice("noise", noise, ("gumbel", "laplace"))
    if k == m:
        return 1.0
    z = gap / scale
    if noise == "gumbel":
        ratio = math.exp(-z) if z < 745 else 0.0
        return math.exp(sum(-math.log1p((m - k) / (k - j) * ratio) for j in range(k)))

    return _laplace_topk_hit(k, m, z)


def _laplace_topk_hit(k: int, m: int, z: float) -> float:
    """∫ k·f(y)(1 − F(y))^(k−1)·F(y + z)^(m−k) dy for the standard Laplace law (f, F), to ~1e-12 relative.

    The mass of the first factors lies within a few dozen of y = 0 and the last factor turns from 0 to 1
    within a few dozen of y = −z, so the line is cut at −z ± 60 and 0 ± 60 and each piece integrated on its
    own (one quadrature over [−z, 0] misses the mass at 0 once z reaches ~1e5).  Every factor is taken
    in logs.  Both the hit and the miss 1 − hit = ∫ k·f·(1 − F)^(k−1)·(1 − F(y + z)^(m−k)) are integrated
    (the first factors integrate to 1 exactly); the smaller of the two is the accurate one.
    """

    def log_head(y: float) -> float:  # log of k·f(y)(1 − F(y))^(k−1)
        tail = -y - math.log(2.0) if y > 0 else math.log1p(-0.5 * math.exp(y))
        return math.log(k) - abs(y) - math.log(2.0) + (k - 1) * tail

    def log_below(x: float) -> float:  # log F(x)
        return math.log1p(-0.5 * math.exp(-x)) if x > 0 else x - math.log(2.0)

    def hit(y: float) -> float:
        return math.exp(log_head(y) + (m - k) * log_below(y + z))

    def miss(y: float) -> float:
        return math.exp(log_head(y)) * -math.expm1((m - k) * log_below(y + z))

    cuts = sorted({-z - 60.0, -z, -z + 60.0, -60.0, 0.0, 60.0})
    edges = [-math.inf, *cuts, math.inf]
    totals = []
    for integrand in (hit, miss):
        total = 0.0
        for lo, hi in zip(edges[:-1], edges[1:]):
            if lo < hi:
                with warnings.catch_warnings():  # pieces whose values underflow: their sum is what it is
                    warnings.simplefilter("ignore", integrate.IntegrationWarning)
                    value, _ = integrate.quad(integrand, lo, hi, epsabs=0.0, epsrel=1e-12, limit=200)
                total += value
        totals.append(total)
    got, lost = totals
    value = got if got <= lost else 1.0 - lost
    return min(1.0, max(0.0, value))


def topk_gap_for(k: int, m: int, hit: float, scale: float, noise: str) -> float:
    """The smallest gap between the k-th and (k+1)-th count for which top-k is right with probability ≥ ``hit``.

    The reverse of :func:`topk_hit_at_gap` (increasing in the gap): with this noise, any count
    vector whose k-th largest count exceeds the next by at least the answer gets the true top-k
    set with probability ≥ ``hit``.
    """
    k, m = check_topk_shape(k, m)
    hit = check_probability("h (the top-k hit rate)", hit, open_interval=True)
    scale = check_positive("the noise scale", scale)
    if k == m or hit <= chance_of_a_set(k, m):
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


def invert_scale(probability, target: float, start: float) -> float:
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


def top_split(counts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """A = the states that may be in a true top-k set (count ≥ the k-th largest), B = the others."""
    threshold = np.sort(counts)[::-1][k - 1]
    return np.flatnonzero(counts >= threshold), np.flatnonzero(counts < threshold)


def sure_states(counts: np.ndarray, k: int) -> np.ndarray:
    """The states in every true top-k set: count above the k-th largest."""
    threshold = np.sort(counts)[::-1][k - 1]
    return np.flatnonzero(counts > threshold)


def exact_orders(a: np.ndarray, k: int) -> int:
    return math.perm(a.size, k)


def gumbel_hit_at_counts(counts: Sequence[float], k: int, scale: float) -> float:
    """Pr[exponential top-k returns a true top-k set] for these counts, exactly (Gumbel noise of ``scale``).

    A true top-k set holds every state whose count is above the k-th largest count and fills
    the rest with states at exactly the k-th largest count (ties make several such sets).  The
    sum runs over the ordered k-tuples of such sets of the product of the k rounds' softmax
    probabilities, in log space.
    """
    values = check_topk_counts(counts, k)
    scale = check_positive("the noise scale", scale)
    a, b = top_split(values, k)
    if b.size == 0:
        return 1.0
    if exact_orders(a, k) > EXACT_ORDERS:
        raise ValueError(
            f"{exact_orders(a, k):,} orders of the possible top-{k} states are too many to sum exactly;"
            " use topk_hit (simulated)"
        )
    logw = (values - values.max()) / scale
    log_b = float(np.logaddexp.reduce(logw[b]))  # the states outside every true top-k set stay unpicked
    sure = np.flatnonzero(np.isin(a, sure_states(values, k)))  # positions in A of the states every true set holds
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


def check_topk_counts(counts: Sequence[float], k: int) -> np.ndarray:
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
    values = check_topk_counts(counts, k)
    check_choice("noise", noise, ("gumbel", "laplace"))
    draws = check_whole("draws", draws, minimum=100)
    seed = check_whole("seed", seed, minimum=0)
    a, b = top_split(values, k)
    if b.size == 0:
        return SimulatedHit(np.full(draws, math.inf), draws, seed, noise)
    sure = sure_states(values, k)
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
# the noise records: one per noise law a mechanism adds (what every consumer reads)


@dataclass(frozen=True, kw_only=True)
class Noise:
    """One noise law a mechanism adds to every count: its typed code, its label, and its error laws (§13).

    ``name`` is the code a mechanism's ``noise`` carries; ``label`` how pages and scripts name the noise
    ("Laplace(3.2)"); ``symbol`` its short form in a ledger cell ("Lap(3.2)").  All functions take the
    noise's scale (per count):

    - ``sample(rng, scale, shape)`` draws the noise (numpy, reproducible: for simulations and teaching);
    - ``failure(alpha, scale)`` = Pr[|Z| > α] for one count;
    - ``interval(scale, failure)`` = the smallest α with Pr[|Z| > α] ≤ ``failure`` (the ± of one count);
    - ``scale_for(alpha, failure)`` = the largest scale with Pr[|Z| > α] ≤ ``failure``;
    - ``topk_hit(k, m, gap, scale)`` = Pr[the noisy top-k set is the true one] for every count vector whose
      k-th largest count leads the next by ≥ ``gap`` (the worst case), and ``topk_gap(k, m, hit, scale)``
      the smallest such gap for a hit rate;
    - ``scale_family``: the noise is ``scale`` times one standard draw, so that the seeded simulation of
      critical scales (:func:`simulate_critical_scales`) serves every scale (False for a lattice law);
    - ``hit_at_counts(counts, k, scale)``: Pr[the noisy top-k set is a true one] at given counts, exactly
      (None: simulated, when ``scale_family``).
    """

    name: str
    label: str
    symbol: str
    sample: Callable[[np.random.Generator, float, tuple[int, ...]], np.ndarray]
    failure: Callable[[float, float], float]
    interval: Callable[[float, float], float]
    scale_for: Callable[[float, float], float]
    topk_hit: Callable[[int, int, float, float], float]
    topk_gap: Callable[[int, int, float, float], float]
    scale_family: bool
    hit_at_counts: Callable[[Sequence[float], int, float], float] | None = None

    def __post_init__(self) -> None:
        for field_name in ("name", "label", "symbol"):
            value = getattr(self, field_name)
            if not isinstance(value, str) or not value:
                raise TypeError(f"Noise {field_name} must be a non-empty string; got {value!r}")
        for field_name in ("sample", "failure", "interval", "scale_for", "topk_hit", "topk_gap"):
            if not callable(getattr(self, field_name)):
                value = getattr(self, field_name)
                raise TypeError(f"Noise {self.name}: {field_name} must be a function; got {value!r}")
        if not isinstance(self.scale_family, bool):
            raise TypeError(f"Noise {self.name}: scale_family must be True or False; got {self.scale_family!r}")

    def text(self, scale: float, digits: int = 3) -> str:
        """The noise as a formula, e.g. ``Laplace(3.21)``."""
        return f"{self.label}({scale:.{digits}g})"


def _meeting(
    interval: Callable[[float, float], float], failure: Callable[[float, float], float]
) -> Callable[[float, float], float]:
    """``interval`` moved up by whole ulps until its failure law meets the target (the side that holds)."""

    def meets(scale: float, target: float) -> float:
        alpha = interval(scale, target)
        while alpha > 0 and failure(alpha, scale) > target:
            alpha = math.nextafter(alpha, math.inf)
        return alpha

    return meets


def _zeros_if_no_noise(scale: float, shape: tuple[int, ...], draw: Callable[[], np.ndarray]) -> np.ndarray:
    return np.zeros(shape) if scale == 0 else draw()


def _gumbel_failure(alpha: float, scale: float) -> float:
    """Pr[|G| > α] for Gumbel(0, λ) noise: 1 − F(α) + F(−α), F(x) = exp(−e^(−x/λ)) (docs/math.md §13)."""
    alpha = check_positive("α (the error bound)", alpha)
    z = alpha / check_positive("the noise scale", scale)
    return -math.expm1(-math.exp(-z)) + (math.exp(-math.exp(z)) if z < 700 else 0.0)


def _gumbel_ratio(failure: float) -> float:
    """The z = α/λ at which Pr[|G| > α] = ``failure`` (decreasing in z), rounded to the side that meets it."""
    failure = check_probability("the failure probability", failure, open_interval=True)

    def excess(z: float) -> float:
        return _gumbel_failure(z, 1.0) - failure

    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
    z = optimize.brentq(excess, 1e-300, hi, xtol=1e-15, rtol=1e-15) if excess(1e-300) > 0 else 1e-300
    while excess(z) > 0:
        z = math.nextafter(z, math.inf)
    return z


def _gumbel_interval(scale: float, failure: float) -> float:
    return check_positive("the noise scale", scale) * _gumbel_ratio(failure)


def _gumbel_scale_for(alpha: float, failure: float) -> float:
    scale = check_positive("α (the error bound)", alpha) / _gumbel_ratio(failure)
    while _gumbel_failure(alpha, scale) > failure:
        scale = math.nextafter(scale, 0.0)
    return scale


DISCRETE_TERMS = 2_000_000  # lattice points summed at most for the discrete top-k law (a lower bound beyond)


def discrete_topk_hit_at_gap(k: int, m: int, gap: float, scale: float) -> float:
    """Pr[the noisy top-k set is the true one] with discrete Laplace noise, worst case of a ``gap`` (ties lose; §13).

    Noise Pr[Z = z] ∝ p^|z|, p = e^(−1/s), on every count.  The worst case is as for continuous noise (all
    top counts tied at the boundary, all others ``gap`` below); a noisy tie between a top state and another
    is counted as a loss (the release may break it either way), so the answer is a lower bound.  The set is
    right when max_j Z_j ≤ min_i Z_i + d − 1, d = ⌈gap⌉, so the answer is
    Σ_y Pr[min of k noises = y]·Pr[Z ≤ y + d − 1]^(m−k), summed exactly over the lattice points whose
    terms exceed 10^−17 (at most :data:`DISCRETE_TERMS`; the terms left out only lower the answer).
    """
    k, m = check_topk_shape(k, m)
    gap = check_positive("the gap between the k-th and the (k+1)-th count", gap)
    scale = check_positive("the noise scale", scale)
    if k == m:
        return 1.0
    log_p = -1.0 / scale
    p = math.exp(log_p)
    d = math.ceil(gap)
    reach = math.log(1e-17 / (2 * k)) / log_p
    n = int(min(DISCRETE_TERMS, max(2.0, math.ceil(reach) + d + 1)))
    y = np.arange(-n, n + 1, dtype=float)

    def log_cdf(x: np.ndarray) -> np.ndarray:  # log Pr[Z ≤ x] for whole x: 1 − p^(x+1)/(1+p), or p^(−x)/(1+p)
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            upper = np.log1p(-np.exp((np.maximum(x, 0.0) + 1.0) * log_p - math.log1p(p)))
            return np.where(x >= 0, upper, -x * log_p - math.log1p(p))

    log_from = log_cdf(-y)  # log Pr[Z ≥ y] (the law is symmetric)
    log_after = log_cdf(-y - 1.0)  # log Pr[Z ≥ y + 1]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        first = np.exp(k * log_after) * np.expm1(k * (log_from - log_after))  # Pr[min of k = y]
        below = np.exp((m - k) * log_cdf(y + d - 1.0))
    first = np.nan_to_num(first, nan=0.0, posinf=0.0)
    return float(min(1.0, max(0.0, np.sum(first * below))))


def discrete_topk_gap_for(k: int, m: int, hit: float, scale: float) -> float:
    """The smallest whole gap for which :func:`discrete_topk_hit_at_gap` reaches ``hit`` (0: chance does)."""
    k, m = check_topk_shape(k, m)
    hit = check_probability("h (the top-k hit rate)", hit, open_interval=True)
    scale = check_positive("the noise scale", scale)
    if k == m or hit <= chance_of_a_set(k, m):
        return 0.0
    lo, hi = 0, 1
    while discrete_topk_hit_at_gap(k, m, hi, scale) < hit:
        lo, hi = hi, 2 * hi
        if hi > 2**60:
            raise ValueError(f"no gap reaches a top-{k} hit rate of {hit:g} with this noise")
    while hi - lo > 1:  # the law is non-decreasing in the gap: the smallest whole gap that meets it
        mid = (lo + hi) // 2
        if discrete_topk_hit_at_gap(k, m, mid, scale) >= hit:
            hi = mid
        else:
            lo = mid
    return float(hi)


def gaussian_topk_hit_at_gap(k: int, m: int, gap: float, scale: float) -> float:
    """Pr[the noisy top-k set is the true one] with N(0, σ²) noise on every count, worst case of a ``gap`` (§13).

    The worst case is as for Laplace noise (all top counts tied at the boundary, all others ``gap`` below), so
    the answer is ∫ k·φ(y)·(1 − Φ(y))^(k−1)·Φ(y + gap/σ)^(m−k) dy, integrated in log space (standard units).
    """
    k, m = check_topk_shape(k, m)
    gap = check_positive("the gap between the k-th and the (k+1)-th count", gap)
    sigma = check_positive("σ (the noise's standard deviation)", scale)
    if k == m:
        return 1.0
    g = gap / sigma

    def integrand(y: float) -> float:
        log = math.log(k) + float(stats.norm.logpdf(y)) + (k - 1) * float(special.log_ndtr(-y))
        return math.exp(log + (m - k) * float(special.log_ndtr(y + g)))

    # φ(y) < 1e-300 outside [−38, 38]: the integrand's mass lies there, with its bend near y = −gap/σ
    points = [0.0] + ([-g] if g < 38.0 else [])
    value, _ = integrate.quad(integrand, -38.0, 38.0, points=points, limit=400, epsabs=1e-13, epsrel=1e-12)
    return float(min(1.0, max(0.0, value)))


def gaussian_topk_gap_for(k: int, m: int, hit: float, scale: float) -> float:
    """The smallest gap for which :func:`gaussian_topk_hit_at_gap` reaches ``hit`` (0: chance does)."""
    k, m = check_topk_shape(k, m)
    hit = check_probability("h (the top-k hit rate)", hit, open_interval=True)
    sigma = check_positive("σ (the noise's standard deviation)", scale)
    if k == m or hit <= chance_of_a_set(k, m):
        return 0.0
    hi = sigma
    while gaussian_topk_hit_at_gap(k, m, hi, sigma) < hit:
        hi *= 2.0
        if hi > 1e300:
            raise ValueError(f"no gap reaches a top-{k} hit rate of {hit:g} with this noise")
    lo = 0.0
    for _ in range(200):  # the law is non-decreasing in the gap; keep the side that meets the target
        if hi - lo <= 1e-12 * hi:
            break
        mid = 0.5 * (lo + hi)
        if gaussian_topk_hit_at_gap(k, m, mid, sigma) >= hit:
            hi = mid
        else:
            lo = mid
    return hi


def _discrete_failure(alpha: float, scale: float) -> float:
    """Pr[|Z| > α] on the integer lattice; α = 0 is allowed (the noise is 0 often enough)."""
    if alpha == 0:
        return _failure(0.0, check_positive("the noise scale", scale), 1.0)
    return laplace_failure(alpha, scale, "integer")


def _geometric(rng: np.random.Generator, scale: float, shape: tuple[int, ...]) -> np.ndarray:
    """Discrete Laplace draws: the difference of two geometric counts of failures, p = 1 − e^(−1/s)."""
    p = -math.expm1(-1.0 / scale)
    return (rng.geometric(p, size=shape) - rng.geometric(p, size=shape)).astype(float)


LAPLACE = Noise(
    name="laplace",
    label="Laplace",
    symbol="Lap",
    sample=lambda rng, scale, shape: _zeros_if_no_noise(scale, shape, lambda: rng.laplace(0.0, scale, size=shape)),
    failure=lambda alpha, scale: laplace_failure(alpha, scale, "opendp"),
    interval=_meeting(lambda s, q: laplace_alpha_for(s, q, "opendp"), lambda a, s: laplace_failure(a, s, "opendp")),
    scale_for=lambda alpha, failure: laplace_scale_for(alpha, failure, "opendp"),
    topk_hit=lambda k, m, gap, scale: topk_hit_at_gap(k, m, gap, scale, "laplace"),
    topk_gap=lambda k, m, hit, scale: topk_gap_for(k, m, hit, scale, "laplace"),
    scale_family=True,
)
DISCRETE_LAPLACE = Noise(
    name="discrete_laplace",
    label="discrete Laplace",
    symbol="DLap",
    sample=lambda rng, scale, shape: _zeros_if_no_noise(scale, shape, lambda: _geometric(rng, scale, shape)),
    failure=_discrete_failure,
    interval=lambda scale, failure: laplace_alpha_for(scale, failure, "integer"),
    scale_for=lambda alpha, failure: laplace_scale_for(alpha, failure, "integer"),
    topk_hit=discrete_topk_hit_at_gap,
    topk_gap=discrete_topk_gap_for,
    scale_family=False,
)
GUMBEL = Noise(
    name="gumbel",
    label="Gumbel",
    symbol="Gumbel",
    sample=lambda rng, scale, shape: _zeros_if_no_noise(scale, shape, lambda: rng.gumbel(0.0, scale, size=shape)),
    failure=_gumbel_failure,
    interval=_gumbel_interval,
    scale_for=_gumbel_scale_for,
    topk_hit=lambda k, m, gap, scale: topk_hit_at_gap(k, m, gap, scale, "gumbel"),
    topk_gap=lambda k, m, hit, scale: topk_gap_for(k, m, hit, scale, "gumbel"),
    scale_family=True,
    hit_at_counts=gumbel_hit_at_counts,
)
GAUSSIAN = Noise(
    name="gaussian",
    label="Gaussian",
    symbol="N",
    sample=lambda rng, scale, shape: _zeros_if_no_noise(scale, shape, lambda: rng.normal(0.0, scale, size=shape)),
    failure=gaussian_failure,
    interval=gaussian_alpha_for,
    scale_for=gaussian_scale_for,
    topk_hit=gaussian_topk_hit_at_gap,
    topk_gap=gaussian_topk_gap_for,
    scale_family=True,
)
# the Laplace noise on another lattice than OpenDP's floats (``law`` of :class:`~.accuracy.CountTarget`)
CONTINUOUS_LAPLACE = Noise(
    name="laplace",
    label="Laplace",
    symbol="Lap",
    sample=LAPLACE.sample,
    failure=lambda alpha, scale: laplace_failure(alpha, scale, "continuous"),
    interval=_meeting(
        lambda s, q: laplace_alpha_for(s, q, "continuous"), lambda a, s: laplace_failure(a, s, "continuous")
    ),
    scale_for=lambda alpha, failure: laplace_scale_for(alpha, failure, "continuous"),
    topk_hit=LAPLACE.topk_hit,
    topk_gap=LAPLACE.topk_gap,
    scale_family=True,
)
LAPLACE_LAWS: dict[str, Noise] = {"opendp": LAPLACE, "continuous": CONTINUOUS_LAPLACE, "integer": DISCRETE_LAPLACE}


def _register(*records: Noise) -> dict[str, Noise]:
    out: dict[str, Noise] = {}
    for record in records:
        if not isinstance(record, Noise):
            raise TypeError(f"NOISES holds Noise records; got {type(record).__name__}")
        if record.name in out:
            raise ValueError(f"two noise records are named {record.name!r}")
        out[record.name] = record
    return out


NOISES: dict[str, Noise] = _register(LAPLACE, DISCRETE_LAPLACE, GUMBEL, GAUSSIAN)


def noise_law(name: object) -> Noise:
    """The record of noise ``name`` (a mechanism's ``noise`` code); ValueError naming the known ones otherwise."""
    if not isinstance(name, str) or name not in NOISES:
        raise ValueError(f"unknown noise {name!r}; choose from {', '.join(NOISES)}")
    return NOISES[name]


def as_noise(noise: object) -> Noise:
    """A :class:`Noise` record as given, or the record of a noise code (``"laplace"``, ``"gumbel"``, …)."""
    return noise if isinstance(noise, Noise) else noise_law(noise)


__all__ = [
    "as_noise",
    "chance_of_a_set",
    "check_topk_counts",
    "check_topk_shape",
    "CONTINUOUS_LAPLACE",
    "DEFAULT_DRAWS",
    "DISCRETE_LAPLACE",
    "DISCRETE_TERMS",
    "discrete_topk_gap_for",
    "discrete_topk_hit_at_gap",
    "EXACT_ORDERS",
    "exact_orders",
    "GAUSSIAN",
    "gaussian_alpha_for",
    "gaussian_failure",
    "gaussian_scale_for",
    "gaussian_topk_gap_for",
    "gaussian_topk_hit_at_gap",
    "GUMBEL",
    "gumbel_hit_at_counts",
    "invert_scale",
    "JOINT",
    "joint_failure",
    "JOINT_WORDS",
    "LAPLACE",
    "laplace_alpha_for",
    "laplace_failure",
    "LAPLACE_LAWS",
    "laplace_scale_for",
    "LAWS",
    "MAX_DRAW_CELLS",
    "Noise",
    "noise_law",
    "NOISES",
    "OPENDP_GRANULARITY",
    "per_count_failure",
    "simulate_critical_scales",
    "SimulatedHit",
    "sure_states",
    "top_split",
    "topk_gap_for",
    "topk_hit_at_gap",
]
