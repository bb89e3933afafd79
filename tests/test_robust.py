"""Priors fitted with uncertainty (docs/math.md §12): the draws, the robust curve against brute force, the spread."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from puffer_core import MarkovChainPrior, fit_markov_chain, fit_prior_set, influence_curve, load_sequences, prior_spread
from puffer_core.engine.spread import PriorSpread, row_sensitivity
from puffer_core.priors.robust import dirichlet_rows, smooth_draw
from tests.support.brute import brute_influence_all

KNOWN = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]])


def sample_sequences(transition, users: int, length: int, seed: int):
    """Users' sequences drawn from a known chain (plain loops; the library is not used to sample)."""
    rng = np.random.default_rng(seed)
    transition = np.asarray(transition, dtype=float)
    k = transition.shape[0]
    rows = []
    for u in range(users):
        state = int(rng.integers(k))
        for t in range(length):
            rows.append((f"u{u:03d}", t, f"s{state}"))
            state = int(rng.choice(k, p=transition[state]))
    return load_sequences(pd.DataFrame(rows, columns=["user", "time", "state"]))


def count_transitions(data) -> np.ndarray:
    """N[i, j] by walking every user's sequence (independent of fitting.transition_counts)."""
    k = data.n_states
    counts = np.zeros((k, k), dtype=int)
    for u in range(data.n_users):
        seq = data.sequence(u)
        for a, b in zip(seq[:-1], seq[1:]):
            counts[a, b] += 1
    return counts


def eigen_stationary(transition: np.ndarray) -> np.ndarray:
    """π with π P = π by an eigen-decomposition; asserts the eigenvalue 1 is simple (a unique π)."""
    values, vectors = np.linalg.eig(transition.T)
    ones = np.isclose(values, 1.0, atol=1e-9)
    assert ones.sum() == 1, f"eigenvalue 1 has multiplicity {ones.sum()}: no unique stationary distribution"
    pi = np.real(vectors[:, ones][:, 0])
    return pi / pi.sum()


@pytest.fixture(scope="module")
def small_data():
    return sample_sequences(KNOWN, users=6, length=12, seed=3)


def test_the_fit_comes_first_and_every_draw_is_a_valid_chain(small_data):
    theta = fit_prior_set(small_data, draws=20, seed=1)
    assert len(theta) == 21
    fit = fit_markov_chain(small_data)
    np.testing.assert_array_equal(theta[0].transition, fit.transition)
    for member in theta:
        p = member.transition
        assert p.shape == (3, 3)
        np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        assert np.all(p > 0)
        pi = eigen_stationary(p)
        np.testing.assert_allclose(member.initial, pi, atol=1e-10)
        assert member.stationary_initial
        assert member.length == fit.length == 12
        assert member.labels == fit.labels == ("s0", "s1", "s2")
    assert not np.allclose(theta[1].transition, theta[2].transition)


def test_tiny_concentrations_underflow_but_every_member_stays_a_valid_chain():
    # a 6-state chain where states 4 and 5 are almost never reached: rows with few or no counts
    transition = np.full((6, 6), 0.01)
    transition[:4, :4] = 0.2
    transition /= transition.sum(axis=1, keepdims=True)
    data = sample_sequences(transition, users=3, length=15, seed=5)
    rng = np.random.default_rng(0)
    raw = dirichlet_rows(count_transitions(data), 1e-12, 30, rng)
    assert np.any(raw == 0.0), "the raw draws should underflow to exact zeros at this concentration"
    np.testing.assert_allclose(raw.sum(axis=2), 1.0, atol=1e-12)  # log-space Gamma draws: never 0/0
    tau = 1e-5
    theta = fit_prior_set(data, draws=30, seed=0, concentration=1e-12, smoothing=tau)
    k = data.n_states
    for member in theta:
        assert member.transition.min() >= tau * (1 - (k - 1) * tau) * (1 - 1e-12)
        eigen_stationary(member.transition)
    curve = influence_curve(theta)
    assert np.all(np.isfinite(curve.a))


