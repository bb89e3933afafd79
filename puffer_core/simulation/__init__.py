"""Releases on data and what they are worth (docs/math.md §6, §7).

- :mod:`.metrics`: Acc@k, Hit Rate@K, NDCG@K and the L1 count error;
- :mod:`.run`: :func:`simulate`, every mechanism over an ε grid and several releases on data;
- :mod:`.explain`: why a mechanism wins or loses, as typed findings.
"""

from .explain import Explanation, Finding, Winner, explain_simulation
from .metrics import acc_at_k, hit_rate_at_k, l1_count_error, ndcg_at_k
from .run import DEFAULT_EPS_GRID, RELEASE_MODES, SimulationResult, simulate

__all__ = [
    "DEFAULT_EPS_GRID",
    "Explanation",
    "Finding",
    "RELEASE_MODES",
    "SimulationResult",
    "Winner",
    "acc_at_k",
    "explain_simulation",
    "hit_rate_at_k",
    "l1_count_error",
    "ndcg_at_k",
    "simulate",
]
