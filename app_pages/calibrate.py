"""Calibrate: target ε_puffer → per-entry ε_DP through the a(b) curve, and back (docs/math.md §3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from app_ui import state
from app_ui.charts import Trace, csv_download, fmt, line_figure, show_figure
from app_ui.priors import JITTER_NOTE, prior_summary
from puffer_core import calibrate, calibration_objective, certify, certify_objective, group_dp, group_dp_cumulative

values = state.settings()

st.title("Calibrate")
st.markdown(
    "A mechanism that is ε_DP-differentially private **per entry** is ε_puffer-Pufferfish private"
    " for any curve point with a(b) < ε_puffer and ε_DP ≤ (ε_puffer − a(b)) / b ([C] Theorem"
    ' "Translation", docs/math.md §3). The best point gives the most budget, hence the least noise;'
    " group DP over the whole sequence (b = T, a = 0) is always a candidate."
)

state.show_ignored_link_settings()
current = prior_summary()

if current is not None:
    curve = current.curve
    points = curve.points()
    b_all = np.array([b for b, _ in points], dtype=float)
    a_all = np.array([a for _, a in points], dtype=float)

    forward, reverse = st.tabs(["ε_puffer → ε_DP", "ε_DP → ε_puffer"])

    with forward:
        eps = state.number_input(
            st.columns([1, 2])[0],
            "Target ε_puffer (the Pufferfish guarantee you want)",
            state.EPS_PUFFER,
            step=0.1,
            key="w_eps",
        )
        cal = calibrate(curve, eps)
        group = group_dp(curve, eps)
        ratio = cal.eps_dp / group.eps_dp
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("Optimal window b*", cal.b)
        c2.metric("a(b*)", fmt(cal.a))
        c3.metric("Per-entry ε_DP", fmt(cal.eps_dp), help="The largest ε_DP that guarantees ε_puffer.")
        c4.metric(
            "Budget per release vs group DP",
            f"{ratio:.3g}×",
            help=f"Group DP over the whole sequence allows ε_DP = ε_puffer / T = {fmt(group.eps_dp)}.",
        )
        if cal.group_dp:
            st.info(
                f"No window has a(b) < ε_puffer = {eps:g} before b reaches T = {curve.length}: the best"
                " this prior allows is group DP over the whole sequence."
            )
        else:
            st.success(
                f"Use a per-entry ε_DP = {fmt(cal.eps_dp)} mechanism: with b* = {cal.b} and"
                f" a(b*) = {fmt(cal.a)}, b*·ε_DP + a(b*) = {fmt(cal.eps_puffer)}. That is"
                f" {ratio:.3g} times the budget group DP allows (ε_puffer / T = {fmt(group.eps_dp)})."
            )
        b_usable, allowed = calibration_objective(curve, eps)
        traces = [
            Trace("(ε_puffer − a(b)) / b", b_usable.astype(float), allowed, markers=True),
            Trace("optimum b*", np.array([cal.b], float), np.array([cal.eps_dp]), symbol="star", color="#d62728"),
            Trace(
                "group DP (b = T)",
                np.array([group.b], float),
                np.array([group.eps_dp]),
                symbol="square",
                size=11,
                color="#7f7f7f",
            ),
        ]
        fig, notes = line_figure(
            traces,
            x_title="b — entries in the high-influence window H",
            y_title="per-entry ε_DP allowed at b",
            y_name="ε_DP",
        )
        fig.add_hline(y=group.eps_dp, line_dash="dot", line_color="#7f7f7f")
        show_figure(fig, notes, key="calibrate_chart")
        unusable = b_all.size - b_usable.size
        if unusable:
            st.caption(f"{unusable} value(s) of b are not drawn: there a(b) ≥ ε_puffer, so no ε_DP works at that b.")
        # b where a(b) ≥ ε_puffer allows no ε_DP: an empty cell in the table
        allowed_at = pd.Series(allowed, index=b_usable).reindex(b_all.astype(int)).to_numpy()
        table = pd.DataFrame({"b": b_all.astype(int), "a(b)": a_all, "ε_DP allowed": allowed_at})
        csv_download(table, "calibration.csv", "Download this curve (CSV)", key="w_download_cal")

    with reverse:
        eps_dp = state.number_input(
            st.columns([1, 2])[0],
            "Per-entry ε_DP of your mechanism",
            state.EPS_DP,
            step=0.01,
            format="%.4f",
            key="w_eps_dp",
        )
        cert = certify(curve, eps_dp)
        group_eps = float(group_dp_cumulative(curve.length, [eps_dp])[-1])  # T·ε_DP: group privacy (docs/math.md §1)
        r1, r2, r3, r4 = st.columns(4)
        r1.metric("Guaranteed ε_puffer", fmt(cert.eps_puffer))
        r2.metric("At window b", cert.b)
        r3.metric("a(b)", fmt(cert.a))
        r4.metric("Group DP would say", fmt(group_eps), help="T · ε_DP: group privacy over the whole sequence.")
        st.markdown(
            f"ε_puffer = min over b of b·ε_DP + a(b) = **{fmt(cert.eps_puffer)}**; group DP accounting"
            f" of the same mechanism gives T·ε_DP = {fmt(group_eps)}"
            f" ({group_eps / cert.eps_puffer:.3g} times as much)."
        )
        b_cert, bound = certify_objective(curve, eps_dp)
        traces = [
            Trace("b·ε_DP + a(b)", b_cert.astype(float), bound),
            Trace("minimum", np.array([cert.b], float), np.array([cert.eps_puffer]), symbol="star", color="#d62728"),
        ]
        fig, notes = line_figure(
            traces,
            x_title="b — entries in the high-influence window H",
            y_title="ε_puffer guaranteed through b",
            y_name="ε_puffer",
        )
        show_figure(fig, notes, key="certify_chart")
        table = pd.DataFrame({"b": b_cert, "a(b)": a_all, "b·ε_DP + a(b)": bound})
        csv_download(table, "certification.csv", "Download this curve (CSV)", key="w_download_cert")

    if values["prior_kind"] == "gaussian":
        st.caption(JITTER_NOTE)

state.share((*state.prior_parameters(), state.EPS_PUFFER, state.EPS_DP))
