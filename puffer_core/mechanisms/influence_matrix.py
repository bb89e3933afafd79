"""An influence-matrix translation in the manner of Ghosh & Kleinberg (ITCS 2017) (docs/math.md §15).

Ghosh and Kleinberg translate a per-entry ε-DP mechanism into *inferential* privacy — how far the
output moves an attacker's odds on one entry, the Pufferfish guarantee — when the correlations
are weak: measured by an influence matrix Φ whose spectral radius must be below 1.  This module
states and proves the translation for a Markov chain prior in this project's own terms; [GK]'s
constants and norms are not copied (docs/math.md §15 says where they may differ).  Sticky chains
usually have ρ(Φ) ≥ 1 and get **no** guarantee: :class:`puffer_core.mechanisms.base.Refused`
says so, with the reason.

**The influence matrix.**  For entries k and j, φ_kj bounds how much changing X_j moves the law of
X_k given every other entry: for every pair of such conditional laws w, w' and every set S of
values, L(δ; w(S), w'(S)) = log((1 + (e^δ − 1)w(S)) / (1 + (e^δ − 1)w'(S))) ≤ φ_kj·δ for all δ ≥ 0.
For a Markov chain the law of X_k given the rest depends on X_{k−1} and X_{k+1} only
(∝ P[x_{k−1}, c]·P[c, x_{k+1}], with the initial law in place of P[x_0, ·] at k = 1), so Φ is
tridiagonal.  Since L(0) = 0, φ may be sup_s L'(s) (then L(δ) ≤ δ·sup L'), which in closed form is
(q − d)/(√(q(1−d)) + √(d(1−q)))² when q + d ≤ 1 and q − d otherwise (q = w(S), d = w'(S): with
x = e^s, L' = x(q − d)/((qx + 1 − q)(dx + 1 − d)) peaks at x² = (1−q)(1−d)/(qd)); and for each δ the
best S is a prefix of the values sorted by w/w' (the prefix rule of docs/math.md §10), so only
prefixes need checking.

**The translation (proof).**  Let g(x) = Pr[ω | X = x] for one output ω; per-entry ε-DP says
log g changes by at most ε when one entry changes.  For a positive f let δ_j(f) be the largest
change of log f when entry j alone changes.  The Gibbs update at k, (Π_k f)(x) = Σ_c Pr[X_k = c |
x_{−k}] f(x with x_k = c), has δ_k(Π_k f) = 0 and δ_j(Π_k f) ≤ δ_j(f) + φ_kj·δ_k(f) for j ≠ k
(the two sums differ by at most e^{δ_j(f)} termwise, and re-weighting values spread by e^{δ_k(f)}
with two conditional laws moves the log of the average by at most L(δ_k(f)) — Cao et al.'s
linear-fractional maximum).  Sweeping the Gibbs updates over every entry but i converges to
E[g | X_i] (all conditionals positive: the chain on the other entries is ergodic), and the
mass δ an update removes at k is handed to each j with weight φ_kj, so the total that ever
reaches i is at most ε·1ᵀ(I − Φ_{−i})^{-1}Φ_{·i} when the spectral radius of Φ without entry i is
below 1 (Neumann series).  So Pr[ω | X_i = a] ≤ e^{ν_i} Pr[ω | X_i = b] with
ν_i = ε·(1 + 1ᵀ(I − Φ_{−i})^{-1}Φ_{·i}), and the release is max_i ν_i-Pufferfish private: a factor
c = max_i ν_i/ε over the mechanism's ε_DP.  Every per-entry ε_DP-DP mechanism gets c·ε_DP, so k
releases (per-entry Σ ε_DP-DP) get c·Σ ε_DP: they add up.  Exact enumeration checks it in the tests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigvalsh_tridiagonal, solve_banded

from ..accounting.events import Composition, NoiseEvent
from ..priors.models import MarkovChainPrior, as_theta
from ..validation import check_eps, check_positive, check_whole
from .base import HISTOGRAM_SENSITIVITY, Refused
from .laplace import LaplaceCounts

MAX_STATES = 60  # K³ pairs of conditional laws per site kind
MAX_LENGTH = 20_000  # T banded solves of up to T unknowns
_SAFETY = 1e-12  # relative raise of each φ (rounding in its closed form)
_RADIUS_MARGIN = 1e-9  # a spectral radius within this of 1 counts as ≥ 1


@dataclass(frozen=True)
class InfluenceTranslation:
    """The influence matrix's numbers for Θ: ``factor`` c (ν = c·ε_DP), or ``reason`` why there is none.

    ``radius`` is the largest spectral radius of Φ without one entry (over the priors); ``phi`` the
    largest influence; ``entry`` (0-based) and ``prior_index`` where the factor is attained.
    """

    factor: float | None
    radius: float
    phi: float
    entry: int | None
    prior_index: int | None
    reason: str | None = None

    @property
    def guarantee(self) -> bool:
        return self.factor is not None


def _sup_slope(q: np.ndarray, d: np.ndarray) -> np.ndarray:
    """sup_{s ≥ 0} d/ds log((1 + (e^s − 1)q)/(1 + (e^s − 1)d)) for q > d (elementwise)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        closed = (q - d) / (np.sqrt(q * (1 - d)) + np.sqrt(d * (1 - q))) ** 2
    return np.where(q + d <= 1.0, closed, q - d)


