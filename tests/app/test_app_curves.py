"""Home and Influence curves pages under AppTest: defaults, widgets, bad matrices, links, state."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from puffer_core import MarkovChainPrior, influence_curve
from tests.app.conftest import errors, metric, open_page, problems, tables
from tests.app.test_app_charts import chart_data, plotly_array

CURVES = "app_pages/curves.py"
ASSETS = Path(__file__).resolve().parents[2] / "assets"


def test_home_says_what_it_is_for_and_links_every_page() -> None:
    at = open_page()
    assert not problems(at)
    assert at.title[0].value == "Pufferfish Lab"
    links = {link.proto.page for link in at.get("page_link")}
    assert links == {
        "analyst",
        "lesson",
        "curves",
        "calibrate",
        "plan",
        "simulate",
        "synthesize",
        "optimal",
        "classroom",
        "stream",
        "attack",
        "about",
    }
    assert [h.value for h in at.subheader] == ["Start here", "Tools", "Learn"]  # as the navigation groups them
    intro = at.markdown[0].value
    assert intro.count(". ") + 1 == 3  # three sentences


def test_curves_defaults_match_the_library() -> None:
    at = open_page(CURVES)
    assert not problems(at)
    assert not errors(at)
    expected = influence_curve(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=100))
    assert metric(at, "a(1)") == f"{expected.a[0]:.4g}"
    below = next(int(b) for b, a in zip(expected.b, expected.a) if a <= 1.0)
    assert metric(at, "Smallest b with a(b) ≤ 1 nat") == str(below)
    table = tables(at)[0]
    assert len(table) == 100
    assert at.query_params["p"] == "0.9"


def test_moving_a_slider_redraws_the_curve_and_the_link() -> None:
    at = open_page(CURVES)
    at.slider(key="w_p").set_value(0.6).run()
    assert not problems(at)
    expected = influence_curve(MarkovChainPrior([[0.6, 0.4], [0.2, 0.8]], length=100))
    assert metric(at, "a(1)") == f"{expected.a[0]:.4g}"
    assert at.query_params["p"] == "0.6"


def test_infinite_values_are_shown_as_infinity() -> None:
    at = open_page(CURVES, {"p": "0", "q": "0", "T": "10"})
    assert not problems(at)
    assert metric(at, "a(1)") == "∞"
    column = tables(at)[0].iloc[:, 1].tolist()
    assert column[0] == "∞"
    assert any("▲" in c.value for c in at.caption)


def test_closed_form_overlay_and_log_scale() -> None:
    at = open_page(CURVES)
    at.checkbox(key="w_closed_form").check().run()
    at.toggle(key="w_log").set_value(True).run()
    assert not problems(at)
    assert "closed form [C] Ex. 3" in tables(at)[0].columns
    assert at.query_params["log"] == "1"


def test_k_state_presets_and_the_editor() -> None:
    at = open_page(CURVES)
    at.radio(key="w_kind").set_value("matrix").run()
    assert not problems(at) and not errors(at)
    at.selectbox(key="w_preset").set_value("Cyclic").run()
    at.number_input(key="w_k").set_value(4).run()
    at.button(key="w_load_preset").click().run()
    assert not problems(at) and not errors(at)
    assert at.data_editor[0].value.shape == (4, 4)
    assert at.query_params["prior"] == "matrix"
    at.selectbox(key="w_preset").set_value("Random").run()
    at.button(key="w_load_preset").click().run()
    assert not problems(at) and not errors(at)


def test_fitted_preset_from_the_demo_data() -> None:
    at = open_page(CURVES)
    at.radio(key="w_kind").set_value("matrix").run()
    at.selectbox(key="w_preset").set_value("Fitted from data").run()
    assert not problems(at)
    at.button(key="w_load_preset").click().run()
    assert not problems(at) and not errors(at)
    assert at.data_editor[0].value.shape == (12, 12)
    assert "Home" in at.data_editor[0].value.columns
    assert at.number_input(key="w_length").value == 55


def test_a_bad_matrix_edit_gives_row_errors_and_normalise_fixes_it() -> None:
    at = open_page(CURVES)
    at.radio(key="w_kind").set_value("matrix").run()
    at.session_state["w_matrix_0"] = {"edited_rows": {0: {"0": 0.5}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not problems(at)
    messages = errors(at)
    assert sum("Row '0' sums to 0.7" in m for m in messages) == 1  # said once, under the grid
    assert not any("No curve for this prior" in m for m in messages)
    assert any("No curve until the prior is fixed" in i.value for i in at.info)
    at.button(key="w_normalise").click().run()
    assert not problems(at)
    assert not errors(at)
    fixed = at.data_editor[0].value.to_numpy()
    assert np.allclose(fixed[0], [0.5 / 0.7, 0.1 / 0.7, 0.1 / 0.7])


def test_a_bad_matrix_in_a_link_gives_an_error_not_a_traceback() -> None:
    at = open_page(CURVES, {"prior": "matrix", "P": "0.5,0.6;0.2,0.8"})
    assert not problems(at)
    assert any("Row '0' sums to 1.1" in m for m in errors(at))
    at = open_page(CURVES, {"prior": "matrix", "P": "1,0;0,1"})
    assert not problems(at)
    assert any("no unique stationary distribution" in m for m in errors(at))


def test_unusable_link_values_are_ignored_with_a_warning() -> None:
    at = open_page(CURVES, {"p": "7", "prior": "bogus", "T": "abc"})
    assert not problems(at)
    assert at.slider(key="w_p").value == pytest.approx(0.9)
    assert any("ignored" in w.value for w in at.warning)


def test_set_of_priors_and_a_bad_row() -> None:
    at = open_page(CURVES)
    at.radio(key="w_kind").set_value("theta").run()
    assert not problems(at) and not errors(at)
    columns = tables(at)[0].columns
    assert "Θ (worst prior for each H)" in columns
    at.session_state["w_theta_0"] = {"edited_rows": {1: {"p": 1.0, "q": 1.0}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not problems(at)
    assert any(m.startswith("Row 2 (p = 1, q = 1)") for m in errors(at))


def test_gaussian_prior_with_the_figure_3_overlay() -> None:
    at = open_page(CURVES)
    at.radio(key="w_kind").set_value("gaussian").run()
    at.slider(key="w_n").set_value(15).run()
    at.multiselect(key="w_overlay").set_value([0.5, 2.0]).run()
    assert not problems(at) and not errors(at)
    columns = set(tables(at)[0].columns)
    assert {"ℓ = 1", "ℓ = 0.5", "ℓ = 2"} <= columns
    assert at.query_params["prior"] == "gaussian"
    assert at.query_params["n"] == "15"


def test_pinned_curves_overlay() -> None:
    at = open_page(CURVES)
    at.button(key="w_pin").click().run()
    at.slider(key="w_q").set_value(0.5).run()
    assert not problems(at)
    columns = list(tables(at)[0].columns)
    assert columns[1] == "p = 0.9, q = 0.5"
    assert any(c.startswith("pinned: binary chain p = 0.9, q = 0.8") for c in columns)
    at.button(key="w_clear").click().run()
    assert len(tables(at)[0].columns) == 2


def test_settings_survive_switching_pages() -> None:
    at = open_page(CURVES)
    at.slider(key="w_p").set_value(0.7).run()
    at.switch_page("app_pages/calibrate.py").run()
    assert "p = 0.7" in " ".join(m.value for m in at.markdown)
    at.switch_page(CURVES).run()
    assert at.slider(key="w_p").value == pytest.approx(0.7)


def test_matrix_edits_survive_switching_pages() -> None:
    at = open_page(CURVES)
    at.radio(key="w_kind").set_value("matrix").run()
    at.session_state["w_matrix_0"] = {"edited_rows": {0: {"0": 0.6, "1": 0.3}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not errors(at)
    at.switch_page("app_pages/home.py").run()
    at.switch_page(CURVES).run()
    assert not problems(at) and not errors(at)
    assert at.data_editor[0].value.to_numpy()[0].tolist() == [0.6, 0.3, 0.1]
    assert math.isclose(float(at.query_params["P"].split(";")[0].split(",")[0]), 0.6)


# --------------------------------------------------------------------------- matrix editor: words, no silent changes


def _edit(at, key: str, rows: dict) -> None:
    at.session_state[key] = {"edited_rows": rows, "added_rows": [], "deleted_rows": []}
    at.run()


def _matrix_page():
    at = open_page(CURVES)
    at.radio(key="w_kind").set_value("matrix").run()
    return at


def test_messages_name_rows_and_columns_by_the_states_shown() -> None:
    at = _matrix_page()
    _edit(at, "w_matrix_0", {2: {"0": None}})  # clear the cell in row "2", column "0"
    assert not problems(at)
    assert "Row '2' has cells that are empty or not a finite number in column '0'." in errors(at)
    assert not any("Row 3" in m or "columns 1" in m for m in errors(at))


def test_closed_groups_name_the_states_and_an_initial_distribution_can_be_given() -> None:
    at = open_page(CURVES, {"prior": "matrix", "P": "1,0;0,1"})  # p = q = 1: two closed groups
    assert not problems(at)
    message = next(m for m in errors(at) if "no unique stationary distribution" in m)
    assert "({'0'} and {'1'})" in message and "[[1], [2]]" not in message
    assert any("Give one" in i.value for i in at.info)
    at.radio(key="w_initial_mode_0").set_value("given").run()
    assert not problems(at) and not errors(at)
    expected = influence_curve(MarkovChainPrior([[1, 0], [0, 1]], initial=[0.5, 0.5], length=100))
    assert metric(at, "a(1)") == ("∞" if math.isinf(expected.a[0]) else f"{expected.a[0]:.4g}")
    assert at.query_params["init"] == "0.5,0.5"
    version = at.session_state["settings"]["initial_version"]
    _edit(at, f"w_initial_{version}", {0: {"Pr(first entry)": 0.3}, 1: {"Pr(first entry)": 0.6}})
    assert "The initial distribution sums to 0.9; it must sum to 1." in errors(at)
    _edit(at, f"w_initial_{version}", {0: {"Pr(first entry)": 0.3}, 1: {"Pr(first entry)": 0.7}})
    assert not errors(at)
    expected = influence_curve(MarkovChainPrior([[1, 0], [0, 1]], initial=[0.3, 0.7], length=100))
    shown = tables(at)[0].iloc[:, 1].tolist()
    assert shown == ["∞" if math.isinf(a) else f"{a:.4g}" if a else "0" for a in expected.a]


def test_an_initial_distribution_from_a_link_and_a_wrong_one_is_ignored() -> None:
    at = open_page(CURVES, {"prior": "matrix", "P": "0.9,0.1;0.2,0.8", "init": "1,0"})
    assert not problems(at) and not errors(at)
    expected = influence_curve(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], initial=[1, 0], length=100))
    assert metric(at, "a(1)") == f"{expected.a[0]:.4g}"
    at = open_page(CURVES, {"prior": "matrix", "P": "0.9,0.1;0.2,0.8", "init": "0.2,0.3,0.5"})
    assert not problems(at) and not errors(at)
    assert any("`init` (3 numbers for 2 states)" in w.value for w in at.warning)


def test_typed_values_are_kept_as_typed_and_reported_not_clipped() -> None:
    at = _matrix_page()
    config = at.data_editor[0].proto.columns
    assert "min_value" not in config and "max_value" not in config  # the grid cannot clip what is typed
    _edit(at, "w_matrix_0", {0: {"1": -0.3}})
    assert at.session_state["settings"]["matrix"][0] == (0.8, -0.3, 0.1)  # stored as typed
    assert "Row '0' has negative entries in column '1'; probabilities cannot be negative." in errors(at)
    _edit(at, "w_matrix_0", {0: {"1": 2.0}})
    assert at.session_state["settings"]["matrix"][0] == (0.8, 2.0, 0.1)
    assert "Row '0' sums to 2.9; rows must sum to 1." in errors(at)


def test_normalise_rows_says_what_it_changed() -> None:
    at = _matrix_page()
    _edit(at, "w_matrix_0", {0: {"0": None}, 1: {"1": 0.6}})  # row 0: 0.1 + 0.1; row 1: 0.1 + 0.6 + 0.1
    at.button(key="w_normalise").click().run()
    assert not problems(at) and not errors(at)
    infos, warnings = [i.value for i in at.info], [w.value for w in at.warning]
    assert "Empty cells were set to 0: row '0', column '0'." in warnings
    assert "Each entry of rows '0' and '1' was divided by its row's sum (0.2 and 0.8), so every row sums to 1." in infos
    fixed = at.data_editor[0].value.to_numpy()
    assert np.allclose(fixed[0], [0.0, 0.5, 0.5]) and np.allclose(fixed[1], [0.125, 0.75, 0.125])
    at.button(key="w_normalise").click().run()
    assert "Every row already sums to 1: nothing was changed." in [i.value for i in at.info]


def test_normalise_rows_leaves_a_row_it_cannot_fix_and_says_why() -> None:
    at = _matrix_page()
    _edit(at, "w_matrix_0", {2: {"0": -0.5}})
    at.button(key="w_normalise").click().run()
    assert "Row '2' was left as it is: it holds a negative number. Fill it in first." in [w.value for w in at.warning]
    assert at.session_state["settings"]["matrix"][2] == (-0.5, 0.1, 0.8)


def test_theta_values_out_of_range_are_reported_not_clipped() -> None:
    at = open_page(CURVES)
    at.radio(key="w_kind").set_value("theta").run()
    _edit(at, "w_theta_0", {0: {"p": 1.5}})
    assert not problems(at)
    assert "Row 1: p = 1.5 is not a probability; p and q must be between 0 and 1." in errors(at)


def test_a_twenty_state_matrix_shows_every_column_in_two_grids() -> None:
    stay, move = 0.81, 0.01
    rows = ";".join(",".join(str(stay if i == j else move) for j in range(20)) for i in range(20))
    at = open_page(CURVES, {"prior": "matrix", "P": rows, "T": "30"})
    assert not problems(at) and not errors(at)
    left, right = at.data_editor[0].value, at.data_editor[1].value
    assert list(left.columns) + list(right.columns) == [str(i) for i in range(20)]
    assert len(left) == len(right) == 20
    _edit(at, "w_matrix_0_part1", {3: {"15": 0.5}})  # row '3', column '15' in the second part
    assert "Row '3' sums to 1.49; rows must sum to 1." in errors(at)
    assert at.session_state["settings"]["matrix"][3][15] == 0.5


# --------------------------------------------------------------------------- prior uncertainty


def _fitted_chain():
    at = open_page(CURVES)
    at.radio(key="w_kind").set_value("matrix").run()
    at.selectbox(key="w_preset").set_value("Fitted from data").run()
    at.button(key="w_load_preset").click().run()
    assert not problems(at) and not errors(at)
    return at


@pytest.fixture(scope="module")
def checkins_spread():
    from puffer_core import load_sequences, prior_spread

    data = load_sequences(ASSETS / "checkins.csv", user="user", time="time", state="state", group="country")
    return prior_spread(data, draws=10, seed=3)


def test_prior_uncertainty_draws_a_band_and_names_the_rows_behind_it(checkins_spread) -> None:
    at = _fitted_chain()
    at.toggle(key="w_unc_on").set_value(True).run()
    at.number_input(key="w_unc_draws").set_value(10).run()
    at.number_input(key="w_unc_seed").set_value(3).run()
    assert not problems(at) and not errors(at)
    robust = checkins_spread.robust
    assert metric(at, "a(1), robust Θ") == f"{robust.a[0]:.4g}"
    assert metric(at, "Spread of a(1)") == f"{checkins_spread.spread()[0]:.4g}"
    curves, rows = tables(at)[0], tables(at)[1]
    assert list(curves.columns) == ["b", "fitted chain", "robust Θ (fit + 10 draws)", "draws 5%", "draws 95%"]
    assert curves["robust Θ (fit + 10 draws)"].tolist()[:5] == [f"{a:.4g}" for a in robust.a[:5]]
    shown_fit = [float(x) for x in curves["fitted chain"]]
    shown_robust = [float(x) for x in curves["robust Θ (fit + 10 draws)"]]
    assert all(r >= f - 5e-4 * f for r, f in zip(shown_robust, shown_fit))  # Θ holds the fit: never below it
    expected = checkins_spread.rows()
    assert rows["state"].tolist() == expected["state"].tolist()
    assert rows["visits"].tolist() == expected["visits"].tolist()
    band = [t for t in chart_data(at) if t.get("fill") == "tonexty"]
    assert len(band) == 1 and band[0]["name"] == "5%–95% of the 10 draws' curves"
    low, high = checkins_spread.band(0.05, 0.95)
    assert np.allclose(plotly_array(band[0]["y"])[: len(low)], low)
    assert any("shaded" in c.value.lower() for c in at.caption)


def test_prior_uncertainty_is_offered_only_for_the_chain_as_fitted() -> None:
    at = open_page(CURVES)
    at.radio(key="w_kind").set_value("matrix").run()
    assert any("Prior uncertainty is offered for a chain fitted to data" in c.value for c in at.caption)
    at = _fitted_chain()
    assert at.toggle(key="w_unc_on").value is False
    _edit(at, "w_matrix_1", {0: {"Bar": 0.5}})
    assert any("edited after it was fitted" in c.value for c in at.caption)
    assert not [t for t in at.toggle if t.key == "w_unc_on"]


def test_prior_uncertainty_refused_up_front_when_too_large() -> None:
    at = _fitted_chain()
    at.number_input(key="w_length").set_value(2_000).run()
    at.session_state["settings"]["draws"] = 200  # 201 × 1,999 × 12² numbers per table: over the limit
    at.toggle(key="w_unc_on").set_value(True).run()
    assert not problems(at)
    assert at.number_input(key="w_unc_draws").value == 200
    assert any("over the limit" in m and "use at most" in m for m in errors(at))


def test_a_large_matrix_is_read_as_a_heatmap_and_edited_in_one_grid() -> None:
    """A 40-state chain (a compressed link): a heatmap with every value on hover, the grid in an expander, one part."""
    import numpy as np

    from puffer_core.priors.codecs import MatrixText

    matrix = np.random.default_rng(2).dirichlet(np.ones(40) * 0.2, size=40)
    at = open_page(CURVES, {"prior": "matrix", "P": MatrixText().encode(tuple(map(tuple, matrix))), "T": "30"})
    assert not problems(at) and not errors(at)
    charts = [json.loads(c.proto.spec)["data"][0] for c in at.get("plotly_chart")]
    spec = next(d for d in charts if d.get("type") == "heatmap")
    assert len(spec["customdata"]) == 40 and "text" not in spec  # too many cells to print: values on hover
    assert not any("Shown in" in c.value for c in at.caption)  # not cut into parts of many columns
    assert any("cell by cell" in e.label for e in at.expander)


def test_probabilities_in_heatmap_cells_are_short() -> None:
    from app_ui.core.charts import probability_text

    assert [probability_text(v) for v in (0.0, 1.0, 0.123456, 0.0123, 1e-05, 0.000123)] == [
        "0",
        "1",
        "0.12",
        "0.012",
        "1e-5",
        "1e-4",
    ]
