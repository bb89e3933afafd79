"""The published baselines (docs/math.md §15): the Wasserstein mechanism, MQMApprox, the influence-matrix translation.

Each is checked against references that share no code with it: the exact leakage of its release by
enumerating every sequence (puffer_core.audit), the ∞-Wasserstein distance by a linear program over
laws enumerated from every sequence (tests/support/brute.py), and exact MQM for MQMApprox.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import linprog

from puffer_core import Accountant, MarkovChainPrior, influence_curve, load_dataset, mqm_noise_scale, simulate
from puffer_core.accounting.events import Composition
from puffer_core.audit.stream import exact_histogram_leakage, exact_stream_leakage
from puffer_core.mechanisms import (
    Refused,
    influence_laplace,
    influence_translation,
    make_mechanism,
    mqm_approx_laplace,
    mqm_approx_scale,
    wasserstein_laplace,
    wasserstein_scale,
)
from puffer_core.mechanisms.laws import randomized_response_emission
from puffer_core.mechanisms.wasserstein import wasserstein_refusal
from puffer_core.simulation.baselines import baseline_findings
from tests.support.brute import sequence_probabilities
from tests.support.brute_stream import random_prior

ROUNDING = 1e-9


def brute_count_laws(prior: MarkovChainPrior, t: int, x: int) -> dict[tuple[int, ...], float]:
    """Pr[N = n | X_t = x] by enumerating every sequence (plain Python)."""
    k = prior.n_states
    law: dict[tuple[int, ...], float] = {}
    total = 0.0
    for seq, p in sequence_probabilities(prior.transition.tolist(), list(prior.initial), prior.length).items():
        if seq[t] != x:
            continue
        n = tuple(seq.count(s) for s in range(k))
        law[n] = law.get(n, 0.0) + p
        total += p
    return {n: v / total for n, v in law.items()} if total > 0 else {}


def brute_w_infinity(mu: dict, nu: dict, length: int) -> int:
    """The smallest even w with a coupling of mu and nu on ‖n − n'‖₁ ≤ w: a feasibility LP for each w."""
    left, right = list(mu), list(nu)
    for w in range(0, 2 * length + 1, 2):
        pairs = [(i, j) for i, n in enumerate(left) for j, m in enumerate(right)
                 if sum(abs(a - b) for a, b in zip(n, m)) <= w]
        if not pairs:
            continue
        a_eq = np.zeros((len(left) + len(right), len(pairs)))
        for col, (i, j) in enumerate(pairs):
            a_eq[i, col] = 1.0
            a_eq[len(left) + j, col] = 1.0
        b_eq = np.array([mu[n] for n in left] + [nu[m] for m in right])
        done = linprog(np.zeros(len(pairs)), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
        if done.status == 0:
            return w
    return 2 * length


def brute_w(prior: MarkovChainPrior) -> int:
    """W over every entry and pair; 2 (one entry's own move) when no entry has two possible states."""
    k, T = prior.n_states, prior.length
    best = 2
    for t in range(T):
        laws = [brute_count_laws(prior, t, x) for x in range(k)]
        for x, xp in itertools.combinations(range(k), 2):
            if laws[x] and laws[xp]:  # a state with no mass at t is no secret there
                best = max(best, brute_w_infinity(laws[x], laws[xp], T))
    return best


# --------------------------------------------------------------------------------------------
# the Wasserstein mechanism


@pytest.mark.parametrize("seed", range(8))
def test_w_equals_a_linear_program_over_laws_enumerated_from_every_sequence(seed):
    rng = np.random.default_rng(900 + seed)
    k, length = (2, 6) if seed < 5 else (3, 4)
    prior = random_prior(rng, k, length, stationary=seed % 2 == 0, zeros=seed == 4)
    assert wasserstein_scale(prior).w == brute_w(prior)


@pytest.mark.parametrize("seed", range(6))
def test_the_wasserstein_release_leaks_at_most_its_eps(seed):
    rng = np.random.default_rng(950 + seed)
    k, length = (2, 5) if seed < 4 else (3, 3)
    prior = random_prior(rng, k, length, stationary=seed % 2 == 1)
    for eps in (0.3, 1.0, 3.0):
        mechanism = wasserstein_laplace(prior, eps)
        # Laplace noise of scale b on each count leaks what the two-sided geometric law r = e^{−1/b} does
        # at whole outputs (docs/math.md §11): the audit's law with ε_law = 2/b
        truth = exact_histogram_leakage(prior, 2.0 / mechanism.scale, mechanism="laplace")
        assert truth <= eps + ROUNDING
        assert mechanism.accounting.composition is Composition.SAME_QUERY


def test_w_is_zero_for_an_even_deterministic_alternation_and_the_mechanism_still_releases():
    """Issue 34: every sequence of an even alternation holds each state T/2 times, so W = 0 (docs/math.md §15 used
    to claim 2 ≤ W); make_mechanism raised ZeroDivisionError.  The release uses the noise of W = 2 and leaks 0."""
    for length in (2, 4, 6):
        prior = MarkovChainPrior([[0.0, 1.0], [1.0, 0.0]], length=length)
        assert wasserstein_scale(prior).w == 0
        for t in range(length):  # the laws of the counts given either value are one and the same point
            assert brute_w_infinity(brute_count_laws(prior, t, 0), brute_count_laws(prior, t, 1), length) == 0
        mechanism = wasserstein_laplace(prior, 1.5)
        assert mechanism.scale == pytest.approx(2.0 / 1.5) and mechanism.accounting.eps_dp == pytest.approx(1.5)
        assert exact_histogram_leakage(prior, 2.0 / mechanism.scale, mechanism="laplace") <= ROUNDING
        built = make_mechanism("wasserstein", 1.5, influence_curve(prior), prior, query="histogram")
        assert built.scale == pytest.approx(mechanism.scale)
    odd = MarkovChainPrior([[0.0, 1.0], [1.0, 0.0]], length=5)  # (3, 2) against (2, 3): one entry moves
    assert wasserstein_scale(odd).w == brute_w(odd) == 2


def test_w_is_at_most_group_dp_s_2t_and_refused_up_front_beyond_reach():
    prior = MarkovChainPrior([[0.99, 0.01], [0.01, 0.99]], length=6)
    assert 2 <= wasserstein_scale(prior).w <= 12
    assert wasserstein_refusal(5, 31) is not None and "count vectors" in wasserstein_refusal(5, 31)
    with pytest.raises(Refused, match="would take about") as refused:
        wasserstein_scale(MarkovChainPrior(np.full((5, 5), 0.2), length=31))
    assert refused.value.code == "out_of_reach"


# --------------------------------------------------------------------------------------------
# MQMApprox


@pytest.mark.parametrize("seed", range(6))
def test_mqm_approx_adds_at_least_exact_mqm_s_noise_and_leaks_at_most_its_eps(seed):
    rng = np.random.default_rng(1000 + seed)
    prior = random_prior(rng, 2 + seed % 2, 5 if seed % 2 == 0 else 4)
    for eps in (0.5, 2.0, 6.0):
        approx = mqm_approx_scale(prior, eps)
        assert approx >= mqm_noise_scale(prior, eps) * (1 - 1e-12)  # a bound on every influence: never less
        assert approx <= prior.length / eps * (1 + 1e-12)  # the empty quilt is always there
        mechanism = mqm_approx_laplace(prior, eps)
        truth = exact_histogram_leakage(prior, 2.0 / mechanism.scale, mechanism="laplace")
        assert truth <= eps + ROUNDING


def test_mqm_approx_on_a_long_mixing_chain_uses_quilts_and_refuses_a_periodic_one():
    mixing = MarkovChainPrior([[0.5, 0.5], [0.5, 0.5]], length=200)
    assert mqm_approx_scale(mixing, 1.0) < 200 / 1.0  # some quilt beats the empty one
    periodic = MarkovChainPrior([[0.0, 1.0], [1.0, 0.0]], length=10)
    with pytest.raises(Refused, match="eigen-gap"):
        mqm_approx_scale(periodic, 1.0)


# --------------------------------------------------------------------------------------------
# the influence-matrix translation


@pytest.mark.parametrize("seed", range(8))
def test_the_influence_translation_bounds_the_exact_leakage_of_per_entry_dp_releases(seed):
    rng = np.random.default_rng(1100 + seed)
    k, length = (2, 5) if seed < 5 else (3, 3)
    # weakly correlated chains: rows near uniform
    matrix = rng.dirichlet(np.full(k, 8.0), size=k)
    prior = MarkovChainPrior(matrix, None if seed % 2 == 0 else rng.dirichlet(np.ones(k)), length)
    translation = influence_translation(prior)
    if not translation.guarantee:
        pytest.skip(f"no guarantee for this draw: {translation.reason}")
    assert translation.factor >= 1.0 and translation.radius < 1.0
    for eps_dp in (0.2, 1.0):
        claim = translation.factor * eps_dp
        assert exact_histogram_leakage(prior, eps_dp, mechanism="laplace") <= claim + ROUNDING
        stream = exact_stream_leakage(prior, randomized_response_emission(k, eps_dp))
        assert stream.eps <= claim + ROUNDING


def test_a_sticky_chain_gets_no_influence_guarantee_and_says_why():
    sticky = MarkovChainPrior([[0.9, 0.1], [0.1, 0.9]], length=20)
    translation = influence_translation(sticky)
    assert not translation.guarantee and translation.radius >= 1.0
    assert "spectral radius" in translation.reason and "sticky" in translation.reason
    with pytest.raises(Refused, match="no influence-matrix guarantee") as refused:
        influence_laplace(sticky, 1.0)
    assert refused.value.code == "no_guarantee"
    ruled_out = MarkovChainPrior([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5]], length=5)
    assert "rules some transitions out" in influence_translation(ruled_out).reason
    weak = MarkovChainPrior([[0.55, 0.45], [0.45, 0.55]], length=20)
    assert influence_translation(weak).factor < 1.5


