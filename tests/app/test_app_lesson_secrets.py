"""The lesson's secret hours (app_ui/guided/lesson_secrets.py) under AppTest: its numbers for "hours 0–5 only".

The references do not share the page's path: the library called here with the protected positions written out
(``Secrets(positions=(0, …, 5))``, not the page's time rule on an hourly grid); tests/support/brute.py's
``reference_curve`` (docs/math.md §2.1 with no pruning) on Ana's 24-hour chain; the library's exact engine
against full enumeration (``brute_influence_all``) on the same chain at T = 10; the calibration by scanning the
curve, and Theorem 6.2 written out.  Fewer secret hours never leak more: a(b) and the releases' total are at
most the every-hour figures, ε_DP at least.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from puffer_core import MarkovChainPrior, influence_curve
from puffer_core.display import fmt
from puffer_core.secrets import Secrets
from tests.app.conftest import errors, open_page, problems
from tests.app.test_app_charts import plotly_array
from tests.support.apptest import AppTest
from tests.support.brute import brute_influence_all, reference_curve

LESSON = "app_pages/lesson.py"
HOURS = 24
P, Q, EPS, RELEASES = 0.8, 0.7, 0.6, 6
P0, Q0 = 0.9, 0.8  # the sliders' defaults: a page opened from a link starts from them
EARLY = tuple(range(6))  # hours 0–5: Ana's entries 1..6 (entry t, 0-based, is the hour t:00–t:59)
NIGHT = (22, 23, 0, 1, 2, 3, 4, 5, 6)  # hours 22–6, through midnight


def _chain(length: int, p: float = P, q: float = Q) -> MarkovChainPrior:
    return MarkovChainPrior([[p, 1 - p], [1 - q, q]], length=length)


def _best(a: np.ndarray, eps: float) -> tuple[int, float, float]:
    """(b, a(b), ε_DP) of the largest per-entry budget (ε − a(b)) / b, scanning every b and b = T (a = 0)."""
    points = [(b + 1, float(x)) for b, x in enumerate(a) if x < eps] + [(HOURS, 0.0)]
    b, x = max(points, key=lambda point: ((eps - point[1]) / point[0], -point[0]))
    return b, x, (eps - x) / b


def _next(at: AppTest) -> None:
    at.button(key="lesson_next").click().run()
    assert not problems(at) and not errors(at)


def _chart(at: AppTest, trace: int = 0) -> tuple[np.ndarray, np.ndarray]:
    data = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    return plotly_array(data[trace]["x"]), plotly_array(data[trace]["y"])


def _walk(at: AppTest, secret: str | None) -> dict[str, object]:
    """Walk the lesson at p = 0.8, q = 0.7, ε = 0.6, 6 releases, with the secret hours ``secret`` (None: as is)."""
    assert not problems(at) and not errors(at)
    at.slider(key="w_lesson_p").set_value(P).run()
    at.slider(key="w_lesson_q").set_value(Q).run()
    if secret is not None:
        at.radio(key="w_lesson_where").set_value("hours").run()
        at.text_input(key="w_lesson_hours").set_value(secret).run()
    assert not problems(at) and not errors(at)
    seen: dict[str, object] = {"captions": [c.value for c in at.caption], "link": at.query_params.get("lh")}
    _next(at)
    seen["curve"] = _chart(at)
    seen["traces"] = len(json.loads(at.get("plotly_chart")[0].proto.spec)["data"])
    if secret is not None:
        seen["every curve"] = _chart(at, 1)
    _next(at)
    at.slider(key="w_lesson_eps").set_value(EPS).run()
    seen["target"] = at.success[0].value
    _next(at)
    at.slider(key="w_lesson_releases").set_value(RELEASES).run()
    seen["compose"] = "\n".join(m.value for m in at.markdown)
    return seen


@pytest.fixture(scope="module")
def early() -> dict[str, object]:
    return _walk(open_page(LESSON), "0-5")


@pytest.fixture(scope="module")
def every() -> dict[str, object]:
    return _walk(open_page(LESSON), None)


def test_the_curve_for_hours_0_to_5_is_the_library_s_and_the_reference_s(early: dict[str, object]) -> None:
    x, y = early["curve"]  # type: ignore[misc]
    library = influence_curve(_chain(HOURS), secrets=Secrets(positions=EARLY))
    assert np.array_equal(x, np.asarray(library.b, dtype=float)) and np.allclose(y, library.a, rtol=1e-12, atol=0)
    chain = _chain(HOURS)
    reference = reference_curve([(chain.transition.tolist(), list(chain.initial), HOURS)], HOURS, positions=set(EARLY))
    assert np.allclose(y, reference[: y.size], rtol=1e-12, atol=1e-12)
    assert early["traces"] == 2  # drawn over the every-hour curve, the library's without secrets
    _, every = early["every curve"]  # type: ignore[misc]
    assert np.array_equal(every, np.asarray(influence_curve(_chain(HOURS)).a, dtype=float))


def test_the_engine_equals_enumeration_on_the_same_chain_at_t_10() -> None:
    """The independent check of the engine the page calls: every sequence of a 10-hour day enumerated."""
    short = _chain(10)
    brute = brute_influence_all([(short.transition.tolist(), list(short.initial), 10)], positions=set(EARLY))
    exact = influence_curve(short, secrets=Secrets(positions=EARLY))
    assert np.allclose(exact.a[: len(brute)], brute, rtol=0, atol=1e-12)
    assert np.all(exact.a <= influence_curve(short).a + 1e-15)


def test_target_and_ledger_follow_the_hours_and_never_leak_more(early: dict[str, object],
                                                                  every: dict[str, object]) -> None:
    chosen = influence_curve(_chain(HOURS), secrets=Secrets(positions=EARLY)).a
    everything = influence_curve(_chain(HOURS)).a
    assert np.all(chosen <= everything) and np.any(chosen < everything)  # fewer positions never leak more
    b, a, eps_dp = _best(chosen, EPS)
    b_all, a_all, eps_dp_all = _best(everything, EPS)
    target = str(early["target"])
    assert f"hide b = {b} hours around each one (a(b) = {fmt(a)} still leaks)" in target
    assert f"ε_DP = **{fmt(eps_dp)}**" in target
    assert f"{eps_dp / (EPS / HOURS):.3g} times the {fmt(EPS / HOURS)}" in target  # group DP as it was
    assert "does not follow the choice of hours" in target
    assert f"With every hour secret it would be {fmt(eps_dp_all)}: the chosen hours give ×{eps_dp / eps_dp_all:.3g}"\
        in target
    assert f"ε_DP = **{fmt(eps_dp_all)}**" in str(every["target"])
    assert eps_dp >= eps_dp_all  # more budget per hour, less noise
    assert chosen[b_all - 1] <= a_all  # the every-hour release protects hours 0–5 at least as well
    together, together_all = a + RELEASES * (EPS - a), a_all + RELEASES * (EPS - a_all)  # [C] Theorem 6.2
    # each release spends its whole target on the chosen hours, so the total is nearer the naive sum k·ε: a smaller
    # a(b) counted once saves less (the total is k·ε − (k − 1)·a), never more than k·ε
    assert together_all <= together <= RELEASES * EPS
    compose = str(early["compose"])
    assert f"After {RELEASES} releases at ε_puffer = {EPS:g}: **{fmt(together)}** together" in compose
    assert f"and {fmt(HOURS * RELEASES * eps_dp)} if the whole day were protected as one record" in compose
    assert f"**{fmt(together_all)}** together" in str(every["compose"])


def test_every_hour_reproduces_the_old_numbers(every: dict[str, object]) -> None:
    x, y = every["curve"]  # type: ignore[misc]
    assert np.array_equal(y, np.asarray(influence_curve(_chain(HOURS)).a, dtype=float))  # no secrets= at all
    assert every["link"] is None  # every hour is the default: nothing in the link
    assert any("at any entry" in c for c in every["captions"])  # type: ignore[union-attr]
    assert "does not follow" not in str(every["target"]) and "With every hour secret" not in str(every["target"])
    assert every["traces"] == 1


def test_the_sentence_and_the_link_carry_the_hours(early: dict[str, object]) -> None:
    assert early["link"] == "0-5"
    assert any(c.startswith("**What is protected.**") and "at hours (00:00–05:59)" in c
               for c in early["captions"])  # type: ignore[union-attr]
    at = open_page(LESSON, {"lh": "22-6"})  # a link through midnight reopens the choice
    assert not problems(at) and not errors(at)
    assert at.radio(key="w_lesson_where").value == "hours" and at.text_input(key="w_lesson_hours").value == "22-6"
    assert any("at hours (22:00–06:59)" in c.value for c in at.caption)
    _next(at)
    _, y = _chart(at)
    chain = _chain(HOURS, P0, Q0)
    night = reference_curve([(chain.transition.tolist(), list(chain.initial), HOURS)], HOURS, positions=set(NIGHT))
    assert np.allclose(y, night[: y.size], rtol=1e-12, atol=1e-12)
    assert at.query_params["lh"] == "22-6"


@pytest.mark.parametrize(("text", "said"), [("", "the range is empty"), ("7-30", "not a range of hours 0–23"),
                                            ("0-23", "covers every hour"), ("night", "cannot read")])
def test_bad_hours_give_one_clear_message(text: str, said: str) -> None:
    at = open_page(LESSON)
    at.radio(key="w_lesson_where").set_value("hours").run()
    at.text_input(key="w_lesson_hours").set_value(text).run()
    assert not problems(at)
    assert len(errors(at)) == 1 and said in errors(at)[0] and errors(at)[0].startswith("Secret hours:")
    assert not at.info and not at.get("plotly_chart")  # nothing computed with other hours than the ones shown


def test_a_bad_link_is_said_and_the_lesson_protects_every_hour() -> None:
    at = open_page(LESSON, {"lh": "25-3"})
    assert not problems(at) and not errors(at)
    assert any("lh=25-3" in w.value and "not a range of hours" in w.value for w in at.warning)
    assert at.radio(key="w_lesson_where").value == "every"
    assert any("at any entry" in c.value for c in at.caption)
