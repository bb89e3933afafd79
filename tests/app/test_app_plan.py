"""Plan & compose under AppTest: the ledger in the link and in a CSV, its checks, the log axis, the report and script.

The numbers the page shows are checked against puffer_core called here directly, and the exported
script is run in a separate Python process: what it prints must be what the page shows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from app_ui.core.tables import fmt
from app_ui.plan.ledger import DEFAULT_LEDGER, LABELS, MAX_NAME, LedgerText, read_ledger_csv
from puffer_core import MarkovChainPrior, compose, group_dp_cumulative, influence_curve, plan
from puffer_core.mechanisms import pufferfish_exponential, pufferfish_laplace
from tests.app.conftest import errors, metric, open_page, problems, tables
from tests.support.apptest import AppTest
from tests.support.scripts import run_script

REPO = Path(__file__).resolve().parents[2]
PLAN = "app_pages/plan.py"
EDITOR = "w_ledger_0"
UPLOAD = "w_ledger_upload"
EDIT = {
    "edited_rows": {
        0: {"release": "Q1, 2026; draft 100%"},  # the link's separators and its escape character
        1: {"mechanism": LABELS["pufferfish_laplace"], "ε_puffer": 0.25},
        2: {"mechanism": LABELS["group_dp_laplace"], "ε_puffer": 1.0},
        4: {"ε_puffer": 0.125},
    },
    "added_rows": [{"release": "Extra ε", "mechanism": LABELS["group_dp_exponential"], "ε_puffer": 2.0}],
    "deleted_rows": [11],
}


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
    """What clicking the download button ``label`` gives (a deferred download is built now, as on a click)."""
    button = next(b for b in at.download_button if b.label == label)
    if button.proto.deferred_file_id:
        made = stored[button.proto.deferred_file_id]()  # type: ignore[operator]
        return made.encode("utf-8") if isinstance(made, str) else made
    return stored[Path(button.proto.url).stem]  # type: ignore[return-value]


def _ledger(at: AppTest) -> pd.DataFrame:
    return next(t for t in tables(at) if "cumulative (Thm 6.2)" in t.columns)


def _edited(at: AppTest) -> AppTest:
    at.session_state[EDITOR] = EDIT
    at.number_input(key="w_ledger_k").set_value(5).run()
    assert not problems(at) and not errors(at)
    return at


@pytest.fixture(scope="module")
def default_curve():
    return influence_curve(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=100))


# --------------------------------------------------------------------------- the link


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=MAX_NAME).map(str.strip)
rows = st.lists(
    st.tuples(
        names,
        st.sampled_from(sorted(LABELS)),
        st.floats(min_value=1e-6, max_value=1000.0, allow_nan=False, allow_infinity=False),
    ),
    max_size=40,
)


@settings(deadline=None, max_examples=300)
@given(rows)
def test_the_link_codec_gives_back_every_ledger(ledger: list[tuple[str, str, float]]) -> None:
    codec = LedgerText()
    assert codec.parse(codec.encode(ledger)) == tuple(ledger)


def test_the_link_is_compact() -> None:
    assert LedgerText().encode(DEFAULT_LEDGER) == "Jan,pe,0.5;Feb;Mar;Apr;May;Jun;Jul;Aug;Sep;Oct;Nov;Dec"
    assert LedgerText().parse("a,gl,2;b;c,pl,0.1") == (
        ("a", "group_dp_laplace", 2.0),
        ("b", "group_dp_laplace", 2.0),
        ("c", "pufferfish_laplace", 0.1),
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Jan,xx,0.5", "release 1: unknown mechanism 'xx' (one of pe, pl, ge, gl)"),
        ("Jan,pe,-1", "release 1: ε_puffer must be a positive number; found -1"),
        ("Jan,pe,abc", "release 1: ε_puffer must be a positive number; found 'abc'"),
        ("Jan,pe,5000", "release 1: ε_puffer must be at most 1000; found 5000"),
        ("Jan,pe,0.5;Feb,pe", "release 2: write name,mechanism,ε_puffer (found 2 fields)"),
        ("Feb", "the first release needs name,mechanism,ε_puffer"),
        (";".join(["a,pe,1"] * 366), "366 releases; a ledger holds at most 365"),
        ("x" * 61 + ",pe,1", "release 1: a name has at most 60 characters"),
    ],
)
def test_a_bad_ledger_in_a_link_is_ignored_and_says_why(text: str, reason: str) -> None:
    with pytest.raises(ValueError) as caught:
        LedgerText().parse(text)
    assert str(caught.value) == reason
    at = open_page(PLAN, {"ledger": text})
    assert not problems(at) and not errors(at)
    assert any("were ignored" in w.value and reason in w.value for w in at.warning)
    assert len(_ledger(at)) == 12  # the default ledger


def test_the_edited_ledger_survives_the_link(default_curve) -> None:
    at = _edited(open_page(PLAN))
    before = _ledger(at)
    assert len(before) == 12 and list(before["release"])[0] == "Q1, 2026; draft 100%"
    assert at.query_params["topk"] == "5"
    link = {name: at.query_params[name] for name in at.query_params}
    assert "ledger" in link
    fresh = open_page(PLAN, link)  # a new session opened from the link
    assert not problems(fresh) and not errors(fresh) and not fresh.warning
    pd.testing.assert_frame_equal(_ledger(fresh), before)
    assert fresh.number_input(key="w_ledger_k").value == 5
    editor = next(d.value for d in fresh.dataframe if d.editing_mode != "read_only")
    assert list(editor["release"]) == list(before["release"])
    assert list(editor["ε_puffer"])[:3] == [0.5, 0.25, 1.0]
    # and the numbers are puffer_core's: Theorem 6.2 over the same releases
    mechanism = pufferfish_laplace(default_curve, 0.25)
    assert before["noise"].iloc[1] == f"Lap({mechanism.scale:.3g}) per count"
    assert int(before["b"].iloc[2]) == 100  # group DP: the whole sequence


def test_the_default_ledger_is_not_written_in_the_link() -> None:
    at = open_page(PLAN)
    assert "ledger" not in at.query_params
    assert at.query_params["topk"] == "3"


# --------------------------------------------------------------------------- validation as the user types


def test_ledger_rows_are_checked_as_they_are_edited() -> None:
    at = open_page(PLAN)
    at.session_state[EDITOR] = {
        "edited_rows": {0: {"ε_puffer": None}, 1: {"ε_puffer": 0.0}, 2: {"ε_puffer": 5000.0}, 3: {"release": ""}},
        "added_rows": [{"release": "", "mechanism": None, "ε_puffer": 1.0}],
        "deleted_rows": [],
    }
    at.run()
    assert not problems(at)
    assert errors(at) == [
        "Jan: ε_puffer must be a positive number; the cell is empty.",
        "Feb: ε_puffer must be a positive number; found 0.",
        "Mar: ε_puffer must be at most 1000; found 5000.",
        "Release 13: choose a mechanism in the Mechanism column.",
    ]
    assert any("leave out the 4 row(s) with a problem" in c.value for c in at.caption)
    assert any(c.value == "Rows without a name are called by their place in the ledger: release 4." for c in at.caption)
    ledger = _ledger(at)
    assert len(ledger) == 9 and ledger["release"].iloc[0] == "release 4"  # a row without a name is numbered


def test_an_empty_ledger_asks_for_a_release() -> None:
    at = open_page(PLAN)
    at.session_state[EDITOR] = {"edited_rows": {}, "added_rows": [], "deleted_rows": list(range(12))}
    at.run()
    assert not problems(at) and not errors(at)
    assert any("Add a release" in i.value for i in at.info)


# --------------------------------------------------------------------------- the chart's log axis


def test_the_ledger_chart_has_a_log_toggle() -> None:
    at = open_page(PLAN)
    chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert chart["layout"]["yaxis"]["type"] == "log"
    at.toggle(key="w_ledger_log").set_value(False).run()
    chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert chart["layout"]["yaxis"].get("type", "linear") == "linear"
    assert chart["layout"]["yaxis"]["range"][0] == 0
    names = [trace["name"] for trace in chart["data"]]
    assert names == ["Theorem 6.2 (composed)", "naive sum of per-release ε_puffer", "group DP accounting (T·ε_DP each)"]


# --------------------------------------------------------------------------- CSV files


def test_a_downloaded_ledger_csv_loads_back(downloads: dict[str, bytes]) -> None:
    at = _edited(open_page(PLAN))
    before = _ledger(at)
    data = _download(at, downloads, "Download the ledger (CSV)")
    assert data.startswith(b"\xef\xbb\xbf") and "ε_puffer" in data.decode("utf-8-sig")  # Excel reads ε as ε
    fresh = open_page(PLAN)
    assert len(_ledger(fresh)) == 12 and fresh.number_input(key="w_ledger_k").value == 3
    fresh.file_uploader(key=UPLOAD).set_value(("ledger.csv", data, "text/csv")).run()
    assert not problems(fresh) and not errors(fresh)
    assert [s.value for s in fresh.success] == [
        "Loaded 12 releases from 'ledger.csv', with k = 5 for the top-k rankings."
    ]
    pd.testing.assert_frame_equal(_ledger(fresh), before)
    assert fresh.number_input(key="w_ledger_k").value == 5
    fresh.run()  # the file stays in the uploader: it is not loaded again over later edits
    assert not fresh.success
    pd.testing.assert_frame_equal(_ledger(fresh), before)


def _csv(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8")


GOOD_HEADER = "release,mechanism,ε_puffer,k"
EXPONENTIAL = LABELS["pufferfish_exponential"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "'bad.csv' is empty: a ledger CSV starts with the header release,mechanism,ε_puffer"),
        (_csv("name,eps"), "'bad.csv' has no column 'mechanism' or 'ε_puffer' (its columns: name, eps)"),
        (_csv(GOOD_HEADER), "'bad.csv' has a header but no releases"),
        (
            _csv(GOOD_HEADER, f"Jan,{EXPONENTIAL},abc,3", "Feb,Foo,1,3", f"Mar,{EXPONENTIAL},0.5,3"),
            "'bad.csv' was not loaded: row 2 (Jan): ε_puffer must be a positive number; found 'abc';"
            " row 3 (Feb): unknown mechanism 'Foo'",
        ),
        (_csv(GOOD_HEADER, f'Jan,{EXPONENTIAL},"0,5",3'), "(write decimals with a point: 0.5)"),
        (_csv(GOOD_HEADER, f"Jan,{EXPONENTIAL},1,3", f"Feb,{EXPONENTIAL},1,4"), "the rows give different k (3, 4)"),
        (
            _csv(GOOD_HEADER, f"Jan,{EXPONENTIAL},1,2.5"),
            "row 2 (Jan): k must be a whole number from 1 to 50; found '2.5'",
        ),
        (b"PK\x03\x04rest", "'bad.csv' is an Excel workbook or a zip archive; save the sheet as CSV and upload that"),
        (b"\x00\x01\x02", "'bad.csv' is not a text (CSV) file"),
        (
            _csv(GOOD_HEADER, *[f"r{i},{EXPONENTIAL},1,3" for i in range(366)]),
            "366 releases; a ledger holds at most 365",
        ),
    ],
)
def test_a_malformed_csv_is_refused_with_a_clear_message(content: bytes, message: str) -> None:
    at = open_page(PLAN)
    at.file_uploader(key=UPLOAD).set_value(("bad.csv", content, "text/csv")).run()
    assert not problems(at)
    shown = errors(at)
    assert len(shown) == 1 and message in shown[0] and shown[0].endswith("The ledger was not changed."), shown
    assert len(_ledger(at)) == 12
    at.run()  # while the refused file is in the uploader, the page keeps saying why
    assert errors(at) == shown
    at.file_uploader(key=UPLOAD).set_value(None).run()
    assert not errors(at)


def test_a_csv_in_excel_s_european_form_loads() -> None:
    content = f"release;mechanism;eps_puffer\nJan;{EXPONENTIAL};0.5\nFeb;pufferfish_laplace;1\n".encode("cp1252")
    loaded = read_ledger_csv(b"\xef\xbb\xbf" + content, "x")  # a BOM, ';' separators, registry names accepted
    assert loaded.rows == (("Jan", "pufferfish_exponential", 0.5), ("Feb", "pufferfish_laplace", 1.0))
    assert loaded.k is None


# --------------------------------------------------------------------------- report and script


def _printed(output: str) -> tuple[pd.DataFrame, dict[str, str]]:
    lines = output.splitlines()
    start, end = (lines.index("# ledger") + 1, lines.index("# planner")) if "# ledger" in lines else (0, 0)
    ledger = pd.read_csv(StringIO("\n".join(lines[start:end])), keep_default_na=False, dtype=str)
    return ledger, dict(line.split(" = ", 1) for line in lines if " = " in line)


def _run_script(text: bytes, folder: Path) -> tuple[pd.DataFrame, dict[str, float]]:
    """Run the exported script as a user would (tests/support/scripts.py); what it printed."""
    return _printed(run_script(text, folder, "plan.py"))


def _same_as_the_page(at, printed: pd.DataFrame, values: dict[str, str]) -> None:  # noqa: ANN001
    """The script prints the page's ledger table and the planner's numbers exactly as the page shows them."""
    shown = _ledger(at)
    for column, header in [
        ("release", "release"),
        ("cumulative (Thm 6.2)", "total, Thm 6.2"),
        ("cumulative (naive sum)", "total, naive"),
        ("cumulative (group DP)", "total, group DP"),
        ("ε_DP per entry", "ε_DP"),
        ("a(b)", "a(b)"),
        ("noise", "noise"),
    ]:
        assert list(printed[header]) == [str(v) for v in shown[column]], column
    assert list(printed["b"]) == [str(b) for b in shown["b"]]
    for label in ("Per-release ε_DP", "Common window b", "a(b)", "vs group DP"):
        assert values[label] == metric(at, label), label
    split = values["Each release calibrated on its own at E/k would allow ε_DP"]
    assert f"would allow only ε_DP = {split}," in " ".join(m.value for m in at.markdown)


def test_the_exported_script_prints_the_page_s_numbers(downloads: dict[str, bytes], tmp_path: Path) -> None:
    at = _edited(open_page(PLAN))
    at.number_input(key="w_plan_total").set_value(4.0).run()
    at.number_input(key="w_plan_releases").set_value(7).run()
    printed, values = _run_script(_download(at, downloads, "Download script (Python)"), tmp_path)
    _same_as_the_page(at, printed, values)
    # and independently of the page: puffer_core called here on the same chain
    curve = influence_curve(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=100))
    assert values["Per-release ε_DP"] == fmt(plan(curve, 4.0, 7).eps_dp)
    may = pufferfish_exponential(curve, 0.125, 5).accounting  # row 5, edited to ε_puffer = 0.125
    assert printed["ε_DP"].iloc[4] == fmt(may.eps_dp)
    jan = pufferfish_exponential(curve, 0.5, 5).accounting  # row 1 keeps the default release
    assert printed["total, group DP"].iloc[0] == fmt(float(group_dp_cumulative(100, [jan.eps_dp])[0]))
    assert printed["total, Thm 6.2"].iloc[0] == fmt(compose([jan.calibration]))


def test_the_report_has_every_setting_the_numbers_and_both_charts(downloads: dict[str, bytes]) -> None:
    at = _edited(open_page(PLAN))
    report = _download(at, downloads, "Download report (HTML)").decode("utf-8")
    assert report.count("plotly.js v") == 1 and report.count('class="plotly-graph-div"') == 2
    for text in (
        "Ledger of planned releases",
        "Planner: split a total budget",
        "binary chain p = 0.9, q = 0.8, T = 100",
        "k for the top-k rankings</td><td>5",
        "planner: total budget ε_puffer</td><td>6",
        "Q1, 2026; draft 100%",
        _ledger(at)["cumulative (Thm 6.2)"].iloc[-1],
    ):
        assert text in report, text
    assert "MATH" + ".md" not in report


@pytest.mark.parametrize(
    "link",
    [
        {"prior": "gaussian", "n": "12", "ell": "2"},
        {"prior": "theta", "theta": "0.8,0.8;0.9,0.7", "T": "30"},
        {"prior": "matrix", "P": "0.8,0.2,0;0.1,0.8,0.1;0,0.3,0.7", "labels": "home|work|gym", "T": "40"},
    ],
)
def test_the_script_rebuilds_every_kind_of_prior(downloads: dict[str, bytes], tmp_path: Path, link: dict) -> None:
    at = open_page(PLAN, link)
    assert not problems(at) and not errors(at) and not at.warning
    printed, values = _run_script(_download(at, downloads, "Download script (Python)"), tmp_path)
    _same_as_the_page(at, printed, values)
