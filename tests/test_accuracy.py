"""Accuracy first (puffer_core.mechanisms.accuracy): the error laws against the samplers that draw them,
the inversions against direct sums, and the round trip target → ε → release → measured error.

Independent references: OpenDP's own samplers (the law the mechanisms draw), the exponential
mechanism's enumeration of every ranking (ExponentialTopK.probabilities), direct numpy sampling of
noisy counts, direct sums of the discrete Laplace pmf, and the mechanisms built by make_mechanism.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from puffer_core import (
    CountTarget,
    MarkovChainPrior,
    TopKTarget,
    accuracy_at,
    accuracy_first,
    binary_chain_curve,
    certify,
    fit_markov_chain,
    influence_curve,
    load_dataset,
    make_mechanism,
    mqm_eps_for_scale,
    mqm_noise_scale,
    pufferfish_exponential,
)
from puffer_core.mechanisms.laplace import group_dp_laplace, mqm_laplace, pufferfish_laplace
from puffer_core.mechanisms.noise import (
    OPENDP_GRANULARITY,
    gumbel_hit_at_counts,
    joint_failure,
    laplace_alpha_for,
    laplace_failure,
    laplace_scale_for,
    per_count_failure,
    simulate_critical_scales,
    topk_hit_at_gap,
)

TRUE_DRAWS = 1 - 1e-6  # the confidence of a check on draws that cannot be seeded (OpenDP's)


def _inside(hits: int, n: int, p: float, confidence: float = 0.999) -> bool:
    """p lies in the two-sided Clopper–Pearson interval of hits/n."""
    tail = (1 - confidence) / 2
    low = 0.0 if hits == 0 else stats.beta.ppf(tail, hits, n - hits + 1)
    high = 1.0 if hits == n else stats.beta.ppf(1 - tail, hits + 1, n - hits)
    return low <= p <= high


def _at_least(hits: int, n: int, p: float, confidence: float = 0.999) -> bool:
    """hits/n is not significantly below p (one-sided)."""
    high = 1.0 if hits == n else stats.beta.ppf(confidence, hits + 1, n - hits)
    return high >= p


# --------------------------------------------------------------------------------------------
# the Laplace laws


def _integer_pmf_mass(alpha: float, scale: float) -> float:
    """Pr[|Z| ≤ α] for Pr[Z = z] ∝ e^(−|z|/s) on the integers, by a direct sum."""
    z = np.arange(-4000, 4001)
    w = np.exp(-np.abs(z) / scale)
    return float(w[np.abs(z) <= alpha].sum() / w.sum())


@pytest.mark.parametrize("scale", [0.3, 1.0, 2.5, 17.0])
@pytest.mark.parametrize("alpha", [0.5, 1.0, 3.0, 7.9])
def test_the_integer_law_is_the_discrete_laplace_sum(alpha: float, scale: float) -> None:
    assert 1 - laplace_failure(alpha, scale, "integer") == pytest.approx(_integer_pmf_mass(alpha, scale), rel=1e-12)


def test_the_opendp_lattice_is_the_continuous_law_in_double_precision() -> None:
    for alpha, scale in [(1.0, 1.0), (5.0, 0.1), (1e-3, 4.0), (123.0, 50.0)]:
        assert laplace_failure(alpha, scale, "opendp") == math.exp(-alpha / scale)
        assert laplace_failure(alpha, scale, "continuous") == math.exp(-alpha / scale)
    assert OPENDP_GRANULARITY == 2.0**-1074


def test_the_laws_match_what_opendp_draws() -> None:
    """The float sampler behind LaplaceCounts.release and OpenDP's integer sampler, drawn for real.

    OpenDP's draws cannot be seeded, so every run draws anew: each check is at a one-in-a-million false alarm
    (TRUE_DRAWS), not the 0.999 of the seeded checks; at 0.999 the run failed by chance about once in 200 runs
    (a 3.4σ count of zeros, seen beside two CPU burners).  60,000 draws keep the checks at least as sharp as
    20,000 at 0.999 were.
    """
    import opendp.prelude as dp

    dp.enable_features("contrib")
    n, scale, alpha = 60_000, 3.0, 4.0
    floats = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n), dp.l1_distance(T=float), scale=scale
    )
    noise = np.array(floats([10.0] * n)) - 10.0
    assert _inside(int((np.abs(noise) <= alpha).sum()), n, 1 - laplace_failure(alpha, scale, "opendp"), TRUE_DRAWS)
    ints = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int), size=n), dp.l1_distance(T=int), scale=scale)
    noise = np.array(ints([10] * n)) - 10
    assert np.all(noise == np.round(noise))
    for a in (0.5, 2.0, 4.0):
        assert _inside(int((np.abs(noise) <= a).sum()), n, 1 - laplace_failure(a, scale, "integer"), TRUE_DRAWS)
    # the mechanism's own release uses the float sampler with its scale
    mechanism = pufferfish_laplace(binary_chain_curve(0.9, 0.8, 9, 10), 2.0)
    drawn = np.concatenate([mechanism.release(np.full(6000, 5.0)) - 5.0 for _ in range(5)])
    assert _inside(int((np.abs(drawn) <= alpha).sum()), drawn.size, 1 - laplace_failure(alpha, mechanism.scale),
                   TRUE_DRAWS)


@pytest.mark.parametrize("law", ["opendp", "continuous", "integer"])
@pytest.mark.parametrize("alpha,failure", [(5.0, 0.05), (1.0, 0.3), (40.0, 1e-6), (0.5, 0.5), (3.0, 0.01)])
def test_the_scale_found_is_the_largest_that_meets_the_target(law: str, alpha: float, failure: float) -> None:
    scale = laplace_scale_for(alpha, failure, law)
    assert laplace_failure(alpha, scale, law) <= failure
    assert laplace_failure(alpha, scale * (1 + 1e-9), law) > failure  # a hair more noise fails


@pytest.mark.parametrize("law", ["opendp", "integer"])
@pytest.mark.parametrize("scale", [0.4, 2.0, 30.0])
def test_the_error_bound_found_is_the_smallest_that_holds(law: str, scale: float) -> None:
    for failure in (0.5, 0.05, 1e-4):
        alpha = laplace_alpha_for(scale, failure, law)
        if law == "integer":
            assert alpha == int(alpha)
            assert (1 - _integer_pmf_mass(alpha, scale)) <= failure + 1e-12
            if alpha >= 1:
                assert (1 - _integer_pmf_mass(alpha - 1, scale)) > failure
        else:
            assert laplace_failure(alpha, scale, law) == pytest.approx(failure, rel=1e-12)


def test_all_counts_at_once_exactly_and_by_the_union_bound() -> None:
    beta, m = 0.05, 12
    exact = per_count_failure(beta, m, "all")
    assert (1 - exact) ** m == pytest.approx(1 - beta, rel=1e-14)
    assert per_count_failure(beta, m, "union") == beta / m < exact  # the union bound asks for more
    assert joint_failure(exact, m, "all") == pytest.approx(beta, rel=1e-12)
    assert per_count_failure(beta, m, "each") == beta
    t_all = CountTarget(10.0, beta, m, "all")
    t_union = CountTarget(10.0, beta, m, "union")
    assert t_union.scale() < t_all.scale()
    assert t_all.achieved(t_all.scale()) == pytest.approx(1 - beta, rel=1e-12)


# --------------------------------------------------------------------------------------------
# top-k


def _true_sets_probability(counts: np.ndarray, k: int, scale: float) -> float:
    """Sum of the exponential mechanism's exact ranking probabilities over rankings that form a true top-k set."""
    curve = binary_chain_curve(0.9, 0.8, 3, 4)
    mechanism = pufferfish_exponential(curve, 1.0, k=k)
    # a mechanism whose Gumbel scale is `scale`: ε_DP = 2k/scale, through the record directly
    from dataclasses import replace

    from puffer_core.accounting.calibration import Calibration

    event = replace(mechanism.accounting, calibration=Calibration(2 * k / scale, 2 * k / scale, 4, 0.0, True))
    mechanism = replace(mechanism, accounting=event)
    assert mechanism.gumbel_scale == pytest.approx(scale)
    probs = mechanism.probabilities(counts)
    threshold = np.sort(counts)[::-1][k - 1]
    sure = set(np.flatnonzero(counts > threshold))
    ok = [counts[list(o)].min() >= threshold and sure <= set(o) for o in mechanism.outputs(counts.size)]
    return float(probs[ok].sum())


