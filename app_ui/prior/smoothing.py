"""A fitted prior honest about its counts: the smoothing τ as a control, and what it does (docs/math.md §6, §12).

Where a chain is fitted from data (Simulate, and the Influence curves page's "Fitted from data"
preset) the smoothing τ that unseen transitions receive is a visible choice.  Beside it: a(1),
b* and ε_DP at a target ε_puffer for every τ of a grid
(:func:`puffer_core.simulation.fitted.smoothing_effect`), the transitions that drive a(1) — "never
observed in the data" when that is the cause — and the Dirichlet posterior of the counts as the
principled alternative (:func:`puffer_core.simulation.fitted.dirichlet_alternative`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from app_ui.core.state import FITTED, get
from app_ui.core.tables import Shown, fmt, join_words, right_aligned, shown, static_table
from app_ui.data.picker import LoadedData, fitted_prior
from puffer_core.data.sequences import Sequences
from puffer_core.data.stats import SequenceStats
from puffer_core.engine.drivers import InfluenceDrivers, influence_drivers
from puffer_core.priors.fitting import DEFAULT_SMOOTHING, transition_counts
from puffer_core.priors.models import MarkovChainPrior
from puffer_core.simulation.fitted import (
    SMOOTHING_GRID,
    DirichletAlternative,
    SmoothingEffect,
    dirichlet_alternative,
    smoothing_effect,
)

ALTERNATIVE_DRAWS = 20


def smoothing_label(tau: float) -> str:
    return "1e−5 (the papers')" if tau == DEFAULT_SMOOTHING else f"{tau:g}".replace("-", "−")


def smoothing_control(key: str, n_states: int) -> float:
    """The smoothing τ of the fit (kept for the session); only values below 1/(K − 1) are offered."""
    choices = [tau for tau in SMOOTHING_GRID if tau < 1 / max(1, n_states - 1)]
    return float(
        st.select_slider(
            "Smoothing τ of the fit (what a transition never observed in the data gets)",
            choices,
            value=DEFAULT_SMOOTHING,
            format_func=smoothing_label,
            key=key,
            persist_state="session",
            help="docs/math.md §6: every transition never seen in the data gets τ, taken from the seen ones. A tiny"
            " τ says 'practically impossible', which can make a(1) large; see the table below.",
        )
    )


FIT_SMOOTHING_KEY = "w_fit_smoothing"  # the Influence curves page's control, read when the fit is loaded


def fit_smoothing() -> float:
    """The smoothing τ chosen for the "Fitted from data" preset (the papers' 1e−5 until it is moved)."""
    return float(st.session_state.get(FIT_SMOOTHING_KEY, DEFAULT_SMOOTHING))


def preset_smoothing_panel(showing_fit: bool) -> None:
    """Under the Influence curves page's presets: the smoothing control for "Fitted from data" and its effect."""
    data = st.session_state.get("dataset")
    if not showing_fit or data is None or not hasattr(data, "stats"):
        return
    with st.container(border=True, key="fit_smoothing_box"):
        st.markdown("**Smoothing of the fit** (docs/math.md §6)")
        tau = smoothing_control(FIT_SMOOTHING_KEY, data.stats.n_states)
        fitted = get(FITTED)
        st.caption(
            "“Load into the editor” above fits with this τ."
            + (f" The chain in the editor was fitted with τ = {fitted.smoothing:g}." if fitted is not None else "")
        )
        smoothing_effect_view(data, tau, "fit_smoothing")


def smoothing_effect_view(data: LoadedData, tau: float, key: str) -> None:
    """What drives a(1) at ``tau`` (always: one fit), and a(1) and b* across τ on request (several curves)."""
    st.markdown(chosen_drivers(data, tau))
    if st.toggle("Compare smoothing values: a(1) and b* across τ, and the Dirichlet alternative",
                 key=f"w_{key}_compare", persist_state="session"):
        smoothing_panel(data, tau, key, drivers=False)


def fitted_chain(data: LoadedData, tau: float) -> MarkovChainPrior:
    """The chain fitted to the loaded data with smoothing ``tau``, once per dataset, columns and τ (this session)."""
    return fitted_prior(data, tau)


def _drivers_numbers(drivers: InfluenceDrivers, tau: float) -> dict[str, Any]:
    """An ``a1_drivers`` finding's numbers for :func:`app_ui.simulate.words.drivers_sentence`."""
    d = drivers
    return {
        "a_1": d.a1,
        "where": d.where,
        "pair": [d.labels[i] for i in d.pair],
        "terms": [
            {
                "side": t.side,
                "numerator": {"name": d.name(t.numerator), "probability": t.numerator.probability,
                              "count": t.numerator.count},
                "denominator": {"name": d.name(t.denominator), "probability": t.denominator.probability,
                                "count": t.denominator.count},
                "value": t.value,
            }
            for t in d.terms
        ],
        "marginal": d.marginal,
        "unseen": sorted({d.name(t) for t in d.unseen}),
        "unseen_share": d.unseen_share,
        "smoothing": tau,
    }


def chosen_drivers(data: LoadedData, tau: float) -> str:
    """What drives a(1) of the chain fitted with ``tau``, in words (one fit, no curve: cheap)."""
    counts = transition_counts(data.stats)
    return drivers_sentence(_drivers_numbers(influence_drivers(fitted_chain(data, tau), counts), tau))


@dataclass(frozen=True, eq=False)
class SmoothingView:
    """The smoothing's effect as the page prints it."""

    effect: SmoothingEffect
    alternative: DirichletAlternative
    table: Shown
    figure: go.Figure
    drivers: str
    summary: str


def _figure(effect: SmoothingEffect, chosen: float) -> go.Figure:
    frame = effect.frame()
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(
        go.Scatter(x=frame["smoothing τ"], y=frame["a(1)"], mode="lines+markers", name="a(1)",
                   line={"color": "#0072B2", "width": 3}, marker={"size": 9},
                   hovertemplate="τ = %{x:g}<br>a(1) = %{y:.4g}<extra></extra>"),
        secondary_y=False,
    )
    fig.add_trace(
        go.Scatter(x=frame["smoothing τ"], y=frame["b*"], mode="lines+markers",
                   name=f"b* at ε_puffer = {effect.eps_puffer:g}", line={"color": "#D55E00", "dash": "dash"},
                   marker={"symbol": "square", "size": 8},
                   hovertemplate="τ = %{x:g}<br>b* = %{y}<extra></extra>"),
        secondary_y=True,
    )
    fig.add_vline(x=chosen, line_dash="dot", line_color="#7f7f7f")
    taus = list(frame["smoothing τ"])
    fig.update_xaxes(type="log", title="smoothing τ (log scale)", tickvals=taus,
                     ticktext=[f"{t:g}".replace("-", "−") for t in taus])
    top_b = int(frame["b*"].max())
    step = max(1, int(np.ceil(top_b / 5)))
    fig.update_yaxes(title_text="a(1)", secondary_y=False, rangemode="tozero")
    fig.update_yaxes(title_text="b*", secondary_y=True, range=[0, top_b * 1.1 + 0.5], dtick=step, showgrid=False)
    fig.update_layout(height=360, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0})
    return fig


