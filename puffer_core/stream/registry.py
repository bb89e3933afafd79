"""The stream bounds by name: one record per bound (docs/math.md §10).

:data:`STREAM_BOUNDS` holds one :class:`StreamBoundSpec` per upper bound on a stream's leakage —
its name, its label, whether it needs Markov chain priors, whether it also bounds a single
per-entry ε-DP release of the whole sequence, why it would not be computed (cheap, up front), its
value per step for a schedule, and the largest constant ε per step for a target.  The Streams
page, the attack ladder (:mod:`puffer_core.tightness`), the exported scripts and the command line
loop over it: a new bound is one record here plus its test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import cast

import numpy as np

from ..accounting.calibration import calibrate
from ..engine.curve import InfluenceCurve
from ..priors.models import MarkovChainPrior, Theta, theta_or_none
from ..secrets.values import ALL_SECRETS, Secrets
from ..validation import check_eps, check_flag
from .bounds import TranslationBound, describe_bounds, group_dp_bound, translation_bound
from .checks import Directions, check_directions, check_schedule, stream_priors
from .supremum import max_eps_for_tpl
from .tpl import TemporalLeakage, temporal_privacy_leakage, tpl_refusal


@dataclass(frozen=True, eq=False)
class StreamSetting:
    """What every stream bound reads: the chains Θ (None for a prior that is not a Markov chain),
    the a(b) curve of the prior, and the backward/forward matrices an attacker knows (:class:`Directions`).

    ``curve`` may be left out for chains: it is then computed from them the first time a bound reads it
    (so that a bound's cheap refusal comes before the curve's work).
    """

    chains: Theta | None
    given_curve: InfluenceCurve | None
    directions: Directions = Directions()
    secrets: Secrets = ALL_SECRETS  # what every bound protects (docs/math.md §16): the curve's

    def __post_init__(self) -> None:
        if self.given_curve is None and self.chains is None:
            raise ValueError("a stream setting needs the a(b) curve or Markov chain priors to compute it from")

    @cached_property
    def curve(self) -> InfluenceCurve:
        """The a(b) curve of the prior: the one given, or the chains' own."""
        if self.given_curve is not None:
            return self.given_curve
        from ..engine.influence import influence_curve

        return influence_curve(list(self.chains or ()), secrets=self.secrets)

    @property
    def length(self) -> int:
        if self.given_curve is None and self.chains is not None:
            return self.chains.max_length
        return self.curve.length

    def matrices(self) -> dict[str, object]:
        """The directions as keyword arguments of the TPL functions."""
        return {"backward": self.directions.backward, "forward": self.directions.forward}


def stream_setting(
    prior_or_priors: object,
    curve: InfluenceCurve | None = None,
    backward: object = None,
    forward: object = None,
    lazy_curve: bool = False,
    secrets: Secrets | None = None,
) -> StreamSetting:
    """The setting of a stream over ``prior_or_priors`` (a MarkovChainPrior, a list Θ of them, or any prior
    with an a(b) curve, such as a Gaussian process); ``curve`` defaults to the prior's own, computed now, or
    (``lazy_curve``, chains only) when a bound first reads it; ``secrets``: what every bound protects
    (docs/math.md §16; default: the given curve's own, or every pair at every entry)."""
    from ..engine.influence import influence_curve

    chains = theta_or_none(prior_or_priors, "a stream", same_length=True)
    if secrets is None:
        secrets = curve.secrets if curve is not None and isinstance(curve.secrets, Secrets) else ALL_SECRETS
    if curve is None and not (lazy_curve and chains is not None):
        curve = influence_curve(prior_or_priors, secrets=secrets)
    if curve is not None and not isinstance(curve, InfluenceCurve):
        raise ValueError(f"curve must be an InfluenceCurve; got {type(curve).__name__}")
    if chains is not None and curve is not None and curve.length != chains.max_length:
        raise ValueError(f"the curve covers T = {curve.length} entries but the chains have T = {chains.max_length}")
    if chains is None and (backward is not None or forward is not None):
        raise ValueError("backward and forward matrices need Markov chain priors")
    directions = Directions() if chains is None else check_directions(backward, forward, chains.n_states)
    return StreamSetting(chains, curve, directions, secrets)


