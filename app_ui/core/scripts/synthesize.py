"""Pufferfish Lab — Synthesize, the synthetic sequences released again with puffer_core (docs/math.md §19).

Data: Check-ins (synthetic, after Foursquare), the built-in dataset of puffer_core.
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
    from puffer_core import load_dataset, synthesize
except ModuleNotFoundError:
    sys.exit(
        "puffer_core was not found: install it (python -m pip install <the Pufferfish Lab folder>),"
        " or run this script from the Pufferfish Lab repository's folder"
    )

# <data>
data = load_dataset("checkins", user="user")
# </data>
prior = None  # the attacker's belief: the chain fitted on the data's counts (docs/math.md §6)
# <synthesis>
# synthetic sequences (docs/math.md §19); seed 0: the same noise and the same table every time
# (reproducible, not for publishing); streamed to 'synthetic.csv'
result = synthesize(
    data, prior, 1.0, rng=0, guarantee='pufferfish', by_group=True,
    method='projection', min_group_users=2, if_no_signal='refuse', out='synthetic.csv',
)
print(result.event.describe())
for note in result.notes:
    print('note:', note.message)
scores = result.fidelity(top_k=3, query='visits').scores()  # real against synthetic
print(scores.round(4).to_string(index=False))
# </synthesis>

event = result.event
print("## plan")
print("eps_puffer,b,a,window_l1,scale,eps_dp")
print(f"{event.eps_puffer!r},{event.b},{event.a!r},{event.window_l1},{event.scale!r},{event.eps_dp!r}")
print("## scores")
print(scores.to_csv(index=False), end="")
