"""The Streams page under AppTest.

Every number the page shows is compared with puffer_core called directly; the exported scripts are
run in a fresh Python process and what they print is compared with the page and the library.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from app_ui.core.tables import fmt
from app_ui.streams.views import StreamExport, constant_schedule, parse_script_output, parse_segments, stream_report
from puffer_core import (
    GaussianProcessPrior,
    MarkovChainPrior,
    calibrate,
    certify,
    influence_curve,
)
from puffer_core.audit.stream import exact_stream_leakage
from puffer_core.mechanisms.laws import laplace_histogram_emission, randomized_response_emission
from puffer_core.stream.bounds import translation_bound
from puffer_core.stream.registry import plan_stream, stream_bounds
from puffer_core.stream.supremum import tpl_supremum
from puffer_core.stream.tpl import temporal_privacy_leakage
from tests.app.conftest import errors, metric, open_page, problems, tables
from tests.support.scripts import run_script as run_exported

STREAM = "app_pages/stream.py"
ROOT = Path(__file__).resolve().parents[2]
DEFAULT = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=100)


def chart(at, index: int = 0) -> dict[str, list[str]]:
    """The plotted traces of a page's plotly chart: name → hover values (as the page formats them)."""
    spec = json.loads(at.get("plotly_chart")[index].proto.spec)
    return {d["name"]: d["customdata"] for d in spec["data"] if "customdata" in d and "name" in d}


def _script(at) -> str:  # noqa: ANN001 - the page's script (the Share button's link is code too)
    return next(c.value for c in at.code if c.language == "python")


def run_script(code: str, tmp_path: Path, name: str) -> str:
    return run_exported(code, tmp_path, f"{name}.py")


def edit_segments(at, edited_rows=None, added_rows=None, deleted_rows=None) -> None:
    key = f"w_stream_segments_{at.session_state['settings']['stream_segments_version']}"
    at.session_state[key] = {
        "edited_rows": edited_rows or {},
        "added_rows": added_rows or [],
        "deleted_rows": deleted_rows or [],
    }
    at.run()


# --------------------------------------------------------------------------------------------
# the chart over t


def test_stream_chart_and_metrics_equal_the_library() -> None:
    at = open_page(STREAM)
    assert not problems(at) and not errors(at)
    expected = stream_bounds(DEFAULT, [0.3] * 100, curve=influence_curve(DEFAULT))
    assert metric(at, "Max TPL over t") == fmt(expected.temporal.max_tpl)
    assert metric(at, "[C] bound") == fmt(expected.translation.eps_puffer)
    assert metric(at, "Group DP") == "30"
    assert metric(at, "Exact leakage") == "—"
    shown = chart(at)
    assert shown["TPL (temporal leakage)"] == [fmt(v) for v in expected.temporal.tpl]
    assert shown["BPL (from the past)"] == [fmt(v) for v in expected.temporal.bpl]
    assert shown["FPL (from the future)"] == [fmt(v) for v in expected.temporal.fpl]
    assert shown["[C] bound"] == [fmt(v) for v in expected.translation.per_entry]
    assert set(shown["group DP (Σ ε_t)"]) == {"30"}
    assert "exact (every sequence)" not in shown
    assert any(expected.describe() in m.value for m in at.markdown)
    table = tables(at)[0]
    assert list(table["TPL"]) == [fmt(v) for v in expected.temporal.tpl]
    # the supremum of the unbounded stream (constant ε)
    assert metric(at, "sup TPL, unbounded stream") == fmt(tpl_supremum(DEFAULT, 0.3))


def test_tiny_chain_shows_the_exact_leakage_below_both_bounds() -> None:
    at = open_page(STREAM, {"p": "0.9", "q": "0.8", "T": "6"})
    assert not problems(at) and not errors(at)
    prior = DEFAULT.with_length(6)
    laws = (("stream_rr", randomized_response_emission), ("stream_histogram", laplace_histogram_emission))
    for mechanism, make in laws:
        at.radio(key="w_stream_mechanism").set_value(mechanism).run()
        exact = exact_stream_leakage(prior, make(2, 0.3))
        bounds = stream_bounds(prior, [0.3] * 6, curve=influence_curve(prior))
        assert metric(at, "Exact leakage") == fmt(exact.eps)
        assert chart(at)["exact (every sequence)"] == [fmt(v) for v in exact.per_entry]
        assert np.all(exact.per_entry <= bounds.temporal.tpl + 1e-12)
        assert np.all(exact.per_entry <= bounds.translation.per_entry + 1e-12)


