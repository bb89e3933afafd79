"""The work estimate against the work done and the time taken, per family of priors (docs/math.md §2, §5).

Run: python benchmarks/bench_estimates.py [--k 60] [--length 200]

For random priors of every family (dense, sparse, sticky, near-periodic, ring, grid, fitted with
unseen transitions; stationary and started away from π; Θ) it prints, per family, the ratio of
estimated to performed work units and of estimated to measured CPU seconds (min / median / max).
The estimate must never be below the performed units, and never below half the measured time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_goals import FAMILIES  # noqa: E402

from puffer_core import MarkovChainPrior, influence_curve  # noqa: E402
from puffer_core.engine.influence import influence_estimate  # noqa: E402
from puffer_core.engine.mqm import mqm_estimate, mqm_noise_scale  # noqa: E402
from puffer_core.work import WorkCounter  # noqa: E402


def _priors(rng: np.random.Generator, family: str, k: int, length: int, start: str) -> list[MarkovChainPrior]:
    kind = "grid" if family == "grid" else family
    kk = int(round(k**0.5)) ** 2 if kind == "grid" else k
    transition = FAMILIES[kind](rng, kk)
    if start == "theta":
        return [MarkovChainPrior(FAMILIES[kind](rng, kk), None if i % 2 else rng.dirichlet(np.ones(kk)),
                                 length=length - 7 * i) for i in range(3)]
    initial = None if start == "stationary" else np.eye(kk)[0] if start == "one state" else rng.dirichlet(np.ones(kk))
    return [MarkovChainPrior(transition, initial, length=length)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--length", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for family in FAMILIES:
        for start in ("stationary", "random start", "one state", "theta"):
            for engine in ("a(b)", "MQM"):
                units, seconds = [], []
                for seed in range(args.seeds):
                    rng = np.random.default_rng(seed)
                    try:
                        priors = _priors(rng, family, args.k, args.length, start)
                    except ValueError:
                        continue
                    work = WorkCounter()
                    clock = time.process_time()
                    if engine == "a(b)":
                        estimate = influence_estimate(priors)
                        influence_curve(priors, work=work)
                    else:
                        estimate = mqm_estimate(priors, 1.0)
                        mqm_noise_scale(priors, 1.0, work=work)
                    spent = time.process_time() - clock
                    units.append(estimate.total_units / max(work.total, 1.0))
                    seconds.append(estimate.seconds / max(spent, 1e-3))
                if units:
                    rows.append((family, start, engine, units, seconds))
    print("| family | start | engine | est./performed units (min / median / max) | est./measured CPU s"
          " (min / median / max) |")
    print("|---|---|---|---|---|")
    for family, start, engine, units, seconds in rows:
        u = f"{min(units):.2f} / {statistics.median(units):.2f} / {max(units):.2f}"
        s = f"{min(seconds):.2f} / {statistics.median(seconds):.2f} / {max(seconds):.2f}"
        print(f"| {family} | {start} | {engine} | {u} | {s} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
