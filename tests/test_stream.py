"""Streams and temporal privacy leakage (docs/math.md §10), each checked against something independent:
every subset S (tests/support/brute_stream.py), Cao et al.'s published numbers, the recursion run for many
steps, enumeration of sequences, and the exact stream audit (docs/math.md §9)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puffer_core import MarkovChainPrior, certify, influence_curve
from puffer_core.audit.exact import exact_leakage
from puffer_core.audit.stream import exact_stream_leakage
from puffer_core.mechanisms.laws import emission_epsilon, laplace_histogram_emission, randomized_response_emission
from puffer_core.stream.bounds import group_dp_bound, translation_bound
from puffer_core.stream.checks import MAX_STATES
from puffer_core.stream.fronts import leakage_function
from puffer_core.stream.registry import plan_stream, stream_bounds
from puffer_core.stream.supremum import leakage_supremum, max_eps_for_tpl, tpl_supremum
from puffer_core.stream.tpl import (
    backward_matrix,
    backward_privacy_leakage,
    forward_matrix,
    forward_privacy_leakage,
    temporal_privacy_leakage,
)
from tests.support import brute_stream
from tests.support.brute_stream import random_prior
from tests.support.strategies import stochastic_matrices

CAO_BACKWARD = [[0.8, 0.2], [0.0, 1.0]]


def sparse_matrix(rng: np.random.Generator, k: int, zeros: float = 0.3) -> np.ndarray:
    m = rng.random((k, k)) ** 3
    m[rng.random((k, k)) < zeros] = 0.0
    for i in range(k):
        if m[i].sum() == 0:
            m[i, rng.integers(k)] = 1.0
    return m / m.sum(axis=1, keepdims=True)


# --------------------------------------------------------------------------------------------
# the leakage function


@pytest.mark.parametrize("seed", range(12))
def test_leakage_function_equals_enumeration_over_all_subsets(seed):
    rng = np.random.default_rng(seed)
    k = 2 + seed % 5  # K = 2..6
    Q = sparse_matrix(rng, k, zeros=0.0 if seed % 3 == 0 else 0.35)
    for alpha in (1e-7, 0.05, 0.7, 3.0, 25.0):
        expected = brute_stream.leakage_function(Q.tolist(), alpha)
        assert leakage_function(Q, alpha) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_leakage_function_by_hand():
    # two rows with disjoint supports: S = the first row's support gives log(e^α) = α
    assert leakage_function(np.eye(3), 1.3) == pytest.approx(1.3, abs=1e-15)
    # identical rows: nothing to learn
    assert leakage_function([[0.3, 0.7], [0.3, 0.7]], 5.0) == 0.0
    # Cao et al.'s matrix at α = 0.1: S = {state 1} for the pair (row 1, row 2): log(1 + (e^0.1−1)·0.8)
    assert leakage_function(CAO_BACKWARD, 0.1) == pytest.approx(math.log1p(math.expm1(0.1) * 0.8), abs=1e-15)


def test_leakage_function_at_huge_alpha_tends_to_the_log_of_the_largest_ratio():
    Q = [[0.5, 0.5], [0.25, 0.75]]
    assert leakage_function(Q, 800.0) == pytest.approx(math.log(2.0), abs=1e-12)
    assert leakage_function(Q, 0.0) == 0.0


@given(Q=stochastic_matrices(), a=st.floats(0.0, 40.0), b=st.floats(0.0, 40.0))
@settings(max_examples=150, deadline=None)
def test_leakage_function_properties(Q, a, b):
    lo, hi = min(a, b), max(a, b)
    L_lo, L_hi = leakage_function(Q, lo), leakage_function(Q, hi)
    assert 0.0 <= L_lo <= lo + 1e-12
    assert L_lo <= L_hi + 1e-12  # non-decreasing in α
    assert lo - L_lo <= hi - L_hi + 1e-9  # α − L(α) never decreases (the supremum proof rests on it)


@given(Q=stochastic_matrices(max_k=4), a=st.floats(0.0, 8.0))
@settings(max_examples=60, deadline=None)
def test_leakage_function_matches_enumeration_property(Q, a):
    assert leakage_function(Q, a) == pytest.approx(brute_stream.leakage_function(Q.tolist(), a), rel=1e-10, abs=1e-13)


# --------------------------------------------------------------------------------------------
# Cao et al.'s example and the supremum


def test_cao_example_reference_numbers():
    bpl = backward_privacy_leakage(CAO_BACKWARD, [0.1] * 10)
    assert round(float(bpl[-1]), 4) == 0.4964
    assert round(leakage_supremum(CAO_BACKWARD, 0.1), 4) == 0.6459
    # the recursion creeps up to the supremum from below
    long = backward_privacy_leakage(CAO_BACKWARD, [0.1] * 3000)
    assert np.all(np.diff(long) >= 0)
    assert long[-1] <= leakage_supremum(CAO_BACKWARD, 0.1) <= long[-1] + 1e-9


@pytest.mark.parametrize("seed", range(8))
def test_supremum_is_the_limit_of_the_recursion(seed):
    rng = np.random.default_rng(40 + seed)
    k = 2 + seed % 4
    Q = sparse_matrix(rng, k, zeros=0.0 if seed % 2 else 0.2)
    eps = [0.05, 0.3, 1.0][seed % 3]
    sup = leakage_supremum(Q, eps)
    values = backward_privacy_leakage(Q, [eps] * 20000)
    if not math.isfinite(sup):  # no fixed point: the recursion keeps climbing
        assert values[-1] - values[9999] > 1.0
        return
    assert values[-1] <= sup + 1e-12
    assert sup - values[-1] <= 1e-7 * max(1.0, sup)
    # certified: sup is at or above the least fixed point, α − L(α) ≥ ε
    assert sup - brute_stream.leakage_function(Q.tolist(), sup) >= eps - 1e-9


def test_supremum_unbounded_exactly_when_eps_reaches_minus_log_m():
    # deterministic chain: m = 1, every ε grows without bound
    assert leakage_supremum(np.eye(2), 0.01) == math.inf
    assert backward_privacy_leakage(np.eye(2), [0.01] * 500)[-1] == pytest.approx(5.0)
    # Cao et al.'s matrix: row 2 is 0 on state 1, where row 1 puts m = 0.8 → finite iff ε < −log 0.8 ≈ 0.2231
    threshold = -math.log(0.8)
    finite = leakage_supremum(CAO_BACKWARD, threshold - 0.01)
    assert math.isfinite(finite)
    assert backward_privacy_leakage(CAO_BACKWARD, [threshold - 0.01] * 20000)[-1] <= finite
    assert leakage_supremum(CAO_BACKWARD, threshold + 0.01) == math.inf
    grows = backward_privacy_leakage(CAO_BACKWARD, [threshold + 0.01] * 20000)
    assert grows[-1] > 100 and grows[-1] - grows[-10001] > 50  # still climbing ~linearly
    # full support: always finite, even for large ε
    assert math.isfinite(leakage_supremum([[0.9, 0.1], [0.2, 0.8]], 8.0))


def test_tpl_supremum_of_a_stationary_prior_bounds_every_finite_stream():
    rng = np.random.default_rng(3)
    prior = random_prior(rng, 3, 400)
    sup = tpl_supremum(prior, 0.4)
    finite = temporal_privacy_leakage(prior, 0.4)
    assert finite.max_tpl <= sup + 1e-12
    assert sup - finite.max_tpl < 1e-6  # the middle of a long stream gets there
    assert tpl_supremum(MarkovChainPrior(np.eye(2) * 0.999 + 0.0005, None, 5), 0.3) < math.inf
    with pytest.raises(ValueError, match="stationary initial distribution"):
        tpl_supremum(random_prior(rng, 3, 10, stationary=False), 0.4)


# --------------------------------------------------------------------------------------------
# backward matrices and BPL/FPL/TPL of priors


@pytest.mark.parametrize("seed", range(4))
def test_backward_matrix_is_bayes_rule_by_enumeration(seed):
    rng = np.random.default_rng(10 + seed)
    k = 2 + seed % 3
    prior = random_prior(rng, k, 5, stationary=seed % 2 == 0, zeros=seed > 1)
    for t in range(2, 6):
        expected = brute_stream.backward(prior.transition.tolist(), list(prior.initial), t)
        got = backward_matrix(prior, t)
        np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)
        for i, row in enumerate(expected):
            if row is not None:
                np.testing.assert_allclose(got[i], row, atol=1e-12)
    if prior.stationary_initial:
        np.testing.assert_allclose(backward_matrix(prior), backward_matrix(prior, 3), atol=1e-12)
    np.testing.assert_array_equal(forward_matrix(prior), prior.transition)


@pytest.mark.parametrize("seed", range(10))
def test_tpl_of_a_prior_equals_the_definitions(seed):
    rng = np.random.default_rng(20 + seed)
    k = 2 + seed % 3
    length = 6 if k < 4 else 4
    stationary = seed % 2 == 0
    priors = [random_prior(rng, k, length, stationary=stationary, zeros=seed % 3 == 1)]
    if seed % 4 == 3:
        priors.append(random_prior(rng, k, length))
    eps = rng.uniform(0.0, 1.5, size=length).tolist() if seed % 2 else [0.4] * length
    got = temporal_privacy_leakage(priors, eps)
    expected = [brute_stream.tpl(p.transition.tolist(), list(p.initial), length, eps) for p in priors]
    for name, index in (("bpl", 0), ("fpl", 1), ("tpl", 2)):
        want = np.max([e[index] for e in expected], axis=0)
        np.testing.assert_allclose(getattr(got, name), want, rtol=1e-11, atol=1e-13, err_msg=name)
    assert got.max_tpl == pytest.approx(float(np.max(got.tpl)))
    assert got.tpl[got.worst_entry] == got.max_tpl


def test_transient_states_are_no_secrets():
    # state 2 is transient: π puts no mass on it, so its rows never count
    transition = [[0.7, 0.3, 0.0], [0.4, 0.6, 0.0], [0.5, 0.0, 0.5]]
    prior = MarkovChainPrior(transition, None, 5)
    eps = [0.5] * 5
    expected = brute_stream.tpl(transition, list(prior.initial), 5, eps)
    np.testing.assert_allclose(temporal_privacy_leakage(prior, eps).tpl, expected[2], rtol=1e-12)


def test_public_bpl_and_fpl_with_one_matrix_equal_the_recursion_by_hand():
    rng = np.random.default_rng(5)
    Q = sparse_matrix(rng, 4)
    eps = [0.3, 0.0, 1.2, 0.5, 0.5]
    bpl = [eps[0]]
    for e in eps[1:]:
        bpl.append(brute_stream.leakage_function(Q.tolist(), bpl[-1]) + e)
    np.testing.assert_allclose(backward_privacy_leakage(Q, eps), bpl, rtol=1e-12)
    fpl = [eps[-1]]
    for e in eps[-2::-1]:
        fpl.append(brute_stream.leakage_function(Q.tolist(), fpl[-1]) + e)
    np.testing.assert_allclose(forward_privacy_leakage(Q, eps), fpl[::-1], rtol=1e-12)


def test_non_stationary_prior_that_converges_stays_within_rounding_of_the_definition():
    """Once p_t reaches π to 1e-12 the stationary front plus 2·log ρ is used: never below the recursion."""
    transition = [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4]]
    prior = MarkovChainPrior(transition, [1.0, 0.0, 0.0], 60)
    eps = [0.7] * 60
    got = temporal_privacy_leakage(prior, eps)
    assert got.shortcut_steps > 0  # the shortcut was taken
    marg = prior.marginals()
    bpl = [eps[0]]
    for t in range(2, 61):  # the definition with Bayes' rule on the exact marginals
        Q = [[marg[t - 2][j] * transition[j][i] / marg[t - 1][i] for j in range(3)] for i in range(3)]
        bpl.append(brute_stream.leakage_function(Q, bpl[-1]) + eps[t - 1])
    assert np.all(got.bpl >= np.array(bpl) - 1e-12)
    np.testing.assert_allclose(got.bpl, bpl, rtol=1e-10)


# --------------------------------------------------------------------------------------------
# exact stream leakage ≤ TPL and ≤ the [C] bound on tiny chains


def _joint_stream_mechanism(laws):
    def mechanism(seq):
        joint = np.ones(1)
        for t, x in enumerate(seq):
            joint = np.outer(joint, laws[t][x]).reshape(-1)
        return joint

    return mechanism


def audit_cases():
    """(label, priors, laws, schedule) for tiny chains: K ≤ 3, T ≤ 6, one or two priors."""
    cases = []
    for seed in range(12):
        rng = np.random.default_rng(300 + seed)
        k = 2 + seed % 2
        kind = "laplace" if seed % 3 == 2 else "rr"
        length = 6 if k == 2 or kind == "rr" else 4
        priors = [random_prior(rng, k, length, stationary=seed % 4 != 1, zeros=seed % 5 == 4)]
        if seed % 4 == 3:
            priors.append(random_prior(rng, k, length, stationary=False))
        schedule = [0.6] * length if seed % 2 == 0 else rng.uniform(0.05, 1.5, size=length).tolist()
        make = randomized_response_emission if kind == "rr" else laplace_histogram_emission
        laws = [make(k, e) for e in schedule]
        cases.append((f"{kind} K={k} T={length} seed={seed}", priors, laws, schedule))
    return cases


@pytest.mark.parametrize("label,priors,laws,schedule", audit_cases(), ids=[c[0] for c in audit_cases()])
def test_exact_stream_leakage_is_below_tpl_and_the_translation_bound(label, priors, laws, schedule):
    exact = exact_stream_leakage(priors, laws)
    assert [emission_epsilon(law) for law in laws] == pytest.approx(schedule, rel=1e-12)
    tpl = temporal_privacy_leakage(priors, schedule)
    assert np.all(exact.per_entry <= tpl.tpl + 1e-9), (exact.per_entry, tpl.tpl)
    curve = influence_curve(priors)
    windows = translation_bound(curve, schedule, contiguous=True)
    subsets = translation_bound(curve, schedule)
    plain = certify(curve, max(schedule)).eps_puffer
    assert np.all(exact.per_entry <= windows.per_entry + 1e-9)
    assert np.all(windows.per_entry <= subsets.per_entry + 1e-12)
    assert subsets.eps_puffer <= plain + 1e-12
    assert exact.eps <= group_dp_bound(schedule) + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_stream_audit_equals_the_general_enumeration(seed):
    rng = np.random.default_rng(60 + seed)
    k = 2 + seed % 2
    prior = random_prior(rng, k, 4, stationary=seed != 1)
    laws = [randomized_response_emission(k, e) for e in (0.3, 0.9, 0.5, 1.4)]
    report = exact_stream_leakage(prior, laws)
    assert report.eps == pytest.approx(exact_leakage(prior, _joint_stream_mechanism(laws)), abs=1e-12)
    assert report.eps == pytest.approx(float(report.per_entry.max()))


def test_clamping_the_noisy_histogram_loses_nothing():
    """Clamping to 0..1 keeps the leakage of a wider clamping range (the likelihood only sees [v ≥ 1])."""
    prior = MarkovChainPrior([[0.8, 0.2], [0.3, 0.7]], None, 3)
    narrow = exact_stream_leakage(prior, laplace_histogram_emission(2, 0.9))
    wide = exact_stream_leakage(prior, laplace_histogram_emission(2, 0.9, low=-2, high=3))
    assert narrow.eps == pytest.approx(wide.eps, abs=1e-12)
    np.testing.assert_allclose(narrow.per_entry, wide.per_entry, atol=1e-12)


def test_emissions_by_hand():
    rr = randomized_response_emission(3, math.log(2.0))
    np.testing.assert_allclose(rr, [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])
    assert emission_epsilon(rr) == pytest.approx(math.log(2.0))
    hist = laplace_histogram_emission(2, 1.0)
    r = math.exp(-0.5)
    # state 0: count 0 gets Z ∈ {0 from mean 1 …}: Pr[c0 ≥ 1 | mean 1] = 1/(1+r), Pr[c1 ≥ 1 | mean 0] = r/(1+r)
    np.testing.assert_allclose(hist[0], np.outer([r / (1 + r), 1 / (1 + r)], [1 / (1 + r), r / (1 + r)]).reshape(-1))
    np.testing.assert_allclose(hist.sum(axis=1), 1.0)
    assert emission_epsilon(hist) == pytest.approx(1.0)
    assert emission_epsilon([[1.0, 0.0], [0.5, 0.5]]) == math.inf


# --------------------------------------------------------------------------------------------
# the [C] bound, the inverse question and the summary


@pytest.mark.parametrize("seed", range(4))
def test_translation_bound_equals_its_definition(seed):
    rng = np.random.default_rng(80 + seed)
    prior = random_prior(rng, 2 + seed % 2, 6)
    curve = influence_curve(prior)
    schedule = rng.uniform(0.0, 1.0, size=6).tolist()
    for contiguous in (False, True):
        got = translation_bound(curve, schedule, contiguous=contiguous)
        want = brute_stream.translation_per_entry(curve.points(), schedule, contiguous)
        np.testing.assert_allclose(got.per_entry, want, rtol=1e-12)
        assert got.refined and got.eps_dp == max(schedule)
    constant = translation_bound(curve, [0.4] * 6)
    assert constant.eps_puffer == certify(curve, 0.4).eps_puffer and not constant.refined
    assert group_dp_bound([0.4] * 6) == pytest.approx(2.4)


def test_max_eps_for_tpl_meets_the_target_and_is_the_largest():
    rng = np.random.default_rng(9)
    prior = random_prior(rng, 3, 30)
    for target in (0.5, 2.0):
        eps = max_eps_for_tpl(prior, target)
        assert temporal_privacy_leakage(prior, eps).max_tpl <= target
        assert temporal_privacy_leakage(prior, eps * (1 + 1e-9)).max_tpl > target - 1e-9
        unbounded = max_eps_for_tpl(prior, target, unbounded=True)
        assert unbounded <= eps and tpl_supremum(prior, unbounded) <= target
    # Cao et al.'s chain is bounded only for ε < 0.2231: an unbounded stream with target 5 stays below it
    cao = MarkovChainPrior([[0.8, 0.2], [0.0, 1.0]], [0.5, 0.5], 8)
    assert max_eps_for_tpl(cao, 0.5) > 0
    independent = MarkovChainPrior([[0.5, 0.5], [0.5, 0.5]], None, 10)
    assert max_eps_for_tpl(independent, 0.7) == 0.7  # no correlation: TPL = ε


def test_stream_bounds_and_plan_say_which_bound_is_tighter():
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], None, 20)
    report = stream_bounds(prior, 0.3)
    tpl, c = report.temporal.max_tpl, report.translation.eps_puffer
    assert report.group_dp == pytest.approx(6.0)
    sentence = report.describe()
    assert ("TPL is tighter" in sentence) == (tpl < c)
    assert f"{min(tpl, c):.4g}" in sentence
    plan = plan_stream(prior, 1.0)
    assert temporal_privacy_leakage(prior, plan.eps_tpl).max_tpl <= 1.0
    assert certify(influence_curve(prior), plan.eps_translation).eps_puffer <= 1.0 + 1e-12
    assert plan.eps_group_dp == pytest.approx(1.0 / 20)


def test_unbounded_plan_uses_only_curve_points_an_unbounded_chain_shares():
    """a(b) of a stationary chain of length T equals that of a much longer one for 2b + 1 ≤ T."""
    transition = [[0.9, 0.1], [0.2, 0.8]]
    short = MarkovChainPrior(transition, None, 21)
    long_curve = influence_curve(MarkovChainPrior(transition, None, 301))
    plan = plan_stream(short, 2.0, unbounded=True)
    want = max((2.0 - long_curve.at(b)) / b for b in range(1, 11) if long_curve.at(b) < 2.0)
    assert plan.eps_translation == pytest.approx(want, rel=1e-12)
    assert plan.eps_group_dp == 0.0 and plan.unbounded
    assert tpl_supremum(short, plan.eps_tpl) <= 2.0
    with pytest.raises(ValueError, match="curve must be the a"):
        plan_stream(short, 2.0, curve=long_curve)


# --------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: leakage_function([[0.5, 0.5]], 1.0), "square"),
        (lambda: leakage_function([[1.0]], 1.0), "at least 2 states"),
        (lambda: leakage_function([[0.5, 0.6], [0.5, 0.5]], 1.0), "row 1 of the matrix Q sums to 1.1"),
        (lambda: leakage_function([[1.5, -0.5], [0.5, 0.5]], 1.0), "cannot be negative"),
        (lambda: leakage_function([[np.nan, 1.0], [0.5, 0.5]], 1.0), "not a finite number"),
        (lambda: leakage_function([[0.5, 0.5], [0.5, 0.5]], -1.0), "alpha must be positive"),
        (lambda: leakage_function([[0.5, 0.5], [0.5, 0.5]], math.inf), "alpha must be finite"),
        (lambda: leakage_function(np.full((MAX_STATES + 1,) * 2, 1 / (MAX_STATES + 1)), 1.0), "limited to K"),
        (lambda: backward_privacy_leakage(CAO_BACKWARD, 0.1), "one ε per time step"),
        (lambda: backward_privacy_leakage(CAO_BACKWARD, []), "non-empty"),
        (lambda: backward_privacy_leakage(CAO_BACKWARD, [0.1, -0.2]), r"eps\[2\] must be positive"),
        (lambda: backward_privacy_leakage(CAO_BACKWARD, [[0.1]]), "1-D"),
        (lambda: backward_privacy_leakage(CAO_BACKWARD, ["a"]), "must be a number"),
        (lambda: temporal_privacy_leakage(MarkovChainPrior(CAO_BACKWARD, [0.5, 0.5], 3), [0.1] * 4), "T = 3"),
        (lambda: temporal_privacy_leakage([], 0.1), "non-empty"),
        (
            lambda: temporal_privacy_leakage(
                [MarkovChainPrior(CAO_BACKWARD, [0.5, 0.5], 3), MarkovChainPrior(CAO_BACKWARD, [0.5, 0.5], 4)], 0.1
            ),
            "same stream length",
        ),
        (lambda: backward_matrix(MarkovChainPrior(CAO_BACKWARD, [0.5, 0.5], 3)), "give the time step"),
        (lambda: backward_matrix(MarkovChainPrior(CAO_BACKWARD, [0.5, 0.5], 3), 4), "beyond the chain"),
        (lambda: backward_matrix(MarkovChainPrior(CAO_BACKWARD, [0.5, 0.5], 3), 1), "≥ 2"),
        (lambda: leakage_supremum(CAO_BACKWARD, 0.0), "eps must be positive"),
        (lambda: max_eps_for_tpl(MarkovChainPrior(CAO_BACKWARD, [0.5, 0.5], 3), 0.0), "target must be positive"),
        (lambda: translation_bound("curve", [0.1]), "InfluenceCurve"),
        (lambda: randomized_response_emission(1, 0.5), "n_states"),
        (lambda: laplace_histogram_emission(2, 0.5, low=1), "contain 0 and 1"),
        (lambda: laplace_histogram_emission(8, 0.5, low=-5, high=5), "at most 1,000,000"),
        (lambda: emission_epsilon([[0.5, 0.6], [0.5, 0.5]]), "sums to 1.1"),
    ],
)
def test_bad_input_raises_a_clear_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_exact_stream_audit_refuses_big_chains_and_bad_emissions():
    prior = MarkovChainPrior(np.full((3, 3), 1 / 3), None, 9)
    with pytest.raises(ValueError, match="exact enumeration is limited"):
        exact_stream_leakage(prior, randomized_response_emission(3, 1.0))
    small = MarkovChainPrior(np.full((2, 2), 0.5), None, 3)
    with pytest.raises(ValueError, match="give one per time step"):
        exact_stream_leakage(small, [randomized_response_emission(2, 1.0)] * 2)
    with pytest.raises(ValueError, match="rows but the chain has 2 states"):
        exact_stream_leakage(small, randomized_response_emission(3, 1.0))
