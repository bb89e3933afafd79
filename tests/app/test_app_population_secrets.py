"""Calibrate's whole-population view (docs/math.md "Whole-population secrets") under AppTest.

W shown is the library's population_scale for the same two chains, and at least the exact W∞ of the count's two
laws computed here by enumerating every sequence of every user of a tiny chain in exact fractions (no code shared
with the library); the exported script prints the page's numbers; bad input gives one message and no traceback.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from app_ui.population.section import TYPED
from puffer_core import MarkovChainPrior, PopulationSecrets
from puffer_core.mechanisms.population import population_scale
from tests.app.conftest import capture_exports, errors, metric, open_page, problems
from tests.support.scripts import run_script

ROOT = Path(__file__).resolve().parents[2]
CALIBRATE = "app_pages/calibrate.py"
P, Q, T, USERS = "0.9", "0.7", 3, 2
STAY = "0.6"  # θ₂: state 0 stays with 0.6 instead of 0.9
TINY = {"prior": "binary", "p": P, "q": Q, "T": str(T)}
COUNTED = [1]


def exact_count_law(p: Fraction, q: Fraction, length: int, users: int, counted: set[int]) -> list[Fraction]:
    """Pr[F = f], F the number of entries in ``counted`` over ``users`` users of the binary chain (stay p in 0, q in 1)
    started in its stationary law: every sequence of every user enumerated, in exact fractions."""
    move = {(0, 0): p, (0, 1): 1 - p, (1, 0): 1 - q, (1, 1): q}
    start = {0: (1 - q) / (2 - p - q), 1: (1 - p) / (2 - p - q)}
    sequences = list(itertools.product((0, 1), repeat=length))
    law = [Fraction(0)] * (users * length + 1)
    for everyone in itertools.product(sequences, repeat=users):
        weight = Fraction(1)
        for seq in everyone:
            weight *= start[seq[0]]
            for a, b in itertools.pairwise(seq):
                weight *= move[(a, b)]
        law[sum(x in counted for seq in everyone for x in seq)] += weight
    assert sum(law) == 1
    return law


def exact_w_infinity(a: list[Fraction], b: list[Fraction]) -> int:
    """The smallest w with F_a(k) ≤ F_b(k + w) and F_b(k) ≤ F_a(k + w) for every k (F = 1 beyond the support)."""
    fa, fb = list(itertools.accumulate(a)), list(itertools.accumulate(b))
    top = len(a) - 1

    def cdf(f: list[Fraction], k: int) -> Fraction:
        return f[min(k, top)]

    return next(w for w in range(top + 1) if all(cdf(fa, k) <= cdf(fb, k + w) and cdf(fb, k) <= cdf(fa, k + w)
                                                 for k in range(top + 1)))


def ruff(text: str) -> str:
    """ruff's complaints about ``text`` as the script population.py ("" when it is clean)."""
    check = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", "--stdin-filename",
                            "population.py", "-"], input=text, capture_output=True, text=True, cwd=ROOT, timeout=60)
    return "" if check.returncode == 0 else check.stdout


def library_scale() -> int:
    first = MarkovChainPrior([[float(P), 1 - float(P)], [1 - float(Q), float(Q)]], None, T)
    second = MarkovChainPrior([[float(STAY), 1 - float(STAY)], [1 - float(Q), float(Q)]], None, T)
    return population_scale(PopulationSecrets(((first, second),)), COUNTED, [T] * USERS).w


def opened(extra: Callable | None = None, users: int = USERS, query: dict[str, str] | None = None):
    with pytest.MonkeyPatch.context() as patch:
        captured = capture_exports(patch)
        at = open_page(CALIBRATE, query or TINY)
        at.toggle(key="w_pop_on").set_value(True).run()
        at.number_input(key="w_pop_stay_0").set_value(float(STAY)).run()
        at.multiselect(key="w_pop_counted").set_value(COUNTED).run()
        at.number_input(key="w_pop_users").set_value(users).run()
        if extra is not None:
            extra(at)
    last = {built.stem: built for built in captured}  # each stem's last pair: what a click would download
    return at, {stem: b.script for stem, b in last.items()}, {stem: b.report for stem, b in last.items()}


