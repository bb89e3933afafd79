"""Calibrate's accuracy-first target travels (issue 29): its link keeps ±α, the probability, m and how it holds (or
the top-k target), the link opens the accuracy tab, and the guided path's "from the accuracy" comes back with the
exact ε_puffer a mechanism needs (puffer_core's accuracy_first called here), not the table's rounded digits."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from app_ui.prior.current import build_prior
from app_ui.prior.settings import PriorChoice
from puffer_core import (
    CountTarget,
    accuracy_first,
    calibrate,
    fit_markov_chain,
    influence_curve,
    load_dataset,
)
from puffer_core.display import fmt
from puffer_core.priors.fitting import DEFAULT_SMOOTHING
from tests.app.conftest import capture_exports, errors, open_page, problems
from tests.support.apptest import AppTest

ROOT = Path(__file__).resolve().parents[2]
CALIBRATE = "app_pages/calibrate.py"
ANALYST = "app_pages/analyst.py"


def _link(at: AppTest) -> dict[str, str]:
    return {name: str(at.query_params[name]) for name in at.query_params}


def test_the_link_keeps_the_accuracy_target_and_opens_its_tab() -> None:
    at = open_page(CALIBRATE)
    at.number_input(key="w_acc_alpha").set_value(25.0).run()
    at.number_input(key="w_acc_confidence").set_value(0.9).run()
    at.number_input(key="w_acc_m").set_value(7).run()
    at.radio(key="w_acc_joint").set_value("each").run()
    assert not problems(at) and not errors(at)
    link = _link(at)
    assert (link["acckind"], link["accalpha"], link["accconf"], link["accm"], link["accjoint"]) == (
        "counts", "25", "0.9", "7", "each"
    )  # fmt: skip
    again = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=300)
    for name, value in link.items():
        again.query_params[name] = value
    again.run()
    again.switch_page(CALIBRATE).run()
    assert not problems(again) and not errors(again)
    assert again.number_input(key="w_acc_alpha").value == 25.0 and again.number_input(key="w_acc_m").value == 7
    assert again.number_input(key="w_acc_confidence").value == 0.9 and again.radio(key="w_acc_joint").value == "each"
    assert again.session_state["calibrate_tab"] == "Accuracy → ε"
    assert again.tabs[2].label == "Accuracy → ε"


def test_from_the_accuracy_and_back_with_the_exact_eps() -> None:
    at = open_page(ANALYST)
    for _ in range(2):
        at.button(key="analyst_next").click().run()
    at.button(key="w_guide_to_accuracy").click().run()
    assert not problems(at) and not errors(at)
    at.switch_page(CALIBRATE).run()  # AppTest reruns the page it was told (the browser stays there)
    assert at.session_state["calibrate_tab"] == "Accuracy → ε"
    at.radio(key="w_acc_kind").set_value("counts").run()
    at.number_input(key="w_acc_alpha").set_value(40.0).run()
    at.number_input(key="w_acc_m").set_value(12).run()
    at.button(key="w_acc_use").click().run()
    assert not problems(at) and not errors(at)
    chosen = at.session_state["settings"]
    prior = PriorChoice.from_values(chosen)
    curve = influence_curve(build_prior(prior.kind, prior.params))  # the fit, as the registry builds it for every page
    fit = influence_curve(fit_markov_chain(load_dataset("checkins"), smoothing=DEFAULT_SMOOTHING))
    assert np.allclose(curve.a, fit.a, rtol=1e-12, atol=1e-12)
    plan = accuracy_first(CountTarget(40.0, 1.0 - 0.95, 12, at.radio(key="w_acc_joint").value), curve, None)
    cost = next(c for c in plan.costs if c.mechanism == "pufferfish_laplace")
    assert at.session_state["settings"]["eps_puffer"] == cost.eps_puffer  # exactly, every digit
    assert any(repr(cost.eps_puffer) in s.value for s in at.success)
    at.switch_page(ANALYST).run()
    assert not problems(at) and not errors(at)
    assert at.subheader[0].value == "3. Your target"
    assert at.number_input(key="w_guide_eps").value == cost.eps_puffer
    shown = "\n".join(m.value for m in at.markdown)
    assert f"**ε_DP = {fmt(calibrate(curve, cost.eps_puffer).eps_dp)}**" in shown


def test_each_report_table_uses_its_own_tab_s_eps(monkeypatch) -> None:  # noqa: ANN001 - pytest's monkeypatch
    captured = capture_exports(monkeypatch)
    at = open_page(CALIBRATE)
    at.number_input(key="w_eps").set_value(2.0).run()
    at.number_input(key="w_eps_dp").set_value(0.05).run()
    assert not problems(at) and not errors(at)
    html = captured[-1].report
    forward = html[html.index("<h2>ε_puffer → ε_DP") : html.index("<h2>ε_DP → ε_puffer")]
    reverse = html[html.index("<h2>ε_DP → ε_puffer") :]
    assert "ε_DP allowed" in forward and "b·ε_DP + a(b)</th>" not in forward and "at ε_DP" not in forward
    assert "b·ε_DP + a(b) at ε_DP = 0.05" in reverse
