"""Gaussian noise on a count under Rényi Pufferfish: the GWM's σ and the exact σ* (docs/math.md §17).

For a count F of a chain prior (:mod:`.count_laws`), an order α > 1 and a target ε:

- **General Wasserstein Mechanism** (Pierquin, Bellet, Tommasi, Boussard, ICML 2024): with W∞ the largest
  ∞-Wasserstein distance between the count's laws under the two secrets of a protected pair (over every pair,
  position and θ), F + N(0, σ²) with σ²_GWM = α·W∞²/(2ε) is (α, ε)-Rényi Pufferfish private.
- **Exact σ\\***: the release under s is the mixture Σ_c Pr[F = c | s, θ]·N(c, σ²); its Rényi divergence is
  bracketed with a certified error (:mod:`.mixtures`), and D_α is non-increasing in σ (adding independent
  noise is post-processing), so bisection finds the smallest σ whose certified divergence is ≤ ε for every
  pair.  σ\\* ≤ σ_GWM always: σ_GWM is feasible by the theorem, and the search never goes above it.

**The search.**  All pairs are bracketed once; the bisection then follows the few worst, and every candidate
σ\\* is checked against all pairs again (a pair that fails joins the followed ones).  A bracket that cannot
decide (ε inside it) is refined (narrower cells, a wider range) up to a limit and otherwise counted as
infeasible, so the σ\\* returned is always certified.  ``floor`` is a σ certified to be too small (some pair's
lower bound is above ε): the smallest feasible σ lies in (floor, σ\\*].
The search is bounded: when σ_GWM itself cannot be certified by the brackets (rounding can put α·W∞²/(2σ²_GWM) a
hair above ε) or the full checks do not settle, σ\\* = σ_GWM — sound by the GWM's theorem — and
``search_note`` says why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..priors.models import MarkovChainPrior, as_theta
from ..secrets.values import Secrets
from ..validation import as_double, check_eps, check_flag, check_number, check_positive, check_whole, is_number
from ..work import WorkCounter, WorkEstimate, combine, one_blas_thread
from .count_laws import CountLaws, CountScale, count_laws, count_laws_estimate, count_wasserstein
from .mixtures import Bracket, Grid, count_grid, profile, ratio_bracket, renyi_bracket, split_cells, widen

MAX_ORDER = 256.0
RELATIVE_SIGMA = 1e-4  # the bisection stops when σ* / floor − 1 is below this
_ROUNDS = 40  # refinements of one bracket at most
_MOST_CELLS = 400_000  # cells of one bracket's grid at most
_FOLLOWED = 6  # pairs followed by the bisection between full checks
_SPAN = 7.0  # the grid reaches this many σ beyond the counts' range at first

MIN_SIGMA = 1e-100  # below it σ² nears the subnormal range: refused (ε ≈ 1e200 for W∞ = 1)


def check_order(alpha: object) -> float:
    """A Rényi order α with 1 < α ≤ 256."""
    value = check_number("α (the Rényi order)", alpha)
    if not 1.0 < value <= MAX_ORDER:
        raise ValueError(
            f"α (the Rényi order) must be above 1 and at most {MAX_ORDER:g}; got {value:g} (α = 1 is the KL"
            " divergence, which gives no (ε, δ) guarantee on its own)"
        )
    return value


def _level(name: str, value: object) -> float:
    """A level ≥ 0 that may be +inf (ε, σ): refused when NaN, negative or not a number."""
    if is_number(value) and as_double(name, value) == math.inf:
        return math.inf
    return check_eps(name, value, allow_zero=True)


def _order(alpha: object) -> float:
    """A Rényi order α > 1 (finite; the formulas need no upper limit, unlike the exact search's check_order)."""
    value = check_number("α (the Rényi order)", alpha)
    if value <= 1.0:
        raise ValueError(f"α (the Rényi order) must be above 1; got {value:g}")
    return value


def gwm_sigma(w: float, alpha: float, eps: float) -> float:
    """σ_GWM = W∞·√(α/(2ε)): the General Wasserstein Mechanism's noise (module docstring); ε = ∞ needs none."""
    w, alpha = check_eps("W∞ (the query's sensitivity)", w, allow_zero=True), _order(alpha)
    if _level("ε", eps) == math.inf:
        return 0.0
    eps = check_positive("ε", eps)  # no finite Gaussian noise gives ε = 0
    if w == 0:
        return 0.0
    if eps > 1e307:  # 2ε would overflow (to σ = 0); the exact search needs the formula below, rounding included
        return w * math.sqrt(alpha / 2.0) / math.sqrt(eps)
    return w * math.sqrt(alpha / (2.0 * eps))


def gwm_eps(w: float, alpha: float, sigma: float) -> float:
    """The GWM's bound α·W∞²/(2σ²) on D_α at noise σ (inf at σ = 0 unless W∞ = 0)."""
    w, alpha = check_eps("W∞ (the query's sensitivity)", w, allow_zero=True), _order(alpha)
    sigma = _level("σ", sigma)
    if w == 0:
        return 0.0
    square = sigma * sigma  # products, not **: a float product overflows to inf, a power raises
    return math.inf if square == 0 else alpha * (w * w) / (2.0 * square)


@dataclass(frozen=True)
class PairBrackets:
    """Certified brackets of every pair of ``pairs`` (rows of :attr:`CountLaws.pairs`) at one σ."""

    sigma: float
    pairs: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @property
    def worst(self) -> int:
        """The row (into :attr:`CountLaws.pairs`) with the largest upper bound."""
        return int(self.pairs[int(np.argmax(self.high))])


class Divergences:
    """Certified D_α and likelihood-ratio brackets of one count's release under every protected pair.

    Built from the :class:`CountLaws` of a count and its W∞; :meth:`renyi` and :meth:`ratio` bracket the
    release with noise σ, for any subset of pairs, refining each bracket until it is within ``tolerance``
    of its value (or decides against a threshold) — module docstring of :mod:`.mixtures`.
    ``units`` counts the (law, count, point) cells evaluated ("forward-backward" units).
    """

    def __init__(self, laws: CountLaws, w: int) -> None:
        self.laws, self.w = laws, int(w)
        self.units = 0.0
        finite = np.isfinite(laws.log_laws)
        self.lowest = np.argmax(finite, axis=1)  # each law's smallest and largest possible count
        self.highest = laws.size - 1 - np.argmax(finite[:, ::-1], axis=1)

    def _range(self, rows: np.ndarray) -> tuple[float, float]:
        used = np.unique(self.laws.pairs[rows].reshape(-1))
        return float(self.lowest[used].min()), float(self.highest[used].max())

    def _bracket(self, rows: np.ndarray, grid: Grid, alpha: float | None) -> Bracket:
        used, inverse = np.unique(self.laws.pairs[rows].reshape(-1), return_inverse=True)
        shape = profile(self.laws.log_laws[used], grid)
        self.units += used.size * self.laws.size * (2 * grid.cells + 1)
        i, j = inverse.reshape(-1, 2).T
        if alpha is None:
            return ratio_bracket(shape, shape, i, j, grid, self.laws.rounding)
        return renyi_bracket(shape, shape, i, j, grid, alpha, self.laws.rounding)

    def _refined(self, rows: np.ndarray, sigma: float, alpha: float | None, tolerance: float,
                 threshold: float | None, rounds: int = _ROUNDS) -> tuple[np.ndarray, np.ndarray]:
        """Adaptive brackets: cut the cells that hold most of the gap, widen the range when the tails do."""
        low = np.zeros(rows.size)
        high = np.full(rows.size, np.inf)
        todo = np.arange(rows.size)
        reach = _SPAN + (0.0 if alpha is None else 2.0 * math.sqrt(alpha))
        first, last = self._range(rows)
        grid = count_grid(sigma, first - reach * sigma, last + reach * sigma)
        step = max(sigma, 0.5)
        for _ in range(rounds):
            bracket = self._bracket(rows[todo], grid, alpha)
            low[todo], high[todo] = bracket.low, bracket.high
            scale = tolerance * np.maximum(1.0, np.abs(bracket.high))
            with np.errstate(invalid="ignore"):
                open_ = ~((bracket.high - bracket.low <= scale) | np.isposinf(bracket.low))
            if threshold is not None:
                open_ &= (bracket.low <= threshold) & (bracket.high > threshold)
            if not np.any(open_) or grid.cells >= _MOST_CELLS:
                break
            todo = todo[open_]
            if bracket.cells is None:
                raise RuntimeError("a bracket without its cells cannot be refined")
            if alpha is None:  # cells whose bound is above the best value found are where the supremum may be
                gap = bracket.cells[open_] - (bracket.low[open_] + scale[open_])[:, None]
                tails = bracket.tails[open_] > bracket.low[open_] + scale[open_]
                chosen = np.any(gap > 0, axis=0)
            else:
                share = bracket.cells[open_]
                tails = bracket.tails[open_] > 0.25 * (share.sum(axis=1) + bracket.tails[open_])
                score = share.max(axis=0)
                order = np.argsort(-score)
                cumulative = np.cumsum(score[order])
                count = int(np.searchsorted(cumulative, 0.8 * cumulative[-1])) + 1
                chosen = np.zeros(grid.cells, dtype=bool)
                chosen[order[:count]] = True
            if np.any(chosen):
                grid = split_cells(grid, chosen)
            if np.any(tails):
                reach *= 2.0
                grid = widen(grid, first - reach * sigma, last + reach * sigma, step)
        return low, high

    def renyi(self, sigma: float, alpha: float, rows: np.ndarray | None = None, tolerance: float = 1e-6,
              threshold: float | None = None, rounds: int = _ROUNDS) -> PairBrackets:
        """Brackets of D_α at noise ``sigma`` for ``rows`` (default: every pair), capped by the GWM bound.

        ``threshold``: stop refining a bracket once it is entirely above or below it; ``rounds``: refine at
        most this many times (1: the first grid only).
        """
        rows = np.arange(self.laws.n_pairs) if rows is None else np.asarray(rows, dtype=int)
        if rows.size == 0 or self.w == 0:
            return PairBrackets(sigma, rows, np.zeros(rows.size), np.zeros(rows.size))
        if sigma == 0:
            return PairBrackets(sigma, rows, np.full(rows.size, np.inf), np.full(rows.size, np.inf))
        low, high = self._refined(rows, sigma, alpha, tolerance, threshold, rounds)
        cap = gwm_eps(self.w, alpha, sigma)
        return PairBrackets(sigma, rows, np.minimum(low, cap), np.minimum(high, cap))

    def ratio(self, sigma: float, rows: np.ndarray | None = None, tolerance: float = 1e-6) -> PairBrackets:
        """Brackets of sup_y log p_i(y)/p_j(y) at noise ``sigma``: the release's pure ε-Pufferfish level per pair."""
        rows = np.arange(self.laws.n_pairs) if rows is None else np.asarray(rows, dtype=int)
        if rows.size == 0 or self.w == 0:
            return PairBrackets(sigma, rows, np.zeros(rows.size), np.zeros(rows.size))
        if sigma == 0:
            return PairBrackets(sigma, rows, np.full(rows.size, np.inf), np.full(rows.size, np.inf))
        low, high = self._refined(rows, sigma, None, tolerance, None)
        return PairBrackets(sigma, rows, low, high)


@dataclass(frozen=True)
class GaussianCalibration:
    """σ_GWM and the exact σ\\* of one count at (α, ε), and what they give (module docstring, docs/math.md §17).

    ``divergence`` (``divergence_low``) bounds D_α at σ\\* from above (below) over every pair; ``worst`` names
    the pair that attains it; ``floor`` is a σ certified to be too small (0 when none was needed).
    ``pure_eps`` is a certified upper bound on the release's pure ε-Pufferfish level at σ\\* (sup of the
    likelihood ratio), +inf when none exists (``pure_note`` says why).
    """

    alpha: float
    eps: float
    w: int
    sigma_gwm: float
    sigma: float
    floor: float
    divergence: float
    divergence_low: float
    worst: str
    pure_eps: float
    pure_note: str
    near_tie: bool
    pairs: int
    units: float = field(default=0.0, compare=False)
    search_note: str = ""  # non-empty when the exact search fell back to σ_GWM, and why (exact_sigma)

    @property
    def variance_saved(self) -> float:
        """1 − σ\\*²/σ²_GWM: the share of the GWM's variance the exact calibration does without."""
        return 0.0 if self.sigma_gwm == 0 else 1.0 - (self.sigma / self.sigma_gwm) ** 2

    def describe(self) -> str:
        return (
            f"(α = {self.alpha:g}, ε = {self.eps:g})-Rényi Pufferfish: W∞ = {self.w}, σ_GWM = {self.sigma_gwm:.4g},"
            f" exact σ* = {self.sigma:.4g} ({100 * self.variance_saved:.1f}% less variance); D_α(σ*) ≤"
            f" {self.divergence:.6g}, worst at {self.worst}" + (f" ({self.search_note})" if self.search_note else "")
        )


def _feasible(div: Divergences, sigma: float, alpha: float, eps: float, rows: np.ndarray | None) -> PairBrackets:
    return div.renyi(sigma, alpha, rows, tolerance=1e-7, threshold=eps)


def _rounds(div: Divergences) -> int:
    """Full checks of the search at most: a failed check usually follows at least one more pair, so n_pairs/6 + 1
    is the usual need; the margin covers checks that add none (the search then falls back to σ_GWM)."""
    return div.laws.n_pairs // _FOLLOWED + 1 + _ROUNDS


def _at_gwm(div: Divergences, alpha: float, sigma_gwm: float, floor: float, check: PairBrackets,
            why: str) -> tuple[float, float, PairBrackets, str]:
    """σ\\* = σ_GWM when the search cannot certify anything smaller: the GWM's theorem bounds every pair's D_α at
    σ_GWM by α·W∞²/(2σ²_GWM) = ε (docs/math.md §17), so the upper brackets are capped by it."""
    cap = gwm_eps(div.w, alpha, sigma_gwm)
    brackets = PairBrackets(sigma_gwm, check.pairs, np.minimum(check.low, cap), np.minimum(check.high, cap))
    note = (f"σ* = σ_GWM: {why}; the GWM's bound α·W∞²/(2σ²) holds at σ_GWM by its theorem (docs/math.md §17),"
            " so this σ is sound, but no variance is saved")
    return sigma_gwm, min(floor, sigma_gwm), brackets, note


def exact_sigma(div: Divergences, alpha: float, eps: float) -> tuple[float, float, PairBrackets, str]:
    """(σ\\*, floor, brackets of every pair at σ\\*, a note): the bisection of the module docstring.

    The note is empty unless the search fell back to σ_GWM (the divergence brackets stayed undecided at σ_GWM
    itself, e.g. when rounding puts α·W∞²/(2σ²_GWM) a hair above ε, or the search did not settle in its rounds).
    """
    sigma_gwm = sigma_hi = gwm_sigma(div.w, alpha, eps)
    if div.w == 0 or div.laws.n_pairs == 0:
        return 0.0, 0.0, div.renyi(0.0, alpha), ""
    everything = div.renyi(sigma_hi, alpha, tolerance=1e-3, rounds=1)
    followed = [int(r) for r in np.argsort(-everything.high)[:_FOLLOWED]]
    floor = 0.0  # the largest σ certified too small
    sigma_lo = 0.0
    probe = sigma_hi / 2.0
    check = everything
    for _ in range(_rounds(div)):
        while sigma_lo == 0.0:  # the lower end: halve until the followed pairs are no longer certified
            at = _feasible(div, probe, alpha, eps, np.array(followed))
            if np.all(at.high <= eps) and probe > sigma_hi * 1e-6:
                sigma_hi, probe = probe, probe / 2.0
            else:
                sigma_lo = probe
                floor = max(floor, probe if np.any(at.low > eps) else 0.0)
        while sigma_hi / sigma_lo - 1.0 > RELATIVE_SIGMA:
            mid = math.sqrt(sigma_lo * sigma_hi)
            at = _feasible(div, mid, alpha, eps, np.array(followed))
            if np.all(at.high <= eps):
                sigma_hi = mid
            else:
                sigma_lo = mid
                floor = max(floor, mid if np.any(at.low > eps) else 0.0)
        # every pair on the first grid: a pair certainly above ε fails σ at once; only the undecided are refined
        check = div.renyi(sigma_hi, alpha, tolerance=1e-7, threshold=eps, rounds=1)
        if not np.any(check.low > eps):
            check = _feasible(div, sigma_hi, alpha, eps, None)
        failing = [int(r) for r in np.flatnonzero(check.high > eps)]
        if not failing:
            return sigma_hi, floor, check, ""
        if sigma_hi >= sigma_gwm:  # σ_GWM itself is not certified by the brackets: nothing smaller will be
            return _at_gwm(div, alpha, sigma_gwm, floor, check, "the divergence brackets stay undecided at σ_GWM")
        floor = max(floor, sigma_hi if np.any(check.low > eps) else 0.0)
        worst_first = [r for r in sorted(failing, key=lambda r: -check.high[r]) if r not in followed]
        followed.extend(worst_first[:_FOLLOWED])
        sigma_lo, sigma_hi = sigma_hi, sigma_gwm
    full = _feasible(div, sigma_gwm, alpha, eps, None)
    return _at_gwm(div, alpha, sigma_gwm, floor, full, f"the search did not settle in {_rounds(div)} full checks")


def pure_level(div: Divergences, sigma: float) -> tuple[float, str]:
    """A certified upper bound on the release's pure ε-Pufferfish level at ``sigma``, and why it is +inf."""
    if div.w == 0 or div.laws.n_pairs == 0:
        return 0.0, ""
    i, j = div.laws.pairs.T
    reaches = (div.lowest[i] < div.lowest[j]) | (div.highest[i] > div.highest[j])
    if np.any(reaches):  # the tails' ratio grows without bound (mixtures.ratio_bracket): no need to compute
        worst = int(np.flatnonzero(reaches)[0])
    else:
        brackets = div.ratio(sigma, tolerance=1e-5)
        worst = int(brackets.pairs[int(np.argmax(brackets.high))])
        value = float(brackets.high.max())
        if math.isfinite(value):
            return value, ""
    i, j = div.laws.pairs[worst]
    lo_i, hi_i = div.laws.support(i)
    lo_j, hi_j = div.laws.support(j)
    return math.inf, (
        f"no pure ε-Pufferfish bound at any noise: at {div.laws.describe_pair(worst)} the"
        f" count ranges over {lo_i}..{hi_i} under one secret and {lo_j}..{hi_j} under the other, and Gaussian"
        " noise has an unbounded likelihood ratio between laws that end at different counts"
    )


def pure_sigma(div: Divergences, eps: float) -> float:
    """The smallest σ (to a relative 10⁻³, rounded up) whose release is ε-Pufferfish by its certified
    likelihood ratio; +inf when no σ is (the count's laws end at different counts for some pair)."""
    if div.w == 0 or div.laws.n_pairs == 0:
        return 0.0
    if math.isinf(pure_level(div, 1.0)[0]):
        return math.inf
    high = max(1.0, float(div.w) / eps)
    while div.ratio(high, tolerance=1e-4).high.max() > eps:
        high *= 2.0
    low = high / 2.0
    while div.ratio(low, tolerance=1e-4).high.max() <= eps and low > 1e-6:
        high, low = low, low / 2.0
    while high / low - 1.0 > 1e-3:
        mid = math.sqrt(low * high)
        if div.ratio(mid, tolerance=1e-4).high.max() <= eps:
            high = mid
        else:
            low = mid
    return high


def gaussian_count_estimate(
    n_states: int, length: int, alpha: float, eps: float, n_priors: int = 1, w: int | None = None
) -> WorkEstimate:
    """The work of :func:`calibrate_gaussian_count` (an upper model; docs/math.md §17).

    The count's laws (:func:`.count_laws.count_laws_estimate`), W∞ (about 8 certified comparisons per pair),
    then about 60 brackets of the followed pairs and 3 of every pair, each on (T + 2·reach·σ)/h cells for
    T·K·|Θ| laws of T + 1 counts and about 15 units per pair and point, at the smallest σ the search reaches
    (σ_GWM/2 with W∞ = ``w``, or 1 when not yet known) — refined 4× on a few pairs; measured at load 10–14.
    """
    k, T = check_whole("n_states", n_states), check_whole("length", length)
    n_priors = check_whole("n_priors", n_priors)
    if w is not None:
        w = check_whole("w", w, minimum=0)
    alpha, eps = check_order(alpha), check_eps("ε", eps)
    sigma = max(gwm_sigma(1 if w is None else max(1, w), alpha, eps) / 2.0, 1e-3)
    reach = _SPAN + 2.0 * math.sqrt(alpha)
    points = 2 * 4 * (T / min(sigma, 1.0) + 2 * reach) + 1
    laws = T * k * n_priors
    size = T + 1
    pairs = laws * (k - 1)
    full = (2 * laws * size + 15 * pairs) * points * 3  # every pair: about three checks on the first grid
    followed = 2 * _FOLLOWED * (size + 15) * points * 60 * 2  # ~60 brackets of the followed pairs, refined
    search = WorkEstimate(
        "the exact σ*",
        # W∞: about 8 certified comparisons of every pair, 15 µs each; then the brackets (counted as cells)
        {"forward-backward": full + followed, "overhead": 200.0 * 60 + 15.0 * 8 * pairs},
        8.0 * 4_000_000 * 3,
        f"{laws:,} laws of {size} counts on about {points:,.0f} points",
        "use a shorter sequence, fewer states, or the GWM's σ alone",
    )
    return combine("the exact σ*", [count_laws_estimate(k, T, n_priors), search], search.dominant, search.advice)


def calibrate_gaussian_count(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    states: object,
    eps: float,
    alpha: float = 2.0,
    secrets: Secrets | None = None,
    exact: bool = True,
    work: WorkCounter | None = None,
) -> tuple[GaussianCalibration, Divergences]:
    """σ_GWM and the exact σ\\* for Gaussian noise on the count of ``states`` at (α, ε) (docs/math.md §17).

    Returns the :class:`GaussianCalibration` and the :class:`Divergences` of the count (for later accounts,
    e.g. k releases).  ``exact=False`` stops at the GWM (σ\\* = σ_GWM, no search).  The work is estimated and
    refused up front beyond the limits, with the estimate.
    """
    priors = as_theta(prior_or_priors, "the Gaussian mechanism")
    alpha, eps = check_order(alpha), check_eps("ε (the Rényi Pufferfish level)", eps)
    exact = check_flag("exact", exact)
    gaussian_count_estimate(priors.n_states, priors.max_length, alpha, eps, len(priors)).check()
    laws = count_laws(priors, states, secrets, work)
    scale: CountScale = count_wasserstein(laws, priors)
    div = Divergences(laws, scale.w)
    sigma_gwm = gwm_sigma(scale.w, alpha, eps)
    if scale.w > 0 and sigma_gwm < MIN_SIGMA:
        raise ValueError(
            f"ε = {eps:g} is too large: its noise σ_GWM = {sigma_gwm:.3g} is below {MIN_SIGMA:g}, where σ² leaves"
            " double precision's normal range and the divergences cannot be certified; such noise reveals the"
            " count exactly anyway — use a smaller ε"
        )
    with one_blas_thread():
        if exact:
            gaussian_count_estimate(priors.n_states, priors.max_length, alpha, eps, len(priors), scale.w).check()
            sigma, floor, at, search_note = exact_sigma(div, alpha, eps)
        else:
            sigma, floor, search_note = sigma_gwm, 0.0, ""
            at = div.renyi(sigma, alpha, tolerance=1e-6)
        pure, note = pure_level(div, sigma)
    worst = "no protected pair" if at.pairs.size == 0 else laws.describe_pair(at.worst)
    if work is not None:
        work.add(7, div.units)
    calibration = GaussianCalibration(
        alpha, eps, scale.w, sigma_gwm, sigma, floor,
        float(at.high.max()) if at.high.size else 0.0,
        float(at.low.max()) if at.low.size else 0.0,
        worst, pure, note, scale.near_tie, laws.n_pairs, div.units, search_note,
    )
    return calibration, div