def test_shortening_the_prior_for_the_exact_audit() -> None:
    at = open_page(STREAM)
    assert any("T ≤ 10 steps" in c.value for c in at.caption)
    at.button(key="w_stream_shorten").click().run()
    assert not problems(at) and not errors(at)
    assert at.session_state["settings"]["length"] == 10
    exact = exact_stream_leakage(DEFAULT.with_length(10), randomized_response_emission(2, 0.3))
    assert metric(at, "Exact leakage") == fmt(exact.eps)


def test_a_theta_prior_takes_the_worst_prior_at_every_step() -> None:
    at = open_page(STREAM, {"prior": "theta", "theta": "0.8,0.8;0.95,0.7", "T": "40"})
    assert not problems(at) and not errors(at)
    priors = [MarkovChainPrior([[p, 1 - p], [1 - q, q]], length=40) for p, q in ((0.8, 0.8), (0.95, 0.7))]
    expected = temporal_privacy_leakage(priors, 0.3)
    assert chart(at)["TPL (temporal leakage)"] == [fmt(v) for v in expected.tpl]
    assert any("worst prior at every step" in c.value for c in at.caption)


def test_a_gaussian_prior_gets_the_c_bound_and_a_clear_word_about_tpl() -> None:
    at = open_page(STREAM, {"prior": "gaussian", "n": "12", "ell": "2"})
    assert not problems(at) and not errors(at)
    assert any("TPL needs a Markov chain prior" in i.value for i in at.info)
    curve = influence_curve(GaussianProcessPrior(n=12, length_scale=2.0))
    assert metric(at, "Max TPL over t") == "—"
    assert metric(at, "[C] bound") == fmt(translation_bound(curve, [0.3] * 12).eps_puffer)
    assert "TPL (temporal leakage)" not in chart(at)
    assert metric(at, "ε per step under TPL") == "—"
    assert metric(at, "ε per step under [C]") == fmt(calibrate(curve, 1.0).eps_dp)
    assert at.toggle(key="w_stream_unbounded").disabled


def test_infinite_supremum_is_shown_as_infinity_with_its_reason() -> None:
    # each state rules out one next state, which another state reaches with probability 0.5: −log 0.5
    cycle = {"prior": "matrix", "P": "0.5,0.5,0;0,0.5,0.5;0.5,0,0.5", "T": "50"}
    at = open_page(STREAM, cycle)
    assert metric(at, "sup TPL, unbounded stream") != "∞"
    at.number_input(key="w_stream_eps").set_value(1.0).run()
    assert metric(at, "sup TPL, unbounded stream") == "∞"
    assert any("−log m = 0.6931" in m.value and "below 0.6931" in m.value for m in at.markdown)
    deterministic = open_page(STREAM, {"prior": "matrix", "P": "0,1,0;0,0,1;1,0,0", "T": "50"})
    assert not problems(deterministic) and not errors(deterministic)
    assert metric(deterministic, "sup TPL, unbounded stream") == "∞"
    assert any("for every ε > 0" in m.value for m in deterministic.markdown)


# --------------------------------------------------------------------------------------------
# the schedule table


def test_a_schedule_table_gives_the_library_numbers_for_a_varying_schedule() -> None:
    at = open_page(STREAM)
    at.radio(key="w_stream_mode").set_value("table").run()
    assert not problems(at) and not errors(at)
    schedule = [0.1] * 50 + [0.3] * 50
    expected = stream_bounds(DEFAULT, schedule, curve=influence_curve(DEFAULT))
    assert chart(at)["TPL (temporal leakage)"] == [fmt(v) for v in expected.temporal.tpl]
    assert chart(at)["[C] bound"] == [fmt(v) for v in expected.translation.per_entry]
    assert metric(at, "Group DP") == fmt(20.0)
    assert "sup TPL, unbounded stream" not in [m.label for m in at.metric]  # only for a constant ε
    edit_segments(
        at, added_rows=[{"from step": 80, "to step": "end", "ε per step": 1.0}], edited_rows={1: {"to step": "79"}}
    )
    assert not errors(at)
    changed = stream_bounds(DEFAULT, [0.1] * 50 + [0.3] * 29 + [1.0] * 21, curve=influence_curve(DEFAULT))
    assert metric(at, "Max TPL over t") == fmt(changed.temporal.max_tpl)


