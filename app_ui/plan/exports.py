"""What the Plan & compose page computes, as tables and figures, and as a report and a script.

The ledger (:func:`ledger_view`, :func:`ledger_chart`) and the planner (:func:`planner_view`) are
computed with ``puffer_core`` once per input and shared between sessions (``st.cache_resource``:
nobody changes what they get); the report (:mod:`app_ui.core.report`) puts them in one HTML file, and
:func:`script` fills the template ``app_ui/core/scripts/plan.py``: a Python program that rebuilds the
same prior with ``puffer_core``, composes the same ledger and plans the same budget, and prints
them exactly as the page shows them (a test compares the two):

    # ledger
    release,"total, Thm 6.2","total, naive","total, group DP",ε_DP,b,a(b),noise
    Jan,0.5,0.5,1.821,0.01821,21,0.1175,"Gumbel(329) per count, top 3"
    …
    # planner
    Per-release ε_DP = 0.1534
    …
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_ui.accuracy.views import ledger_accuracy, release_accuracy
from app_ui.core.charts import Trace, ledger_figure, line_figure
from app_ui.core.report import Section, html_report
from app_ui.core.tables import Shown, fmt, shown
from app_ui.core.templates import Code, fill
from app_ui.gaussian.ledger import renyi_block, renyi_report
from app_ui.plan.ledger import HISTOGRAM_MECHANISM, LABELS, LEDGER_QUERIES, Row, display_name
from app_ui.plan.settings import PlanSettings
from app_ui.prior.current import prior_sections, prior_settings, prior_source
from app_ui.secrets.page import report_part, script_secrets
from puffer_core import Accountant, Calibration, InfluenceCurve, calibrate, compose, group_dp, make_mechanism, plan
from puffer_core.mechanisms import Mechanism, Output, mechanism_spec

MAX_NAMED_TICKS = 24  # more releases than this: numbered ticks, names in the table
TICK_CHARS = 8  # a release's name on the x axis, cut beyond this many characters


def _mechanism(name: str, curve: InfluenceCurve, eps: float, k: int) -> Mechanism:
    # curve-calibrated mechanisms only: no MQM priors needed; a histogram is one query (L1 sensitivity 2)
    return make_mechanism(name, eps, curve, [], query=LEDGER_QUERIES[name], k=k)


def _ranks(mechanism: Mechanism) -> bool:
    return mechanism_spec(mechanism.name).releases is Output.RANKING


def _k(mechanism: Mechanism) -> int | None:
    """The k of a ranking (None for counts)."""
    return getattr(mechanism, "k", None) if _ranks(mechanism) else None


def _noise(mechanism: Mechanism) -> str:
    """The noise column, from the mechanism's record: "Lap(3.2) per count", "Gumbel(12) per count, top 3"."""
    spec = mechanism_spec(mechanism.name)
    text = f"{spec.noise.symbol}({mechanism.noise_scale:.3g}) per count"
    return text + (f", top {_k(mechanism)}" if _ranks(mechanism) else "")


def ledger_table(curve: InfluenceCurve, rows: tuple[Row, ...], k: int, n_states: int | None = None) -> pd.DataFrame:
    """One row per release: what it is, how it is calibrated, its accuracy, and the running totals (docs/math.md §4).

    The column ``k`` is the k of a top-k ranking (empty for a histogram); ``accuracy (95%)`` says
    what the release's noise buys (docs/math.md §13: ±α per count, or the lead a top-k ranking over
    ``n_states`` states needs); the totals are [C] Theorem 6.2, the naive sum of the ε_puffer and
    group-DP accounting (T·Σ ε_DP).
    """
    mechanisms = [_mechanism(name, curve, eps, k) for _, name, eps in rows]
    events = [m.accounting for m in mechanisms]
    ledger = Accountant(curve.length).ledger(events)
    return pd.DataFrame(
        {
            "release": [display_name(name, i) for i, (name, _, _) in enumerate(rows)],
            "mechanism": [LABELS[name] for _, name, _ in rows],
            "ε_puffer": [e.eps_puffer for e in events],
            "k": pd.array([_k(m) for m in mechanisms], dtype="Int64"),
            "ε_DP per entry": [e.eps_dp for e in events],
            "b": [e.b for e in events],
            "a(b)": [e.a for e in events],
            "noise": [_noise(m) for m in mechanisms],
            "accuracy (95%)": [ledger_accuracy(m, n_states) for m in mechanisms],
            "cumulative (Thm 6.2)": ledger.eps_puffer,
            "cumulative (naive sum)": ledger.naive_sum,
            "cumulative (group DP)": ledger.group_dp,
        }
    )