@pytest.mark.parametrize(
    "counts,k",
    [
        ([10, 7, 7, 3, 1], 2),
        ([10, 7, 7, 3, 1], 1),
        ([5, 5, 5, 2, 2], 2),
        ([9, 8, 8, 8, 1, 0], 3),
        ([3, 3, 3, 3], 2),
        ([40, 2, 1, 0, 0, 0], 1),
    ],
)
@pytest.mark.parametrize("scale", [0.5, 3.0, 25.0])
def test_the_exponential_mechanisms_hit_probability_is_exact(counts, k, scale) -> None:
    values = np.asarray(counts, dtype=float)
    assert gumbel_hit_at_counts(values, k, scale) == pytest.approx(_true_sets_probability(values, k, scale), abs=1e-12)


def test_the_worst_case_of_a_gap_is_the_tied_configuration() -> None:
    rng = np.random.default_rng(0)
    k, m, gap, scale = 2, 6, 3.0, 2.0
    worst = topk_hit_at_gap(k, m, gap, scale, "gumbel")
    tied = np.array([gap, gap, 0, 0, 0, 0])
    assert worst == pytest.approx(gumbel_hit_at_counts(tied, k, scale), rel=1e-12)
    for _ in range(30):  # any counts whose k-th largest exceeds the next by ≥ gap do at least as well
        top = gap + rng.uniform(0, 5, size=k)
        rest = rng.uniform(-5, 0, size=m - k)
        values = np.concatenate([top, rest]) + 10
        assert gumbel_hit_at_counts(values, k, scale) >= worst - 1e-12
    # the chance level at infinite noise, and certainty without noise
    assert topk_hit_at_gap(k, m, gap, 1e9, "gumbel") == pytest.approx(1 / math.comb(m, k), rel=1e-6)
    assert topk_hit_at_gap(k, m, gap, 1e-3, "laplace") == pytest.approx(1.0)


