"""The lesson (app_pages/lesson.py) under AppTest: every step drawn, its numbers against puffer_core.

The references do not share the page's path: a(1) also from [C]'s closed form for the binary chain, the
calibration by scanning the curve for the largest (ε − a(b)) / b (group DP, b = T, a = 0, among them), and the
releases' total by Theorem 6.2 written out (a(b) once, plus k·(ε − a(b))), the naive sum k·ε and group DP T·k·ε_DP.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from puffer_core import MarkovChainPrior, binary_chain_curve, influence_curve
from puffer_core.display import fmt
from tests.app.conftest import errors, open_page, problems
from tests.app.test_app_charts import plotly_array
from tests.support.apptest import AppTest

LESSON = "app_pages/lesson.py"
HOURS = 24  # Ana's day: the lesson's chain has T = 24 entries


def _curve(p: float, q: float):  # noqa: ANN202 - an InfluenceCurve
    return influence_curve(MarkovChainPrior([[p, 1 - p], [1 - q, q]], length=HOURS))


def _best(curve, eps: float) -> tuple[int, float, float]:  # noqa: ANN001 - an InfluenceCurve
    """(b, a(b), ε_DP) of the largest per-entry budget (ε − a(b)) / b, found by scanning every b and b = T."""
    points = [(int(b), float(a)) for b, a in zip(curve.b, curve.a) if a < eps] + [(HOURS, 0.0)]
    b, a = max(points, key=lambda point: ((eps - point[1]) / point[0], -point[0]))
    return b, a, (eps - a) / b


def _next(at: AppTest) -> None:
    at.button(key="lesson_next").click().run()
    assert not problems(at) and not errors(at)


def _heading(at: AppTest) -> str:
    return at.subheader[0].value


@pytest.fixture(scope="module")
def walked() -> dict[str, object]:
    """The lesson walked from its first step to its last with p = 0.8, q = 0.7, ε = 0.6 and 6 releases."""
    at = open_page(LESSON)
    assert not problems(at) and not errors(at)
    seen: dict[str, object] = {"start": _heading(at)}
    at.slider(key="w_lesson_p").set_value(0.8).run()
    at.slider(key="w_lesson_q").set_value(0.7).run()
    seen["hour"] = at.info[0].value
    _next(at)
    seen["curve"] = (_heading(at), json.loads(at.get("plotly_chart")[0].proto.spec)["data"])
    _next(at)
    at.slider(key="w_lesson_eps").set_value(0.6).run()
    seen["target"] = (_heading(at), at.success[0].value)
    _next(at)
    at.slider(key="w_lesson_releases").set_value(6).run()
    seen["compose"] = (_heading(at), "\n".join(m.value for m in at.markdown))
    _next(at)
    seen["collapse"] = (_heading(at), [link.proto.page for link in at.get("page_link")], [b.key for b in at.button])
    at.button(key="lesson_back").click().run()
    seen["back"] = (_heading(at), at.slider(key="w_lesson_releases").value)
    assert not problems(at) and not errors(at)
    return seen


def test_the_first_step_says_a1_of_ana_s_chain(walked: dict[str, object]) -> None:
    assert walked["start"] == "1. One hour, or the whole day?"
    a1 = float(_curve(0.8, 0.7).a[0])
    assert a1 == pytest.approx(float(binary_chain_curve(0.8, 0.7, 11, HOURS).a[0]), rel=1e-9)  # [C]'s closed form
    words = str(walked["hour"])
    assert "stays home with probability 0.8 and stays out with probability 0.7" in words
    assert f"(a(1) = {fmt(a1)} nats)" in words and f"×{math.exp(a1):.3g}" in words


def test_the_second_step_draws_the_curve_of_the_chain_set_in_the_first(walked: dict[str, object]) -> None:
    heading, data = walked["curve"]
    assert heading == "2. Hide more, leak less"
    curve = _curve(0.8, 0.7)
    closed = binary_chain_curve(0.8, 0.7, (HOURS - 1) // 2, HOURS)  # exact for b ≤ (T − 1)/2 when p + q > 1
    x, y = plotly_array(data[0]["x"]), plotly_array(data[0]["y"])
    assert np.array_equal(x, np.asarray(curve.b, dtype=float)) and np.allclose(y, curve.a, rtol=1e-12, atol=0)
    assert np.allclose(y[: len(closed.a)], closed.a, rtol=1e-9, atol=1e-12)
    assert np.all(np.diff(y) <= 1e-12)  # a(b) falls as the window grows


def test_the_third_step_calibrates_the_target(walked: dict[str, object]) -> None:
    heading, words = walked["target"]
    assert heading == "3. From a target to noise"
    b, a, eps_dp = _best(_curve(0.8, 0.7), 0.6)
    assert b < HOURS  # a window short of the whole day wins at ε = 0.6 for this chain
    assert f"hide b = {b} hours around each one (a(b) = {fmt(a)} still leaks)" in words
    assert f"ε_DP = **{fmt(eps_dp)}**" in words
    group = 0.6 / HOURS
    assert f"{eps_dp / group:.3g} times the {fmt(group)}" in words


def test_the_fourth_step_composes_the_releases_by_theorem_6_2(walked: dict[str, object]) -> None:
    heading, text = walked["compose"]
    assert heading == "4. Many releases"
    _, a, eps_dp = _best(_curve(0.8, 0.7), 0.6)
    together = a + 6 * (0.6 - a)  # [C] Theorem 6.2: max a_l + Σ (ε_l − a_l), the same a for every release
    assert f"After 6 releases at ε_puffer = 0.6: **{fmt(together)}** together" in text
    assert f"against {fmt(6 * 0.6)} if each release were added up" in text
    assert f"and {fmt(HOURS * 6 * eps_dp)} if the whole day were protected as one record" in text


def test_the_last_step_links_on_and_back_keeps_the_choices(walked: dict[str, object]) -> None:
    heading, pages, buttons = walked["collapse"]
    assert heading == "5. When privacy collapses"
    assert any("classroom" in page for page in pages) and any("curves" in page for page in pages)
    assert "lesson_next" not in buttons and "lesson_back" in buttons
    assert walked["back"] == ("4. Many releases", 6)
