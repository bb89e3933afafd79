"""The published baselines beside the project's mechanisms (docs/math.md §15).

Run: python benchmarks/bench_baselines.py   — prints

1. Simulate's accuracy per ε_puffer for every registered mechanism on the check-ins demo data and on
   Seattle weather (one sequence per month): Acc@1 of the top-3 query and the L1 error of the histogram,
   200 trials, seed 0; a mechanism that cannot run says why (the Wasserstein mechanism is exact only for
   small chains; the influence-matrix translation gives no guarantee on sticky chains);
2. the noise per count of the Wasserstein mechanism (W/ε), MQM (2σ_max), MQMApprox and group DP (2T/ε)
   on random small chains, and how often each is the smallest — no order between Wasserstein and MQM is
   proven, and both occur.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from puffer_core import MarkovChainPrior, load_dataset, mqm_noise_scale, simulate  # noqa: E402
from puffer_core.mechanisms import MECHANISMS, Refused, mqm_approx_scale, wasserstein_scale  # noqa: E402

EPS = (0.5, 1.0, 2.0, 5.0)


def accuracy() -> None:
    for dataset, user in (("checkins", None), ("seattle-weather", "month")):
        data = load_dataset(dataset, user)
        for query, metric in (("topk", "Acc@1"), ("histogram", "L1")):
            start = time.process_time()
            result = simulate(data, query=query, k=3, mechanisms=list(MECHANISMS) if query == "topk" else [
                n for n, s in MECHANISMS.items() if s.answers("histogram")
            ], eps_grid=EPS, trials=200, rng=0)
            cpu = time.process_time() - start
            table = result.table(metric)
            print(f"\n{dataset} ({data.n_states} states, T = {result.settings['t_max']}), {query}: {metric}"
                  f" ({'higher' if metric != 'L1' else 'lower'} is better), {cpu:.1f} CPU s")
            print(table.to_string(float_format=lambda v: f"{v:.3f}"))
            for reason in result.settings["refused"].values():
                print(f"  not run: {reason}")


def noise_scales(chains: int = 40) -> None:
    rng = np.random.default_rng(7)
    wins = {}
    rows = []
    for i in range(chains):
        k = 2 if i % 2 == 0 else 3
        length = 12 if k == 2 else 6
        matrix = rng.dirichlet(np.full(k, 1.0 if i % 4 < 2 else 0.3), size=k)
        prior = MarkovChainPrior(matrix, None, length)
        for eps in (0.2, 1.0, 5.0):
            scales = {
                "Wasserstein": wasserstein_scale(prior).w / eps,
                "MQM": 2 * mqm_noise_scale(prior, eps),
                "group DP": 2 * length / eps,
            }
            try:
                scales["MQMApprox"] = 2 * mqm_approx_scale(prior, eps)
            except Refused:
                pass
            best = min(scales, key=scales.get)
            wins[(eps, best)] = wins.get((eps, best), 0) + 1
            rows.append((eps, scales["Wasserstein"] < scales["MQM"]))
    print(f"\nnoise per count on {chains} random small chains (K = 2, T = 12 and K = 3, T = 6):")
    for eps in (0.2, 1.0, 5.0):
        counts = ", ".join(f"{name} {n}" for (e, name), n in sorted(wins.items()) if e == eps)
        less = sum(1 for e, w in rows if e == eps and w)
        print(f"  ε = {eps:g}: the smallest — {counts}; Wasserstein < MQM on {less} of {chains} chains")


if __name__ == "__main__":
    accuracy()
    noise_scales()