def test_w_is_the_library_s_and_at_least_the_exact_w_infinity() -> None:
    at, _, _ = opened()
    assert not problems(at) and not errors(at)
    shown = int(metric(at, "W (entries)"))
    assert shown == library_scale()
    law_1 = exact_count_law(Fraction(P), Fraction(Q), T, USERS, set(COUNTED))
    law_2 = exact_count_law(Fraction(STAY), Fraction(Q), T, USERS, set(COUNTED))
    exact = exact_w_infinity(law_1, law_2)
    assert 0 < exact <= shown
    assert shown == exact  # no near-ties in this case: the certified margin costs nothing
    mean_1 = sum((f * pr for f, pr in enumerate(law_1)), Fraction(0))
    mean_2 = sum((f * pr for f, pr in enumerate(law_2)), Fraction(0))
    assert shown >= abs(mean_1 - mean_2)  # W∞ ≥ W₁ ≥ the gap between the means
    assert float(metric(at, "Mean count under θ₁")) == float(f"{float(mean_1):.4g}")
    eps = float(at.number_input(key="w_eps").value)
    assert float(metric(at, "Laplace scale W/ε")) == float(f"{shown / eps:.4g}")
    assert int(metric(at, "Largest possible count")) == USERS * T


def test_the_same_habit_twice_needs_no_noise_and_says_so() -> None:
    at, _, _ = opened(lambda at: at.number_input(key="w_pop_stay_0").set_value(float(P)).run())
    assert not problems(at) and not errors(at)
    assert metric(at, "W (entries)") == "0"
    assert any("tells them apart not at all" in i.value for i in at.info)


def test_the_script_prints_the_page_s_numbers(tmp_path: Path) -> None:
    at, scripts, _ = opened()
    assert not problems(at) and not errors(at)
    printed = run_script(scripts["population"], tmp_path, "population.py")
    for label in ("W (entries)", "Laplace scale W/ε", "Mean count under θ₁", "Mean count under θ₂",
                  "Largest possible count", "Per-entry Laplace scale 1/ε_DP"):
        found = re.search(rf"^{re.escape(label)} = (.*)$", printed, re.M)
        assert found is not None and found.group(1) == metric(at, label), (label, printed)
    assert at.success[-1].value in printed  # the library's sentence
    assert not ruff(scripts["population"])  # what a user downloads is clean Python, as the repository is


def _typed_not_stochastic(at) -> None:
    at.radio(key="w_pop_how").set_value(TYPED).run()
    at.text_area(key="w_pop_matrix").input("0.5 0.6\n0.3 0.7").run()


def _nothing_counted(at) -> None:
    at.multiselect(key="w_pop_counted").set_value([]).run()


def test_bad_input_gives_one_clear_message() -> None:
    for extra, words in ((_typed_not_stochastic, "not a transition matrix"), (_nothing_counted, "at least one state")):
        at, _, _ = opened(extra)
        assert not problems(at)
        assert len(errors(at)) == 1 and words in errors(at)[0], errors(at)
    at, _, _ = opened(users=10**7)
    assert not problems(at)
    assert len(errors(at)) == 1 and "would take about" in errors(at)[0] and "limit" in errors(at)[0], errors(at)


def test_a_fitted_labelled_chain_gives_a_clean_script_and_a_report(tmp_path: Path) -> None:
    """The chain fitted to the built-in check-ins (12 labelled states): the view computes at its defaults, the script
    is ruff-clean and prints the page's W, and the report carries the sentence."""
    from tests.support.exported import link_query, prior_cases

    kind, values = prior_cases()["fitted"]
    at, scripts, reports = opened(query=link_query(kind, values), users=20)
    assert not problems(at) and not errors(at)
    assert not ruff(scripts["population"])  # the prior's rows and labels too are wrapped at 120 characters
    printed = run_script(scripts["population"], tmp_path, "population.py")
    assert f"W (entries) = {metric(at, 'W (entries)')}" in printed
    assert "whole-population secrets" in reports["population"] and "rather than θ₂" in reports["population"]


def test_a_set_theta_is_told_to_choose_one_chain() -> None:
    from tests.support.exported import link_query, prior_cases

    kind, values = prior_cases()["theta"]
    at = open_page(CALIBRATE, link_query(kind, values))
    at.toggle(key="w_pop_on").set_value(True).run()
    assert not problems(at) and not errors(at)
    assert any("compare two Markov chains" in i.value for i in at.info)


