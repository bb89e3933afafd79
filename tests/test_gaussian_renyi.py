"""Gaussian noise under Rényi Pufferfish (docs/math.md §17), checked against references that share no code.

The count's laws and W∞ against enumeration in exact fractions; every certified divergence against plain
quadrature (a fine trapezoid grid, and mpmath at 30 digits); σ_GWM's divergence ≤ ε on 200+ random chains;
σ* against mpmath at a second accuracy; k releases against a two-dimensional integral.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

from puffer_core import simulate
from puffer_core.accounting.composition import Accountant
from puffer_core.accounting.events import Composition
from puffer_core.accounting.renyi import (
    DIFFERENT_QUERIES,
    RenyiEvent,
    combined_sigma,
    renyi_ledger,
    renyi_to_approx,
)
from puffer_core.data.readers import load_sequences
from puffer_core.engine.influence import influence_curve
from puffer_core.mechanisms.count_laws import count_laws, count_wasserstein
from puffer_core.mechanisms.gaussian import gaussian_count, gaussian_histogram
from puffer_core.mechanisms.gaussian_calibration import (
    Divergences,
    calibrate_gaussian_count,
    gaussian_count_estimate,
    gwm_sigma,
)
from puffer_core.mechanisms.laplace import pufferfish_laplace
from puffer_core.mechanisms.mixtures import make_grid, profile, ratio_bracket, renyi_bracket
from puffer_core.mechanisms.noise import gaussian_alpha_for, gaussian_failure, gaussian_scale_for
from puffer_core.mechanisms.wasserstein import wasserstein_scale
from puffer_core.priors.models import MarkovChainPrior
from puffer_core.secrets.values import Secrets
from tests.support import brute_counts as brute
from tests.support.brute import chain_of_kind

KINDS = ("dense", "sticky", "near-periodic", "sparse", "periodic")


def _random_prior(rng: np.random.Generator, n: int) -> MarkovChainPrior | list[MarkovChainPrior]:
    """A small chain of a named kind; every third one non-stationary, every fifth a Θ of two."""
    k = int(rng.integers(2, 4))
    length = int(rng.integers(1, 6))
    kind = KINDS[n % len(KINDS)]
    start = rng.dirichlet(np.ones(k)) if n % 3 == 0 else None
    prior = MarkovChainPrior(chain_of_kind(rng, k, kind), start, length)
    if n % 5 == 0:
        other = MarkovChainPrior(chain_of_kind(rng, k, KINDS[(n + 1) % len(KINDS)]), None, max(1, length - 1))
        return [prior, other]
    return prior


def _as_list(priors) -> list[MarkovChainPrior]:
    return priors if isinstance(priors, list) else [priors]


def _brute_laws(priors, states, secrets=None):
    """Per prior, the exact laws {(t, x): law} padded to the longest chain."""
    size = max(p.length for p in _as_list(priors)) + 1
    out = []
    for p in _as_list(priors):
        laws = brute.count_laws(p.transition, p.initial, p.length, states)
        out.append({key: law + [Fraction(0)] * (size - len(law)) for key, law in laws.items()})
    return out


# --------------------------------------------------------------------------------------------- the laws


def test_the_count_laws_and_their_w_infinity_equal_enumeration() -> None:
    rng = np.random.default_rng(17)
    for n in range(60):
        priors = _random_prior(rng, n)
        k = _as_list(priors)[0].n_states
        states = [0] if n % 2 else [k - 1]
        secrets = Secrets(positions=(0, 2)) if n % 7 == 3 else None
        laws = count_laws(priors, states, secrets)
        reference = _brute_laws(priors, states)
        for row in range(laws.log_laws.shape[0]):
            law = reference[laws.prior_index[row]][(int(laws.position[row]), int(laws.state[row]))]
            exact = np.array([float(v) for v in law])
            got = np.exp(laws.log_laws[row])
            assert np.array_equal(got > 0, exact > 0)  # the supports are exact
            np.testing.assert_allclose(got, exact, rtol=1e-12, atol=0)
        expected_w = 0
        for i, j in laws.pairs:
            a = reference[laws.prior_index[i]][(int(laws.position[i]), int(laws.state[i]))]
            b = reference[laws.prior_index[j]][(int(laws.position[j]), int(laws.state[j]))]
            expected_w = max(expected_w, brute.w_infinity(a, b))
        assert count_wasserstein(laws, priors).w == expected_w


def test_w_infinity_settles_exact_ties_in_exact_arithmetic() -> None:
    # an i.i.d. chain: the laws under X_t = 1 and X_t = 0 are the same law shifted by one, so every comparison
    # of the shifted distribution functions is an exact tie; W∞ = 1, not 2
    prior = MarkovChainPrior(np.array([[0.3, 0.7], [0.3, 0.7]]), None, 12)
    scale = count_wasserstein(count_laws(prior, [1]), prior)
    assert scale.w == 1 and not scale.near_tie


def test_the_count_w_infinity_of_two_states_is_half_the_exact_histogram_w() -> None:
    # the histogram of two states is (T − n₁, n₁): its L1 W∞ (exact integer flows) is twice the count's
    rng = np.random.default_rng(3)
    for n in range(12):
        prior = MarkovChainPrior(chain_of_kind(rng, 2, KINDS[n % 4]), None, int(rng.integers(2, 12)))
        assert 2 * count_wasserstein(count_laws(prior, [1]), prior).w == wasserstein_scale(prior).w


def test_secrets_restrict_the_pairs() -> None:
    prior = MarkovChainPrior(chain_of_kind(np.random.default_rng(1), 3, "sticky"), None, 5)
    every = count_laws(prior, [0])
    few = count_laws(prior, [0], Secrets(pairs="list", listed=((0, 1),), ordered=True, positions=(2,)))
    assert every.n_pairs == 5 * 6
    assert few.n_pairs == 1
    i, j = few.pairs[0]
    assert (few.position[i], few.state[i], few.state[j]) == (2, 0, 1)


# --------------------------------------------------------------------------------------------- brackets


@pytest.mark.parametrize(("sigma", "alpha"), [(0.05, 2.0), (0.3, 16.0), (1.0, 1.5), (4.0, 5.0), (0.3, 2.0)])
def test_divergence_brackets_hold_the_mpmath_value(sigma: float, alpha: float) -> None:
    rng = np.random.default_rng(int(sigma * 100 + alpha))
    for case in range(2):
        n = int(rng.integers(2, 6))
        p, q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
        if case:
            p[0] = 0.0  # supports that differ
            p /= p.sum()
        p, q = [Fraction(float(v)) for v in p], [Fraction(float(v)) for v in q]
        with np.errstate(divide="ignore"):
            logs = np.log(np.array([[float(v) for v in p], [float(v) for v in q]]))
        grid = make_grid(sigma, -(alpha + 8) * sigma - 2, n + (alpha + 8) * sigma + 2, min(sigma, 1.0) / 32)
        shape = profile(logs, grid)
        bracket = renyi_bracket(shape, shape, np.array([0]), np.array([1]), grid, alpha, 1e-15)
        truth = brute.renyi_mpmath(p, q, sigma, alpha)
        assert bracket.low[0] <= truth <= bracket.high[0]
        ratio = ratio_bracket(shape, shape, np.array([0]), np.array([1]), grid, 1e-15)
        reference = brute.log_ratio_reference(p, q, sigma)
        if math.isinf(reference):
            assert math.isinf(ratio.high[0])
        else:
            assert ratio.high[0] >= reference - 1e-9 and ratio.low[0] <= reference + 1e-9


def test_the_gwm_divergence_is_at_most_eps_on_200_random_chains() -> None:
    """For each chain, every protected pair's divergence at σ_GWM, by quadrature of the enumerated laws, is ≤ ε;
    the certified bracket holds that value (never below the truth)."""
    rng = np.random.default_rng(2024)
    checked = 0
    for n in range(210):
        priors = _random_prior(rng, n)
        k = _as_list(priors)[0].n_states
        states = [int(rng.integers(k))]
        alpha = float(rng.choice([1.5, 2.0, 4.0, 10.0]))
        eps = float(rng.choice([0.2, 1.0, 3.0]))
        laws = count_laws(priors, states)
        scale = count_wasserstein(laws, priors)
        if scale.w == 0:
            continue
        sigma = gwm_sigma(scale.w, alpha, eps)
        div = Divergences(laws, scale.w)
        at = div.renyi(sigma, alpha, tolerance=1e-6)
        reference = _brute_laws(priors, states)
        for row, (i, j) in enumerate(laws.pairs):
            a = reference[laws.prior_index[i]][(int(laws.position[i]), int(laws.state[i]))]
            b = reference[laws.prior_index[j]][(int(laws.position[j]), int(laws.state[j]))]
            truth = brute.renyi_reference(a, b, sigma, alpha)
            assert truth <= eps * (1 + 1e-9) + 1e-12
            assert at.low[row] - 1e-9 <= truth <= at.high[row] + 1e-9
        checked += 1
    assert checked >= 200


# --------------------------------------------------------------------------------------------- σ*


def test_sigma_star_is_certified_tight_and_below_the_gwm_at_a_second_accuracy() -> None:
    """σ* against quadrature of the enumerated laws: every pair within ε at σ*, some pair above ε 0.1 % below it;
    the worst pair's divergence at σ* again by mpmath at 25 digits, inside the certified bracket."""
    rng = np.random.default_rng(11)
    for n, (k, length, kind) in enumerate(
        [(2, 3, "sticky"), (3, 4, "near-periodic"), (2, 5, "dense"), (3, 3, "sparse"), (2, 4, "periodic")]
    ):
        start = rng.dirichlet(np.ones(k)) if n % 2 else None
        prior = MarkovChainPrior(chain_of_kind(rng, k, kind), start, length)
        eps, alpha = [0.5, 1.0, 2.0][n % 3], [2.0, 3.0][n % 2]
        cal, _ = calibrate_gaussian_count(prior, [0], eps, alpha)
        assert cal.sigma <= cal.sigma_gwm
        reference = brute.count_laws(prior.transition, prior.initial, prior.length, [0])
        pairs = [(reference[(t, x)], reference[(t, xp)]) for (t, x) in reference for (t2, xp) in reference
                 if t2 == t and xp != x]
        if cal.w == 0:  # the count's law is the same under every secret (a periodic chain): no noise needed
            assert cal.sigma == 0 and all(p == q for p, q in pairs)
            continue
        assert cal.floor <= cal.sigma <= cal.floor * (1 + 2e-4)
        at = [brute.renyi_reference(p, q, cal.sigma, alpha) for p, q in pairs]
        below = [brute.renyi_reference(p, q, cal.sigma * (1 - 1e-3), alpha) for p, q in pairs]
        assert max(at) <= eps and max(at) <= cal.divergence + 1e-9
        assert max(below) > eps  # σ* is within 0.1 % of the smallest σ that meets ε
        worst = pairs[int(np.argmax(at))]
        second = brute.renyi_mpmath(worst[0], worst[1], cal.sigma, alpha)
        assert cal.divergence_low - 1e-9 <= second <= cal.divergence + 1e-9
        assert abs(second - max(at)) < 1e-9


