"""a(b) curves against the definition by brute-force enumeration (docs/math.md §2), closed forms, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puffer_core import MarkovChainPrior, binary_chain_curve, influence_curve
from tests.support.brute import brute_influence_all, random_chain, random_distribution
from tests.support.strategies import chains


def _as_plain(priors):
    return [(p.transition.tolist(), p.initial.tolist(), p.length) for p in priors]


def _assert_curve_equal(got, expected):
    got = np.asarray(got, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert got.shape == expected.shape
    inf_got, inf_exp = np.isinf(got), np.isinf(expected)
    np.testing.assert_array_equal(inf_got, inf_exp, err_msg=f"+inf differs: {got} vs {expected}")
    np.testing.assert_allclose(got[~inf_got], expected[~inf_exp], rtol=0, atol=1e-9)


def _random_prior(rng, k, length, stationary=True, zeros=False):
    while True:
        transition = random_chain(rng, k, zeros)
        initial = None if stationary else random_distribution(rng, k, zeros)
        try:
            return MarkovChainPrior(transition, initial, length=length)
        except ValueError:
            continue  # no unique stationary distribution: draw again


CASES = [
    # (seed, K, T, kind)
    (1, 2, 7, "stationary"),
    (2, 3, 7, "stationary"),
    (3, 3, 6, "initial"),
    (4, 2, 7, "initial"),
    (5, 3, 5, "zeros"),
    (6, 2, 6, "zeros"),
    (7, 3, 6, "theta"),
    (8, 2, 7, "theta"),
    (9, 3, 5, "theta-lengths"),
    (10, 3, 6, "theta-initial-zeros"),
    (11, 2, 1, "stationary"),
    (12, 3, 2, "initial"),
]


@pytest.mark.parametrize("seed,k,length,kind", CASES)
def test_curve_equals_brute_force(seed, k, length, kind):
    rng = np.random.default_rng(seed)
    if kind == "stationary":
        priors = [_random_prior(rng, k, length)]
    elif kind == "initial":
        priors = [_random_prior(rng, k, length, stationary=False)]
    elif kind == "zeros":
        priors = [_random_prior(rng, k, length, stationary=bool(seed % 2), zeros=True)]
    elif kind == "theta":
        priors = [_random_prior(rng, k, length), _random_prior(rng, k, length)]
    elif kind == "theta-lengths":
        priors = [_random_prior(rng, k, length), _random_prior(rng, k, length - 2, stationary=False)]
    else:
        priors = [_random_prior(rng, k, length, zeros=True), _random_prior(rng, k, length, False, True)]
    curve = influence_curve(priors if len(priors) > 1 else priors[0])
    expected = brute_influence_all(_as_plain(priors))
    _assert_curve_equal(curve.a, expected)
    assert curve.length == max(p.length for p in priors)


def test_many_random_small_chains_match_brute_force():
    rng = np.random.default_rng(2026)
    for trial in range(24):
        k = int(rng.integers(2, 4))
        length = int(rng.integers(2, 6))
        mode = trial % 4
        priors = [_random_prior(rng, k, length, stationary=mode != 1, zeros=trial % 3 == 0)]
        if mode >= 2:
            priors.append(_random_prior(rng, k, length, stationary=mode == 2, zeros=trial % 5 == 0))
        curve = influence_curve(priors)
        _assert_curve_equal(curve.a, brute_influence_all(_as_plain(priors)))


def test_sup_over_theta_is_inside_the_min():
    """Two priors whose best splits differ: one split for all θ gives more than the max of the two curves."""
    rng = np.random.default_rng(42)
    for _ in range(20):
        p1 = _random_prior(rng, 3, 5)
        p2 = _random_prior(rng, 3, 5)
        joint = influence_curve([p1, p2]).a
        separate = np.maximum(influence_curve(p1).a, influence_curve(p2).a)
        assert np.all(joint >= separate - 1e-12)


def test_zero_probabilities_give_inf_exactly_where_the_definition_does():
    cyclic = MarkovChainPrior([[0, 1, 0], [0, 0, 1], [1, 0, 0]], length=5)
    curve = influence_curve(cyclic)
    # any L node pins down the secret; only H = everything hides it
    assert list(curve.a) == [math.inf, math.inf, math.inf, math.inf, 0.0]
    _assert_curve_equal(curve.a, brute_influence_all(_as_plain([cyclic])))
    # one forbidden transition: finite once both sides can be cut
    p = MarkovChainPrior([[0.5, 0.5], [1.0, 0.0]], length=6)
    _assert_curve_equal(influence_curve(p).a, brute_influence_all(_as_plain([p])))


@given(p=st.floats(0.02, 0.98), q=st.floats(0.02, 0.98), max_b=st.integers(1, 12))
@settings(max_examples=60, deadline=None)
def test_binary_closed_form_equals_exact_curve_when_positively_correlated(p, q, max_b):
    if p + q <= 1.0 + 1e-6:
        p, q = max(p, q), min(0.98, 1.02 - min(p, q) + 0.01)
    closed = binary_chain_curve(p, q, max_b, length=2 * max_b + 1)
    exact = influence_curve(MarkovChainPrior([[p, 1 - p], [1 - q, q]], length=2 * max_b + 1), max_b=max_b)
    np.testing.assert_allclose(closed.a, exact.a, rtol=1e-9, atol=1e-9)


def test_binary_closed_form_paper_example_value():
    """[C] Example 3 by hand: p = q = 0.9, b = 1 → dL = dR = 1, π = 1/2, λ = 0.8: 2·log(0.9/0.1)."""
    curve = binary_chain_curve(0.9, 0.9, 1, length=3)
    assert curve.a[0] == pytest.approx(2 * math.log(9.0), abs=1e-12)


@given(prior=chains(), extra=st.integers(0, 4))
@settings(max_examples=80, deadline=None)
def test_properties_non_increasing_zero_at_length_no_nan(prior, extra):
    curve = influence_curve(prior, max_b=prior.length + extra)
    a = curve.a
    assert not np.any(np.isnan(a))
    assert np.all(a >= 0)
    assert np.all(a[1:] <= a[:-1] + 1e-12)
    assert np.all(a[prior.length - 1 :] == 0.0)
    assert curve.at(prior.length + 10) == 0.0


@given(prior=chains(max_k=4, max_len=7), seed=st.integers(0, 10_000))
@settings(max_examples=40, deadline=None)
def test_relabelling_states_leaves_the_curve_unchanged(prior, seed):
    perm = np.random.default_rng(seed).permutation(prior.n_states)
    inv = np.argsort(perm)
    relabelled = MarkovChainPrior(
        prior.transition[np.ix_(inv, inv)],
        None if prior.stationary_initial else prior.initial[inv],
        length=prior.length,
    )
    _assert_curve_equal(influence_curve(relabelled).a, influence_curve(prior).a)


def test_long_stationary_chain_middle_node_and_max_b():
    rng = np.random.default_rng(3)
    transition = random_chain(rng, 4)
    long = influence_curve(MarkovChainPrior(transition, length=61), max_b=30)
    longer = influence_curve(MarkovChainPrior(transition, length=200), max_b=30)
    np.testing.assert_allclose(long.a, longer.a, atol=1e-12)  # T ≥ 2b+1: the middle node decides
    short = influence_curve(MarkovChainPrior(transition, length=20))
    assert short.max_b == 20 and short.at(20) == 0.0
    assert np.all(short.a <= longer.a[:20] + 1e-12)  # a shorter chain leaks no more


def test_at_beyond_computed_range_is_an_upper_bound():
    rng = np.random.default_rng(4)
    prior = MarkovChainPrior(random_chain(rng, 3), length=30)
    partial = influence_curve(prior, max_b=5)
    full = influence_curve(prior)
    for b in range(1, 35):
        assert partial.at(b) >= full.at(b) - 1e-12
    assert partial.at(30) == 0.0


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: influence_curve([]), "empty"),
        (lambda: influence_curve("matrix"), "expected a MarkovChainPrior"),
        (lambda: influence_curve(MarkovChainPrior([[0.5, 0.5], [0.5, 0.5]], length=3), max_b=0), "max_b"),
        (
            lambda: influence_curve(
                [MarkovChainPrior([[0.5, 0.5], [0.5, 0.5]]), MarkovChainPrior(np.full((3, 3), 1 / 3))]
            ),
            "same number of states",
        ),
        (lambda: binary_chain_curve(1.2, 0.5, 3, 7), "between 0 and 1"),
        (lambda: binary_chain_curve(0.5, 0.5, 0, 7), "max_b"),
    ],
)
def test_bad_parameters_raise_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@given(p=st.floats(0.01, 0.99), q=st.floats(0.01, 0.99), max_b=st.integers(1, 10))
@settings(max_examples=80, deadline=None)
def test_binary_closed_form_is_conservative_when_negatively_correlated(p, q, max_b):
    """docs/math.md §2.2: for λ < 0 the paper's absolute values are not exact; they never fall below §2.1."""
    if p + q >= 1.0:
        p, q = 1.0 - p, 1.0 - q
    if p + q >= 1.0 - 1e-9:
        return
    closed = binary_chain_curve(p, q, max_b, length=2 * max_b + 1)
    exact = influence_curve(MarkovChainPrior([[p, 1 - p], [1 - q, q]], length=2 * max_b + 1), max_b=max_b)
    assert np.all(closed.a >= exact.a - 1e-9)


