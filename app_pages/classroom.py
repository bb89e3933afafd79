"""Classroom: privacy collapse run by run, and a tiny chain audited exactly (docs/math.md §8, §9)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from app_ui.charts import Trace, csv_download, fmt, line_figure, show_figure, show_problems, show_table
from app_ui.classroom_views import (
    EXAMPLES,
    example_model,
    excess_delta,
    laplace_reading,
    output_text,
    posterior_chart,
    readable,
    reveal_sentence,
)
from app_ui.docs import show_sources
from puffer_core import MarkovChainPrior, certify, cumulative, group_dp_cumulative, influence_curve, pufferfish_laplace
from puffer_core.audit import leakage_report
from puffer_core.classroom import (
    FiniteModel,
    composability,
    expected_runs_to_reveal,
    laplace_sum_leakage,
    leakage_by_runs,
    posterior_trace,
    randomized_response,
    randomized_response_per_entry,
)
from puffer_core.prior_kinds import sticky_matrix
from puffer_core.priors import transition_problems

MAX_RUNS = 12
MAX_K_CHECKED = 6

st.title("Classroom")
st.markdown(
    "A Pufferfish mechanism can leak **nothing** in one run and give the secret away in the next:"
    " Pufferfish privacy does not compose in general ([C] §4, [S] Theorem III.4). Differentially"
    " private mechanisms do, and the a(b) curve turns them into Pufferfish mechanisms whose total"
    " leakage stays under a known bound (docs/math.md §8)."
)


collapse_tab, laplace_tab, chain_tab = st.tabs(
    ["Privacy collapse, run by run", "Laplace on a two-node chain", "A tiny chain, audited exactly"]
)


# --------------------------------------------------------------------------- models


@st.cache_data(show_spinner=False, max_entries=64)
def _exact_eps(_model: FiniteModel, key: tuple, max_k: int) -> list[float]:
    """The exact ε of k = 1..max_k runs (``key`` identifies the model for the cache)."""
    return leakage_by_runs(_model, max_k)


def _step(delta: int | None) -> None:
    current = st.session_state.get("cls_step", 0)
    st.session_state["cls_step"] = 0 if delta is None else min(MAX_RUNS, current + delta)


with collapse_tab:
    name = st.selectbox("Construction", list(EXAMPLES), key="w_example", persist_state="session")
    st.caption(EXAMPLES[name])
    try:
        model, params = example_model(name)
    except ValueError as exc:
        st.error(f"This construction cannot be built: {exc}")
        model, params = None, ()
    if model is not None:
        cols = st.columns([2, 1, 1])
        true_dataset = cols[0].selectbox(
            "The true dataset (the attacker does not know it)",
            list(model.datasets),
            key="w_true",
            persist_state="session",
            format_func=readable,
        )
        seed = cols[1].number_input("Random seed", 0, 10_000, 0, key="w_seed_cls", persist_state="session")
        rr_eps = cols[2].number_input(
            "ε of the randomized response", 0.05, 5.0, 0.5, 0.05, key="w_rr_eps", persist_state="session"
        )
        signature = (name, params, str(true_dataset), int(seed), float(rr_eps))
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
            collapse_trace = posterior_trace(model, true_dataset, MAX_RUNS, np.random.default_rng(int(seed)))
            rr_model = randomized_response(model, float(rr_eps))
            rr_trace = posterior_trace(rr_model, true_dataset, MAX_RUNS, np.random.default_rng(int(seed)))
        except ValueError as exc:
            st.error(f"The attacker cannot be simulated here: {exc}")
            collapse_trace = rr_trace = None
        if collapse_trace is not None and rr_trace is not None:
            key = (name, params)
            collapse_eps = _exact_eps(model, key, MAX_K_CHECKED)
            rr_eps_k = _exact_eps(rr_model, (*key, float(rr_eps)), MAX_K_CHECKED)
            left, right = st.columns(2, gap="large")
            with left:
                st.subheader("The construction")
                expected = expected_runs_to_reveal(model, true_dataset)
                m1, m2, m3 = st.columns(3)
                m1.metric("ε of one run", fmt(collapse_eps[0]))
                m2.metric("ε of two runs", fmt(collapse_eps[1]))
                m3.metric(
                    "Expected runs",
                    fmt(expected),
                    help="Exact expected number of runs until the attacker is certain of the true secret.",
                )
                posterior_chart(collapse_trace, step, MAX_RUNS, key="collapse_chart")
                collapsed = reveal_sentence(collapse_trace, step)
                if collapsed is not None:
                    st.warning(collapsed)
                nfc = composability(model)
                st.caption(
                    f"Composability test ([C] Theorem 5.1): the smallest ε for which linear composition"
                    f" could hold is {fmt(nfc.eps)}."
                )
            with right:
                st.subheader("Randomized response")
                m1, m2, m3 = st.columns(3)
                m1.metric("ε of one run", fmt(rr_eps_k[0]))
                m2.metric("ε of two runs", fmt(rr_eps_k[1]))
                m3.metric(
                    f"ε of {MAX_K_CHECKED} runs",
                    fmt(rr_eps_k[-1]),
                    help="k runs of an ε-DP answer leak at most k·ε: the leakage stays bounded.",
                )
                posterior_chart(rr_trace, step, MAX_RUNS, key="rr_chart")
                st.caption(
                    f"Truthful with probability e^ε/(1+e^ε); each run moves the odds by at most e^{rr_eps:g}."
                    f" Composability test: ε = {fmt(composability(rr_model).eps)}."
                )
            ks = np.arange(1, MAX_K_CHECKED + 1, dtype=float)
            fig, notes = line_figure(
                [
                    Trace(
                        "k × ε of one randomized-response run",
                        ks,
                        ks * rr_eps_k[0],
                        dash="dot",
                        width=5,
                        markers=False,
                        color="#c7c7c7",
                    ),
                    Trace(name, ks, np.array(collapse_eps)),
                    Trace("randomized response", ks, np.array(rr_eps_k), width=2),
                ],
                x_title="number of runs k",
                y_title="exact ε_puffer of k runs",
                y_name="ε",
                x_name="k",
                height=320,
            )
            show_figure(fig, notes, key="eps_runs_chart")
            seen = collapse_trace[(collapse_trace["run"] >= 1) & (collapse_trace["run"] <= step)]
            outputs = seen.drop_duplicates("run")[["run", "output"]]
            if not outputs.empty:
                st.dataframe(
                    outputs.assign(output=[output_text(o) for o in outputs["output"]]),
                    hide_index=True,
                    key="collapse_outputs",
                    width="content",
                    column_config={"output": st.column_config.TextColumn("output seen by the attacker")},
                )
            d1, d2 = st.columns(2)
            with d1:
                csv_download(
                    pd.concat(
                        [collapse_trace.assign(mechanism=name), rr_trace.assign(mechanism="randomized response")]
                    ).assign(output=lambda f: [None if o is None else output_text(o) for o in f["output"]]),
                    "posterior_traces.csv",
                    "Download the posterior traces (CSV)",
                    key="w_download_traces",
                )
            with d2:
                csv_download(
                    pd.DataFrame({"runs": ks.astype(int), name: collapse_eps, "randomized response": rr_eps_k}),
                    "leakage_by_runs.csv",
                    "Download ε by number of runs (CSV)",
                    key="w_download_eps_runs",
                )


# --------------------------------------------------------------------------- [S] Theorem III.4

with laplace_tab:
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
        ks = np.arange(1, releases + 1)
        plain = np.array([laplace_sum_leakage(p, q, int(k)) for k in ks])
        chain = MarkovChainPrior([[1 - q, q], [1 - p, p]], length=2)
        # X₁ + X₂ moves by at most 1 when one entry changes: sensitivity 1
        calibrated_laplace = pufferfish_laplace(chain, float(target), sensitivity=1.0)
        cal = calibrated_laplace.accounting.calibration
        scale = calibrated_laplace.scale
        calibrated = np.array([laplace_sum_leakage(p, q, int(k), scale=scale) for k in ks])
        bound = cumulative([cal] * releases)
    except ValueError as exc:
        st.error(f"This chain cannot be used: {exc}")
    else:
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
        m3.metric("Calibrated Laplace scale", fmt(scale), help=f"1/ε_DP with ε_DP = {fmt(cal.eps_dp)}.")
        st.markdown(laplace_reading(p, q, plain))
        kx = ks.astype(float)
        fig, notes = line_figure(
            [
                Trace("X₁+X₂+Lap(1): exact", kx, plain),
                Trace("k × one release of Lap(1)", kx, kx * plain[0], dash="dot"),
                Trace(f"calibrated Lap({fmt(scale)}): exact", kx, calibrated),
                Trace("Theorem 6.2 bound for the calibrated releases", kx, bound, dash="dash"),
            ],
            x_title="releases k",
            y_title="ε_puffer of k releases (secret X₁)",
            y_name="ε",
            x_name="k",
        )
        fig.update_xaxes(dtick=1)
        show_figure(fig, notes, key="laplace_chart")
        table = pd.DataFrame(
            {
                "releases": ks,
                "Lap(1) exact": plain,
                "k × one": kx * plain[0],
                "excess": plain - kx * plain[0],
                "calibrated exact": calibrated,
                "Theorem 6.2 bound": bound,
            }
        )
        show_table(table, key="laplace_table")
        csv_download(table, "laplace_two_nodes.csv", "Download (CSV)", key="w_download_laplace")


# --------------------------------------------------------------------------- tiny chain


def _chain_default(k: int) -> pd.DataFrame:
    matrix = sticky_matrix(k, 0.6)
    labels = [str(i) for i in range(k)]
    return pd.DataFrame(np.array(matrix), index=labels, columns=labels)


with chain_tab:
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
    edited = st.data_editor(
        _chain_default(k_states),
        key=f"w_tiny_matrix_{k_states}",
        column_config={
            str(i): st.column_config.NumberColumn(str(i), min_value=0.0, max_value=1.0, format="%.3g")
            for i in range(k_states)
        },
    )
    matrix = edited.to_numpy(dtype=float, na_value=np.nan)
    row_problems = transition_problems(matrix.tolist(), [str(i) for i in range(k_states)])
    show_problems(row_problems)
    if not row_problems:
        try:
            prior = MarkovChainPrior(matrix, length=length)
            curve = influence_curve(prior)
            mechanism = randomized_response_per_entry(k_states, eps_dp)
            guarantees = cumulative([certify(curve, eps_dp)] * max_releases)  # Theorem 6.2 (docs/math.md §3, §4)
            group_eps = group_dp_cumulative(length, [eps_dp] * max_releases)  # k·T·ε_DP (docs/math.md §1, §4)
            rows = []
            for k in range(1, max_releases + 1):
                try:
                    report = leakage_report(prior, mechanism, releases=k)
                except ValueError as exc:
                    st.info(f"{k} releases: {exc}")
                    break
                rows.append(
                    {
                        "releases": k,
                        "exact leakage": report.eps,
                        "guarantee (a(b) curve)": float(guarantees[k - 1]),
                        "group DP (k·T·ε_DP)": float(group_eps[k - 1]),
                        "worst entry": None if report.entry is None else report.entry + 1,
                        "worst pair": "" if report.pair is None else f"{report.pair[0]} vs {report.pair[1]}",
                    }
                )
        except ValueError as exc:
            st.error(f"This chain cannot be audited: {exc}")
        else:
            if rows:
                table = pd.DataFrame(rows)
                c1, c2 = st.columns(2)
                c1.metric("Exact leakage of one release", fmt(rows[0]["exact leakage"]))
                c2.metric("Guaranteed by the a(b) curve", fmt(rows[0]["guarantee (a(b) curve)"]))
                kx = table["releases"].to_numpy(dtype=float)
                fig, notes = line_figure(
                    [
                        Trace("exact leakage", kx, table["exact leakage"].to_numpy(dtype=float)),
                        Trace(
                            "guarantee (a(b) curve, Theorem 6.2)",
                            kx,
                            table["guarantee (a(b) curve)"].to_numpy(dtype=float),
                            dash="dash",
                        ),
                        Trace("group DP", kx, table["group DP (k·T·ε_DP)"].to_numpy(dtype=float), dash="dot"),
                    ],
                    x_title="releases",
                    y_title="ε_puffer",
                    y_name="ε",
                    x_name="releases",
                    height=320,
                )
                fig.update_xaxes(dtick=1)
                show_figure(fig, notes, key="tiny_chart")
                show_table(table, key="tiny_table")
                csv_download(table, "tiny_chain_audit.csv", "Download (CSV)", key="w_download_tiny")

show_sources(["C", "S", "P"])
