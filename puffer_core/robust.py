"""Priors fitted with their uncertainty: a robust set Θ from data (docs/math.md §12, §6, §2.1).

A prior fitted from finite data (§6) is an estimate.  Row ``i`` of the transition matrix was
seen ``N[i,·].sum()`` times; with a symmetric Dirichlet(α₀) prior on every row, the posterior
of row ``i`` is Dir(N[i,·] + α₀) (α₀ = 1/K unless set).  :func:`fit_prior_set` returns
Θ = {the smoothed fit} ∪ {M posterior draws}; the a(b) curve of Θ (sup over Θ inside the min
over splits, §2.1) is then robust to the estimation error that the draws represent.
:func:`prior_spread` shows how far ε moves because the prior was learned: every member's
curve, their spread, and the rows that drive it.

Numerical soundness of the draws.  A Dirichlet draw is a row of Gamma(N_ij + α₀) draws,
normalised.  With a small α₀ a Gamma draw can be far below 1e-300 or round to exactly 0, and a
probability that is structurally positive but unrepresentable would make the exact curve
wrong (§2.1) or a chain reducible.  So the Gamma draws are taken in log space
(log G = log Gamma(a+1) + log(U)/a, exact in distribution, never −inf), normalised stably,
and every draw is then smoothed exactly like the fit (§6): entries below τ count as unseen
(0), the row is renormalised, and every zero becomes τ with the mass taken proportionally from
the rest.  Every entry of every member is therefore ≥ τ·(1 − (K−1)τ) > 0: each member is an
irreducible, aperiodic chain with a unique stationary distribution (its initial distribution,
as for the fit), no power P^d underflows, and every a(b) is finite.  This is a deterministic
map applied to the posterior draws: Θ is exactly the set returned, and its curve is exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .curve import InfluenceCurve
from .data import Sequences
from .fitting import DEFAULT_SMOOTHING, fit_markov_chain, normalise_counts, smooth_transition, transition_counts
from .influence import influence_curve
from .priors import MarkovChainPrior
from .stats import SequenceStats
from .validation import check_eps, check_whole

MAX_DRAWS = 1000
MAX_DRAW_CELLS = 5_000_000  # draws × K² numbers drawn at once (40 MB per array)
MAX_THETA_CELLS = 25_000_000  # |Θ| × B × K²: the size of each (Θ, b, pair) table of the robust curve (200 MB)
DEFAULT_ROW_DRAWS = 20  # draws per row in the one-at-a-time row analysis (K·20 small curves)


def _generator(seed: object) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(
            f"seed must be a whole number ≥ 0 or a numpy random Generator, so the draws are reproducible; got {seed!r}"
        )
    return np.random.default_rng(int(seed))


def _check_draws(draws: object) -> int:
    draws = check_whole("draws (the number of posterior draws M)", draws, 1)
    if draws > MAX_DRAWS:
        raise ValueError(f"draws must be at most {MAX_DRAWS}; got {draws} (50 draws show the spread well)")
    return draws


def _check_draw_cells(draws: int, k: int) -> None:
    if draws * k * k > MAX_DRAW_CELLS:
        raise ValueError(
            f"{draws} draws of a {k}×{k} matrix are {draws * k * k:,} numbers, over the limit of {MAX_DRAW_CELLS:,};"
            f" use at most {MAX_DRAW_CELLS // (k * k)} draws"
        )


def _check_theta_cells(members: int, n_b: int, k: int) -> None:
    cells = members * n_b * k * k
    if cells > MAX_THETA_CELLS:
        raise ValueError(
            f"the robust curve of {members} priors with {k} states up to b = {n_b} needs tables of {cells:,} numbers"
            f" (about {16 * cells / 1e6:,.0f} MB), over the limit of {MAX_THETA_CELLS:,}; use at most"
            f" {max(0, MAX_THETA_CELLS // (n_b * k * k) - 1)} draws, or a smaller max_b"
        )


def _check_concentration(concentration: object, k: int) -> float:
    if concentration is None:
        return 1.0 / k
    return check_eps("concentration (the Dirichlet prior α₀ added to every count)", concentration)


def _check_data(data: object) -> Sequences | SequenceStats:
    if not isinstance(data, (Sequences, SequenceStats)):
        raise ValueError(
            f"data must be Sequences (see load_sequences) or SequenceStats (see load_stats); got {type(data).__name__}"
        )
    return data


def _check_positive_smoothing(smoothing: float) -> float:
    """``smoothing`` already passed fit_markov_chain's checks (a number in [0, 1/(K−1))); draws need it > 0."""
    tau = float(smoothing)
    if tau <= 0:
        raise ValueError(
            "posterior draws need smoothing > 0 (e.g. the default 1e-5): each draw is smoothed like the fit so"
            " that no probability underflows and every draw has a unique stationary distribution; got smoothing=0"
        )
    return tau


