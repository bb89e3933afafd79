"""Large data in the app: the deployer's list of datasets (PUFFER_DATASETS), aggregated by DuckDB; uploads too big
to hold are refused with an estimate; windows counted on demand give the same results as the rows."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import app_ui.data.picker as picker
from puffer_core.data.readers import load_sequences
from tests.app.conftest import errors, metric, open_page, problems

SIMULATE = "app_pages/simulate.py"
ROOT = Path(__file__).resolve().parents[2]
CHECKINS = ROOT / "assets" / "checkins.csv"


def test_a_deployers_dataset_is_offered_by_name_and_aggregated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = pd.read_csv(CHECKINS)
    folder = tmp_path / "logs"
    folder.mkdir()
    for i in range(2):
        frame.iloc[i::2].to_parquet(folder / f"part-{i}.parquet")
    listing = tmp_path / "datasets.json"
    listing.write_text(json.dumps({"logs": {"title": "Check-in logs (Parquet)", "path": "logs/*.parquet",
                                            "group": "country"}}), encoding="utf-8")
    monkeypatch.setenv("PUFFER_DATASETS", str(listing))
    at = open_page(SIMULATE)
    at.radio(key="sim_source").set_value("Check-in logs (Parquet)").run()
    assert not problems(at) and not errors(at)
    seqs = load_sequences(CHECKINS, group="country")
    assert metric(at, "Users") == f"{seqs.n_users:,}" and metric(at, "Entries") == f"{seqs.n_entries:,}"
    assert not [t for t in at.text_input if "path" in t.label.lower() or "file" in t.label.lower()]
    # time windows are counted when first asked for, by the same SQL
    at.number_input(key="w_sim_releases").set_value(3).run()
    at.radio(key="w_sim_mode").set_value("windows").run()
    at.number_input(key="w_sim_trials").set_value(5).run()
    at.button(key="w_sim_run").click().run()
    assert not problems(at) and not errors(at)
    result = at.session_state["sim_result"][1]
    assert result.settings["windows"]["window_entries"] == seqs.stats(windows=(3,)).windows(3).sum(axis=(1, 2)).tolist()


def test_an_upload_too_big_to_hold_is_refused_with_an_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(picker, "UPLOAD_MEMORY", 1000)
    at = open_page(SIMULATE)
    at.radio(key="sim_source").set_value(picker.UPLOAD).run()
    content = CHECKINS.read_bytes()[:5000]
    at.file_uploader(key="sim_upload").set_value(("big.csv", content, "text/csv")).run()
    assert any("would take about" in m and "per upload" in m and "PUFFER_DATASETS" in m for m in errors(at)), errors(at)


def test_an_ambiguous_date_column_is_refused_until_the_order_is_chosen() -> None:
    at = open_page(SIMULATE)
    at.radio(key="sim_source").set_value(picker.UPLOAD).run()
    content = b"user,time,state\nu1,01/05/2024,A\nu1,02/05/2024,B\nu2,01/05/2024,B\nu2,03/05/2024,A\n"
    at.file_uploader(key="sim_upload").set_value(("dates.csv", content, "text/csv")).run()
    # in the page's words: its own date-order control, not the library's keyword (issue 29)
    assert any("is ambiguous" in m and "'Dates such as 01/05/2024 are'" in m for m in errors(at)), errors(at)
    assert not any("time_format=" in m for m in errors(at))
    at.radio(key="sim_time_format").set_value("month/day/year").run()
    assert not problems(at) and not errors(at)
    assert metric(at, "Entries") == "4"
    assert at.session_state["dataset"].stats.time_last.startswith("2024-03-05")  # 03/05 read as 5 March
