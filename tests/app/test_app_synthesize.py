"""Synthesize page under AppTest: the plan and the fidelity the page shows are the library's, the download is a
CSV in the data's own columns with the public lengths, the link reopens the same settings, bad input is said, and
the exported script releases the same table again."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from puffer_core import load_dataset
from puffer_core.data.datasets import DATASETS, get_dataset
from puffer_core.display import fmt
from puffer_core.synthesis import plan_synthesis, synthesize
from tests.app.conftest import capture_exports, errors, metric, open_page, problems
from tests.support.apptest import AppTest
from tests.support.scripts import run_script

SYNTHESIZE = "app_pages/synthesize.py"
ROOT = Path(__file__).resolve().parents[2]
UPLOAD = "Upload a CSV or Parquet file"


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, object]]:
    """Every download the app offers, by its id: its bytes, or the function that makes them when it is clicked."""
    stored: dict[str, object] = {}
    original = MemoryMediaFileStorage.load_and_get_id
    original_deferred = MediaFileManager.add_deferred

    def keep(self: MemoryMediaFileStorage, path_or_data: object, mimetype: str, kind: object, filename=None) -> str:
        file_id = original(self, path_or_data, mimetype, kind, filename)
        if isinstance(path_or_data, bytes):
            stored[file_id] = path_or_data
        return file_id

    def keep_deferred(self: MediaFileManager, data_callable: object, *args: object, **kwargs: object) -> str:
        file_id = original_deferred(self, data_callable, *args, **kwargs)
        stored[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", keep)
    monkeypatch.setattr(MediaFileManager, "add_deferred", keep_deferred)
    yield stored


def _download(at: AppTest, stored: dict[str, object], label: str) -> bytes:
    button = next(b for b in at.download_button if b.label == label)
    if button.proto.deferred_file_id:
        made = stored[button.proto.deferred_file_id]()  # type: ignore[operator]
        return made.encode("utf-8") if isinstance(made, str) else made
    return stored[Path(button.proto.url).stem]  # type: ignore[return-value]


def _scores(at: AppTest) -> pd.DataFrame:
    return next(t.value for t in at.dataframe if "stationary distribution distance (TV)" in t.value.columns)


def _generate(at: AppTest) -> None:
    at.button(key="w_synth_run").click().run()
    assert not problems(at) and not errors(at)


def _lengths(table: pd.DataFrame, user: str, group: str | None) -> pd.Series:
    """How many users have each length, per group: counted on the table itself (pandas, not the library)."""
    keys = [user] if group is None else [user, group]
    per_user = table.groupby(keys).size().rename("length").reset_index()
    by = ["length"] if group is None else [group, "length"]
    return per_user.groupby(by).size().sort_index()


def test_the_plan_the_download_and_the_fidelity_are_the_library_s(downloads: dict[str, object]) -> None:
    at = open_page(SYNTHESIZE)
    assert not problems(at) and not errors(at)
    data = load_dataset("checkins")
    plan = plan_synthesis(data, None, 1.0)
    assert metric(at, "Noise scale s") == fmt(plan.scale)
    assert metric(at, "Window b") == str(plan.calibration.b)
    assert metric(at, "Window sensitivity c_b") == str(plan.event.window_l1)
    assert metric(at, "a(b)") == fmt(plan.calibration.a)
    # the window's sensitivity is 2b + 2 for a window inside a sequence (docs/math.md §19.2), and the budget adds up
    assert plan.event.window_l1 == 2 * plan.calibration.b + 2
    assert plan.event.window_l1 / plan.scale + plan.calibration.a == pytest.approx(1.0, rel=1e-12)

    _generate(at)
    raw = pd.read_csv(get_dataset("checkins").path)
    table = pd.read_csv(io.BytesIO(_download(at, downloads, "Download the synthetic data (CSV)")))
    assert list(table.columns) == list(raw.columns)  # the input's own columns
    assert set(table["state"]) <= set(raw["state"]) and set(table["country"]) <= set(raw["country"])
    assert not set(table["user"]) & set(raw["user"])  # never a real user's id
    pd.testing.assert_series_equal(_lengths(table, "user", "country"), _lengths(raw, "user", "country"))  # public

    expected = synthesize(data, None, 1.0, rng=0)  # the same seed: the same noise and the same table
    pd.testing.assert_frame_equal(table.astype(str), expected.table.astype(str).reset_index(drop=True))
    scores = expected.fidelity(3, "visits").scores()
    shown = _scores(at)
    assert list(shown["group"]) == ["everyone", *scores["group"][1:]]
    for column in ("transition_error", "stationary_tv", "dwell_error", "query_error"):
        name = next(c for c in shown.columns if c.startswith({"transition_error": "transition matrix",
                                                               "stationary_tv": "stationary",
                                                               "dwell_error": "mean dwell-time error",
                                                               "query_error": "error of the"}[column]))
        assert list(shown[name]) == [fmt(v) for v in scores[column]]


def test_the_link_reopens_the_same_settings() -> None:
    query = {"sdata": "builtin:seattle-weather:month", "eps": "2", "sgroup": "0", "sseed": "5",
             "smethod": "dirichlet", "stopk": "2", "squery": "occupancy"}
    at = open_page(SYNTHESIZE, query)
    assert not problems(at) and not errors(at)
    assert at.radio(key="syn_source").value == DATASETS["seattle-weather"].title
    assert at.radio(key="syn_user_seattle-weather").value == "month"
    assert at.number_input(key="w_synth_eps").value == 2.0
    assert at.toggle(key="w_synth_by_group").value is False
    assert at.number_input(key="w_synth_seed").value == 5
    plan = plan_synthesis(load_dataset("seattle-weather", user="month"), None, 2.0, by_group=False)
    assert metric(at, "Noise scale s") == fmt(plan.scale)
    assert dict(at.query_params) == query | {"sreal": "0"}  # the page's link: the same settings
    _generate(at)
    expected = synthesize(load_dataset("seattle-weather", user="month"), None, 2.0, rng=5, by_group=False,
                          method="dirichlet").fidelity(2, "occupancy").scores()
    shown = _scores(at)
    assert list(shown["top-2 states found (hit rate)"]) == [fmt(v) for v in expected["topk_hit"]]


def test_bad_input_is_said() -> None:
    at = open_page(SYNTHESIZE)
    at.number_input(key="w_synth_eps").set_value(0.0).run()  # ε ≤ 0: the box says so, nothing is computed
    assert not problems(at)
    assert not [m for m in at.metric if m.label == "Noise scale s"]
    said = [*errors(at), *(c.value for c in at.caption), *(w.value for w in at.warning)]
    assert any("ε_puffer" in text for text in said)
    at.number_input(key="w_synth_eps").set_value(0.01).run()  # no signal: refused with the ε that carries one
    assert not problems(at)
    assert any("carries a signal from ε_puffer ≈" in e for e in errors(at))
    assert not [b for b in at.button if b.key == "w_synth_run"]
    at.radio(key="syn_source").set_value(DATASETS["seattle-weather"].title).run()
    at.number_input(key="w_synth_eps").set_value(1.0).run()
    at.radio(key="syn_user_seattle-weather").set_value("year").run()  # a user in several seasons: said, with the fix
    assert any("Synthesize without a group column" in e for e in errors(at))
    at.toggle(key="w_synth_by_group").set_value(False).run()
    assert not errors(at)


def test_too_large_a_table_is_refused_with_its_size(monkeypatch: pytest.MonkeyPatch) -> None:
    import app_ui.synthesize.work as work

    monkeypatch.setattr(work, "APP_MAX_ROWS", 1_000)
    at = open_page(SYNTHESIZE)
    at.button(key="w_synth_run").click().run()
    assert not problems(at)
    assert any("71,861 rows" in e and "the script" in e for e in errors(at))
    assert not [b for b in at.download_button if b.label == "Download the synthetic data (CSV)"]


def _script(at: AppTest) -> str:
    with pytest.MonkeyPatch.context() as patch:
        captured = capture_exports(patch)
        at.run()
    return captured[-1].script


def test_the_script_releases_the_same_table_and_prints_the_page_s_numbers(
    tmp_path: Path, downloads: dict[str, object]
) -> None:
    at = open_page(SYNTHESIZE)
    _generate(at)
    text = _script(at)
    check = subprocess.run([sys.executable, "-m", "ruff", "check", "--stdin-filename", "synthesize.py", "-"],
                           input=text, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert check.returncode == 0, check.stdout
    blocks = dict(part.split("\n", 1) for part in run_script(text, tmp_path, "synthesize.py").split("## ")[1:])
    plan = pd.read_csv(io.StringIO(blocks["plan"]))
    assert fmt(float(plan["scale"][0])) == metric(at, "Noise scale s")
    assert str(int(plan["window_l1"][0])) == metric(at, "Window sensitivity c_b")
    scores = pd.read_csv(io.StringIO(blocks["scores"]))
    assert [fmt(v) for v in scores["stationary_tv"]] == list(_scores(at)["stationary distribution distance (TV)"])
    html = _download(at, downloads, "Download report (HTML)").decode("utf-8")
    assert "Pufferfish Lab — Synthesize" in html and "sensitivity" in html and "How fidelity" not in html
    page_csv = _download(at, downloads, "Download the synthetic data (CSV)")
    assert (tmp_path / "synthetic.csv").read_bytes() == page_csv  # the same table, byte for byte


def test_an_upload_keeps_its_own_columns(downloads: dict[str, object]) -> None:
    raw = pd.read_csv(get_dataset("checkins").path)
    small = raw[raw["user"].isin(raw["user"].unique()[:300])].rename(
        columns={"user": "participant", "time": "timestamp", "state": "venue"}
    )
    at = open_page(SYNTHESIZE)
    at.radio(key="syn_source").set_value(UPLOAD).run()
    at.file_uploader(key="syn_upload").set_value(("mine.csv", small.to_csv(index=False).encode(), "text/csv")).run()
    assert not problems(at)
    at.number_input(key="w_synth_eps").set_value(20.0).run()
    at.toggle(key="w_synth_by_group").set_value(False).run()
    assert not errors(at)
    _generate(at)
    table = pd.read_csv(io.BytesIO(_download(at, downloads, "Download the synthetic data (CSV)")))
    assert list(table.columns) == ["participant", "timestamp", "venue"]
    pd.testing.assert_series_equal(_lengths(table, "participant", None), _lengths(small, "participant", None))
    assert at.query_params["sdata"] == "upload:mine.csv"  # the file's name only: whoever opens the link is asked


def _values(data: object) -> list[float]:
    """A plotly figure's array as numbers (plotly writes numpy arrays as base64 ``bdata``)."""
    import base64

    import numpy as np

    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"])).tolist()
    return list(data)  # type: ignore[call-overload]


