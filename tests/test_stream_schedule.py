"""Stream schedules within a TPL target, and the backward/forward matrices as inputs (docs/math.md §10).

Every schedule is checked against the plain-Python TPL recursion of tests/support/brute_stream.py (Bayes' rule
from marginals by vector products, L over every subset), which shares no code with puffer_core.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from puffer_core import MarkovChainPrior
from puffer_core.stream.schedule import optimal_schedule
from puffer_core.stream.supremum import max_eps_for_tpl, tpl_supremum
from puffer_core.stream.tpl import backward_matrix, temporal_privacy_leakage
from tests.support import brute_stream
from tests.support.brute_stream import random_prior

ROUNDING = 1e-12


def brute_max_tpl(prior: MarkovChainPrior, eps, backward=None, forward=None) -> float:
    P = prior.transition.tolist()
    init = list(prior.initial)
    return max(brute_stream.tpl_recursion(P, init, len(eps), list(eps), backward, forward)[2])


@pytest.mark.parametrize("seed", range(10))
def test_the_schedule_meets_the_target_at_every_step_against_an_independent_recursion(seed):
    rng = np.random.default_rng(300 + seed)
    k = 2 + seed % 3
    prior = random_prior(rng, k, 5, stationary=seed % 2 == 0, zeros=seed % 4 == 3)
    target = float(rng.uniform(0.3, 3.0))
    length = int(rng.integers(2, 13))
    schedule = optimal_schedule(prior, target, length)
    assert schedule.eps.shape == (length,) and np.all(schedule.eps >= 0)
    truth = brute_max_tpl(prior.with_length(length), schedule.eps)
    assert truth <= target + ROUNDING
    assert schedule.max_tpl <= target and schedule.max_tpl >= truth - 1e-9
    # at least the constant schedule's total, the constant found independently by bisection
    constant = brute_stream.largest_constant_eps([(prior.transition.tolist(), list(prior.initial))], target, length)
    assert schedule.total >= length * constant - 1e-9
    assert schedule.total >= schedule.constant_total - 1e-12
    if schedule.three_value_total is not None:
        assert schedule.total >= schedule.three_value_total - 1e-12


@pytest.mark.parametrize("seed", range(4))
def test_a_set_theta_is_within_the_target_for_every_prior(seed):
    rng = np.random.default_rng(400 + seed)
    priors = [random_prior(rng, 3, 4, stationary=i % 2 == 0) for i in range(3)]
    length = 8
    schedule = optimal_schedule(priors, 1.2, length)
    worst = max(brute_max_tpl(p.with_length(length), schedule.eps) for p in priors)
    assert worst <= 1.2 + ROUNDING
    constant = brute_stream.largest_constant_eps(
        [(p.transition.tolist(), list(p.initial)) for p in priors], 1.2, length
    )
    assert schedule.total >= length * constant - 1e-9


CHAINS = [
    [[0.9, 0.1], [0.2, 0.8]],
    [[0.99, 0.01], [0.01, 0.99]],
    [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]],
]


@pytest.mark.parametrize("P", CHAINS)
def test_the_tight_schedule_of_a_stationary_chain_is_cao_s_three_value_schedule(P):
    prior = MarkovChainPrior(P, length=10)
    schedule = optimal_schedule(prior, 1.0, 12)
    first, mid, last = schedule.three_value
    # Cao et al.: the ends at the suprema of BPL and FPL for ε_mid, ε_mid inside — tight everywhere
    np.testing.assert_allclose(schedule.eps[1:-1], mid, rtol=1e-9)
    assert schedule.eps[0] == pytest.approx(first, rel=1e-9) and schedule.eps[-1] == pytest.approx(last, rel=1e-9)
    _, _, tpl = brute_stream.tpl_recursion(P, list(prior.initial), 12, list(schedule.eps))
    np.testing.assert_allclose(tpl, 1.0, atol=1e-9)  # TPL at the target at every step
    assert mid == pytest.approx(max_eps_for_tpl(prior, 1.0, unbounded=True), rel=1e-12)
    assert tpl_supremum(prior, mid) <= 1.0


def test_a_non_stationary_chain_gets_a_tight_schedule_too():
    prior = MarkovChainPrior([[0.8, 0.2], [0.3, 0.7]], [1.0, 0.0], 9)
    schedule = optimal_schedule(prior, 1.5, 9)
    assert schedule.three_value is None  # Cao et al.'s allocation needs one backward matrix
    _, _, tpl = brute_stream.tpl_recursion(prior.transition.tolist(), [1.0, 0.0], 9, list(schedule.eps))
    assert max(tpl) <= 1.5 + ROUNDING
    np.testing.assert_allclose(tpl, 1.5, atol=1e-8)
    assert schedule.method == "tight" and schedule.total > schedule.constant_total


def test_three_value_beats_the_constant_schedule_over_a_long_stream():
    prior = MarkovChainPrior([[0.9, 0.1], [0.1, 0.9]], length=30)
    for length in (30, 100):
        schedule = optimal_schedule(prior, 1.0, length)
        assert schedule.three_value_total > schedule.constant_total
        assert schedule.total >= schedule.three_value_total - 1e-12


def test_an_unbounded_schedule_is_within_the_target_however_long_the_stream():
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=10)
    schedule = optimal_schedule(prior, 1.0)
    assert schedule.unbounded and schedule.length is None and schedule.total == math.inf
    assert schedule.eps[1] == pytest.approx(max_eps_for_tpl(prior, 1.0, unbounded=True), rel=1e-12)
    for length in (1, 2, 5, 40):
        eps = schedule.steps(length)
        assert brute_max_tpl(prior.with_length(length), eps) <= 1.0 + ROUNDING
    # a deterministic chain: no constant ε keeps an endless stream finite; one release, then nothing
    cycle = MarkovChainPrior([[0.0, 1.0], [1.0, 0.0]], length=4)
    endless = optimal_schedule(cycle, 1.0)
    assert list(endless.eps) == [1.0, 0.0]
    assert brute_max_tpl(cycle.with_length(6), endless.steps(6)) <= 1.0 + ROUNDING


def test_backward_and_forward_matrices_as_inputs_equal_the_independent_recursion():
    prior = MarkovChainPrior([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]], length=7)
    eps = [0.2, 0.5, 0.1, 0.3, 0.3, 0.8, 0.2]
    # the prior's own matrices give the default
    default = temporal_privacy_leakage(prior, eps)
    own = temporal_privacy_leakage(prior, eps, backward=backward_matrix(prior), forward=prior.transition)
    np.testing.assert_allclose(own.tpl, default.tpl, rtol=1e-13)
    # an attacker who knows only the forward direction: equal rows backward leak nothing, BPL_t = ε_t
    unknown = np.full((3, 3), 1 / 3)
    forward_only = temporal_privacy_leakage(prior, eps, backward=unknown)
    np.testing.assert_allclose(forward_only.bpl, eps, rtol=1e-13)
    other = [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5]]
    mixed = temporal_privacy_leakage(prior, eps, backward=other, forward=unknown)
    P, init = prior.transition.tolist(), list(prior.initial)
    bpl, fpl, tpl = brute_stream.tpl_recursion(P, init, 7, eps, other, unknown.tolist())
    np.testing.assert_allclose(mixed.bpl, bpl, rtol=1e-12)
    np.testing.assert_allclose(mixed.fpl, fpl, rtol=1e-12)
    np.testing.assert_allclose(mixed.tpl, tpl, rtol=1e-12)
    # a schedule for that attacker meets the target under the same matrices
    schedule = optimal_schedule(prior, 1.0, 7, backward=other, forward=unknown)
    assert brute_max_tpl(prior, schedule.eps, other, unknown.tolist()) <= 1.0 + ROUNDING


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: optimal_schedule(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=3), 0.0, 5), "target"),
        (lambda: optimal_schedule(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=3), 1.0, 0), "length"),
        (lambda: optimal_schedule(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=3), 1.0, True), "length"),
        (
            lambda: optimal_schedule(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], [1.0, 0.0], 3), 1.0),
            "stationary initial distribution",
        ),
        (
            lambda: temporal_privacy_leakage(
                MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=3), 0.1, backward=[[1.0]]
            ),
            "backward matrix",
        ),
        (
            lambda: temporal_privacy_leakage(
                MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=3), 0.1, forward=np.full((3, 3), 1 / 3)
            ),
            "has 3 states but the chain has 2",
        ),
        (
            lambda: temporal_privacy_leakage(
                MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=3), 0.1, forward=[[0.5, 0.6], [0.5, 0.5]]
            ),
            "sums to 1.1",
        ),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _tpl_mp(transition, initial, length, eps):
    """max_t TPL_t of a constant ε in 60-digit arithmetic: marginals, Bayes' backward rows and L over every subset."""
    import mpmath

    k = len(transition)
    P = [[mpmath.mpf(float(x)) for x in row] for row in transition]
    marg = [[mpmath.mpf(float(x)) for x in initial]]
    for _ in range(length - 1):
        marg.append([sum(marg[-1][i] * P[i][j] for i in range(k)) for j in range(k)])
    c = mpmath.expm1(eps)

    def leak(Q, alpha, rows):
        cc = mpmath.expm1(alpha)
        best = mpmath.mpf(0)
        for i, ip in itertools.permutations(rows, 2):
            for size in range(k + 1):
                for S in itertools.combinations(range(k), size):
                    q, d = sum(Q[i][j] for j in S), sum(Q[ip][j] for j in S)
                    best = max(best, mpmath.log1p(cc * q) - mpmath.log1p(cc * d))
        return best

    assert c >= 0
    bpl = [eps]
    for t in range(1, length):
        rows = [i for i in range(k) if marg[t][i] > 0]
        Q = [[marg[t - 1][j] * P[j][i] / marg[t][i] for j in range(k)] if marg[t][i] > 0 else [0] * k
             for i in range(k)]
        bpl.append(leak(Q, bpl[-1], rows) + eps)
    fpl = [mpmath.mpf(0)] * length
    fpl[-1] = eps
    for t in range(length - 2, -1, -1):
        fpl[t] = leak(P, fpl[t + 1], [i for i in range(k) if marg[t][i] > 0]) + eps
    return max(b + f - eps for b, f in zip(bpl, fpl))


