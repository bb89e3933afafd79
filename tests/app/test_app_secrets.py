"""What is secret in the app (docs/math.md §16): the numbers the pages show for chosen secrets equal curves computed
here by enumeration (tests/support/brute.py, no puffer_core code), the link carries the secrets, the exported
scripts rebuild them and print the page's numbers, and bad input is said in an st.error, never a traceback."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from puffer_core.display import fmt
from puffer_core.secrets import read_secrets
from tests.app.conftest import errors, metric, open_page, problems
from tests.support.brute import brute_influence_all, brute_redaction, secret_pairs
from tests.support.scripts import run_script

ROOT = Path(__file__).resolve().parents[2]
CURVES, CALIBRATE, PLAN = "app_pages/curves.py", "app_pages/calibrate.py", "app_pages/plan.py"
P = [[0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4]]
LABELS = ("home", "work", "clinic")
T = 5
CHAIN = {"prior": "matrix", "P": ";".join(",".join(str(v) for v in row) for row in P), "labels": "|".join(LABELS),
         "T": str(T)}


def _stationary(matrix: list[list[float]]) -> list[float]:
    """π = π P by solving the linear system (not the library's code)."""
    a = np.array(matrix).T - np.eye(len(matrix))
    a[-1, :] = 1.0
    rhs = np.zeros(len(matrix))
    rhs[-1] = 1.0
    return list(np.linalg.solve(a, rhs))


def _brute(pairs: set[tuple[int, int]] | None = None, positions: set[int] | None = None) -> list[float]:
    return brute_influence_all([(P, _stationary(P), T)], pairs, positions)


def _eps_dp(a: list[float], eps: float) -> float:
    """[C]'s translation by hand: the largest (ε − a(b)) / b over a(b) < ε, with (T, 0) (docs/math.md §3)."""
    points = [(b + 1, v) for b, v in enumerate(a)] + [(len(a), 0.0)]
    return max((eps - v) / b for b, v in points if v < eps)


CASES = [  # the link's text, the pairs and positions written from docs/math.md §16 by tests/support/brute.py
    ("p=sensitive;s=0", secret_pairs(3, "sensitive", states=(0,)), None),
    ("p=groups;g=0.1", secret_pairs(3, "groups", groups=((0, 1),)), None),
    ("p=list;l=2~0;o=1", secret_pairs(3, "list", listed=((2, 0),), ordered=True), None),
    ("p=all;t=0.4", None, {0, 4}),
]


@pytest.mark.parametrize(("text", "pairs", "positions"), CASES)
def test_calibrate_shows_the_chosen_secrets_numbers(text: str, pairs: object, positions: object) -> None:
    at = open_page(CALIBRATE, {**CHAIN, "sec": text, "eps": "3"})
    assert not problems(at) and not errors(at)
    chosen, everything = _eps_dp(_brute(pairs, positions), 3.0), _eps_dp(_brute(), 3.0)
    assert metric(at, "Per-entry ε_DP") == fmt(chosen)
    assert chosen > everything * (1 + 1e-9)  # the secrets change the number: fewer secrets, more budget
    sentence = [c.value for c in at.caption if c.value.startswith("**What is protected.**") and "e^3" in c.value]
    assert sentence and "An attacker who believes" in sentence[0]


def test_curves_widgets_set_the_secrets_and_the_link() -> None:
    at = open_page(CURVES, CHAIN)
    at.radio(key="w_sec_kind").set_value("sensitive").run()
    at.multiselect(key="w_sec_sensitive").select("clinic").run()
    assert not problems(at) and not errors(at)
    assert at.query_params["sec"] == "p=sensitive;s=2"
    brute = _brute(secret_pairs(3, "sensitive", states=(2,)))
    assert metric(at, "a(1), chosen secrets") == fmt(brute[0])
    assert metric(at, "a(1), every pair") == fmt(_brute()[0])
    words = [c.value for c in at.caption if c.value.startswith("**What is protected.**")]
    assert "whether a user was in clinic rather than in any other state at any entry" in words[0]


@pytest.mark.parametrize("page", [CURVES, CALIBRATE, PLAN])
def test_a_shared_link_reopens_the_same_secrets(page: str) -> None:
    query = {**CHAIN, "sec": "p=groups;g=0.1;r=h22-23.0-5,nnight-time", "sgrid": "2024-03-01 20:00|1h"}
    at = open_page(page, query)
    assert not problems(at) and not errors(at)
    assert read_secrets(at.query_params["sec"]) == read_secrets(query["sec"])  # the same secrets
    assert at.query_params["sgrid"] == query["sgrid"]
    assert at.radio(key="w_sec_kind").value == "groups" and at.text_input(key="w_sec_groups").value == "home, work"
    assert at.radio(key="w_sec_where").value == "rule" and at.text_input(key="w_sec_hours").value == "22-5"
    words = [c.value for c in at.caption if c.value.startswith("**What is protected.**")][0]
    assert "among home and work" in words and "night-time hours (22:00–05:59)" in words


def test_a_rule_protects_the_entries_of_its_hours() -> None:
    """Entries at 20:00..00:00 hourly: 22:00–05:59 protects entries 3, 4 and 5 (0-based 2, 3, 4)."""
    query = {**CHAIN, "sec": "p=all;r=h22-23.0-5,nnight-time", "sgrid": "2024-03-01 20:00|1h", "eps": "1"}
    at = open_page(CALIBRATE, query)
    assert not problems(at) and not errors(at)
    assert metric(at, "Per-entry ε_DP") == fmt(_eps_dp(_brute(None, {2, 3, 4}), 1.0))


@pytest.mark.parametrize(
    ("kind", "widget", "value", "said"),
    [
        ("sensitive", "multiselect", None, "the sensitive states: none chosen yet"),
        ("groups", "text_input", "home; work, clinic", "group 1 ('home') names one state"),
        ("groups", "text_input", "home, hospital", "there is no state called 'hospital'"),
        ("groups", "text_input", "", "the groups are empty"),
        ("list", "text_area", "clinic > clinic", "names one state twice"),
        ("list", "text_area", "clinic home", "cannot read the pair 'clinic home'"),
    ],
)
def test_bad_secrets_are_said_not_raised(kind: str, widget: str, value: str | None, said: str) -> None:
    at = open_page(CALIBRATE, CHAIN)
    at.radio(key="w_sec_kind").set_value(kind).run()
    if value is not None:
        getattr(at, widget)(key=f"w_sec_{kind if kind != 'list' else 'listed'}").input(value).run()
    assert not problems(at)
    assert any(said in e for e in errors(at)), errors(at)
    assert not [m for m in at.metric if m.label == "Per-entry ε_DP"]  # nothing computed with other secrets


def test_a_rule_matching_no_entry_and_a_bad_grid_are_said() -> None:
    at = open_page(CALIBRATE, CHAIN)
    at.radio(key="w_sec_where").set_value("rule").run()
    at.multiselect(key="w_sec_weekdays").select("Sunday").run()  # 2024-01-01 is a Monday; 5 hourly entries
    assert not problems(at)
    assert any("matches the rule (on Sundays): nothing would be protected" in e for e in errors(at)), errors(at)
    at.text_input(key="w_sec_grid_step").input("soon").run()
    assert any("the step between entries must be a duration" in e for e in errors(at)), errors(at)
    assert not problems(at)


def test_a_link_naming_a_state_the_prior_lacks_is_said() -> None:
    at = open_page(CALIBRATE, {**CHAIN, "sec": "p=sensitive;s=7"})
    assert not problems(at)
    assert any("there is no state called 'state 7'" in e for e in errors(at)), errors(at)


def test_event_secrets_and_their_infinite_leakage() -> None:
    """A window of 3 entries: a(b) = ∞ for b < 3 (H must hold the whole window), finite from there on."""
    at = open_page(CURVES, {**CHAIN, "sec": "e:s=2;w=1-3"})
    assert not problems(at) and not errors(at)
    assert metric(at, "a(1), chosen secrets") == fmt(math.inf)
    words = [c.value for c in at.caption if c.value.startswith("**What is protected.**")][0]
    assert "whether a user was in clinic at some of entries 2–4 rather than at none of them" in words


def test_the_redaction_planner_equals_enumeration() -> None:
    at = open_page(CURVES, {**CHAIN, "sec": "p=sensitive;s=2"})
    at.number_input(key=f"w_red_node_{T}").set_value(3).run()
    at.number_input(key="w_red_eps").set_value(0.05).run()
    assert not problems(at) and not errors(at)
    table = next(d.value for d in at.dataframe if "leakage (nats)" in d.value.columns)
    brute = brute_redaction([(P, _stationary(P), T)], 2, secret_pairs(3, "sensitive", states=(2,)))
    assert list(table["leakage (nats)"]) == [fmt(v) for v in brute]
    size = next(i + 1 for i, v in enumerate(brute) if v <= 0.05)
    assert any(f"({size} in all)" in s.value for s in at.success)


# --------------------------------------------------------------------------- reports and scripts


@pytest.mark.parametrize("text", ["p=sensitive;s=2;t=1-3", "p=all;r=h22-23.0-5,nnight-time", "e:s=2;w=1-2"])
def test_the_calibrate_script_rebuilds_the_secrets(text: str, exports: dict[str, object], tmp_path: Path) -> None:
    at = open_page(CALIBRATE, {**CHAIN, "sec": text, "sgrid": "2024-03-01 20:00|1h", "eps": "2"})
    assert not problems(at) and not errors(at)
    assert "SECRETS = ALL_SECRETS" not in str(exports["script"])
    printed = dict(line.split(" = ", 1) for line in run_script(str(exports["script"]), tmp_path).splitlines())
    shown = {m.label: m.value for m in at.metric}
    assert {k: v for k, v in printed.items() if not k.startswith("accuracy_first_")} == shown
    report = exports["report"]()
    assert "What is secret (docs/math.md §16)" in report and "Budget" not in report.split("What is secret")[0][-5:]
    assert "by more than a factor e^2" in report or "no guarantee" in report


def test_the_plan_script_and_report_carry_the_secrets(exports: dict[str, object], tmp_path: Path) -> None:
    at = open_page(PLAN, {**CHAIN, "sec": "p=sensitive;s=2"})
    assert not problems(at) and not errors(at)
    assert "Secrets(pairs='sensitive', states=(2,))" in str(exports["script"])
    printed = run_script(str(exports["script"]), tmp_path)
    assert f"Per-release ε_DP = {metric(at, 'Per-release ε_DP')}" in printed
    assert "whether a user was in clinic rather than in any other state" in exports["report"]()


@pytest.mark.parametrize("name", ["secrets", "night"])
def test_the_exported_secrets_cases_run(name: str, tmp_path: Path) -> None:
    """The cases tests/support/exported.py hands to .ci/installed.py: each page's script rebuilds the Secrets."""
    from tests.support.exported import SECRETS_CASES, SECRETS_PAGES, link_query, page_script, prior_cases

    fitted = link_query(*prior_cases()["fitted"])
    for page in SECRETS_PAGES:
        script = page_script(page, fitted | SECRETS_CASES[name])
        assert "SECRETS = Secrets(" in script and "secrets=SECRETS" in script
        assert run_script(script, tmp_path).strip()


def test_the_robust_theta_takes_the_secrets_too(exports: dict[str, object], tmp_path: Path) -> None:
    """Prior uncertainty (docs/math.md §12) and chosen secrets: the curve of Θ for the secrets, and its script."""
    from puffer_core import Secrets, calibrate, influence_curve, load_sequences, prior_spread

    at = open_page(CURVES)
    at.radio(key="w_kind").set_value("matrix").run()
    at.selectbox(key="w_preset").set_value("Fitted from data").run()
    at.button(key="w_load_preset").click().run()
    at.radio(key="w_sec_where").set_value("entries").run()
    at.text_input(key="w_sec_entries").input("1-3").run()
    at.switch_page(CALIBRATE).run()
    at.toggle(key="w_cal_unc_on").set_value(True).run()
    at.number_input(key="w_cal_unc_draws").set_value(4).run()
    assert not problems(at) and not errors(at)
    data = load_sequences(ROOT / "assets" / "checkins.csv", user="user", time="time", state="state", group="country")
    spread = prior_spread(data, draws=4, seed=0)
    chosen = influence_curve(list(spread.priors), secrets=Secrets(positions=(0, 1, 2)))
    assert metric(at, "Per-entry ε_DP") == fmt(calibrate(chosen, 1.0).eps_dp)
    assert calibrate(chosen, 1.0).eps_dp >= calibrate(spread.robust, 1.0).eps_dp  # fewer secrets: never less budget
    printed = dict(line.split(" = ", 1) for line in run_script(str(exports["script"]), tmp_path).splitlines())
    assert printed["Per-entry ε_DP"] == metric(at, "Per-entry ε_DP")
