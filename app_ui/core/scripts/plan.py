"""Pufferfish Lab — Plan & compose, recomputed with puffer_core (docs/math.md §3 calibration, §4 composition).

Prior: binary chain p = 0.9, q = 0.8, T = 100.
It prints the ledger as the page's table shows it (CSV, the page's columns), then the planner's numbers,
one `label = value` per line, as the page prints them, and, when Gaussian releases of one count are planned,
their Rényi rows as the page's Gaussian tab shows them (CSV, after `# renyi`).
Run it anywhere once puffer_core is installed (python -m pip install <the Pufferfish Lab folder>),
or from the Pufferfish Lab repository's folder: python plan.py
"""

import csv
import sys

try:
    from puffer_core import (
        ALL_SECRETS,
        DEFAULT_MECHANISMS,
        Accountant,
        MarkovChainPrior,
        Output,
        calibrate,
        group_dp,
        influence_curve,
        make_mechanism,
        mechanism_spec,
        plan,
    )
    from puffer_core.display import fmt
except ModuleNotFoundError:
    sys.exit(
        "puffer_core was not found: install it (python -m pip install <the Pufferfish Lab folder>),"
        " or run this script from the Pufferfish Lab repository's folder"
    )

# <prior>
p, q = 0.9, 0.8  # chances to stay in state 0 and in state 1
prior = MarkovChainPrior([[p, 1.0 - p], [1.0 - q, q]], length=100)
# </prior>
SECRETS = ALL_SECRETS  # what is secret (docs/math.md §16): every pair of states at every entry
# (release, mechanism, query, ε_puffer): each calibrated through the a(b) curve (docs/math.md §3)
LEDGER = [(month, DEFAULT_MECHANISMS["topk"][0], "topk", 0.5) for month in ("Jan", "Feb", "Mar")]
K = 3  # the k of the top-k rankings
TOTAL = 6.0  # the planner: total budget ε_puffer for the series
RELEASES = 12  # the planner: number of releases

curve = influence_curve(prior, secrets=SECRETS)  # exact a(b) for the secrets (docs/math.md §2, §16)

if LEDGER:
    mechanisms = [make_mechanism(name, eps, curve, [], query=query, k=K) for _, name, query, eps in LEDGER]
    events = [m.accounting for m in mechanisms]
    ledger = Accountant(curve.length).ledger(events)  # [C] Theorem 6.2, naive sum, group DP (docs/math.md §4)
    print("# ledger")
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["release", "total, Thm 6.2", "total, naive", "total, group DP", "ε_DP", "b", "a(b)", "noise"])
    for i, ((release, _, _, _), mechanism, event) in enumerate(zip(LEDGER, mechanisms, events)):
        spec = mechanism_spec(mechanism.name)  # the mechanism's record: its noise, and whether it ranks
        noise = f"{spec.noise.symbol}({mechanism.noise_scale:.3g}) per count"
        if spec.releases is Output.RANKING:
            noise += f", top {mechanism.k}"
        totals = (ledger.eps_puffer[i], ledger.naive_sum[i], ledger.group_dp[i])
        out.writerow([release, *(fmt(float(t)) for t in totals), fmt(event.eps_dp), event.b, fmt(event.a), noise])

planned = plan(curve, TOTAL, RELEASES)  # one common curve point for every release (docs/math.md §4)
group_each = group_dp(curve, TOTAL / RELEASES)
split = calibrate(curve, TOTAL / RELEASES)
print("# planner")
shown = {  # the page's numbers, as it prints them (the objects above hold them in full precision)
    "Per-release ε_DP": fmt(planned.eps_dp),
    "Common window b": str(planned.b),
    "a(b)": fmt(planned.a),
    "vs group DP": f"{planned.eps_dp / group_each.eps_dp:.3g}×",
    "Each release calibrated on its own at E/k would allow ε_DP": fmt(split.eps_dp),
}
for label, value in shown.items():
    print(f"{label} = {value}")
# <gaussian>
# </gaussian>
