"""Pufferfish Lab — Streams, recomputed with puffer_core (docs/math.md §10).

Stream: binary chain p = 0.9, q = 0.8, T = 100, ε = 0.3 per step.
Prints one `name value` line per number: `bound_<name>` for every registered bound, `exact`, `sup_tpl`,
`divergence_eps`, `plan_<name>`; then `t eps bpl fpl <bound names> exact` and one line per time step t = 1..T.
Run it anywhere once puffer_core is installed (python -m pip install <the Pufferfish Lab folder>),
or from the Pufferfish Lab repository's folder: python stream.py
"""

import math
import sys

try:
    from puffer_core import ALL_SECRETS, MarkovChainPrior, influence_curve
    from puffer_core.stream.registry import bound_table, plan_table, stream_setting
    from puffer_core.stream.supremum import tpl_divergence_threshold, tpl_supremum
    from puffer_core.tightness.releases import RELEASES
except ModuleNotFoundError:
    sys.exit(
        "puffer_core was not found: install it (python -m pip install <the Pufferfish Lab folder>),"
        " or run this script from the Pufferfish Lab repository's folder"
    )

# <prior>
p, q = 0.9, 0.8  # chances to stay in state 0 and in state 1
prior = MarkovChainPrior([[p, 1.0 - p], [1.0 - q, q]], length=100)
# </prior>
SEGMENTS = [(1, 100, 0.3)]  # (first step, last step, ε per step)
RELEASE = next(iter(RELEASES))  # the release at each step, for the exact leakage
EXACT = False  # the page enumerates every sequence only for tiny chains
TARGET = 2.0  # the planner's target ε
UNBOUNDED = False
BACKWARD = None  # P^B the attacker knows (None: the prior's own)
FORWARD = None  # P^F the attacker knows (None: the prior's own)
SECRETS = ALL_SECRETS  # what is secret (docs/math.md §16): every pair of states at every entry

curve = influence_curve(prior, secrets=SECRETS)  # the a(b) curve for the secrets (docs/math.md §2, §16)
length = curve.length
eps = [0.0] * length
for first, last, value in SEGMENTS:
    eps[first - 1 : last] = [value] * (last - first + 1)

setting = stream_setting(prior, curve, BACKWARD, FORWARD, secrets=SECRETS)
bounds = bound_table(setting, eps)  # every registered bound per step (docs/math.md §10)
nan = [math.nan] * length
for name, values in bounds.items():
    print(f"bound_{name}", repr(values.max) if values.values is not None else "nan")
tpl = bounds["tpl"]
bpl = list(tpl.detail.bpl) if tpl.values is not None else nan
fpl = list(tpl.detail.fpl) if tpl.values is not None else nan
exact = nan
if EXACT:
    audit = RELEASES[RELEASE].exact_stream(setting.chains, eps, SECRETS)
    exact = list(audit.per_entry)
    print("exact", repr(audit.eps))
if setting.chains is not None and tpl.values is not None and len(set(eps)) == 1:
    if all(p.stationary_initial for p in setting.chains):  # constant ε: the unbounded stream's supremum
        directions = {"backward": BACKWARD, "forward": FORWARD}
        print("sup_tpl", repr(float(tpl_supremum(prior, eps[0], **directions, secrets=SECRETS))))
        print("divergence_eps", repr(float(tpl_divergence_threshold(prior, **directions).eps)))
for name, value in plan_table(setting, TARGET, UNBOUNDED).items():
    print(f"plan_{name}", repr(value))
print("t eps bpl fpl", " ".join(bounds), "exact")
for t in range(length):
    per_step = [v.values[t] if v.values is not None else math.nan for v in bounds.values()]
    row = (eps[t], bpl[t], fpl[t], *per_step, exact[t])
    print(t + 1, " ".join(repr(float(v)) for v in row))
