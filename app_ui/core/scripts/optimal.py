"""Pufferfish Lab — the best possible mechanism, recomputed with puffer_core (docs/math.md §18).

Prior: binary chain p = 0.9, q = 0.8, T = 100.
It prints the numbers the page shows, one `label = value` per line, as the page prints them.
Run it anywhere once puffer_core is installed (python -m pip install <the Pufferfish Lab folder>),
or from the Pufferfish Lab repository's folder: python optimal.py
"""

import sys

try:
    from puffer_core import MarkovChainPrior, influence_curve
    from puffer_core.display import fmt
    from puffer_core.optimal.compare import compare_with_floor
    from puffer_core.optimal.repeat import repeated_leakage
except ModuleNotFoundError:
    sys.exit(
        "puffer_core was not found: install it (python -m pip install <the Pufferfish Lab folder>),"
        " or run this script from the Pufferfish Lab repository's folder"
    )

# <prior>
p, q = 0.9, 0.8  # chances to stay in state 0 and in state 1
prior = MarkovChainPrior([[p, 1.0 - p], [1.0 - q, q]], length=100)
# </prior>
EPS = 1.0  # the ε-Pufferfish level of every comparable mechanism
LENGTH = 10  # the yardstick's sequence length: the prior's chain over this many entries
STATE = 1  # the released count is each user's count of this state (its index)
ALPHA = 2.0  # the Rényi order of the Gaussian rows (shown for information: a weaker guarantee)
RUNS = 3  # the optimum run 1..RUNS times on the same data

chains = [
    MarkovChainPrior(chain.transition, chain.initial, length=LENGTH, labels=chain.labels)
    for chain in (prior if isinstance(prior, list) else [prior])
]
comparison = compare_with_floor(chains, EPS, [STATE], alpha=ALPHA)  # the LP floor and every mechanism's error
curve = influence_curve(chains if len(chains) > 1 else chains[0])  # for Theorem 6.2's bound
print(f"Best possible error (floor) = {fmt(comparison.floor)}")
for row in comparison.rows:
    ratio = f" ({fmt(comparison.ratio(row.name), 3)}× floor)" if row.comparable else " (Rényi: not comparable)"
    print(f"error_{row.name} = {fmt(row.error)}{ratio}")
for k in range(1, RUNS + 1):
    runs = repeated_leakage(comparison.optimal, k, curve)  # exact leakage of k runs of the table returned
    print(f"leakage_{k}_runs = {fmt(runs.leakage)} (k·ε = {fmt(runs.k_eps)})")