@pytest.mark.parametrize("counts, alpha", [([3, 0, 7], 0.3), ([0, 0, 0, 1], 0.02), ([40, 2, 0], 1 / 3)])
def test_dirichlet_rows_have_the_dirichlet_marginals(counts, alpha):
    """Coordinate j of Dir(a) is Beta(a_j, A − a_j), A = Σa: Kolmogorov–Smirnov tests against scipy's Beta.

    Values within 1e-12 of 1 round to 1 in double precision; where a law has mass there, the
    complement is tested instead: the rest of the row, Σ_{i≠j} X_i ~ Beta(A − a_j, a_j).
    """
    counts = np.array([counts])
    draws = dirichlet_rows(counts, alpha, 4000, np.random.default_rng(11))[:, 0, :]
    a = counts[0] + alpha
    total = a.sum()
    for j in range(a.size):
        rest = np.delete(draws, j, axis=1).sum(axis=1)
        tested = 0
        for values, law in ((draws[:, j], stats.beta(a[j], total - a[j])), (rest, stats.beta(total - a[j], a[j]))):
            if law.sf(1 - 1e-12) < 1e-4:
                result = stats.kstest(values, law.cdf)
                assert result.pvalue > 1e-3, (j, result)
                tested += 1
        assert tested >= 1


def test_smooth_draw_raises_small_entries_to_tau_and_keeps_rows_stochastic():
    tau = 1e-3
    matrix = np.array([[0.5, 0.4995, 0.0005, 0.0], [0.25, 0.25, 0.25, 0.25], [1.0, 0, 0, 0], [0.2, 0.2, 0.3, 0.3]])
    out = smooth_draw(matrix, tau)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-15)
    assert out.min() >= tau * (1 - 3 * tau)
    np.testing.assert_allclose(out[0, 2:], tau)
    np.testing.assert_allclose(out[2, 1:], tau)
    np.testing.assert_allclose(out[1], matrix[1])  # nothing below τ: unchanged
    np.testing.assert_allclose(out[0, :2] / out[0, :2].sum(), matrix[0, :2] / matrix[0, :2].sum())


def _plain(priors):
    return [(p.transition.tolist(), p.initial.tolist(), p.length) for p in priors]