def test_sigma_star_never_exceeds_the_gwm_and_meets_eps_on_random_chains() -> None:
    rng = np.random.default_rng(5)
    for n in range(24):
        priors = _random_prior(rng, n)
        cal, div = calibrate_gaussian_count(priors, [0], float(rng.choice([0.5, 1.0, 2.0])), 2.0)
        assert cal.sigma <= cal.sigma_gwm + 1e-12
        assert cal.divergence <= cal.eps
        if cal.sigma > 0:
            assert 0 <= cal.variance_saved < 1


def test_k_releases_equal_one_release_at_the_combined_sigma_by_a_two_dimensional_integral() -> None:
    rng = np.random.default_rng(8)
    for n, length in enumerate((2, 4, 6)):
        prior = MarkovChainPrior(chain_of_kind(rng, 2, KINDS[n]), None, length)
        mech = gaussian_count(prior, [1], 1.0, 2.0)
        ledger = renyi_ledger([mech.accounting, mech.accounting])
        assert ledger.sigma[1] == pytest.approx(mech.sigma / math.sqrt(2), rel=1e-14)
        reference = brute.count_laws(prior.transition, prior.initial, length, [1])
        pairs = [(reference[a], reference[b]) for t in range(length) for a, b in (((t, 0), (t, 1)), ((t, 1), (t, 0)))
                 if a in reference and b in reference]
        # the worst pair of the one-dimensional reference at σ/√2, then its two-release law in two dimensions
        one = [brute.renyi_reference(p, q, mech.sigma / math.sqrt(2), 2.0) for p, q in pairs]
        worst = _two_release_divergence(*pairs[int(np.argmax(one))], mech.sigma, 2.0)
        assert worst == pytest.approx(max(one), abs=1e-8)
        assert worst <= ledger.eps[1] + 1e-9
        assert worst >= ledger.eps[1] - 1e-4  # the certified account is tight
        assert ledger.eps_gwm[1] == pytest.approx(2 * mech.accounting.eps_gwm)


