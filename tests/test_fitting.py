"""Tests for puffer_core.priors.fitting: the fitted Markov chain prior and train/test splits (docs/math.md §6)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from puffer_core.data.readers import load_sequences
from puffer_core.errors import DataError
from puffer_core.priors.fitting import (
    first_state_distribution,
    fit_markov_chain,
    normalise_counts,
    smooth_transition,
    split_by_time,
    split_by_users,
    transition_counts,
)

ASSETS = Path(__file__).resolve().parent.parent / "assets"

# user a (times out of order in the file): x y x x;  user b: y y z
TINY = pd.DataFrame(
    {
        "user": ["a", "b", "a", "b", "a", "a", "b"],
        "time": [3, 1, 1, 2, 2, 4, 3],
        "state": ["x", "y", "x", "y", "y", "x", "z"],
    }
)


def test_counts_match_hand_counting() -> None:
    seqs = load_sequences(TINY)
    assert seqs.states == ("x", "y", "z")
    # a: x→y, y→x, x→x;  b: y→y, y→z;  a's last x → b's first y is not a transition
    expected = np.array([[1, 1, 0], [1, 1, 1], [0, 0, 0]])
    np.testing.assert_array_equal(transition_counts(seqs), expected)


def test_fit_without_smoothing_is_the_row_normalised_counts() -> None:
    prior = fit_markov_chain(load_sequences(TINY), smoothing=0)
    expected = np.array([[1 / 2, 1 / 2, 0], [1 / 3, 1 / 3, 1 / 3], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(prior.transition, expected, rtol=0, atol=1e-15)
    assert prior.labels == ("x", "y", "z")
    assert prior.length == 4  # the longest sequence
    assert prior.stationary_initial
    # π P = π by hand: π_z = (π_y + π_z)/3 gives π_y = 2π_z; π_x/2 = (π_y + π_z)/3 = π_z; so π ∝ (2, 2, 1)
    np.testing.assert_allclose(prior.initial, np.array([2, 2, 1]) / 5, atol=1e-12)


def test_fit_with_smoothing_follows_the_formula() -> None:
    tau = 1e-3
    prior = fit_markov_chain(load_sequences(TINY), smoothing=tau, length=10)
    # row x has one zero: it gets τ and the two halves each give up half of τ
    expected = np.array(
        [
            [0.5 * (1 - tau), 0.5 * (1 - tau), tau],
            [1 / 3, 1 / 3, 1 / 3],
            [1 / 3, 1 / 3, 1 / 3],  # never left: uniform, nothing to smooth
        ]
    )
    np.testing.assert_allclose(prior.transition, expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(prior.transition.sum(axis=1), 1.0, atol=1e-15)
    assert prior.length == 10


def test_smoothing_reproduces_the_papers_example() -> None:
    # [C] Appendix D.2: rows as printed (4 decimals) and after smoothing with τ = 1e-5 (5 decimals)
    before = np.array(
        [
            [0.0361, 0.0120, 0.4698, 0.1325, 0.3493, 0.0],
            [0.0, 0.0, 0.0897, 0.4615, 0.4487, 0.0],
            [0.0125, 0.0251, 0.1006, 0.0911, 0.7704, 0.0],
            [0.2, 0.2, 0.2, 0.2, 0.2, 0.0],
        ]
    )
    after = np.array(
        [
            [0.03614, 0.01205, 0.46987, 0.13253, 0.34939, 1e-05],
            [1e-05, 1e-05, 0.08974, 0.46152, 0.44870, 1e-05],
            [0.01258, 0.02516, 0.10063, 0.09119, 0.77043, 1e-05],
            [0.19999, 0.19999, 0.19999, 0.19999, 0.19999, 1e-05],
        ]
    )
    smoothed = smooth_transition(before, 1e-5)
    np.testing.assert_allclose(smoothed, after, atol=1e-4)
    assert np.all(smoothed[:, -1] == 1e-5) and smoothed[1, 0] == 1e-5


@settings(max_examples=150, deadline=None)
@given(
    arrays(np.int64, st.tuples(st.integers(2, 8), st.just(8)), elements=st.integers(0, 5)),
    st.sampled_from([0.0, 1e-9, 1e-5, 1e-3, 0.1]),
)
def test_smoothing_keeps_rows_stochastic(raw: np.ndarray, tau: float) -> None:
    k = raw.shape[0]
    counts = raw[:, :k]
    matrix = normalise_counts(counts)
    smoothed = smooth_transition(matrix, tau)
    np.testing.assert_allclose(smoothed.sum(axis=1), 1.0, atol=1e-12)
    for i in range(k):
        if counts[i].sum() == 0:
            np.testing.assert_array_equal(matrix[i], np.full(k, 1 / k))
        zeros = matrix[i] == 0
        assert np.all(smoothed[i, zeros] == tau)
        np.testing.assert_allclose(smoothed[i, ~zeros], matrix[i, ~zeros] * (1 - zeros.sum() * tau), rtol=1e-14)
    if tau > 0:
        assert np.all(smoothed > 0)


def test_unvisited_states_get_uniform_rows() -> None:
    # state c is only ever a user's last entry, state d only a single-entry user's entry
    frame = pd.DataFrame({"user": [1, 1, 1, 2, 2, 3], "time": [1, 2, 3, 1, 2, 1], "state": list("abcbad")})
    prior = fit_markov_chain(load_sequences(frame))
    np.testing.assert_array_equal(prior.transition[2], np.full(4, 0.25))
    np.testing.assert_array_equal(prior.transition[3], np.full(4, 0.25))
    assert np.all(prior.transition > 0)


def simulate(transition: np.ndarray, n_users: int, length: int, rng: np.random.Generator) -> pd.DataFrame:
    k = transition.shape[0]
    cumulative = np.cumsum(transition, axis=1)
    states = np.empty((n_users, length), dtype=np.int64)
    states[:, 0] = rng.integers(0, k, n_users)
    for t in range(1, length):
        u = rng.random(n_users)[:, None]
        states[:, t] = (u > cumulative[states[:, t - 1]]).sum(axis=1)
    return pd.DataFrame(
        {
            "user": np.repeat(np.arange(n_users), length),
            "time": np.tile(np.arange(length), n_users),
            "state": np.array(["s0", "s1", "s2", "s3"])[states.ravel()],
        }
    )


def test_recovers_a_known_chain_from_a_large_sample() -> None:
    truth = np.array(
        [
            [0.7, 0.2, 0.1, 0.0],
            [0.1, 0.6, 0.2, 0.1],
            [0.0, 0.3, 0.5, 0.2],
            [0.25, 0.25, 0.25, 0.25],
        ]
    )
    rng = np.random.default_rng(7)
    frame = simulate(truth, n_users=400, length=300, rng=rng)
    frame = frame.sample(frac=1.0, random_state=3)  # row order must not matter
    prior = fit_markov_chain(load_sequences(frame))
    # ≈ 30,000 transitions per row: the standard error is below 0.003
    np.testing.assert_allclose(prior.transition, truth, atol=0.012)
    assert prior.transition[0, 3] == pytest.approx(1e-5, rel=1e-12)  # never observed, smoothed
    assert prior.length == 300


def test_reducible_chain_without_smoothing_uses_first_states() -> None:
    # {x, y} and {z, w} never reach each other: two closed classes, no unique stationary distribution
    frame = pd.DataFrame(
        {
            "user": [1] * 5 + [2] * 4 + [3] * 2,
            "time": list(range(5)) + list(range(4)) + [0, 1],
            "state": list("xxyyxzwzwyx"),
        }
    )
    seqs = load_sequences(frame)
    prior = fit_markov_chain(seqs, smoothing=0)
    assert not prior.stationary_initial
    first = dict(zip(seqs.states, prior.initial, strict=True))
    assert first == {"w": 0.0, "x": 1 / 3, "y": 1 / 3, "z": 1 / 3}
    np.testing.assert_array_equal(first_state_distribution(seqs), prior.initial)
    assert fit_markov_chain(seqs).stationary_initial  # smoothing connects the classes


def test_fit_argument_checks() -> None:
    seqs = load_sequences(TINY)
    with pytest.raises(ValueError, match="≥ 0"):
        fit_markov_chain(seqs, smoothing=-1e-5)
    with pytest.raises(ValueError, match="too large for 3 states"):
        fit_markov_chain(seqs, smoothing=0.5)
    with pytest.raises(ValueError, match="length"):
        fit_markov_chain(seqs, length=0)
    with pytest.raises(TypeError, match="Sequences"):
        fit_markov_chain(TINY)  # type: ignore[arg-type]


def test_fitting_a_million_rows_is_fast() -> None:
    rng = np.random.default_rng(0)
    n = 1_000_000
    frame = pd.DataFrame(
        {"user": np.sort(rng.integers(0, 20_000, n)), "time": np.arange(n), "state": rng.integers(0, 78, n)}
    )
    seqs = load_sequences(frame)
    start = time.perf_counter()
    prior = fit_markov_chain(seqs)
    elapsed = time.perf_counter() - start
    assert prior.n_states == 78
    assert transition_counts(seqs).sum() == n - seqs.n_users
    assert elapsed < 2.0, f"fitting 1M rows took {elapsed:.2f} s"


# --- splits -----------------------------------------------------------------------------------------------


def test_split_by_time_per_user() -> None:
    frame = pd.DataFrame({"user": [1] * 4 + [2] * 3 + [3], "time": [4, 3, 2, 1, 1, 2, 3, 1], "state": list("abcdabca")})
    seqs = load_sequences(frame)
    train, test = split_by_time(seqs, 0.5)
    # user 1 in time order: d c b a → 2 + 2; user 2: a b c → 1 + 2; user 3: a → 0 + 1
    assert [train.states[c] for c in train.codes] == ["d", "c", "a"]
    assert [test.states[c] for c in test.codes] == ["b", "a", "b", "c", "a"]
    assert list(train.users) == [1, 2] and list(test.users) == [1, 2, 3]
    assert train.states == test.states == seqs.states


def test_split_by_time_global_cut() -> None:
    frame = pd.DataFrame({"user": [1, 1, 1, 2, 2], "time": [0, 5, 10, 7, 9], "state": list("ababa")})
    train, test = split_by_time(load_sequences(frame), 0.8, mode="global")  # cut at t = 8
    assert train.frame["time"].tolist() == [0, 5, 7]
    assert test.frame["time"].tolist() == [10, 9]
    checkins = load_sequences(ASSETS / "checkins.csv", group="country")
    train, test = split_by_time(checkins, 0.8, mode="global")
    assert train.frame["time"].max() < test.frame["time"].min()
    assert train.n_entries + test.n_entries == checkins.n_entries


def test_split_by_time_errors() -> None:
    seqs = load_sequences(TINY)
    with pytest.raises(DataError, match="training part is empty"):
        split_by_time(seqs, 0.1)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        split_by_time(seqs, 1.0)
    with pytest.raises(ValueError, match="mode"):
        split_by_time(seqs, 0.5, mode="random")


def test_split_by_users_is_stratified_and_disjoint() -> None:
    frame = pd.DataFrame(
        {
            "user": np.repeat(np.arange(24), 3),
            "time": np.tile([1, 2, 3], 24),
            "state": np.tile(["a", "b", "a"], 24),
            "g": np.repeat(["big"] * 15 + ["mid"] * 6 + ["one"] + ["two"] * 2, 3),
        }
    )
    seqs = load_sequences(frame, group="g")
    train, test = split_by_users(seqs, 0.2, rng=np.random.default_rng(5))
    test_groups = {g: int(n) for g, n in zip(seqs.groups, np.bincount(test.user_groups, minlength=4), strict=True)}
    # round(0.2·15) = 3, round(0.2·6) = 1, a lone user stays in training, two users give 1
    assert test_groups == {"big": 3, "mid": 1, "one": 0, "two": 1}
    assert set(train.users).isdisjoint(test.users)
    assert sorted([*train.users, *test.users]) == list(range(24))
    assert train.n_entries + test.n_entries == seqs.n_entries
    again, _ = split_by_users(seqs, 0.2, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(again.users, train.users)
    _, whole = split_by_users(seqs, 0.2, rng=1, by_group=False)
    assert whole.n_users == round(0.2 * 24)


def test_split_by_users_like_the_paper() -> None:
    activities = load_sequences(ASSETS / "activities.csv", group="age_group")
    train, test = split_by_users(activities, rng=0, test_users_per_group=8)
    assert np.bincount(test.user_groups).tolist() == [8, 8, 8, 8]
    assert train.n_users == 150 - 32
    prior = fit_markov_chain(train)
    assert prior.labels == activities.states and prior.length == 288


def test_split_by_users_errors() -> None:
    single = load_sequences(pd.DataFrame({"user": [1, 1], "time": [1, 2], "state": ["a", "b"]}))
    with pytest.raises(DataError, match="no user can be held out"):
        split_by_users(single, rng=0)
    with pytest.raises(ValueError, match="test_fraction"):
        split_by_users(single, test_fraction=0)
    with pytest.raises(ValueError, match="test_users_per_group"):
        split_by_users(single, rng=0, test_users_per_group=0)
