"""How far a(b) moves because the prior was learned from finite data (docs/math.md §12).

:func:`prior_spread` computes the robust curve of Θ = :func:`puffer_core.priors.robust.fit_prior_set`
(the fit and its Dirichlet posterior draws; sup over Θ inside the min over splits, §2.1), every
member's own curve, their spread, and (:func:`row_sensitivity`) the rows that drive it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.sequences import Sequences
from ..data.stats import SequenceStats
from ..priors.fitting import DEFAULT_SMOOTHING, transition_counts
from ..priors.models import MarkovChainPrior, theta_or_none
from ..priors.robust import check_concentration, check_sequences, fit_prior_set
from ..validation import check_probability, check_whole
from .curve import InfluenceCurve
from .influence import influence_curve

MAX_THETA_CELLS = 25_000_000  # |Θ| × B × K²: the size of each (Θ, b, pair) table of the robust curve (200 MB)
DEFAULT_ROW_DRAWS = 20  # draws per row in the one-at-a-time row analysis (K·20 small curves)


def check_theta_cells(members: int, n_b: int, k: int) -> None:
    cells = members * n_b * k * k
    if cells > MAX_THETA_CELLS:
        raise ValueError(
            f"the robust curve of {members} priors with {k} states up to b = {n_b} needs tables of {cells:,} numbers"
            f" (about {16 * cells / 1e6:,.0f} MB), over the limit of {MAX_THETA_CELLS:,}; use at most"
            f" {max(0, MAX_THETA_CELLS // (n_b * k * k) - 1)} draws, or a smaller max_b"
        )


@dataclass(frozen=True, eq=False)
class PriorSpread:
    """How a(b) moves because the prior was learned from finite data (docs/math.md §12).

    ``priors``: Θ, the fit first.  ``robust``: the curve of Θ (sup over Θ inside the min over
    splits, §2.1) — the one to calibrate with.  ``members[m, b-1]``: member m's own a(b)
    (row 0 the fit, rows 1.. the draws); ``robust.a ≥ members`` pointwise.  ``visits[i]``: how
    many transitions leave state i in the data (N[i,·].sum()).  ``row_spread[i]``: the
    standard deviation of a(``row_b``) over the draws when only row i is drawn and every other
    row stays at the fit (:func:`prior_spread`).
    """

    priors: tuple[MarkovChainPrior, ...]
    robust: InfluenceCurve
    members: np.ndarray
    visits: np.ndarray
    row_spread: np.ndarray
    row_b: int
    concentration: float

    @property
    def states(self) -> tuple[str, ...]:
        return self.priors[0].labels

    @property
    def fit(self) -> np.ndarray:
        """The fitted prior's a(b), b = 1..B."""
        return self.members[0]

    @property
    def draws(self) -> np.ndarray:
        """The posterior draws' a(b), shape (M, B)."""
        return self.members[1:]

    def spread(self) -> np.ndarray:
        """Standard deviation of a(b) over the draws, per b (0 with a single draw)."""
        if self.draws.shape[0] < 2:
            return np.zeros(self.members.shape[1])
        return self.draws.std(axis=0, ddof=1)

    def band(self, low: float = 0.05, high: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Quantiles ``low`` and ``high`` of a(b) over the draws, per b (the band of member curves)."""
        for name, q in (("low", low), ("high", high)):
            check_probability(f"{name} (a quantile)", q)
        if low > high:
            raise ValueError(f"low ({low}) must not exceed high ({high})")
        return np.quantile(self.draws, low, axis=0), np.quantile(self.draws, high, axis=0)

    def rows(self) -> pd.DataFrame:
        """One row per state: its visits and its row spread, the largest spread first."""
        frame = pd.DataFrame(
            {"state": list(self.states), "visits": self.visits, f"spread of a({self.row_b})": self.row_spread}
        )
        return frame.sort_values(f"spread of a({self.row_b})", ascending=False, kind="stable").reset_index(drop=True)


def prior_spread(
    data: Sequences | SequenceStats,
    draws: int = 50,
    seed: int | np.random.Generator = 0,
    concentration: float | None = None,
    smoothing: float = DEFAULT_SMOOTHING,
    length: int | None = None,
    max_b: int | None = None,
    row_b: int = 1,
    row_draws: int = DEFAULT_ROW_DRAWS,
) -> PriorSpread:
    """The robust curve of :func:`fit_prior_set`'s Θ, every member's curve, and the rows driving the spread.

    Arguments as in :func:`fit_prior_set`; ``max_b`` as in
    :func:`~puffer_core.engine.influence.influence_curve`.  The rows: for each state i and each of the
    first ``row_draws`` draws m, the fit with row i replaced by draw m's row i (every other row
    at the fit) gives a(``row_b``); the standard deviation of those over m is row i's share of
    the spread — a one-at-a-time sensitivity analysis, K·row_draws small curves (0 skips it).
    Rows seen rarely have wide posteriors and usually lead (§12).
    """
    data = check_sequences(data)
    row_b = check_whole("row_b", row_b, 1)
    row_draws = check_whole("row_draws", row_draws, 0)
    priors = fit_prior_set(data, draws, seed, concentration, smoothing, length)
    fit = priors[0]
    n_b = min(fit.length if max_b is None else check_whole("max_b", max_b, 1), fit.length - 1)
    check_theta_cells(len(priors), max(n_b, 1), fit.n_states)
    robust = influence_curve(priors, max_b)
    members = np.stack([influence_curve(p, robust.max_b).a for p in priors])
    return PriorSpread(
        priors=tuple(priors),
        robust=robust,
        members=members,
        visits=transition_counts(data).sum(axis=1),
        row_spread=row_sensitivity(priors, row_b, row_draws),
        row_b=row_b,
        concentration=check_concentration(concentration, data.n_states),
    )


def row_sensitivity(priors: list[MarkovChainPrior], b: int = 1, draws: int = DEFAULT_ROW_DRAWS) -> np.ndarray:
    """Per state i: the standard deviation of a(b) when only row i of the fit is drawn (docs/math.md §12).

    ``priors`` is :func:`fit_prior_set`'s Θ (the fit first).  For each of the first ``draws``
    draws m, row i of the fit is replaced by row i of draw m (every other row stays at the fit,
    the initial distribution is the new chain's stationary one) and a(b) is computed exactly.
    A row whose posterior is wide moves a(b) on its own; the values rank the rows by how much
    of the spread each one drives.  Zeros when fewer than 2 draws are used or b ≥ the length.
    """
    if not isinstance(priors, (list, tuple)) or theta_or_none(priors, "row_sensitivity") is None:
        raise ValueError("priors must be the list returned by fit_prior_set (the fit first, then the draws)")
    b = check_whole("b", b, 1)
    draws = check_whole("draws", draws, 0)
    fit = priors[0]
    used = priors[1 : 1 + draws]
    out = np.zeros(fit.n_states)
    if len(used) < 2 or b >= fit.length:
        return out
    for i in range(fit.n_states):
        values = []
        for draw in used:
            if draw.n_states != fit.n_states:
                raise ValueError(f"every prior in Θ must have {fit.n_states} states; got {draw.n_states}")
            matrix = fit.transition.copy()
            matrix[i] = draw.transition[i]
            values.append(influence_curve(MarkovChainPrior(matrix, None, fit.length), b).a[b - 1])
        out[i] = np.std(values, ddof=1)
    return out
