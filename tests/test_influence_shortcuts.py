"""The fast a(b) engine against the unpruned computation (docs/math.md §2.1) on chains of every kind.

``tests/support/brute.py:reference_curve`` evaluates every node, pair, prior and H with each node's own
marginals, no cutoff, no far-node bound and no pruning.  The engine may only be above it, by
at most 1e-9 (its tail and far-node bounds), never below (beyond rounding, 1e-11 relative).
Each case also checks, by an independent computation, that the shortcut it is meant to
exercise really applies (a cutoff before the longest distance, far nodes before the end).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puffer_core import MarkovChainPrior, influence_curve
from tests.support.brute import brute_influence_all, converged_from, cutoff_distance, reference_curve
from tests.support.location_chains import banded, grid, ring
from tests.support.strategies import prior_of_kind, small_theta


def _plain(priors):
    return [(p.transition.tolist(), p.initial.tolist(), p.length) for p in priors]


def _assert_sound_and_tight(got, want):
    got, want = np.asarray(got, float), np.asarray(want, float)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=f"+inf differs: {got} vs {want}")
    fin = np.isfinite(want)
    scale = 1 + np.abs(want[fin])
    below = want[fin] - got[fin]
    assert np.all(below <= 1e-11 * scale), f"below the definition by {below.max():.3g}"
    assert np.all(got[fin] - want[fin] <= 1e-9 * scale), f"above by {(got[fin] - want[fin]).max():.3g}"


@pytest.mark.parametrize("kind", ["fast", "dense", "sticky", "sparse", "near-periodic", "periodic"])
@pytest.mark.parametrize("seed", [0, 1])
def test_stationary_chains_of_every_kind(kind, seed):
    rng = np.random.default_rng(seed)
    prior = prior_of_kind(rng, kind, 3 + seed, 45)
    curve = influence_curve(prior)
    _assert_sound_and_tight(curve.a, reference_curve(_plain([prior]), prior.length))


def test_the_cutoff_and_its_constant_tail_are_exercised():
    """A fast-mixing chain stops its tables early and fills large b from a(2D − 1)."""
    rng = np.random.default_rng(5)
    prior = prior_of_kind(rng, "fast", 3, 60)
    d = cutoff_distance(prior.transition, prior.initial > 0)
    assert d is not None and 2 * d - 1 < 59  # the tail beyond 2D − 1 is filled, not computed
    _assert_sound_and_tight(influence_curve(prior).a, reference_curve(_plain([prior]), 60))


@pytest.mark.parametrize(
    "kind,initial,length",
    [
        ("fast", "random", 60),  # far nodes bounded by the stationary evaluation
        ("fast", "0", 60),  # starts in one state
        ("sparse", "0", 50),  # the support of p_t grows step by step (several left supports)
        ("sticky", "random", 40),  # converges after the chain ends: every node on its own
        ("periodic", "0", 30),  # supports alternate forever: no far nodes
        ("transient", "0", 40),  # mass on a state π does not have: no bound applies
        ("transient", "random", 40),
    ],
)
def test_non_stationary_chains(kind, initial, length):
    rng = np.random.default_rng(len(kind) + length)
    prior = prior_of_kind(rng, kind, 3, length, initial)
    if kind == "fast":
        t_eta = converged_from(prior)
        depth = cutoff_distance(prior.transition, np.ones(3, bool))
        assert t_eta is not None and t_eta + depth < length  # far nodes exist
    _assert_sound_and_tight(influence_curve(prior).a, reference_curve(_plain([prior]), length))


@pytest.mark.parametrize("seed", range(4))
def test_theta_of_several_kinds_lengths_and_starts(seed):
    rng = np.random.default_rng(40 + seed)
    kinds = ["fast", "dense", "sparse", "sticky", "near-periodic"]
    priors = [
        prior_of_kind(rng, kinds[(seed + i) % len(kinds)], 3, length, initial)
        for i, (length, initial) in enumerate([(36, None), (30, "random"), (24, None), (33, "0")][: 2 + seed % 3])
    ]
    curve = influence_curve(priors)
    _assert_sound_and_tight(curve.a, reference_curve(_plain(priors), curve.max_b))


def test_theta_with_a_short_exact_prior_and_a_mixing_long_one():
    """A short prior with no cutoff keeps every b computed even though the long one mixes."""
    rng = np.random.default_rng(9)
    priors = [prior_of_kind(rng, "fast", 3, 50), prior_of_kind(rng, "near-periodic", 3, 12, "random")]
    _assert_sound_and_tight(influence_curve(priors).a, reference_curve(_plain(priors), 50))


def test_max_b_below_the_length():
    rng = np.random.default_rng(12)
    prior = prior_of_kind(rng, "sticky", 4, 40, "random")
    _assert_sound_and_tight(influence_curve(prior, max_b=9).a, reference_curve(_plain([prior]), 9))


@given(priors=small_theta(), extra=st.integers(0, 3))
@settings(max_examples=60, deadline=None)
def test_random_small_theta_against_the_unpruned_computation(priors, extra):
    t_max = max(p.length for p in priors)
    got = influence_curve(priors, max_b=t_max + extra).a
    _assert_sound_and_tight(got, reference_curve(_plain(priors), t_max + extra))


def test_reference_agrees_with_brute_force():
    """The unpruned reference is itself checked against enumeration on chains small enough for both."""
    rng = np.random.default_rng(77)
    for kind in ("dense", "sparse", "transient", "periodic"):
        priors = [prior_of_kind(rng, kind, 3, 5, "random"), prior_of_kind(rng, "sticky", 3, 4)]
        want = np.array(brute_influence_all(_plain(priors)))
        got = reference_curve(_plain(priors), 5)
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
        np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=0, atol=1e-10)


def test_chain_without_a_unique_stationary_law():
    """Two closed classes and a start in both: no far nodes, no bounds; every node and pair evaluated."""
    block = np.zeros((4, 4))
    block[:2, :2] = [[0.7, 0.3], [0.4, 0.6]]
    block[2:, 2:] = [[0.2, 0.8], [0.5, 0.5]]
    prior = MarkovChainPrior(block, [0.1, 0.4, 0.3, 0.2], length=20)
    other = MarkovChainPrior(np.full((4, 4), 0.25), length=15)
    for priors in ([prior], [prior, other]):
        curve = influence_curve(priors)
        _assert_sound_and_tight(curve.a, reference_curve(_plain(priors), curve.max_b))


# --------------------------------------------------------------------------------------------
# location priors: rings, city grids, roads, and chains fitted with unseen transitions
# (P^d has structural zeros for d below the diameter, so a(b) = ∞ for small b: correct, and kept)


def _fitted(rng, k, users, steps):
    """The chain fitted (τ = 1e-5) to walks on a ring: most transitions never seen, held at τ."""
    import pandas as pd

    from puffer_core import fit_markov_chain, load_sequences

    true = ring(rng, k, 1)
    walks = np.zeros((users, steps), dtype=int)
    walks[:, 0] = rng.integers(0, k, users)
    for t in range(1, steps):
        walks[:, t] = [rng.choice(k, p=true[s]) for s in walks[:, t - 1]]
    frame = pd.DataFrame(
        {"user": np.repeat(np.arange(users), steps), "time": np.tile(np.arange(steps), users), "state": walks.ravel()}
    )
    return fit_markov_chain(load_sequences(frame), length=steps)


@pytest.mark.parametrize(
    "name, build, length, start",
    [
        ("ring of 7, moves ≤ 1", lambda rng: ring(rng, 7, 1), 30, None),
        ("ring of 8, moves ≤ 2, from one place", lambda rng: ring(rng, 8, 2), 12, "0"),
        ("grid 3 × 3", lambda rng: grid(rng, 9), 30, None),
        ("grid 3 × 3 from a random start", lambda rng: grid(rng, 9), 20, "random"),
        ("road of 8, moves ≤ 1", lambda rng: banded(rng, 8, 1), 30, None),
    ],
)
def test_location_priors_against_the_unpruned_computation(name, build, length, start):
    rng = np.random.default_rng(len(name))
    prior = _prior_of(rng, build(rng), length, start)
    curve = influence_curve(prior)
    want = reference_curve(_plain([prior]), curve.max_b)
    _assert_sound_and_tight(curve.a, want)
    assert np.isinf(want[0]), f"{name}: a(1) must be ∞ (P has zeros: one entry rules its neighbours out)"


def _prior_of(rng, transition, length, start):
    k = len(transition)
    if start is None:
        return MarkovChainPrior(transition, length=length)
    initial = rng.dirichlet(np.ones(k)) if start == "random" else np.eye(k)[int(start)]
    return MarkovChainPrior(transition, initial, length=length)


def test_a_chain_fitted_with_unseen_transitions_against_the_unpruned_computation():
    rng = np.random.default_rng(3)
    prior = _fitted(rng, 6, users=12, steps=25)
    assert (prior.transition <= 1e-4).sum() >= 6, "the fit must leave transitions unseen (held at τ)"
    curve = influence_curve(prior)
    _assert_sound_and_tight(curve.a, reference_curve(_plain([prior]), curve.max_b))
    assert np.all(np.isfinite(curve.a)) and curve.a[0] > 10  # τ = 1e-5: large but finite


def test_location_priors_in_a_theta_against_the_unpruned_computation():
    rng = np.random.default_rng(11)
    priors = [
        MarkovChainPrior(ring(rng, 6, 1), length=18),
        MarkovChainPrior(banded(rng, 6, 2), np.eye(6)[0], length=18),
        _fitted(rng, 6, users=10, steps=18),
    ]
    curve = influence_curve(priors)
    _assert_sound_and_tight(curve.a, reference_curve(_plain(priors), curve.max_b))


def test_tiny_ring_and_road_against_brute_force():
    """The definition itself, by enumeration, on location chains small enough for it."""
    rng = np.random.default_rng(5)
    for transition in (ring(rng, 4, 1), banded(rng, 4, 1)):
        priors = [MarkovChainPrior(transition, length=5)]
        want = np.array(brute_influence_all(_plain(priors)))
        got = influence_curve(priors).a
        _assert_sound_and_tight(got, want)
