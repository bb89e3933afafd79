"""A chain from one knob: the strength of correlation, from independent to fully correlated (docs/math.md §10).

P(s) = (1 − s)·U + s·I on K states, with U the matrix whose rows are all uniform: at s = 0 every
entry is independent of the one before; at s = 1 the chain never moves (every entry gives all
the others away).  In between the chain stays with probability s + (1 − s)/K, its stationary law
is uniform, and the correlation between entries d steps apart decays as s^d (the eigenvalue of
P(s) on the uniform law's complement is s).  ConTPL (Cao et al.'s teaching demo) generates chains
from such a knob.
"""

from __future__ import annotations

import numpy as np

from ..validation import check_probability, check_whole
from .models import MarkovChainPrior


def strength_matrix(n_states: int, strength: float) -> np.ndarray:
    """P(s) = (1 − s)·U + s·I on ``n_states`` states (see the module docstring)."""
    k = check_whole("n_states", n_states, minimum=2)
    s = check_probability("strength", strength)
    return (1.0 - s) * np.full((k, k), 1.0 / k) + s * np.eye(k)


def strength_prior(n_states: int, strength: float, length: int) -> MarkovChainPrior:
    """The chain P(s), started from its uniform stationary law (given explicitly at s = 1, where it is not unique)."""
    matrix = strength_matrix(n_states, strength)
    initial = np.full(matrix.shape[0], 1.0 / matrix.shape[0]) if strength >= 1.0 else None
    return MarkovChainPrior(matrix, initial, length)
