"""The default Gaussian-process curve bounds every coordinate, not only [C]'s centre (docs/math.md §2.3, §16).

The reference here shares no code with the engine: each coordinate's conditional law from the covariance matrix
with numpy.linalg, the interval log-ratios on a plain grid with scipy.stats.norm.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from puffer_core import GaussianProcessPrior, influence_curve
from puffer_core.engine.gaussian import gaussian_estimate
from puffer_core.secrets import ALL_SECRETS, Secrets


def _covariance(n: int, ell: float, kernel: str) -> np.ndarray:
    d = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]).astype(float)
    return np.exp(-(d**2) / ell) if kernel == "squared_exponential" else np.exp(-d / ell)


def _log_interval(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """log Pr(Z ∈ [lo, hi]) from whichever tail keeps its digits."""
    with np.errstate(divide="ignore"):
        upper = norm.logsf(lo) + np.log1p(-np.exp(norm.logsf(hi) - norm.logsf(lo)))
        lower = norm.logcdf(hi) + np.log1p(-np.exp(norm.logcdf(lo) - norm.logcdf(hi)))
    return np.where(lo > 0, upper, lower)


def _spread(m: float, var: float, gamma: float, delta: float) -> float:
    """max over μ ∈ [−M, M] (a grid) of max_r f − min_r f, r on a grid of [−γ, γ − δ] (a lower approximation)."""
    sigma = math.sqrt(var)
    r = np.linspace(-gamma, gamma - delta, 4001)
    base = _log_interval(r, r + delta)
    best = 0.0
    for mu in np.linspace(-m, m, 9):
        f = _log_interval((r - mu) / sigma, (r + delta - mu) / sigma) - base
        best = max(best, float(f.max() - f.min()))
    return best


def _coordinate(cov: np.ndarray, i: int, b: int, gamma: float, delta: float) -> float:
    """a(b) of the secret at coordinate i with H = i and its b − 1 nearest coordinates (ties either way, the
    smaller kept), L the rest: x_i | x_L ~ N(w·x_L, σ²) from the Gaussian conditional."""
    n = cov.shape[0]
    if b >= n:
        return 0.0
    values = []
    for sign in (1, -1):
        order = sorted(range(n), key=lambda j: (abs(j - i), sign * j))
        low = sorted(order[b:])
        w = np.linalg.solve(cov[np.ix_(low, low)], cov[low, i])
        var = cov[i, i] - w @ cov[low, i]
        values.append(_spread(gamma * float(np.abs(w).sum()), var, gamma, delta))
    return min(values)


def _every_coordinate(prior: GaussianProcessPrior) -> tuple[np.ndarray, np.ndarray]:
    """(per-coordinate values (n, n), the default curve: the max over coordinates made non-increasing in b)."""
    cov = _covariance(prior.n, prior.length_scale, prior.kernel)
    table = np.array([[_coordinate(cov, i, b, prior.gamma, prior.delta) for b in range(1, prior.n + 1)]
                      for i in range(prior.n)])
    return table, np.minimum.accumulate(table.max(axis=0))


@pytest.mark.parametrize(
    "n,ell,kernel",
    [
        (9, 3.0, "squared_exponential"),  # the case of docs/math.md §16: coordinates 3 and 4 beat the centre
        (8, 2.0, "squared_exponential"),
        (11, 1.0, "squared_exponential"),
        (12, 0.5, "squared_exponential"),
        (10, 3.0, "exponential"),
        (7, 10.0, "exponential"),
    ],
)
def test_the_default_curve_is_the_maximum_over_every_coordinate(n, ell, kernel):
    prior = GaussianProcessPrior(n, ell, kernel=kernel)
    table, want = _every_coordinate(prior)
    # the mirror i ↔ n − 1 − i gives the same values (the engine computes one of each pair)
    np.testing.assert_allclose(table, table[::-1], rtol=1e-6, atol=1e-9)
    got = influence_curve(prior).a
    assert np.all(got >= want - 1e-6 * (1 + want))  # never below: the engine's values are certified upper bounds
    assert np.all(got <= want * (1 + 1e-3) + 1e-4)  # and close to the grid's
    assert np.array_equal(influence_curve(prior, secrets=ALL_SECRETS).a, got)
    assert np.array_equal(influence_curve(prior, secrets=Secrets(positions=range(n))).a, got)


def test_the_centre_alone_is_below_the_truth_for_n9_and_length_scale_3():
    """The numbers of the bug: coordinate 3 at b = 3 and coordinate 4 at b = 5 leak more than the centre."""
    prior = GaussianProcessPrior(9, 3.0)
    table, _ = _every_coordinate(prior)
    assert table[2, 2] == pytest.approx(182.38, abs=0.01) and table[4, 2] == pytest.approx(181.13, abs=0.01)
    assert table[3, 4] == pytest.approx(17.83, abs=0.01) and table[4, 4] == pytest.approx(15.83, abs=0.01)
    curve = influence_curve(prior)
    centre = influence_curve(prior, secrets=Secrets(positions=(4,)))
    assert curve.at(3) >= 182.38 > centre.at(3) + 1
    assert curve.at(5) >= 17.83 > centre.at(5) + 1


def test_at_mid_range_b_an_end_coordinate_leaks_far_more_than_the_centre():
    """n = 31, ℓ = 16, b = 22: the centre's L holds both ends; an end coordinate's L is one block far away."""
    prior = GaussianProcessPrior(31, 16.0)
    centre = influence_curve(prior, secrets=Secrets(positions=(15,))).at(22)
    assert influence_curve(prior).at(22) > 10 * centre


@given(
    n=st.integers(2, 13),
    ell=st.floats(0.3, 4.0),
    kernel=st.sampled_from(["squared_exponential", "exponential"]),
    gamma=st.floats(1.0, 6.0),
    delta=st.floats(0.01, 0.5),
)
@settings(max_examples=25, deadline=None)
def test_the_default_curve_is_never_below_any_coordinates_curve(n, ell, kernel, gamma, delta):
    prior = GaussianProcessPrior(n, ell, kernel=kernel, gamma=gamma, delta=delta)
    every = influence_curve(prior).a
    assert not np.any(np.isnan(every)) and np.all(np.diff(every) <= 0)
    for i in range(n):
        one = influence_curve(prior, secrets=Secrets(positions=(i,))).a
        # both are certified upper bounds; they may differ by the spread's refinement tolerance (R_TOL, R_ABS)
        assert np.all(every >= one - 1e-6 * (1 + np.abs(one)))


def test_the_estimate_counts_every_coordinate_and_refuses_honestly():
    """The default costs ⌈n/2⌉ factorisations; beyond the limit it is refused with an n that fits."""
    prior = GaussianProcessPrior(5000, 3.0)
    every = gaussian_estimate(prior)
    one = gaussian_estimate(prior, None, [2500])
    assert one.fits and not every.fits
    assert every.units["product"] >= 2500 * one.units["product"] * 0.99
    assert "protect fewer coordinates" in every.message
    assert gaussian_estimate(GaussianProcessPrior(every.largest["n"], 3.0)).fits
    with pytest.raises(ValueError, match="out of reach"):
        influence_curve(prior)
    with pytest.raises(ValueError, match="coordinates must be"):
        gaussian_estimate(GaussianProcessPrior(9, 1.0), None, [9])


def test_more_undominated_laws_than_estimated_are_estimated_again_and_refused_when_out_of_reach(monkeypatch):
    """The up-front estimate models a few undominated laws per b; more are re-estimated before the spreads."""
    prior = GaussianProcessPrior(30, 3.0)
    want = influence_curve(prior).a
    monkeypatch.setattr("puffer_core.engine.gaussian._FRONT", 0)  # every law is now more than modelled
    assert np.array_equal(influence_curve(prior).a, want)
    monkeypatch.setattr("puffer_core.engine.gaussian._SPREAD_FLOPS", 1e12)
    with pytest.raises(ValueError, match="out of reach.*undominated laws"):
        influence_curve(prior)
