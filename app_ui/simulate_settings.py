"""The Simulate page's form, "2. What to release": query, mechanisms, ε_puffer grid, releases, trials, seed, Θ.

Every setting is read from its widget and checked as it is typed (the ε grid by
:func:`app_ui.simulate_text.parse_grid`); :func:`simulation_settings` returns them as the keywords
of :func:`puffer_core.simulation.simulate` (plus the prior-uncertainty choice), or None while
something cannot run.  The widgets keep their values for the session (``persist_state``).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from puffer_core.data.sequences import Sequences
from puffer_core.data.stats import SequenceStats
from puffer_core.mechanisms import DEFAULT_MECHANISMS, MECHANISMS, QUERIES, TOPK_LAPLACE, mechanisms_for
from puffer_core.simulation.run import DEFAULT_EPS_GRID, MAX_RELEASES, RELEASE_MODES

from . import simulate_text as words

MAX_TRIALS_UI = 5000
DEFAULT_DRAWS = 20  # posterior draws in Θ: enough to see the spread, quick at every validated size
MAX_DRAWS_UI = 200


def simulation_settings(seqs: Sequences | SequenceStats, can_postprocess: bool = True) -> dict[str, Any] | None:
    """The form "2. What to release" for these sequences: the settings chosen, or None while they cannot run.

    ``can_postprocess``: each user's sequence is at hand (the smoother of docs/math.md §14 needs it; a
    deployer's large dataset exists here only as counts).

    Problems are shown as the user types (st.error), never after a Run button.
    """
    st.subheader("2. What to release")
    c1, c2 = st.columns(2)
    query = c1.radio(
        "Query", list(QUERIES), format_func=words.QUERY_NAMES.__getitem__, key="w_sim_query", persist_state="session"
    )
    k = 3
    if query == "topk":
        k = int(
            c2.number_input(
                "k (how many top states per group)",
                1,
                seqs.n_states,
                min(3, seqs.n_states),
                key="w_sim_k",
                persist_state="session",
            )
        )
    mechanisms = st.multiselect(
        "Mechanisms",
        list(mechanisms_for(query)),
        default=list(DEFAULT_MECHANISMS[query]),
        format_func=lambda name: MECHANISMS[name].label,
        key=f"w_sim_mechanisms_{query}",
        persist_state="session",
    )
    c1, c2, c3, c4 = st.columns(4)
    grid_text = c1.text_input(
        "ε_puffer grid",
        ", ".join(f"{e:g}" for e in DEFAULT_EPS_GRID),
        key="w_sim_grid",
        persist_state="session",
        help="The guarantees to compare, separated by commas; each must be positive.",
    )
    releases = int(
        c2.number_input(
            "Releases",
            1,
            MAX_RELEASES,
            1,
            key="w_sim_releases",
            persist_state="session",
            help="How many times the query is published (e.g. 12 for monthly).",
        )
    )
    trials = int(
        c3.number_input(
            "Trials",
            2,
            MAX_TRIALS_UI,
            200,
            step=50,
            key="w_sim_trials",
            persist_state="session",
            help="Independent repetitions; intervals are mean ± 1.96·sd/√trials.",
        )
    )
    seed = int(c4.number_input("Seed", 0, 2**31 - 1, 0, key="w_sim_seed", persist_state="session"))
    grid = words.parse_grid(grid_text)  # checked as typed, before anything runs
    for problem in grid.problems:
        st.error(f"The ε_puffer grid cannot be used: {problem}.")
    for note in grid.notes:
        st.caption(note)
    release_mode = "repeat"
    topk_laplace = "split"
    with st.expander("More options"):
        if releases > 1:
            release_mode = st.radio(
                "Each release covers",
                list(RELEASE_MODES),
                format_func=words.RELEASE_MODE_NAMES.__getitem__,
                key="w_sim_mode",
                persist_state="session",
            )
        if query == "topk":
            topk_laplace = st.radio(
                "Laplace mechanisms and MQM answer top-k with",
                list(TOPK_LAPLACE),
                format_func=words.TOPK_LAPLACE_NAMES.__getitem__,
                key="w_sim_topk_laplace",
                persist_state="session",
            )
    postprocess = st.toggle(
        "Also post-process the released counts with the prior (free: no privacy cost)",
        key="w_sim_postprocess",
        persist_state="session",
        disabled=not can_postprocess,
        help="Laplace counts and MQM are also scored after smoothing with the fitted chain: the best linear"
        " estimate from the counts' exact moments under the prior, projected onto possible counts (docs/math.md"
        " §14). It helps when the noise is large and the data follow the prior; a wrong prior can make it worse."
        + ("" if can_postprocess else " Not for this dataset: it is held only as counts, and the smoother needs"
           " each user's sequence."),
    ) and can_postprocess
    robust = _uncertainty_settings(seqs.n_states)
    if grid.problems:
        return None
    if not mechanisms:
        st.error("Choose at least one mechanism.")
        return None
    return {
        "query": query,
        "k": k,
        "mechanisms": tuple(mechanisms),
        "eps_grid": grid.values,
        "releases": releases,
        "release_mode": release_mode,
        "trials": trials,
        "seed": seed,
        "topk_laplace": topk_laplace,
        "postprocess": postprocess,
        **robust,
    }


def _uncertainty_settings(n_states: int) -> dict[str, Any]:
    robust = st.toggle(
        "Prior uncertainty: calibrate with a robust set Θ of priors",
        key="w_sim_robust",
        persist_state="session",
        help="The fitted chain is an estimate from finite data. Θ adds Dirichlet posterior draws of every row"
        " (rows seen rarely vary most) and every mechanism is calibrated for all of them at once"
        " (docs/math.md §12, §2.1).",
    )
    if not robust:
        return {"robust": False}
    c1, c2, c3 = st.columns(3)
    draws = int(
        c1.number_input(
            "Posterior draws M",
            1,
            MAX_DRAWS_UI,
            DEFAULT_DRAWS,
            key="w_sim_draws",
            persist_state="session",
            help="Θ = the fit and M draws; more draws cover more of the posterior and take longer.",
        )
    )
    concentration = c2.number_input(
        "Dirichlet α₀ per count",
        min_value=0.0001,
        max_value=100.0,
        value=None,
        format="%.4g",
        placeholder=f"1/K = {1 / n_states:.3g}",
        key="w_sim_alpha",
        persist_state="session",
        help="Added to every transition count before drawing a row; empty: 1/K.",
    )
    prior_seed = int(
        c3.number_input("Draw seed", 0, 2**31 - 1, 0, key="w_sim_prior_seed", persist_state="session")
    )
    return {
        "robust": True,
        "draws": draws,
        "concentration": None if concentration is None else float(concentration),
        "prior_seed": prior_seed,
    }