@dataclass(frozen=True)
class BoundValues:
    """A bound's value for every step of a schedule (``values``), or why it was not computed (``refusal``).

    ``detail`` is what the bound's own function returned (e.g. the TemporalLeakage with BPL and FPL).
    """

    values: np.ndarray | None
    refusal: str | None = None
    detail: object = None

    @property
    def max(self) -> float:
        return math.nan if self.values is None else float(np.max(self.values))


@dataclass(frozen=True)
class StreamBoundSpec:
    """One upper bound on the leakage of a stream (see the module docstring); ``short`` heads a narrow column.

    ``refusal(setting)``: why it is not computed for this setting (None: it is); ``per_step(setting,
    eps)`` → (per-step values, detail); ``largest_eps(setting, target, unbounded)``: the largest
    constant ε per step whose bound stays within ``target`` (``unbounded``: over an endless stream).
    ``whole_sequence``: the bound also holds for a single per-entry ε-DP release of the whole sequence
    (TPL does not: it reads the release at each step).  ``sentence``: how a sentence names it (default its
    label); ``compared``: whether "which bound is tighter" weighs it (group DP, the loosest by design, is not).
    """

    name: str
    label: str
    short: str
    description: str
    needs_chain: bool
    whole_sequence: bool
    refusal: Callable[[StreamSetting], str | None]
    per_step: Callable[[StreamSetting, np.ndarray], tuple[np.ndarray, object]]
    largest_eps: Callable[[StreamSetting, float, bool], float]
    sentence: str = ""
    compared: bool = True

    @property
    def in_words(self) -> str:
        """Its name in a sentence."""
        return self.sentence or self.label

    def values(self, setting: StreamSetting, eps: object) -> BoundValues:
        """The bound per step of schedule ``eps``, or its refusal."""
        if self.needs_chain and setting.chains is None:
            return BoundValues(None, f"{self.label} needs a Markov chain prior")
        refusal = self.refusal(setting)
        if refusal is not None:
            return BoundValues(None, refusal)
        schedule = check_schedule(eps, setting.length)
        values, detail = self.per_step(setting, schedule)
        return BoundValues(np.asarray(values, dtype=float), None, detail)

    def plan(self, setting: StreamSetting, target: float, unbounded: bool = False) -> float:
        """The largest constant ε per step for ``target``; NaN when the bound does not apply here."""
        if (self.needs_chain and setting.chains is None) or self.refusal(setting) is not None:
            return math.nan
        return self.largest_eps(setting, target, unbounded)


def _tpl_refusal(setting: StreamSetting) -> str | None:
    return None if setting.chains is None else tpl_refusal(setting.chains, **setting.matrices())


def _tpl(setting: StreamSetting, eps: np.ndarray) -> tuple[np.ndarray, object]:
    temporal = temporal_privacy_leakage(setting.chains, eps, **setting.matrices(), secrets=setting.secrets)
    return temporal.tpl, temporal


def _tpl_plan(setting: StreamSetting, target: float, unbounded: bool) -> float:
    return max_eps_for_tpl(setting.chains, target, unbounded=unbounded, **setting.matrices(), secrets=setting.secrets)


def _c_bound(setting: StreamSetting, eps: np.ndarray) -> tuple[np.ndarray, object]:
    # windows of consecutive steps are proven for Markov chain priors only (translation_bound's docstring)
    bound = translation_bound(setting.curve, eps, contiguous=setting.chains is not None)
    return bound.per_entry, bound


