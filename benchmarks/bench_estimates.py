"""The work estimate against the measured CPU time, per family of priors (docs/math.md §2, §5).

Run: python benchmarks/bench_estimates.py [--sizes 20:100,40:160,80:200] [--seeds 1] [--verbose]

For random priors of every family (dense, sticky, sparse, banded, near-periodic, ring, grid,
fitted with unseen transitions), each started in its stationary law, at a random distribution,
in one state, and as a Θ of three (two of them non-stationary), at every size K:T of
``--sizes``, it runs the a(b) curve and MQM's σ_max (ε = 1), and Gaussian-process curves of
several n and ℓ, and prints per family and engine the ratio of the estimated seconds
(``WorkEstimate.seconds``, computed before the work) to the measured CPU seconds (user + sys
of this process), min / median / max, and of the estimated to the performed work units.  The
rule: the estimate is never below half the measured time (min ≥ 0.5), and what it
accepts never runs past the work limit (min ≥ 1 keeps that on the machine it was measured on).

The machine's load (1-minute average) is printed before and after: on a busy machine the CPU
time of the same work grows (shared caches and cores), so the ratios there are lower than on
a quiet one.  Takes about 3 minutes with the defaults.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_goals import FAMILIES  # noqa: E402

from puffer_core import GaussianProcessPrior, MarkovChainPrior, influence_curve  # noqa: E402
from puffer_core.engine.gaussian import gaussian_estimate  # noqa: E402
from puffer_core.engine.influence import influence_estimate  # noqa: E402
from puffer_core.engine.mqm import mqm_estimate, mqm_noise_scale  # noqa: E402
from puffer_core.work import WorkCounter, one_blas_thread  # noqa: E402

STARTS = ("stationary", "random start", "one state", "Θ of 3")
GAUSSIAN = [(n, ell) for n in (101, 400, 1000, 1600) for ell in (1.0, 3.0, 12.0)]
# --large: the goal rows' chains and the slowest start at a larger size (several minutes more)
LARGE = [("fitted", 300, 400, "stationary"), ("ring", 150, 400, "stationary"), ("grid", 225, 500, "stationary"),
         ("fitted", 128, 300, "one state"), ("near-periodic", 120, 300, "random start")]  # each estimated ≤ 120 s


def _square(k: int) -> int:
    return max(4, int(round(k**0.5)) ** 2)


def priors_of(family: str, k: int, length: int, start: str, seed: int) -> list[MarkovChainPrior]:
    """The priors of one case (one prior, or Θ: a stationary member and two started at random)."""
    rng = np.random.default_rng(seed)
    k = _square(k) if family == "grid" else k
    if start == "Θ of 3":
        return [MarkovChainPrior(FAMILIES[family](rng, k), None if i == 0 else rng.dirichlet(np.ones(k)),
                                 length=length - 13 * i) for i in range(3)]
    initial = {"stationary": None, "one state": np.eye(k)[0]}.get(start, rng.dirichlet(np.ones(k)))
    return [MarkovChainPrior(FAMILIES[family](rng, k), initial, length=length)]


def measure(engine: str, priors: object) -> tuple[float, float, float, float]:
    """(estimated seconds, measured CPU seconds, estimated units, performed units) of one computation."""
    work = WorkCounter()
    if engine == "a(b)":
        estimate = influence_estimate(priors)
        run = lambda: influence_curve(priors, work=work)  # noqa: E731
    elif engine == "MQM":
        estimate = mqm_estimate(priors, 1.0)
        run = lambda: mqm_noise_scale(priors, 1.0, work=work)  # noqa: E731
    else:
        estimate = gaussian_estimate(priors)
        run = lambda: influence_curve(priors, work=work)  # noqa: E731
    clock = time.process_time()
    run()
    return estimate.seconds, time.process_time() - clock, estimate.total_units, work.total


def _cell(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20:100,40:160,80:200", help="K:T pairs, comma-separated")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--no-gaussian", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="print every case")
    parser.add_argument("--large", action="store_true", help="also the goal rows' chains and larger slow starts")
    args = parser.parse_args()
    sizes = [tuple(int(x) for x in pair.split(":")) for pair in args.sizes.split(",")]
    print(f"load before: {os.getloadavg()[0]:.1f} (1-minute average on {os.cpu_count()} CPUs)")
    rows = []
    warm = MarkovChainPrior(FAMILIES["dense"](np.random.default_rng(0), 8), length=30)
    influence_curve(warm)  # compile the kernels before anything is timed
    mqm_noise_scale(warm, 1.0)
    with one_blas_thread():
        for family in args.families.split(","):
            for engine in ("a(b)", "MQM"):
                seconds, units, cases = [], [], []
                for k, length in sizes:
                    for start in STARTS:
                        for seed in range(args.seeds):
                            priors = priors_of(family, k, length, start, seed)
                            est, cpu, est_units, done = measure(engine, priors)
                            ratio = est / max(cpu, 1e-4)
                            seconds.append(ratio)
                            units.append(est_units / max(done, 1.0))
                            cases.append((ratio, f"{start}, K={priors[0].n_states}, T={length}", est, cpu))
                            if args.verbose:
                                print(f"  {family} {engine} {start} K={priors[0].n_states} T={length}:"
                                      f" estimate {est:.3f} s, measured {cpu:.3f} s, ratio {ratio:.2f}")
                worst = min(cases)
                rows.append((family, engine, seconds, units, f"{worst[1]} ({worst[2]:.2f} s est. / {worst[3]:.2f} s)"))
        if args.large:
            seconds, units, cases = [], [], []
            for family, k, length, start in LARGE:
                priors = priors_of(family, k, length, start, 0)
                est, cpu, est_units, done = measure("a(b)", priors)
                seconds.append(est / max(cpu, 1e-4))
                units.append(est_units / max(done, 1.0))
                cases.append((seconds[-1], f"{family} {start} K={k} T={length}", est, cpu))
                print(f"  {family} {start} K={k} T={length}: estimate {est:.2f} s, measured {cpu:.2f} s,"
                      f" ratio {seconds[-1]:.2f}")
            worst = min(cases)
            rows.append(("large (goal rows, slow starts)", "a(b)", seconds, units,
                         f"{worst[1]} ({worst[2]:.2f} s est. / {worst[3]:.2f} s)"))
        if not args.no_gaussian:
            seconds, units, cases = [], [], []
            for n, ell in GAUSSIAN:
                prior = GaussianProcessPrior(n, ell)
                est, cpu, est_units, done = measure("gaussian", prior)
                seconds.append(est / max(cpu, 1e-4))
                units.append(est_units / max(done, 1.0))
                cases.append((seconds[-1], f"n={n}, ℓ={ell:g}", est, cpu))
                if args.verbose:
                    print(f"  Gaussian n={n} ℓ={ell:g}: estimate {est:.3f} s, measured {cpu:.3f} s")
            worst = min(cases)
            rows.append(("Gaussian process", "a(b)", seconds, units,
                         f"{worst[1]} ({worst[2]:.2f} s est. / {worst[3]:.2f} s)"))
    print()
    print("| family | engine | cases | estimated / measured CPU s (min / median / max) | estimated / performed"
          " units (min / median / max) | lowest ratio at |")
    print("|---|---|---:|---|---|---|")
    for family, engine, seconds, units, worst in rows:
        print(f"| {family} | {engine} | {len(seconds)} | {_cell(seconds)} | {_cell(units)} | {worst} |")
    every = [r for row in rows for r in row[2]]
    print(f"\nall {len(every)} cases: estimated / measured CPU s min {min(every):.2f}, median"
          f" {statistics.median(every):.2f}, max {max(every):.2f}")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
