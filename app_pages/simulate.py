"""Simulate: run the mechanisms on uploaded, demo or real sequences and measure utility (docs/math.md §4–§7)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_ui import page_path
from app_ui import simulate_text as words
from app_ui.charts import (
    Trace,
    csv_download,
    display_table,
    fmt,
    interval_figure,
    ledger_figure,
    line_figure,
    show_figure,
    transition_heatmap,
)
from app_ui.data_picker import LoadedData, dataset_picker, fitted_prior, simulation_report
from app_ui.priors import use_prior
from app_ui.report import Section, html_report, offer_exports
from app_ui.state import settings
from puffer_core.errors import DataError
from puffer_core.events import Composition
from puffer_core.explain import Explanation, explain_simulation
from puffer_core.mechanisms import DEFAULT_MECHANISMS, MECHANISMS, QUERIES, TOPK_LAPLACE, mechanisms_for
from puffer_core.priors import MarkovChainPrior
from puffer_core.robust import PriorSpread, prior_spread
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
MEMO_ENTRIES = 200  # figures and tables of the results shown, kept for the session
T = TypeVar("T")
DEFAULT_DRAWS = 20  # posterior draws in Θ: enough to see the spread, quick at every validated size
MAX_DRAWS_UI = 200
COMPOSITION_NAMES = {Composition.THEOREM_6_2: "[C] Theorem 6.2", Composition.ADDITIVE: "additive ([S] Thm III.7)"}

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
        help="The guarantees to compare, separated by commas; each must be positive.",
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
    grid = words.parse_grid(grid_text)  # checked as typed, before anything runs
    for problem in grid.problems:
        st.error(f"The ε_puffer grid cannot be used: {problem}.")
    for note in grid.notes:
        st.caption(note)
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
    robust = _uncertainty_settings(seqs.n_states)
    if grid.problems:
        return None
    if not mechanisms:
        st.error("Choose at least one mechanism.")
        return None
    return {
        "query": query,
        "k": k,
        "mechanisms": tuple(mechanisms),
        "eps_grid": grid.values,
        "releases": releases,
        "release_mode": release_mode,
        "trials": trials,
        "seed": seed,
        "topk_laplace": topk_laplace,
        **robust,
    }


def _uncertainty_settings(n_states: int) -> dict[str, Any]:
    robust = st.toggle(
        "Prior uncertainty: calibrate with a robust set Θ of priors",
        key="w_sim_robust",
        persist_state="session",
        help="The fitted chain is an estimate from finite data. Θ adds Dirichlet posterior draws of every row"
        " (rows seen rarely vary most) and every mechanism is calibrated for all of them at once"
        " (docs/math.md §12, §2.1).",
    )
    if not robust:
        return {"robust": False}
    c1, c2, c3 = st.columns(3)
    draws = int(
        c1.number_input(
            "Posterior draws M",
            1,
            MAX_DRAWS_UI,
            DEFAULT_DRAWS,
            key="w_sim_draws",
            persist_state="session",
            help="Θ = the fit and M draws; more draws cover more of the posterior and take longer.",
        )
    )
    concentration = c2.number_input(
        "Dirichlet α₀ per count",
        min_value=0.0001,
        max_value=100.0,
        value=None,
        format="%.4g",
        placeholder=f"1/K = {1 / n_states:.3g}",
        key="w_sim_alpha",
        persist_state="session",
        help="Added to every transition count before drawing a row; empty: 1/K.",
    )
    prior_seed = int(
        c3.number_input("Draw seed", 0, 2**31 - 1, 0, key="w_sim_prior_seed", persist_state="session")
    )
    return {
        "robust": True,
        "draws": draws,
        "concentration": None if concentration is None else float(concentration),
        "prior_seed": prior_seed,
    }


def _spread(loaded: LoadedData, chosen: dict[str, Any]) -> PriorSpread:
    """Θ, its robust curve, every member's curve and the rows driving the spread, once per data and draw settings."""
    cache = st.session_state.setdefault("sim_spreads", {})
    draws, seed, alpha = chosen["draws"], chosen["prior_seed"], chosen["concentration"]
    key = (loaded.fingerprint, tuple(loaded.columns.items()), draws, alpha, seed)
    if key not in cache:
        with st.spinner(f"Drawing {draws} priors and computing their curves…"):
            cache.clear()  # one Θ at a time: they can be large
            cache[key] = prior_spread(loaded.sequences, draws=draws, seed=seed, concentration=alpha)
    return cache[key]


