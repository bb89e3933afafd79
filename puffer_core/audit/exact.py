"""Exact leakage by enumeration, the ground truth for small chains (docs/math.md §9).

For a chain short enough to enumerate all K^T sequences and a mechanism with finitely many
outputs, the true leakage is the max over entries t, value pairs (x, x'), priors θ and
outputs ω of log Pr[ω | X_t = x, θ] / Pr[ω | X_t = x', θ]; k releases use the joint output
distribution of k independent runs.  Every ε the project reports must be ≥ this value.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..priors.models import MarkovChainPrior, as_theta, check_no_underflow
from ..validation import check_distribution, check_whole

MAX_SEQUENCES = 200_000
MAX_CELLS = 20_000_000


@dataclass(frozen=True)
class LeakageReport:
    """The exact leakage and where it is attained (0-based entry, states, prior, joint output)."""

    eps: float
    entry: int | None = None
    pair: tuple[int, int] | None = None
    prior_index: int | None = None
    output: tuple[int, ...] | None = None


def all_sequences(n_states: int, length: int) -> np.ndarray:
    """Every state sequence, shape (K^T, T)."""
    return np.array(list(itertools.product(range(n_states), repeat=length)), dtype=int).reshape(-1, length)


def sequence_probabilities(prior: MarkovChainPrior, sequences: np.ndarray) -> np.ndarray:
    """Pr[sequence | θ] for every row of ``sequences``.

    Raises ValueError when a sequence that is possible in exact arithmetic underflows to a
    probability double precision cannot hold: dropping it could make a reported ε too small.
    """
    first = np.asarray(prior.initial)[sequences[:, 0]]
    steps = prior.transition[sequences[:, :-1], sequences[:, 1:]]
    p = first.copy()
    for j in range(steps.shape[1]):
        p *= steps[:, j]
    check_no_underflow(p, (first > 0) & np.all(steps > 0, axis=1), "a sequence")
    return p


def mechanism_matrix(mechanism: Callable[[np.ndarray], object], sequences: np.ndarray) -> np.ndarray:
    """The mechanism's output probabilities for every row of ``sequences``: shape (sequences, outputs).

    ``mechanism`` maps a state sequence (numpy int array) to a probability vector; every
    vector must have the same length, be finite and non-negative, and sum to 1.
    """
    rows = []
    for seq in sequences:
        try:
            probs = np.asarray(mechanism(seq.copy()), dtype=float).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"the mechanism must return a probability vector; got an error: {exc}") from None
        rows.append(probs)
    sizes = {r.size for r in rows}
    if len(sizes) != 1:
        raise ValueError(f"the mechanism returned probability vectors of different lengths {sorted(sizes)}")
    m = np.vstack(rows)
    if not np.all(np.isfinite(m)) or np.any(m < 0):
        raise ValueError("the mechanism returned negative or non-finite probabilities")
    worst = int(np.argmax(np.abs(m.sum(axis=1) - 1)))  # the row furthest from 1, checked by the shared rule
    try:
        check_distribution(m[worst], "the mechanism's output probabilities")
    except ValueError:
        raise ValueError(
            f"the mechanism's output probabilities for sequence {sequences[worst].tolist()} sum to"
            f" {m[worst].sum():.6g}; they must sum to 1"
        ) from None
    return m


def _joint(matrix: np.ndarray, releases: int) -> np.ndarray:
    out = matrix
    for _ in range(releases - 1):
        out = (out[:, :, None] * matrix[:, None, :]).reshape(matrix.shape[0], -1)
    return out


def _tables(
    k: int, length: int, mechanism: Callable[[np.ndarray], object], releases: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every sequence of ``length``, the mechanism's output probabilities for each, and their joint over releases."""
    n_seq = k**length
    if n_seq > MAX_SEQUENCES:
        raise ValueError(
            f"a chain with {k} states and length {length} has {n_seq:,} sequences; exact"
            f" enumeration is limited to {MAX_SEQUENCES:,} (shorten the chain or use fewer states)"
        )
    seqs = all_sequences(k, length)
    matrix = mechanism_matrix(mechanism, seqs)
    n_out = matrix.shape[1] ** releases
    if n_seq * n_out > MAX_CELLS:
        raise ValueError(
            f"{releases} releases with {matrix.shape[1]} outputs each over {n_seq:,} sequences is too large"
            f" to enumerate exactly (limit {MAX_CELLS:,} cells); use fewer releases or a shorter chain"
        )
    joint = _joint(matrix, releases)
    # a joint output that is possible but rounds to 0 would be skipped as impossible
    check_no_underflow(joint, _joint((matrix > 0).astype(float), releases) > 0, "a joint output of the releases")
    return seqs, matrix, joint


def leakage_report(
    prior_or_priors: MarkovChainPrior | list[MarkovChainPrior],
    mechanism: Callable[[np.ndarray], object],
    releases: int = 1,
) -> LeakageReport:
    """The exact leakage with the worst (entry, pair, prior, output); see :func:`exact_leakage`."""
    priors = as_theta(prior_or_priors, "exact_leakage")
    releases = check_whole("releases", releases)
    k = priors[0].n_states
    best = LeakageReport(0.0)
    tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # per length: sequences, outputs, joint
    for index, prior in enumerate(priors):
        if prior.length not in tables:
            tables[prior.length] = _tables(k, prior.length, mechanism, releases)
        seqs, matrix, joint = tables[prior.length]
        probs = sequence_probabilities(prior, seqs)
        for t in range(prior.length):
            onehot = (seqs[:, t][None, :] == np.arange(k)[:, None]) * probs[None, :]  # (K, N)
            mass = onehot.sum(axis=1)
            cond = onehot @ joint  # (K, outputs): Pr[ω, X_t = x]
            for x in range(k):
                for xp in range(k):
                    if x == xp or mass[x] <= 0 or mass[xp] <= 0:
                        continue
                    num = cond[x] / mass[x]
                    den = cond[xp] / mass[xp]
                    pos = num > 0
                    if np.any(pos & (den <= 0)):
                        w = int(np.flatnonzero(pos & (den <= 0))[0])
                        value = math.inf
                    else:
                        ratios = np.full(num.shape, -np.inf)
                        ratios[pos] = np.log(num[pos]) - np.log(den[pos])
                        w = int(np.argmax(ratios))
                        value = float(ratios[w])
                    if value > best.eps:
                        output = tuple(int(v) for v in np.unravel_index(w, (matrix.shape[1],) * releases))
                        best = LeakageReport(value, t, (x, xp), index, output)
    return best


def exact_leakage(
    prior_or_priors: MarkovChainPrior | list[MarkovChainPrior],
    mechanism: Callable[[np.ndarray], object],
    releases: int = 1,
) -> float:
    """The exact Pufferfish leakage of ``releases`` independent runs of ``mechanism`` (docs/math.md §9).

    ``mechanism`` maps a state sequence (numpy int array) to a probability vector over
    finitely many outputs.  Refuses chains with more than 200,000 sequences.
    """
    return leakage_report(prior_or_priors, mechanism, releases).eps
