"""The Streams page's settings, declared as Parameters (they travel in the link, checked by their codecs) and
read as one record (:class:`StreamSettings`).

Each :class:`~puffer_core.priors.codecs.Parameter` has its key in the settings, its default, its
short name in the link and its codec (range included), as the ledger's do; :mod:`app_ui.core.state`
registers their group (STREAM_GROUP) in ``streamlit_app.py``.
The ε schedule table is written in the link as ``1-50:0.1;51-end:0.3``.
"""

from __future__ import annotations

from dataclasses import dataclass

from app_ui.core.records import SettingsRecord, holds, setting
from app_ui.core.state import ParameterGroup
from app_ui.prior.settings import PriorChoice
from app_ui.secrets.settings import SecretsChoice
from puffer_core.priors.codecs import MAX_STATES, Choice, Flag, Matrix, MatrixText, Number, Parameter
from puffer_core.tightness.releases import stream_releases

MAX_STEP_EPS = 10.0  # the largest ε_t a schedule row may hold
MAX_SEGMENTS = 100  # rows of the schedule table a link may carry

Segment = tuple[int, str, float]  # (from step, to step or "end", ε per step), as the table edits them


@dataclass(frozen=True)
class SegmentsText:
    """Rows of the ε schedule written ``from-to:ε`` and separated by ``;`` (``to`` may be ``end``)."""

    max_rows: int = MAX_SEGMENTS

    def parse(self, text: str) -> tuple[Segment, ...]:
        rows = []
        for item in text.strip().split(";"):
            steps, _, eps = item.partition(":")
            first, _, last = steps.partition("-")
            try:
                start, value = int(first), float(eps)
            except ValueError:
                raise ValueError("rows from-to:ε separated by ;") from None
            last = last.strip() or "end"
            if last != "end" and not last.isdigit():
                raise ValueError("a row's last step is a whole number or end")
            if start < 1 or not 0.0 <= value <= MAX_STEP_EPS:
                raise ValueError(f"steps from 1 and ε from 0 to {MAX_STEP_EPS:g}")
            rows.append((start, last, value))
        if not 1 <= len(rows) <= self.max_rows:
            raise ValueError(f"1 to {self.max_rows} rows")
        return tuple(rows)

    def encode(self, value: tuple[Segment, ...]) -> str:
        return ";".join(
            f"{int(first)}-{'end' if str(last).strip() in ('', 'end', 'None') else last}:{float(eps):g}"
            for first, last, eps in value
            if first is not None and eps is not None
        )


SCHEDULE_MODES: dict[str, str] = {
    "constant": "the same ε at every step",
    "table": "ε by time steps (a table)",
    "optimal": "the most ε for the target (optimal schedule)",
}
DIRECTION_SOURCES: dict[str, str] = {
    "prior": "from the prior",
    "none": "not known to the attacker",
    "own": "my own matrix",
}
PRIOR_SOURCES: dict[str, str] = {
    "prior": "the prior of the Influence curves page",
    "strength": "a chain from one correlation knob",
}
STREAM_RELEASE_NAMES = stream_releases()

STREAM_MODE = Parameter("stream_mode", "constant", "smode", Choice(tuple(SCHEDULE_MODES)))
STREAM_EPS = Parameter("stream_eps", 0.3, "seps", Number(0.001, MAX_STEP_EPS))
STREAM_SEGMENTS = Parameter("stream_segments", None, "sched", SegmentsText())  # None: the default table
STREAM_RELEASE = Parameter("stream_mechanism", STREAM_RELEASE_NAMES[0], "srel", Choice(STREAM_RELEASE_NAMES))
STREAM_TARGET = Parameter("stream_target", 1.0, "starget", Number(0.01, 1000.0))
STREAM_UNBOUNDED = Parameter("stream_unbounded", False, "sinf", Flag())
STREAM_LOG = Parameter("stream_log", True, "slog", Flag())
STREAM_SOURCE = Parameter("stream_source", "prior", "ssrc", Choice(tuple(PRIOR_SOURCES)))
STREAM_STRENGTH = Parameter("stream_strength", 0.6, "sstr", Number(0.0, 1.0))
STREAM_STATES = Parameter("stream_states", 3, "sk", Number(2, 12, whole=True))
BACKWARD_SOURCE = Parameter("stream_backward_source", "prior", "pbsrc", Choice(tuple(DIRECTION_SOURCES)))
FORWARD_SOURCE = Parameter("stream_forward_source", "prior", "pfsrc", Choice(tuple(DIRECTION_SOURCES)))
BACKWARD = Parameter("stream_backward", None, "pb", MatrixText(MAX_STATES))  # None: not edited yet
FORWARD = Parameter("stream_forward", None, "pf", MatrixText(MAX_STATES))

STREAM_PARAMETERS: tuple[Parameter, ...] = (
    STREAM_MODE,
    STREAM_EPS,
    STREAM_SEGMENTS,
    STREAM_RELEASE,
    STREAM_TARGET,
    STREAM_UNBOUNDED,
    STREAM_LOG,
    STREAM_SOURCE,
    STREAM_STRENGTH,
    STREAM_STATES,
    BACKWARD_SOURCE,
    FORWARD_SOURCE,
    BACKWARD,
    FORWARD,
)
STREAM_GROUP = ParameterGroup("streams", STREAM_PARAMETERS)  # registered by streamlit_app.py: in every link


@dataclass(frozen=True)
class StreamSettings(SettingsRecord):
    """What the Streams page computes from, and what its link, report and script carry (the fields in the
    order of STREAM_PARAMETERS, the link's)."""

    prior: PriorChoice = holds(PriorChoice)
    secrets: SecretsChoice = holds(SecretsChoice)  # what is secret (docs/math.md §16)
    mode: str = setting(STREAM_MODE)
    eps: float = setting(STREAM_EPS)
    segments: tuple[Segment, ...] | None = setting(STREAM_SEGMENTS)
    release: str = setting(STREAM_RELEASE)
    target: float = setting(STREAM_TARGET)
    unbounded: bool = setting(STREAM_UNBOUNDED)
    log_y: bool = setting(STREAM_LOG)
    source: str = setting(STREAM_SOURCE)
    strength: float = setting(STREAM_STRENGTH)
    states: int = setting(STREAM_STATES)
    backward_source: str = setting(BACKWARD_SOURCE)
    forward_source: str = setting(FORWARD_SOURCE)
    backward: Matrix | None = setting(BACKWARD)
    forward: Matrix | None = setting(FORWARD)
