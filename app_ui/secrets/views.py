"""What the chosen secrets change (docs/math.md §16): their a(b) curve, next to every pair's, with the budget
gained; and the redaction planner's view (which entries around a protected one to withhold for a target ε).

Curves come from cached calls keyed by the prior and the secrets' link text (read back by
:func:`~puffer_core.secrets.read_secrets`); figures and tables are built once per input
(``st.cache_resource``: nobody changes what they get).
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

from app_ui.core.charts import Trace, curve_trace, line_figure
from app_ui.core.report import Section
from app_ui.prior.current import Uncertainty, build_prior
from app_ui.secrets.settings import SecretsChoice, SecretsText
from puffer_core import InfluenceCurve, calibrate, influence_curve
from puffer_core.display import fmt
from puffer_core.engine.redaction import RedactionPlan, redaction_plan
from puffer_core.priors.kinds import Params
from puffer_core.secrets import EventSecrets, Secrets, read_secrets

CHART_SIZES = 120  # the redaction chart evaluates every window size up to this many entries exactly


@st.cache_data(show_spinner=False, max_entries=256)
def chosen_curve(kind: str, params: Params, text: str) -> InfluenceCurve:
    """The exact a(b) curve of the prior of ``kind`` for the secrets written ``text`` (docs/math.md §16)."""
    return influence_curve(build_prior(kind, params), secrets=SecretsText().parse(text))


@st.cache_data(show_spinner=False, max_entries=64)
def theta_curve(key: tuple[Any, ...], text: str, _priors: Sequence[Any]) -> InfluenceCurve:
    """The robust curve of a set Θ (``key`` names it) for the secrets written ``text``."""
    return influence_curve(list(_priors), secrets=SecretsText().parse(text))


def curve_for(choice: SecretsChoice, kind: str, params: Params, everything: InfluenceCurve,
              spread: Uncertainty | None = None) -> InfluenceCurve:
    """The curve a page computes with: ``everything`` (every pair at every entry) for the default secrets, else the
    curve of the chosen ones (of Θ when ``spread`` is given).  ValueError with the library's message."""
    if choice.is_all:
        return everything
    text = choice.resolved(int(everything.length)).to_text()
    if spread is not None:
        return theta_curve(spread.key, text, spread.spread.priors)
    return chosen_curve(kind, params, text)


# --------------------------------------------------------------------------- the chosen curve beside every pair's


@dataclass(frozen=True, eq=False)
class GainView:
    """The chosen secrets' curve beside every pair's: chart, notes, the a(b) table and the budget at ε_puffer."""

    figure: go.Figure
    notes: tuple[str, ...]
    table: pd.DataFrame
    eps_all: float
    eps_chosen: float
    text: str


def gain_text(eps: float, eps_all: float, eps_chosen: float) -> str:
    """The budget gained at ``eps`` (ε_puffer), in words."""
    if eps_all <= 0 or eps_chosen == eps_all:
        return (f"At ε_puffer = {eps:g} the chosen secrets allow the same per-entry ε_DP as every pair"
                f" ({fmt(eps_chosen)}): the pairs that drive the curve are among them.")
    return (f"At ε_puffer = {eps:g} the chosen secrets allow per-entry ε_DP = {fmt(eps_chosen)} instead of"
            f" {fmt(eps_all)} for every pair: {eps_chosen / eps_all:.3g}× the budget, so less noise.")


@st.cache_resource(show_spinner=False, max_entries=64)
def gain_view(key: tuple[Any, ...], eps: float, _everything: InfluenceCurve, _chosen: InfluenceCurve) -> GainView:
    """The view of two curves (``key`` names them) at ``eps``."""
    lines = [curve_trace(_everything, "every pair, every entry", dash="dot", width=2.0),
             curve_trace(_chosen, "the chosen secrets", width=3.0)]
    figure, notes = line_figure(lines, "window size b", "a(b) (nats)", integer_x=True, height=360)
    eps_all, eps_chosen = calibrate(_everything, eps).eps_dp, calibrate(_chosen, eps).eps_dp
    table = pd.DataFrame({"b": _chosen.b, "a(b), every pair": _everything.a[: len(_chosen.b)],
                          "a(b), chosen secrets": _chosen.a})
    return GainView(figure, tuple(notes), table, eps_all, eps_chosen, gain_text(eps, eps_all, eps_chosen))


def view_of(everything: InfluenceCurve, chosen: InfluenceCurve, eps: float) -> GainView:
    """:func:`gain_view` for these two curves (keyed by their values: a fit and its Θ never share a view)."""
    key = (everything.a.tobytes(), chosen.a.tobytes(), chosen.b.tobytes())
    return gain_view(key, eps, everything, chosen)