# --------------------------------------------------------------------------------------------
# the noise scales side by side, and the orders that are proven


@pytest.mark.parametrize("seed", range(10))
def test_noise_scales_on_random_small_chains_keep_the_proven_orders(seed):
    """Proven: Wasserstein ≤ group DP (any coupling moves N by at most 2T); MQM ≤ group DP (the empty quilt);
    MQMApprox ≥ MQM.  Not proven either way, and both seen: Wasserstein against MQM."""
    rng = np.random.default_rng(1200 + seed)
    prior = random_prior(rng, 2, 8)
    T = prior.length
    for eps in (0.2, 1.0, 5.0):
        wasserstein = wasserstein_scale(prior).w / eps
        mqm = 2 * mqm_noise_scale(prior, eps)
        group = 2 * T / eps
        assert wasserstein <= group * (1 + 1e-12) and mqm <= group * (1 + 1e-12)
        assert 2 * mqm_approx_scale(prior, eps) >= mqm * (1 - 1e-12)


def test_wasserstein_beats_mqm_at_small_eps_and_mqm_beats_it_at_large_eps_on_a_weak_chain():
    weak = MarkovChainPrior([[0.6, 0.4], [0.4, 0.6]], length=20)
    w = wasserstein_scale(weak).w
    assert w / 0.2 < 2 * mqm_noise_scale(weak, 0.2)  # MQM: no quilt with influence below ε, group-DP noise
    assert 2 * mqm_noise_scale(weak, 8.0) < w / 8.0  # a one-node quilt: noise ≈ 2/(ε − e) < W/ε


