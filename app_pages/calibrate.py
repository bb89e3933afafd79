"""Calibrate: target ε_puffer → per-entry ε_DP through the a(b) curve, and back (docs/math.md §3)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_ui import state
from app_ui.charts import (
    GREY,
    PALETTE,
    ZOOM_FLOOR,
    Trace,
    csv_download,
    curve_trace,
    fmt,
    line_figure,
    show_figure,
    show_table,
    zoom_limit,
)
from app_ui.priors import (
    JITTER_NOTE,
    Uncertainty,
    describe_prior,
    fitted_data,
    prior_source,
    prior_summary,
    uncertainty,
    uncertainty_controls,
)
from app_ui.report import Section, html_report, offer_exports
from puffer_core import (
    Calibration,
    InfluenceCurve,
    calibrate,
    calibration_objective,
    certify,
    certify_objective,
    group_dp,
    group_dp_cumulative,
)
from puffer_core.prior_kinds import PRIOR_KINDS

REPORT_ROWS = 1000  # rows of the curve table in the report (the CSV and the script have every b)

values = state.settings()

st.title("Calibrate")
st.markdown(
    "A mechanism that is ε_DP-differentially private **per entry** is ε_puffer-Pufferfish private"
    " for any curve point with a(b) < ε_puffer and ε_DP ≤ (ε_puffer − a(b)) / b ([C] Theorem"
    ' "Translation", docs/math.md §3). The best point gives the most budget, hence the least noise;'
    " group DP over the whole sequence (b = T, a = 0) is always a candidate."
)

state.show_ignored_link_settings()


@dataclass(frozen=True)
class Numbers:
    """What the page shows, for one curve: calibration at ε_puffer and certification of ε_DP."""

    curve: InfluenceCurve
    eps: float
    eps_dp: float
    cal: Calibration
    group: Calibration
    cert: Calibration
    group_eps: float

    @property
    def ratio(self) -> float:
        return self.cal.eps_dp / self.group.eps_dp


def numbers(curve: InfluenceCurve, eps: float, eps_dp: float) -> Numbers:
    group_eps = float(group_dp_cumulative(curve.length, [eps_dp])[-1])  # T·ε_DP: group privacy (docs/math.md §1)
    return Numbers(
        curve, eps, eps_dp, calibrate(curve, eps), group_dp(curve, eps), certify(curve, eps_dp), group_eps
    )


def script(values: dict[str, Any], eps: float, eps_dp: float, spread: Uncertainty | None) -> str:
    """A Python program recomputing this page's numbers with puffer_core and printing them as ``name = value``."""
    names, prior_code = prior_source(values, spread.spread.priors if spread is not None else None)
    what = spread.description() if spread is not None else describe_prior(values)
    return f'''"""Pufferfish Lab — Calibrate, recomputed with puffer_core (docs/math.md §3).

Prior: {what}.
Run it with `python calibrate.py` where puffer_core is installed; it prints the numbers the page showed,
one `name = value` per line (floats in full precision).
"""

from puffer_core import {names}, calibrate, certify, group_dp, group_dp_cumulative, influence_curve

{prior_code}
EPS_PUFFER = {float(eps)!r}  # the Pufferfish guarantee wanted
EPS_DP = {float(eps_dp)!r}  # the per-entry ε_DP of a mechanism to certify

curve = influence_curve(prior)  # exact a(b), b = 1..T (docs/math.md §2)
cal = calibrate(curve, EPS_PUFFER)  # ε_puffer → the largest per-entry ε_DP
group = group_dp(curve, EPS_PUFFER)  # group DP over the whole sequence: ε_puffer / T
cert = certify(curve, EPS_DP)  # ε_DP → the smallest guaranteed ε_puffer
group_eps = float(group_dp_cumulative(curve.length, [EPS_DP])[-1])  # T·ε_DP

print(f"sequence_length = {{curve.length}}")
print(f"a_1 = {{float(curve.a[0])!r}}")
print(f"optimal_b = {{cal.b}}")
print(f"a_at_optimal_b = {{cal.a!r}}")
print(f"eps_dp = {{cal.eps_dp!r}}")
print(f"group_dp_eps_dp = {{group.eps_dp!r}}")
print(f"budget_vs_group_dp = {{cal.eps_dp / group.eps_dp!r}}")
print(f"falls_back_to_group_dp = {{cal.group_dp}}")
print(f"certified_eps_puffer = {{cert.eps_puffer!r}}")
print(f"certified_b = {{cert.b}}")
print(f"certified_a = {{cert.a!r}}")
print(f"group_dp_eps_puffer = {{group_eps!r}}")
'''