def test_probabilities_that_underflow_are_refused_not_dropped():
    """A positive probability rounded to 0 would silently drop a secret: refuse instead."""
    t = 1e-160  # two such steps in a row: 1e-320, below what float64 holds exactly
    prior = MarkovChainPrior([[1 - t, t, 0.0], [0.0, 1 - t, t], [1.0, 0.0, 0.0]], initial=[1.0, 0.0, 0.0], length=4)
    with pytest.raises(ValueError, match="double precision"):
        influence_curve(prior)
    # representable tiny probabilities are kept and give the exact (huge) leakage
    small = MarkovChainPrior([[0.5, 0.5], [1e-200, 1 - 1e-200]], length=2)
    _assert_curve_equal(influence_curve(small).a, brute_influence_all(_as_plain([small])))
    assert influence_curve(small).a[0] > 400


def test_closed_form_respects_the_chain_length():
    curve = binary_chain_curve(0.9, 0.8, 10, length=6)
    assert curve.length == 6 and np.all(curve.a[5:] == 0.0)
    exact = influence_curve(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=6), max_b=10)
    assert np.all(curve.a >= exact.a - 1e-12)  # the middle-node value bounds every node of a short chain
    with pytest.raises(ValueError, match="length"):
        binary_chain_curve(0.9, 0.8, 3, length=0)
