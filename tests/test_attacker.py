"""The attacker (docs/math.md §11): exact log-odds checked by enumeration, lower bound ≤ exact leakage
(docs/math.md §9) on tiny chains and close to it on binary chains, ≤ every reported bound at realistic sizes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from puffer_core import MarkovChainPrior, certify, fit_markov_chain, influence_curve, load_sequences
from puffer_core.attacks.attacker import (
    attack_histogram,
    attack_stream,
    histogram_count_weights,
    stream_log_likelihoods,
)
from puffer_core.audit.exact import exact_leakage
from puffer_core.audit.stream import exact_histogram_leakage, exact_stream_leakage
from puffer_core.mechanisms.laws import laplace_histogram_emission, randomized_response_emission
from puffer_core.stream.bounds import group_dp_bound
from puffer_core.stream.tpl import temporal_privacy_leakage
from tests.support import brute_stream
from tests.support.brute_stream import random_prior

ASSETS = Path(__file__).resolve().parents[1] / "assets"


def geometric_histogram(eps: float, k: int, T: int):
    """One user's counts + two-sided geometric noise (Pr ∝ e^{−ε|z|/2}) clamped to 0..T, written out by hand."""
    r = math.exp(-eps / 2)

    def per_count(mean):
        values = np.arange(T + 1)
        p = (1 - r) / (1 + r) * r ** np.abs(values - mean)
        p[0] = r**mean / (1 + r)
        p[-1] = r ** (T - mean) / (1 + r)
        return p

    tables = [per_count(m) for m in range(T + 1)]

    def mechanism(seq):
        counts = np.bincount(seq, minlength=k)
        joint = np.ones(1)
        for c in counts:
            joint = np.outer(joint, tables[c]).reshape(-1)
        return joint

    return mechanism


def exponential_top(eps: float, k: int, top: int):
    """k rounds of the exponential mechanism (ε/k each, Δu = 1) over every ranking, by hand."""
    import itertools

    rankings = list(itertools.permutations(range(k), top))

    def mechanism(seq):
        counts = np.bincount(seq, minlength=k)
        out = []
        for ranking in rankings:
            left = list(range(k))
            p = 1.0
            for r in ranking:
                w = np.exp(eps / top * counts[left] / 2)
                p *= math.exp(eps / top * counts[r] / 2) / w.sum()
                left.remove(r)
            out.append(p)
        return np.array(out)

    return mechanism


# --------------------------------------------------------------------------------------------
# exact log-odds


