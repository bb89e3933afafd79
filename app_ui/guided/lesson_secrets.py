"""What is secret in the lesson (docs/math.md §16): every hour of Ana's day, or only the hours from h₁ to h₂.

Ana's chain has two states, home and out, so the only pair of values is home against out: what the lesson's user
chooses is *when* — the protected positions.  Entry t (0-based) is the hour t:00–t:59 of her day, so "the hours
from 22 to 6" protects entries 22, 23 and 0..6 (through midnight).  The choice is the library's
:class:`~puffer_core.secrets.Secrets` with a :class:`~puffer_core.secrets.TimeRule` put on the day's hourly grid
(:meth:`~puffer_core.secrets.Secrets.on_grid`), its sentence is the library's, and the lesson's a(b) curve — hence
its calibration and its ledger — is :func:`~puffer_core.influence_curve` for it.  Group DP protects the whole day
as one record whatever hours are secret: it does not follow the choice.

The choice is a setting (:data:`~app_ui.guided.settings.LESSON_HOURS`, link key ``lh``) held by the lesson's
record :class:`~app_ui.guided.settings.LessonSecrets`; the lesson's link carries it.
"""

from __future__ import annotations

import streamlit as st

from app_ui.core import inputs, state
from app_ui.guided.settings import LESSON_HOURS, LessonSecrets, Span, hour_span, span_text
from puffer_core import InfluenceCurve, MarkovChainPrior, influence_curve
from puffer_core.secrets import ALL_SECRETS, Secrets, TimeRule

HOURS = 24  # Ana's day (app_ui.guided.lesson.HOURS): entry t is the hour t
LABELS = ("home", "out")
DAY_START = "2024-01-01 00:00"  # entry 1 is midnight, one entry an hour: the grid the hours are read on
NAME = "Secret hours"
KEY = "lesson_hours"  # the choice's name among the invalid inputs
WHERE = {"every": "Every hour", "hours": "Only the hours from … to …"}
EXAMPLE = "22-6"  # what the box starts from: the night, through midnight


def lesson_secrets(span: Span | None) -> Secrets:
    """The lesson's secrets: every pair at every hour (``None``), or home against out at the hours of ``span``
    (first, last; through midnight when first > last), as protected positions on the day's hourly grid."""
    if span is None:
        return ALL_SECRETS
    first, last = span
    hours = list(range(first, last + 1)) if first <= last else [*range(first, HOURS), *range(0, last + 1)]
    return Secrets(rule=TimeRule(hours=tuple(hours))).on_grid(DAY_START, "1h", HOURS)


@st.cache_data(show_spinner=False, max_entries=64)
def lesson_curve(p: float, q: float, span: Span | None) -> InfluenceCurve:
    """Ana's a(b) curve (T = 24) for the secret hours ``span`` (None: every hour)."""
    prior = MarkovChainPrior([[p, 1 - p], [1 - q, q]], length=HOURS)
    return influence_curve(prior, secrets=lesson_secrets(span))


def _start_widgets(span: Span | None) -> None:
    """The controls start from the setting (a link) the first time they are drawn, and keep their values after."""
    st.session_state.setdefault("w_lesson_where", "every" if span is None else "hours")
    st.session_state.setdefault("w_lesson_hours", EXAMPLE if span is None else span_text(span))


def hours_choice() -> LessonSecrets | None:
    """The choice of secret hours, drawn in an expander; the lesson's record of it, or None after an
    ``st.error`` (recorded, so that :func:`~app_ui.core.inputs.stop_if_invalid` computes nothing)."""
    _start_widgets(state.get(LESSON_HOURS))
    with st.expander("Which hours are secret", icon=":material/lock:"):
        st.markdown("Ana is home or out: that is the only pair. Choose when it is secret.")
        where = st.radio("Secret", list(WHERE), format_func=WHERE.get, key="w_lesson_where", horizontal=True,
                         persist_state="session")
        text = ""
        if where == "hours":
            text = st.text_input("Secret hours, from-to (0–23; 22-6 runs through midnight)", key="w_lesson_hours",
                                 persist_state="session")
    try:
        span = hour_span(text) if where == "hours" else None
    except ValueError as exc:
        st.error(f"{NAME}: {exc}. Nothing below is computed until it is fixed (open *Which hours are secret*).",
                 icon=":material/error:")
        inputs.run_state()["invalid"][KEY] = NAME
        return None
    inputs.run_state()["invalid"].pop(KEY, None)
    state.put(LESSON_HOURS, span)
    return LessonSecrets.from_session()


def protected_words(chosen: LessonSecrets, eps: float | None) -> str:
    """What the lesson's numbers protect, in the library's sentence (at ``eps`` when a calibration is shown)."""
    words = lesson_secrets(chosen.hours).sentence(LABELS, eps, "Ana's hours follow this chain")
    return f"**What is protected.** {words}"

