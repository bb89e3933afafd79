"""Mechanisms: sampling matches exact probabilities, and the exact audit never exceeds the
reported ε_puffer (docs/math.md §3, §5, §9)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from puffer_core.accounting.calibration import Calibration, calibrate
from puffer_core.accounting.composition import compose, cumulative_eps_puffer
from puffer_core.accounting.events import CurveEvent
from puffer_core.audit.exact import exact_leakage
from puffer_core.engine.influence import influence_curve
from puffer_core.engine.mqm import mqm_noise_scale
from puffer_core.mechanisms import (
    DEFAULT_MECHANISMS,
    MECHANISMS,
    QUERIES,
    ExponentialTopK,
    LaplaceCounts,
    Refused,
    group_dp_exponential,
    group_dp_laplace,
    make_mechanism,
    mechanisms_for,
    mqm_laplace,
    mqm_top_k_counts,
    pufferfish_exponential,
    pufferfish_laplace,
    top_k_indices,
)
from puffer_core.priors.models import MarkovChainPrior

STICKY = MarkovChainPrior([[0.8, 0.2], [0.3, 0.7]], None, 4)
THREE = MarkovChainPrior([[0.6, 0.3, 0.1], [0.2, 0.6, 0.2], [0.25, 0.25, 0.5]], [0.5, 0.3, 0.2], 4)


def _plackett_luce(counts, eps_round, ranking):
    """Pr of one ranking, straight from the k-round definition (no shared code)."""
    left = list(range(len(counts)))
    p = 1.0
    for r in ranking:
        total = sum(math.exp(eps_round * counts[j] / 2) for j in left)
        p *= math.exp(eps_round * counts[r] / 2) / total
        left.remove(r)
    return p


# --- exponential top-k -------------------------------------------------------------------


def test_probabilities_match_the_round_by_round_definition():
    mech = pufferfish_exponential(STICKY.with_length(10), 3.0, k=3)
    counts = np.array([6.0, 2.0, 9.0, 0.0, 4.0])
    probs = mech.probabilities(counts)
    outs = mech.outputs(5)
    assert probs.sum() == pytest.approx(1.0)
    assert len(set(map(tuple, outs))) == outs.shape[0] == 60
    for ranking, p in zip(outs, probs):
        assert p == pytest.approx(_plackett_luce(counts, mech.eps_round, ranking), rel=1e-12)


def test_top1_probabilities_are_the_softmax():
    mech = pufferfish_exponential(STICKY.with_length(10), 2.0, k=1)
    counts = np.array([3.0, 7.0, 1.0])
    w = np.exp(mech.eps_round * counts / 2)
    np.testing.assert_allclose(mech.probabilities(counts), w / w.sum(), rtol=1e-12)
    np.testing.assert_allclose(mech.selection_probabilities(counts), w / w.sum(), rtol=1e-12)


def test_probabilities_survive_huge_score_gaps():
    mech = ExponentialTopK(CurveEvent("pufferfish_exponential", Calibration(1.0, 10.0, 1, 0.0)), 2)
    probs = mech.probabilities([1000.0, 0.0, 0.0])
    assert np.all(np.isfinite(probs)) and probs.sum() == pytest.approx(1.0)


def test_simulated_rankings_pass_a_chi_square_test():
    mech = pufferfish_exponential(STICKY.with_length(10), 4.0, k=2)
    counts = np.array([5.0, 3.0, 2.0, 0.0])
    draws = mech.simulate(counts, 40_000, np.random.default_rng(2024))
    outs = mech.outputs(4)
    index = {tuple(o): i for i, o in enumerate(outs)}
    observed = np.bincount([index[tuple(r)] for r in draws], minlength=len(outs))
    expected = mech.probabilities(counts) * draws.shape[0]
    assert expected.min() > 5
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_opendp_release_follows_the_same_distribution():
    """OpenDP's generator cannot be seeded: a very strict threshold keeps this test stable."""
    mech = pufferfish_exponential(STICKY.with_length(10), 4.0, k=2)
    counts = np.array([4.0, 3.0, 1.0])
    rows = np.tile(counts, (3000, 1))
    draws = mech.release(rows)
    outs = mech.outputs(3)
    index = {tuple(o): i for i, o in enumerate(outs)}
    observed = np.bincount([index[tuple(r)] for r in draws], minlength=len(outs))
    assert stats.chisquare(observed, mech.probabilities(counts) * rows.shape[0]).pvalue > 1e-6


def test_opendp_measurement_reports_the_exponential_mechanisms_zcdp():
    mech = pufferfish_exponential(STICKY.with_length(10), 2.0, k=3)
    rho = mech.opendp_measurement(5).map(1.0)
    assert rho == pytest.approx(mech.accounting.eps_dp**2 / (8 * 3), rel=1e-9)


