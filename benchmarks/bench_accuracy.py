"""Accuracy first (docs/math.md §13): CPU seconds of the inversions on growing chains, the worst input last.

    python benchmarks/bench_accuracy.py

For each chain: MQM's ε for a noise scale (a bisection on σ_max), the accuracy-first plan for a count
target (three mechanisms) and for a top-k gap (five), the reverse at one ε, and a top-k target at given
counts for sorted Laplace counts (simulated, 20,000 draws).  Sticky chains (stay 0.9) are the slow case
for MQM (large influences, long quilts); a given initial distribution makes every node its own.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from puffer_core import (  # noqa: E402
    CountTarget,
    MarkovChainPrior,
    TopKTarget,
    accuracy_at,
    accuracy_first,
    influence_curve,
    mqm_eps_for_scale,
    mqm_noise_scale,
)
from puffer_core.priors.kinds import sticky_matrix  # noqa: E402


def cpu(work, *args, **kwargs) -> tuple[float, object]:
    start = time.process_time()
    out = work(*args, **kwargs)
    return time.process_time() - start, out


CASES = [(5, 100, False), (12, 55, False), (20, 1000, False), (20, 5000, False), (20, 1000, True), (50, 2000, False)]


def row(k: int, length: int, given: bool) -> str:
    initial = np.eye(k)[0] if given else None
    prior = MarkovChainPrior(sticky_matrix(k, 0.9), initial, length)
    t_curve, curve = cpu(influence_curve, prior)
    sigma = mqm_noise_scale(prior, 1.0)
    t_mqm, _ = cpu(mqm_eps_for_scale, prior, 2 * sigma)
    counts_target = CountTarget(10.0, 0.05, k, "all")
    t_counts, _ = cpu(accuracy_first, counts_target, curve, prior)
    t_gap, _ = cpu(accuracy_first, TopKTarget(3, 0.9, k, gap=20.0), curve, prior)
    t_back, _ = cpu(accuracy_at, 1.0, counts_target, curve, prior)
    counts = tuple(float(c) for c in np.linspace(200, 20, k).round())
    given_target = TopKTarget(3, 0.9, k, counts=counts)
    t_given, _ = cpu(accuracy_first, given_target, curve, prior, mechanisms=["pufferfish_laplace"])
    return (
        f"{k:>3} {length:>5} {'given' if given else 'stationary':>10} {t_curve:>7.2f} {t_mqm:>7.2f}"
        f" {t_counts:>7.2f} {t_gap:>9.2f} {t_back:>8.2f} {t_given:>12.2f}"
    )


def main() -> None:
    print(f"{'K':>3} {'T':>5} {'init':>10} {'curve':>7} {'MQM ε':>7} {'counts':>7} {'top-k gap':>9} {'reverse':>8}"
          f" {'top-k counts':>12}   (CPU seconds)")
    for case in CASES:
        print(row(*case))


if __name__ == "__main__":
    main()
