"""Speed of robust priors from data (docs/math.md §12): Θ = fit + M posterior draws at K = 20, T = 200, M = 50.

Run: python benchmarks/bench_robust.py   — prints a table per dataset (median of 3 runs each).

Two datasets from one sticky 20-state chain, 200 entries per user: "dense" (200 users, every
row seen hundreds of times) and "sparse" (5 users: many transitions never seen, so the draws
of those entries vary most).  The goal for the robust curve is 2 s.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timing import median_seconds, print_budget_table  # noqa: E402

from puffer_core import fit_prior_set, influence_curve, load_sequences, prior_spread, row_sensitivity  # noqa: E402

RUNS = 3
K, T, M = 20, 200, 50


def chain_data(rng: np.random.Generator, users: int, stay: float = 0.6) -> object:
    jump = rng.dirichlet(np.full(K, 0.3), size=K)
    transition = stay * np.eye(K) + (1 - stay) * jump
    cumulative = np.cumsum(transition, axis=1)
    states = np.empty((users, T), dtype=np.int64)
    states[:, 0] = rng.integers(0, K, users)
    for t in range(1, T):
        moved = (rng.random((users, 1)) > cumulative[states[:, t - 1]]).sum(axis=1)
        states[:, t] = np.minimum(moved, K - 1)
    frame = pd.DataFrame(
        {"user": np.repeat(np.arange(users), T), "time": np.tile(np.arange(T), users), "state": states.ravel()}
    )
    return load_sequences(frame)


def main() -> None:
    rng = np.random.default_rng(2026)
    for name, users in (("dense", 200), ("sparse", 5)):
        data = chain_data(rng, users)
        theta = fit_prior_set(data, draws=M, seed=0)
        print(f"\n### {name}: {users} users × {T} entries, K = {K}, M = {M} draws ({len(theta)} priors in Θ)\n")
        cases = [
            (f"fit_prior_set (fit + {M} draws)", None, lambda d=data: fit_prior_set(d, draws=M, seed=0)),
            (f"robust curve: influence_curve(Θ), {len(theta)} priors, b = 1..{T}", 2000,
             lambda t=theta: influence_curve(t)),
            (f"member curves: {len(theta)} × influence_curve(prior)", None,
             lambda t=theta: [influence_curve(p) for p in t]),
            (f"row sensitivity: {K} rows × 20 draws, a(1)", None, lambda t=theta: row_sensitivity(t, 1, 20)),
            ("prior_spread: all of the above", None, lambda d=data: prior_spread(d, draws=M, seed=0)),
        ]  # fmt: skip
        print_budget_table(cases, RUNS)
        robust = median_seconds(lambda t=theta: influence_curve(t), RUNS)
        members = median_seconds(lambda t=theta: [influence_curve(p) for p in t], RUNS)
        print(f"\nmember curves / robust curve (same run): {members / robust:.2f}")


if __name__ == "__main__":
    main()
