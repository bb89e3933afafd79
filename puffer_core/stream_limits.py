"""Where the supremum of temporal privacy leakage becomes infinite (docs/math.md §10).

For an unbounded stream with the same ε at every step, sup_t BPL_t is the least fixed point
α* = L(α*; P^B) + ε or +inf, and likewise sup_t FPL_t with P^F = P
(:func:`puffer_core.stream.leakage_supremum`).  Its proof shows the supremum is finite exactly
when ε < −log m, with m the largest mass that one row of the matrix puts on the columns where
another row is 0.  :func:`tpl_divergence_threshold` gives that threshold for a prior, so a page
can say *why* it reports ∞ and below which ε the supremum is finite.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .priors import MarkovChainPrior
from .stream import backward_matrix, forward_matrix


@dataclass(frozen=True)
class DivergenceThreshold:
    """sup_t TPL_t of an unbounded stream with constant ε is finite exactly when ε < ``eps``.

    ``eps = −log m`` (``inf`` when m = 0: always finite; 0 when m = 1: never finite).  ``m`` is
    attained by ``direction`` ("backward" or "forward") of prior ``prior_index`` for the states
    ``pair = (i, i')``: row i puts mass m on the states row i' rules out.
    """

    eps: float
    m: float
    direction: str | None
    prior_index: int | None
    pair: tuple[int, int] | None


def excluded_mass(matrix: np.ndarray, secrets: np.ndarray) -> tuple[float, tuple[int, int] | None]:
    """m = max over ordered pairs (i, i') of secret states of Σ_{j : Q[i', j] = 0} Q[i, j], and the pair.

    (0, None) when no row puts mass where another has none.  For i = i' the sum is 0, so the
    diagonal never counts.
    """
    states = np.flatnonzero(secrets)
    rows = np.asarray(matrix, dtype=float)[states]
    masses = rows @ (rows == 0).astype(float).T  # masses[a, b] = Σ_j rows[a, j]·[rows[b, j] = 0]
    if masses.size == 0 or masses.max() <= 0:
        return 0.0, None
    a, b = np.unravel_index(int(np.argmax(masses)), masses.shape)
    return float(masses[a, b]), (int(states[a]), int(states[b]))


def tpl_divergence_threshold(prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior]) -> DivergenceThreshold:
    """The ε from which sup_t TPL_t of an unbounded constant-ε stream is +inf (docs/math.md §10).

    TPL's supremum is sup BPL + sup FPL − ε, infinite when either is; each is infinite exactly
    when ε ≥ −log m of its matrix (P^B of the stationary prior, or P), over the pairs of states
    with positive stationary probability.  For a set Θ the smallest threshold counts.  Needs
    priors with the stationary initial distribution, as :func:`puffer_core.stream.tpl_supremum`.
    """
    priors = [prior_or_priors] if isinstance(prior_or_priors, MarkovChainPrior) else list(prior_or_priors)
    if not priors or not all(isinstance(p, MarkovChainPrior) for p in priors):
        raise ValueError("give a MarkovChainPrior or a non-empty list of them (the set Θ)")
    best = DivergenceThreshold(math.inf, 0.0, None, None, None)
    for index, prior in enumerate(priors):
        if not prior.stationary_initial:
            raise ValueError(
                "an unbounded stream needs a prior with the stationary initial distribution (initial=None)"
            )
        secrets = np.asarray(prior.initial) > 0
        for direction, matrix in (("backward", backward_matrix(prior)), ("forward", forward_matrix(prior))):
            m, pair = excluded_mass(matrix, secrets)
            if m > best.m:
                eps = max(0.0, -math.log(m))
                best = DivergenceThreshold(eps, m, direction, index, pair)
    return best
