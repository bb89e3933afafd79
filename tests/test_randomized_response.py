"""Randomized response, binary on a finite model and K-ary per entry (docs/math.md §1, §3, §8, §9)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from puffer_core import MarkovChainPrior, certify, influence_curve
from puffer_core.audit.exact import exact_leakage
from puffer_core.classroom import (
    FiniteModel,
    SecretPair,
    appendix_j_example,
    check,
    example_1,
    example_2,
    example_3,
    randomized_response,
    randomized_response_per_entry,
)

ROUNDING = 1e-12  # the checkers work with logs of floats: equal values may differ in the last bits


def rr_epsilon(eps: float) -> float:
    """ε of binary randomized response from its definition: log Pr[truth] / Pr[lie]."""
    truthful = math.exp(eps) / (1 + math.exp(eps))
    lie = 1 / (1 + math.exp(eps))
    return math.log(truthful / lie)


def one_bit() -> FiniteModel:
    """Two datasets, one secret each, and a mechanism that says nothing (it is replaced)."""
    pair = SecretPair("bit = 0", lambda d: d == 0, "bit = 1", lambda d: d == 1)
    return FiniteModel([0, 1], {0: 0.3, 1: 0.7}, [pair], {0: {"x": 1.0}, 1: {"x": 1.0}})


# ---------------------------------------------------------------- binary randomized response


@pytest.mark.parametrize(
    "model",
    [one_bit(), example_1(), example_2(3), example_3(0.35, 0.65, 0.4, 0.6), appendix_j_example()],
    ids=["one bit", "[C] Ex. 1", "[C] Ex. 2", "[C] Ex. 3", "[P] App. J"],
)
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0])
def test_k_runs_of_binary_randomized_response_leak_exactly_k_eps(model: FiniteModel, eps: float) -> None:
    """Not merely at most k·ε: the all-truthful output tuple attains it, for every prior."""
    rr = randomized_response(model, eps)
    for k in (1, 2, 3, 4):
        assert check(rr, releases=k).eps == pytest.approx(k * rr_epsilon(eps), rel=ROUNDING, abs=ROUNDING)


def test_binary_randomized_response_keeps_the_model_and_answers_the_first_pair() -> None:
    model = example_3(0.35, 0.65, 0.4, 0.6)
    rr = randomized_response(model, 1.0)
    assert rr.datasets == model.datasets and rr.prior_labels == model.prior_labels
    np.testing.assert_array_equal(rr.priors, model.priors)
    pair = model.secret_pairs[0]
    assert len(rr.secret_pairs) == 1 and rr.secret_pairs[0].first_label == pair.first_label
    assert rr.outputs == (f"says '{pair.first_label}'", f"says '{pair.second_label}'")
    truthful = math.e / (1 + math.e)
    for d, row in zip(model.datasets, rr.mechanism):
        expected = [truthful, 1 - truthful] if pair.first(d) else [1 - truthful, truthful]
        assert row == pytest.approx(expected, abs=1e-15)


def test_a_dataset_outside_both_secrets_gets_a_fair_coin() -> None:
    pair = SecretPair("A", lambda d: d == "A", "B", lambda d: d == "B")
    model = FiniteModel(["A", "B", "C"], {"A": 0.2, "B": 0.3, "C": 0.5}, [pair], {d: {"x": 1.0} for d in "ABC"})
    rr = randomized_response(model, 0.7)
    assert list(rr.mechanism[2]) == [0.5, 0.5]


@pytest.mark.parametrize("eps", [0, -1.0, math.inf, math.nan, 1000.0, "1", True, None])
def test_binary_randomized_response_rejects_a_bad_eps(eps: object) -> None:
    with pytest.raises(ValueError, match="ε"):
        randomized_response(one_bit(), eps)  # type: ignore[arg-type]


def test_binary_randomized_response_needs_a_model() -> None:
    with pytest.raises(ValueError, match="FiniteModel"):
        randomized_response({"datasets": [0, 1]}, 1.0)  # type: ignore[arg-type]


# ---------------------------------------------------------------- K-ary randomized response per entry


def by_hand(sequence: tuple[int, ...], n_states: int, eps_dp: float) -> list[float]:
    """Pr[noisy sequence | sequence] for every noisy sequence in lexicographic order, entry by entry."""
    keep = math.exp(eps_dp) / (math.exp(eps_dp) + n_states - 1)
    other = 1 / (math.exp(eps_dp) + n_states - 1)
    return [
        math.prod(keep if o == x else other for o, x in zip(noisy, sequence))
        for noisy in itertools.product(range(n_states), repeat=len(sequence))
    ]


@pytest.mark.parametrize(("n_states", "length"), [(2, 1), (2, 3), (3, 2), (3, 3), (4, 2)])
def test_per_entry_output_probabilities_sum_to_one_and_match_the_product(n_states: int, length: int) -> None:
    mechanism = randomized_response_per_entry(n_states, 0.8)
    for sequence in itertools.product(range(n_states), repeat=length):
        probs = mechanism(np.array(sequence))
        assert probs.shape == (n_states**length,)
        assert probs.sum() == pytest.approx(1.0, abs=1e-12) and np.all(probs > 0)
        assert probs == pytest.approx(by_hand(sequence, n_states, 0.8), rel=1e-12)


CHAINS = {
    "sticky binary": [[0.9, 0.1], [0.2, 0.8]],
    "nearly deterministic": [[0.99, 0.01], [0.01, 0.99]],
    "independent": [[0.5, 0.5], [0.5, 0.5]],
    "three states": [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]],
}


@pytest.mark.parametrize("matrix", list(CHAINS.values()), ids=list(CHAINS))
@pytest.mark.parametrize("eps_dp", [0.1, 0.5, 2.0])
def test_one_entry_leaks_exactly_eps_dp(matrix: list[list[float]], eps_dp: float) -> None:
    """T = 1: the worst output ratio is keep/other = e^ε_DP, whatever the prior."""
    prior = MarkovChainPrior(matrix, length=1)
    mechanism = randomized_response_per_entry(len(matrix), eps_dp)
    assert exact_leakage(prior, mechanism) == pytest.approx(eps_dp, rel=ROUNDING, abs=ROUNDING)


def random_chains() -> list[list[list[float]]]:
    rng = np.random.default_rng(20240501)
    chains = []
    for n_states in (2, 2, 3, 3):
        matrix = rng.dirichlet(np.full(n_states, 0.7), size=n_states)
        chains.append(matrix.tolist())
    return chains


@pytest.mark.parametrize("matrix", [*CHAINS.values(), *random_chains()])
@pytest.mark.parametrize("length", [1, 2, 3, 4])
@pytest.mark.parametrize("eps_dp", [0.1, 0.5, 1.0, 2.0])
def test_exact_leakage_never_exceeds_the_translation_guarantee(
    matrix: list[list[float]], length: int, eps_dp: float
) -> None:
    """[C] Theorem "Translation" (docs/math.md §3) against the enumerated truth (docs/math.md §9)."""
    prior = MarkovChainPrior(matrix, length=length)
    mechanism = randomized_response_per_entry(len(matrix), eps_dp)
    guarantee = certify(influence_curve(prior), eps_dp).eps_puffer
    assert exact_leakage(prior, mechanism) <= guarantee + ROUNDING


def test_independent_entries_make_the_guarantee_tight() -> None:
    """With independent entries a(1) = 0, so the guarantee is ε_DP, which one entry's output attains."""
    prior = MarkovChainPrior(CHAINS["independent"], length=4)
    mechanism = randomized_response_per_entry(2, 0.5)
    assert certify(influence_curve(prior), 0.5).eps_puffer == pytest.approx(0.5, abs=ROUNDING)
    assert exact_leakage(prior, mechanism) == pytest.approx(0.5, abs=ROUNDING)


@pytest.mark.parametrize(
    ("n_states", "eps_dp", "message"),
    [
        (1, 1.0, "n_states"),
        (0, 1.0, "n_states"),
        (2.0, 1.0, "n_states"),
        (True, 1.0, "n_states"),
        (2, 0.0, "ε_DP"),
        (2, -0.5, "ε_DP"),
        (2, math.inf, "ε_DP"),
        (2, math.nan, "ε_DP"),
        (2, 1000.0, "ε_DP"),
    ],
)
def test_per_entry_randomized_response_rejects_bad_parameters(n_states: object, eps_dp: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        randomized_response_per_entry(n_states, eps_dp)  # type: ignore[arg-type]


@pytest.mark.parametrize("sequence", [np.array([0, 2]), np.array([-1, 0]), np.array([0.0, 1.0]), np.zeros((2, 2), int)])
def test_per_entry_randomized_response_rejects_a_bad_sequence(sequence: np.ndarray) -> None:
    with pytest.raises(ValueError, match="state"):
        randomized_response_per_entry(2, 1.0)(sequence)
