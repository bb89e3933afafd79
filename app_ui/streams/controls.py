"""The Streams page's controls: where the chain comes from, the ε_t schedule, what the attacker knows.

Every control reads and writes a Parameter of :mod:`app_ui.streams.settings` (so it travels in the
link) and returns plain values the page passes to the cached views of :mod:`app_ui.streams.views`.  The
correlation knob is shared with the Classroom (:func:`strength_slider`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from app_ui.core import state
from app_ui.core.tables import show_problems
from app_ui.prior.current import Params, prior_summary
from app_ui.prior.settings import PriorChoice
from app_ui.streams.settings import (
    BACKWARD,
    BACKWARD_SOURCE,
    DIRECTION_SOURCES,
    FORWARD,
    FORWARD_SOURCE,
    MAX_STEP_EPS,
    PRIOR_SOURCES,
    SCHEDULE_MODES,
    STREAM_EPS,
    STREAM_MODE,
    STREAM_RELEASE,
    STREAM_RELEASE_NAMES,
    STREAM_SEGMENTS,
    STREAM_SOURCE,
    STREAM_STATES,
    STREAM_STRENGTH,
)
from app_ui.streams.views import (
    DEFAULT_DIRECTIONS,
    Directions,
    Schedule,
    constant_schedule,
    parse_segments,
    schedule_of,
)
from puffer_core.priors.codecs import Parameter
from puffer_core.priors.kinds import LENGTH, MATRIX
from puffer_core.priors.strength import strength_matrix
from puffer_core.tightness.releases import RELEASES
from puffer_core.validation import merge_row_sums, row_problems

STRENGTH_HELP = (
    "0: every entry independent of the one before; 1: the chain never moves, so one entry gives all the"
    " others away. In between the chain stays put with probability s + (1 − s)/K and entries d steps"
    " apart are correlated as s^d."
)


def strength_slider(container: Any, key: str, value: float = 0.6, persist: bool = False) -> float:
    """One knob from independent (0) to fully correlated (1)."""
    extra = {"persist_state": "session"} if persist else {}
    return float(
        container.slider(
            "Correlation strength s", 0.0, 1.0, value, 0.01, key=key, help=STRENGTH_HELP, **extra
        )
    )


def strength_matrix_rows(n_states: int, strength: float) -> tuple[tuple[float, ...], ...]:
    """P(s) as the editors show it: rounded to 12 decimals (0.6, not 0.6000000000000001; rows still sum to 1)."""
    return tuple(tuple(round(float(x), 12) for x in row) for row in strength_matrix(n_states, strength))


def strength_of_stay(n_states: int, stay: float) -> float:
    """The strength s whose chain stays put with probability ``stay``: s + (1 − s)/K = stay."""
    return round((stay - 1.0 / n_states) / (1.0 - 1.0 / n_states), 12)


def prior_source() -> tuple[str, Params, str] | None:
    """(kind, parameters, description) of the chain the Streams page reads: the user's prior or the knob's chain.

    None (after an error message) when the prior cannot be used.
    """
    source = state.radio(
        st,
        "Chain",
        STREAM_SOURCE,
        PRIOR_SOURCES,
        horizontal=True,
        key="w_stream_source",
        help="A chain from one knob, as in Cao et al.'s teaching demo, or the prior set on the Influence curves page.",
    )
    if source == "prior":
        if prior_summary() is None:
            return None
        prior = PriorChoice.from_session()
        return prior.kind, prior.params, prior.record.description(prior.values)
    left, right = st.columns([3, 1])
    strength = state.put(STREAM_STRENGTH, strength_slider(left, "w_stream_strength", state.get(STREAM_STRENGTH)))
    k = int(state.number_input(right, "States K", STREAM_STATES, key="w_stream_states"))
    length = int(state.get(LENGTH))
    matrix = strength_matrix_rows(k, strength)
    initial = tuple([1.0 / k] * k) if strength >= 1.0 else None  # the identity chain has no unique π
    chain = {state.TRANSITIONS.key: matrix, state.LABELS.key: None, LENGTH.key: length, state.INITIAL.key: initial}
    params = tuple((parameter.key, chain[parameter.key]) for parameter in MATRIX.parameters)
    description = f"{k}-state chain of correlation strength s = {strength:g}, T = {length}"
    st.caption(
        f"**Chain:** {description} — on this page only; the other pages keep the prior of the Influence curves"
        " page (whose length T this chain shares)."
    )
    return MATRIX.name, params, description


def _default_segments(length: int) -> tuple[tuple[int, str, float], ...]:
    if length < 2:
        return ((1, "end", 0.3),)
    half = length // 2
    return ((1, str(half), 0.1), (half + 1, "end", 0.3))


def _reset_segments(length: int) -> None:
    state.restart_editor(STREAM_SEGMENTS, _default_segments(length))  # a new editor, started from the default


def schedule_controls(length: int, chain: bool) -> tuple[str, Schedule | None]:
    """The schedule mode and, for a constant or a table, the schedule (None while the table has problems).

    The optimal schedule is computed by the page (it needs the target); without a Markov chain it is not offered.
    """
    modes = SCHEDULE_MODES if chain else {k: v for k, v in SCHEDULE_MODES.items() if k != "optimal"}
    if state.get(STREAM_MODE) not in modes:
        state.put(STREAM_MODE, "constant")
    mode = state.radio(st, "ε_t schedule", STREAM_MODE, modes, horizontal=True, key="w_stream_mode")
    if mode == "constant":
        eps = state.number_input(
            st, "ε per step", STREAM_EPS, step=0.05, format="%.3f", key="w_stream_eps",
            help="Each step's release is ε-DP for the entry at that step.",
        )
        return mode, constant_schedule(eps, length)
    if mode == "optimal":
        st.caption(
            "The schedule with the most ε in total whose TPL stays within the planner's target below at every"
            " step (docs/math.md §10): more at the ends, whose entries have neighbours on one side only."
        )
        return mode, None
    if state.get(STREAM_SEGMENTS) is None:
        state.put(STREAM_SEGMENTS, _default_segments(length))
    st.caption(f"One row per run of steps with the same ε, covering steps 1..T = {length}; “end” means step T.")
    editor_key, start = state.editor_state(STREAM_SEGMENTS)
    base = pd.DataFrame(list(start), columns=["from step", "to step", "ε per step"])
    base = base.astype({"from step": float, "to step": object, "ε per step": float})
    edited = st.data_editor(
        base,
        key=editor_key,
        num_rows="dynamic",
        width="stretch",
        column_config={
            "from step": st.column_config.NumberColumn("from step", step=1, format="%d"),
            "to step": st.column_config.TextColumn("to step", help="A step number, or “end” for the last step."),
            "ε per step": st.column_config.NumberColumn("ε per step", format="%.4g", max_value=MAX_STEP_EPS),
        },
    )
    rows = [
        tuple(None if isinstance(v, float) and math.isnan(v) else v for v in row)
        for row in edited.itertuples(index=False, name=None)
    ]
    state.put(STREAM_SEGMENTS, tuple(rows))
    schedule, problems = parse_segments(rows, length)
    show_problems(problems)
    if problems:
        st.button("Reset the table", on_click=_reset_segments, args=(length,), key="w_stream_reset")
    return mode, schedule


def optimal_as_schedule(eps: np.ndarray, target: float) -> Schedule:
    return schedule_of(eps, f"the optimal schedule for a TPL target of ε = {target:g}")


def release_control(container: Any) -> str:
    """The release at each step (for the exact leakage)."""
    return state.radio(
        container,
        "Release at each step",
        STREAM_RELEASE,
        {name: RELEASES[name].label.removeprefix("a stream: ") for name in STREAM_RELEASE_NAMES},
        key="w_stream_mechanism",
        help="The bounds depend on ε_t only; the exact leakage depends on the release too.",
    )


def _direction(
    label: str, source: Parameter, matrix_parameter: Parameter, default: np.ndarray, key: str
) -> tuple[Any, bool]:
    """One direction's matrix (None: the prior's own) and whether it is usable."""
    choice = state.radio(st, label, source, DIRECTION_SOURCES, horizontal=True, key=f"w_{key}_source")
    k = default.shape[0]
    if choice == "prior":
        return None, True
    if choice == "none":
        return tuple(tuple([1.0 / k] * k) for _ in range(k)), True
    current = state.get(matrix_parameter)
    if current is None or len(current) != k:
        current = state.put(matrix_parameter, tuple(tuple(float(x) for x in row) for row in default))
    names = [str(i) for i in range(k)]
    edited = st.data_editor(
        pd.DataFrame(np.array(current, dtype=float), index=names, columns=names),
        key=f"w_{key}_{k}",
        column_config={n: st.column_config.NumberColumn(n, min_value=0.0, max_value=1.0, format="%.4g") for n in names},
    )
    matrix = edited.to_numpy(dtype=float, na_value=np.nan)
    problems = row_problems(matrix.tolist(), names)
    show_problems(merge_row_sums(problems))
    if problems:
        return None, False
    rows = tuple(tuple(float(x) for x in row) for row in matrix)
    state.put(matrix_parameter, rows)
    return rows, True


def direction_controls(backward: np.ndarray, forward: np.ndarray) -> Directions | None:
    """P^B and P^F as the attacker knows them (default: the prior's own); None while a matrix has problems."""
    st.caption(
        "TPL's attacker reads the past through P^B[i, j] = Pr(X_{t−1} = j | X_t = i) and the future through"
        " P^F = P. An attacker may know only one direction: a matrix whose rows are all equal says that"
        " direction tells nothing. The [C] bound and the exact leakage stay with the prior."
    )
    back, ok_back = _direction("Backward P^B", BACKWARD_SOURCE, BACKWARD, backward, "stream_backward")
    fwd, ok_fwd = _direction("Forward P^F", FORWARD_SOURCE, FORWARD, forward, "stream_forward")
    if not (ok_back and ok_fwd):
        return None
    return (back, fwd) if (back, fwd) != DEFAULT_DIRECTIONS else DEFAULT_DIRECTIONS
