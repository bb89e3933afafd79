"""The analyst's guided path: its words, the trial run and the report (the page is ``app_pages/analyst.py``).

Six steps, in plain words first, the mathematics one click away: the data → the attacker's belief (a
chain fitted to the data, with its uncertainty if asked) → a target (ε_puffer per release, or the
accuracy needed, on the Calibrate page) → a plan (how many releases, what they spend together) →
a trial run (the release simulated on the data, Pufferfish against group DP) → a report of it all.
Every number comes from :mod:`puffer_core`, through the same settings the other pages use, so the
Calibrate, Plan and Simulate pages then show the same decision in full.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from app_ui.core.charts import Trace, ledger_figure
from app_ui.core.report import Section, html_report
from app_ui.data.picker import LoadedData
from app_ui.prior.current import Uncertainty
from puffer_core import (
    MECHANISMS,
    Accountant,
    Calibration,
    CurveEvent,
    InfluenceCurve,
    Ledger,
    MarkovChainPrior,
    calibrate,
    group_dp,
    group_dp_twins,
    simulate,
)
from puffer_core import (
    QUERIES as QUERY_NAMES,
)
from puffer_core.display import fmt
from puffer_core.secrets import EventSecrets, Secrets

TITLES = ("Your data", "The attacker's belief", "Your target", "Your plan", "A trial run", "Your report")
# per query: the first curve-calibrated mechanism whose release answers it as it is, and its group-DP twin
TRIAL_MECHANISMS: dict[str, tuple[str, str]] = {
    query: next((name, twin) for name, twin in group_dp_twins().items() if MECHANISMS[name].queries[0] == query)
    for query in QUERY_NAMES
}
QUERIES = {"topk": "the most frequent states of each group (a top-k list)", "histogram": "a count of every state"}

WORDS = {
    "data": (
        "Start with the data you want to publish statistics about: one row per entry — **who** (a user),"
        " **when** (a time) and **what** (a state: a place, an activity, the weather). Nothing you upload"
        " is written to disk. No data of your own? Pick a built-in dataset."
    ),
    "belief": (
        "Entries of the same user are linked: someone at home now is likely at home in an hour. An"
        " attacker who knows these links learns about one entry from the others. We learn the links from"
        " your data — how often each state follows each other one — and assume the attacker knows them"
        " exactly. That **fitted chain** is the attacker's belief every later step protects against."
    ),
    "target": (
        "How much may one release reveal about any single entry? That is **ε_puffer**: the most an"
        " attacker's odds about an entry may move (a factor e^ε). Smaller is more private and needs more"
        " noise. Pick the ε_puffer of one release here — or start from the accuracy you need."
    ),
    "plan": (
        "Statistics are rarely published once. Each release spends some of the privacy budget; because"
        " every release here is calibrated through the same curve, they add up to much less than their sum."
        " Say how many releases you plan."
    ),
    "trial": (
        "Before publishing, try it: the release is simulated on your data many times with fresh noise, and"
        " its accuracy measured against the truth — with Pufferfish's calibration, and with group privacy"
        " (the classic way to protect a whole sequence), at the same ε_puffer."
    ),
    "report": (
        "Everything you decided, in one file to keep or share: the data, the attacker's belief, the target,"
        " the plan and the trial run, with the numbers and charts. It opens in any browser, offline."
    ),
}


def target_words(curve: InfluenceCurve, cal: Calibration) -> str:
    """What the target means for the noise, in plain words."""
    group = group_dp(curve, cal.eps_puffer)
    if cal.group_dp:
        return (
            f"With ε_puffer = {cal.eps_puffer:g}, the links between entries are too strong to gain anything: each"
            f" entry gets ε_DP = {fmt(cal.eps_dp)}, as if the whole sequence of {curve.length} entries were one"
            " record (group privacy)."
        )
    gain = cal.eps_dp / group.eps_dp
    return (
        f"Each release may treat one entry with a per-entry budget of **ε_DP = {fmt(cal.eps_dp)}** — {gain:.3g}"
        f" times what protecting whole sequences would allow ({fmt(group.eps_dp)}), so {gain:.3g} times less"
        f" noise. It hides a window of b = {cal.b} entries around each one; what leaks through the rest of the"
        f" sequence is a(b) = {fmt(cal.a)}."
    )


def uncertainty_words(spread: Uncertainty, fit: InfluenceCurve) -> str:
    """What allowing for the fit's uncertainty changes, at step 2: Θ in words and a(1) of the fit against Θ's."""
    robust = spread.spread.robust
    return (
        f"{spread.description()}. Every later step protects against all of them at once (docs/math.md §12): the"
        f" leak of one entry, a(1), is **{fmt(float(robust.a[0]))}** over Θ against {fmt(float(fit.a[0]))} for"
        " the fit alone."
    )


@dataclass(frozen=True)
class PlanNumbers:
    """What a series of releases at one ε_puffer each spends together, three ways."""

    releases: int
    each: Calibration
    composed: float  # [C] Theorem 6.2
    naive: float  # the sum of the releases' own ε_puffer
    group: float  # group DP accounting: T · Σ ε_DP


def plan_ledger(curve: InfluenceCurve, eps: float, releases: int, query: str = "topk") -> tuple[Calibration, Ledger]:
    """``releases`` releases of the trial's mechanism for ``query``, calibrated at ``eps`` each, composed by the
    accountant (docs/math.md §4): Theorem 6.2, the naive sum and group DP after each release."""
    each = calibrate(curve, eps)
    event = CurveEvent(TRIAL_MECHANISMS[query][0], each)
    return each, Accountant(curve.length).ledger([event] * releases)


def plan_numbers(curve: InfluenceCurve, eps: float, releases: int) -> PlanNumbers:
    each, ledger = plan_ledger(curve, eps, releases)
    return PlanNumbers(
        releases, each, float(ledger.eps_puffer[-1]), float(ledger.naive_sum[-1]), float(ledger.group_dp[-1])
    )


def plan_words(plan: PlanNumbers) -> str:
    return (
        f"{plan.releases} releases at ε_puffer = {plan.each.eps_puffer:g} each spend **ε_puffer ="
        f" {fmt(plan.composed)}** together ([C] Theorem 6.2): the leak through the rest of the sequence,"
        f" a(b) = {fmt(plan.each.a)}, counts once, not {plan.releases} times. Adding the releases up would say"
        f" {fmt(plan.naive)}; group privacy would say {fmt(plan.group)}."
    )


def plan_figure(curve: InfluenceCurve, plan: PlanNumbers) -> tuple[go.Figure, list[str]]:
    """What the releases spend after each one: Theorem 6.2, the naive sum and group DP."""
    _, ledger = plan_ledger(curve, plan.each.eps_puffer, plan.releases)
    x = pd.Series(range(1, plan.releases + 1), dtype=float).to_numpy()
    traces = [
        Trace("Theorem 6.2 (composed)", x, ledger.eps_puffer),
        Trace("naive sum", x, ledger.naive_sum, dash="dash"),
        Trace("group DP", x, ledger.group_dp, dash="dot"),
    ]
    return ledger_figure(traces, log_y=True, height=340)


def trial_run(
    data: LoadedData,
    prior: MarkovChainPrior | list[MarkovChainPrior],
    query: str,
    eps: float,
    trials: int,
    k: int = 3,
    seed: int = 0,
    secrets: Secrets | EventSecrets | None = None,
) -> pd.DataFrame:
    """The release simulated on the data (noise seed ``seed``) for ``secrets`` (docs/math.md §16; None: every pair
    at every entry): one row per mechanism with its accuracy and 95% interval, as the page and the path's script
    show it."""
    result = simulate(
        data.stats,
        prior=prior,
        query=query,
        k=int(k),
        mechanisms=list(TRIAL_MECHANISMS[query]),
        eps_grid=[float(eps)],
        trials=int(trials),
        rng=int(seed),
        secrets=secrets,
    )
    metric = f"HitRate@{k}" if query == "topk" else "L1"
    rows = result.metrics[(result.metrics["metric"] == metric) & (result.metrics["release"] == 1)]
    return pd.DataFrame(
        {
            "mechanism": rows["label"].to_numpy(),
            "measure": metric,
            "mean": [fmt(v, 3) for v in rows["mean"]],
            "95% interval": [f"{fmt(lo, 3)} – {fmt(hi, 3)}" for lo, hi in zip(rows["ci_low"], rows["ci_high"])],
        }
    )


def trial_words(query: str, table: pd.DataFrame, k: int) -> str:
    if query == "topk":
        measure = f"the share of each group's true top {k} states that the release got right (higher is better)"
    else:
        measure = "how many entries the released counts are off by, in total (lower is better)"
    return f"Accuracy, measured as {measure}, over the trials; the 95% intervals show how sure the simulation is."


@dataclass(frozen=True, eq=False)
class PathReport:
    """What the path's report says: each step's words and figures (the trial run's table, if it was run)."""

    data: str  # the data, in a sentence
    data_name: str
    belief: str
    prior: str  # the prior in a few words (Θ's description with prior uncertainty)
    heatmap: go.Figure
    target: str
    plan: str
    plan_figure: go.Figure
    plan_notes: list[str]
    eps: float
    releases: int
    settings: dict[str, Any]  # every setting the path used (app_ui/guided/exports.py: report_settings)
    trial: pd.DataFrame | None = None
    trial_words: str = ""


def report(facts: PathReport) -> str:
    """The path as one HTML file: the data, the belief, the target, the plan and the trial run."""
    sections = [
        Section("Your data", facts.data),
        Section("The attacker's belief", facts.belief, facts.heatmap),
        Section("Your target", facts.target),
        Section("Your plan", facts.plan, facts.plan_figure, notes=facts.plan_notes),
    ]
    if facts.trial is not None:
        sections.append(Section("A trial run", facts.trial_words, table=facts.trial))
    summary = (
        f"A plan to publish {facts.releases} releases from {facts.data_name} at ε_puffer = {facts.eps:g}"
        f" each, against an attacker who knows how its entries are linked (the chain fitted to the data)."
    )
    return html_report("Pufferfish Lab — your release, step by step", summary, facts.settings, sections)