def _prior(loaded: LoadedData, chosen: dict[str, Any]) -> MarkovChainPrior | list[MarkovChainPrior]:
    return list(_spread(loaded, chosen).priors) if chosen["robust"] else fitted_prior(loaded)


def _progress(bar: Any, what: str, start: float, stop: float) -> Any:
    """A progress callback that fills the part [start, stop] of the bar, its messages prefixed by ``what``."""

    def progress(fraction: float, message: str) -> None:
        bar.progress(start + (stop - start) * fraction, text=what + message)

    return progress


def _run(loaded: LoadedData, chosen: dict[str, Any]) -> tuple[SimulationResult, SimulationResult | None] | None:
    bar = st.progress(0.0, text="Starting…")
    runs = [("", 0.0, 1.0)]
    if chosen["robust"]:
        runs = [("robust Θ: ", 0.0, 0.6), ("fitted prior alone: ", 0.6, 1.0)]
    results = []
    try:
        priors = [_prior(loaded, chosen)]
        if chosen["robust"]:
            priors.append(fitted_prior(loaded))
        for prior, (what, start, stop) in zip(priors, runs):
            results.append(
                simulate(
                    loaded.sequences,
                    prior=prior,  # the chain (or Θ) the page showed, fitted once
                    query=chosen["query"],
                    k=chosen["k"],
                    mechanisms=list(chosen["mechanisms"]),
                    eps_grid=list(chosen["eps_grid"]),
                    releases=chosen["releases"],
                    release_mode=chosen["release_mode"],
                    trials=chosen["trials"],
                    rng=chosen["seed"],
                    progress=_progress(bar, what, start, stop),
                    topk_laplace=chosen["topk_laplace"],
                )
            )
    except (ValueError, DataError) as exc:
        bar.empty()
        st.error(f"The simulation cannot run with these settings: {exc}")
        return None
    bar.empty()
    return results[0], (results[1] if len(results) > 1 else None)


def _explanation(key: tuple[Any, ...], result: SimulationResult, metric: str, release: int, prior: Any) -> Explanation:
    """explain_simulation once per result, metric and release (kept for the session)."""
    cache = st.session_state.setdefault("sim_explanations", {})
    if key not in cache:
        if len(cache) > 16:
            cache.clear()
        cache[key] = explain_simulation(result, metric, release, prior)
    return cache[key]


def _memo(key: tuple[Any, ...], build: Callable[[], T]) -> T:
    """What ``build`` returns, kept for the session under ``key`` (a result's figures and tables are built once)."""
    cache = st.session_state.setdefault("sim_memo", {})
    if key not in cache:
        if len(cache) > MEMO_ENTRIES:
            cache.clear()
        cache[key] = build()
    return cache[key]


def _styler(frame: pd.DataFrame) -> Any:
    numeric = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    # "!important": the table's own stylesheet aligns every cell left
    return display_table(frame).style.set_properties(subset=numeric, **{"text-align": "right !important"})


def _table(frame: pd.DataFrame, key: tuple[Any, ...]) -> None:
    """A static table that wraps its text to the page's width (no sideways scrolling); numbers right-aligned."""
    st.table(_memo(("styler", *key), lambda: _styler(frame)), hide_index=True)


def _styled(fig: go.Figure, styles: dict[str, tuple[str, str]]) -> go.Figure:
    """Give each mechanism's series its dash and marker, so that series differ without colour."""
    for trace in fig.data:
        if trace.name in styles:
            dash, symbol = styles[trace.name]
            trace.update(line={"dash": dash}, marker={"symbol": symbol, "size": 8})
    return fig


def _calibration_table(ledger: pd.DataFrame, t_max: int) -> pd.DataFrame:
    """Release 1 of each mechanism and ε_puffer: ε_DP per entry, where it is calibrated, how releases compose."""
    rows = ledger[ledger["release"] == 1]

    def where(row: pd.Series) -> str:
        if not pd.isna(row["sigma_max"]):
            return f"σ_max = {fmt(float(row['sigma_max']))}"
        if int(row["b"]) >= t_max:
            return f"b = T = {int(row['b'])} (group DP)"
        return f"b = {int(row['b'])}, a(b) = {fmt(float(row['a']))}"

    return pd.DataFrame(
        {
            "mechanism": rows["label"].to_numpy(),
            "ε_puffer": [f"{e:g}" for e in rows["eps_puffer"]],
            "ε_DP per entry": rows["eps_dp"].to_numpy(dtype=float),
            "calibrated at": [where(row) for _, row in rows.iterrows()],
            "releases compose by": [COMPOSITION_NAMES.get(c, str(c)) for c in rows["composition"]],
        }
    )