@dataclass(frozen=True, eq=False)
class LedgerView:
    """The ledger's table (numbers and text) and its sentence."""

    table: Shown
    summary: str


@st.cache_resource(show_spinner=False, max_entries=64)
def ledger_view(curve: InfluenceCurve, rows: tuple[Row, ...], k: int, n_states: int | None = None) -> LedgerView:
    """The ledger of these releases, built once per curve, rows, k and K (shared: do not change it)."""
    table = ledger_table(curve, rows, k, n_states)
    return LedgerView(shown(table), ledger_summary(table))


def ledger_summary(table: pd.DataFrame) -> str:
    last = table.iloc[-1]
    return (
        f"After all {len(table)} releases: **ε_puffer = {fmt(float(last['cumulative (Thm 6.2)']))}** by Theorem 6.2,"
        f" against {fmt(float(last['cumulative (naive sum)']))} by adding up each release's guarantee and"
        f" {fmt(float(last['cumulative (group DP)']))} by group-DP accounting of the same mechanisms."
    )


@st.cache_resource(show_spinner=False, max_entries=64)
def ledger_chart(curve: InfluenceCurve, rows: tuple[Row, ...], k: int, log_y: bool) -> tuple[go.Figure, list[str]]:
    """The running totals after each release, on a log or a linear ε axis (shared: do not change it)."""
    return _ledger_chart(ledger_view(curve, rows, k).table.frame, log_y)


def _ledger_chart(table: pd.DataFrame, log_y: bool) -> tuple[go.Figure, list[str]]:
    k = np.arange(1, len(table) + 1, dtype=float)
    traces = [
        Trace("Theorem 6.2 (composed)", k, table["cumulative (Thm 6.2)"].to_numpy(dtype=float)),
        Trace(
            "naive sum of per-release ε_puffer", k, table["cumulative (naive sum)"].to_numpy(dtype=float), dash="dash"
        ),
        Trace("group DP accounting (T·ε_DP each)", k, table["cumulative (group DP)"].to_numpy(dtype=float), dash="dot"),
    ]
    fig, notes = ledger_figure(traces, log_y=log_y)
    if len(table) <= MAX_NAMED_TICKS:  # long names are cut on the axis (the table and the hover have them whole)
        names = [name if len(name) <= TICK_CHARS else name[: TICK_CHARS - 1] + "…" for name in table["release"]]
        fig.update_xaxes(tickmode="array", tickvals=k, ticktext=names)
    else:
        fig.update_xaxes(dtick=None, tickmode="auto")
    return fig, notes


def planner_table(curve: InfluenceCurve, total_eps: float, horizon: int) -> pd.DataFrame:
    """Per-release ε_DP for k = 1..horizon releases sharing ``total_eps``: the planner, E/k each, group DP."""
    releases = np.arange(1, horizon + 1)
    return pd.DataFrame(
        {
            "releases": releases,
            "planner ε_DP": [plan(curve, total_eps, int(n)).eps_dp for n in releases],
            "split ε_DP": [calibrate(curve, total_eps / n).eps_dp for n in releases],
            "group DP ε_DP": [group_dp(curve, total_eps / n).eps_dp for n in releases],
        }
    )


def planner_summary(curve: InfluenceCurve, total_eps: float, releases: int) -> str:
    planned = plan(curve, total_eps, releases)
    split = calibrate(curve, total_eps / releases)
    group_each = group_dp(curve, total_eps / releases)
    # a histogram released at the plan's ε_puffer, by the ledger's first mechanism that answers one
    histogram = make_mechanism(HISTOGRAM_MECHANISM, planned.eps_puffer, curve, [], query="histogram")
    return (
        f"Run each of the {releases} releases with a per-entry **ε_DP = {fmt(planned.eps_dp)}**"
        f" mechanism (curve point b = {planned.b}, a(b) = {fmt(planned.a)}). Each release on its"
        f" own guarantees ε_puffer = {fmt(planned.eps_puffer)}; together they spend exactly"
        f" {fmt(compose([planned] * releases))} (Theorem 6.2). Calibrating each release on its"
        f" own at E/k = {fmt(total_eps / releases)} would allow only ε_DP = {fmt(split.eps_dp)},"
        f" and group DP only {fmt(group_each.eps_dp)}. A histogram released with it keeps every count within"
        f" {release_accuracy(histogram).replace(' per count', '')} per count"
        " (docs/math.md §13)."
    )