@pytest.mark.parametrize(
    "edit,message",
    [
        ({"edited_rows": {1: {"from step": 45}}}, "Steps 45–50 are in rows 1 and 2: give each step one ε"),
        ({"edited_rows": {1: {"from step": 55}}}, "Steps 51–54 have no ε"),
        ({"edited_rows": {1: {"to step": "90"}}}, "Steps 91–100 have no ε"),
        ({"edited_rows": {0: {"ε per step": -1.0}}}, "Row 1: ε must be a number from 0 to 10; got -1"),
        ({"edited_rows": {0: {"to step": "soon"}}}, "Row 1: “to” must be a whole step number or “end”; got soon"),
        ({"edited_rows": {1: {"from step": 120}}}, "Row 2: “from” is step 120, beyond the stream's last step"),
        ({"edited_rows": {0: {"to step": "0"}}}, "Row 1: “to” (step 0) comes before “from” (step 1)"),
        ({"deleted_rows": [0, 1]}, "The table is empty"),
    ],
)
def test_schedule_table_is_validated_as_typed(edit: dict, message: str) -> None:
    at = open_page(STREAM)
    at.radio(key="w_stream_mode").set_value("table").run()
    edit_segments(at, **edit)
    assert not problems(at)
    assert any(message in e for e in errors(at)), errors(at)
    assert "Max TPL over t" not in [m.label for m in at.metric]  # no chart from a broken schedule
    at.button(key="w_stream_reset").click().run()
    assert not errors(at)


def test_parse_segments_by_hand() -> None:
    schedule, problems_found = parse_segments([(1, "3", 0.5), (4, "end", 0.0), (None, None, None)], 5)
    assert not problems_found and schedule.eps == (0.5, 0.5, 0.5, 0.0, 0.0)
    assert parse_segments([(1, "end", 0.0)], 5)[1] == [
        "every ε_t is 0, so nothing is released: give at least one step a positive ε"
    ]
    assert parse_segments([(2, "end", 0.2)], 5)[1] == [
        "step 1 has no ε: add a row for them or widen a neighbouring one"
    ]
    assert constant_schedule(0.4, 3).constant == 0.4


# --------------------------------------------------------------------------------------------
# the planner


def test_planner_answers_for_both_bounds_and_an_unbounded_stream() -> None:
    at = open_page(STREAM)
    at.number_input(key="w_stream_target").set_value(2.0).run()
    curve = influence_curve(DEFAULT)
    plan = plan_stream(DEFAULT, 2.0, curve=curve)
    assert metric(at, "ε per step under TPL") == fmt(plan.eps_tpl)
    assert metric(at, "ε per step under [C]") == fmt(plan.eps_translation)
    assert metric(at, "ε per step under group DP") == fmt(0.02)
    # the plan meets the target under each bound (checked with the bounds themselves)
    assert temporal_privacy_leakage(DEFAULT, plan.eps_tpl).max_tpl <= 2.0
    assert certify(curve, plan.eps_translation).eps_puffer <= 2.0 + 1e-12
    at.toggle(key="w_stream_unbounded").set_value(True).run()
    endless = plan_stream(DEFAULT, 2.0, curve=curve, unbounded=True)
    assert metric(at, "ε per step under TPL") == fmt(endless.eps_tpl)
    assert metric(at, "ε per step under [C]") == fmt(endless.eps_translation)
    assert tpl_supremum(DEFAULT, endless.eps_tpl) <= 2.0
    assert any("group DP allows nothing (infinitely many entries)" in m.value for m in at.markdown)


# --------------------------------------------------------------------------------------------
# report and script