# --------------------------------------------------------------------------------------------
# the registry, the ledger and the simulator


def test_baselines_in_the_simulator_run_or_say_why_not_and_explain_themselves():
    data = load_dataset("seattle-weather")
    names = ["mqm", "mqm_approx", "wasserstein", "influence_matrix", "group_dp_laplace"]
    result = simulate(data, query="histogram", mechanisms=names, eps_grid=(1.0, 4.0), trials=20, rng=1)
    refused = result.settings["refused"]
    assert set(refused) == {"wasserstein", "influence_matrix"}
    assert "would take about" in refused["wasserstein"] and "spectral radius" in refused["influence_matrix"]
    assert set(result.metrics["mechanism"]) == {"mqm", "mqm_approx", "group_dp_laplace"}
    codes = {f.code for f in baseline_findings(result)}
    assert {"baseline_refused", "mqm_approx_looser"} <= codes
    windows = simulate(data, query="histogram", mechanisms=["wasserstein", "mqm"], eps_grid=(1.0,), releases=2,
                       release_mode="windows", trials=5, rng=1)
    assert "same query" in windows.settings["refused"]["wasserstein"]


def test_the_baselines_events_compose_by_their_own_rule_and_not_with_others():
    prior = MarkovChainPrior([[0.6, 0.4], [0.4, 0.6]], length=5)
    from puffer_core import influence_curve

    curve = influence_curve(prior)
    events = {
        name: make_mechanism(name, 1.0, curve, prior, "histogram").accounting
        for name in ("wasserstein", "mqm_approx", "influence_matrix", "mqm")
    }
    accountant = Accountant(5)
    for event in events.values():
        ledger = accountant.ledger([event] * 3)
        assert list(ledger.eps_puffer) == pytest.approx([1.0, 2.0, 3.0])
        assert math.isfinite(event.eps_dp) and event.to_dict()["composition"] == str(event.composition)
    assert events["mqm_approx"].composition is events["mqm"].composition  # MQMApprox is MQM ([S] §IV)
    with pytest.raises(ValueError, match="different kinds"):
        accountant.ledger([events["wasserstein"], events["mqm"]])


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: mqm_approx_scale(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=6), 1e-320), "too small"),
        (lambda: mqm_approx_scale(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=6), True), "must be a number"),
        (lambda: wasserstein_laplace(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=6), -1.0), "positive"),
        (lambda: wasserstein_scale("a chain"), "MarkovChainPrior"),
        (lambda: influence_translation([]), "empty"),
        (lambda: influence_laplace(MarkovChainPrior([[0.6, 0.4], [0.4, 0.6]], length=5), 1.0, queries=0), "queries"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()
