"""Every record through every consumer of the library (in the manner of scikit-learn's ``parametrize_with_checks``).

Each test is parametrised over a registry — :data:`~puffer_core.mechanisms.MECHANISMS`,
:data:`~puffer_core.mechanisms.noise.NOISES`, :data:`~puffer_core.stream.registry.STREAM_BOUNDS` — and what
it expects of a record is read from the record itself (what it releases, how it is calibrated, its noise, its
twin), never from a list of names: a record added to a registry is checked by every test here at once.  The
app's consumers (the Plan ledger, the accuracy cells, the exported scripts) are in
``tests/app/test_every_record_in_the_app.py``.

Independent references: the noise laws against the numpy samplers that draw them (binomial bounds), the
inverse calibration against building the mechanism, the exact audit (enumeration of every sequence) against
the reported ε_puffer.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from puffer_core import (
    MECHANISMS,
    NOISES,
    CountTarget,
    MarkovChainPrior,
    TopKTarget,
    accuracy_at,
    accuracy_first,
    explain_simulation,
    influence_curve,
    make_mechanism,
    simulate,
)
from puffer_core.audit.exact import exact_leakage
from puffer_core.data.readers import load_sequences
from puffer_core.mechanisms.accuracy import COUNT_MECHANISMS, TOPK_MECHANISMS, offers
from puffer_core.mechanisms.base import Refused
from puffer_core.mechanisms.registry import Calibrated, MechanismSpec, Output, ScaleRequest, output_law
from puffer_core.simulation.baselines import baseline_findings
from puffer_core.stream.registry import STREAM_BOUNDS, StreamBoundSpec, plan_stream, stream_bounds, stream_setting

CHAIN = MarkovChainPrior([[0.7, 0.3], [0.4, 0.6]], None, 5)
THREE = MarkovChainPrior([[0.5, 0.3, 0.2], [0.25, 0.5, 0.25], [0.2, 0.3, 0.5]], None, 6)
NAMES = list(MECHANISMS)
SPECS = [MECHANISMS[name] for name in NAMES]


def _built(spec: MechanismSpec, query: str, eps: float = 2.0, prior: MarkovChainPrior = THREE) -> object:
    return make_mechanism(spec.name, eps, influence_curve(prior), prior, query, k=2, n_states=prior.n_states)


# --------------------------------------------------------------------------- the mechanism records


@pytest.mark.parametrize("spec", SPECS, ids=NAMES)
def test_a_mechanism_builds_for_every_query_its_record_says_it_answers(spec: MechanismSpec) -> None:
    """The built mechanism is the record's: its name, its noise, how its releases compose; it follows the
    Mechanism protocol (what the simulator calls)."""
    for query in spec.queries:
        mechanism = _built(spec, query)
        assert mechanism.name == spec.name
        assert mechanism.noise == spec.noise.name
        assert mechanism.accounting.composition is spec.composition
        assert mechanism.noise_scale > 0 and mechanism.variance > 0
        draws = mechanism.simulate(np.array([5.0, 3.0, 1.0]), 4, np.random.default_rng(0))
        ranking = mechanism.ranking(draws, 1)
        assert ranking.shape == (4, 1)
        if spec.releases is Output.COUNTS:
            assert draws.shape == (4, 3) and mechanism.expected_l1_error(3) > 0
    for query in {"topk", "histogram"} - set(spec.queries):
        with pytest.raises(ValueError, match=spec.label.split(" (")[0]):
            _built(spec, query)


@pytest.mark.parametrize("spec", SPECS, ids=NAMES)
def test_the_inverse_calibration_finds_the_epsilon_whose_noise_is_the_scale(spec: MechanismSpec) -> None:
    """``eps_for_scale``: built at the ε it returns, the mechanism's noise is the scale (and no larger)."""
    if spec.eps_for_scale is None:
        assert spec.name not in COUNT_MECHANISMS + TOPK_MECHANISMS
        return
    curve = influence_curve(THREE)
    for query in spec.queries:
        mechanism = _built(spec, query, eps=1.5)
        queries = THREE.n_states if query == "topk" and spec.releases is Output.COUNTS else 1
        sensitivity = 1.0 if queries > 1 else 2.0
        request = ScaleRequest(float(mechanism.noise_scale), curve, [THREE], 2, queries, sensitivity)
        eps = spec.eps_for_scale(request)
        assert eps == pytest.approx(1.5, rel=1e-6)
        again = _built(spec, query, eps=eps * (1 + 1e-9))
        assert again.noise_scale <= mechanism.noise_scale * (1 + 1e-8)


