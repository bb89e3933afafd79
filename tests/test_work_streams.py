"""Work estimates of TPL, stream attacks and exact enumeration: counted before the work, never below it.

Each engine given ``work=WorkCounter()`` adds the units it performs; the estimate computed before
must count at least as many of every kind (no timing here: ``benchmarks/bench_estimates.py``
compares seconds).  A refusal names the largest T, K or number of draws that fits, and that value
is accepted while one more is not.
"""

from __future__ import annotations

import numpy as np
import pytest

from puffer_core import MarkovChainPrior
from puffer_core.attacks.attacker import attack_stream, stream_attack_estimate, stream_attack_refusal
from puffer_core.audit.exact import exact_leakage_estimate
from puffer_core.audit.stream import exact_histogram_leakage, exact_stream_estimate, exact_stream_leakage
from puffer_core.mechanisms.laws import RandomizedResponse, randomized_response_emission
from puffer_core.stream.tpl import temporal_privacy_leakage, tpl_estimate, tpl_refusal
from puffer_core.tightness.releases import RELEASES
from puffer_core.work import UNIT_KINDS, WorkCounter

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _chain(rng: np.random.Generator, k: int, length: int, start: str) -> MarkovChainPrior:
    matrix = rng.dirichlet(np.full(k, 0.6), size=k)
    initial = {"stationary": None, "one state": np.eye(k)[0]}.get(start, rng.dirichlet(np.ones(k)))
    return MarkovChainPrior(matrix, initial, length=length)


def _at_least_performed(estimate, work: WorkCounter) -> None:
    done = work.as_dict()
    for kind in UNIT_KINDS:
        if kind != "overhead":
            assert estimate.units.get(kind, 0.0) >= done[kind] * (1 - 1e-12), (kind, estimate.units, done)
    assert sum(done.values()) > 0


@pytest.mark.parametrize("start", ["stationary", "random", "one state"])
def test_tpl_estimate_counts_at_least_the_front_units_performed(start: str) -> None:
    rng = np.random.default_rng(11)
    for _ in range(4):
        k, length = int(rng.integers(2, 9)), int(rng.integers(2, 60))
        priors = [_chain(rng, k, length, start) for _ in range(int(rng.integers(1, 3)))]
        work = WorkCounter()
        temporal_privacy_leakage(priors, 0.3, work=work)
        _at_least_performed(tpl_estimate(priors), work)


