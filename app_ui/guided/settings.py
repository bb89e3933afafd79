"""The guided paths' settings: the analyst's (shared with the other pages) and the lesson's (its own sliders).

The analyst's path sets the same settings the Calibrate and Plan pages use — the prior (a chain fitted to the
data, with its uncertainty), ε_puffer per release and the number of releases — so its record holds the shared
:class:`~app_ui.prior.settings.PriorChoice` and reads the shared Parameters.  The lesson's four sliders are its
own, kept for the session by their widgets and never in a link: :class:`LessonSettings` reads them, with the
defaults the sliders start from.  The lesson's secret hours (docs/math.md §16: every hour, or only the hours from
h₁ to h₂) are a setting in its link, held by :class:`LessonSecrets`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

import streamlit as st

from app_ui.core.records import SettingsRecord, holds, setting
from app_ui.core.state import EPS_PUFFER, PLAN_RELEASES, ParameterGroup
from app_ui.prior.settings import PriorChoice
from app_ui.secrets.settings import SecretsChoice
from puffer_core.priors.codecs import Choice, Number, Parameter

# the trial run's settings (step 5) and the step the path is at: in the path's link, so that it reopens as it was
TRIAL_QUERIES = ("topk", "histogram")
GUIDE_QUERY = Parameter("guide_query", "topk", "gq", Choice(TRIAL_QUERIES), label="What you publish")
GUIDE_K = Parameter("guide_k", 3, "gk", Number(1, 50, whole=True), label="k (top states per group)", step=1)
GUIDE_TRIALS = Parameter("guide_trials", 100, "gtrials", Number(10, 2000, whole=True), label="Trials", step=50)
GUIDE_SEED = Parameter("guide_seed", 0, "gseed", Number(0, 2**31 - 1, whole=True), label="Seed", step=1)
GUIDE_STEP = Parameter("guide_step", 0, "gstep", Number(0, 20, whole=True), label="The guided path's step")
GUIDE_GROUP = ParameterGroup("guided", (GUIDE_QUERY, GUIDE_K, GUIDE_TRIALS, GUIDE_SEED, GUIDE_STEP))

Span = tuple[int, int]  # the lesson's secret hours: the first and the last (through midnight when first > last)


def hour_span(text: str) -> Span:
    """"22-6" → (22, 6): the first and the last secret hour of Ana's day, 0–23 (ValueError saying what is wrong)."""
    written = text.strip().replace("–", "-")
    if not written:
        raise ValueError("no hours given (the range is empty): write the first and the last secret hour, 0–23,"
                         " e.g. 0-5, or 22-6 for the night through midnight")
    first, dash, last = written.partition("-")
    try:
        span = int(first), int(last)
    except ValueError:
        raise ValueError(f"cannot read {written!r}: write the first and the last secret hour as two whole numbers"
                         " 0–23 joined by a dash, e.g. 0-5 or 22-6") from None
    if not dash or not all(0 <= h <= 23 for h in span):
        raise ValueError(f"{written!r} is not a range of hours 0–23: write e.g. 0-5, or 22-6 through midnight")
    if (span[1] - span[0]) % 24 == 23:
        raise ValueError(f"{written!r} covers every hour of the day: choose *Every hour* for that")
    return span


def span_text(span: Span) -> str:
    return f"{span[0]}-{span[1]}"


@dataclass(frozen=True)
class HoursText:
    """The lesson's secret hours in a link: ``0-5``, ``22-6``."""

    def parse(self, text: str) -> Span:
        return hour_span(text)

    def encode(self, value: Span) -> str:
        return span_text(value)


LESSON_HOURS = Parameter("lesson_hours", None, "lh", HoursText(), label="The lesson's secret hours")  # None: every hour
LESSON_GROUP = ParameterGroup("lesson", (LESSON_HOURS,))  # registered by streamlit_app.py: in every link


@dataclass(frozen=True)
class AnalystSettings(SettingsRecord):
    """What the analyst's path computes from and its link, report and script carry: the prior in use, the
    target ε_puffer, the releases planned, the trial run's query, k, trials and seed, and the step shown."""

    prior: PriorChoice = holds(PriorChoice)
    secrets: SecretsChoice = holds(SecretsChoice)  # what is secret (docs/math.md §16), link key sec
    eps_puffer: float = setting(EPS_PUFFER)
    plan_releases: int = setting(PLAN_RELEASES)
    query: str = setting(GUIDE_QUERY)
    k: int = setting(GUIDE_K)
    trials: int = setting(GUIDE_TRIALS)
    seed: int = setting(GUIDE_SEED)
    step: int = setting(GUIDE_STEP)


@dataclass(frozen=True)
class LessonSecrets(SettingsRecord):
    """What the lesson's numbers protect (docs/math.md §16): home against out at every hour (``hours`` None) or at
    the hours ``hours`` = (first, last) only; the lesson's link carries it."""

    hours: Span | None = setting(LESSON_HOURS)


@dataclass(frozen=True)
class Slider:
    """One of the lesson's sliders: its widget key, range, default and step."""

    key: str
    low: float
    high: float
    default: float
    step: float

    def value(self) -> Any:
        """The slider's value in this session (its default until it is moved)."""
        return st.session_state.get(self.key, self.default)

    def draw(self, container: Any, label: str) -> Any:
        """The slider, kept for the session; its value."""
        return container.slider(
            label, self.low, self.high, self.default, self.step, key=self.key, persist_state="session"
        )


# the lesson's sliders: Ana stays home with probability p, stays out with q; ε_puffer of one release; releases
STAY_HOME = Slider("w_lesson_p", 0.5, 0.99, 0.9, 0.01)
STAY_OUT = Slider("w_lesson_q", 0.5, 0.99, 0.8, 0.01)
LESSON_EPS = Slider("w_lesson_eps", 0.1, 5.0, 1.0, 0.1)
LESSON_RELEASES = Slider("w_lesson_releases", 1, 36, 12, 1)


@dataclass(frozen=True)
class LessonSettings:
    """The lesson's choices: its four sliders as they left them, and the secret hours."""

    p: float
    q: float
    eps: float
    releases: int
    secrets: LessonSecrets

    @classmethod
    def from_session(cls) -> Self:
        return cls(
            float(STAY_HOME.value()), float(STAY_OUT.value()), float(LESSON_EPS.value()), int(LESSON_RELEASES.value()),
            LessonSecrets.from_session(),
        )
