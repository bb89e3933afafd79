"""Rényi rows kept apart: k releases of one Gaussian count on Plan, and what Simulate's Gaussian ε means
(docs/math.md §17).

k releases of the **same** count with independent Gaussian noise are exactly one release at the combined σ
(:func:`puffer_core.accounting.renyi.renyi_ledger`): its exact Rényi level, the GWM's bound, the (ε_δ, δ)
conversion and the pure ε-Pufferfish level where one exists.  The sum of the releases' own ε is shown only as
what Rényi DP's rule would say — not a guarantee here; releases of different queries are not composed at all.
These rows are never added to the ε-Pufferfish ledger.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from app_ui.accuracy.views import chains_of
from app_ui.core import inputs, state
from app_ui.core.charts import GREY, PALETTE, Trace, line_figure, show_figure
from app_ui.core.report import Section
from app_ui.core.tables import csv_download, fmt, show_table
from app_ui.gaussian.settings import GAUSS_ALPHA, GAUSS_DELTA, GAUSS_EPS, GAUSS_ON, GAUSS_RELEASES, GaussianChoice
from app_ui.gaussian.views import NOTION, count_controls, state_labels
from app_ui.prior.settings import PriorChoice
from puffer_core import CountTarget, InfluenceCurve, TopKTarget, accuracy_first, gaussian_count
from puffer_core.accounting.renyi import DIFFERENT_QUERIES, renyi_ledger, renyi_to_approx
from puffer_core.mechanisms import MECHANISMS
from puffer_core.mechanisms.accuracy import AccuracyPlan
from puffer_core.mechanisms.gaussian import DEFAULT_ORDER
from puffer_core.priors.models import MarkovChainPrior

SIMULATE_DELTA = 1e-5  # the δ Simulate's conversion is said at


@st.cache_data(show_spinner=False, max_entries=16)
def renyi_rows(key: Hashable, _chains: Sequence[MarkovChainPrior], choice: GaussianChoice) -> pd.DataFrame:
    """The ledger of ``choice.releases`` releases of one count, each calibrated (σ*) at ``choice.eps``."""
    mech = gaussian_count(list(_chains), [choice.state], choice.eps, choice.alpha)
    ledger = renyi_ledger([mech.accounting] * choice.releases, delta=choice.delta)
    return pd.DataFrame({
        "release": np.arange(1, choice.releases + 1),
        "σ of each": mech.sigma,
        "one release equal to all so far: σ": ledger.sigma,
        "Rényi ε, exact": ledger.eps,
        "Rényi ε, GWM bound": ledger.eps_gwm,
        f"ε_δ (δ = {choice.delta:g})": ledger.eps_delta,
        "pure ε-Pufferfish": ledger.eps_puffer,
        "sum of the releases' ε (not a guarantee)": ledger.naive_sum,
    })


def renyi_plan_section(key: Hashable, chains: Sequence[MarkovChainPrior] | None) -> pd.DataFrame | None:
    """The Plan page's Rényi tab: k releases of the same Gaussian count, kept apart from the ε-Pufferfish ledger."""
    st.markdown(NOTION + " Its rows are kept here, apart from the ledger of ε-Pufferfish releases.")
    if chains is None:
        st.info("Gaussian noise is calibrated on the count laws of a Markov chain; this prior is a Gaussian process.")
        return None
    if not state.toggle(st, "Plan releases of one count with Gaussian noise", GAUSS_ON, key="w_plan_gauss_on"):
        return None
    c1, c2, c3, c4, c5 = st.columns(5)
    state.number_input(c1, "Rényi ε per release", GAUSS_EPS, key="w_plan_gauss_eps")
    state.number_input(c2, "Releases k", GAUSS_RELEASES, key="w_plan_gauss_releases")
    state.number_input(c3, "Rényi order α", GAUSS_ALPHA, key="w_plan_gauss_alpha")
    state.number_input(c4, "δ", GAUSS_DELTA, key="w_plan_gauss_delta")
    counted = count_controls(c5, chains, "w_plan_gauss_state")
    boxes = ("w_plan_gauss_eps", "w_plan_gauss_releases", "w_plan_gauss_alpha", "w_plan_gauss_delta")
    if counted is None or any(inputs.is_invalid(box) for box in boxes):
        return None
    choice = GaussianChoice.from_session()
    try:
        with st.spinner("Certified divergences at every combined σ…"):
            rows = renyi_rows(key, tuple(chains), choice)
    except ValueError as exc:
        st.error(f"Gaussian noise cannot be calibrated here: {exc}")
        return None
    last = rows.iloc[-1]
    eps_delta = float(last[f"ε_δ (δ = {choice.delta:g})"])
    st.markdown(
        f"**{choice.releases} releases of the same count**, each with σ* = {fmt(float(last['σ of each']))} at"
        f" (α = {choice.alpha:g}, ε = {choice.eps:g}), are exactly one release with σ ="
        f" {fmt(float(last['one release equal to all so far: σ']))}: (α = {choice.alpha:g}, ε ="
        f" {fmt(float(last['Rényi ε, exact']))})-Rényi Pufferfish in all, (ε_δ = {fmt(eps_delta)},"
        f" δ = {choice.delta:g})-Pufferfish. The exact level may exceed the sum of the releases' own ε (a mixture's"
        " divergence need not scale like 1/σ²): that sum is not a guarantee."
    )
    x = rows["release"].to_numpy(dtype=float)
    traces = [
        Trace("Rényi ε, exact", x, rows["Rényi ε, exact"].to_numpy(dtype=float), color=PALETTE[0]),
        Trace("Rényi ε, GWM bound", x, rows["Rényi ε, GWM bound"].to_numpy(dtype=float), color=PALETTE[1], dash="dot"),
        Trace("sum of the releases' ε (not a guarantee)", x,
              rows["sum of the releases' ε (not a guarantee)"].to_numpy(dtype=float), color=GREY, dash="dash"),
    ]
    fig, notes = line_figure(traces, "releases of the same count", "Rényi ε (order α)", y_name="ε", x_name="k",
                             integer_x=True, height=360)
    show_figure(fig, notes, key="plan_renyi_chart")
    show_table(rows, key="plan_renyi_table", width="stretch")
    st.caption(f"Releases of **different** queries are not composed: {DIFFERENT_QUERIES}.")
    csv_download(rows, "renyi-ledger.csv", "Download these rows (CSV)", key="w_download_renyi")
    return rows


