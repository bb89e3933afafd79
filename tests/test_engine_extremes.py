"""Never below the truth at the extremes, and refusals that come at once (the engine's extremes).

Each test failed before its fix.  References: brute-force enumeration (tests/support/brute.py), a
60-digit mpmath computation for the Gaussian-process curve.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from puffer_core import MarkovChainPrior, binary_chain_curve, influence_curve
from tests.support.brute import brute_influence_all


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


# --------------------------------------------------------------------------- Gaussian process, tiny δ


def _mp_spread(prior, b: int, points: int = 201) -> float:
    """max_r f − min_r f at μ = M on an r grid, every probability at 60 digits (mpmath; no shared code).

    A grid gives a value ≤ the true spread, so the reported curve must not be below it.  w and σ²
    are the exact kernel's (60-digit solve); M = γ‖w‖₁ (the spread is largest at |μ| = M).
    """
    import mpmath

    mpmath.mp.dps = 60
    n = prior.n
    c = (n + 1) // 2 - 1
    low = sorted(sorted(range(n), key=lambda i: (abs(i - c), i))[b:])

    def k(i, j):
        return mpmath.exp(-mpmath.mpf(i - j) ** 2 / prior.length_scale)

    s = mpmath.matrix([[k(i, j) for j in low] for i in low])
    rhs = mpmath.matrix([k(i, c) for i in low])
    w = mpmath.lu_solve(s, rhs)
    var = 1 - sum(rhs[i] * w[i] for i in range(len(low)))
    sd = mpmath.sqrt(var)
    mu = mpmath.mpf(prior.gamma) * sum(abs(x) for x in w)
    delta = mpmath.mpf(prior.delta)
    values = []
    for j in range(points):
        r = -mpmath.mpf(prior.gamma) + (2 * mpmath.mpf(prior.gamma) - delta) * j / (points - 1)
        cond = mpmath.ncdf((r + delta - mu) / sd) - mpmath.ncdf((r - mu) / sd)
        base = mpmath.ncdf(r + delta) - mpmath.ncdf(r)
        values.append(mpmath.log(cond) - mpmath.log(base))
    return float(max(values) - min(values))


@pytest.mark.parametrize("ell,delta,b", [(2.0, 1e-14, 3), (0.5, 1e-12, 1), (1.0, 1e-12, 2), (2.0, 1e-13, 1)])
def test_gaussian_curve_with_tiny_delta_is_not_below_a_60_digit_computation(ell, delta, b):
    from puffer_core import GaussianProcessPrior
    from puffer_core.secrets import Secrets

    prior = GaussianProcessPrior(9, ell, delta=delta)
    got = influence_curve(prior, secrets=Secrets(positions=(4,))).at(b)  # the centre, as _mp_spread
    assert influence_curve(prior).at(b) >= got  # the default takes every coordinate (docs/math.md §2.3)
    want = _mp_spread(prior, b)
    assert got >= want * (1 - 1e-12), f"{got} below the 60-digit value {want}"
    assert got <= want * (1 + 1e-3) + 1e-6  # and close to it


def test_gaussian_curve_with_tiny_delta_and_small_gamma_is_sane():
    """δ = 1e-15 with γ = 1 gave 3e263 (cancelled derivatives); as δ → 0 the curve tends to a density ratio."""
    from puffer_core import GaussianProcessPrior

    tiny = influence_curve(GaussianProcessPrior(9, 1.0, gamma=1.0, delta=1e-15)).a
    small = influence_curve(GaussianProcessPrior(9, 1.0, gamma=1.0, delta=1e-6)).a
    np.testing.assert_allclose(tiny, small, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"length_scale": 1e300}, "length_scale = 1e\\+300 is too large"),
        ({"length_scale": 2.0, "gamma": 1e308}, "gamma = 1e\\+308 is too large"),
        ({"length_scale": 2.0, "delta": 1e-300}, "delta = 1e-300 is too small"),
    ],
)
def test_gaussian_prior_refuses_extreme_parameters_with_a_message(kwargs, message):
    from puffer_core import GaussianProcessPrior

    with pytest.raises(ValueError, match=message):
        GaussianProcessPrior(9, **kwargs)
