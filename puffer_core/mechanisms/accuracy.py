"""Accuracy first: from an error target to the ε each mechanism needs, and back (docs/math.md §13).

An analyst asks "how accurate will my numbers be, and what does that cost?".  This module
answers with the exact error law of each mechanism's noise (:mod:`puffer_core.mechanisms.noise`),
inverted, then translated into the privacy each mechanism's own accounting charges for that noise:

- **Counts** (:class:`CountTarget`): every released count within ±α of the truth with
  probability ≥ 1 − β — for each count on its own (``joint="each"``), for all m counts at once
  by the union bound (``"union"``, per-count β/m) or by the exact law of the largest of m
  independent noises (``"all"``: Pr[max |Z_j| ≤ α] = Pr[|Z| ≤ α]^m).
- **Top-k** (:class:`TopKTarget`): the released top-k set is the true one with probability
  ≥ h — either for *every* count vector whose k-th largest count exceeds the (k+1)-th by at
  least ``gap`` (a data-free guarantee: the worst case is all top counts tied at the boundary
  and all others tied ``gap`` below, because raising a top count or lowering another can only
  help, draw by draw), or for the given ``counts``.

**Privacy of a noise scale.**  Curve-calibrated mechanisms (docs/math.md §3): ε_DP = Δ/s (or
2k/λ), ε_puffer = min_b (b·ε_DP + a(b)) (certify).  Group DP: ε_puffer = T_max·ε_DP.  MQM
(docs/math.md §5): the smallest ε with L·σ_max(ε) ≤ s (:func:`~puffer_core.mechanisms.laplace.mqm_eps_for_scale`).
Each mechanism's record says which (its ``eps_for_scale``, :mod:`puffer_core.mechanisms.registry`).  Each
answer is checked by building the mechanism at that ε (:func:`puffer_core.mechanisms.make_mechanism`):
its noise is never above the noise the target allows.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from ..accounting.calibration import check_curve
from ..engine.curve import InfluenceCurve
from ..priors.models import MarkovChainPrior, theta_or_none
from ..validation import (
    InvalidParameter,
    check_choice,
    check_eps,
    check_positive,
    check_probability,
    check_whole,
    is_number,
)
from .base import HISTOGRAM_SENSITIVITY, Refused
from .noise import (
    DEFAULT_DRAWS,
    EXACT_ORDERS,
    JOINT,
    LAPLACE,
    LAPLACE_LAWS,
    LAWS,
    Noise,
    SimulatedHit,
    as_noise,
    chance_of_a_set,
    check_topk_counts,
    check_topk_shape,
    exact_orders,
    invert_scale,
    joint_failure,
    per_count_failure,
    simulate_critical_scales,
    sure_states,
    top_split,
)
from .registry import MECHANISMS, MechanismSpec, Output, ScaleRequest, make_mechanism

NEIGHBOURS = (
    "Neighbouring datasets differ in the value of one entry (replace-one, per-entry DP). A histogram of all"
    " entries then changes by one in two counts: L1 sensitivity Δ = 2; a single count has Δ = 1; the top-k"
    " baseline releases the m counts as m separate 1-Lipschitz queries with ε/m each."
)
_JOINT_SENTENCE = {
    "each": "each of the {m} counts on its own",
    "union": "all {m} counts at once (by the union bound)",
    "all": "all {m} counts at once (the exact law of independent noise)",
}
_RELATIVE = 1e-12  # how far a found ε is nudged up until the built mechanism's noise fits


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
            raise (ValueError if is_number(self.alpha) else InvalidParameter)(
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

    def noise_law(self, noise: Noise | str = LAPLACE) -> Noise:
        """The error law of ``noise`` for this target: Laplace noise drawn on the lattice ``law`` says, any other
        noise by its own record."""
        record = as_noise(noise)
        return LAPLACE_LAWS[self.law] if record is LAPLACE else record

    def scale(self, noise: Noise | str = LAPLACE) -> float:
        """The largest scale per count of ``noise`` (default Laplace) that meets the target."""
        return self.noise_law(noise).scale_for(self.alpha, self.failure)

    def achieved(self, scale: float, noise: Noise | str = LAPLACE) -> float:
        """Pr[the target holds] for ``noise`` (default Laplace) of ``scale`` per count."""
        return 1.0 - joint_failure(self.noise_law(noise).failure(self.alpha, scale), self.counts, self.joint)

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
        k, m = check_topk_shape(self.k, self.n_states)
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
            values = check_topk_counts(self.counts, k)
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
            return chance_of_a_set(self.k, self.n_states)
        values = np.asarray(self.counts, dtype=float)
        a, _ = top_split(values, self.k)
        sure = sure_states(values, self.k).size
        return math.comb(a.size - sure, self.k - sure) / math.comb(self.n_states, self.k)

    def answers(self, noise: Noise | str) -> str | None:
        """None when the probability under ``noise`` can be computed (exactly or simulated), else why not."""
        record = as_noise(noise)
        if self.gap is not None or record.hit_at_counts is not None or record.scale_family:
            return None
        return f"the top-k law of {record.label} noise at given counts is not offered (give a gap instead)"

    def exact(self, noise: Noise | str) -> bool:
        """Whether the probability under ``noise`` is computed exactly (else simulated)."""
        record = as_noise(noise)
        if self.gap is not None:
            return True
        if record.hit_at_counts is None:
            return False
        a, _ = top_split(np.asarray(self.counts, dtype=float), self.k)
        return exact_orders(a, self.k) <= EXACT_ORDERS

    @cached_property
    def _simulations(self) -> dict[str, SimulatedHit]:
        return {}

    def simulation(self, noise: Noise | str) -> SimulatedHit:
        """The seeded simulation of critical scales for ``noise`` (drawn once per target and noise)."""
        record = as_noise(noise)
        problem = self.answers(record)
        if problem is not None:
            raise ValueError(problem)
        if record.name not in self._simulations:
            counts = tuple(float(c) for c in self.counts or ())
            self._simulations[record.name] = simulate_critical_scales(
                counts, self.k, record.name, self.draws, self.seed
            )
        return self._simulations[record.name]

    def probability(self, scale: float, noise: Noise | str) -> tuple[float, float, float]:
        """(estimate, low, high) of Pr[right set] at ``scale``; low = high = estimate when exact."""
        record = as_noise(noise)
        if self.gap is not None:
            p = record.topk_hit(self.k, self.n_states, self.gap, scale)
            return p, p, p
        if self.exact(record) and record.hit_at_counts is not None:
            p = record.hit_at_counts(self.counts or (), self.k, scale)
            return p, p, p
        return self.simulation(record).probability(scale, self.confidence)

    def scale(self, noise: Noise | str) -> tuple[float, float]:
        """(estimate, guaranteed): the largest noise scale meeting the target (equal when exact)."""
        record = as_noise(noise)
        if self.gap is not None:
            gap = self.gap
            found = invert_scale(lambda s: record.topk_hit(self.k, self.n_states, gap, s), self.hit, gap)
            return found, found
        if self.exact(record) and record.hit_at_counts is not None:
            at_counts = record.hit_at_counts
            counts = self.counts or ()
            start = float(np.ptp(np.asarray(counts))) or 1.0
            found = invert_scale(lambda s: at_counts(counts, self.k, s), self.hit, start)
            return found, found
        return self.simulation(record).scale_for(self.hit, self.confidence)

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
# accuracy first, and the accuracy of a given ε


@dataclass(frozen=True)
class Cost:
    """One mechanism's answer: the noise it adds and the privacy that noise costs (docs/math.md §13).

    ``noise_scale`` is the built mechanism's (≤ ``needed``); ``achieved`` the probability that the
    target holds at that noise (an estimate, with ``achieved_low``/``achieved_high`` its interval,
    for simulated targets).  ``b``, ``a`` and ``fallback`` (the curve chose (T, 0)) for curve
    mechanisms; ``sigma_max`` for MQM.  ``renyi_alpha``: for a Rényi mechanism (docs/math.md §17), the order α
    at which ``eps_puffer`` is its (α, ε)-Rényi Pufferfish level, a weaker guarantee than ε-Pufferfish.
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
    renyi_alpha: float | None = None


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


