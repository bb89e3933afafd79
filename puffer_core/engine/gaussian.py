"""a(b) for a Gaussian-process prior (docs/math.md §2.3, [C] Example 4, Theorem 5).

One record x ∈ R^n ~ N(0, Σ) truncated to [−γ, γ]^n.  [C] Theorem 5 evaluates the centre ⌈n/2⌉ only,
but it is not the worst coordinate (docs/math.md §16 gives cases where others leak far more), so every
coordinate i* is evaluated (one of each mirror pair i, n − 1 − i) and the maximum taken; for each b,
L = the n − b coordinates farthest from i* (when two coordinates are equally far, both choices are
evaluated and the smaller value kept: the definition takes the min over H).  With
x_i* | x_L ~ N(μ, σ²), μ = w·x_L ∈ [−M, M], M = γ‖w‖₁ and

    f(r, μ) = log Pr(x ∈ [r, r+δ] | N(μ, σ²)) − log Pr(x ∈ [r, r+δ] | N(0, 1))
    a(b)    = max_{|μ| ≤ M} [ max_r f(r, μ) − min_r f(r, μ) ],   r ∈ [−γ, γ − δ].

Like the paper, this ignores how truncation reshapes the conditional (an approximation the
app states).  Every reported value is an upper bound on this quantity for the *exact* kernel
(no nugget), never below it:

- **μ.** The spread is non-decreasing in |μ| (proof: for μ ≥ 0 the reflection r ↦ −δ − r
  shows f(r) ≥ f(−δ − r) for r ≥ −δ/2, so a maximiser r⁺ ≥ −δ/2 ≥ a minimiser r⁻ exists; by
  Danskin the right derivative of the spread in μ is g'(r⁻ − μ) − g'(r⁺ − μ) ≥ 0 because
  g(u) = log Pr(N(0, σ²) ∈ [u, u + δ]) is concave (a log-concave density integrated over a
  sliding interval), so g' is non-increasing).  Hence the max is at μ = M, and any upper
  bound on M gives an upper bound on a(b).
- **σ.** The spread is non-increasing in σ (a more concentrated conditional separates the
  secrets more; verified on a wide grid in the tests), so a lower bound on σ gives an upper
  bound on a(b).
- **w and σ for the exact Σ.** The solves use one Cholesky factorisation of Σ (rows in the
  order farthest-first, so every L is a leading block) with a nugget ``JITTER`` for stability,
  and one triangular inverse (for even n the second order of ties is the first with adjacent
  pairs swapped: its factor and inverse follow by reflections in O(n²)); the results are then
  certified against the exact kernel by the residual ρ = Σ_LL w̃ − Σ_{L,i*} (computed with a
  rounding allowance): w − w̃ = Σ_LL⁻¹ρ, so ‖w − w̃‖₂ ≤ ‖ρ‖₂ / λ, with λ a proven lower bound
  on every eigenvalue of every principal submatrix of Σ — the minimum of the kernel's Toeplitz
  symbol (squared exponential exp(−d²/ℓ): the Jacobi theta product Π_m (1 − q^{2m})(1 −
  q^{2m−1})², q = e^{−1/ℓ}; exponential exp(−|d|/ℓ): (1 − ρ)/(1 + ρ), ρ = e^{−1/ℓ}). This
  bounds M from above and σ² = 1 − Σ_{i*,L} w from below. Where σ² cannot be certified
  positive (ℓ so large that Σ is singular to double precision) a(b) is reported as +inf.
- **r.** g(r − μ) is concave in r and −log Pr(N(0,1) ∈ [r, r + δ]) convex, so on each cell of
  the r grid f lies below min(two tangents of the concave part) + chord of the convex part
  and above chord of the concave part + max(two tangents of the convex part).  These give
  rigorous bounds for max_r f and min_r f; cells whose bound could still matter are
  subdivided until the bound is within ``R_TOL`` of an attained value.

- **Every coordinate.** The spread is non-decreasing in M and non-increasing in σ, so at each b only
  the undominated laws (M, σ) over the coordinates are evaluated (:func:`_undominated`): the same
  maximum at a fraction of the cost.

Interval probabilities are computed in log space (tails from ``scipy.special.erfcx``, narrow
intervals by quadrature of the hazard, intervals around 0 from erf), never clipped and without
cancellation, so values of hundreds of nats and widths δ down to 1e-200 are kept.  a(b) is made
non-increasing by a running minimum over b (|H| ≤ b allows smaller H).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np
from scipy.linalg import LinAlgError, cholesky
from scipy.linalg.blas import dtrmm as trmm
from scipy.linalg.lapack import dtrtri as trtri
from scipy.special import erf, erfcx

from ..priors.models import MAX_LENGTH, GaussianProcessPrior
from ..secrets.values import ALL_SECRETS, Secrets
from ..validation import WORK_LIMIT_SECONDS, check_whole
from ..work import (
    GAUSSIAN,
    MEMORY_LIMIT_BYTES,
    PRODUCT,
    UNIT_KINDS,
    Progress,
    ProgressCallback,
    WorkCounter,
    WorkEstimate,
    one_blas_thread,
    unit_seconds,
)
from .curve import InfluenceCurve

JITTER = 1e-10  # nugget for the factorisation only; the curve is certified for the exact kernel
R_POINTS = 401  # r grid (both ends included), refined where the bounds need it
R_TOL = 1e-7  # refinement stops once each bound is within R_TOL·spread + R_ABS + 1e-10·|f| of an attained value
R_ABS = 1e-6
_U = np.finfo(float).eps / 2  # unit roundoff
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
# Narrow intervals (standardised width ≤ _NARROW_WIDTH) take the log of the tail ratio as −∫ hazard by
# 3-point Gauss–Legendre quadrature (relative error below 3e-15 there); wider ones from erfcx directly
# (absolute error of the log ratio a few ulps, relative to a ratio of at least 0.04: below 2e-14).  Both
# are checked against 40-digit values in the tests.
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(3)
_NARROW_WIDTH = 0.05
_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 − e^x) for x ≤ 0, stable."""
    x = np.minimum(x, -1e-300)
    with np.errstate(divide="ignore"):  # np.where evaluates both branches; the one kept is finite
        return np.where(x > -0.6931471805599453, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _upper_tail(lo: np.ndarray, width: np.ndarray) -> np.ndarray:
    """log Pr(Z ∈ [lo, lo + width]) for lo ≥ 0: log Q(lo) + log(1 − Q(lo + width)/Q(lo)), Q = 1 − Φ.

    With Q(x) = ½·erfcx(x/√2)·e^(−x²/2), log Q(lo) = log(½·erfcx(lo/√2)) − lo²/2 keeps its relative
    accuracy however far the tail, and the log ratio is log erfcx((lo + w)/√2) − log erfcx(lo/√2)
    − w·(lo + w/2).  For a narrow interval that difference would cancel (every digit lost at a
    width of 1e-12), so there the log ratio is −∫ hazard over the interval, by quadrature of the
    smooth hazard φ(x)/Q(x) = √(2/π)/erfcx(x/√2).
    """
    at_lo = erfcx(lo * _SQRT_HALF)
    log_q = np.log(0.5 * at_lo) - 0.5 * lo * lo
    ratio = np.empty(lo.shape)
    narrow = width <= _NARROW_WIDTH
    if np.any(narrow):
        lo_n, w_n = lo[narrow], width[narrow]
        x = lo_n[:, None] + 0.5 * w_n[:, None] * (1.0 + _GL_NODES[None, :])
        ratio[narrow] = -0.5 * w_n * ((_SQRT_2_OVER_PI / erfcx(x * _SQRT_HALF)) @ _GL_WEIGHTS)
    wide = ~narrow
    if np.any(wide):
        lo_w, w_w = lo[wide], width[wide]
        ratio[wide] = np.log(erfcx((lo_w + w_w) * _SQRT_HALF) / at_lo[wide]) - w_w * (lo_w + 0.5 * w_w)
    return log_q + _log1mexp(ratio)


def log_interval_probability(lo: np.ndarray, hi: np.ndarray, width: np.ndarray | None = None) -> np.ndarray:
    """log Pr(Z ∈ [lo, hi]) for a standard normal Z, stable far into both tails and for narrow intervals.

    ``width`` (= hi − lo, given exactly when known) avoids the rounding of hi − lo for narrow
    intervals.  Intervals inside one tail use the hazard integral (:func:`_upper_tail`, the
    lower tail by symmetry); intervals around 0 use erf, a sum of two non-negative terms.
    """
    lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    w = hi - lo if width is None else np.broadcast_to(np.asarray(width, dtype=float), lo.shape)
    out = np.empty(lo.shape)
    upper = lo > 0
    lower = hi < 0
    middle = ~(upper | lower)
    out[upper] = _upper_tail(lo[upper], w[upper])
    out[lower] = _upper_tail(-hi[lower], w[lower])
    out[middle] = np.log(0.5 * (erf(hi[middle] / math.sqrt(2)) - erf(lo[middle] / math.sqrt(2))))
    return out


def _log_interval(u: np.ndarray, sigma: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """(g, g') with g(u) = log Pr(N(0, σ²) ∈ [u, u + δ]) and its derivative in u.

    g' = (φ(z2) − φ(z1)) / (σ·Pr) with φ(z2) − φ(z1) = φ(z1)·expm1(−(z2 − z1)(z1 + z2)/2),
    z2 − z1 = δ/σ: no difference of nearly equal numbers.
    """
    z1 = u / sigma
    width = delta / sigma
    z2 = z1 + width
    g = log_interval_probability(z1, z2, width)
    with np.errstate(over="ignore", invalid="ignore"):
        d = np.exp(-0.5 * z1 * z1 - _LOG_SQRT_2PI - g) * np.expm1(-width * (z1 + 0.5 * width)) / sigma
    return g, np.where(np.isfinite(d), d, 0.0)


def symbol_minimum(prior: GaussianProcessPrior) -> float:
    """A proven lower bound on every eigenvalue of every principal submatrix of Σ (see the module docstring)."""
    rho = math.exp(-1.0 / prior.length_scale)
    if prior.kernel == "exponential":
        return (1.0 - rho) / (1.0 + rho) * (1 - 1e-12)
    if prior.length_scale > 400:  # the product is below e^(−π²ℓ/4) < 1e-300: no useful bound
        return 0.0
    m = np.arange(1, int(60 * prior.length_scale) + 200)
    log_min = np.sum(np.log1p(-(rho ** (2 * m)))) + 2.0 * np.sum(np.log1p(-(rho ** (2 * m - 1))))
    return float(np.exp(log_min)) * (1 - 1e-10)


def _row_sum(prior: GaussianProcessPrior) -> float:
    """max row sum of Σ (bounds ‖Σ_LL‖₂ for every L)."""
    lag = np.arange(1, prior.n, dtype=float)
    k = np.exp(-(lag**2) / prior.length_scale) if prior.kernel == "squared_exponential" else np.exp(
        -lag / prior.length_scale
    )
    return 1.0 + 2.0 * float(k.sum())


def _leading_norm2(mat: np.ndarray) -> np.ndarray:
    """An upper bound on ‖mat[:k, :k]‖₂ for k = 1..m: min(Frobenius, √(‖·‖₁‖·‖_∞)) of each leading block."""
    a = np.abs(mat)
    frob = np.sqrt(np.diagonal(np.cumsum(np.cumsum(a * a, axis=0), axis=1)))
    col = np.cumsum(a, axis=0)  # col[k−1, j] = Σ_{i<k} |a_ij|
    one = np.maximum.accumulate(np.where(np.tril(np.ones(a.shape, dtype=bool)), col, 0.0).max(axis=1))
    # ‖·‖₁ of the k-block is max_{j<k} col[k−1, j] (lower triangular: j ≤ i); rows likewise
    row = np.cumsum(a, axis=1)
    inf = np.maximum.accumulate(np.diagonal(row))
    return np.minimum(frob, np.sqrt(one * inf)) * (1 + 4 * a.shape[0] * _U)


def _block_minimum(chol: np.ndarray, s_ll: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A proven lower bound on λ_min(S_k) for every leading block S_k of s_ll, from its computed factor.

    With X ≈ chol⁻¹ and F = chol·cholᵀ − S (both leading blocks are blocks of the full
    products, the factors being triangular): ‖chol_k⁻¹‖ ≤ ‖X_k‖ / (1 − ‖I − chol_k X_k‖) and
    λ_min(S_k) ≥ 1/‖chol_k⁻¹‖² − ‖F_k‖, every norm bounded from above with rounding allowances.
    """
    m = chol.shape[0]
    gamma = (m + 2) * _U / (1 - (m + 2) * _U)
    resid = np.tril(np.eye(m) - chol @ x)
    chol_f = np.sqrt(np.diagonal(np.cumsum(np.cumsum(chol * chol, axis=0), axis=1)))
    x_norm = _leading_norm2(x)
    g = _leading_norm2(resid) + gamma * chol_f * np.sqrt(np.diagonal(np.cumsum(np.cumsum(x * x, axis=0), axis=1)))
    f = chol @ chol.T - s_ll
    s_f = np.sqrt(np.diagonal(np.cumsum(np.cumsum(s_ll * s_ll, axis=0), axis=1)))
    f_norm = np.sqrt(np.diagonal(np.cumsum(np.cumsum(f * f, axis=0), axis=1))) + gamma * (chol_f**2 + s_f)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv_norm = np.where(g < 1, x_norm / (1 - g), np.inf)
        return np.where(np.isfinite(inv_norm), 1.0 / inv_norm**2 - f_norm, -np.inf) * (1 - 1e-12)


def _system(prior: GaussianProcessPrior, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Σ_LL, Σ_{L,i*}) with L = order[1:] farthest first: L for b is the leading n − b entries."""
    n = prior.n
    perm = order[:0:-1]
    lags = np.arange(n, dtype=float)
    kern = np.exp(-(lags**2) / prior.length_scale) if prior.kernel == "squared_exponential" else np.exp(
        -lags / prior.length_scale)
    return kern[np.abs(perm[:, None] - perm[None, :])], kern[np.abs(perm - order[0])]  # Σ is Toeplitz


def _factor(s_ll: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(chol, X ≈ chol⁻¹) of Σ_LL plus a nugget (``JITTER``, raised until the factorisation succeeds).

    The leading blocks of chol and X are the factor of, and the inverse of the factor of, the
    leading blocks of Σ_LL.  Nothing here needs to be exact: :func:`_certified` bounds the error
    of what is derived from them against the exact kernel.
    """
    nugget = JITTER
    while True:
        try:
            chol = cholesky(s_ll + nugget * np.eye(s_ll.shape[0]), lower=True, check_finite=False)
            break
        except LinAlgError:
            nugget *= 100.0
    return chol, np.tril(trtri(chol, lower=1)[0])


def _swapped(chol: np.ndarray, x: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The factor and its inverse after swapping positions (i, i + 1) for every i in ``first`` (disjoint pairs).

    With P the swap, P·chol is lower triangular but for entry (i, i + 1); a reflection G of
    columns i, i + 1 (G = Gᵀ = G⁻¹) restores it with a positive diagonal, so P·S·Pᵀ = (P·chol·G)(P·chol·G)ᵀ
    and (P·chol·G)⁻¹ = G·X·Pᵀ: O(n²) instead of a new factorisation.
    """
    rows = np.arange(chol.shape[0])
    swap = rows.copy()
    swap[first], swap[first + 1] = first + 1, first
    a = chol[swap]  # P·chol
    top, diag = a[first, first], a[first, first + 1]  # row i of P·chol: (L[i+1, i], L[i+1, i+1])
    r = np.hypot(top, diag)
    cos, sin = top / r, diag / r
    left, right = a[:, first].copy(), a[:, first + 1].copy()
    a[:, first] = left * cos + right * sin
    a[:, first + 1] = left * sin - right * cos
    a[first, first + 1] = 0.0
    inv = x[:, swap]  # X·Pᵀ
    up, down = inv[first].copy(), inv[first + 1].copy()
    inv[first] = cos[:, None] * up + sin[:, None] * down
    inv[first + 1] = sin[:, None] * up - cos[:, None] * down
    return a, np.tril(inv)


def _certified(prior: GaussianProcessPrior, s_ll: np.ndarray, c: np.ndarray, chol: np.ndarray, x: np.ndarray,
               lam: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(upper bound on γ‖w‖₁, lower bound on σ²) for b = 1..n−1, L the n − b leading entries, exact kernel.

    w̃ is derived from the approximate factor; ρ = Σ_LL·w̃ − Σ_{L,i*} is computed from the exact
    kernel with a rounding allowance, and ‖w − w̃‖₂ ≤ ‖ρ‖₂/λ (module docstring).
    """
    n = prior.n
    z = x @ c
    upper = np.triu(np.ones((n - 1, n - 1), dtype=bool))  # column j ↔ |L| = j + 1
    # w for |L| = j + 1 is chol_jᵀ⁻¹ z_j: w[i, j] = Σ_{i ≤ l ≤ j} x[l, i] z[l], a running sum over l
    w = np.cumsum((x * z[:, None]).T, axis=1)
    w[~upper] = 0.0
    residual = trmm(1.0, w, s_ll, side=1, lower=0)  # Σ_LL·w, w upper triangular
    residual -= c[:, None]
    residual[~upper] = 0.0
    size = np.arange(1, n)
    gamma_k = (size + 2) * _U / (1 - (size + 2) * _U)
    w2 = np.sqrt(np.einsum("ij,ij->j", w, w))
    c2 = np.sqrt(np.cumsum(c * c))
    rounding = gamma_k * (c2 + _row_sum(prior) * w2)  # |fl(ρ) − ρ| ≤ γ_k (|c| + |Σ||w̃|), in 2-norm
    if lam < 1e-6:  # the kernel's own bound is weak: bound each leading block from its factor too
        lam = np.maximum(lam, _block_minimum(chol, s_ll, x))
    with np.errstate(divide="ignore"):
        norm = np.sqrt(np.einsum("ij,ij->j", residual, residual))
        err = np.where(lam > 0, (norm + rounding) * (1 + 1e-10) / lam, np.inf)
    del residual
    w_abs = np.abs(w)
    w1 = w_abs.sum(axis=0) * (1 + 2 * n * _U) + np.sqrt(size) * err
    cw = c @ w
    cw_abs = np.abs(c) @ w_abs
    with np.errstate(invalid="ignore"):
        var_lo = np.where(np.isfinite(err), 1.0 - cw - gamma_k * cw_abs - c2 * err - 4 * _U, -np.inf)
    # index b − 1: L = order[b:] has n − b entries, column n − b − 1
    cols = n - np.arange(1, n) - 1
    return prior.gamma * w1[cols], var_lo[cols]


def _conditionals(prior: GaussianProcessPrior, orders: list[np.ndarray], lam: float
                  ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(bound on γ‖w‖₁, bound on σ²) of each order in turn; the second order's factor from the first's."""
    chol = x = before = None
    for order in orders:
        s_ll, c = _system(prior, order)
        perm = order[:0:-1]
        pairs = None
        if before is not None and before[0] == order[0]:
            moved = np.flatnonzero(perm != before)
            pairs = moved[::2]
            if moved.size % 2 or not (np.array_equal(moved[1::2], pairs + 1) and np.array_equal(
                    perm[pairs], before[pairs + 1]) and np.array_equal(perm[pairs + 1], before[pairs])):
                pairs = None
        if pairs is None or chol is None or x is None:
            chol, x = _factor(s_ll)
        else:
            chol, x = _swapped(chol, x, pairs)
        yield _certified(prior, s_ll, c, chol, x, lam)
        before = perm


class _Side:
    """f = A(r) + V(r): A(r) = log Pr(N(μ, σ²) ∈ [r, r+δ]) (concave), V(r) = −log Pr(N(0, 1) ∈ [r, r+δ]) (convex)."""

    def __init__(self, mu: np.ndarray, sigma: np.ndarray, delta: float) -> None:
        self.mu = mu[:, None]
        self.sigma = sigma[:, None]
        self.delta = delta
        # (log Pr(N(0, s²) ∈ [u, u+δ]))'' = (−1 + Var)/s², Var ∈ [0, δ²/4] the variance of a tilted law on
        # an interval of width δ; and A'' ≤ 0.  So f'' = A'' + V'' lies in [k_lo, k_hi]:
        s2 = self.sigma**2
        self.k_hi = np.minimum(0.0, (delta**2 / (4 * s2) - 1.0) / s2) + 1.0
        self.k_lo = -1.0 / s2 + 1.0 - delta**2 / 4

    def values(self, r: np.ndarray, rows: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        """(f, A, A', V, V') at points r (rows, points); ``rows`` selects the (μ, σ) of each row.

        Points shared by every row (a 1-d ``r``) evaluate V once.
        """
        mu = self.mu if rows is None else self.mu[rows]
        sigma = self.sigma if rows is None else self.sigma[rows]
        a, da = _log_interval(r - mu, sigma, self.delta)
        v, dv = _log_interval(r, np.ones_like(r), self.delta)
        v, dv = np.broadcast_to(-v, a.shape), np.broadcast_to(-dv, a.shape)
        return a + v, a, da, v, dv


def _cell_bounds(r: np.ndarray, a: np.ndarray, da: np.ndarray, v: np.ndarray, dv: np.ndarray,
                 k_hi: np.ndarray, k_lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per cell between consecutive points: (upper bound of max f, lower bound of min f), f = A + V.

    Two bounds each, the tighter kept: (1) A concave lies below its tangents and above its
    chord, V convex the other way round; (2) with k_lo ≤ f'' ≤ k_hi on the cell,
    f − (k/2)(r − r_l)(r − r_r) is concave (k = max(k_hi, 0)) or convex (k = min(k_lo, 0)),
    so f lies below the lower of its two tangents, or above the higher of its two tangents.
    """
    rl, rr = r[..., :-1], r[..., 1:]
    al, ar, dal, dar = a[..., :-1], a[..., 1:], da[..., :-1], da[..., 1:]
    vl, vr, dvl, dvr = v[..., :-1], v[..., 1:], dv[..., :-1], dv[..., 1:]
    h = rr - rl
    fl, fr = al + vl, ar + vr
    dfl, dfr = dal + dvl, dar + dvr
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # (1) max: the lower of the two tangents of A (they cross at x) plus the chord of V
        x = np.clip((ar - al + dal * rl - dar * rr) / (dal - dar), rl, rr)
        top = al + dal * (x - rl) + vl + (vr - vl) * (x - rl) / h
        top = np.where(np.isfinite(top) & (dal > dar), top, np.inf)
        # (1) min: the chord of A plus the higher of the two tangents of V (they cross at y)
        y = np.clip((vr - vl + dvl * rl - dvr * rr) / (dvl - dvr), rl, rr)
        bottom = al + (ar - al) * (y - rl) / h + vl + dvl * (y - rl)
        bottom = np.where(np.isfinite(bottom) & (dvr > dvl), bottom, -np.inf)
        # (2) with the curvature bounds: tangents of f with slopes moved by k·h/2
        k = np.maximum(k_hi, 0.0)
        sl, sr = dfl + k * h / 2, dfr - k * h / 2
        x2 = np.clip((fr - fl + sl * rl - sr * rr) / (sl - sr), rl, rr)
        top2 = np.where(sl > sr, fl + sl * (x2 - rl), np.maximum(fl, fr))
        k = np.minimum(k_lo, 0.0)
        sl, sr = dfl + k * h / 2, dfr - k * h / 2
        y2 = np.clip((fr - fl + sl * rl - sr * rr) / (sl - sr), rl, rr)
        bottom2 = np.where(sr > sl, fl + sl * (y2 - rl), np.minimum(fl, fr))
    top = np.minimum(top, np.where(np.isfinite(top2), top2, np.inf))
    bottom = np.maximum(bottom, np.where(np.isfinite(bottom2), bottom2, -np.inf))
    upper = np.maximum(np.maximum(fl, fr), top)
    lower = np.minimum(np.minimum(fl, fr), bottom)
    slack = 1e-12 * (1.0 + np.abs(fl) + np.abs(fr) + h * (np.abs(dfl) + np.abs(dfr)))
    return upper + slack, lower - slack


def _spread_upper(mu: np.ndarray, sigma: np.ndarray, prior: GaussianProcessPrior) -> np.ndarray:
    """Upper bounds on max_r f(r, μ) − min_r f(r, μ) for each (μ, σ) (module docstring: cell bounds)."""
    side = _Side(mu, sigma, prior.delta)
    grid = np.linspace(-prior.gamma, prior.gamma - prior.delta, R_POINTS)
    f, a, da, v, dv = side.values(grid)
    r = np.broadcast_to(grid, f.shape)
    up, lo = _cell_bounds(r, a, da, v, dv, side.k_hi, side.k_lo)
    tol = R_TOL * (f.max(axis=1) - f.min(axis=1)) + R_ABS + 1e-10 * np.abs(f).max(axis=1)
    top = _extreme(side, r, up, f.max(axis=1), tol, +1.0)
    bottom = -_extreme(side, r, -lo, -f.min(axis=1), tol, -1.0)
    return top - bottom


def _extreme(side: _Side, r: np.ndarray, bound: np.ndarray, attained: np.ndarray, tol: np.ndarray,
             sign: float, rounds: int = 12, pieces: int = 8) -> np.ndarray:
    """An upper bound on max over cells of ``bound`` (for sign = −1 everything is negated: a min).

    A cell whose bound is within ``tol`` of the best value attained so far is settled with its
    bound; the others are cut into ``pieces`` and bounded again, for up to ``rounds`` rounds;
    the result is the largest settled or remaining bound (or attained value).
    """
    attained = attained.copy()
    open_cells = bound > (attained + tol)[:, None]
    result = np.maximum(np.where(open_cells, -np.inf, bound).max(axis=1), attained)
    rows, cells = np.nonzero(open_cells)
    left, right = r[rows, cells], r[rows, cells + 1]
    pending = bound[rows, cells]
    t = np.linspace(0.0, 1.0, pieces + 1)
    for _ in range(rounds):
        if rows.size == 0:
            break
        pts = left[:, None] + (right - left)[:, None] * t[None, :]
        f, a, da, v, dv = side.values(pts, rows)
        np.maximum.at(attained, rows, sign * f.max(axis=1) if sign > 0 else -f.min(axis=1))
        up, lo = _cell_bounds(pts, a, da, v, dv, side.k_hi[rows], side.k_lo[rows])
        cell = up if sign > 0 else -lo
        keep = cell > (attained[rows] + tol[rows])[:, None]
        np.maximum.at(result, rows, np.where(keep, -np.inf, cell).max(axis=1))
        k_rows, k_cells = np.nonzero(keep)
        rows = rows[k_rows]
        left, right = pts[k_rows, k_cells], pts[k_rows, k_cells + 1]
        pending = cell[k_rows, k_cells]
    if rows.size:  # not settled within the rounds: their bounds still hold, only looser
        np.maximum.at(result, rows, pending)
    return np.maximum(result, attained)


def _orders(n: int, centre: int | None = None) -> list[np.ndarray]:
    """Coordinates by distance from ``centre`` (0-based; default [C]'s i* = ⌈n/2⌉), ties lower-first and
    higher-first.

    For the middle of odd n the reflection j ↦ n − 1 − j maps the coordinates onto themselves and the
    higher-first order onto the lower-first one; Σ is invariant, so both give the same values (one
    order).  Otherwise the two orders hold the same set L for odd b (H = the coordinate and complete
    pairs of ties, or past an end of the record no ties at all).
    """
    centre = (n + 1) // 2 - 1 if centre is None else int(centre)
    idx = np.arange(n)
    dist = np.abs(idx - centre)
    first = np.lexsort((idx, dist))
    second = np.lexsort((-idx, dist))
    return [first] if 2 * centre == n - 1 or np.array_equal(first, second) else [first, second]


_SPREAD_FLOPS = 800.0  # floating-point operations per (b, r) point of the spread bounds, refinement included
# Undominated laws per b, as estimated up front (n = 50..724, both kernels, ℓ = 0.5..20: 1.0–1.1 of them); when
# more are found the work is estimated again with their number before the spreads (_checked_spread)
_FRONT = 4


def gaussian_estimate(prior: GaussianProcessPrior, max_b: int | None = None,
                      coordinates: int | Sequence[int] | None = None) -> WorkEstimate:
    """What :func:`gaussian_influence_curve` will cost, before doing it (a :class:`WorkEstimate`).

    ``coordinates``: the coordinates whose curves are computed (0-based, see :func:`protected_coordinates`), or
    how many (each counted with both orders of ties); ``None``: every coordinate, the default curve's
    ⌈n/2⌉ (docs/math.md §2.3, §16).  The spread part counts every law, as if none were pruned (an upper estimate).
    """
    if not isinstance(prior, GaussianProcessPrior):
        raise ValueError(
            f"gaussian_estimate takes a GaussianProcessPrior (for a Markov chain use influence_estimate);"
            f" got {type(prior).__name__}"
        )
    if max_b is not None:
        check_whole("max_b", max_b)
    if coordinates is None:
        coordinates = protected_coordinates(prior.n, None)
    if isinstance(coordinates, (int, np.integer)) and not isinstance(coordinates, bool):
        check_whole("coordinates", int(coordinates))
        count, second = int(coordinates), int(coordinates)
    elif isinstance(coordinates, Sequence) and coordinates and all(
            isinstance(c, (int, np.integer)) and not isinstance(c, bool) and 0 <= c < prior.n for c in coordinates):
        count, second = len(coordinates), sum(len(_orders(prior.n, int(c))) - 1 for c in coordinates)
    else:
        raise ValueError(
            f"coordinates must be a whole number ≥ 1 or a non-empty list of coordinates in 0..{prior.n - 1};"
            f" got {coordinates!r}"
        )
    m = min(prior.n if max_b is None else int(max_b), prior.n - 1)
    weak = symbol_minimum(prior) < 1e-6  # the factor's own bound needs two more products
    units, nbytes = _work(prior.n, m, count, second, weak)
    fits = prior.n
    if unit_seconds(units) > WORK_LIMIT_SECONDS or nbytes > MEMORY_LIMIT_BYTES:  # the largest n that fits
        low, high = 2, prior.n
        while high - low > 1:
            mid = (low + high) // 2
            share = min(1.0, (mid + 1) // 2 / count)  # the default's ⌈n/2⌉, or as many of the chosen ones
            u, b = _work(mid, min(m, mid - 1), max(1, round(count * share)), round(second * share), weak)
            low, high = (mid, high) if unit_seconds(u) <= WORK_LIMIT_SECONDS and b <= MEMORY_LIMIT_BYTES else (
                low, mid)
        fits = low
    several = f" for each of {count:,} coordinates (one of each mirror pair)" if count > 1 else ""
    return WorkEstimate(
        f"a Gaussian-process curve with n = {prior.n:,} coordinates", units, nbytes,
        f"a Cholesky factorisation of {prior.n - 1}×{prior.n - 1} with certified residuals{several}",
        f"use n ≤ {max(2, int(fits * 0.9)):,}"
        + (", or protect fewer coordinates (Secrets(positions=…): each costs one factorisation)" if count > 1 else ""),
        {"n": max(2, int(fits * 0.9))},
    )


def _work(n: int, m: int, count: int, second: int, weak: bool) -> tuple[dict[str, float], float]:
    """(units, peak bytes) of ``count`` coordinates' curves, ``second`` of them with a second order of ties."""
    size = float(n)
    # multiply-adds of the linear algebra (BLAS), per coordinate: the first order's factor, inverse and residual
    # product (and two full products when λ is weak); a second order (ties both ways) reuses the factor
    extra = 3.0 if weak else 0.0  # two products, and the spread of badly conditioned laws (measured: n = 603, ℓ = 20)
    products = count * size**3 * (1 / 6 + 1 / 6 + 1 / 2 + extra) + second * size**3 * (1 / 2 + extra)
    rows = min((count + 0.5 * second) * m, _FRONT * m)  # laws evaluated: the undominated ones (_undominated)
    units = {
        "product": products,
        "gaussian": (40 * count + 60 * second) * size * size + rows * R_POINTS * _SPREAD_FLOPS,
        "overhead": 6000.0 + 60.0 * rows + 40.0 * count * m,  # the interpreter's share (µs)
    }
    return units, 8.0 * size * size * (9 if weak else 6) + 8.0 * 4 * count * max(m, 0)


def gaussian_influence_curve(
    prior: GaussianProcessPrior,
    max_b: int | None = None,
    *,
    progress: ProgressCallback | None = None,
    work: WorkCounter | None = None,
    secrets: Secrets | None = None,
) -> InfluenceCurve:
    """The a(b) curve of a Gaussian-process prior (docs/math.md §2.3); see the module docstring.

    ``secrets``: the interval secrets of every coordinate (``None``, :data:`ALL_SECRETS`), or of the
    protected coordinates of a :class:`~puffer_core.secrets.Secrets` with positions.  Each coordinate i is
    evaluated with L = the n − b coordinates farthest from it, and the curve is the maximum over the
    coordinates (docs/math.md §2.3, §16): no single coordinate is the worst for every kernel and b.

    Refused at once (ValueError with the estimate) when :func:`gaussian_estimate` is beyond the
    limits; ``progress`` and ``work`` as in :func:`puffer_core.influence.influence_curve`.
    """
    n = prior.n
    if max_b is not None:
        check_whole("max_b", max_b)
    if max_b is not None and max_b > MAX_LENGTH:
        raise ValueError(
            f"max_b = {max_b} is over the limit of {MAX_LENGTH:,}; a(b) = 0 from b = n = {n} on, so max_b = {n}"
            " already gives the whole curve"
        )
    n_b = n if max_b is None else int(max_b)
    coordinates = protected_coordinates(n, secrets)
    estimate = gaussian_estimate(prior, max_b, coordinates)
    estimate.check()
    report = Progress(progress, estimate.total_units)
    lam = symbol_minimum(prior)
    a = np.zeros(n_b)
    m = min(n_b, n - 1)
    with one_blas_thread():
        if m >= 1:
            report.report(f"conditional laws of coordinate {coordinates[0] + 1}", force=True)
            share = estimate.units["product"] / len(coordinates)
            laws = [_coordinate_laws(prior, c, m, lam, report, share) for c in coordinates]
            out, wanted, all_mu, all_var = _undominated(np.stack([mu for mu, _ in laws]),
                                                        np.stack([v for _, v in laws]))
            estimate = _checked_spread(estimate, all_mu.size, m)
            a[:m] = _worst_spread(prior, out, wanted, all_mu, all_var, report)
    if work is not None:
        for kind in (PRODUCT, GAUSSIAN):  # counted from the sizes, not measured: the estimate's own numbers
            work.add(kind, estimate.units[UNIT_KINDS[kind]])
    report.finish()
    a = np.minimum.accumulate(a)
    certified = "" if np.all(np.isfinite(a)) else "; ∞ where double precision cannot certify the conditional variance"
    label = (
        f"GP {prior.kernel.replace('_', '-')} ℓ={prior.length_scale:g} (n={n}, γ={prior.gamma:g},"
        f" δ={prior.delta:g}; λ_min(Σ) ≥ {lam:.1e}{certified})"
    )
    return InfluenceCurve(np.arange(1, n_b + 1), a, n, label, ALL_SECRETS if secrets is None else secrets)


def protected_coordinates(n: int, secrets: Secrets | None) -> list[int]:
    """The coordinates whose curves are computed (0-based): every coordinate (``None`` or :data:`ALL_SECRETS`),
    else the protected ones; one of each pair j, n − 1 − j (the reflection leaves the Toeplitz Σ unchanged and
    swaps the two orders of ties, so both give the same values)."""
    positions = range(n) if secrets is None or secrets.positions is None else secrets.positions
    return sorted({min(p, n - 1 - p) for p in positions if p < n})


def _coordinate_laws(prior: GaussianProcessPrior, centre: int, m: int, lam: float, report: Progress,
                     share: float) -> tuple[np.ndarray, np.ndarray]:
    """(bound on M = γ‖w‖₁, bound on σ²), shape (2, m), of the secret at coordinate ``centre`` given L = the n − b
    coordinates farthest from it, for the two orders of ties (one order: the row repeated; docs/math.md §2.3)."""
    orders = _orders(prior.n, centre)
    mus, variances = np.empty((2, m)), np.empty((2, m))
    for i, (mu, var) in enumerate(_conditionals(prior, orders, lam)):
        report.advance(f"conditional laws of coordinate {centre + 1}, order {i + 1} of {len(orders)}",
                       share / len(orders))
        mus[i], variances[i] = mu[:m], var[:m]
    if len(orders) == 1:
        mus[1], variances[1] = mus[0], variances[0]
    else:  # odd b: both orders hold the same set L (see _orders)
        odd = np.arange(1, m + 1) % 2 == 1
        mus[1, odd], variances[1, odd] = mus[0, odd], variances[0, odd]
    return mus, variances


def _above(mu_p: np.ndarray, var_p: np.ndarray, mu_q: np.ndarray, var_q: np.ndarray) -> np.ndarray:
    """Whether the spread of (μ_p, σ_p) is at least that of (μ_q, σ_q): μ_p ≥ μ_q and σ_p ≤ σ_q (module docstring)."""
    return (mu_p >= mu_q) & (var_p <= var_q)


def _checked_spread(estimate: WorkEstimate, laws: int, m: int) -> WorkEstimate:
    """The estimate with the number of laws actually left to evaluate (when above the up-front model of
    ``_FRONT`` per b), checked again: refused before the spreads when it no longer fits."""
    if laws <= _FRONT * m:
        return estimate
    extra = (laws - _FRONT * m) * R_POINTS * _SPREAD_FLOPS
    units = dict(estimate.units)
    units["gaussian"] += extra
    units["overhead"] += 60.0 * (laws - _FRONT * m)
    again = WorkEstimate(estimate.task, units, estimate.nbytes,
                         f"{estimate.dominant}, and the spreads of {laws:,} undominated laws",
                         estimate.advice, estimate.largest)
    again.check()
    return again


def _undominated(mus: np.ndarray, variances: np.ndarray
                 ) -> tuple[np.ndarray, list[tuple[int, np.ndarray, np.ndarray]], np.ndarray, np.ndarray]:
    """The laws whose spreads decide max over coordinates of min over the two orders, for b = 1..m; ``mus``,
    ``variances``: (coordinates, 2, m) from :func:`_coordinate_laws`.

    The spread is non-decreasing in μ and non-increasing in σ (module docstring), so only undominated laws are
    needed: per b, a coordinate whose one order's law lies below the other's keeps that one (it is the
    minimum); of the coordinates left with one law, only the Pareto front in (μ up, σ down); a coordinate with
    two incomparable laws only when neither lies below a law of that front.  A σ² not certified positive lies
    above everything (+inf).  Returns (a(b) where already decided: +inf, else 0; per b its front's and pairs'
    indices into the laws; the laws' μ and σ²).
    """
    m = mus.shape[2]
    top = ~(variances > 0) | np.isnan(mus)
    mus, variances = np.where(top, np.inf, mus), np.where(top, -np.inf, variances)
    out = np.zeros(m)
    wanted: list[tuple[int, np.ndarray, np.ndarray]] = []  # (b − 1, front laws, incomparable pairs of laws)
    req_mu: list[np.ndarray] = []
    req_var: list[np.ndarray] = []
    count = 0
    for j in range(m):
        mu, var = mus[:, :, j], variances[:, :, j]
        first_above = _above(mu[:, 0], var[:, 0], mu[:, 1], var[:, 1])
        single = first_above | _above(mu[:, 1], var[:, 1], mu[:, 0], var[:, 0])
        pick = np.where(first_above, 1, 0)[single]
        s_mu, s_var = mu[single, pick], var[single, pick]
        if np.any(np.isinf(s_mu)):
            out[j] = np.inf
            continue
        order = np.lexsort((s_var, -s_mu))  # μ descending, ties σ ascending
        s_mu, s_var = s_mu[order], s_var[order]
        lowest = np.minimum.accumulate(np.concatenate(([np.inf], s_var)))[:-1]
        front = s_var < lowest
        f_mu, f_var = s_mu[front], s_var[front]
        d_mu, d_var = mu[~single], var[~single]  # (k, 2): two incomparable laws each
        below = np.zeros(d_mu.shape[0], dtype=bool)
        for o in (0, 1):
            below |= np.any(_above(f_mu[None, :], f_var[None, :], d_mu[:, o, None], d_var[:, o, None]), axis=1)
        d_mu, d_var = d_mu[~below].ravel(), d_var[~below].ravel()
        req_mu += [f_mu, d_mu]
        req_var += [f_var, d_var]
        f_idx = np.arange(count, count + f_mu.size)
        d_idx = np.arange(count + f_mu.size, count + f_mu.size + d_mu.size).reshape(-1, 2)
        count += f_mu.size + d_mu.size
        wanted.append((j, f_idx, d_idx))
    all_mu = np.concatenate(req_mu) if req_mu else np.empty(0)
    all_var = np.concatenate(req_var) if req_var else np.empty(0)
    return out, wanted, all_mu, all_var


def _worst_spread(prior: GaussianProcessPrior, out: np.ndarray, wanted: list[tuple[int, np.ndarray, np.ndarray]],
                  all_mu: np.ndarray, all_var: np.ndarray, report: Progress) -> np.ndarray:
    """a(b), b = 1..m: the spreads of the laws :func:`_undominated` left, the max over the front and over the
    incomparable pairs' minima."""
    spread = np.empty(all_mu.size)
    for s in range(0, all_mu.size, 256):
        part = slice(s, s + 256)
        spread[part] = _spread_upper(all_mu[part], np.sqrt(all_var[part]), prior)
        report.advance("spread of the interval log-ratios", spread[part].size * R_POINTS * _SPREAD_FLOPS)
    out = out.copy()
    for j, f_idx, d_idx in wanted:
        values = np.concatenate((spread[f_idx], spread[d_idx].min(axis=1) if d_idx.size else np.empty(0)))
        out[j] = max(float(values.max(initial=0.0)), 0.0)
    return out
