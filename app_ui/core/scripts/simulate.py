"""Pufferfish Lab — Simulate, recomputed with puffer_core (docs/math.md §4–§7).

Data: Check-ins (synthetic, after Foursquare), the built-in dataset of puffer_core.
Prior: the Markov chain fitted on these data (docs/math.md §6, smoothing τ = 1e-05).
Prints CSV blocks, each after a "## name" line: the metrics (mean and 95% interval per mechanism,
ε_puffer, release and metric), the privacy ledger, and the best mechanism per ε_puffer for
the metric and release the page showed.  The same seed gives the same numbers as the page.
Run: python simulate.py
Run it anywhere once puffer_core is installed (python -m pip install <the Pufferfish Lab folder>), or from the
Pufferfish Lab repository's folder.
"""

import sys

try:
    from puffer_core import (
        explain_simulation,
        fit_markov_chain,
        group_dp_twins,
        load_dataset,
        simulate,
        transition_counts,
    )
    from puffer_core.display import fmt
except ModuleNotFoundError:
    sys.exit(
        "puffer_core was not found: install it (python -m pip install <the Pufferfish Lab folder>),"
        " or run this script from the Pufferfish Lab repository's folder"
    )

# <data>
data = load_dataset("checkins", user="user")
# </data>
# <prior>
# the Markov chain fitted on the data (docs/math.md §6)
prior = fit_markov_chain(data, smoothing=1e-05)
# </prior>
SETTINGS = dict(
    query="topk",
    k=3,
    mechanisms=list(next(iter(group_dp_twins().items()))),  # a Pufferfish mechanism and its group-DP twin
    eps_grid=[0.5, 1.0, 2.0],
    releases=1,
    release_mode="repeat",
    trials=200,
    rng=0,
    topk_laplace="split",
)
METRIC = "Acc@1"  # the metric and the release of the page's "best mechanism" table
RELEASE = 1
COMPARE = False  # a robust set Θ: also the same simulation with the fitted prior alone, to see what Θ changed
SMOOTHING = 1e-05  # the fit's smoothing τ: the explanation names the unseen transitions it raised (docs/math.md §6)

result = simulate(data, prior=prior, **SETTINGS)

print("## metrics")
print(result.metrics.to_csv(index=False), end="")
print("## ledger")
print(result.ledger.to_csv(index=False), end="")
print("## best")
explanation = explain_simulation(
    result, metric=METRIC, release=RELEASE, prior=prior, counts=transition_counts(data), smoothing=SMOOTHING
)
print(explanation.winners_frame().to_csv(index=False), end="")
# the page's table, as the page prints it
table = result.table(METRIC, RELEASE).reset_index().rename(columns={"eps_puffer": "ε_puffer"})
print(f"## {METRIC} by ε_puffer and mechanism (release {RELEASE})")
print(table.map(lambda v: fmt(v) if isinstance(v, float) else v).to_csv(index=False), end="")
if COMPARE:
    fitted = simulate(data, prior=prior[0], **SETTINGS)
    print("## metrics with the fitted prior only")
    print(fitted.metrics.to_csv(index=False), end="")
