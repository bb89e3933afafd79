"""The best possible mechanism: a yardstick for every shipped one, and the optimum run twice (docs/math.md §18)."""

from __future__ import annotations

import streamlit as st

from app_ui.core import inputs, state
from app_ui.core.charts import show_figure
from app_ui.core.report import offer_exports
from app_ui.core.tables import csv_download, fmt, show_table
from app_ui.gaussian.settings import GAUSS_ALPHA
from app_ui.gaussian.views import count_controls
from app_ui.optimal.exports import optimal_report, optimal_script
from app_ui.optimal.settings import OPT_EPS, OPT_LENGTH, OPT_RUNS, OptimalSettings
from app_ui.optimal.views import errors_figure, leakage_figure, refusal, shortened, yardstick
from app_ui.prior.current import build_prior, chain_priors
from app_ui.prior.settings import PriorChoice
from puffer_core.priors.models import MarkovChainPrior

st.title("The best possible mechanism")
st.markdown(
    "How far is each mechanism from the best one possible? For the count of one state per user, the"
    " mechanism with the least expected error among **all** ε-Pufferfish mechanisms that see the data only"
    " through the count is a linear programme (solved exactly here, its floor certified by the solver's duals)."
    " Every shipped mechanism's exact error sits beside that floor. And [C]'s warning, made concrete: the"
    " optimum, run **twice** on the same data, may stop being private at all (docs/math.md §18)."
)
state.show_ignored_link_settings()
state.share_button()


def yardstick_page(prior: PriorChoice, chains: list[MarkovChainPrior]) -> None:
    """The controls, then the yardstick (or why it is not computed)."""
    st.caption(f"Prior: {prior.description} — its chain over the yardstick's T entries.")
    c1, c2, c3, c4, c5 = st.columns(5)
    state.number_input(c1, "ε_puffer", OPT_EPS, key="w_opt_eps")
    state.number_input(c2, "T (entries)", OPT_LENGTH, key="w_opt_length", help=OPT_LENGTH.help)
    counted = count_controls(c3, chains, "w_opt_state")
    state.number_input(c4, "Runs k", OPT_RUNS, key="w_opt_runs", help="The optimum run 1..k times on the same data.")
    state.number_input(c5, "Rényi α (Gaussian rows)", GAUSS_ALPHA, key="w_opt_alpha")
    inputs.stop_if_invalid()
    settings = OptimalSettings.from_session()
    small = shortened(chains, settings.length)
    refused = refusal(small, settings.runs)
    if counted is None:
        return
    if refused is not None:
        st.error(f"Not computed: {refused}.")
        return
    key = (prior.kind, prior.params, settings.length)
    try:
        with st.spinner("Solving the linear programme and enumerating the runs…"):
            stick = yardstick(key, tuple(small), settings.eps, counted, settings.alpha, settings.runs)
    except ValueError as exc:
        st.error(f"Not computed: {exc}")
        return

    c = stick.comparison
    name, ratio = stick.best_shipped()
    last = stick.runs[-1]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Best possible error", fmt(c.floor), help="The LP's certified floor: E|output − count| of one release.")
    m2.metric("Laplace via a(b) ÷ floor", f"{fmt(c.ratio('pufferfish_laplace'), 3)}×")
    m3.metric("Best shipped ÷ floor", f"{fmt(ratio, 3)}×", help=f"{name}: the least error of the shipped ones.")
    m4.metric(f"Leakage of {last.k} runs", fmt(last.leakage), help=f"k·ε = {fmt(last.k_eps)}: adding up would say.")
    (st.warning if stick.collapse() is not None else st.success)(stick.summary())

    errors, runs = st.tabs(["Error beside the floor", "The optimum run k times"])
    with errors:
        fig, notes = errors_figure(stick)
        show_figure(fig, notes, key="optimal_errors_chart")
        show_table(stick.errors(), key="optimal_errors_table", width="stretch")
        st.caption(
            "Gaussian rows are (α, ε)-Rényi Pufferfish: a weaker guarantee than ε-Pufferfish, so they may lie below"
            " the floor without contradicting it (docs/math.md §17). The a(b) curve and MQM protect every pair"
            " and position, so their rows stay comparable (if pessimistic)."
        )
        csv_download(stick.errors(), "best-possible.csv", "Download this table (CSV)", key="w_download_optimal")
    with runs:
        fig, notes = leakage_figure(stick)
        show_figure(fig, notes, key="optimal_runs_chart")
        show_table(stick.leakage(), key="optimal_runs_table", width="stretch")
        st.caption(
            "Each run draws from the same returned table q(y | count), independently, on the same data; the"
            " leakage is exact (every output multiset, every protected pair and θ). Optimal mechanisms are not"
            " unique: this is the leakage of the one returned. Theorem 6.2 composes the a(b)-calibrated Laplace"
            " mechanism at the same ε — the composable alternative."
        )
        csv_download(stick.leakage(), "optimum-runs.csv", "Download this table (CSV)", key="w_download_runs")

    st.markdown("**Take this with you**: a report to read or share, and a script that recomputes it.")
    offer_exports(lambda: optimal_report(stick, settings), lambda: optimal_script(settings), "optimal",
                  key="w_optimal_exports")



prior = OptimalSettings.from_session().prior
try:
    chains = chain_priors(build_prior(prior.kind, prior.params))
except ValueError as exc:
    st.error(f"The prior cannot be used: {exc}")
    chains = None
if chains is None:
    st.info("The yardstick needs a Markov chain prior (the count's laws); choose one on the Influence curves page.")
else:
    yardstick_page(prior, chains)

state.share(OptimalSettings.from_session().link())
