"""Gaussian-process curves (docs/math.md §2.3, [C] Example 4 and Figure 3b)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from puffer_core import GaussianProcessPrior, influence_curve
from puffer_core.engine.gaussian import log_interval_probability
from puffer_core.secrets import Secrets


def _centre_curve(prior: GaussianProcessPrior):
    """The curve of [C] Theorem 5's centre coordinate alone (the default takes every coordinate, docs/math.md §2.3)."""
    return influence_curve(prior, secrets=Secrets(positions=((prior.n + 1) // 2 - 1,)))


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


def test_log_interval_probability_against_40_digits_for_every_width_and_tail():
    """Narrow intervals (hazard quadrature), wide ones (erfcx), both tails and around 0 (mpmath, no shared code)."""
    import mpmath

    mpmath.mp.dps = 40
    widths = [1e-14, 1e-9, 1e-4, 0.03, 0.1, 0.19, 0.21, 0.5, 1.0, 1.25, 3.0]
    starts = [-45.0, -7.0, -1.0, -0.1, 0.0, 0.05, 0.7, 2.0, 6.0, 19.0, 37.5]
    lo = np.array([a for a in starts for _ in widths])
    width = np.array([w for _ in starts for w in widths])
    got = log_interval_probability(lo, lo + width, width)
    for a, w, g in zip(lo, width, got):
        q = mpmath.ncdf(mpmath.mpf(a) + mpmath.mpf(w)) - mpmath.ncdf(mpmath.mpf(a))
        want = float(mpmath.log(q))
        assert abs(g - want) <= 1e-13 * max(1.0, abs(want)), (a, w, g, want)


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
    got = _centre_curve(prior).at(b)
    want = _direct(prior, b)
    assert influence_curve(prior).at(b) >= got
    assert got >= want - 1e-6  # never below a finer independent grid
    assert got == pytest.approx(want, rel=1e-3)


def test_exponential_kernel_and_max_b():
    curve = influence_curve(GaussianProcessPrior(20, 2.0, kernel="exponential"), max_b=25)
    assert curve.max_b == 25 and curve.at(20) == 0.0 and curve.a[0] > curve.a[5] > 0


def _exact_conditional(n: int, ell: float, kernel: str, b: int, order: str = "lower", dps: int = 60):
    """(‖w‖₁, σ²) of x_i* given the n − b farthest coordinates, for the exact kernel at ``dps`` digits (mpmath)."""
    import mpmath

    mpmath.mp.dps = dps
    c = (n + 1) // 2 - 1
    key = (lambda i: (abs(i - c), i)) if order == "lower" else (lambda i: (abs(i - c), -i))
    low = sorted(sorted(range(n), key=key)[b:])

    def k(i, j):
        d = mpmath.mpf(abs(i - j))
        return mpmath.exp(-(d**2) / ell) if kernel == "squared_exponential" else mpmath.exp(-d / ell)

    s = mpmath.matrix([[k(i, j) for j in low] for i in low])
    rhs = mpmath.matrix([k(i, c) for i in low])
    w = mpmath.lu_solve(s, rhs)
    var = 1 - sum(rhs[i] * w[i] for i in range(len(low)))
    return float(sum(abs(x) for x in w)), float(var)


def _spread_on_grid(m: float, var: float, gamma: float, delta: float) -> float:
    """max over a μ grid in [−M, M] of the r-grid spread of f, with scipy only (a lower approximation)."""
    sigma = math.sqrt(var)
    r = np.linspace(-gamma, gamma - delta, 4001)

    def log_interval(lo, hi):
        # log(Φ(hi) − Φ(lo)) via the tail that keeps precision
        with np.errstate(divide="ignore"):
            upper = norm.logsf(lo) + np.log1p(-np.exp(norm.logsf(hi) - norm.logsf(lo)))
            lower = norm.logcdf(hi) + np.log1p(-np.exp(norm.logcdf(lo) - norm.logcdf(hi)))
        return np.where(lo > 0, upper, lower)

    base = log_interval(r, r + delta)
    best = 0.0
    for mu in np.linspace(-m, m, 41):
        f = log_interval((r - mu) / sigma, (r + delta - mu) / sigma) - base
        best = max(best, float(f.max() - f.min()))
    return best


@pytest.mark.parametrize(
    "n,ell,kernel,b",
    [
        (31, 4.0, "squared_exponential", 9),  # the audit's case: 16.744310130 at 60 digits
        (31, 4.0, "squared_exponential", 2),
        (31, 2.0, "squared_exponential", 1),
        (21, 6.0, "squared_exponential", 8),
        (31, 16.0, "squared_exponential", 22),
        (25, 3.0, "exponential", 1),
        (25, 30.0, "exponential", 6),
        # even n: the second order (ties higher-first) is derived from the first's factor
        (30, 4.0, "squared_exponential", 2),
        (30, 4.0, "squared_exponential", 9),
        (30, 16.0, "squared_exponential", 10),
        (24, 3.0, "exponential", 4),
    ],
)
def test_gaussian_curve_is_never_below_the_exact_kernel(n, ell, kernel, b):
    """Against a 60-digit solve of the exact kernel (no nugget): the reported a(b) is an upper bound."""
    prior = GaussianProcessPrior(n, ell, kernel=kernel)
    got = _centre_curve(prior).at(b)
    assert influence_curve(prior).at(b) >= got
    orders = ["lower", "higher"] if n % 2 == 0 or b % 2 == 0 else ["lower"]
    want = min(_spread_on_grid(prior.gamma * m, var, prior.gamma, prior.delta)
               for m, var in (_exact_conditional(n, ell, kernel, b, o) for o in orders))
    assert got >= want
    if math.isfinite(got):
        assert got <= want * (1 + 1e-4) + 1e-5  # and close: the bounds are tight


def test_the_audit_value_at_60_digits():
    """n = 31, ℓ = 4, b = 9: the exact kernel gives 16.744310130; a nugget used to give 16.744309094."""
    got = _centre_curve(GaussianProcessPrior(31, 4.0)).at(9)
    assert 16.744310130 <= got <= 16.74433


@given(mu=st.floats(0.0, 40.0), s1=st.floats(1e-3, 1.0), ratio=st.floats(1.0, 5.0))
@settings(max_examples=60, deadline=None)
def test_spread_grows_with_mu_and_shrinks_with_sigma(mu, s1, ratio):
    """The two monotonicities the curve relies on (μ proved in the module docstring; σ checked here)."""
    from puffer_core.engine.gaussian import log_interval_probability as lip

    r = np.linspace(-5.0, 4.9, 2001)

    def spread(m, s):
        f = lip((r - m) / s, (r + 0.1 - m) / s) - lip(r, r + 0.1)
        return f.max() - f.min()

    s2 = min(1.0, s1 * ratio)
    assert spread(mu, s1) >= spread(mu, s2) - 1e-9 * (1 + spread(mu, s1))
    assert spread(mu * 1.1 + 0.01, s1) >= spread(mu, s1) - 1e-9 * (1 + spread(mu, s1))


def test_ill_conditioned_kernels_are_reported_as_unbounded_not_too_small():
    """ℓ = 20: Σ is singular to double precision; near the centre a(b) cannot be certified, so it is +inf."""
    curve = influence_curve(GaussianProcessPrior(40, 20.0))
    assert math.isinf(curve.a[0]) and "cannot certify" in curve.label
    assert np.all(np.diff(curve.a[np.isfinite(curve.a)]) <= 0) and curve.at(40) == 0.0


def test_huge_records_are_refused_up_front():
    """n = 5,000 with a long length scale: its arrays (the factor's own eigenvalue bound) exceed the memory limit."""
    from puffer_core.engine.gaussian import gaussian_estimate

    prior = GaussianProcessPrior(5000, 20.0)
    with pytest.raises(ValueError, match=r"coordinates is out of reach: it needs about .* use n ≤ [\d,]+"):
        influence_curve(prior)
    suggested = gaussian_estimate(prior).largest["n"]
    assert gaussian_estimate(GaussianProcessPrior(suggested, 20.0)).fits


def test_the_second_order_factor_equals_a_fresh_factorisation():
    """Swapping tied coordinates by reflections gives the Cholesky factor (and inverse) of the permuted Σ (scipy)."""
    from scipy.linalg import cholesky

    from puffer_core.engine.gaussian import _factor, _orders, _swapped, _system

    prior = GaussianProcessPrior(40, 5.0)
    first, second = _orders(40)
    s1, _ = _system(prior, first)
    s2, _ = _system(prior, second)
    chol, x = _factor(s1)
    perm1, perm2 = first[:0:-1], second[:0:-1]
    moved = np.flatnonzero(perm1 != perm2)
    got, inv = _swapped(chol, x, moved[::2])
    want = cholesky(s2 + 1e-10 * np.eye(39), lower=True)
    np.testing.assert_allclose(got, want, atol=1e-10)
    assert np.all(np.triu(got, 1) == 0) and np.all(np.diag(got) > 0)
    np.testing.assert_allclose(inv @ got, np.eye(39), atol=1e-8)
