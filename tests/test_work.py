"""The work estimate bounds the work done; progress and cancel; refusals at once (one work estimate).

No test times anything: the estimate counts deterministic units, and the engines count the units
they perform (puffer_core.work.WorkCounter).  The chains are small random ones of every family.
"""

from __future__ import annotations

import numpy as np
import pytest

from puffer_core import GaussianProcessPrior, MarkovChainPrior, influence_curve, mqm_noise_scale
from puffer_core.engine.gaussian import gaussian_estimate
from puffer_core.engine.influence import influence_estimate
from puffer_core.engine.mqm import mqm_estimate
from puffer_core.work import WorkCounter, WorkEstimate
from tests.support.brute import chain_of_kind

KINDS = ["dense", "sticky", "sparse", "near-periodic", "ring", "grid", "fitted"]


def _chain(rng, kind, k):
    return chain_of_kind(rng, k, kind)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("start", ["stationary", "random", "one state", "theta"])
def test_estimated_units_are_never_below_the_units_performed(kind, start):
    rng = np.random.default_rng(len(kind) * 7 + len(start))
    k = 9 if kind == "grid" else 8
    if start == "theta":
        priors = [
            MarkovChainPrior(_chain(rng, kind, k), None if i % 2 else rng.dirichlet(np.ones(k)), length=60 - 9 * i)
            for i in range(3)
        ]
    else:
        initial = None if start == "stationary" else np.eye(k)[0] if start == "one state" else rng.dirichlet(np.ones(k))
        priors = [MarkovChainPrior(_chain(rng, kind, k), initial, length=70)]
    for max_b in (None, 12):
        work = WorkCounter()
        estimate = influence_estimate(priors, max_b)
        influence_curve(priors, max_b, work=work)
        assert estimate.total_units >= work.total, (estimate.units, work.as_dict())
    work = WorkCounter()
    estimate = mqm_estimate(priors, 1.0)
    mqm_noise_scale(priors, 1.0, work=work)
    assert estimate.total_units >= work.total, (estimate.units, work.as_dict())


def _slow_chain(rng, kind, k):
    """The slowly mixing families of issue 34: cutoffs in the thousands, or none within the chain."""
    if kind == "near-periodic 1e-3":  # the issue's P = 0.999·roll(I, 1) + 0.001/K
        return 0.999 * np.roll(np.eye(k), 1, axis=1) + 0.001 / k
    if kind == "near-periodic 1e-2, random rows":
        return 0.99 * np.roll(np.eye(k), 1, axis=1) + 0.01 * rng.dirichlet(np.ones(k), size=k)
    if kind.startswith("sticky"):
        stay = float(kind.split()[1])
        return stay * np.eye(k) + (1 - stay) / k
    if kind.startswith("lazy"):  # a sticky chain whose moves are random
        stay = float(kind.split()[1])
        return stay * np.eye(k) + (1 - stay) * rng.dirichlet(np.ones(k), size=k)
    ring = np.zeros((k, k))  # a slow ring: one step either way with probability 0.01
    for i in range(k):
        ring[i, i] = 0.98
        ring[i, (i + 1) % k] += 0.01
        ring[i, (i - 1) % k] += 0.01
    return ring


SLOW_KINDS = ["near-periodic 1e-3", "near-periodic 1e-2, random rows", "sticky 0.99", "sticky 0.999", "lazy 0.99",
              "lazy 0.999", "slow ring"]


