"""Simulate: run the mechanisms on uploaded or demo sequences and measure utility (docs/math.md §4–§7)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from app_ui import page_path
from app_ui.charts import (
    Trace,
    csv_download,
    interval_figure,
    ledger_figure,
    show_figure,
    show_table,
    transition_heatmap,
)
from app_ui.data_picker import LoadedData, dataset_picker, fitted_prior, simulation_report
from app_ui.priors import use_prior
from app_ui.state import settings
from puffer_core.events import Composition
from puffer_core.mechanisms import DEFAULT_MECHANISMS, MECHANISMS, QUERIES, TOPK_LAPLACE, mechanisms_for
from puffer_core.simulation import DEFAULT_EPS_GRID, MAX_RELEASES, RELEASE_MODES, SimulationResult, simulate

QUERY_NAMES = {"topk": "Top-k states of every group", "histogram": "Histogram of every group"}
RELEASE_MODE_NAMES = {
    "repeat": "the same data again (fresh noise each time)",
    "windows": "consecutive time windows (e.g. one per month)",
}
TOPK_LAPLACE_NAMES = {
    "split": "m counts with ε/m each, then sorted (the papers' baseline)",
    "histogram": "one histogram of L1 sensitivity 2, then sorted",
}
METRIC_HELP = {
    "Acc": "Acc@j: the j-th released state is the true j-th state (docs/math.md §7)",
    "HitRate": "Hit Rate@k: share of the true top k that was released",
    "NDCG": "NDCG@k: the released ranking's discounted gain over the best possible",
    "L1": "L1 count error: how many entries the released ranking misses, summed over ranks",
}
MAX_TRIALS_UI = 5000
LEDGER_COLUMNS = {
    "label": "mechanism",
    "eps_puffer": "ε_puffer (grid)",
    "eps_dp": "ε_DP per entry",
    "a": "a(b)",
    "sigma_max": "MQM σ_max",
    "eps_puffer_release": "ε_puffer of this release",
    "cumulative_eps_puffer": "cumulative ε_puffer",
    "naive_sum": "naive sum",
    "group_dp": "group DP accounting",
    "composition": "composed by",
}
COMPOSITION_NAMES = {Composition.THEOREM_6_2: "[C] Theorem 6.2", Composition.ADDITIVE: "additive ([S] Theorem III.7)"}

st.title("Simulate")
st.markdown(
    "Run the mechanisms on real sequences before you publish: the prior is fitted on the data"
    " (docs/math.md §6), each mechanism is calibrated for every ε_puffer of the grid, the query is"
    " answered many times with fresh noise, and its accuracy is measured against the truth"
    " (docs/math.md §7). Nothing you upload is written to disk."
)

st.subheader("1. Data")
data = dataset_picker("sim")


def _summary(loaded: LoadedData) -> None:
    seqs = loaded.sequences
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Users", f"{seqs.n_users:,}")
    c2.metric("Entries", f"{seqs.n_entries:,}")
    c3.metric("States", seqs.n_states)
    c4.metric(
        "Groups",
        1 if seqs.groups is None else len(seqs.groups),
        help=f"Group column: {seqs.group_column}" if seqs.group_column else "No group column: one group.",
    )
    with st.expander("Everything about this dataset"):
        summary = seqs.summary()
        facts = pd.DataFrame({"": list(summary), "value": [str(v) for v in summary.values()]})
        st.dataframe(facts, hide_index=True, width="stretch", key="sim_facts")
    prior = fitted_prior(loaded)
    labels = list(prior.labels)
    st.markdown(
        f"**The fitted transition matrix** (the attacker's prior θ: transitions counted per user in time"
        f" order, rows normalised, smoothed with τ = 1e−5; sequences of up to T = {prior.length} entries)"
    )
    matrix = np.asarray(prior.transition)
    st.plotly_chart(transition_heatmap(matrix, labels), key="sim_heatmap", config={"displaylogo": False})
    frame = pd.DataFrame(matrix, index=labels, columns=labels).reset_index(names="from")
    cols = st.columns([1, 1, 2])
    with cols[0]:
        csv_download(frame, "fitted_transition_matrix.csv", "Download the matrix (CSV)", key="w_download_matrix")
    cols[1].button(
        "Study this prior's a(b) curve",
        on_click=_use_prior,
        args=(loaded,),
        key="w_use_prior",
        icon=":material/show_chart:",
        help="Load the fitted chain into the Influence curves page.",
    )
    if st.session_state.pop("sim_prior_sent", False):
        st.success("The fitted chain is now the prior of the Influence curves, Calibrate and Plan pages.")
        st.page_link(page_path("curves"), label="Open Influence curves", icon=":material/arrow_forward:")


def _use_prior(loaded: LoadedData) -> None:
    use_prior(fitted_prior(loaded))
    settings()["prior_kind"] = "matrix"
    st.session_state["sim_prior_sent"] = True


def _parse_grid(text: str) -> tuple[float, ...]:
    """ε_puffer values typed as '0.5, 1, 2'; ValueError with a readable message."""
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise ValueError("type at least one ε_puffer, e.g. 0.5, 1, 2")
    values = []
    for part in parts:
        try:
            value = float(part)
        except ValueError:
            raise ValueError(f"'{part}' is not a number") from None
        values.append(value)
    return tuple(dict.fromkeys(values))


def _settings(loaded: LoadedData) -> dict[str, Any] | None:
    seqs = loaded.sequences
    st.subheader("2. What to release")
    c1, c2 = st.columns(2)
    query = c1.radio(
        "Query", list(QUERIES), format_func=QUERY_NAMES.__getitem__, key="w_sim_query", persist_state="session"
    )
    k = 3
    if query == "topk":
        k = int(
            c2.number_input(
                "k (how many top states per group)",
                1,
                seqs.n_states,
                min(3, seqs.n_states),
                key="w_sim_k",
                persist_state="session",
            )
        )
    mechanisms = st.multiselect(
        "Mechanisms",
        list(mechanisms_for(query)),
        default=list(DEFAULT_MECHANISMS[query]),
        format_func=lambda name: MECHANISMS[name].label,
        key=f"w_sim_mechanisms_{query}",
        persist_state="session",
    )
    c1, c2, c3, c4 = st.columns(4)
    grid_text = c1.text_input(
        "ε_puffer grid",
        ", ".join(f"{e:g}" for e in DEFAULT_EPS_GRID),
        key="w_sim_grid",
        persist_state="session",
        help="The guarantees to compare, separated by commas.",
    )
    releases = int(
        c2.number_input(
            "Releases",
            1,
            MAX_RELEASES,
            1,
            key="w_sim_releases",
            persist_state="session",
            help="How many times the query is published (e.g. 12 for monthly).",
        )
    )
    trials = int(
        c3.number_input(
            "Trials",
            2,
            MAX_TRIALS_UI,
            200,
            step=50,
            key="w_sim_trials",
            persist_state="session",
            help="Independent repetitions; intervals are mean ± 1.96·sd/√trials.",
        )
    )
    seed = int(c4.number_input("Seed", 0, 2**31 - 1, 0, key="w_sim_seed", persist_state="session"))
    release_mode = "repeat"
    topk_laplace = "split"
    with st.expander("More options"):
        if releases > 1:
            release_mode = st.radio(
                "Each release covers",
                list(RELEASE_MODES),
                format_func=RELEASE_MODE_NAMES.__getitem__,
                key="w_sim_mode",
                persist_state="session",
            )
        if query == "topk":
            topk_laplace = st.radio(
                "Laplace mechanisms and MQM answer top-k with",
                list(TOPK_LAPLACE),
                format_func=TOPK_LAPLACE_NAMES.__getitem__,
                key="w_sim_topk_laplace",
                persist_state="session",
            )
    try:
        grid = _parse_grid(grid_text)
    except ValueError as exc:
        st.error(f"The ε_puffer grid cannot be used: {exc}.")
        return None
    if not mechanisms:
        st.error("Choose at least one mechanism.")
        return None
    return {
        "query": query,
        "k": k,
        "mechanisms": tuple(mechanisms),
        "eps_grid": grid,
        "releases": releases,
        "release_mode": release_mode,
        "trials": trials,
        "seed": seed,
        "topk_laplace": topk_laplace,
    }


def _run(loaded: LoadedData, chosen: dict[str, Any]) -> SimulationResult | None:
    bar = st.progress(0.0, text="Starting…")

    def progress(fraction: float, message: str) -> None:
        bar.progress(fraction, text=message)

    try:
        result = simulate(
            loaded.sequences,
            prior=fitted_prior(loaded),  # the chain the page showed, fitted once
            query=chosen["query"],
            k=chosen["k"],
            mechanisms=list(chosen["mechanisms"]),
            eps_grid=list(chosen["eps_grid"]),
            releases=chosen["releases"],
            release_mode=chosen["release_mode"],
            trials=chosen["trials"],
            rng=chosen["seed"],
            progress=progress,
            topk_laplace=chosen["topk_laplace"],
        )
    except ValueError as exc:
        bar.empty()
        st.error(f"The simulation cannot run with these settings: {exc}")
        return None
    bar.empty()
    return result


def _results(loaded: LoadedData, result: SimulationResult, chosen: dict[str, Any]) -> None:
    st.subheader("Results")
    metrics = result.metrics
    names = list(dict.fromkeys(metrics["metric"]))
    release = 1
    if chosen["releases"] > 1:
        release = st.slider(
            "Show the accuracy of release", 1, chosen["releases"], 1, key="w_sim_release_shown", persist_state="session"
        )
    rows = metrics[metrics["release"] == release]
    if chosen["query"] == "topk":
        k = chosen["k"]
        acc_names = [n for n in names if n.startswith("Acc@")]
        acc = st.selectbox(
            "Accuracy at rank", acc_names, key="w_sim_acc", persist_state="session", help=METRIC_HELP["Acc"]
        )
        shown = [acc, f"HitRate@{k}", f"NDCG@{k}", f"L1@{k}"]
    else:
        shown = ["L1"]
    columns = st.columns(2)
    for i, metric in enumerate(shown):
        with columns[i % 2]:
            st.plotly_chart(
                interval_figure(rows[rows["metric"] == metric], metric, "ε_puffer per release"),
                key=f"sim_chart_{metric}",
                config={"displaylogo": False},
            )
    st.caption(
        "Bars: 95% intervals over trials (mean ± 1.96·sd/√trials). "
        + (
            " · ".join(METRIC_HELP[key] for key in ("HitRate", "NDCG", "L1"))
            if chosen["query"] == "topk"
            else "L1: Σ over states of |noisy count − true count|, averaged over groups."
        )
    )
    table_metric = shown[0]
    st.markdown(f"**{table_metric} by ε_puffer and mechanism** (release {release}, like [C] Tables 2–5)")
    by_eps = result.table(table_metric, release).reset_index().rename(columns={"eps_puffer": "ε_puffer"})
    show_table(by_eps, key="sim_table", width="stretch")

    st.markdown("**Privacy ledger**: what the releases spend, per mechanism")
    ledger = result.ledger
    if chosen["releases"] > 1:
        eps_choice = st.selectbox(
            "ε_puffer per release",
            list(chosen["eps_grid"]),
            index=len(chosen["eps_grid"]) - 1,
            key="w_sim_ledger_eps",
            persist_state="session",
            format_func=lambda e: f"{e:g}",
        )
        part = ledger[ledger["eps_puffer"] == eps_choice]
        traces = []
        for label, rows_l in part.groupby("label", sort=False):
            x = rows_l["release"].to_numpy(dtype=float)
            traces.append(Trace(f"{label}", x, rows_l["cumulative_eps_puffer"].to_numpy(dtype=float)))
        first = part[part["mechanism"] == part["mechanism"].iloc[0]]
        x = first["release"].to_numpy(dtype=float)
        traces.append(Trace("naive sum", x, first["naive_sum"].to_numpy(dtype=float), dash="dash"))
        pufferfish = part[part["composition"] == Composition.THEOREM_6_2]
        if not pufferfish.empty:
            ref = pufferfish[pufferfish["mechanism"] == pufferfish["mechanism"].iloc[0]]
            traces.append(
                Trace(
                    f"group DP accounting of {ref['label'].iloc[0]}",
                    x,
                    ref["group_dp"].to_numpy(dtype=float),
                    dash="dot",
                )
            )
        fig, notes = ledger_figure(traces, height=340)
        show_figure(fig, notes, key="sim_ledger_chart")
    else:
        st.caption("One release: set Releases above 1 to see how the budget adds up over time.")
    shown_ledger = ledger.drop(columns=["mechanism"]).astype({"b": "float", "a": "float", "sigma_max": "float"})
    shown_ledger["composition"] = shown_ledger["composition"].map(COMPOSITION_NAMES)
    shown_ledger = shown_ledger.rename(columns=LEDGER_COLUMNS)
    show_table(shown_ledger, key="sim_ledger", width="stretch", height=260)

    report = simulation_report(loaded, chosen, result.settings)
    c1, c2, c3 = st.columns(3)
    with c1:
        csv_download(metrics, "simulation_results.csv", "Download the results (CSV)", key="w_download_results")
    with c2:
        csv_download(ledger, "simulation_ledger.csv", "Download the ledger (CSV)", key="w_download_ledger")
    with c3:
        st.download_button(
            "Download the report (JSON)",
            report.encode("utf-8"),
            file_name="simulation_report.json",
            mime="application/json",
            key="w_download_report",
            on_click="ignore",
            icon=":material/download:",
        )


if data is not None:
    _summary(data)
    chosen = _settings(data)
    if chosen is not None:
        signature = (data.name, tuple(data.columns.items()), data.fingerprint, tuple(chosen.items()))
        if st.button("Run the simulation", type="primary", key="w_sim_run", icon=":material/play_arrow:"):
            result = _run(data, chosen)
            if result is not None:
                st.session_state["sim_result"] = (signature, result)
        stored = st.session_state.get("sim_result")
        if stored is not None and stored[0] == signature:
            _results(data, stored[1], chosen)
        elif stored is not None:
            st.info("The settings or the data changed since the last run: run the simulation again to see results.")
