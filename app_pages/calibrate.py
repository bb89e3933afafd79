"""Calibrate: target ε_puffer → per-entry ε_DP through the a(b) curve, and back (docs/math.md §3)."""

from __future__ import annotations

import streamlit as st

from app_ui.accuracy.risk import risk_section
from app_ui.accuracy.views import accuracy_section, chains_of
from app_ui.calibrate import accuracy_link
from app_ui.calibrate.settings import CalibrateSettings
from app_ui.calibrate.views import (
    Numbers,
    calibration_view,
    comparison,
    forward_text,
    numbers,
    report_builder,
    report_settings,
    reverse_text,
    script,
)
from app_ui.core import inputs, state
from app_ui.core.charts import show_figure
from app_ui.core.report import offer_exports
from app_ui.core.tables import csv_download, fmt, show_table
from app_ui.gaussian.ledger import renyi_accuracy
from app_ui.gaussian.views import gaussian_block, gaussian_report, gaussian_section, gaussian_settings
from app_ui.population.exports import population_sections
from app_ui.population.section import population_section
from app_ui.prior.current import (
    JITTER_NOTE,
    Uncertainty,
    fitted_data,
    prior_sections,
    prior_summary,
    uncertainty,
    uncertainty_controls,
)
from app_ui.prior.settings import PriorChoice
from app_ui.secrets.controls import secrets_section
from app_ui.secrets.page import page_curve, protected, report_part, value_secrets
from puffer_core.priors.kinds import GAUSSIAN

st.title("Calibrate")
st.markdown(
    "A mechanism that is ε_DP-differentially private **per entry** is ε_puffer-Pufferfish private"
    " for any curve point with a(b) < ε_puffer and ε_DP ≤ (ε_puffer − a(b)) / b ([C] Theorem"
    ' "Translation", docs/math.md §3). The best point gives the most budget, hence the least noise;'
    " group DP over the whole sequence (b = T, a = 0) is always a candidate."
)

state.show_ignored_link_settings()
state.share_button()

current = prior_summary()

if current is not None:
    secrets_section(PriorChoice.from_session())  # what is secret (docs/math.md §16)
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
    everything = spread.spread.robust if spread is not None else current.curve

    state.radio(st, "b axis", state.B_AXIS, state.B_AXES, horizontal=True, key="w_cal_b_axis", help=state.B_AXIS_HELP)

    accuracy_link.open_link()  # a link's accuracy target, once
    forward, reverse, accuracy, risk, gaussian = st.tabs(
        ["ε_puffer → ε_DP", "ε_DP → ε_puffer", accuracy_link.ACCURACY_TAB, "ε as attacker risk",
         "Gaussian noise (Rényi)"],
        default=accuracy_link.opened_tab(),
    )
    with forward:
        state.number_input(
            st.columns([1, 2])[0],
            "Target ε_puffer (the Pufferfish guarantee you want)",
            state.EPS_PUFFER,
            step=0.1,
            key="w_eps",
        )
    with reverse:
        state.number_input(
            st.columns([1, 2])[0],
            "Per-entry ε_DP of your mechanism",
            state.EPS_DP,
            step=0.01,
            format="%.4f",
            key="w_eps_dp",
        )
    inputs.stop_if_invalid()  # a value out of range: no result for another one
    settings = CalibrateSettings.from_session()  # as the controls above left them
    prior = settings.prior
    curve = page_curve(settings.secrets, prior, everything, spread)  # for the chosen secrets
    chains = list(spread.spread.priors) if spread is not None else chains_of(prior.kind, prior.params)
    prior_key = spread.key if spread is not None else (prior.kind, prior.params)
    prior_key = (*prior_key, *settings.secrets.link_key)
    view = calibration_view(curve, settings.eps_puffer, settings.eps_dp, settings.b_axis)
    n = view.numbers
    table = view.table.frame

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
        (st.info if n.cal.group_dp else st.success)(forward_text(n))
        protected(settings.secrets, prior, settings.eps_puffer, everything, curve)
        show_figure(view.forward, view.forward_notes, key="calibrate_chart")
        csv_download(table.iloc[:, :3], "calibration.csv", "Download this curve (CSV)", key="w_download_cal")

    with reverse:
        r1, r2, r3, r4 = st.columns(4)
        r1.metric("Guaranteed ε_puffer", fmt(n.cert.eps_puffer))
        r2.metric("At window b", n.cert.b)
        r3.metric("a(b)", fmt(n.cert.a))
        r4.metric("Group DP would say", fmt(n.group_eps), help="T · ε_DP: group privacy over the whole sequence.")
        st.markdown(reverse_text(n, bold=True))
        show_figure(view.reverse, view.reverse_notes, key="certify_chart")
        certification = table[["b", "a(b)", "b·ε_DP + a(b)"]]
        csv_download(certification, "certification.csv", "Download this curve (CSV)", key="w_download_cert")

    with accuracy:
        chosen_accuracy = accuracy_section(prior_key, curve, chains, settings.eps_puffer)
        if chosen_accuracy is not None and settings.gaussian.on:  # the Rényi mechanisms, in their own table
            renyi_accuracy(prior_key, chosen_accuracy[0], curve, chains)
        elif chosen_accuracy is not None:
            st.caption("Gaussian noise for the same target: switch it on in the tab *Gaussian noise (Rényi)*.")
        accuracy_link.remember()
        accuracy_link.carry_back(None if chosen_accuracy is None else chosen_accuracy[1])
    with risk:
        risk_section(prior_key, chains, settings.eps_puffer)
    with gaussian:
        gauss = gaussian_section(prior_key, chains, settings.eps_puffer,
                                 *value_secrets(settings.secrets, prior, "Gaussian noise"))

    fit: Numbers | None = None
    if spread is not None:
        fit = numbers(page_curve(settings.secrets, prior, current.curve), settings.eps_puffer, settings.eps_dp)
        st.markdown("**Robust Θ against the fitted chain alone**: what allowing for the estimation error costs.")
        numbers_right = {c: st.column_config.TextColumn(c, alignment="right") for c in ("fitted chain", "robust Θ")}
        show_table(comparison(fit, n), key="cal_comparison", width="stretch", column_config=numbers_right)
        st.markdown("**The rows that drive the spread** (visits: transitions seen leaving the state in the data)")
        rows = spread.spread.rows()
        show_table(rows, key="cal_spread_rows", height=min(38 + 35 * len(rows), 320), width="stretch")

    if prior.kind == GAUSSIAN.name:
        st.caption(JITTER_NOTE)

    whole = population_section(prior, settings.eps_puffer, n.cal.eps_dp)  # whole-population secrets (math.md §16)

    st.markdown("**Take this decision with you**: a report to read or share, and a script that recomputes it.")
    description = current.description
    shown = report_settings(settings, description, spread) | (gaussian_settings(gauss) if gauss else {})
    sections = [*prior_sections(prior.kind, prior.params), *([gaussian_report(gauss)] if gauss else [])]
    offer_exports(
        report_builder(view, shown, spread, fit,
                       [*sections, report_part(settings.secrets, prior, settings.eps_puffer, everything, curve),
                        *population_sections(whole)],
                       chosen_accuracy),
        lambda: script(settings, description, spread, chosen_accuracy, gaussian_block(gauss) if gauss else None),
        "calibrate",
        key="w_cal_exports",
    )

state.share(CalibrateSettings.from_session().link())
