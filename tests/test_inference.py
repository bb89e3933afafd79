"""Post-processing with the prior (puffer_core.inference) and ε as attacker risk (puffer_core.accounting.risk).

Independent references: enumeration of all K^T state sequences (posterior marginals, the MAP
path, the moments of counts), the dense joint linear MMSE (the smoother), Monte Carlo on data
drawn from the prior (expected errors), and Bayes' rule on randomized response (the posterior bound).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from puffer_core import (
    MarkovChainPrior,
    count_moments,
    exact_stream_leakage,
    likelihood_ratio_points,
    map_states,
    max_posterior,
    posterior_states,
    smooth_count_stream,
    smoothing_accuracy,
    tradeoff_curve,
)
from puffer_core.accounting.risk import attacker_table, implied_eps, min_posterior, pair_table, region_excess
from puffer_core.inference.counts import project_simplex
from puffer_core.inference.posterior import raw_states, sample_outputs, sample_states
from puffer_core.mechanisms.laws import laplace_histogram_emission, randomized_response_emission


def _chain(rng: np.random.Generator, k: int, zeros: bool = True) -> np.ndarray:
    p = rng.dirichlet(np.full(k, 0.7), size=k)
    if zeros:
        p[rng.random((k, k)) < 0.25] = 0.0
        p[np.arange(k), rng.integers(0, k, size=k)] += 0.05  # every row keeps some mass
    return p / p.sum(axis=1, keepdims=True)


def _joint(prior: MarkovChainPrior, laws: list[np.ndarray], outputs: np.ndarray) -> tuple[list, np.ndarray]:
    """Every sequence and Pr[sequence, outputs], by enumeration."""
    k, T = prior.n_states, len(outputs)
    seqs = list(itertools.product(range(k), repeat=T))
    probs = []
    for seq in seqs:
        p = prior.initial[seq[0]] * laws[0][seq[0], outputs[0]]
        for t in range(1, T):
            p *= prior.transition[seq[t - 1], seq[t]] * laws[t][seq[t], outputs[t]]
        probs.append(p)
    return seqs, np.array(probs)


@pytest.mark.parametrize("seed", range(12))
def test_posterior_marginals_and_map_path_against_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k, T = int(rng.integers(2, 4)), int(rng.integers(1, 6))
    initial = rng.dirichlet(np.ones(k)) if seed % 2 else None
    try:
        prior = MarkovChainPrior(_chain(rng, k), initial, T)
    except ValueError:
        prior = MarkovChainPrior(_chain(rng, k, zeros=False), initial, T)
    if seed % 3 == 0:
        laws = [laplace_histogram_emission(k, float(e)) for e in rng.uniform(0.2, 3, size=T)]
    else:
        laws = [randomized_response_emission(k, float(e)) for e in rng.uniform(0.0, 3, size=T)]
    states = sample_states(prior, 1, T, rng)
    outputs = sample_outputs(laws, states, rng)[0]
    seqs, probs = _joint(prior, laws, outputs)
    expected = np.zeros((T, k))
    for seq, p in zip(seqs, probs):
        expected[np.arange(T), seq] += p
    expected /= probs.sum()
    emission = laws if seed % 4 else laws[0] if all(np.array_equal(w, laws[0]) for w in laws) else laws
    got = posterior_states(prior, emission, outputs)
    assert got.shape == (T, k)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    path = map_states(prior, laws, outputs)
    best = probs.max()
    assert probs[seqs.index(tuple(path))] == pytest.approx(best, rel=1e-9)
    if np.sum(np.isclose(probs, best, rtol=1e-9)) == 1:
        assert tuple(path) == seqs[int(np.argmax(probs))]
    # the batched Viterbi of the accuracy simulation finds the same path
    from puffer_core.inference.posterior import log_emissions, safe_log, viterbi_batch

    emit = log_emissions([safe_log(w) for w in laws], outputs[None])
    batch = viterbi_batch(safe_log(np.asarray(prior.initial)), safe_log(prior.transition), emit)[0]
    assert probs[seqs.index(tuple(batch))] == pytest.approx(best, rel=1e-9)


def test_impossible_outputs_and_bad_input_are_refused() -> None:
    prior = MarkovChainPrior([[1.0, 0.0], [0.0, 1.0]], [1.0, 0.0], length=3)
    exact = np.eye(2)  # the release is the state itself
    with pytest.raises(ValueError, match="impossible"):
        posterior_states(prior, exact, [0, 1, 1])
    with pytest.raises(ValueError, match="impossible"):
        map_states(prior, exact, [1, 1, 1])
    with pytest.raises(ValueError, match="whole output indices"):
        posterior_states(prior, exact, [0.5, 1, 1])
    with pytest.raises(ValueError, match="output 2 at step 2 is not one of the 2 outputs"):
        posterior_states(prior, exact, [0, 2, 0])
    with pytest.raises(ValueError, match="MarkovChainPrior"):
        posterior_states("sticky", exact, [0])
    with pytest.raises(ValueError, match="sums to"):
        posterior_states(prior, [[0.5, 0.4], [0.5, 0.5]], [0, 0, 0])


def test_randomized_response_alone_is_its_reported_state() -> None:
    law = randomized_response_emission(4, 1.0)
    outputs = np.array([[0, 3, 2, 1], [1, 1, 0, 3]])
    np.testing.assert_array_equal(raw_states(law, outputs), outputs)


@pytest.mark.parametrize(
    "matrix,eps,emission",
    [
        ([[0.9, 0.1], [0.2, 0.8]], 0.5, "rr"),
        ([[0.8, 0.1, 0.1], [0.05, 0.9, 0.05], [0.2, 0.2, 0.6]], 1.0, "rr"),
        ([[0.7, 0.2, 0.1], [0.1, 0.7, 0.2], [0.2, 0.1, 0.7]], 1.5, "histogram"),
    ],
)
def test_smoothing_is_never_worse_than_the_release_on_data_from_the_prior(matrix, eps, emission) -> None:
    prior = MarkovChainPrior(matrix, length=12)
    k = prior.n_states
    law = randomized_response_emission(k, eps) if emission == "rr" else laplace_histogram_emission(k, eps)
    acc = smoothing_accuracy(prior, law, draws=3000, seed=4)
    # the release alone: exact, and the same draws agree with it
    assert np.all(np.abs(acc.raw_simulated - acc.raw) < 0.04)
    # the posterior's choice: at least as accurate at every step (95% interval), and on average clearly
    assert np.all(acc.smoothed_high >= acc.raw)
    assert acc.mean_smoothed >= acc.mean_raw - 0.005
    # the whole path: Viterbi is right at least as often as the release alone
    assert acc.path_map >= acc.path_raw


def test_a_wrong_prior_can_make_smoothing_worse() -> None:
    believed = MarkovChainPrior([[0.95, 0.05], [0.05, 0.95]], length=12)  # sticky
    truth = MarkovChainPrior([[0.05, 0.95], [0.95, 0.05]], length=12)  # alternating
    acc = smoothing_accuracy(believed, randomized_response_emission(2, 1.0), draws=2000, seed=1, truth=truth)
    assert acc.misspecified and acc.mean_smoothed < acc.mean_raw - 0.05


# --------------------------------------------------------------------------------------------
# counts of many users


def _brute_moments(prior: MarkovChainPrior, positions: list[int]) -> tuple[np.ndarray, np.ndarray]:
    k, T = prior.n_states, prior.length
    mean, second = np.zeros(k), np.zeros((k, k))
    for seq in itertools.product(range(k), repeat=T):
        p = prior.initial[seq[0]] * np.prod([prior.transition[seq[i], seq[i + 1]] for i in range(T - 1)])
        n = np.bincount([seq[t] for t in positions], minlength=k).astype(float)
        mean += p * n
        second += p * np.outer(n, n)
    return mean, second - np.outer(mean, mean)


@pytest.mark.parametrize("seed", range(4))
def test_count_moments_against_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    prior = MarkovChainPrior(_chain(rng, 3, zeros=False), rng.dirichlet(np.ones(3)), length=4)
    presence = (rng.random((5, 4)) < 0.6).astype(float)
    mean, cov = count_moments(prior, presence)
    want_mean, want_cov = np.zeros(3), np.zeros((3, 3))
    for row in presence:
        m, c = _brute_moments(prior, list(np.flatnonzero(row)))
        want_mean += m
        want_cov += c
    np.testing.assert_allclose(mean, want_mean, atol=1e-12)
    np.testing.assert_allclose(cov, want_cov, atol=1e-12)
    import scipy.sparse

    sparse_mean, sparse_cov = count_moments(prior, scipy.sparse.csr_matrix(presence))  # the simulator's form
    np.testing.assert_allclose(sparse_mean, mean, atol=1e-12)
    np.testing.assert_allclose(sparse_cov, cov, atol=1e-12)


def _dense_lmmse(prior, releases, variance, users):
    """The linear MMSE estimate of every count from every release, from the joint covariance (dense)."""
    T, K = releases.shape
    p = prior.marginals(T)
    P = prior.transition

    def cov(t, s):
        if t <= s:
            return np.diag(p[t]) @ np.linalg.matrix_power(P, s - t) - np.outer(p[t], p[s])
        return cov(s, t).T

    sxx = np.zeros((T * K, T * K))
    for t in range(T):
        for s in range(T):
            sxx[t * K : (t + 1) * K, s * K : (s + 1) * K] = users[max(t, s)] * cov(t, s)
    mu = (users[:, None] * p).reshape(-1)
    gain = sxx @ np.linalg.inv(sxx + np.diag(np.repeat(variance, K)))
    estimate = mu + gain @ (releases.reshape(-1) - mu)
    error = sxx - gain @ sxx
    traces = [np.trace(error[t * K : (t + 1) * K, t * K : (t + 1) * K]) for t in range(T)]
    return estimate.reshape(T, K), np.array(traces)


@pytest.mark.parametrize("seed", range(3))
def test_the_smoother_is_the_dense_linear_mmse(seed: int) -> None:
    rng = np.random.default_rng(seed)
    prior = MarkovChainPrior(_chain(rng, 3, zeros=False), rng.dirichlet(np.ones(3)), length=6)
    users = np.array([9, 9, 7, 7, 4, 2])
    variance = rng.uniform(0.5, 20, size=6)
    releases = rng.normal(size=(6, 3)) * 4 + 3
    got = smooth_count_stream(prior, releases, variance, users, project=False)
    estimate, error = _dense_lmmse(prior, releases, variance, users)
    np.testing.assert_allclose(got.estimates, estimate, atol=1e-9)
    np.testing.assert_allclose(got.expected_mse, error, atol=1e-9)
    np.testing.assert_allclose(got.expected_mse_raw, 3 * variance)


STICKY_CASES = [
    # the case of issue 34: the Kalman–RTS error was 27 % high at step 1 and below the linear optimum elsewhere
    ([[0.9995, 0.0005], [0.0005, 0.9995]], [0.454, 0.546], [360] * 5, [7.9, 0.497, 1.45, 899, 0.214]),
    ([[0.9999, 0.0001], [0.00002, 0.99998]], [1.0, 0.0], [50, 50, 40, 40, 40, 3], [1e-6, 3.0, 0.01, 5e3, 0.5, 2.0]),
    ([[0.999, 0.0005, 0.0005], [0.0, 0.9999, 0.0001], [0.0002, 0.0, 0.9998]], [0.2, 0.0, 0.8], [1000] * 6,
     [1e4, 0.3, 1e-3, 40.0, 1e4, 0.05]),
    ([[0.0, 1.0], [1.0, 0.0]], [0.5, 0.5], [7] * 4, [1.0, 2.0, 3.0, 4.0]),  # deterministic: one release decides
]


@pytest.mark.parametrize("matrix, initial, users, variance", STICKY_CASES)
def test_the_smoother_is_the_dense_linear_mmse_on_sticky_chains(matrix, initial, users, variance) -> None:
    """Singular predicted covariances (the counts of a step sum to n_t, zeros, moves of 1e-4): against the dense
    solve of the full joint covariance, never below it (nothing linear does better) and never above the release."""
    prior = MarkovChainPrior(matrix, initial, length=len(users))
    users, variance = np.array(users), np.array(variance)
    rng = np.random.default_rng(4)
    releases = users[:, None] * np.asarray(prior.marginals(len(users))) + rng.normal(size=(len(users), len(initial)))
    got = smooth_count_stream(prior, releases, variance, users, project=False)
    estimate, error = _dense_lmmse(prior, releases, variance, users)
    np.testing.assert_allclose(got.expected_mse, error, rtol=1e-7, atol=1e-9 * variance.max())
    np.testing.assert_allclose(got.estimates, estimate, rtol=1e-7, atol=1e-6)
    assert np.all(got.expected_mse <= got.expected_mse_raw * (1 + 1e-12))


def test_the_expected_error_of_the_sticky_smoother_against_monte_carlo() -> None:
    """The issue's chain and noise: the errors of this estimate on counts drawn from the prior (4 standard errors)."""
    matrix, initial, users, variance = STICKY_CASES[0]
    prior = MarkovChainPrior(matrix, initial, length=5)
    rng = np.random.default_rng(11)
    draws, n = 600, users[0]
    errors = []
    expected = None
    for _ in range(draws):
        states = sample_states(prior, n, 5, rng)
        counts = np.stack([np.bincount(states[:, t], minlength=2) for t in range(5)]).astype(float)
        noisy = counts + rng.normal(size=counts.shape) * np.sqrt(variance)[:, None]
        out = smooth_count_stream(prior, noisy, variance, n, project=False)
        expected = out.expected_mse
        errors.append(((out.estimates - counts) ** 2).sum(axis=1))
    errors = np.array(errors)
    assert np.all(np.abs(errors.mean(axis=0) - expected) <= 4 * errors.std(axis=0) / math.sqrt(draws))


