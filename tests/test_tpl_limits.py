"""The ε where TPL's supremum turns infinite (docs/math.md §10), checked against the supremum itself
(the library's fixed-point code, which shares nothing with the threshold), the recursion run for many
steps, a plain loop over every pair of rows, and Cao et al.'s matrix by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from puffer_core import MarkovChainPrior
from puffer_core.stream.supremum import excluded_mass, leakage_supremum, tpl_divergence_threshold, tpl_supremum
from puffer_core.stream.tpl import backward_matrix, temporal_privacy_leakage
from tests.support.brute_stream import random_prior


def brute_m(Q: list[list[float]], secrets: list[bool]) -> float:
    """max over ordered pairs of secret rows (i, i') of the mass row i puts where row i' is 0."""
    k = len(Q)
    best = 0.0
    for i in range(k):
        for ip in range(k):
            if i != ip and secrets[i] and secrets[ip]:
                best = max(best, sum(Q[i][j] for j in range(k) if Q[ip][j] == 0))
    return best


def test_cao_matrix_by_hand():
    # row 1 puts 0.8 on state 0, where row 2 is 0 (docs/math.md §10's reference example)
    m, pair = excluded_mass(np.array([[0.8, 0.2], [0.0, 1.0]]), np.array([True, True]))
    assert m == pytest.approx(0.8) and pair == (0, 1)
    assert leakage_supremum([[0.8, 0.2], [0.0, 1.0]], -math.log(m) * 0.999) < math.inf
    assert leakage_supremum([[0.8, 0.2], [0.0, 1.0]], -math.log(m) * 1.001) == math.inf


def test_full_support_is_always_finite_and_a_deterministic_cycle_never():
    full = tpl_divergence_threshold(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], None, 10))
    assert full.eps == math.inf and full.m == 0 and full.pair is None
    assert tpl_supremum(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], None, 10), 20.0) < math.inf
    cycle = MarkovChainPrior([[0, 1, 0], [0, 0, 1], [1, 0, 0]], None, 10)
    limit = tpl_divergence_threshold(cycle)
    assert limit.eps == 0.0 and limit.m == pytest.approx(1.0)
    assert tpl_supremum(cycle, 1e-3) == math.inf


@pytest.mark.parametrize("seed", range(16))
def test_threshold_separates_finite_from_infinite_suprema(seed):
    rng = np.random.default_rng(700 + seed)
    k = 2 + seed % 4
    prior = random_prior(rng, k, 50, zeros=True)
    limit = tpl_divergence_threshold(prior)
    secrets = (np.asarray(prior.initial) > 0).tolist()
    expected = max(
        brute_m(backward_matrix(prior).tolist(), secrets), brute_m(prior.transition.tolist(), secrets)
    )
    assert limit.m == pytest.approx(expected, abs=1e-15)
    if limit.eps == math.inf:
        assert tpl_supremum(prior, 15.0) < math.inf
        return
    if limit.eps > 1e-9:
        below = limit.eps * (1 - 1e-6)
        assert tpl_supremum(prior, below) < math.inf
    above = limit.eps * (1 + 1e-6) + 1e-9
    assert tpl_supremum(prior, above) == math.inf
    # 0.1 above the threshold the recursion climbs by about 0.1 a step (log(e^ε·m) = ε − threshold)
    eps = limit.eps + 0.1
    longer = temporal_privacy_leakage(prior.with_length(4000), eps).max_tpl
    assert longer - temporal_privacy_leakage(prior.with_length(2000), eps).max_tpl > 50


def test_a_set_of_priors_takes_the_smallest_threshold():
    sparse = MarkovChainPrior([[0.7, 0.3], [0.0, 1.0]], None, 20)
    # [[0.7, 0.3], [0, 1]] has one absorbing state: stationary π = (0, 1), no pair of secrets
    dense = MarkovChainPrior([[0.6, 0.4], [0.5, 0.5]], None, 20)
    lone = MarkovChainPrior([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5]], None, 20)
    assert tpl_divergence_threshold(sparse).eps == math.inf  # one state only carries mass
    assert tpl_divergence_threshold([dense, dense]).eps == math.inf
    pair = tpl_divergence_threshold([lone.with_length(20), lone])
    assert pair.eps == pytest.approx(-math.log(0.5)) and pair.prior_index == 0


def test_refuses_non_stationary_priors_and_other_things():
    with pytest.raises(ValueError, match="stationary initial distribution"):
        tpl_divergence_threshold(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], [1.0, 0.0], 10))
    with pytest.raises(ValueError, match="MarkovChainPrior"):
        tpl_divergence_threshold([])


# --------------------------------------------------------------------------------------------
# work out of reach is refused before any front is built


def _slow_chain(length: int) -> MarkovChainPrior:
    """200 states staying put with probability 0.99, started in state 0: the marginals settle slowly."""
    from puffer_core.priors.kinds import sticky_matrix

    start = np.zeros(200)
    start[0] = 1.0
    return MarkovChainPrior(sticky_matrix(200, 0.99), length=length, initial=start)


def test_a_stream_out_of_reach_is_refused_up_front_with_the_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    import puffer_core.stream.tpl as stream_module
    from puffer_core.priors.kinds import sticky_matrix
    from puffer_core.stream.registry import plan_stream
    from puffer_core.stream.supremum import max_eps_for_tpl
    from puffer_core.stream.tpl import tpl_refusal

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("a front was built before the refusal")

    monkeypatch.setattr(stream_module, "build_front", never)
    prior = _slow_chain(1000)
    message = tpl_refusal(prior)
    assert message is not None
    for words in ("out of reach", "about 6.7 min", "K = 200", "at 999 steps", "stationary distribution", "shorten"):
        assert words in message, words
    for call in (
        lambda: temporal_privacy_leakage(prior, 0.5),
        lambda: max_eps_for_tpl(prior, 1.0),
        lambda: plan_stream(prior, 1.0, curve=None),
    ):
        with pytest.raises(ValueError, match="out of reach"):
            call()
    assert tpl_refusal(MarkovChainPrior(np.asarray(prior.transition), length=1000)) is None  # stationary: 2 fronts
    many = tpl_refusal([MarkovChainPrior(sticky_matrix(500, 0.9), length=100)] * 20)  # 20 × 2 fronts at K = 500
    assert many is not None and "20 priors" in many and "fewer priors in Θ" in many and "stationary" not in many


def test_the_planned_front_count_bounds_the_fronts_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """The estimate counts every front the computation then builds (so the refusal is never optimistic)."""
    import puffer_core.stream.tpl as stream_module

    built = []
    real = stream_module.build_front

    def counting(*args: object, **kwargs: object):
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(stream_module, "build_front", counting)
    rng = np.random.default_rng(3)
    for _ in range(6):
        k = int(rng.integers(2, 6))
        matrix = rng.dirichlet(np.full(k, 0.7), size=k)
        start = rng.dirichlet(np.ones(k))
        prior = MarkovChainPrior(matrix, length=int(rng.integers(2, 80)), initial=start)
        built.clear()
        temporal_privacy_leakage(prior, 0.4)
        assert len(built) <= stream_module._plan_fronts(prior).fronts()