def _ledger_traces(part: pd.DataFrame, styles: dict[str, tuple[str, str]]) -> list[Trace]:
    """Cumulative ε_puffer per release for one ε_puffer: one trace per mechanism, the naive sum and group DP."""
    traces = []
    for label, rows_l in part.groupby("label", sort=False):
        x = rows_l["release"].to_numpy(dtype=float)
        y = rows_l["cumulative_eps_puffer"].to_numpy(dtype=float)
        traces.append(Trace(str(label), x, y, dash=styles.get(str(label), ("solid", "circle"))[0]))
    first = part[part["mechanism"] == part["mechanism"].iloc[0]]
    x = first["release"].to_numpy(dtype=float)
    traces.append(Trace("naive sum", x, first["naive_sum"].to_numpy(dtype=float), dash="dash", width=1.5))
    pufferfish = part[part["composition"] == Composition.THEOREM_6_2]
    if not pufferfish.empty:
        ref = pufferfish[pufferfish["mechanism"] == pufferfish["mechanism"].iloc[0]]
        name = f"group DP accounting of {ref['label'].iloc[0]}"
        traces.append(Trace(name, x, ref["group_dp"].to_numpy(dtype=float), dash="dot", width=1.5))
    return traces


def _ledger_figure(
    part: pd.DataFrame, styles: dict[str, tuple[str, str]], log_y: bool
) -> tuple[go.Figure, list[str], list[str]]:
    """The ledger chart of one ε_puffer, its notes, and the groups of lines drawn on top of each other."""
    traces = _ledger_traces(part, styles)
    fig, notes = ledger_figure(traces, log_y=log_y, height=360)
    return _styled(fig, styles), notes, _coinciding(traces)


def _coinciding(traces: list[Trace]) -> list[str]:
    """Groups of traces with the same values at every release (drawn on top of each other), as text."""
    groups: list[list[Trace]] = []
    for trace in traces:
        home = next((g for g in groups if np.allclose(g[0].y, trace.y, rtol=1e-9, atol=0)), None)
        if home is None:
            groups.append([trace])
        else:
            home.append(trace)
    return [", ".join(t.label for t in g) for g in groups if len(g) > 1]


def _totals(part: pd.DataFrame) -> pd.DataFrame:
    """After the last release, per mechanism: the composed ε_puffer, the naive sum and group DP's accounting."""
    last = part[part["release"] == part["release"].max()]
    return pd.DataFrame(
        {
            "mechanism": last["label"].to_numpy(),
            "composed ε_puffer": last["cumulative_eps_puffer"].to_numpy(dtype=float),
            "naive sum": last["naive_sum"].to_numpy(dtype=float),
            "group DP accounting": last["group_dp"].to_numpy(dtype=float),
        }
    )


def _theta_figure(spread: PriorSpread, log_y: bool) -> tuple[go.Figure, list[str]]:
    """a(b) of the fitted prior, of Θ (calibrated with) and the draws' 5%–95% band."""
    b = np.asarray(spread.robust.b, dtype=float)
    low, high = spread.band()
    traces = [
        Trace("fitted prior", b, spread.fit, dash="solid"),
        Trace("robust Θ (calibrated with)", b, np.asarray(spread.robust.a, dtype=float), dash="dash"),
        Trace("draws: 5% quantile", b, low, dash="dot", width=1.5, markers=False),
        Trace("draws: 95% quantile", b, high, dash="dot", width=1.5, markers=False),
    ]
    return line_figure(traces, "b (entries hidden around the secret)", "a(b)", log_y=log_y, height=320)


