"""Pufferfish, MQM and group-DP mechanisms for counts of categorical states (docs/math.md §3–§5).

Each mechanism is a small immutable object that carries its **accounting** (ε_puffer,
ε_DP, the curve point or σ_max used) apart from its **sampling**, in the spirit of OpenDP's
measurements; and, like diffprivlib, it exposes the error it adds (variance, bounds) next to
the sampler.  The input is a vector of true counts (one per state) or a table of them (one
row per group, e.g. per country).  A table costs no more than one row: an entry sits in one
group, so changing it moves one unit between two counts of one row — the table as a whole
still has L1 sensitivity 2, each count (and each category's column of counts) changes by at
most 1, and per-row top-k selections touch disjoint entries (parallel composition).

Three ways to draw:

- ``release(counts)`` — one real release.  Noise comes from OpenDP's samplers
  (``make_laplace``, ``make_noisy_top_k``), which use OpenDP's own cryptographically secure
  generator; nothing about it is reproducible.  Passing ``rng=`` a ``numpy.random.Generator``
  draws the same distribution with numpy instead: reproducible, for teaching and tests, not
  for publishing.
- ``simulate(counts, trials, rng)`` — many trials at once with vectorised numpy, for the
  what-if simulator (always needs a Generator).
- ``probabilities(...)`` — the exact output distribution where it is finite (exponential
  top-k; binned Laplace counts), for chi-square tests and the exact audit of docs/math.md §9.

Mechanisms (docs/math.md §5):

- **Exponential top-k** ([C] §6.4.2, §7.1.3, Algorithm 2): k rounds without replacement,
  each with ε_DP/k; round picks r with Pr ∝ exp(ε_round·u(r)/(2Δu)), u = count, Δu = 1 (one
  entry moves one unit between two counts, so each count changes by at most 1).  Because
  every round uses the same weights, the k rounds are exactly "add Gumbel(2Δu/ε_round) noise
  to every count and keep the k largest, in order".
- **Laplace counts** ([C] §6.4.1, Algorithm 1): counts + Lap(L/ε_DP) on every count; a
  histogram of all entries has L1 sensitivity L = 2.
- **Pufferfish** versions calibrate ε_DP from the a(b) curve (docs/math.md §3,
  :func:`puffer_core.calibration.calibrate`); **group DP** versions use ε_DP = ε_puffer/T_max.
- **MQM** ([S] Algorithm 1): Lap(L·σ_max(ε)) on an L-Lipschitz query
  (:func:`puffer_core.mqm.mqm_noise_scale`).  The papers' top-k baseline ([C] §7.1.3)
  releases the m counts as m separate 1-Lipschitz queries, each with ε/m, and sorts them;
  MQM releases compose additively ([S] Theorem III.7), so the m counts cost ε in total.

For top-k, the Laplace baselines can use the same split (``queries = m``: Lap(m/ε_DP) per
count).  [C] describes the split for MQM only; its Group DP-Lap numbers (far below Group
DP-Exp in Tables 2–5) are only reproducible with the split, because one Laplace histogram
(Lap(2/ε_DP)) has less noise than k exponential rounds (Gumbel(2k/ε_DP)).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import logsumexp

from .calibration import Calibration, calibrate, group_dp
from .composition import cumulative
from .curve import InfluenceCurve
from .influence import influence_curve
from .mqm import mqm_noise_scale
from .priors import MarkovChainPrior
from .validation import check_eps

MECHANISMS: dict[str, str] = {
    "pufferfish_exponential": "Pufferfish exponential",
    "pufferfish_laplace": "Pufferfish Laplace",
    "mqm": "MQM",
    "group_dp_exponential": "Group DP exponential",
    "group_dp_laplace": "Group DP Laplace",
}
HISTOGRAM_SENSITIVITY = 2.0
MAX_OUTPUTS = 2_000_000
_MAX_OUTPUT_CELLS = 20_000_000

COMPOSITION_THEOREM = "theorem_6_2"
COMPOSITION_ADDITIVE = "additive"


def _finite_or_text(value: float | None) -> float | str | None:
    if value is None:
        return None
    return float(value) if math.isfinite(value) else str(value)


@dataclass(frozen=True)
class Accounting:
    """What one release of a mechanism costs (docs/math.md §3–§5), inspectable without drawing noise.

    ``eps_puffer`` is the guarantee of one release and ``eps_dp`` its per-entry DP parameter.
    Curve-based mechanisms record the curve point (``b``, ``a``) and their
    :class:`~puffer_core.calibration.Calibration`; their releases compose by [C] Theorem 6.2
    (``composition = "theorem_6_2"``).  MQM records ``sigma_max`` and how many separately
    budgeted queries share ε (``queries``); its releases add up ([S] Theorem III.7,
    ``composition = "additive"``).
    """

    mechanism: str
    eps_puffer: float
    eps_dp: float
    b: int | None = None
    a: float | None = None
    group_dp: bool = False
    composition: str = COMPOSITION_THEOREM
    sigma_max: float | None = None
    queries: int = 1
    calibration: Calibration | None = None

    def describe(self) -> str:
        label = MECHANISMS.get(self.mechanism, self.mechanism)
        if self.composition == COMPOSITION_ADDITIVE:
            split = f", split over {self.queries} counts (ε/{self.queries} each)" if self.queries > 1 else ""
            return (
                f"{label}: ε_puffer = {self.eps_puffer:.4g} with σ_max = {self.sigma_max:.4g}{split};"
                " releases add up ([S] Theorem III.7)"
            )
        how = "group DP over the whole sequence" if self.group_dp else f"curve point b = {self.b}"
        split = f", split over {self.queries} counts (ε_DP/{self.queries} each)" if self.queries > 1 else ""
        return (
            f"{label}: ε_puffer = {self.eps_puffer:.4g} from per-entry ε_DP = {self.eps_dp:.4g}"
            f" ({how}, a(b) = {self.a:.4g}){split}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-safe values (infinite numbers become the string 'inf')."""
        return {
            "mechanism": self.mechanism,
            "eps_puffer": _finite_or_text(self.eps_puffer),
            "eps_dp": _finite_or_text(self.eps_dp),
            "b": self.b,
            "a": _finite_or_text(self.a),
            "group_dp": self.group_dp,
            "composition": self.composition,
            "sigma_max": _finite_or_text(self.sigma_max),
            "queries": self.queries,
        }