def test_the_smoother_refuses_what_it_cannot_weigh() -> None:
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=4)
    releases = np.full((4, 2), 5.0)
    with pytest.raises(ValueError, match="below 1e-06"):
        smooth_count_stream(prior, releases, 1e-300, 10)
    with pytest.raises(TypeError, match="users must be a whole number"):
        smooth_count_stream(prior, releases, 2.0, 2.5)
    with pytest.raises(TypeError, match="project must be True or False"):
        smooth_count_stream(prior, releases, 2.0, 10, project="yes")
    with pytest.raises(ValueError, match="too large for a double"):
        smooth_count_stream(prior, releases, 10**400, 10)
    huge = smooth_count_stream(prior, releases, 2.0, 10**12)  # one direction known exactly (the sum): error v
    np.testing.assert_allclose(huge.expected_mse, 2.0, rtol=1e-9)


def test_smoothed_counts_beat_the_release_on_data_from_the_prior() -> None:
    prior = MarkovChainPrior([[0.85, 0.1, 0.05], [0.1, 0.8, 0.1], [0.1, 0.2, 0.7]], length=20)
    n_users, scale, draws = 200, 8.0, 300
    rng = np.random.default_rng(7)
    raw_err, smooth_err, lin_err = [], [], []
    expected = None
    for _ in range(draws):
        states = sample_states(prior, n_users, 20, rng)
        counts = np.stack([np.bincount(states[:, t], minlength=3) for t in range(20)]).astype(float)
        noisy = counts + rng.laplace(0, scale, size=counts.shape)
        lin = smooth_count_stream(prior, noisy, 2 * scale**2, n_users, project=False)
        out = smooth_count_stream(prior, noisy, 2 * scale**2, n_users)
        expected = lin.expected_mse
        raw_err.append(((noisy - counts) ** 2).sum(axis=1))
        lin_err.append(((lin.estimates - counts) ** 2).sum(axis=1))
        smooth_err.append(((out.estimates - counts) ** 2).sum(axis=1))
        assert np.all(smooth_err[-1] <= lin_err[-1] + 1e-9)  # the projection never moves away from the truth
        np.testing.assert_allclose(out.estimates.sum(axis=1), n_users)
        assert np.all(out.estimates >= 0)
    raw, lin, smooth = (np.array(e) for e in (raw_err, lin_err, smooth_err))
    # the exact expected errors against Monte Carlo (4 standard errors)
    assert np.all(np.abs(raw.mean(axis=0) - 3 * 2 * scale**2) <= 4 * raw.std(axis=0) / math.sqrt(draws))
    assert np.all(np.abs(lin.mean(axis=0) - expected) <= 4 * lin.std(axis=0) / math.sqrt(draws))
    assert smooth.mean() <= lin.mean() + 1e-9 and lin.mean() < raw.mean() / 2


