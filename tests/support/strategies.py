"""The hypothesis strategies the tests share: stochastic matrices, Markov chain priors and small sets Θ.

One home for them (there were four copies): a property test draws its chains here, so every test sees the
same kinds of chains — rows with zeros, stationary or not, of length 1 up — and an improvement (a new edge
case) reaches them all.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from puffer_core import MarkovChainPrior
from tests.support.brute import chain_of_kind

CHAIN_KINDS = ("fast", "dense", "sticky", "sparse", "near-periodic", "periodic", "transient")


@st.composite
def stochastic_matrices(draw: st.DrawFn, max_k: int = 6, zeros: bool = True) -> np.ndarray:
    """A K×K row-stochastic matrix, 2 ≤ K ≤ ``max_k``; entries may be exactly 0 (``zeros``), no row is all 0."""
    k = draw(st.integers(2, max_k))
    entry = st.one_of(st.just(0.0), st.floats(1e-6, 1.0)) if zeros else st.floats(1e-6, 1.0)
    rows = []
    for _ in range(k):
        row = draw(st.lists(entry, min_size=k, max_size=k))
        if sum(row) <= 1e-6:
            row = [0.0] * k
            row[draw(st.integers(0, k - 1))] = 1.0
        rows.append(row)
    matrix = np.array(rows)
    return matrix / matrix.sum(axis=1, keepdims=True)


@st.composite
def chains(draw: st.DrawFn, max_k: int = 4, max_len: int = 9) -> MarkovChainPrior:
    """A Markov chain prior: a matrix of :func:`stochastic_matrices`, length 1..``max_len``, started at its
    stationary distribution or at a drawn one (stationary when the matrix has no unique stationary law)."""
    matrix = draw(stochastic_matrices(max_k))
    k = matrix.shape[0]
    length = draw(st.integers(1, max_len))
    initial = None
    if not draw(st.booleans()):
        w = np.array(draw(st.lists(st.floats(0.01, 1.0), min_size=k, max_size=k)))
        initial = w / w.sum()
    try:
        return MarkovChainPrior(matrix, initial, length=length)
    except ValueError:
        return MarkovChainPrior(matrix, np.full(k, 1.0 / k), length=length)


def fast_mixing(rng: np.random.Generator, k: int) -> np.ndarray:
    """A dense chain that forgets its start quickly: every row near uniform."""
    m = 0.8 / k + 0.2 * rng.dirichlet(np.full(k, 0.3), size=k)
    return m / m.sum(axis=1, keepdims=True)


def prior_of_kind(
    rng: np.random.Generator, kind: str, k: int, length: int, initial: str | None = None
) -> MarkovChainPrior:
    """A chain of ``kind`` (one of :data:`CHAIN_KINDS`) started stationary, at a random law ("random") or in a
    state ("0")."""
    transition = fast_mixing(rng, k) if kind == "fast" else chain_of_kind(rng, k, kind)
    start = None
    if isinstance(initial, str):
        start = rng.dirichlet(np.ones(k)) if initial == "random" else np.eye(k)[int(initial)]
    return MarkovChainPrior(transition, start, length=length)


@st.composite
def small_theta(draw: st.DrawFn) -> list[MarkovChainPrior]:
    """A set Θ of one or two chains over 2–3 states, of any kind and length 1–14 (members without a unique
    stationary law for a stationary start are left out)."""
    k = draw(st.integers(2, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    priors = []
    for _ in range(draw(st.integers(1, 2))):
        length = draw(st.integers(1, 14))
        start = draw(st.sampled_from([None, "random", "0"]))
        try:
            priors.append(prior_of_kind(rng, draw(st.sampled_from(CHAIN_KINDS)), k, length, start))
        except ValueError:
            continue
    if not priors:
        priors.append(prior_of_kind(rng, "fast", k, 5))
    return priors
