"""Issue 29's small defects, each checked on the page as a user meets it.

The references are independent of the page's code: the sums of the rows are computed here with math.fsum, the
prior's name is read in two places of the same page (the page and its sidebar) and compared with each other.
"""

from __future__ import annotations

import json
import math

import numpy as np

from puffer_core import fit_markov_chain, load_dataset
from puffer_core.priors.codecs import LabelsText, MatrixText
from puffer_core.priors.fitting import DEFAULT_SMOOTHING
from puffer_core.priors.kinds import MATRIX
from tests.app.conftest import errors, open_page, problems

CURVES = "app_pages/curves.py"
CALIBRATE = "app_pages/calibrate.py"


def _matrix_page():
    at = open_page(CURVES)
    at.radio(key="w_kind").set_value("matrix").run()
    return at


def test_a_preset_with_more_states_than_offered_says_why_and_what_to_do() -> None:
    at = _matrix_page()
    at.selectbox(key="w_preset").set_value("Cyclic").run()
    at.number_input(key="w_k").set_value(25).run()
    assert not problems(at)
    said = [m.value for m in (*at.error, *at.warning)]
    assert any("25" in m and "20" in m and "Fitted from data" in m for m in said), said
    assert at.button(key="w_load_preset").disabled
    assert at.data_editor[0].value.shape != (25, 25)


def test_loading_a_preset_says_what_the_editor_now_holds() -> None:
    at = _matrix_page()
    at.selectbox(key="w_preset").set_value("Cyclic").run()
    at.number_input(key="w_k").set_value(4).run()
    at.button(key="w_load_preset").click().run()
    assert not problems(at) and at.data_editor[0].value.shape == (4, 4)
    in_use = " ".join(c.value for c in at.sidebar.caption).split("**Prior in use:** ", 1)[1].split("\n")[0]
    assert any(f"In the editor: {in_use}" in c.value for c in at.caption), in_use
    at.selectbox(key="w_preset").set_value("Random").run()  # chosen, not loaded: the panel says so
    assert any("not loaded yet" in c.value and "Random" in c.value for c in at.caption)


def test_rows_that_do_not_sum_to_1_are_listed_in_one_message_with_their_sums() -> None:
    at = _matrix_page()
    at.session_state["w_matrix_0"] = {
        "edited_rows": {0: {"0": 0.5}, 2: {"0": 0.1, "1": 0.2, "2": 0.700000002}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not problems(at)
    rows = np.array(at.session_state["settings"]["matrix"], dtype=float)
    off = [i for i, row in enumerate(rows) if abs(math.fsum(row) - 1.0) > 1e-9]
    assert off == [0, 2]
    said = [m for m in errors(at) if "sum" in m]
    assert len(said) == 1, said
    assert said[0].startswith("Rows '0' and '2' do not sum to 1") and "0.7" in said[0], said
    assert f"{math.fsum(rows[2]):.12g}" in said[0] and "the tolerance is 1e-09" in said[0], said


def test_a_page_opened_from_a_link_names_the_prior_as_its_sidebar_does() -> None:
    fit = MATRIX.read(fit_markov_chain(load_dataset("checkins"), smoothing=DEFAULT_SMOOTHING))
    query = {
        "prior": "matrix",
        "P": MatrixText().encode(fit["matrix"]),
        "labels": LabelsText().encode(fit["labels"]),
        "T": str(fit["length"]),
        "data": "builtin:checkins:user",
    }
    at = open_page(CALIBRATE, query)
    assert not problems(at)
    page = next(m.value for m in at.markdown if m.value.startswith("**Prior:** "))
    side = next(c.value for c in at.sidebar.caption if c.value.startswith("**Prior in use:** "))
    assert page.removeprefix("**Prior:** ") == side.removeprefix("**Prior in use:** ")
    assert "fitted to Check-ins" in page


def test_the_plan_ledger_says_what_a_lead_is() -> None:
    at = open_page("app_pages/plan.py")
    assert not problems(at)
    table = next(d.value for d in at.dataframe if "accuracy (95%)" in d.value.columns)
    assert table["accuracy (95%)"].str.contains("lead").any()
    assert any("lead" in c.value and "must lead the next" in c.value and "ranking" in c.value for c in at.caption)


def test_the_simulate_heatmap_prints_no_numbers_in_cells_too_narrow_for_them() -> None:
    at = open_page("app_pages/simulate.py")
    assert not problems(at)
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    heatmaps = [trace for spec in specs for trace in spec["data"] if trace.get("type") == "heatmap"]
    assert heatmaps and len(heatmaps[0]["x"]) > 6  # the demo data's 12 states: 12 columns at 390 px
    trace = heatmaps[0]
    assert not trace.get("texttemplate") and trace.get("text") is None
    assert "%{customdata}" in trace["hovertemplate"] and len(trace["customdata"]) == len(trace["x"])  # hover stays


def _row_sum_errors(at, key: str, edits: dict[int, dict[str, float]]) -> None:
    """After ``edits`` to the editor ``key``: exactly one error about sums, naming every row whose sum (computed
    here with math.fsum from the grid's starting values and the edits) is not 1, with that sum."""
    at.session_state[key] = {"edited_rows": edits, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not problems(at)
    start = next(d.value for d in at.data_editor if d.key == key)
    names = [str(x) for x in start.index]
    rows = start.to_numpy(dtype=float).copy()
    for i, cells in edits.items():
        for column, value in cells.items():
            rows[i, names.index(column)] = value
    off = [names[i] for i, row in enumerate(rows) if abs(math.fsum(row) - 1.0) > 1e-9]
    said = [m for m in errors(at) if "sum" in m]
    assert len(said) == 1, said
    assert said[0].startswith("Rows '") and "do not sum to 1" in said[0], said
    for name, row in zip(names, rows, strict=True):
        assert (f"'{name}' sums to {math.fsum(row):.6g}" in said[0]) == (name in off), (name, said[0])


def test_the_streams_matrix_editor_lists_every_row_that_does_not_sum_to_1_in_one_message() -> None:
    k = 20
    cyclic = np.roll(np.eye(k), 1, axis=1) * 0.5 + np.eye(k) * 0.5
    query = {"prior": "matrix", "P": MatrixText().encode(cyclic), "T": "20", "pbsrc": "own"}
    at = open_page("app_pages/stream.py", query)
    assert not problems(at) and not errors(at)
    _row_sum_errors(at, f"w_stream_backward_{k}", {i: {str(i): 0.25} for i in range(k)})


def test_the_classroom_matrix_editor_lists_every_row_that_does_not_sum_to_1_in_one_message() -> None:
    at = open_page("app_pages/classroom.py")
    at.number_input(key="w_tiny_k").set_value(3).run()
    _row_sum_errors(at, "w_tiny_matrix_3", {0: {"0": 0.9}, 1: {"1": 0.01}, 2: {"2": 0.8}})
