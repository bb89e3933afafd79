"""The mechanism registry: one :class:`MechanismSpec` record per mechanism (docs/math.md §3–§5, §13, §15).

:data:`MECHANISMS` holds one :class:`MechanismSpec` record per mechanism: its name, its label, what it
releases, how its ε_DP is found, the noise it adds, how it is built, the ε a given noise costs, its
group-DP twin and whether its output law is exact.  Everything else reads the record, never a name:
the simulator, the explanations, accuracy first, the command line, the app's ledger, accuracy cells
and exported scripts.  Adding a mechanism is its module (its constructor) and one record here.

- ``pufferfish_exponential``, ``group_dp_exponential`` — exponential top-k
  (:mod:`puffer_core.mechanisms.exponential`): they release a ranking, so they answer the
  top-k query only.
- ``pufferfish_laplace``, ``group_dp_laplace``, ``mqm`` — Laplace counts
  (:mod:`puffer_core.mechanisms.laplace`): they release noisy counts, which answer the
  histogram query and, sorted, the top-k query.
- ``wasserstein``, ``mqm_approx``, ``influence_matrix`` — the published baselines (docs/math.md §15):
  the Wasserstein mechanism (:mod:`.wasserstein`), MQM with the eigen-gap bound (:mod:`.mqm_approx`)
  and an influence-matrix translation after Ghosh & Kleinberg (:mod:`.influence_matrix`); Laplace
  counts too.  Each may be :class:`~puffer_core.mechanisms.base.Refused` for a prior (out of reach, or
  no guarantee), which the simulator records and shows.
- ``gaussian`` — Gaussian noise on every count at (α = 2, ε)-Rényi Pufferfish (:mod:`.gaussian`,
  docs/math.md §17): a weaker notion than ε-Pufferfish, accounted by its own event.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from ..accounting.calibration import certify
from ..accounting.events import Composition
from ..engine.curve import InfluenceCurve
from ..priors.models import MarkovChainPrior
from ..secrets.values import Secrets
from ..validation import check_choice, check_positive, check_whole
from .base import HISTOGRAM_SENSITIVITY, Mechanism, Refused
from .exponential import group_dp_exponential, pufferfish_exponential
from .gaussian import DEFAULT_ORDER, gaussian_histogram
from .gaussian_calibration import gwm_eps
from .influence_matrix import influence_laplace
from .laplace import group_dp_laplace, mqm_eps_for_scale, mqm_laplace, mqm_top_k_counts, pufferfish_laplace
from .mqm_approx import mqm_approx_laplace
from .noise import GAUSSIAN, GUMBEL, LAPLACE, Noise
from .wasserstein import wasserstein_laplace, wasserstein_scale

QUERIES = ("topk", "histogram")  # the k most frequent states of every group; all counts of every group
TOPK_LAPLACE = ("split", "histogram")  # how counts answer top-k: m queries with ε/m each, or one histogram


class Output(StrEnum):
    """What one release of a mechanism is (the typed code)."""

    RANKING = "ranking"  # the top k states, best first
    COUNTS = "counts"  # a noisy count for every state


# the queries each kind of release answers, the one it answers as it is first: a ranking is a
# top-k answer only; noisy counts are a histogram, and sorted they are a top-k answer too
ANSWERS: dict[Output, tuple[str, ...]] = {Output.RANKING: ("topk",), Output.COUNTS: ("histogram", "topk")}


class Calibrated(StrEnum):
    """How a mechanism's per-entry ε_DP is found for a target ε_puffer (the typed code)."""

    CURVE = "curve"  # the a(b) curve's best point (docs/math.md §3)
    GROUP_DP = "group_dp"  # ε_puffer / T_max, group DP over the whole sequence
    MQM = "mqm"  # the noise scale σ_max of the Markov quilt mechanism (docs/math.md §5)
    MQM_APPROX = "mqm_approx"  # σ_max with the eigen-gap bound on the max-influence (docs/math.md §15)
    WASSERSTEIN = "wasserstein"  # the worst ∞-Wasserstein distance W of the counts (docs/math.md §15)
    INFLUENCE_MATRIX = "influence_matrix"  # ε_DP = ε_puffer / c, c from the influence matrix (docs/math.md §15)
    RENYI = "renyi"  # Gaussian noise at (α = 2, ε)-Rényi Pufferfish: the GWM or the exact σ* (docs/math.md §17)


