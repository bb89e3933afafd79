"""The best possible mechanism (docs/math.md §18), checked against references that share no code.

The programme's floor against its closed form at T = 1 and against a second solver; the returned table's
leakage, one run and k runs, against enumeration of every sequence; the floor against every shipped
mechanism's exact expected error over mechanisms × priors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from puffer_core.engine.influence import influence_curve
from puffer_core.mechanisms.count_laws import count_laws
from puffer_core.optimal.compare import compare_with_floor
from puffer_core.optimal.lp import (
    count_programme,
    optimal_count_mechanism,
    optimal_histogram_mechanism,
    programme_estimate,
)
from puffer_core.optimal.repeat import repeated_estimate, repeated_leakage
from puffer_core.priors.models import MarkovChainPrior
from tests.support import brute_counts as brute
from tests.support.brute import chain_of_kind

KINDS = ("dense", "sticky", "near-periodic", "sparse")


def _brute_error(prior: MarkovChainPrior, states, table: np.ndarray) -> float:
    """E|y − F| of a table q(y | F) by enumeration of every sequence."""
    law = brute.marginal_count_law(prior.transition, prior.initial, prior.length, states)
    return float(sum(float(p) * sum(table[c, y] * abs(y - c) for y in range(table.shape[1]))
                     for c, p in enumerate(law)))


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_one_entry_gives_the_closed_form(eps: float) -> None:
    # T = 1: the count is X_1 ∈ A; the pair is δ_1 against δ_0 — randomized response: 1/(1 + e^ε), unless
    # always answering the likelier value is better (error min(Pr[F = 0], Pr[F = 1]))
    balanced = MarkovChainPrior(np.full((2, 2), 0.5), None, 1)
    m = optimal_count_mechanism(balanced, [1], eps)
    assert m.floor == pytest.approx(1 / (1 + math.exp(eps)), abs=1e-9)
    assert m.error == pytest.approx(1 / (1 + math.exp(eps)), abs=1e-9) and m.floor <= m.error + 1e-12
    skewed = MarkovChainPrior(np.array([[0.95, 0.05], [0.95, 0.05]]), None, 1)
    m = optimal_count_mechanism(skewed, [1], eps)
    assert m.floor == pytest.approx(min(1 / (1 + math.exp(eps)), 0.05), abs=1e-9)


def test_the_optimum_is_tight_and_its_audit_equals_enumeration() -> None:
    rng = np.random.default_rng(7)
    for n in range(16):
        k, length = int(rng.integers(2, 4)), int(rng.integers(1, 6))
        start = rng.dirichlet(np.ones(k)) if n % 3 == 0 else None
        prior = MarkovChainPrior(chain_of_kind(rng, k, KINDS[n % 4]), start, length)
        eps = float(rng.choice([0.5, 1.0, 2.0]))
        m = optimal_count_mechanism(prior, [0], eps)
        assert np.all(m.table >= 0) and np.allclose(m.table.sum(axis=1), 1.0)
        truth = brute.table_leakage(prior.transition, prior.initial, length, [0], m.table)
        assert m.audit.eps == pytest.approx(truth, abs=1e-9)
        assert np.all(m.audit.per_pair <= eps + 1e-9)  # every pair within ε …
        if m.audit.eps < eps - 1e-6:  # not tight only when the optimum ignores the data (all rows equal)
            assert np.allclose(m.table, m.table[0]) and m.audit.eps < 1e-9
        else:
            assert m.audit.eps == pytest.approx(eps, abs=1e-6)
        assert m.floor <= m.error + 1e-12
        assert m.error == pytest.approx(_brute_error(prior, [0], m.table), abs=1e-9)


def test_the_floor_agrees_with_a_second_solver() -> None:
    """The same programme by HiGHS's interior-point method on the dense constraint matrix, built here."""
    rng = np.random.default_rng(3)
    for n in range(4):
        prior = MarkovChainPrior(chain_of_kind(rng, 2, KINDS[n]), None, 4)
        m = optimal_count_mechanism(prior, [1], 1.0)
        laws = brute.count_laws(prior.transition, prior.initial, 4, [1])
        weights = np.array([float(v) for v in brute.marginal_count_law(prior.transition, prior.initial, 4, [1])])
        size = 5
        cost = np.array([[weights[c] * abs(y - c) for y in range(size)] for c in range(size)]).reshape(-1)
        rows = []
        for (t, x), p in laws.items():
            for (t2, xp), q in laws.items():
                if t2 == t and xp != x:
                    for y in range(size):
                        row = np.zeros((size, size))
                        row[:, y] = [float(p[c]) - math.e * float(q[c]) for c in range(size)]
                        rows.append(row.reshape(-1))
        a_eq = np.kron(np.eye(size), np.ones((1, size)))
        other = optimize.linprog(cost, A_ub=np.array(rows), b_ub=np.zeros(len(rows)), A_eq=a_eq,
                                 b_eq=np.ones(size), bounds=(0, None), method="highs-ipm")
        assert m.floor == pytest.approx(other.fun, abs=1e-7)


