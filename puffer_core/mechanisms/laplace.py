"""Laplace counts: Pufferfish, group-DP and MQM versions ([C] §6.4.1, Algorithm 1; [S] Algorithm 1; docs/math.md §5).

Counts + Lap(L/ε_DP) on every count; a histogram of all entries has L1 sensitivity L = 2.
**Pufferfish** calibrates ε_DP from the a(b) curve (docs/math.md §3); **group DP** uses
ε_DP = ε_puffer/T_max; **MQM** adds Lap(L·σ_max(ε)) to an L-Lipschitz query
(:func:`puffer_core.engine.mqm.mqm_noise_scale`).  The papers' top-k baseline ([C] §7.1.3) releases
the m counts as m separate 1-Lipschitz queries, each with ε/m, and sorts them; MQM releases
compose additively ([S] Theorem III.7), so the m counts cost ε in total.

For top-k, the Laplace baselines can use the same split (``queries = m``: Lap(m/ε_DP) per
count).  [C] describes the split for MQM only; its Group DP-Lap numbers (far below Group
DP-Exp in Tables 2–5) are only reproducible with the split, because one Laplace histogram
(Lap(2/ε_DP)) has less noise than k exponential rounds (Gumbel(2k/ε_DP)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..accounting.calibration import Calibration, calibrate, group_dp
from ..accounting.events import CurveEvent, MQMEvent, PrivacyEvent
from ..engine.mqm import mqm_noise_scale
from ..priors.models import MarkovChainPrior, as_theta
from ..secrets.values import Secrets, as_secrets
from ..validation import check_eps, check_number, check_positive, check_probability, check_rng, check_whole
from .base import (
    HISTOGRAM_SENSITIVITY,
    MAX_OUTPUTS,
    as_curve,
    check_counts,
    check_trials,
    opendp_prelude,
    top_k_indices,
)
from .noise import LAPLACE


@dataclass(frozen=True)
class LaplaceCounts:
    """Counts + independent Lap(``scale``) noise on every count (docs/math.md §5).

    ``sensitivity`` is the L1 sensitivity of the whole released vector to one entry (2 for a
    histogram), so the release is per-entry ``sensitivity/scale``-DP.  Top-k queries take
    the k largest noisy counts (post-processing, :meth:`rank`).
    """

    accounting: PrivacyEvent
    scale: float
    sensitivity: float = HISTOGRAM_SENSITIVITY
    noise: ClassVar[str] = LAPLACE.name

    def __post_init__(self) -> None:
        if check_number("the Laplace scale", self.scale) < 0:
            raise ValueError(f"the Laplace scale must be a finite number ≥ 0; got {self.scale}")
        check_positive("sensitivity", self.sensitivity)
        # the noise must pay for the accounting: per-entry ε_DP = sensitivity/scale ≤ eps_dp (rounding aside)
        if self.sensitivity > self.accounting.eps_dp * self.scale * (1 + 1e-12):
            raise ValueError(
                f"Lap({self.scale:g}) noise on a query of L1 sensitivity {self.sensitivity:g} is only"
                f" {self.sensitivity / self.scale if self.scale else math.inf:g}-DP per entry, more than the"
                f" accounting's eps_dp = {self.accounting.eps_dp:g}"
            )

    @property
    def name(self) -> str:
        return self.accounting.mechanism

    @property
    def noise_scale(self) -> float:
        return self.scale

    @property
    def variance(self) -> float:
        """Variance 2·scale² of the noise on each count."""
        return 2.0 * self.scale**2

    @property
    def std(self) -> float:
        return math.sqrt(2.0) * self.scale

    @property
    def expected_abs_error(self) -> float:
        """E|noise| = scale, per count."""
        return self.scale

    def expected_l1_error(self, n_counts: int) -> float:
        """E Σ_j |noisy_j − c_j| = n_counts·scale, the histogram's expected L1 error."""
        return check_whole("n_counts", n_counts) * self.scale

    def interval_halfwidth(self, confidence: float = 0.95) -> float:
        """w with Pr[|noise| ≤ w] = confidence for one count: scale·ln(1/(1 − confidence))."""
        confidence = check_probability("confidence", confidence, open_interval=True)
        return self.scale * math.log(1.0 / (1.0 - confidence))

    def release(self, counts: object, rng: np.random.Generator | None = None) -> np.ndarray:
        """One release of noisy counts (same shape as ``counts``).

        With ``rng=None`` (a real release) the noise comes from OpenDP's ``make_laplace``
        on the flattened table (L1 distance), drawn by OpenDP's own secure generator.  A
        Generator draws with numpy instead, for teaching.
        """
        values = check_counts(counts)
        if rng is not None:
            return self.simulate(values, 1, check_rng(rng))[0]
        flat = values.reshape(-1)
        measurement = self.opendp_measurement(flat.size)
        return np.array(measurement([float(v) for v in flat]), dtype=float).reshape(values.shape)

    def opendp_measurement(self, n_counts: int) -> Any:
        """OpenDP's ``make_laplace`` (pure DP, L1 distance) on ``n_counts`` float counts.

        Its privacy map at d_in = ``sensitivity`` is ε_DP = sensitivity/scale.
        """
        n_counts = check_whole("n_counts", n_counts)
        dp = opendp_prelude()
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n_counts), dp.l1_distance(T=float)
        return dp.m.make_laplace(*space, scale=self.scale)

    def simulate(self, counts: object, trials: int, rng: np.random.Generator) -> np.ndarray:
        """``trials`` independent noisy copies, shape ``(trials,) + counts.shape``."""
        values = check_counts(counts)
        trials = check_trials(trials, values)
        rng = check_rng(rng)
        return values[None, ...] + LAPLACE.sample(rng, self.scale, (trials,) + values.shape)

    @staticmethod
    def rank(noisy: np.ndarray, k: int) -> np.ndarray:
        """The top-k ranking of noisy counts along the last axis (post-processing)."""
        return top_k_indices(noisy, check_whole("k (how many top states to release)", k))

    def ranking(self, draws: np.ndarray, k: int) -> np.ndarray:
        """The top-k ranking of noisy counts drawn by :meth:`simulate` or :meth:`release`."""
        return self.rank(draws, k)

    def probabilities(self, counts: object, edges: object) -> np.ndarray:
        """Exact Pr of each joint bin of the noisy counts, for one row of counts.

        ``edges`` (increasing, may start at -inf and end at +inf) cut every noisy count into
        ``len(edges) − 1`` bins; the result is the product distribution over all
        ``(len(edges) − 1)^K`` bin combinations in C order (the first count varies slowest).
        Binning is post-processing, so the exact audit of these outputs is a lower bound on
        the mechanism's leakage.
        """
        values = check_counts(counts)
        if values.ndim != 1:
            raise ValueError("probabilities takes one row of counts (1-D)")
        cuts = np.asarray(edges, dtype=float).reshape(-1)
        if cuts.size < 2 or np.any(np.isnan(cuts)) or np.any(np.diff(cuts) <= 0):
            raise ValueError("edges must be at least 2 increasing numbers")
        n_bins = cuts.size - 1
        if n_bins**values.size > MAX_OUTPUTS:
            raise ValueError(f"{n_bins} bins for {values.size} counts give too many joint outputs")
        per_count = np.diff(_laplace_cdf(cuts[None, :] - values[:, None], self.scale), axis=1)
        joint = per_count[0]
        for row in per_count[1:]:
            joint = np.outer(joint, row).reshape(-1)
        return joint


