"""Exact audits (docs/math.md §9): what calibrate and compose report is never below the true leakage."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from puffer_core import MarkovChainPrior, calibrate, certify, compose, influence_curve
from puffer_core.audit.exact import exact_leakage, leakage_report
from tests.support.brute import random_chain, random_distribution


def exponential_top1(eps_dp: float, k: int):
    """Top-1 state by count, Δu = 1 per entry: Pr[r] ∝ exp(ε_DP · count_r / 2) (docs/math.md §5)."""

    def mechanism(seq: np.ndarray) -> np.ndarray:
        counts = np.bincount(seq, minlength=k)
        w = np.exp(eps_dp * (counts - counts.max()) / 2.0)
        return w / w.sum()

    return mechanism


def _prior(rng, k, length, stationary=True):
    while True:
        try:
            return MarkovChainPrior(random_chain(rng, k), None if stationary else random_distribution(rng, k),
                                    length=length)
        except ValueError:
            continue


@pytest.mark.parametrize("seed", range(8))
def test_calibrated_exponential_mechanism_never_leaks_more_than_reported(seed):
    rng = np.random.default_rng(100 + seed)
    k = 2 + seed % 2
    length = 4 if k == 3 else 6
    priors = [_prior(rng, k, length, stationary=seed % 3 != 0)]
    if seed % 4 == 3:
        priors.append(_prior(rng, k, length))
    curve = influence_curve(priors)
    for target in (0.5, 1.0, 3.0):
        cal = calibrate(curve, target)
        mech = exponential_top1(cal.eps_dp, k)
        one = exact_leakage(priors, mech, releases=1)
        assert one <= target + 1e-9, (one, target, cal)
        three = exact_leakage(priors, mech, releases=3)
        bound = compose([cal, cal, cal])
        assert three <= bound + 1e-9, (three, bound, cal)
        assert bound <= 3 * target + 1e-12


def test_translation_theorem_holds_for_every_curve_point():
    rng = np.random.default_rng(7)
    prior = _prior(rng, 3, 5)
    curve = influence_curve(prior)
    for eps_dp in (0.1, 0.5, 2.0):
        leak = exact_leakage(prior, exponential_top1(eps_dp, 3))
        assert leak <= certify(curve, eps_dp).eps_puffer + 1e-9
        for b, a in curve.points():
            assert leak <= b * eps_dp + a + 1e-9


def test_leakage_of_releasing_one_entry_exactly_is_infinite_by_hand():
    prior = MarkovChainPrior([[0.7, 0.3], [0.4, 0.6]], length=3)

    def reveal_first(seq):
        out = np.zeros(2)
        out[seq[0]] = 1.0
        return out

    report = leakage_report(prior, reveal_first)
    assert report.eps == math.inf and report.entry == 0


def test_leakage_by_hand_for_randomised_response_on_a_single_entry():
    """T = 1: randomised response with keep-probability e^ε/(1+e^ε) leaks exactly ε."""
    eps = 0.8
    keep = math.exp(eps) / (1 + math.exp(eps))
    prior = MarkovChainPrior([[0.5, 0.5], [0.1, 0.9]], length=1)
    leak = exact_leakage(prior, lambda s: np.array([keep, 1 - keep]) if s[0] == 0 else np.array([1 - keep, keep]))
    assert leak == pytest.approx(eps, abs=1e-12)
    two = exact_leakage(prior, lambda s: np.array([keep, 1 - keep]) if s[0] == 0 else np.array([1 - keep, keep]), 2)
    assert two == pytest.approx(2 * eps, abs=1e-12)


def test_joint_output_enumeration_matches_itertools_product():
    prior = MarkovChainPrior([[0.6, 0.4], [0.3, 0.7]], length=2)
    mech = exponential_top1(1.0, 2)
    # independent: Pr[ω1, ω2 | X_1 = x] by explicit sums over sequences and output pairs
    seqs = list(itertools.product(range(2), repeat=2))
    pi = prior.initial
    best = 0.0
    for t in range(2):
        for x, xp in [(0, 1), (1, 0)]:
            for w in itertools.product(range(2), repeat=2):
                def pr(v, w=w, t=t):
                    num = sum(
                        pi[s[0]] * prior.transition[s[0], s[1]] * mech(np.array(s))[w[0]] * mech(np.array(s))[w[1]]
                        for s in seqs
                        if s[t] == v
                    )
                    den = sum(pi[s[0]] * prior.transition[s[0], s[1]] for s in seqs if s[t] == v)
                    return num / den

                best = max(best, math.log(pr(x) / pr(xp)))
    assert exact_leakage(prior, mech, releases=2) == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"prior_or_priors": MarkovChainPrior(np.full((4, 4), 0.25), length=12)}, "exact enumeration is limited"),
        ({"mechanism": lambda s: np.array([0.5, 0.4])}, "sum to 0.9"),
        ({"mechanism": lambda s: np.ones(int(s[0]) + 1) / (int(s[0]) + 1)}, "different lengths"),
        ({"releases": 0}, "releases must be a whole number"),
        ({"prior_or_priors": []}, "non-empty list"),
    ],
)
def test_bad_inputs_raise_value_error(kwargs, message):
    args = {"prior_or_priors": MarkovChainPrior([[0.6, 0.4], [0.3, 0.7]], length=3),
            "mechanism": exponential_top1(1.0, 2)}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        exact_leakage(**args)


def test_joint_outputs_that_underflow_are_refused():
    """Many releases of a near-deterministic mechanism: the joint probabilities leave float64."""
    prior = MarkovChainPrior([[0.6, 0.4], [0.3, 0.7]], length=2)

    def sharp(seq):
        return np.array([1 - 1e-160, 1e-160]) if seq[0] == 0 else np.array([1e-160, 1 - 1e-160])

    assert exact_leakage(prior, sharp, releases=1) > 300  # 1e-160 itself is representable
    with pytest.raises(ValueError, match="double precision"):
        exact_leakage(prior, sharp, releases=2)  # (1e-160)² is not


def test_calibration_refuses_non_finite_values():
    from puffer_core import Calibration

    for bad in ({"a": float("inf")}, {"eps_puffer": float("nan")}, {"eps_dp": -1.0}, {"b": 0}):
        args = {"eps_puffer": 1.0, "eps_dp": 0.1, "b": 2, "a": 0.5}
        args.update(bad)
        with pytest.raises(ValueError):
            Calibration(**args)
