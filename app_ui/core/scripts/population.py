"""Pufferfish Lab — whole-population secrets, recomputed with puffer_core (docs/math.md "Whole-population secrets").

Prior: binary chain p = 0.9, q = 0.8, T = 12 (θ₁).
Alternative: θ₁ with 0's stay probability 0.9 → 0.8 (θ₂).
It prints the numbers the page shows, one `label = value` per line, as the page prints them.
Run it anywhere once puffer_core is installed (python -m pip install <the Pufferfish Lab folder>),
or from the Pufferfish Lab repository's folder: python population.py
"""

import sys

try:
    from puffer_core import MarkovChainPrior, PopulationSecrets
    from puffer_core.display import fmt
    from puffer_core.mechanisms.population import population_scale
except ModuleNotFoundError:
    sys.exit(
        "puffer_core was not found: install it (python -m pip install <the Pufferfish Lab folder>),"
        " or run this script from the Pufferfish Lab repository's folder"
    )

# <prior>
p, q = 0.9, 0.8  # chances to stay in state 0 and in state 1
prior = MarkovChainPrior([[p, 1.0 - p], [1.0 - q, q]], length=12)
# </prior>
# θ₂'s transition matrix: same states and length as θ₁, starting as θ₁ does
ALTERNATIVE = [
    [0.8, 0.2],
    [0.2, 0.8],
]
COUNTED = [0]  # the states B: the query is the number of entries, over all users, in B
USERS = 100  # the number of users n, each with T entries
EPS = 1.0  # the ε of the guarantee: no release moves the odds of θ₁ against θ₂ by more than e^ε
EPS_DP = 0.1  # the per-entry ε_DP the Calibrate page found for its own secrets (for comparison)

first = prior
initial = None if first.stationary_initial else first.initial  # None: each chain starts in its stationary law
second = MarkovChainPrior(ALTERNATIVE, initial, length=first.length, labels=first.labels)
labels = list(first.labels) if first.labels is not None else [str(i) for i in range(first.n_states)]
secrets = PopulationSecrets(((first, second),), names=(("θ₁", "θ₂"),))
scale = population_scale(secrets, COUNTED, [first.length] * USERS)  # W ≥ the exact W∞ of the count's two laws
print(f"W (entries) = {scale.w}")
print(f"Laplace scale W/ε = {fmt(scale.w / EPS)}")
print(f"Mean count under θ₁ = {fmt(scale.means[0])}")
print(f"Mean count under θ₂ = {fmt(scale.means[1])}")
print(f"Largest possible count = {scale.total}")
print(f"Per-entry Laplace scale 1/ε_DP = {fmt(1.0 / EPS_DP if EPS_DP > 0 else float('inf'))}")
print(secrets.sentence(labels, EPS))