def test_stream_script_prints_the_page_numbers(tmp_path: Path) -> None:
    at = open_page(STREAM, {"p": "0.9", "q": "0.8", "T": "8"})
    at.radio(key="w_stream_mode").set_value("table").run()
    assert not errors(at)
    named, steps = parse_script_output(run_script(_script(at), tmp_path, "stream"))
    assert metric(at, "Max TPL over t") == fmt(float(named["bound_tpl"]))
    assert metric(at, "[C] bound") == fmt(float(named["bound_c_bound"]))
    assert metric(at, "Exact leakage") == fmt(float(named["exact"]))
    assert metric(at, "ε per step under TPL") == fmt(float(named["plan_tpl"]))
    prior = DEFAULT.with_length(8)
    schedule = [0.1] * 4 + [0.3] * 4
    bounds = stream_bounds(prior, schedule, curve=influence_curve(prior))
    exact = exact_stream_leakage(prior, [randomized_response_emission(2, e) for e in schedule])
    assert steps["eps"].tolist() == schedule
    assert steps["tpl"].tolist() == pytest.approx(bounds.temporal.tpl.tolist(), rel=1e-12)
    assert steps["c_bound"].tolist() == pytest.approx(bounds.translation.per_entry.tolist(), rel=1e-12)
    assert steps["exact"].tolist() == pytest.approx(exact.per_entry.tolist(), rel=1e-12)
    assert list(tables(at)[0]["exact"]) == [fmt(v) for v in steps["exact"]]
    assert "sup_tpl" not in named  # a varying schedule has no constant-ε supremum


def test_stream_script_for_constant_eps_and_a_gaussian_prior(tmp_path: Path) -> None:
    at = open_page(STREAM)
    named, steps = parse_script_output(run_script(_script(at), tmp_path, "stream"))
    assert float(named["sup_tpl"]) == pytest.approx(tpl_supremum(DEFAULT, 0.3), rel=1e-12)
    assert named["divergence_eps"] == "inf" and len(steps) == 100
    assert all(math.isnan(v) for v in steps["exact"])
    gauss = open_page(STREAM, {"prior": "gaussian", "n": "10", "ell": "1"})
    named, steps = parse_script_output(run_script(_script(gauss), tmp_path, "gauss"))
    assert metric(gauss, "[C] bound") == fmt(float(named["bound_c_bound"]))
    assert named["bound_tpl"] == "nan" and all(math.isnan(v) for v in steps["tpl"])


def test_stream_report_holds_the_settings_and_the_numbers() -> None:
    params = (("p", 0.9), ("q", 0.8), ("length", 6))
    description = "binary chain p = 0.9, q = 0.8, T = 6"
    export = StreamExport("binary", params, description, constant_schedule(0.3, 6), "stream_rr", True, 1.0, False, True)
    page = stream_report(export)
    prior = DEFAULT.with_length(6)
    bounds = stream_bounds(prior, [0.3] * 6, curve=influence_curve(prior))
    exact = exact_stream_leakage(prior, randomized_response_emission(2, 0.3))
    assert "<h1>Streams: leakage over time</h1>" in page and page.count("plotly.js v") == 1
    for heading in ("Leakage over time", "Unbounded stream", "Planner"):
        assert f"<h2>{heading}</h2>" in page
    assert f"{bounds.temporal.max_tpl:.6g}" in page and f"{exact.eps:.6g}" in page
    assert "ε = 0.3 at every step t = 1..6" in page


def test_a_stream_whose_tpl_is_out_of_reach_shows_the_c_bound_and_says_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With the work limit at ~0 every chain's TPL is out of reach: the page (and its script) keep [C] and group DP."""
    import puffer_core.stream.tpl as stream_module

    monkeypatch.setattr(stream_module, "WORK_LIMIT_SECONDS", 1e-9)
    at = open_page(STREAM, {"p": "0.83", "q": "0.71", "T": "37"})  # values no other test caches
    assert not problems(at) and not errors(at) and not at.exception
    prior = MarkovChainPrior([[0.83, 0.17], [0.29, 0.71]], length=37)
    translation = translation_bound(influence_curve(prior), [0.3] * 37)
    assert metric(at, "Max TPL over t") == "—"
    assert metric(at, "[C] bound") == fmt(translation.eps_puffer)
    assert any("TPL is not computed: this stream is out of reach" in m.value for m in at.markdown)
    assert "TPL (temporal leakage)" not in chart(at)
    assert metric(at, "ε per step under TPL") == "—"
    # the script runs with the real work limit (as in a fresh process): it computes TPL, and the same [C] bound
    monkeypatch.undo()
    named, steps = parse_script_output(run_script(_script(at), tmp_path, "refused"))
    assert float(named["bound_c_bound"]) == translation.eps_puffer
    assert 0.3 < float(named["bound_tpl"]) < float(named["bound_group_dp"])
