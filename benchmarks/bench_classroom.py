"""Speed of the classroom checker on the sizes the app allows (not a timed test).

Run: python benchmarks/bench_classroom.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from puffer_core.classroom import (  # noqa: E402
    check,
    composability,
    counting_model,
    example_2,
    expected_runs_to_reveal,
    hedging_counting_mechanism,
    model_from_chain,
    simulate_runs_to_reveal,
)
from puffer_core.priors.models import MarkovChainPrior  # noqa: E402


def _noisy_count(seq: np.ndarray) -> np.ndarray:
    w = np.exp(-0.5 * np.abs(np.arange(len(seq) + 1) - int(np.count_nonzero(seq))))
    return w / w.sum()


def _timed(label: str, fn) -> None:
    start = time.perf_counter()
    value = fn()
    print(f"{label:<55s} {time.perf_counter() - start:8.3f} s   -> {value}")


def main() -> None:
    chain = MarkovChainPrior([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]], length=6)
    model = model_from_chain(chain, _noisy_count)
    for k in (1, 2, 3):
        _timed(f"check: 3-state chain, T = 6 (729 sequences), {k} releases", lambda k=k: check(model, k).eps)
    _timed("composability: same model (7 distinct output rows)", lambda: composability(model).eps)
    rng = np.random.default_rng(0)
    table = {}
    small = MarkovChainPrior(chain.transition, length=4)
    distinct = model_from_chain(small, lambda s: table.setdefault(tuple(s), rng.dirichlet(np.ones(10))))
    _timed("composability: T = 4, 81 distinct rows, 10 outputs", lambda: composability(distinct).eps)
    ex2 = example_2(10)
    _timed("check: Example 2, n = 10, 2 releases", lambda: check(ex2, 2).eps)
    truth = (1, 0) * 5
    _timed(
        "expected_runs_to_reveal: Example 2, n = 10", lambda: expected_runs_to_reveal(ex2, truth, "dataset")
    )
    _timed(
        "simulate_runs_to_reveal: Example 2, n = 10, 10,000 trials",
        lambda: simulate_runs_to_reveal(ex2, truth, np.random.default_rng(0), 10_000, "dataset").mean,
    )
    hedge = hedging_counting_mechanism(0.3, 400, 2.0, 0.01)
    _timed("check: Algorithm 3, n = 400, 21 attacker priors", lambda: check(counting_model(hedge)).eps)


if __name__ == "__main__":
    main()
