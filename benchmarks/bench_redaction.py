"""The redaction planner's speed on every family of chains, K = 300, T = 400 (docs/math.md §16).

Run: python benchmarks/bench_redaction.py [--eps 1.0]

For the middle entry of a stationary chain of each family of benchmarks/bench_goals.py, the smallest window to
withhold so that the rest leaks ≤ ε about it, every pair of states secret; then for one sensitive state. Prints
the window, its leakage and the CPU seconds (the machine is shared: CPU time, with the load before and after).
The goal is 0.5 s.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_goals import FAMILIES  # noqa: E402
from puffer_core import MarkovChainPrior  # noqa: E402
from puffer_core.engine.redaction import redaction_plan  # noqa: E402
from puffer_core.secrets import Secrets  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eps", type=float, default=1.0)
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.1f} (1-minute average on {os.cpu_count()} CPUs); ε = {args.eps:g}")
    print("| family (K = 300, T = 400, entry 200) | secrets | window (before + 1 + after) | leakage | CPU (s)"
          " | ≤ 0.5 s |")
    print("|---|---|---|---:|---:|---|")
    for kind, build in FAMILIES.items():
        k = 289 if kind == "grid" else 300  # the grid needs a square
        prior = MarkovChainPrior(build(np.random.default_rng(78), k), None, 400)
        redaction_plan(prior, 10, args.eps, max_size=2)  # compile the kernel outside the timing
        for label, secrets in (("every pair", None), ("state 0 vs the rest", Secrets(pairs="sensitive", states=(0,)))):
            start = time.process_time()
            plan = redaction_plan(prior, 199, args.eps, secrets)
            seconds = time.process_time() - start
            window = f"{plan.before} + 1 + {plan.after} = {plan.size}"
            print(f"| {kind}{' (K = 289)' if k != 300 else ''} | {label} | {window} | {plan.leakage:.4g}"
                  f" | {seconds:.2f} | {'yes' if seconds <= 0.5 else 'NO'} |")
            sys.stdout.flush()
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