def test_the_projection_onto_counts() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 5)) * 3
    totals = rng.uniform(0, 10, size=200)
    y = project_simplex(x, totals)
    np.testing.assert_allclose(y.sum(axis=1), totals)
    assert np.all(y >= 0)
    # optimality: no feasible point nearer, among random feasible points
    for i in range(20):
        candidates = rng.dirichlet(np.ones(5), size=500) * totals[i]
        assert np.linalg.norm(y[i] - x[i]) <= np.linalg.norm(candidates - x[i], axis=1).min() + 1e-12


# --------------------------------------------------------------------------------------------
# ε as attacker risk


@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("eps", [0.3, 1.0, 3.0])
def test_the_posterior_bound_is_reached_by_randomized_response(k: int, eps: float) -> None:
    rng = np.random.default_rng(k)
    prior = MarkovChainPrior(_chain(rng, k, zeros=False), length=1)
    law = randomized_response_emission(k, eps)
    for x in range(k):
        p = float(prior.initial[x])
        after = posterior_states(prior, law, [x])[0, x]  # Bayes on the output "x"
        assert after == pytest.approx(max_posterior(p, eps), rel=1e-12)
        assert posterior_states(prior, law, [(x + 1) % k])[0, x] >= min_posterior(p, eps) - 1e-12
    table = attacker_table(prior, eps)
    after = [max_posterior(float(q), eps) for q in prior.initial]
    np.testing.assert_allclose(table["largest posterior after the release"], after)
    pairs = pair_table(prior, eps)
    assert len(pairs) == k * (k - 1)
    odds = pairs["prior odds"] * math.exp(eps)
    np.testing.assert_allclose(pairs["largest posterior of the secret (between the two)"], odds / (1 + odds))