@pytest.mark.parametrize("k,m", [(1, 2), (1, 5), (2, 5), (3, 12)])
def test_the_laplace_integral_against_direct_sampling(k: int, m: int) -> None:
    gap, scale, n = 4.0, 3.0, 60_000
    counts = np.concatenate([np.full(k, gap), np.zeros(m - k)])
    noisy = counts + np.random.default_rng(k * m).laplace(0, scale, size=(n, m))
    top = np.argsort(-noisy, axis=1)[:, :k]
    hits = int(np.all(top < k, axis=1).sum())
    assert _inside(hits, n, topk_hit_at_gap(k, m, gap, scale, "laplace"))


def test_one_simulation_serves_every_scale_and_agrees_with_direct_draws() -> None:
    counts = np.array([30.0, 28, 20, 20, 5, 1])
    k = 3
    sim = simulate_critical_scales(counts, k, "laplace", 40_000, seed=1)
    for scale in (1.0, 4.0, 15.0):
        p, low, high = sim.probability(scale)
        noisy = counts + np.random.default_rng(int(scale)).laplace(0, scale, size=(40_000, counts.size))
        chosen = np.sort(np.argsort(-noisy, axis=1)[:, :k], axis=1)
        right = np.all(chosen == [0, 1, 2], axis=1) | np.all(chosen == [0, 1, 3], axis=1)
        assert low - 0.01 <= right.mean() <= high + 0.01
    estimate, guaranteed = sim.scale_for(0.8)
    assert guaranteed <= estimate
    assert sim.probability(guaranteed)[0] >= 0.8
    # exact probabilities are monotone in the scale; so are the simulated ones (one set of draws)
    grid = np.geomspace(0.1, 100, 40)
    assert np.all(np.diff([gumbel_hit_at_counts(counts, k, s) for s in grid]) <= 1e-12)  # to rounding
    assert np.all(np.diff([sim.probability(s)[0] for s in grid]) <= 0)


# --------------------------------------------------------------------------------------------
# MQM's ε for a noise scale


def test_mqm_noise_falls_with_eps_and_the_inversion_lands_on_it() -> None:
    prior = MarkovChainPrior([[0.8, 0.15, 0.05], [0.1, 0.7, 0.2], [0.3, 0.3, 0.4]], length=25)
    grid = np.geomspace(0.05, 40, 60)
    sigmas = np.array([mqm_noise_scale(prior, e) for e in grid])
    assert np.all(np.diff(sigmas) < 0)  # strictly decreasing
    assert np.all(sigmas >= 1 / grid - 1e-12) and np.all(sigmas <= prior.length / grid + 1e-9)  # the bracket
    for target in (50.0, 3.0, 0.4):
        eps = mqm_eps_for_scale(prior, target)
        assert mqm_noise_scale(prior, eps) <= target
        assert mqm_noise_scale(prior, eps * (1 - 1e-6)) > target  # no smaller ε gives that noise