def _laplace_cdf(x: np.ndarray, scale: float) -> np.ndarray:
    if scale == 0:
        return (x >= 0).astype(float)
    z = x / scale
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))


def _curve_laplace(name: str, cal: Calibration, sensitivity: object, queries: object) -> LaplaceCounts:
    sensitivity = check_positive("sensitivity", sensitivity)
    queries = check_whole("queries", queries)
    if queries == 1:
        return LaplaceCounts(CurveEvent(name, cal), sensitivity / cal.eps_dp, sensitivity)
    return LaplaceCounts(CurveEvent(name, cal, queries), queries / cal.eps_dp, HISTOGRAM_SENSITIVITY)


def pufferfish_laplace(
    curve_or_prior: object, eps_puffer: float, sensitivity: float = HISTOGRAM_SENSITIVITY, queries: int = 1
) -> LaplaceCounts:
    """Counts + Lap(L/ε_DP), ε_DP calibrated on the a(b) curve (docs/math.md §3, §5; [C] Algorithm 1).

    ``queries = 1`` releases the histogram as one query of L1 sensitivity ``sensitivity``.
    ``queries = m`` is the papers' top-k design ([C] §7.1.3): the m counts are m 1-Lipschitz
    queries with ε_DP/m each, i.e. Lap(m/ε_DP) on every count (more noise, same guarantee).
    """
    cal = calibrate(as_curve(curve_or_prior), eps_puffer)
    return _curve_laplace("pufferfish_laplace", cal, sensitivity, queries)