_COMPOSITION: dict[Calibrated, Composition] = {
    Calibrated.MQM: Composition.ADDITIVE,
    Calibrated.MQM_APPROX: Composition.ADDITIVE,
    Calibrated.WASSERSTEIN: Composition.SAME_QUERY,
    Calibrated.INFLUENCE_MATRIX: Composition.DP_TRANSLATION,
    Calibrated.RENYI: Composition.RENYI,
}


@dataclass(frozen=True)
class BuildRequest:
    """Everything a mechanism may need to be built: the target, the curve, the priors, the query's shape.

    ``queries`` is how many separately budgeted counts the release answers (1: one query);
    ``sensitivity`` the L1 sensitivity of a release of counts answered as one query (2: a histogram).
    """

    eps_puffer: float
    curve: InfluenceCurve
    priors: MarkovChainPrior | list[MarkovChainPrior]
    k: int
    queries: int
    sensitivity: float = HISTOGRAM_SENSITIVITY


@dataclass(frozen=True)
class ScaleRequest:
    """The reverse of a :class:`BuildRequest`: the noise ``scale`` per count a target allows, and the same shape.

    A mechanism's ``eps_for_scale`` answers with the smallest ε_puffer whose noise is at most ``scale``
    (docs/math.md §13); ``priors`` is None when only the curve is known.
    """

    scale: float
    curve: InfluenceCurve
    priors: list[MarkovChainPrior] | None
    k: int
    queries: int
    sensitivity: float = HISTOGRAM_SENSITIVITY


def _names_text(value: object) -> str:
    return f"{value!r} ({type(value).__name__})"


@dataclass(frozen=True, kw_only=True)
class MechanismSpec:
    """One mechanism, everything the library and the app need to know about it (docs/math.md §3–§5, §13, §15).

    - ``name``: the registry key (a Python identifier); ``label``: how pages, tables and scripts name it;
    - ``releases``: what one release is (a key of :data:`ANSWERS`: which queries it answers follows);
    - ``calibrated``: how its ε_DP is found (the typed code; how its releases compose follows);
    - ``noise``: the :class:`~puffer_core.mechanisms.noise.Noise` record of the noise it adds to every count;
    - ``build``: the constructor, from a :class:`BuildRequest`;
    - ``eps_for_scale``: the inverse calibration, from a :class:`ScaleRequest` to the smallest ε_puffer whose
      noise per count is at most the request's scale (None: accuracy first does not offer it);
    - ``group_dp_twin``: the registry name of the same mechanism calibrated by group DP (a curve-calibrated
      mechanism that falls back to the point (T, 0) *is* its twin there);
    - ``needs_chains``: it needs the Markov chain priors themselves, not only the a(b) curve;
    - ``exact_probabilities``: its releases have a finite exact output law (``probabilities``), which the exact
      audit of docs/math.md §9 reads (:func:`output_law`);
    - ``same_query_only``: its releases compose only when they answer the same query again (not the
      disjoint time windows of the simulator);
    - ``link_code``: its short name in a shared link (default: its name).

    Every field is checked when the record is made: a record that is wrong fails at import, naming the field.
    """

    name: str
    label: str
    releases: Output
    calibrated: Calibrated
    noise: Noise
    build: Callable[[BuildRequest], Mechanism]
    eps_for_scale: Callable[[ScaleRequest], float] | None = None
    group_dp_twin: str | None = None
    needs_chains: bool = False
    exact_probabilities: bool = False
    same_query_only: bool = False
    link_code: str | None = None

    def __post_init__(self) -> None:
        where = f"MechanismSpec {self.name!r}"
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise TypeError(f"MechanismSpec name must be a Python identifier (a string); got {_names_text(self.name)}")
        if not isinstance(self.label, str) or not self.label.strip():
            raise TypeError(f"{where}: label must be a non-empty string; got {_names_text(self.label)}")
        kinds: tuple[tuple[str, type], ...] = (("releases", Output), ("calibrated", Calibrated), ("noise", Noise))
        for field_name, kind in kinds:
            value = getattr(self, field_name)
            if not isinstance(value, kind):
                raise TypeError(f"{where}: {field_name} must be a {kind.__name__}; got {_names_text(value)}")
        if not callable(self.build):
            raise TypeError(f"{where}: build must be a function of a BuildRequest; got {_names_text(self.build)}")
        if self.eps_for_scale is not None and not callable(self.eps_for_scale):
            raise TypeError(f"{where}: eps_for_scale must be a function or None; got {_names_text(self.eps_for_scale)}")
        for field_name in ("group_dp_twin", "link_code"):
            value = getattr(self, field_name)
            if value is not None and (not isinstance(value, str) or not value):
                raise TypeError(f"{where}: {field_name} must be a non-empty string or None; got {_names_text(value)}")
        for field_name in ("needs_chains", "exact_probabilities", "same_query_only"):
            flag = getattr(self, field_name)
            if not isinstance(flag, bool):
                raise TypeError(f"{where}: {field_name} must be True or False; got {_names_text(flag)}")
        if self.group_dp_twin is not None and self.calibrated is not Calibrated.CURVE:
            raise ValueError(f"{where}: only a curve-calibrated mechanism has a group-DP twin")

    @property
    def queries(self) -> tuple[str, ...]:
        """The queries it answers; the first is the one its release answers as it is."""
        return ANSWERS[self.releases]

    @property
    def pure(self) -> bool:
        """Whether its ε is an ε-Pufferfish level (False for a Rényi mechanism: (α, ε)-Rényi Pufferfish, §17)."""
        return self.calibrated is not Calibrated.RENYI

    @property
    def composition(self) -> Composition:
        """How its releases compose: MQM's add up, the curve-calibrated ones by [C] Theorem 6.2, the baselines
        of docs/math.md §15 by their own rule."""
        return _COMPOSITION.get(self.calibrated, Composition.THEOREM_6_2)

    @property
    def code(self) -> str:
        """Its name in a shared link."""
        return self.link_code or self.name

    def answers(self, query: str) -> bool:
        return query in self.queries

    def check_query(self, query: str) -> None:
        """Refuse a query this mechanism cannot answer, naming the ones that can."""
        if not self.answers(query):
            raise ValueError(
                f"{self.name} ({self.label}) releases a {self.releases} and cannot answer the {query} query;"
                f" choose from {', '.join(mechanisms_for(query))}"
            )


