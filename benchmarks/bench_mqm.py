"""Speed of the exact MQM noise scale σ_max (docs/math.md §5, [S] Algorithm 1).

Run: python benchmarks/bench_mqm.py   — prints a table (median of 5 runs each).

Target: K = 78 states, chain length T = 500, ≤ 2 s.  Chains (seeded):
- "fitted-like": 0.35 self-transition + Dirichlet(0.3) jumps, as the demo check-ins;
- "dirichlet": rows Dirichlet(1), fast mixing;
- "sticky 0.9": 0.9 self-transition, slow mixing (the quilts needed grow to ~200 nodes).
Each runs with the stationary initial distribution and with a random one (non-stationary),
at ε_puffer = 0.1, 1 and 5; plus the fitted demo prior and a Θ of two priors.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import median_seconds  # noqa: E402

from puffer_core.data.readers import load_sequences  # noqa: E402
from puffer_core.engine.mqm import mqm_scale  # noqa: E402
from puffer_core.priors.fitting import fit_markov_chain  # noqa: E402
from puffer_core.priors.models import MarkovChainPrior  # noqa: E402

RUNS = 5
K = 78
T = 500



def chains(rng: np.random.Generator) -> dict[str, np.ndarray]:
    out = {
        "fitted-like": 0.35 * np.eye(K) + 0.65 * rng.dirichlet(np.full(K, 0.3), size=K),
        "dirichlet": rng.dirichlet(np.ones(K), size=K),
        "sticky 0.9": 0.9 * np.eye(K) + 0.1 * rng.dirichlet(np.ones(K), size=K),
    }
    return {name: m / m.sum(axis=1, keepdims=True) for name, m in out.items()}


def main() -> None:
    rng = np.random.default_rng(78)
    cases = []
    for name, transition in chains(rng).items():
        initial = rng.dirichlet(np.ones(K))
        for label, prior in (
            ("stationary", MarkovChainPrior(transition, None, T)),
            ("non-stationary", MarkovChainPrior(transition, initial, T)),
        ):
            for eps in (0.1, 1.0, 5.0):
                cases.append((f"K={K}, T={T}, {name}, {label}", eps, prior, 2.0))
    fitted = fit_markov_chain(load_sequences(ROOT / "assets" / "checkins.csv", group="country"))
    for eps in (0.5 / 12, 5.0 / 12, 1.0):
        cases.append((f"demo check-ins fitted (K=12, T={fitted.length})", eps, fitted, None))
    theta = [MarkovChainPrior(m, None, T) for m in list(chains(np.random.default_rng(1)).values())[:2]]
    cases.append((f"Θ = two K={K}, T={T} priors (fitted-like, dirichlet)", 1.0, theta, None))

    print(f"{'prior':<52} {'ε':>7} {'σ_max':>10} {'worst quilt':>22} {'median s':>9} {'target':>10}")
    for label, eps, prior, target in cases:
        report = mqm_scale(prior, eps)
        seconds = median_seconds(lambda p=prior, e=eps: mqm_scale(p, e), RUNS)
        kind, a, b = report.quilt
        quilt = f"{kind} ({a},{b}) t={report.node}"
        mark = "" if target is None else f"≤ {target:g} s" + (" ok" if seconds <= target else " SLOW")
        print(f"{label:<52} {eps:>7.4g} {report.sigma_max:>10.4g} {quilt:>22} {seconds:>9.3f} {mark:>10}")


if __name__ == "__main__":
    main()
