"""What is secret on the Simulate page (docs/math.md §16).

With "Gym against every other place" (or the first three check-ins) chosen, the run's privacy ledger equals the
library's simulate called here with the secrets written by hand; the per-entry ε_DP the page shows equals the
calibration of the curve for those secrets (influence_curve + calibrate, not the simulator) and is at least every
pair's; the link carries the secrets, the report says what is protected and the exported script, run in a fresh
process, prints the page's ledger.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app_ui.core.tables import fmt
from app_ui.prior.smoothing import DEFAULT_SMOOTHING
from puffer_core import calibrate, fit_markov_chain, influence_curve, load_dataset, simulate
from puffer_core.secrets import Secrets, read_secrets
from tests.app.conftest import capture_exports, errors, open_page, problems
from tests.app.test_app_simulate import _run_script

SIMULATE = "app_pages/simulate.py"
TRIALS = 10


def _run(query: dict[str, str]):  # noqa: ANN202 - the AppTest after a run
    at = open_page(SIMULATE, query)
    at.number_input(key="w_sim_trials").set_value(TRIALS).run()
    at.text_input(key="w_sim_grid").set_value("1").run()
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)
    return at


@pytest.mark.parametrize(("text", "secrets"), [
    ("p=sensitive;s=3", Secrets(pairs="sensitive", states=(3,))),  # Gym against every other place
    ("p=all;t=0.1.2", Secrets(positions=(0, 1, 2))),  # the first three check-ins of every user
])
def test_the_ledger_is_for_the_chosen_secrets(text: str, secrets: Secrets, monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    captured = capture_exports(monkeypatch)
    at = _run({"sec": text})
    result = at.session_state["sim_result"][1]
    data = load_dataset("checkins", user="user")
    prior = fit_markov_chain(data, smoothing=DEFAULT_SMOOTHING)
    settings = dict(eps_grid=[1.0], trials=TRIALS, rng=0)
    library = simulate(data, prior=prior, secrets=secrets, **settings)
    assert result.ledger["eps_dp"].tolist() == library.ledger["eps_dp"].tolist()
    everything = simulate(data, prior=prior, **settings)
    # the Pufferfish mechanism's ε_DP per entry: the calibration of the chosen secrets' curve, above every pair's
    row = result.ledger[(result.ledger["mechanism"] == "pufferfish_exponential") & (result.ledger["release"] == 1)]
    expected = calibrate(influence_curve(prior, secrets=secrets), 1.0)
    assert float(row["eps_dp"].iloc[0]) == pytest.approx(expected.eps_dp, rel=1e-12)
    base = everything.ledger[(everything.ledger["mechanism"] == "pufferfish_exponential")]
    assert float(row["eps_dp"].iloc[0]) >= float(base["eps_dp"].iloc[0])  # fewer secrets: at least the budget
    shown = next(t.value for t in at.table if "ε_DP per entry" in t.value.columns)
    assert fmt(expected.eps_dp) in shown["ε_DP per entry"].tolist()
    assert read_secrets(at.query_params["sec"]) == secrets  # the link carries them
    html, script = captured[-1]
    assert "what is secret" in html
    assert "secrets=Secrets(" in script
    blocks = _run_script(script, tmp_path)
    assert blocks["ledger"]["eps_dp"].tolist() == result.ledger["eps_dp"].tolist()


def test_every_pair_leaves_the_ledger_as_before() -> None:
    at = _run({})
    result = at.session_state["sim_result"][1]
    data = load_dataset("checkins", user="user")
    library = simulate(data, prior=fit_markov_chain(data, smoothing=DEFAULT_SMOOTHING), eps_grid=[1.0],
                       trials=TRIALS, rng=0)
    assert result.ledger["eps_dp"].tolist() == library.ledger["eps_dp"].tolist()
    assert "sec" not in at.query_params


def test_a_state_the_data_lack_is_an_error_and_nothing_runs() -> None:
    at = open_page(SIMULATE, {"sec": "p=sensitive;s=40"})
    assert any("What is secret" in e for e in errors(at))
    assert "w_sim_run" not in [b.key for b in at.button]  # nothing is simulated with other secrets than shown