def _c_plan(setting: StreamSetting, target: float, unbounded: bool) -> float:
    """[C]: the stream is per-entry ε-DP, so calibrate over the curve.  Endless (stationary chains): only the
    curve points with 2b + 1 ≤ T count — for a stationary chain those equal the a(b) of an unbounded chain (the
    middle entry has b entries on each side, docs/math.md §2.1), while larger b and the point (T, 0) exist only
    because the chain ends.  0: no curve point within reach meets the target."""
    if not unbounded:
        return calibrate(setting.curve, target).eps_dp
    allowed = [(target - a) / b for b, a in setting.curve.points() if 2 * b + 1 <= setting.length and a < target]
    return max(allowed, default=0.0)


def _group(setting: StreamSetting, eps: np.ndarray) -> tuple[np.ndarray, object]:
    total = group_dp_bound(eps)
    return np.full(eps.size, total), total


STREAM_BOUNDS: dict[str, StreamBoundSpec] = {
    spec.name: spec
    for spec in (
        StreamBoundSpec(
            "tpl",
            "TPL",
            "TPL",
            "temporal privacy leakage ([TPL]): what the past (BPL) and the future (FPL) add to each step's ε",
            needs_chain=True,
            whole_sequence=False,
            refusal=_tpl_refusal,
            per_step=_tpl,
            largest_eps=_tpl_plan,
        ),
        StreamBoundSpec(
            "c_bound",
            "[C] bound",
            "[C]",
            "[C]'s translation through the a(b) curve: min_b (the ε of a window of b steps) + a(b)",
            needs_chain=False,
            whole_sequence=True,
            refusal=lambda setting: None,
            per_step=_c_bound,
            largest_eps=_c_plan,
            sentence="the [C] bound",
        ),
        StreamBoundSpec(
            "group_dp",
            "group DP",
            "group DP",
            "group DP over the user's whole stream: Σ_t ε_t",
            needs_chain=False,
            whole_sequence=True,
            refusal=lambda setting: None,
            per_step=_group,
            largest_eps=lambda setting, target, unbounded: 0.0 if unbounded else target / setting.length,
            compared=False,
        ),
    )
}


def stream_bound(name: object) -> StreamBoundSpec:
    """The record of stream bound ``name``; ValueError naming the known ones otherwise."""
    if not isinstance(name, str) or name not in STREAM_BOUNDS:
        raise ValueError(f"unknown stream bound {name!r}; choose from {', '.join(STREAM_BOUNDS)}")
    return STREAM_BOUNDS[name]


def bound_table(setting: StreamSetting, eps: object, names: Sequence[str] | None = None) -> dict[str, BoundValues]:
    """Every registered bound (or those ``names``) of the schedule ``eps``, by name."""
    chosen = list(STREAM_BOUNDS) if names is None else [stream_bound(n).name for n in names]
    return {name: STREAM_BOUNDS[name].values(setting, eps) for name in chosen}


def plan_table(setting: StreamSetting, target: float, unbounded: bool = False) -> dict[str, float]:
    """The largest constant ε per step for ``target`` under every registered bound (NaN: does not apply)."""
    return {name: spec.plan(setting, target, unbounded) for name, spec in STREAM_BOUNDS.items()}


# --------------------------------------------------------------------------------------------
# every registered bound of one stream of Markov chains, and the planner (what puffer_core exports)


def _chains_setting(
    prior_or_priors: object,
    curve: InfluenceCurve | None,
    backward: object = None,
    forward: object = None,
    secrets: Secrets | None = None,
) -> StreamSetting:
    priors = stream_priors(prior_or_priors)
    T = priors[0].length
    if curve is not None and (not isinstance(curve, InfluenceCurve) or curve.length != T):
        raise ValueError(f"curve must be the a(b) curve of these priors (an InfluenceCurve of length T = {T})")
    return stream_setting(priors, curve, backward, forward, lazy_curve=True, secrets=secrets)


def _refuse(setting: StreamSetting) -> None:
    """Every registered bound's cheap refusal, up front, before any of them works (ValueError with the first)."""
    for spec in STREAM_BOUNDS.values():
        refusal = spec.refusal(setting)
        if refusal is not None:
            raise ValueError(refusal)


