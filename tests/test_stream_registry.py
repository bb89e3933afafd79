"""The registries of stream bounds and releases, the tightness ladder and the correlation knob (docs/math.md §10, §11).

A bound or a release added to its registry is tested here by itself: every bound must stay above the
exact leakage (enumeration, puffer_core.audit) of every stream release on tiny chains, and every
ladder must be in order.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from puffer_core import MarkovChainPrior, influence_curve
from puffer_core.attacks.attacker import attack_histogram, attack_stream
from puffer_core.audit.stream import exact_histogram_leakage, exact_stream_leakage
from puffer_core.mechanisms.laws import laplace_histogram_emission, randomized_response_emission
from puffer_core.priors.strength import strength_matrix, strength_prior
from puffer_core.stream.registry import STREAM_BOUNDS, bound_table, plan_table, stream_bound, stream_setting
from puffer_core.tightness import RELEASES, ladder_order, ladder_row, release_spec, stream_releases
from tests.support.brute_stream import random_prior

ROUNDING = 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_every_bound_stays_above_the_exact_leakage_of_every_stream_release(seed):
    rng = np.random.default_rng(700 + seed)
    k, length = (2, 6) if seed % 2 == 0 else (3, 4)
    priors = [random_prior(rng, k, length, stationary=seed % 3 != 2, zeros=seed == 5)]
    if seed == 4:
        priors.append(random_prior(rng, k, length))
    setting = stream_setting(priors)
    for schedule in ([0.4] * length, list(rng.uniform(0.05, 1.5, size=length))):
        table = bound_table(setting, schedule)
        for name in stream_releases():
            exact = RELEASES[name].exact_stream(setting.chains, schedule)
            for bound, values in table.items():
                assert values.values is not None, (bound, values.refusal)
                assert np.all(exact.per_entry <= values.values * (1 + ROUNDING) + ROUNDING), (name, bound)


def test_the_stream_releases_are_the_library_laws():
    prior = MarkovChainPrior([[0.8, 0.2], [0.3, 0.7]], length=4)
    schedule = [0.3, 0.9, 0.2, 0.5]
    for name, make in (("stream_rr", randomized_response_emission), ("stream_histogram", laplace_histogram_emission)):
        audit = release_spec(name).exact_stream(stream_setting(prior).chains, schedule)
        direct = exact_stream_leakage(prior, [make(2, e) for e in schedule])
        np.testing.assert_allclose(audit.per_entry, direct.per_entry, rtol=1e-12)


def test_every_bound_plans_an_eps_its_own_values_keep_within_the_target():
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=30)
    setting = stream_setting(prior)
    plan = plan_table(setting, 1.5)
    assert set(plan) == set(STREAM_BOUNDS)
    for name, eps in plan.items():
        assert eps > 0
        values = STREAM_BOUNDS[name].values(setting, [eps] * 30)
        assert values.max <= 1.5 * (1 + 1e-12), name
        more = STREAM_BOUNDS[name].values(setting, [eps * 1.01] * 30)
        assert more.max > 1.5, name  # the largest: 1% more breaks the target


def test_a_gaussian_prior_gets_the_bounds_that_need_no_chain_and_refusals_for_the_rest():
    from puffer_core import GaussianProcessPrior

    prior = GaussianProcessPrior(n=10, length_scale=2.0)
    setting = stream_setting(prior, influence_curve(prior))
    table = bound_table(setting, [0.3] * 10)
    for name, spec in STREAM_BOUNDS.items():
        assert (table[name].values is None) == spec.needs_chain
        if spec.needs_chain:
            assert "needs a Markov chain prior" in table[name].refusal
            assert math.isnan(spec.plan(setting, 1.0))


@pytest.mark.parametrize("release", list(RELEASES))
def test_every_ladder_is_in_order_and_equals_the_library_calls(release):
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=5)
    row = ladder_row(prior, release, 0.6, seed=2, draws=60)
    assert row.in_order and row.lower is not None and row.exact is not None
    spec = release_spec(release)
    if spec.stream:
        law = spec.step_law(2, 0.6)
        assert row.lower == attack_stream(prior, law, seed=2, draws=60).lower
        assert row.exact == exact_stream_leakage(prior, law).eps
    else:
        assert row.lower == attack_histogram(prior, 0.6, mechanism=spec.mechanism, seed=2, draws=60).lower
        assert row.exact == exact_histogram_leakage(prior, 0.6, mechanism=spec.mechanism)
    applies = {name: spec.stream or bound.whole_sequence for name, bound in STREAM_BOUNDS.items()}
    assert {name: value is not None for name, value in row.bounds} == applies
    assert row.lower <= row.exact + ROUNDING <= row.bound + 2 * ROUNDING
    assert ladder_order() == ("attack", "exact", *STREAM_BOUNDS)


def test_the_ladder_says_why_it_did_not_attack_or_enumerate():
    big = MarkovChainPrior(np.full((5, 5), 0.2), length=100)
    row = ladder_row(big, "laplace", 0.5, draws=20)
    assert row.lower is None and "tracks every count vector" in row.attack_note
    assert row.exact is None and "too many to enumerate" in row.exact_note
    assert row.in_order and row.value("tpl") is None


def test_unknown_names_are_refused_with_the_known_ones():
    with pytest.raises(ValueError, match=re.escape(f"choose from {', '.join(STREAM_BOUNDS)}")):
        stream_bound("tlp")
    with pytest.raises(ValueError, match="choose from stream_rr"):
        release_spec("rr")


def test_the_correlation_knob_goes_from_independent_to_fully_correlated():
    np.testing.assert_allclose(strength_matrix(3, 0.0), np.full((3, 3), 1 / 3))
    np.testing.assert_allclose(strength_matrix(3, 1.0), np.eye(3))
    for s in (0.2, 0.7):
        P = strength_matrix(4, s)
        np.testing.assert_allclose(P.sum(axis=1), 1.0)
        # entries d steps apart: P^d = (1 − s^d)·U + s^d·I, so the correlation decays as s^d
        np.testing.assert_allclose(np.linalg.matrix_power(P, 3), strength_matrix(4, s**3), atol=1e-15)
    assert strength_prior(3, 0.5, 10).stationary_initial
    full = strength_prior(3, 1.0, 10)  # the identity has no unique stationary law: uniform start given
    np.testing.assert_allclose(full.initial, 1 / 3)
    with pytest.raises(ValueError, match="strength must be a probability"):
        strength_matrix(3, 1.5)