def _chain_priors(priors: object) -> list[MarkovChainPrior] | None:
    chains = theta_or_none(priors, "accuracy with the prior")
    return None if chains is None else list(chains)


def _query(target: CountTarget | TopKTarget) -> str:
    return "histogram" if isinstance(target, CountTarget) else "topk"


def offers(spec: MechanismSpec, query: str) -> bool:
    """Whether accuracy first plans ``spec`` for ``query``: it answers it and has an inverse calibration."""
    return spec.answers(query) and spec.eps_for_scale is not None


def _offered(query: str, pure_only: bool = True) -> tuple[str, ...]:
    """Every mechanism accuracy first offers for ``query``; by default only those whose ε is an ε-Pufferfish
    level (a Rényi mechanism's level is another guarantee: it is planned only when asked for by name)."""
    return tuple(
        name for name, spec in MECHANISMS.items() if offers(spec, query) and (spec.pure or not pure_only)
    )


COUNT_MECHANISMS = _offered("histogram")  # the mechanisms accuracy first plans for counts, in registry order
TOPK_MECHANISMS = _offered("topk")  # … and for the top-k set


def _check_mechanisms(names: Sequence[str] | None, target: CountTarget | TopKTarget) -> tuple[str, ...]:
    default = COUNT_MECHANISMS if isinstance(target, CountTarget) else TOPK_MECHANISMS
    if names is None:
        return default
    chosen = tuple(names)
    query = _query(target)
    possible = _offered(query, pure_only=False)
    for name in chosen:
        if name not in MECHANISMS:
            raise ValueError(f"unknown mechanism {name!r}; choose from {', '.join(MECHANISMS)}")
        if name not in possible:
            raise ValueError(f"{name} cannot answer this target; choose from {', '.join(possible)}")
    return chosen


