"""Accuracy beside every ε: the target controls, the accuracy-first table and the reverse (docs/math.md §13).

An analyst states an error target — counts within ±α with a probability, or the true top-k
set with a probability — and :func:`puffer_core.mechanisms.accuracy.accuracy_first` answers with
the ε_puffer each mechanism needs; :func:`accuracy_table` reads any ε_puffer back as the accuracy
each mechanism gets.  Everything here is built once per input (``st.cache_data`` /
``st.cache_resource``); the pages (Calibrate, Plan, Simulate) place it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_ui.core.tables import Shown, fmt, right_aligned, shown, static_table
from app_ui.prior.current import Params, build_prior, chain_priors
from puffer_core import InfluenceCurve
from puffer_core.mechanisms import MECHANISMS, Calibrated, Mechanism, Output, make_mechanism, mechanism_spec
from puffer_core.mechanisms.accuracy import (
    NEIGHBOURS,
    AccuracyPlan,
    CountTarget,
    TopKTarget,
    accuracy_at,
    accuracy_first,
)
from puffer_core.mechanisms.base import Refused
from puffer_core.mechanisms.noise import JOINT_WORDS, noise_law
from puffer_core.priors.models import MarkovChainPrior

# a colour per way of calibrating (the record's ``calibrated``); the others share the last
PALETTE = {Calibrated.CURVE: "#0072B2", Calibrated.MQM: "#009E73", Calibrated.GROUP_DP: "#D55E00"}
OTHER_COLOUR = "#7f7f7f"
KIND_WORDS = {"counts": "Counts (a histogram)", "topk": "The top-k states"}
JOINT_CHOICES = ("all", "each", "union")


@dataclass(frozen=True)
class TargetChoice:
    """What the controls set: a target (None while something is wrong) and its problems."""

    target: CountTarget | TopKTarget | None
    problems: tuple[str, ...] = ()


def target_controls(key: str, n_states: int, default_alpha: float = 10.0) -> TargetChoice:
    """The error target's controls (their widgets keep their values for the session); problems as typed."""
    kind = st.radio(
        "What must be accurate",
        list(KIND_WORDS),
        format_func=KIND_WORDS.__getitem__,
        horizontal=True,
        key=f"{key}_kind",
        persist_state="session",
    )
    if kind == "counts":
        c1, c2, c3 = st.columns(3)
        alpha = c1.number_input(
            "Within ± (counts)", value=default_alpha, min_value=0.0, step=1.0, key=f"{key}_alpha",
            persist_state="session", help="α: the largest error you accept on a released count.",
        )
        confidence = c2.number_input(
            "With probability", value=0.95, min_value=0.0, max_value=1.0, step=0.01, format="%.3f",
            key=f"{key}_confidence", persist_state="session", help="1 − β: how often the error must stay within ±α.",
        )
        m = c3.number_input(
            "Counts released together (m)", value=n_states, min_value=1, max_value=100_000, step=1,
            key=f"{key}_m", persist_state="session", help="How many counts one release holds (states × groups).",
        )
        joint = st.radio(
            "The probability holds for",
            list(JOINT_CHOICES),
            format_func=JOINT_WORDS.__getitem__,
            horizontal=True,
            key=f"{key}_joint",
            persist_state="session",
        )
        problems = []
        if not alpha > 0:
            problems.append("the error bound must be above 0: an error of exactly 0 needs infinite ε")
        if not 0 < confidence < 1:
            problems.append(f"the probability must lie strictly between 0 and 1 (got {confidence:g})")
        if problems:
            return TargetChoice(None, tuple(problems))
        return TargetChoice(CountTarget(float(alpha), 1.0 - float(confidence), int(m), joint))
    c1, c2, c3, c4 = st.columns(4)
    k = c1.number_input("k", value=min(3, n_states - 1), min_value=1, max_value=max(1, n_states - 1), step=1,
                        key=f"{key}_k", persist_state="session")
    hit = c2.number_input(
        "Right set with probability", value=0.9, min_value=0.0, max_value=1.0, step=0.01, format="%.3f",
        key=f"{key}_hit", persist_state="session", help="h: how often the released top-k set is the true one.",
    )
    gap = c3.number_input(
        "Whenever the k-th count leads by ≥", value=default_alpha, min_value=0.0, step=1.0, key=f"{key}_gap",
        persist_state="session",
        help="The guarantee holds for every data whose k-th largest count exceeds the (k+1)-th by this much.",
    )
    m = c4.number_input("States m", value=n_states, min_value=2, max_value=10_000, step=1, key=f"{key}_states",
                        persist_state="session")
    try:
        return TargetChoice(TopKTarget(int(k), float(hit), int(m), gap=float(gap)))
    except ValueError as exc:
        return TargetChoice(None, (str(exc),))