# --------------------------------------------------------------------------------------------
# the round trip: target → ε → the release at that ε → measured error


@pytest.fixture(scope="module")
def seattle():
    data = load_dataset("seattle-weather")
    prior = fit_markov_chain(data)
    return data, prior, influence_curve(prior)


@pytest.mark.parametrize("joint", ["each", "union", "all"])
def test_round_trip_counts_within_alpha(seattle, joint: str) -> None:
    data, prior, curve = seattle
    counts = np.bincount(data.codes, minlength=data.n_states).astype(float)
    target = CountTarget(alpha=25.0, beta=0.1, counts=data.n_states, joint=joint)
    plan = accuracy_first(target, curve, prior)
    assert {c.mechanism for c in plan.costs} == {"pufferfish_laplace", "mqm", "group_dp_laplace"}
    builders = {
        "pufferfish_laplace": lambda e: pufferfish_laplace(curve, e),
        "group_dp_laplace": lambda e: group_dp_laplace(curve, e),
        "mqm": lambda e: mqm_laplace(prior, e),
    }
    n = 20_000
    for i, cost in enumerate(plan.costs):
        mechanism = builders[cost.mechanism](cost.eps_puffer)  # built again, independently of the plan
        assert mechanism.noise_scale <= target.scale() * (1 + 1e-12)
        draws = mechanism.simulate(counts, n, np.random.default_rng(10 + i))
        errors = np.abs(draws - counts)
        if joint == "each":
            hits = int((errors[:, 0] <= target.alpha).sum())  # one count on its own
            assert _inside(hits, n, 1 - target.beta) if cost.noise_scale > 0.999 * target.scale() else True
        else:
            hits = int((errors.max(axis=1) <= target.alpha).sum())
            assert _at_least(hits, n, 1 - target.beta)
            if joint == "all":
                assert _inside(hits, n, 1 - target.beta)  # the exact law: neither short nor wasteful
    # Pufferfish's ε is the certified one for that ε_DP; group DP pays T times the ε_DP
    by = {c.mechanism: c for c in plan.costs}
    assert by["pufferfish_laplace"].eps_puffer == pytest.approx(certify(curve, 2 / target.scale()).eps_puffer)
    assert by["group_dp_laplace"].eps_puffer == pytest.approx(curve.length * 2 / target.scale())
    assert by["pufferfish_laplace"].eps_puffer <= by["group_dp_laplace"].eps_puffer


def test_round_trip_top_k_for_every_gap_and_for_given_counts(seattle) -> None:
    data, prior, curve = seattle
    m, k = data.n_states, 2
    target = TopKTarget(k=k, hit=0.9, n_states=m, gap=30.0)
    plan = accuracy_first(target, curve, prior)
    assert plan.exact
    worst = np.concatenate([np.full(k, 130.0), np.full(m - k, 100.0)])
    easier = np.array([160.0, 131.0, 100.0, 90.0, 20.0])
    n = 20_000
    for i, cost in enumerate(plan.costs):
        mechanism = make_mechanism(cost.mechanism, cost.eps_puffer, curve, prior, "topk", k, m)
        for counts, exact in ((worst, True), (easier, False)):
            ranking = mechanism.ranking(mechanism.simulate(counts, n, np.random.default_rng(100 + i)), k)
            right = np.sort(ranking, axis=1)
            hits = int(np.all(right == np.sort(np.argsort(-counts)[:k]), axis=1).sum())
            assert _at_least(hits, n, 0.9)
            if exact:
                assert _inside(hits, n, cost.achieved)
    # the counts of the data themselves, simulated for the sorted Laplace counts (with an interval)
    counts = tuple(np.bincount(data.codes, minlength=m).astype(float))
    given = TopKTarget(k=k, hit=0.9, n_states=m, counts=counts, draws=20_000, seed=3)
    plan = accuracy_first(given, curve, prior)
    assert not plan.exact
    for i, cost in enumerate(plan.costs):
        mechanism = make_mechanism(cost.mechanism, cost.eps_puffer, curve, prior, "topk", k, m)
        ranking = mechanism.ranking(mechanism.simulate(np.array(counts), n, np.random.default_rng(200 + i)), k)
        hits = int(np.all(np.sort(ranking, axis=1) == np.sort(np.argsort(counts)[::-1][:k]), axis=1).sum())
        assert _at_least(hits, n, 0.9)


