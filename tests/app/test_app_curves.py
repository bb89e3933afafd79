"""Home and Influence curves pages under AppTest: defaults, widgets, bad matrices, links, state."""

from __future__ import annotations

import math

import numpy as np
import pytest

from puffer_core import MarkovChainPrior, influence_curve
from tests.app.conftest import errors, metric, open_page, problems, tables

CURVES = "app_pages/curves.py"


def test_home_says_what_it_is_for_and_links_every_page() -> None:
    at = open_page()
    assert not problems(at)
    assert at.title[0].value == "Pufferfish Lab"
    links = {link.proto.page for link in at.get("page_link")}
    assert links == {"curves", "calibrate", "plan", "simulate", "classroom", "about"}
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
    at.checkbox(key="w_cf").check().run()
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
    assert any("Row 1 (from state '0') sums to 0.7" in m for m in messages)
    assert any("No curve for this prior" in m for m in messages)
    at.button(key="w_normalise").click().run()
    assert not problems(at)
    assert not errors(at)
    fixed = at.data_editor[0].value.to_numpy()
    assert np.allclose(fixed[0], [0.5 / 0.7, 0.1 / 0.7, 0.1 / 0.7])


def test_a_bad_matrix_in_a_link_gives_an_error_not_a_traceback() -> None:
    at = open_page(CURVES, {"prior": "matrix", "P": "0.5,0.6;0.2,0.8"})
    assert not problems(at)
    assert any("Row 1 (from state '0') sums to 1.1" in m for m in errors(at))
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
