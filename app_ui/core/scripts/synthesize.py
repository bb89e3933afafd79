"""Pufferfish Lab — Synthesize, the synthetic sequences released again with puffer_core (docs/math.md §19).

Data: Check-ins, the built-in dataset of puffer_core.
Noise: seed 0: the same noise and the same table as the page (reproducible, not for publishing).
Writes the synthetic table to synthetic.csv (the input's own columns) and prints the privacy event, the notes,
then CSV blocks, each after a "## name" line: the plan (ε_puffer, the window b, a(b), its sensitivity, the
noise scale) and the fidelity scores (real against synthetic, one row per group, everyone first).
Run: python synthesize.py
Run it anywhere once puffer_core is installed (python -m pip install <the Pufferfish Lab folder>), or from the
Pufferfish Lab repository's folder.
"""

import sys

try:
    from puffer_core import ALL_SECRETS, load_dataset, synthesize
except ModuleNotFoundError:
    sys.exit(
        "puffer_core was not found: install it (python -m pip install <the Pufferfish Lab folder>),"
        " or run this script from the Pufferfish Lab repository's folder"
    )

# <data>
data = load_dataset("checkins", user="user")
# </data>
prior = None  # the attacker's belief: the chain fitted on the data's counts (docs/math.md §6)
EPS_PUFFER = 1.0  # the guarantee for every entry of every real user
SECRETS = ALL_SECRETS  # what is secret (docs/math.md §16): every pair of states at every entry
SEED = 0  # the noise's seed (reproducible, not for publishing); None: a real release, OpenDP's noise
BY_GROUP = True  # one chain per group (None: the data have no group column)
METHOD = "projection"  # noisy counts → chain (docs/math.md §19.4)
COLUMNS = {"user": "user", "time": "time", "state": "state", "group": "country"}  # the synthetic table's columns
TOP_K = 3  # fidelity: the top-k states compared
QUERY = "visits"  # fidelity: the downstream query compared
OUT = "synthetic.csv"

# synthetic sequences (docs/math.md §19), streamed to OUT in chunks
result = synthesize(
    data, prior, EPS_PUFFER, secrets=SECRETS, rng=SEED, by_group=BY_GROUP, columns=COLUMNS, method=METHOD, out=OUT
)
event = result.event
print(event.describe())
for note in result.notes:
    print("note:", note.message)
print("## plan")
print("eps_puffer,b,a,window_l1,scale,eps_dp")
print(f"{event.eps_puffer!r},{event.b},{event.a!r},{event.window_l1},{event.scale!r},{event.eps_dp!r}")
print("## scores")  # real against synthetic: one row per group, everyone ("all") first
scores = result.fidelity(top_k=TOP_K, query=QUERY).scores()
print(scores.to_csv(index=False), end="")