def chains_of(kind: str, params: Params) -> list[MarkovChainPrior] | None:
    """The Markov chain priors of ``kind`` (Θ: all of them), or None (a Gaussian prior, or one that fails)."""
    try:
        return chain_priors(build_prior(kind, params))
    except ValueError:
        return None


@st.cache_data(show_spinner=False, max_entries=64)
def plan_for(key: tuple[Any, ...], target: CountTarget | TopKTarget, _curve: InfluenceCurve,
             _chains: list[MarkovChainPrior] | None) -> AccuracyPlan:
    """:func:`accuracy_first` for one prior (``key`` names it: its kind and parameters, or its Θ), once per input."""
    return accuracy_first(target, _curve, _chains)


def _noise_text(noise: str, scale: float) -> str:
    """The noise per count as its record names it: "Laplace(3.2)", "Gumbel(12)"."""
    return f"{noise_law(noise).label}({fmt(scale)})"


def _charged(c: Any) -> str:
    """How a cost's noise is charged, by how its mechanism is calibrated (the record's code)."""
    if c.accounting == Calibrated.CURVE:
        point = "group DP point (T, 0)" if c.fallback else f"b = {c.b}, a(b) = {fmt(float(c.a))}"
        return f"a(b) curve: {point}"
    if c.sigma_max is not None:
        return f"{c.label}: σ_max = {fmt(float(c.sigma_max))}"
    if c.accounting == Calibrated.GROUP_DP:
        return f"group DP: T·ε_DP, T = {c.b}"
    return f"{c.label}'s own rule"


