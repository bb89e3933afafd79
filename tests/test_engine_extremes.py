"""Never below the truth at the extremes, and refusals that come at once (issue: extremes of the engine).

Each test failed before its fix.  References: brute-force enumeration (tests/brute.py), a
60-digit mpmath computation for the Gaussian-process curve.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from puffer_core import MarkovChainPrior, binary_chain_curve, influence_curve
from tests.brute import brute_influence_all


def _brute_binary(p: float, q: float, length: int) -> np.ndarray:
    prior = MarkovChainPrior([[p, 1 - p], [1 - q, q]], length=length)
    return np.array(brute_influence_all([(prior.transition.tolist(), prior.initial.tolist(), length)]))


@pytest.mark.parametrize("p,q", [(0.0, 0.05), (0.05, 0.0), (1e-15, 0.05), (0.0, 0.0), (1.0, 0.3)])
def test_binary_closed_form_is_never_below_brute_force_with_zeros_or_tiny_probabilities(p, q):
    closed = binary_chain_curve(p, q, 7, 8).a
    exact = _brute_binary(p, q, 8)[:7]
    assert np.all(np.isinf(closed) | ~np.isinf(exact)), f"finite where the truth is +inf: {closed} vs {exact}"
    finite = np.isfinite(exact)
    assert np.all(closed[finite] >= exact[finite] * (1 - 1e-12) - 1e-12), f"{closed} below {exact}"


def test_binary_closed_form_is_never_below_the_engine_with_a_tiny_probability():
    """1e-50: too small for enumeration (sequence probabilities underflow); the §2.1 engine keeps it."""
    closed = binary_chain_curve(0.3, 1e-50, 5, 8).a
    exact = influence_curve(MarkovChainPrior([[0.3, 0.7], [1 - 1e-50, 1e-50]], length=8), max_b=5).a
    assert np.all(closed >= exact * (1 - 1e-12))


def test_binary_closed_form_refuses_probabilities_that_underflow():
    with pytest.raises(ValueError, match="double precision"):
        binary_chain_curve(1e-200, 1.0, 7, 8)  # P²[0, 0] = 1e-400


def test_binary_closed_form_the_audit_values():
    assert list(binary_chain_curve(0.0, 0.05, 2, 8).a) == [math.inf, math.inf]
    assert binary_chain_curve(1e-15, 0.05, 2, 8).at(1) == pytest.approx(68.9749662, abs=1e-6)


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), "0.5", None])
def test_binary_closed_form_refuses_booleans_and_non_numbers(bad):
    with pytest.raises(ValueError, match="p must be a probability"):
        binary_chain_curve(bad, 0.7, 5, 20)
    with pytest.raises(ValueError, match="max_b"):
        binary_chain_curve(0.5, 0.7, True, 20)


def test_binary_closed_form_equals_the_exact_engine_where_the_paper_is_exact():
    for p, q in [(0.9, 0.8), (0.6, 0.7), (0.99, 0.999)]:
        closed = binary_chain_curve(p, q, 9, 19).a
        exact = influence_curve(MarkovChainPrior([[p, 1 - p], [1 - q, q]], length=19), max_b=9).a
        np.testing.assert_allclose(closed, exact, rtol=1e-9, atol=1e-12)
