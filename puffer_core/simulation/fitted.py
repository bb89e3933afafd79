"""A fitted prior honest about its counts: what the smoothing τ does to a(1) and b* (docs/math.md §6, §12).

A chain fitted from data gives every transition never observed the smoothing τ (§6).  Such a
transition enters a(b) through log ratios like log(P/τ), so a(1) — and with it the best window
b* and the ε_DP a target ε_puffer allows — can depend on τ more than on the data.
:func:`smoothing_effect` refits the chain for several τ and reports a(1), the calibration at a
target ε_puffer and the transitions that drive a(1) (:func:`puffer_core.engine.drivers.influence_drivers`);
the Dirichlet posterior of the counts (§12, :func:`puffer_core.priors.robust.fit_prior_set`) is
the principled alternative to a single τ: :func:`dirichlet_alternative` gives its robust a(1)
and calibration beside them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..accounting.calibration import Calibration, calibrate
from ..data.sequences import Sequences
from ..data.stats import SequenceStats
from ..engine.drivers import InfluenceDrivers, influence_drivers
from ..engine.influence import influence_curve
from ..priors.fitting import fit_markov_chain, transition_counts
from ..priors.models import MarkovChainPrior
from ..priors.robust import check_concentration, check_sequences, fit_prior_set
from ..validation import check_eps

SMOOTHING_GRID = (1e-5, 1e-4, 1e-3, 1e-2, 0.1)


@dataclass(frozen=True)
class SmoothingRow:
    """The fit at one τ: a(1), the calibration at the target and what drives a(1)."""

    smoothing: float
    a1: float
    calibration: Calibration
    drivers: InfluenceDrivers


@dataclass(frozen=True)
class SmoothingEffect:
    """:func:`smoothing_effect`'s answer: one row per τ, the target, the data's transition counts."""

    rows: tuple[SmoothingRow, ...]
    eps_puffer: float
    counts: np.ndarray
    unseen: int

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "smoothing τ": [r.smoothing for r in self.rows],
                "a(1)": [r.a1 for r in self.rows],
                "b*": [r.calibration.b for r in self.rows],
                "a(b*)": [r.calibration.a for r in self.rows],
                "ε_DP per entry": [r.calibration.eps_dp for r in self.rows],
                "falls back to group DP": [r.calibration.group_dp for r in self.rows],
                "unseen transitions drive a(1)": [bool(r.drivers.unseen) for r in self.rows],
            }
        )


def _check_grid(smoothings: Sequence[float], k: int) -> tuple[float, ...]:
    values = tuple(float(v) for v in smoothings)
    if not values:
        raise ValueError("give at least one smoothing value τ, e.g. (1e-5, 1e-3, 0.1)")
    for v in values:
        if not 0 < v < 1 / (k - 1):
            raise ValueError(
                f"every smoothing τ must lie in (0, 1/(K−1)) = (0, {1 / (k - 1):.4g}) for {k} states; got {v}"
            )
    return values


def smoothing_effect(
    data: Sequences | SequenceStats,
    eps_puffer: float,
    smoothings: Sequence[float] = SMOOTHING_GRID,
    length: int | None = None,
) -> SmoothingEffect:
    """Refit the chain for every τ in ``smoothings``: a(1), b* and ε_DP at ``eps_puffer``, and a(1)'s drivers."""
    data = check_sequences(data)
    eps = check_eps("eps_puffer", eps_puffer)
    grid = _check_grid(smoothings, data.n_states)
    counts = transition_counts(data)
    rows = []
    for tau in grid:
        prior = fit_markov_chain(data, smoothing=tau, length=length)
        curve = influence_curve(prior)
        rows.append(SmoothingRow(tau, float(curve.a[0]), calibrate(curve, eps), influence_drivers(prior, counts)))
    return SmoothingEffect(tuple(rows), eps, counts, int((counts == 0).sum()))


@dataclass(frozen=True)
class DirichletAlternative:
    """The Dirichlet posterior of the counts (§12) instead of one τ.

    ``mean_*``: the posterior-mean chain (N[i, j] + α₀)/(N[i, ·] + K·α₀), a single chain that
    smooths by the counts' own uncertainty; ``robust_*``: Θ = the fit (smoothing τ) and
    ``draws`` posterior draws, calibrated for all at once; ``draws_a1``: each draw's own a(1),
    how far the data leave a(1) undetermined.
    """

    concentration: float
    mean_a1: float
    mean_calibration: Calibration
    robust_a1: float
    robust_calibration: Calibration
    draws_a1: np.ndarray
    draws: int
    seed: int
    smoothing: float


def posterior_mean_chain(data: Sequences | SequenceStats, concentration: float | None = None, length: int | None = None
                         ) -> MarkovChainPrior:
    """The posterior-mean transition matrix of Dir(N[i, ·] + α₀) per row (α₀ = 1/K by default), as a prior."""
    data = check_sequences(data)
    alpha = check_concentration(concentration, data.n_states)
    counts = transition_counts(data) + alpha
    return MarkovChainPrior(counts / counts.sum(axis=1, keepdims=True), None,
                            data.max_length if length is None else length, data.states)


def dirichlet_alternative(
    data: Sequences | SequenceStats,
    eps_puffer: float,
    draws: int = 20,
    seed: int = 0,
    concentration: float | None = None,
    smoothing: float = 1e-5,
    length: int | None = None,
) -> DirichletAlternative:
    """The posterior-mean chain and the robust Θ (fit + ``draws`` draws) at ``eps_puffer`` (docs/math.md §12)."""
    eps = check_eps("eps_puffer", eps_puffer)
    mean_chain = posterior_mean_chain(data, concentration, length)  # checks the data
    alpha = check_concentration(concentration, data.n_states)
    mean_curve = influence_curve(mean_chain)
    priors = fit_prior_set(data, draws=draws, seed=seed, concentration=concentration, smoothing=smoothing,
                           length=length)
    robust = influence_curve(priors)
    each = np.array([influence_curve(p, 1).a[0] if p.length > 1 else 0.0 for p in priors[1:]])
    return DirichletAlternative(
        concentration=float(alpha),
        mean_a1=float(mean_curve.a[0]),
        mean_calibration=calibrate(mean_curve, eps),
        robust_a1=float(robust.a[0]),
        robust_calibration=calibrate(robust, eps),
        draws_a1=each,
        draws=draws,
        seed=seed,
        smoothing=smoothing,
    )