def test_release_with_a_generator_is_reproducible_and_shaped():
    mech = group_dp_exponential(STICKY.with_length(10), 2.0, k=2)
    table = np.array([[5, 1, 3], [0, 2, 9]])
    first = mech.release(table, rng=np.random.default_rng(1))
    again = mech.release(table, rng=np.random.default_rng(1))
    assert first.shape == (2, 2) and np.array_equal(first, again)
    assert mech.simulate(table, 7, np.random.default_rng(0)).shape == (7, 2, 2)


def test_count_gap_bound_holds_in_simulation():
    mech = pufferfish_exponential(STICKY.with_length(10), 1.0, k=1)
    counts = np.arange(20, dtype=float) * 3
    gap = mech.count_gap_bound(20, beta=0.05)
    picks = mech.simulate(counts, 5000, np.random.default_rng(3))[:, 0]
    assert np.mean(counts.max() - counts[picks] > gap) <= 0.05


# --- Laplace -------------------------------------------------------------------------------


def test_laplace_noise_matches_its_analytics():
    mech = pufferfish_laplace(STICKY.with_length(10), 1.5)
    noise = mech.simulate(np.zeros(4), 50_000, np.random.default_rng(5)).reshape(-1)
    assert stats.kstest(noise, stats.laplace(scale=mech.scale).cdf).pvalue > 1e-3
    assert noise.var() == pytest.approx(mech.variance, rel=0.03)
    assert np.mean(np.abs(noise)) == pytest.approx(mech.expected_abs_error, rel=0.03)
    assert np.mean(np.abs(noise) <= mech.interval_halfwidth(0.9)) == pytest.approx(0.9, abs=0.01)
    assert mech.expected_l1_error(4) == pytest.approx(4 * mech.scale)


def test_opendp_laplace_release_has_the_right_scale_and_map():
    mech = group_dp_laplace(STICKY.with_length(10), 3.0)
    noise = mech.release(np.zeros((20, 200)))
    assert noise.shape == (20, 200)
    assert stats.kstest(noise.reshape(-1), stats.laplace(scale=mech.scale).cdf).pvalue > 1e-6
    assert mech.opendp_measurement(5).map(2.0) == pytest.approx(mech.accounting.eps_dp, rel=1e-9)


def test_laplace_bin_probabilities_are_exact():
    mech = pufferfish_laplace(STICKY.with_length(10), 2.0)
    edges = [-np.inf, 0.5, 2.0, np.inf]
    probs = mech.probabilities([1.0, 3.0], edges)
    cdf = stats.laplace(scale=mech.scale).cdf
    first = np.diff([cdf(e - 1.0) for e in edges])
    second = np.diff([cdf(e - 3.0) for e in edges])
    np.testing.assert_allclose(probs, np.outer(first, second).reshape(-1), rtol=1e-12)


def test_split_laplace_is_the_papers_per_count_budget():
    curve = influence_curve(STICKY.with_length(10))
    split = pufferfish_laplace(curve, 2.0, queries=12)
    whole = pufferfish_laplace(curve, 2.0)
    assert split.scale == pytest.approx(12 / calibrate(curve, 2.0).eps_dp)
    assert whole.scale == pytest.approx(2 / calibrate(curve, 2.0).eps_dp)
    assert "split over 12 counts" in split.accounting.describe()


# --- MQM -------------------------------------------------------------------------------------


def test_mqm_scales():
    prior = STICKY.with_length(12)
    assert mqm_laplace(prior, 1.0).scale == pytest.approx(2 * mqm_noise_scale(prior, 1.0))
    counts = mqm_top_k_counts(prior, 1.0, 4)
    assert counts.scale == pytest.approx(mqm_noise_scale(prior, 0.25))
    assert counts.accounting.queries == 4 and counts.accounting.composition == "additive"
    with pytest.raises(ValueError, match="MarkovChainPrior"):
        mqm_laplace(influence_curve(prior), 1.0)


# --- exact audit: the reported ε_puffer is never exceeded --------------------------------------

EDGES = [-np.inf, 0.5, 1.5, 2.5, 3.5, np.inf]


def _exp_audit(mech, k_states):
    return lambda seq: mech.probabilities(np.bincount(seq, minlength=k_states))


def _lap_audit(mech, k_states):
    return lambda seq: mech.probabilities(np.bincount(seq, minlength=k_states), EDGES)


