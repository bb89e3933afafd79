"""Accuracy beside every ε, post-processing, the smoothing control and ε as attacker risk, on the pages (AppTest).

Every number shown is compared with the library called directly (a second, independent path
through the page's inputs), or with a closed form.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from app_ui.core.tables import fmt
from puffer_core import (
    CountTarget,
    MarkovChainPrior,
    TopKTarget,
    accuracy_first,
    fit_markov_chain,
    influence_curve,
    load_dataset,
    max_posterior,
)
from tests.app.conftest import errors, open_page, problems, static_tables
from tests.app.test_app_calibrate_plan import _run_script

CALIBRATE = "app_pages/calibrate.py"
SIMULATE = "app_pages/simulate.py"
STREAM = "app_pages/stream.py"
PLAN = "app_pages/plan.py"
ATTACK = "app_pages/attack.py"
CURVES = "app_pages/curves.py"
SEATTLE = "Seattle weather (real, NOAA 2012–2015)"
BINARY = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=100)  # the default prior of every page


def _table_with(at, column: str):
    return next(t for t in static_tables(at) if column in t.columns)


def test_calibrate_accuracy_first_matches_the_library(exports, tmp_path: Path) -> None:  # noqa: ANN001 - the fixture
    at = open_page(CALIBRATE)
    assert not problems(at) and not errors(at)
    plan = accuracy_first(CountTarget(10.0, 0.05, 2, "all"), influence_curve(BINARY), BINARY)
    table = _table_with(at, "ε_puffer needed")
    assert list(table["mechanism"]) == [c.label for c in plan.costs]
    assert list(table["ε_puffer needed"]) == [fmt(c.eps_puffer) for c in plan.costs]
    summary = next(m.value for m in at.markdown if "needs the least privacy" in m.value)
    assert f"ε_puffer = {fmt(plan.cheapest().eps_puffer, 3)}" in summary
    # the script recomputes the same ε for every mechanism
    printed = _run_script(str(exports["script"]), tmp_path)
    for cost in plan.costs:
        assert fmt(float(printed[f"accuracy_first_{cost.mechanism}"])) == fmt(cost.eps_puffer)
    # top-k, every data with a lead of 10
    at.radio(key="w_acc_kind").set_value("topk").run()
    assert not problems(at) and not errors(at)
    plan = accuracy_first(TopKTarget(1, 0.9, 2, gap=10.0), influence_curve(BINARY), BINARY)
    table = _table_with(at, "ε_puffer needed")
    assert list(table["ε_puffer needed"]) == [fmt(c.eps_puffer) for c in plan.costs]


def test_calibrate_refuses_an_absurd_target_in_words() -> None:
    at = open_page(CALIBRATE)
    at.number_input(key="w_acc_alpha").set_value(0.0).run()
    assert not problems(at)
    assert any("an error of exactly 0 needs infinite ε" in e for e in errors(at))
    at.number_input(key="w_acc_alpha").set_value(5.0).run()
    at.number_input(key="w_acc_confidence").set_value(1.0).run()
    assert any("strictly between 0 and 1" in e for e in errors(at))
    at.number_input(key="w_acc_confidence").set_value(0.9).run()
    at.radio(key="w_acc_kind").set_value("topk").run()
    at.number_input(key="w_acc_hit").set_value(0.3).run()  # 1 of 2 states by chance: 0.5
    assert any("reached by pure noise" in e for e in errors(at)) and not problems(at)


def test_calibrate_says_what_eps_means_to_an_attacker() -> None:
    at = open_page(CALIBRATE, {"eps": "1"})
    sentence = next(m.value for m in at.markdown if m.value.startswith("**What ε_puffer = 1 means"))
    pi = BINARY.initial  # stationary (2/3, 1/3): the state nearest 25% is '1'
    assert f"probability {pi[1]:.0%}" in sentence
    assert f"**{max_posterior(float(pi[1]), 1.0):.0%}**" in sentence
    table = _table_with(at, "largest posterior after the release")
    assert list(table["largest posterior after the release"]) == [fmt(max_posterior(float(p), 1.0)) for p in pi]


def test_plan_shows_the_accuracy_of_every_release() -> None:
    at = open_page(PLAN)
    assert not problems(at) and not errors(at)
    table = next(d.value for d in at.dataframe if "accuracy (95%)" in d.value.columns)
    cells = table["accuracy (95%)"]  # top-3 of the binary chain's 2 states: the first pick
    assert all(cell.startswith("1st: lead ") for cell in cells)
    planner = next(m.value for m in at.markdown if "A histogram released with it" in m.value)
    assert "per count" in planner


def test_simulate_smoothing_control_and_post_processing() -> None:
    at = open_page(SIMULATE)
    at.radio(key="sim_source").set_value(SEATTLE).run()
    drivers = next(m.value for m in at.markdown if m.value.startswith("**a(1) = "))
    assert drivers.startswith("**a(1) = 24.3 comes from transitions never observed in the data**")
    at.select_slider(key="w_sim_smoothing").set_value(0.1).run()
    at.toggle(key="w_sim_smoothing_compare").set_value(True).run()
    assert not problems(at) and not errors(at)
    data = load_dataset("seattle-weather")
    a1 = influence_curve(fit_markov_chain(data, smoothing=0.1), 1).a[0]
    drivers = next(m.value for m in at.markdown if m.value.startswith("**"))
    assert any(m.value.startswith(f"**What drives a(1) = {fmt(a1, 3)}**") for m in at.markdown), drivers
    effect = next(t for t in static_tables(at) if "a(1)" in t.columns and "b* (ε_DP)" in t.columns)
    assert list(effect["a(1)"])[0] == fmt(24.29144915, 4) and list(effect["a(1)"])[-1] == fmt(a1)
    at.select_slider(key="w_sim_smoothing").set_value(1e-5).run()
    at.toggle(key="w_sim_postprocess").set_value(True).run()
    at.number_input(key="w_sim_trials").set_value(30).run()
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)
    compare = _table_with(at, "smoothing")
    assert {m.split(" at ε")[0] for m in compare["mechanism"]} == {"MQM", "Group DP Laplace"}
    grid = _table_with(at, "ε = 0.5").set_index("mechanism")
    assert grid.loc["Pufferfish exponential", "ε = 0.5"].startswith("lead ")
    assert grid.loc["MQM", "ε = 0.5"].startswith("±")
    result = at.session_state["sim_result"][1]
    assert {"mqm+prior", "group_dp_laplace+prior"} <= set(result.metrics["mechanism"])


def test_streams_accuracy_per_step_is_exact_for_the_release_alone() -> None:
    at = open_page(STREAM)
    at.toggle(key="w_stream_accuracy").set_value(True).run()
    assert not problems(at) and not errors(at)
    summary = next(m.value for m in at.markdown if m.value.startswith("**Accuracy per step**"))
    eps = 0.3  # the page's default ε per step
    exact = math.exp(eps) / (math.exp(eps) + 1)  # randomized response on 2 states names the state this often
    assert f"{fmt(100 * exact, 3)}% of the time on average" in summary


def test_the_attack_page_draws_the_test_on_the_region() -> None:
    at = open_page(ATTACK)
    for key in ("binary100", "sticky5", "checkins"):
        at.checkbox(key=f"w_attack_prior_{key}").uncheck().run()
    at.button(key="w_attack_run").click().run()
    assert not problems(at) and not errors(at)
    caption = next(c.value for c in at.caption if "likelihood ratio" in c.value)
    assert "Every point must lie in the shaded region" in caption
    certified = float(caption.split("certify ε ≥ ")[1].split(" ")[0])
    assert certified > 0


@pytest.mark.parametrize("tau", [0.01])  # the check-ins have 12 states: τ < 1/11
def test_the_fitted_preset_loads_the_chain_with_the_chosen_smoothing(tau: float) -> None:
    at = open_page(CURVES)
    at.radio(key="w_kind").set_value("matrix").run()
    at.selectbox(key="w_preset").set_value("Fitted from data").run()
    at.select_slider(key="w_fit_smoothing").set_value(tau).run()
    at.button(key="w_load_preset").click().run()
    assert not problems(at) and not errors(at)
    data = at.session_state["dataset"].sequences
    want = fit_markov_chain(data, smoothing=tau).transition
    got = np.array(at.session_state["settings"]["matrix"], dtype=float)
    assert np.allclose(got, want, atol=1e-12)
    assert any(f"fitted with τ = {tau:g}" in c.value for c in at.caption)
