"""Simulate: run the mechanisms on uploaded, demo or real sequences and measure utility (docs/math.md §4–§7)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from app_ui import page_path
from app_ui.core import long_work, state
from app_ui.core.charts import Style, series_styles, show_figure
from app_ui.core.memo import session_memo
from app_ui.core.report import Section, html_report, offer_exports
from app_ui.core.tables import csv_download, right_aligned, static_table
from app_ui.data.picker import LoadedData, dataset_picker, simulation_report
from app_ui.gaussian.ledger import renyi_caption
from app_ui.prior.current import keep_uncertainty, use_prior
from app_ui.prior.smoothing import fitted_chain, smoothing_control, smoothing_effect_view
from app_ui.simulate import link as sim_link
from app_ui.simulate import views as views
from app_ui.simulate import words as words
from app_ui.simulate.baselines import show_baselines
from app_ui.simulate.secrets import secrets_of, simulate_secrets_section
from app_ui.simulate.settings import SimulateSettings, simulation_settings
from puffer_core.engine.spread import PriorSpread, prior_spread
from puffer_core.errors import DataError
from puffer_core.priors.fitting import transition_counts
from puffer_core.priors.models import MarkovChainPrior
from puffer_core.simulation.explain import explain_simulation
from puffer_core.simulation.run import SimulationResult, simulate

MEMO_ENTRIES = 200  # figures and tables of the results shown, kept for the session
T = TypeVar("T")

st.title("Simulate")
st.markdown(
    "Run the mechanisms on real sequences before you publish: the prior is fitted on the data"
    " (docs/math.md §6), each mechanism is calibrated for every ε_puffer of the grid, the query is"
    " answered many times with fresh noise, and its accuracy is measured against the truth"
    " (docs/math.md §7). Nothing you upload is written to disk."
)

sim_link.open_link()  # a shared link's data and form, once
state.share_button()
st.subheader("1. Data")
data = dataset_picker("sim")


def _summary(loaded: LoadedData) -> float:
    """The data's summary, the smoothing τ (returned) and the chain fitted with it."""
    seqs = loaded.stats
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Users", f"{seqs.n_users:,}")
    c2.metric("Entries", f"{seqs.n_entries:,}")
    c3.metric("States", seqs.n_states)
    c4.metric(
        "Groups",
        1 if seqs.groups is None else len(seqs.groups),
        help=f"Group column: {seqs.group_column}" if seqs.group_column else "No group column: one group.",
    )
    data_key = ("data", loaded.fingerprint, tuple(loaded.columns.items()))
    with st.expander("Everything about this dataset"):
        facts = _view((*data_key, "facts"), lambda: views.facts_table(seqs))
        st.dataframe(facts, hide_index=True, width="stretch", key="sim_facts")
    tau = smoothing_control("w_sim_smoothing", seqs.n_states)
    prior = fitted_chain(loaded, tau)
    st.markdown(
        f"**The fitted transition matrix** (the attacker's prior θ: transitions counted per user in time"
        f" order, rows normalised, smoothed with τ = {tau:g}; sequences of up to T = {prior.length} entries)"
    )
    heatmap, frame = _view((*data_key, "heatmap"), lambda: views.matrix_view(prior))
    st.plotly_chart(heatmap, key="sim_heatmap", config={"displaylogo": False})
    cols = st.columns([1, 1, 2])
    with cols[0]:
        csv_download(frame, "fitted_transition_matrix.csv", "Download the matrix (CSV)", key="w_download_matrix")
    smoothing_effect_view(loaded, tau, "sim_smoothing")
    cols[1].button(
        "Study this prior's a(b) curve",
        on_click=_use_prior,
        args=(loaded, tau),
        key="w_use_prior",
        icon=":material/show_chart:",
        help="Load the fitted chain into the Influence curves page.",
    )
    if st.session_state.pop("sim_prior_sent", False):
        st.success("The fitted chain is now the prior of the Influence curves, Calibrate and Plan pages.")
        st.page_link(page_path("curves"), label="Open Influence curves", icon=":material/arrow_forward:")
    return tau


def _use_prior(loaded: LoadedData, tau: float) -> None:
    use_prior(fitted_chain(loaded, tau), origin=loaded, smoothing=tau)  # the other pages offer its uncertainty too
    if st.session_state.get("w_sim_robust"):  # … with the draws chosen here
        state = st.session_state
        keep_uncertainty(state.get("w_sim_draws", 20), state.get("w_sim_prior_seed", 0), state.get("w_sim_alpha"))
    st.session_state["sim_prior_sent"] = True