def test_a_stationary_tpl_builds_two_fronts_of_every_pair_of_rows() -> None:
    """Closed form: a stationary chain with full support sorts K(K−1)/2 pairs of K elements, twice."""
    k = 7
    prior = _chain(np.random.default_rng(2), k, 40, "stationary")
    work = WorkCounter()
    temporal_privacy_leakage(prior, 0.5, work=work)
    assert work.as_dict()["front"] == 2 * (k * (k - 1) // 2) * k == tpl_estimate(prior).units["front"]


def test_stream_attack_estimate_counts_at_least_the_passes_performed() -> None:
    rng = np.random.default_rng(5)
    for k, length, draws, restarts, sweeps in ((2, 5, 20, 2, 3), (4, 12, 30, 3, 5), (6, 8, 10, 1, 20)):
        priors = [_chain(rng, k, length, "random") for _ in range(2)]
        work = WorkCounter()
        attack_stream(priors, RandomizedResponse(k, 0.7), seed=1, draws=draws, restarts=restarts,
                      max_sweeps=sweeps, work=work)
        _at_least_performed(stream_attack_estimate(k, length, 2, draws, restarts, sweeps), work)


@pytest.mark.parametrize("release", ["stream_rr", "stream_histogram"])
def test_exact_stream_estimate_counts_at_least_the_cells_enumerated(release: str) -> None:
    rng = np.random.default_rng(8)
    spec = RELEASES[release]
    for k, length, count in ((2, 4, 1), (3, 3, 2), (2, 6, 1)):
        priors = [_chain(rng, k, length, "random") for _ in range(count)]
        work = WorkCounter()
        exact_stream_leakage(priors, spec.laws(k, [0.4] * length), work=work)
        _at_least_performed(exact_stream_estimate(k, length, spec.step_outputs(k), count), work)
        _at_least_performed(spec.exact_estimate(k, length, count), work)


@pytest.mark.parametrize(("mechanism", "top"), [("laplace", 1), ("exponential", 1), ("exponential", 2)])
def test_exact_leakage_estimate_counts_at_least_the_cells_enumerated(mechanism: str, top: int) -> None:
    rng = np.random.default_rng(9)
    spec = RELEASES[mechanism]
    for k, length in ((2, 4), (3, 3)):
        prior = _chain(rng, k, length, "random")
        work = WorkCounter()
        exact_histogram_leakage(prior, 1.0, mechanism=mechanism, k=top, work=work)
        _at_least_performed(spec.exact_estimate(k, length, 1, top), work)
    outputs = (length + 1) ** k if mechanism == "laplace" else (6 if top == 2 else 3)
    assert exact_leakage_estimate(k, length, outputs).units["enumeration"] >= work.as_dict()["enumeration"]


# --------------------------------------------------------------------------------------------
# refusals name the largest value that fits


def test_a_refused_stream_names_the_longest_stream_and_that_one_fits() -> None:
    from puffer_core.priors.kinds import sticky_matrix

    start = np.eye(200)[0]
    prior = MarkovChainPrior(sticky_matrix(200, 0.99), start, length=1000)
    estimate = tpl_estimate(prior)
    assert not estimate.fits and tpl_refusal(prior) == estimate.message
    longest = estimate.largest["T"]
    assert 2 <= longest < 1000 and f"about {longest} steps" in estimate.message
    assert tpl_estimate(MarkovChainPrior(sticky_matrix(200, 0.99), start, length=longest)).fits


def test_a_refused_theta_names_the_most_states_that_fit() -> None:
    rng = np.random.default_rng(4)
    priors = [MarkovChainPrior(rng.dirichlet(np.ones(500), size=500), length=50)] * 20
    estimate = tpl_estimate(priors)
    assert not estimate.fits and f"K ≤ {estimate.largest['K']} fits" in estimate.message
    k = estimate.largest["K"]
    assert tpl_estimate([MarkovChainPrior(rng.dirichlet(np.ones(k), size=k), length=50)] * 20).fits
    assert not tpl_estimate([MarkovChainPrior(rng.dirichlet(np.ones(k + 1), size=k + 1), length=50)] * 20).fits


def test_a_refused_attack_names_the_longest_stream_and_the_most_draws_that_fit(monkeypatch) -> None:
    import puffer_core.attacks.attacker as attacker

    estimate = stream_attack_estimate(150, 30_000)
    assert not estimate.fits and stream_attack_refusal(150, 30_000) == estimate.message
    longest, draws = estimate.largest["T"], estimate.largest["draws"]
    assert stream_attack_estimate(150, longest).fits and not stream_attack_estimate(150, longest + 1).fits
    assert stream_attack_estimate(150, 30_000, draws=draws).fits or draws == 0
    assert not stream_attack_estimate(150, 30_000, draws=draws + 1).fits

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("outputs were drawn before the refusal")

    monkeypatch.setattr(attacker, "_sample_streams", never)
    prior = MarkovChainPrior(np.full((150, 150), 1 / 150), length=30_000)
    with pytest.raises(ValueError, match=f"Shorten the stream to about {longest} steps"):
        attack_stream(prior, randomized_response_emission(150, 0.5))


@pytest.mark.parametrize("release", ["stream_rr", "stream_histogram", "laplace", "exponential"])
def test_the_ladder_refuses_enumeration_with_the_longest_chain_that_fits(release: str) -> None:
    spec = RELEASES[release]
    k = 3
    length = next(t for t in range(2, 40) if not spec.exact_estimate(k, t).fits)
    longest = spec.exact_estimate(k, length).largest["T"]
    assert longest == length - 1 and spec.exact_estimate(k, longest).fits
    note = spec.exact_refusal(k, length)
    assert note is not None and (f"T ≤ {longest} fits" in note or "at most 5,000 are enumerated" in note)
    assert spec.exact_refusal(k, longest) is None or "at most 5,000" in spec.exact_refusal(k, longest)


def test_exact_estimates_of_huge_inputs_are_finite_words_not_overflows() -> None:
    for estimate in (exact_stream_estimate(20, 100_000, 2**20),
                     exact_leakage_estimate(50, 100_000, lambda t: float(t + 1) ** 50)):
        assert not estimate.fits and "years" in estimate.message and "≈ 10^" in estimate.message
        assert np.isfinite(estimate.seconds)