def _uncertainty(loaded: LoadedData, chosen: dict[str, Any], robust: SimulationResult, fitted: SimulationResult,
                 metric: str, release: int, signature: tuple[Any, ...]) -> list[Section]:
    """What the robust set Θ changed: a(b) of the fit, of Θ and the draws' band; ε_DP and the metric; the rows."""
    st.markdown("**Prior uncertainty: what the robust set Θ changed**")
    spread = _spread(loaded, chosen)
    summary = _memo((signature, "theta words"), lambda: words.changes_summary(robust, fitted, chosen["draws"]))
    st.markdown(summary)
    log_curve = st.toggle("Log scale (y)", key="w_sim_theta_log", persist_state="session")
    fig, notes = _memo((signature, "theta chart", log_curve), lambda: _theta_figure(spread, log_curve))
    show_figure(fig, notes, key="sim_theta_chart")
    key = (signature, "theta table", metric, release)
    changes = _memo(key, lambda: words.changes_frame(robust, fitted, metric, release))
    if changes.empty:
        st.caption("No mechanism's ε_DP per entry or accuracy changed.")
    else:
        _table(changes, key)
        st.caption("Mechanisms and ε_puffer not listed did not change (the same seed draws the same noise).")
    rows = spread.rows().head(3)
    rows_text = ", ".join(
        f"{r.state} ({int(r.visits):,} transitions seen)" for r in rows.itertuples(index=False)
    )
    rows_note = (
        f"Rows that drive the spread of a({spread.row_b}) most (one row drawn at a time): {rows_text}."
        " Rows seen rarely are guesses; more data on them narrows Θ."
    )
    st.caption(rows_note)
    return [Section("Prior uncertainty: what the robust set Θ changed", summary, fig, changes, (rows_note,))]


def _by_eps(result: SimulationResult, metric: str, release: int) -> pd.DataFrame:
    """One metric's means: a row per ε_puffer, a column per mechanism (like [C] Tables 2–5)."""
    frame = result.table(metric, release).reset_index().rename(columns={"eps_puffer": "ε_puffer"})
    frame.columns.name = None
    return frame


def _results(loaded: LoadedData, result: SimulationResult, fitted: SimulationResult | None, chosen: dict[str, Any],
             signature: tuple[Any, ...]) -> None:
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
    styles = words.series_styles(list(dict.fromkeys(metrics["label"])))
    figures = []
    columns = st.columns(2)
    for i, metric in enumerate(shown):
        fig = _memo(
            (signature, "interval", metric, release),
            lambda m=metric: _styled(interval_figure(rows[rows["metric"] == m], m, "ε_puffer per release"), styles),
        )
        figures.append(fig)
        with columns[i % 2]:
            st.plotly_chart(fig, key=f"sim_chart_{metric}", config={"displaylogo": False})
    caption = "Bars: 95% intervals over trials (mean ± 1.96·sd/√trials). " + (
        " · ".join(METRIC_HELP[key] for key in ("HitRate", "NDCG", "L1"))
        if chosen["query"] == "topk"
        else "L1: Σ over states of |noisy count − true count|, averaged over groups."
    )
    st.caption(caption)
    table_metric = shown[0]
    table_heading = f"{table_metric} by ε_puffer and mechanism (release {release}, like [C] Tables 2–5)"
    st.markdown(f"**{table_heading}**")
    by_eps = _memo((signature, "table", table_metric, release), lambda: _by_eps(result, table_metric, release))
    _table(by_eps, (signature, "table", table_metric, release))

    prior = _prior(loaded, chosen)
    explanation = _explanation((signature, table_metric, release), result, table_metric, release, prior)
    best = _memo((signature, "best", table_metric, release), lambda: words.best_frame(explanation))
    best_heading = f"Best mechanism per ε_puffer on these data ({table_metric}, release {release})"
    st.markdown(f"**{best_heading}**")
    _table(best, (signature, "best", table_metric, release))
    st.caption("Ties: mechanisms whose 95% interval overlaps the best one's cannot be told apart with these trials.")
    note = words.what_this_shows(explanation)
    agree = words.agreement(explanation, chosen["mechanisms"])
    if note:
        with st.container(border=True, key="sim_note"):
            st.markdown("**What this shows**")
            st.markdown("\n".join(f"- {line}" for line in note))
    elif agree:
        st.success(agree)

    notes = tuple(line.replace("**", "") for line in note) or ((agree,) if agree else ())
    sections = [
        Section(f"Results (release {release})", caption, figures[0]),
        *[Section(f"{metric} (release {release})", figure=fig) for metric, fig in zip(shown[1:], figures[1:])],
        Section(table_heading, table=by_eps),
        Section(best_heading, "Ties: mechanisms whose 95% interval overlaps the best one's.", table=best),
        Section("What this shows" if note else "Against the paper's ordering", notes=notes),
    ]
    if fitted is not None:
        sections += _uncertainty(loaded, chosen, result, fitted, table_metric, release, signature)
    sections += _ledger(result, chosen, styles, signature)

    json_report = _memo(
        (signature, "json"),
        lambda: simulation_report(loaded, chosen, result.settings, words.prior_words(chosen) if fitted else None),
    )
    st.markdown("**Take it with you**: a report (every setting, the tables, the charts and the note) and a script"
                " that recomputes these numbers with puffer_core")
    report_key = (signature, table_metric, release, st.session_state.get("w_sim_ledger_eps"),
                  st.session_state.get("w_sim_ledger_log"), st.session_state.get("w_sim_theta_log"))
    exports = st.session_state.get("sim_exports")
    if exports is None or exports[0] != report_key:
        summary = (
            f"Simulation of {len(chosen['mechanisms'])} mechanisms on {loaded.description}:"
            f" {chosen['trials']} trials per ε_puffer, seed {chosen['seed']}."
        )
        html = html_report("Pufferfish Lab — Simulate", summary, words.report_settings(loaded, chosen), sections)
        exports = (report_key, html, words.script(loaded, chosen, table_metric, release))
        st.session_state["sim_exports"] = exports
    with st.columns([3, 2])[0]:  # the two buttons side by side, not pushed to the far right
        offer_exports(exports[1], exports[2], "simulate", key="w_sim_exports")
    with st.container(horizontal=True, key="sim_downloads"):
        csv_download(metrics, "simulation_results.csv", "Download the results (CSV)", key="w_download_results")
        csv_download(result.ledger, "simulation_ledger.csv", "Download the ledger (CSV)", key="w_download_ledger")
        st.download_button(
            "Download the report (JSON)",
            json_report.encode("utf-8"),
            file_name="simulation_report.json",
            mime="application/json",
            key="w_download_report",
            on_click="ignore",
            icon=":material/download:",
        )


