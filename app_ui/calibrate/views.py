"""The Calibrate page's numbers, charts, words, report and script (docs/math.md §3).

For one curve, a target ε_puffer and a per-entry ε_DP, :func:`calibration_view` computes the
calibration (ε_puffer → ε_DP) and the certification (ε_DP → ε_puffer) with :mod:`puffer_core`,
draws both objectives over b and tabulates the curve — once per input, shared by every session
(``st.cache_resource``: nobody changes what they get).  The words, the report and the script are
written from those numbers; the page only places them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_ui.calibrate.settings import CalibrateSettings
from app_ui.core.charts import GREY, PALETTE, ZOOM_FLOOR, Note, Trace, curve_trace, line_figure, zoom_limit
from app_ui.core.report import Section, html_report
from app_ui.core.state import B_AXES
from app_ui.core.tables import Shown, fmt, shown
from app_ui.core.templates import fill
from app_ui.prior.current import Uncertainty, prior_settings, prior_source
from app_ui.secrets.page import script_secrets
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

REPORT_ROWS = 1000  # rows of the curve table in the report (the CSV and the script have every b)


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


@dataclass(frozen=True, eq=False)
class CalibrationView:
    """The numbers, both charts with their notes, and the curve's table (b, a(b), both objectives)."""

    numbers: Numbers
    forward: go.Figure
    forward_notes: tuple[str, ...]
    reverse: go.Figure
    reverse_notes: tuple[str, ...]
    table: Shown


def _zoom(curve: InfluenceCurve, b_axis: str, *keep: int) -> float | None:
    """Where the b axis ends when zoomed: past the curve's signal and every b in ``keep``."""
    if b_axis != "zoom":
        return None
    return zoom_limit([curve_trace(curve, "a(b)")], also=[float(b) for b in keep])


def _figure(
    traces: list[Trace], y_title: str, y_name: str, b_axis: str, zoom: float | None, length: int
) -> tuple[go.Figure, list[str]]:
    fig, notes = line_figure(
        traces,
        x_title="b — entries in the high-influence window H",
        y_title=y_title,
        y_name=y_name,
        log_x=b_axis == "log",
        integer_x=True,
        x_max=zoom,
    )
    if zoom is not None:
        notes.append(
            Note(
                f"Showing b ≤ {zoom:,.0f} of {length:,}: beyond it a(b) is below 1% of a(1) and below"
                f" {ZOOM_FLOOR:g} nats.",
                "Choose *All b* or *Log b* to see the rest, up to b = T (group DP).",
            )
        )
    return fig, notes


@st.cache_resource(show_spinner=False, max_entries=64)
def calibration_view(curve: InfluenceCurve, eps: float, eps_dp: float, b_axis: str) -> CalibrationView:
    """Everything the page draws for this curve and these two numbers, built once (shared: do not change it)."""
    n = numbers(curve, eps, eps_dp)
    cal, group, cert = n.cal, n.group, n.cert
    b_usable, allowed = calibration_objective(curve, eps)
    traces = [
        Trace("(ε_puffer − a(b)) / b", b_usable.astype(float), allowed),
        Trace("optimum b*", np.array([cal.b], float), np.array([cal.eps_dp]), symbol="star", color=PALETTE[1]),
        Trace("group DP (b = T)", np.array([group.b], float), np.array([group.eps_dp]), symbol="square", color=GREY),
    ]
    zoom = _zoom(curve, b_axis, cal.b)
    forward, forward_notes = _figure(traces, "per-entry ε_DP allowed at b", "ε_DP", b_axis, zoom, curve.length)
    forward.add_hline(y=group.eps_dp, line_dash="dot", line_color=GREY)
    points = curve.points()
    b_all = np.array([b for b, _ in points], dtype=int)
    a_all = np.array([a for _, a in points], dtype=float)
    unusable = b_all.size - b_usable.size
    if unusable:
        forward_notes.append(
            f"{unusable} value(s) of b are not drawn: there a(b) ≥ ε_puffer, so no ε_DP works at that b."
        )
    # b where a(b) ≥ ε_puffer allows no ε_DP: an empty cell in the table
    allowed_at = pd.Series(allowed, index=b_usable).reindex(b_all).to_numpy()
    b_cert, bound = certify_objective(curve, eps_dp)
    bound_at = pd.Series(bound, index=b_cert).reindex(b_all).to_numpy()
    table = pd.DataFrame({"b": b_all, "a(b)": a_all, "ε_DP allowed": allowed_at, "b·ε_DP + a(b)": bound_at})
    traces = [
        Trace("b·ε_DP + a(b)", b_cert.astype(float), bound),
        Trace("minimum", np.array([cert.b], float), np.array([cert.eps_puffer]), symbol="star", color=PALETTE[1]),
    ]
    zoom = _zoom(curve, b_axis, cert.b)
    reverse, reverse_notes = _figure(traces, "ε_puffer guaranteed through b", "ε_puffer", b_axis, zoom, curve.length)
    return CalibrationView(n, forward, tuple(forward_notes), reverse, tuple(reverse_notes), shown(table))


