"""Classroom: privacy collapse run by run, and a tiny chain audited exactly (docs/math.md §8, §9).

Each tab is a fragment: its controls rerun only that tab, and its numbers are cached views
(:mod:`app_ui.classroom.views`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from app_ui.classroom.optimum import optimum_step
from app_ui.classroom.views import (
    EXAMPLES,
    MAX_K_CHECKED,
    MAX_RUNS,
    chain_view,
    collapse_view,
    example_model,
    example_parameters,
    excess_delta,
    laplace_reading,
    laplace_view,
    output_text,
    posterior_figure,
    readable,
    reveal_sentence,
)
from app_ui.core.charts import show_figure
from app_ui.core.docs import show_sources
from app_ui.core.tables import csv_download, fmt, show_problems, static_table
from app_ui.streams.controls import strength_matrix_rows, strength_of_stay, strength_slider
from puffer_core.validation import merge_row_sums, row_problems

st.title("Classroom")
st.markdown(
    "A Pufferfish mechanism can leak **nothing** in one run and give the secret away in the next:"
    " Pufferfish privacy does not compose in general ([C] §4, [S] Theorem III.4). Differentially"
    " private mechanisms do, and the a(b) curve turns them into Pufferfish mechanisms whose total"
    " leakage stays under a known bound (docs/math.md §8)."
)


collapse_tab, laplace_tab, chain_tab, optimum_tab = st.tabs(
    ["Privacy collapse, run by run", "Laplace on a two-node chain", "A tiny chain, audited exactly",
     "The best mechanism, run twice"]
)


# --------------------------------------------------------------------------- privacy collapse


def _step(delta: int | None) -> None:
    current = st.session_state.get("cls_step", 0)
    st.session_state["cls_step"] = 0 if delta is None else min(MAX_RUNS, current + delta)


def _one_and_two_runs(eps: list[float]) -> Any:
    """The exact ε of one and of two runs, side by side; the third column, for one more number."""
    m1, m2, m3 = st.columns(3)
    m1.metric("ε of one run", fmt(eps[0]))
    m2.metric("ε of two runs", fmt(eps[1]))
    return m3


@st.fragment
def _collapse() -> None:
    name = st.selectbox("Construction", list(EXAMPLES), key="w_example", persist_state="session")
    st.caption(EXAMPLES[name])
    params = example_parameters(name)
    try:
        model = example_model(name, params)
    except ValueError as exc:
        st.error(f"This construction cannot be built: {exc}")
        return
    cols = st.columns([2, 1, 1])
    true_dataset = cols[0].selectbox(
        "The true dataset (the attacker does not know it)",
        list(model.datasets),
        key="w_true",
        persist_state="session",
        format_func=readable,
    )
    seed = int(cols[1].number_input("Random seed", 0, 10_000, 0, key="w_seed_cls", persist_state="session"))
    rr_eps = float(
        cols[2].number_input(
            "ε of the randomized response", 0.05, 5.0, 0.5, 0.05, key="w_rr_eps", persist_state="session"
        )
    )
    signature = (name, params, str(true_dataset), seed, rr_eps)
    if st.session_state.get("cls_signature") != signature:
        st.session_state["cls_signature"] = signature
        st.session_state["cls_step"] = 0
    step = int(st.session_state.get("cls_step", 0))
    b1, b2, b3, _ = st.columns([1, 1, 1, 3])
    b1.button(
        "Run once more",
        on_click=_step,
        args=(1,),
        disabled=step >= MAX_RUNS,
        key="w_run_once",
        icon=":material/play_arrow:",
        type="primary",
    )
    b2.button("Run 5 more", on_click=_step, args=(5,), disabled=step >= MAX_RUNS, key="w_run_five")
    b3.button("Start over", on_click=_step, args=(None,), key="w_reset")
    st.markdown(f"**Runs so far: {step}** (of at most {MAX_RUNS})")

    try:
        view = collapse_view(name, params, true_dataset, seed, rr_eps)
    except ValueError as exc:
        st.error(f"The attacker cannot be simulated here: {exc}")
        return
    left, right = st.columns(2, gap="large")
    with left:
        st.subheader("The construction")
        m3 = _one_and_two_runs(view.collapse_eps)
        m3.metric(
            "Expected runs",
            fmt(view.expected_runs),
            help="Exact expected number of runs until the attacker is certain of the true secret.",
        )
        fig, notes = posterior_figure(name, params, true_dataset, seed, rr_eps, "collapse", step)
        show_figure(fig, notes, key="collapse_chart")
        collapsed = reveal_sentence(view.collapse_trace, step)
        if collapsed is not None:
            st.warning(collapsed)
        st.caption(
            f"Composability test ([C] Theorem 5.1): the smallest ε for which linear composition"
            f" could hold is {fmt(view.composability)}."
        )
    with right:
        st.subheader("Randomized response")
        m3 = _one_and_two_runs(view.rr_eps)
        m3.metric(
            f"ε of {MAX_K_CHECKED} runs",
            fmt(view.rr_eps[-1]),
            help="k runs of an ε-DP answer leak at most k·ε: the leakage stays bounded.",
        )
        fig, notes = posterior_figure(name, params, true_dataset, seed, rr_eps, "rr", step)
        show_figure(fig, notes, key="rr_chart")
        st.caption(
            f"Truthful with probability e^ε/(1+e^ε); each run moves the odds by at most e^{rr_eps:g}."
            f" Composability test: ε = {fmt(view.rr_composability)}."
        )
    show_figure(view.figure, view.notes, key="eps_runs_chart")
    seen = view.collapse_trace[(view.collapse_trace["run"] >= 1) & (view.collapse_trace["run"] <= step)]
    outputs = seen.drop_duplicates("run")[["run", "output"]]
    if not outputs.empty:
        st.dataframe(
            outputs.assign(output=[output_text(o) for o in outputs["output"]]),
            hide_index=True,
            key="collapse_outputs",
            width="content",
            column_config={"output": st.column_config.TextColumn("output seen by the attacker")},
        )
    with st.container(horizontal=True):
        label = "Download the posterior traces (CSV)"
        csv_download(view.traces_csv, "posterior_traces.csv", label, key="w_download_traces")
        label = "Download ε by number of runs (CSV)"
        csv_download(view.eps_csv, "leakage_by_runs.csv", label, key="w_download_eps_runs")


# --------------------------------------------------------------------------- [S] Theorem III.4


@st.fragment
def _laplace() -> None:
    st.markdown(
        "Two entries X₁ → X₂ with Pr(X₂ = 1 | X₁ = 1) = p and Pr(X₂ = 1 | X₁ = 0) = q; the secret is X₁."
        " One release of **X₁ + X₂ + Lap(1)** is ε-Pufferfish private, with ε its exact leakage below. If"
        " Pufferfish privacy composed linearly, k releases would leak at most k × ε. [S] Theorem III.4 shows"
        " that it does not: with p = 0.9 and q = 0.01, two releases leak more than 2ε. The same query"
        " answered by a per-entry DP mechanism calibrated through a(b) stays under the bound of [C]"
        " Theorem 6.2, release after release (docs/math.md §4, §8)."
    )
    cols = st.columns(4)
    p = cols[0].slider("p = Pr(X₂ = 1 | X₁ = 1)", 0.01, 0.99, 0.9, 0.01, key="w_lap_p", persist_state="session")
    q = cols[1].slider("q = Pr(X₂ = 1 | X₁ = 0)", 0.01, 0.99, 0.01, 0.01, key="w_lap_q", persist_state="session")
    releases = cols[2].slider("Releases", 1, 6, 4, key="w_lap_releases", persist_state="session")
    target = cols[3].number_input(
        "ε_puffer per calibrated release", 0.1, 10.0, 1.0, 0.1, key="w_lap_target", persist_state="session"
    )
    try:
        view = laplace_view(float(p), float(q), int(releases), float(target))
    except ValueError as exc:
        st.error(f"This chain cannot be used: {exc}")
        return
    plain = view.plain
    m1, m2, m3 = st.columns(3)
    m1.metric("Lap(1): ε of one release", fmt(plain[0]))
    if releases >= 2:
        m2.metric(
            "Lap(1): ε of two releases",
            fmt(plain[1]),
            delta=excess_delta(plain),
            delta_color="inverse",
            help="The delta is how much more (+) or less (−) two releases leak than twice one release, in nats.",
        )
    m3.metric("Calibrated Laplace scale", fmt(view.scale), help=f"1/ε_DP with ε_DP = {fmt(view.eps_dp)}.")
    st.markdown(laplace_reading(p, q, plain))
    show_figure(view.figure, view.notes, key="laplace_chart")
    static_table(view.table)  # wraps to the page's width: nothing to scroll sideways on a phone
    csv_download(view.table, "laplace_two_nodes.csv", "Download (CSV)", key="w_download_laplace")


# --------------------------------------------------------------------------- tiny chain


def _chain_default(k: int, strength: float) -> pd.DataFrame:
    labels = [str(i) for i in range(k)]
    return pd.DataFrame(np.array(strength_matrix_rows(k, strength)), index=labels, columns=labels)


@st.fragment
def _tiny_chain() -> None:
    st.markdown(
        "Edit a tiny chain, pick a per-entry ε_DP, and compare the **exact** leakage of reporting every"
        " entry through randomized response (every sequence enumerated, docs/math.md §9) with the"
        " **guarantee** the a(b) curve gives (docs/math.md §3, §4). The guarantee is never below the truth."
    )
    cols = st.columns(4)
    k_states = int(cols[0].number_input("States K", 2, 3, 2, key="w_tiny_k", persist_state="session"))
    length = int(cols[1].number_input("Length T", 2, 6, 6, key="w_tiny_t", persist_state="session"))
    eps_dp = float(
        cols[2].number_input("Per-entry ε_DP", 0.05, 3.0, 0.5, 0.05, key="w_tiny_eps", persist_state="session")
    )
    max_releases = int(cols[3].number_input("Releases", 1, 3, 2, key="w_tiny_releases", persist_state="session"))
    default = strength_of_stay(k_states, 0.6)  # the chain that stays put with probability 0.6
    strength = strength_slider(st, f"w_tiny_strength_{k_states}", default, persist=True)
    st.caption("The knob sets the matrix to (1 − s)·uniform + s·identity; edit the matrix afterwards if you like.")
    edited = st.data_editor(  # a new editor for every position of the knob: the preset restarts the matrix
        _chain_default(k_states, strength),
        key=f"w_tiny_matrix_{k_states}" if strength == default else f"w_tiny_matrix_{k_states}_{strength:g}",
        column_config={
            str(i): st.column_config.NumberColumn(str(i), min_value=0.0, max_value=1.0, format="%.3g")
            for i in range(k_states)
        },
    )
    matrix = edited.to_numpy(dtype=float, na_value=np.nan)
    problems_of_rows = row_problems(matrix.tolist(), [str(i) for i in range(k_states)])
    show_problems(merge_row_sums(problems_of_rows))
    if problems_of_rows:
        return
    try:
        view = chain_view(tuple(tuple(float(x) for x in row) for row in matrix), length, eps_dp, max_releases)
    except ValueError as exc:
        st.error(f"This chain cannot be audited: {exc}")
        return
    if view.stopped:
        st.info(view.stopped)
    if view.figure is None:
        return
    table = view.table
    c1, c2 = st.columns(2)
    c1.metric("Exact leakage of one release", fmt(float(table["exact leakage"].iloc[0])))
    c2.metric("Guaranteed by the a(b) curve", fmt(float(table["guarantee"].iloc[0])))
    show_figure(view.figure, view.notes, key="tiny_chart")
    static_table(table)
    st.caption(
        "k: releases so far. Guarantee: what the a(b) curve certifies for k releases ([C] Theorem 6.2)."
        " Group DP: k·T·ε_DP. Worst entry and pair: where the exact leakage is reached."
    )
    csv_download(table, "tiny_chain_audit.csv", "Download (CSV)", key="w_download_tiny")


with collapse_tab:
    _collapse()
with laplace_tab:
    _laplace()
with chain_tab:
    _tiny_chain()
with optimum_tab:
    st.fragment(optimum_step)()  # optimal once, broken twice (app_ui/classroom/optimum.py)

show_sources(["C", "S", "P"])