# --------------------------------------------------------------------------------------------
# the inverse calibrations: the ε_puffer whose noise per count is a given scale (docs/math.md §13)


def _ranking_eps_dp(request: ScaleRequest) -> float:
    """Exponential top-k: Gumbel noise of scale λ = 2k/ε_DP (docs/math.md §5)."""
    return 2.0 * request.k / request.scale


def _counts_eps_dp(request: ScaleRequest) -> float:
    """Laplace counts: scale L/ε_DP for one query of sensitivity L, m/ε_DP for m split counts (docs/math.md §5)."""
    return (request.queries if request.queries > 1 else request.sensitivity) / request.scale


def _on_curve(eps_dp: Callable[[ScaleRequest], float]) -> Callable[[ScaleRequest], float]:
    """A curve-calibrated mechanism: ε_puffer = min_b b·ε_DP + a(b) (certify, docs/math.md §3)."""
    return lambda request: certify(request.curve, eps_dp(request)).eps_puffer


def _group(eps_dp: Callable[[ScaleRequest], float]) -> Callable[[ScaleRequest], float]:
    """Group DP over the whole sequence: ε_puffer = T_max·ε_DP (docs/math.md §3)."""
    return lambda request: request.curve.length * eps_dp(request)


def _value_secrets(request: BuildRequest | ScaleRequest, label: str) -> Secrets:
    """The curve's secrets when they are value pairs (docs/math.md §16); a mechanism that reads the prior itself
    has no guarantee for event secrets."""
    secrets = request.curve.secrets
    if not isinstance(secrets, Secrets):
        raise Refused("no_guarantee", f"{label} protects value pairs of entries; for event secrets use a mechanism"
                                      " calibrated through the a(b) curve")
    return secrets


