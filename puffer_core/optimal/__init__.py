"""The best possible mechanism, as a yardstick (docs/math.md §18).

- :mod:`.lp` — the error-optimal ε-Pufferfish mechanism for a count (or a small histogram) of a chain prior,
  as a linear programme: its certified floor, the table it returns and that table's exact audit;
- :mod:`.compare` — every shipped mechanism's exact expected error beside the floor;
- :mod:`.repeat` — the returned mechanism run k times: the exact leakage of the joint output law, beside k·ε
  and [C] Theorem 6.2's bound for the a(b) route.
"""

from .lp import OptimalMechanism, optimal_count_mechanism, optimal_histogram_mechanism

__all__ = ["OptimalMechanism", "optimal_count_mechanism", "optimal_histogram_mechanism"]