def _zoom(curve: InfluenceCurve, *keep: int) -> float | None:
    """Where the b axis ends when zoomed: past the curve's signal and every b in ``keep``."""
    if values["b_axis"] != "zoom":
        return None
    return zoom_limit([curve_trace(curve, "a(b)")], also=[float(b) for b in keep])


def _figure(
    traces: list[Trace], y_title: str, y_name: str, zoom: float | None, length: int
) -> tuple[go.Figure, list[str]]:
    fig, notes = line_figure(
        traces,
        x_title="b — entries in the high-influence window H",
        y_title=y_title,
        y_name=y_name,
        log_x=values["b_axis"] == "log",
        integer_x=True,
        x_max=zoom,
    )
    if zoom is not None:
        notes.append(
            f"Showing b ≤ {zoom:,.0f} of {length:,}: beyond it a(b) is below 1% of a(1) and below"
            f" {ZOOM_FLOOR:g} nats. Choose *All b* or *Log b* to see the rest, up to b = T (group DP)."
        )
    return fig, notes


def _forward(n: Numbers) -> tuple[go.Figure, list[str], pd.DataFrame]:
    """The calibration chart (allowed ε_DP at each b), its notes, and the table of the curve."""
    curve, cal, group = n.curve, n.cal, n.group
    b_usable, allowed = calibration_objective(curve, n.eps)
    traces = [
        Trace("(ε_puffer − a(b)) / b", b_usable.astype(float), allowed),
        Trace("optimum b*", np.array([cal.b], float), np.array([cal.eps_dp]), symbol="star", color=PALETTE[1]),
        Trace("group DP (b = T)", np.array([group.b], float), np.array([group.eps_dp]), symbol="square", color=GREY),
    ]
    fig, notes = _figure(traces, "per-entry ε_DP allowed at b", "ε_DP", _zoom(curve, cal.b), curve.length)
    fig.add_hline(y=group.eps_dp, line_dash="dot", line_color=GREY)
    points = curve.points()
    b_all = np.array([b for b, _ in points], dtype=int)
    a_all = np.array([a for _, a in points], dtype=float)
    unusable = b_all.size - b_usable.size
    if unusable:
        notes.append(f"{unusable} value(s) of b are not drawn: there a(b) ≥ ε_puffer, so no ε_DP works at that b.")
    # b where a(b) ≥ ε_puffer allows no ε_DP: an empty cell in the table
    allowed_at = pd.Series(allowed, index=b_usable).reindex(b_all).to_numpy()
    b_cert, bound = certify_objective(curve, n.eps_dp)
    bound_at = pd.Series(bound, index=b_cert).reindex(b_all).to_numpy()
    table = pd.DataFrame({"b": b_all, "a(b)": a_all, "ε_DP allowed": allowed_at, "b·ε_DP + a(b)": bound_at})
    return fig, notes, table


def _reverse(n: Numbers) -> tuple[go.Figure, list[str]]:
    b_cert, bound = certify_objective(n.curve, n.eps_dp)
    traces = [
        Trace("b·ε_DP + a(b)", b_cert.astype(float), bound),
        Trace("minimum", np.array([n.cert.b], float), np.array([n.cert.eps_puffer]), symbol="star", color=PALETTE[1]),
    ]
    return _figure(traces, "ε_puffer guaranteed through b", "ε_puffer", _zoom(n.curve, n.cert.b), n.curve.length)


def _forward_text(n: Numbers) -> str:
    if n.cal.group_dp:
        return (
            f"No window has a(b) < ε_puffer = {n.eps:g} before b reaches T = {n.curve.length}: the best this"
            " prior allows is group DP over the whole sequence."
        )
    return (
        f"Use a per-entry ε_DP = {fmt(n.cal.eps_dp)} mechanism: with b* = {n.cal.b} and a(b*) = {fmt(n.cal.a)},"
        f" b*·ε_DP + a(b*) = {fmt(n.cal.eps_puffer)}. That is {n.ratio:.3g} times the budget group DP allows"
        f" (ε_puffer / T = {fmt(n.group.eps_dp)})."
    )