def _mqm_eps(request: ScaleRequest) -> float:
    """MQM: m split counts of ε/m each with σ_max(ε/m) ≤ s, or one query with L·σ_max(ε) ≤ s (docs/math.md §5)."""
    if request.priors is None:
        raise ValueError("MQM needs the Markov chain prior itself (its quilts), not only the a(b) curve")
    secrets = _value_secrets(request, "MQM")
    if request.queries > 1:
        return request.queries * mqm_eps_for_scale(request.priors, request.scale, secrets)
    return mqm_eps_for_scale(request.priors, request.scale / request.sensitivity, secrets)


def _mqm(request: BuildRequest) -> Mechanism:
    secrets = _value_secrets(request, "MQM")
    if request.queries > 1:
        return mqm_top_k_counts(request.priors, request.eps_puffer, request.queries, secrets=secrets)
    return mqm_laplace(request.priors, request.eps_puffer, sensitivity=request.sensitivity, secrets=secrets)


def _mqm_approx(request: BuildRequest) -> Mechanism:
    _value_secrets(request, "MQMApprox")  # its noise protects every pair at every entry: any value pairs
    return mqm_approx_laplace(request.priors, request.eps_puffer, sensitivity=request.sensitivity,
                              queries=request.queries)


def _influence_matrix(request: BuildRequest) -> Mechanism:
    _value_secrets(request, "The influence-matrix translation")  # as MQMApprox: every value pair
    return influence_laplace(request.priors, request.eps_puffer, sensitivity=request.sensitivity,
                             queries=request.queries)


def _wasserstein(request: BuildRequest) -> Mechanism:
    if request.sensitivity != HISTOGRAM_SENSITIVITY:
        raise ValueError("the Wasserstein mechanism releases the histogram of all entries (L1 sensitivity 2)")
    secrets = _value_secrets(request, "Wasserstein")
    return wasserstein_laplace(request.priors, request.eps_puffer, secrets)  # one release of all counts (no split)


def _gaussian(request: BuildRequest) -> Mechanism:
    if request.sensitivity != HISTOGRAM_SENSITIVITY:
        raise ValueError("the Gaussian mechanism releases the histogram of all entries (one release of every count)")
    return gaussian_histogram(request.priors, request.eps_puffer, secrets=_value_secrets(request, "Gaussian"))


def _gaussian_eps(request: ScaleRequest) -> float:
    """The Rényi level (α = 2) whose Gaussian noise is at most ``scale`` per count: the GWM's ε = αW∞²/(2σ²) with
    W∞ in L2 bounded by the exact L1 W∞/√2 (docs/math.md §17); the mechanism built at that level adds σ* ≤ σ_GWM."""
    if request.priors is None:
        raise ValueError("the Gaussian mechanism needs the Markov chain priors themselves (their count laws)")
    scale = wasserstein_scale(request.priors, _value_secrets(request, "Gaussian"))
    w2 = 0.0 if scale.pair[0] == scale.pair[1] else scale.w / math.sqrt(2.0)
    return gwm_eps(w2, DEFAULT_ORDER, request.scale)


def _register(*specs: MechanismSpec) -> dict[str, MechanismSpec]:
    """The registry, checked as a whole: unique names and link codes, every twin a group-DP mechanism of the
    same release (a mistake fails at import, naming the record)."""
    out: dict[str, MechanismSpec] = {}
    for spec in specs:
        if not isinstance(spec, MechanismSpec):
            raise TypeError(f"MECHANISMS holds MechanismSpec records; got {type(spec).__name__}")
        if spec.name in out:
            raise ValueError(f"two mechanisms are named {spec.name!r}")
        out[spec.name] = spec
    codes = [spec.code for spec in out.values()]
    if len(set(codes)) != len(codes):
        raise ValueError(f"two mechanisms share a link code: {sorted(c for c in codes if codes.count(c) > 1)}")
    for spec in out.values():
        twin = spec.group_dp_twin
        if twin is None:
            continue
        if twin not in out:
            raise ValueError(f"MechanismSpec {spec.name!r}: its group-DP twin {twin!r} is not registered")
        other = out[twin]
        if other.calibrated is not Calibrated.GROUP_DP or other.releases is not spec.releases:
            raise ValueError(
                f"MechanismSpec {spec.name!r}: its twin {twin!r} must be calibrated by group DP and release a"
                f" {spec.releases}"
            )
    return out


