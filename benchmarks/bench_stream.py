"""Speed of temporal privacy leakage and of the attacker (docs/math.md §10–§11).

Run: python benchmarks/bench_stream.py   — prints a table (median of 3 runs each, after a warm-up).

Targets: TPL (BPL, FPL and TPL at every step, both leakage fronts built from scratch) at K = 200
states, T = 1,000 steps in ≤ 1 s; the stream attack at K = 20, T = 500 (no budget, reported).
Chains (seeded): "fitted-like" = 0.35 self-transition + Dirichlet(0.3) jumps, as the demo
check-ins; "dirichlet" = rows Dirichlet(1); "sticky 0.9" = 0.9 self-transition (slow mixing,
so a non-stationary start needs many exact backward steps).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import print_budget_table  # noqa: E402

from puffer_core.attacks.attacker import attack_histogram, attack_stream  # noqa: E402
from puffer_core.audit.stream import exact_stream_leakage  # noqa: E402
from puffer_core.mechanisms.laws import laplace_histogram_emission, randomized_response_emission  # noqa: E402
from puffer_core.priors.kinds import sticky_matrix  # noqa: E402
from puffer_core.priors.models import MarkovChainPrior  # noqa: E402
from puffer_core.stream.fronts import leakage_function  # noqa: E402
from puffer_core.stream.supremum import max_eps_for_tpl, tpl_supremum  # noqa: E402
from puffer_core.stream.tpl import temporal_privacy_leakage, tpl_refusal  # noqa: E402

RUNS = 3


def chain(kind: str, k: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "fitted-like":
        m = 0.35 * np.eye(k) + 0.65 * rng.dirichlet(np.full(k, 0.3), size=k)
    elif kind == "dirichlet":
        m = rng.dirichlet(np.ones(k), size=k)
    else:
        m = 0.9 * np.eye(k) + 0.1 * rng.dirichlet(np.ones(k), size=k)
    return m / m.sum(axis=1, keepdims=True)


def main() -> None:
    rng = np.random.default_rng(200)
    cases = []
    for kind in ("fitted-like", "dirichlet", "sticky 0.9"):
        transition = chain(kind, 200, rng)
        prior = MarkovChainPrior(transition, None, 1000)
        schedule = rng.uniform(0.05, 1.0, size=1000)
        name = f"TPL K=200, T=1000, {kind}"
        cases.append((f"{name}, ε = 0.5", 1000.0, lambda p=prior: temporal_privacy_leakage(p, 0.5)))
        cases.append((f"{name}, varying ε_t", 1000.0, lambda p=prior, s=schedule: temporal_privacy_leakage(p, s)))
        cases.append((f"sup TPL K=200, {kind}, ε = 0.5", None, lambda p=prior: tpl_supremum(p, 0.5)))
    fitted = MarkovChainPrior(chain("fitted-like", 200, np.random.default_rng(1)), None, 1000)
    start = np.random.default_rng(2).dirichlet(np.ones(200))
    cases.append(
        (
            "TPL K=200, T=1000, fitted-like, non-stationary start",
            None,
            lambda: temporal_privacy_leakage(MarkovChainPrior(fitted.transition, start, 1000), 0.5),
        )
    )
    sticky = MarkovChainPrior(chain("sticky 0.9", 50, np.random.default_rng(3)), np.eye(50)[0], 1000)
    cases.append(
        ("TPL K=50, T=1000, sticky 0.9, non-stationary start", None, lambda: temporal_privacy_leakage(sticky, 0.5))
    )
    cases.append(("largest ε for TPL ≤ 2, K=200, T=1000", None, lambda: max_eps_for_tpl(fitted, 2.0)))
    cases.append(("L(α; Q) once, K=200", None, lambda: leakage_function(fitted.transition, 0.7)))
    p20 = MarkovChainPrior(chain("fitted-like", 20, np.random.default_rng(4)), None, 500)
    cases.append(
        (
            "attack, stream of randomized response, K=20, T=500 (200 draws, 4 climbs)",
            None,
            lambda: attack_stream(p20, randomized_response_emission(20, 0.5), seed=0),
        )
    )
    p5 = MarkovChainPrior(chain("fitted-like", 5, np.random.default_rng(5)), None, 100)
    cases.append(
        (
            "attack, stream of noisy histograms, K=5, T=100",
            None,
            lambda: attack_stream(p5, laplace_histogram_emission(5, 0.5), seed=0),
        )
    )
    p3 = MarkovChainPrior(chain("fitted-like", 3, np.random.default_rng(6)), None, 100)
    cases.append(
        ("attack, histogram + Laplace, K=3, T=100 (6 entries)", None, lambda: attack_histogram(p3, 0.5, seed=0))
    )
    tiny = MarkovChainPrior(chain("dirichlet", 3, np.random.default_rng(7)), None, 6)
    cases.append(
        ("exact stream audit, randomized response, K=3, T=6", None,
         lambda: exact_stream_leakage(tiny, randomized_response_emission(3, 0.5)))
    )
    print_budget_table(cases, runs=RUNS)

    # the worst case: many states mixing slowly from a non-stationary start needs a front per step
    slow = MarkovChainPrior(sticky_matrix(200, 0.99), np.eye(200)[0], 1000)
    started = time.perf_counter()
    message = tpl_refusal(slow)
    took = (time.perf_counter() - started) * 1000
    print()
    print("| case | answer | time to answer (ms) |")
    print("|---|---|---:|")
    print(f"| TPL K=200, T=1000, sticky 0.99, non-stationary start | {message or 'within reach'} | {took:.1f} |")
    long = MarkovChainPrior(sticky_matrix(200, 0.9), None, 20_000)
    started = time.perf_counter()
    try:
        attack_stream(long, randomized_response_emission(200, 0.5), seed=0)
        answer = "ran"
    except ValueError as exc:
        answer = str(exc)
    took = (time.perf_counter() - started) * 1000
    print(f"| attack, stream of randomized response, K=200, T=20000 | {answer} | {took:.1f} |")


if __name__ == "__main__":
    main()
