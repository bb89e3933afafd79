"""The whole-population view's settings (docs/math.md "Whole-population secrets"): switched on or not, how θ₂ is set
(one state's stay probability changed, or the whole matrix typed), the states B counted and the number of users n.

Declared as Parameters (in every link, checked by their codecs; ``streamlit_app.py`` registers POPULATION_GROUP)
and read as one record (:class:`PopulationChoice`), which the Calibrate page holds: a link reopens the view with
the same θ₂, B and n, hence the same W.  A setting left at None takes the view's default for the chain in use
(θ₁'s stay probability ± 0.1, as many users as finish quickly).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app_ui.core.records import SettingsRecord, setting
from app_ui.core.state import ParameterGroup
from puffer_core.priors.codecs import Choice, Flag, Matrix, MatrixText, Number, Parameter

MAX_COUNTED = 300  # states B in a link


@dataclass(frozen=True)
class StatesText:
    """The states B counted, written as their numbers joined by commas (``0,2,5``; "" for none)."""

    def parse(self, text: str) -> tuple[int, ...]:
        parts = [part.strip() for part in text.split(",") if part.strip()]
        if not all(part.isdigit() for part in parts) or len(parts) > MAX_COUNTED:
            raise ValueError(f"state numbers joined by commas, e.g. 0,2 (at most {MAX_COUNTED})")
        return tuple(sorted({int(part) for part in parts}))

    def encode(self, value: Sequence[int]) -> str:
        return ",".join(str(int(s)) for s in value)


HOWS = {"stay": "Change one state's stay probability", "typed": "Type θ₂'s whole matrix"}
POP_ON = Parameter("pop_on", False, "pop", Flag(), label="Compare two population habits")
POP_HOW = Parameter("pop_how", "stay", "poph", Choice(tuple(HOWS), labels=HOWS), label="θ₂, the alternative habit")
POP_STATE = Parameter("pop_state", 0, "popst", Number(0, 9999, whole=True),
                      label="State whose stay probability changes")
POP_STAY = Parameter("pop_stay", None, "popstay", Number(0.0, 1.0), label="Its stay probability under θ₂")
POP_MATRIX = Parameter("pop_matrix", None, "popP", MatrixText(), label="θ₂'s transition matrix")
POP_COUNTED = Parameter("pop_counted", (0,), "popB", StatesText(), label="States B counted")
POP_USERS = Parameter("pop_users", None, "popn", Number(1, 10**7, whole=True), label="Number of users n")
POPULATION_PARAMETERS: tuple[Parameter, ...] = (POP_ON, POP_HOW, POP_STATE, POP_STAY, POP_MATRIX, POP_COUNTED,
                                                POP_USERS)
POPULATION_GROUP = ParameterGroup("population", POPULATION_PARAMETERS)  # registered by streamlit_app.py


@dataclass(frozen=True)
class PopulationChoice(SettingsRecord):
    """The whole-population view's settings: on or off, how θ₂ is set, B and n (None: the view's default)."""

    on: bool = setting(POP_ON)
    how: str = setting(POP_HOW)
    state: int = setting(POP_STATE)
    stay: float | None = setting(POP_STAY)  # θ₂'s stay probability of ``state`` (None: θ₁'s ± 0.1)
    matrix: Matrix | None = setting(POP_MATRIX)  # θ₂ typed in full (None: the text area's default)
    counted: tuple[int, ...] = setting(POP_COUNTED)
    users: int | None = setting(POP_USERS)  # None: the default number of users, within the work limit

    def link(self) -> tuple[Parameter, ...]:
        """In a link only while it is on (off is the default: nothing to carry); the matrix only when typed."""
        if not self.on:
            return ()
        return tuple(p for p in POPULATION_PARAMETERS
                     if not (p is POP_MATRIX and self.how != "typed") and not (p is POP_STAY and self.how != "stay"))
