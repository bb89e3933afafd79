"""Tests for puffer_core.simulation.metrics: Acc@k, Hit Rate@K, NDCG@K, L1 count error (docs/math.md §7)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puffer_core.simulation.metrics import acc_at_k, hit_rate_at_k, l1_count_error, ndcg_at_k, true_ranking

COUNTS = np.array([50, 30, 20, 10, 0])


def test_hand_computed_without_ties() -> None:
    predicted = [0, 2, 1]  # true ranking is 0, 1, 2: the 2nd and 3rd are swapped
    assert acc_at_k(predicted, COUNTS, 1) == 1.0
    assert acc_at_k(predicted, COUNTS, 2) == 0.0
    assert acc_at_k(predicted, COUNTS, 3) == 0.0
    assert hit_rate_at_k(predicted, COUNTS, 3) == 1.0
    dcg = 50 / 1 + 20 / math.log2(3) + 30 / 2
    ideal = 50 / 1 + 30 / math.log2(3) + 20 / 2
    assert ndcg_at_k(predicted, COUNTS, 3) == pytest.approx(dcg / ideal, rel=1e-14)
    assert l1_count_error(predicted, COUNTS, 3) == 0 + 10 + 10


def test_hand_computed_misses() -> None:
    predicted = [3, 4, 0]  # counts 10, 0, 50 against 50, 30, 20
    assert [acc_at_k(predicted, COUNTS, k) for k in (1, 2, 3)] == [0.0, 0.0, 0.0]
    assert hit_rate_at_k(predicted, COUNTS, 3) == pytest.approx(1 / 3)
    assert hit_rate_at_k(predicted, COUNTS, 2) == 0.0
    dcg = 10 / 1 + 0 / math.log2(3) + 50 / 2
    ideal = 50 / 1 + 30 / math.log2(3) + 20 / 2
    assert ndcg_at_k(predicted, COUNTS, 3) == pytest.approx(dcg / ideal, rel=1e-14)
    assert l1_count_error(predicted, COUNTS, 3) == 40 + 30 + 30
    assert l1_count_error(predicted, COUNTS, 1) == 40


def test_true_ranking_breaks_ties_by_index() -> None:
    assert true_ranking(np.array([5, 10, 5, 10, 1])).tolist() == [1, 3, 0, 2, 4]
    assert true_ranking(np.array([[1, 2, 2], [3, 3, 3]])).tolist() == [[1, 2, 0], [0, 1, 2]]


def test_ties_at_the_boundary_of_the_top_k() -> None:
    counts = np.array([10, 5, 5, 5])  # the true top 2 is state 0 and any one of 1, 2, 3
    assert hit_rate_at_k([0, 3], counts, 2) == 1.0
    assert hit_rate_at_k([3, 0], counts, 2) == 1.0
    assert hit_rate_at_k([2, 3], counts, 2) == 0.5  # only one slot of the top 2 has count 5
    assert hit_rate_at_k([1, 2, 3], counts, 3) == pytest.approx(2 / 3)
    assert acc_at_k([0, 3], counts, 2) == 1.0  # state 3 is as good a 2nd as state 1
    assert acc_at_k([3, 0], counts, 1) == 0.0
    assert acc_at_k([3, 0], counts, 2) == 0.0
    assert l1_count_error([0, 2], counts, 2) == 0.0
    assert ndcg_at_k([0, 3], counts, 2) == 1.0


def test_ties_inside_the_top_k() -> None:
    counts = np.array([7, 7, 3, 1])
    for predicted in ([0, 1], [1, 0]):
        assert acc_at_k(predicted, counts, 1) == acc_at_k(predicted, counts, 2) == 1.0
        assert hit_rate_at_k(predicted, counts, 2) == 1.0
        assert ndcg_at_k(predicted, counts, 2) == 1.0
        assert l1_count_error(predicted, counts, 2) == 0.0


def test_all_zero_counts_every_ranking_is_ideal() -> None:
    counts = np.zeros(4)
    assert ndcg_at_k([3, 2], counts, 2) == 1.0
    assert hit_rate_at_k([3, 2], counts, 2) == 1.0
    assert acc_at_k([3, 2], counts, 1) == 1.0
    assert l1_count_error([3, 2], counts, 2) == 0.0


def test_batched_rows_match_single_calls_and_shared_counts() -> None:
    rng = np.random.default_rng(11)
    rankings = np.array([rng.permutation(5) for _ in range(50)])
    for metric in (acc_at_k, hit_rate_at_k, ndcg_at_k, l1_count_error):
        batched = metric(rankings, COUNTS, 3)
        assert isinstance(batched, np.ndarray) and batched.shape == (50,)
        singles = [metric(r, COUNTS, 3) for r in rankings]
        assert all(isinstance(v, float) for v in singles)
        np.testing.assert_allclose(batched, singles, rtol=1e-14)
        per_trial = metric(rankings, np.tile(COUNTS, (50, 1)), 3)
        np.testing.assert_allclose(per_trial, batched, rtol=1e-14)


def test_per_trial_counts() -> None:
    counts = np.array([[1, 2, 3], [3, 2, 1]])
    rankings = np.array([[2, 1, 0], [2, 1, 0]])
    assert acc_at_k(rankings, counts, 1).tolist() == [1.0, 0.0]
    assert l1_count_error(rankings, counts, 3).tolist() == [0.0, 4.0]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="same state twice"):
        hit_rate_at_k([1, 1, 2], COUNTS, 3)
    with pytest.raises(ValueError, match="between 0 and 4"):
        acc_at_k([0, 5], COUNTS, 2)
    with pytest.raises(ValueError, match="at least k = 3"):
        ndcg_at_k([0, 1], COUNTS, 3)
    with pytest.raises(ValueError, match="k must be"):
        ndcg_at_k([0, 1], COUNTS, 0)
    with pytest.raises(ValueError, match="one row of counts per ranking"):
        acc_at_k(np.zeros((3, 2), dtype=int) + [0, 1], np.ones((2, 5)), 1)
    with pytest.raises(ValueError, match="non-negative"):
        acc_at_k([0, 1], [1, -1, 3], 1)
    with pytest.raises(ValueError, match="integer"):
        acc_at_k([0.5, 1], COUNTS, 1)


# --- the tie rule against brute force over every true ranking the counts allow -----------------------------


def valid_true_rankings(counts: np.ndarray) -> list[tuple[int, ...]]:
    """Every ordering of the states with non-increasing counts (all ways to break ties)."""
    return [
        order
        for order in itertools.permutations(range(counts.size))
        if all(counts[order[i]] >= counts[order[i + 1]] for i in range(counts.size - 1))
    ]


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 6).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 4), min_size=n, max_size=n), st.permutations(range(n)), st.integers(1, n)
        )
    )
)
def test_tie_rule_is_the_best_consistent_true_ranking(case: tuple[list[int], list[int], int]) -> None:
    raw_counts, predicted, k = case
    counts = np.array(raw_counts)
    rankings = valid_true_rankings(counts)
    top = set(predicted[:k])
    best_hits = max(len(top & set(r[:k])) for r in rankings) / k
    assert hit_rate_at_k(predicted, counts, k) == pytest.approx(best_hits)
    for position in range(1, k + 1):
        correct = any(r[position - 1] == predicted[position - 1] for r in rankings)
        assert acc_at_k(predicted, counts, position) == float(correct)
    ideal = sorted(raw_counts, reverse=True)
    dcg = sum(raw_counts[predicted[i]] / math.log2(i + 2) for i in range(k))
    idcg = sum(ideal[i] / math.log2(i + 2) for i in range(k))
    assert ndcg_at_k(predicted, counts, k) == pytest.approx(dcg / idcg if idcg > 0 else 1.0)
    assert l1_count_error(predicted, counts, k) == sum(abs(raw_counts[predicted[i]] - ideal[i]) for i in range(k))
