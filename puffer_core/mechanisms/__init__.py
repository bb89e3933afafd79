"""The mechanisms (docs/math.md §3–§5, §13, §15): the registry, the noise laws, accuracy first.

- :mod:`.registry` — :data:`MECHANISMS`, one :class:`MechanismSpec` record per mechanism, and the one
  place that knows them by name (:func:`make_mechanism`, :func:`mechanisms_for`);
- :mod:`.base` — the :class:`Mechanism` protocol, the count checks, top-k, OpenDP;
- :mod:`.exponential`, :mod:`.laplace` — the Pufferfish and group-DP mechanisms and MQM;
- :mod:`.wasserstein`, :mod:`.mqm_approx`, :mod:`.influence_matrix` — the published baselines (§15);
- :mod:`.noise` — the noise laws and their exact error laws; :mod:`.accuracy` — accuracy first (§13);
- :mod:`.laws` — the output laws of per-entry releases the audits and the attacker read (§9–§11);
- :mod:`.gaussian` — Gaussian noise under Rényi Pufferfish (§17), from :mod:`.count_laws`, :mod:`.mixtures` and
  :mod:`.gaussian_calibration`.
"""

from .accuracy import (
    AccuracyPlan,
    Cost,
    CountTarget,
    MechanismAccuracy,
    TopKTarget,
    accuracy_at,
    accuracy_first,
)
from .base import HISTOGRAM_SENSITIVITY, Mechanism, Refused, check_counts, top_k_indices
from .exponential import ExponentialTopK, group_dp_exponential, pufferfish_exponential
from .gaussian import GaussianCounts, gaussian_count, gaussian_histogram
from .influence_matrix import influence_laplace, influence_translation
from .laplace import (
    LaplaceCounts,
    group_dp_laplace,
    mqm_eps_for_scale,
    mqm_laplace,
    mqm_top_k_counts,
    pufferfish_laplace,
)
from .mqm_approx import mqm_approx_laplace, mqm_approx_scale
from .noise import DISCRETE_LAPLACE, GUMBEL, LAPLACE, NOISES, Noise, noise_law
from .population import PopulationScale, population_laplace, population_scale
from .registry import (
    ANSWERS,
    DEFAULT_MECHANISMS,
    MECHANISMS,
    QUERIES,
    TOPK_LAPLACE,
    BuildRequest,
    Calibrated,
    MechanismSpec,
    Output,
    ScaleRequest,
    curve_mechanisms,
    group_dp_twins,
    make_mechanism,
    mechanism_spec,
    mechanisms_for,
    output_law,
)
from .wasserstein import wasserstein_laplace, wasserstein_scale

__all__ = [
    "PopulationScale",
    "population_laplace",
    "population_scale",
    "accuracy_at",
    "accuracy_first",
    "AccuracyPlan",
    "ANSWERS",
    "BuildRequest",
    "Calibrated",
    "check_counts",
    "curve_mechanisms",
    "DISCRETE_LAPLACE",
    "group_dp_twins",
    "GUMBEL",
    "LAPLACE",
    "Noise",
    "noise_law",
    "NOISES",
    "output_law",
    "ScaleRequest",
    "Cost",
    "CountTarget",
    "DEFAULT_MECHANISMS",
    "ExponentialTopK",
    "gaussian_count",
    "gaussian_histogram",
    "GaussianCounts",
    "group_dp_exponential",
    "group_dp_laplace",
    "HISTOGRAM_SENSITIVITY",
    "influence_laplace",
    "influence_translation",
    "LaplaceCounts",
    "make_mechanism",
    "Mechanism",
    "mechanism_spec",
    "MechanismAccuracy",
    "MECHANISMS",
    "mechanisms_for",
    "MechanismSpec",
    "mqm_approx_laplace",
    "mqm_approx_scale",
    "mqm_eps_for_scale",
    "mqm_laplace",
    "mqm_top_k_counts",
    "Output",
    "pufferfish_exponential",
    "pufferfish_laplace",
    "QUERIES",
    "Refused",
    "top_k_indices",
    "TOPK_LAPLACE",
    "TopKTarget",
    "wasserstein_laplace",
    "wasserstein_scale",
]