def _spread(loaded: LoadedData, chosen: SimulateSettings) -> PriorSpread:
    """Θ, its robust curve, every member's curve and the rows driving the spread, once per data and draw settings."""
    draws, seed, alpha, tau = chosen.draws, chosen.prior_seed, chosen.concentration, chosen.smoothing

    def build() -> PriorSpread:
        with st.spinner(f"Drawing {draws} priors and computing their curves…"):
            return prior_spread(loaded.stats, draws=draws, seed=seed, concentration=alpha, smoothing=tau)

    key = (loaded.fingerprint, tuple(loaded.columns.items()), draws, alpha, seed, tau)
    return session_memo("sim_spread", key, build, max_entries=1)  # one Θ at a time: they can be large


def _prior(loaded: LoadedData, chosen: SimulateSettings) -> MarkovChainPrior | list[MarkovChainPrior]:
    return list(_spread(loaded, chosen).priors) if chosen.robust else fitted_chain(loaded, chosen.smoothing)


def _progress(bar: Any, what: str, start: float, stop: float) -> Any:
    """A progress callback that fills the part [start, stop] of the bar, its messages prefixed by ``what``."""

    def progress(fraction: float, message: str) -> None:
        bar.progress(start + (stop - start) * fraction, text=what + message)

    return progress


def _run(loaded: LoadedData, chosen: SimulateSettings) -> tuple[SimulationResult, SimulationResult | None] | None:
    bar = st.progress(0.0, text="Starting…")
    st.button("Cancel", key="w_sim_cancel", icon=":material/close:", help="Stops the run at once (any click does).")
    runs = [("", 0.0, 1.0)]
    if chosen.robust:
        runs = [("robust Θ: ", 0.0, 0.6), ("fitted prior alone: ", 0.6, 1.0)]
    results = []
    try:
        windows = chosen.release_mode == "windows"
        if chosen.postprocess:  # the smoother needs each user's sequence (docs/math.md §14)
            data_for_run = loaded.sequences
        else:
            data_for_run = loaded.windows(chosen.releases) if windows else loaded.stats
        priors = [_prior(loaded, chosen)]
        long_work.announce(priors[0])  # a long curve: its estimate (the bar shows its stages; Cancel stops it)
        if chosen.robust:
            priors.append(fitted_chain(loaded, chosen.smoothing))
        for prior, (what, start, stop) in zip(priors, runs):
            results.append(
                simulate(
                    data_for_run,
                    prior=prior,  # the chain (or Θ) the page showed, fitted once
                    query=chosen.query,
                    k=chosen.k,
                    mechanisms=list(chosen.mechanisms),
                    eps_grid=list(chosen.eps_grid),
                    releases=chosen.releases,
                    release_mode=chosen.release_mode,
                    trials=chosen.trials,
                    rng=chosen.seed,
                    progress=_progress(bar, what, start, stop),
                    topk_laplace=chosen.topk_laplace,
                    postprocess=chosen.postprocess,
                    secrets=secrets_of(chosen.secrets),  # what is secret (docs/math.md §16)
                )
            )
    except (ValueError, DataError) as exc:
        bar.empty()
        st.error(f"The simulation cannot run with these settings: {exc}")
        return None
    bar.empty()
    return results[0], (results[1] if len(results) > 1 else None)


def _view(key: tuple[Any, ...], build: Callable[[], T]) -> T:
    """What ``build`` returns, kept for the session under ``key`` (a result's figures and tables are built once)."""
    return session_memo("sim_views", key, build, MEMO_ENTRIES)


