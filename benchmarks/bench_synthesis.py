"""Fidelity of synthetic sequences on the real Seattle weather and the built-in check-ins (docs/math.md §19.5).

Run: python benchmarks/bench_synthesis.py [--runs 10] [--methods]

Prints a markdown table: for each dataset, ε_puffer = 1 and 5 and each synthesizer — Pufferfish (per-entry noise
through a(b), the window rule of §19.3), group DP (ε_DP = ε_puffer / T_max per entry, the baseline an analyst
would otherwise use) and user-level DP (the whole sequence's L1 sensitivity 2·T_max) — the stationary-distribution
TV distance and the mean dwell-time error (in steps) of the synthetic table against the real one, the transition
matrix error, the noise scale, and whether the noise leaves a signal (a "no signal" release is made anyway here,
to show what it gives).  Means over ``--runs`` seeded releases; "sampling only" is a table drawn from the real
data's own chain without noise (what a first-order chain and sampling cost by themselves).

``--methods`` prints instead the comparison of the ways to turn noisy counts into a chain (docs/math.md §19.4):
projection with shrinkage 0, 1 (the default) and 3 (in units of E|Z|), and clipping with a Dirichlet(1/K) prior.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from puffer_core.data.datasets import load_dataset  # noqa: E402
from puffer_core.synthesis.counts import chain_counts  # noqa: E402
from puffer_core.synthesis.fidelity import fidelity, reference_counts  # noqa: E402
from puffer_core.synthesis.model import fit_synthetic_chain  # noqa: E402
from puffer_core.synthesis.release import release_counts  # noqa: E402
from puffer_core.synthesis.sample import SyntheticSample  # noqa: E402
from puffer_core.synthesis.synthesize import plan_synthesis  # noqa: E402

CASES = [
    ("Seattle weather, one sequence per month, one chain", "seattle-weather", "month", False),
    ("Seattle weather, one sequence per month, by season", "seattle-weather", "month", True),
    ("Check-ins, one chain", "checkins", None, False),
    ("Check-ins, by country", "checkins", None, True),
]
GUARANTEES = {"pufferfish": "Pufferfish", "group_dp": "group DP", "user_dp": "user-level DP"}
METRICS = ["stationary_tv", "dwell_error", "transition_error"]
VARIANTS = [("projection", 0.0), ("projection", 1.0), ("projection", 3.0), ("dirichlet", 0.0)]


def _draw(real, plan, seed: int, method: str = "projection", shrink: float = 1.0):
    rng = np.random.default_rng(seed)
    release = release_counts(real, plan.scale, plan.event, plan.guarantee, rng)
    chain = fit_synthetic_chain(release, method, shrink)
    sample = SyntheticSample(chain, real.length_values, real.length_users, real.columns, int(rng.integers(2**63)))
    return fidelity(real, sample.summary()).scores().iloc[0]


def fidelity_table(runs: int) -> pd.DataFrame:
    rows = []
    for title, name, user, by_group in CASES:
        real = chain_counts(load_dataset(name, user), by_group=by_group)
        reference = pd.concat([fidelity(real, reference_counts(real, seed)).scores().iloc[0][METRICS]
                               for seed in range(runs)], axis=1).mean(axis=1)
        rows.append({"data": title, "ε_puffer": "—", "synthesizer": "sampling only (no noise)", **reference,
                     "noise scale": 0.0, "signal": "—"})
        for eps in (1.0, 5.0):
            for guarantee, label in GUARANTEES.items():
                plan = plan_synthesis(real, None, eps, guarantee=guarantee, if_no_signal="allow", min_group_users=1)
                scores = pd.concat([_draw(real, plan, seed)[METRICS] for seed in range(runs)], axis=1).mean(axis=1)
                signal = "none" if plan.signal.max() >= 1 else ("weak" if plan.signal.max() * real.n_states >= 1
                                                                else "yes")
                rows.append({"data": title, "ε_puffer": eps, "synthesizer": label, **scores,
                             "noise scale": plan.scale, "signal": signal})
    return pd.DataFrame(rows)


def methods_table(runs: int) -> pd.DataFrame:
    rows = []
    for title, name, user, by_group in CASES + [("Activities, by age group", "activities", None, True)]:
        real = chain_counts(load_dataset(name, user), by_group=by_group)
        for eps in (1.0, 5.0):
            plan = plan_synthesis(real, None, eps, if_no_signal="allow", min_group_users=1)
            for method, shrink in VARIANTS:
                scores = pd.concat([_draw(real, plan, seed, method, shrink)[METRICS] for seed in range(runs)],
                                   axis=1).mean(axis=1)
                label = f"projection, shrink {shrink:g}" if method == "projection" else "clip + Dirichlet(1/K)"
                rows.append({"data": title, "ε_puffer": eps, "method": label, **scores})
    return pd.DataFrame(rows)


def markdown(frame: pd.DataFrame) -> str:
    """A markdown table (numbers to 3 decimals), without the optional tabulate package."""
    def cell(value: object) -> str:
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--methods", action="store_true", help="compare the ways to turn noisy counts into a chain")
    args = parser.parse_args(argv)
    start = time.process_time()
    table = methods_table(args.runs) if args.methods else fidelity_table(args.runs)
    renamed = table.rename(columns={"stationary_tv": "stationary TV", "dwell_error": "dwell error (steps)",
                                    "transition_error": "transition error"})
    print(markdown(renamed))
    print(f"\n{args.runs} seeded releases per row; {time.process_time() - start:.0f} CPU-s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