def forward_text(n: Numbers) -> str:
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


def reverse_text(n: Numbers, bold: bool = False) -> str:
    value = f"**{fmt(n.cert.eps_puffer)}**" if bold else fmt(n.cert.eps_puffer)
    return (
        f"ε_puffer = min over b of b·ε_DP + a(b) = {value}; group DP accounting of the same"
        f" mechanism gives T·ε_DP = {fmt(n.group_eps)} ({n.group_eps / n.cert.eps_puffer:.3g} times as much)."
    )


def comparison(fit: Numbers, robust: Numbers) -> pd.DataFrame:
    """The fitted chain alone against the robust Θ: one row per number, one column each (fits a phone)."""
    rows = [
        ("a(1)", fmt(float(fit.curve.a[0])), fmt(float(robust.curve.a[0]))),
        (f"b* at ε_puffer = {fit.eps:g}", str(fit.cal.b), str(robust.cal.b)),
        (f"ε_DP at ε_puffer = {fit.eps:g}", fmt(fit.cal.eps_dp), fmt(robust.cal.eps_dp)),
        (f"ε_puffer at ε_DP = {fit.eps_dp:g}", fmt(fit.cert.eps_puffer), fmt(robust.cert.eps_puffer)),
    ]
    return pd.DataFrame(rows, columns=["", "fitted chain", "robust Θ"])


def report_settings(settings: CalibrateSettings, description: str, spread: Uncertainty | None) -> dict[str, Any]:
    """Every setting of the page, in the user's words, for the report."""
    prior = prior_settings(settings.prior.kind, settings.prior.params)
    shown_settings: dict[str, Any] = {"prior": description, **prior}
    shown_settings.update({"target ε_puffer": settings.eps_puffer, "per-entry ε_DP to certify": settings.eps_dp})
    if spread is not None:
        shown_settings.update(
            {
                "prior uncertainty": spread.description(),
                "draws M": spread.draws,
                "Dirichlet α₀": spread.concentration,
                "seed": spread.seed,
            }
        )
    shown_settings["b axis"] = B_AXES[settings.b_axis]
    return shown_settings


