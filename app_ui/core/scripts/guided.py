"""Pufferfish Lab — Publish your data, step by step, recomputed with puffer_core (docs/math.md §3, §4, §6, §7).

Data: Check-ins (synthetic, after Foursquare), the built-in dataset of puffer_core.
Prior: the Markov chain fitted on these data (docs/math.md §6, smoothing τ = 1e-05).
It prints every number of the guided path's report, one `label = value` per line, as the path shows them: the data,
the target (ε_DP per entry, the window b, a(b), group DP's ε_DP), the plan (the releases composed by [C]
Theorem 6.2, their naive sum, group DP) and, if the trial was run, its table (CSV, as the path shows it).
Run: python guided.py
Run it anywhere once puffer_core is installed (python -m pip install <the Pufferfish Lab folder>), or from the
Pufferfish Lab repository's folder.
"""

import csv
import sys

try:
    from puffer_core import (
        ALL_SECRETS,
        Accountant,
        CurveEvent,
        calibrate,
        fit_markov_chain,
        group_dp,
        influence_curve,
        load_dataset,
        simulate,
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
SECRETS = ALL_SECRETS  # what is secret (docs/math.md §16): every pair of states at every entry
# <prior>
# the Markov chain fitted on the data (docs/math.md §6): the attacker's belief, and its a(b) curve
prior = fit_markov_chain(data, smoothing=1e-05)
curve = influence_curve(prior, secrets=SECRETS)
# </prior>
EPS = 1.0  # step 3: the target ε_puffer of one release
RELEASES = 12  # step 4: the releases planned
QUERY = "topk"  # step 5: what is published (a top-k list per group, or a histogram)
K = 3  # the k of the top-k list
TRIALS = 100  # step 5: simulated releases
SEED = 0  # the noise's seed
TRIAL = True  # whether the trial was run (its table is printed only then)

TRIAL = True  # whether the trial was run (its table is printed only then)
# the trial's mechanisms: the first curve-calibrated one for the query and its group-DP twin; the plan uses the first
MECHANISMS = ("pufferfish_exponential", "group_dp_exponential")

print(f"users = {data.n_users:,}")
print(f"entries = {data.n_entries:,}")
print(f"states = {data.n_states}")
print(f"T = {curve.length}")

# step 3: the target (docs/math.md §3): the per-entry ε_DP, its window b and a(b), against group DP's ε_DP
each = calibrate(curve, EPS)
print(f"ε_puffer per release = {EPS:g}")
print(f"ε_DP per entry = {fmt(each.eps_dp)}")
print(f"b = {each.b}")
print(f"a(b) = {fmt(each.a)}")
print(f"group DP ε_DP = {fmt(group_dp(curve, EPS).eps_dp)}")

# step 4: the plan: RELEASES such releases composed ([C] Theorem 6.2, docs/math.md §4), the naive sum, group DP
ledger = Accountant(curve.length).ledger([CurveEvent(MECHANISMS[0], each)] * RELEASES)
print(f"releases = {RELEASES}")
print(f"together, Theorem 6.2 = {fmt(float(ledger.eps_puffer[-1]))}")
print(f"together, naive sum = {fmt(float(ledger.naive_sum[-1]))}")
print(f"together, group DP = {fmt(float(ledger.group_dp[-1]))}")

# step 5: the trial run (docs/math.md §7): the release simulated on the data, TRIALS times with seed SEED
if TRIAL:
    result = simulate(
        data, prior=prior, query=QUERY, k=K, mechanisms=list(MECHANISMS), eps_grid=[EPS], trials=TRIALS, rng=SEED,
        secrets=SECRETS,
    )
    metric = f"HitRate@{K}" if QUERY == "topk" else "L1"
    rows = result.metrics[(result.metrics["metric"] == metric) & (result.metrics["release"] == 1)]
    print("## trial")
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["mechanism", "measure", "mean", "95% interval"])
    for label, mean, low, high in zip(rows["label"], rows["mean"], rows["ci_low"], rows["ci_high"]):
        out.writerow([label, metric, fmt(mean, 3), f"{fmt(low, 3)} – {fmt(high, 3)}"])
