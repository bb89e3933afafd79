"""The analyst's guided path (app_pages/analyst.py) under AppTest: every step drawn, its numbers against puffer_core.

The references are computed here from the built-in data with puffer_core (``load_dataset``, ``fit_markov_chain``,
``influence_curve``, ``prior_spread``, ``simulate``), and checked without the page's path where one exists: the
calibration by scanning the curve for the largest (ε − a(b)) / b (group DP, b = T and a = 0, among them), the plan
by Theorem 6.2 written out after every release (a(b) once, plus j·(ε − a(b))), the naive sum j·ε and group DP
T·j·ε_DP.  The other pages then show the same settings (the path sets the session's prior, ε and releases).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from puffer_core import MECHANISMS, fit_markov_chain, influence_curve, load_dataset, prior_spread, simulate
from puffer_core.display import fmt
from puffer_core.priors.fitting import DEFAULT_SMOOTHING
from tests.app.conftest import errors, metric, open_page, problems, static_tables
from tests.app.test_app_charts import plotly_array
from tests.support.apptest import AppTest

ANALYST = "app_pages/analyst.py"
EPS = 0.8  # the target set on step 3
RELEASES = 6  # the releases planned on step 4
TRIALS = 20  # the trial run's trials (step 5)


@pytest.fixture(scope="module")
def reference() -> dict[str, object]:
    """Check-ins (the path's first dataset), its statistics, the chain fitted to it and that chain's curve."""
    data = load_dataset("checkins")
    fit = fit_markov_chain(data, smoothing=DEFAULT_SMOOTHING)
    return {"stats": data.stats(), "fit": fit, "curve": influence_curve(fit)}


def _best(curve, eps: float) -> tuple[int, float, float]:  # noqa: ANN001 - an InfluenceCurve
    """(b, a(b), ε_DP) of the largest per-entry budget (ε − a(b)) / b, found by scanning every b and b = T."""
    points = [(int(b), float(a)) for b, a in zip(curve.b, curve.a) if a < eps]
    points.append((int(curve.length), 0.0))
    b, a = max(points, key=lambda point: ((eps - point[1]) / point[0], -point[0]))
    return b, a, (eps - a) / b


def _next(at: AppTest) -> None:
    at.button(key="analyst_next").click().run()
    assert not problems(at) and not errors(at)


def _heading(at: AppTest) -> str:
    return at.subheader[0].value


def _markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def _chart(at: AppTest, index: int = 0) -> dict:
    return json.loads(at.get("plotly_chart")[index].proto.spec)


@pytest.fixture(scope="module")
def walked() -> dict[str, object]:
    """The path walked from its first step to its last on Check-ins: ε = 0.8, 6 releases, a histogram in 20 trials;
    then the Calibrate and Plan pages opened in the same session."""
    at = open_page(ANALYST)
    assert not problems(at) and not errors(at)
    seen: dict[str, object] = {"data": (_heading(at), at.success[0].value)}
    _next(at)
    seen["belief"] = (_heading(at), [c.value for c in at.caption], _chart(at), at.session_state["settings"]["matrix"])
    _next(at)
    at.number_input(key="w_guide_eps").set_value(EPS).run()
    seen["target"] = (_heading(at), _markdown(at))
    _next(at)
    at.number_input(key="w_guide_releases").set_value(RELEASES).run()
    seen["plan"] = (_heading(at), _markdown(at), _chart(at))
    _next(at)
    at.radio(key="w_guide_query").set_value("histogram").run()
    at.number_input(key="w_guide_trials").set_value(TRIALS).run()
    assert not static_tables(at)  # nothing runs before the button
    at.button(key="w_guide_run").click().run()
    assert not problems(at) and not errors(at)
    seen["trial"] = (_heading(at), static_tables(at)[0], [c.value for c in at.caption])
    _next(at)
    seen["report"] = (_heading(at), _markdown(at), [b.label for b in at.download_button], [b.key for b in at.button])
    at.switch_page("app_pages/calibrate.py").run()
    assert not problems(at) and not errors(at)
    seen["calibrate"] = metric(at, "Per-entry ε_DP"), at.number_input(key="w_eps").value
    at.switch_page("app_pages/plan.py").run()
    assert not problems(at) and not errors(at)
    seen["plan page"] = at.number_input(key="w_plan_releases").value
    return seen


def test_step_1_loads_the_data(walked: dict[str, object], reference: dict[str, object]) -> None:
    heading, words = walked["data"]
    stats = reference["stats"]
    assert heading == "1. Your data"
    assert f"{stats.n_users:,} users, {stats.n_entries:,} entries, {stats.n_states} states" in words
    assert f"sequences of up to {stats.max_length:,} entries" in words


def test_step_2_shows_the_chain_fitted_to_the_data(walked: dict[str, object], reference: dict[str, object]) -> None:
    heading, captions, chart, matrix = walked["belief"]
    fit = reference["fit"]
    assert heading == "2. The attacker's belief"
    assert any(f"({fit.n_states} states, sequences of up to T = {fit.length} entries)" in c for c in captions)
    assert np.array_equal(np.array(matrix), fit.transition)  # the prior of every page now, bit for bit
    z = chart["data"][0]["z"]  # a 2-D plotly array: its entries, and its shape
    assert np.array_equal(plotly_array(z).reshape(fit.n_states, fit.n_states), fit.transition)


def test_step_3_calibrates_the_target(walked: dict[str, object], reference: dict[str, object]) -> None:
    heading, text = walked["target"]
    curve = reference["curve"]
    b, a, eps_dp = _best(curve, EPS)
    assert heading == "3. Your target"
    assert f"**ε_DP = {fmt(eps_dp)}**" in text
    assert f"b = {b} entries around each one" in text and f"a(b) = {fmt(a)}" in text
    group = EPS / curve.length
    assert f"{eps_dp / group:.3g} times what protecting whole sequences would allow ({fmt(group)})" in text


def test_step_4_plans_the_releases(walked: dict[str, object], reference: dict[str, object]) -> None:
    heading, text, chart = walked["plan"]
    curve = reference["curve"]
    _, a, eps_dp = _best(curve, EPS)
    j = np.arange(1, RELEASES + 1)
    composed, naive, group = a + j * (EPS - a), j * EPS, curve.length * j * eps_dp  # [C] Theorem 6.2, Σ ε, T·Σ ε_DP
    assert heading == "4. Your plan"
    assert f"{RELEASES} releases at ε_puffer = {EPS:g} each spend **ε_puffer = {fmt(composed[-1])}**" in text
    assert f"Adding the releases up would say {fmt(naive[-1])}; group privacy would say {fmt(group[-1])}" in text
    lines = {trace["name"]: plotly_array(trace["y"]) for trace in chart["data"] if "name" in trace}
    assert np.allclose(lines["Theorem 6.2 (composed)"], composed, rtol=1e-12)
    assert np.allclose(lines["naive sum"], naive, rtol=1e-12)
    assert np.allclose(lines["group DP"], group, rtol=1e-12)


def test_step_5_runs_the_trial_as_puffer_core_does(walked: dict[str, object], reference: dict[str, object]) -> None:
    heading, table, captions = walked["trial"]
    assert heading == "5. A trial run"
    by_label = {spec.label: name for name, spec in MECHANISMS.items()}
    names = [by_label[label] for label in table["mechanism"]]
    assert len(names) == 2 and MECHANISMS[names[0]].group_dp_twin == names[1]  # Pufferfish against group DP
    result = simulate(
        reference["stats"],
        prior=reference["fit"],
        query="histogram",
        k=3,
        mechanisms=names,
        eps_grid=[EPS],
        trials=TRIALS,
        rng=0,
    )
    rows = result.metrics[(result.metrics["metric"] == "L1") & (result.metrics["release"] == 1)]
    assert list(table["measure"]) == ["L1", "L1"]
    assert list(table["mean"]) == [fmt(v, 3) for v in rows["mean"]]
    intervals = [f"{fmt(lo, 3)} – {fmt(hi, 3)}" for lo, hi in zip(rows["ci_low"], rows["ci_high"])]
    assert list(table["95% interval"]) == intervals
    assert any("how many entries the released counts are off by" in c for c in captions)
    # Pufferfish's calibration gives each entry more budget than group DP at the same ε: less error
    assert rows["mean"].iloc[0] < rows["mean"].iloc[1]


def test_step_6_sums_up_and_the_other_pages_use_the_same_settings(
    walked: dict[str, object], reference: dict[str, object]
) -> None:
    heading, text, downloads, buttons = walked["report"]
    _, a, eps_dp = _best(reference["curve"], EPS)
    assert heading == "6. Your report"
    assert f"**Target:** ε_puffer = {EPS:g} per release → per-entry ε_DP = {fmt(eps_dp)}" in text
    assert f"**Plan:** {RELEASES} releases → ε_puffer = {fmt(a + RELEASES * (EPS - a))} together" in text
    assert "**Trial run:** included" in text
    assert downloads == ["Download report (HTML)", "Download script (Python)"] and "analyst_next" not in buttons
    assert walked["calibrate"] == (fmt(eps_dp), EPS)
    assert walked["plan page"] == RELEASES


def test_prior_uncertainty_calibrates_against_the_robust_set(reference: dict[str, object]) -> None:
    at = open_page(ANALYST)
    _next(at)
    at.toggle(key="w_guide_unc_on").set_value(True).run()
    at.number_input(key="w_guide_unc_draws").set_value(2).run()
    at.number_input(key="w_guide_unc_seed").set_value(3).run()
    assert not problems(at) and not errors(at)
    _next(at)
    fit = reference["fit"]
    spread = prior_spread(reference["stats"], draws=2, seed=3, length=fit.length, smoothing=DEFAULT_SMOOTHING)
    robust = spread.robust
    assert np.all(robust.a >= reference["curve"].a - 1e-12)  # Θ holds the fit: its curve is at least the fit's
    _, _, eps_dp = _best(robust, 1.0)
    assert f"**ε_DP = {fmt(eps_dp)}**" in _markdown(at)  # the default target, ε_puffer = 1


def test_a_later_step_without_data_sends_back_to_the_first() -> None:
    at = open_page(ANALYST)
    at.session_state["path_analyst_step"] = 3
    at.run()
    assert not problems(at) and not errors(at)
    assert any("Choose your data first (step 1)" in w.value for w in at.warning)
    assert not at.get("plotly_chart")
