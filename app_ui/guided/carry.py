"""What the analyst's path hands to the pages behind its steps, so that they show the same numbers.

- The plan (step 4) becomes the Plan & compose page's ledger: as many rows as releases planned, each the
  trial's mechanism at the path's ε_puffer, with the trial's k; its planner splits the total those releases
  spend together ([C] Theorem 6.2) over as many releases (:func:`carry_plan`).
- The trial run (step 5) becomes the Simulate page's form: the same data, query, k, the two mechanisms, the
  ε_puffer, trials, seed and prior uncertainty (:func:`carry_trial`).

Both write the settings (or the widgets' session values) before the page opens; the page then computes, and
its report, script and link carry them like any other choice.
"""

from __future__ import annotations

import streamlit as st

from app_ui.core import state
from app_ui.data.picker import UPLOAD, LoadedData
from app_ui.guided.analyst import TRIAL_MECHANISMS
from app_ui.guided.settings import AnalystSettings
from app_ui.plan.ledger import LEDGER, LEDGER_K, MONTHS, Row


def plan_rows(settings: AnalystSettings) -> tuple[Row, ...]:
    """The guided plan as ledger rows: twelve are named by the months, other counts "release 1", "release 2"…"""
    mechanism = TRIAL_MECHANISMS[settings.query][0]
    n = settings.plan_releases
    names = MONTHS if n == len(MONTHS) else tuple(f"release {i + 1}" for i in range(n))
    return tuple((name, mechanism, float(settings.eps_puffer)) for name in names)


def carry_plan(settings: AnalystSettings, composed: float) -> str:
    """Make the guided plan the Plan & compose page's ledger and planner; what was carried, in a sentence."""
    state.restart_editor(LEDGER, plan_rows(settings))
    state.put(LEDGER_K, settings.k)
    carried = f"the ledger of {settings.plan_releases} releases at ε_puffer = {settings.eps_puffer:g} each"
    if state.EPS_RANGE.low <= composed <= state.EPS_RANGE.high:
        state.put(state.PLAN_TOTAL, composed)
        carried += f" and the planner's total {composed:.6g}"
    for key in ("w_ledger_k", "w_plan_total", "w_plan_releases"):  # the boxes start again from the settings
        st.session_state.pop(key, None)
    return carried


def carry_trial(data: LoadedData, settings: AnalystSettings) -> None:
    """Fill the Simulate page's form with the trial run: its data, query, k, mechanisms, ε_puffer, trials, seed
    and prior uncertainty (a built-in dataset by its name and user column; an upload as the file loaded)."""
    session = st.session_state
    source = data.name if data.upload is None and (data.dataset is not None or data.large is not None) else UPLOAD
    session["sim_source"] = session["sim_last_source"] = source
    if data.dataset is not None:
        session[f"sim_user_{data.dataset}"] = data.columns.get("user")
    session.pop("w_sim_smoothing", None)  # the slider starts again from the papers' τ, which the path fits with
    session["w_sim_query"] = settings.query
    if settings.query == "topk":
        session["w_sim_k"] = settings.k
    session[f"w_sim_mechanisms_{settings.query}"] = list(TRIAL_MECHANISMS[settings.query])
    session["w_sim_grid"] = repr(float(settings.eps_puffer))  # exactly the path's ε_puffer
    session["w_sim_releases"] = 1
    session["w_sim_trials"] = settings.trials
    session["w_sim_seed"] = settings.seed
    session["w_sim_postprocess"] = False
    session["w_sim_topk_laplace"] = "split"
    chosen = settings.prior.uncertainty
    session["w_sim_robust"] = chosen.on
    if chosen.on:
        session["w_sim_draws"] = chosen.draws
        session["w_sim_prior_seed"] = chosen.seed
        session["w_sim_alpha"] = chosen.concentration