def _two_release_divergence(p, q, sigma: float, alpha: float) -> float:
    """D_α of the joint law of two noisy copies of the count, on a 2-D grid (trapezoid in both directions),
    in log space: log f(y₁, y₂) = log Σ_c law_c·φ_σ(y₁ − c)·φ_σ(y₂ − c)."""
    n = len(p)
    reach = 12 * sigma + 2 * n  # a smooth integrand with Gaussian tails: the trapezoid's error is ~e^(−2π²·16)
    y = np.linspace(-reach, n - 1 + reach, int((n - 1 + 2 * reach) / (sigma / 4)) + 1)
    c = np.arange(n)
    log_phi = -((y[:, None] - c[None, :]) ** 2) / (2 * sigma**2) - math.log(sigma * math.sqrt(2 * math.pi))
    with np.errstate(divide="ignore"):
        lp, lq = np.log([float(v) for v in p]), np.log([float(v) for v in q])
    cells_p = log_phi[:, None, :] + log_phi[None, :, :] + lp[None, None, :]
    cells_q = log_phi[:, None, :] + log_phi[None, :, :] + lq[None, None, :]
    log_f = alpha * logsumexp(cells_p, axis=2) + (1 - alpha) * logsumexp(cells_q, axis=2)
    top = log_f.max()
    integral = np.trapezoid(np.trapezoid(np.exp(log_f - top), y, axis=1), y)
    return (math.log(integral) + top) / (alpha - 1)