@dataclass(frozen=True, eq=False)
class StreamBounds:
    """Every registered bound of one stream (docs/math.md §10), by name: :class:`BoundValues` with the bound's own
    result as ``detail`` (TPL's :class:`~puffer_core.stream.tpl.TemporalLeakage`, the [C] bound's
    :class:`~puffer_core.stream.bounds.TranslationBound`, group DP's total)."""

    bounds: dict[str, BoundValues]

    @property
    def temporal(self) -> TemporalLeakage:
        """TPL's BPL, FPL and TPL."""
        return cast(TemporalLeakage, self.bounds["tpl"].detail)

    @property
    def translation(self) -> TranslationBound:
        """The [C] bound, per entry."""
        return cast(TranslationBound, self.bounds["c_bound"].detail)

    @property
    def group_dp(self) -> float:
        """Group DP over the whole stream: Σ_t ε_t."""
        return float(cast(float, self.bounds["group_dp"].detail))

    def largest(self) -> dict[str, float]:
        """Each bound's largest value over the steps, by name."""
        return {name: values.max for name, values in self.bounds.items()}

    def describe(self) -> str:
        """One sentence: which compared bound is tightest and by how much, against the next one."""
        compared = {name: value for name, value in self.largest().items() if STREAM_BOUNDS[name].compared}
        return describe_bounds({STREAM_BOUNDS[name].in_words: value for name, value in compared.items()})


def stream_bounds(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps: object,
    curve: InfluenceCurve | None = None,
    backward: object = None,
    forward: object = None,
    secrets: Secrets | None = None,
) -> StreamBounds:
    """Every bound of :data:`STREAM_BOUNDS` of the same stream of Markov chains: TPL, the [C] bound (windows: the
    priors are Markov chains), group DP and any bound registered later.  ``curve`` defaults to the priors' a(b)
    curve; ``backward`` and ``forward`` are the matrices of TPL's attacker (:class:`~.checks.Directions`).  A
    bound that refuses the stream (out of reach) raises ValueError with its reason, before any bound works.
    ``secrets``: every bound for the chosen secrets (docs/math.md §16)."""
    setting = _chains_setting(prior_or_priors, curve, backward, forward, secrets)
    _refuse(setting)
    return StreamBounds(bound_table(setting, eps))


@dataclass(frozen=True)
class StreamPlan:
    """The largest constant per-step ε for a target under each registered bound, by name (docs/math.md §3, §10)."""

    target: float
    eps: dict[str, float]
    unbounded: bool = False

    @property
    def eps_tpl(self) -> float:
        return self.eps["tpl"]

    @property
    def eps_translation(self) -> float:
        return self.eps["c_bound"]

    @property
    def eps_group_dp(self) -> float:
        return self.eps["group_dp"]


def plan_stream(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    target: float,
    curve: InfluenceCurve | None = None,
    unbounded: bool = False,
    secrets: Secrets | None = None,
) -> StreamPlan:
    """The inverse question for every registered bound: the largest constant ε that keeps the stream within
    ``target`` (each bound's ``largest_eps``: TPL's :func:`~.supremum.max_eps_for_tpl`, the [C] bound's
    calibration, group DP's target / T, or 0 for an endless stream).  ``unbounded`` (stationary priors): an
    endless stream.  A bound that refuses the stream raises ValueError with its reason, before any bound works.
    An answer of 0 means no ε > 0 meets the target under that bound.  ``secrets``: every bound for the chosen
    secrets (docs/math.md §16)."""
    unbounded = check_flag("unbounded", unbounded)
    target = check_eps("target", target)
    setting = _chains_setting(prior_or_priors, curve, secrets=secrets)
    _refuse(setting)
    return StreamPlan(target, plan_table(setting, target, unbounded), unbounded)


def tightest(table: dict[str, BoundValues]) -> tuple[str | None, float]:
    """The bound with the smallest largest value over the steps (its name and that value)."""
    known = [(values.max, name) for name, values in table.items() if values.values is not None]
    if not known:
        return None, math.nan
    value, name = min(known)
    return name, value