@pytest.mark.parametrize("kind", SLOW_KINDS)
@pytest.mark.parametrize("start", ["stationary", "random", "one state", "theta"])
def test_the_estimate_bounds_the_work_on_slowly_mixing_chains(kind, start):
    """Issue 34: cutoffs in the thousands put b beyond T/2, where many nodes are scanned split by split, and keep
    the marginals away from π for the whole chain.  The estimate counts those scans (never below the units the
    kernels perform), at sizes where the old split-phase model was 5–60 times low."""
    rng = np.random.default_rng(len(kind) + 3 * len(start))
    k = 2 if kind == "sticky 0.999" else 5
    length = 400 if start == "stationary" else 250
    if start == "theta":
        priors = [MarkovChainPrior(_slow_chain(rng, kind, k), None if i == 0 else rng.dirichlet(np.ones(k)),
                                   length=length - 13 * i) for i in range(3)]
    else:
        initial = None if start == "stationary" else np.eye(k)[0] if start == "one state" else rng.dirichlet(np.ones(k))
        priors = [MarkovChainPrior(_slow_chain(rng, kind, k), initial, length=length)]
    for max_b in (None, length // 3):
        work = WorkCounter()
        estimate = influence_estimate(priors, max_b)
        influence_curve(priors, max_b, work=work)
        assert estimate.total_units >= work.total, (estimate.units, work.as_dict())
        assert estimate.units["split"] >= work.as_dict()["split"], (estimate.units, work.as_dict())


def test_the_issue_chains_are_counted_at_a_tenth_of_their_size():
    """The issue's near-periodic K = 20 (T = 3,000 took 4.4–5.0 s against an estimate of 0.31 s) and sticky K = 10,
    at T = 500: the split units performed were 20–60 times the estimate's."""
    for transition in (0.999 * np.roll(np.eye(20), 1, axis=1) + 0.001 / 20, 0.99 * np.eye(10) + 0.001):
        prior = MarkovChainPrior(transition, length=500)
        work = WorkCounter()
        estimate = influence_estimate(prior)
        influence_curve(prior, work=work)
        assert estimate.units["split"] >= work.as_dict()["split"] > 0.0
        assert estimate.total_units >= work.total


def test_slow_chains_too_long_for_the_limit_are_refused_at_once_with_what_fits():
    """The issue's T = 10⁵ near-periodic chain was estimated at 5.7 s and accepted; it would run for hours."""
    import time

    prior = MarkovChainPrior(0.999 * np.roll(np.eye(20), 1, axis=1) + 0.001 / 20, length=100_000)
    clock = time.process_time()
    estimate = influence_estimate(prior)
    assert time.process_time() - clock < 5.0  # the refusal is cheap (≤ 1 s on a quiet machine)
    assert not estimate.fits and estimate.largest["max_b"] >= 1
    assert influence_estimate(prior, estimate.largest["max_b"]).fits
    work = WorkCounter()
    with pytest.raises(ValueError, match="out of reach"):
        influence_curve(prior, work=work)
    assert work.total < 1e9


def test_the_gaussian_estimate_is_the_work_counted():
    work = WorkCounter()
    prior = GaussianProcessPrior(40, 2.0)
    influence_curve(prior, work=work)
    assert gaussian_estimate(prior).total_units >= work.total > 0


def test_progress_is_reported_and_a_raising_callback_stops_the_work():
    rng = np.random.default_rng(1)
    prior = MarkovChainPrior(chain_of_kind(rng, 40, "ring"), length=300)
    seen = []
    influence_curve(prior, progress=lambda stage, fraction: seen.append((stage, fraction)))
    assert seen and seen[-1][1] == 1.0
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions) and all(0.0 <= f <= 1.0 for f in fractions)

    class Stop(Exception):
        pass

    def cancel(stage, fraction):
        if fraction > 0.0:
            raise Stop(stage)

    with pytest.raises(Stop):
        influence_curve(MarkovChainPrior(chain_of_kind(rng, 60, "ring"), length=400), progress=cancel)


def test_refusals_come_before_the_work_with_the_estimate_and_what_fits():
    """Two closed classes with a given start, T = 10⁶: the O(T·K²) marginal pass used to run before the estimate."""
    rng = np.random.default_rng(3)
    k = 60
    block = np.zeros((k, k))
    block[: k // 2, : k // 2] = rng.dirichlet(np.ones(k // 2), size=k // 2)
    block[k // 2 :, k // 2 :] = rng.dirichlet(np.ones(k // 2), size=k // 2)
    prior = MarkovChainPrior(block, rng.dirichlet(np.ones(k)), length=1_000_000)
    estimate = influence_estimate(prior)
    assert not estimate.fits
    work = WorkCounter()
    with pytest.raises(ValueError, match="out of reach: it needs about .* give the stationary initial"):
        influence_curve(prior, work=work)
    assert work.total < 1e8  # nothing of the size of the marginal pass (6·10⁹ units) was done


def test_mqm_refuses_slow_chains_at_once():
    k = 60
    cycle = 0.999 * np.roll(np.eye(k), 1, axis=1) + 0.001 / k
    prior = MarkovChainPrior(cycle, length=200_000)
    work = WorkCounter()
    with pytest.raises(ValueError, match="MQM for this prior is out of reach"):
        mqm_noise_scale(prior, 1.0, work=work)
    assert work.total < 1e9


def test_the_suggested_max_b_fits():
    k = 60
    cycle = 0.999 * np.roll(np.eye(k), 1, axis=1) + 0.001 / k
    prior = MarkovChainPrior(cycle, length=200_000)
    estimate = influence_estimate(prior)
    assert not estimate.fits and estimate.largest["max_b"] >= 1
    assert f"max_b ≤ {estimate.largest['max_b']}" in estimate.message
    assert influence_estimate(prior, estimate.largest["max_b"]).fits


def test_a_work_estimate_reads_as_words():
    e = WorkEstimate("this thing", {"max-plus": 1e12}, 3e9, "what dominates", "do less")
    assert not e.fits and e.seconds > 120
    assert e.message.startswith("this thing is out of reach: it needs about") and e.message.endswith("— do less")
    with pytest.raises(ValueError, match="do less"):
        e.check()
