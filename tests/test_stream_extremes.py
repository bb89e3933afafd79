"""Streams at the extremes: never below the truth (docs/math.md §10, §11).

References are 60-digit mpmath computations from the definitions (every subset, every sequence),
sharing no code with puffer_core.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puffer_core import MarkovChainPrior
from puffer_core.attacks.attacker import attack_stream
from puffer_core.audit.stream import exact_stream_leakage
from puffer_core.mechanisms.laws import (
    ClampedDiscreteLaplace,
    RandomizedResponse,
    laplace_histogram_emission,
    randomized_response_emission,
)
from puffer_core.stream.fronts import leakage_function
from puffer_core.stream.supremum import max_eps_for_tpl
from puffer_core.stream.tpl import temporal_privacy_leakage
from tests.support.strategies import stochastic_matrices

mpmath.mp.dps = 60
CHAIN = [[0.9, 0.1], [0.2, 0.8]]


def mp_leakage_function(Q, alpha) -> mpmath.mpf:
    """L(α; Q) over every ordered pair of rows and every subset of columns, straight from the definition.

    The working precision is 60 digits beyond the size of α, so log(1 + c·q) − log(1 + c·d) keeps 60
    digits after the α in both logs cancels.  Rows are divided by their sums, as the library reads them.
    """
    with mpmath.workdps(60 + int(math.log10(max(alpha, 1.0)))):
        Q = [[mpmath.mpf(x) / mpmath.fsum(mpmath.mpf(y) for y in row) for x in row] for row in Q]
        c = mpmath.expm1(mpmath.mpf(alpha))
        best = mpmath.mpf(0)
        k = len(Q)
        for i, ip in itertools.permutations(range(k), 2):
            for size in range(k + 1):
                for S in itertools.combinations(range(k), size):
                    q = mpmath.fsum(Q[i][j] for j in S)
                    d = mpmath.fsum(Q[ip][j] for j in S)
                    best = max(best, mpmath.log1p(c * q) - mpmath.log1p(c * d))
        return +best


def mp_exact_rr_stream(P, length, eps) -> list[mpmath.mpf]:
    """The exact per-entry leakage of randomized response at every step of a stationary chain, in 60 digits."""
    k = len(P)
    P = [[mpmath.mpf(x) for x in row] for row in P]
    pi = mpmath.matrix(k, 1)
    a = mpmath.matrix([[P[i][j] for j in range(k)] for i in range(k)]).T - mpmath.eye(k)
    for j in range(k):
        a[k - 1, j] = 1
    rhs = mpmath.matrix(k, 1)
    rhs[k - 1] = 1
    pi = mpmath.lu_solve(a, rhs)

    def emission(x, r, e):
        e = mpmath.mpf(e)
        norm = mpmath.exp(e) + k - 1
        return (mpmath.exp(e) if x == r else 1) / norm

    out = [mpmath.mpf(0)] * length
    seqs = list(itertools.product(range(k), repeat=length))
    prob = {}
    for s in seqs:
        p = pi[s[0]]
        for u, v in zip(s, s[1:]):
            p *= P[u][v]
        prob[s] = p
    for r in itertools.product(range(k), repeat=length):
        like = {s: prob[s] * mpmath.fprod(emission(s[t], r[t], eps[t]) for t in range(length)) for s in seqs}
        for t in range(length):
            cond = [
                mpmath.fsum(like[s] for s in seqs if s[t] == x) / mpmath.fsum(prob[s] for s in seqs if s[t] == x)
                for x in range(k)
            ]
            for x, xp in itertools.permutations(range(k), 2):
                out[t] = max(out[t], mpmath.log(cond[x] / cond[xp]))
    return out


# --------------------------------------------------------------------------------------------
# the leakage function and TPL at huge α (α + log x rounded to α)


@pytest.mark.parametrize("alpha", [1e13, 1e14, 1e17, 1e100, 1e300])
def test_leakage_function_keeps_its_log_term_at_huge_alpha(alpha):
    truth = mp_leakage_function(CHAIN, alpha)  # log 8 = 2.0794…: (0.8 + 0.2e^−α)/(0.1 + 0.9e^−α)
    value = leakage_function(CHAIN, alpha)
    assert value >= truth
    assert value == pytest.approx(float(truth), rel=1e-14)


def test_tpl_with_a_huge_first_step_stays_above_the_exact_leakage():
    prior = MarkovChainPrior(CHAIN, length=3)
    eps = [1e17, 1.0, 1.0]
    tpl = temporal_privacy_leakage(prior, eps).tpl
    exact = mp_exact_rr_stream(CHAIN, 3, eps)  # ≈ [1e17 + 1.7, 3.786, 2.745]
    assert float(exact[1]) == pytest.approx(3.786, abs=5e-4) and float(exact[2]) == pytest.approx(2.745, abs=5e-4)
    for t in range(3):
        assert mpmath.mpf(float(tpl[t])) >= exact[t], (t, tpl[t], exact[t])


huge = st.floats(-8.0, 300.0).map(lambda e: 10.0**e)  # α from 1e-8 to 1e300, log-uniform


@given(Q=stochastic_matrices(max_k=4).map(np.ndarray.tolist), a=huge, b=huge)
@settings(max_examples=120, deadline=None)
def test_leakage_function_is_non_decreasing_and_never_below_the_truth_up_to_1e300(Q, a, b):
    lo, hi = min(a, b), max(a, b)
    low, high = leakage_function(Q, lo), leakage_function(Q, hi)
    assert high >= low * (1 - 1e-13)
    assert low >= mp_leakage_function(Q, lo)
    assert 0 <= low <= lo


@given(
    P=stochastic_matrices(max_k=3).map(np.ndarray.tolist),
    steps=st.lists(huge, min_size=2, max_size=5),
    which=st.integers(0, 4),
    factor=st.floats(1.0, 1e6),
)
@settings(max_examples=80, deadline=None)
def test_tpl_is_non_decreasing_in_every_step_s_eps_up_to_1e300(P, steps, which, factor):
    try:
        prior = MarkovChainPrior(P, length=len(steps))
    except ValueError:  # no unique stationary distribution: not a stream prior
        return
    raised = list(steps)
    raised[which % len(steps)] = min(raised[which % len(steps)] * factor, 1e300)
    before = temporal_privacy_leakage(prior, steps)
    after = temporal_privacy_leakage(prior, raised)
    for name in ("bpl", "fpl", "tpl"):
        # up to the rounding pads (about 1e-15 absolute: α ≤ 1 and α > 1 take paths with different pads)
        assert np.all(getattr(after, name) >= getattr(before, name) * (1 - 1e-13) - 1e-14), name
    assert np.all(before.tpl >= np.asarray(steps))  # an entry leaks at least its own ε


def test_the_largest_constant_eps_of_an_endless_deterministic_chain_is_zero_and_found_at_once():
    """It used to loop forever: the bracket [0, 5e-324] never shrank below its relative tolerance."""
    cycle = MarkovChainPrior([[0.0, 1.0], [1.0, 0.0]], length=4)
    assert max_eps_for_tpl(cycle, 1.0, unbounded=True) == 0.0


# --------------------------------------------------------------------------------------------
# release laws at huge ε: exact in log space, refused as probabilities


def test_randomized_response_at_eps_800_is_refused_as_probabilities_and_exact_in_logs():
    with pytest.raises(ValueError, match="below the 1e-300 a double can hold"):
        randomized_response_emission(2, 800.0)  # used to return the identity: infinitely leaky, labelled 800
    logs = RandomizedResponse(2, 800.0).log_emission()
    norm = mpmath.log(mpmath.exp(800) + 1)
    assert logs[0, 0] == pytest.approx(float(800 - norm), abs=1e-15)
    assert logs[0, 1] == pytest.approx(float(-norm), rel=1e-15)
    assert logs[0, 0] - logs[0, 1] == pytest.approx(800.0, rel=1e-15)


def test_the_attacker_reads_the_exact_log_law_and_the_audit_refuses_it():
    prior = MarkovChainPrior(CHAIN, length=4)
    law = RandomizedResponse(2, 800.0)
    attack = attack_stream(prior, law, seed=0, draws=20)
    tpl = temporal_privacy_leakage(prior, 800.0).max_tpl
    assert 800.0 <= attack.lower <= tpl
    with pytest.raises(ValueError, match="below the 1e-300 a double can hold"):
        exact_stream_leakage(prior, law)


def test_the_noisy_histogram_at_huge_eps_is_refused_as_probabilities_and_exact_in_logs():
    with pytest.raises(ValueError, match="below the 1e-300 a double can hold"):
        laplace_histogram_emission(2, 2000.0)
    logs = ClampedDiscreteLaplace(2000.0, 0, 1).log_emission(2)
    r = mpmath.exp(-1000)
    # state 0: count 0 reads ≥ 1 with probability 1/(1+r), count 1 reads 0 with probability r/(1+r)
    expected = mpmath.log(1 / (1 + r)) + mpmath.log(1 / (1 + r))
    assert logs[0, 2] == pytest.approx(float(expected), abs=1e-15)  # outputs (1, 0): C order
    assert logs[0, 1] == pytest.approx(float(mpmath.log(r / (1 + r)) * 2), rel=1e-15)  # outputs (0, 1)
