"""Randomized response: the differentially private answer the classroom compares against (docs/math.md §1, §8).

Unlike the collapse constructions of :mod:`puffer_core.classroom.collapse`, randomized
response is differentially private, so its leakage grows by at most ε per run and never
collapses.  Two forms:

- :func:`randomized_response` answers a :class:`FiniteModel`'s first secret pair with binary
  randomized response (one more model for :func:`check` and :func:`posterior_trace`);
- :func:`randomized_response_per_entry` reports every entry of a state sequence through K-ary
  randomized response, a per-entry ε_DP mechanism in the form
  :func:`puffer_core.audit.exact_leakage` and :func:`model_from_chain` take.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable

import numpy as np

from ..validation import check_eps, check_whole
from .model import FiniteModel, SecretPair


def _exp(name: str, value: float) -> float:
    try:
        return math.exp(value)
    except OverflowError:
        raise ValueError(f"{name} = {value:g} is too large: e^{name} overflows a float") from None


def randomized_response(model: FiniteModel, eps: float) -> FiniteModel:
    """The model's datasets, priors and first secret pair, answered by randomized response.

    Each run reports which secret of the pair holds, truthfully with probability
    e^ε / (1 + e^ε): ε-differentially private between the two secrets, so k runs leak at most k·ε
    (docs/math.md §1, §8).  A dataset where neither secret holds gets a fair coin.  Raises ValueError
    unless ``eps`` is positive and finite.
    """
    if not isinstance(model, FiniteModel):
        raise ValueError(f"randomized_response takes a FiniteModel; got {type(model).__name__}")
    eps = check_eps("ε", eps)
    pair = model.secret_pairs[0]
    odds = _exp("ε", eps)
    truthful = odds / (1.0 + odds)
    says_first, says_second = f"says '{pair.first_label}'", f"says '{pair.second_label}'"

    def answer(dataset: Hashable) -> dict[str, float]:
        if pair.first(dataset):
            return {says_first: truthful, says_second: 1.0 - truthful}
        if pair.second(dataset):
            return {says_first: 1.0 - truthful, says_second: truthful}
        return {says_first: 0.5, says_second: 0.5}

    weights = np.array(model.priors)
    return FiniteModel(
        model.datasets,
        weights,
        [SecretPair(pair.first_label, pair.first, pair.second_label, pair.second)],
        answer,
        outputs=[says_first, says_second],
        name=f"randomized response (ε = {eps:g})",
        prior_labels=model.prior_labels,
    )


def randomized_response_per_entry(n_states: int, eps_dp: float) -> Callable[[np.ndarray], np.ndarray]:
    """Report every entry through K-ary randomized response: per-entry ε_DP-DP (docs/math.md §1).

    The true state is kept with probability e^ε/(e^ε + K − 1), each other state has 1/(e^ε + K − 1);
    the output is the whole noisy sequence (K^T possible outputs).  The returned function maps a
    sequence of states in 0..K−1 to the probabilities of the K^T outputs, in lexicographic order.
    Raises ValueError unless ``n_states`` is a whole number ≥ 2 and ``eps_dp`` is positive and finite.
    """
    n_states = check_whole("n_states (with one state there is no secret)", n_states, minimum=2)
    eps_dp = check_eps("ε_DP", eps_dp)
    odds = _exp("ε_DP", eps_dp)
    keep = odds / (odds + n_states - 1)
    other = 1.0 / (odds + n_states - 1)
    table = np.full((n_states, n_states), other)
    np.fill_diagonal(table, keep)

    def mechanism(sequence: np.ndarray) -> np.ndarray:
        states = np.asarray(sequence)
        if states.ndim != 1 or not np.issubdtype(states.dtype, np.integer):
            raise ValueError(f"a sequence must be a 1-D array of whole-number states; got {sequence!r}")
        if np.any((states < 0) | (states >= n_states)):
            raise ValueError(f"states must be in 0..{n_states - 1}; got {states.tolist()}")
        out = np.ones(1)
        for state in states:
            out = np.outer(out, table[state]).reshape(-1)
        return out

    return mechanism
