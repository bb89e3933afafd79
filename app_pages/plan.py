"""Plan & compose: a ledger of releases and the budget planner (docs/math.md §4, [C] Theorem 6.2)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from app_ui import state
from app_ui.charts import Trace, csv_download, fmt, ledger_figure, line_figure, show_figure, show_problems, show_table
from app_ui.priors import prior_summary
from puffer_core import Accountant, InfluenceCurve, calibrate, compose, group_dp, make_mechanism, plan
from puffer_core.events import Composition
from puffer_core.mechanisms import MECHANISMS, Mechanism

values = state.settings()
QUERY_LABELS = {"topk": "top-k ranking", "histogram": "histogram"}
NOISE_LABELS = {"gumbel": "Gumbel", "laplace": "Lap"}
# a ledger composes by Theorem 6.2: its rows use the curve-calibrated mechanisms, each for the query its
# release answers as it is (the registry's first query)
LEDGER_QUERIES: dict[str, str] = {
    name: spec.queries[0] for name, spec in MECHANISMS.items() if spec.composition is Composition.THEOREM_6_2
}
LEDGER_MECHANISMS: dict[str, str] = {
    name: f"{MECHANISMS[name].label} ({QUERY_LABELS[query]})" for name, query in LEDGER_QUERIES.items()
}
BY_LABEL = {label: name for name, label in LEDGER_MECHANISMS.items()}

st.title("Plan & compose")
st.markdown(
    "Releases calibrated through the curve compose better than adding up their guarantees:"
    " k releases with points (a_l, b_l) jointly satisfy **max a_l + Σ (ε_puffer,l − a_l)**"
    " ([C] Theorem 6.2, docs/math.md §4). General Pufferfish mechanisms do not compose at all (see the"
    " Classroom page); these do because each is per-entry differentially private."
)
state.show_ignored_link_settings()
current = prior_summary()


def _default_ledger() -> tuple[tuple[str, str, float], ...]:
    months = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    return tuple((month, LEDGER_MECHANISMS["pufferfish_exponential"], 0.5) for month in months)


def _mechanism(name: str, curve: InfluenceCurve, eps: float, k: int) -> Mechanism:
    # curve-calibrated mechanisms only: no MQM priors needed; a histogram is one query (L1 sensitivity 2)
    return make_mechanism(name, eps, curve, [], query=LEDGER_QUERIES[name], k=k)


@st.cache_data(show_spinner=False, max_entries=64)
def _planner_comparison(curve: InfluenceCurve, total_eps: float, horizon: int) -> pd.DataFrame:
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


def _noise(mechanism: Mechanism) -> str:
    text = f"{NOISE_LABELS[mechanism.noise]}({mechanism.noise_scale:.3g}) per count"
    return text + (f", top {mechanism.k}" if mechanism.noise == "gumbel" else "")


if current is not None:
    curve = current.curve
    ledger_tab, planner_tab = st.tabs(["Ledger of planned releases", "Planner: split a total budget"])

    with ledger_tab:
        values.setdefault("ledger", _default_ledger())
        values.setdefault("ledger_base", values["ledger"])
        values.setdefault("ledger_version", 0)
        values.setdefault("ledger_k", 3)
        st.caption(
            "One row per release: the mechanism and the ε_puffer it must guarantee on its own. Each is"
            " calibrated through the curve (group DP ones use ε_DP = ε_puffer / T)."
        )
        editor_key, start = state.editor_state("ledger")
        base = pd.DataFrame(list(start), columns=["release", "mechanism", "ε_puffer"])
        edited = st.data_editor(
            base,
            key=editor_key,
            num_rows="dynamic",
            width="stretch",
            column_config={
                "release": st.column_config.TextColumn("Release", help="A name: a month, a report…"),
                "mechanism": st.column_config.SelectboxColumn(
                    "Mechanism", options=list(LEDGER_MECHANISMS.values()), required=True, width="medium"
                ),
                "ε_puffer": st.column_config.NumberColumn("ε_puffer", min_value=0.0, format="%.4g"),
            },
        )
        values["ledger_k"] = int(
            st.columns([1, 2])[0].number_input(
                "k for the top-k rankings", 1, 50, int(values["ledger_k"]), key="w_ledger_k"
            )
        )
        rows = []
        problems = []
        for i, (name, mechanism, eps) in enumerate(edited.itertuples(index=False, name=None)):
            label = str(name) if isinstance(name, str) and name.strip() else f"release {i + 1}"
            try:
                eps = float(eps)
            except (TypeError, ValueError):
                eps = math.nan
            if not math.isfinite(eps) or eps <= 0:
                problems.append(f"{label}: ε_puffer must be a positive number")
                continue
            if mechanism not in BY_LABEL:
                problems.append(f"{label}: choose a mechanism")
                continue
            rows.append((label, str(mechanism), eps))
        values["ledger"] = tuple(rows)
        show_problems(problems)
        if not rows:
            st.info("Add a release to the ledger (a row with a mechanism and a positive ε_puffer).")
        else:
            mechanisms = [_mechanism(BY_LABEL[m], curve, eps, values["ledger_k"]) for _, m, eps in rows]
            accounts = [m.accounting for m in mechanisms]
            ledger = Accountant(curve.length).ledger(accounts)  # docs/math.md §4
            total, naive, group = ledger.eps_puffer, ledger.naive_sum, ledger.group_dp
            names = [name for name, _, _ in rows]
            k = np.arange(1, len(rows) + 1, dtype=float)
            st.markdown(
                f"After all {len(rows)} releases: **ε_puffer = {fmt(float(total[-1]))}** by Theorem 6.2,"
                f" against {fmt(float(naive[-1]))} by adding up each release's guarantee and"
                f" {fmt(float(group[-1]))} by group-DP accounting of the same mechanisms."
            )
            traces = [
                Trace("Theorem 6.2 (composed)", k, total),
                Trace("naive sum of per-release ε_puffer", k, naive, dash="dash"),
                Trace("group DP accounting (T·ε_DP each)", k, group, dash="dot"),
            ]
            fig, notes = ledger_figure(traces, log_y=bool(st.toggle("Log scale", value=True, key="w_ledger_log")))
            fig.update_xaxes(tickmode="array", tickvals=k, ticktext=names)
            show_figure(fig, notes, key="ledger_chart")
            table = pd.DataFrame(
                {
                    "release": names,
                    "mechanism": [m for _, m, _ in rows],
                    "ε_puffer": [acc.eps_puffer for acc in accounts],
                    "ε_DP per entry": [acc.eps_dp for acc in accounts],
                    "b": [acc.b for acc in accounts],
                    "a(b)": [acc.a for acc in accounts],
                    "noise": [_noise(m) for m in mechanisms],
                    "cumulative (Thm 6.2)": total,
                    "cumulative (naive sum)": naive,
                    "cumulative (group DP)": group,
                }
            )
            show_table(table, key="ledger_table", width="stretch")
            csv_download(table, "ledger.csv", "Download the ledger (CSV)", key="w_download_ledger")
            st.caption(
                "MQM releases are not in this ledger: they add up ([S] Theorem III.7) and cannot be mixed"
                " with curve-calibrated releases; the Simulate page keeps their ledger separately."
            )

    with planner_tab:
        c1, c2 = st.columns(2)
        state.number_input(
            c1, "Total budget ε_puffer for the series", state.PLAN_TOTAL, step=0.5, key="w_plan_total"
        )
        state.number_input(c2, "Number of releases", state.PLAN_RELEASES, step=1, key="w_plan_releases")
        total_eps, k_rel = values["plan_total"], values["plan_releases"]
        planned = plan(curve, total_eps, k_rel)
        split = calibrate(curve, total_eps / k_rel)
        group_each = group_dp(curve, total_eps / k_rel)
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("Per-release ε_DP", fmt(planned.eps_dp))
        m2.metric("Common window b", planned.b)
        m3.metric("a(b)", fmt(planned.a))
        m4.metric(
            "vs group DP",
            f"{planned.eps_dp / group_each.eps_dp:.3g}×",
            help=f"Group DP: ε_DP = E / (k·T) = {fmt(group_each.eps_dp)} per release.",
        )
        st.markdown(
            f"Run each of the {k_rel} releases with a per-entry **ε_DP = {fmt(planned.eps_dp)}**"
            f" mechanism (curve point b = {planned.b}, a(b) = {fmt(planned.a)}). Each release on its"
            f" own guarantees ε_puffer = {fmt(planned.eps_puffer)}; together they spend exactly"
            f" {fmt(compose([planned] * k_rel))} (Theorem 6.2). Calibrating each release on its"
            f" own at E/k = {fmt(total_eps / k_rel)} would allow only ε_DP = {fmt(split.eps_dp)},"
            f" and group DP only {fmt(group_each.eps_dp)}."
        )
        table = _planner_comparison(curve, total_eps, max(24, k_rel))
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
        fig.add_vline(x=k_rel, line_dash="dot", line_color="#7f7f7f")
        show_figure(fig, notes, key="planner_chart")
        csv_download(table, "planner.csv", "Download the planner curve (CSV)", key="w_download_plan")

state.share((*state.prior_parameters(), state.PLAN_TOTAL, state.PLAN_RELEASES))
