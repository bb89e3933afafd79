"""The analyst's guided path carries every number it shows (issue 29): to Plan & compose, to Simulate, into its own
link, report and script.

Each number is checked three ways: as the path shows it, as the page it opens shows it after the button, and as
puffer_core computes it here from the built-in data (Theorem 6.2 written out: a(b) once plus j·(ε − a(b)); the
simulation called directly with the same seed).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from puffer_core import calibrate, fit_markov_chain, group_dp, influence_curve, load_dataset, simulate
from puffer_core.display import fmt
from puffer_core.priors.fitting import DEFAULT_SMOOTHING
from tests.app.conftest import capture_exports, errors, open_page, problems, static_tables, tables
from tests.support.apptest import AppTest
from tests.support.scripts import run_script

ROOT = Path(__file__).resolve().parents[2]
ANALYST = "app_pages/analyst.py"
EPS = 1.0
RELEASES = 12
TRIALS = 20
SEED = 7
THREE_STATES = b"user,time,state\n" + b"".join(
    f"u{u},{t},{'abc'[(u * 7 + t * t) % 3]}\n".encode() for u in range(30) for t in range(8)
)


@pytest.fixture(scope="module")
def reference() -> dict[str, object]:
    data = load_dataset("checkins")
    fit = fit_markov_chain(data, smoothing=DEFAULT_SMOOTHING)
    return {"data": data, "stats": data.stats(), "fit": fit, "curve": influence_curve(fit)}


def _next(at: AppTest) -> None:
    at.button(key="analyst_next").click().run()
    assert not problems(at) and not errors(at)


def _to_trial(eps: float = EPS, releases: int = RELEASES) -> AppTest:
    """The path walked on Check-ins to step 5 (the trial) with this target and plan."""
    at = open_page(ANALYST)
    _next(at)
    _next(at)
    at.number_input(key="w_guide_eps").set_value(eps).run()
    _next(at)
    at.number_input(key="w_guide_releases").set_value(releases).run()
    _next(at)
    return at


def _composed(curve, eps: float, releases: int) -> float:  # noqa: ANN001 - an InfluenceCurve
    """[C] Theorem 6.2 for ``releases`` releases at the same curve point: a(b) once plus releases·(ε − a(b))."""
    each = calibrate(curve, eps)
    return each.a + releases * (eps - each.a)


def test_the_guided_plan_opens_in_plan_and_compose_and_its_script_recomputes_it(
    reference: dict[str, object], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    captured = capture_exports(monkeypatch)
    at = open_page(ANALYST)
    _next(at)
    _next(at)
    _next(at)  # the plan: ε_puffer = 1 and 12 releases, the defaults
    composed = _composed(reference["curve"], EPS, RELEASES)
    shown = "\n".join(m.value for m in at.markdown)
    assert f"spend **ε_puffer = {fmt(composed)}**" in shown
    at.button(key="w_guide_to_plan").click().run()
    assert not problems(at) and not errors(at)
    assert at.title[0].value == "Plan & compose"
    assert any(f"From the guided path: the ledger of {RELEASES} releases at ε_puffer = 1 each" in s.value
               for s in at.success)  # fmt: skip
    page = "\n".join(m.value for m in at.markdown)
    assert f"After all {RELEASES} releases: **ε_puffer = {fmt(composed)}** by Theorem 6.2" in page
    ledger = next(t for t in tables(at) if "cumulative (Thm 6.2)" in t.columns)
    assert list(ledger["release"])[0] == "Jan" and len(ledger) == RELEASES
    assert at.number_input(key="w_plan_total").value == pytest.approx(composed, rel=1e-12)
    assert at.number_input(key="w_plan_releases").value == RELEASES
    html, script = captured[-1]
    assert fmt(composed) in html
    printed = run_script(script, tmp_path, "plan.py")
    last = [line for line in printed.splitlines() if line.startswith("Dec,")][0]
    assert last.split(",")[1] == fmt(composed)  # the script's ledger ends at the path's total


def test_the_guided_trial_opens_in_simulate_with_the_same_numbers(reference: dict[str, object]) -> None:
    at = _to_trial()
    at.number_input(key="w_guide_trials").set_value(TRIALS).run()
    at.number_input(key="w_guide_seed").set_value(SEED).run()
    at.button(key="w_guide_run").click().run()
    assert not problems(at) and not errors(at)
    guided = static_tables(at)[0]
    result = simulate(
        reference["stats"],
        prior=reference["fit"],
        query="topk",
        k=3,
        mechanisms=["pufferfish_exponential", "group_dp_exponential"],
        eps_grid=[EPS],
        trials=TRIALS,
        rng=SEED,
    )
    rows = result.metrics[(result.metrics["metric"] == "HitRate@3") & (result.metrics["release"] == 1)]
    assert list(guided["mean"]) == [fmt(v, 3) for v in rows["mean"]]
    at.button(key="w_guide_to_simulate").click().run()
    assert not problems(at) and not errors(at)
    assert at.title[0].value == "Simulate"
    at.switch_page("app_pages/simulate.py").run()  # AppTest reruns the page it was told (the browser stays there)
    assert at.number_input(key="w_sim_trials").value == TRIALS and at.number_input(key="w_sim_seed").value == SEED
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)
    metrics = at.session_state["sim_result"][1].metrics
    shown = metrics[(metrics["metric"] == "HitRate@3") & (metrics["release"] == 1)]
    assert list(shown["label"]) == list(rows["label"])
    assert np.array_equal(shown["mean"].to_numpy(), rows["mean"].to_numpy())  # bit for bit: the same run


def _walk_to_report(at: AppTest) -> None:
    at.number_input(key="w_guide_trials").set_value(TRIALS).run()
    at.number_input(key="w_guide_seed").set_value(SEED).run()
    at.button(key="w_guide_run").click().run()
    _next(at)


def _printed(output: str) -> tuple[dict[str, str], pd.DataFrame]:
    lines = output.splitlines()
    values = dict(line.split(" = ", 1) for line in lines if " = " in line)
    start = lines.index("## trial") + 1
    return values, pd.DataFrame([row.split(",") for row in lines[start + 1 :]], columns=lines[start].split(","))


def test_the_report_and_script_carry_every_number_and_setting(
    reference: dict[str, object], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    captured = capture_exports(monkeypatch)
    at = _to_trial(eps=0.7, releases=5)
    _walk_to_report(at)
    assert not problems(at) and not errors(at)
    html, script = captured[-1]
    curve = reference["curve"]
    each = calibrate(curve, 0.7)
    for setting in ("Check-ins", "user, time, state", "group column", "prior uncertainty", "off (the fitted chain",
                    "what you publish", "the most frequent states", f"{TRIALS} trials, seed {SEED}"):
        assert setting in html, setting
    printed = run_script(script, tmp_path, "guided.py")
    values, trial = _printed(printed)
    assert values["ε_DP per entry"] == fmt(each.eps_dp) and values["a(b)"] == fmt(each.a)
    assert values["group DP ε_DP"] == fmt(group_dp(curve, 0.7).eps_dp) == fmt(0.7 / curve.length)
    assert values["together, Theorem 6.2"] == fmt(_composed(curve, 0.7, 5))
    assert values["together, naive sum"] == fmt(5 * 0.7)
    assert values["together, group DP"] == fmt(curve.length * 5 * each.eps_dp)
    for number in (values["ε_DP per entry"], values["together, Theorem 6.2"]):
        assert number in html  # the report shows what the script prints
    shown = static_tables(at) or [pd.DataFrame()]
    report_trial = at.session_state["guide_trial"][1]
    assert list(trial["mean"]) == list(report_trial["mean"]) and list(trial["95% interval"]) == list(
        report_trial["95% interval"]
    )
    assert shown is not None


def test_the_share_link_reopens_the_path_where_it_was(reference: dict[str, object]) -> None:
    at = _to_trial(eps=0.7, releases=5)
    at.radio(key="w_guide_query").set_value("histogram").run()
    _walk_to_report(at)
    link = {name: str(at.query_params[name]) for name in at.query_params}
    assert link["gstep"] == "5" and link["gq"] == "histogram" and link["gseed"] == str(SEED)
    summary = [m.value for m in at.markdown if "**Plan:**" in m.value][0]
    again = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=300)
    for name, value in link.items():
        again.query_params[name] = value
    again.run()
    again.switch_page(ANALYST).run()
    assert not problems(again) and not errors(again)
    assert again.subheader[0].value == "6. Your report"
    reopened = [m.value for m in again.markdown if "**Plan:**" in m.value][0]
    assert reopened.splitlines()[:2] == summary.splitlines()[:2]  # the target and the plan, digit for digit
    assert "not run with these settings" in reopened  # results are never in a link: run the trial again
    again.button(key="analyst_back").click().run()
    again.button(key="w_guide_run").click().run()
    assert at.session_state["guide_trial"][1].equals(again.session_state["guide_trial"][1])  # the same seed
    assert f"ε_puffer = {fmt(_composed(reference['curve'], 0.7, 5))} together" in summary


def test_a_top_k_list_that_cannot_fail_is_never_the_default_and_is_explained_when_chosen() -> None:
    at = open_page(ANALYST)
    at.radio(key="guide_source").set_value("Upload a CSV or Parquet file").run()
    at.file_uploader(key="guide_upload").set_value(("three.csv", THREE_STATES, "text/csv")).run()
    assert not problems(at) and not errors(at)
    for _ in range(4):
        _next(at)
    assert at.number_input(key="w_guide_k").value == 2  # not 3: with 3 states every top-3 list is right
    assert not at.warning
    at.number_input(key="w_guide_k").set_value(3).run()
    assert any("Hit Rate@3 is 1 for every mechanism" in w.value for w in at.warning)


def test_prior_uncertainty_at_step_2_is_shown_there_and_named_in_the_sidebar(reference: dict[str, object]) -> None:
    from puffer_core import prior_spread

    at = open_page(ANALYST)
    _next(at)
    at.toggle(key="w_guide_unc_on").set_value(True).run()
    at.number_input(key="w_guide_unc_draws").set_value(2).run()
    assert not problems(at) and not errors(at)
    fit = reference["fit"]
    spread = prior_spread(reference["stats"], draws=2, seed=0, length=fit.length, smoothing=DEFAULT_SMOOTHING)
    shown = "\n".join(m.value for m in at.markdown)
    robust, alone = fmt(float(spread.robust.a[0])), fmt(float(reference["curve"].a[0]))
    assert f"a(1), is **{robust}** over Θ against {alone} for the fit alone" in shown
    assert any("with its prior uncertainty (Θ: the fit and 2 posterior draws)" in c.value for c in at.sidebar.caption)
