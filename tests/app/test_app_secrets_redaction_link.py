"""The redaction planner's inputs are in the link (``rnode``: the protected entry, 1-based; ``reps``: the target ε):
a link reopens the planner at that entry and ε, with the leakage of every window size equal to the enumeration of
tests/support/brute.py for them; changing a box puts it in the link; an entry past the prior's length falls back to
the middle entry, and a link without them keeps the defaults."""

from __future__ import annotations

from puffer_core.display import fmt
from tests.app.conftest import errors, open_page, problems
from tests.app.test_app_secrets import CHAIN, CURVES, P, T, _stationary
from tests.support.brute import brute_redaction, secret_pairs


def _table(at):  # noqa: ANN001, ANN202 - the planner's table of leakage by window size
    return next(d.value for d in at.dataframe if "leakage (nats)" in d.value.columns)


def test_a_link_reopens_the_planner_at_its_entry_and_eps() -> None:
    at = open_page(CURVES, {**CHAIN, "sec": "p=sensitive;s=2", "rnode": "2", "reps": "0.05"})
    assert not problems(at) and not errors(at)
    assert at.number_input(key=f"w_red_node_{T}").value == 2 and at.number_input(key="w_red_eps").value == 0.05
    brute = brute_redaction([(P, _stationary(P), T)], 1, secret_pairs(3, "sensitive", states=(2,)))
    assert list(_table(at)["leakage (nats)"]) == [fmt(v) for v in brute]
    size = next(i + 1 for i, v in enumerate(brute) if v <= 0.05)
    assert any(f"({size} in all)" in s.value for s in at.success)
    assert at.query_params["rnode"] == "2" and at.query_params["reps"] == "0.05"


def test_a_changed_box_goes_into_the_link_and_defaults_stay_out() -> None:
    at = open_page(CURVES, CHAIN)
    assert "rnode" not in at.query_params and "reps" not in at.query_params
    at.number_input(key=f"w_red_node_{T}").set_value(4).run()
    at.number_input(key="w_red_eps").set_value(0.2).run()
    assert not problems(at) and not errors(at)
    assert at.query_params["rnode"] == "4" and at.query_params["reps"] == "0.2"
    brute = brute_redaction([(P, _stationary(P), T)], 3)
    assert list(_table(at)["leakage (nats)"]) == [fmt(v) for v in brute]


def test_an_entry_past_the_prior_falls_back_to_the_middle() -> None:
    at = open_page(CURVES, {**CHAIN, "rnode": "40"})
    assert not problems(at) and not errors(at)
    assert at.number_input(key=f"w_red_node_{T}").value == 1 + T // 2