def test_fidelity_over_eps_is_drawn_from_the_library_s_numbers() -> None:
    import json

    from app_ui.synthesize.views import SERIES, SWEEP_RUNS, sweep_grid
    from puffer_core.synthesis import chain_counts, fidelity_over_eps

    at = open_page(SYNTHESIZE)
    _generate(at)
    at.toggle(key="w_synth_sweep").set_value(True).run()
    assert not problems(at) and not errors(at)
    chart = next(c for c in at.get("plotly_chart") if "ε_puffer (log scale)" in c.proto.spec)
    figure = json.loads(chart.proto.spec)
    expected = fidelity_over_eps(chain_counts(load_dataset("checkins")), None, sweep_grid(1.0), runs=SWEEP_RUNS, rng=0)
    rows = expected[(expected["group"] == "all") & (expected["metric"] == "stationary_tv")]
    for (guarantee, part), name in SERIES.items():
        trace = next(t for t in figure["data"] if t["name"] == name)
        means = rows[(rows["guarantee"] == guarantee) & (rows["part"] == part)].groupby("eps_puffer")["value"].mean()
        assert _values(trace["x"]) == list(means.index)
        assert _values(trace["y"]) == pytest.approx(list(means), rel=1e-12)
    # a sturdier release at a larger ε: the Pufferfish table's error never grows from the smallest to the largest ε
    pufferfish = next(t for t in figure["data"] if t["name"] == SERIES[("pufferfish", "total")])
    assert _values(pufferfish["y"])[-1] <= _values(pufferfish["y"])[0]


