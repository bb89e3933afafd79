"""Guided: publish your data — the analyst's path, one step at a time (words in app_ui/guided/analyst.py)."""

from __future__ import annotations

import streamlit as st

from app_ui import page_path
from app_ui.calibrate.accuracy_link import open_from_guide
from app_ui.core import inputs, state
from app_ui.core.charts import show_figure, transition_heatmap
from app_ui.core.docs import show_math
from app_ui.core.memo import session_memo
from app_ui.core.report import offer_exports
from app_ui.core.tables import static_table
from app_ui.data.picker import LoadedData, dataset_picker, fitted_prior
from app_ui.guided import analyst as path
from app_ui.guided import exports
from app_ui.guided.carry import carry_plan, carry_trial
from app_ui.guided.secrets import path_curve, path_protected, path_secrets
from app_ui.guided.settings import GUIDE_STEP, AnalystSettings
from app_ui.guided.steps import current_step, go_to, step_buttons, step_header
from app_ui.guided.trial import trial_choices
from app_ui.prior.current import current_curve, fitted_data, uncertainty, uncertainty_controls, use_prior
from app_ui.prior.settings import PriorChoice
from app_ui.secrets.controls import secrets_section
from app_ui.synthesize.guided import offer_synthesis
from puffer_core import calibrate
from puffer_core.display import fmt

PATH = "analyst"

st.title("Publish your data, step by step")
st.markdown(
    "Six short steps from your data to a release you can defend, in plain words; each step has its"
    " mathematics one click away. Everything you set here is what the other pages use too."
)
state.share_button()
if f"path_{PATH}_step" not in st.session_state:  # a session opened from a link starts at the step it names
    go_to(PATH, state.get(GUIDE_STEP))
step = step_header(PATH, path.TITLES)
last = len(path.TITLES) - 1


def _fit(data: LoadedData) -> None:
    """Next on step 1: the chain fitted to the data becomes the prior of every page."""
    use_prior(fitted_prior(data), origin=data)


def _chosen_data() -> LoadedData | None:
    """The data the chain in the settings was fitted to (None: go back to step 1)."""
    data = fitted_data()
    if data is None:
        st.warning("Choose your data first (step 1): the later steps use the chain fitted to it.")
        step_buttons(PATH, step, last, ready=False)
    return data


def _prior(data: LoadedData, settings: AnalystSettings):  # noqa: ANN202 - a chain, or Θ (a list of chains)
    if settings.prior.uncertainty.on:
        return list(uncertainty(data).spread.priors)
    return fitted_prior(data)


def _curve(data: LoadedData, settings: AnalystSettings):  # noqa: ANN202 - Θ's curve when uncertainty is on
    """The curve of the path's numbers: for the chosen secrets (docs/math.md §16), of Θ with prior uncertainty."""
    if settings.prior.uncertainty.on:
        spread = uncertainty(data)
        return path_curve(settings, spread.spread.robust, spread)
    return path_curve(settings, current_curve().curve, None)


def _trial_key(data: LoadedData, settings: AnalystSettings) -> tuple[object, ...]:
    """What a trial run depends on: the data, the prior (and its uncertainty), the query, k, ε, trials, seed."""
    chosen = settings.prior.uncertainty
    uncertain = (chosen.on, chosen.draws, chosen.seed, chosen.concentration)
    return (
        data.fingerprint,
        tuple(data.columns.items()),
        *uncertain,
        settings.query,
        settings.k,
        settings.eps_puffer,
        settings.trials,
        settings.seed,
        *settings.secrets.link_key,
    )


def _trial(data: LoadedData, settings: AnalystSettings) -> tuple[object, ...] | None:
    """The trial run with these settings, if it was run (the key, the table, its words)."""
    ran = st.session_state.get("guide_trial")
    return ran if ran is not None and ran[0] == _trial_key(data, settings) else None


