"""A fitted prior honest about its counts: what drives a(1) (engine/drivers), what the smoothing τ does
(simulation/fitted), and post-processing in the simulator.

Independent references: the exact a(1) of influence_curve (another code path: chain terms and
compiled kernels), the raw transition counts read from the CSV with pandas, and Monte Carlo on
data drawn from the prior.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from puffer_core import (
    MarkovChainPrior,
    fit_markov_chain,
    influence_curve,
    influence_drivers,
    load_dataset,
    load_sequences,
    posterior_mean_chain,
    simulate,
    smoothing_effect,
)
from puffer_core.priors.fitting import transition_counts
from puffer_core.simulation.fitted import dirichlet_alternative


@pytest.mark.parametrize("seed", range(40))
def test_a1_and_its_drivers_match_the_exact_curve(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k, length = int(rng.integers(2, 6)), int(rng.integers(1, 9))
    matrix = rng.dirichlet(np.full(k, 0.5), size=k)
    matrix[rng.random((k, k)) < 0.2] = 0.0
    matrix[np.arange(k), rng.integers(0, k, size=k)] += 0.1
    matrix /= matrix.sum(axis=1, keepdims=True)
    initial = rng.dirichlet(np.ones(k)) if seed % 2 else None
    try:
        prior = MarkovChainPrior(matrix, initial, length)
    except ValueError:
        pytest.skip("no unique stationary distribution")
    drivers = influence_drivers(prior)
    want = influence_curve(prior, 1).a[0] if length > 1 else 0.0
    assert drivers.a1 == pytest.approx(want, rel=1e-12, abs=1e-12) or drivers.a1 == want
    if np.isfinite(drivers.a1) and drivers.terms:
        total = sum(t.value for t in drivers.terms) + drivers.marginal
        assert total == pytest.approx(drivers.a1, rel=1e-12, abs=1e-12)
        for term in drivers.terms:  # each term is the log ratio of its two transitions
            assert term.value == pytest.approx(np.log(term.numerator.probability / term.denominator.probability))


def test_seattle_a1_comes_from_transitions_never_observed() -> None:
    data = load_dataset("seattle-weather")
    counts = transition_counts(data)
    frame = pd.read_csv("assets/seattle-weather.csv")
    same = frame["month"].to_numpy()[1:] == frame["month"].to_numpy()[:-1]
    pairs = pd.crosstab(frame["weather"].to_numpy()[:-1][same], frame["weather"].to_numpy()[1:][same])
    assert pairs.loc["snow", "fog"] == 0 and pairs.loc["fog", "snow"] == 0 and pairs.loc["snow", "snow"] == 10
    prior = fit_markov_chain(data, smoothing=1e-5)
    drivers = influence_drivers(prior, counts)
    assert drivers.a1 == pytest.approx(influence_curve(prior, 1).a[0])
    assert {drivers.name(t) for t in drivers.unseen} == {"snow → fog", "fog → snow"}
    assert drivers.unseen_share > 0.8
    for t in drivers.unseen:  # held at τ by the fit, and never in the file
        assert t.probability == pytest.approx(1e-5)
        assert pairs.loc[data.states[t.source], data.states[t.target]] == 0


def test_the_smoothing_moves_a1_and_b_star() -> None:
    data = load_dataset("seattle-weather")
    effect = smoothing_effect(data, 3.0, (1e-5, 1e-3, 1e-1))
    frame = effect.frame()
    for tau, row in zip((1e-5, 1e-3, 1e-1), effect.rows):
        assert row.a1 == pytest.approx(influence_curve(fit_markov_chain(data, smoothing=tau), 1).a[0])
    assert list(frame["a(1)"].round(1)) == [24.3, 15.0, 8.3]  # the built-in data, months as users
    assert frame["a(1)"].is_monotonic_decreasing and frame["b*"].is_monotonic_decreasing
    assert list(frame["unseen transitions drive a(1)"]) == [True, True, False]
    assert effect.unseen == 3
    with pytest.raises(ValueError, match="smoothing τ must lie in"):
        smoothing_effect(data, 3.0, (0.3,))


def test_the_dirichlet_alternative() -> None:
    data = load_dataset("seattle-weather")
    mean = posterior_mean_chain(data)
    counts = transition_counts(data) + 1 / data.n_states
    np.testing.assert_allclose(mean.transition, counts / counts.sum(axis=1, keepdims=True))
    alt = dirichlet_alternative(data, 3.0, draws=6, seed=1)
    assert alt.concentration == pytest.approx(0.2)
    assert alt.mean_a1 == pytest.approx(influence_curve(mean, 1).a[0])
    assert alt.robust_a1 >= alt.draws_a1.max() - 1e-9  # Θ's curve is above each member's
    assert alt.draws_a1.size == 6


def test_postprocessing_in_the_simulator_is_never_worse_on_data_drawn_from_the_prior() -> None:
    prior = MarkovChainPrior([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.1, 0.3, 0.6]], length=30)
    rng = np.random.default_rng(5)
    rows = []
    state = rng.choice(3, size=150, p=prior.initial)
    for t in range(30):
        for u in range(150):
            rows.append((u, t, "abc"[state[u]]))
        state = np.array([rng.choice(3, p=prior.transition[s]) for s in state])
    data = load_sequences(pd.DataFrame(rows, columns=["user", "time", "state"]))
    result = simulate(data, prior, query="histogram", eps_grid=(0.05, 0.5, 5.0), trials=300, rng=0, postprocess=True)
    table = result.table("L1")
    for name in ("Pufferfish Laplace", "MQM", "Group DP Laplace"):
        before, after = table[name], table[name + " + prior"]
        assert np.all(after <= before * 1.02)
        assert after.iloc[0] < before.iloc[0] / 5  # at a strict budget it helps a lot
    ledger = result.ledger
    def rows_of(name: str) -> pd.DataFrame:
        return ledger[ledger["mechanism"] == name].drop(columns=["mechanism", "label"]).reset_index(drop=True)

    pd.testing.assert_frame_equal(rows_of("pufferfish_laplace"), rows_of("pufferfish_laplace+prior"))  # free
    assert result.settings["postprocess"].startswith("linear MMSE")
    with pytest.raises(ValueError, match="postprocess must be True or False"):
        simulate(data, prior, eps_grid=(1.0,), trials=5, rng=0, postprocess="yes")