def test_theta_takes_the_worst_prior_and_secrets_only_what_is_protected() -> None:
    rng = np.random.default_rng(12)
    a = MarkovChainPrior(chain_of_kind(rng, 2, "sticky"), None, 4)
    b = MarkovChainPrior(chain_of_kind(rng, 2, "dense"), None, 3)
    both = optimal_count_mechanism([a, b], [1], 1.0)
    assert both.floor >= max(optimal_count_mechanism(a, [1], 1.0).floor - 1e-9, 0.0)
    assert both.error == pytest.approx(both.error_per_prior.max())
    for prior in (a, b):  # the audit holds for each prior of Θ
        laws = count_laws(prior, [1])
        table = both.table[: prior.length + 1, : both.table.shape[1]]
        del laws
        truth = brute.table_leakage(prior.transition, prior.initial, prior.length, [1], table)
        assert truth <= 1.0 + 1e-9


def test_the_floor_is_never_above_a_shipped_mechanism() -> None:
    """Mechanisms × priors: every comparable mechanism's exact expected error is at least the floor."""
    rng = np.random.default_rng(21)
    seen = 0
    for n in range(6):
        k = 2 + n % 2
        prior = MarkovChainPrior(chain_of_kind(rng, k, KINDS[n % 4]), None, 4 + n)
        for eps in (0.5, 1.0, 2.0):
            comparison = compare_with_floor(prior, eps, [0])
            for row in comparison.rows:
                if row.comparable and math.isfinite(row.error):
                    assert row.error >= comparison.floor - 1e-12, row
                    seen += 1
    assert seen >= 60
    histogram = compare_with_floor(MarkovChainPrior(chain_of_kind(rng, 2, "sticky"), None, 3), 1.0)
    assert all(r.error >= histogram.floor for r in histogram.rows if r.comparable)


def test_the_laplace_rows_are_their_noise_in_closed_form() -> None:
    prior = MarkovChainPrior(chain_of_kind(np.random.default_rng(2), 2, "sticky"), None, 6)
    comparison = compare_with_floor(prior, 1.0, [1])
    group = next(r for r in comparison.rows if r.name == "group_dp_laplace")
    assert group.error == pytest.approx(6.0)  # Lap(T/ε) on a count of sensitivity 1: E|Z| = 6
    wasserstein = next(r for r in comparison.rows if r.name == "wasserstein")
    laws = brute.count_laws(prior.transition, prior.initial, 6, [1])
    w = max(brute.w_infinity(p, q) for (t, x), p in laws.items() for (t2, xp), q in laws.items() if t == t2 and x != xp)
    assert wasserstein.error == pytest.approx(w / 1.0)


@pytest.mark.parametrize("runs", [2, 3])
def test_the_leakage_of_k_runs_equals_enumeration(runs: int) -> None:
    rng = np.random.default_rng(40 + runs)
    for n in range(5):
        k, length = 2 + n % 2, 2 + n % 3
        prior = MarkovChainPrior(chain_of_kind(rng, k, KINDS[n % 4]), None, length)
        m = optimal_count_mechanism(prior, [0], 1.0)
        report = repeated_leakage(m, runs, influence_curve(prior))
        truth = brute.table_leakage(prior.transition, prior.initial, length, [0], m.table, runs)
        if math.isinf(truth):
            assert math.isinf(report.leakage)
        else:
            assert report.leakage == pytest.approx(truth, abs=1e-9)
        assert report.k_eps == runs * 1.0 and report.theorem_6_2 is not None


def test_the_optimum_run_twice_can_leak_far_more_than_twice() -> None:
    prior = MarkovChainPrior(chain_of_kind(np.random.default_rng(5), 2, "sticky"), None, 10)
    m = optimal_count_mechanism(prior, [0], 1.0)
    report = repeated_leakage(m, 2, influence_curve(prior))
    assert report.leakage > 2 * report.k_eps  # [C] §4: the optimum does not compose
    assert report.theorem_6_2 <= report.k_eps  # the a(b) route's guarantee composes


def test_a_small_histogram_is_audited_by_enumeration() -> None:
    prior = MarkovChainPrior(chain_of_kind(np.random.default_rng(6), 2, "sticky"), None, 2)
    m = optimal_histogram_mechanism(prior, 1.0)
    assert m.audit.eps == pytest.approx(1.0, abs=1e-6)
    # the histogram (n₀, n₁) of two states is the count of state 1: the same audit by enumeration, with the
    # table read through n₁ (outputs: every (y₀, y₁) on the grid)
    values = [tuple(int(v) for v in row) for row in m.programme.values]
    table = np.array([m.table[values.index((2 - c, c))] for c in range(3)])
    truth = brute.table_leakage(prior.transition, prior.initial, 2, [1], table)
    assert m.audit.eps == pytest.approx(truth, abs=1e-9)


def test_what_does_not_fit_is_refused_with_the_estimate() -> None:
    assert programme_estimate(101, 101, 2000).fits
    assert not programme_estimate(1001, 1001, 40_000).fits
    with pytest.raises(ValueError, match="out of reach"):
        optimal_count_mechanism(MarkovChainPrior(np.full((12, 12), 1 / 12), None, 400), [0], 1.0)
    with pytest.raises(ValueError, match="over the limit"):
        optimal_histogram_mechanism(MarkovChainPrior(np.full((4, 4), 0.25), None, 12), 1.0)
    assert not repeated_estimate(101, 5, 101, 200).fits
    prior = MarkovChainPrior(chain_of_kind(np.random.default_rng(1), 2, "dense"), None, 30)
    with pytest.raises(ValueError, match="runs is out of reach"):
        repeated_leakage(optimal_count_mechanism(prior, [1], 1.0), 6)
    assert count_programme(count_laws(prior, [1])).outputs.shape == (31, 1)
