"""The attacker's beliefs: priors, their kinds, and priors fitted from data (docs/math.md §1, §6, §12).

- :mod:`.models`: :class:`MarkovChainPrior`, :class:`GaussianProcessPrior`, stationary distributions;
- :mod:`.kinds`: one :class:`PriorKind` record per kind of prior (parameters, codecs, builder, description);
- :mod:`.fitting`: a Markov chain fitted to sequences, and train/test splits;
- :mod:`.robust`: a set Θ around a fit (Dirichlet posterior draws); how far its curves spread is
  :mod:`puffer_core.engine.spread`, above the engine.
"""

from .fitting import DEFAULT_SMOOTHING, fit_markov_chain, split_by_time, split_by_users, transition_counts
from .kinds import PRIOR_KINDS, PriorKind, cyclic_matrix, kind_of, prior_kind, random_matrix, sticky_matrix
from .models import (
    GaussianProcessPrior,
    MarkovChainPrior,
    Theta,
    as_theta,
    stationary_distribution,
)
from .robust import fit_prior_set

__all__ = [
    "DEFAULT_SMOOTHING",
    "GaussianProcessPrior",
    "MarkovChainPrior",
    "PRIOR_KINDS",
    "PriorKind",
    "Theta",
    "as_theta",
    "cyclic_matrix",
    "fit_markov_chain",
    "fit_prior_set",
    "kind_of",
    "prior_kind",
    "random_matrix",
    "split_by_time",
    "split_by_users",
    "stationary_distribution",
    "sticky_matrix",
    "transition_counts",
]