if step == 0:
    st.markdown(path.WORDS["data"])
    data = dataset_picker("guide")
    if data is not None:
        seqs = data.stats
        st.success(
            f"**{data.description}**: {seqs.n_users:,} users, {seqs.n_entries:,} entries, {seqs.n_states} states,"
            f" sequences of up to {seqs.max_length:,} entries."
        )
    show_math(1)
    step_buttons(
        PATH,
        step,
        last,
        ready=data is not None,
        missing="Choose or upload data to go on.",
        on_next=(lambda: _fit(data)) if data is not None else None,
    )

elif step == 1 and (data := _chosen_data()) is not None:
    st.markdown(path.WORDS["belief"])
    prior = fitted_prior(data)
    heatmap = session_memo(
        "guide_heatmap", data.fingerprint, lambda: transition_heatmap(prior.transition, prior.labels)
    )
    st.plotly_chart(heatmap, key="guide_heatmap", config={"displaylogo": False})
    st.caption(
        f"Row: the state now; column: the state next; colour: how likely ({prior.n_states} states, sequences of up"
        f" to T = {prior.length} entries). Hover over a cell for its probability."
    )
    with st.container(border=True):
        st.markdown(
            "**Is the data enough to know these links?** A state seen rarely has links we only guess at. Allow"
            " for that and every later step protects against the whole range of beliefs the data allows."
        )
        if uncertainty_controls(st, "w_guide_unc", "Allow for the fit being an estimate (prior uncertainty)"):
            inputs.stop_if_invalid()
            st.markdown(path.uncertainty_words(uncertainty(data), current_curve().curve))
    inputs.stop_if_invalid()
    show_math(6, 12)
    step_buttons(PATH, step, last)

elif step == 2 and (data := _chosen_data()) is not None:
    st.markdown(path.WORDS["target"])
    left, right = st.columns(2, gap="large")
    with left, st.container(border=True):
        st.markdown("**I know how private each release must be**")
        eps = state.number_input(st, "ε_puffer of one release", state.EPS_PUFFER, key="w_guide_eps")
        if float(f"{eps:.2f}") != eps:  # the box shows two decimals; the target is kept to every digit
            st.caption(f"Exactly ε_puffer = {eps!r}.")
    with right, st.container(border=True):
        st.markdown("**I know how accurate it must be**")
        st.markdown(
            "The Calibrate page turns the error you can accept into the ε_puffer it needs; *Use this ε_puffer*"
            " there makes it the target here, exactly, and brings you back."
        )
        if st.button("Calibrate: from the accuracy", icon=":material/tune:", key="w_guide_to_accuracy"):
            open_from_guide()
            st.switch_page(page_path("calibrate"))
    secrets_section(PriorChoice.from_session(), float(state.get(state.EPS_PUFFER)))  # what is secret (§16)
    inputs.stop_if_invalid()
    settings = AnalystSettings.from_session()
    curve = _curve(data, settings)
    cal = calibrate(curve, settings.eps_puffer)
    st.markdown(path.target_words(curve, cal))
    show_math(2, 3)
    step_buttons(PATH, step, last)

elif step == 3 and (data := _chosen_data()) is not None:
    st.markdown(path.WORDS["plan"])
    state.number_input(
        st.columns([1, 2])[0],
        "Releases planned (e.g. 12 for a year of months)",
        state.PLAN_RELEASES,
        key="w_guide_releases",
    )
    inputs.stop_if_invalid()
    settings = AnalystSettings.from_session()
    curve = _curve(data, settings)
    plan = path.plan_numbers(curve, settings.eps_puffer, settings.plan_releases)
    st.markdown(path.plan_words(plan))
    path_protected(settings)
    figure, notes = path.plan_figure(curve, plan)
    show_figure(figure, notes, key="guide_plan")
    st.caption(
        "The same plan on the Plan & compose page, as a ledger of these releases you can change (and its"
        " planner splitting the same total); its report and script then recompute this plan:"
    )
    if st.button("Open this plan in Plan & compose", icon=":material/event_note:", key="w_guide_to_plan"):
        st.session_state["plan_carried"] = carry_plan(settings, plan.composed)
        st.switch_page(page_path("plan"))
    show_math(4)
    step_buttons(PATH, step, last)

