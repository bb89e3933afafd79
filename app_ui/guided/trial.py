"""The analyst's trial run (step 5): what is published, its k, the trials and the seed, chosen in the settings.

The choices are settings (:mod:`app_ui.guided.settings`), so that the path's link, report and script carry them
and the Simulate page can be filled with them.  A top-k list that cannot fail is never the default
(:func:`puffer_core.informative_k`: with k at least the number of states every state is in the top k and every
mechanism scores 1); when the user picks one, the page says why it compares nothing.
"""

from __future__ import annotations

import streamlit as st

from app_ui.core import inputs, state
from app_ui.guided.analyst import QUERIES
from app_ui.guided.settings import GUIDE_K, GUIDE_QUERY, GUIDE_SEED, GUIDE_TRIALS, AnalystSettings
from puffer_core import informative_k, trivial_topk


def _start_informative(n_states: int) -> None:
    """Before the controls are first drawn: lower a default k that cannot fail on these data (which have at least
    2 states).  A value the user typed (or a link gave) is kept."""
    if "w_guide_k" in st.session_state:
        return
    k = informative_k(n_states) or 1
    if state.get(GUIDE_K) == GUIDE_K.default and k != GUIDE_K.default:
        state.put(GUIDE_K, k)


def trial_choices(n_states: int) -> AnalystSettings:
    """The trial's controls (query, k, trials, seed) for data with ``n_states`` states; the path's settings."""
    _start_informative(n_states)
    cols = st.columns([2, 1, 1, 1])
    query = state.radio(cols[0], "What you publish", GUIDE_QUERY, QUERIES, key="w_guide_query")
    if query == "topk":
        k = state.number_input(cols[1], "k (top states per group)", GUIDE_K, key="w_guide_k")
        if k > n_states:
            st.error(f"k must be at most the number of states, {n_states}; found {k}.")
            raise inputs.Halt()
        why = trivial_topk(k, n_states)
        if why:
            st.warning(f"This trial cannot tell the mechanisms apart: {why}.", icon=":material/warning:")
    state.number_input(
        cols[2], "Trials", GUIDE_TRIALS, key="w_guide_trials", help="More trials: narrower intervals, a longer run."
    )
    state.number_input(
        cols[3], "Seed", GUIDE_SEED, key="w_guide_seed", help="The noise's seed: the same seed, the same numbers."
    )
    inputs.stop_if_invalid()
    return AnalystSettings.from_session()