@pytest.mark.parametrize("spec", SPECS, ids=NAMES)
def test_accuracy_first_plans_every_mechanism_its_record_offers(spec: MechanismSpec) -> None:
    """The accuracy cell of every offered mechanism: the target met at the noise found, the reverse consistent."""
    curve = influence_curve(THREE)
    targets = [CountTarget(4.0, 0.1, counts=3), TopKTarget(1, 0.8, 3, gap=4.0)]
    for target, query in zip(targets, ("histogram", "topk")):
        if not offers(spec, query):
            assert spec.name not in (COUNT_MECHANISMS if query == "histogram" else TOPK_MECHANISMS)
            continue
        plan = accuracy_first(target, curve, THREE, mechanisms=[spec.name])
        (cost,) = plan.costs
        assert cost.noise == spec.noise.name and cost.noise_scale <= cost.needed * (1 + 1e-9)
        wanted = 1 - target.beta if isinstance(target, CountTarget) else target.hit
        assert cost.achieved >= wanted - 1e-9
        (back,) = accuracy_at(cost.eps_puffer, target, curve, THREE, mechanisms=[spec.name])
        if isinstance(target, CountTarget):
            assert back.alpha <= target.alpha * (1 + 1e-9)
            assert spec.noise.failure(back.alpha, back.noise_scale) <= target.failure * (1 + 1e-9)
        else:
            assert back.hit >= target.hit - 1e-9
        skipped = accuracy_first(target, curve, None, mechanisms=[spec.name]).skipped
        assert (spec.name in skipped) == spec.needs_chains


@pytest.fixture(scope="module")
def tiny_data() -> object:
    rng = np.random.default_rng(3)
    rows = []
    for user in range(30):
        state = int(rng.integers(3))
        for t in range(6):
            if rng.random() > 0.6:
                state = int(rng.integers(3))
            rows.append({"user": f"u{user}", "time": t, "state": "abc"[state]})
    return load_sequences(pd.DataFrame(rows))


@pytest.mark.parametrize("spec", SPECS, ids=NAMES)
def test_explain_simulation_reads_every_mechanism_from_its_record(spec: MechanismSpec, tiny_data: object) -> None:
    """Run beside its twin (if any): a curve-calibrated mechanism gets its gain at every ε; a fallback names
    its twin; an MQM-calibrated one the empty-quilt finding when it adds group-DP noise; a baseline its
    finding or its refusal."""
    prior = THREE
    names = [spec.name] + ([spec.group_dp_twin] if spec.group_dp_twin else [])
    if spec.calibrated is Calibrated.MQM_APPROX:
        names += [n for n, s in MECHANISMS.items() if s.calibrated is Calibrated.MQM][:1]
    query = spec.queries[0]
    grid = (0.5, 20.0)
    result = simulate(tiny_data, prior=prior, query=query, k=1, mechanisms=names, eps_grid=grid, trials=20, rng=0)
    explanation = explain_simulation(result, prior=prior)
    refused = result.settings.get("refused") or {}
    if spec.name in refused:
        assert any(f.mechanism == spec.name for f in baseline_findings(result) if f.code == "baseline_refused")
        return
    assert spec.name in set(result.metrics["mechanism"])
    if spec.calibrated is Calibrated.CURVE:
        for eps in grid:
            gains = [f for f in explanation.find("pufferfish_gain", eps) if f.mechanism == spec.name]
            assert len(gains) == 1, (spec.name, eps)
        for fallback in (f for f in explanation.find("group_dp_fallback") if f.mechanism == spec.name):
            assert fallback.numbers["same_as"] == spec.group_dp_twin
    if spec.calibrated is Calibrated.MQM:
        noise = [f for f in explanation.find("mqm_group_dp_noise") if f.mechanism == spec.name]
        sigma = result.ledger[(result.ledger["mechanism"] == spec.name) & (result.ledger["release"] == 1)]
        empty = {float(r.eps_puffer) for r in sigma.itertuples() if r.sigma_max >= prior.length / r.eps_puffer - 1e-9}
        assert {f.eps_puffer for f in noise} == empty
    codes = {
        Calibrated.WASSERSTEIN: "wasserstein_scale",
        Calibrated.MQM_APPROX: "mqm_approx_looser",
        Calibrated.INFLUENCE_MATRIX: "influence_factor",
    }
    if spec.calibrated in codes:
        found = [f for f in baseline_findings(result) if f.mechanism == spec.name]
        assert {f.code for f in found} == {codes[spec.calibrated]}


@pytest.mark.parametrize("spec", SPECS, ids=NAMES)
@pytest.mark.parametrize("eps", [0.5, 4.0])
def test_the_exact_audit_never_finds_more_than_the_reported_eps(spec: MechanismSpec, eps: float) -> None:
    """Where the record offers exact output probabilities: enumeration of every sequence of a tiny chain."""
    try:
        mechanism = _built(spec, spec.queries[0], eps=eps, prior=CHAIN)
    except Refused:
        return
    if not spec.exact_probabilities:
        with pytest.raises(ValueError, match="no exact output probabilities"):
            output_law(mechanism, CHAIN.n_states, CHAIN.length)
        return
    law = output_law(mechanism, CHAIN.n_states, CHAIN.length)
    leak = exact_leakage(CHAIN, law)
    assert 0 < leak <= mechanism.accounting.eps_puffer + 1e-9


