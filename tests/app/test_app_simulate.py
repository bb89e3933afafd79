"""Simulate page under AppTest: demo data, uploads (good and bad), runs, results and downloads."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_ui.data_picker import simulation_report
from puffer_core.fitting import fit_markov_chain
from puffer_core.readers import load_sequences
from tests.app.conftest import errors, metric, open_page, problems, tables

SIMULATE = "app_pages/simulate.py"
ASSETS = Path(__file__).resolve().parents[2] / "assets"
UPLOAD = "Upload a CSV or Parquet file"


def _downloads(at: AppTest) -> dict[str, object]:
    return {b.label: b for b in at.download_button}


def _upload(at: AppTest, name: str, content: bytes) -> None:
    at.radio(key="sim_source").set_value(UPLOAD).run()
    at.file_uploader(key="sim_upload").set_value((name, content, "text/csv")).run()


def test_demo_data_summary_and_a_run() -> None:
    at = open_page(SIMULATE)
    assert not problems(at) and not errors(at)
    assert metric(at, "Users") == "2,000"
    assert metric(at, "States") == "12"
    assert metric(at, "Groups") == "20"
    at.number_input(key="w_sim_trials").set_value(20).run()
    at.text_input(key="w_sim_grid").set_value("0.5, 2").run()
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)
    assert "Results" in [s.value for s in at.subheader]
    table = tables(at)[1]
    assert list(table["ε_puffer"]) == ["0.5", "2"]
    assert {"Pufferfish exponential", "MQM", "Group DP exponential", "Group DP Laplace"} <= set(table.columns)
    assert {"Download the results (CSV)", "Download the ledger (CSV)", "Download the report (JSON)"} <= set(
        _downloads(at)
    )


def test_report_lists_every_setting() -> None:
    at = open_page(SIMULATE)
    at.number_input(key="w_sim_trials").set_value(10).run()
    at.number_input(key="w_sim_seed").set_value(7).run()
    at.button(key="w_sim_run").click().run()
    assert "Download the report (JSON)" in _downloads(at)
    signature, result = at.session_state["sim_result"]
    chosen = dict(signature[3])
    report = json.loads(simulation_report(at.session_state["dataset"], chosen, result.settings))
    assert report["data_source"].startswith("Check-ins")
    assert report["columns"] == {"user": "user", "time": "time", "state": "state", "group": "country"}
    assert report["settings"]["trials"] == 10 and report["settings"]["seed"] == 7
    simulation = report["simulation"]
    assert simulation["trials"] == 10
    assert simulation["rng"] == {"seed": 7}
    assert simulation["mechanisms"] == ["pufferfish_exponential", "mqm", "group_dp_exponential", "group_dp_laplace"]
    assert simulation["eps_grid"] == [0.5, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_several_releases_in_time_windows_and_the_histogram_query() -> None:
    at = open_page(SIMULATE)
    at.number_input(key="w_sim_trials").set_value(10).run()
    at.number_input(key="w_sim_releases").set_value(4).run()
    at.radio(key="w_sim_mode").set_value("windows").run()
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)
    at.slider(key="w_sim_release_shown").set_value(3).run()
    at.selectbox(key="w_sim_ledger_eps").set_value(2.0).run()
    assert not problems(at) and not errors(at)
    ledger = at.session_state["sim_result"][1].ledger
    assert ledger["release"].max() == 4
    at.radio(key="w_sim_query").set_value("histogram").run()
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)
    assert set(at.session_state["sim_result"][1].metrics["metric"]) == {"L1", "L1 expected"}


def test_changed_settings_ask_for_a_new_run() -> None:
    at = open_page(SIMULATE)
    at.number_input(key="w_sim_trials").set_value(10).run()
    at.button(key="w_sim_run").click().run()
    at.number_input(key="w_sim_k").set_value(2).run()
    assert any("run the simulation again" in i.value for i in at.info)


@pytest.mark.parametrize(
    ("grid", "message"),
    [("1, x", "'x' is not a number"), ("", "type at least one"), ("0, 1", "must be positive")],
)
def test_a_bad_epsilon_grid_is_an_error(grid: str, message: str) -> None:
    at = open_page(SIMULATE)
    at.number_input(key="w_sim_trials").set_value(10).run()
    at.text_input(key="w_sim_grid").set_value(grid).run()
    if any(b.key == "w_sim_run" for b in at.button):  # the grid parsed: the library checks the values
        at.button(key="w_sim_run").click().run()
    assert not problems(at)
    assert any(message in m for m in errors(at)), errors(at)


def test_no_mechanism_is_an_error() -> None:
    at = open_page(SIMULATE)
    at.multiselect(key="w_sim_mechanisms_topk").set_value([]).run()
    assert not problems(at)
    assert "Choose at least one mechanism." in errors(at)


def test_uploading_the_demo_csv_and_a_parquet_file() -> None:
    at = open_page(SIMULATE)
    _upload(at, "checkins.csv", (ASSETS / "checkins.csv").read_bytes())
    assert not problems(at) and not errors(at)
    assert at.selectbox(key="sim_col_group").value == "country"
    assert metric(at, "Users") == "2,000"
    at.number_input(key="w_sim_trials").set_value(10).run()
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)
    assert "Results" in [s.value for s in at.subheader]

    frame = pd.read_csv(ASSETS / "activities.csv").rename(
        columns={"user": "participant", "time": "ts", "state": "activity"}
    )
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    at.file_uploader(key="sim_upload").set_value(("activities.parquet", buffer.getvalue(), "application/octet-stream"))
    at.run()
    assert not problems(at) and not errors(at)
    assert [at.selectbox(key=f"sim_col_{c}").value for c in ("user", "time", "state", "group")] == [
        "participant",
        "ts",
        "activity",
        "age_group",
    ]
    assert metric(at, "Users") == "150"


def test_a_gzip_csv_with_semicolons() -> None:
    at = open_page(SIMULATE)
    content = gzip.compress(b"user;time;state\nu1;1;A\nu1;2;B\nu2;1;B\nu2;2;A\n")
    _upload(at, "small.csv.gz", content)
    assert not problems(at) and not errors(at)
    assert metric(at, "Users") == "2"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("broken.csv", b"user,time,state\nu1,2024-01-01,A\nu1,not a time,B\n", "cannot be read as times"),
        ("binary.csv", b"\x00\x01\x02garbage\x00" * 20, "binary data"),
        ("empty.csv", b"", "empty"),
        ("one_state.csv", b"user,time,state\nu1,1,A\nu1,2,A\n", "at least 2 states are needed"),
        ("duplicates.csv", b"user,time,state\nu1,1,A\nu1,1,B\n", "repeat a (user, time) pair"),
        ("missing.csv", b"user,time,state\nu1,1,A\nu1,,B\n", "missing values"),
        ("fake.parquet", b"PAR1 this is not parquet", "could not be read as Parquet"),
    ],
)
def test_bad_uploads_give_an_error_not_a_traceback(name: str, content: bytes, message: str) -> None:
    at = open_page(SIMULATE)
    _upload(at, name, content)
    assert not problems(at)
    assert any(message in m for m in errors(at)), errors(at)
    assert not [s for s in at.subheader if s.value == "2. What to release"]


def test_the_fitted_chain_goes_to_the_curves_page() -> None:
    at = open_page(SIMULATE)
    at.button(key="w_use_prior").click().run()
    assert any("now the prior" in s.value for s in at.success)
    at.switch_page("app_pages/curves.py").run()
    assert not problems(at) and not errors(at)
    expected = fit_markov_chain(load_sequences(ASSETS / "checkins.csv", group="country"))
    editor = at.data_editor[0].value
    assert list(editor.columns) == list(expected.labels)
    assert editor.to_numpy() == pytest.approx(expected.transition)
    assert at.query_params["prior"] == "matrix"


def test_settings_and_results_survive_switching_pages() -> None:
    at = open_page(SIMULATE)
    at.radio(key="sim_source").set_value("Activities (synthetic, after Capture-24)").run()
    at.number_input(key="w_sim_trials").set_value(12).run()
    at.button(key="w_sim_run").click().run()
    at.switch_page("app_pages/home.py").run()
    at.switch_page(SIMULATE).run()
    assert not problems(at) and not errors(at)
    assert at.radio(key="sim_source").value == "Activities (synthetic, after Capture-24)"
    assert at.number_input(key="w_sim_trials").value == 12
    assert "Results" in [s.value for s in at.subheader]


def test_a_new_file_under_the_same_name_is_new_data() -> None:
    at = open_page(SIMULATE)
    _upload(at, "data.csv", b"user,time,state\nu1,1,A\nu1,2,B\nu1,3,A\nu2,1,B\nu2,2,B\n")
    at.number_input(key="w_sim_trials").set_value(5).run()
    at.button(key="w_sim_run").click().run()
    assert "Results" in [s.value for s in at.subheader]
    # same name, same number of users and entries, other states
    at.file_uploader(key="sim_upload").set_value(
        ("data.csv", b"user,time,state\nu1,1,X\nu1,2,Y\nu1,3,X\nu2,1,Y\nu2,2,Y\n", "text/csv")
    ).run()
    assert not problems(at) and not errors(at)
    assert "Results" not in [s.value for s in at.subheader]
    assert any("run the simulation again" in i.value for i in at.info)
    at.button(key="w_use_prior").click().run()
    assert at.session_state["settings"]["labels"] == ("X", "Y")


def test_a_chain_fitted_to_one_entry_per_user_opens_on_the_curves_page() -> None:
    at = open_page(SIMULATE)
    _upload(at, "single.csv", b"user,time,state\nu1,1,A\nu2,1,B\nu3,1,A\n")
    at.button(key="w_use_prior").click().run()
    at.switch_page("app_pages/curves.py").run()
    assert not problems(at) and not errors(at)
    assert at.number_input(key="w_length").value == 1


def test_the_upload_is_parsed_once_and_the_chain_fitted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import app_ui.data_picker as picker
    import puffer_core.simulation as simulation

    calls: list[str] = []

    def counting(name, function):
        def wrapped(*args, **kwargs):
            calls.append(name)
            return function(*args, **kwargs)

        return wrapped

    monkeypatch.setattr(picker, "read_table", counting("parse", picker.read_table))
    monkeypatch.setattr(picker, "fit_markov_chain", counting("fit", picker.fit_markov_chain))
    monkeypatch.setattr(simulation, "fit_markov_chain", counting("fit again", simulation.fit_markov_chain))
    at = open_page(SIMULATE)
    _upload(at, "once.csv", b"user,time,state\nu1,1,A\nu1,2,B\nu1,3,A\nu2,1,B\nu2,2,A\nu2,3,B\n")
    at.number_input(key="w_sim_trials").set_value(5).run()
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)
    assert "Results" in [s.value for s in at.subheader]
    # the demo shown first is fitted for its heatmap; the upload is parsed once and fitted once, and the
    # simulation uses that chain instead of fitting again
    assert calls == ["fit", "parse", "fit"]
    report = json.loads(simulation_report(at.session_state["dataset"], {}, at.session_state["sim_result"][1].settings))
    assert report["prior"].startswith("fitted on these data")
