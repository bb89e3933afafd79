"""Guided: a lesson — why correlated entries leak, and what to do about it (words in app_ui/guided/lesson.py)."""

from __future__ import annotations

import streamlit as st

from app_ui import page_path
from app_ui.core import inputs, state
from app_ui.core.charts import show_figure
from app_ui.core.docs import show_math
from app_ui.guided import lesson as lesson
from app_ui.guided.lesson_secrets import hours_choice, lesson_curve, protected_words
from app_ui.guided.settings import LESSON_EPS, LESSON_RELEASES, STAY_HOME, STAY_OUT, LessonSettings
from app_ui.guided.steps import step_buttons, step_header

PATH = "lesson"

st.title("A lesson in five steps")
st.markdown(
    "For a class, or for yourself: what differential privacy protects, why correlated data leaks anyway, and"
    " how Pufferfish privacy puts a number on it. Plain words first; the mathematics is one click away."
)
state.share_button()  # the link carries the secret hours
state.show_ignored_link_settings()
step = step_header(PATH, lesson.TITLES)
last = len(lesson.TITLES) - 1

hours_choice()  # what is secret (docs/math.md §16): every hour, or the hours from h₁ to h₂
inputs.stop_if_invalid()
chosen = LessonSettings.from_session()  # what the sliders of the other steps left, and the secret hours
st.caption(protected_words(chosen.secrets, chosen.eps if step in (2, 3) else None))
st.caption(lesson.PROTECTED)
p, q = chosen.p, chosen.q


def _curve(p: float, q: float):  # noqa: ANN202 - an InfluenceCurve, for the secret hours
    return lesson_curve(p, q, chosen.secrets.hours)


def _every(p: float, q: float):  # noqa: ANN202 - the every-hour curve to compare with (None: that is the choice)
    return None if chosen.secrets.hours is None else lesson_curve(p, q, None)


if step == 0:
    st.markdown(lesson.WORDS["hour"])
    cols = st.columns(2)
    p = STAY_HOME.draw(cols[0], "Ana stays home (probability)")
    q = STAY_OUT.draw(cols[1], "Ana stays out (probability)")
    st.info(lesson.hour_words(_curve(p, q), p, q), icon=":material/lightbulb:")
    show_math(1)
elif step == 1:
    st.markdown(lesson.WORDS["curve"])
    figure, notes = lesson.curve_figure(_curve(p, q), _every(p, q))
    show_figure(figure, notes, key="lesson_curve")
    show_math(2)
elif step == 2:
    st.markdown(lesson.WORDS["target"])
    eps = LESSON_EPS.draw(st, "ε_puffer of one release")
    st.success(lesson.target_words(_curve(p, q), eps, _every(p, q)))
    show_math(3)
elif step == 3:
    st.markdown(lesson.WORDS["compose"])
    releases = LESSON_RELEASES.draw(st, "Releases")
    figure, notes, words = lesson.compose_figure(_curve(p, q), chosen.eps, releases)
    st.markdown(words)
    show_figure(figure, notes, key="lesson_compose")
    show_math(4)
else:
    st.markdown(lesson.WORDS["collapse"])
    st.page_link(page_path("classroom"), label="Classroom: privacy collapse, run by run", icon=":material/co_present:")
    st.page_link(page_path("curves"), label="Influence curves: any prior, any length", icon=":material/show_chart:")
    show_math(8)

step_buttons(PATH, step, last)
state.share(chosen.secrets.link())
