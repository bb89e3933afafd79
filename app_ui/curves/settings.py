"""The Influence curves page's settings: the prior (shared), the chart's scales and the curves pinned to it.

The pinned curves are kept for the session only (never in a link): each is ``(label, b, a)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from app_ui.core.records import SettingsRecord, holds, setting
from app_ui.core.state import B_AXIS, LOG_Y, ParameterGroup
from app_ui.prior.settings import PriorChoice
from app_ui.secrets.settings import RedactionChoice, SecretsChoice
from puffer_core.priors.codecs import Parameter

Pin = tuple[str, tuple[float, ...], tuple[float, ...]]  # (label, b, a) of a pinned curve
PINNED = Parameter("pinned", (), label="Curves pinned to the chart")  # a tuple of Pin; never in a link
CURVES_GROUP = ParameterGroup("curves", (PINNED,))  # registered by streamlit_app.py


@dataclass(frozen=True)
class CurvesSettings(SettingsRecord):
    """What the Influence curves page draws: the prior in use, a(b) on a log scale or not, the b axis, the pins."""

    prior: PriorChoice = holds(PriorChoice)
    secrets: SecretsChoice = holds(SecretsChoice)
    redaction: RedactionChoice = holds(RedactionChoice)  # the redaction planner's entry and ε (docs/math.md §16)
    log_y: bool = setting(LOG_Y)
    b_axis: str = setting(B_AXIS)
    pinned: tuple[Pin, ...] = setting(PINNED)
