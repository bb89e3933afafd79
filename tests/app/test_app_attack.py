"""The "How tight is my bound?" page under AppTest: the attack ladder, attack ≤ exact ≤ every bound.

Every number the page shows is compared with puffer_core called directly; the exported script is
run in a fresh Python process and what it prints is compared with the page.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app_ui.attack.views import parse_attack_output
from app_ui.core.tables import fmt
from puffer_core import MarkovChainPrior, certify, fit_markov_chain, influence_curve, load_dataset
from puffer_core.attacks.attacker import attack_histogram, attack_stream
from puffer_core.audit.stream import exact_histogram_leakage, exact_stream_leakage
from puffer_core.mechanisms.laws import laplace_histogram_emission, randomized_response_emission
from puffer_core.priors.fitting import DEFAULT_SMOOTHING
from puffer_core.priors.kinds import sticky_matrix
from puffer_core.stream.registry import stream_bounds
from puffer_core.stream.tpl import temporal_privacy_leakage
from tests.app.conftest import errors, metric, open_page, problems, static_tables
from tests.app.test_app_stream import STREAM, chart, run_script

ATTACK = "app_pages/attack.py"


def _script(at) -> str:  # noqa: ANN001 - the page's script
    return next(c.value for c in at.code if c.language == "python")


def run_attack(at, release: str | None = None, only: tuple[str, ...] | None = None, **numbers) -> None:
    if release is not None:
        at.radio(key="w_attack_release").set_value(release).run()
    if only is not None:
        for box in at.checkbox:
            if box.key.startswith("w_attack_prior_"):
                box.set_value(box.key.removeprefix("w_attack_prior_") in only)
    for key, value in numbers.items():
        at.number_input(key=f"w_attack_{key}").set_value(value)
    at.run()
    at.button(key="w_attack_run").click().run(timeout=180)


def as_float(cell: str) -> float | None:
    return None if cell == "" else float(cell)


def test_attack_table_orders_lower_truth_and_bounds_for_every_demo_prior() -> None:
    at = open_page(ATTACK)
    assert not problems(at) and not errors(at)
    assert not at.get("plotly_chart")  # nothing runs before the button
    run_attack(at)
    assert not problems(at) and not errors(at)
    table = static_tables(at)[0]
    assert list(table["prior"]) == [
        "binary, T = 6", "3 states, T = 4", "binary, T = 100", "5 states, T = 100", "check-ins fitted", "your prior"
    ]
    for _, row in table.iterrows():
        lower = as_float(row["attack"])
        bounds = [as_float(row[c]) for c in ("TPL", "[C]", "group DP")]
        assert lower is not None and lower > 0
        assert all(lower <= b for b in bounds if b is not None)
        exact = as_float(row["exact"])
        if exact is not None:
            assert lower <= exact <= min(b for b in bounds if b is not None)
    assert table["exact"].iloc[0] != "" and table["exact"].iloc[2] == ""
    # the numbers are the library's, reproduced from the seed
    tiny = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=6)
    law = randomized_response_emission(2, 0.5)
    assert table["attack"].iloc[0] == fmt(attack_stream(tiny, law, seed=0, draws=200).lower)
    assert table["exact"].iloc[0] == fmt(exact_stream_leakage(tiny, law).eps)
    assert table["TPL"].iloc[0] == fmt(temporal_privacy_leakage(tiny, 0.5).max_tpl)
    sticky = MarkovChainPrior(sticky_matrix(5, 0.6), length=100)
    assert table["attack"].iloc[3] == fmt(attack_stream(sticky, randomized_response_emission(5, 0.5), seed=0).lower)
    assert table["[C]"].iloc[3] == fmt(certify(influence_curve(sticky), 0.5).eps_puffer)
    shown = chart(at)
    assert shown["attack (lower bound)"] == list(table["attack"])
    assert any("attack (seed 0)" in m.value for m in at.markdown)


@pytest.mark.parametrize("release", ["laplace", "exponential", "stream_histogram"])
def test_attack_on_histograms_and_noisy_streams(release: str) -> None:
    at = open_page(ATTACK)
    run_attack(at, release, only=("binary6", "sticky3", "binary100"), seed=3, draws=60)
    assert not problems(at) and not errors(at)
    table = static_tables(at)[0]
    tiny = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=6)
    if release == "stream_histogram":
        law = laplace_histogram_emission(2, 0.5)
        expected = attack_stream(tiny, law, seed=3, draws=60).lower
        truth = exact_stream_leakage(tiny, law).eps
    else:
        expected = attack_histogram(tiny, 0.5, mechanism=release, seed=3, draws=60).lower
        truth = exact_histogram_leakage(tiny, 0.5, mechanism=release)
        assert set(table["TPL"]) == {""}  # not a stream
    assert table["attack"].iloc[0] == fmt(expected)
    assert table["exact"].iloc[0] == fmt(truth)
    for _, row in table.iterrows():
        lower = as_float(row["attack"])
        assert lower is not None and lower <= as_float(row["[C]"]) and lower <= as_float(row["group DP"])


def test_attack_refuses_what_is_too_big_and_says_why() -> None:
    at = open_page(ATTACK)
    run_attack(at, "laplace", only=("checkins",), draws=20)
    assert not problems(at) and not errors(at)
    table = static_tables(at)[0]
    assert table["attack"].iloc[0] == "" and table["exact"].iloc[0] == ""
    assert any("No attack: the histogram attack tracks every count vector" in c.value for c in at.caption)


def test_attack_of_the_users_prior_and_a_gaussian_one() -> None:
    at = open_page(ATTACK, {"prior": "matrix", "P": "0.7,0.2,0.1;0.1,0.8,0.1;0.3,0.3,0.4", "T": "30"})
    run_attack(at, only=("user",), draws=50)
    assert not problems(at) and not errors(at)
    prior = MarkovChainPrior([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]], length=30)
    expected = attack_stream(prior, randomized_response_emission(3, 0.5), seed=0, draws=50).lower
    assert static_tables(at)[0]["attack"].iloc[0] == fmt(expected)
    gauss = open_page(ATTACK, {"prior": "gaussian"})
    assert not problems(gauss)
    assert "w_attack_prior_user" not in [c.key for c in gauss.checkbox]
    assert any("needs a Markov chain" in c.value for c in gauss.caption)


def test_the_prior_fitted_on_the_curves_page_reaches_both_pages() -> None:
    at = open_page("app_pages/curves.py")
    at.radio(key="w_kind").set_value("matrix").run()
    at.selectbox(key="w_preset").set_value("Fitted from data").run()
    at.button(key="w_load_preset").click().run()
    fitted = fit_markov_chain(load_dataset("checkins"), smoothing=DEFAULT_SMOOTHING)
    at.switch_page(STREAM).run()
    assert not problems(at) and not errors(at)
    expected = stream_bounds(fitted, [0.3] * 55, curve=influence_curve(fitted))
    assert metric(at, "Max TPL over t") == fmt(expected.temporal.max_tpl)
    assert metric(at, "[C] bound") == fmt(expected.translation.eps_puffer)
    at.switch_page(ATTACK).run()
    run_attack(at, only=("user",), draws=40)
    assert not problems(at) and not errors(at)
    row = static_tables(at)[0].iloc[0]
    lower = attack_stream(fitted, randomized_response_emission(12, 0.5), seed=0, draws=40).lower
    assert row["prior"] == "your prior" and row["attack"] == fmt(lower)
    assert lower <= temporal_privacy_leakage(fitted, 0.5).max_tpl and row["TPL"] == fmt(
        temporal_privacy_leakage(fitted, 0.5).max_tpl
    )
    where = static_tables(at)[1].iloc[0]  # how close the attack came, and where: a second, narrow table
    assert " vs " in where["pair"] and where["pair"] != "0 vs 1"  # the data's state names


def test_attack_script_reruns_the_attacks_with_their_seed(tmp_path: Path) -> None:
    at = open_page(ATTACK)
    run_attack(at, only=("binary6", "sticky3", "sticky5"), seed=5, draws=40)
    table = static_tables(at)[0]
    printed = parse_attack_output(run_script(_script(at), tmp_path, "attack"))
    assert len(printed) == 3
    for row, (_, shown) in zip(printed, table.iterrows()):
        assert fmt(row["lower"]) == shown["attack"]
        assert (row["exact"] is None) == (shown["exact"] == "")
        if row["exact"] is not None:
            assert fmt(row["exact"]) == shown["exact"]
        assert fmt(row["tpl"]) == shown["TPL"] and fmt(row["c_bound"]) == shown["[C]"]
