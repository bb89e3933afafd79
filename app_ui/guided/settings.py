"""The guided paths' settings: the analyst's (shared with the other pages) and the lesson's (its own sliders).

The analyst's path sets the same settings the Calibrate and Plan pages use — the prior (a chain fitted to the
data, with its uncertainty), ε_puffer per release and the number of releases — so its record holds the shared
:class:`~app_ui.prior.settings.PriorChoice` and reads the shared Parameters.  The lesson's four sliders are its
own, kept for the session by their widgets and never in a link: :class:`LessonSettings` reads them, with the
defaults the sliders start from.
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
    """The lesson's four choices, as its sliders left them."""

    p: float
    q: float
    eps: float
    releases: int

    @classmethod
    def from_session(cls) -> Self:
        return cls(
            float(STAY_HOME.value()), float(STAY_OUT.value()), float(LESSON_EPS.value()), int(LESSON_RELEASES.value())
        )
