"""Pufferfish Lab — Calibrate, recomputed with puffer_core (docs/math.md §3).

Prior: binary chain p = 0.9, q = 0.8, T = 100.
It prints the numbers the page shows, one `label = value` per line, as the page prints them.
Run it anywhere once puffer_core is installed (python -m pip install <the Pufferfish Lab folder>),
or from the Pufferfish Lab repository's folder: python calibrate.py
"""

import sys

try:
    from puffer_core import (
        ALL_SECRETS,
        MarkovChainPrior,
        calibrate,
        certify,
        group_dp,
        group_dp_cumulative,
        influence_curve,
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
EPS_PUFFER = 1.0  # the Pufferfish guarantee wanted
EPS_DP = 0.1  # the per-entry ε_DP of a mechanism to certify

curve = influence_curve(prior, secrets=SECRETS)  # exact a(b), b = 1..T (docs/math.md §2, §16)
cal = calibrate(curve, EPS_PUFFER)  # ε_puffer → the largest per-entry ε_DP
group = group_dp(curve, EPS_PUFFER)  # group DP over the whole sequence: ε_puffer / T
cert = certify(curve, EPS_DP)  # ε_DP → the smallest guaranteed ε_puffer
group_eps = float(group_dp_cumulative(curve.length, [EPS_DP])[-1])  # T·ε_DP

shown = {  # the page's numbers, as it prints them (the objects above hold them in full precision)
    "Optimal window b*": str(cal.b),
    "a(b*)": fmt(cal.a),
    "Per-entry ε_DP": fmt(cal.eps_dp),
    "Budget per release vs group DP": f"{cal.eps_dp / group.eps_dp:.3g}×",
    "Guaranteed ε_puffer": fmt(cert.eps_puffer),
    "At window b": str(cert.b),
    "a(b)": fmt(cert.a),
    "Group DP would say": fmt(group_eps),
}
for label, value in shown.items():
    print(f"{label} = {value}")
# <accuracy>
# </accuracy>
# <gaussian>
# </gaussian>
