"""Simulate page under AppTest: demo data, uploads (good and bad), runs, results and downloads."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from app_ui.core.tables import fmt
from app_ui.data.picker import simulation_report
from puffer_core.data.readers import load_sequences
from puffer_core.priors.fitting import fit_markov_chain
from tests.app.conftest import capture_exports, errors, metric, open_page, problems
from tests.support.apptest import AppTest
from tests.support.scripts import run_script
from tests.support.uploads import DIRTY

SIMULATE = "app_pages/simulate.py"
ASSETS = Path(__file__).resolve().parents[2] / "assets"
UPLOAD = "Upload a CSV or Parquet file"


def _results_table(at: AppTest) -> pd.DataFrame:
    """The results table: a row per ε_puffer, a column per mechanism (the first static table with ε_puffer values)."""
    return next(t.value for t in at.table if "ε_puffer" in t.value.columns and "best on these data" not in t.value)


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
    table = _results_table(at)  # a static table that wraps to the page's width
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
    chosen = signature[3].as_dict()  # the SimulateSettings the run was kept under
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
    import app_ui.data.picker as picker
    import puffer_core.simulation.run as simulation

    calls: list[str] = []

    def counting(name, function):
        def wrapped(*args, **kwargs):
            calls.append(name)
            return function(*args, **kwargs)

        return wrapped

    monkeypatch.setattr(picker, "parse_upload", counting("parse", picker.parse_upload))
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


# --------------------------------------------------------------------------- the registry, repair, the note, exports

SEATTLE = "Seattle weather (real, NOAA 2012–2015)"
ROOT = Path(__file__).resolve().parents[2]


def _sidebar(at: AppTest) -> str:
    return " ".join(c.value for c in at.sidebar.caption)


def _infos(at: AppTest) -> list[str]:
    return [i.value for i in at.info]


def _markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def _figure(at: AppTest, key: str) -> dict:
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}"))
    return json.loads(chart.proto.spec)


def _run_seattle(at: AppTest, trials: int = 40, **numbers: int) -> None:
    at.radio(key="sim_source").set_value(SEATTLE).run()
    at.number_input(key="w_sim_trials").set_value(trials).run()
    for key, value in numbers.items():
        at.number_input(key=key).set_value(value).run()
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)


def test_seattle_weather_in_one_click_with_its_source_and_licence() -> None:
    at = open_page(SIMULATE)
    at.radio(key="sim_source").set_value(SEATTLE).run()
    assert not problems(at) and not errors(at)
    shown = " ".join(c.value for c in at.caption)
    assert "Real data. Source:** Daily weather observed in Seattle" in shown and "vega_datasets" in shown
    assert "**Licence:** Public domain: NOAA data" in shown
    # independently of the loader: the raw file has 48 months, 1,461 days, 5 weather states, 4 seasons
    raw = pd.read_csv(ASSETS / "seattle-weather.csv")
    assert metric(at, "Users") == str(raw["month"].nunique()) == "48"
    assert metric(at, "Entries") == f"{len(raw):,}"
    assert metric(at, "States") == str(raw["weather"].nunique())
    assert metric(at, "Groups") == str(raw["season"].nunique())
    assert "Seattle weather (real, NOAA 2012–2015), one sequence per month (48 users)" in _sidebar(at)
    at.radio(key="sim_user_seattle-weather").set_value("year").run()
    assert metric(at, "Users") == str(raw["year"].nunique()) == "4"
    assert "one sequence per year (4 users)" in _sidebar(at)
    # the synthetic demos state theirs too
    at.radio(key="sim_source").set_value("Check-ins (synthetic, after Foursquare)").run()
    shown = " ".join(c.value for c in at.caption)
    assert "Synthetic data. Source:** Simulated by assets/make_demo_data.py" in shown and "**Licence:**" in shown


def test_data_repair_drops_what_it_is_asked_to_and_says_how_many() -> None:
    at = open_page(SIMULATE)
    _upload(at, "dirty.csv", DIRTY)
    assert any("2 row(s) of the file 'dirty.csv' have missing values" in m for m in errors(at)), errors(at)
    assert any("2 row(s) have an empty cell in the chosen columns" in i for i in _infos(at)), _infos(at)
    assert "could not be used" in _sidebar(at)
    at.checkbox(key="sim_drop_missing").check().run()
    assert any("repeat a (user, time) pair" in m for m in errors(at)), errors(at)
    assert any("2 row(s) repeat an earlier row exactly" in i for i in _infos(at)), _infos(at)
    at.checkbox(key="sim_drop_duplicates").check().run()
    assert not problems(at) and not errors(at)
    assert "Dropped 2 row(s) with an empty cell and 2 repeated row(s): 11 of 15 rows kept." in " ".join(_infos(at))
    # counted by hand: u1 has times 1, 2, 3; u2 has 1, 2, 3, 4; u3 has 1, 2, 4, 5
    assert (metric(at, "Users"), metric(at, "Entries")) == ("3", "11")
    assert "dirty.csv (3 users)" in _sidebar(at)
    # the preview shows the file as read, empty cells included
    preview = next(d.value for d in at.dataframe if list(d.value.columns) == ["user", "time", "state", "zone"])
    assert len(preview) == 8 and preview["state"].isna().sum() == 1
    # only one repair: only its rows are dropped
    at.checkbox(key="sim_drop_missing").uncheck().run()
    assert any("missing values" in m for m in errors(at)), errors(at)


def test_a_group_column_is_guessed_from_few_text_values_and_used_once_confirmed() -> None:
    at = open_page(SIMULATE)
    _upload(at, "seattle.csv", (ASSETS / "seattle-weather.csv").read_bytes())
    for role, column in (("user", "month"), ("time", "date"), ("state", "weather")):
        at.selectbox(key=f"sim_col_{role}").set_value(column).run()
    assert at.selectbox(key="sim_col_group").value == "(none)"
    assert metric(at, "Groups") == "1"  # a guess is not used before the user confirms it
    suggestion = " ".join(c.value for c in at.caption)
    assert "**season** looks like a group: 4 text values (autumn, spring, summer, winter)" in suggestion
    at.button(key="sim_use_group").click().run()
    assert not problems(at) and not errors(at)
    assert at.selectbox(key="sim_col_group").value == "season"
    assert metric(at, "Groups") == "4" and metric(at, "Users") == "48"
    assert "looks like a group" not in " ".join(c.value for c in at.caption)


def test_after_a_failed_upload_the_sidebar_no_longer_names_the_previous_data() -> None:
    at = open_page(SIMULATE)
    assert "Check-ins (synthetic, after Foursquare) (2,000 users)" in _sidebar(at)
    _upload(at, "broken.csv", b"user,time,state\nu1,2024-01-01,A\nu1,not a time,B\n")
    assert any("cannot be read as times" in m for m in errors(at))
    sidebar = _sidebar(at)
    assert "none loaded; the file 'broken.csv' could not be used" in sidebar and "Check-ins" not in sidebar
    assert "dataset" not in at.session_state
    at.radio(key="sim_source").set_value("Activities (synthetic, after Capture-24)").run()
    assert "Activities (synthetic, after Capture-24) (150 users)" in _sidebar(at)
    assert "could not be used" not in _sidebar(at)


def test_a_file_that_cannot_be_parsed_shows_its_first_lines() -> None:
    at = open_page(SIMULATE)
    _upload(at, "ragged.csv", b"user,time,state\nu1,1,A\nu1,2,B,extra,fields\n")
    assert any("could not be read as CSV" in m for m in errors(at)), errors(at)
    assert any("u1,2,B,extra,fields" in c.value for c in at.code)


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ("0, -1", "every ε_puffer must be positive (above 0); 0 and -1 are not"),
        ("inf, 1", "'inf' is not a finite number"),
        ("0.5, 2000", "every ε_puffer must be between 0.01 and 1000; 2000 is not"),
    ],
)
def test_the_epsilon_grid_is_checked_as_it_is_typed(grid: str, message: str) -> None:
    at = open_page(SIMULATE)
    at.text_input(key="w_sim_grid").set_value(grid).run()
    assert not problems(at)
    assert f"The ε_puffer grid cannot be used: {message}." in errors(at), errors(at)
    assert not any(b.key == "w_sim_run" for b in at.button)  # flagged before anything runs


def test_a_value_typed_twice_is_used_once_and_said() -> None:
    at = open_page(SIMULATE)
    at.text_input(key="w_sim_grid").set_value("1, 2, 1").run()
    assert not errors(at)
    assert any("1 typed more than once: each is used once." in c.value for c in at.caption)
    at.number_input(key="w_sim_trials").set_value(5).run()
    at.button(key="w_sim_run").click().run()
    assert at.session_state["sim_result"][1].settings["eps_grid"] == [1.0, 2.0]


def test_the_best_mechanism_per_epsilon_with_ties_by_interval() -> None:
    at = open_page(SIMULATE)
    _run_seattle(at)
    result = at.session_state["sim_result"][1]
    rows = result.metrics[(result.metrics["metric"] == "Acc@1") & (result.metrics["release"] == 1)]
    best = next(t.value for t in at.table if "best on these data" in t.value.columns)
    assert list(best["ε_puffer"]) == ["0.5", "1", "2", "3", "4", "5"]
    for (eps, block), shown in zip(rows.groupby("eps_puffer"), best.itertuples(index=False)):
        top = block.loc[block["mean"].idxmax()]
        assert shown[1] == top["label"]
        overlapping = block[
            (block["ci_high"] >= top["ci_low"]) & (block["ci_low"] <= top["ci_high"]) & (block["label"] != top["label"])
        ]
        assert shown[3] == (", ".join(overlapping["label"]) or "—"), eps


def test_seattle_by_month_says_why_pufferfish_loses() -> None:
    at = open_page(SIMULATE)
    _run_seattle(at)
    note = next(m.value for m in at.markdown if m.value.startswith("- "))
    assert "**What this shows**" in _markdown(at)
    # independently of the explanation: the ledger puts Pufferfish exponential at b = T exactly at 0.5 and 1
    result = at.session_state["sim_result"][1]
    ledger = result.ledger
    fallback = ledger[(ledger["mechanism"] == "pufferfish_exponential") & (ledger["b"] == result.settings["t_max"])]
    assert sorted(fallback["eps_puffer"]) == [0.5, 1.0]
    assert "**Pufferfish exponential falls back to group DP** at ε_puffer = 0.5 and 1" in note
    assert "protects each user's whole sequence as one record (b = T)" in note
    assert "exactly what Group DP exponential does" in note
    assert "**The sequences are short** (at most T = 31 entries per user)" in note
    assert "**MQM adds group-DP noise**" in note


def test_the_seattle_explanation_never_contradicts_itself() -> None:
    """The headline is the fallback; no line says Pufferfish loses where it *is* group DP; a(1) is explained by
    the transitions never observed in the data, not by a sticky chain."""
    at = open_page(SIMULATE)
    _run_seattle(at, trials=200)
    lines = [line[2:] for line in next(m.value for m in at.markdown if m.value.startswith("- ")).split("\n")]
    result = at.session_state["sim_result"][1]
    ledger = result.ledger
    fallen = sorted(ledger[(ledger["mechanism"] == "pufferfish_exponential") & (ledger["b"] == 31)]["eps_puffer"])
    assert fallen == [0.5, 1.0]
    assert lines[0].startswith("**Pufferfish exponential falls back to group DP** at ε_puffer = 0.5 and 1")
    for line in lines:
        if line.startswith("**") and "beats Pufferfish exponential" in line:
            at_eps = line.split(":")[0]  # "… beats Pufferfish exponential** at ε_puffer = 2"
            assert not any(f"= {e:g}" in at_eps or f" {e:g} " in at_eps for e in fallen), line
            assert "although the paper's experiments rank Pufferfish first" in line
    # beaten where it fell back: said as a comparison with group DP, not as a loss of the calibration
    rows = result.metrics[(result.metrics["metric"] == "Acc@1") & (result.metrics["release"] == 1)]
    for eps in fallen:
        block = rows[rows["eps_puffer"] == eps].set_index("mechanism")
        puffer, twin = block.loc["pufferfish_exponential"], block.loc["group_dp_exponential"]
        best = block["mean"].idxmax()
        lost = puffer["ci_high"] < block.loc[best, "ci_low"] and twin["ci_high"] < block.loc[best, "ci_low"]
        said = [line for line in lines if line.startswith("Where Pufferfish exponential is group DP")]
        assert bool(said and f"{eps:g}" in said[0].split(")")[0]) == bool(lost)
    best = next(t.value for t in at.table if "best on these data" in t.value.columns)
    for eps in fallen:  # where they are the same mechanism, both are among the best or neither is
        row = best[best["ε_puffer"] == f"{eps:g}"].iloc[0]
        names = f"{row['best on these data']}, {row['tied within the intervals']}"
        assert ("Pufferfish exponential" in names) == ("Group DP exponential" in names), names
    drivers = next(line for line in lines if line.startswith("**a(1) = 24.3"))
    assert "never observed in the data" in drivers and "snow → fog" in drivers and "fog → snow" in drivers
    assert not any("sticky" in line for line in lines)


def test_results_that_agree_with_the_paper_say_so_without_a_note() -> None:
    at = open_page(SIMULATE)
    at.number_input(key="w_sim_trials").set_value(40).run()
    at.button(key="w_sim_run").click().run()
    assert "**What this shows**" not in _markdown(at)
    assert any("Pufferfish exponential is best or tied with the best at every ε_puffer" in s.value for s in at.success)


def test_the_ledger_chart_has_a_log_scale_and_series_that_differ_without_colour() -> None:
    at = open_page(SIMULATE)
    _run_seattle(at, trials=10, w_sim_releases=12)
    figure = _figure(at, "sim_ledger_chart")
    assert figure["layout"]["yaxis"].get("type") != "log"
    dashes = [t["line"]["dash"] for t in figure["data"]]
    assert len(set(dashes)) >= 4  # the four mechanisms, then the naive sum and group DP
    at.toggle(key="w_sim_ledger_log").set_value(True).run()
    assert not problems(at) and not errors(at)
    assert _figure(at, "sim_ledger_chart")["layout"]["yaxis"]["type"] == "log"
    assert "Lines drawn on top of each other" in " ".join(c.value for c in at.caption)
    totals = next(t.value for t in at.table if "composed ε_puffer" in t.value.columns)
    assert list(totals["naive sum"]) == ["60"] * 4  # 12 releases × ε_puffer 5
    accuracy = _figure(at, "sim_chart_Acc@1")
    styles = {(t["line"]["dash"], t["marker"]["symbol"]) for t in accuracy["data"]}
    assert len(styles) == len(accuracy["data"]) == 4


def _pufferfish_eps_dp(result: object) -> list[float]:
    ledger = result.ledger
    return ledger[(ledger["mechanism"] == "pufferfish_exponential") & (ledger["release"] == 1)]["eps_dp"].tolist()


def test_prior_uncertainty_calibrates_with_the_robust_set_and_shows_what_changed() -> None:
    at = open_page(SIMULATE)
    at.radio(key="sim_source").set_value(SEATTLE).run()
    at.toggle(key="w_sim_robust").set_value(True).run()
    at.number_input(key="w_sim_draws").set_value(5).run()
    at.number_input(key="w_sim_prior_seed").set_value(3).run()
    at.number_input(key="w_sim_trials").set_value(10).run()
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)
    robust = at.session_state["sim_result"][1]
    fitted = at.session_state["sim_fitted_result"][1]
    assert robust.settings["prior"]["priors"] == 6  # the fit and 5 draws
    # Θ's curve is above the fit's, so no curve-calibrated mechanism may spend more per entry with Θ
    a_fit = [a for _, a in fitted.settings["curve"]]
    a_set = [a for _, a in robust.settings["curve"]]
    assert all(s >= f - 1e-12 for s, f in zip(a_set, a_fit))
    assert all(s <= f + 1e-15 for s, f in zip(_pufferfish_eps_dp(robust), _pufferfish_eps_dp(fitted)))
    text = _markdown(at)
    assert "**Prior uncertainty: what the robust set Θ changed**" in text
    assert "Θ is the fit and 5 posterior draws" in text and "Θ's a(b) is furthest above the fit's at b =" in text
    changes = next(t.value for t in at.table if "ε_DP per entry: fitted → Θ" in t.value.columns)

    # listed: exactly the mechanisms and ε_puffer whose ε_DP or Acc@1 moved (found here from the two runs)
    def numbers(result: object) -> dict[tuple[str, str], tuple[float, float]]:
        ledger = result.ledger[result.ledger["release"] == 1]
        acc = result.metrics[(result.metrics["metric"] == "Acc@1") & (result.metrics["release"] == 1)]
        both = ledger.merge(acc, on=["mechanism", "label", "eps_puffer"])
        return {(r.label, f"{r.eps_puffer:g}"): (r.eps_dp, r.mean) for r in both.itertuples()}

    before, after = numbers(fitted), numbers(robust)
    moved = {key for key in before if before[key] != after[key]}
    assert set(zip(changes["mechanism"], changes["ε_puffer"])) == moved
    assert {m for m, _ in moved} == {"Pufferfish exponential"}
    assert "Rows that drive the spread of a(1) most" in " ".join(c.value for c in at.caption)
    assert _figure(at, "sim_theta_chart")["data"][1]["name"] == "robust Θ (calibrated with)"


def _run_script(script: str, folder: Path, *args: str, as_text: bool = False) -> dict[str, pd.DataFrame]:
    from app_ui.simulate.words import parse_script_output

    return parse_script_output(run_script(script, folder, "simulate.py", args), as_text=as_text)


def _same_metrics(printed: pd.DataFrame, result_metrics: pd.DataFrame) -> None:
    expected = result_metrics.reset_index(drop=True)
    assert list(printed.columns) == list(expected.columns)
    for column in ("mean", "ci_low", "ci_high", "std"):
        assert printed[column].tolist() == expected[column].tolist(), column  # same seed: the same numbers
    assert printed["mechanism"].tolist() == expected["mechanism"].tolist()


def test_report_and_script_of_seattle_recompute_the_page(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    captured = capture_exports(monkeypatch)
    at = open_page(SIMULATE)
    _run_seattle(at, trials=12, w_sim_seed=5)
    assert {"Download report (HTML)", "Download script (Python)"} <= set(_downloads(at))
    html, script = captured[-1]
    result = at.session_state["sim_result"][1]
    blocks = _run_script(script, tmp_path)
    as_printed = _run_script(script, tmp_path, as_text=True)
    _same_metrics(blocks["metrics"], result.metrics)
    assert blocks["ledger"]["eps_dp"].tolist() == result.ledger["eps_dp"].tolist()
    # the numbers the page shows, as it shows them
    shown = _results_table(at)
    printed = blocks["metrics"]
    acc = printed[(printed["metric"] == "Acc@1") & (printed["release"] == 1)]
    for label, column in acc.groupby("label"):
        assert shown[label].tolist() == [fmt(v) for v in column["mean"]]
    best = next(t.value for t in at.table if "best on these data" in t.value.columns)
    assert blocks["best"]["best"].tolist() == best["best on these data"].tolist()
    table = as_printed["Acc@1 by ε_puffer and mechanism (release 1)"]  # exactly what the page prints
    assert table.columns.tolist() == shown.columns.tolist() and table.to_numpy().tolist() == shown.to_numpy().tolist()
    # the report: every setting, the results table, the note, the charts, offline
    for text in (
        "Seattle weather (real, NOAA 2012–2015), one sequence per month",
        "Public domain",
        "seed",
        "trials",
        "0.5, 1, 2, 3, 4, 5",
        "Best mechanism per ε_puffer on these data",
        "Pufferfish exponential falls back to group DP",
        "<td>0.5</td>",
    ):
        assert text in html, text
    assert html.count('class="plotly-graph-div"') >= 4 and "<script src=" not in html


def test_the_script_of_a_repaired_upload_reads_the_file_the_same_way(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    captured = capture_exports(monkeypatch)
    at = open_page(SIMULATE)
    _upload(at, "dirty.csv", DIRTY)
    at.checkbox(key="sim_drop_missing").check().run()
    at.checkbox(key="sim_drop_duplicates").check().run()
    at.number_input(key="w_sim_trials").set_value(8).run()
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)
    html, script = captured[-1]
    assert "drop_missing=True, drop_duplicates=True" in script
    (tmp_path / "elsewhere.csv").write_bytes(DIRTY)
    blocks = _run_script(script, tmp_path, "elsewhere.csv")
    _same_metrics(blocks["metrics"], at.session_state["sim_result"][1].metrics)
    assert "2 row(s) with an empty cell and 2 repeated row(s) dropped; 11 of 15 rows kept" in html


def test_the_script_with_prior_uncertainty_prints_both_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    captured = capture_exports(monkeypatch)
    at = open_page(SIMULATE)
    at.radio(key="sim_source").set_value(SEATTLE).run()
    at.toggle(key="w_sim_robust").set_value(True).run()
    at.number_input(key="w_sim_draws").set_value(3).run()
    at.number_input(key="w_sim_alpha").set_value(0.5).run()
    at.text_input(key="w_sim_grid").set_value("0.5, 3").run()
    at.number_input(key="w_sim_trials").set_value(6).run()
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)
    html, script = captured[-1]
    assert "fit_prior_set(data, draws=3, seed=0, concentration=0.5" in script
    blocks = _run_script(script, tmp_path)
    _same_metrics(blocks["metrics"], at.session_state["sim_result"][1].metrics)
    _same_metrics(blocks["metrics with the fitted prior only"], at.session_state["sim_fitted_result"][1].metrics)
    assert "robust set Θ" in html and "Prior uncertainty: what the robust set Θ changed" in html


def test_a_note_says_why_group_dp_can_be_below_mqms_own_total() -> None:
    """MQM's split top-k adds up m counts at ε/m; the same noise as one histogram (L1 sensitivity 2) under group DP
    can cost less. Both bound the same release, so the page says so instead of leaving a contradiction."""
    from app_ui.simulate.views import smaller_bound_note
    from puffer_core import MarkovChainPrior
    from puffer_core.mechanisms.laplace import mqm_top_k_counts
    from puffer_core.priors.kinds import sticky_matrix

    prior = MarkovChainPrior(sticky_matrix(5, 0.95), length=30)
    event = mqm_top_k_counts(prior, 1.0, 5).accounting
    group_total = 30 * event.eps_dp  # group privacy over the whole sequence: T · (2 / σ)
    assert group_total < event.eps_puffer  # the case the note is for (the quilt is the whole sequence here)
    totals = pd.DataFrame(
        {
            "mechanism": ["MQM", "Pufferfish exponential"],
            "composed ε_puffer": [event.eps_puffer, 0.9],
            "naive sum": [event.eps_puffer, 1.0],
            "group DP accounting": [group_total, 1.2],
        }
    )
    note = smaller_bound_note(totals)
    assert "For MQM, group DP's accounting is the smaller number" in note
    assert "Pufferfish" not in note
    assert smaller_bound_note(totals.iloc[1:]) == ""