def _reverse_text(n: Numbers, bold: bool = False) -> str:
    value = f"**{fmt(n.cert.eps_puffer)}**" if bold else fmt(n.cert.eps_puffer)
    return (
        f"ε_puffer = min over b of b·ε_DP + a(b) = {value}; group DP accounting of the same"
        f" mechanism gives T·ε_DP = {fmt(n.group_eps)} ({n.group_eps / n.cert.eps_puffer:.3g} times as much)."
    )


def _comparison(fit: Numbers, robust: Numbers) -> pd.DataFrame:
    """The fitted chain alone against the robust Θ: one row per number, one column each (fits a phone)."""
    rows = [
        ("a(1)", fmt(float(fit.curve.a[0])), fmt(float(robust.curve.a[0]))),
        (f"b* at ε_puffer = {fit.eps:g}", str(fit.cal.b), str(robust.cal.b)),
        (f"ε_DP at ε_puffer = {fit.eps:g}", fmt(fit.cal.eps_dp), fmt(robust.cal.eps_dp)),
        (f"ε_puffer at ε_DP = {fit.eps_dp:g}", fmt(fit.cert.eps_puffer), fmt(robust.cert.eps_puffer)),
    ]
    return pd.DataFrame(rows, columns=["", "fitted chain", "robust Θ"])


def _settings(n: Numbers, spread: Uncertainty | None) -> dict[str, Any]:
    kind = PRIOR_KINDS[values["prior_kind"]]
    shown: dict[str, Any] = {"prior": describe_prior(values), "kind of prior": kind.label}
    for parameter in kind.parameters:
        value = values.get(parameter.key, parameter.default)
        if parameter.key == "initial" and value is None:
            value = "stationary"
        shown[parameter.key] = value
    shown.update({"target ε_puffer": n.eps, "per-entry ε_DP to certify": n.eps_dp})
    if spread is not None:
        shown.update(
            {
                "prior uncertainty": spread.description(),
                "draws M": spread.draws,
                "Dirichlet α₀": spread.concentration,
                "seed": spread.seed,
            }
        )
    shown["b axis"] = state.B_AXES[values["b_axis"]]
    return shown


def report_builder(
    n: Numbers,
    figures: tuple[go.Figure, go.Figure],
    notes: tuple[list[str], list[str]],
    table: pd.DataFrame,
    spread: Uncertainty | None,
    fit: Numbers | None,
) -> Callable[[], str]:
    """The report as a function (built when the download is clicked, not on every rerun)."""
    settings_now = _settings(n, spread)

    def build() -> str:
        shown = table.head(REPORT_ROWS).astype(object)
        shown = shown.where(table.head(REPORT_ROWS).notna(), "— (a(b) ≥ ε_puffer)")
        cut = []
        if len(table) > REPORT_ROWS:
            cut.append(f"The table shows the first {REPORT_ROWS} of {len(table)} values of b.")
        sections = [
            Section("ε_puffer → ε_DP", _forward_text(n), figures[0], shown, [*notes[0], *cut]),
            Section("ε_DP → ε_puffer", _reverse_text(n), figures[1], notes=notes[1]),
        ]
        if spread is not None and fit is not None:
            sections.append(
                Section(
                    "Prior uncertainty (docs/math.md §12)",
                    f"{spread.description()}. Calibrated against the robust curve of Θ; the fitted chain alone"
                    " for comparison.",
                    table=_comparison(fit, n),
                )
            )
            sections.append(Section("The rows that drive the spread", table=spread.spread.rows()))
        summary = (
            f"Prior: {settings_now['prior'] if spread is None else spread.description()}. "
            f"Target ε_puffer = {n.eps:g}: per-entry ε_DP = {fmt(n.cal.eps_dp)} at b* = {n.cal.b}. "
            f"A per-entry ε_DP = {n.eps_dp:g} mechanism is ε_puffer = {fmt(n.cert.eps_puffer)} Pufferfish private."
        )
        return html_report("Pufferfish Lab — Calibrate", summary, settings_now, sections)

    return build


current = prior_summary()