def renyi_caption(mechanisms: Sequence[str], eps_grid: Sequence[float]) -> str | None:
    """What the ε of Simulate's Rényi mechanisms means, with the (ε_δ, δ) conversion at each ε of the grid."""
    chosen = [MECHANISMS[name] for name in mechanisms if not MECHANISMS[name].pure]
    if not chosen:
        return None
    converted = ", ".join(f"ε = {e:g} → ε_δ = {fmt(renyi_to_approx(DEFAULT_ORDER, e, SIMULATE_DELTA))}"
                          for e in eps_grid)
    return (
        f"{', '.join(spec.label for spec in chosen)}: its ε is the level of (α = {DEFAULT_ORDER:g}, ε)-Rényi"
        " Pufferfish, a weaker guarantee than the ε-Pufferfish of the other mechanisms (docs/math.md §17). At"
        f" δ = {SIMULATE_DELTA:g} it converts to (ε_δ, δ)-Pufferfish: {converted}. A plain ε-Pufferfish bound"
        " exists only where the count laws under every pair of secrets share their ends (the Calibrate page's"
        " Gaussian tab says which); its releases over different windows are not composed."
    )


@st.cache_data(show_spinner=False, max_entries=32)
def _renyi_plan(key: Hashable, target: CountTarget | TopKTarget, _curve: InfluenceCurve,
                _chains: Sequence[MarkovChainPrior]) -> AccuracyPlan:
    query = "topk" if isinstance(target, TopKTarget) else "histogram"
    renyi = [name for name, spec in MECHANISMS.items() if not spec.pure and spec.answers(query)]
    return accuracy_first(target, _curve, list(_chains), mechanisms=renyi)


def renyi_accuracy(key: Hashable, target: CountTarget | TopKTarget, curve: InfluenceCurve,
                   chains: Sequence[MarkovChainPrior] | None) -> pd.DataFrame | None:
    """Accuracy first for the Rényi mechanisms, in their own table under the ε-Pufferfish ones (never in their
    chart): the Rényi level each needs for the target, its noise and its (ε_δ, δ) conversion."""
    if chains is None:
        return None
    plan = _renyi_plan(key, target, curve, tuple(chains))
    st.markdown("**Gaussian noise for the same target**: a Rényi level, not an ε_puffer (docs/math.md §17)")
    for name, why in plan.skipped.items():
        st.caption(f"{MECHANISMS[name].label} is not listed: {why}.")
    if not plan.costs:
        return None
    rows = pd.DataFrame({
        "mechanism": [c.label for c in plan.costs],
        "Rényi ε needed (order α)": [c.eps_puffer for c in plan.costs],
        "α": [c.renyi_alpha for c in plan.costs],
        "σ per count": [c.noise_scale for c in plan.costs],
        f"ε_δ (δ = {SIMULATE_DELTA:g})": [renyi_to_approx(c.renyi_alpha or DEFAULT_ORDER, c.eps_puffer, SIMULATE_DELTA)
                                          for c in plan.costs],
        "target met": [c.achieved for c in plan.costs],
    })
    show_table(rows, key="acc_renyi_table", width="stretch")
    st.caption(
        "The Rényi ε is read through the General Wasserstein Mechanism's bound (an upper level: the exact σ* at"
        " that level adds no more noise than σ_GWM, so the target is met with room to spare). It bounds an average"
        " of the likelihood ratio, so it is not comparable with the ε_puffer of the mechanisms above."
    )
    return rows