@st.cache_resource(show_spinner=False, max_entries=16)
def smoothing_view(
    fingerprint: str,
    columns: tuple[tuple[str, str | None], ...],
    eps: float,
    chosen: float,
    _sequences: Sequences | SequenceStats,
) -> SmoothingView:
    """a(1), b* and ε_DP for every τ of the grid, the drivers at ``chosen``, the Dirichlet alternative (shared)."""
    grid = tuple(tau for tau in SMOOTHING_GRID if tau < 1 / max(1, _sequences.n_states - 1))
    effect = smoothing_effect(_sequences, eps, grid)
    alternative = dirichlet_alternative(_sequences, eps, draws=ALTERNATIVE_DRAWS, seed=0, smoothing=chosen)
    table = pd.DataFrame(
        {
            "τ": [smoothing_label(r.smoothing) + (" ◀" if r.smoothing == chosen else "") for r in effect.rows],
            "a(1)": [r.a1 for r in effect.rows],
            "b* (ε_DP)": [
                f"{r.calibration.b} ({fmt(r.calibration.eps_dp, 3)})" + (", group DP" if r.calibration.group_dp else "")
                for r in effect.rows
            ],
            "a(1) driven by": ["unseen transitions" if r.drivers.unseen else "seen ones" for r in effect.rows],
        }
    )
    row = next(r for r in effect.rows if r.smoothing == chosen)
    numbers = _drivers_numbers(row.drivers, chosen)
    low, high = effect.rows[0], effect.rows[-1]
    if effect.unseen == 0:
        summary = (
            f"Every one of the {effect.counts.size} transitions occurs in the data, so τ changes nothing here:"
            f" a(1) = {fmt(low.a1, 3)} and b* = {low.calibration.b} at ε_puffer = {eps:g} for every τ."
        )
    else:
        summary = (
            f"{effect.unseen} of the {effect.counts.size} transitions never occur in the data. With τ ="
            f" {smoothing_label(low.smoothing)}, a(1) = {fmt(low.a1, 3)} and b* = {low.calibration.b}; with τ ="
            f" {smoothing_label(high.smoothing)}, a(1) = {fmt(high.a1, 3)} and b* = {high.calibration.b}"
            f" (ε_puffer = {eps:g})."
        )
    a = alternative
    spread = f"{fmt(float(np.min(a.draws_a1)), 3)} to {fmt(float(np.max(a.draws_a1)), 3)}"
    summary += (
        f" **The Dirichlet posterior instead of one τ** (docs/math.md §12, α₀ = {fmt(a.concentration, 3)} per count):"
        f" its mean chain has a(1) = {fmt(a.mean_a1, 3)} (b* = {a.mean_calibration.b}); its {a.draws} draws have"
        f" a(1) from {spread} — how little the data pin a(1) down — and the robust Θ (fit + draws) has a(1) ="
        f" {fmt(a.robust_a1, 3)}, b* = {a.robust_calibration.b}"
        + (" (group DP)" if a.robust_calibration.group_dp else "")
        + "."
    )
    return SmoothingView(effect, alternative, shown(table), _figure(effect, chosen), drivers_sentence(numbers),
                         summary)


