"""Simulate (issue 29): "Share these settings" reopens the same data and form, and a run then gives the
same numbers, bit for bit (the same seed); the numbers are those of puffer_core's simulate called here."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from puffer_core import fit_markov_chain, load_dataset, simulate
from tests.app.conftest import errors, open_page, problems
from tests.support.apptest import AppTest

ROOT = Path(__file__).resolve().parents[2]
SIMULATE = "app_pages/simulate.py"
SEATTLE = "Seattle weather (real, NOAA 2012–2015)"


def _link(at: AppTest) -> dict[str, str]:
    return {name: str(at.query_params[name]) for name in at.query_params}


def test_the_link_reopens_the_data_and_the_form_and_the_same_run() -> None:
    at = open_page(SIMULATE)
    at.radio(key="sim_source").set_value(SEATTLE).run()
    at.radio(key="sim_user_seattle-weather").set_value("year").run()
    at.number_input(key="w_sim_k").set_value(2).run()
    at.text_input(key="w_sim_grid").set_value("0.3, 1.7").run()
    at.number_input(key="w_sim_trials").set_value(12).run()
    at.number_input(key="w_sim_seed").set_value(9).run()
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)
    link = _link(at)
    assert link["simdata"] == "builtin:seattle-weather:year" and link["simk"] == "2" and link["simseed"] == "9"
    first = at.session_state["sim_result"][1].metrics
    again = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=300)
    for name, value in link.items():
        again.query_params[name] = value
    again.run()
    again.switch_page(SIMULATE).run()
    assert not problems(again) and not errors(again)
    assert again.number_input(key="w_sim_k").value == 2 and again.text_input(key="w_sim_grid").value == "0.3,1.7"
    again.button(key="w_sim_run").click().run()
    assert not problems(again) and not errors(again)
    second = again.session_state["sim_result"][1].metrics
    assert np.array_equal(first["mean"].to_numpy(), second["mean"].to_numpy())
    data = load_dataset("seattle-weather", user="year")
    names = list(dict.fromkeys(first["mechanism"]))
    ref = simulate(data, prior=fit_markov_chain(data), query="topk", k=2, mechanisms=names, eps_grid=[0.3, 1.7],
                   trials=12, rng=9)  # fmt: skip
    hit = ref.metrics[ref.metrics["metric"] == "HitRate@2"]
    shown = second[second["metric"] == "HitRate@2"]
    assert np.allclose(hit["mean"].to_numpy(), shown["mean"].to_numpy(), rtol=1e-12, atol=0)


THREE_STATES = b"user,time,state\n" + b"".join(
    f"u{u},{t},{'abc'[(u * 7 + t * t) % 3]}\n".encode() for u in range(30) for t in range(8)
)


def test_with_three_states_k_starts_below_3_and_a_k_that_cannot_fail_is_explained() -> None:
    at = open_page(SIMULATE)
    at.radio(key="sim_source").set_value("Upload a CSV or Parquet file").run()
    at.file_uploader(key="sim_upload").set_value(("three.csv", THREE_STATES, "text/csv")).run()
    assert not problems(at) and not errors(at)
    assert at.number_input(key="w_sim_k").value == 2 and not at.warning
    at.number_input(key="w_sim_k").set_value(3).run()
    assert any("Hit Rate@3 is 1 for every mechanism" in w.value for w in at.warning)