def test_the_region_and_the_test_points() -> None:
    fpr, tpr = tradeoff_curve(1.0)
    assert fpr[0] == 0 and fpr[-1] == 1 and tpr[-1] == 1
    assert np.all(region_excess(fpr, tpr, 1.0) <= 1e-12)
    assert implied_eps(0.1, 0.1 * math.e) == pytest.approx(1.0)
    # randomized response on one entry: the best test sits on the region's corner
    prior = MarkovChainPrior([[0.5, 0.5], [0.5, 0.5]], length=1)
    law = randomized_response_emission(2, 1.0)
    points = likelihood_ratio_points(prior, law, 0, (0, 1), draws=20_000, seed=2)
    corner = np.argmin(np.abs(points.fpr - 1 / (1 + math.e)))
    assert points.tpr[corner] == pytest.approx(math.e / (1 + math.e), abs=0.02)
    # a stream on a correlated chain: every point inside the region of the exact leakage (sampling aside)
    chain = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=6)
    law = randomized_response_emission(2, 0.5)
    truth = exact_stream_leakage(chain, law).eps
    points = likelihood_ratio_points(chain, law, 2, (0, 1), draws=8000, seed=0)
    assert region_excess(points.fpr, points.tpr, truth).max() <= 0.02
    assert 0 < points.eps_lower <= truth


