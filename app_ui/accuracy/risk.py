"""ε as attacker risk: what an ε_puffer lets an attacker believe, and the (FPR, TPR) region (docs/math.md §13).

For Calibrate: per state, the prior probability of an entry's state and the most an attacker can
believe after any release that is ε_puffer-Pufferfish (:func:`puffer_core.accounting.risk.attacker_table`),
with a chart of the bound and one sentence a teacher can read aloud.  For the attack page: the
region every test of x against x' must stay in, with the likelihood-ratio test's measured points
(:func:`puffer_core.inference.roc.likelihood_ratio_points`).  Built once per input.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_ui.attack.views import source_priors
from app_ui.core.tables import Shown, fmt, right_aligned, shown, static_table
from puffer_core.accounting.risk import attacker_table, max_posterior, tradeoff_curve
from puffer_core.inference.roc import TestPoints, likelihood_ratio_points
from puffer_core.mechanisms.laws import check_emissions
from puffer_core.priors.models import MarkovChainPrior
from puffer_core.tightness import RELEASES

REGION_COLOUR = "rgba(0,114,178,0.15)"
POINT_COLOURS = ("#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")


@dataclass(frozen=True, eq=False)
class RiskView:
    """The attacker's view of one ε_puffer and prior: the table, the chart, a sentence to read aloud."""

    table: Shown
    figure: go.Figure
    sentence: str


def _risk_figure(eps: float, states: pd.DataFrame | None) -> go.Figure:
    prior = np.linspace(0.0, 1.0, 201)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=prior, y=prior, mode="lines", name="no release (ε = 0)",
                             line={"color": "#999999", "dash": "dot"}, hoverinfo="skip"))
    fig.add_trace(
        go.Scatter(
            x=prior,
            y=[max_posterior(float(p), eps) for p in prior],
            mode="lines",
            name=f"the most an attacker can believe, ε = {eps:g}",
            line={"color": "#0072B2", "width": 3},
            hovertemplate="before %{x:.3f} → after at most %{y:.3f}<extra></extra>",
        )
    )
    if states is not None and not states.empty:
        fig.add_trace(
            go.Scatter(
                x=states["prior probability (largest over t)"],
                y=states["largest posterior after the release"],
                mode="markers+text",
                name="the prior's states",
                text=list(states["state"]),
                textposition="top center",
                marker={"size": 10, "color": "#D55E00", "symbol": "diamond"},
                hovertemplate="%{text}: before %{x:.3f} → after at most %{y:.3f}<extra></extra>",
            )
        )
    fig.update_layout(
        height=380,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
        xaxis_title="Pr[entry is in the state] before the release",
        yaxis_title="at most, after it",
        xaxis={"range": [0, 1]},
        yaxis={"range": [0, 1.02]},
    )
    return fig


@st.cache_resource(show_spinner=False, max_entries=64)
def risk_view(key: tuple[Any, ...], eps: float, _chains: list[MarkovChainPrior] | None) -> RiskView:
    """The attacker's bound at ``eps`` for ``_chains`` (``key`` names them; shared: do not change it)."""
    chains = _chains
    states = attacker_table(chains, eps) if chains else None
    figure = _risk_figure(eps, states)
    if states is not None:
        row = states.iloc[int(np.argmin(np.abs(states["prior probability (largest over t)"] - 0.25)))]
        before = float(row["prior probability (largest over t)"])
        after = float(row["largest posterior after the release"])
        subject = f"an entry is '{row['state']}'"
        table = shown(states)
    else:
        before, after = 0.25, max_posterior(0.25, eps)
        subject = "a secret holds"
        table = shown(pd.DataFrame({"prior probability": [0.01, 0.1, 0.25, 0.5],
                                    "largest posterior after the release": [max_posterior(p, eps)
                                                                            for p in (0.01, 0.1, 0.25, 0.5)]}))
    sentence = (
        f"**What ε_puffer = {eps:g} means:** an attacker who knows the prior and thinks {subject} with"
        f" probability {before:.0%} can, after seeing the release, believe it with probability at most"
        f" **{after:.0%}** — whatever the release shows. Between any two values of an entry, the odds move by"
        f" at most e^ε = {fmt(math.exp(eps), 3)}×."
    )
    return RiskView(table, figure, sentence)


