"""Tests for puffer_core.classroom: every number is checked against a closed form from the papers,
a hand calculation, or a brute-force enumeration written here (never against saved output)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from puffer_core.audit.exact import exact_leakage
from puffer_core.classroom import (
    FiniteModel,
    SecretPair,
    appendix_j_example,
    check,
    composability,
    counting_mechanism,
    counting_model,
    exam_order_example,
    exam_order_model,
    example_1,
    example_2,
    example_3,
    example_3_epsilon,
    expected_runs_to_reveal,
    hedging_counting_mechanism,
    histogram_model,
    laplace_noise_leakage,
    laplace_sum_counterexample,
    laplace_sum_leakage,
    leakage_by_runs,
    model_from_chain,
    posterior_trace,
    randomized_response,
    simulate_runs_to_reveal,
    single_prior_histogram,
)
from puffer_core.priors.models import MarkovChainPrior

E = math.e


def one_bit_model(p_keep: float, prior=(0.5, 0.5)) -> FiniteModel:
    """Randomized response on one bit: output the bit with probability p_keep."""
    pair = SecretPair("bit = 0", lambda d: d == 0, "bit = 1", lambda d: d == 1)
    mech = {0: {0: p_keep, 1: 1 - p_keep}, 1: {0: 1 - p_keep, 1: p_keep}}
    return FiniteModel([0, 1], {0: prior[0], 1: prior[1]}, [pair], mech)


def brute_force_eps(model: FiniteModel, releases: int) -> float:
    """ε_puffer by plain loops over every ordered k-tuple of outputs (no multiset trick, no logs)."""
    best = -math.inf
    outs = range(len(model.outputs))
    for prior in model.priors:
        for k in range(len(model.secret_pairs)):
            sides = []
            for side in (0, 1):
                rows = [d for d in range(model.n_datasets) if model.masks[k, side, d] and prior[d] > 0]
                sides.append((rows, sum(prior[d] for d in rows)))
            if sides[0][1] <= 0 or sides[1][1] <= 0:
                continue
            for tup in itertools.product(outs, repeat=releases):
                probs = []
                for rows, mass in sides:
                    total = 0.0
                    for d in rows:
                        lik = 1.0
                        for o in tup:
                            lik *= model.mechanism[d, o]
                        total += prior[d] / mass * lik
                    probs.append(total)
                for a, b in ((0, 1), (1, 0)):
                    if probs[a] > 0:
                        best = max(best, math.inf if probs[b] == 0 else math.log(probs[a] / probs[b]))
    return max(best, 0.0)


# ---------------------------------------------------------------- the finite checker


def test_randomized_response_costs_eps_per_release() -> None:
    """One release of ε-randomized response leaks exactly ε, k releases exactly kε (by hand)."""
    eps = 0.8
    model = one_bit_model(math.exp(eps) / (1 + math.exp(eps)), prior=(0.3, 0.7))
    for k in (1, 2, 3, 4):
        assert check(model, releases=k).eps == pytest.approx(k * eps, abs=1e-12)


def test_hand_computed_mixture_and_worst_case_report() -> None:
    """Three datasets, one prior: Pr[ω|s] mixes datasets by their conditional prior weights."""
    pair = SecretPair("s1", lambda d: d == "A", "s2", lambda d: d in ("B", "C"))
    mech = {"A": {"x": 0.5, "y": 0.5}, "B": {"x": 0.9, "y": 0.1}, "C": {"x": 0.2, "y": 0.8}}
    model = FiniteModel(["A", "B", "C"], {"A": 0.5, "B": 0.3, "C": 0.2}, [pair], mech)
    # Pr[x | s2] = 0.6·0.9 + 0.4·0.2 = 0.62, Pr[y | s2] = 0.38; Pr[· | s1] = 0.5
    by_hand = max(abs(math.log(0.5 / 0.62)), abs(math.log(0.5 / 0.38)))
    report = check(model)
    assert report.eps == pytest.approx(by_hand, abs=1e-12)
    assert report.output == "y" and report.numerator == "s1" and report.denominator == "s2"
    assert report.prob_numerator == pytest.approx(0.5) and report.prob_denominator == pytest.approx(0.38)
    assert "s1" in report.explain()
    # two releases: Pr[(y, y) | s2] = 0.6·0.01 + 0.4·0.64 = 0.262 against 0.25 … the worst pair of outputs
    two = {
        ("x", "x"): (0.25, 0.6 * 0.81 + 0.4 * 0.04),
        ("x", "y"): (0.25, 0.6 * 0.09 + 0.4 * 0.16),
        ("y", "y"): (0.25, 0.6 * 0.01 + 0.4 * 0.64),
    }
    by_hand_2 = max(abs(math.log(a / b)) for a, b in two.values())
    assert check(model, releases=2).eps == pytest.approx(by_hand_2, abs=1e-12)


def test_output_possible_under_one_secret_only_is_inf_and_never_nan() -> None:
    pair = SecretPair("s1", lambda d: d == 0, "s2", lambda d: d == 1)
    model = FiniteModel([0, 1], [0.5, 0.5], [pair], {0: {"a": 1.0}, 1: {"a": 0.5, "b": 0.5}})
    report = check(model)
    assert report.eps == math.inf
    assert report.output == "b" and report.numerator == "s2" and report.prob_denominator == 0.0
    assert not math.isnan(check(model, releases=3).eps)


def test_zero_probability_secrets_are_skipped() -> None:
    """With Pr[s2] = 0 the pair imposes nothing: ε = 0 although the outputs differ completely."""
    pair = SecretPair("s1", lambda d: d == 0, "s2", lambda d: d == 1)
    model = FiniteModel([0, 1], [1.0, 0.0], [pair], {0: {"a": 1.0}, 1: {"b": 1.0}})
    report = check(model)
    assert report.eps == 0.0 and report.pair is None
    # a second prior that gives both secrets mass brings the +inf back
    model2 = FiniteModel([0, 1], [[1.0, 0.0], [0.5, 0.5]], [pair], {0: {"a": 1.0}, 1: {"b": 1.0}})
    assert check(model2).eps == math.inf and check(model2).prior_index == 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_checker_matches_brute_force_over_all_ordered_tuples(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, m = 5, 3
    mech = rng.dirichlet(np.ones(m), size=n)
    mech[rng.random((n, m)) < 0.2] = 0.0  # some impossible outputs
    mech[:, 0] += 0.05
    mech /= mech.sum(axis=1, keepdims=True)
    priors = rng.dirichlet(np.ones(n), size=2)
    pairs = [
        SecretPair("low", lambda d: d < 2, "high", lambda d: d >= 3),
        SecretPair("even", lambda d: d % 2 == 0, "odd", lambda d: d % 2 == 1),
    ]
    model = FiniteModel(range(n), priors, pairs, mech)
    for k in (1, 2, 3):
        assert check(model, releases=k).eps == pytest.approx(brute_force_eps(model, k), rel=1e-10, abs=1e-12)


def _noisy_count(seq: np.ndarray) -> np.ndarray:
    """Two-sided-geometric-like noise on the number of non-zero states, truncated to 0..T."""
    t = len(seq)
    w = np.exp(-0.7 * np.abs(np.arange(t + 1) - int(np.count_nonzero(seq))))
    return w / w.sum()


def _first_state_rr(seq: np.ndarray) -> np.ndarray:
    return np.array([0.75, 0.25]) if seq[0] == 0 else np.array([0.25, 0.75])


@pytest.mark.parametrize("n_states", [2, 3])
def test_checker_agrees_with_audit_exact_leakage_on_markov_chains(n_states: int) -> None:
    rng = np.random.default_rng(10 + n_states)
    priors = [
        MarkovChainPrior(rng.dirichlet(np.ones(n_states), size=n_states), length=3),
        MarkovChainPrior(
            rng.dirichlet(np.ones(n_states), size=n_states),
            initial=rng.dirichlet(np.ones(n_states)),
            length=3,
        ),
    ]
    for mech in (_noisy_count, _first_state_rr):
        model = model_from_chain(priors, mech)
        assert model.n_datasets == n_states**3
        for k in (1, 2):
            assert check(model, releases=k).eps == pytest.approx(exact_leakage(priors, mech, k), abs=1e-10)


def test_chain_with_zero_transitions_gives_inf_in_both() -> None:
    """P(0 → 1) = 0: releasing X_2 exactly shows X_2 = 1, impossible after X_1 = 0."""
    prior = MarkovChainPrior([[1.0, 0.0], [0.5, 0.5]], initial=[0.5, 0.5], length=2)

    def second_state(seq: np.ndarray) -> np.ndarray:
        return np.eye(2)[seq[1]]

    model = model_from_chain(prior, second_state)
    assert check(model).eps == exact_leakage(prior, second_state) == math.inf
    assert check(model).pair.label == "X_1 = 0 vs X_1 = 1"


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: FiniteModel([0, 1], [0.6, 0.6], [], {}), "sums to"),
        (lambda: FiniteModel([0, 0], [0.5, 0.5], [], {}), "distinct"),
        (lambda: FiniteModel([[0], [1]], [0.5, 0.5], [], {}), "hashable"),
        (lambda: FiniteModel([0, 1], [0.5, 0.5], [], {0: {"a": 1}, 1: {"a": 1}}), "at least one secret"),
        (
            lambda: FiniteModel(
                [0, 1], [0.5, 0.5], [SecretPair("a", lambda d: True, "b", lambda d: d == 1)], {0: {"a": 1}}
            ),
            "both true",
        ),
        (
            lambda: FiniteModel(
                [0, 1],
                [0.5, 0.5],
                [SecretPair.complement("a", lambda d: d == 0)],
                {0: {"a": 1}, 1: {"a": 0.9}},
            ),
            "sums to",
        ),
        (lambda: FiniteModel([0, 1], {2: 1.0}, [], {}), "not one of the datasets"),
        (lambda: check(one_bit_model(0.7), releases=0), "releases"),
        (
            lambda: model_from_chain(MarkovChainPrior([[0.5, 0.5], [0.5, 0.5]], length=20), _noisy_count),
            "too many",
        ),
    ],
)
def test_bad_parameters_raise_readable_value_errors(build, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()


# ---------------------------------------------------------------- [C] §4 Example 1


def test_example_1_zero_leakage_then_collapse_with_exact_and_simulated_runs() -> None:
    first, second = (0.5, 0.3, 0.2), (0.6, 0.4)
    model = example_1(first, second, prob_first=0.5)
    assert check(model).eps == pytest.approx(0.0, abs=1e-12)
    assert check(model, releases=2).eps == math.inf
    # [C] proof of Example 1: E[runs | true A-dataset] = 1 + Σ_B q/(1−q), q = Pr[B | s2]
    exact_a = 1 + sum(q / (1 - q) for q in second)
    exact_b = 1 + sum(p / (1 - p) for p in first)
    assert expected_runs_to_reveal(model, "A1") == pytest.approx(exact_a, rel=1e-12)
    assert expected_runs_to_reveal(model, "B2", target="dataset") == pytest.approx(exact_b, rel=1e-12)
    bound = 1 + 1 / (1 - max(first + second))  # the theorem's upper bound
    assert exact_a <= bound and exact_b <= bound
    sim = simulate_runs_to_reveal(model, "A1", np.random.default_rng(7), trials=20_000)
    assert np.all(sim.runs >= 2)  # a single output never reveals anything
    assert abs(sim.mean - exact_a) < 4 * sim.standard_error + 1e-9
    assert abs(sim.mean - exact_a) < 0.05


def test_example_1_posterior_trace_matches_bayes_by_hand() -> None:
    first, second, w = (0.5, 0.3, 0.2), (0.6, 0.4), 0.4
    model = example_1(first, second, prob_first=w)
    trace = posterior_trace(model, "A2", runs=30, rng=np.random.default_rng(3))
    assert list(trace["run"]) == list(range(31))
    assert trace["posterior_i"].between(0, 1).all() and not trace.isna().drop(columns="output").any().any()
    assert trace.loc[0, "posterior_i"] == pytest.approx(w)  # run 0: the prior
    assert trace.loc[1, "posterior_i"] == pytest.approx(w)  # one release: nothing learned
    outputs = list(trace["output"][1:])
    b_first = outputs[0][1]
    q_b = second[int(b_first[1]) - 1]
    p_a = first[1]
    for r in range(1, 31):
        if all(o == outputs[0] for o in outputs[:r]):
            # r identical outputs (A2, B): Pr[· | s1] = p_A2 q_B^r, Pr[· | s2] = q_B p_A2^r
            num = w * p_a * q_b**r
            by_hand = num / (num + (1 - w) * q_b * p_a**r)
            assert trace.loc[r, "posterior_i"] == pytest.approx(by_hand, rel=1e-10)
            assert not trace.loc[r, "revealed"]
        else:
            assert trace.loc[r, "posterior_i"] == 1.0 and trace.loc[r, "revealed"]
    assert trace["revealed"].iloc[-1]


# ---------------------------------------------------------------- [C] §4 Example 2


@pytest.mark.parametrize("n", [3, 4])
def test_example_2_outputs_are_independent_of_every_bit(n: int) -> None:
    model = example_2(n)
    assert check(model).eps == pytest.approx(0.0, abs=1e-12)
    assert check(model, releases=2).eps == math.inf
    # Pr[type-B bit | any secret] = 1/4; Pr[one type-A tuple | x_i = j] = ½ · 2^{-(n-1)} = 2^{-n}
    for k, pair in enumerate(model.secret_pairs):
        for side in (0, 1):
            rows = np.flatnonzero(model.masks[k, side])
            cond = model.mechanism[rows].mean(axis=0)  # uniform prior: equal weights
            for out, p in zip(model.outputs, cond):
                assert p == pytest.approx(0.25 if out[0] == "B" else 2.0**-n, abs=1e-15), pair.label


def test_example_2_reveals_the_whole_dataset_after_three_runs() -> None:
    model = example_2(5)
    truth = (1, 0, 1, 1, 0)
    assert expected_runs_to_reveal(model, truth, target="dataset") == pytest.approx(3.0, abs=1e-12)
    assert expected_runs_to_reveal(model, truth, target="secret") == pytest.approx(3.0, abs=1e-12)
    sim = simulate_runs_to_reveal(model, truth, np.random.default_rng(11), trials=20_000, target="dataset")
    # runs = 1 + Geometric(1/2): sd √2, so the mean of 20,000 trials has standard error 0.01
    assert abs(sim.mean - 3.0) < 0.04
    trace = posterior_trace(model, truth, runs=12, rng=np.random.default_rng(5))
    first_run = trace[trace["run"] == 1]
    assert np.allclose(first_run["posterior_i"], 0.5)  # one output says nothing about any bit


# ---------------------------------------------------------------- [C] §4 Example 3


@pytest.mark.parametrize("bounds", [(0.35, 0.65, 0.4, 0.6), (0.2, 0.3, 0.5, 0.9)])
def test_example_3_finite_eps_per_run_matches_the_paper_then_collapses(bounds) -> None:
    lt, ut, lf, uf = bounds
    paper = max(
        abs(math.log(r))
        for r in (
            ut / lf,
            lt / uf,
            (1 - ut) / uf,
            (1 - lt) / lf,
            lt / (1 - lf),
            ut / (1 - uf),
            (1 - ut) / (1 - lf),
            (1 - lt) / (1 - uf),
        )
    )
    model = example_3(*bounds)
    assert check(model).eps == pytest.approx(paper, abs=1e-12)
    assert example_3_epsilon(*bounds) == pytest.approx(paper, abs=1e-15)
    assert check(model, releases=2).eps == math.inf
    for truth in ("1a", "2b"):
        assert expected_runs_to_reveal(model, truth) == pytest.approx(3.0, abs=1e-12)
    sim = simulate_runs_to_reveal(model, "1b", np.random.default_rng(2), trials=20_000)
    assert abs(sim.mean - 3.0) < 0.04


def test_example_3_posterior_after_one_run_by_hand() -> None:
    """Output (1a, 2b): Pr[· | s1, θ] = a/2, Pr[· | ¬s1, θ] = (1 − b)/2, so each prior moves differently."""
    trace = posterior_trace(example_3(), "1a", runs=1, rng=np.random.default_rng(0))
    run1 = trace[trace["run"] == 1]
    a_b = [(0.35, 0.4), (0.35, 0.6), (0.65, 0.4), (0.65, 0.6)]
    (out,) = set(run1["output"])
    for (a, b), post in zip(a_b, run1["posterior_i"]):
        like_s1 = a / 2 if out[0] == "1a" else (1 - a) / 2
        like_not = b / 2 if out[1] == "2a" else (1 - b) / 2
        assert post == pytest.approx(0.5 * like_s1 / (0.5 * like_s1 + 0.5 * like_not), rel=1e-12)


def test_example_3_default_number() -> None:
    # Pr[U_T|s1] ∈ [0.35, 0.65], Pr[U_F|¬s1] ∈ [0.4, 0.6]: output (1a, 2b) under the prior
    # (a, b) = (0.35, 0.4) has ratio (a/2)/((1 − b)/2) = 0.35/0.6, the worst of the eight
    assert check(example_3()).eps == pytest.approx(math.log(0.6 / 0.35), abs=1e-12)


# ---------------------------------------------------------------- [P] Appendix J, Example 10.5


def test_appendix_j_zero_for_one_run_infinite_for_two() -> None:
    model = appendix_j_example()
    assert check(model).eps == pytest.approx(0.0, abs=1e-12)
    two = check(model, releases=2)
    assert two.eps == math.inf and set(two.outputs) == {"ω1", "ω2"}
    assert two.prob_numerator == pytest.approx(0.25) and two.numerator == "x_1 = 1"


def test_appendix_j_with_another_prior_matches_the_proof() -> None:
    prior = {(0, 0): 0.3, (0, 1): 0.1, (1, 0): 0.2, (1, 1): 0.4}
    p_star = 0.3 / 0.4  # Pr[D* | x_1 = 0]
    by_hand = max(abs(math.log(p_star / 0.5)), abs(math.log((1 - p_star) / 0.5)))
    model = appendix_j_example(prior)
    assert check(model).eps == pytest.approx(by_hand, abs=1e-12)
    assert check(model, releases=2).eps == math.inf


@pytest.mark.parametrize("eps, n", [(0.5, 5), (1.0, 3), (0.1, 12), (2.0, 1)])
def test_exam_order_leakage_closed_form(eps: float, n: int) -> None:
    closed = math.log((math.exp(eps * n) - 1) / (n * (1 - math.exp(-eps))))
    by_sum = math.log(sum(math.exp(eps * j) for j in range(1, n + 1)) / n)  # (1/n) Σ_j e^{εj}
    assert exam_order_example(eps, n) == pytest.approx(closed, rel=1e-12)
    assert closed == pytest.approx(by_sum, rel=1e-12)
    # continuous Laplace noise (scale 1/ε), pair (σ_(1,0), σ_(1,1)): D_0 vs uniform D_1..D_n
    cont = laplace_noise_leakage({0.0: 1.0}, {float(j): 1 / n for j in range(1, n + 1)}, scale=1 / eps)
    assert cont == pytest.approx(closed, rel=1e-12)
    # discrete Laplace version through the finite checker, student 1's pair only
    model = exam_order_model(eps, n)
    assert check(model.restricted_to([0])).eps == pytest.approx(closed, rel=1e-12)
    assert check(model).eps >= closed - 1e-12
    if n == 1:
        assert closed == pytest.approx(eps)  # one student: plain ε-DP


def test_exam_order_is_far_above_dp_eps() -> None:
    assert exam_order_example(1.0, 20) > 17.0  # ≈ 20ε − log(20(1 − e^{−1})): DP's ε = 1 says nothing


# ---------------------------------------------------------------- [S] Theorem III.4


def _two_node_density_log_ratio(w: np.ndarray, w2: np.ndarray | None, p: float, q: float) -> np.ndarray:
    """log of the density ratio X_1 = 1 vs X_1 = 0 on a grid, straight from the paper's S(w) and D(w, w')."""

    def sig(x: np.ndarray) -> np.ndarray:
        return 0.5 * np.exp(-np.abs(x))

    if w2 is None:
        num = sig(w - 2) * p + sig(w - 1) * (1 - p)
        den = sig(w - 1) * q + sig(w) * (1 - q)
    else:
        num = sig(w - 2) * sig(w2 - 2) * p + sig(w - 1) * sig(w2 - 1) * (1 - p)
        den = sig(w - 1) * sig(w2 - 1) * q + sig(w) * sig(w2) * (1 - q)
    return np.log(num) - np.log(den)


def test_laplace_sum_counterexample_numbers() -> None:
    one, two = laplace_sum_counterexample(0.9, 0.01)
    assert one == pytest.approx(1.9177, abs=1e-4)
    assert two == pytest.approx(3.8476, abs=1e-4)
    assert two > 2 * one and 2 * one == pytest.approx(3.8353, abs=1e-4)
    p, q = 0.9, 0.01
    # the paper's case analysis: the sup of S is e(ep + 1 − p)/(eq + 1 − q), of D is e²(e²p+1−p)/(e²q+1−q)
    assert one == pytest.approx(math.log(E * (E * p + 1 - p) / (E * q + 1 - q)), abs=1e-12)
    assert two == pytest.approx(math.log(E**2 * (E**2 * p + 1 - p) / (E**2 * q + 1 - q)), abs=1e-12)


def test_laplace_sup_is_not_exceeded_on_a_dense_grid() -> None:
    p, q = 0.9, 0.01
    one, two = laplace_sum_counterexample(p, q)
    w = np.linspace(-8, 10, 3601)
    r1 = np.abs(_two_node_density_log_ratio(w, None, p, q))
    assert r1.max() <= one + 1e-12 and r1.max() == pytest.approx(one, abs=1e-6)
    ww, ww2 = np.meshgrid(np.linspace(-6, 8, 561), np.linspace(-6, 8, 561))
    r2 = np.abs(_two_node_density_log_ratio(ww, ww2, p, q))
    assert r2.max() <= two + 1e-12 and r2.max() == pytest.approx(two, abs=1e-4)


def test_laplace_leakage_for_several_releases_and_other_chains() -> None:
    # p = q: X_2 is independent of X_1, so F = X_1 + X_2 leaks like Lap(1) on one bit: ε = 1 per release
    for k in (1, 2, 3):
        assert laplace_sum_leakage(0.3, 0.3, releases=k) == pytest.approx(k * 1.0, abs=1e-12)
    with pytest.raises(ValueError, match="probability"):
        laplace_sum_leakage(1.2, 0.1)


# ---------------------------------------------------------------- [C] §5.1 composability (NfC)


def test_nfc_example_1_is_infinite_although_one_release_leaks_nothing() -> None:
    model = example_1()
    assert check(model).eps == pytest.approx(0.0, abs=1e-12)
    report = composability(model)
    assert report.eps == math.inf and report.binding.beta == {}
    assert composability(appendix_j_example()).eps == math.inf


def test_nfc_randomized_response_passes_exactly_at_eps() -> None:
    eps = 0.7
    p = math.exp(eps) / (1 + math.exp(eps))
    report = composability([[p, 1 - p], [1 - p, p]], [([0], [1])])
    assert report.eps == pytest.approx(eps, abs=1e-9) and report.binding.dp_style


def test_nfc_per_entry_dp_mechanism_passes_at_eps() -> None:
    """Randomized response on each of two bits (ε per bit): secrets x_1 and x_2, NfC ≤ ε."""
    eps = 0.9
    keep = math.exp(eps) / (1 + math.exp(eps))
    datasets = list(itertools.product((0, 1), repeat=2))
    outs = list(itertools.product((0, 1), repeat=2))
    mech = [[math.prod(keep if o[i] == d[i] else 1 - keep for i in range(2)) for o in outs] for d in datasets]
    pairs = [
        ([r for r, d in enumerate(datasets) if d[i] == 0], [r for r, d in enumerate(datasets) if d[i] == 1])
        for i in range(2)
    ]
    report = composability(mech, pairs, datasets=datasets, outputs=outs)
    assert report.eps <= eps + 1e-9
    assert report.eps == pytest.approx(eps, abs=1e-9)  # the neighbour differing in that bit binds


def test_nfc_convex_combination_binds_where_dp_style_would_be_too_strict() -> None:
    """s1 = {D*}, s2 = {D1, D2}: D* = (½, ½), D1 = (0.99, 0.01), D2 = (0.01, 0.99).

    (s1, s2): the best unit β (a DP inequality) needs log(0.5/0.01) = 3.91; β = (½, ½) needs only
    log(0.5/√(0.99·0.01)) = 1.614 — the geometric mean of D1 and D2 is (0.0995, 0.0995).
    (s2, s1): only D* is on the other side, so the DP-style log(0.99/0.5) = 0.683 is necessary.
    """
    mech = [[0.5, 0.5], [0.99, 0.01], [0.01, 0.99]]
    report = composability(mech, [([0], [1, 2])], datasets=["D*", "D1", "D2"], outputs=["ω1", "ω2"])
    convex = math.log(0.5 / math.sqrt(0.99 * 0.01))
    assert report.eps == pytest.approx(convex, abs=1e-9)
    binding = report.binding
    assert binding.dataset == "D*" and not binding.dp_style
    assert binding.beta == pytest.approx({"D1": 0.5, "D2": 0.5}, abs=1e-7)
    assert set(binding.tight_outputs) == {"ω1", "ω2"}
    assert sum(binding.alpha.values()) == pytest.approx(1.0, abs=1e-9)
    assert min(math.log(0.5 / 0.01), math.log(0.5 / 0.01)) > convex + 2  # any unit β is far worse
    reverse = [c for c in report.constraints if c.dataset in ("D1", "D2")]
    assert len(reverse) == 2 and all(c.dp_style for c in reverse)
    assert all(c.eps == pytest.approx(math.log(0.99 / 0.5), abs=1e-9) for c in reverse)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_nfc_lp_matches_a_brute_force_grid_over_beta(seed: int) -> None:
    rng = np.random.default_rng(seed)
    mech = rng.dirichlet(np.ones(3), size=3)
    report = composability(mech, [([0], [1, 2])])
    forward = [c for c in report.constraints if c.dataset == 0][0]
    betas = np.linspace(0, 1, 20_001)
    log_m = np.log(mech)
    grid = np.max(log_m[0][None, :] - (betas[:, None] * log_m[1] + (1 - betas[:, None]) * log_m[2]), axis=1)
    assert forward.eps <= grid.min() + 1e-9  # the LP is at least as good as every grid point
    assert forward.eps == pytest.approx(max(grid.min(), 0.0), abs=2e-4)  # grid step 5e-5
    beta = np.array([forward.beta.get(1, 0.0), forward.beta.get(2, 0.0)])
    at_beta = np.max(log_m[0] - (beta[0] * log_m[1] + beta[1] * log_m[2]))
    assert forward.eps == pytest.approx(max(at_beta, 0.0), abs=1e-9)  # the reported β achieves it


def test_nfc_on_a_model_uses_each_prior_support() -> None:
    """A dataset with probability 0 under every prior cannot make the condition fail."""
    pair = SecretPair("s1", lambda d: d == "A", "s2", lambda d: d != "A")
    mech = {"A": {"x": 0.5, "y": 0.5}, "B": {"x": 0.5, "y": 0.5}, "C": {"x": 1.0}}
    with_c = FiniteModel(["A", "B", "C"], {"A": 0.5, "B": 0.25, "C": 0.25}, [pair], mech)
    without_c = FiniteModel(["A", "B", "C"], {"A": 0.5, "B": 0.5}, [pair], mech)
    assert composability(without_c).eps == pytest.approx(0.0, abs=1e-9)
    # C on the s2 side: for D = C (s2) vs A: log(1/0.5); for D = A, β can sit on B: 0
    assert composability(with_c).eps == pytest.approx(math.log(2), abs=1e-9)


# ---------------------------------------------------------------- [P] §7 counting queries


def _binom(n: int, k: int, q: float) -> float:
    return math.comb(n, k) * q**k * (1 - q) ** (n - k)


def own_counting_model(mech, n: int, qs, alpha=None, q_star=None) -> FiniteModel:
    """[P] §7's secrets and (hedged) priors, built here independently of the library's counting_model."""
    datasets = [("in", t, k) for t in (0, 1) for k in range(n)] + [("out", k) for k in range(n + 1)]
    priors = []
    for q in qs:

        def mix(size: int, k: int, q: float = q) -> float:
            base = _binom(size, k, q)
            return base if alpha is None else (1 - alpha) * base + alpha * _binom(size, k, q_star)

        priors.append([0.25 * mix(n - 1, d[2]) if d[0] == "in" else 0.5 * mix(n, d[1]) for d in datasets])
    priors = [np.array(p) / sum(p) for p in priors]
    pairs = [
        SecretPair(f"in with {t}", lambda d, t=t: d[0] == "in" and d[1] == t, "out", lambda d: d[0] == "out")
        for t in (0, 1)
    ]
    return FiniteModel(
        datasets, priors, pairs, lambda d: mech.output_distribution(d[1] + d[2] if d[0] == "in" else d[1])
    )


def test_algorithm_1_interval_and_distribution_by_hand() -> None:
    q, n, eps = 0.3, 30, 0.5
    mech = counting_mechanism(q, n, eps)
    lo = max(1, math.ceil(n * math.exp(-eps) * q / (math.exp(-eps) * q + 1 - q)))
    hi = min(n - 1, math.floor(n * math.exp(eps) * q / (math.exp(eps) * q + 1 - q)))
    assert mech.interval == (lo, hi) == (7, 12)
    c = (1 - math.exp(-eps)) / (1 + math.exp(-eps))
    for k in range(n + 1):
        dist = mech.output_distribution(k)
        assert sum(dist.values()) == pytest.approx(1.0, abs=1e-12)
        assert all(p >= 0 for p in dist.values())
        # leftover mass = 1 − Σ_r Pr[noisy r], summed numerically over a wide range of r
        r = np.arange(-400, 431)
        leftover = 1.0 - float(np.sum(mech.noisy_probability(k, r)))
        assert mech.true_count_probability(k) == pytest.approx(max(leftover, 0.0), abs=1e-12)
        if lo <= k <= hi:
            assert dist[f"true {k}"] > 0
            r_in = (lo + hi) // 2
            via = min(abs(r_in - lo) + abs(lo - k), abs(r_in - hi) + abs(hi - k))
            assert mech.noisy_probability(k, r_in) == pytest.approx(c * math.exp(-2 * eps - eps * via))
        else:
            assert f"true {k}" not in dist
            assert mech.noisy_probability(k, k + 3) == pytest.approx(c * math.exp(-3 * eps))


@pytest.mark.parametrize("q, n, eps", [(0.3, 30, 0.5), (0.5, 10, 1.0), (0.1, 50, 0.3), (0.7, 8, 2.0)])
def test_algorithm_1_never_exceeds_eps_under_its_prior(q: float, n: int, eps: float) -> None:
    mech = counting_mechanism(q, n, eps)
    assert check(own_counting_model(mech, n, [q])).eps <= eps + 1e-9
    assert check(counting_model(mech)).eps == pytest.approx(check(own_counting_model(mech, n, [q])).eps)


def test_algorithm_1_is_not_private_for_an_attacker_with_another_prior() -> None:
    """Single-prior privacy only covers its one prior: an attacker with q = 0.9 learns more than ε."""
    mech = counting_mechanism(0.3, 30, 0.5)
    assert check(own_counting_model(mech, 30, [0.9])).eps > 0.5


def _claim_g1_holds(j: int, m: int, q: float, q_star: float, lam: float) -> bool:
    """(q*)^j (1 − q*)^{m−j} ≥ λ q^j (1 − q)^{m−j}, evaluated directly in logs."""
    return j * math.log(q_star) + (m - j) * math.log(1 - q_star) >= math.log(lam) + j * math.log(q) + (
        m - j
    ) * math.log(1 - q)


@pytest.mark.parametrize(
    "q_star, n, eps, alpha", [(0.5, 100, 2.0, 0.01), (0.3, 200, 3.0, 0.001), (0.4, 150, 1.5, 0.05)]
)
def test_algorithm_3_interval_follows_claim_g1_and_never_exceeds_eps(q_star, n, eps, alpha) -> None:
    mech = hedging_counting_mechanism(q_star, n, eps, alpha)
    assert mech.interval is not None
    t = math.exp(eps / 3)
    q_lo = t**-1 * q_star / (t**-1 * q_star + 1 - q_star)
    q_hi = t * q_star / (t * q_star + 1 - q_star)
    lam = (1 - alpha) / (alpha * (t - 1))
    assert lam > 1

    def admissible(k: int) -> bool:  # Claim G.5 needs j = k − 1 and j = k, m = n − 1, at q_lo and q_hi
        return all(_claim_g1_holds(j, n - 1, qq, q_star, lam) for j in (k - 1, k) for qq in (q_lo, q_hi))

    lo, hi = mech.interval
    assert all(admissible(k) for k in range(lo, hi + 1))
    assert not admissible(lo - 1)
    assert hi == n - 1 or not admissible(hi + 1)  # k_hi is the largest admissible k: nothing lost
    # the printed line 5 (log((1 − q_hi)/(1 − q*)), ceiling) lands far below k_lo: an empty interval
    b_hi = math.log(q_hi / (1 - q_hi) / (q_star / (1 - q_star)))
    printed = math.ceil((n - 1) * math.log((1 - q_hi) / (1 - q_star)) / b_hi - math.log(lam) / b_hi)
    assert printed < lo
    grid = [i / 20 for i in range(21)]
    model = own_counting_model(mech, n, grid, alpha=alpha, q_star=q_star)
    assert check(model).eps <= eps + 1e-9
    for k in range(n + 1):
        assert sum(mech.output_distribution(k).values()) == pytest.approx(1.0, abs=1e-12)


def test_algorithm_3_interval_is_empty_for_small_n() -> None:
    mech = hedging_counting_mechanism(0.5, 20, 1.0, 0.001)
    assert mech.interval is None
    assert all(mech.true_count_probability(k) == 0.0 for k in range(21))


def test_sampling_follows_the_output_distribution() -> None:
    mech = counting_mechanism(0.5, 10, 1.0)
    rng = np.random.default_rng(123)
    draws = [mech.sample(5, rng) for _ in range(20_000)]
    labels = pd.Series(
        [
            "noisy ≤ 0"
            if (not d.exact and d.value <= 0)
            else "noisy ≥ 10"
            if (not d.exact and d.value >= 10)
            else d.label
            for d in draws
        ]
    )
    freq = labels.value_counts(normalize=True)
    for label, p in mech.output_distribution(5).items():
        se = math.sqrt(p * (1 - p) / 20_000)
        assert abs(freq.get(label, 0.0) - p) < 5 * se + 1e-4, label
    assert np.mean([abs(d.value - 5) for d in draws]) == pytest.approx(
        mech.expected_absolute_error(5), abs=0.03
    )


def test_histogram_version_can_leak_infinitely_with_three_cells() -> None:
    """Algorithm 2, q = (0.45, 0.45, 0.1), n = 10, ε = 1: exact counts 4 and 6 prove cell 3 is empty.

    Under ¬σ_i (10 fresh records) Pr[H = (4, 6, 0)] > 0; under σ_(i,3) individual i sits in cell 3,
    so H[3] ≥ 1 and the output ("true 4", "true 6", ·) is impossible: +inf, not the claimed 2ε.
    """
    hist = single_prior_histogram([0.45, 0.45, 0.1], 10, 1.0)
    assert hist.paper_eps == 2.0
    p_out = math.factorial(10) / (math.factorial(4) * math.factorial(6)) * 0.45**10
    assert p_out * hist.cells[0].true_count_probability(4) * hist.cells[1].true_count_probability(6) > 0
    report = check(histogram_model(hist))
    assert report.eps == math.inf
    two_cells = single_prior_histogram([0.6, 0.4], 6, 1.0)
    assert check(histogram_model(two_cells)).eps <= two_cells.paper_eps + 1e-9


def test_counting_parameters_are_validated() -> None:
    with pytest.raises(ValueError, match="eps"):
        counting_mechanism(0.3, 10, -1.0)
    with pytest.raises(ValueError, match="alpha"):
        hedging_counting_mechanism(0.3, 10, 1.0, alpha=0.6)
    with pytest.raises(ValueError, match="true count"):
        counting_mechanism(0.3, 10, 1.0).output_distribution(11)
    with pytest.raises(ValueError, match="Generator"):
        counting_mechanism(0.3, 10, 1.0).sample(3, rng=None)
    with pytest.raises(ValueError, match="can be 0"):
        single_prior_histogram([1.0, 0.0], 5, 1.0)


def test_leakage_by_runs_stops_enumerating_at_infinity():
    """[P] Appendix J: one run leaks nothing, two runs everything; randomized response: k runs leak k·ε."""
    assert leakage_by_runs(appendix_j_example(), 4) == [0.0, math.inf, math.inf, math.inf]
    rr = leakage_by_runs(randomized_response(appendix_j_example(), 0.5), 3)
    assert rr == pytest.approx([0.5, 1.0, 1.5], abs=1e-12)
    with pytest.raises(ValueError, match="max_releases"):
        leakage_by_runs(appendix_j_example(), 0)