def dirichlet_rows(
    counts: np.ndarray, concentration: float, draws: int, rng: np.random.Generator
) -> np.ndarray:
    """``draws`` row-stochastic matrices, row i ~ Dir(counts[i,·] + concentration), shape (draws, K, K).

    Gamma draws in log space (log Gamma(a+1) + log(U)/a has the law of log Gamma(a)), then a
    stable softmax per row: no row is ever 0/0.  Entries may still round to 0 for tiny
    concentrations; :func:`fit_prior_set` smooths them (module docstring).
    """
    shape = np.asarray(counts, dtype=float) + concentration
    size = (draws, *shape.shape)
    log_gamma = np.log(rng.gamma(shape + 1.0, size=size)) + np.log1p(-rng.random(size)) / shape
    log_gamma -= log_gamma.max(axis=2, keepdims=True)
    weights = np.exp(log_gamma)
    return weights / weights.sum(axis=2, keepdims=True)


def smooth_draw(transition: np.ndarray, smoothing: float) -> np.ndarray:
    """Smooth a drawn transition matrix like the fit (docs/math.md §6): entries below τ become τ.

    Entries below τ are set to 0, each row is renormalised, and the §6 rule gives every zero τ
    and takes the mass proportionally from the other entries.  Every entry of the result is
    ≥ τ·(1 − (K−1)·τ) > 0 (module docstring).
    """
    matrix = np.asarray(transition, dtype=float)
    return smooth_transition(normalise_counts(np.where(matrix < smoothing, 0.0, matrix)), smoothing)


def fit_prior_set(
    data: Sequences | SequenceStats,
    draws: int = 50,
    seed: int | np.random.Generator = 0,
    concentration: float | None = None,
    smoothing: float = DEFAULT_SMOOTHING,
    length: int | None = None,
) -> list[MarkovChainPrior]:
    """Θ = [the smoothed fit, M posterior draws] (docs/math.md §12): the fit first, then ``draws`` draws.

    ``data`` (Sequences or their SequenceStats), ``smoothing`` and ``length`` are those of
    :func:`~puffer_core.fitting.fit_markov_chain` (smoothing must be > 0 here).  Row i of
    each draw is Dir(N[i,·] + α₀) with ``α₀ = concentration`` (default 1/K), then smoothed like
    the fit (module docstring).  Every member has the fit's length and labels and starts in its
    own stationary distribution, as the fit does.  ``seed``: a whole number or a numpy
    Generator; the same seed gives the same draws.
    """
    data = _check_data(data)
    n_draws = _check_draws(draws)
    alpha = _check_concentration(concentration, data.n_states)
    _check_draw_cells(n_draws, data.n_states)
    rng = _generator(seed)
    fit = fit_markov_chain(data, smoothing=smoothing, length=length)  # checks smoothing and length
    tau = _check_positive_smoothing(smoothing)
    sampled = dirichlet_rows(transition_counts(data), alpha, n_draws, rng)
    members = [fit]
    for matrix in sampled:
        members.append(MarkovChainPrior(smooth_draw(matrix, tau), None, fit.length, fit.labels))
    return members


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
            if isinstance(q, bool) or not isinstance(q, (int, float, np.integer, np.floating)) or not 0 <= q <= 1:
                raise ValueError(f"{name} must be a quantile between 0 and 1; got {q!r}")
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
    :func:`~puffer_core.influence.influence_curve`.  The rows: for each state i and each of the
    first ``row_draws`` draws m, the fit with row i replaced by draw m's row i (every other row
    at the fit) gives a(``row_b``); the standard deviation of those over m is row i's share of
    the spread — a one-at-a-time sensitivity analysis, K·row_draws small curves (0 skips it).
    Rows seen rarely have wide posteriors and usually lead (§12).
    """
    data = _check_data(data)
    row_b = check_whole("row_b", row_b, 1)
    row_draws = check_whole("row_draws", row_draws, 0)
    priors = fit_prior_set(data, draws, seed, concentration, smoothing, length)
    fit = priors[0]
    n_b = min(fit.length if max_b is None else check_whole("max_b", max_b, 1), fit.length - 1)
    _check_theta_cells(len(priors), max(n_b, 1), fit.n_states)
    robust = influence_curve(priors, max_b)
    members = np.stack([influence_curve(p, robust.max_b).a for p in priors])
    return PriorSpread(
        priors=tuple(priors),
        robust=robust,
        members=members,
        visits=transition_counts(data).sum(axis=1),
        row_spread=row_sensitivity(priors, row_b, row_draws),
        row_b=row_b,
        concentration=_check_concentration(concentration, data.n_states),
    )


def row_sensitivity(priors: list[MarkovChainPrior], b: int = 1, draws: int = DEFAULT_ROW_DRAWS) -> np.ndarray:
    """Per state i: the standard deviation of a(b) when only row i of the fit is drawn (docs/math.md §12).

    ``priors`` is :func:`fit_prior_set`'s Θ (the fit first).  For each of the first ``draws``
    draws m, row i of the fit is replaced by row i of draw m (every other row stays at the fit,
    the initial distribution is the new chain's stationary one) and a(b) is computed exactly.
    A row whose posterior is wide moves a(b) on its own; the values rank the rows by how much
    of the spread each one drives.  Zeros when fewer than 2 draws are used or b ≥ the length.
    """
    if not isinstance(priors, (list, tuple)) or not priors or not all(isinstance(p, MarkovChainPrior) for p in priors):
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
