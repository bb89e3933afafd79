"""Calibrate and Plan & compose pages under AppTest, checked against puffer_core."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from puffer_core import InfluenceCurve, MarkovChainPrior, calibrate, certify, compose, group_dp, influence_curve, plan
from puffer_core.mechanisms import pufferfish_exponential, pufferfish_laplace
from tests.app.conftest import errors, metric, open_page, problems, tables
from tests.support.scripts import run_script

ROOT = Path(__file__).resolve().parents[2]
CALIBRATE = "app_pages/calibrate.py"
PLAN = "app_pages/plan.py"


@pytest.fixture(scope="module")
def default_curve() -> InfluenceCurve:
    return influence_curve(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=100))


def test_calibrate_defaults_match_the_library(default_curve: InfluenceCurve) -> None:
    at = open_page(CALIBRATE)
    assert not problems(at) and not errors(at)
    cal = calibrate(default_curve, 1.0)
    assert metric(at, "Optimal window b*") == str(cal.b)
    assert metric(at, "Per-entry ε_DP") == f"{cal.eps_dp:.4g}"
    ratio = cal.eps_dp / group_dp(default_curve, 1.0).eps_dp
    assert metric(at, "Budget per release vs group DP") == f"{ratio:.3g}×"
    cert = certify(default_curve, 0.1)
    assert metric(at, "Guaranteed ε_puffer") == f"{cert.eps_puffer:.4g}"
    assert metric(at, "Group DP would say") == "10"


def test_calibrate_widgets_and_link(default_curve: InfluenceCurve) -> None:
    at = open_page(CALIBRATE)
    at.number_input(key="w_eps").set_value(3.0).run()
    at.number_input(key="w_eps_dp").set_value(0.5).run()
    assert not problems(at) and not errors(at)
    assert metric(at, "Per-entry ε_DP") == f"{calibrate(default_curve, 3.0).eps_dp:.4g}"
    assert metric(at, "Guaranteed ε_puffer") == f"{certify(default_curve, 0.5).eps_puffer:.4g}"
    assert at.query_params["eps"] == "3"
    assert at.query_params["epsdp"] == "0.5"
    assert at.query_params["p"] == "0.9"


def test_calibrate_from_a_link_and_the_group_dp_fallback() -> None:
    at = open_page(CALIBRATE, {"p": "0", "q": "0", "T": "20", "eps": "0.5"})
    assert not problems(at) and not errors(at)
    assert metric(at, "Optimal window b*") == "20"
    assert any("group DP over the whole sequence" in i.value for i in at.info)


def test_calibrate_reports_a_bad_prior_without_a_traceback() -> None:
    at = open_page(CALIBRATE, {"prior": "matrix", "P": "0.5,0.6;0.2,0.8"})
    assert not problems(at)
    assert any("cannot be used" in m for m in errors(at))


def test_calibrate_with_a_gaussian_prior() -> None:
    at = open_page(CALIBRATE, {"prior": "gaussian", "n": "12", "ell": "2"})
    assert not problems(at) and not errors(at)


def test_plan_defaults_match_the_library(default_curve: InfluenceCurve) -> None:
    at = open_page(PLAN)
    assert not problems(at) and not errors(at)
    mechanism = pufferfish_exponential(default_curve, 0.5, 3)
    ledger = tables(at)[0]
    assert len(ledger) == 12
    assert ledger["cumulative (Thm 6.2)"].iloc[-1] == f"{compose([mechanism.accounting.calibration] * 12):.4g}"
    assert ledger["cumulative (naive sum)"].iloc[-1] == "6"
    assert ledger["noise"].iloc[0] == f"Gumbel({mechanism.gumbel_scale:.3g}) per count, top 3"
    planned = plan(default_curve, 6.0, 12)
    assert metric(at, "Per-release ε_DP") == f"{planned.eps_dp:.4g}"
    assert metric(at, "Common window b") == str(planned.b)


def test_plan_widgets(default_curve: InfluenceCurve) -> None:
    at = open_page(PLAN)
    at.number_input(key="w_ledger_k").set_value(5).run()
    at.number_input(key="w_plan_total").set_value(2.0).run()
    at.number_input(key="w_plan_releases").set_value(4).run()
    at.toggle(key="w_ledger_log").set_value(False).run()
    assert not problems(at) and not errors(at)
    ledger = tables(at)[0]
    assert ledger["noise"].iloc[0].endswith("top 5")
    assert metric(at, "Per-release ε_DP") == f"{plan(default_curve, 2.0, 4).eps_dp:.4g}"
    assert at.query_params["E"] == "2"
    assert at.query_params["releases"] == "4"  # "k" is the top-k ranking's, elsewhere


def test_plan_mixed_mechanisms(default_curve: InfluenceCurve) -> None:
    at = open_page(PLAN)
    at.session_state["w_ledger_0"] = {
        "edited_rows": {
            1: {"mechanism": "Pufferfish Laplace (histogram)"},
            2: {"mechanism": "Group DP Laplace (histogram)", "ε_puffer": 1.0},
        },
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not problems(at) and not errors(at)
    ledger = tables(at)[0]
    scale = pufferfish_laplace(default_curve, 0.5).scale
    assert ledger["noise"].iloc[1] == f"Lap({scale:.3g}) per count"
    assert int(ledger["b"].iloc[2]) == 100  # group DP: the whole sequence


def test_plan_bad_ledger_rows_give_errors() -> None:
    at = open_page(PLAN)
    at.session_state["w_ledger_0"] = {
        "edited_rows": {2: {"ε_puffer": -1.0}},
        "added_rows": [{"release": "Extra", "mechanism": None, "ε_puffer": 1.0}],
        "deleted_rows": [],
    }
    at.run()
    assert not problems(at)
    messages = errors(at)
    assert any(m.startswith("Mar: ε_puffer must be a positive number") for m in messages)
    assert any(m.startswith("Extra: choose a mechanism") for m in messages)
    assert len(tables(at)[0]) == 11


def test_out_of_range_link_values_are_ignored_not_crashing() -> None:
    at = open_page(CALIBRATE, {"eps": "5000", "epsdp": "-1", "T": "99999999"})
    assert not problems(at) and not errors(at)
    assert at.number_input(key="w_eps").value == pytest.approx(1.0)
    assert at.number_input(key="w_eps_dp").value == pytest.approx(0.1)
    assert any("ignored" in w.value and "eps=5000" in w.value for w in at.warning)
    at = open_page(PLAN, {"E": "0", "k": "1000", "prior": "gp", "ell": "50"})
    assert not problems(at) and not errors(at)
    assert metric(at, "Common window b")


# --------------------------------------------------------------------------- Calibrate: report and script


def _run_script(source: str, folder: Path) -> dict[str, str]:
    """Run an exported script as a user would (puffer_core importable) and read its ``name = value`` lines."""
    return dict(line.split(" = ", 1) for line in run_script(source, folder, "calibrate.py").splitlines())


def _assert_page_matches(at, printed: dict[str, str]) -> None:
    """The script prints every number the page shows, exactly as the page shows it."""
    shown = {m.label: m.value for m in at.metric}
    # the accuracy-first lines are checked against the accuracy tab and the library in test_app_accuracy.py
    assert {k: v for k, v in printed.items() if not k.startswith("accuracy_first_")} == shown


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"p": "0", "q": "0", "T": "20", "eps": "0.5"},  # the group-DP fallback
        {"prior": "matrix", "P": "1,0,0;0,0.5,0.5;0,0.5,0.5", "init": "0.2,0.5,0.3", "T": "40", "eps": "4"},
        {"prior": "theta", "theta": "0.8,0.8;0.9,0.7", "T": "30", "epsdp": "0.3"},
        {"prior": "gaussian", "n": "12", "ell": "2"},
    ],
)
def test_calibrate_script_recomputes_the_page(
    query: dict[str, str], exports: dict[str, object], tmp_path: Path
) -> None:
    at = open_page(CALIBRATE, query)
    assert not problems(at) and not errors(at)
    assert exports["stem"] == "calibrate"
    assert {"Download report (HTML)", "Download script (Python)"} <= {b.label for b in at.download_button}
    printed = _run_script(str(exports["script"]), tmp_path)
    _assert_page_matches(at, printed)


def test_calibrate_report_holds_every_setting_and_the_numbers(exports: dict[str, object]) -> None:
    at = open_page(CALIBRATE, {"p": "0.85", "q": "0.75", "T": "60", "eps": "2", "epsdp": "0.2"})
    page = exports["report"]()  # built only when the button is clicked
    assert page.count("plotly.js v") == 1 and page.count('class="plotly-graph-div"') == 3  # b twice, accuracy
    assert "Accuracy first (docs/math.md §13)" in page and "accuracy target" in page
    for setting in ("binary chain p = 0.85, q = 0.75, T = 60", "target ε_puffer", "per-entry ε_DP to certify"):
        assert setting in page
    assert f"per-entry ε_DP = {metric(at, 'Per-entry ε_DP')} at b* = {metric(at, 'Optimal window b*')}" in page
    assert f"ε_puffer = {metric(at, 'Guaranteed ε_puffer')} Pufferfish private" in page
    assert "— (a(b) ≥ ε_puffer)" in page and ">nan<" not in page  # b where no ε_DP works, said in words


def test_calibrate_chart_axes_follow_the_b_axis_choice() -> None:
    at = open_page(CALIBRATE, {"p": "0", "q": "0", "T": "100"})  # one usable point: b = T = 100
    layout = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]
    assert layout["xaxis"]["dtick"] == 1 and layout["xaxis"]["range"] == [99.5, 100.5]  # no b = 99.5 tick
    at = open_page(CALIBRATE, {"T": "1000", "bx": "log"})
    for chart in at.get("plotly_chart")[:2]:  # the two charts over b (the accuracy and risk tabs follow)
        layout = json.loads(chart.proto.spec)["layout"]
        assert layout["xaxis"]["type"] == "log"
    at.radio(key="w_cal_b_axis").set_value("zoom").run()
    layout = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]
    assert layout["xaxis"]["range"][1] < 100
    assert at.query_params["bx"] == "zoom"


# --------------------------------------------------------------------------- Calibrate: the robust Θ


def test_calibrate_against_the_robust_theta(exports: dict[str, object], tmp_path: Path) -> None:
    from puffer_core import load_sequences, prior_spread

    at = open_page("app_pages/curves.py")
    at.radio(key="w_kind").set_value("matrix").run()
    at.selectbox(key="w_preset").set_value("Fitted from data").run()
    at.button(key="w_load_preset").click().run()
    at.switch_page(CALIBRATE).run()
    assert not problems(at) and not errors(at)
    fit_shown = metric(at, "Per-entry ε_DP")
    at.toggle(key="w_cal_unc_on").set_value(True).run()
    at.number_input(key="w_cal_unc_draws").set_value(8).run()
    assert not problems(at) and not errors(at)
    data = load_sequences(ROOT / "assets" / "checkins.csv", user="user", time="time", state="state", group="country")
    spread = prior_spread(data, draws=8, seed=0)
    robust = calibrate(spread.robust, 1.0)
    assert metric(at, "Per-entry ε_DP") == f"{robust.eps_dp:.4g}"
    comparison = tables(at)[0].set_index("")
    assert comparison.columns.tolist() == ["fitted chain", "robust Θ"]
    assert comparison.loc["ε_DP at ε_puffer = 1"].tolist() == [fit_shown, f"{robust.eps_dp:.4g}"]
    assert comparison.loc["a(1)", "robust Θ"] == f"{spread.robust.a[0]:.4g}"
    assert float(fit_shown) >= robust.eps_dp  # allowing for the estimation error never buys more budget
    printed = _run_script(str(exports["script"]), tmp_path)  # Θ written out in the script, member by member
    _assert_page_matches(at, printed)
    assert "Prior uncertainty" in exports["report"]()


def test_the_calibrate_report_holds_no_app_markup(exports: dict[str, object]) -> None:
    """A static report has no buttons: no 'Choose *All b*', no markdown, no raw lists; the matrix is a table."""
    open_page(CALIBRATE, {"prior": "matrix", "P": "0.9,0.1;0.2,0.8", "labels": "home|work", "T": "1000"})
    page = re.sub(r"<script.*?</script>", "", str(exports["report"]()), flags=re.S)  # the words, not plotly.js
    assert "Showing b ≤" in page  # the zoom note's fact stays
    assert "Choose" not in page and "*All b*" not in page and "**" not in page
    assert "[[" not in page and "((" not in page  # settings in words, not raw lists
    assert "<td>2 × 2, the table “Transition matrix” below</td>" in page and "<td>home, work</td>" in page
    assert "<h2>Transition matrix</h2>" in page