def test_a_link_naming_an_upload_asks_for_the_file() -> None:
    at = open_page(SYNTHESIZE, {"sdata": "upload:mine.csv", "eps": "3"})
    assert not problems(at)
    assert any("'mine.csv'" in i.value and "upload it" in i.value for i in at.info)
    assert at.number_input(key="w_synth_eps").value == 3.0


def test_the_guided_path_offers_a_synthetic_dataset_with_its_data_and_target() -> None:
    at = open_page("app_pages/analyst.py", {"eps": "0.8"})
    at.radio(key="guide_source").set_value(DATASETS["activities"].title).run()
    at.button(key="analyst_next").click().run()  # step 1 → 2: the chain fitted to the data
    at.session_state["path_analyst_step"] = 5  # the report
    at.run()
    assert not problems(at) and not errors(at)
    at.button(key="w_guide_synthesize").click().run()
    assert not problems(at) and not errors(at)
    assert at.title[0].value == "Synthesize"
    assert at.radio(key="syn_source").value == DATASETS["activities"].title
    assert at.number_input(key="w_synth_eps").value == 0.8
    plan = plan_synthesis(load_dataset("activities"), None, 0.8)
    assert metric(at, "Noise scale s") == fmt(plan.scale)
    assert at.query_params["sdata"] == "builtin:activities:user"


def test_a_real_release_draws_opendp_noise_and_its_script_says_so() -> None:
    at = open_page(SYNTHESIZE)
    at.toggle(key="w_synth_real").set_value(True).run()
    assert not [n for n in at.number_input if n.key == "w_synth_seed"]  # no seed for a real release
    _generate(at)
    assert any("2,000 synthetic users, 71,861 rows" in s.value for s in at.success)
    text = _script(at)
    assert "SEED = None" in text and "a real release (OpenDP's noise)" in text
    assert at.query_params["sreal"] == "1"