def planner_chart(table: pd.DataFrame, releases: int) -> tuple[go.Figure, list[str]]:
    horizon = table["releases"].to_numpy(dtype=float)
    traces = [
        Trace("planner (Theorem 6.2)", horizon, table["planner ε_DP"].to_numpy()),
        Trace("each release calibrated at E/k", horizon, table["split ε_DP"].to_numpy(), dash="dash"),
        Trace("group DP", horizon, table["group DP ε_DP"].to_numpy(), dash="dot"),
    ]
    fig, notes = line_figure(
        traces,
        x_title="number of releases k",
        y_title="per-entry ε_DP of each release",
        y_name="ε_DP",
        x_name="k",
        log_y=True,
    )
    fig.add_vline(x=releases, line_dash="dot", line_color="#7f7f7f")
    return fig, notes


def planner_horizon(releases: int) -> int:
    """How many numbers of releases the planner's chart compares: at least 24, and the one planned."""
    return max(24, releases)


@dataclass(frozen=True, eq=False)
class PlannerView:
    """The planner's answer for a total budget and a number of releases: the numbers, the chart, the table."""

    planned: Calibration
    group_each: Calibration
    summary: str
    table: pd.DataFrame
    figure: go.Figure
    notes: tuple[str, ...]


@st.cache_resource(show_spinner=False, max_entries=64)
def planner_view(curve: InfluenceCurve, total_eps: float, releases: int) -> PlannerView:
    """The planner for ``releases`` releases sharing ``total_eps``, built once (shared: do not change it)."""
    table = planner_table(curve, total_eps, planner_horizon(releases))
    figure, notes = planner_chart(table, releases)
    planned, group_each = plan(curve, total_eps, releases), group_dp(curve, total_eps / releases)
    return PlannerView(planned, group_each, planner_summary(curve, total_eps, releases), table, figure, tuple(notes))


def report(
    curve: InfluenceCurve, description: str, settings: PlanSettings, log_y: bool, n_states: int | None = None
) -> str:
    """The page as one HTML file: every setting, the ledger and the planner with their charts and tables."""
    kind, parameters = settings.prior.kind, settings.prior.params
    rows, k, total, releases = settings.ledger, settings.ledger_k, settings.plan_total, settings.plan_releases
    planner = planner_view(curve, total, releases)
    summary = planner.summary.replace("**", "")
    sections = [Section("Planner: split a total budget", summary, planner.figure, planner.table, planner.notes)]
    sections.append(report_part(settings.secrets, settings.prior))  # what is secret (docs/math.md §16)
    if rows:
        ledger = ledger_view(curve, rows, k, n_states)
        fig, notes = ledger_chart(curve, rows, k, log_y)
        sections.insert(
            0, Section("Ledger of planned releases", ledger.summary.replace("**", ""), fig, ledger.table.frame, notes)
        )
    renyi, renyi_settings = renyi_report(settings.prior, settings.gaussian)  # Gaussian releases (app_ui/gaussian)
    sections += [*renyi, *prior_sections(kind, parameters)]
    settings = {
        "prior": description,
        **prior_settings(kind, parameters),
        "k for the top-k rankings": k,
        "planner: total budget ε_puffer": total,
        "planner: number of releases": releases,
        **renyi_settings,
    }
    summary = (
        f"A ledger of {len(rows)} releases composed by [C] Theorem 6.2 and a plan for {releases} releases sharing"
        f" ε_puffer = {fmt(total)}, under the prior: {description}. Papers and formulas: docs/references.md and"
        " docs/math.md §3–§4 in the repository."
    )
    return html_report("Plan & compose", summary, settings, sections)


# --------------------------------------------------------------------------- the script


def script(settings: PlanSettings, description: str) -> str:
    """The page as a Python program (``app_ui/core/scripts/plan.py`` filled in): it recomputes the ledger and the plan
    with ``puffer_core`` and prints them as the page shows them."""
    names, prior = prior_source(settings.prior.kind, settings.prior.params)
    rows = settings.ledger
    secrets, secret_names = script_secrets(settings.secrets, settings.prior)  # what is secret (docs/math.md §16)
    ledger = "".join(
        f"    ({display_name(name, i)!r}, {mechanism!r}, {LEDGER_QUERIES[mechanism]!r}, {float(eps)!r}),\n"
        for i, (name, mechanism, eps) in enumerate(rows)
    )
    blocks = {"prior": prior}
    imports = [*names.split(", "), *secret_names]
    gaussian = renyi_block(settings.prior, settings.gaussian)  # the Gaussian tab's Rényi rows (app_ui/gaussian)
    if gaussian is not None:
        blocks["gaussian"] = gaussian[0]
        imports += gaussian[1]
    return fill(
        "plan",
        doc={"Prior": description},
        values={
            "LEDGER": Code(f"[\n{ledger}]" if rows else "[]"),
            "K": settings.ledger_k,
            "TOTAL": settings.plan_total,
            "RELEASES": settings.plan_releases,
            "SECRETS": secrets,
        },
        blocks=blocks,
        imports=imports,
    )
