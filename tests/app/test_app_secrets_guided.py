"""What is secret on the analyst's guided path (docs/math.md §16).

With "Gym against every other place" chosen (link key ``sec``), the path's target is the calibration of the chosen
secrets' curve, found here by scanning that curve for the largest (ε − a(b)) / b (not the library's calibrate), and
gives each entry at least every pair's budget; its plan composes that point by Theorem 6.2 written out; its trial
equals the library's simulate with the secrets; the later steps say what is protected; the link carries the
secrets; Simulate, opened from the trial, runs with them (bit for bit the trial's numbers); the script, run in a
fresh process, prints the path's numbers for them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from puffer_core import fit_markov_chain, influence_curve, load_dataset, simulate
from puffer_core.display import fmt
from puffer_core.priors.fitting import DEFAULT_SMOOTHING
from puffer_core.secrets import Secrets, read_secrets
from tests.app.conftest import capture_exports, errors, open_page, problems, static_tables
from tests.app.test_app_analyst import _best
from tests.app.test_app_guided_carry import _printed
from tests.support.apptest import AppTest
from tests.support.scripts import run_script

ROOT = Path(__file__).resolve().parents[2]
ANALYST = "app_pages/analyst.py"
GYM = Secrets(pairs="sensitive", states=(3,))
EPS, RELEASES, TRIALS, SEED = 1.0, 12, 20, 7


@pytest.fixture(scope="module")
def reference() -> dict[str, object]:
    data = load_dataset("checkins")
    fit = fit_markov_chain(data, smoothing=DEFAULT_SMOOTHING)
    assert fit.labels[3] == "Gym"
    return {"stats": data.stats(), "fit": fit, "chosen": influence_curve(fit, secrets=GYM),
            "every": influence_curve(fit)}


def _next(at: AppTest) -> None:
    at.button(key="analyst_next").click().run()
    assert not problems(at) and not errors(at)


def _protected(at: AppTest) -> list[str]:
    return [c.value for c in at.caption if c.value.startswith("**What is protected.**")]


def _to_trial() -> AppTest:
    at = open_page(ANALYST, {"sec": "p=sensitive;s=3"})
    _next(at)
    _next(at)
    return at


def test_the_path_calibrates_plans_and_runs_for_the_chosen_secrets(reference: dict[str, object]) -> None:
    at = _to_trial()
    text = "\n".join(m.value for m in at.markdown)
    b, a, eps_dp = _best(reference["chosen"], EPS)
    assert f"**ε_DP = {fmt(eps_dp)}**" in text and f"a(b) = {fmt(a)}" in text
    assert eps_dp >= _best(reference["every"], EPS)[2]  # fewer secrets: at least every pair's budget
    assert any("Gym" in c for c in _protected(at))  # the section's sentence
    assert read_secrets(at.query_params["sec"]) == GYM  # the link carries them
    _next(at)
    composed = a + RELEASES * (EPS - a)  # [C] Theorem 6.2 written out
    assert f"spend **ε_puffer = {fmt(composed)}**" in "\n".join(m.value for m in at.markdown)
    assert _protected(at)
    _next(at)
    at.number_input(key="w_guide_trials").set_value(TRIALS).run()
    at.number_input(key="w_guide_seed").set_value(SEED).run()
    at.button(key="w_guide_run").click().run()
    assert not problems(at) and not errors(at)
    guided = static_tables(at)[0]
    result = simulate(reference["stats"], prior=reference["fit"], query="topk", k=3,
                      mechanisms=["pufferfish_exponential", "group_dp_exponential"], eps_grid=[EPS], trials=TRIALS,
                      rng=SEED, secrets=GYM)
    rows = result.metrics[(result.metrics["metric"] == "HitRate@3") & (result.metrics["release"] == 1)]
    assert list(guided["mean"]) == [fmt(v, 3) for v in rows["mean"]]
    assert _protected(at)
    at.button(key="w_guide_to_simulate").click().run()
    at.switch_page("app_pages/simulate.py").run()
    assert not problems(at) and not errors(at)
    assert any("Gym" in c for c in _protected(at))  # Simulate protects the same secrets
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)
    metrics = at.session_state["sim_result"][1].metrics
    shown = metrics[(metrics["metric"] == "HitRate@3") & (metrics["release"] == 1)]
    assert np.array_equal(shown["mean"].to_numpy(), rows["mean"].to_numpy())  # bit for bit: the same run


def test_the_report_and_script_are_for_the_chosen_secrets(reference: dict[str, object],
                                                          monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    captured = capture_exports(monkeypatch)
    at = _to_trial()
    _next(at)
    _next(at)
    at.number_input(key="w_guide_trials").set_value(TRIALS).run()
    at.button(key="w_guide_run").click().run()
    _next(at)
    assert not problems(at) and not errors(at)
    _, a, eps_dp = _best(reference["chosen"], EPS)
    assert _protected(at)
    html, script = captured[-1]
    assert "what is secret" in html and "Gym" in html
    assert "SECRETS = Secrets(" in script and "secrets=SECRETS" in script
    printed = run_script(script, tmp_path, "guided.py")
    values, trial = _printed(printed)
    assert values["ε_DP per entry"] == fmt(eps_dp) and values["a(b)"] == fmt(a)
    assert values["together, Theorem 6.2"] == fmt(a + RELEASES * (EPS - a))
    shown = at.session_state["guide_trial"][1]
    assert list(trial["mean"]) == list(shown["mean"])


def test_the_lesson_says_what_its_numbers_protect() -> None:
    from app_ui.guided.lesson import PROTECTED

    at = open_page("app_pages/lesson.py", {"sec": "p=sensitive;s=0"})
    assert not problems(at) and not errors(at)
    assert PROTECTED in [c.value for c in at.caption]


def test_simulate_says_when_it_cannot_take_the_secrets_chosen_elsewhere() -> None:
    at = open_page("app_pages/simulate.py", {"sec": "e:s=3;w=1-2"})
    assert not problems(at) and not errors(at)
    assert any("which this page cannot take" in i.value for i in at.info)