@pytest.mark.parametrize("target", [1e-300, 1e-295, 1e-250, 1e-100, 1e-12, 0.5, 2.0])
def test_the_schedule_spends_at_least_the_exact_constant_schedule_less_the_stated_padding(target):
    """Issue 34: at tiny targets the absolute pads of the computed recursion dominate (1e-300 → (1e-300, 0, 0, 0, 0)
    where the exact constant totals 1.48e-300); the bound T·(ε* − Δ − 1e-12·α) of docs/math.md §10 holds, with ε*
    found in 60-digit arithmetic (stationary priors: no far-node slack)."""
    import mpmath

    length = 5
    for transition in ([[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.3, 0.7]]):
        prior = MarkovChainPrior(transition, length=length)
        with mpmath.workdps(60):
            lo, hi = mpmath.mpf(0), mpmath.mpf(target)
            for _ in range(120):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if _tpl_mp(transition, prior.initial, length, mid) <= target else (lo, mid)
            exact = lo
        schedule = optimal_schedule(prior, target, length)
        delta = 2 * length * (1e-14 * max(target, 1.0) + 1e-300)
        assert mpmath.mpf(schedule.total) >= length * (exact - delta - 1e-12 * target), (schedule.eps, exact)
        assert _tpl_mp(transition, prior.initial, length, mpmath.mpf(0)) == 0
        assert schedule.max_tpl <= target
        if target >= 1e-250:  # where the pads are negligible the constant is found to 1e-12
            assert schedule.constant_eps >= float(exact) * (1 - 1e-11)
