"""Contracts nothing else checked: invariants a mutation of the code would break silently.

- ``check_rows`` hands back rows that are probability distributions exactly (each divided by its sum), so
  a matrix typed with rows a hair off 1 (within the tolerance) never carries the error into a prior, an
  emission or a backward matrix;
- the non-stationary TPL shortcut (the stationary backward front once p_t is within 1e-12 of π) adds its
  slack 2·log ρ_t, never subtracts it: ρ_t recomputed here from the marginals and π found independently
  (numpy's eigenvectors), and the BPL it gives never below the definition computed with Bayes' rule.
"""

from __future__ import annotations

import math

import numpy as np

from puffer_core import MarkovChainPrior, temporal_privacy_leakage
from puffer_core.mechanisms.laws import check_emissions
from puffer_core.stream.checks import check_row_stochastic
from puffer_core.stream.tpl import prepare_fronts
from puffer_core.validation import PROBABILITY_TOLERANCE, check_rows
from tests.support import brute_stream

OFF = 0.6 * PROBABILITY_TOLERANCE  # rows this far from summing to 1 are accepted, and must be normalised


def _off_rows() -> np.ndarray:
    rows = np.array([[0.3, 0.7], [0.55, 0.45], [0.2, 0.8]])
    return rows * (1 + OFF * np.array([[1.0], [-1.0], [1.0]]))


def test_check_rows_returns_exact_distributions() -> None:
    rows = _off_rows()
    assert np.all(np.abs(rows.sum(axis=1) - 1) > 0.5 * OFF)  # the input is off by about OFF
    got = check_rows(rows, "an emission", square=False)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=0, atol=4e-16)
    np.testing.assert_allclose(got, rows / rows.sum(axis=1, keepdims=True), rtol=1e-15)


def test_every_matrix_a_user_types_reaches_the_library_normalised() -> None:
    square = np.array([[0.9, 0.1], [0.25, 0.75]]) * (1 + OFF * np.array([[1.0], [-1.0]]))
    for matrix in (check_row_stochastic("Q", square), check_emissions(_off_rows(), 3, 4)[0]):
        np.testing.assert_allclose(np.asarray(matrix).sum(axis=1), 1.0, rtol=0, atol=4e-16)
    prior = MarkovChainPrior(square, None, 5)
    np.testing.assert_allclose(np.asarray(prior.transition).sum(axis=1), 1.0, rtol=0, atol=4e-16)


def _converging() -> tuple[MarkovChainPrior, list[list[float]]]:
    transition = [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4]]
    return MarkovChainPrior(transition, [1.0, 0.0, 0.0], 60), transition


def test_the_tpl_shortcut_adds_its_slack() -> None:
    prior, transition = _converging()
    (fronts,) = prepare_fronts([prior])
    assert fronts.shortcut_steps > 0
    values, vectors = np.linalg.eig(np.array(transition).T)
    pi = np.real(vectors[:, np.argmin(np.abs(values - 1))])
    pi /= pi.sum()
    marginals = np.asarray(prior.marginals())
    ratio = marginals / pi
    high, low = ratio.max(axis=1), ratio.min(axis=1)
    rho = np.maximum(high[:-1] / low[1:], high[1:] / low[:-1])
    shortcut = np.flatnonzero(fronts.backward_slack)  # steps t = 2..T that use the stationary front
    assert shortcut.size == fronts.shortcut_steps
    assert np.all(fronts.backward_slack >= 0)  # a slack is added to what the stationary front says, never taken off
    for s in shortcut:  # and it covers ρ_t (π found here differs from the library's by rounding: 2e-15)
        assert fronts.backward_slack[s] >= 2 * math.log(max(rho[s], 1.0)) - 2e-15


def test_the_tpl_shortcut_never_goes_below_the_definition() -> None:
    prior, transition = _converging()
    eps = [0.7] * 60
    got = temporal_privacy_leakage(prior, eps)
    bpl, _, _ = brute_stream.tpl_recursion(transition, [1.0, 0.0, 0.0], 60, eps)
    # the brute recursion rounds too: a few ulps of each step, far below the slack the shortcut adds (≥ 1e-15)
    assert np.all(got.bpl >= np.array(bpl) * (1 - 4e-16) - 1e-15)