if current is not None:
    spread: Uncertainty | None = None
    data = fitted_data()
    if data is not None:
        with st.container(border=True):
            label = "Calibrate against the robust Θ (prior uncertainty, docs/math.md §12)"
            if uncertainty_controls(st, "w_cal_unc", label):
                try:
                    spread = uncertainty(data)
                except ValueError as exc:
                    st.error(f"The prior uncertainty cannot be computed: {exc}")
            if spread is not None:
                st.caption(f"{spread.description()}: the numbers below use the curve of Θ.")
    curve = spread.spread.robust if spread is not None else current.curve

    axes = list(state.B_AXES)
    values["b_axis"] = st.radio(
        "b axis",
        axes,
        index=axes.index(values["b_axis"]),
        format_func=state.B_AXES.get,
        horizontal=True,
        key="w_cal_b_axis",
        help="Zoom: b up to where a(b) has faded (below 1% of a(1) and below 0.01 nats). Log: all b, on a log scale.",
    )

    forward, reverse = st.tabs(["ε_puffer → ε_DP", "ε_DP → ε_puffer"])
    with forward:
        eps = state.number_input(
            st.columns([1, 2])[0],
            "Target ε_puffer (the Pufferfish guarantee you want)",
            state.EPS_PUFFER,
            step=0.1,
            key="w_eps",
        )
    with reverse:
        eps_dp = state.number_input(
            st.columns([1, 2])[0],
            "Per-entry ε_DP of your mechanism",
            state.EPS_DP,
            step=0.01,
            format="%.4f",
            key="w_eps_dp",
        )
    n = numbers(curve, eps, eps_dp)
    forward_fig, forward_notes, table = _forward(n)
    reverse_fig, reverse_notes = _reverse(n)

    with forward:
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("Optimal window b*", n.cal.b)
        c2.metric("a(b*)", fmt(n.cal.a))
        c3.metric("Per-entry ε_DP", fmt(n.cal.eps_dp), help="The largest ε_DP that guarantees ε_puffer.")
        c4.metric(
            "Budget per release vs group DP",
            f"{n.ratio:.3g}×",
            help=f"Group DP over the whole sequence allows ε_DP = ε_puffer / T = {fmt(n.group.eps_dp)}.",
        )
        (st.info if n.cal.group_dp else st.success)(_forward_text(n))
        show_figure(forward_fig, forward_notes, key="calibrate_chart")
        csv_download(table.iloc[:, :3], "calibration.csv", "Download this curve (CSV)", key="w_download_cal")

    with reverse:
        r1, r2, r3, r4 = st.columns(4)
        r1.metric("Guaranteed ε_puffer", fmt(n.cert.eps_puffer))
        r2.metric("At window b", n.cert.b)
        r3.metric("a(b)", fmt(n.cert.a))
        r4.metric("Group DP would say", fmt(n.group_eps), help="T · ε_DP: group privacy over the whole sequence.")
        st.markdown(_reverse_text(n, bold=True))
        show_figure(reverse_fig, reverse_notes, key="certify_chart")
        certification = table[["b", "a(b)", "b·ε_DP + a(b)"]]
        csv_download(certification, "certification.csv", "Download this curve (CSV)", key="w_download_cert")

    fit: Numbers | None = None
    if spread is not None:
        fit = numbers(current.curve, eps, eps_dp)
        st.markdown("**Robust Θ against the fitted chain alone**: what allowing for the estimation error costs.")
        comparison = _comparison(fit, n)
        numbers_right = {c: st.column_config.TextColumn(c, alignment="right") for c in ("fitted chain", "robust Θ")}
        show_table(comparison, key="cal_comparison", width="stretch", column_config=numbers_right)
        st.markdown("**The rows that drive the spread** (visits: transitions seen leaving the state in the data)")
        rows = spread.spread.rows()
        show_table(rows, key="cal_spread_rows", height=min(38 + 35 * len(rows), 320), width="stretch")

    if values["prior_kind"] == "gaussian":
        st.caption(JITTER_NOTE)

    st.markdown("**Take this decision with you**: a report to read or share, and a script that recomputes it.")
    offer_exports(
        report_builder(n, (forward_fig, reverse_fig), (forward_notes, reverse_notes), table, spread, fit),
        script(values, eps, eps_dp, spread),
        "calibrate",
        key="w_cal_exports",
    )

state.share((*state.prior_parameters(), state.EPS_PUFFER, state.EPS_DP, state.B_AXIS))