def _table(key: tuple[Any, ...], build: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """A table of the result, built once and drawn wrapped to the page's width (numbers right-aligned)."""
    frame = _view(key, build)
    static_table(_view(("styled", *key), lambda: right_aligned(frame)))
    return frame


def _uncertainty(loaded: LoadedData, chosen: SimulateSettings, robust: SimulationResult, fitted: SimulationResult,
                 metric: str, release: int, signature: tuple[Any, ...]) -> list[Section]:
    """What the robust set Θ changed: a(b) of the fit, of Θ and the draws' band; ε_DP and the metric; the rows."""
    st.markdown("**Prior uncertainty: what the robust set Θ changed**")
    spread = _spread(loaded, chosen)
    summary = _view((signature, "theta words"), lambda: words.changes_summary(robust, fitted, chosen.draws))
    st.markdown(summary)
    log_curve = st.toggle("Log scale (y)", key="w_sim_theta_log", persist_state="session")
    fig, notes = _view((signature, "theta chart", log_curve), lambda: views.theta_figure(spread, log_curve))
    show_figure(fig, notes, key="sim_theta_chart")
    key = (signature, "theta table", metric, release)
    changes = _view(key, lambda: words.changes_frame(robust, fitted, metric, release))
    if changes.empty:
        st.caption("No mechanism's ε_DP per entry or accuracy changed.")
    else:
        _table(key, lambda: changes)
        st.caption("Mechanisms and ε_puffer not listed did not change (the same seed draws the same noise).")
    rows_note = _view((signature, "theta rows"), lambda: views.spread_rows_note(spread))
    st.caption(rows_note)
    return [Section("Prior uncertainty: what the robust set Θ changed", summary, fig, changes, (rows_note,))]


@st.fragment
def _results(loaded: LoadedData, result: SimulationResult, fitted: SimulationResult | None, chosen: SimulateSettings,
             signature: tuple[Any, ...]) -> None:
    """The results of the last run; its own controls rerun only this part of the page."""
    st.subheader("Results")
    metrics = result.metrics
    release = 1
    if chosen.releases > 1:
        release = st.slider(
            "Show the accuracy of release", 1, chosen.releases, 1, key="w_sim_release_shown", persist_state="session"
        )
    if chosen.query == "topk":
        k = chosen.k
        acc_names = [n for n in dict.fromkeys(metrics["metric"]) if n.startswith("Acc@")]
        acc = st.selectbox(
            "Accuracy at rank", acc_names, key="w_sim_acc", persist_state="session", help=words.METRIC_HELP["Acc"]
        )
        shown = [acc, f"HitRate@{k}", f"NDCG@{k}", f"L1@{k}"]
    else:
        shown = ["L1"]
    styles = _view((signature, "styles"), lambda: series_styles(list(dict.fromkeys(metrics["label"]))))
    rows = _view((signature, "release rows", release), lambda: metrics[metrics["release"] == release])
    figures = []
    columns = st.columns(2)
    for i, metric in enumerate(shown):
        fig = _view(
            (signature, "interval", metric, release), lambda m=metric: views.accuracy_figure(rows, m, styles)
        )
        figures.append(fig)
        with columns[i % 2]:
            st.plotly_chart(fig, key=f"sim_chart_{metric}", config={"displaylogo": False})
    caption = "Bars: 95% intervals over trials (mean ± 1.96·sd/√trials). " + (
        " · ".join(words.METRIC_HELP[key] for key in ("HitRate", "NDCG", "L1"))
        if chosen.query == "topk"
        else "L1: Σ over states of |noisy count − true count|, averaged over groups."
    )
    st.caption(caption)
    table_metric = shown[0]
    table_heading = f"{table_metric} by ε_puffer and mechanism (release {release}, like [C] Tables 2–5)"
    st.markdown(f"**{table_heading}**")
    by_eps = _table(
        (signature, "table", table_metric, release), lambda: views.by_eps_table(result, table_metric, release)
    )

    explanation = session_memo(
        "sim_explanations",
        (signature, table_metric, release),
        lambda: explain_simulation(
            result, table_metric, release, _prior(loaded, chosen), transition_counts(loaded.stats),
            chosen.smoothing,
        ),
        max_entries=16,
    )
    best_heading = f"Best mechanism per ε_puffer on these data ({table_metric}, release {release})"
    st.markdown(f"**{best_heading}**")
    best = _table((signature, "best", table_metric, release), lambda: words.best_frame(explanation))
    st.caption("Ties: mechanisms whose 95% interval overlaps the best one's cannot be told apart with these trials.")
    note = words.what_this_shows(explanation)
    agree = words.agreement(explanation, chosen.mechanisms)
    if note:
        with st.container(border=True, key="sim_note"):
            st.markdown("**What this shows**")
            st.markdown("\n".join(f"- {line}" for line in note))
    elif agree:
        st.success(agree)
    show_baselines(result)  # the published baselines: refused, or why they win or lose (app_ui/simulate/baselines.py)

    notes = tuple(line.replace("**", "") for line in note) or ((agree,) if agree else ())
    sections = [
        Section(f"Results (release {release})", caption, figures[0]),
        *[Section(f"{metric} (release {release})", figure=fig) for metric, fig in zip(shown[1:], figures[1:])],
        Section(table_heading, table=by_eps),
        Section(best_heading, "Ties: mechanisms whose 95% interval overlaps the best one's.", table=best),
        Section("What this shows" if note else "Against the paper's ordering", notes=notes),
    ]
    sections += views.accuracy_sections(
        result, chosen, signature, table_metric, release, _view, lambda: _prior(loaded, chosen),
        loaded.stats.n_states,
    )
    if fitted is not None:
        sections += _uncertainty(loaded, chosen, result, fitted, table_metric, release, signature)
    sections += _ledger(result, chosen, styles, signature)

    st.markdown("**Take it with you**: a report (every setting, the tables, the charts and the note) and a script"
                " that recomputes these numbers with puffer_core")
    summary = (
        f"Simulation of {len(chosen.mechanisms)} mechanisms on {loaded.description}:"
        f" {chosen.trials} trials per ε_puffer, seed {chosen.seed}."
    )
    report_settings = words.report_settings(loaded, chosen)
    offer_exports(
        lambda: html_report("Pufferfish Lab — Simulate", summary, report_settings, sections),
        lambda: words.script(loaded, chosen, table_metric, release),
        "simulate",
        key="w_sim_exports",
    )
    prior_words = words.prior_words(chosen)
    with st.container(horizontal=True, key="sim_downloads"):
        csv_download(metrics, "simulation_results.csv", "Download the results (CSV)", key="w_download_results")
        csv_download(result.ledger, "simulation_ledger.csv", "Download the ledger (CSV)", key="w_download_ledger")
        st.download_button(
            "Download the report (JSON)",
            lambda: simulation_report(loaded, chosen.as_dict(), result.settings, prior_words).encode("utf-8"),
            file_name="simulation_report.json",
            mime="application/json",
            key="w_download_report",
            on_click="ignore",
            icon=":material/download:",
        )


def _ledger(
    result: SimulationResult, chosen: SimulateSettings, styles: dict[str, Style], signature: tuple[Any, ...]
) -> list[Section]:
    st.markdown("**Privacy ledger**: what the releases spend, per mechanism")
    ledger = result.ledger
    t_max = int(result.settings["t_max"])
    calibration = _table((signature, "calibration"), lambda: views.calibration_table(ledger, t_max))
    sections = [Section("Privacy ledger: how each mechanism is calibrated", table=calibration)]
    if chosen.releases == 1:
        st.caption("One release: set Releases above 1 to see how the budget adds up over time.")
        return sections
    c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
    eps_choice = c1.selectbox(
        "ε_puffer per release",
        list(chosen.eps_grid),
        index=len(chosen.eps_grid) - 1,
        key="w_sim_ledger_eps",
        persist_state="session",
        format_func=lambda e: f"{e:g}",
    )
    log_y = c2.toggle(
        "Log scale (y)",
        key="w_sim_ledger_log",
        persist_state="session",
        help="Group DP's total grows far faster than the others; a log scale keeps every line readable.",
    )
    part = _view((signature, "ledger part", eps_choice), lambda: ledger[ledger["eps_puffer"] == eps_choice])
    fig, notes, same = _view((signature, "ledger", eps_choice, log_y), lambda: views.ledger_view(part, styles, log_y))
    show_figure(fig, notes, key="sim_ledger_chart")
    if same:
        st.caption("Lines drawn on top of each other (equal totals): " + "; ".join(same) + ".")
    releases = chosen.releases
    heading = f"Cumulative ε_puffer after each release at ε_puffer = {eps_choice:g} per release"
    st.markdown(f"**After {releases} releases** at ε_puffer = {eps_choice:g} each")
    totals = _table((signature, "totals", eps_choice), lambda: views.totals_table(part))
    st.caption(
        "Composed ε_puffer: the mechanism's own accounting ([C] Theorem 6.2, or the sum for MQM). Naive sum:"
        " releases × ε_puffer. Group DP accounting: what group DP over whole sequences certifies for the same"
        " noise, T_max · Σ ε_DP (docs/math.md §4)."
        + views.smaller_bound_note(totals)
    )
    sections.append(Section(heading, figure=fig, table=totals, notes=tuple(notes)))
    return sections


if data is not None:
    smoothing = _summary(data)
    secret = simulate_secrets_section(data)  # what is secret (docs/math.md §16)
    chosen = simulation_settings(data.stats, can_postprocess=data.holds_sequences)
    if chosen is not None and secret is not None:
        chosen = replace(chosen, smoothing=smoothing, secrets=secret)
        renyi = renyi_caption(chosen.mechanisms, chosen.eps_grid)  # Gaussian noise: a Rényi ε (app_ui/gaussian)
        if renyi is not None:
            st.caption(renyi)
        sim_link.remember(data, chosen)
        signature = (data.name, tuple(data.columns.items()), data.fingerprint, chosen)
        if st.button("Run the simulation", type="primary", key="w_sim_run", icon=":material/play_arrow:"):
            ran = _run(data, chosen)
            if ran is not None:
                st.session_state["sim_result"] = (signature, ran[0])
                st.session_state["sim_fitted_result"] = (signature, ran[1])
        stored = st.session_state.get("sim_result")
        if stored is not None and stored[0] == signature:
            compare = st.session_state.get("sim_fitted_result", (None, None))
            _results(data, stored[1], compare[1] if compare[0] == signature else None, chosen, signature)
        elif stored is not None:
            st.info("The settings or the data changed since the last run: run the simulation again to see results.")
sim_link.share()