def group_dp_laplace(
    curve_or_prior: object, eps_puffer: float, sensitivity: float = HISTOGRAM_SENSITIVITY, queries: int = 1
) -> LaplaceCounts:
    """Counts + Lap(L·T_max/ε_puffer), the group-DP baseline (docs/math.md §3, §5).

    ``queries = m`` splits the budget over the m counts as in [C] §7.1.3 (Lap(m·T_max/ε_puffer)).
    """
    cal = group_dp(as_curve(curve_or_prior), eps_puffer)
    return _curve_laplace("group_dp_laplace", cal, sensitivity, queries)


def _mqm(eps_puffer: float, sigma: float, scale: float, sensitivity: float, queries: int,
         secrets: Secrets | None = None) -> LaplaceCounts:
    """Lap(scale) counts of L1 sensitivity ``sensitivity``, with the MQM event of that noise."""
    eps_dp = sensitivity / scale if scale > 0 else math.inf
    event = MQMEvent("mqm", eps_puffer, eps_dp, sigma, queries, as_secrets(secrets))
    return LaplaceCounts(event, scale, sensitivity)


def mqm_laplace(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps_puffer: float,
    sensitivity: float = HISTOGRAM_SENSITIVITY,
    secrets: Secrets | None = None,
) -> LaplaceCounts:
    """MQM on the whole L-Lipschitz query: counts + Lap(L·σ_max(ε)) (docs/math.md §5, [S] Algorithm 1).

    For a histogram L = 2.  The release is per-entry 1/σ_max-DP (ε_DP = L/scale).  ``secrets``: σ_max for
    the chosen value pairs and positions (docs/math.md §16).
    """
    sensitivity = check_positive("sensitivity", sensitivity)
    eps = check_eps("eps_puffer", eps_puffer)
    sigma = mqm_noise_scale(prior_or_priors, eps, secrets=secrets)
    return _mqm(eps, sigma, sensitivity * sigma, sensitivity, 1, secrets)


def mqm_top_k_counts(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], eps_puffer: float, n_counts: int,
    secrets: Secrets | None = None,
) -> LaplaceCounts:
    """The papers' MQM top-k baseline: each of the m counts is its own MQM query with ε/m ([C] §7.1.3).

    Every count is 1-Lipschitz and gets Lap(σ_max(ε/m)); the m releases add up to ε
    ([S] Theorem III.7).  Sort the noisy counts (:meth:`LaplaceCounts.rank`) for the top k.
    """
    eps = check_eps("eps_puffer", eps_puffer)
    # m ≥ 2 also covers the counts as one histogram of L1 sensitivity 2: σ_max(ε/m) ≥ m·σ_max(ε)
    n_counts = check_whole("n_counts (the number of categories m)", n_counts, minimum=2)
    sigma = mqm_noise_scale(prior_or_priors, eps / n_counts, secrets=secrets)
    return _mqm(eps, sigma, sigma, HISTOGRAM_SENSITIVITY, n_counts, secrets)


def mqm_eps_for_scale(prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior], sigma: float,
                      secrets: Secrets | None = None) -> float:
    """The smallest ε_puffer whose MQM noise scale σ_max(ε) is ≤ ``sigma`` (docs/math.md §5, §13).

    σ_max(ε) = max_θ max_t min over usable quilts of card/(ε − e) is continuous and strictly
    decreasing in ε: every quilt's score card/(ε − e) is strictly decreasing on ε > e; raising ε
    only adds usable quilts, each entering at +∞; min and max keep both properties.  Every
    quilt has card ≥ 1 and e ≥ 0 and the empty quilt (card T, e = 0) is always usable, so
    1/ε ≤ σ_max(ε) ≤ T/ε and the answer lies in [1/σ, T/σ].  Bisection in log ε keeps the upper
    end, where σ_max ≤ ``sigma`` as computed by the same function that builds the mechanism.  ``secrets``:
    σ_max for the chosen value pairs and positions (docs/math.md §16; the same argument holds).
    """
    sigma = check_positive("σ (the noise scale MQM may add per unit of sensitivity)", sigma)
    theta = as_theta(prior_or_priors, "mqm_eps_for_scale")
    length = theta.max_length
    priors = list(theta)
    lo, hi = 1.0 / sigma, length / sigma
    if mqm_noise_scale(priors, hi, secrets=secrets) > sigma * (1 + 1e-12):
        raise ValueError(f"MQM's σ_max at ε = T/σ = {hi:g} is above σ = {sigma:g}; this should not happen")
    if mqm_noise_scale(priors, lo, secrets=secrets) <= sigma:
        return lo
    while hi / lo - 1.0 > 1e-9:
        mid = math.sqrt(lo * hi)
        if mqm_noise_scale(priors, mid, secrets=secrets) <= sigma:
            hi = mid
        else:
            lo = mid
    return hi