def cumulative_eps_puffer(accountings: list[Accounting]) -> np.ndarray:
    """Running total ε_puffer after each of a sequence of releases of one kind (docs/math.md §4).

    Curve-based releases: [C] Theorem 6.2, ``max_l a_l + Σ_l (ε_puffer_l − a_l)``.  MQM
    releases: the plain sum ([S] Theorem III.7).  Mixing the two kinds is refused.
    """
    if not accountings:
        return np.zeros(0)
    kinds = {acc.composition for acc in accountings}
    if len(kinds) != 1:
        raise ValueError("cannot compose curve-based and MQM releases in one ledger; keep them apart")
    if kinds == {COMPOSITION_ADDITIVE}:
        return np.cumsum([acc.eps_puffer for acc in accountings])
    cals = [acc.calibration for acc in accountings]
    if any(c is None for c in cals):
        raise ValueError("every curve-based release needs its Calibration to be composed")
    return cumulative(cals)


def _check_counts(counts: object, name: str = "counts") -> np.ndarray:
    try:
        values = np.asarray(counts, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers (one count per state)") from None
    if values.ndim not in (1, 2):
        raise ValueError(
            f"{name} must be one count per state (1-D) or one row of counts per group (2-D); got shape {values.shape}"
        )
    if values.shape[-1] < 2:
        raise ValueError(f"{name} need at least 2 states; got {values.shape[-1]}")
    if values.size and (not np.all(np.isfinite(values)) or np.any(values < 0)):
        raise ValueError(f"{name} must be finite and non-negative")
    return values


def _check_trials(trials: object) -> int:
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1:
        raise ValueError(f"trials must be a whole number ≥ 1; got {trials!r}")
    return int(trials)


def _check_generator(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            "rng must be a numpy.random.Generator, e.g. numpy.random.default_rng(0);"
            f" got {type(rng).__name__}"
        )
    return rng


def _check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k (how many top states to release) must be a whole number ≥ 1; got {k!r}")
    return int(k)


def top_k_indices(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values along the last axis, largest first (ties: lower index)."""
    values = np.asarray(values, dtype=float)
    n = values.shape[-1]
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of states ({n}); got {k}")
    if k < n:
        part = np.argpartition(-values, k - 1, axis=-1)[..., :k]
    else:
        part = np.broadcast_to(np.arange(n), values.shape).copy()
    chosen = np.take_along_axis(values, part, axis=-1)
    order = np.lexsort((part, -chosen), axis=-1)
    return np.take_along_axis(part, order, axis=-1)


def _opendp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


@dataclass(frozen=True)
class ExponentialTopK:
    """Top-k by k rounds of the exponential mechanism without replacement (docs/math.md §5).

    Round j picks a not-yet-picked state r with Pr ∝ exp(ε_round · count(r) / 2), ε_round =
    ε_DP/k; the output is the k picks in order (a ranking).  The whole release is per-entry
    ε_DP-DP; ``accounting`` says what ε_puffer that buys.
    """

    accounting: Accounting
    k: int

    def __post_init__(self) -> None:
        _check_k(self.k)
        check_eps("eps_dp", self.accounting.eps_dp)

    @property
    def name(self) -> str:
        return self.accounting.mechanism

    @property
    def eps_round(self) -> float:
        """ε_DP spent by each of the k rounds."""
        return self.accounting.eps_dp / self.k

    @property
    def gumbel_scale(self) -> float:
        """Scale 2Δu/ε_round of the Gumbel noise whose top k equals the k rounds (Δu = 1)."""
        return 2.0 / self.eps_round

    def _counts(self, counts: object) -> np.ndarray:
        values = _check_counts(counts)
        if values.shape[-1] < self.k:
            raise ValueError(f"cannot pick the top {self.k} of only {values.shape[-1]} states; lower k")
        return values

    def release(self, counts: object, rng: np.random.Generator | None = None) -> np.ndarray:
        """One release: the top-k ranking of each row of counts (shape ``(..., k)``).

        With ``rng=None`` (a real release) the noise is drawn by OpenDP's
        ``make_noisy_top_k`` with Gumbel noise of scale 2k/ε_DP — OpenDP's own secure
        generator; the Gumbel peel is exactly the k exponential-mechanism rounds.  (OpenDP
        labels that sampler with zero-concentrated DP; its pure ε_DP is the exponential
        mechanism's, ε_round per round.)  A Generator draws with numpy instead, for teaching.
        """
        values = self._counts(counts)
        if rng is not None:
            return self.simulate(values, 1, _check_generator(rng))[0]
        rows = values.reshape(-1, values.shape[-1])
        measurement = self.opendp_measurement(rows.shape[1])
        out = np.array([measurement([float(v) for v in row]) for row in rows], dtype=np.int64)
        return out.reshape(values.shape[:-1] + (self.k,))

    def opendp_measurement(self, n_states: int) -> Any:
        """OpenDP's ``make_noisy_top_k`` (Gumbel, scale 2k/ε_DP) on ``n_states`` counts.

        OpenDP's privacy map is in zero-concentrated DP: ρ = ε_DP²/(8k) at d_in = 1, which is
        the k rounds of the ε_round-exponential mechanism expressed as zCDP.
        """
        if isinstance(n_states, bool) or not isinstance(n_states, (int, np.integer)) or n_states < self.k:
            raise ValueError(f"n_states must be a whole number ≥ k = {self.k}; got {n_states!r}")
        dp = _opendp()
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=int(n_states)), dp.linf_distance(T=float)
        return dp.m.make_noisy_top_k(*space, dp.zero_concentrated_divergence(), k=self.k, scale=self.gumbel_scale)

    def simulate(self, counts: object, trials: int, rng: np.random.Generator) -> np.ndarray:
        """``trials`` independent rankings, shape ``(trials, ..., k)`` (vectorised numpy)."""
        values = self._counts(counts)
        trials = _check_trials(trials)
        rng = _check_generator(rng)
        noisy = values[None, ...] + rng.gumbel(0.0, self.gumbel_scale, size=(trials,) + values.shape)
        return top_k_indices(noisy, self.k)

    def outputs(self, n_states: int) -> np.ndarray:
        """Every possible ranking (ordered k-tuples of distinct states), in the order of :meth:`probabilities`."""
        if isinstance(n_states, bool) or not isinstance(n_states, (int, np.integer)) or n_states < self.k:
            raise ValueError(f"n_states must be a whole number ≥ k = {self.k}; got {n_states!r}")
        n_out = math.perm(int(n_states), self.k)
        if n_out > MAX_OUTPUTS:
            raise ValueError(
                f"{n_states} states and k = {self.k} give {n_out:,} rankings; exact probabilities are limited"
                f" to {MAX_OUTPUTS:,} outputs"
            )
        return np.array(list(itertools.permutations(range(int(n_states)), self.k)), dtype=np.int64).reshape(
            n_out, self.k
        )

    def probabilities(self, counts: object) -> np.ndarray:
        """Exact Pr[ranking] for every ranking of :meth:`outputs` (one row of counts)."""
        values = self._counts(counts)
        if values.ndim != 1:
            raise ValueError("probabilities takes one row of counts (1-D)")
        n = values.size
        outs = self.outputs(n)
        if outs.shape[0] * n > _MAX_OUTPUT_CELLS:
            raise ValueError(f"{outs.shape[0]:,} rankings of {n} states are too many to enumerate exactly")
        log_w = 0.5 * self.eps_round * values
        left = np.broadcast_to(log_w, (outs.shape[0], n)).copy()
        rows = np.arange(outs.shape[0])
        log_p = np.zeros(outs.shape[0])
        for j in range(self.k):
            picked = outs[:, j]
            log_p += log_w[picked] - logsumexp(left, axis=1)
            left[rows, picked] = -np.inf
        return np.exp(log_p)

    def selection_probabilities(self, counts: object) -> np.ndarray:
        """Pr[state is picked first] for every state (the softmax of the first round)."""
        values = self._counts(counts)
        log_w = 0.5 * self.eps_round * values
        w = np.exp(log_w - log_w.max(axis=-1, keepdims=True))
        return w / w.sum(axis=-1, keepdims=True)

    def count_gap_bound(self, n_states: int, beta: float = 0.05) -> float:
        """With probability ≥ 1 − β, a round's pick has a count within this many of the best left.

        The exponential mechanism's utility bound: (2Δu/ε_round)·(ln m + ln(1/β)), m = n_states.
        """
        if not 0 < beta < 1:
            raise ValueError(f"beta must be strictly between 0 and 1; got {beta}")
        if isinstance(n_states, bool) or not isinstance(n_states, (int, np.integer)) or n_states < 1:
            raise ValueError(f"n_states must be a whole number ≥ 1; got {n_states!r}")
        return self.gumbel_scale * (math.log(n_states) + math.log(1.0 / beta))


@dataclass(frozen=True)
class LaplaceCounts:
    """Counts + independent Lap(``scale``) noise on every count (docs/math.md §5).

    ``sensitivity`` is the L1 sensitivity of the whole released vector to one entry (2 for a
    histogram), so the release is per-entry ``sensitivity/scale``-DP.  Top-k queries take
    the k largest noisy counts (post-processing, :meth:`rank`).
    """

    accounting: Accounting
    scale: float
    sensitivity: float = HISTOGRAM_SENSITIVITY

    def __post_init__(self) -> None:
        if not math.isfinite(self.scale) or self.scale < 0:
            raise ValueError(f"the Laplace scale must be a finite number ≥ 0; got {self.scale}")
        if not math.isfinite(self.sensitivity) or self.sensitivity <= 0:
            raise ValueError(f"sensitivity must be strictly positive; got {self.sensitivity}")
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
        if isinstance(n_counts, bool) or not isinstance(n_counts, (int, np.integer)) or n_counts < 1:
            raise ValueError(f"n_counts must be a whole number ≥ 1; got {n_counts!r}")
        return n_counts * self.scale

    def interval_halfwidth(self, confidence: float = 0.95) -> float:
        """w with Pr[|noise| ≤ w] = confidence for one count: scale·ln(1/(1 − confidence))."""
        if not 0 < confidence < 1:
            raise ValueError(f"confidence must be strictly between 0 and 1; got {confidence}")
        return self.scale * math.log(1.0 / (1.0 - confidence))

    def release(self, counts: object, rng: np.random.Generator | None = None) -> np.ndarray:
        """One release of noisy counts (same shape as ``counts``).

        With ``rng=None`` (a real release) the noise comes from OpenDP's ``make_laplace``
        on the flattened table (L1 distance), drawn by OpenDP's own secure generator.  A
        Generator draws with numpy instead, for teaching.
        """
        values = _check_counts(counts)
        if rng is not None:
            return self.simulate(values, 1, _check_generator(rng))[0]
        flat = values.reshape(-1)
        measurement = self.opendp_measurement(flat.size)
        return np.array(measurement([float(v) for v in flat]), dtype=float).reshape(values.shape)

    def opendp_measurement(self, n_counts: int) -> Any:
        """OpenDP's ``make_laplace`` (pure DP, L1 distance) on ``n_counts`` float counts.

        Its privacy map at d_in = ``sensitivity`` is ε_DP = sensitivity/scale.
        """
        if isinstance(n_counts, bool) or not isinstance(n_counts, (int, np.integer)) or n_counts < 1:
            raise ValueError(f"n_counts must be a whole number ≥ 1; got {n_counts!r}")
        dp = _opendp()
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=int(n_counts)), dp.l1_distance(T=float)
        return dp.m.make_laplace(*space, scale=self.scale)

    def simulate(self, counts: object, trials: int, rng: np.random.Generator) -> np.ndarray:
        """``trials`` independent noisy copies, shape ``(trials,) + counts.shape``."""
        values = _check_counts(counts)
        trials = _check_trials(trials)
        rng = _check_generator(rng)
        return values[None, ...] + rng.laplace(0.0, self.scale, size=(trials,) + values.shape)

    @staticmethod
    def rank(noisy: np.ndarray, k: int) -> np.ndarray:
        """The top-k ranking of noisy counts along the last axis (post-processing)."""
        return top_k_indices(noisy, _check_k(k))

    def probabilities(self, counts: object, edges: object) -> np.ndarray:
        """Exact Pr of each joint bin of the noisy counts, for one row of counts.

        ``edges`` (increasing, may start at -inf and end at +inf) cut every noisy count into
        ``len(edges) − 1`` bins; the result is the product distribution over all
        ``(len(edges) − 1)^K`` bin combinations in C order (the first count varies slowest).
        Binning is post-processing, so the exact audit of these outputs is a lower bound on
        the mechanism's leakage.
        """
        values = _check_counts(counts)
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


Mechanism = ExponentialTopK | LaplaceCounts


def _as_curve(curve_or_prior: object) -> InfluenceCurve:
    if isinstance(curve_or_prior, InfluenceCurve):
        return curve_or_prior
    if isinstance(curve_or_prior, MarkovChainPrior) or (
        isinstance(curve_or_prior, (list, tuple))
        and curve_or_prior
        and all(isinstance(p, MarkovChainPrior) for p in curve_or_prior)
    ):
        return influence_curve(curve_or_prior)
    raise ValueError(
        "give an InfluenceCurve, a MarkovChainPrior or a list of them;"
        f" got {type(curve_or_prior).__name__}"
    )


def _from_calibration(name: str, cal: Calibration, queries: int = 1) -> Accounting:
    return Accounting(
        name, cal.eps_puffer, cal.eps_dp, cal.b, cal.a, cal.group_dp, queries=queries, calibration=cal
    )


def _check_sensitivity(sensitivity: object) -> float:
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, float, np.integer, np.floating)):
        raise ValueError(f"sensitivity must be a number; got {sensitivity!r}")
    if not math.isfinite(sensitivity) or sensitivity <= 0:
        raise ValueError(f"sensitivity must be strictly positive; got {sensitivity}")
    return float(sensitivity)


def pufferfish_exponential(curve_or_prior: object, eps_puffer: float, k: int = 3) -> ExponentialTopK:
    """Exponential top-k calibrated on the a(b) curve to ``eps_puffer`` (docs/math.md §3, §5; [C] Algorithm 2)."""
    cal = calibrate(_as_curve(curve_or_prior), eps_puffer)
    return ExponentialTopK(_from_calibration("pufferfish_exponential", cal), _check_k(k))


def group_dp_exponential(curve_or_prior: object, eps_puffer: float, k: int = 3) -> ExponentialTopK:
    """Exponential top-k with ε_DP = ε_puffer / T_max, the group-DP baseline (docs/math.md §3, §5)."""
    cal = group_dp(_as_curve(curve_or_prior), eps_puffer)
    return ExponentialTopK(_from_calibration("group_dp_exponential", cal), _check_k(k))


def _laplace(name: str, cal: Calibration, sensitivity: object, queries: object) -> LaplaceCounts:
    sensitivity = _check_sensitivity(sensitivity)
    if isinstance(queries, bool) or not isinstance(queries, (int, np.integer)) or queries < 1:
        raise ValueError(f"queries must be a whole number ≥ 1; got {queries!r}")
    if queries == 1:
        return LaplaceCounts(_from_calibration(name, cal), sensitivity / cal.eps_dp, sensitivity)
    return LaplaceCounts(_from_calibration(name, cal, int(queries)), int(queries) / cal.eps_dp, HISTOGRAM_SENSITIVITY)


def pufferfish_laplace(
    curve_or_prior: object, eps_puffer: float, sensitivity: float = HISTOGRAM_SENSITIVITY, queries: int = 1
) -> LaplaceCounts:
    """Counts + Lap(L/ε_DP), ε_DP calibrated on the a(b) curve (docs/math.md §3, §5; [C] Algorithm 1).

    ``queries = 1`` releases the histogram as one query of L1 sensitivity ``sensitivity``.
    ``queries = m`` is the papers' top-k design ([C] §7.1.3): the m counts are m 1-Lipschitz
    queries with ε_DP/m each, i.e. Lap(m/ε_DP) on every count (more noise, same guarantee).
    """
    return _laplace("pufferfish_laplace", calibrate(_as_curve(curve_or_prior), eps_puffer), sensitivity, queries)


def group_dp_laplace(
    curve_or_prior: object, eps_puffer: float, sensitivity: float = HISTOGRAM_SENSITIVITY, queries: int = 1
) -> LaplaceCounts:
    """Counts + Lap(L·T_max/ε_puffer), the group-DP baseline (docs/math.md §3, §5).

    ``queries = m`` splits the budget over the m counts as in [C] §7.1.3 (Lap(m·T_max/ε_puffer)).
    """
    return _laplace("group_dp_laplace", group_dp(_as_curve(curve_or_prior), eps_puffer), sensitivity, queries)


def mqm_laplace(
    prior_or_priors: MarkovChainPrior | list[MarkovChainPrior],
    eps_puffer: float,
    sensitivity: float = HISTOGRAM_SENSITIVITY,
) -> LaplaceCounts:
    """MQM on the whole L-Lipschitz query: counts + Lap(L·σ_max(ε)) (docs/math.md §5, [S] Algorithm 1).

    For a histogram L = 2.  The release is per-entry 1/σ_max-DP (ε_DP = L/scale).
    """
    sensitivity = _check_sensitivity(sensitivity)
    eps = check_eps("eps_puffer", eps_puffer)
    sigma = mqm_noise_scale(prior_or_priors, eps)
    scale = sensitivity * sigma
    acc = Accounting(
        "mqm",
        eps,
        sensitivity / scale if scale > 0 else math.inf,
        composition=COMPOSITION_ADDITIVE,
        sigma_max=sigma,
        queries=1,
    )
    return LaplaceCounts(acc, scale, sensitivity)


def mqm_top_k_counts(
    prior_or_priors: MarkovChainPrior | list[MarkovChainPrior], eps_puffer: float, n_counts: int
) -> LaplaceCounts:
    """The papers' MQM top-k baseline: each of the m counts is its own MQM query with ε/m ([C] §7.1.3).

    Every count is 1-Lipschitz and gets Lap(σ_max(ε/m)); the m releases add up to ε
    ([S] Theorem III.7).  Sort the noisy counts (:meth:`LaplaceCounts.rank`) for the top k.
    """
    eps = check_eps("eps_puffer", eps_puffer)
    # m ≥ 2 also covers the counts as one histogram of L1 sensitivity 2: σ_max(ε/m) ≥ m·σ_max(ε)
    if isinstance(n_counts, bool) or not isinstance(n_counts, (int, np.integer)) or n_counts < 2:
        raise ValueError(f"n_counts (the number of categories m) must be a whole number ≥ 2; got {n_counts!r}")
    sigma = mqm_noise_scale(prior_or_priors, eps / n_counts)
    acc = Accounting(
        "mqm",
        eps,
        HISTOGRAM_SENSITIVITY / sigma if sigma > 0 else math.inf,
        composition=COMPOSITION_ADDITIVE,
        sigma_max=sigma,
        queries=int(n_counts),
    )
    return LaplaceCounts(acc, sigma, HISTOGRAM_SENSITIVITY)


QUERIES = ("topk", "histogram")
TOPK_LAPLACE = ("split", "histogram")
DEFAULT_MECHANISMS: dict[str, tuple[str, ...]] = {
    "topk": ("pufferfish_exponential", "mqm", "group_dp_exponential", "group_dp_laplace"),
    "histogram": ("pufferfish_laplace", "mqm", "group_dp_laplace"),
}


def make_mechanism(
    name: str,
    eps_puffer: float,
    curve: InfluenceCurve,
    priors: MarkovChainPrior | list[MarkovChainPrior],
    query: str = "topk",
    k: int = 3,
    n_states: int | None = None,
    topk_laplace: str = "split",
) -> Mechanism:
    """Build mechanism ``name`` (a key of :data:`MECHANISMS`) for a query (docs/math.md §5).

    ``query="topk"``: exponential mechanisms release rankings; Laplace mechanisms and MQM
    release noisy counts to be sorted.  With ``topk_laplace="split"`` (the papers' design,
    [C] §7.1.3) the ``n_states`` = m counts are m queries with ε/m each; with
    ``"histogram"`` the counts are one query of L1 sensitivity 2.  ``query="histogram"``:
    Laplace mechanisms and MQM on all counts (L = 2); exponential mechanisms do not apply.
    """
    if name not in MECHANISMS:
        raise ValueError(f"unknown mechanism {name!r}; choose from {', '.join(MECHANISMS)}")
    if query not in QUERIES:
        raise ValueError(f"query must be one of {', '.join(QUERIES)}; got {query!r}")
    if topk_laplace not in TOPK_LAPLACE:
        raise ValueError(f"topk_laplace must be one of {', '.join(TOPK_LAPLACE)}; got {topk_laplace!r}")
    if query == "histogram" and name.endswith("_exponential"):
        raise ValueError(
            f"{MECHANISMS[name]} releases a ranking, not counts; for a histogram use"
            " pufferfish_laplace, mqm or group_dp_laplace"
        )
    if name == "pufferfish_exponential":
        return pufferfish_exponential(curve, eps_puffer, k)
    if name == "group_dp_exponential":
        return group_dp_exponential(curve, eps_puffer, k)
    split = query == "topk" and topk_laplace == "split"
    if split and (isinstance(n_states, bool) or not isinstance(n_states, (int, np.integer)) or n_states < 2):
        raise ValueError(
            f"splitting the budget over the counts needs n_states, the number of counts m (≥ 2); got {n_states!r}"
        )
    queries = int(n_states) if split else 1
    if name == "pufferfish_laplace":
        return pufferfish_laplace(curve, eps_puffer, queries=queries)
    if name == "group_dp_laplace":
        return group_dp_laplace(curve, eps_puffer, queries=queries)
    if split:
        return mqm_top_k_counts(priors, eps_puffer, queries)
    return mqm_laplace(priors, eps_puffer)