def smoothing_panel(data: LoadedData, tau: float, key: str, drivers: bool = True) -> SmoothingView:
    """The smoothing's effect under the control: a(1) and b* across τ, the drivers (unless shown already), the
    Dirichlet alternative."""
    eps = float(
        st.number_input("b* and ε_DP at ε_puffer =", 0.01, 100.0, 3.0, 0.5, key=f"{key}_eps",
                        persist_state="session", help="The target whose best window b* the table shows.")
    )
    with st.spinner("Fitting the chain for every τ and computing its curve…"):
        view = smoothing_view(data.fingerprint, tuple(data.columns.items()), eps, tau, data.stats)
    if drivers:
        st.markdown(view.drivers)
    st.plotly_chart(view.figure, key=f"{key}_chart", config={"displaylogo": False})
    static_table(right_aligned(view.table))
    st.markdown(view.summary)
    return view


def effect_frame(view: SmoothingView) -> pd.DataFrame:
    """The table of the smoothing's effect, numbers only (for a report)."""
    return view.effect.frame()


def drivers_sentence(n: dict[str, Any]) -> str:
    """a(1) and the transitions behind it, in words (the numbers of an ``a1_drivers`` finding)."""
    a1 = n["a_1"]
    secret, other = n["pair"]
    where = {"interior": "an entry inside a sequence", "first": "the first entry", "last": "the last entry"}.get(
        n["where"], "an entry"
    )
    parts = []
    for term in n["terms"]:
        num, den = term["numerator"], term["denominator"]
        side = "the entry before" if term["side"] == "left" else "the entry after"
        parts.append(
            f"{side}: {num['name']} ({_seen(num)}, probability {fmt(num['probability'], 3)}) against"
            f" {den['name']} ({_seen(den)}, probability {fmt(den['probability'], 3)}), log ratio"
            f" {fmt(term['value'], 3)}"
        )
    marginal = float(n["marginal"])
    if marginal != 0.0:  # the left term's log p_t(x') − log p_t(x) (docs/math.md §2.1): the parts add up to a(1)
        parts.append(
            f"how likely {other} is against {secret} at that entry, log π({other})/π({secret}) {fmt(marginal, 3)}"
        )
    detail = "; ".join(parts)
    total = sum(float(term["value"]) for term in n["terms"]) + marginal
    if len(parts) > 1:
        detail += f" — together {fmt(total, 3)}"
    if n["unseen"]:
        tau = n.get("smoothing")
        held = f"the smoothing τ = {tau:g} the fit gives them" if tau else "the small value the fit gives them"
        return (
            f"**a(1) = {fmt(a1, 3)} comes from transitions never observed in the data**"
            f" ({join_words(n['unseen'])}): at {where}, telling {secret} from {other} — {detail}."
            f" Those transitions hold {held} (docs/math.md §6), so a(1) reflects the smoothing more than the data"
            f" ({fmt(100 * n['unseen_share'], 2)}% of it); a larger τ or the Dirichlet posterior lowers it."
        )
    return f"**What drives a(1) = {fmt(a1, 3)}**: at {where}, telling {secret} from {other} — {detail}."


def _seen(transition: dict[str, Any]) -> str:
    count = transition.get("count")
    if count is None:
        return "count unknown"
    if count == 0:
        return "never observed in the data"
    return f"seen {count:,} time{'s' if count != 1 else ''}"
