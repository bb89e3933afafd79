"""Classroom page under AppTest: stepping the collapse examples, the Laplace chain, the tiny chain."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from puffer_core.classroom import example_1, laplace_sum_counterexample, laplace_sum_leakage, posterior_trace
from tests.app.conftest import errors, open_page, problems, static_tables, tables
from tests.support.apptest import AppTest

CLASSROOM = "app_pages/classroom.py"


def _metrics(at: AppTest) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in at.metric:
        out.setdefault(m.label, m.value)
    return out


@pytest.fixture
def classroom() -> AppTest:
    at = open_page(CLASSROOM)
    assert not problems(at) and not errors(at)
    return at


def test_example_1_collapses_while_randomized_response_stays_bounded(classroom: AppTest) -> None:
    at = classroom
    values = [(m.label, m.value) for m in at.metric]
    assert ("ε of one run", "0") in values and ("ε of two runs", "∞") in values
    assert ("ε of one run", "0.5") in values and ("ε of 6 runs", "3") in values
    assert _metrics(at)["Expected runs"] == "3.167"
    for _ in range(3):
        at.button(key="w_run_once").click().run()
    assert not problems(at) and not errors(at)
    assert any("Runs so far: 3" in m.value for m in at.markdown)
    assert len(tables(at)[0]) == 3  # the outputs seen so far
    at.button(key="w_reset").click().run()
    assert any("Runs so far: 0" in m.value for m in at.markdown)


@pytest.mark.parametrize("example", ["[C] Example 2", "[C] Example 3", "[P] Appendix J"])
def test_every_collapse_example_steps_without_errors(classroom: AppTest, example: str) -> None:
    at = classroom
    at.selectbox(key="w_example").set_value(example).run()
    at.button(key="w_run_five").click().run()
    at.button(key="w_run_five").click().run()
    at.button(key="w_run_five").click().run()
    assert not problems(at) and not errors(at)
    assert any("Runs so far: 12" in m.value for m in at.markdown)
    assert _metrics(at)["ε of two runs"] == "∞"


def test_changing_the_example_starts_over(classroom: AppTest) -> None:
    at = classroom
    at.button(key="w_run_five").click().run()
    at.selectbox(key="w_true").set_value("B1").run()
    assert any("Runs so far: 0" in m.value for m in at.markdown)
    at.slider(key="w_ex1_prob").set_value(0.3).run()
    assert not problems(at) and not errors(at)


def test_laplace_two_node_counterexample_numbers(classroom: AppTest) -> None:
    at = classroom
    one, two = laplace_sum_counterexample()
    metrics = _metrics(at)
    assert metrics["Lap(1): ε of one release"] == f"{one:.4g}"
    assert metrics["Lap(1): ε of two releases"] == f"{two:.4g}"
    at.slider(key="w_lap_releases").set_value(3).run()
    at.number_input(key="w_lap_target").set_value(2.0).run()
    assert not problems(at) and not errors(at)
    table = next(t for t in static_tables(at) if "Theorem 6.2 bound" in t.columns)
    for exact, bound in zip(table["calibrated exact"], table["Theorem 6.2 bound"]):
        assert float(exact) <= float(bound)


def test_tiny_chain_exact_leakage_is_below_the_guarantee(classroom: AppTest) -> None:
    at = classroom
    table = next(t for t in static_tables(at) if "exact leakage" in t.columns)
    for exact, guarantee in zip(table["exact leakage"], table["guarantee"]):
        assert float(exact) <= float(guarantee) + 1e-9
    at.number_input(key="w_tiny_k").set_value(3).run()
    at.number_input(key="w_tiny_t").set_value(6).run()
    assert not problems(at) and not errors(at)
    assert any("out of reach" in i.value and "T ≤ 4 fits" in i.value for i in at.info)


def test_tiny_chain_bad_matrix_gives_an_error(classroom: AppTest) -> None:
    at = classroom
    at.session_state["w_tiny_matrix_2"] = {"edited_rows": {1: {"1": 0.5}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not problems(at)
    assert any("Row '1' sums to 0.9" in m for m in errors(at))


def test_the_runs_survive_switching_pages(classroom: AppTest) -> None:
    at = classroom
    at.selectbox(key="w_example").set_value("[C] Example 3").run()
    at.button(key="w_run_five").click().run()
    at.switch_page("app_pages/home.py").run()
    at.switch_page(CLASSROOM).run()
    assert not problems(at) and not errors(at)
    assert at.selectbox(key="w_example").value == "[C] Example 3"
    assert any("Runs so far: 5" in m.value for m in at.markdown)


# --------------------------------------------------------------------------- the words come from the data


def _outputs(at: AppTest) -> pd.DataFrame:
    return next(t for t in tables(at) if "output" in t.columns)


def test_the_collapse_sentence_names_the_run_the_secret_fell(classroom: AppTest) -> None:
    at = classroom
    at.button(key="w_run_once").click().run()
    assert not at.warning  # one output of Example 1 reveals nothing
    for _ in range(5):
        at.button(key="w_run_once").click().run()
    trace = posterior_trace(example_1(), "A1", 12, np.random.default_rng(0))  # the page's seed 0
    revealed = trace[trace["revealed"]]
    first = int(revealed["run"].min())
    assert first < 6  # with seed 0 the secret falls before the sixth run: the old sentence said "After 6 runs"
    warning = [w.value for w in at.warning]
    assert warning == [
        f"Since run {first} (of the 6 so far) the attacker is **certain** of the secret: s1 (an A dataset)."
        " Privacy collapsed."
    ]
    # the outputs read as the pair they are, without Python's quotes
    outputs = _outputs(at)
    seen = trace[(trace["run"] >= 1) & (trace["run"] <= 6)].drop_duplicates("run")["output"]
    assert list(outputs["output"]) == [f"({a}, {b})" for a, b in seen]
    assert not any("'" in text for text in outputs["output"])


def test_example_2_outputs_say_what_they_hold(classroom: AppTest) -> None:
    at = classroom
    at.selectbox(key="w_example").set_value("[C] Example 2").run()
    at.button(key="w_run_five").click().run()
    outputs = _outputs(at)
    assert all(re.fullmatch(r"type A: x₂⊕x₁ = [01], x₃⊕x₁ = [01]|type B: parity [01]", o) for o in outputs["output"])
    assert at.selectbox(key="w_true").value == (0, 0, 0)
    assert "'" not in at.selectbox(key="w_true").format_func(at.selectbox(key="w_true").value)


def test_the_laplace_tab_explains_what_the_numbers_show(classroom: AppTest) -> None:
    at = classroom
    plain = [laplace_sum_leakage(0.9, 0.01, k) for k in range(1, 5)]
    excess = plain[1] - 2 * plain[0]
    assert excess > 0 and all(plain[k - 1] < k * plain[0] for k in (3, 4))  # [S] Theorem III.4's chain
    text = next(m.value for m in at.markdown if m.value.startswith("With p = 0.9 and q = 0.01"))
    assert f"2 releases leak {excess:.4f} nats more than 2 × one release" in text
    assert f"{math.expm1(excess):.2%} further" in text
    assert "At k = 3, 4 the exact leakage is below k × one release" in text
    table = next(t for t in static_tables(at) if "k × one" in t.columns)
    assert list(table["k × one"]) == [f"{k * plain[0]:.4g}" for k in range(1, 5)]
    assert list(table["excess"])[1:] == [f"{plain[k - 1] - k * plain[0]:.4g}" for k in range(2, 5)]
    # a chain that does not break linear composition says so
    at.slider(key="w_lap_q").set_value(0.1).run()
    assert not problems(at) and not errors(at)
    text = next(m.value for m in at.markdown if m.value.startswith("With p = 0.9 and q = 0.1,"))
    assert "stays at or below k × one release for every k shown" in text
    assert all(laplace_sum_leakage(0.9, 0.1, k) <= k * laplace_sum_leakage(0.9, 0.1, 1) for k in range(1, 5))