@pytest.mark.parametrize(
    "transition, users, length, draws, seed, concentration, smoothing",
    [
        (KNOWN, 2, 4, 3, 0, None, 1e-5),
        (KNOWN, 1, 5, 2, 7, 0.5, 1e-2),
        ([[0.9, 0.1], [0.3, 0.7]], 2, 6, 4, 3, None, 1e-5),
        ([[0.9, 0.1], [0.3, 0.7]], 1, 5, 3, 1, 2.0, 0.05),
    ],
)
def test_robust_curve_is_the_sup_over_theta_inside_the_min_by_brute_force(
    transition, users, length, draws, seed, concentration, smoothing
):
    data = sample_sequences(transition, users, length, seed)
    theta = fit_prior_set(data, draws=draws, seed=seed, concentration=concentration, smoothing=smoothing)
    robust = influence_curve(theta)
    expected = brute_influence_all(_plain(theta))
    np.testing.assert_allclose(robust.a, expected, rtol=1e-9, atol=1e-9)
    for member in theta:  # and the definition itself puts Θ's curve above every member's
        own = brute_influence_all(_plain([member]))
        assert np.all(np.array(expected) >= np.array(own) - 1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_robust_curve_is_at_least_every_members_curve(seed):
    data = sample_sequences(KNOWN, users=5, length=25, seed=seed)
    spread = prior_spread(data, draws=15, seed=seed, row_draws=0)
    assert spread.members.shape == (16, 25)
    assert np.all(spread.robust.a[None, :] >= spread.members - 1e-12)
    for member, values in zip(spread.priors, spread.members):
        np.testing.assert_array_equal(values, influence_curve(member, 25).a)
    assert np.all(spread.robust.a >= spread.fit - 1e-12)


def test_spread_of_a1_at_least_halves_with_ten_times_more_data():
    small = sample_sequences(KNOWN, users=10, length=20, seed=42)
    large = sample_sequences(KNOWN, users=100, length=20, seed=42)
    s_small = prior_spread(small, draws=50, seed=42, row_draws=0).spread()[0]
    s_large = prior_spread(large, draws=50, seed=42, row_draws=0).spread()[0]
    assert s_small > 0 and s_large > 0
    assert s_large <= s_small / 2, (s_small, s_large)


def test_seeds_reproduce_and_differ(small_data):
    one = fit_prior_set(small_data, draws=5, seed=9)
    two = fit_prior_set(small_data, draws=5, seed=9)
    three = fit_prior_set(small_data, draws=5, seed=10)
    four = fit_prior_set(small_data, draws=5, seed=np.random.default_rng(9))
    for a, b, d in zip(one, two, four):
        np.testing.assert_array_equal(a.transition, b.transition)
        np.testing.assert_array_equal(a.transition, d.transition)
    assert not np.array_equal(one[1].transition, three[1].transition)
    np.testing.assert_array_equal(one[0].transition, three[0].transition)  # the fit has no randomness


def test_rows_report_visits_and_a_rarely_seen_row_drives_the_spread():
    # state 2 is entered rarely: its row has few visits and the widest posterior
    transition = np.array([[0.7, 0.29, 0.01], [0.3, 0.69, 0.01], [0.3, 0.3, 0.4]])
    data = sample_sequences(transition, users=20, length=60, seed=8)
    spread = prior_spread(data, draws=30, seed=8, row_draws=30)
    visits = count_transitions(data).sum(axis=1)
    np.testing.assert_array_equal(spread.visits, visits)
    assert visits[2] < visits[0] / 10 and visits[2] < visits[1] / 10
    assert int(np.argmax(spread.row_spread)) == 2, spread.rows()
    table = spread.rows()
    assert list(table.columns) == ["state", "visits", "spread of a(1)"]
    assert table["state"].iloc[0] == "s2"
    assert table["spread of a(1)"].is_monotonic_decreasing


def test_row_sensitivity_is_the_spread_when_only_that_row_is_drawn(small_data):
    theta = fit_prior_set(small_data, draws=6, seed=4)
    got = row_sensitivity(theta, b=2, draws=6)
    fit = theta[0]
    for i in range(3):
        values = []
        for draw in theta[1:]:
            matrix = fit.transition.copy()
            matrix[i] = draw.transition[i]
            prior = MarkovChainPrior(matrix, None, fit.length)
            values.append(brute_curve_at(prior, 2) if fit.length <= 6 else influence_curve(prior, 2).a[1])
        assert got[i] == pytest.approx(np.std(values, ddof=1), abs=1e-12)
    assert np.all(row_sensitivity(theta, b=2, draws=1) == 0)


def brute_curve_at(prior: MarkovChainPrior, b: int) -> float:
    return brute_influence_all(_plain([prior]))[b - 1]


def test_spread_band_and_summary():
    data = sample_sequences(KNOWN, users=4, length=15, seed=2)
    spread = prior_spread(data, draws=12, seed=2, row_draws=4, max_b=6)
    assert isinstance(spread, PriorSpread)
    assert spread.robust.max_b == 6 and spread.members.shape == (13, 6)
    low, high = spread.band(0.1, 0.9)
    assert np.all(low <= high)
    assert np.all(spread.draws.min(axis=0) <= low) and np.all(high <= spread.draws.max(axis=0))
    np.testing.assert_allclose(spread.spread(), np.std(spread.members[1:], axis=0, ddof=1))
    assert spread.concentration == pytest.approx(1 / 3)
    assert spread.states == ("s0", "s1", "s2")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"draws": 0}, "draws"),
        ({"draws": -3}, "draws"),
        ({"draws": 2.5}, "draws"),
        ({"draws": True}, "draws"),
        ({"draws": 10**6}, "at most"),
        ({"concentration": 0}, "concentration"),
        ({"concentration": -1.0}, "concentration"),
        ({"concentration": float("nan")}, "concentration"),
        ({"concentration": "1"}, "concentration"),
        ({"seed": -1}, "seed"),
        ({"seed": "zero"}, "seed"),
        ({"seed": True}, "seed"),
        ({"smoothing": 0}, "smoothing > 0"),
        ({"smoothing": 0.9}, "too large"),
        ({"length": 0}, "length"),
    ],
)
def test_bad_arguments_raise_clear_errors(small_data, kwargs, message):
    with pytest.raises(ValueError, match=message):
        fit_prior_set(small_data, **kwargs)