def _ledger(
    result: SimulationResult, chosen: dict[str, Any], styles: dict[str, tuple[str, str]], signature: tuple[Any, ...]
) -> list[Section]:
    st.markdown("**Privacy ledger**: what the releases spend, per mechanism")
    ledger = result.ledger
    calibration = _memo((signature, "calibration"), lambda: _calibration_table(ledger, int(result.settings["t_max"])))
    _table(calibration, (signature, "calibration"))
    sections = [Section("Privacy ledger: how each mechanism is calibrated", table=calibration)]
    if chosen["releases"] == 1:
        st.caption("One release: set Releases above 1 to see how the budget adds up over time.")
        return sections
    c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
    eps_choice = c1.selectbox(
        "ε_puffer per release",
        list(chosen["eps_grid"]),
        index=len(chosen["eps_grid"]) - 1,
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
    part = ledger[ledger["eps_puffer"] == eps_choice]
    fig, notes, same = _memo((signature, "ledger", eps_choice, log_y), lambda: _ledger_figure(part, styles, log_y))
    show_figure(fig, notes, key="sim_ledger_chart")
    if same:
        st.caption("Lines drawn on top of each other (equal totals): " + "; ".join(same) + ".")
    releases = chosen["releases"]
    heading = f"Cumulative ε_puffer after each release at ε_puffer = {eps_choice:g} per release"
    totals = _memo((signature, "totals", eps_choice), lambda: _totals(part))
    st.markdown(f"**After {releases} releases** at ε_puffer = {eps_choice:g} each")
    _table(totals, (signature, "totals", eps_choice))
    st.caption(
        "Composed ε_puffer: the mechanism's own accounting ([C] Theorem 6.2, or the sum for MQM). Naive sum:"
        " releases × ε_puffer. Group DP accounting: what group DP over whole sequences certifies for the same"
        " noise, T_max · Σ ε_DP (docs/math.md §4)."
    )
    sections.append(Section(heading, figure=fig, table=totals, notes=tuple(notes)))
    return sections


if data is not None:
    _summary(data)
    chosen = _settings(data)
    if chosen is not None:
        signature = (data.name, tuple(data.columns.items()), data.fingerprint, tuple(chosen.items()))
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