def _design(target: CountTarget | TopKTarget, topk_laplace: str) -> tuple[int, float]:
    """(queries, L): counts of a top-k release are m queries of sensitivity 1, or one histogram (docs/math.md §5)."""
    if isinstance(target, CountTarget):
        return 1, target.sensitivity
    if topk_laplace == "split":
        return target.n_states, 1.0
    return 1, HISTOGRAM_SENSITIVITY


def _k(target: CountTarget | TopKTarget) -> int:
    return target.k if isinstance(target, TopKTarget) else 1


def _build(name: str, eps: float, curve: InfluenceCurve, priors: Any, target: Any, topk_laplace: str) -> Any:
    if isinstance(target, CountTarget):
        return make_mechanism(name, eps, curve, priors or [], "histogram", sensitivity=target.sensitivity)
    return make_mechanism(name, eps, curve, priors or [], "topk", target.k, target.n_states, topk_laplace)


def _eps_for(spec: MechanismSpec, needed: float, curve: InfluenceCurve, priors: list[MarkovChainPrior] | None,
             target: Any, topk_laplace: str) -> float:
    """The ε_puffer at which ``spec``'s noise is exactly ``needed`` (before the check by building it)."""
    if spec.eps_for_scale is None:
        raise ValueError(f"{spec.label} offers no inverse calibration")
    queries, sensitivity = _design(target, topk_laplace) if spec.releases is Output.COUNTS else (1, 1.0)
    return spec.eps_for_scale(ScaleRequest(needed, curve, priors, _k(target), queries, sensitivity))


def _cost(name: str, needed: float, curve: InfluenceCurve, priors: list[MarkovChainPrior] | None, target: Any,
          topk_laplace: str) -> tuple[Cost, Any]:
    spec = MECHANISMS[name]
    eps = _eps_for(spec, needed, curve, priors, target, topk_laplace)
    if not math.isfinite(eps):
        raise ValueError("the target needs no noise at all")
    if eps <= 0:  # W∞ = 0: the query's laws agree under every secret pair (docs/math.md §15, §17)
        raise Refused("no_guarantee", f"{spec.label}: the query's laws are the same under every secret pair"
                                      " (W∞ = 0), so no Rényi level is charged; it is not compared here")
    mechanism = _build(name, eps, curve, priors, target, topk_laplace)
    tries = 0
    while mechanism.noise_scale > needed * (1 + 1e-13) and tries < 30:  # rounding: move up until the noise fits
        eps *= 1 + _RELATIVE * 2**tries
        mechanism = _build(name, eps, curve, priors, target, topk_laplace)
        tries += 1
    if mechanism.noise_scale > needed * (1 + 1e-9):
        raise ValueError(f"{name}: no ε found whose noise {mechanism.noise_scale:g} fits {needed:g}")
    return _describe_cost(spec, mechanism, needed, eps), mechanism


