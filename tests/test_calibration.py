"""Calibration, certification, composition and the planner (docs/math.md §3–4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puffer_core import (
    Calibration,
    InfluenceCurve,
    MarkovChainPrior,
    calibrate,
    certify,
    compose,
    cumulative,
    group_dp,
    influence_curve,
    naive_sum,
    plan,
)


def _curve(values, length):
    return InfluenceCurve(np.arange(1, len(values) + 1), np.array(values, dtype=float), length)


def test_calibrate_picks_the_best_slope_by_hand():
    # a = [2, 1, 0.5, 0.2], length 10, target 3: slopes (3-2)/1=1, (3-1)/2=1, 2.5/3=.833, 2.8/4=.7, 3/10=.3
    curve = _curve([2.0, 1.0, 0.5, 0.2], 10)
    cal = calibrate(curve, 3.0)
    assert (cal.b, cal.a, cal.eps_dp, cal.group_dp) == (1, 2.0, 1.0, False)  # tie → smaller b
    cal = calibrate(curve, 1.5)  # slopes: -, .25, 1/3, 1.3/4=.325, .15
    assert cal.b == 3 and cal.eps_dp == pytest.approx(1 / 3)


def test_calibrate_falls_back_to_group_dp_over_the_whole_sequence():
    curve = _curve([math.inf, math.inf, 5.0], 8)
    cal = calibrate(curve, 1.0)
    assert cal.group_dp and cal.b == 8 and cal.a == 0.0 and cal.eps_dp == pytest.approx(1 / 8)
    assert cal == group_dp(curve, 1.0)


def test_certify_by_hand():
    curve = _curve([2.0, 1.0, 0.5, 0.2], 10)
    cal = certify(curve, 0.1)  # 2.1, 1.2, 0.8, 0.6, 1.0 → b = 4
    assert cal.b == 4 and cal.eps_puffer == pytest.approx(0.6)
    assert certify(_curve([math.inf], 3), 1.0).eps_puffer == 3.0


@st.composite
def curves(draw):
    n = draw(st.integers(1, 12))
    steps = draw(st.lists(st.floats(0.0, 3.0), min_size=n, max_size=n))
    a = np.cumsum(steps[::-1])[::-1]  # non-increasing, ≥ 0
    if draw(st.booleans()):
        a[: draw(st.integers(0, n))] = np.inf
    length = draw(st.integers(n, n + 10))
    if length == n:
        a[-1] = 0.0
    return _curve(a, length)


@given(curve=curves(), e1=st.floats(0.01, 20), e2=st.floats(0.01, 20))
@settings(max_examples=150, deadline=None)
def test_eps_dp_is_non_decreasing_in_the_target(curve, e1, e2):
    lo, hi = sorted((e1, e2))
    assert calibrate(curve, lo).eps_dp <= calibrate(curve, hi).eps_dp + 1e-15


@given(curve=curves(), eps=st.floats(0.01, 20))
@settings(max_examples=150, deadline=None)
def test_certify_and_calibrate_agree(curve, eps):
    cal = calibrate(curve, eps)
    assert cal.a < eps and cal.b * cal.eps_dp + cal.a == pytest.approx(eps, rel=1e-12)
    assert certify(curve, cal.eps_dp).eps_puffer == pytest.approx(eps, rel=1e-12)
    back = certify(curve, eps / 7)
    assert calibrate(curve, back.eps_puffer).eps_dp == pytest.approx(eps / 7, rel=1e-12)


def test_compose_theorem_and_common_point_form():
    cals = [Calibration(1.0, 0.2, 3, 0.4), Calibration(2.0, 0.5, 2, 1.0), Calibration(0.5, 0.1, 1, 0.4)]
    # max a + Σ (ε − a) = 1.0 + (0.6 + 1.0 + 0.1)
    assert compose(cals) == pytest.approx(2.7)
    assert compose(cals) <= naive_sum(cals)
    np.testing.assert_allclose(cumulative(cals), [1.0, 2.6, 2.7])
    same = [Calibration(0.3 * 4 + 0.5, 0.3, 4, 0.5)] * 5
    assert compose(same) == pytest.approx(0.5 + 4 * 0.3 * 5)  # a + b Σ ε_DP
    assert compose([]) == 0.0


def test_planner_spends_exactly_the_budget():
    prior = MarkovChainPrior([[0.8, 0.2], [0.3, 0.7]], length=40)
    curve = influence_curve(prior)
    for total, k in [(1.0, 1), (3.0, 4), (10.0, 12), (0.05, 3)]:
        cal = plan(curve, total, k)
        assert compose([cal] * k) == pytest.approx(total, rel=1e-12)
        best = max((total - a) / (k * b) for b, a in curve.points() if a < total)
        assert cal.eps_dp == pytest.approx(best, rel=1e-12)
    assert plan(curve, 2.0, 1).eps_dp == pytest.approx(calibrate(curve, 2.0).eps_dp)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda c: calibrate(c, 0.0), "eps_puffer must be positive"),
        (lambda c: calibrate(c, float("nan")), "finite"),
        (lambda c: calibrate(c, "1"), "must be a number"),
        (lambda c: certify(c, -1.0), "eps_dp must be positive"),
        (lambda c: plan(c, 1.0, 0), "releases must be a whole number"),
        (lambda c: plan(c, float("inf"), 2), "finite"),
        (lambda c: compose([1.0]), "Calibration objects"),
    ],
)
def test_bad_parameters_raise_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call(_curve([1.0, 0.5], 4))


def test_objectives_by_hand_and_consistent_with_calibrate_and_certify():
    from puffer_core import calibration_objective, certify_objective

    curve = _curve([2.0, 1.0, 0.5, 0.2], 10)
    b, allowed = calibration_objective(curve, 1.5)  # a(1) = 2 ≥ 1.5 is not usable
    np.testing.assert_array_equal(b, [2, 3, 4, 10])
    np.testing.assert_allclose(allowed, [0.25, 1 / 3, 1.3 / 4, 0.15])
    b, bound = certify_objective(curve, 0.1)
    np.testing.assert_array_equal(b, [1, 2, 3, 4, 10])
    np.testing.assert_allclose(bound, [2.1, 1.2, 0.8, 0.6, 1.0])
    assert calibrate(curve, 1.5).eps_dp == pytest.approx(allowed.max())
    assert certify(curve, 0.1).eps_puffer == pytest.approx(bound.min())


def test_group_dp_cumulative():
    from puffer_core import group_dp_cumulative

    np.testing.assert_allclose(group_dp_cumulative(10, [0.1, 0.2, 0.05]), [1.0, 3.0, 3.5])
    with pytest.raises(ValueError):
        group_dp_cumulative(0, [0.1])
    with pytest.raises(ValueError):
        group_dp_cumulative(5, [float("nan")])


def test_a_prior_or_nothing_instead_of_a_curve_says_what_to_pass():
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=10)
    for call in (
        lambda: calibrate(prior, 1.0),
        lambda: certify(prior, 0.1),
        lambda: group_dp(prior, 1.0),
        lambda: plan(None, 1.0, 2),
        lambda: plan(prior, 1.0, 2),
    ):
        with pytest.raises(ValueError, match=r"InfluenceCurve.*influence_curve\(prior\)"):
            call()


def test_the_planner_takes_any_whole_number_of_releases():
    curve = _curve([1.0, 0.9], 4)
    huge = plan(curve, 1.0, 10**300)
    # by hand: (E − a(b)) / (k·b) is largest at b = 4 = T (a = 0): 1 / (4·10^300)
    assert huge.b == 4 and huge.a == 0.0
    assert huge.eps_dp == pytest.approx(0.25e-300, rel=1e-12)
    assert huge.eps_puffer == pytest.approx(1e-300, rel=1e-12)
    with pytest.raises(ValueError, match="releases .*too large for a double"):
        plan(curve, 1.0, 10**400)