def risk_section(key: tuple[Any, ...], chains: list[MarkovChainPrior] | None, eps: float) -> RiskView:
    """Calibrate's attacker tab: the sentence, the bound for every prior probability, the states, the region."""
    view = risk_view(key, eps, chains)
    st.markdown(view.sentence)
    st.plotly_chart(view.figure, key="risk_chart", config={"displaylogo": False})
    static_table(right_aligned(view.table))
    st.caption(
        "Posterior odds ≤ e^ε × prior odds for every pair of values of an entry and every output (Bayes' rule on"
        " the Pufferfish guarantee); the state's prior probability is its largest over the entries t (and over Θ)."
    )
    st.markdown(
        f"**Any test of one value against another** (say x when it is x: true positive; say x when it is x':"
        f" false positive) stays in the shaded region at ε = {eps:g}: TPR ≤ e^ε·FPR and 1 − FPR ≤ e^ε·(1 − TPR)."
        " The attack page draws measured tests on it."
    )
    st.plotly_chart(region_figure(eps), key="risk_region", config={"displaylogo": False})
    return view


def region_figure(eps: float, points: Sequence[tuple[str, TestPoints]] = (), eps_label: str = "") -> go.Figure:
    """The (FPR, TPR) pairs an ε allows (TPR ≤ e^ε·FPR, 1 − FPR ≤ e^ε·(1 − TPR)) and measured tests on it."""
    fpr, tpr = tradeoff_curve(eps)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line={"color": "#999999", "dash": "dot"},
                             name="guessing", hoverinfo="skip"))
    fig.add_trace(
        go.Scatter(
            x=np.concatenate([fpr, [1.0, 0.0]]),
            y=np.concatenate([tpr, [1.0, 0.0]]),
            fill="toself",
            fillcolor=REGION_COLOUR,
            line={"color": "#0072B2", "width": 2},
            name=f"allowed by ε = {eps:.3g}{eps_label}",
            hoverinfo="skip",
        )
    )
    for (name, test), colour in zip(points, POINT_COLOURS):
        fig.add_trace(
            go.Scatter(
                x=test.fpr,
                y=test.tpr,
                mode="markers+lines",
                name=f"{name}: the attack's test",
                marker={"size": 7, "color": colour},
                line={"width": 1, "color": colour},
                hovertemplate=f"{name}<br>FPR %{{x:.3f}}, TPR %{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_layout(
        height=420,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
        xaxis_title="false-positive rate (says x when it is x')",
        yaxis_title="true-positive rate (says x when it is x)",
        xaxis={"range": [0, 1], "constrain": "domain"},
        yaxis={"range": [0, 1], "scaleanchor": "x", "scaleratio": 1},
    )
    return fig


@st.cache_data(show_spinner=False, max_entries=64)
def test_points(prior: MarkovChainPrior, emission: np.ndarray, entry: int, pair: tuple[int, int], draws: int,
                seed: int) -> TestPoints:
    """The likelihood-ratio test of the attack's entry and pair, measured (seeded), once per input."""
    return likelihood_ratio_points(prior, emission, entry, pair, draws=draws, seed=seed)


def attack_region_section(export: Any) -> None:
    """The attack page's view: the (FPR, TPR) region of the tightest bound and the attack's test, measured.

    ``export`` is the page's :class:`app_ui.attack.views.AttackExport`; streams only (the test needs the
    per-step output law).  For the prior chosen, the likelihood-ratio test of the entry and pair the
    attack found is run on outputs drawn under each of the two values (seeded); every point must lie in
    the region of the prior's tightest reported bound (and of the exact leakage, when known).
    """
    rows = [(source, row) for source, row in zip(export.sources, export.rows()) if row.entry is not None]
    if not rows:
        return
    st.markdown("**ε as attacker risk: the attack's test against the region every bound allows** (docs/math.md §13)")
    names = [row.short for _, row in rows]
    chosen = st.selectbox("Prior", names, key="w_attack_region_prior")
    source, row = rows[names.index(chosen)]
    chains, _ = source_priors(source)
    prior = chains[0]  # with Θ the test is run under its first prior; Θ's bound holds for every member
    law = check_emissions(RELEASES[export.release].laws(prior.n_states, [export.eps]), prior.n_states, 1)[0]
    pair = (prior.labels.index(row.pair[0]), prior.labels.index(row.pair[1]))
    with st.spinner("Measuring the attack's test…"):
        points = test_points(prior, law, int(row.entry), pair, 2000, export.seed)
    eps = row.exact if row.exact is not None else row.bound
    label = " (the exact leakage)" if row.exact is not None else f" ({row.bound_name}, the tightest bound)"
    st.plotly_chart(region_figure(eps, [(row.short, points)], label), key="attack_region",
                    config={"displaylogo": False})
    st.caption(
        f"Testing {row.pair[0]} against {row.pair[1]} at step {row.entry + 1} with the likelihood ratio (the most"
        f" powerful test), 2,000 outputs drawn under each value (seed {export.seed}). Every point must lie in the"
        f" shaded region: TPR ≤ e^ε·FPR and 1 − FPR ≤ e^ε·(1 − TPR). The points certify ε ≥"
        f" {fmt(points.eps_lower, 3)} at 95% confidence (a lower bound, like the attack's {fmt(row.lower or 0, 3)})."
    )
