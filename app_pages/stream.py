"""Streams: temporal privacy leakage beside the [C] bound, group DP and the exact truth (docs/math.md §10)."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from app_ui import page_path, state
from app_ui.charts import show_figure
from app_ui.priors import parameters_of, prior_summary
from app_ui.report import offer_exports
from app_ui.streams import (
    MAX_STEP_EPS,
    MECHANISMS,
    StreamExport,
    build_prior,
    chain_priors,
    constant_schedule,
    exact_stream_refusal,
    largest_exact_length,
    parse_segments,
    plan_sentence,
    stream_exact,
    stream_numbers,
    stream_plan,
    stream_report,
    stream_script,
    stream_supremum,
    stream_view,
)
from app_ui.tables import csv_download, fmt, show_problems, show_table
from puffer_core.priors.kinds import PRIOR_KINDS, Parameter

values = state.settings()
values.setdefault("stream_mode", "constant")
values.setdefault("stream_eps", 0.3)
values.setdefault("stream_mechanism", "rr")
values.setdefault("stream_target", 1.0)
values.setdefault("stream_unbounded", False)
values.setdefault("stream_log", True)
MODES = {"constant": "the same ε at every step", "table": "ε by time steps (a table)"}

st.title("Streams: leakage over time")
st.markdown(
    "A **stream** releases something at every time step t — a noisy count of users in each state, an"
    " hourly activity report — computed from the entries at t only, each release ε_t-DP for one entry."
    " A user's entries are correlated, so every release also leaks about the entries before and after it."
    " Two upper bounds apply to the entry at t: **TPL**, temporal privacy leakage ([TPL], the leakage"
    " from the past, BPL, plus from the future, FPL), and the **[C] bound** through the a(b) curve"
    " (ε_puffer = min_b b·ε + a(b)); group DP over the whole stream (Σ ε_t) is the naive one."
    " On tiny chains the app also enumerates every sequence for the **exact** leakage (docs/math.md §9–§10)."
)
state.show_ignored_link_settings()
state.share_button()
current = prior_summary()


def _shorten(length: int) -> None:
    values["length"] = length
    st.session_state.pop("w_length", None)  # the curves page's input restarts from the new T


def _reset_segments(length: int) -> None:
    default = _default_segments(length)
    values.update(stream_segments=default, stream_segments_base=default)
    values["stream_segments_version"] += 1  # a new editor, started from the default


def _default_segments(length: int) -> tuple[tuple[int, str, float], ...]:
    if length < 2:
        return ((1, "end", 0.3),)
    half = length // 2
    return ((1, str(half), 0.1), (half + 1, "end", 0.3))


def _schedule_controls(length: int):
    """The schedule the user set (None while the table has problems, which are shown)."""
    values["stream_mode"] = st.radio(
        "ε_t schedule",
        list(MODES),
        index=list(MODES).index(values["stream_mode"]),
        format_func=MODES.get,
        horizontal=True,
        key="w_stream_mode",
    )
    if values["stream_mode"] == "constant":
        values["stream_eps"] = float(
            st.number_input(
                "ε per step",
                0.001,
                MAX_STEP_EPS,
                float(values["stream_eps"]),
                0.05,
                format="%.3f",
                key="w_stream_eps",
                help="Each step's release is ε-DP for the entry at that step.",
            )
        )
        return constant_schedule(values["stream_eps"], length)
    values.setdefault("stream_segments", _default_segments(length))
    values.setdefault("stream_segments_base", values["stream_segments"])
    values.setdefault("stream_segments_version", 0)
    st.caption(f"One row per run of steps with the same ε, covering steps 1..T = {length}; “end” means step T.")
    editor_key, start = state.editor_state("stream_segments")
    base = pd.DataFrame(list(start), columns=["from step", "to step", "ε per step"])
    base = base.astype({"from step": float, "to step": object, "ε per step": float})
    edited = st.data_editor(
        base,
        key=editor_key,
        num_rows="dynamic",
        width="stretch",
        column_config={
            "from step": st.column_config.NumberColumn("from step", step=1, format="%d"),
            "to step": st.column_config.TextColumn("to step", help="A step number, or “end” for the last step."),
            "ε per step": st.column_config.NumberColumn("ε per step", format="%.4g"),
        },
    )
    rows = [
        tuple(None if isinstance(v, float) and math.isnan(v) else v for v in row)
        for row in edited.itertuples(index=False, name=None)
    ]
    values["stream_segments"] = tuple(rows)
    schedule, problems = parse_segments(rows, length)
    show_problems(problems)
    if problems:
        st.button("Reset the table", on_click=_reset_segments, args=(length,), key="w_stream_reset")
    return schedule


if current is not None:
    curve = current.curve
    kind = PRIOR_KINDS[values["prior_kind"]]
    params = parameters_of(kind, values)
    chains = chain_priors(build_prior(kind.name, params))
    length = curve.length
    if chains is None:
        st.info(
            "**TPL needs a Markov chain prior.** Its recursion runs on the chain's backward and forward"
            " transition matrices, which a Gaussian-process prior does not have; the chart shows the [C] bound"
            " (through this prior's a(b) curve) and group DP. Choose a binary chain, a K-state chain or a set Θ"
            " on the Influence curves page to see TPL."
        )
    elif len(chains) > 1:
        st.caption("Θ holds several priors: TPL, BPL and FPL take the worst prior at every step.")

    left, right = st.columns([3, 2], gap="large")
    with left:
        schedule = _schedule_controls(length)
    with right:
        values["stream_mechanism"] = st.radio(
            "Release at each step",
            list(MECHANISMS),
            index=list(MECHANISMS).index(values["stream_mechanism"]),
            format_func=MECHANISMS.get,
            key="w_stream_mechanism",
            help="The bounds depend on ε_t only; the exact leakage depends on the release too.",
        )
    mechanism = values["stream_mechanism"]

    if schedule is not None:
        with st.spinner("Computing the leakage over time…"):
            numbers = stream_numbers(kind.name, params, schedule.eps)  # cached: the view below reuses it
        refusal = None
        can_shorten = False  # a shorter chain would be enumerated
        if chains is None:
            refusal = "the exact audit needs a Markov chain prior"
        elif mechanism == "histogram" and min(schedule.eps) == 0:
            refusal = "the noisy histogram needs ε_t > 0 at every step (randomized response at ε = 0 releases nothing)"
        else:
            refusal = exact_stream_refusal(chains[0].n_states, length, len(chains), mechanism)
            can_shorten = refusal is not None
        exact = None
        if refusal is None:
            with st.spinner("Enumerating every sequence for the exact leakage…"):
                exact = stream_exact(kind.name, params, schedule.eps, mechanism)

        c1, c2, c3, c4 = st.columns(4)
        if numbers.temporal is not None:
            c1.metric("Max TPL over t", fmt(numbers.temporal.max_tpl), help="[TPL]: max_t BPL_t + FPL_t − ε_t.")
        else:
            c1.metric(
                "Max TPL over t",
                "—",
                help="TPL needs a Markov chain prior." if chains is None else "Out of reach for this prior: see below.",
            )
        c2.metric("[C] bound", fmt(numbers.translation.eps_puffer), help="min_b b·ε + a(b), refined per entry.")
        c3.metric("Group DP", fmt(numbers.group_dp), help="Σ ε_t: every entry of the user may change.")
        c4.metric(
            "Exact leakage",
            "—" if exact is None else fmt(exact.eps),
            help="The largest log-odds shift over every sequence and output (tiny chains only).",
        )
        sentences = [numbers.summary]
        if numbers.group_dp > numbers.tighter * (1 + 1e-9):
            ratio = numbers.group_dp / numbers.tighter
            sentences.append(f"Group DP says {fmt(numbers.group_dp)}, {ratio:.3g}× as much.")
        if exact is not None and exact.eps > 0:
            ratio = numbers.tighter / exact.eps
            sentences.append(
                f"The exact leakage is {fmt(exact.eps)}: "
                + (
                    "the tightest bound equals it (to 4 digits) — it is tight here."
                    if fmt(numbers.tighter) == fmt(exact.eps)
                    else f"the tightest bound is {ratio:.3g}× the truth."
                )
            )
        st.markdown(" ".join(sentences))

        values["stream_log"] = st.toggle("Log scale", value=bool(values["stream_log"]), key="w_stream_log")
        with st.spinner("Drawing…"):
            view = stream_view(kind.name, params, schedule.eps, mechanism, exact is not None, values["stream_log"])
        show_figure(view.figure, view.notes, key="stream_chart")
        if exact is None:
            shorter = largest_exact_length(chains[0].n_states, len(chains), mechanism) if can_shorten else None
            text = f"No exact leakage: {refusal}."
            if shorter is not None:
                text += f" A stream of T ≤ {shorter} steps over these states is small enough."
            st.caption(text)
            if shorter is not None:
                st.button(
                    f"Shorten the prior to T = {shorter} (changes the prior on every page)",
                    on_click=_shorten,
                    args=(shorter,),
                    key="w_stream_shorten",
                )
        else:
            st.caption(
                f"Exact: every one of the {chains[0].n_states}^{length} sequences and every joint output"
                f" of the {MECHANISMS[mechanism].split(' (')[0]} at each step enumerated (docs/math.md §9)."
            )

        supremum = None
        if schedule.constant is not None:
            supremum = stream_supremum(kind.name, params, schedule.constant)
            if supremum is not None:
                with st.container(border=True):
                    s1, s2 = st.columns([1, 3])
                    s1.metric("sup TPL, unbounded stream", "∞" if math.isinf(supremum.value) else fmt(supremum.value))
                    s2.markdown(supremum.explain())

        with st.expander(f"The numbers per step ({length:,} rows)"):
            show_table(view.table, key="stream_table", height=300, width="stretch")  # formatted once per input
            csv_download(view.table.frame, "stream.csv", "Download the numbers per step (CSV)", key="w_stream_csv")

    st.subheader("Planner: the largest ε per step for a target")
    p1, p2 = st.columns(2)
    state.number_input(
        p1,
        "Target: the stream may leak at most ε =",
        Parameter("stream_target", 1.0, None, state.EPS_RANGE),
        step=0.1,
        key="w_stream_target",
    )
    values["stream_unbounded"] = p2.toggle(
        "Unbounded stream (t = 1, 2, … without end)",
        value=bool(values["stream_unbounded"]) and chains is not None,
        disabled=chains is None,
        key="w_stream_unbounded",
        help="TPL's supremum, and the [C] curve points an endless chain shares (2b + 1 ≤ T).",
    )
    with st.spinner("Planning…"):
        plan = stream_plan(kind.name, params, values["stream_target"], values["stream_unbounded"])
    m1, m2, m3 = st.columns(3)
    m1.metric("ε per step under TPL", "—" if math.isnan(plan.eps_tpl) else fmt(plan.eps_tpl))
    m2.metric("ε per step under [C]", fmt(plan.eps_translation))
    m3.metric("ε per step under group DP", fmt(plan.eps_group_dp))
    st.markdown(plan_sentence(plan, length))

    if schedule is not None:
        export = StreamExport(
            kind.name,
            params,
            current.description,
            schedule,
            mechanism,
            exact is not None,
            float(values["stream_target"]),
            bool(values["stream_unbounded"]),
            bool(values["stream_log"]),
        )
        st.divider()
        script = stream_script(export)
        offer_exports(lambda: stream_report(export), script, "stream", "stream")
        with st.expander("The script behind these numbers"):
            st.code(script, language="python")
    st.page_link(page_path("attack"), label="How tight are these bounds? Attack them", icon=":material/target:")

state.share(state.prior_parameters())