# the risk view at float extremes (issue 34): log space, never below Bayes' value


def _bayes_mp(p: float, eps: float, upper: bool):
    import mpmath

    with mpmath.workdps(80):
        p_, e = mpmath.mpf(p), mpmath.exp(mpmath.mpf(eps))
        return e * p_ / (e * p_ + 1 - p_) if upper else p_ / (p_ + e * (1 - p_))


EXTREME_P = [5e-324, 1e-310, 1e-305, 1e-200, 1e-17, 0.3, 0.5, 1 - 1e-9, 1 - 2**-53]
EXTREME_EPS = [0.0, 1e-300, 1e-12, 0.5, 36.0, 700.0, 709.8, 710.0, 744.0, 745.2, 800.0, 1e5, 1e300]


def test_the_largest_and_smallest_posterior_against_80_digit_bayes() -> None:
    import mpmath

    for p in EXTREME_P:
        for eps in EXTREME_EPS:
            for upper, fn in ((True, max_posterior), (False, min_posterior)):
                got, truth = mpmath.mpf(fn(p, eps)), _bayes_mp(p, eps, upper)
                assert (got >= truth) if upper else (got <= truth), (p, eps, upper, got, truth)
                # outward by at most 8 ulps of the log-odds' terms: ~1.8e-15·(|log p| + |log(1 − p)| + ε + 1) relative
                size = abs(math.log(p)) + abs(math.log1p(-p)) + eps + 1
                assert abs(got - truth) <= 4e-15 * size * truth + mpmath.mpf(10) ** -320, (p, eps, upper, got, truth)
    # the numbers: 0.092 and 5e-20 before (e^ε was capped at e^700)
    assert max_posterior(1e-305, 710) == pytest.approx(0.99955257165916, rel=1e-12)
    assert max_posterior(5e-324, 744) == pytest.approx(0.3917238319621, rel=1e-11)