# --------------------------------------------------------------------------------------------- accounting


def test_the_conversion_to_eps_delta_holds_on_the_worst_set() -> None:
    prior = MarkovChainPrior(chain_of_kind(np.random.default_rng(2), 2, "sticky"), None, 4)
    mech = gaussian_count(prior, [1], 1.0, 3.0)
    delta = 1e-3
    eps_delta = mech.accounting.approximate(delta)
    assert eps_delta == pytest.approx(mech.accounting.eps + math.log(1 / delta) / 2)
    reference = brute.count_laws(prior.transition, prior.initial, 4, [1])
    y = np.linspace(-40, 44, 200001)
    for (t, x), p in reference.items():
        for (t2, xp), q in reference.items():
            if t2 != t or xp == x:
                continue
            fp = np.exp(brute._log_mixture(p, y, mech.sigma))
            fq = np.exp(brute._log_mixture(q, y, mech.sigma))
            worst = np.trapezoid(np.maximum(fp - math.exp(eps_delta) * fq, 0.0), y)  # sup_S P(S) − e^ε Q(S)
            assert worst <= delta


def test_renyi_events_convert_and_refuse_what_is_not_proven() -> None:
    assert renyi_to_approx(2.0, 1.0, math.exp(-3)) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="above 1"):
        renyi_to_approx(1.0, 1.0, 0.1)
    a = RenyiEvent("gaussian", 2.0, 1.0, 2.0, 2.0, "count A")  # the GWM's bound: 2·2²/(2·2²) = 1
    b = RenyiEvent("gaussian", 2.0, 1.0, 2.0, 2.0, "count B")
    with pytest.raises(ValueError) as info:
        renyi_ledger([a, b])
    assert str(info.value) == DIFFERENT_QUERIES and "no composition theorem" in str(info.value)
    ledger = renyi_ledger([a, a, a], delta=1e-5)
    assert ledger.sigma[-1] == pytest.approx(2.0 / math.sqrt(3))
    np.testing.assert_allclose(ledger.eps, [1.0, 2.0, 3.0])  # the GWM bound adds up over the same query
    np.testing.assert_allclose(ledger.eps_delta, ledger.eps + math.log(1e5))
    assert not ledger.exact and all(math.isinf(v) for v in ledger.eps_puffer)
    with pytest.raises(ValueError, match="GWM"):
        RenyiEvent("gaussian", 2.0, 0.1, 2.0, 2.0, "count A")  # below the GWM bound with no exact account
    assert combined_sigma([3.0, 4.0]) == pytest.approx(12 / 5)


