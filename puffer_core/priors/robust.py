"""Priors fitted with their uncertainty: a robust set Θ from data (docs/math.md §12, §6, §2.1).

A prior fitted from finite data (§6) is an estimate.  Row ``i`` of the transition matrix was
seen ``N[i,·].sum()`` times; with a symmetric Dirichlet(α₀) prior on every row, the posterior
of row ``i`` is Dir(N[i,·] + α₀) (α₀ = 1/K unless set).  :func:`fit_prior_set` returns
Θ = {the smoothed fit} ∪ {M posterior draws}; the a(b) curve of Θ (sup over Θ inside the min
over splits, §2.1) is then robust to the estimation error that the draws represent.
:func:`puffer_core.engine.spread.prior_spread` shows how far ε moves because the prior was
learned: every member's curve, their spread, and the rows that drive it.

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

import numpy as np

from ..data.sequences import Sequences
from ..data.stats import SequenceStats
from ..validation import check_eps, check_whole, is_whole
from .fitting import DEFAULT_SMOOTHING, fit_markov_chain, normalise_counts, smooth_transition, transition_counts
from .models import MarkovChainPrior

MAX_DRAWS = 1000
MAX_DRAW_CELLS = 5_000_000  # draws × K² numbers drawn at once (40 MB per array)


def _generator(seed: object) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if not is_whole(seed) or seed < 0:
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


def check_concentration(concentration: object, k: int) -> float:
    if concentration is None:
        return 1.0 / k
    return check_eps("concentration (the Dirichlet prior α₀ added to every count)", concentration)


def check_sequences(data: object) -> Sequences | SequenceStats:
    """Data a prior is fitted to: :class:`Sequences` or their :class:`SequenceStats` (counts of data of any size)."""
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
    :func:`~puffer_core.priors.fitting.fit_markov_chain` (smoothing must be > 0 here).  Row i of
    each draw is Dir(N[i,·] + α₀) with ``α₀ = concentration`` (default 1/K), then smoothed like
    the fit (module docstring).  Every member has the fit's length and labels and starts in its
    own stationary distribution, as the fit does.  ``seed``: a whole number or a numpy
    Generator; the same seed gives the same draws.
    """
    data = check_sequences(data)
    n_draws = _check_draws(draws)
    alpha = check_concentration(concentration, data.n_states)
    _check_draw_cells(n_draws, data.n_states)
    rng = _generator(seed)
    fit = fit_markov_chain(data, smoothing=smoothing, length=length)  # checks smoothing and length
    tau = _check_positive_smoothing(smoothing)
    sampled = dirichlet_rows(transition_counts(data), alpha, n_draws, rng)
    members = [fit]
    for matrix in sampled:
        members.append(MarkovChainPrior(smooth_draw(matrix, tau), None, fit.length, fit.labels))
    return members
