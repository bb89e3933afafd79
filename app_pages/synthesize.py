"""Synthesize: publish a synthetic dataset with an ε_puffer guarantee, and see how faithful it is (docs/math.md §19)."""

from __future__ import annotations

import io

import pandas as pd
import streamlit as st

from app_ui.core import inputs, state
from app_ui.core.charts import show_figure
from app_ui.core.report import Section, html_report, offer_exports
from app_ui.core.tables import show_table, static_table
from app_ui.data.picker import LoadedData, dataset_picker
from app_ui.secrets.controls import data_secrets_section
from app_ui.secrets.views import report_section
from app_ui.synthesize import views
from app_ui.synthesize import work as synth
from app_ui.synthesize.exports import data_name, report_settings, script
from app_ui.synthesize.guided import choose_data
from app_ui.synthesize.settings import (
    METHOD_WORDS,
    SYNTH_BY_GROUP,
    SYNTH_DATA,
    SYNTH_METHOD,
    SYNTH_QUERY,
    SYNTH_REAL,
    SYNTH_SEED,
    SYNTH_TOP_K,
    SynthesizeSettings,
)
from puffer_core.display import fmt
from puffer_core.errors import DataError
from puffer_core.synthesis.fidelity import ALL, METRIC_WORDS, QUERY_WORDS
from puffer_core.synthesis.synthesize import SynthesisPlan

PREVIEW_ROWS = 12

st.title("Synthesize")
st.markdown(
    "Publish a file of synthetic users' sequences, in your data's own columns, that colleagues can load into any"
    " tool and explore freely — with an ε_puffer guarantee for every entry of every real user. The counts of a"
    " Markov chain (transitions and first states, per group) are released with discrete Laplace noise calibrated"
    " through a(b); the chain and the synthetic users are drawn from the noisy counts only (docs/math.md §19)."
    " Nothing you upload is written to disk."
)
state.share_button()


def _open_link() -> None:
    """The first time: the data the link names are chosen in the picker (a file is asked for, never kept)."""
    if not st.session_state.get("syn_link_read"):
        st.session_state["syn_link_read"] = True
        choose_data(state.get(SYNTH_DATA), replace=False)


def _summary(loaded: LoadedData) -> None:
    stats = loaded.stats
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Users", f"{stats.n_users:,}")
    c2.metric("Entries", f"{stats.n_entries:,}")
    c3.metric("States", stats.n_states)
    c4.metric("Groups", 1 if stats.groups is None else len(stats.groups),
              help=f"Group column: {stats.group_column}" if stats.group_column else "No group column: one group.")


def _controls(loaded: LoadedData) -> SynthesizeSettings:
    """The release's controls (each writes one setting), then the page's record as they left them."""
    left, right = st.columns(2)
    with left:
        state.number_input(st, "ε_puffer of the release", state.EPS_PUFFER, key="w_synth_eps",
                           help="The guarantee for every entry of every real user (at least 0.01).")
        if loaded.stats.groups is not None and loaded.holds_sequences:
            state.toggle(st, f"One chain per {loaded.stats.group_column}", SYNTH_BY_GROUP, key="w_synth_by_group",
                         help="Each group's counts are released (and its users drawn) on their own; off: one chain"
                              " for everyone, the group column left out.")
        elif loaded.stats.groups is not None:
            st.caption("These data are held as counts only: one chain for everyone (the group column left out).")
        state.radio(st, "Noisy counts → chain", SYNTH_METHOD, METHOD_WORDS, key="w_synth_method")
    with right:
        real = state.toggle(st, "Real release (OpenDP noise, no seed)", SYNTH_REAL, key="w_synth_real",
                            help="Off: numpy noise from the seed, the same table every time — for exploring and"
                                 " for the script to reproduce. On: OpenDP's noise, what you publish.")
        if not real:
            state.number_input(st, "Seed", SYNTH_SEED, key="w_synth_seed")
        state.number_input(st, "Top-k states compared", SYNTH_TOP_K, key="w_synth_top_k")
        state.radio(st, "Downstream query compared", SYNTH_QUERY, dict(QUERY_WORDS), key="w_synth_query")
    data_secrets_section(loaded.stats.states, synth.longest(loaded), state.get(state.EPS_PUFFER))  # docs/math.md §16
    inputs.stop_if_invalid()  # a value out of range: nothing computed with another one
    return SynthesizeSettings.from_session()


