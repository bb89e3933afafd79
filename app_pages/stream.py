"""Streams: every stream bound beside group DP and the exact truth, schedules for a target (docs/math.md §10)."""

from __future__ import annotations

import math

import streamlit as st

from app_ui import page_path
from app_ui.core import inputs, state
from app_ui.core.charts import show_figure
from app_ui.core.report import offer_exports
from app_ui.core.tables import csv_download, fmt, show_table, static_table
from app_ui.prior.current import kind_curve
from app_ui.streams.accuracy import stream_accuracy_section
from app_ui.streams.controls import (
    direction_controls,
    optimal_as_schedule,
    prior_source,
    release_control,
    schedule_controls,
)
from app_ui.streams.secrets import stream_secrets_section
from app_ui.streams.settings import STREAM_LOG, STREAM_TARGET, STREAM_UNBOUNDED, StreamSettings
from app_ui.streams.views import (
    DEFAULT_DIRECTIONS,
    METRIC_HELP,
    StreamExport,
    build_prior,
    chain_priors,
    exact_stream_refusal,
    metric_label,
    plan_label,
    plan_sentence,
    schedule_caption,
    schedule_figure,
    schedule_refusal,
    schedule_totals,
    stream_exact,
    stream_numbers,
    stream_plan,
    stream_report,
    stream_schedule,
    stream_script,
    stream_supremum,
    stream_view,
)
from puffer_core.priors.kinds import LENGTH
from puffer_core.stream.registry import STREAM_BOUNDS
from puffer_core.stream.tpl import backward_matrix
from puffer_core.tightness.releases import RELEASES, largest_exact_length

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


def _shorten(length: int) -> None:
    state.put(LENGTH, length)
    st.session_state.pop("w_length", None)  # the curves page's input restarts from the new T


source = prior_source()
if source is None:
    state.share(StreamSettings.from_session().link())
    st.stop()
kind, params, description = source
secret = stream_secrets_section(kind, params, description)  # what is secret (docs/math.md §16)
if secret is None:
    state.share(StreamSettings.from_session().link())
    st.stop()
sec = secret.text  # every number below is for these value secrets ("" for every pair at every entry)
chains = chain_priors(build_prior(kind, params))
length = kind_curve(kind, params).length
if chains is None:
    st.info(
        "**TPL needs a Markov chain prior.** Its recursion runs on the chain's backward and forward"
        " transition matrices, which a Gaussian-process prior does not have; the chart shows the [C] bound"
        " (through this prior's a(b) curve) and group DP. Choose a binary chain, a K-state chain or a set Θ"
        " on the Influence curves page to see TPL."
    )
elif len(chains) > 1:
    st.caption("Θ holds several priors: TPL, BPL and FPL take the worst prior at every step.")

left, right = st.columns([3, 2])  # the default gap: "large" left a 64 px band between them when a phone stacks them
with left:
    mode, schedule = schedule_controls(length, chains is not None)
with right:
    release = release_control(st)

directions = DEFAULT_DIRECTIONS
if chains is not None:
    with st.expander("What the attacker knows about the correlations: P^B and P^F"):
        back = backward_matrix(chains[0]) if chains[0].stationary_initial else chains[0].transition
        directions = direction_controls(back, chains[0].transition)
    if directions is None:
        schedule = None
    elif directions != DEFAULT_DIRECTIONS:
        st.caption(
            "TPL uses your P^B and P^F: it bounds an attacker who knows those correlations. The [C] bound and"
            " the exact leakage are for the prior itself."
        )

inputs.stop_if_invalid()  # nothing below is computed with a value other than the one in its box
settings = StreamSettings.from_session()  # as the controls above left them (the planner's target is below)
target = settings.target
optimal = None
if mode == "optimal" and directions is not None:
    refusal = schedule_refusal(kind, params, directions, sec)
    if refusal is None:
        with st.spinner("Finding the optimal schedule…"):
            optimal = stream_schedule(kind, params, target, directions, sec)
        schedule = optimal_as_schedule(optimal.eps, target)
    else:
        st.info(f"No optimal schedule: {refusal}.")

