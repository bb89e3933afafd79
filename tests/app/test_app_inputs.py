"""Values out of range never leave a stale answer: the reason is in the page, no result is shown for another value.

The reference is the page itself before and after: a result (a metric, a chart) present for a good value,
absent while the box holds a bad one, and back once the box is fixed; and what the settings (the link)
keep: the last good value, never the bad one.
"""

from __future__ import annotations

import pytest

from tests.app.conftest import errors, metric, open_page, problems

CURVES = "app_pages/curves.py"
CALIBRATE = "app_pages/calibrate.py"
PLAN = "app_pages/plan.py"
SIMULATE = "app_pages/simulate.py"


def _warnings(at) -> list[str]:  # noqa: ANN001
    return [w.value for w in at.warning]


@pytest.mark.parametrize(
    ("page", "key", "bad", "words"),
    [
        (CALIBRATE, "w_eps", -1.0, "Target ε_puffer must be between 0.01 and 1,000; −1 is not."),
        (CALIBRATE, "w_eps_dp", 500.0, "Per-entry ε_DP of your mechanism must be between 0.0001 and 100; 500 is not."),
        (CURVES, "w_length", 10_000_000, "Sequence length T must be between 2 and 10,000; 10,000,000 is not."),
        (PLAN, "w_plan_releases", 1000, "Number of releases must be between 1 and 365; 1,000 is not."),
    ],
)
def test_an_out_of_range_value_is_said_in_the_page_and_hides_the_results(
    page: str, key: str, bad: float, words: str
) -> None:
    at = open_page(page)
    good_charts = len(at.get("plotly_chart"))
    assert good_charts and not errors(at)
    link_before = dict(at.query_params)
    at.number_input(key=key).set_value(bad).run()
    assert not problems(at)
    assert any(m.startswith(words) for m in errors(at)), errors(at)  # in the page, under the box
    assert any("The results are hidden while a value is out of range" in w for w in _warnings(at))
    assert len(at.get("plotly_chart")) < good_charts  # no chart drawn for another value than the one shown
    assert at.number_input(key=key).value == bad  # the box keeps what was typed
    assert dict(at.query_params) == link_before  # the link keeps the last good value
    assert "Prior in use" in " ".join(c.value for c in at.sidebar.caption)  # the sidebar is still drawn


def test_the_results_come_back_when_the_value_is_fixed() -> None:
    at = open_page(CALIBRATE)
    first = metric(at, "Per-entry ε_DP")
    at.number_input(key="w_eps").set_value(-1.0).run()
    with pytest.raises(StopIteration):
        metric(at, "Per-entry ε_DP")
    at.number_input(key="w_eps").set_value(2.0).run()
    assert not errors(at) and metric(at, "Per-entry ε_DP") != first
    assert at.query_params["eps"] == "2"


def test_simulate_refuses_a_hundred_million_trials_in_the_page() -> None:
    at = open_page(SIMULATE)
    assert at.button(key="w_sim_run")
    at.number_input(key="w_sim_trials").set_value(100_000_000).run()
    assert not problems(at)
    assert any(m.startswith("Trials must be between 2 and 5,000; 100,000,000 is not.") for m in errors(at))
    assert not [b for b in at.button if b.key == "w_sim_run"]  # nothing to run with another value


def test_a_value_set_elsewhere_moves_the_box_without_a_streamlit_warning() -> None:
    """The fitted chain sets T from the data: the T box follows (it used to be set twice: default and session)."""
    at = open_page(CURVES)
    at.radio(key="w_kind").set_value("matrix").run()
    at.selectbox(key="w_preset").set_value("Fitted from data").run()
    at.button(key="w_load_preset").click().run()
    assert not problems(at)
    assert at.number_input(key="w_length").value == 55  # the check-ins' longest sequence
    assert not _warnings(at)


@pytest.mark.parametrize(
    ("page", "key", "bad", "words"),
    [
        ("app_pages/attack.py", "w_attack_draws", 100_000_000, "Draws must be between 10 and 5,000"),
        ("app_pages/stream.py", "w_stream_target", -1.0, "Target: the stream may leak at most ε = must be between"),
    ],
)
def test_the_streams_and_attack_pages_never_run_with_a_value_out_of_range(
    page: str, key: str, bad: float, words: str
) -> None:
    at = open_page(page)
    assert not errors(at) and not problems(at)
    at.number_input(key=key).set_value(bad).run()
    assert not problems(at)
    assert any(m.startswith(words) for m in errors(at)), errors(at)
    assert any("The results are hidden while a value is out of range" in w for w in _warnings(at))
    assert not [b for b in at.button if b.key == "w_attack_run"]  # nothing to run with the old value
    assert at.number_input(key=key).value == bad
