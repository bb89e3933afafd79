"""The published baselines on the Simulate page (docs/math.md §15): they run, or say why not, in words."""

from __future__ import annotations

from tests.app.conftest import errors, open_page, problems

SIMULATE = "app_pages/simulate.py"


def test_the_baselines_run_or_say_why_not_on_the_demo_data() -> None:
    at = open_page(SIMULATE)
    at.number_input(key="w_sim_trials").set_value(10).run()
    at.text_input(key="w_sim_grid").set_value("1, 4").run()
    chosen = ["pufferfish_exponential", "mqm", "mqm_approx", "wasserstein", "influence_matrix"]
    at.multiselect(key="w_sim_mechanisms_topk").set_value(chosen).run()
    at.button(key="w_sim_run").click().run(timeout=180)
    assert not problems(at) and not errors(at)
    result = at.session_state["sim_result"][1]
    assert set(result.settings["refused"]) == {"wasserstein", "influence_matrix"}
    assert {"Pufferfish exponential", "MQM", "MQMApprox"} <= set(at.table[0].value.columns)
    notes = [m.value for m in at.markdown if "Not run" in m.value or "MQMApprox's σ_max" in m.value]
    text = "\n".join(notes)
    assert "Not run" in text and "spectral radius" in text and "count vectors" in text
    assert "MQMApprox's σ_max is" in text