def _link(at) -> dict[str, str]:
    """The page's link as its Share button gives it (the address bar's query)."""
    return {name: at.query_params[name][0] if isinstance(at.query_params[name], list) else at.query_params[name]
            for name in at.query_params}


def _typed_matrix(at) -> None:
    at.radio(key="w_pop_how").set_value(TYPED).run()
    at.text_area(key="w_pop_matrix").input("0.55 0.45\n0.123456789 0.876543211").run()
    at.multiselect(key="w_pop_counted").set_value([0, 1]).run()
    at.number_input(key="w_pop_users").set_value(3).run()


def test_a_link_reopens_the_view_with_the_same_w() -> None:
    """The share link carries the switch, θ₂ (the changed state's stay probability, or the typed matrix), B and n:
    opened in a new session, with no control touched, the view shows the same W and the same θ₂."""
    for extra in (None, _typed_matrix):
        at, _, _ = opened(extra)
        assert not problems(at) and not errors(at)
        query = _link(at)
        assert query.get("pop") == "1", query
        again = open_page(CALIBRATE, query)
        assert not problems(again) and not errors(again)
        assert again.toggle(key="w_pop_on").value
        for label in ("W (entries)", "Mean count under θ₂", "Largest possible count"):
            assert metric(again, label) == metric(at, label), label
        if extra is None:
            assert metric(at, "W (entries)") == str(library_scale())
            assert again.number_input(key="w_pop_stay_0").value == float(STAY)
        else:
            assert again.radio(key="w_pop_how").value == TYPED
            assert again.multiselect(key="w_pop_counted").value == [0, 1]
            assert int(metric(again, "Largest possible count")) == 3 * T
            assert "0.123456789" in str(again.text_area(key="w_pop_matrix").value)


def test_calibrate_s_report_holds_the_view_when_it_is_on() -> None:
    """Calibrate's main report carries the view's section (its sentence and W) when the view is on, and not when
    it is off."""
    import html

    at, _, reports = opened()
    assert not problems(at) and not errors(at)
    text = html.unescape(reports["calibrate"])
    assert "Whole-population secrets: which habit generated the data" in text
    assert at.success[-1].value in text  # the library's sentence, as the page shows it
    assert f"W (entries) = {library_scale()}" in text
    off, _, reports = opened(lambda at: at.toggle(key="w_pop_on").set_value(False).run())
    assert not problems(off)
    assert "Whole-population secrets" not in html.unescape(reports["calibrate"])


def test_the_exported_population_case_runs_and_prints_the_library_s_w(tmp_path: Path) -> None:
    """The case tests/support/exported.py hands to .ci/installed.py: Calibrate offers the view's script beside its own
    (both kept, the page's own last, as page_script returns it); the view's script prints the W that
    population_scale gives for the fitted chain against θ₂ built here from the view's rule (state 0's stay
    probability 0.1 higher, the rest of its row in proportion)."""
    import numpy as np

    from tests.support.exported import POPULATION_CASES, link_query, page_script, page_scripts, prior_cases

    kind, values = prior_cases()["fitted"]
    query = link_query(kind, values) | POPULATION_CASES["population"]
    offered = page_scripts("calibrate", query)
    assert [stem for stem, _ in offered] == ["population", "calibrate"]
    assert page_script("calibrate", query) == offered[-1][1]
    first = np.array(values["matrix"], dtype=float)
    second = first.copy()
    stay = round(first[0, 0] + 0.1 if first[0, 0] <= 0.85 else first[0, 0] - 0.1, 2)
    second[0, 1:] *= (1 - stay) / first[0, 1:].sum()
    second[0, 0] = stay
    length = values["length"]
    priors = [MarkovChainPrior(m, None, length, labels=values["labels"]) for m in (first, second)]
    expected = population_scale(PopulationSecrets((tuple(priors),)), [0, 1], [length] * 20).w  # type: ignore[arg-type]
    printed = run_script(offered[0][1], tmp_path, "population.py")
    assert f"W (entries) = {expected}\n" in printed, printed
    assert f"Largest possible count = {20 * length}\n" in printed
