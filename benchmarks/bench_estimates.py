"""The work estimate against the measured CPU time, per family of priors (docs/math.md §2, §5).

Run: python benchmarks/bench_estimates.py [--sizes 20:100,40:160,80:200] [--seeds 1] [--verbose] [--issue]

For random priors of every family (dense, sticky, sparse, banded, near-periodic, ring, grid,
fitted with unseen transitions; and the slowly mixing ones of issue 34 at ``--slow-sizes``: the issue's
near-periodic P = 0.999·roll(I, 1) + 0.001/K, sticky 0.99 and 0.999, lazy random walks, slow rings),
each started in its stationary law, at a random distribution,
in one state, and as a Θ of three (two of them non-stationary), at every size K:T of
``--sizes``, it runs the a(b) curve and MQM's σ_max (ε = 1), and Gaussian-process curves of
several n and ℓ; TPL of every family (ε = 0.5 per step; no Θ), stream attacks of several K and
T and exact enumerations of every release of the tightness ladder (unless ``--no-streams``).
It prints per family and engine the ratio of the estimated seconds (``WorkEstimate.seconds``,
computed before the work) to the measured CPU seconds (user + sys of this process), min /
median / max, and of the estimated to the performed work units (for the streams' rows: all but
the interpreter's share, which is only estimated).  A last table times the estimates of inputs
they refuse (≤ 1 s each).  The rule: the estimate is never below half the measured
time (min ≥ 0.5), and what it accepts never runs past the work limit (min ≥ 1 keeps that on
the machine it was measured on).

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

from bench_goals import FAMILIES as GOAL_FAMILIES  # noqa: E402

from puffer_core import GaussianProcessPrior, MarkovChainPrior, influence_curve  # noqa: E402
from puffer_core.attacks.attacker import attack_stream, stream_attack_estimate  # noqa: E402
from puffer_core.audit.exact import exact_leakage_estimate  # noqa: E402
from puffer_core.audit.stream import exact_histogram_leakage, exact_stream_estimate, exact_stream_leakage  # noqa: E402
from puffer_core.engine.gaussian import gaussian_estimate  # noqa: E402
from puffer_core.engine.influence import influence_estimate  # noqa: E402
from puffer_core.engine.mqm import mqm_estimate, mqm_noise_scale  # noqa: E402
from puffer_core.mechanisms.laws import RandomizedResponse  # noqa: E402
from puffer_core.stream.tpl import temporal_privacy_leakage, tpl_estimate  # noqa: E402
from puffer_core.tightness.releases import RELEASES  # noqa: E402
from puffer_core.work import WorkCounter, one_blas_thread  # noqa: E402


def _cycle(rng: np.random.Generator, k: int) -> np.ndarray:
    """Issue 34's near-periodic chain: P = 0.999·roll(I, 1) + 0.001/K (no cutoff below ~27,000 steps)."""
    return 0.999 * np.roll(np.eye(k), 1, axis=1) + 0.001 / k


def _stay(stay: float):
    return lambda rng, k: stay * np.eye(k) + (1 - stay) / k


def _lazy(stay: float):
    return lambda rng, k: stay * np.eye(k) + (1 - stay) * rng.dirichlet(np.ones(k), size=k)


def _slow_ring(rng: np.random.Generator, k: int) -> np.ndarray:
    ring = 0.98 * np.eye(k)
    for i in range(k):
        ring[i, (i + 1) % k] += 0.01
        ring[i, (i - 1) % k] += 0.01
    return ring


SLOW = {"slow: near-periodic 0.999": _cycle, "slow: sticky 0.99": _stay(0.99), "slow: sticky 0.999": _stay(0.999),
        "slow: lazy 0.99": _lazy(0.99), "slow: lazy 0.999": _lazy(0.999), "slow: ring 0.01": _slow_ring}
FAMILIES = dict(GOAL_FAMILIES, **SLOW)
# issue 34's table: (label, transition, T), each estimated, then run if accepted
ISSUE = [("near-periodic K=20, T=10⁴", _cycle(None, 20), 10_000),
         ("near-periodic K=40, T=5,000", _cycle(None, 40), 5_000),
         ("near-periodic K=20, T=3,000", _cycle(None, 20), 3_000),
         ("sticky 0.99 K=10, T=10⁴", _stay(0.99)(None, 10), 10_000),
         ("sticky 0.999 K=2, T=10⁵", _stay(0.999)(None, 2), 100_000),
         ("near-periodic K=20, T=10⁵", _cycle(None, 20), 100_000)]
