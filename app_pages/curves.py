"""Influence curves: choose a prior and watch its a(b) curve (docs/math.md §2)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import streamlit as st

from app_ui import state
from app_ui.charts import show_figure
from app_ui.curve_views import BAND, curve_view
from app_ui.matrix_editor import FITTED, is_wide, matrix_editor, preset_controls
from app_ui.priors import (
    JITTER_NOTE,
    CurrentCurve,
    Uncertainty,
    current_curve,
    fitted_data,
    parameters_of,
    uncertainty,
    uncertainty_controls,
    why_no_uncertainty,
)
from app_ui.smoothing_views import preset_smoothing_panel
from app_ui.tables import csv_download, fmt, show_table
from puffer_core.priors.kinds import BINARY, KERNEL_LABELS, PRIOR_KINDS, PROBABILITY

MAX_PINNED = 8
FIGURE3_LENGTH_SCALES: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 5.0)  # [C] Figure 3(b)

values = state.settings()

st.title("Influence curves a(b)")
st.markdown(
    "An attacker who sees everything about a user **except** a window H of b entries around one"
    " entry still learns about that entry through its correlations. **a(b)** is the most they can"
    " learn (in nats: posterior odds move by at most a factor e^a(b)) when H is chosen as well as"
    " possible; it falls as b grows and is 0 once H covers the whole sequence ([C] §6.2, docs/math.md §2)."
)

state.show_ignored_link_settings()

controls, view = st.columns([2, 3], gap="large")
below = st.container()  # a matrix with many states is edited here, across the whole page


# --------------------------------------------------------------------------- callbacks


def _pin() -> None:
    try:
        current = current_curve()
    except ValueError:
        return
    pinned = values["pinned"]
    label = current.description
    if any(p["label"] == label for p in pinned):
        return
    pinned.append({"label": label, "b": tuple(current.curve.b.tolist()), "a": tuple(current.curve.a.tolist())})
    del pinned[: max(0, len(pinned) - MAX_PINNED)]


def _clear_pinned() -> None:
    values["pinned"] = []


# --------------------------------------------------------------------------- controls


def _length_input(container: Any) -> None:
    state.number_input(
        container,
        "Sequence length T (entries per user)",
        state.SETTINGS["length"],
        step=1,
        key="w_length",
        help="a(b) = 0 once b ≥ T: the window H then covers the whole sequence (group DP).",
    )


def _probability_slider(label: str, key: str) -> None:
    values[key] = st.slider(label, PROBABILITY.low, PROBABILITY.high, float(values[key]), 0.01, key=f"w_{key}")


def _binary_controls() -> None:
    st.latex(r"P = \begin{pmatrix} p & 1-p \\ 1-q & q \end{pmatrix}")
    _probability_slider("p = Pr(stay in state 0)", "p")
    _probability_slider("q = Pr(stay in state 1)", "q")
    _length_input(st)
    values["closed_form"] = st.checkbox(
        "Overlay the closed form ([C] Ex. 3)",
        value=bool(values["closed_form"]),
        key="w_cf",
        help="Exact when p + q > 1 and T ≥ 2b + 1 (docs/math.md §2.2); drawn for b ≤ (T − 1)/2.",
    )


def _matrix_controls() -> None:
    preset_controls()
    preset_smoothing_panel(st.session_state.get("w_preset") == FITTED)
    if not is_wide(values["labels"]):
        matrix_editor()
    else:
        st.caption(f"The {len(values['labels'])}-state matrix is edited below the chart, across the page.")
        with below:
            matrix_editor()
    _length_input(st)
    with st.container(border=True):
        st.markdown("**Prior uncertainty** (docs/math.md §12)")
        data = fitted_data()
        if data is None:
            values["uncertainty"] = False
            st.caption(why_no_uncertainty())
        else:
            uncertainty_controls(st, "w_unc", f"Show the spread of the fit to {data.name}")


def _theta_controls() -> None:
    st.caption(
        "Each row is one binary chain P = [[p, 1−p], [1−q, q]] the attacker may believe. Θ's curve takes"
        " the worst prior for every window H (the sup over θ is inside the min over H, docs/math.md §2.1)."
    )
    editor_key, start = state.editor_state("theta")
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
    _length_input(st)
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
            BINARY.prior({"p": p, "q": q, "length": values["length"]})
        except ValueError as exc:
            st.error(f"Row {i + 1} (p = {p:g}, q = {q:g}): {exc}.")
            continue
        pairs.append((p, q))
    values["theta"] = tuple(pairs)
    if not pairs:
        st.error("Θ is empty: add at least one row with p and q.")


def _gaussian_controls() -> None:
    kernels = list(KERNEL_LABELS)
    values["kernel"] = st.selectbox(
        "Kernel", kernels, index=kernels.index(values["kernel"]), key="w_kernel", format_func=KERNEL_LABELS.get
    )
    state.number_input(st, "Length scale ℓ", state.SETTINGS["length_scale"], step=0.1, key="w_ell", format="%.2f")
    n = state.SETTINGS["n"].codec
    values["n"] = int(st.slider("Coordinates n", n.low, n.high, int(values["n"]), key="w_n"))
    cols = st.columns(2)
    state.number_input(cols[0], "Truncation γ", state.SETTINGS["gamma"], step=0.5, key="w_gamma")
    state.number_input(cols[1], "Secret width δ", state.SETTINGS["delta"], step=0.01, key="w_delta")
    values["overlay"] = tuple(
        st.multiselect(
            "Also draw these length scales",
            list(FIGURE3_LENGTH_SCALES),
            default=[x for x in values["overlay"] if x in FIGURE3_LENGTH_SCALES],
            key="w_overlay",
            format_func=lambda x: f"ℓ = {x:g}",
            help="Pick all five to redraw [C] Figure 3(b) (γ = 5, δ = 0.1).",
        )
    )
    st.caption(JITTER_NOTE)


# the controls of each kind of prior (its parameters are puffer_core.priors.kinds' record)
CONTROLS = {
    "binary": _binary_controls,
    "matrix": _matrix_controls,
    "theta": _theta_controls,
    "gaussian": _gaussian_controls,
}

with controls:
    kinds = list(PRIOR_KINDS)
    values["prior_kind"] = st.radio(
        "Prior (the attacker's belief about one user's sequence)",
        kinds,
        index=kinds.index(values["prior_kind"]),
        format_func=lambda kind: PRIOR_KINDS[kind].label,
        key="w_kind",
    )
    CONTROLS[values["prior_kind"]]()


# --------------------------------------------------------------------------- the curve


def _chart_controls() -> None:
    log_col, axis_col = st.columns([2, 3])
    values["log_y"] = log_col.toggle("Log scale for a(b)", value=bool(values["log_y"]), key="w_log")
    state.radio(axis_col, "b axis", state.B_AXIS, state.B_AXES, horizontal=True, key="w_b_axis", help=state.B_AXIS_HELP)
    pin_col, clear_col = st.columns(2)
    pin_col.button(
        "Pin this curve",
        icon=":material/push_pin:",
        on_click=_pin,
        key="w_pin",
        help="Keep this curve on the chart to compare it with the next one you set up.",
    )
    clear_col.button("Clear pinned", on_click=_clear_pinned, key="w_clear", disabled=not values["pinned"])


def _spread_section(spread: Uncertainty, current: CurrentCurve) -> None:
    robust = spread.spread.robust
    s1, s2, s3 = st.columns(3)
    s1.metric("a(1), robust Θ", fmt(float(robust.a[0])), help="The worst member of Θ for every window H.")
    s2.metric(
        "a(1), fitted chain",
        fmt(float(current.curve.a[0])),
        help="The fit alone, as if the prior were known exactly.",
    )
    s3.metric(
        "Spread of a(1)",
        fmt(float(spread.spread.spread()[0])),
        help="Standard deviation of a(1) over the draws.",
    )
    rows = spread.spread.rows()
    st.markdown(
        f"**The rows that drive the spread** — {spread.description()}. A row seen rarely has a wide"
        f" posterior; *{rows.columns[2]}* is how much a(1) moves when only that row is drawn."
    )
    show_table(rows, key="curve_spread_rows", height=min(38 + 35 * len(rows), 320), width="stretch")


with view:
    spread: Uncertainty | None = None
    try:
        with st.spinner("Computing a(b)…"):
            current = current_curve()
            data = fitted_data() if values["uncertainty"] else None
            if data is not None:
                spread = uncertainty(data)
    except ValueError as exc:
        st.error(f"No curve for this prior: {exc}")
        current = None
    if current is not None:
        curve = current.curve
        _chart_controls()
        kind = PRIOR_KINDS[values["prior_kind"]]
        shown = curve_view(
            kind.name,
            parameters_of(kind, values),
            tuple((p.key, values[p.key]) for p in state.VIEW_OPTIONS.get(kind.name, ())),
            tuple((p["label"], p["b"], p["a"]) for p in values["pinned"]),
            None if spread is None else spread.key,
            bool(values["log_y"]),
            values["b_axis"],
            _spread=spread,
        )
        show_figure(shown.figure, shown.notes, key="curve_chart")
        if values["prior_kind"] == "theta":
            st.caption("Dotted: the members of Θ on their own. Θ's curve is at least as high as each.")
        if spread is not None:
            st.caption(
                f"Shaded: where the middle {BAND[1] - BAND[0]:.0%} of the draws' own curves lie. The robust"
                " curve is at least as high as every member's (the worst member for each window H)."
            )

        below_one = next((int(b) for b, a in zip(curve.b, curve.a) if a <= 1.0), int(curve.length))
        m1, m2, m3 = st.columns(3)
        m1.metric("a(1)", fmt(float(curve.a[0])), help="Leakage when only the entry itself is hidden.")
        m2.metric("Smallest b with a(b) ≤ 1 nat", below_one)
        m3.metric("Sequence length T", int(curve.length), help="a(b) = 0 for b ≥ T (group DP).")

        st.markdown("**The numbers** (∞: some output possible under one secret is impossible under the other)")
        show_table(shown.table, key="curve_table", height=280, width="stretch", column_config=shown.columns)
        csv_download(shown.long, "influence_curves.csv", "Download these curves (CSV)", key="w_download_curves")
        if spread is not None:
            _spread_section(spread, current)
        st.caption(
            "The address bar holds a link to these settings (pinned curves and the prior uncertainty are not"
            " part of it)." + state.link_note()
        )

state.share((*state.prior_parameters(), state.LOG_Y, state.B_AXIS))