def _describe_cost(spec: Any, mechanism: Any, needed: float, eps: float) -> Cost:
    """The cost of one mechanism; a Rényi mechanism's ε is the (α, ε)-Rényi Pufferfish level it was built at."""
    event = mechanism.accounting
    fields = event.to_dict()
    return Cost(
        mechanism=spec.name,
        label=spec.label,
        noise=mechanism.noise,
        needed=needed,
        noise_scale=float(mechanism.noise_scale),
        eps_dp=float(event.eps_dp),
        eps_puffer=float(event.eps_puffer) if spec.pure else eps,
        accounting=str(spec.calibrated),
        renyi_alpha=None if spec.pure else fields.get("alpha"),
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
        spec = MECHANISMS[name]
        why_not = _why_not(spec, chains, target)
        if why_not is not None:
            skipped[name] = why_not
            continue
        noise = spec.noise
        if noise.name not in needed_by_noise:
            if isinstance(target, CountTarget):
                needed_by_noise[noise.name] = (target.scale(noise), target.scale(noise))
            else:
                needed_by_noise[noise.name] = target.scale(noise)
        needed = needed_by_noise[noise.name][1]
        if not math.isfinite(needed):
            skipped[name] = "the target holds with any amount of noise"
            continue
        try:
            cost, mechanism = _cost(name, needed, curve, chains, target, topk_laplace)
        except Refused as exc:  # out of reach, or no guarantee for these secrets: said, the others go on
            skipped[name] = str(exc)
            continue
        if isinstance(target, CountTarget):
            p = target.achieved(mechanism.noise_scale, noise)
            cost = _with_achieved(cost, p, p, p)
        else:
            cost = _with_achieved(cost, *target.probability(mechanism.noise_scale, noise))
        costs.append(cost)
    exact = isinstance(target, CountTarget) or all(target.exact(c.noise) for c in costs)
    return AccuracyPlan(target, tuple(costs), skipped, NEIGHBOURS, exact)


def _why_not(
    spec: MechanismSpec, chains: list[MarkovChainPrior] | None, target: CountTarget | TopKTarget
) -> str | None:
    """Why ``spec`` is left out of this plan (None: it is planned)."""
    if spec.needs_chains and chains is None:
        return f"{spec.label} needs the Markov chain prior itself (not only the a(b) curve)"
    return target.answers(spec.noise) if isinstance(target, TopKTarget) else None


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
        spec = MECHANISMS[name]
        if _why_not(spec, chains, target) is not None:
            continue
        try:
            mechanism = _build(name, eps, curve, chains, target, topk_laplace)
        except Refused:  # out of reach, or no guarantee for these secrets: accuracy_first says why
            continue
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
            law = target.noise_law(spec.noise)
            alpha = law.interval(scale, target.failure)
            beta = joint_failure(law.failure(target.alpha, scale), target.counts, target.joint)
            out.append(MechanismAccuracy(**common, alpha=alpha, beta=beta))
        else:
            p, low, high = target.probability(scale, spec.noise) if scale > 0 else (1.0, 1.0, 1.0)
            out.append(MechanismAccuracy(**common, hit=p, hit_low=low, hit_high=high))
    return tuple(out)


__all__ = [
    "AccuracyPlan",
    "COUNT_MECHANISMS",
    "Cost",
    "CountTarget",
    "MechanismAccuracy",
    "NEIGHBOURS",
    "offers",
    "TOPK_MECHANISMS",
    "TopKTarget",
    "accuracy_at",
    "accuracy_first",
]