def test_the_reverse_reads_the_same_noise(seattle) -> None:
    _, prior, curve = seattle
    target = CountTarget(alpha=10.0, beta=0.05, counts=5, joint="all")
    plan = accuracy_first(target, curve, prior)
    for cost in plan.costs:
        (back,) = accuracy_at(cost.eps_puffer, target, curve, prior, mechanisms=[cost.mechanism])
        assert back.noise_scale == pytest.approx(cost.noise_scale)
        assert back.beta <= target.beta * (1 + 1e-9) and back.alpha <= target.alpha * (1 + 1e-9)
    # a smaller ε is less accurate for every mechanism
    low = {a.mechanism: a for a in accuracy_at(0.5, target, curve, prior)}
    high = {a.mechanism: a for a in accuracy_at(5.0, target, curve, prior)}
    assert all(low[m].alpha > high[m].alpha for m in low)
    assert low["pufferfish_laplace"].fallback  # at 0.5 on months of weather the curve falls back


def test_mqm_is_skipped_without_the_chain() -> None:
    curve = binary_chain_curve(0.9, 0.8, 19, 20)
    plan = accuracy_first(CountTarget(5.0, 0.05), curve)
    assert "mqm" in plan.skipped and "Markov chain" in plan.skipped["mqm"]
    assert [c.mechanism for c in plan.costs] == ["pufferfish_laplace", "group_dp_laplace"]


