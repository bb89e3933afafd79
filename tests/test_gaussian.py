"""Gaussian-process curves (docs/math.md §2.3, [C] Example 4 and Figure 3b)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from puffer_core import GaussianProcessPrior, influence_curve
from puffer_core.gaussian import log_interval_probability


def test_curves_fall_with_b_and_rise_with_length_scale_like_figure_3b():
    scales = [0.5, 1, 2, 3, 5]
    curves = [influence_curve(GaussianProcessPrior(40, ell, gamma=5.0, delta=0.1)) for ell in scales]
    for c in curves:
        assert not np.any(np.isnan(c.a)) and np.all(np.isfinite(c.a))
        assert np.all(np.diff(c.a) <= 0)
        assert c.a[0] > 0 and c.at(40) == 0.0
    for lo, hi in zip(curves, curves[1:]):
        assert np.all(hi.a[:5] > lo.a[:5])  # longer correlation → more influence at small b
        assert np.all(hi.a >= lo.a - 1e-9)


def test_log_interval_probability_matches_scipy_and_survives_the_far_tail():
    lo = np.array([-3.0, -0.05, 0.5, 2.0])
    hi = lo + 0.1
    np.testing.assert_allclose(log_interval_probability(lo, hi), np.log(norm.cdf(hi) - norm.cdf(lo)), rtol=1e-12)
    far = log_interval_probability(np.array([40.0, -40.1]), np.array([40.1, -40.0]))
    # Mills ratio: log Pr(Z > 40) ≈ −40²/2 − log(40·√(2π)) − 1/40²; the interval [40, 40.1]
    # keeps a fraction 1 − e^(−40·0.1) of that tail
    expected = -800 - math.log(40 * math.sqrt(2 * math.pi)) - 1 / 1600 + math.log1p(-math.exp(-4.0))
    assert np.all(np.abs(far - expected) < 2e-3)
    assert np.all(np.isfinite(log_interval_probability(np.array([300.0]), np.array([300.1]))))


def _direct(prior: GaussianProcessPrior, b: int) -> float:
    """§2.3 on a plain grid with scipy.stats.norm, for moderate values (no shared code)."""
    n = prior.n
    idx = np.arange(n)
    cov = np.exp(-((idx[:, None] - idx[None, :]) ** 2) / prior.length_scale)
    c = (n + 1) // 2 - 1
    order = sorted(range(n), key=lambda i: (abs(i - c), i))
    low = sorted(order[b:])
    w = np.linalg.solve(cov[np.ix_(low, low)], cov[low, c])
    sigma = math.sqrt(cov[c, c] - w @ cov[low, c])
    bound = prior.gamma * np.abs(w).sum()
    r = np.linspace(-prior.gamma, prior.gamma - prior.delta, 2001)
    base = np.log(norm.cdf(r + prior.delta) - norm.cdf(r))
    best = 0.0
    for mu in np.linspace(-bound, bound, 201):
        f = np.log(norm.cdf((r + prior.delta - mu) / sigma) - norm.cdf((r - mu) / sigma)) - base
        best = max(best, f.max() - f.min())
    return best


@pytest.mark.parametrize("ell,b", [(0.5, 1), (0.5, 2), (1.0, 3), (1.0, 5)])
def test_small_gaussian_prior_matches_a_direct_grid(ell, b):
    prior = GaussianProcessPrior(9, ell)
    got = influence_curve(prior).at(b)
    want = _direct(prior, b)
    assert got >= want - 1e-6  # never below a finer independent grid
    assert got == pytest.approx(want, rel=1e-3)


def test_exponential_kernel_and_max_b():
    curve = influence_curve(GaussianProcessPrior(20, 2.0, kernel="exponential"), max_b=25)
    assert curve.max_b == 25 and curve.at(20) == 0.0 and curve.a[0] > curve.a[5] > 0