def _plan(loaded: LoadedData, settings: SynthesizeSettings) -> SynthesisPlan | None:
    try:
        with st.spinner("Computing the a(b) curve of the chain fitted to these data…"):
            return synth.plan(loaded, settings)
    except (ValueError, DataError) as exc:
        st.error(f"No synthetic release at these settings: {exc}")
        return None


def _show_plan(chosen: SynthesisPlan) -> list[Section]:
    calibration, event = chosen.calibration, chosen.event
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Noise scale s", fmt(chosen.scale), help="Discrete Laplace noise of this scale on every count.")
    c2.metric("Window b", calibration.b, help="The curve point the calibration uses (docs/math.md §19.3).")
    c3.metric("Window sensitivity c_b", event.window_l1, help="How far changing b entries moves the counts (L1).")
    c4.metric("a(b)", fmt(calibration.a), help="What the correlation costs at this window.")
    budget = views.budget_figure(chosen)
    st.markdown(f"**How ε_puffer = {fmt(chosen.eps_puffer)} is spent**")
    st.plotly_chart(budget, key="synth_budget", config={"displaylogo": False})
    table = views.plan_frame(chosen)
    static_table(table)
    for note in chosen.notes:
        where = " (about your data: for you, not for publication)" if note.about_data else ""
        st.warning(f"{note.message}{where}.")
    return [Section("The plan", event.describe(), budget, table, tuple(n.message for n in chosen.notes))]


def _generate(chosen: SynthesisPlan, settings: SynthesizeSettings, key: object) -> None:
    bar = st.progress(0.0, text="Releasing the noisy counts…")
    try:
        drawn = synth.draw(chosen, settings, lambda stage, fraction: bar.progress(min(1.0, fraction), text=stage))
    except (ValueError, DataError) as exc:
        bar.empty()
        st.error(f"The synthetic table was not drawn: {exc}")
        return
    bar.empty()
    st.session_state["synth_drawn"] = (key, drawn)


def _fidelity(drawn: synth.Drawn, settings: SynthesizeSettings, loaded: LoadedData) -> list[Section]:
    fid = drawn.fidelity(settings.top_k, settings.query)
    st.markdown("**Fidelity: the data against the synthetic table** (for you: the real side reads your data)")
    scores = views.scores_frame(fid)
    show_table(scores, key="synth_scores", width="stretch")  # scrolls in its own frame on a phone
    sections = [Section("Fidelity: the data against the synthetic table", table=scores)]
    parts = views.group_options(fid)
    group = st.selectbox("Show", parts, format_func=lambda g: "everyone" if g == ALL else g, key="w_synth_part")
    real, synthetic = views.matrix_figures(fid, group)
    left, right = st.columns(2)
    left.markdown("**Transitions in the data**")
    left.plotly_chart(real, key="synth_real_matrix", config={"displaylogo": False})
    right.markdown("**Transitions in the synthetic table**")
    right.plotly_chart(synthetic, key="synth_matrix", config={"displaylogo": False})
    sections += [Section("Transitions in the data", figure=real), Section("Transitions in the synthetic table",
                                                                          figure=synthetic)]
    states = list(fid.real.states)
    entries = fid.real.entries().sum(axis=0)
    busiest = states[int(entries.argmax())]
    state_shown = st.selectbox("Dwell times of state", states, index=states.index(busiest), key="w_synth_state")
    dwell = views.dwell_figure(fid, group, state_shown)
    if dwell is None:
        st.caption("Dwell-time histograms need each user's sequence; these data are held as counts only.")
    else:
        show_figure(dwell, [], key="synth_dwell")
        sections.append(Section(f"How long a stay in {state_shown} lasts", figure=dwell))
    return sections