elif step == 4 and (data := _chosen_data()) is not None:
    st.markdown(path.WORDS["trial"])
    settings = trial_choices(data.stats.n_states)
    eps, chosen = settings.eps_puffer, settings.prior.uncertainty
    query, k, trials, seed = settings.query, settings.k, settings.trials, settings.seed
    key = _trial_key(data, settings)
    if st.button("Run the trial", type="primary", icon=":material/play_arrow:", key="w_guide_run"):
        with st.spinner(f"Simulating {trials} releases on the data…"):
            table = path.trial_run(data, _prior(data, settings), query, eps, trials, k=k, seed=seed,
                                   secrets=path_secrets(settings))
        st.session_state["guide_trial"] = (key, table, path.trial_words(query, table, k))
    path_protected(settings)
    ran = _trial(data, settings)
    if ran is not None:
        static_table(ran[1])
        st.caption(ran[2])
    elif st.session_state.get("guide_trial") is not None:
        st.info("The settings changed since the last trial: run it again.")
    st.caption(
        "The same trial on the Simulate page (the same data, query, mechanisms, ε_puffer, trials and seed: the same"
        " numbers), where you can add every other mechanism, several ε and several releases:"
    )
    if st.button("Open this trial in Simulate", icon=":material/science:", key="w_guide_to_simulate"):
        carry_trial(data, settings)
        st.switch_page(page_path("simulate"))
    show_math(7)
    step_buttons(PATH, step, last)

elif step == 5 and (data := _chosen_data()) is not None:
    st.markdown(path.WORDS["report"])
    settings = AnalystSettings.from_session()
    curve = _curve(data, settings)
    eps, releases = settings.eps_puffer, settings.plan_releases
    plan = path.plan_numbers(curve, eps, releases)
    prior = fitted_prior(data)
    trial = _trial(data, settings)
    spread = uncertainty(data).description() if settings.prior.uncertainty.on else None
    plan_figure, plan_notes = path.plan_figure(curve, plan)
    prior_words = spread or f"the chain fitted to {data.description}"
    facts = path.PathReport(
        data=f"{data.description}: {data.stats.n_users:,} users, {data.stats.n_entries:,} entries.",
        data_name=data.description,
        belief=f"The chain fitted to the data: {prior.n_states} states, T = {prior.length}."
        + (f" {spread}." if spread else ""),
        prior=prior_words,
        heatmap=transition_heatmap(prior.transition, prior.labels),
        target=path.target_words(curve, plan.each),
        plan=path.plan_words(plan),
        plan_figure=plan_figure,
        plan_notes=plan_notes,
        eps=eps,
        releases=releases,
        settings=exports.report_settings(data, settings, prior_words, trial is not None),
        trial=None if trial is None else trial[1],
        trial_words="" if trial is None else str(trial[2]),
    )
    st.markdown(
        f"- **Target:** ε_puffer = {eps:g} per release → per-entry ε_DP = {fmt(plan.each.eps_dp)}\n"
        f"- **Plan:** {releases} releases → ε_puffer = {fmt(plan.composed)} together\n"
        f"- **Trial run:** {'included' if trial is not None else 'not run with these settings (step 5)'}"
    )
    path_protected(settings)
    st.markdown(
        "**Take it with you**: the report (every setting, every number and chart of the path) and a script that"
        " recomputes every number in it with puffer_core; *Share these settings* (top) reopens this path as it is."
    )
    offer_exports(
        lambda: path.report(facts),
        lambda: exports.script(data, settings, prior.length, trial is not None),
        stem="pufferfish-guided",
        key="w_guide_export",
    )
    st.markdown("Each page behind a step has its own report and a script that recomputes it:")
    for name in ("calibrate", "plan", "simulate"):
        st.page_link(page_path(name), label=name.capitalize() if name != "plan" else "Plan & compose")
    offer_synthesis(data, eps)  # publish a synthetic dataset: the Synthesize page with these data and ε_puffer
    step_buttons(PATH, step, last)

state.put(GUIDE_STEP, min(current_step(PATH), last))
state.share(AnalystSettings.from_session().link())