def report_builder(
    view: CalibrationView,
    settings: dict[str, Any],
    spread: Uncertainty | None,
    fit: Numbers | None,
    prior: Sequence[Section] = (),
    accuracy: tuple[Any, Any] | None = None,
) -> Callable[[], str]:
    """The report as a function (built when the download is clicked, not on every rerun).

    ``prior``: sections showing the prior (its transition matrix, :func:`app_ui.prior.current.prior_sections`);
    ``accuracy``: the accuracy-first target and its view (:func:`app_ui.accuracy.views.plan_view`), if set.
    """

    def build() -> str:
        n, table = view.numbers, view.table.frame
        rows = table.head(REPORT_ROWS).astype(object)
        rows = rows.where(table.head(REPORT_ROWS).notna(), "— (a(b) ≥ ε_puffer)")
        cut = []
        if len(table) > REPORT_ROWS:
            cut.append(f"The table shows the first {REPORT_ROWS} of {len(table)} values of b.")
        # each section's table holds its own tab's columns: the allowed ε_DP at the target ε_puffer, and the
        # ε_puffer guaranteed through each b by the ε_DP to certify (not the other tab's)
        forward_rows = rows[["b", "a(b)", "ε_DP allowed"]]
        reverse_rows = rows[["b", "a(b)", "b·ε_DP + a(b)"]].rename(
            columns={"b·ε_DP + a(b)": f"b·ε_DP + a(b) at ε_DP = {n.eps_dp:g}"}
        )
        sections = [
            Section("ε_puffer → ε_DP", forward_text(n), view.forward, forward_rows, [*view.forward_notes, *cut]),
            Section("ε_DP → ε_puffer", reverse_text(n), view.reverse, reverse_rows, [*view.reverse_notes, *cut]),
            *prior,
        ]
        if spread is not None and fit is not None:
            sections.append(
                Section(
                    "Prior uncertainty (docs/math.md §12)",
                    f"{spread.description()}. Calibrated against the robust curve of Θ; the fitted chain alone"
                    " for comparison.",
                    table=comparison(fit, n),
                )
            )
            sections.append(Section("The rows that drive the spread", table=spread.spread.rows()))
        if accuracy is not None:
            target, plan = accuracy
            settings["accuracy target"] = target.describe()
            sections.append(
                Section("Accuracy first (docs/math.md §13)", plan.summary.replace("**", ""), plan.figure,
                        plan.table.frame.merge(plan.charged.frame, on="mechanism"), plan.notes)
            )
        summary = (
            f"Prior: {settings['prior'] if spread is None else spread.description()}. "
            f"Target ε_puffer = {n.eps:g}: per-entry ε_DP = {fmt(n.cal.eps_dp)} at b* = {n.cal.b}. "
            f"A per-entry ε_DP = {n.eps_dp:g} mechanism is ε_puffer = {fmt(n.cert.eps_puffer)} Pufferfish private."
        )
        return html_report("Pufferfish Lab — Calibrate", summary, settings, sections)

    return build


def script(
    settings: CalibrateSettings,
    description: str,
    spread: Uncertainty | None,
    accuracy: tuple[Any, Any] | None = None,
    gaussian: tuple[str, list[str]] | None = None,
) -> str:
    """The page as a Python program (``app_ui/core/scripts/calibrate.py`` filled in), printing its numbers as shown.

    With ``accuracy`` (the accuracy-first target and its view) it also prints the ε_puffer each
    mechanism needs for the target, ``accuracy_first_<mechanism> = ε`` (docs/math.md §13).  With ``gaussian``
    (its code and names) it prints σ_GWM and σ* of Gaussian noise as the page shows them (docs/math.md §17).
    """
    prior = settings.prior
    names, prior_code = prior_source(prior.kind, prior.params, spread.spread.priors if spread is not None else None)
    blocks = {"prior": prior_code}
    imports = names.split(", ")
    if accuracy is not None:
        target = accuracy[0]
        blocks["accuracy"] = (
            "# accuracy first (docs/math.md §13): the ε_puffer each mechanism needs for the target\n"
            f"TARGET = {target!r}\n"
            "for cost in accuracy_first(TARGET, curve, prior).costs:\n"
            '    print(f"accuracy_first_{cost.mechanism} = {fmt(cost.eps_puffer)}")\n'
        )
        imports += [type(target).__name__, "accuracy_first"]
    if gaussian is not None:  # Gaussian noise's block and names (app_ui.gaussian.views.gaussian_block)
        blocks["gaussian"] = gaussian[0]
        imports += gaussian[1]
    secrets, secret_names = script_secrets(settings.secrets, prior)  # what is secret (docs/math.md §16)
    return fill(
        "calibrate",
        doc={"Prior": f"{spread.description() if spread is not None else description}."},
        values={"EPS_PUFFER": settings.eps_puffer, "EPS_DP": settings.eps_dp, "SECRETS": secrets},
        blocks=blocks,
        imports=[*imports, *secret_names],
    )