def test_the_attacker_and_pair_tables_at_float_extremes() -> None:
    import mpmath

    prior = MarkovChainPrior([[1 - 1e-300, 1e-300], [0.5, 0.5]], length=3)
    pairs = pair_table(prior, 50.0)  # used to be inf/inf = NaN
    post = pairs["largest posterior of the secret (between the two)"].to_numpy()
    assert not np.isnan(pairs.select_dtypes("number").to_numpy()).any()
    marg = prior.marginals()
    for (x, y), value in zip(((0, 1), (1, 0)), post):
        with mpmath.workdps(80):
            odds = max(mpmath.mpf(float(a)) / mpmath.mpf(float(b)) for a, b in zip(marg[:, x], marg[:, y]))
            truth = mpmath.exp(50) * odds / (1 + mpmath.exp(50) * odds)
        assert mpmath.mpf(float(value)) >= truth and abs(mpmath.mpf(float(value)) - truth) <= 1e-11 * truth
    assert post[0] == 1.0
    for eps in (1.0, 710.0, 744.0, 1e5):
        table = attacker_table(prior, eps)
        worst = prior.marginals().max(axis=0)
        for q, after in zip(worst, table["largest posterior after the release"]):
            assert mpmath.mpf(float(after)) >= _bayes_mp(float(q), eps, True)
        assert not np.isnan(table.select_dtypes("number").to_numpy()).any()


def test_the_region_beyond_e_to_the_700() -> None:
    for eps in (700.0, 710.0, 800.0, 1e5):
        fpr, tpr = tradeoff_curve(eps)
        assert not np.isnan(tpr).any() and np.all((0 <= tpr) & (tpr <= 1))
        corner = fpr[np.argmin(np.abs(fpr - math.exp(-min(eps, 745))))]
        # above the corner TPR = 1 − e^(−ε)(1 − FPR) = 1; at FPR = e^(−ε)·t (t < 1) it is e^ε·FPR = t
        assert tpr[fpr > corner].min() == 1.0
    # e^710·1e-310 = 0.0223: an attack with FPR = 1e-310 and TPR = 0.02 is inside ε = 710 (with e^ε capped at e^700
    # it would have been 1e-6, and the attack outside), one with TPR = 0.03 is not
    excess = region_excess(np.array([1e-310, 1e-310, 1e-300]), np.array([0.02, 0.03, 1.0]), 710.0)
    assert excess[0] <= 0 < excess[1] and excess[2] <= 0