STARTS = ("stationary", "random start", "one state", "Θ of 3")
TPL_STARTS = ("stationary", "random start", "one state")  # TPL's Θ shares one length; its fronts add up per prior
# stream attacks (K, T) with the defaults (200 draws, 4 climbs of up to 20 sweeps), randomized response
ATTACKS = [(3, 50), (5, 400), (20, 500), (50, 200), (100, 100), (10, 2000), (200, 40)]
# exact enumeration: (release, K, T, priors, k); the stream releases and the whole-sequence histograms
EXACT = [("stream_rr", 2, 8, 1, 1), ("stream_rr", 3, 6, 1, 1), ("stream_rr", 4, 6, 1, 1), ("stream_rr", 5, 5, 1, 1),
         ("stream_rr", 8, 3, 2, 1), ("stream_rr", 2, 12, 1, 1), ("stream_histogram", 2, 6, 1, 1),
         ("stream_histogram", 3, 5, 1, 1), ("laplace", 2, 10, 1, 1), ("laplace", 3, 8, 1, 1), ("laplace", 2, 16, 1, 1),
         ("laplace", 4, 5, 1, 1), ("exponential", 4, 6, 1, 2), ("exponential", 5, 5, 1, 1), ("exponential", 3, 9, 1, 1)]
# inputs the estimates refuse: the estimate (and so the refusal) must take ≤ 1 s
REFUSALS = {
    "TPL: K=400 sticky, one state, T=5000": lambda: tpl_estimate(priors_of("sticky", 400, 5000, "one state", 0)),
    "TPL: Θ of 40, K=500 dense": lambda: tpl_estimate(priors_of("dense", 500, 100, "stationary", 0) * 40),
    "attack: K=500, T=40,000": lambda: stream_attack_estimate(500, 40_000),
    "exact stream: K=20, T=10⁵, 2^20 outputs": lambda: exact_stream_estimate(20, 100_000, 2**20),
    "exact histogram: K=50, T=10⁵": lambda: exact_leakage_estimate(50, 100_000, lambda t: float(t + 1) ** 50),
}
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


def measure_stream(engine: str, case: tuple) -> tuple[float, float, float, float, str]:
    """(estimated s, measured CPU s, estimated units, performed units, label) of one TPL, attack or enumeration."""
    work = WorkCounter()
    rng = np.random.default_rng(7)
    if engine == "TPL":
        family, k, length, start = case
        priors = priors_of(family, k, length, start, 0)
        estimate = tpl_estimate(priors)
        run = lambda: temporal_privacy_leakage(priors, 0.5, work=work)  # noqa: E731
        label = f"{start}, K={k}, T={length}"
    elif engine == "attack":
        k, length = case
        prior = MarkovChainPrior(rng.dirichlet(np.ones(k), size=k), length=length)
        estimate = stream_attack_estimate(k, length)
        run = lambda: attack_stream(prior, RandomizedResponse(k, 0.5), seed=0, work=work)  # noqa: E731
        label = f"K={k}, T={length}"
    else:
        release, k, length, count, top = case
        spec = RELEASES[release]
        priors = [MarkovChainPrior(rng.dirichlet(np.ones(k), size=k), rng.dirichlet(np.ones(k)), length=length)
                  for _ in range(count)]
        estimate = spec.exact_estimate(k, length, count, top)
        if spec.stream:
            run = lambda: exact_stream_leakage(priors, spec.laws(k, [0.5] * length), work=work)  # noqa: E731
        else:
            run = lambda: exact_histogram_leakage(priors, 1.0, spec.mechanism, top, work=work)  # noqa: E731
        label = f"{release}, K={k}, T={length}" + (f", {count} priors" if count > 1 else "") + (
            f", k={top}" if top > 1 else "")
    clock = time.process_time()
    run()
    return estimate.seconds, time.process_time() - clock, estimate.total_units - estimate.units.get(
        "overhead", 0.0), work.total, label


