"""Inputs out of reach are refused up front with an estimate; unsound shortcuts are closed."""

from __future__ import annotations

import numpy as np
import pytest

from puffer_core import (
    GaussianProcessPrior,
    MarkovChainPrior,
    binary_chain_curve,
    calibrate,
    certify,
    influence_curve,
    mqm_noise_scale,
)
from puffer_core.engine.gaussian import gaussian_influence_curve
from tests.support.brute import brute_influence_all


def test_max_b_has_a_cap_with_a_clear_refusal():
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=10)
    with pytest.raises(ValueError, match="max_b = 100000000 is over the limit.*max_b = 10 already"):
        influence_curve(prior, max_b=10**8)
    with pytest.raises(ValueError, match="over the limit"):
        influence_curve(GaussianProcessPrior(10, 1.0), max_b=10**8)
    with pytest.raises(ValueError, match="over the limit"):
        gaussian_influence_curve(GaussianProcessPrior(10, 1.0), max_b=10**8)
    assert influence_curve(prior, max_b=1000).at(999) == 0.0  # larger than T is fine: zeros


def test_mqm_with_an_epsilon_too_small_for_double_precision_says_so():
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=10)
    with pytest.raises(ValueError, match="too small.*use (ε_puffer|eps_puffer) ≥"):
        mqm_noise_scale(prior, 1e-320)


@pytest.mark.parametrize("bad", [True, False, np.bool_(True)])
def test_a_bool_is_not_a_length_scale(bad):
    with pytest.raises(ValueError, match="length_scale must be a number"):
        GaussianProcessPrior(5, bad)
    with pytest.raises(ValueError, match="gamma must be a number"):
        GaussianProcessPrior(5, 1.0, gamma=bad)


def test_closed_form_needs_the_sequence_length():
    """Without it the curve used to claim length 2·max_b + 1, and calibrate chose group DP over 5 entries."""
    with pytest.raises(TypeError, match="length"):
        binary_chain_curve(0.95, 0.95, 2)  # type: ignore[call-arg]
    # with the real length (8) the calibrated mechanism is truly ε_puffer = 1 private
    closed = binary_chain_curve(0.95, 0.95, 2, length=8)
    cal = calibrate(closed, 1.0)
    exact = brute_influence_all([([[0.95, 0.05], [0.05, 0.95]], [0.5, 0.5], 8)])
    exact_curve = influence_curve(MarkovChainPrior([[0.95, 0.05], [0.05, 0.95]], length=8))
    np.testing.assert_allclose(exact_curve.a, exact, atol=1e-9)
    assert certify(exact_curve, cal.eps_dp).eps_puffer <= 1.0 + 1e-12
    # the old default (a length-5 curve) would have allowed ε_DP = 0.2, which leaks 1.30 on length 8
    assert certify(exact_curve, 0.2).eps_puffer > 1.0


def _uniform_start(k: int, length: int) -> MarkovChainPrior:
    """A big prior that is cheap to build (no stationary distribution to compute)."""
    transition = np.full((k, k), 1.0 / k)
    return MarkovChainPrior(transition, np.eye(k)[0], length=length)


def test_states_beyond_reach_are_refused_with_an_estimate_not_run_out_of_memory():
    with pytest.raises(ValueError, match=r"out of reach: it needs about .* \(K = 3000 states.*K ≤ \d+ fits"):
        influence_curve(_uniform_start(3000, 100))


def test_slowly_mixing_long_chains_are_refused_with_the_max_b_that_fits():
    k = 60
    cycle = 0.999 * np.roll(np.eye(k), 1, axis=1) + 0.001 / k
    prior = MarkovChainPrior(cycle, length=200_000)
    with pytest.raises(ValueError, match=r"pass max_b ≤ \d+"):
        influence_curve(prior)
    # and what the message suggests works
    message = ""
    try:
        influence_curve(prior)
    except ValueError as exc:
        message = str(exc)
    suggested = int(message.split("max_b ≤ ")[1].split(" ")[0])
    assert influence_curve(prior, max_b=min(suggested, 50)).max_b == min(suggested, 50)


def test_mqm_refuses_tables_out_of_reach():
    with pytest.raises(ValueError, match="MQM for this prior is out of reach: it needs about .*K = 3000 states"):
        mqm_noise_scale(_uniform_start(3000, 50), 1.0)


def test_mqm_refuses_a_large_set_of_slow_non_stationary_chains_at_once():
    """Θ of 30 non-stationary near-periodic chains, K = 200, T = 3000: still running after 400 s."""
    from puffer_core.work import WorkCounter

    k = 200
    rng = np.random.default_rng(1)
    cycle = 0.999 * np.roll(np.eye(k), 1, axis=1) + 0.001 / k
    theta = [MarkovChainPrior(cycle, rng.dirichlet(np.ones(k)), length=3000) for _ in range(30)]
    work = WorkCounter()
    with pytest.raises(ValueError, match="MQM for this prior is out of reach: it needs about .*30 priors"):
        mqm_noise_scale(theta, 1.0, work=work)
    assert work.total <= len(theta) * 3000 * k * k  # at most each prior's marginals (T·K²), none of the quilts
