"""Speed and memory of the what-if simulator on the demo check-ins (docs/math.md §3–§7).

Run: python benchmarks/bench_simulation.py   — prints a table (median of 7 runs each).

The target sweep: 6 ε_puffer × 4 mechanisms (the papers' four) × 200 trials × 20 countries,
top-3 per country, prior fitted on the data: ≤ 5 s, ≤ 1 GB.  Memory is the peak of Python
allocations during one sweep (tracemalloc; numpy reports its buffers to it) and the process's
peak resident size (resource.getrusage, includes the interpreter and libraries).
"""

from __future__ import annotations

import resource
import sys
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import median_seconds  # noqa: E402

from puffer_core.data.readers import load_sequences  # noqa: E402
from puffer_core.simulation.run import simulate  # noqa: E402

RUNS = 7
GRID = (0.5, 1.0, 2.0, 3.0, 4.0, 5.0)
PAPER = ("pufferfish_exponential", "mqm", "group_dp_exponential", "group_dp_laplace")



def main() -> None:
    path = ROOT / "assets" / "checkins.csv"
    data = load_sequences(path, group="country")
    windows = dict(releases=5, release_mode="windows")
    cases = [
        ("load_sequences(checkins.csv, group='country')", None, lambda: load_sequences(path, group="country")),
        (
            "sweep: 6 ε × 4 mechanisms × 200 trials × 20 countries (top-3, fit prior)",
            5.0,
            lambda: simulate(data, mechanisms=PAPER, eps_grid=GRID, trials=200, rng=np.random.default_rng(0)),
        ),
        (
            "same sweep from the file (load + simulate)",
            5.0,
            lambda: simulate(
                load_sequences(path, group="country"), mechanisms=PAPER, eps_grid=GRID, trials=200, rng=0
            ),
        ),
        (
            "sweep × 5 time windows (5 releases each)",
            None,
            lambda: simulate(data, mechanisms=PAPER, eps_grid=GRID, trials=200, rng=0, **windows),
        ),
        (
            "histogram sweep: 6 ε × 3 mechanisms × 200 trials",
            None,
            lambda: simulate(data, query="histogram", eps_grid=GRID, trials=200, rng=0),
        ),
        (
            "sweep with 2,000 trials",
            None,
            lambda: simulate(data, mechanisms=PAPER, eps_grid=GRID, trials=2000, rng=0),
        ),
    ]
    print(f"{data!r}")
    print(f"{'case':<78} {'median s':>9} {'target':>8}")
    for label, target, fn in cases:
        seconds = median_seconds(fn, RUNS)
        mark = "" if target is None else f"≤ {target:g} s" + (" ok" if seconds <= target else " SLOW")
        print(f"{label:<78} {seconds:>9.3f} {mark:>8}")

    tracemalloc.start()
    simulate(data, mechanisms=PAPER, eps_grid=GRID, trials=200, rng=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    print(f"{'peak traced allocations during one target sweep (tracemalloc)':<78} {peak / 2**20:>7.1f} MB  ≤ 1 GB")
    print(f"{'peak resident size of this whole benchmark process (getrusage)':<78} {rss:>7.1f} MB  ≤ 1 GB")


if __name__ == "__main__":
    main()
