"""Influence curves: choose a prior and watch its a(b) curve (docs/math.md §2)."""

from __future__ import annotations

import streamlit as st

from app_ui.core import inputs, state
from app_ui.core.charts import show_figure
from app_ui.core.tables import csv_download, fmt, show_table
from app_ui.curves.settings import PINNED, CurvesSettings
from app_ui.curves.views import BAND, curve_view
from app_ui.prior.controls import prior_controls
from app_ui.prior.current import CurrentCurve, Uncertainty, current_curve, fitted_data, uncertainty
from app_ui.prior.settings import PriorChoice
from app_ui.secrets.controls import secrets_section
from app_ui.secrets.page import curves_part
from puffer_core.priors.kinds import PRIOR_KINDS

MAX_PINNED = 8

st.title("Influence curves a(b)")
st.markdown(
    "An attacker who sees everything about a user **except** a window H of b entries around one"
    " entry still learns about that entry through its correlations. **a(b)** is the most they can"
    " learn (in nats: posterior odds move by at most a factor e^a(b)) when H is chosen as well as"
    " possible; it falls as b grows and is 0 once H covers the whole sequence ([C] §6.2, docs/math.md §2)."
)

state.show_ignored_link_settings()
state.share_button()

controls, view = st.columns([2, 3], gap="large")
below = st.container()  # a matrix with many states is edited here, across the whole page


# --------------------------------------------------------------------------- callbacks


def _pin() -> None:
    try:
        current = current_curve()
    except ValueError:
        return
    pinned = state.get(PINNED)
    label = current.description
    if any(pin[0] == label for pin in pinned):
        return
    pin = (label, tuple(current.curve.b.tolist()), tuple(current.curve.a.tolist()))
    state.put(PINNED, (*pinned, pin)[-MAX_PINNED:])


def _clear_pinned() -> None:
    state.put(PINNED, ())


# --------------------------------------------------------------------------- controls

with controls:
    kinds = {name: kind.label for name, kind in PRIOR_KINDS.items()}
    chosen = state.radio(st, state.KIND.label, state.KIND, kinds, key="w_kind")
    prior_controls(PRIOR_KINDS[chosen], below)  # drawn from the kind's record
    secrets_section(PriorChoice.from_session())  # what is secret (docs/math.md §16)

inputs.stop_if_invalid()
prior = PriorChoice.from_session()  # as the controls above left it


# --------------------------------------------------------------------------- the curve


def _chart_controls() -> None:
    log_col, axis_col = st.columns([2, 3])
    state.toggle(log_col, "Log scale for a(b)", state.LOG_Y, key="w_log")
    state.radio(axis_col, "b axis", state.B_AXIS, state.B_AXES, horizontal=True, key="w_b_axis", help=state.B_AXIS_HELP)
    pin_col, clear_col = st.columns(2)
    pin_col.button(
        "Pin this curve",
        icon=":material/push_pin:",
        on_click=_pin,
        key="w_pin",
        help="Keep this curve on the chart to compare it with the next one you set up.",
    )
    clear_col.button("Clear pinned", on_click=_clear_pinned, key="w_clear", disabled=not state.get(PINNED))


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
            data = fitted_data() if prior.uncertainty.on else None
            if data is not None:
                spread = uncertainty(data)
    except ValueError as exc:
        if prior.problems():  # already said where they are typed (under the matrix or the table)
            st.info("No curve until the prior is fixed: see the messages under its controls.", icon=":material/info:")
        else:
            st.error(f"No curve for this prior: {exc}")
        current = None
    if current is not None:
        curve = current.curve
        _chart_controls()
        settings = CurvesSettings.from_session()  # with the chart's controls just drawn
        shown = curve_view(
            settings.prior.kind,
            settings.prior.params,
            settings.prior.options,
            settings.pinned,
            None if spread is None else spread.key,
            settings.log_y,
            settings.b_axis,
            _spread=spread,
        )
        show_figure(shown.figure, shown.notes, key="curve_chart")
        for note in settings.prior.record.notes(settings.prior.values):
            st.caption(note)
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
        curves_part(settings.secrets, settings.prior, curve)  # the chosen secrets' curve, the redaction planner
        st.caption("**Share these settings** (top of the page) gives a link to them; pinned curves are not in it.")

state.share(CurvesSettings.from_session().link())