def plan_frames(plan: AccuracyPlan) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two narrow tables (nothing scrolls sideways on a phone): what each mechanism costs, and how it is charged."""
    cost = pd.DataFrame(
        {
            "mechanism": [c.label for c in plan.costs],
            "ε_puffer needed": [c.eps_puffer for c in plan.costs],
            "ε_DP per entry": [c.eps_dp for c in plan.costs],
            "target met": [c.achieved for c in plan.costs],
        }
    )
    how = [_charged(c) for c in plan.costs]
    charged = pd.DataFrame(
        {
            "mechanism": [c.label for c in plan.costs],
            "noise per count": [_noise_text(c.noise, c.noise_scale) for c in plan.costs],
            "how the noise is charged": how,
        }
    )
    return cost, charged


@dataclass(frozen=True, eq=False)
class PlanView:
    """The accuracy-first answer as the page prints it: the table, a bar chart, one sentence, notes."""

    plan: AccuracyPlan
    table: Shown
    charged: Shown
    figure: go.Figure
    summary: str
    notes: tuple[str, ...]


@st.cache_resource(show_spinner=False, max_entries=64)
def plan_view(key: tuple[Any, ...], target: CountTarget | TopKTarget, _curve: InfluenceCurve,
              _chains: list[MarkovChainPrior] | None) -> PlanView:
    """:func:`plan_for` with its table, chart and words, once per ``key`` and target (shared: do not change it)."""
    plan = plan_for(key, target, _curve, _chains)
    frame, charged = plan_frames(plan)
    fig = go.Figure(
        go.Bar(
            x=[c.eps_puffer for c in plan.costs],
            y=[c.label for c in plan.costs],
            orientation="h",
            marker_color=[PALETTE.get(Calibrated(c.accounting), OTHER_COLOUR) for c in plan.costs],
            text=[fmt(c.eps_puffer, 3) for c in plan.costs],
            textposition="outside",
            cliponaxis=False,
            hovertemplate="%{y}<br>ε_puffer = %{text}<extra></extra>",
        )
    )
    fig.update_layout(
        height=90 + 42 * len(plan.costs),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis_title="ε_puffer the target costs (lower is better)",
        xaxis_range=[0, max([c.eps_puffer for c in plan.costs], default=1.0) * 1.15],
        yaxis={"autorange": "reversed"},
    )
    notes = [NEIGHBOURS]
    notes += [f"{MECHANISMS[name].label} is not listed: {why}." for name, why in plan.skipped.items()]
    if isinstance(target, TopKTarget):
        notes.append(
            "The top-k probability is exact: the worst data for the gap (all top counts tied, all others tied"
            " the gap below) — any data with a larger lead do at least as well (docs/math.md §13)."
        )
    return PlanView(plan, shown(frame), shown(charged), fig, plan_summary(plan), tuple(notes))


def plan_summary(plan: AccuracyPlan) -> str:
    """One sentence: the target, the cheapest mechanism and what the others cost."""
    if not plan.costs:
        return "No mechanism can be calibrated for this target."
    best = plan.cheapest()
    others = [c for c in plan.costs if c is not best]
    text = (
        f"For {plan.target.describe()}, **{best.label} needs the least privacy: ε_puffer ="
        f" {fmt(best.eps_puffer, 3)}** (per-entry ε_DP = {fmt(best.eps_dp, 3)})."
    )
    if others:
        text += " " + "; ".join(f"{c.label} needs {fmt(c.eps_puffer, 3)}" for c in others) + "."
    return text


@st.cache_data(show_spinner=False, max_entries=64)
def accuracy_table(key: tuple[Any, ...], target: CountTarget | TopKTarget, eps_puffer: float, _curve: InfluenceCurve,
                   _chains: list[MarkovChainPrior] | None) -> pd.DataFrame:
    """The reverse: each mechanism built at ``eps_puffer`` and the accuracy it gets, in the target's terms.

    Narrow (three or four columns): a mechanism that falls back to group DP says so in its name.
    """
    rows = []
    for a in accuracy_at(eps_puffer, target, _curve, _chains):
        row: dict[str, Any] = {
            "mechanism": a.label + (" (falls back to group DP)" if a.fallback else ""),
            "noise per count": _noise_text(a.noise, a.noise_scale),
        }
        if isinstance(target, CountTarget):
            row[f"error at probability {fmt(1 - target.beta)}"] = f"±{fmt(a.alpha, 3)}"
            row[f"Pr[within ±{fmt(target.alpha)}]"] = 1.0 - a.beta
        else:
            row[f"Pr[right top-{target.k} set]"] = a.hit
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# one line of accuracy per release: Plan, Simulate


def _lead(mechanism: Mechanism, n_states: int | None, confidence: float) -> tuple[int, float] | None:
    """(k, gap): the lead of the k-th count over the next that makes a ranking right with ``confidence`` (the
    worst data for that lead); k = 1 when the ranking covers every state (the first pick).  None: unknown m."""
    k = getattr(mechanism, "k", None)
    if k is None or n_states is None or n_states < 2:
        return None
    shown = 1 if k >= n_states else int(k)
    noise = mechanism_spec(mechanism.name).noise
    return shown, noise.topk_gap(shown, n_states, confidence, float(mechanism.noise_scale))


def _alpha(mechanism: Mechanism, confidence: float) -> float:
    """The ± each released count keeps with ``confidence`` (the mechanism's noise record)."""
    return mechanism_spec(mechanism.name).noise.interval(float(mechanism.noise_scale), 1.0 - confidence)


def _no_noise(scale: float) -> str | None:
    if not math.isfinite(scale) or scale <= 0:
        return "exact" if scale == 0 else "—"
    return None


def release_accuracy(mechanism: Mechanism, n_states: int | None = None, confidence: float = 0.95) -> str:
    """What one release's noise buys, in words short enough for a table cell (docs/math.md §13).

    Read from the mechanism's record: a release of counts keeps ±α per count with probability ``confidence``
    (its noise's interval); a ranking over ``n_states`` states is the true top-k set with that probability when
    the k-th count leads the next by the gap its noise needs (the worst data for that lead); when k covers every
    state, the lead that makes the first pick the true largest count.
    """
    plain = _no_noise(float(mechanism.noise_scale))
    if plain is not None:
        return plain
    if mechanism_spec(mechanism.name).releases is Output.COUNTS:
        return f"±{_count(_alpha(mechanism, confidence))} per count ({confidence:.0%})"
    lead = _lead(mechanism, n_states, confidence)
    if lead is None:
        return "—"
    k, gap = lead
    if k == 1 and getattr(mechanism, "k", 1) > 1:
        return f"first pick right ({confidence:.0%}) when it leads by ≥ {_count(gap)}"
    return f"top-{k} right ({confidence:.0%}) when it leads by ≥ {_count(gap)}"


LEAD_WORDS = (
    "Accuracy (95%): “±α” is the error of each noisy count; “top-k: lead g” (“1st: lead g” for the largest"
    " count) is how far the k-th largest true count must lead the next one for the noisy top-k ranking to"
    " come out right with 95% probability (docs/math.md §13)."
)


def ledger_accuracy(mechanism: Mechanism, n_states: int | None, confidence: float = 0.95) -> str:
    """:func:`release_accuracy` short enough for a ledger cell: "±164", "top-3: lead 329", "1st: lead 329"."""
    plain = _no_noise(float(mechanism.noise_scale))
    if plain is not None:
        return plain
    if mechanism_spec(mechanism.name).releases is Output.COUNTS:
        return f"±{_count(_alpha(mechanism, confidence))}"
    lead = _lead(mechanism, n_states, confidence)
    if lead is None:
        return "—"
    k, gap = lead
    if k == 1 and getattr(mechanism, "k", 1) > 1:
        return f"1st: lead {_count(gap)}"
    return f"top-{k}: lead {_count(gap)}"


def grid_accuracy(curve: InfluenceCurve, priors: list[MarkovChainPrior] | None, mechanisms: tuple[str, ...],
                  eps_grid: tuple[float, ...], query: str, k: int, n_states: int, topk_laplace: str) -> pd.DataFrame:
    """Beside the ε grid: what each mechanism's noise buys at each ε_puffer, one row per mechanism.

    A row per mechanism and a column per ε_puffer of the grid (the grid is short: it fits a phone
    better than a column per mechanism).
    """
    out: dict[str, list[str]] = {"mechanism": [MECHANISMS[name].label for name in mechanisms]}
    for eps in eps_grid:
        cells = []
        for name in mechanisms:
            if MECHANISMS[name].needs_chains and priors is None:
                cells.append("—")
                continue
            try:
                mechanism = make_mechanism(name, eps, curve, priors or [], query, k, n_states, topk_laplace)
            except Refused:  # no guarantee, or out of reach for this prior: the page says why beside its results
                cells.append("—")
                continue
            cells.append(short_accuracy(mechanism, k, n_states))
        out[f"ε = {eps:g}"] = cells
    return pd.DataFrame(out)


def _count(value: float) -> str:
    """A count for a table cell: 3 significant digits, whole thousands with a separator (1,580, not 1.58e+03)."""
    return f"{value:,.0f}" if abs(value) >= 1000 else fmt(value, 3)


def short_accuracy(mechanism: Mechanism, k: int, n_states: int, confidence: float = 0.95) -> str:
    """:func:`release_accuracy` in a few characters for a grid: "±155" per count, or "lead 210" for top-k."""
    spec = mechanism_spec(mechanism.name)
    scale = float(mechanism.noise_scale)
    if spec.releases is Output.COUNTS:
        return f"±{_count(_alpha(mechanism, confidence))}"
    return f"lead {_count(spec.noise.topk_gap(min(k, n_states - 1), n_states, confidence, scale))}"


def default_states(kind: str, params: Params) -> int | None:
    """The number of states of the prior (what a top-k ranking picks from), None for a prior without states."""
    chains = chains_of(kind, params)
    return chains[0].n_states if chains else None


def accuracy_section(key: tuple[Any, ...], curve: InfluenceCurve, chains: list[MarkovChainPrior] | None,
                     eps_puffer: float) -> tuple[CountTarget | TopKTarget, PlanView] | None:
    """Calibrate's accuracy-first tab: the target, the ε each mechanism needs, and the accuracy at ``eps_puffer``.

    Returns the target and its view for the report (None while the target has a problem).
    """
    st.markdown(
        "State the accuracy you need; each mechanism's exact error law is inverted into the noise it may add,"
        " and that noise into the ε_puffer its own accounting charges (docs/math.md §13)."
    )
    n_states = chains[0].n_states if chains else 5
    choice = target_controls("w_acc", n_states)
    for problem in choice.problems:
        st.error(f"The target cannot be used: {problem}.")
    if choice.target is None:
        return None
    with st.spinner("Inverting each mechanism's error law…"):
        view = plan_view(key, choice.target, curve, chains)
    st.markdown(view.summary)
    st.plotly_chart(view.figure, key="acc_chart", config={"displaylogo": False})
    static_table(right_aligned(view.table))
    static_table(right_aligned(view.charged))
    for note in view.notes:
        st.caption(note)
    st.markdown(f"**The reverse: what ε_puffer = {eps_puffer:g} (the target of the first tab) buys**")
    back = accuracy_table(key, choice.target, eps_puffer, curve, chains)
    static_table(right_aligned(back))
    return choice.target, view


__all__ = [
    "PlanView",
    "TargetChoice",
    "accuracy_table",
    "accuracy_section",
    "chains_of",
    "default_states",
    "grid_accuracy",
    "plan_view",
    "release_accuracy",
    "target_controls",
]