exact = None
if schedule is not None:
    with st.spinner("Computing the leakage over time…"):
        numbers = stream_numbers(kind, params, schedule.eps, directions, sec)  # cached: the view below reuses it
    can_shorten = False
    if chains is None:
        refusal = "the exact audit needs a Markov chain prior"
    elif release == "stream_histogram" and min(schedule.eps) == 0:
        refusal = "the noisy histogram needs ε_t > 0 at every step (randomized response at ε = 0 releases nothing)"
    else:
        refusal = exact_stream_refusal(chains[0].n_states, length, len(chains), release)
        can_shorten = refusal is not None
    if refusal is None:
        with st.spinner("Enumerating every sequence for the exact leakage…"):
            exact = stream_exact(kind, params, schedule.eps, release, sec)

    columns = st.columns(len(STREAM_BOUNDS) + 1)
    for column, (name, bound) in zip(columns, numbers.bounds.items()):
        why = METRIC_HELP.get(name, STREAM_BOUNDS[name].description)
        column.metric(metric_label(name), "—" if bound.values is None else fmt(bound.max), help=bound.refusal or why)
    columns[-1].metric(
        "Exact leakage",
        "—" if exact is None else fmt(exact.eps),
        help="The largest log-odds shift over every sequence and output (tiny chains only).",
    )
    sentences = [numbers.summary]
    group = numbers.max("group_dp")
    if group > numbers.tighter * (1 + 1e-9):
        sentences.append(f"Group DP says {fmt(group)}, {group / numbers.tighter:.3g}× as much.")
    if exact is not None and exact.eps > 0:
        sentences.append(
            f"The exact leakage is {fmt(exact.eps)}: "
            + (
                "the tightest bound equals it (to 4 digits) — it is tight here."
                if fmt(numbers.tighter) == fmt(exact.eps)
                else f"the tightest bound is {numbers.tighter / exact.eps:.3g}× the truth."
            )
        )
    st.markdown(" ".join(sentences))

    log_y = state.toggle(st, "Log scale", STREAM_LOG, key="w_stream_log")
    with st.spinner("Drawing…"):
        view = stream_view(kind, params, schedule.eps, release, exact is not None, log_y, directions, sec)
    show_figure(view.figure, view.notes, key="stream_chart")
    if exact is None:
        shorter = largest_exact_length(release, chains[0].n_states, len(chains)) if can_shorten else None
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
            f" of the {RELEASES[release].short} at each step enumerated (docs/math.md §9)."
        )

    if schedule.constant is not None:
        supremum = stream_supremum(kind, params, schedule.constant, directions, sec)
        if supremum is not None:
            with st.container(border=True):
                s1, s2 = st.columns([1, 3])
                s1.metric("sup TPL, unbounded stream", "∞" if math.isinf(supremum.value) else fmt(supremum.value))
                s2.markdown(supremum.explain())

    stream_accuracy_section(kind, params, tuple(schedule.eps), release)

    with st.expander(f"The numbers per step ({length:,} rows)"):
        show_table(view.table, key="stream_table", height=300, width="stretch")  # formatted once per input
        csv_download(view.table.frame, "stream.csv", "Download the numbers per step (CSV)", key="w_stream_csv")

st.subheader("Planner: the largest ε per step for a target")
p1, p2 = st.columns(2)
state.number_input(p1, "Target: the stream may leak at most ε =", STREAM_TARGET, step=0.1, key="w_stream_target")
state.put(
    STREAM_UNBOUNDED,
    p2.toggle(
        "Unbounded stream (t = 1, 2, … without end)",
        value=state.get(STREAM_UNBOUNDED) and chains is not None,
        disabled=chains is None,
        key="w_stream_unbounded",
        help="TPL's supremum, and the [C] curve points an endless chain shares (2b + 1 ≤ T).",
    ),
)
inputs.stop_if_invalid()
settings = StreamSettings.from_session()  # with the planner's target and the unbounded switch
if directions is not None:
    with st.spinner("Planning…"):
        plan = stream_plan(kind, params, settings.target, settings.unbounded, directions, sec)
    for column, (name, value) in zip(st.columns(len(plan)), plan.items()):
        column.metric(plan_label(name), "—" if math.isnan(value) else fmt(value))
    st.markdown(plan_sentence(plan, settings.target, length, settings.unbounded))
    if chains is not None and schedule_refusal(kind, params, directions, sec) is None:
        with st.expander("Schedules for this target: constant, three-value and optimal", expanded=mode == "optimal"):
            optimal = optimal or stream_schedule(kind, params, settings.target, directions, sec)
            st.plotly_chart(schedule_figure(optimal), key="schedule_chart", config={"displaylogo": False})
            static_table(schedule_totals(optimal))
            st.caption(schedule_caption(optimal, settings.target, length))

if schedule is not None:
    export = StreamExport(
        kind,
        params,
        description,
        schedule,
        release,
        exact is not None,
        settings.target,
        settings.unbounded,
        settings.log_y,
        directions,
        sec,
        secret.protected,
    )
    st.divider()
    script = stream_script(export)
    offer_exports(lambda: stream_report(export), script, "stream", "stream")
    with st.expander("The script behind these numbers"):
        st.code(script, language="python")
st.page_link(page_path("attack"), label="How tight are these bounds? Attack them", icon=":material/target:")

state.share(settings.link())