def test_two_releases_of_a_count_can_cost_more_than_twice_one() -> None:
    """The exact account is the divergence at σ/√2, which for a mixture can exceed twice the divergence at σ:
    Rényi DP's additive rule would understate it.  On a near-periodic chain (6 entries) two releases at
    σ* for ε = 1 cost about 8.5, not 2 (checked by the two-dimensional integral above)."""
    prior = MarkovChainPrior(np.array([[0.01068729, 0.98931271], [0.96993743, 0.03006257]]), None, 6)
    mech = gaussian_count(prior, [1], 1.0, 2.0)
    ledger = renyi_ledger([mech.accounting] * 2)
    assert ledger.exact and ledger.eps[1] <= ledger.eps_gwm[1]
    assert ledger.naive_sum[1] == pytest.approx(2 * mech.accounting.eps)
    assert ledger.eps[1] > 4 * ledger.naive_sum[1]
    reference = brute.count_laws(prior.transition, prior.initial, 6, [1])
    truth = _two_release_divergence(reference[(0, 1)], reference[(0, 0)], mech.sigma, 2.0)
    assert truth <= ledger.eps[1] + 1e-9 and truth > 4 * ledger.naive_sum[1]


# --------------------------------------------------------------------------------------------- the mechanism


def test_the_gaussian_mechanism_draws_its_law_and_states_its_accuracy() -> None:
    prior = MarkovChainPrior(chain_of_kind(np.random.default_rng(4), 2, "dense"), None, 6)
    mech = gaussian_count(prior, [1], 1.0)
    draws = mech.simulate(np.array([3.0]), 200_000, np.random.default_rng(0))[:, 0] - 3.0
    assert abs(draws.std() - mech.sigma) < 0.01 * mech.sigma
    assert abs(np.abs(draws).mean() - mech.expected_abs_error) < 0.01 * mech.sigma
    alpha = mech.alpha_for(0.05)
    assert abs(np.mean(np.abs(draws) > alpha) - 0.05) < 0.003
    assert mech.failure(alpha) <= 0.05 and mech.interval_halfwidth(0.95) == pytest.approx(alpha)
    assert gaussian_failure(gaussian_alpha_for(2.0, 1e-6), 2.0) <= 1e-6
    assert gaussian_failure(3.0, gaussian_scale_for(3.0, 0.01)) <= 0.01
    assert mech.release([3.0]).shape == (1,)  # OpenDP's sampler
    hist = gaussian_histogram(prior, 1.0)
    assert hist.sigma == pytest.approx(math.sqrt(2) * hist.calibration.sigma)
    assert hist.release(np.array([4.0, 2.0]), rng=np.random.default_rng(1)).shape == (2,)


def test_the_histogram_of_more_states_uses_the_l1_distance_over_root_two() -> None:
    prior = MarkovChainPrior(chain_of_kind(np.random.default_rng(9), 3, "sticky"), None, 5)
    mech = gaussian_histogram(prior, 1.0, 2.0)
    w1 = wasserstein_scale(prior).w
    assert mech.sigma == pytest.approx(w1 / math.sqrt(2) * math.sqrt(2 / 2.0))
    assert not mech.accounting.exact and math.isinf(mech.accounting.eps_puffer)


