"""Every ε reported for chosen secrets is at least the exact leakage of the released mechanism about them
(docs/math.md §9, §16): calibration, certification, Theorem 6.2, MQM, TPL and the [C] bound, by enumeration."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from puffer_core import MarkovChainPrior, influence_curve
from puffer_core.accounting import Accountant, calibrate, certify, common_secrets, compose
from puffer_core.audit import exact_leakage, exact_stream_leakage
from puffer_core.mechanisms import mqm_laplace, pufferfish_exponential, pufferfish_laplace
from puffer_core.mechanisms.laws import RandomizedResponse
from puffer_core.secrets import EventSecrets, Secrets
from puffer_core.stream import temporal_privacy_leakage, translation_bound
from tests.support.brute import random_chain, random_distribution

EDGES = [-np.inf, 0.5, 1.5, 2.5, 3.5, np.inf]


def _randomized_response(eps_dp, k):
    """Randomized response at every entry of the whole sequence: per-entry ε_DP-DP, every output vector."""
    keep = np.exp(eps_dp) / (np.exp(eps_dp) + k - 1)
    table = np.full((k, k), (1 - keep) / (k - 1))
    np.fill_diagonal(table, keep)
    assert np.allclose(np.exp(RandomizedResponse(k, eps_dp).log_emission()), table)

    def release(seq):
        out = np.ones(1)
        for x in seq:
            out = np.outer(out, table[x]).reshape(-1)
        return out

    return release


def _cases(seed):
    rng = np.random.default_rng(seed)
    k = 2 + seed % 2
    length = 4 if k == 2 else 3
    prior = MarkovChainPrior(random_chain(rng, k, zeros=seed % 4 == 3), random_distribution(rng, k)
                             if seed % 2 else None, length)
    sensitive = int(rng.integers(k))
    value = Secrets(pairs="sensitive", states=(sensitive,), positions=tuple(sorted({int(v) for v in
                                                                                    rng.choice(length, 2)})))
    first = int(rng.integers(length - 1))
    event = EventSecrets(states=(sensitive,), windows=((first, first + 1),))
    return prior, k, [value, replace(value, positions=None), Secrets(positions=value.positions), event]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("eps", [0.7, 3.0])
def test_calibrated_mechanisms_never_leak_more_than_reported_about_the_chosen_secrets(seed, eps):
    prior, k, choices = _cases(seed)
    for secrets in choices:
        curve = influence_curve(prior, secrets=secrets)
        cal = calibrate(curve, eps)
        assert cal.secrets == secrets and cal.eps_puffer == eps
        rr = exact_leakage(prior, _randomized_response(cal.eps_dp, k), secrets=secrets)
        assert rr <= eps + 1e-9, (secrets, rr, cal)
        lap = pufferfish_laplace(curve, eps)
        leak = exact_leakage(prior, lambda s, lap=lap: lap.probabilities(np.bincount(s, minlength=k), EDGES),
                             secrets=secrets)
        assert leak <= lap.accounting.eps_puffer + 1e-9
        top = pufferfish_exponential(curve, eps, k=1)
        assert exact_leakage(prior, lambda s, top=top: top.probabilities(np.bincount(s, minlength=k)),
                             secrets=secrets) <= eps + 1e-9
        # the reverse direction: a given ε_DP is certified at least its exact leakage
        given = certify(curve, 0.4)
        assert exact_leakage(prior, _randomized_response(0.4, k), secrets=secrets) <= given.eps_puffer + 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_two_releases_stay_within_theorem_6_2_for_the_chosen_secrets(seed):
    prior, k, choices = _cases(seed)
    for secrets in choices:
        curve = influence_curve(prior, secrets=secrets)
        first, second = calibrate(curve, 1.0), calibrate(curve, 2.0)
        table_1, table_2 = _randomized_response(first.eps_dp, k), _randomized_response(second.eps_dp, k)

        def both(seq, one=table_1, two=table_2):
            return np.outer(one(seq), two(seq)).reshape(-1)

        assert exact_leakage(prior, both, secrets=secrets) <= compose([first, second]) + 1e-9


def test_the_ledger_says_what_every_release_protects():
    prior = MarkovChainPrior([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]], None, 6)
    night = Secrets(pairs="sensitive", states=(2,), positions=(0, 1, 5))
    clinic = Secrets(pairs="sensitive", states=(2,))
    events = [pufferfish_laplace(influence_curve(prior, secrets=s), 1.0).accounting for s in (night, night)]
    assert Accountant(6).ledger(events).secrets == night
    assert "whether a user was in state 2 rather than in any other state" in events[0].describe()
    assert events[0].to_dict()["secrets"] == night.to_text()
    mixed = [events[0], pufferfish_laplace(influence_curve(prior, secrets=clinic), 1.0).accounting]
    assert Accountant(6).ledger(mixed).secrets is None
    common = common_secrets(mixed, 3)
    assert common.positions == (0, 1, 5) and set(common.listed) == {(2, 0), (2, 1), (0, 2), (1, 2)}


@pytest.mark.parametrize("seed", range(6))
def test_mqm_for_chosen_secrets_never_leaks_more_than_its_eps(seed):
    prior, k, choices = _cases(seed)
    for secrets in choices[:3]:
        mech = mqm_laplace(prior, 1.5, secrets=secrets)
        leak = exact_leakage(prior, lambda s, mech=mech: mech.probabilities(np.bincount(s, minlength=k), EDGES),
                             secrets=secrets)
        assert leak <= 1.5 + 1e-9
        assert mech.accounting.secrets == secrets


@pytest.mark.parametrize("seed", range(8))
def test_tpl_and_the_c_bound_for_chosen_secrets_stay_above_the_exact_stream_leakage(seed):
    prior, k, choices = _cases(seed)
    rng = np.random.default_rng(seed)
    eps = list(rng.random(prior.length) + 0.2)
    laws = [RandomizedResponse(k, e) for e in eps]
    for secrets in choices[:3]:
        truth = exact_stream_leakage(prior, laws, secrets=secrets)
        tpl = temporal_privacy_leakage(prior, eps, secrets=secrets)
        assert np.all(truth.per_entry <= tpl.tpl + 1e-9)
        bound = translation_bound(influence_curve(prior, secrets=secrets), eps, contiguous=True)
        assert truth.eps <= bound.eps_puffer + 1e-9