def _max_influence(rows: np.ndarray, others: np.ndarray) -> float:
    """max over row pairs (rows[p], others[p]) and their prefix sets of the sup slope (see the module docstring)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        key = np.where(rows > others, rows / np.where(others > 0, others, 1.0), 0.0)
        key = np.where((rows > others) & (others == 0), np.inf, key)
    order = np.argsort(-key, axis=1, kind="stable")
    q = np.cumsum(np.take_along_axis(rows, order, axis=1), axis=1)
    d = np.cumsum(np.take_along_axis(others, order, axis=1), axis=1)
    used = np.take_along_axis(rows > others, order, axis=1)
    values = np.where(used & (q > d), _sup_slope(q, d), 0.0)
    return float(values.max(initial=0.0))


def _site_influences(prior: MarkovChainPrior) -> tuple[float, float, float, float]:
    """(φ of entry 1 on a change of entry 2, φ interior ← left, φ interior ← right, φ of entry T ← T − 1)."""
    P = np.asarray(prior.transition)
    init = np.asarray(prior.initial)
    k = P.shape[0]
    # interior: w(c | y, z) ∝ P[y, c]·P[c, z]; table[y, z, c]
    joint = P[:, None, :] * P.T[None, :, :]
    inner = joint / joint.sum(axis=2, keepdims=True)
    ys, yps = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    pairs = ys != yps
    ys, yps = ys[pairs], yps[pairs]
    left = max(_max_influence(inner[ys, z], inner[yps, z]) for z in range(k))  # change x_{k−1}
    right = max(_max_influence(inner[y, ys], inner[y, yps]) for y in range(k))  # change x_{k+1}
    first_rows = init[None, :] * P.T  # first_rows[z, c] ∝ init[c]·P[c, z]
    first_rows = first_rows / first_rows.sum(axis=1, keepdims=True)
    first = _max_influence(first_rows[ys], first_rows[yps])
    last = _max_influence(P[ys], P[yps])  # w(c | y) = P[y, c] at the last entry
    return tuple(min(1.0, v * (1 + _SAFETY)) for v in (first, left, right, last))  # type: ignore[return-value]


def _matrix(length: int, influences: tuple[float, float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Φ's off-diagonals: up[k] = φ_{k,k+1}, down[k] = φ_{k+1,k} (0-based k = 0..T−2)."""
    first, left, right, last = influences
    up = np.full(length - 1, right)  # φ_{k,k+1}: entry k's law when entry k+1 changes
    down = np.full(length - 1, left)  # φ_{k+1,k}: entry k+1's law when entry k changes
    up[0] = first
    down[-1] = last
    return up, down


def _radius(up: np.ndarray, down: np.ndarray) -> float:
    """The spectral radius of a tridiagonal matrix with zero diagonal and non-negative off-diagonals."""
    if up.size == 0:
        return 0.0
    return float(np.abs(eigvalsh_tridiagonal(np.zeros(up.size + 1), np.sqrt(up * down))).max())


