"""What a page calls (docs/math.md §16): the curve for the chosen secrets, the sentence at the page's ε, the
chosen curve beside every pair's with the redaction planner (Influence curves), and the report's section.

Each is one call from a page, so that the pages stay thin and other features can edit them beside it.
"""

from __future__ import annotations

import streamlit as st

from app_ui.core import inputs, state
from app_ui.core.charts import show_figure
from app_ui.core.report import Section
from app_ui.core.state import EPS_PUFFER
from app_ui.core.tables import csv_download, show_table
from app_ui.core.templates import Code
from app_ui.prior.current import Uncertainty
from app_ui.prior.settings import PriorChoice
from app_ui.secrets.controls import prior_shape
from app_ui.secrets.settings import REDACT_EPS, REDACT_NODE, RedactionChoice, SecretsChoice
from app_ui.secrets.views import curve_for, gain_section, pairs_only, redaction_view, report_section, view_of
from puffer_core import InfluenceCurve
from puffer_core.priors.codecs import Number
from puffer_core.secrets import Secrets


def page_curve(choice: SecretsChoice, prior: PriorChoice, everything: InfluenceCurve,
               spread: Uncertainty | None = None) -> InfluenceCurve:
    """The curve the page computes with, for the chosen secrets (``everything`` for every pair at every entry).

    What the library refuses (a curve too long to compute, secrets that do not fit the prior) is said in an
    ``st.error`` and the page ends there (:class:`~app_ui.core.inputs.Halt`)."""
    try:
        with st.spinner("Computing a(b) for the chosen secrets…"):
            return curve_for(choice, prior.kind, prior.params, everything, spread)
    except ValueError as exc:
        st.error(f"No curve for the chosen secrets: {exc}", icon=":material/error:")
        raise inputs.Halt from None


def protected(choice: SecretsChoice, prior: PriorChoice, eps: float, everything: InfluenceCurve | None = None,
              chosen: InfluenceCurve | None = None) -> None:
    """The sentence the page's result stands behind, at ``eps`` (ε_puffer); with both curves, the budget the chosen
    secrets gain over every pair."""
    labels, _ = prior_shape(prior.kind, prior.params)
    gained = ""
    if not choice.is_all and everything is not None and chosen is not None:
        gained = " " + view_of(everything, chosen, eps).text
    st.caption(f"**What is protected.** {choice.secrets.sentence(labels, eps, prior.description)}{gained}")


def report_part(choice: SecretsChoice, prior: PriorChoice, eps: float | None = None,
                everything: InfluenceCurve | None = None, chosen: InfluenceCurve | None = None) -> Section:
    """The report's "What is secret" section: the sentence (at ``eps`` if given), and the two curves when the
    secrets are chosen and both curves are given."""
    labels, _ = prior_shape(prior.kind, prior.params)
    view = None
    if not choice.is_all and eps is not None and everything is not None and chosen is not None:
        view = view_of(everything, chosen, eps)
    return report_section(choice, labels, eps, prior.description, view)


def value_secrets(choice: SecretsChoice, prior: PriorChoice, what: str) -> tuple[Secrets | None, str]:
    """For a mechanism that protects value pairs of entries (``what`` names it): the chosen secrets resolved on the
    prior's entries (None for every pair), and, for event secrets, which it cannot take, the sentence saying that
    it protects every pair of values at every entry instead (docs/math.md §16)."""
    if choice.is_all:
        return None, ""
    if not isinstance(choice.secrets, Secrets):
        return None, (f"{what} protects every pair of values at every entry, not the chosen event secret"
                      " (it takes value pairs and positions only).")
    _, length = prior_shape(prior.kind, prior.params)
    resolved = choice.resolved(length)
    assert isinstance(resolved, Secrets)  # value secrets resolve to value secrets
    return resolved, ""


def script_secrets(choice: SecretsChoice, prior: PriorChoice) -> tuple[Code, list[str]]:
    """The secrets for an exported script's ``SECRETS = …`` line, and the names it imports from puffer_core."""
    _, length = prior_shape(prior.kind, prior.params)
    return Code(choice.source(length)), choice.names()


def curves_part(choice: SecretsChoice, prior: PriorChoice, everything: InfluenceCurve) -> None:
    """Influence curves: the chosen secrets' curve beside every pair's, and the redaction planner."""
    chosen = page_curve(choice, prior, everything)
    gain_section(choice, everything, chosen, float(state.get(EPS_PUFFER)))
    with st.expander("Redaction planner: which entries to withhold", icon=":material/visibility_off:"):
        redaction_section(choice, prior)


def redaction_section(choice: SecretsChoice, prior: PriorChoice) -> None:
    """Which entries around a protected one to withhold so that the rest reveals at most ε about it."""
    labels, length = prior_shape(prior.kind, prior.params)
    if labels is None:
        st.info("The redaction planner needs a Markov chain prior (a Gaussian process has no states).")
        return
    st.markdown(
        "Release every entry of a sequence unchanged except a window around a protected entry, withheld: how"
        " large must the window be so that what is released reveals at most ε about that entry, for the chosen"
        " pairs of values? (docs/math.md §16; the leakage is the engine's own term for one window.)")
    left, right = st.columns(2)
    chosen = RedactionChoice.from_session()  # a link's entry and ε (docs/math.md §16)
    start = chosen.node if chosen.node is not None and chosen.node <= length else min(length, 1 + length // 2)
    # keyed by T: an entry chosen for a longer prior never lingers as an error once T shrinks
    node = inputs.number(left, "Protected entry (1-based)", Number(1, length, whole=True), start,
                         key=f"w_red_node_{length}")
    target = float(state.get(EPS_PUFFER)) if chosen.eps is None else chosen.eps
    eps = inputs.number(right, "Target ε (nats)", Number(0.0, 1000.0), target, key="w_red_eps", step=0.1)
    if node is None or eps is None:
        return
    if node != start or chosen.node is not None:
        state.put(REDACT_NODE, int(node))  # in the link from the first change on
    if eps != target or chosen.eps is not None:
        state.put(REDACT_EPS, float(eps))
    try:
        with st.spinner("Planning the window…"):
            view = redaction_view(prior.kind, prior.params, pairs_only(choice.secrets).to_text(), node - 1, eps)
    except ValueError as exc:
        st.error(f"No redaction plan: {exc}", icon=":material/error:")
        return
    (st.success if view.plan.feasible else st.warning)(view.words)
    show_figure(view.figure, view.notes, key="redaction_chart")
    show_table(view.table, key="redaction_table", height=250, width="stretch")
    csv_download(view.table, "redaction_plan.csv", "Download the leakage of every window size (CSV)",
                 key="w_red_download")
