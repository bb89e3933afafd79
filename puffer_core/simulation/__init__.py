"""Releases on data and what they are worth (docs/math.md §6, §7).

- :mod:`.metrics`: Acc@k, Hit Rate@K, NDCG@K and the L1 count error;
- :mod:`.run`: :func:`simulate`, every mechanism over an ε grid and several releases on data;
- :mod:`.explain`: why a mechanism wins or loses, as typed findings;
- :mod:`.fitted`: what the smoothing τ of a fitted chain does to a(1) and b*, and the Dirichlet alternative.
"""

from .explain import Explanation, Finding, Winner, explain_simulation
from .fitted import (
    DirichletAlternative,
    SmoothingEffect,
    dirichlet_alternative,
    posterior_mean_chain,
    smoothing_effect,
)
from .metrics import acc_at_k, hit_rate_at_k, informative_k, l1_count_error, ndcg_at_k, trivial_topk
from .run import DEFAULT_EPS_GRID, RELEASE_MODES, SimulationResult, simulate

__all__ = [
    "DEFAULT_EPS_GRID",
    "DirichletAlternative",
    "Explanation",
    "Finding",
    "RELEASE_MODES",
    "SimulationResult",
    "SmoothingEffect",
    "Winner",
    "acc_at_k",
    "dirichlet_alternative",
    "explain_simulation",
    "hit_rate_at_k",
    "informative_k",
    "l1_count_error",
    "ndcg_at_k",
    "posterior_mean_chain",
    "simulate",
    "smoothing_effect",
    "trivial_topk",
]