MECHANISMS: dict[str, MechanismSpec] = _register(
    MechanismSpec(
        name="pufferfish_exponential",
        label="Pufferfish exponential",
        releases=Output.RANKING,
        calibrated=Calibrated.CURVE,
        noise=GUMBEL,
        build=lambda r: pufferfish_exponential(r.curve, r.eps_puffer, r.k),
        eps_for_scale=_on_curve(_ranking_eps_dp),
        group_dp_twin="group_dp_exponential",
        exact_probabilities=True,
        link_code="pe",
    ),
    MechanismSpec(
        name="pufferfish_laplace",
        label="Pufferfish Laplace",
        releases=Output.COUNTS,
        calibrated=Calibrated.CURVE,
        noise=LAPLACE,
        build=lambda r: pufferfish_laplace(r.curve, r.eps_puffer, sensitivity=r.sensitivity, queries=r.queries),
        eps_for_scale=_on_curve(_counts_eps_dp),
        group_dp_twin="group_dp_laplace",
        exact_probabilities=True,
        link_code="pl",
    ),
    MechanismSpec(
        name="mqm",
        label="MQM",
        releases=Output.COUNTS,
        calibrated=Calibrated.MQM,
        noise=LAPLACE,
        build=_mqm,
        eps_for_scale=_mqm_eps,
        needs_chains=True,
        exact_probabilities=True,
    ),
    MechanismSpec(
        name="group_dp_exponential",
        label="Group DP exponential",
        releases=Output.RANKING,
        calibrated=Calibrated.GROUP_DP,
        noise=GUMBEL,
        build=lambda r: group_dp_exponential(r.curve, r.eps_puffer, r.k),
        eps_for_scale=_group(_ranking_eps_dp),
        exact_probabilities=True,
        link_code="ge",
    ),
    MechanismSpec(
        name="group_dp_laplace",
        label="Group DP Laplace",
        releases=Output.COUNTS,
        calibrated=Calibrated.GROUP_DP,
        noise=LAPLACE,
        build=lambda r: group_dp_laplace(r.curve, r.eps_puffer, sensitivity=r.sensitivity, queries=r.queries),
        eps_for_scale=_group(_counts_eps_dp),
        exact_probabilities=True,
        link_code="gl",
    ),
    MechanismSpec(
        name="wasserstein",
        label="Wasserstein",
        releases=Output.COUNTS,
        calibrated=Calibrated.WASSERSTEIN,
        noise=LAPLACE,
        build=_wasserstein,
        needs_chains=True,
        exact_probabilities=True,
        same_query_only=True,
    ),
    MechanismSpec(
        name="mqm_approx",
        label="MQMApprox",
        releases=Output.COUNTS,
        calibrated=Calibrated.MQM_APPROX,
        noise=LAPLACE,
        build=_mqm_approx,
        needs_chains=True,
        exact_probabilities=True,
    ),
    MechanismSpec(
        name="influence_matrix",
        label="Influence matrix (Ghosh–Kleinberg)",
        releases=Output.COUNTS,
        calibrated=Calibrated.INFLUENCE_MATRIX,
        noise=LAPLACE,
        build=_influence_matrix,
        needs_chains=True,
        exact_probabilities=True,
    ),
    MechanismSpec(
        name="gaussian",
        label="Gaussian (Rényi Pufferfish, α = 2)",
        releases=Output.COUNTS,
        calibrated=Calibrated.RENYI,
        noise=GAUSSIAN,
        # ε is read as the Rényi level at α = 2, a weaker guarantee than ε-Pufferfish (its event says so); all
        # counts are one release (no split), and releases of different queries do not compose
        build=_gaussian,
        eps_for_scale=_gaussian_eps,
        needs_chains=True,
        same_query_only=True,
        link_code="ga",
    ),
)

# what the papers compare ([C] Tables 2–5 for top-k); every name answers its query
DEFAULT_MECHANISMS: dict[str, tuple[str, ...]] = {
    "topk": ("pufferfish_exponential", "mqm", "group_dp_exponential", "group_dp_laplace"),
    "histogram": ("pufferfish_laplace", "mqm", "group_dp_laplace"),
}