@pytest.mark.parametrize(
    "prior",
    [STICKY, STICKY.with_length(8), THREE, [STICKY, STICKY.with_length(3)]],
    ids=["binary", "binary-8", "three", "theta"],
)
@pytest.mark.parametrize("eps", [0.5, 2.0, 6.0])
def test_exact_leakage_never_exceeds_reported_eps(prior, eps):
    k_states = (prior[0] if isinstance(prior, list) else prior).n_states
    curve = influence_curve(prior)
    mechanisms = [
        (pufferfish_exponential(curve, eps, k=1), _exp_audit),
        (pufferfish_exponential(curve, eps, k=2), _exp_audit),
        (group_dp_exponential(curve, eps, k=2), _exp_audit),
        (pufferfish_laplace(curve, eps), _lap_audit),
        (pufferfish_laplace(curve, eps, queries=k_states), _lap_audit),
        (group_dp_laplace(curve, eps), _lap_audit),
        (mqm_laplace(prior, eps), _lap_audit),
        (mqm_top_k_counts(prior, eps, k_states), _lap_audit),
    ]
    for mech, audit in mechanisms:
        leak = exact_leakage(prior, audit(mech, k_states))
        assert leak <= mech.accounting.eps_puffer + 1e-9, mech.accounting.describe()


def test_exact_leakage_is_not_vacuous():
    """The audit sees real leakage: the calibrated mechanism spends a good part of its budget."""
    mech = pufferfish_exponential(STICKY, 6.0, k=1)
    leak = exact_leakage(STICKY, _exp_audit(mech, 2))
    assert 0.3 * mech.accounting.eps_puffer < leak <= mech.accounting.eps_puffer


@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_two_releases_stay_within_theorem_6_2(eps):
    curve = influence_curve(STICKY)
    mech = pufferfish_exponential(curve, eps, k=1)
    joint = exact_leakage(STICKY, _exp_audit(mech, 2), releases=2)
    cal = mech.accounting.calibration
    assert joint <= compose([cal, cal]) + 1e-9
    assert cumulative_eps_puffer([mech.accounting] * 2)[-1] == pytest.approx(compose([cal, cal]))


def test_two_mqm_releases_stay_within_the_sum():
    mech = mqm_laplace(STICKY, 1.0)
    joint = exact_leakage(STICKY, _lap_audit(mech, 2), releases=2)
    assert joint <= 2.0 + 1e-9
    np.testing.assert_allclose(cumulative_eps_puffer([mech.accounting] * 3), [1.0, 2.0, 3.0])


# --- accounting ------------------------------------------------------------------------------


def test_accounting_carries_the_calibration():
    curve = influence_curve(STICKY.with_length(30))
    mech = pufferfish_exponential(curve, 2.0)
    cal = calibrate(curve, 2.0)
    acc = mech.accounting
    assert (acc.eps_puffer, acc.eps_dp, acc.b, acc.a) == (cal.eps_puffer, cal.eps_dp, cal.b, cal.a)
    assert acc.calibration == cal and not acc.group_dp
    gdp = group_dp_exponential(curve, 2.0).accounting
    assert gdp.eps_dp == pytest.approx(2.0 / 30) and gdp.group_dp
    json.dumps([acc.to_dict(), gdp.to_dict(), mqm_laplace(STICKY, 1.0).accounting.to_dict()], allow_nan=False)
    assert "b = " in acc.describe() and "group DP" in gdp.describe()


def test_cumulative_refuses_mixed_kinds():
    a = pufferfish_exponential(STICKY, 2.0).accounting
    b = mqm_laplace(STICKY, 2.0).accounting
    with pytest.raises(ValueError, match="cannot compose"):
        cumulative_eps_puffer([a, b])
    assert cumulative_eps_puffer([]).size == 0