def test_absurd_targets_are_refused_with_what_to_change() -> None:
    with pytest.raises(ValueError, match="α .* > 0.*infinite ε"):
        CountTarget(0.0, 0.05)
    with pytest.raises(ValueError, match="α"):
        CountTarget(-1.0, 0.05)
    for beta in (0.0, 1.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="β .*strictly between 0 and 1"):
            CountTarget(5.0, beta)
    with pytest.raises(ValueError, match="joint"):
        CountTarget(5.0, 0.05, joint="most")
    with pytest.raises(ValueError, match="h = 1 cannot be reached"):
        TopKTarget(1, 1.0, 5, gap=3.0)
    with pytest.raises(ValueError, match="reached by pure noise.*0.2"):
        TopKTarget(1, 0.2, 5, gap=3.0)
    with pytest.raises(ValueError, match="gap"):
        TopKTarget(1, 0.9, 5, gap=0.0)
    with pytest.raises(ValueError, match="either gap .* or counts"):
        TopKTarget(1, 0.9, 5)
    with pytest.raises(ValueError, match="k = m = 5"):
        TopKTarget(5, 0.9, 5, gap=1.0)
    with pytest.raises(ValueError, match="3 counts for n_states = 5"):
        TopKTarget(1, 0.9, 5, counts=(1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match="cannot certify"):
        simulate_critical_scales([5.0, 4.0, 1.0], 1, "laplace", draws=100).scale_for(0.999)
    with pytest.raises(ValueError, match="cannot answer this target"):
        curve = binary_chain_curve(0.9, 0.8, 9, 10)
        accuracy_first(CountTarget(5.0, 0.05), curve, mechanisms=["pufferfish_exponential"])


def test_the_gap_a_noise_needs() -> None:
    from puffer_core.mechanisms.noise import topk_gap_for

    for noise in ("gumbel", "laplace"):
        for k, m in ((1, 5), (3, 12)):
            gap = topk_gap_for(k, m, 0.95, 4.0, noise)
            assert topk_hit_at_gap(k, m, gap, 4.0, noise) >= 0.95
            assert topk_hit_at_gap(k, m, gap * (1 - 1e-6), 4.0, noise) < 0.95
    assert topk_gap_for(1, 5, 0.1, 4.0, "gumbel") == 0.0  # chance already does it


# --------------------------------------------------------------------------------------------
# issue 34: the top-k hit rate at large gaps and the laws at subnormal and huge targets


def _laplace_topk_mp(k: int, m: int, z: float):
    """∫ k·f(y)(1 − F(y))^(k−1)·F(y + z)^(m−k) dy in 40-digit arithmetic (mpmath's tanh–sinh, cut at the kinks)."""
    import mpmath

    with mpmath.workdps(40):
        z = mpmath.mpf(z)

        def cdf(y):
            return 1 - mpmath.exp(-y) / 2 if y > 0 else mpmath.exp(y) / 2

        def integrand(y):
            return k * mpmath.exp(-abs(y)) / 2 * (1 - cdf(y)) ** (k - 1) * cdf(y + z) ** (m - k)

        cuts = sorted({-z - 40, -z, -z + 40, mpmath.mpf(-40), mpmath.mpf(0), mpmath.mpf(40)})
        return mpmath.quad(integrand, [-mpmath.inf, *cuts, mpmath.inf])


@pytest.mark.parametrize("k, m", [(1, 2), (2, 3), (3, 6), (1, 50), (5, 40)])
def test_the_laplace_topk_hit_against_40_digit_quadrature(k: int, m: int) -> None:
    import mpmath

    for z in (1e-6, 0.3, 2.0, 7.0, 25.0, 80.0, 1e3, 1e5, 1e8, 1e300):
        got = topk_hit_at_gap(k, m, z, 1.0, "laplace")
        truth = _laplace_topk_mp(k, m, min(z, 1e6))  # beyond 1e6 the truth is 1 to far more than 40 digits
        assert abs(mpmath.mpf(got) - truth) <= 1e-12 * truth, (k, m, z, got, truth)
        # scale invariance: only gap/scale matters
        assert topk_hit_at_gap(k, m, z * 1e-200, 1e-200, "laplace") == pytest.approx(got, rel=1e-12)


def test_the_two_count_topk_hit_has_a_closed_form() -> None:
    """Top-1 of two counts is right when Z₂ − Z₁ < gap: for two Laplace(1), Pr = 1 − e^(−z)(1 + z/2)/2."""
    for z in (0.01, 1.0, 5.0, 30.0, 1e5):
        want = 1.0 - math.exp(-z) * (1 + z / 2) / 2
        assert topk_hit_at_gap(1, 2, z, 1.0, "laplace") == pytest.approx(want, rel=1e-13)
    # issue 34: 0.5, 0.25 and 0.125 where the truth is 1
    assert [topk_hit_at_gap(k, k + 1, 1e5, 1.0, "laplace") for k in (1, 2, 3)] == [1.0, 1.0, 1.0]


def test_accuracy_at_passes_the_exact_hit_rate_through() -> None:
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=5)
    curve = influence_curve(prior)
    for gap in (1e6, 1e9):  # gap/scale beyond 1e5 for the Laplace mechanisms (0.5 before)
        rows = accuracy_at(2.0, TopKTarget(k=1, hit=0.9, n_states=3, gap=gap), curve, prior)
        assert all(row.hit == 1.0 for row in rows), [(row.mechanism, row.hit) for row in rows]


@pytest.mark.parametrize("law", ["opendp", "integer", "continuous"])
def test_count_targets_at_huge_errors_and_subnormal_failures(law: str) -> None:
    """The largest scale meets the failure probability exactly, in 60-digit arithmetic, at the ends of the doubles."""
    import mpmath

    def failure(alpha: float, scale: float):
        with mpmath.workdps(60):
            if law != "integer":
                return mpmath.exp(-mpmath.mpf(alpha) / scale)
            n, s = mpmath.floor(mpmath.mpf(alpha)), mpmath.mpf(scale)
            return 2 * mpmath.exp(-(n + 1) / s) / (1 + mpmath.exp(-1 / s))

    for alpha in (1e300, 3.5, 0.3, 1e-300):
        for beta in (0.5, 0.1, 1e-300, 5e-324):
            if law == "integer" and alpha < 1 and beta >= 0.5:
                continue  # the noise is 0 often enough only for q ≥ Pr[Z ≠ 0] — any scale works below it
            scale = CountTarget(alpha, beta, law=law).scale()  # the Laplace scale per count
            assert 0 < scale < math.inf
            assert failure(alpha, scale) <= mpmath.mpf(beta), (alpha, beta, scale)
            assert failure(alpha, scale * (1 + 1e-9)) > mpmath.mpf(beta)
    with pytest.raises(ValueError, match="too large for a double"):
        CountTarget(10**400, 0.1, law=law)
    with pytest.raises(ValueError, match="too small"):
        CountTarget(5e-324, 0.1, law=law)
