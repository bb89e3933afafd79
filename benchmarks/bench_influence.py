"""Speed of a(b) curves against the live-slider budgets.

Run: python benchmarks/bench_influence.py   — prints a table (median of 7 runs each).
The hard cases (fast-mixing, hundreds of states, long, non-stationary, Θ, MQM) are in
``bench_goals.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timing import print_budget_table  # noqa: E402

from puffer_core import GaussianProcessPrior, MarkovChainPrior, influence_curve  # noqa: E402
from puffer_core.engine.gaussian import R_POINTS  # noqa: E402

RUNS = 7


def sticky(rng: np.random.Generator, k: int, stay: float = 0.7) -> np.ndarray:
    m = rng.random((k, k))
    return m / m.sum(axis=1, keepdims=True) * (1 - stay) + stay * np.eye(k)



def main() -> None:
    rng = np.random.default_rng(2026)
    k5 = sticky(rng, 5)
    k78 = sticky(rng, 78)
    theta = [MarkovChainPrior(sticky(rng, 20), length=201) for _ in range(3)]
    cases = [
        ("K=5, B=100, stationary, length 201", 20,
         lambda: influence_curve(MarkovChainPrior(k5, length=201), max_b=100)),
        ("K=5, B=100, stationary, length 100 (every node truncated)", None,
         lambda: influence_curve(MarkovChainPrior(k5, length=100), max_b=100)),
        ("K=78, B=200, stationary, length 500", 250,
         lambda: influence_curve(MarkovChainPrior(k78, length=500), max_b=200)),
        (f"Gaussian n=100, ℓ=3, every b (r grid {R_POINTS}, certified bounds)", 300,
         lambda: influence_curve(GaussianProcessPrior(100, 3.0))),
        ("Θ of 3 priors, K=20, B=100, length 201", 100,
         lambda: influence_curve(theta, max_b=100)),
        ("K=5, B=50, non-stationary initial, length 100", None,
         lambda: influence_curve(MarkovChainPrior(k5, np.eye(5)[0], length=100), max_b=50)),
    ]
    print_budget_table(cases, RUNS)


if __name__ == "__main__":
    main()
