"""Gaussian noise under Rényi Pufferfish and the best possible mechanism (docs/math.md §17–§18).

Run: python benchmarks/bench_gaussian_optimal.py [--quick]   — prints, for a count query on three priors
(a sticky two-state chain with T = 100, a near-periodic three-state chain with T = 60, and the built-in
check-ins fitted with fit_markov_chain, counting "Home" over T = 55):

1. σ_GWM against the exact σ* at (α = 2, ε) for ε = 0.5, 1, 2, the variance saved, and the CPU time of σ*;
2. the LP floor (the best possible ε-Pufferfish mechanism's expected absolute error) beside every shipped
   mechanism's exact expected error, as a multiple of the floor, at ε = 0.5, 1, 2, with the CPU time of the
   programme; the Gaussian rows at (α = 2, ε) are a weaker guarantee, shown for information;
3. the optimum run twice: its exact leakage beside 2ε and [C] Theorem 6.2's bound for the a(b) route.

Times are CPU seconds of this process (time.process_time), on a machine shared with other work: the load
average is printed.  ``--quick`` runs ε = 1 only.
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from puffer_core import MarkovChainPrior, load_dataset  # noqa: E402
from puffer_core.engine.influence import influence_curve  # noqa: E402
from puffer_core.mechanisms.gaussian_calibration import calibrate_gaussian_count  # noqa: E402
from puffer_core.optimal.compare import compare_with_floor  # noqa: E402
from puffer_core.optimal.lp import optimal_count_mechanism  # noqa: E402
from puffer_core.optimal.repeat import repeated_leakage  # noqa: E402
from puffer_core.priors.fitting import fit_markov_chain  # noqa: E402


def priors() -> list[tuple[str, MarkovChainPrior, list[int]]]:
    sticky = MarkovChainPrior(np.array([[0.9, 0.1], [0.2, 0.8]]), None, 100)
    cycle = MarkovChainPrior(np.array([[0.05, 0.85, 0.1], [0.1, 0.05, 0.85], [0.85, 0.1, 0.05]]), None, 60)
    checkins = fit_markov_chain(load_dataset("checkins"))
    return [
        ("sticky 2 states, T = 100, count of state 1", sticky, [1]),
        ("near-periodic 3 states, T = 60, count of state 0", cycle, [0]),
        (f"check-ins ({checkins.n_states} states, T = {checkins.length}), count of Home", checkins,
         [checkins.labels.index("Home")]),
    ]


def main(quick: bool = False) -> None:
    grid = (1.0,) if quick else (0.5, 1.0, 2.0)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; α = 2")
    cases = priors()
    print("\n## σ_GWM against the exact σ* (Gaussian noise, (2, ε)-Rényi Pufferfish)\n")
    print("| prior | ε | W∞ | σ_GWM | σ* | variance saved | D_α(σ*) ≤ | CPU s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, prior, states in cases:
        for eps in grid:
            start = time.process_time()
            cal, _ = calibrate_gaussian_count(prior, states, eps, 2.0)
            cpu = time.process_time() - start
            print(f"| {name} | {eps:g} | {cal.w} | {cal.sigma_gwm:.4g} | {cal.sigma:.4g} |"
                  f" {100 * cal.variance_saved:.1f}% | {cal.divergence:.6f} | {cpu:.1f} |")
    print("\n## The best possible ε-Pufferfish mechanism (LP floor) and every mechanism's expected |error|\n")
    for name, prior, states in cases:
        print(f"\n### {name}\n")
        curve = influence_curve(prior)
        rows: dict[str, list[str]] = {}
        floors, times, leaks = [], [], []
        for eps in grid:
            start = time.process_time()
            optimal = optimal_count_mechanism(prior, states, eps)
            times.append(time.process_time() - start)
            comparison = compare_with_floor(prior, eps, states, optimal=optimal)
            floors.append(comparison.floor)
            for row in comparison.rows:
                if not math.isfinite(row.error):
                    text = "—"
                elif row.comparable:
                    text = f"{row.error:.3g} ({comparison.ratio(row.name):.1f}×)"
                else:
                    text = f"{row.error:.3g} (Rényi)"
                rows.setdefault(row.label, []).append(text)
            leaks.append(repeated_leakage(optimal, 2, curve))
        header = " | ".join(f"ε = {e:g}" for e in grid)
        print(f"| mechanism | {header} |")
        print("|---|" + "---:|" * len(grid))
        print("| **LP floor** | " + " | ".join(f"**{f:.3g}**" for f in floors) + " |")
        for label, texts in rows.items():
            print(f"| {label} | " + " | ".join(texts) + " |")
        print("| LP CPU s | " + " | ".join(f"{t:.1f}" for t in times) + " |")
        print("| the optimum run twice: exact leakage | " + " | ".join(f"{r.leakage:.3g}" for r in leaks) + " |")
        print("| 2ε | " + " | ".join(f"{r.k_eps:.3g}" for r in leaks) + " |")
        print("| Theorem 6.2, a(b) route, 2 runs | " + " | ".join(f"{r.theorem_6_2:.3g}" for r in leaks) + " |")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
