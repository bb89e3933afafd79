"""The whole-population view's controls on Calibrate (docs/math.md "Whole-population secrets"): θ₂ in plain words,
the states counted, the number of users; then W, W/ε, the two means, the sentence, the chart and the downloads.

It computes only once switched on (its laws take seconds for large populations); bad input gives one message.
"""

from __future__ import annotations

import streamlit as st

import app_ui.core.report as report
from app_ui.core import state as settings_state
from app_ui.core.charts import show_figure
from app_ui.core.tables import csv_download, show_table
from app_ui.population.exports import population_report, population_script
from app_ui.population.settings import (
    HOWS,
    POP_COUNTED,
    POP_HOW,
    POP_MATRIX,
    POP_ON,
    POP_STATE,
    POP_STAY,
    POP_USERS,
    PopulationChoice,
)
from app_ui.population.views import (
    DEFAULT_USERS,
    NAMES,
    PopulationCase,
    PopulationView,
    case_from,
    changed_stay,
    default_stay,
    labels_of,
    matrix_text,
    population_view,
    read_matrix,
    users_within_limit,
)
from app_ui.prior.current import build_prior
from app_ui.prior.settings import PriorChoice
from puffer_core import MarkovChainPrior

STAY, TYPED = HOWS["stay"], HOWS["typed"]
QUESTION = ("Can a release of a count tell which of two population habits generated the data? θ₁ is the sidebar's"
            " chain; θ₂ an alternative you set, with the same states and length. The release is the number of"
            " entries, over all users, in the states you pick, plus Laplace noise of scale W/ε, W the ∞-Wasserstein"
            " distance between the count's two laws: then no release moves the odds of θ₁ against θ₂ by more than"
            " e^ε ([AP] Zhang, Ohrimenko & Cummings; docs/math.md \"Whole-population secrets\").")


def _alternative(first: MarkovChainPrior, labels: tuple[str, ...]) -> tuple[tuple[tuple[float, ...], ...], str]:
    """θ₂'s matrix and its description, from the controls (ValueError if it is not a transition matrix); each
    control starts from the session's setting (a link's) and writes it back."""
    chosen = PopulationChoice.from_session()
    codes = tuple(HOWS)
    how = st.radio("θ₂, the alternative habit", (STAY, TYPED), index=codes.index(chosen.how), horizontal=True,
                   key="w_pop_how")
    settings_state.put(POP_HOW, codes[(STAY, TYPED).index(how)])
    if how == STAY:
        c1, c2 = st.columns(2)
        state = c1.selectbox("State whose stay probability changes", range(len(labels)),
                             index=chosen.state if chosen.state < len(labels) else 0,
                             format_func=lambda i: labels[i], key="w_pop_state")
        kept = chosen.stay if state == chosen.state and chosen.stay is not None else default_stay(first, state)
        stay = c2.number_input(f"Its stay probability under {NAMES[1]}", 0.0, 1.0, kept,
                               step=0.05, key=f"w_pop_stay_{state}",
                               help=f"Under {NAMES[0]} it is {first.transition[state, state]:.4g}; the rest of the"
                                    " row keeps its proportions.")
        settings_state.put(POP_STATE, state)
        settings_state.put(POP_STAY, stay)
        return changed_stay(first, state, stay), (
            f"{NAMES[0]} with {labels[state]}'s stay probability {first.transition[state, state]:.4g} → {stay:g}")
    start = (matrix_text(changed_stay(first, 0, default_stay(first, 0))) if chosen.matrix is None
             else "\n".join(" ".join(repr(float(x)) for x in row) for row in chosen.matrix))  # a link's, exactly
    text = st.text_area(f"{NAMES[1]}'s transition matrix (one row per line, in the states' order: "
                        f"{', '.join(labels)})", start, key="w_pop_matrix")
    second = read_matrix(text, len(labels))
    settings_state.put(POP_MATRIX, second)
    return second, "a transition matrix typed in full"


def _case(prior: PriorChoice, eps: float, eps_dp: float) -> PopulationCase | None:
    built = build_prior(prior.kind, prior.params)
    if not isinstance(built, MarkovChainPrior):
        st.info("Whole-population secrets compare two Markov chains: choose one chain as the prior (not a set Θ or"
                " a Gaussian process) on the Influence curves page.")
        return None
    labels = labels_of(built)
    try:
        second, change = _alternative(built, labels)
        kept = [i for i in PopulationChoice.from_session().counted if i < len(labels)]
        counted = st.multiselect("States B counted (the query: entries in B over all users)", range(len(labels)),
                                 default=kept, format_func=lambda i: labels[i], key="w_pop_counted")
        settings_state.put(POP_COUNTED, tuple(counted))
        if not counted:
            raise ValueError("pick at least one state for B: the query counts the entries in B")
        probe = case_from(built, second, counted, 1, eps, eps_dp, change)
        probe.priors()  # θ₂ as the library reads it
        most = users_within_limit(probe)
        chosen = PopulationChoice.from_session().users
        users = st.number_input("Number of users n", 1, 10**7, min(DEFAULT_USERS, most) if chosen is None else chosen,
                                key="w_pop_users",
                                help=f"About {most:,} users finish within the work limit; more are refused.")
        settings_state.put(POP_USERS, int(users))
        return case_from(built, second, counted, int(users), eps, eps_dp, change)
    except ValueError as exc:
        st.error(f"The whole-population view cannot compute: {exc}")
        return None


def _show(view: PopulationView, prior: PriorChoice) -> None:
    cols = st.columns(3)
    for col, (label, value) in zip(cols * 2, view.figures(), strict=True):
        col.metric(label, value)
    st.success(view.sentence)
    if view.scale.w == 0:
        st.info(f"The count has the same law under {NAMES[0]} and {NAMES[1]}: it tells them apart not at all, and"
                " needs no noise for this secret (the library refuses a Laplace release with W = 0).")
    else:
        st.warning(view.honest_note())
    show_figure(view.figure, view.notes, key="population_chart")
    show_table(view.table, key="population_table", width="stretch")
    csv_download(view.table, "population.csv", "Download these figures (CSV)", key="w_pop_csv")
    report.offer_exports(lambda: population_report(view, prior), lambda: population_script(view, prior),
                         "population", key="w_pop_exports")


def population_section(prior: PriorChoice, eps: float, eps_dp: float) -> PopulationView | None:
    """The expander on Calibrate: at the page's target ε (``eps``), against its per-entry ε_DP (``eps_dp``); the
    view when it is on and computed (for the page's report), else None."""
    # open when the view is on (e.g. from a link), so a reopened link shows its W without a click
    with st.expander("Whole population: can a count tell which habit generated the data?",
                     expanded=bool(settings_state.get(POP_ON))):
        st.markdown(QUESTION)
        if not settings_state.toggle(st, "Compare two population habits", POP_ON, key="w_pop_on"):
            return None
        case = _case(prior, eps, eps_dp)
        if case is None:
            return None
        try:
            view = population_view(case)
        except ValueError as exc:  # Refused beyond the work limit, with the estimate
            st.error(f"The whole-population view cannot compute: {exc}")
            return None
        _show(view, prior)
        return view
