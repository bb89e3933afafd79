"""Prior validation (docs/math.md §1, §2.3): clear messages for bad parameters."""

from __future__ import annotations

import numpy as np
import pytest

from puffer_core import GaussianProcessPrior, MarkovChainPrior, stationary_distribution


@pytest.mark.parametrize(
    "transition,kwargs,message",
    [
        ([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]], {}, "square"),
        ([[1.0]], {}, "at least 2 states"),
        ([[0.9, 0.1], [0.2, float("nan")]], {}, "not a finite number"),
        ([[1.1, -0.1], [0.2, 0.8]], {}, "cannot be negative"),
        ([[0.9, 0.1], [0.2, 0.6], [0.0, 1.0]], {}, "square"),
        ([[0.9, 0.07], [0.2, 0.8]], {}, "row 1 sums to 0.97; rows must sum to 1"),
        ([[0.5, 0.5], [0.5, 0.5]], {"length": 0}, "length must be at least 1"),
        ([[0.5, 0.5], [0.5, 0.5]], {"length": 2.5}, "whole number"),
        ([[0.5, 0.5], [0.5, 0.5]], {"initial": [0.3, 0.3]}, "initial distribution sums to 0.6"),
        ([[0.5, 0.5], [0.5, 0.5]], {"initial": [1.0, 0.0, 0.0]}, "needs 2 entries"),
        ([[0.5, 0.5], [0.5, 0.5]], {"labels": ["a"]}, "1 labels given for 2 states"),
        ([[0.5, 0.5], [0.5, 0.5]], {"labels": ["a", "a"]}, "distinct"),
        ([[1.0, 0.0], [0.0, 1.0]], {}, "no unique stationary distribution"),
        ("abc", {}, "numbers only"),
    ],
)
def test_bad_markov_priors_raise_readable_errors(transition, kwargs, message):
    with pytest.raises(ValueError, match=message):
        MarkovChainPrior(transition, **kwargs)


def test_row_three_message_counts_from_one():
    m = np.full((3, 3), 1 / 3)
    m[2] = [0.3, 0.3, 0.37]
    with pytest.raises(ValueError, match="row 3 sums to 0.97"):
        MarkovChainPrior(m)


def test_reducible_chain_is_fine_with_an_initial_distribution():
    prior = MarkovChainPrior([[1.0, 0.0], [0.0, 1.0]], initial=[0.5, 0.5], length=4)
    assert not prior.stationary_initial
    np.testing.assert_allclose(prior.marginals()[3], [0.5, 0.5])


def test_stationary_distribution_is_invariant_and_keeps_tiny_masses():
    rng = np.random.default_rng(0)
    m = rng.random((12, 12))
    m /= m.sum(axis=1, keepdims=True)
    pi = stationary_distribution(m)
    np.testing.assert_allclose(pi @ m, pi, atol=1e-15)
    tiny = stationary_distribution(np.array([[0.5, 0.5], [1e-250, 1.0]]))
    assert tiny[0] == pytest.approx(2e-250, rel=1e-12)  # π0 = 1e-250 / (0.5 + 1e-250)
    transient = stationary_distribution(np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.2, 0.2, 0.6]]))
    np.testing.assert_allclose(transient, [0.5, 0.5, 0.0])


def test_prior_is_immutable():
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]])
    with pytest.raises(ValueError):
        prior.transition[0, 0] = 0.5
    np.testing.assert_allclose(prior.stationary, [2 / 3, 1 / 3])


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"n": 0, "length_scale": 1.0}, "n"),
        ({"n": 10, "length_scale": -1.0}, "length_scale must be positive"),
        ({"n": 10, "length_scale": float("inf")}, "finite"),
        ({"n": 10, "length_scale": 1.0, "kernel": "matern"}, "kernel must be one of"),
        ({"n": 10, "length_scale": 1.0, "gamma": 0.0}, "gamma must be positive"),
        ({"n": 10, "length_scale": 1.0, "delta": 20.0}, "smaller than the range"),
    ],
)
def test_bad_gaussian_priors_raise_readable_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        GaussianProcessPrior(**kwargs)