def mechanism_spec(name: object) -> MechanismSpec:
    """The record of mechanism ``name``; ValueError naming the known ones otherwise."""
    if not isinstance(name, str) or name not in MECHANISMS:
        raise ValueError(f"unknown mechanism {name!r}; choose from {', '.join(MECHANISMS)}")
    return MECHANISMS[name]


def mechanisms_for(query: str) -> tuple[str, ...]:
    """The names of the mechanisms that answer ``query``, in registry order."""
    return tuple(name for name, spec in MECHANISMS.items() if spec.answers(query))


def curve_mechanisms() -> tuple[str, ...]:
    """The names of the mechanisms calibrated through the a(b) curve (docs/math.md §3), in registry order."""
    return tuple(name for name, spec in MECHANISMS.items() if spec.calibrated is Calibrated.CURVE)


def group_dp_twins() -> dict[str, str]:
    """Each curve-calibrated mechanism with a group-DP twin → that twin's name."""
    return {name: spec.group_dp_twin for name, spec in MECHANISMS.items() if spec.group_dp_twin is not None}


def output_law(mechanism: Mechanism, n_states: int, length: int) -> Callable[[np.ndarray], np.ndarray]:
    """The exact output law of one release as a function of a user's sequence, for the exact audit (§9).

    A ranking: Pr of every ranking (:meth:`probabilities`); noisy counts: Pr of every joint bin of the counts,
    cut at the half-integers 0.5, 1.5, …, ``length`` − 0.5 (binning is post-processing, so the audit of these
    outputs is a lower bound on the leakage).  The outputs are the same for every sequence of ``length``
    entries over ``n_states`` states.
    """
    spec = mechanism_spec(mechanism.name)
    if not spec.exact_probabilities:
        raise ValueError(f"{spec.label} offers no exact output probabilities")
    n_states = check_whole("n_states", n_states, minimum=2)
    length = check_whole("length", length)
    law: Any = mechanism
    if spec.releases is Output.RANKING:
        return lambda seq: law.probabilities(np.bincount(seq, minlength=n_states))
    edges = np.concatenate([[-np.inf], np.arange(length) + 0.5, [np.inf]])
    return lambda seq: law.probabilities(np.bincount(seq, minlength=n_states), edges)


def make_mechanism(
    name: str,
    eps_puffer: float,
    curve: InfluenceCurve,
    priors: MarkovChainPrior | list[MarkovChainPrior],
    query: str = "topk",
    k: int = 3,
    n_states: int | None = None,
    topk_laplace: str = "split",
    sensitivity: float = HISTOGRAM_SENSITIVITY,
) -> Mechanism:
    """Build mechanism ``name`` (a key of :data:`MECHANISMS`) for a query (docs/math.md §5).

    ``query="topk"``: exponential mechanisms release rankings; Laplace mechanisms and MQM
    release noisy counts to be sorted.  With ``topk_laplace="split"`` (the papers' design,
    [C] §7.1.3) the ``n_states`` = m counts are m queries with ε/m each; with
    ``"histogram"`` the counts are one query of L1 sensitivity 2.  ``query="histogram"``:
    Laplace mechanisms and MQM on all counts (L = ``sensitivity``, 2 for a histogram of all entries);
    exponential mechanisms do not apply.
    """
    spec = mechanism_spec(name)
    check_choice("query", query, QUERIES)
    check_choice("topk_laplace", topk_laplace, TOPK_LAPLACE)
    spec.check_query(query)
    queries = 1
    if query == "topk" and topk_laplace == "split" and spec.releases is Output.COUNTS:
        queries = check_whole(
            "n_states (splitting the budget over the counts needs the number of counts m)", n_states, minimum=2
        )
    sensitivity = check_positive("sensitivity", sensitivity)
    return spec.build(BuildRequest(eps_puffer, curve, priors, k, queries, sensitivity))


__all__ = [
    "ANSWERS",
    "BuildRequest",
    "Calibrated",
    "DEFAULT_MECHANISMS",
    "MECHANISMS",
    "MechanismSpec",
    "Output",
    "QUERIES",
    "ScaleRequest",
    "TOPK_LAPLACE",
    "curve_mechanisms",
    "group_dp_twins",
    "make_mechanism",
    "mechanism_spec",
    "mechanisms_for",
    "output_law",
]