def test_bad_data_and_spread_arguments(small_data):
    with pytest.raises(ValueError, match="Sequences"):
        fit_prior_set([[0, 1], [1, 0]])
    # no transitions at all (one entry per user): the posterior is the Dirichlet prior; with T = 1, a(b) = 0
    single = load_sequences(pd.DataFrame({"user": [1, 2, 3], "time": [0, 0, 0], "state": ["a", "b", "a"]}))
    theta = fit_prior_set(single, draws=4)
    assert len(theta) == 5 and all(p.length == 1 for p in theta)
    assert influence_curve(theta).a.tolist() == [0.0]
    with pytest.raises(ValueError, match="row_b"):
        prior_spread(small_data, draws=3, row_b=0)
    with pytest.raises(ValueError, match="row_draws"):
        prior_spread(small_data, draws=3, row_draws=-1)
    with pytest.raises(ValueError, match="fit_prior_set"):
        row_sensitivity([])
    spread = prior_spread(small_data, draws=3, row_draws=0)
    with pytest.raises(ValueError, match="quantile"):
        spread.band(-0.1, 0.5)
    with pytest.raises(ValueError, match="must not exceed"):
        spread.band(0.9, 0.1)


@given(
    k=st.integers(2, 8),
    counts_seed=st.integers(0, 2**32 - 1),
    log_alpha=st.floats(-300, 2),
    tau=st.sampled_from([1e-12, 1e-8, 1e-5, 1e-3]),
    sparse=st.booleans(),
)
@settings(max_examples=60)
def test_any_concentration_gives_valid_smoothed_draws(k, counts_seed, log_alpha, tau, sparse):
    rng = np.random.default_rng(counts_seed)
    counts = rng.integers(0, 50, size=(k, k)) * (rng.random((k, k)) < (0.3 if sparse else 1.0))
    raw = dirichlet_rows(counts, 10.0**log_alpha, 5, rng)
    assert np.all(np.isfinite(raw)) and np.all(raw >= 0)
    np.testing.assert_allclose(raw.sum(axis=2), 1.0, atol=1e-12)
    for matrix in raw:
        out = smooth_draw(matrix, tau)
        np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-12)
        assert out.min() >= tau * (1 - (k - 1) * tau) * (1 - 1e-12)
        MarkovChainPrior(out, None, 3)  # valid, with a unique stationary distribution


def test_sizes_beyond_memory_are_refused_up_front_with_what_to_change():
    k = 120  # 1000 draws × 120² > 5M numbers; 51 priors × 49 values of b × 120² > 25M
    frame = pd.DataFrame({"user": np.repeat(np.arange(4), 50), "time": np.tile(np.arange(50), 4),
                          "state": np.arange(200) % k})  # fmt: skip
    data = load_sequences(frame)
    assert data.n_states == k
    with pytest.raises(ValueError, match=r"over the limit.*use at most \d+ draws"):
        fit_prior_set(data, draws=1000)
    with pytest.raises(ValueError, match=r"MB\), over the limit.*use at most \d+ draws, or a smaller max_b"):
        prior_spread(data, draws=50)