def test_a_wrong_record_fails_when_it_is_made() -> None:
    spec = MECHANISMS[NAMES[0]]
    with pytest.raises(TypeError, match="positional"):
        MechanismSpec("x", "X", spec.releases, spec.calibrated, spec.noise, spec.build)  # type: ignore[misc]
    with pytest.raises(TypeError, match="noise must be a Noise"):
        replace(spec, noise="laplace")
    with pytest.raises(TypeError, match="releases must be a Output"):
        replace(spec, releases="counts")
    with pytest.raises(ValueError, match="group-DP twin"):
        replace(spec, calibrated=Calibrated.GROUP_DP, group_dp_twin="x")


# --------------------------------------------------------------------------- the noise records

DRAWS = 200_000


def _inside(hits: int, n: int, p: float) -> bool:
    """``hits`` of ``n`` is a plausible draw of Binomial(n, p) (two-sided, 1e-6)."""
    return stats.binom.cdf(hits, n, p) > 5e-7 and stats.binom.sf(hits - 1, n, p) > 5e-7


@pytest.mark.parametrize("noise", list(NOISES.values()), ids=list(NOISES))
def test_every_noise_law_is_what_its_sampler_draws(noise: object) -> None:
    rng = np.random.default_rng(5)
    scale = 2.5
    draws = noise.sample(rng, scale, (DRAWS,))
    for alpha in (1.0, 3.0, 6.0):
        assert _inside(int(np.count_nonzero(np.abs(draws) > alpha)), DRAWS, noise.failure(alpha, scale))
    k, m, gap = 2, 5, 4.0
    noisy = noise.sample(rng, scale, (DRAWS // 4, m)) + np.array([gap] * k + [0.0] * (m - k))
    right = np.count_nonzero(noisy[:, :k].min(axis=1) > noisy[:, k:].max(axis=1))
    hit = noise.topk_hit(k, m, gap, scale)
    assert _inside(int(right), DRAWS // 4, hit)
    assert np.all(noise.sample(rng, 0.0, (3,)) == 0)


@pytest.mark.parametrize("noise", list(NOISES.values()), ids=list(NOISES))
def test_every_noise_law_inverts_itself(noise: object) -> None:
    """The interval, the scale for an interval and the top-k gap are the tightest their laws allow."""
    step = (lambda x: x * (1 - 1e-6)) if noise.scale_family else (lambda x: x - 1.0)  # a lattice law: whole α
    for scale in (0.3, 2.0, 40.0):
        for failure in (0.2, 0.01):
            alpha = noise.interval(scale, failure)
            assert noise.failure(alpha, scale) <= failure
            assert alpha == 0 or noise.failure(step(alpha), scale) > failure
            wanted = max(alpha, 1.0)
            found = noise.scale_for(wanted, failure)
            assert noise.failure(wanted, found) <= failure < noise.failure(wanted, found * (1 + 1e-6))
        gap = noise.topk_gap(2, 6, 0.9, scale)
        assert noise.topk_hit(2, 6, gap, scale) >= 0.9
        assert gap == 0 or noise.topk_hit(2, 6, step(gap) if noise.scale_family else gap - 1, scale) < 0.9
    assert f"{noise.label}(" in noise.text(1.0)


def test_every_mechanism_noise_is_registered() -> None:
    assert {spec.noise.name for spec in SPECS} <= set(NOISES)
    assert all(NOISES[spec.noise.name] is spec.noise for spec in SPECS)


# --------------------------------------------------------------------------- the stream bounds

BOUNDS = list(STREAM_BOUNDS)


@pytest.mark.parametrize("name", BOUNDS)
def test_stream_bounds_and_plan_stream_report_every_registered_bound(name: str) -> None:
    spec = STREAM_BOUNDS[name]
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], None, 12)
    setting = stream_setting(prior)
    schedule = [0.3] * 6 + [0.6] * 6
    report = stream_bounds(prior, schedule)
    np.testing.assert_array_equal(report.bounds[name].values, spec.values(setting, schedule).values)
    assert STREAM_BOUNDS[name].label in report.describe() or len(BOUNDS) > 2
    for unbounded in (False, True):
        plan = plan_stream(prior, 2.0, unbounded=unbounded)
        expected = spec.plan(setting, 2.0, unbounded)
        assert plan.eps[name] == expected or (math.isnan(expected) and math.isnan(plan.eps[name]))


def test_a_bound_registered_later_is_in_stream_bounds_and_plan_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    group = STREAM_BOUNDS["group_dp"]
    extra = StreamBoundSpec(
        "twice_group_dp",
        "twice group DP",
        "2×GDP",
        "group DP, doubled",
        needs_chain=False,
        whole_sequence=True,
        refusal=group.refusal,
        per_step=lambda setting, eps: (2 * group.per_step(setting, eps)[0], None),
        largest_eps=lambda setting, target, unbounded: group.largest_eps(setting, target, unbounded) / 2,
    )
    monkeypatch.setitem(STREAM_BOUNDS, extra.name, extra)
    prior = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], None, 10)
    report = stream_bounds(prior, 0.2)
    assert report.bounds["twice_group_dp"].max == pytest.approx(4.0)
    assert plan_stream(prior, 1.0).eps["twice_group_dp"] == pytest.approx(0.05)
