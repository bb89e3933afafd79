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


def test_a_stationary_distribution_out_of_reach_is_refused_before_the_elimination(monkeypatch: pytest.MonkeyPatch):
    """K = 3000 spent 40 s in GTH elimination before the engine refused the prior at once."""
    from puffer_core.priors import models

    def eliminate(transition: np.ndarray) -> np.ndarray:
        raise AssertionError(f"GTH ran on {transition.shape[0]} states before the refusal")

    monkeypatch.setattr(models, "_gth", eliminate)
    k = 3000
    uniform = np.full((k, k), 1.0 / k)
    with pytest.raises(ValueError, match="stationary distribution of 3,000 states needs about .* give an initial"):
        MarkovChainPrior(uniform, length=10)
    with pytest.raises(ValueError, match="at most 1,000 states"):
        stationary_distribution(uniform)
    assert MarkovChainPrior(uniform, np.eye(k)[0], length=10).n_states == k  # with a start: no elimination


@pytest.mark.parametrize(
    "transition,message",
    [
        ([[float("nan"), 1.0], [0.5, 0.5]], "not a finite number"),
        ([[float("inf"), 0.0], [0.5, 0.5]], "not a finite number"),
        ([[-0.5, 1.5], [0.5, 0.5]], "cannot be negative"),
        ([[0.6, 0.6], [0.5, 0.5]], "row 1 sums to 1.2"),
        (None, "numbers only"),
        ([[0.5, 0.5], [0.5]], "same length"),
    ],
)
def test_stationary_distribution_refuses_what_is_not_a_transition_matrix(transition, message):
    """It returned [0.5, 0.5], [0.4, 0.6], … for NaN, inf, negative entries and rows summing to 1.2."""
    with pytest.raises(ValueError, match=message):
        stationary_distribution(transition)


def test_stationary_distribution_takes_a_list_of_lists():
    """A list (not an array) raised AttributeError."""
    np.testing.assert_allclose(stationary_distribution([[0.9, 0.1], [0.2, 0.8]]), [2 / 3, 1 / 3], rtol=1e-15)
