"""Calibrate and Plan & compose pages under AppTest, checked against puffer_core."""

from __future__ import annotations

import pytest

from puffer_core import InfluenceCurve, MarkovChainPrior, calibrate, certify, compose, group_dp, influence_curve, plan
from puffer_core.mechanisms import pufferfish_exponential, pufferfish_laplace
from tests.app.conftest import errors, metric, open_page, problems, tables

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
    assert at.query_params["k"] == "4"


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