def gain_section(choice: SecretsChoice, everything: InfluenceCurve, chosen: InfluenceCurve,
                 eps: float) -> GainView | None:
    """Show the chosen secrets' curve beside every pair's and the budget gained (nothing for every pair)."""
    if choice.is_all:
        return None
    from app_ui.core.charts import show_figure
    from app_ui.core.tables import csv_download

    view = view_of(everything, chosen, eps)
    st.markdown("**The chosen secrets against every pair** (docs/math.md §16: fewer pairs or entries never raise"
                " a(b))")
    c1, c2, c3 = st.columns(3)
    c1.metric("a(1), chosen secrets", fmt(float(chosen.a[0])))
    c2.metric("a(1), every pair", fmt(float(everything.a[0])))
    c3.metric("Budget gained", f"{view.eps_chosen / view.eps_all:.3g}×" if view.eps_all > 0 else "—",
              help="Per-entry ε_DP for the chosen secrets over ε_DP for every pair, at the target ε_puffer.")
    st.markdown(view.text)
    show_figure(view.figure, view.notes, key="secrets_gain_chart")
    csv_download(view.table, "secrets_curve.csv", "Download both curves (CSV)", key="w_sec_download")
    return view


def report_section(choice: SecretsChoice, labels: Sequence[str] | None, eps: float | None,
                   prior_words: str | None, view: GainView | None = None) -> Section:
    """The report's "What is secret" section: the sentence, and the budget gained when the secrets are chosen."""
    sentence = choice.secrets.sentence(labels, eps, prior_words)
    if view is None:
        return Section("What is secret (docs/math.md §16)", sentence)
    return Section("What is secret (docs/math.md §16)", f"{sentence} {view.text}", view.figure,
                   view.table.head(40), view.notes)


# --------------------------------------------------------------------------- the redaction planner


def value_secrets_of(text: str, refusal: str) -> Secrets | None:
    """The value secrets written ``text`` (a link's or a cache key's form), None for "" (every pair at every entry);
    anything else (event or whole-population secrets) is refused with ``refusal``, the page's own words."""
    if not text:
        return None
    value = read_secrets(text)
    if not isinstance(value, Secrets):
        raise ValueError(refusal)
    return value


def pairs_only(value: Secrets | EventSecrets) -> Secrets:
    """The value pairs of the secrets, without positions (the planner is given its entry); event secrets: every
    pair (the planner protects one entry)."""
    if isinstance(value, EventSecrets):
        return Secrets()
    return Secrets(pairs=value.pairs, states=value.states, groups=value.groups, listed=value.listed,
                   ordered=value.ordered)


@dataclass(frozen=True, eq=False)
class RedactionView:
    """The plan (the smallest window), its words, the chart of leakage against window size and its table."""

    plan: RedactionPlan
    words: str
    figure: go.Figure
    notes: tuple[str, ...]
    table: pd.DataFrame


def withheld_words(plan: RedactionPlan) -> str:
    """Which entries to withhold, 1-based ("withhold entries 4–9: release every other entry unchanged")."""
    if not plan.feasible:
        return plan.describe()
    first, last = plan.node + 1 - plan.before, plan.node + 1 + plan.after
    span = f"entry {first}" if first == last else f"entries {first}–{last}"
    zero = " It reveals nothing about it: a strong stationary time." if plan.leakage <= 1e-12 else ""
    return (f"Withhold {span} of each sequence ({plan.size} in all) and release every other entry unchanged:"
            f" what is released reveals at most {fmt(plan.leakage)} nats about entry {plan.node + 1}, within"
            f" ε = {plan.eps:g}.{zero}")


@st.cache_resource(show_spinner=False, max_entries=64)
def redaction_view(kind: str, params: Params, text: str, node: int, eps: float) -> RedactionView:
    """The redaction plan for entry ``node`` (0-based) and target ``eps``, for the value pairs written ``text``."""
    prior = build_prior(kind, params)
    secrets = read_secrets(text)
    assert isinstance(secrets, Secrets)
    plan = redaction_plan(prior, node, eps, secrets)
    length = max(int(p.length) for p in (prior if isinstance(prior, list) else [prior]))
    chart = redaction_plan(prior, node, eps, secrets, max_size=min(length, CHART_SIZES))
    sizes, leaks = np.asarray(chart.sizes), np.asarray(chart.leakages, dtype=float)
    lines = [Trace("smallest leakage of a window of this size", sizes.astype(float), leaks),
             Trace(f"target ε = {eps:g}", sizes.astype(float), np.full(sizes.size, eps), dash="dash", width=1.5,
                   markers=False)]
    figure, notes = line_figure(lines, "window size (entries withheld)",
                                "leakage about the entry (nats)", y_name="leakage", x_name="size", integer_x=True,
                                height=340)
    if length > CHART_SIZES:
        notes.append(f"The chart shows window sizes up to {CHART_SIZES} of {length}.")
    table = pd.DataFrame({"window size": sizes, "leakage (nats)": leaks, "within ε": leaks <= eps})
    return RedactionView(plan, withheld_words(plan), figure, tuple(notes), table)


def leak_text(value: float) -> str:
    return "∞" if math.isinf(value) else fmt(value)