def test_top_k_indices_orders_and_breaks_ties_by_index():
    values = np.array([[1.0, 5.0, 5.0, 2.0], [0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(top_k_indices(values, 3), [[1, 2, 3], [0, 1, 2]])
    np.testing.assert_array_equal(top_k_indices(values[0], 4), [1, 2, 3, 0])
    assert LaplaceCounts.rank(values, 1).tolist() == [[1], [0]]


def test_make_mechanism_dispatch():
    curve = influence_curve(STICKY.with_length(8))
    prior = STICKY.with_length(8)
    assert isinstance(make_mechanism("pufferfish_exponential", 1.0, curve, prior), ExponentialTopK)
    assert make_mechanism("mqm", 1.0, curve, prior, "topk", 3, 4).accounting.queries == 4
    assert make_mechanism("mqm", 1.0, curve, prior, "histogram").accounting.queries == 1
    assert make_mechanism("group_dp_laplace", 1.0, curve, prior, "topk", 3, 4, "histogram").accounting.queries == 1
    with pytest.raises(ValueError, match="ranking"):
        make_mechanism("group_dp_exponential", 1.0, curve, prior, "histogram")
    with pytest.raises(ValueError, match="unknown mechanism"):
        make_mechanism("laplace", 1.0, curve, prior)
    with pytest.raises(ValueError, match="query"):
        make_mechanism("mqm", 1.0, curve, prior, "mean")
    with pytest.raises(ValueError, match="n_states"):
        make_mechanism("mqm", 1.0, curve, prior, "topk")


# --- validation --------------------------------------------------------------------------------

BAD_COUNTS = [[-1.0, 2.0], [np.nan, 1.0], [3.0], [[[1.0, 2.0]]], ["a", "b"]]


@pytest.mark.parametrize("counts", BAD_COUNTS)
def test_bad_counts_are_rejected(counts):
    exp = pufferfish_exponential(STICKY, 2.0, k=1)
    lap = pufferfish_laplace(STICKY, 2.0)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        exp.simulate(counts, 3, rng)
    with pytest.raises(ValueError):
        lap.simulate(counts, 3, rng)


def test_bad_parameters_are_rejected():
    rng = np.random.default_rng(0)
    exp = pufferfish_exponential(STICKY, 2.0, k=3)
    with pytest.raises(ValueError, match="top 3 of only 2"):
        exp.simulate([1.0, 2.0], 5, rng)
    with pytest.raises(ValueError, match="Generator"):
        exp.simulate([1.0, 2.0, 3.0], 5, 42)
    with pytest.raises(ValueError, match="trials"):
        exp.simulate([1.0, 2.0, 3.0], 0, rng)
    with pytest.raises(ValueError, match="k"):
        pufferfish_exponential(STICKY, 2.0, k=0)
    with pytest.raises(ValueError, match="eps_puffer"):
        pufferfish_exponential(STICKY, -1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        pufferfish_laplace(STICKY, 1.0, sensitivity=0)
    with pytest.raises(ValueError, match="queries"):
        group_dp_laplace(STICKY, 1.0, queries=0)
    with pytest.raises(ValueError, match="InfluenceCurve"):
        pufferfish_exponential("not a prior", 1.0)
    with pytest.raises(ValueError, match="n_counts"):
        mqm_top_k_counts(STICKY, 1.0, 0)
    with pytest.raises(ValueError, match="edges"):
        pufferfish_laplace(STICKY, 1.0).probabilities([1.0, 2.0], [2.0, 1.0])
    with pytest.raises(ValueError, match="beta"):
        exp.count_gap_bound(5, beta=1.5)
    with pytest.raises(ValueError, match="confidence"):
        pufferfish_laplace(STICKY, 1.0).interval_halfwidth(1.0)


def test_every_ranking_is_listed_once():
    mech = pufferfish_exponential(STICKY, 2.0, k=2)
    outs = {tuple(o) for o in mech.outputs(4)}
    assert outs == set(itertools.permutations(range(4), 2))


def test_probabilities_are_a_distribution_even_when_the_scores_overflow():
    curve = influence_curve(STICKY.with_length(10))
    top1 = pufferfish_exponential(curve, 1000.0, k=1)
    np.testing.assert_array_equal(top1.probabilities([1e308, 0.0]), [1.0, 0.0])
    np.testing.assert_array_equal(top1.selection_probabilities([1e308, 0.0]), [1.0, 0.0])
    # by hand: state 0 is picked first for sure, then one of the two tied zeros with probability 1/2
    top2 = pufferfish_exponential(curve, 1000.0, k=2)
    probs = dict(zip(map(tuple, top2.outputs(3).tolist()), top2.probabilities([1e308, 0.0, 0.0])))
    assert probs[(0, 1)] == probs[(0, 2)] == 0.5
    assert sum(probs.values()) == 1.0 and all(p == 0.0 for o, p in probs.items() if o[0] != 0)


# --- the registry --------------------------------------------------------------------------------


def test_every_registered_mechanism_builds_for_every_query_it_answers():
    prior = STICKY.with_length(8)
    curve = influence_curve(prior)
    for name, spec in MECHANISMS.items():
        for query in QUERIES:
            if not spec.answers(query):
                with pytest.raises(ValueError, match="cannot answer"):
                    make_mechanism(name, 1.0, curve, prior, query, 2, 3)
                continue
            try:
                mechanism = make_mechanism(name, 1.0, curve, prior, query, 2, 3)
            except Refused as exc:  # a baseline with no guarantee for this prior says why (docs/math.md §15)
                assert exc.code in ("no_guarantee", "out_of_reach") and str(exc)
                continue
            assert mechanism.name == name and mechanism.accounting.composition is spec.composition
            draws = mechanism.simulate(np.array([5.0, 3.0, 1.0]), 4, np.random.default_rng(0))
            assert mechanism.ranking(draws, 2).shape == (4, 2)
    assert mechanisms_for("histogram") == (
        "pufferfish_laplace", "mqm", "group_dp_laplace", "wasserstein", "mqm_approx", "influence_matrix", "gaussian"
    )
    assert set(mechanisms_for("topk")) == set(MECHANISMS)
    for query, names in DEFAULT_MECHANISMS.items():
        assert set(names) <= set(mechanisms_for(query))