@pytest.mark.parametrize("seed", range(4))
def test_stream_log_likelihoods_equal_sums_over_every_sequence(seed):
    rng = np.random.default_rng(seed)
    k = 2 + seed % 2
    prior = random_prior(rng, k, 5, stationary=seed % 2 == 0, zeros=seed == 3)
    laws = [randomized_response_emission(k, e) for e in rng.uniform(0.1, 2.0, size=5)]
    outputs = rng.integers(0, k, size=5)
    got = stream_log_likelihoods(prior, laws, outputs)
    want = brute_stream.stream_log_likelihoods(
        prior.transition.tolist(), list(prior.initial), 5, [law.tolist() for law in laws], outputs.tolist()
    )
    for t in range(5):
        for x in range(k):
            if want[t][x] is None:
                assert got[t, x] == -np.inf
            else:
                assert got[t, x] == pytest.approx(want[t][x], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_histogram_count_weights_equal_enumeration(seed):
    rng = np.random.default_rng(10 + seed)
    k = 2 + seed % 2
    prior = random_prior(rng, k, 5, stationary=seed != 1, zeros=seed == 2)  # zeros: the exact log-sum-exp path
    for entry in range(5):
        got = histogram_count_weights(prior, entry)
        want = brute_stream.count_weights(prior.transition.tolist(), list(prior.initial), 5, entry)
        total = 0.0
        for (x, counts), p in want.items():
            assert math.exp(got[(x, *counts[:-1])]) == pytest.approx(p, rel=1e-12)
            total += p
        assert np.exp(got).sum() == pytest.approx(total, rel=1e-12)


# --------------------------------------------------------------------------------------------
# lower bound ≤ exact on tiny chains, and close to it on binary chains


def stream_cases():
    cases = []
    for seed in range(10):
        rng = np.random.default_rng(200 + seed)
        k = 2 if seed < 5 else 3
        kind = "laplace" if seed % 2 else "rr"
        length = 6 if k == 2 else (5 if kind == "rr" else 4)
        priors = [random_prior(rng, k, length, stationary=seed % 3 != 2, zeros=seed == 4)]
        if seed in (3, 8):
            priors.append(random_prior(rng, k, length))
        make = randomized_response_emission if kind == "rr" else laplace_histogram_emission
        schedule = rng.uniform(0.2, 1.5, size=length) if seed % 4 == 1 else np.full(length, 0.8)
        cases.append((f"{kind} K={k} T={length} seed={seed}", priors, [make(k, e) for e in schedule]))
    return cases


@pytest.mark.parametrize("label,priors,laws", stream_cases(), ids=[c[0] for c in stream_cases()])
def test_stream_attack_is_a_lower_bound_and_nearly_tight_on_binary_chains(label, priors, laws):
    exact = exact_stream_leakage(priors, laws).eps
    attack = attack_stream(priors, laws, seed=7, draws=60)
    assert attack.lower <= exact + 1e-9
    if priors[0].n_states == 2:
        assert attack.lower >= 0.9 * exact
    if exact == 0:  # no entry has two possible states
        assert attack.lower == 0 and attack.entry is None
        return
    # the reported output really has that log-odds
    loglik = stream_log_likelihoods(priors[attack.prior_index], laws, np.array(attack.output))
    x, xp = attack.pair
    assert loglik[attack.entry, x] - loglik[attack.entry, xp] == pytest.approx(attack.lower, rel=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_histogram_attack_is_a_lower_bound_and_nearly_tight_on_binary_chains(seed):
    rng = np.random.default_rng(400 + seed)
    k = 2 if seed < 3 else 3
    T = 6 if k == 2 else 5
    priors = [random_prior(rng, k, T, stationary=seed % 2 == 0)]
    if seed == 5:
        priors.append(random_prior(rng, k, T))
    eps = [0.4, 1.0, 2.0][seed % 3]
    exact = exact_leakage(priors, geometric_histogram(eps, k, T))
    assert exact_histogram_leakage(priors, eps) == pytest.approx(exact, abs=1e-12)
    attack = attack_histogram(priors, eps, seed=seed, draws=80)
    assert attack.lower <= exact + 1e-9
    if k == 2:
        assert attack.lower >= 0.9 * exact
    top = 1 if k == 2 else 2
    exact_exp = exact_leakage(priors, exponential_top(eps, k, top))
    assert exact_histogram_leakage(priors, eps, mechanism="exponential", k=top) == pytest.approx(exact_exp, abs=1e-12)
    attack_exp = attack_histogram(priors, eps, mechanism="exponential", k=top)
    assert attack_exp.lower <= exact_exp + 1e-9
    assert attack_exp.lower >= 0.9 * exact_exp  # every ranking and every entry is tried: exact here


def test_attacks_are_reproducible_from_their_seed():
    prior = MarkovChainPrior([[0.85, 0.15], [0.3, 0.7]], None, 30)
    law = randomized_response_emission(2, 0.6)
    first = attack_stream(prior, law, seed=11, draws=30)
    assert attack_stream(prior, law, seed=11, draws=30) == first
    assert first.seed == 11 and first.draws == 30
    hist = attack_histogram(prior, 0.6, seed=3, draws=20)
    assert attack_histogram(prior, 0.6, seed=3, draws=20) == hist
    assert "seed 3" in hist.describe(truth=None, bound=5.0)


# --------------------------------------------------------------------------------------------
# realistic sizes: the attack stays below every reported bound


def sticky_prior(k: int, length: int, seed: int) -> MarkovChainPrior:
    """Shaped like the demo data: 0.35 self-transition plus Dirichlet(0.3) jumps."""
    rng = np.random.default_rng(seed)
    transition = 0.35 * np.eye(k) + 0.65 * rng.dirichlet(np.full(k, 0.3), size=k)
    return MarkovChainPrior(transition / transition.sum(axis=1, keepdims=True), None, length)


@pytest.mark.parametrize("kind", ["rr", "laplace"])
def test_stream_attack_at_k5_t100_stays_below_every_bound(kind):
    prior = sticky_prior(5, 100, 1)
    eps = 0.5
    law = randomized_response_emission(5, eps) if kind == "rr" else laplace_histogram_emission(5, eps)
    attack = attack_stream(prior, law, seed=0, draws=100)
    tpl = temporal_privacy_leakage(prior, eps).max_tpl
    c_bound = certify(influence_curve(prior), eps).eps_puffer
    assert 0 < attack.lower <= min(tpl, c_bound, group_dp_bound([eps] * 100))


def test_stream_attack_on_the_fitted_demo_prior_stays_below_every_bound():
    prior = fit_markov_chain(load_sequences(ASSETS / "checkins.csv"))
    eps = 0.3
    law = randomized_response_emission(prior.n_states, eps)
    attack = attack_stream(prior, law, seed=0, draws=60, restarts=2)
    tpl = temporal_privacy_leakage(prior, eps).max_tpl
    c_bound = certify(influence_curve(prior), eps).eps_puffer
    assert 0 < attack.lower <= min(tpl, c_bound, group_dp_bound([eps] * prior.length))


def test_histogram_attack_at_realistic_length_stays_below_every_bound():
    prior = sticky_prior(3, 40, 2)
    eps = 0.5
    curve = influence_curve(prior)
    for mechanism in ("laplace", "exponential"):
        attack = attack_histogram(prior, eps, mechanism=mechanism, seed=1, draws=50)
        assert 0 < attack.lower <= min(certify(curve, eps).eps_puffer, 40 * eps)


# --------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda p: attack_stream([], randomized_response_emission(2, 1.0)), "non-empty list"),
        (lambda p: attack_stream(p, randomized_response_emission(3, 1.0)), "rows but the chain has 2 states"),
        (lambda p: attack_stream(p, randomized_response_emission(2, 1.0), seed=-1), "seed"),
        (lambda p: attack_stream(p, randomized_response_emission(2, 1.0), draws=0), "draws"),
        (lambda p: stream_log_likelihoods(p, randomized_response_emission(2, 1.0), [0, 1]), "one whole output"),
        (lambda p: stream_log_likelihoods(p, randomized_response_emission(2, 1.0), [0, 1, 2, 0]), "not one of"),
        (lambda p: attack_histogram(p, 1.0, mechanism="gauss"), "mechanism must be one of"),
        (lambda p: attack_histogram(p, 0.0), "eps must be positive"),
        (lambda p: attack_histogram(p, 1.0, k=3), "larger than the number of states"),
        (lambda p: attack_histogram(p, 1.0, entries=[4]), "0-based steps"),
        (lambda p: histogram_count_weights(p, 4), "beyond the chain"),
        (lambda p: attack_histogram(MarkovChainPrior(np.full((6, 6), 1 / 6), None, 60), 1.0), "attack tracks"),
        (lambda p: exact_histogram_leakage(p, 1.0, mechanism="gauss"), "mechanism must be one of"),
        (lambda p: exact_histogram_leakage(p, 1.0, k=3), "larger than the number of states"),
        (lambda p: exact_histogram_leakage(MarkovChainPrior(np.full((3, 3), 1 / 3), None, 12), 1.0), "limited"),
    ],
)
def test_bad_input_raises_a_clear_value_error(call, message):
    prior = MarkovChainPrior([[0.8, 0.2], [0.3, 0.7]], None, 4)
    with pytest.raises(ValueError, match=message):
        call(prior)


def test_a_stream_attack_out_of_reach_is_refused_before_any_work() -> None:
    from puffer_core.attacks.attacker import stream_attack_estimate, stream_attack_refusal
    from puffer_core.priors.kinds import sticky_matrix

    prior = MarkovChainPrior(sticky_matrix(200, 0.9), length=20_000)  # T × K = 4e6: within memory, not in time
    message = stream_attack_refusal(200, 20_000)
    assert message is not None
    for words in ("out of reach", "K = 200", "T = 20000", "200 draws", "Shorten the stream to about", "fewer draws"):
        assert words in message, words
    with pytest.raises(ValueError, match="out of reach"):
        attack_stream(prior, randomized_response_emission(200, 0.5), seed=0)
    assert stream_attack_refusal(20, 500) is None  # the benchmark's case (about 2 s)
    fewer = stream_attack_estimate(200, 20_000, draws=10, restarts=1, max_sweeps=1).largest["draws"]
    assert 1 <= fewer < 10  # the largest number of draws that fits is in reach, one more is not
    assert stream_attack_refusal(200, 20_000, draws=fewer, restarts=1, max_sweeps=1) is None
    assert stream_attack_refusal(200, 20_000, draws=fewer + 1, restarts=1, max_sweeps=1) is not None
