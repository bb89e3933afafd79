"""Certified Rényi divergences and likelihood ratios of Gaussian mixtures on the integers (docs/math.md §17.3).

A count F with law p on {0..C−1} released with N(0, σ²) noise has the density p(y) = Σ_c p_c φ_σ(y − c).
Since φ_σ(y − c) = φ_σ(y)·exp((c·y − c²/2)/σ²),

    p(y) = φ_σ(y)·A(y),   log A(y) = log Σ_c p_c exp((c·y − c²/2)/σ²),

and log A is **convex** in y (a log-sum-exp of affine functions) with slope μ_A(y)/σ², μ_A(y) the mean of c
under the weights p_c·exp(c·y/σ² − c²/2σ²), which lies between the smallest and largest possible count.  For two
laws p, q (B from q) and an order α > 1,

    I = ∫ p^α q^(1−α) dy = ∫ φ_σ(y)·exp(α log A(y) − (α−1) log B(y)) dy,     D_α(p‖q) = log I / (α − 1).

**The bounds.**  On a cell [a, b] a convex function lies below its chord and above its tangent at the
midpoint, so α·chord_A − (α−1)·tangent_B is a linear upper bound of the exponent and α·tangent_A −
(α−1)·chord_B a linear lower bound; φ_σ(y)·e^(linear) integrates in closed form (a shifted normal
distribution function).  Left of the grid, log A(y) ≤ log A(a₀) + c_min·(y − a₀)/σ² (the slope is at least
c_min/σ²) and log B lies above its tangent at a₀; right of it, the same with c_max — so the two tails are
bounded in closed form too, and I is enclosed in [I_low, I_up] with nothing left out.  The gap is second order
in the cell width h: about (2α − 1)·h²·v/(8σ⁴) relative, v the variance of those weights.

**Rounding.**  Every value is computed in log space; the margin added to log I_up (and taken from log I_low)
covers the laws' own relative error ρ (each probability, times (2α − 1)) and the rounding of the closed forms
(a few units in the last place of the largest term that enters a cell's logarithm).

**Likelihood ratios.**  The same chords and tangents bound sup_y log p(y)/q(y) = sup (log A − log B) from above
on every cell; on the tails the single lowest (highest) term of B gives an asymptote: the supremum is finite
exactly when the smallest possible count under p is ≥ the smallest under q and the largest ≤ the largest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtr

from ..validation import check_eps, check_number, check_positive

_UNIT = 2.0**-53
MAX_CELLS = 10_000_000  # cells of one grid at most (80 MB of edges)


@dataclass(frozen=True)
class Grid:
    """Cell edges y_0 < … < y_G (any spacing) for noise of standard deviation ``sigma``."""

    sigma: float
    edges: np.ndarray

    @property
    def mids(self) -> np.ndarray:
        return 0.5 * (self.edges[:-1] + self.edges[1:])

    @property
    def widths(self) -> np.ndarray:
        return np.diff(self.edges)

    @property
    def cells(self) -> int:
        return int(self.edges.size - 1)


def make_grid(sigma: float, low: float, high: float, step: float) -> Grid:
    """Cells of width about ``step`` covering [low, high]."""
    sigma, low, high = check_eps("σ", sigma, allow_zero=True), check_number("low", low), check_number("high", high)
    step = check_positive("step", step)
    if high < low or (high - low) / step > MAX_CELLS:
        raise ValueError(
            f"a grid needs low ≤ high and at most {MAX_CELLS:,} cells; got [{low:g}, {high:g}] by {step:g}")
    n = max(1, int(math.ceil((high - low) / step)))
    return Grid(sigma, np.linspace(low, high, n + 1))


def count_grid(sigma: float, low: float, high: float) -> Grid:
    """A first grid for mixtures on the integers: cells of σ/2, or for σ < ½ cells of ½ centred on the integers
    (there each mixture is one Gaussian bump per count, and log A is nearly linear within ¼ of a count)."""
    sigma, low, high = check_eps("σ", sigma, allow_zero=True), check_number("low", low), check_number("high", high)
    if high < low or (high - low) / max(sigma / 2.0, 0.5) > MAX_CELLS:
        raise ValueError(f"a grid needs low ≤ high and at most {MAX_CELLS:,} cells; got [{low:g}, {high:g}]")
    if sigma >= 0.5:
        return make_grid(sigma, low, high, sigma / 2.0)
    first, last = math.floor(low) - 0.25, math.ceil(high) + 0.25
    return Grid(sigma, np.arange(first, last + 0.5, 0.5))


def split_cells(grid: Grid, chosen: np.ndarray) -> Grid:
    """The grid with the ``chosen`` cells (a boolean mask over cells) cut in half."""
    return Grid(grid.sigma, np.sort(np.concatenate([grid.edges, grid.mids[chosen]])))


def widen(grid: Grid, low: float, high: float, step: float) -> Grid:
    """The grid reaching out to [low, high] with cells of about ``step`` beyond its old ends."""
    parts = [grid.edges]
    if low < grid.edges[0]:
        parts.append(make_grid(grid.sigma, low, grid.edges[0], step).edges[:-1])
    if high > grid.edges[-1]:
        parts.append(make_grid(grid.sigma, grid.edges[-1], high, step).edges[1:])
    return Grid(grid.sigma, np.sort(np.concatenate(parts)))


@dataclass(frozen=True)
class Profile:
    """log A and the tilted mean μ at a grid's edges and midpoints, and each law's smallest and largest count."""

    log_edges: np.ndarray  # (n, G + 1)
    mean_edges: np.ndarray
    log_mids: np.ndarray  # (n, G)
    mean_mids: np.ndarray
    lowest: np.ndarray  # (n,)
    highest: np.ndarray
    log_lowest: np.ndarray  # log p at the lowest and highest count
    log_highest: np.ndarray
    magnitude: float  # the largest |value| entering the logarithms (for the rounding margin)


def profile(log_laws: np.ndarray, grid: Grid) -> Profile:
    """log A(y) and μ(y) of every law (rows of ``log_laws``, log probabilities over 0..C−1) at the grid's points.

    log A(z) = z²/(2σ²) + log S(z) with S(z) = Σ_c p_c·e^(−(z − c)²/(2σ²)): one matrix product with the Gaussian
    kernel (shared by every law), each law scaled to a largest probability of 1.  Where S(z) < 10⁻²⁸⁰ a term
    might have underflowed (z far from the law's counts), and those entries are computed again as a
    log-sum-exp, term by term; elsewhere every term that underflows is below 10⁻²⁸ of the sum.
    """
    n, size = log_laws.shape
    counts = np.arange(size, dtype=float)
    s2 = grid.sigma**2
    points = np.concatenate([grid.edges, grid.mids])
    top = log_laws.max(axis=1, keepdims=True)
    weights = np.exp(log_laws - top)  # (n, C), largest 1
    kernel = np.exp(-((points[None, :] - counts[:, None]) ** 2) / (2.0 * s2))  # (C, Z)
    total = weights @ kernel
    moment = (weights * counts[None, :]) @ kernel
    with np.errstate(divide="ignore", invalid="ignore"):
        log_s = np.log(total)
        mean = moment / total
    small = ~(total > 1e-280)
    if np.any(small):
        rows, cols = np.nonzero(small)
        for start in range(0, rows.size, 20_000):
            r, c = rows[start : start + 20_000], cols[start : start + 20_000]
            terms = log_laws[r] - top[r] - (points[c][:, None] - counts[None, :]) ** 2 / (2.0 * s2)  # (m, C)
            peak = terms.max(axis=1, keepdims=True)
            w = np.exp(terms - peak)
            log_s[r, c] = np.log(w.sum(axis=1)) + peak[:, 0]
            mean[r, c] = (w * counts[None, :]).sum(axis=1) / w.sum(axis=1)
    log_a = log_s + top + (points**2 / (2.0 * s2))[None, :]
    finite = np.isfinite(log_laws)
    lowest = np.argmax(finite, axis=1)
    highest = size - 1 - np.argmax(finite[:, ::-1], axis=1)
    rows = np.arange(n)
    # μ lies in [lowest, highest] exactly; clip the rounding
    mean = np.clip(mean, lowest[:, None], highest[:, None])
    g = grid.edges.size
    reach = float(np.max(np.abs(points))) * (size - 1) / s2 + 0.5 * (size - 1) ** 2 / s2
    magnitude = float(np.max(np.abs(log_a))) + reach + float(np.max(points**2)) / (2.0 * s2) + 1.0
    return Profile(
        log_a[:, :g], mean[:, :g], log_a[:, g:], mean[:, g:], lowest, highest,
        log_laws[rows, lowest], log_laws[rows, highest], magnitude,
    )


def _log_interval(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """log(Φ(high) − Φ(low)) for low < high, accurate in both tails (−inf allowed for low, +inf for high).

    Between −5 and 5 both values are above 2.8·10⁻⁷ and the difference is taken directly (its relative error
    is u·Φ/(Φ(high) − Φ(low)), about 10⁻¹³ for the narrowest cells); elsewhere in log space, from the nearer tail.
    """
    flip = low > 0
    a = np.where(flip, -high, low)
    b = np.where(flip, -low, high)  # now a < b and a ≤ 0
    out = np.empty(np.broadcast(a, b).shape)
    a, b = np.broadcast_to(a, out.shape), np.broadcast_to(b, out.shape)
    central = (a > -5.0) & (b < 5.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out[central] = np.log(ndtr(b[central]) - ndtr(a[central]))
        far = ~central
        log_b = log_ndtr(b[far])
        d = log_ndtr(a[far]) - log_b  # ≤ 0
        out[far] = log_b + np.where(d > -math.log(2.0), np.log(-np.expm1(d)), np.log1p(-np.exp(d)))
    return out


def _log_piece(k0: np.ndarray, k1: np.ndarray, start: np.ndarray, low: np.ndarray, high: np.ndarray,
               sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """log ∫_low^high φ_σ(y)·exp(k0 + k1·(y − start)) dy, and the size of the terms that entered it."""
    centre = k1 * sigma**2
    scale = k0 - k1 * start + 0.5 * centre * k1
    log_mass = _log_interval((low - centre) / sigma, (high - centre) / sigma)
    size = np.abs(k0) + np.abs(k1 * start) + np.abs(0.5 * centre * k1) + np.abs(log_mass)
    return scale + log_mass, np.where(np.isfinite(size), size, 0.0)


def _logsumexp_rows(values: np.ndarray) -> np.ndarray:
    top = values.max(axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(values - safe[:, None]).sum(axis=1)) + safe


@dataclass(frozen=True)
class Bracket:
    """Certified bounds ``low`` ≤ truth ≤ ``high`` for each pair, and where the gap between them lies.

    For D_α, ``cells[r, k]`` is cell k's share of pair r's gap in I (relative to I_up) and ``tails[r]`` the
    tails' share; for a likelihood ratio, ``cells[r, k]`` is the upper bound on cell k and ``tails[r]`` on the
    tails.
    """

    low: np.ndarray
    high: np.ndarray
    tails: np.ndarray
    cells: np.ndarray | None = None


def renyi_bracket(
    first: Profile, second: Profile, i: np.ndarray, j: np.ndarray, grid: Grid, alpha: float, rounding: float
) -> Bracket:
    """[low, high] ∋ D_α(p_i ‖ q_j) for the pairs (i[r], j[r]) of laws profiled on ``grid`` (module docstring).

    ``rounding``: the relative error of the laws' probabilities.
    """
    s2 = grid.sigma**2
    a, b, m, h = grid.edges[:-1], grid.edges[1:], grid.mids, grid.widths
    la, lb = first.log_edges[i], second.log_edges[j]
    la_mid, lb_mid = first.log_mids[i], second.log_mids[j]
    mu_a, mu_b = first.mean_mids[i], second.mean_mids[j]
    chord_a = (la[:, 1:] - la[:, :-1]) / h
    chord_b = (lb[:, 1:] - lb[:, :-1]) / h
    # upper: α·chord_A − (α−1)·tangent_B(m); lower: α·tangent_A(m) − (α−1)·chord_B; both linear in (y − a)
    k1_up = alpha * chord_a - (alpha - 1) * mu_b / s2
    k0_up = alpha * la[:, :-1] - (alpha - 1) * (lb_mid + mu_b / s2 * (a - m))
    up, size_up = _log_piece(k0_up, k1_up, a, a, b, grid.sigma)
    k1_low = alpha * mu_a / s2 - (alpha - 1) * chord_b
    k0_low = alpha * (la_mid + mu_a / s2 * (a - m)) - (alpha - 1) * lb[:, :-1]
    low, size_low = _log_piece(k0_low, k1_low, a, a, b, grid.sigma)
    # the tails
    y0, yg = grid.edges[0], grid.edges[-1]
    mu_a0, mu_b0 = first.mean_edges[i, 0], second.mean_edges[j, 0]
    mu_ag, mu_bg = first.mean_edges[i, -1], second.mean_edges[j, -1]
    base0 = alpha * la[:, 0] - (alpha - 1) * lb[:, 0]
    baseg = alpha * la[:, -1] - (alpha - 1) * lb[:, -1]
    ninf, pinf = np.full(i.size, -np.inf), np.full(i.size, np.inf)
    y0s, ygs = np.full(i.size, y0), np.full(i.size, yg)
    left_up, s1 = _log_piece(base0, (alpha * first.lowest[i] - (alpha - 1) * mu_b0) / s2, y0s, ninf, y0s, grid.sigma)
    left_low, s2_ = _log_piece(base0, (alpha * mu_a0 - (alpha - 1) * second.lowest[j]) / s2, y0s, ninf, y0s,
                               grid.sigma)
    right_up, s3 = _log_piece(baseg, (alpha * first.highest[i] - (alpha - 1) * mu_bg) / s2, ygs, ygs, pinf,
                              grid.sigma)
    right_low, s4 = _log_piece(baseg, (alpha * mu_ag - (alpha - 1) * second.highest[j]) / s2, ygs, ygs, pinf,
                               grid.sigma)
    log_up = _logsumexp_rows(np.column_stack([up, left_up, right_up]))
    log_low = _logsumexp_rows(np.column_stack([low, left_low, right_low]))
    cells = np.exp(up - log_up[:, None]) - np.exp(np.minimum(low, up) - log_up[:, None])
    tails = np.exp(np.logaddexp(left_up, right_up) - log_up) - np.exp(np.logaddexp(left_low, right_low) - log_up)
    size = np.maximum.reduce([size_up.max(axis=1), size_low.max(axis=1), s1, s2_, s3, s4])
    size = size + alpha * first.magnitude + alpha * second.magnitude
    # a tilted mean μ off by its rounding (C·u of its size) tilts a tangent by at most that × h/(2σ²)
    slope = 8.0 * _UNIT * (first.highest.max() + 1.0) ** 2 * float(h.max()) / (2.0 * s2)
    margin = (32.0 * _UNIT * size + 4.0 * (2 * alpha - 1) * rounding + 64.0 * _UNIT * math.log2(grid.cells + 3)
              + (2 * alpha - 1) * slope)
    high = (log_up + margin) / (alpha - 1)
    low = np.maximum(0.0, (log_low - margin) / (alpha - 1))
    return Bracket(low, np.maximum(high, low), np.maximum(tails, 0.0), np.maximum(cells, 0.0))


def ratio_bracket(
    first: Profile, second: Profile, i: np.ndarray, j: np.ndarray, grid: Grid, rounding: float
) -> Bracket:
    """[low, high] ∋ sup_y log p_i(y)/q_j(y) for the pairs (module docstring); +inf when the tails diverge."""
    s2 = grid.sigma**2
    a, b, m = grid.edges[:-1], grid.edges[1:], grid.mids
    la, lb = first.log_edges[i], second.log_edges[j]
    lb_mid, mu_b = second.log_mids[j], second.mean_mids[j]
    tangent_a = lb_mid + mu_b / s2 * (a - m)
    tangent_b = lb_mid + mu_b / s2 * (b - m)
    per_cell = np.maximum(la[:, :-1] - tangent_a, la[:, 1:] - tangent_b)
    body = per_cell.max(axis=1)
    y0, yg = grid.edges[0], grid.edges[-1]
    left = _tail_sup(
        la[:, 0] - (second.log_lowest[j] + (second.lowest[j] * y0 - 0.5 * second.lowest[j] ** 2) / s2),
        (first.lowest[i] - second.lowest[j]) / s2,
        la[:, 0] - lb[:, 0],
        (first.lowest[i] - second.mean_edges[j, 0]) / s2,
    )
    right = _tail_sup(
        la[:, -1] - (second.log_highest[j] + (second.highest[j] * yg - 0.5 * second.highest[j] ** 2) / s2),
        (second.highest[j] - first.highest[i]) / s2,
        la[:, -1] - lb[:, -1],
        (second.mean_edges[j, -1] - first.highest[i]) / s2,
    )
    high = np.maximum.reduce([body, left, right])
    # lower bounds: the largest value at a grid point, and the limits in the tails (the ratio of the lowest,
    # resp. highest, terms when both laws share that end of their support; +inf when p reaches beyond q)
    low = (la - lb).max(axis=1)
    left_limit = np.where(first.lowest[i] == second.lowest[j], first.log_lowest[i] - second.log_lowest[j],
                          np.where(first.lowest[i] < second.lowest[j], np.inf, -np.inf))
    right_limit = np.where(first.highest[i] == second.highest[j], first.log_highest[i] - second.log_highest[j],
                           np.where(first.highest[i] > second.highest[j], np.inf, -np.inf))
    low = np.maximum.reduce([low, left_limit, right_limit])
    size = first.magnitude + second.magnitude + np.abs(grid.edges).max() * (first.highest.max() + 1) / s2
    margin = 32.0 * _UNIT * size + 4.0 * rounding
    return Bracket(low - margin, high + margin, np.maximum(left, right) + margin, per_cell + margin)


def _tail_sup(a1: np.ndarray, s1: np.ndarray, a2: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """sup over s ≥ 0 of min(a1 − s1·s, a2 − s2·s): two linear upper bounds along a tail, taken together."""
    out = np.minimum(a1, a2)  # s = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = (a1 - a2) / (s1 - s2)
        value = a1 - s1 * cross
    inside = np.isfinite(cross) & (cross > 0)
    out = np.where(inside, np.maximum(out, value), out)
    limit = np.minimum(np.where(s1 < 0, np.inf, np.where(s1 == 0, a1, -np.inf)),
                       np.where(s2 < 0, np.inf, np.where(s2 == 0, a2, -np.inf)))
    return np.maximum(out, limit)