def _cell(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20:100,40:160,80:200", help="K:T pairs, comma-separated")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--slow-sizes", default="5:300,20:400", help="K:T pairs for the slowly mixing families")
    parser.add_argument("--issue", action="store_true", help="also issue 34's inputs at full size (minutes)")
    parser.add_argument("--no-gaussian", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="print every case")
    parser.add_argument("--large", action="store_true", help="also the goal rows' chains and larger slow starts")
    parser.add_argument("--no-streams", action="store_true", help="leave out TPL, attacks and exact enumeration")
    args = parser.parse_args()
    sizes = [tuple(int(x) for x in pair.split(":")) for pair in args.sizes.split(",")]
    slow_sizes = [tuple(int(x) for x in pair.split(":")) for pair in args.slow_sizes.split(",")]
    print(f"load before: {os.getloadavg()[0]:.1f} (1-minute average on {os.cpu_count()} CPUs)")
    rows = []
    warm = MarkovChainPrior(FAMILIES["dense"](np.random.default_rng(0), 8), length=30)
    influence_curve(warm)  # compile the kernels before anything is timed
    mqm_noise_scale(warm, 1.0)
    with one_blas_thread():
        for family in args.families.split(","):
            for engine in ("a(b)", "MQM"):
                seconds, units, cases = [], [], []
                for k, length in (slow_sizes if family in SLOW else sizes):
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
        if not args.no_streams:
            stream_rows(args, sizes, rows)
        issue = issue_rows() if args.issue else []
    print()
    print("| family | engine | cases | estimated / measured CPU s (min / median / max) | estimated / performed"
          " units (min / median / max) | lowest ratio at |")
    print("|---|---|---:|---|---|---|")
    for family, engine, seconds, units, worst in rows:
        print(f"| {family} | {engine} | {len(seconds)} | {_cell(seconds)} | {_cell(units)} | {worst} |")
    if not args.no_streams:
        print("\n| input refused by its estimate | estimated | estimate took (CPU s) | largest that fits |")
        print("|---|---|---:|---|")
        for name, make in REFUSALS.items():
            clock = time.process_time()
            estimate = make()
            took = time.process_time() - clock
            print(f"| {name} | {estimate.describe()[:70]}… | {took:.3f} | {dict(estimate.largest)} |")
    if issue:
        print("\n| issue 34's input | estimated | fits | measured CPU s | estimated / measured | estimate CPU s |")
        print("|---|---:|---|---:|---:|---:|")
        for label, est, fits, cpu, took in issue:
            measured = f"{cpu:.2f}" if cpu is not None else "refused"
            ratio = f"{est / max(cpu, 1e-4):.2f}" if cpu is not None else "—"
            print(f"| {label} | {est:.2f} s | {fits} | {measured} | {ratio} | {took:.3f} |")
    every = [r for row in rows for r in row[2]]
    print(f"\nall {len(every)} cases: estimated / measured CPU s min {min(every):.2f}, median"
          f" {statistics.median(every):.2f}, max {max(every):.2f}")
    print(f"load after: {os.getloadavg()[0]:.1f}")


def issue_rows() -> list[tuple[str, float, bool, float | None, float]]:
    """(label, estimated s, fits, measured CPU s or None when refused, CPU s the estimate took) of issue 34's inputs."""
    out = []
    for label, transition, length in ISSUE:
        prior = MarkovChainPrior(transition, length=length)
        clock = time.process_time()
        estimate = influence_estimate(prior)
        took = time.process_time() - clock
        cpu = None
        if estimate.fits:
            clock = time.process_time()
            influence_curve(prior)
            cpu = time.process_time() - clock
        out.append((label, estimate.seconds, estimate.fits, cpu, took))
        outcome = f"measured {cpu:.2f} s" if cpu is not None else "refused"
        print(f"  {label}: estimate {estimate.seconds:.2f} s, {outcome}")
    return out


def stream_rows(args: argparse.Namespace, sizes: list[tuple[int, ...]], rows: list) -> None:
    """Rows for TPL (per family, at the --sizes), stream attacks (:data:`ATTACKS`) and enumeration (:data:`EXACT`)."""
    plans: list[tuple[str, str, list]] = []
    for family in args.families.split(","):
        plans.append((family, "TPL", [(family, k, length, start) for k, length in sizes for start in TPL_STARTS]))
    plans.append(("dense, randomized response", "attack", ATTACKS))
    plans.append(("stream releases", "exact", [c for c in EXACT if RELEASES[c[0]].stream]))
    plans.append(("whole-sequence histograms", "exact", [c for c in EXACT if not RELEASES[c[0]].stream]))
    for family, engine, cases in plans:
        seconds, units, worst = [], [], []
        for case in cases:
            est, cpu, est_units, done, label = measure_stream(engine, case)
            seconds.append(est / max(cpu, 1e-4))
            units.append(est_units / max(done, 1.0))
            worst.append((seconds[-1], label, est, cpu))
            if args.verbose:
                print(f"  {family} {engine} {label}: estimate {est:.3f} s, measured {cpu:.3f} s,"
                      f" ratio {seconds[-1]:.2f}, units {units[-1]:.2f}")
        low = min(worst)
        rows.append((family, engine, seconds, units, f"{low[1]} ({low[2]:.2f} s est. / {low[3]:.2f} s)"))


if __name__ == "__main__":
    main()
