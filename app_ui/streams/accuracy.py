"""The Streams page's accuracy per step, and post-processing the releases with the prior (docs/math.md §13, §14).

For the ε_t schedule and the release at each step (randomized response, or a noisy histogram of
one entry), how often the release names the true state at step t — read alone (exact), and
after forward–backward under the prior (seeded simulation on data drawn from the prior, with a
95% interval) — through :func:`puffer_core.inference.posterior.smoothing_accuracy`.  Built once
per input; the page places it with a few lines.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_ui.core.charts import Band, Trace, line_figure
from app_ui.core.tables import Shown, fmt, shown
from app_ui.prior.current import Params, build_prior, chain_priors
from puffer_core.inference.posterior import SmoothingAccuracy, smoothing_accuracy
from puffer_core.mechanisms.laws import check_emissions
from puffer_core.tightness import RELEASES

DRAWS = 1000
SEED = 0
MAX_CELLS = 2_000_000  # draws × T × K of the simulation the page runs (about a second)


@dataclass(frozen=True, eq=False)
class StreamAccuracyView:
    """Accuracy per step of the release alone and after post-processing, as the page prints it."""

    accuracy: SmoothingAccuracy
    table: Shown
    figure: go.Figure
    notes: tuple[str, ...]
    summary: str


@st.cache_resource(show_spinner=False, max_entries=16)
def stream_accuracy_view(
    kind: str, params: Params, eps: tuple[float, ...], mechanism: str
) -> StreamAccuracyView | None:
    """The accuracy per step for this prior, schedule and release (shared: do not change it); None without a chain."""
    chains = chain_priors(build_prior(kind, params))
    if chains is None:
        return None
    prior = chains[0]
    length = len(eps)
    draws = int(max(200, min(DRAWS, MAX_CELLS // max(1, length * prior.n_states))))
    laws = check_emissions(RELEASES[mechanism].laws(prior.n_states, eps), prior.n_states, length)
    acc = smoothing_accuracy(prior, laws, length, draws=draws, seed=SEED)
    steps = np.arange(1, length + 1, dtype=float)
    band = Band("95% interval, after post-processing", steps, acc.smoothed_low, acc.smoothed_high, "#009E73")
    figure, notes = line_figure(
        [
            Trace("the release alone (exact)", steps, acc.raw, dash="dash"),
            Trace("after forward–backward with the prior", steps, acc.smoothed),
        ],
        x_title="step t",
        y_title="Pr[the state at t is named right]",
        y_name="accuracy",
        x_name="t",
        y_range=(0.0, 1.02),
        integer_x=True,
        bands=[band],
        height=380,
    )
    table = pd.DataFrame(
        {
            "step": np.arange(1, length + 1),
            "ε_t": list(eps),
            "release alone": acc.raw,
            "with the prior": acc.smoothed,
            "95% low": acc.smoothed_low,
            "95% high": acc.smoothed_high,
        }
    )
    summary = (
        f"**Accuracy per step** (docs/math.md §13–§14): reading each release alone names the true state"
        f" {fmt(100 * acc.mean_raw, 3)}% of the time on average; the posterior under the prior"
        f" (forward–backward over every release, free: post-processing costs no privacy) names it"
        f" {fmt(100 * acc.mean_smoothed, 3)}%."
    )
    if max(acc.path_raw, acc.path_map) >= 0.01:  # a long stream is never right as a whole: nothing to say
        summary += (
            f" The whole sequence is right {fmt(100 * acc.path_raw, 3)}% of the time from the releases alone and"
            f" {fmt(100 * acc.path_map, 3)}% from the most probable sequence (Viterbi)."
        )
    notes = (
        *notes,
        f"Simulated on {draws:,} sequences drawn from the prior (seed {SEED}); the release alone is exact. On data"
        " that do not follow the prior, post-processing can be worse: the Simulate page measures it on real data.",
    )
    if len(chains) > 1:
        notes = (*notes, "Θ holds several priors: the accuracy is that of the first one.")
    return StreamAccuracyView(acc, shown(table), figure, tuple(notes), summary)


def stream_accuracy_section(kind: str, params: Params, eps: tuple[float, ...], mechanism: str) -> None:
    """The Streams page's accuracy per step, behind a switch (it simulates)."""
    if not st.toggle(
        "Accuracy per step, and post-processing the releases with the prior",
        key="w_stream_accuracy",
        help="How often each step's release names the true state, alone and after forward–backward under the"
        " prior (docs/math.md §14).",
    ):
        return
    try:
        with st.spinner("Simulating the stream and its post-processing…"):
            view = stream_accuracy_view(kind, params, eps, mechanism)
    except ValueError as exc:
        st.info(f"The accuracy per step cannot be computed for this stream: {exc}.")
        return
    if view is None:
        st.info("Post-processing with the prior needs a Markov chain prior.")
        return
    st.markdown(view.summary)
    st.plotly_chart(view.figure, key="stream_accuracy_chart", config={"displaylogo": False})
    for note in view.notes:
        st.caption(note)
    with st.expander(f"Accuracy per step ({len(eps):,} rows)"):
        st.dataframe(view.table.text, hide_index=True, key="stream_accuracy_table", width="stretch", height=300)
