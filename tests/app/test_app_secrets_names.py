"""What is secret keeps its states by name (link key ``snames`` beside ``sec``): a page whose states are in another
order reads the same states, a link from before names were kept is read by index as it always was, and a named state
the page's prior lacks is one clear error naming it (nothing is computed meanwhile).  The numbers are checked against
the brute-force curve of tests/support/brute.py for the states meant."""

from __future__ import annotations

from puffer_core.display import fmt
from tests.app.conftest import errors, metric, open_page, problems
from tests.app.test_app_secrets import CALIBRATE, CHAIN, CURVES, P, T, _eps_dp
from tests.support.brute import brute_influence_all, secret_pairs

SYNTHESIZE = "app_pages/synthesize.py"
ORDER = [2, 0, 1]  # the same chain with its states in another order: clinic, home, work
REORDERED = [[P[i][j] for j in ORDER] for i in ORDER]
OTHER = {"prior": "matrix", "P": ";".join(",".join(str(v) for v in row) for row in REORDERED),
         "labels": "clinic|home|work", "T": str(T)}


def _stationary(matrix: list[list[float]]) -> list[float]:
    import numpy as np

    a = np.array(matrix).T - np.eye(len(matrix))
    a[-1, :] = 1.0
    return list(np.linalg.solve(a, np.array([0.0] * (len(matrix) - 1) + [1.0])))


def _eps(matrix: list[list[float]], sensitive: int) -> str:
    a = brute_influence_all([(matrix, _stationary(matrix), T)], secret_pairs(3, "sensitive", states=(sensitive,)))
    return fmt(_eps_dp(a, 3.0))


def test_the_link_keeps_the_states_by_name() -> None:
    at = open_page(CURVES, CHAIN)
    at.radio(key="w_sec_kind").set_value("sensitive").run()
    at.multiselect(key="w_sec_sensitive").select("clinic").run()
    assert not problems(at) and not errors(at)
    assert at.query_params["sec"] == "p=sensitive;s=2" and at.query_params["snames"] == "2:clinic"


def test_a_page_with_the_states_in_another_order_reads_the_same_state() -> None:
    at = open_page(CALIBRATE, {**OTHER, "sec": "p=sensitive;s=2", "snames": "2:clinic", "eps": "3"})
    assert not problems(at) and not errors(at)
    assert at.multiselect(key="w_sec_sensitive").value == ["clinic"]
    assert metric(at, "Per-entry ε_DP") == _eps(REORDERED, 0)  # clinic is state 0 here
    assert at.query_params["sec"] == "p=sensitive;s=0" and at.query_params["snames"] == "0:clinic"
    old = open_page(CALIBRATE, {**OTHER, "sec": "p=sensitive;s=2", "eps": "3"})  # a link without names: by index
    assert not problems(old) and not errors(old)
    assert old.multiselect(key="w_sec_sensitive").value == ["work"]
    assert metric(old, "Per-entry ε_DP") == _eps(REORDERED, 2)


def test_a_named_state_the_page_lacks_is_one_clear_error() -> None:
    at = open_page(CALIBRATE, {**CHAIN, "sec": "p=sensitive;s=2", "snames": "2:hospital"})
    assert not problems(at)
    said = errors(at)
    assert len(said) == 1 and "there is no state called 'hospital'" in said[0], said
    assert not [m for m in at.metric if m.label == "Per-entry ε_DP"]  # nothing computed with other secrets


def test_moving_to_a_page_with_other_states_says_which_is_missing() -> None:
    at = open_page(CURVES, CHAIN)
    at.radio(key="w_sec_kind").set_value("sensitive").run()
    at.multiselect(key="w_sec_sensitive").select("clinic").run()
    at.switch_page("app_pages/home.py").run()  # a page without the section: its widgets are forgotten
    at.switch_page(SYNTHESIZE).run()  # the check-ins' states have no clinic
    assert not problems(at)
    said = errors(at)
    assert len(said) == 1 and "there is no state called 'clinic'" in said[0], said
    assert "Noise scale s" not in [m.label for m in at.metric]


def test_the_choice_survives_a_page_without_the_section() -> None:
    at = open_page(CURVES, CHAIN)
    at.radio(key="w_sec_kind").set_value("sensitive").run()
    at.multiselect(key="w_sec_sensitive").select("clinic").run()
    at.switch_page("app_pages/home.py").run()
    at.query_params["eps"] = "3"
    at.switch_page(CALIBRATE).run()
    assert not problems(at) and not errors(at)
    assert at.multiselect(key="w_sec_sensitive").value == ["clinic"]
    assert any("clinic" in c.value for c in at.caption if c.value.startswith("**What is protected.**"))
