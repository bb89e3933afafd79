"""How tight are the stream bounds?  lower (attack) ≤ truth (exact) ≤ TPL / [C] / group DP.

Run: python benchmarks/stream_tightness.py   — prints three markdown tables (seeded, deterministic).

1. Tiny chains (K ≤ 3, T ≤ 6, one or two priors; randomized response or a noisy histogram per
   entry; constant or varying ε_t): the exact leakage by enumeration (docs/math.md §9) against
   TPL, the [C] bound (window refinement for varying schedules) and the attack; worst ratios.
2. Realistic sizes (K = 5, T = 100 shaped like the demo data; the prior fitted from
   assets/checkins.csv): the attack's lower bound against every bound — the gap table.
3. One user's histogram over the whole sequence (Laplace or exponential mechanism): attack
   against the [C] bound and group DP (TPL does not apply: not a stream).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from puffer_core import certify, fit_markov_chain, influence_curve, load_sequences  # noqa: E402
from puffer_core.attacks.attacker import attack_histogram, attack_stream  # noqa: E402
from puffer_core.audit.stream import exact_histogram_leakage, exact_stream_leakage  # noqa: E402
from puffer_core.mechanisms.laws import laplace_histogram_emission, randomized_response_emission  # noqa: E402
from puffer_core.priors.models import MarkovChainPrior  # noqa: E402
from puffer_core.stream.bounds import group_dp_bound, translation_bound  # noqa: E402
from puffer_core.stream.tpl import temporal_privacy_leakage  # noqa: E402


def random_prior(rng: np.random.Generator, k: int, length: int, stationary: bool, zeros: bool) -> MarkovChainPrior:
    while True:
        m = rng.random((k, k)) + 0.05
        if zeros:
            m[rng.random((k, k)) < 0.3] = 0.0
            m[np.arange(k), rng.integers(k, size=k)] += 0.05
        m /= m.sum(axis=1, keepdims=True)
        try:
            return MarkovChainPrior(m, None if stationary else rng.dirichlet(np.ones(k)), length)
        except ValueError:
            continue


def sticky_prior(k: int, length: int, seed: int) -> MarkovChainPrior:
    rng = np.random.default_rng(seed)
    m = 0.35 * np.eye(k) + 0.65 * rng.dirichlet(np.full(k, 0.3), size=k)
    return MarkovChainPrior(m / m.sum(axis=1, keepdims=True), None, length)


def tiny_chains() -> None:
    print("## 1. Tiny chains: exact leakage against the bounds\n")
    print("| case | attack | exact | TPL | [C] | group DP | exact/TPL | exact/[C] | attack/exact |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    ratios_tpl, ratios_c, ratios_attack, excess = [], [], [], []
    for seed in range(24):
        rng = np.random.default_rng(1000 + seed)
        k = 2 + seed % 2
        kind = "hist" if seed % 3 == 2 else "rr"
        length = 6 if k == 2 or kind == "rr" else 4
        priors = [random_prior(rng, k, length, stationary=seed % 4 != 1, zeros=seed % 5 == 4)]
        if seed % 4 == 3:
            priors.append(random_prior(rng, k, length, stationary=False, zeros=False))
        varying = seed % 2 == 1
        schedule = rng.uniform(0.05, 1.5, size=length) if varying else np.full(length, 0.6)
        make = randomized_response_emission if kind == "rr" else laplace_histogram_emission
        laws = [make(k, e) for e in schedule]
        exact = exact_stream_leakage(priors, laws).eps
        tpl = temporal_privacy_leakage(priors, schedule).max_tpl
        c_bound = translation_bound(influence_curve(priors), schedule, contiguous=True).eps_puffer
        attack = attack_stream(priors, laws, seed=seed, draws=60).lower
        group = group_dp_bound(schedule)
        label = f"{kind} K={k} T={length} Θ={len(priors)} {'varying' if varying else 'ε=0.6'} (seed {seed})"
        excess.append(max(exact - tpl, exact - c_bound))
        if exact > 0:
            ratios_tpl.append(exact / tpl)
            ratios_c.append(exact / c_bound)
            ratios_attack.append(attack / exact)
        print(
            f"| {label} | {attack:.4f} | {exact:.4f} | {tpl:.4f} | {c_bound:.4f} | {group:.4f}"
            f" | {exact / tpl:.4f} | {exact / c_bound:.4f} | {attack / exact if exact else float('nan'):.4f} |"
        )
    print(
        f"\nworst (largest) exact/TPL = {max(ratios_tpl):.6f}, exact/[C] = {max(ratios_c):.6f}"
        f" (both must be ≤ 1); median exact/TPL = {np.median(ratios_tpl):.4f},"
        f" exact/[C] = {np.median(ratios_c):.4f}; smallest attack/exact = {min(ratios_attack):.4f};"
        f" largest exact − bound = {max(excess):.3g}\n"
    )


def realistic() -> None:
    print("## 2. Realistic sizes: the attack's lower bound against every bound (truth unknown)\n")
    print("| prior | release | ε per step | attack (seed 0) | TPL | [C] | group DP | attack/TPL | attack/[C] |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    fitted = fit_markov_chain(load_sequences(ROOT / "assets" / "checkins.csv"))
    cases = [
        ("sticky K=5, T=100", sticky_prior(5, 100, 1), 0.5),
        ("sticky K=5, T=100", sticky_prior(5, 100, 1), 0.1),
        (f"check-ins fitted (K={fitted.n_states}, T={fitted.length})", fitted, 0.3),
    ]
    for name, prior, eps in cases:
        curve = influence_curve(prior)
        tpl = temporal_privacy_leakage(prior, eps).max_tpl
        c_bound = certify(curve, eps).eps_puffer
        group = group_dp_bound([eps] * prior.length)
        for release, law in (
            ("randomized response", randomized_response_emission(prior.n_states, eps)),
            ("noisy histogram", laplace_histogram_emission(prior.n_states, eps)),
        ):
            attack = attack_stream(prior, law, seed=0, draws=100)
            print(
                f"| {name} | {release} | {eps} | {attack.lower:.4f} | {tpl:.4f} | {c_bound:.4f} | {group:.4f}"
                f" | {attack.lower / tpl:.3f} | {attack.lower / c_bound:.3f} |"
            )
    print()


def histogram() -> None:
    print("## 3. One user's histogram over the whole sequence: attack against [C] and group DP\n")
    print("| prior | mechanism | ε | attack (seed 0) | exact | [C] | group DP |")
    print("|---|---|---:|---:|---:|---:|---:|")
    cases = [("sticky K=2, T=6", sticky_prior(2, 6, 3)), ("sticky K=3, T=40", sticky_prior(3, 40, 2))]
    for name, prior in cases:
        curve = influence_curve(prior)
        for mechanism in ("laplace", "exponential"):
            for eps in (0.5, 2.0):
                attack = attack_histogram(prior, eps, mechanism=mechanism, seed=0, draws=100)
                exact = "—"
                if prior.length <= 6:
                    exact = f"{exact_histogram_leakage(prior, eps, mechanism=mechanism):.4f}"
                print(
                    f"| {name} | {mechanism} | {eps} | {attack.lower:.4f} | {exact}"
                    f" | {certify(curve, eps).eps_puffer:.4f} | {prior.length * eps:.4f} |"
                )
    print()


if __name__ == "__main__":
    tiny_chains()
    realistic()
    histogram()