def renyi_report(prior: PriorChoice, choice: GaussianChoice) -> tuple[list[Section], dict[str, Any]]:
    """The Plan report's Rényi section and settings when its Gaussian tab is on (else nothing)."""
    chains = chains_of(prior.kind, prior.params)
    if not choice.on or chains is None or choice.state >= chains[0].n_states:
        return [], {}
    rows = renyi_rows((prior.kind, prior.params), tuple(chains), choice)
    text = (f"{choice.releases} releases of each user's count of state {state_labels(chains)[choice.state]}, each"
            f" calibrated (exact σ*) at (α = {choice.alpha:g}, ε = {choice.eps:g})-Rényi Pufferfish; kept apart from"
            " the ε-Pufferfish ledger. " + NOTION.replace("**", ""))
    shown = {"Gaussian releases: Rényi ε each": choice.eps, "Gaussian releases: k": choice.releases,
             "Gaussian releases: α": choice.alpha, "Gaussian releases: δ": choice.delta}
    return [Section("Gaussian releases of one count (Rényi Pufferfish)", text, table=rows,
                    notes=(f"Releases of different queries are not composed: {DIFFERENT_QUERIES}.",))], shown


RENYI_HEADER = (  # the tab's columns (renyi_rows); the script fills in its δ
    "release", "σ of each", "one release equal to all so far: σ", "Rényi ε, exact", "Rényi ε, GWM bound",
    "ε_δ (δ = {GAUSS_DELTA:g})", "pure ε-Pufferfish", "sum of the releases' ε (not a guarantee)",
)


def renyi_block(prior: PriorChoice, choice: GaussianChoice, prior_name: str = "prior") -> tuple[str, list[str]] | None:
    """The Plan script's block printing the same Rényi rows as the tab (:func:`renyi_rows`), CSV after
    ``# renyi``, and the names it needs from puffer_core; None when the tab shows no rows (off, a Gaussian process,
    a state the chain does not have)."""
    chains = chains_of(prior.kind, prior.params)
    if not choice.on or chains is None or choice.state >= chains[0].n_states:
        return None
    columns = ", ".join(f"f{h!r}" if "{" in h else repr(h) for h in RENYI_HEADER)
    code = (
        "# k releases of the same count with Gaussian noise: (α, ε)-Rényi Pufferfish (docs/math.md §17), kept apart\n"
        "# from the ledger above; they equal one release at the combined σ (releases of different queries: no rule)\n"
        f"GAUSS_STATE = {choice.state!r}  # the state counted (its index)\n"
        f"GAUSS_EPS = {choice.eps!r}  # each release's Rényi ε\n"
        f"GAUSS_RELEASES = {choice.releases!r}  # releases k of that count\n"
        f"GAUSS_ALPHA = {choice.alpha!r}  # the Rényi order\n"
        f"GAUSS_DELTA = {choice.delta!r}  # δ of the (ε, δ) conversion\n"
        f"gauss = gaussian_count({prior_name}, [GAUSS_STATE], GAUSS_EPS, GAUSS_ALPHA)  # each release's exact σ*\n"
        "renyi = renyi_ledger([gauss.accounting] * GAUSS_RELEASES, delta=GAUSS_DELTA)\n"
        'print("# renyi")\n'
        'out = csv.writer(sys.stdout, lineterminator="\\n")\n'
        f"out.writerow([{columns}])\n"
        "for n in range(GAUSS_RELEASES):\n"
        "    numbers = (gauss.sigma, renyi.sigma[n], renyi.eps[n], renyi.eps_gwm[n], renyi.eps_delta[n],\n"
        "               renyi.eps_puffer[n], renyi.naive_sum[n])\n"
        "    out.writerow([n + 1, *(fmt(float(v)) for v in numbers)])\n"
    )
    return code, ["gaussian_count", "renyi_ledger"]
