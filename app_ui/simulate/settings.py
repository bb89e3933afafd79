"""The Simulate page's form, "2. What to release": query, mechanisms, ε_puffer grid, releases, trials, seed, Θ.

Every setting is read from its widget and checked as it is typed (the ε grid by
:func:`app_ui.simulate.words.parse_grid`); :func:`simulation_settings` returns them as one record,
:class:`SimulateSettings` (the keywords of :func:`puffer_core.simulation.simulate`, the prior-uncertainty
choice and the fit's smoothing), or None while something cannot run.  The widgets keep their values for the
session (``persist_state``); none of them is in a link.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import streamlit as st

from app_ui.core import inputs
from app_ui.simulate import words as words
from puffer_core.data.sequences import Sequences
from puffer_core.data.stats import SequenceStats
from puffer_core.mechanisms import DEFAULT_MECHANISMS, MECHANISMS, QUERIES, TOPK_LAPLACE, mechanisms_for
from puffer_core.priors.codecs import Number
from puffer_core.priors.fitting import DEFAULT_SMOOTHING
from puffer_core.simulation.metrics import informative_k, trivial_topk
from puffer_core.simulation.run import DEFAULT_EPS_GRID, MAX_RELEASES, RELEASE_MODES

MAX_TRIALS_UI = 5000
DEFAULT_DRAWS = 20  # posterior draws in Θ: enough to see the spread, quick at every validated size
MAX_DRAWS_UI = 200
THETA_FIELDS = ("draws", "concentration", "prior_seed")  # set with a robust Θ only


@dataclass(frozen=True)
class SimulateSettings:
    """What the Simulate page runs: the form's choices (hashable: the results are kept under them).

    ``seed`` draws the noise; with ``robust``, Θ is the fit and ``draws`` Dirichlet posterior draws with
    ``concentration`` α₀ (None: 1/K) and ``prior_seed``; ``smoothing`` is the fit's τ (chosen in section 1);
    ``secrets`` what every mechanism protects (:mod:`app_ui.simulate.secrets`).
    """

    query: str
    k: int
    mechanisms: tuple[str, ...]
    eps_grid: tuple[float, ...]
    releases: int
    release_mode: str
    trials: int
    seed: int
    topk_laplace: str
    postprocess: bool
    robust: bool = False
    draws: int = DEFAULT_DRAWS
    concentration: float | None = None
    prior_seed: int = 0
    smoothing: float = DEFAULT_SMOOTHING
    secrets: str = ""  # what is secret (docs/math.md §16): the chosen value secrets' text, "" for every pair

    def as_dict(self) -> dict[str, Any]:
        """The settings by name, as the JSON report writes them (Θ's only with a robust Θ)."""
        out = asdict(self)
        for name in () if self.robust else THETA_FIELDS:
            del out[name]
        return out


def simulation_settings(seqs: Sequences | SequenceStats, can_postprocess: bool = True) -> SimulateSettings | None:
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
        start = informative_k(seqs.n_states) or 1  # below the number of states: a list that can be wrong
        kept = st.session_state.get("w_sim_k")
        other_data = st.session_state.get("sim_k_states", seqs.n_states) != seqs.n_states
        if kept is not None and (kept > seqs.n_states or other_data and kept >= seqs.n_states):
            # a k set for other data, which these data's few states make impossible or trivially right
            st.session_state["w_sim_k"] = start
            c2.caption(f"k was {int(kept)}; these data have {seqs.n_states} states, so k starts again from {start}.")
        st.session_state["sim_k_states"] = seqs.n_states
        k = _box(c2, "k (how many top states per group)", 1, seqs.n_states, start, "w_sim_k")
        why = trivial_topk(k, seqs.n_states)
        if why:
            st.warning(f"This comparison cannot tell the mechanisms apart: {why}.", icon=":material/warning:")
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
    releases = _box(
        c2,
        "Releases",
        1,
        MAX_RELEASES,
        1,
        "w_sim_releases",
        help="How many times the query is published (e.g. 12 for monthly).",
    )
    trials = _box(
        c3,
        "Trials",
        2,
        MAX_TRIALS_UI,
        200,
        "w_sim_trials",
        step=50,
        help="Independent repetitions; intervals are mean ± 1.96·sd/√trials.",
    )
    seed = _box(c4, "Seed", 0, 2**31 - 1, 0, "w_sim_seed")
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
    if grid.problems or inputs.invalid_inputs():  # a value out of range is said under its box
        return None
    if not mechanisms:
        st.error("Choose at least one mechanism.")
        return None
    return SimulateSettings(
        query=query,
        k=k,
        mechanisms=tuple(mechanisms),
        eps_grid=tuple(grid.values),
        releases=releases,
        release_mode=release_mode,
        trials=trials,
        seed=seed,
        topk_laplace=topk_laplace,
        postprocess=postprocess,
        **robust,
    )


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
    draws = _box(
        c1,
        "Posterior draws M",
        1,
        MAX_DRAWS_UI,
        DEFAULT_DRAWS,
        "w_sim_draws",
        help="Θ = the fit and M draws; more draws cover more of the posterior and take longer.",
    )
    concentration = inputs.number(
        c2,
        "Dirichlet α₀ per count",
        Number(0.0001, 100.0),
        None,
        optional=True,
        format="%.4g",
        placeholder=f"1/K = {1 / n_states:.3g}",
        key="w_sim_alpha",
        persist_state="session",
        help="Added to every transition count before drawing a row; empty: 1/K.",
    )
    prior_seed = _box(c3, "Draw seed", 0, 2**31 - 1, 0, "w_sim_prior_seed")
    return {
        "robust": True,
        "draws": draws,
        "concentration": None if concentration is None else float(concentration),
        "prior_seed": prior_seed,
    }


def _box(container: Any, label: str, low: int, high: int, value: int, key: str, **kwargs: Any) -> int:
    """A whole number from ``low`` to ``high``, kept for the session; a value out of range is said under the
    box (:func:`app_ui.core.inputs.number`) and the form then returns None, so nothing runs with another value."""
    typed = inputs.number(
        container, label, Number(low, high, whole=True), value, key=key, persist_state="session", **kwargs
    )
    return value if typed is None else int(typed)
