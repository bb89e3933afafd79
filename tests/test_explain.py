"""Why a mechanism wins or loses (puffer_core.simulation.explain): winners with ties, fallbacks, and their reasons."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from puffer_core import (
    MarkovChainPrior,
    SimulationResult,
    binary_chain_curve,
    explain_simulation,
    fit_markov_chain,
    fit_prior_set,
    influence_curve,
    load_dataset,
    load_sequences,
    simulate,
)
from puffer_core.simulation.explain import higher_is_better


def _metric_rows(metric, rows):
    return [
        {"mechanism": m, "label": m.replace("_", " "), "eps_puffer": e, "release": 1, "metric": metric, "mean": mean,
         "ci_low": lo, "ci_high": hi, "std": 0.1, "trials": 100}
        for m, e, mean, lo, hi in rows
    ]  # fmt: skip


def _result(metric_rows, ledger_rows=(), t_max=10, curve=None):
    ledger = pd.DataFrame(
        [
            {"mechanism": m, "eps_puffer": e, "release": 1, "eps_dp": dp, "b": b, "a": a, "sigma_max": s}
            for m, e, dp, b, a, s in ledger_rows
        ],
        columns=["mechanism", "eps_puffer", "release", "eps_dp", "b", "a", "sigma_max"],
    )
    curve = curve if curve is not None else [[b, 0.0] for b in range(1, t_max + 1)]
    return SimulationResult(pd.DataFrame(metric_rows), ledger, {"t_max": t_max, "curve": curve, "accounting": []})


def test_the_best_mechanism_per_eps_and_ties_when_intervals_overlap():
    rows = _metric_rows(
        "Acc@1",
        [
            ("mqm", 1.0, 0.80, 0.75, 0.85),
            ("pufferfish_exponential", 1.0, 0.70, 0.66, 0.74),  # below the best's interval
            ("group_dp_laplace", 1.0, 0.78, 0.70, 0.86),  # overlaps: a tie
            ("mqm", 2.0, 0.60, 0.58, 0.62),
            ("pufferfish_exponential", 2.0, 0.90, 0.88, 0.92),
            ("group_dp_laplace", 2.0, 0.50, 0.45, 0.55),
        ],
    )
    explanation = explain_simulation(_result(rows), "Acc@1")
    first, second = explanation.winners
    assert (first.eps_puffer, first.mechanism, first.tied, first.tie) == (1.0, "mqm", ("group_dp_laplace",), True)
    assert (first.mean, first.ci_low, first.ci_high) == (0.80, 0.75, 0.85)
    assert (second.mechanism, second.tie) == ("pufferfish_exponential", False)
    beaten = explanation.find("pufferfish_not_best")
    assert len(beaten) == 1 and beaten[0].eps_puffer == 1.0 and beaten[0].mechanism == "mqm"
    assert beaten[0].numbers == {"pufferfish": "pufferfish_exponential", "pufferfish_mean": 0.70, "best_mean": 0.80}
    frame = explanation.winners_frame()
    assert frame["best"].tolist() == ["mqm", "pufferfish exponential"]
    assert frame["tied_with"].tolist() == ["group_dp_laplace", ""]


def test_errors_are_better_low():
    rows = _metric_rows("L1", [("mqm", 1.0, 5.0, 4.0, 6.0), ("pufferfish_laplace", 1.0, 2.0, 1.5, 2.5)])
    explanation = explain_simulation(_result(rows))
    assert explanation.metric == "L1" and not explanation.higher_is_better
    assert explanation.winners[0].mechanism == "pufferfish_laplace"
    assert not explanation.find("pufferfish_not_best")
    assert higher_is_better("NDCG@3") and higher_is_better("HitRate@3") and not higher_is_better("L1@3")


def test_a_fallback_is_named_with_the_curve_points_that_could_not_beat_group_dp():
    t_max = 10
    curve = [[b, 1.5 - 0.1 * b] for b in range(1, t_max)] + [[t_max, 0.0]]  # a(b) < 1 from b = 6
    rows = _metric_rows(
        "Acc@1", [("pufferfish_exponential", 1.0, 0.5, 0.4, 0.6), ("pufferfish_exponential", 5.0, 0.9, 0.8, 1.0)]
    )
    ledger = [
        ("pufferfish_exponential", 1.0, 0.1, t_max, 0.0, None),  # group DP: ε/T
        ("pufferfish_exponential", 5.0, 0.5, 3, 1.8, None),
    ]
    explanation = explain_simulation(_result(rows, ledger, t_max, curve))
    (fallback,) = explanation.find("group_dp_fallback")
    assert fallback.eps_puffer == 1.0 and fallback.mechanism == "pufferfish_exponential"
    n = fallback.numbers
    assert n["first_b_below"] == 6 and n["a_at_first_b_below"] == pytest.approx(0.9)
    assert n["points_below_eps"] == 4 and n["same_as"] == "group_dp_exponential"
    # by hand: (1 − a(b))/b for b = 6..9 is 0.0167, 0.0286, 0.0375, 0.0444, all below ε/T = 0.1
    assert n["best_curve_b"] == 9 and n["best_curve_eps_dp"] == pytest.approx(0.4 / 9)
    assert n["a_at_t_max_minus_1"] == pytest.approx(0.6)
    gains = {f.eps_puffer: f.numbers["gain"] for f in explanation.find("pufferfish_gain")}
    assert gains == {1.0: pytest.approx(1.0), 5.0: pytest.approx(0.5 * t_max / 5.0)}
    (short,) = explanation.find("short_sequences")
    assert short.numbers == {"t_max": t_max, "first_b_below": 6}  # no prior: nothing about longer sequences


@pytest.fixture(scope="module")
def seattle():
    data = load_dataset("seattle-weather", "month")
    result = simulate(data, eps_grid=(0.5, 1.0, 2.0), trials=40, rng=0)
    return data, result


def test_seattle_months_fall_back_to_group_dp_at_small_eps(seattle):
    data, result = seattle
    explanation = explain_simulation(result, "Acc@1")
    fallbacks = {f.eps_puffer for f in explanation.find("group_dp_fallback")}
    assert fallbacks == {0.5, 1.0}
    t_max = 31
    assert data.max_length == t_max == result.settings["t_max"]
    points = [(int(b), float(a)) for b, a in result.settings["curve"]]
    for eps in (0.5, 1.0, 2.0):
        # the calibration rule by hand (docs/math.md §3): best (ε − a)/b over b < T with a < ε, against ε/T
        best = max([(eps - a) / b for b, a in points if b < t_max and a < eps], default=-math.inf)
        assert (best <= eps / t_max) == (eps in fallbacks)
    for finding in explanation.find("group_dp_fallback"):
        eps = finding.eps_puffer
        first = min(b for b, a in points if b < t_max and a < eps)
        assert finding.numbers["first_b_below"] == first
        assert finding.numbers["eps_dp"] == pytest.approx(eps / t_max)
    # MQM splits ε over the 5 counts and finds no quilt: σ_max = T·5/ε, the empty quilt
    mqm = {f.eps_puffer: f.numbers for f in explanation.find("mqm_group_dp_noise")}
    for eps, numbers in mqm.items():
        assert numbers["sigma_max"] == pytest.approx(t_max * 5 / eps) and numbers["queries"] == 5
    assert not explanation.find("sticky_chain")  # needs the prior


def test_seattle_reasons_with_the_prior_match_the_raw_data(seattle):
    data, result = seattle
    explanation = explain_simulation(result, "Acc@1", prior=fit_markov_chain(data))
    (sticky,) = explanation.find("sticky_chain")
    frame = pd.read_csv("assets/seattle-weather.csv")
    same_month = frame["month"].to_numpy()[1:] == frame["month"].to_numpy()[:-1]
    repeats = frame["weather"].to_numpy()[1:] == frame["weather"].to_numpy()[:-1]
    empirical = repeats[same_month].mean()  # share of consecutive days (same month) with the same label
    assert sticky.numbers["repeat_probability"] == pytest.approx(empirical, abs=0.03)
    assert sticky.numbers["repeat_probability"] >= 0.5
    (unseen,) = explanation.find("unseen_transitions")
    pairs = set(zip(frame["weather"].to_numpy()[:-1][same_month], frame["weather"].to_numpy()[1:][same_month]))
    assert unseen.numbers["count"] == 25 - len(pairs)
    assert unseen.numbers["log_inverse_smoothing"] == pytest.approx(-math.log(1e-5))
    for short in explanation.find("short_sequences"):
        assert short.numbers["b_needed_any_length"] >= short.numbers["first_b_below"]
        assert short.numbers["break_even_length"] > 31


def test_short_sequences_against_the_binary_closed_form():
    p, q, t_max = 0.9, 0.85, 8
    prior = MarkovChainPrior([[p, 1 - p], [1 - q, q]], length=t_max)
    rng = np.random.default_rng(3)
    rows = []
    for u in range(30):
        state = int(rng.integers(2))
        for t in range(t_max):
            rows.append((u, t, f"s{state}"))
            state = state if rng.random() < (p if state == 0 else q) else 1 - state
    data = load_sequences(pd.DataFrame(rows, columns=["user", "time", "state"]))
    result = simulate(data, prior, k=1, mechanisms=["pufferfish_exponential"], eps_grid=(0.5, 1.0), trials=10, rng=1)
    explanation = explain_simulation(result, prior=prior)
    shorts = explanation.find("short_sequences")
    assert {f.eps_puffer for f in shorts} == {f.eps_puffer for f in explanation.find("group_dp_fallback")} != set()
    for short in shorts:
        eps = short.eps_puffer
        cap = short.numbers["examined_up_to_b"]
        closed = binary_chain_curve(p, q, cap, length=2 * cap + 1).a  # exact on sequences of 2·cap + 1 entries (λ > 0)
        below = np.flatnonzero(closed < eps)
        assert short.numbers["b_needed_any_length"] == int(below[0]) + 1
        rate = max((eps - closed[b - 1]) / b for b in range(1, cap + 1) if closed[b - 1] < eps)
        assert short.numbers["break_even_length"] == pytest.approx(eps / rate)


def test_bad_arguments(seattle):
    _, result = seattle
    with pytest.raises(ValueError, match="SimulationResult"):
        explain_simulation({"metrics": None})
    with pytest.raises(ValueError, match="no metric 'Acc@9'.*Acc@1"):
        explain_simulation(result, "Acc@9")
    with pytest.raises(ValueError, match="release must be one of"):
        explain_simulation(result, release=2)
    with pytest.raises(ValueError, match="release"):
        explain_simulation(result, release=0)
    with pytest.raises(ValueError, match="prior must be"):
        explain_simulation(result, prior="sticky")


def test_with_a_robust_set_the_long_sequence_numbers_come_from_the_fit_and_are_lower_bounds(seattle):
    data, _ = seattle
    theta = fit_prior_set(data, draws=4, seed=0)
    result = simulate(data, theta, eps_grid=(0.5,), trials=10, rng=0, mechanisms=["pufferfish_exponential"])
    with_theta = explain_simulation(result, prior=theta)
    with_fit = explain_simulation(result, prior=theta[0])
    (short,) = with_theta.find("short_sequences")
    assert short.numbers == with_fit.find("short_sequences")[0].numbers
    robust = influence_curve([p.with_length(63) for p in theta], 31).a  # Θ on long sequences: a(b) ≥ the fit's
    assert np.flatnonzero(robust < 0.5)[0] + 1 >= short.numbers["b_needed_any_length"]


def test_a_pufferfish_mechanism_that_fell_back_is_tied_with_its_twin_and_never_beaten_by_it():
    t_max = 10
    rows = _metric_rows(
        "Acc@1",
        [
            ("group_dp_laplace", 1.0, 0.80, 0.76, 0.84),
            ("group_dp_exponential", 1.0, 0.74, 0.70, 0.78),  # overlaps the best
            ("pufferfish_exponential", 1.0, 0.70, 0.66, 0.74),  # does not, but it *is* group DP exponential here
            ("group_dp_exponential", 2.0, 0.90, 0.88, 0.92),  # best: beats its own fallen-back twin "beyond" noise
            ("pufferfish_exponential", 2.0, 0.84, 0.82, 0.86),
            ("group_dp_laplace", 2.0, 0.50, 0.45, 0.55),
        ],
    )
    ledger = [
        ("pufferfish_exponential", 1.0, 0.1, t_max, 0.0, None),
        ("pufferfish_exponential", 2.0, 0.2, t_max, 0.0, None),
    ]
    explanation = explain_simulation(_result(rows, ledger, t_max))
    first, second = explanation.winners
    assert "pufferfish_exponential" in first.tied and "group_dp_exponential" in first.tied
    assert second.mechanism == "group_dp_exponential" and second.identical == ("pufferfish_exponential",)
    assert not explanation.find("pufferfish_not_best") and not explanation.find("fallback_not_best")


def test_seattle_headline_is_the_fallback_and_no_line_contradicts_it(seattle):
    from app_ui.simulate.words import what_this_shows
    from puffer_core.priors.fitting import transition_counts

    data, result = seattle
    prior = fit_markov_chain(data)
    explanation = explain_simulation(result, "Acc@1", prior=prior, counts=transition_counts(data), smoothing=1e-5)
    fallen = {f.eps_puffer for f in explanation.find("group_dp_fallback")}
    assert fallen == {0.5, 1.0}
    for f in explanation.find("pufferfish_not_best"):
        assert f.eps_puffer not in fallen  # at a fallback, Pufferfish is group DP: no "Pufferfish loses" there
    lines = what_this_shows(explanation)
    assert lines[0].startswith("**Pufferfish exponential falls back to group DP** at ε_puffer = 0.5 and 1")
    for line in lines:
        if "beats Pufferfish exponential" in line:
            assert "0.5" not in line.split(":")[0] and "= 1" not in line.split(":")[0]
    drivers = next(line for line in lines if "a(1) = 24.3" in line)
    assert "never observed in the data" in drivers and "snow → fog" in drivers and "fog → snow" in drivers
    assert not any("sticky" in line for line in lines)