@st.fragment
def _sweep(loaded: LoadedData, settings: SynthesizeSettings, chosen: SynthesisPlan) -> list[Section]:
    st.markdown("**How fidelity changes with ε_puffer**, beside the group-DP synthesizer you would otherwise use")
    if not st.toggle("Compare over ε (a few seconds)", key="w_synth_sweep", persist_state="session"):
        return []
    with st.spinner("Releasing and drawing at every ε of the grid…"):
        sweep = synth.sweep(loaded, settings, chosen)
    metric = st.selectbox("Metric", list(views.SWEEP_METRICS), format_func=lambda m: METRIC_WORDS[m],
                          key="w_synth_sweep_metric")
    frame = views.sweep_frame(sweep, metric)
    fig = views.sweep_figure(frame, metric)
    note = (f"Everyone, the mean of {views.SWEEP_RUNS} releases per point (bars: lowest to highest), numpy noise"
            f" from seed {settings.seed}: a what-if, not a release"
            f"{'' if settings.secrets.is_all else ', calibrated for the chosen secrets'}.")
    show_figure(fig, [note], key="synth_sweep_chart")
    return [Section("How fidelity changes with ε_puffer", note, fig, frame)]


def _results(loaded: LoadedData, settings: SynthesizeSettings, drawn: synth.Drawn) -> None:
    st.subheader("4. Download and fidelity")
    st.success(views.drawn_words(drawn.counts, drawn.plan))
    st.download_button("Download the synthetic data (CSV)", drawn.csv, file_name="synthetic.csv", mime="text/csv",
                       key="w_synth_download", on_click="ignore", icon=":material/download:", type="primary")
    st.dataframe(pd.read_csv(io.BytesIO(drawn.csv), nrows=PREVIEW_ROWS), hide_index=True, key="synth_preview")
    sections = _fidelity(drawn, settings, loaded)
    sections += _sweep(loaded, settings, drawn.plan) or []
    st.markdown("**Take it with you**: a report (the settings, the plan, the fidelity and its charts) and a script"
                " that releases the same table again with puffer_core")
    grouped = synth.by_group(loaded, settings)
    summary = f"A synthetic release of {loaded.description}: {drawn.release.event.describe()}"
    offer_exports(
        lambda: html_report("Pufferfish Lab — Synthesize", summary, report_settings(loaded, settings),
                            [*_plan_sections(drawn.plan), *sections,
                             report_section(settings.secrets, loaded.stats.states, settings.eps_puffer, None)]),
        lambda: script(loaded, settings, grouped, synth.longest(loaded)),
        "synthesize",
        key="w_synth_exports",
    )


def _plan_sections(chosen: SynthesisPlan) -> list[Section]:
    return [Section("The plan", chosen.event.describe(), views.budget_figure(chosen), views.plan_frame(chosen),
                    tuple(n.message for n in chosen.notes))]


_open_link()
st.subheader("1. Data")
asked = st.session_state.get("syn_ask_for")
if asked:
    st.info(f"The link was made with the file '{asked}': upload it below to synthesize it with the same settings"
            " (files are never kept by the app).")
data = dataset_picker("syn")
if data is not None:
    state.put(SYNTH_DATA, data_name(data))
    if data.dataset is None:  # a file was given
        st.session_state.pop("syn_ask_for", None)
    _summary(data)
    st.subheader("2. The release")
    chosen_settings = _controls(data)
    plan = _plan(data, chosen_settings)
    if plan is not None:
        _show_plan(plan)
        st.subheader("3. Generate")
        key = synth.release_key(data, chosen_settings)
        st.caption(f"The synthetic table will have {plan.counts.n_rows:,} rows"
                   f" ({views.csv_size_words(plan.counts.n_rows)} as CSV).")
        if st.button("Generate the synthetic dataset", type="primary", key="w_synth_run", icon=":material/play_arrow:"):
            _generate(plan, chosen_settings, key)
        stored = st.session_state.get("synth_drawn")
        if stored is not None and stored[0] == key:
            _results(data, chosen_settings, stored[1])
        elif stored is not None:
            st.info("The data or the release's settings changed since the last table: generate it again.")
state.share(SynthesizeSettings.from_session().link())