def _gains(up: np.ndarray, down: np.ndarray) -> np.ndarray:
    """1ᵀ(I − Φ_{−i})^{-1}Φ_{·i} for every entry i (0-based), by two banded solves per entry."""
    length = up.size + 1
    out = np.zeros(length)
    for i in range(length):
        total = 0.0
        if i > 0:  # the entries before i: mass reaches i from i−1 with weight φ_{i−1,i} = up[i−1]
            n = i
            # (I − Φ_L)ᵀ y = 1, Φ_L[k, k+1] = up[k], Φ_L[k+1, k] = down[k]
            bands = np.zeros((3, n))
            bands[1] = 1.0
            bands[0, 1:] = -down[: n - 1]  # (Φ_Lᵀ)[k, k+1] = Φ_L[k+1, k]
            bands[2, :-1] = -up[: n - 1]  # (Φ_Lᵀ)[k+1, k] = Φ_L[k, k+1]
            y = solve_banded((1, 1), bands, np.ones(n))
            total += float(y[-1]) * up[i - 1]
        if i < length - 1:  # the entries after i: mass reaches i from i+1 with weight φ_{i+1,i} = down[i]
            n = length - 1 - i
            bands = np.zeros((3, n))
            bands[1] = 1.0
            bands[0, 1:] = -down[i + 1 : length - 1]
            bands[2, :-1] = -up[i + 1 : length - 1]
            y = solve_banded((1, 1), bands, np.ones(n))
            total += float(y[0]) * down[i]
        out[i] = total
    return out


def influence_translation(prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior]) -> InfluenceTranslation:
    """The factor c with ν = c·ε_DP for every per-entry ε_DP-DP release (module docstring), or why there is none."""
    priors = as_theta(prior_or_priors, "the influence-matrix translation")
    if priors.n_states > MAX_STATES:
        raise ValueError(f"the influence matrix is limited to {MAX_STATES} states; the prior has {priors.n_states}")
    best = InfluenceTranslation(1.0, 0.0, 0.0, None, None)
    for index, prior in enumerate(priors):
        if prior.length > MAX_LENGTH:
            raise ValueError(f"the influence matrix is limited to T = {MAX_LENGTH:,} entries; got {prior.length:,}")
        if np.any(prior.transition <= 0) or np.any(np.asarray(prior.initial) <= 0):
            return InfluenceTranslation(
                None,
                math.inf,
                1.0,
                None,
                index,
                "the chain rules some transitions out, so one entry can pin down its neighbour: the influence"
                " of an entry on the next reaches 1 and no influence-matrix guarantee follows",
            )
        if prior.length == 1:
            continue
        influences = _site_influences(prior)
        up, down = _matrix(prior.length, influences)
        radius = max(_radius(up[:-1], down[:-1]), _radius(up[1:], down[1:]))
        phi = max(influences)
        if radius >= 1.0 - _RADIUS_MARGIN:
            return InfluenceTranslation(
                None,
                radius,
                phi,
                None,
                index,
                f"the influence matrix has spectral radius {radius:.3g} ≥ 1: each entry moves its neighbours'"
                f" laws by up to {phi:.3g} of what it learns, so the influences never die out along the chain"
                " (a sticky chain) and no guarantee follows — use the a(b) curve or MQM instead",
            )
        gains = _gains(up, down)
        factor = float(1.0 + gains.max()) * (1 + 1e-9)  # rounding in the solves
        if best.factor is None or factor > best.factor or best.prior_index is None:
            entry = int(np.argmax(gains))
            best = InfluenceTranslation(factor, max(radius, best.radius), max(phi, best.phi), entry, index)
    return best


def influence_laplace(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps_puffer: float,
    sensitivity: float = HISTOGRAM_SENSITIVITY,
    queries: int = 1,
) -> LaplaceCounts:
    """Counts + Lap(L/ε_DP) with ε_DP = ε_puffer / c, c the influence-matrix factor (module docstring).

    Refused (:class:`puffer_core.mechanisms.base.Refused`) when the chain gets no guarantee.
    ``queries = m``: the m counts as m queries with ε_DP/m each ([C] §7.1.3), as the other Laplace baselines.
    """
    eps = check_eps("eps_puffer", eps_puffer)
    sensitivity = check_positive("sensitivity", sensitivity)
    queries = check_whole("queries", queries)
    translation = influence_translation(prior_or_priors)
    factor = translation.factor
    if not translation.guarantee or factor is None:
        raise Refused("no_guarantee", f"no influence-matrix guarantee: {translation.reason}")
    eps_dp = eps / factor
    scale = (queries if queries > 1 else sensitivity) / eps_dp
    event = NoiseEvent("influence_matrix", eps, eps_dp, factor, Composition.DP_TRANSLATION, queries)
    return LaplaceCounts(event, scale, HISTOGRAM_SENSITIVITY if queries > 1 else sensitivity)
