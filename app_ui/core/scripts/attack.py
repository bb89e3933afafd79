"""Pufferfish Lab — How tight is my bound?, the attacks rerun with puffer_core and their seed (docs/math.md §11).

Release: randomized response at each step, ε = 1, seed 0.
Prints one line per prior: `row <i> lower=<float|none> exact=<float|none> <bound>=<float|none> …  # <prior>`,
the attack's lower bound, the exact leakage and the reported bounds (none: the page shows no value there).
Run it anywhere once puffer_core is installed (python -m pip install <the Pufferfish Lab folder>),
or from the Pufferfish Lab repository's folder: python attack.py
"""

import sys

try:
    from puffer_core import MarkovChainPrior
    from puffer_core.priors.kinds import sticky_matrix
    from puffer_core.tightness import ladder_row
except ModuleNotFoundError:
    sys.exit(
        "puffer_core was not found: install it (python -m pip install <the Pufferfish Lab folder>),"
        " or run this script from the Pufferfish Lab repository's folder"
    )

# <prior>
# </prior>
RELEASE = "stream_rr"  # the release attacked (a key of puffer_core.tightness.releases.RELEASES)
EPS = 1.0
K = 3  # the exponential mechanism's top-k
SEED = 0
DRAWS = 200
PRIORS = [  # (name, prior, what is secret: None for every pair of values at every entry, docs/math.md §16)
    ("binary, T = 6", MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=6), None),
    ("3 states, T = 4", MarkovChainPrior(sticky_matrix(3, 0.8), length=4), None),
]


def show(value):
    return "none" if value is None else repr(float(value))


# the ladder attacks and enumerates within the budgets of puffer_core.tightness.releases, as the page does
for i, (name, prior, secrets) in enumerate(PRIORS):
    row = ladder_row(prior, RELEASE, EPS, k=K, seed=SEED, draws=DRAWS, secrets=secrets)
    bounds = " ".join(f"{bound}={show(value)}" for bound, value in row.bounds)
    print(f"row {i} lower={show(row.lower)} exact={show(row.exact)} {bounds}  # {name}")
