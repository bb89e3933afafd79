"""The mechanism registry: one :class:`MechanismSpec` record per mechanism (docs/math.md §3–§5, §15).

:data:`MECHANISMS` holds one :class:`MechanismSpec` record per mechanism: its name, its label,
the queries it answers, how its ε_DP is found and how it is built.  The simulator, the command
line and the app all build mechanisms through :func:`make_mechanism` and list them through
:func:`mechanisms_for`; adding a mechanism is adding one record here (and its constructor).

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

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from ..accounting.events import Composition
from ..engine.curve import InfluenceCurve
from ..priors.models import MarkovChainPrior
from ..validation import check_choice, check_whole
from .base import Mechanism
from .exponential import group_dp_exponential, pufferfish_exponential
from .gaussian import gaussian_histogram
from .influence_matrix import influence_laplace
from .laplace import group_dp_laplace, mqm_laplace, mqm_top_k_counts, pufferfish_laplace
from .mqm_approx import mqm_approx_laplace
from .wasserstein import wasserstein_laplace

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

    ``queries`` is how many separately budgeted counts the release answers (1: one query).
    """

    eps_puffer: float
    curve: InfluenceCurve
    priors: MarkovChainPrior | list[MarkovChainPrior]
    k: int
    queries: int


@dataclass(frozen=True)
class MechanismSpec:
    """One mechanism: its name, its label, what it releases (a key of :data:`ANSWERS`), how its
    ε_DP is found, and how it is built.  ``same_query_only``: its releases compose only when they
    answer the same query again (not the disjoint time windows of the simulator)."""

    name: str
    label: str
    releases: Output
    calibrated: Calibrated
    build: Callable[[BuildRequest], Mechanism]
    same_query_only: bool = False

    @property
    def queries(self) -> tuple[str, ...]:
        """The queries it answers; the first is the one its release answers as it is."""
        return ANSWERS[self.releases]

    @property
    def composition(self) -> Composition:
        """How its releases compose: MQM's add up, the curve-calibrated ones by [C] Theorem 6.2, the baselines
        of docs/math.md §15 by their own rule."""
        return _COMPOSITION.get(self.calibrated, Composition.THEOREM_6_2)

    def answers(self, query: str) -> bool:
        return query in self.queries

    def check_query(self, query: str) -> None:
        """Refuse a query this mechanism cannot answer, naming the ones that can."""
        if not self.answers(query):
            raise ValueError(
                f"{self.name} ({self.label}) releases a {self.releases} and cannot answer the {query} query;"
                f" choose from {', '.join(mechanisms_for(query))}"
            )


def _mqm(request: BuildRequest) -> Mechanism:
    if request.queries > 1:
        return mqm_top_k_counts(request.priors, request.eps_puffer, request.queries)
    return mqm_laplace(request.priors, request.eps_puffer)


MECHANISMS: dict[str, MechanismSpec] = {
    spec.name: spec
    for spec in (
        MechanismSpec(
            "pufferfish_exponential",
            "Pufferfish exponential",
            Output.RANKING,
            Calibrated.CURVE,
            lambda r: pufferfish_exponential(r.curve, r.eps_puffer, r.k),
        ),
        MechanismSpec(
            "pufferfish_laplace",
            "Pufferfish Laplace",
            Output.COUNTS,
            Calibrated.CURVE,
            lambda r: pufferfish_laplace(r.curve, r.eps_puffer, queries=r.queries),
        ),
        MechanismSpec("mqm", "MQM", Output.COUNTS, Calibrated.MQM, _mqm),
        MechanismSpec(
            "group_dp_exponential",
            "Group DP exponential",
            Output.RANKING,
            Calibrated.GROUP_DP,
            lambda r: group_dp_exponential(r.curve, r.eps_puffer, r.k),
        ),
        MechanismSpec(
            "group_dp_laplace",
            "Group DP Laplace",
            Output.COUNTS,
            Calibrated.GROUP_DP,
            lambda r: group_dp_laplace(r.curve, r.eps_puffer, queries=r.queries),
        ),
        MechanismSpec(
            "wasserstein",
            "Wasserstein",
            Output.COUNTS,
            Calibrated.WASSERSTEIN,
            lambda r: wasserstein_laplace(r.priors, r.eps_puffer),  # one release of all counts (no split)
            same_query_only=True,
        ),
        MechanismSpec(
            "mqm_approx",
            "MQMApprox",
            Output.COUNTS,
            Calibrated.MQM_APPROX,
            lambda r: mqm_approx_laplace(r.priors, r.eps_puffer, queries=r.queries),
        ),
        MechanismSpec(
            "influence_matrix",
            "Influence matrix (Ghosh–Kleinberg)",
            Output.COUNTS,
            Calibrated.INFLUENCE_MATRIX,
            lambda r: influence_laplace(r.priors, r.eps_puffer, queries=r.queries),
        ),
        MechanismSpec(
            "gaussian",
            "Gaussian (Rényi Pufferfish, α = 2)",
            Output.COUNTS,
            Calibrated.RENYI,
            # ε is read as the Rényi level at α = 2, a weaker guarantee than ε-Pufferfish (its event says so);
            # all counts are one release (no split): releases of different queries do not compose
            lambda r: gaussian_histogram(r.priors, r.eps_puffer),
            same_query_only=True,
        ),
    )
}

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
    spec = mechanism_spec(name)
    check_choice("query", query, QUERIES)
    check_choice("topk_laplace", topk_laplace, TOPK_LAPLACE)
    spec.check_query(query)
    queries = 1
    if query == "topk" and topk_laplace == "split" and spec.releases is Output.COUNTS:
        queries = check_whole(
            "n_states (splitting the budget over the counts needs the number of counts m)", n_states, minimum=2
        )
    return spec.build(BuildRequest(eps_puffer, curve, priors, k, queries))


__all__ = [
    "ANSWERS",
    "BuildRequest",
    "Calibrated",
    "DEFAULT_MECHANISMS",
    "MECHANISMS",
    "MechanismSpec",
    "Output",
    "QUERIES",
    "TOPK_LAPLACE",
    "make_mechanism",
    "mechanism_spec",
    "mechanisms_for",
]
