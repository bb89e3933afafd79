"""Noisy counts → a valid chain, by post-processing only (docs/math.md §19.4).

:func:`fit_synthetic_chain` reads a :class:`~puffer_core.synthesis.release.NoisyCounts` and nothing else.  Two
methods:

- ``"projection"`` (default).  The total of each group's transition counts, Σ_u (T_u − 1), and its number of
  users are public (the lengths are), so the true counts lie in the scaled simplex
  {V ≥ 0, ΣV = total}.  The noisy counts are projected onto it (Euclidean projection: subtract one threshold τ
  from every count and clip at 0).  The set is convex and holds the truth, so the projection is never farther
  from the true counts than the noisy counts were (in L2), and it keeps rows sparse where the noise made them
  dense.  Each row is then the posterior mean of a Dirichlet whose centre is the next coarser estimate (a
  group's row: the same row pooled over groups; a pooled row: where all transitions go) and whose weight is
  ``shrink`` times one count's expected noise E|Z| (√G times for a row pooled over G groups): a row whose mass
  is far above the noise of a count keeps its own frequencies, a row near it borrows from the coarser
  estimate, a row with nothing left becomes the coarser estimate.  First states: the same, centred on the
  group's share of entries in each state.  ``shrink = 1`` was chosen on the built-in datasets
  (``benchmarks/bench_synthesis.py --methods``, docs/math.md §19.4).
- ``"dirichlet"``: clip negative counts at 0 and add α₀ = 1/K to every count (the posterior mean of a
  symmetric Dirichlet, docs/math.md §12), for comparison.

The fitted prior (the attacker's belief) is never used: when it was fitted on the same data it would be a
second, unaccounted look at them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..validation import check_choice, is_number
from .privacy import expected_abs_noise
from .release import NoisyCounts

METHODS = ("projection", "dirichlet")


def project_to_total(values: np.ndarray, total: float) -> np.ndarray:
    """The Euclidean projection of ``values`` onto {v ≥ 0, Σv = total} (``total`` ≥ 0), along the last axis.

    v = max(values − τ, 0) with the one τ that makes Σv = total (Duchi, Shalev-Shwartz, Singer & Chandra,
    "Efficient projections onto the ℓ1-ball for learning in high dimensions", ICML 2008, Figure 1).
    """
    x = np.asarray(values, dtype=float)
    if total <= 0:
        return np.zeros_like(x)
    u = np.sort(x, axis=-1)[..., ::-1]
    cumulative = np.cumsum(u, axis=-1) - total
    index = np.arange(1, x.shape[-1] + 1)
    positive = u - cumulative / index > 0
    rho = x.shape[-1] - np.argmax(positive[..., ::-1], axis=-1)  # the last index where it holds (1-based)
    tau = np.take_along_axis(cumulative, (rho - 1)[..., None], axis=-1) / rho[..., None]
    return np.maximum(x - tau, 0.0)


def _rows_toward(counts: np.ndarray, centre: np.ndarray, weight: float) -> np.ndarray:
    """Row-wise Dirichlet posterior means: (counts + weight·centre) / (Σ counts + weight); empty rows → centre."""
    totals = counts.sum(axis=-1, keepdims=True)
    denominator = totals + weight
    safe = np.where(denominator > 0, denominator, 1.0)
    return np.where(denominator > 0, (counts + weight * centre) / safe, centre)


def _distribution(weights: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    total = weights.sum()
    return weights / total if total > 0 else fallback


@dataclass(frozen=True, eq=False)
class SyntheticChain:
    """The chain each group's synthetic users are drawn from (docs/math.md §19.4); computed from the release only.

    ``initial`` ``(G, K)`` and ``transition`` ``(G, K, K)`` are probability rows; ``counts`` ``(G, K, K)`` and
    ``first_counts`` ``(G, K)`` are the denoised counts they were normalised from.
    """

    states: tuple[str, ...]
    groups: tuple[str, ...] | None
    initial: np.ndarray
    transition: np.ndarray
    counts: np.ndarray
    first_counts: np.ndarray
    method: str

    def __post_init__(self) -> None:
        for name in ("initial", "transition", "counts", "first_counts"):
            array = np.array(getattr(self, name), dtype=float)
            array.setflags(write=False)
            object.__setattr__(self, name, array)

    @property
    def n_groups(self) -> int:
        return 1 if self.groups is None else len(self.groups)


def fit_synthetic_chain(release: NoisyCounts, method: str = "projection", shrink: float = 1.0) -> SyntheticChain:
    """The synthetic chain of every group from the noisy counts alone (module docstring).

    ``shrink`` ≥ 0: the weight of the coarser estimate in each row, in units of one count's expected noise E|Z|.
    """
    check_choice("method", method, METHODS)
    if not is_number(shrink) or not 0 <= shrink < math.inf:
        raise ValueError(f"shrink must be a finite number ≥ 0; got {shrink!r}")
    k = release.n_states
    noisy = release.transitions.astype(float)
    first = release.first_states.astype(float)
    uniform = np.full(k, 1.0 / k)
    if method == "dirichlet":
        counts = np.maximum(noisy, 0.0) + 1.0 / k
        first_counts = np.maximum(first, 0.0) + 1.0 / k
        transition = counts / counts.sum(axis=-1, keepdims=True)
        initial = first_counts / first_counts.sum(axis=-1, keepdims=True)
        return SyntheticChain(release.states, release.groups, initial, transition, counts, first_counts, method)
    weight = float(shrink) * expected_abs_noise(release.scale)
    totals = release.transitions_per_group
    users = release.users_per_group
    counts = np.stack([project_to_total(noisy[g].ravel(), float(totals[g])).reshape(k, k)
                       for g in range(release.n_groups)])
    first_counts = np.stack([project_to_total(first[g], float(users[g])) for g in range(release.n_groups)])
    pooled = counts.sum(axis=0)
    where_to = _distribution(pooled.sum(axis=0), uniform)
    groups = release.n_groups
    pooled_rows = _rows_toward(pooled, where_to[None, :], weight * math.sqrt(groups))
    if groups == 1:
        transition = pooled_rows[None]
    else:
        transition = np.stack([_rows_toward(counts[g], pooled_rows, weight) for g in range(groups)])
    occupancy = counts.sum(axis=1) + first_counts
    pooled_occupancy = _distribution(occupancy.sum(axis=0), uniform)
    initial = np.stack([
        _rows_toward(first_counts[g], _distribution(occupancy[g], pooled_occupancy), weight) for g in range(groups)
    ])
    return SyntheticChain(release.states, release.groups, initial, transition, counts, first_counts, method)
