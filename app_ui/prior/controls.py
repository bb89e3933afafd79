"""The controls of a prior kind on the Influence curves page, drawn from its record's parameters.

Every parameter of a :class:`~puffer_core.priors.kinds.PriorKind` carries its codec (what it is
and its range) and hints (label, help, step, slider); :func:`prior_controls` loops over them and
draws the control each codec calls for — a slider or a number box for a number, a select box for
a choice, the matrix editor for a transition matrix (with its labels and initial distribution,
the parameters drawn ``with_`` it), a table of pairs for a set Θ, a checkbox or a multiselect for
a view option — so that a new kind of prior needs no code here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from app_ui.core import state
from app_ui.prior.current import fitted_data, uncertainty_controls, why_no_uncertainty
from app_ui.prior.matrix_editor import is_wide, matrix_editor, preset_controls
from puffer_core.priors.codecs import Choice, Flag, MatrixText, Number, PairsText, Parameter, PositiveNumbers
from puffer_core.priors.kinds import BINARY, LENGTH, PriorKind


def key_of(parameter: Parameter) -> str:
    """The widget key of a parameter's control."""
    return f"w_{parameter.key}"


def _number(parameter: Parameter, below: Any) -> None:
    codec = parameter.codec
    if parameter.slider:
        cast = int if codec.whole else float
        step = parameter.step if parameter.step is not None else (1 if codec.whole else None)
        state.put(
            parameter,
            st.slider(
                parameter.label,
                cast(codec.low),
                cast(codec.high),
                cast(state.get(parameter)),
                step,
                key=key_of(parameter),
                help=parameter.help or None,
            ),
        )
        return
    state.number_input(st, parameter.label, parameter, key=key_of(parameter))


def _choice(parameter: Parameter, below: Any) -> None:
    codec = parameter.codec
    options = list(codec.options)
    chosen = st.selectbox(
        parameter.label,
        options,
        index=options.index(state.get(parameter)),
        key=key_of(parameter),
        format_func=codec.label,
        help=parameter.help or None,
    )
    state.put(parameter, chosen)


def _matrix(parameter: Parameter, below: Any) -> None:
    preset_controls(below)
    labels = state.get(state.LABELS)
    if not is_wide(labels):
        matrix_editor()
    else:
        st.caption(f"The {len(labels)}-state matrix is shown below the chart, across the page.")
        with below:
            matrix_editor()
    with st.container(border=True):
        st.markdown("**Prior uncertainty** (docs/math.md §12)")
        data = fitted_data()
        if data is None:
            state.put(state.UNCERTAINTY, False)
            st.caption(why_no_uncertainty())
        else:
            uncertainty_controls(st, "w_unc", f"Show the spread of the fit to {data.description}")


def _pairs(parameter: Parameter, below: Any) -> None:
    """Pairs (p, q) in a table: each row one binary chain; rows with a problem are named and left out."""
    st.caption(parameter.help)
    editor_key, start = state.editor_state(parameter)
    base = pd.DataFrame(list(start), columns=["p", "q"], dtype=float)
    edited = st.data_editor(
        base,
        key=editor_key,
        num_rows="dynamic",
        hide_index=True,
        column_config={  # no range: a value out of [0, 1] is reported below, not clipped
            "p": st.column_config.NumberColumn("p", format="%.3g", help="Pr(stay in state 0)"),
            "q": st.column_config.NumberColumn("q", format="%.3g", help="Pr(stay in state 1)"),
        },
        width="stretch",
    )
    pairs = []
    for i, (p, q) in enumerate(edited[["p", "q"]].itertuples(index=False, name=None)):
        try:
            p, q = float(p), float(q)
        except (TypeError, ValueError):
            p = q = math.nan
        if math.isnan(p) or math.isnan(q):
            st.error(f"Row {i + 1}: fill in both p and q.")
            continue
        outside = [f"{name} = {v:g}" for name, v in (("p", p), ("q", q)) if not 0 <= v <= 1]
        if outside:
            st.error(f"Row {i + 1}: {' and '.join(outside)} is not a probability; p and q must be between 0 and 1.")
            continue
        try:
            BINARY.prior({"p": p, "q": q, LENGTH.key: state.get(LENGTH)})
        except ValueError as exc:
            st.error(f"Row {i + 1} (p = {p:g}, q = {q:g}): {exc}.")
            continue
        pairs.append((p, q))
    state.put(parameter, tuple(pairs))
    if not pairs:
        st.error("Θ is empty: add at least one row with p and q.")


def _flag(parameter: Parameter, below: Any) -> None:
    on = bool(state.get(parameter))
    state.put(parameter, st.checkbox(parameter.label, value=on, key=key_of(parameter), help=parameter.help or None))


def _numbers(parameter: Parameter, below: Any) -> None:
    options = list(parameter.codec.options)
    chosen = st.multiselect(
        parameter.label,
        options,
        default=[x for x in state.get(parameter) if x in options],
        key=key_of(parameter),
        format_func=lambda x: f"{x:g}",
        help=parameter.help or None,
    )
    state.put(parameter, tuple(chosen))


# the control each kind of codec calls for
CONTROLS: dict[type, Callable[[Parameter, Any], None]] = {
    Number: _number,
    Choice: _choice,
    MatrixText: _matrix,
    PairsText: _pairs,
    Flag: _flag,
    PositiveNumbers: _numbers,
}


def prior_controls(kind: PriorKind, below: Any) -> None:
    """The controls of every parameter of ``kind`` and of its view options; ``below`` is a full-width container
    under the chart (a large matrix and the data picker are laid out there)."""
    if kind.formula:
        st.latex(kind.formula)
    for parameter in (*kind.parameters, *kind.options):
        if parameter.with_ is None:
            CONTROLS[type(parameter.codec)](parameter, below)
    if kind.note:
        st.caption(kind.note)