def test_simulate_and_the_general_ledger_take_gaussian_releases() -> None:
    rng = np.random.default_rng(11)
    rows = []
    for user in range(30):
        state = int(rng.integers(2))
        for t in range(int(rng.integers(3, 7))):
            if rng.random() > 0.7:
                state = 1 - state
            rows.append({"user": f"u{user}", "time": t, "state": "ab"[state]})
    data = load_sequences(pd.DataFrame(rows))
    result = simulate(data, query="histogram", mechanisms=["gaussian", "pufferfish_laplace"], eps_grid=(1.0,),
                      trials=20, rng=0, releases=2, release_mode="repeat")
    ledger = result.ledger[result.ledger["mechanism"] == "gaussian"]
    assert list(ledger["composition"]) == ["renyi", "renyi"]
    assert all(math.isinf(v) for v in ledger["cumulative_eps_puffer"])  # no pure ε: the laws' ends differ
    prior = MarkovChainPrior(np.array([[0.7, 0.3], [0.4, 0.6]]), None, 4)
    event = gaussian_count(prior, [1], 1.0).accounting
    totals = Accountant(4).ledger([event] * 3)
    assert totals.composition is Composition.RENYI and totals.eps_puffer.shape == (3,)
    with pytest.raises(ValueError, match="different kinds"):
        Accountant(4).ledger([event, pufferfish_laplace(influence_curve(prior), 1.0).accounting])


def test_work_beyond_the_limits_is_refused_with_the_estimate() -> None:
    assert gaussian_count_estimate(2, 100, 2.0, 1.0).fits
    estimate = gaussian_count_estimate(12, 1500, 2.0, 1.0)
    assert not estimate.fits and "exact σ*" in estimate.message
    with pytest.raises(ValueError, match="out of reach"):
        calibrate_gaussian_count(MarkovChainPrior(np.full((12, 12), 1 / 12), None, 1500), [0], 1.0)
    with pytest.raises(ValueError, match="every state"):
        count_laws(MarkovChainPrior(np.full((2, 2), 0.5), None, 3), [0, 1])


def test_sigma_star_falls_back_to_gwm_when_nothing_can_be_certified(monkeypatch: pytest.MonkeyPatch) -> None:
    """A certifier that never decides (every bracket [0, ∞)) cannot certify any σ, σ_GWM included: the search ends
    (bounded loop) at σ_GWM, which the GWM's theorem makes sound, says so, and reports D_α ≤ α·W∞²/(2σ²_GWM) = ε."""
    from puffer_core.mechanisms import gaussian_calibration as gc

    chain = MarkovChainPrior([[0.9, 0.1], [0.3, 0.7]], length=5)
    honest, _ = calibrate_gaussian_count(chain, [1], 0.5, 2.0)
    assert honest.search_note == "" and honest.sigma < honest.sigma_gwm

    def undecided(self, sigma, alpha, rows=None, tolerance=1e-6, threshold=None, rounds=40):  # noqa: ANN001, ANN202
        rows = np.arange(self.laws.n_pairs) if rows is None else np.asarray(rows, dtype=int)
        return gc.PairBrackets(sigma, rows, np.zeros(rows.size), np.full(rows.size, np.inf))

    monkeypatch.setattr(gc.Divergences, "renyi", undecided)
    cal, _ = calibrate_gaussian_count(chain, [1], 0.5, 2.0)
    w = honest.w
    assert cal.sigma == cal.sigma_gwm == pytest.approx(w * math.sqrt(2.0 / (2 * 0.5)), rel=1e-12)
    assert cal.variance_saved == 0.0 and cal.floor <= cal.sigma
    assert cal.divergence == pytest.approx(0.5, rel=1e-12)  # the GWM's bound, not the certifier's ∞
    assert "σ* = σ_GWM" in cal.search_note and "theorem" in cal.search_note and cal.search_note in cal.describe()
