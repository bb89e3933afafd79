"""Streams for chosen secrets (docs/math.md §10, §16): TPL restricted to secret pairs at protected steps against the
plain-Python recursion, schedules for a restricted target, suprema, and the attacker below the exact truth."""

from __future__ import annotations

import numpy as np
import pytest

from puffer_core import MarkovChainPrior
from puffer_core.attacks import attack_histogram, attack_stream
from puffer_core.audit import exact_histogram_leakage, exact_stream_leakage
from puffer_core.mechanisms.laws import RandomizedResponse
from puffer_core.secrets import Secrets
from puffer_core.stream import max_eps_for_tpl, optimal_schedule, temporal_privacy_leakage, tpl_supremum
from tests.support import brute_stream
from tests.support.brute import secret_pairs
from tests.support.brute_stream import random_prior


def _secrets(rng, k, length):
    kind = int(rng.integers(3))
    if kind == 0:
        s = int(rng.integers(k))
        secrets, plain = Secrets(pairs="sensitive", states=(s,)), secret_pairs(k, "sensitive", states=(s,))
    elif kind == 1:
        x, y = (int(v) for v in rng.choice(k, 2, replace=False))
        secrets = Secrets(pairs="list", listed=((x, y),), ordered=True)
        plain = secret_pairs(k, "list", listed=((x, y),), ordered=True)
    else:
        secrets, plain = Secrets(), None
    positions = None
    if rng.random() < 0.6:
        positions = {int(v) for v in rng.choice(length, int(rng.integers(1, length + 1)))}
        secrets = Secrets(pairs=secrets.pairs, states=secrets.states, listed=secrets.listed, ordered=secrets.ordered,
                          positions=tuple(sorted(positions)))
    return secrets, plain, positions


@pytest.mark.parametrize("seed", range(30))
def test_tpl_for_chosen_secrets_equals_the_plain_recursion(seed):
    """BPL and FPL over every pair, TPL at a protected step over the secret pairs only (subsets for L,
    enumeration for the backward matrices): K ≤ 4, T ≤ 8, stationary or not, zeros, Θ."""
    rng = np.random.default_rng(seed)
    k, length = int(rng.integers(2, 5)), int(rng.integers(1, 9))
    priors = [random_prior(rng, k, length, stationary=bool(seed % 2), zeros=seed % 5 == 0)
              for _ in range(1 + seed % 3 // 2)]
    secrets, plain, positions = _secrets(rng, k, length)
    eps = list(rng.random(length) * 1.5 + 0.05)
    got = temporal_privacy_leakage(priors if len(priors) > 1 else priors[0], eps, secrets=secrets)
    want = [brute_stream.tpl_recursion(p.transition.tolist(), list(p.initial), length, eps, pairs=plain,
                                       positions=positions) for p in priors]
    for index, name in enumerate(("bpl", "fpl", "tpl")):
        np.testing.assert_allclose(getattr(got, name), np.max([w[index] for w in want], axis=0), rtol=1e-9,
                                   atol=1e-12)
    assert np.all(got.tpl <= temporal_privacy_leakage(priors, eps).tpl + 1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_schedules_for_chosen_secrets_meet_the_target_and_spend_at_least_as_much(seed):
    rng = np.random.default_rng(40 + seed)
    k, length = 3, 8
    prior = random_prior(rng, k, length, stationary=seed % 2 == 0)
    s = int(rng.integers(k))
    positions = tuple(sorted({int(v) for v in rng.choice(length, 3)}))
    secrets = Secrets(pairs="sensitive", states=(s,), positions=positions)
    chosen = optimal_schedule(prior, 1.0, length, secrets=secrets)
    _, _, tpl = brute_stream.tpl_recursion(prior.transition.tolist(), list(prior.initial), length, list(chosen.eps),
                                           pairs=secret_pairs(k, "sensitive", states=(s,)), positions=set(positions))
    assert max(tpl) <= 1.0 + 1e-9 and chosen.max_tpl <= 1.0
    assert chosen.total >= optimal_schedule(prior, 1.0, length).total * (1 - 1e-9)
    assert max_eps_for_tpl(prior, 1.0, secrets=secrets) >= max_eps_for_tpl(prior, 1.0) * (1 - 1e-12)


def test_an_endless_stream_over_a_pair_that_no_step_rules_out_stays_finite():
    """Sticky chain with a state that forbids another: BPL grows without bound over every pair, yet TPL about
    a pair whose second row never excludes the first stays finite (L_E at +∞ is the largest log q/d)."""
    P = np.array([[0.6, 0.4, 0.0], [0.3, 0.4, 0.3], [0.0, 0.5, 0.5]])
    prior = MarkovChainPrior(P, None, 50)
    eps = 2.0
    assert tpl_supremum(prior, eps) == np.inf
    finite = tpl_supremum(prior, eps, secrets=Secrets(pairs="list", listed=((0, 1),), ordered=True))
    assert np.isfinite(finite)
    middle = temporal_privacy_leakage(prior, eps, secrets=Secrets(pairs="list", listed=((0, 1),), ordered=True)).tpl
    assert np.all(middle <= finite + 1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_attacks_on_chosen_secrets_stay_below_the_exact_leakage_about_them(seed):
    rng = np.random.default_rng(70 + seed)
    k, length = 3, 5
    prior = random_prior(rng, k, length, stationary=seed % 2 == 0)
    secrets = Secrets(pairs="sensitive", states=(int(rng.integers(k)),), positions=(1, 3))
    law = RandomizedResponse(k, 1.2)
    truth = exact_stream_leakage(prior, law, secrets=secrets).eps
    attack = attack_stream(prior, law, seed=seed, draws=60, secrets=secrets)
    assert attack.lower <= truth + 1e-9 and attack.entry in (1, 3)
    assert secrets.pair_matrix(k)[attack.pair]
    histogram = attack_histogram(prior, 1.0, seed=seed, draws=40, secrets=secrets)
    assert histogram.lower <= exact_histogram_leakage(prior, 1.0, secrets=secrets) + 1e-9
