"""a(b) for a Gaussian-process prior (docs/math.md §2.3, [C] Example 4, Theorem 5).

One record x ∈ R^n ~ N(0, Σ) truncated to [−γ, γ]^n.  The worst coordinate is the centre
i* = ⌈n/2⌉; for each b, L = the n − b coordinates farthest from i* (when two coordinates are
equally far, both choices are evaluated and the smaller value kept: the definition takes the
min over H).  With x_i* | x_L ~ N(μ, σ²), μ = w·x_L ∈ [−γ‖w‖₁, γ‖w‖₁] and

    f(r, μ) = log Pr(x ∈ [r, r+δ] | N(μ, σ²)) − log Pr(x ∈ [r, r+δ] | N(0, 1))
    a(b)    = max_μ [ max_r f(r, μ) − min_r f(r, μ) ],   r ∈ [−γ, γ − δ].

Like the paper, this ignores how truncation reshapes the conditional (an approximation the
app states).  Numerics:

- interval probabilities in log space (``scipy.special.log_ndtr`` and a stable log of a
  difference), never clipped to a floor, so values of hundreds of nats are kept;
- Σ gets a nugget ``JITTER`` on its diagonal (a valid covariance, needed because the
  squared-exponential kernel with ℓ ≥ 2 is numerically singular); the curve's label reports
  a bound on the condition number of every Σ_LL (that of the largest one, by interlacing);
- grids: ``R_POINTS`` = 401 values of r (both ends included, step 0.025 for γ = 5) and
  ``MU_POINTS`` = 33 values of μ (both ends and 0 included); the best μ cell is then refined
  on ``REFINE_POINTS`` = 33 values between its neighbours, and the extremes in r on 33 values
  between the neighbouring grid points, so the reported value is at least the grid maximum;
- the marginal in f is N(0, Σ_i*i*) including the nugget, so a(b) → 0 exactly as x_L stops
  informing x_i*;
- a(b) is made non-increasing by a running minimum over b (|H| ≤ b allows smaller H).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import log_ndtr, ndtr

from .curve import InfluenceCurve
from .priors import GaussianProcessPrior

JITTER = 1e-10
R_POINTS = 401
MU_POINTS = 33
REFINE_POINTS = 33


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 − e^x) for x ≤ 0, stable."""
    x = np.minimum(x, -1e-300)
    return np.where(x > -0.6931471805599453, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log_interval_probability(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """log Pr(Z ∈ [lo, hi]) for a standard normal Z, stable far into both tails."""
    lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    out = np.empty(lo.shape)
    upper = lo > 0
    lower = hi < 0
    middle = ~(upper | lower)
    a = log_ndtr(-lo[upper])
    out[upper] = a + _log1mexp(log_ndtr(-hi[upper]) - a)
    c = log_ndtr(hi[lower])
    out[lower] = c + _log1mexp(log_ndtr(lo[lower]) - c)
    out[middle] = np.log(ndtr(hi[middle]) - ndtr(lo[middle]))
    return out


def _f(
    r: np.ndarray, mu: np.ndarray, sigma: float, sigma0: float, delta: float, base: np.ndarray | None = None
) -> np.ndarray:
    """f(r, μ): log-probability of [r, r+δ] under the conditional minus under the marginal N(0, σ0²).

    ``base`` is the marginal term for these r when already known.
    """
    cond = log_interval_probability((r - mu) / sigma, (r + delta - mu) / sigma)
    if base is None:
        base = log_interval_probability(r / sigma0, (r + delta) / sigma0)
    return cond - base


def _local_extreme(values: np.ndarray, r_grid: np.ndarray, mu: float, sigma: float, sigma0: float,
                   prior: GaussianProcessPrior, sign: float) -> float:
    """sign·max of sign·f over r, refined on a dense grid around the best grid point."""
    i = int(np.argmax(sign * values))
    lo = r_grid[max(i - 1, 0)]
    hi = r_grid[min(i + 1, r_grid.size - 1)]
    fine = np.linspace(lo, hi, REFINE_POINTS)
    local = _f(fine, mu, sigma, sigma0, prior.delta)
    return sign * max(sign * values[i], float((sign * local).max()))


def _a_for_split(
    cov: np.ndarray, centre: int, low: np.ndarray, prior: GaussianProcessPrior, r_grid: np.ndarray
) -> float:
    """a for one L (``low`` indices)."""
    if low.size == 0:
        return 0.0
    s_ll = cov[np.ix_(low, low)]
    s_lc = cov[low, centre]
    w = cho_solve(cho_factor(s_ll, lower=True), s_lc)
    sigma0 = float(np.sqrt(cov[centre, centre]))
    var = float(cov[centre, centre] - w @ s_lc)
    sigma = float(np.sqrt(max(var, JITTER)))
    bound = prior.gamma * float(np.abs(w).sum())
    mus = np.unique(np.concatenate([np.linspace(-bound, bound, MU_POINTS), [0.0]]))
    base = log_interval_probability(r_grid / sigma0, (r_grid + prior.delta) / sigma0)[None, :]
    f = _f(r_grid[None, :], mus[:, None], sigma, sigma0, prior.delta, base)
    spreads = f.max(axis=1) - f.min(axis=1)
    i = int(np.argmax(spreads))
    if mus.size > 1:  # refine μ between the neighbouring grid points
        fine_mu = np.linspace(mus[max(i - 1, 0)], mus[min(i + 1, mus.size - 1)], REFINE_POINTS)
        f_fine = _f(r_grid[None, :], fine_mu[:, None], sigma, sigma0, prior.delta, base)
        fine_spreads = f_fine.max(axis=1) - f_fine.min(axis=1)
        j = int(np.argmax(fine_spreads))
        if fine_spreads[j] > spreads[i]:
            mu, values = float(fine_mu[j]), f_fine[j]
        else:
            mu, values = float(mus[i]), f[i]
    else:
        mu, values = float(mus[i]), f[i]
    top = _local_extreme(values, r_grid, mu, sigma, sigma0, prior, 1.0)
    bottom = _local_extreme(values, r_grid, mu, sigma, sigma0, prior, -1.0)
    return top - bottom


def gaussian_influence_curve(prior: GaussianProcessPrior, max_b: int | None = None) -> InfluenceCurve:
    """The a(b) curve of a Gaussian-process prior (docs/math.md §2.3); see the module docstring."""
    n = prior.n
    n_b = n if max_b is None else int(max_b)
    cov = prior.covariance() + JITTER * np.eye(n)
    centre = (n + 1) // 2 - 1  # i* = ⌈n/2⌉, 0-based
    idx = np.arange(n)
    dist = np.abs(idx - centre)
    orders = [np.lexsort((idx, dist)), np.lexsort((-idx, dist))]  # ties: lower or higher index first
    r_grid = np.linspace(-prior.gamma, prior.gamma - prior.delta, R_POINTS)
    a = np.zeros(n_b)
    # every Σ_LL is a principal submatrix of the one for b = 1 (L = all but i*): by eigenvalue
    # interlacing its condition number bounds all of theirs
    others = np.delete(idx, centre)
    eig = np.linalg.eigvalsh(cov[np.ix_(others, others)]) if others.size else np.ones(1)
    worst_cond = float(eig[-1] / eig[0])
    for b in range(1, min(n_b, n - 1) + 1):
        values = []
        seen = set()
        for order in orders:
            low = np.sort(order[b:])
            key = low.tobytes()
            if key in seen:
                continue
            seen.add(key)
            values.append(_a_for_split(cov, centre, low, prior, r_grid))
        a[b - 1] = min(values)
    a = np.minimum.accumulate(a)
    label = (
        f"GP {prior.kernel.replace('_', '-')} ℓ={prior.length_scale:g} (n={n}, γ={prior.gamma:g},"
        f" δ={prior.delta:g}; cond(Σ_LL) ≤ {worst_cond:.1e})"
    )
    return InfluenceCurve(np.arange(1, n_b + 1), a, n, label)
