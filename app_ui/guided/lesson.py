"""The classroom's guided path: five short steps on why correlated entries leak and what to do about it.

The page is ``app_pages/lesson.py``; here are its words and its charts.  One story runs through it: Ana
is at home or out, hour by hour, over a day (a binary chain, T = 24), and each hour is an entry of her
sequence.  Every number comes from :mod:`puffer_core` (docs/math.md §2–§4 and §8).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from app_ui.core.charts import Trace, curve_trace, ledger_figure, line_figure
from puffer_core import Accountant, CurveEvent, InfluenceCurve, calibrate, curve_mechanisms, group_dp
from puffer_core.display import fmt

HOURS = 24
TITLES = (
    "One hour, or the whole day?",
    "Hide more, leak less",
    "From a target to noise",
    "Many releases",
    "When privacy collapses",
)

# what the lesson's numbers protect (docs/math.md §16): its own secret hours (app_ui/guided/lesson_secrets.py),
# whatever is chosen on the other pages
PROTECTED = (
    "The lesson chooses its own secret hours, above. The secrets chosen under *What is secret* on the other pages"
    " (Influence curves, Calibrate, Plan, Simulate, Streams) apply there, to their own prior."
)
GROUP_NOTE = (
    " Group DP protects the whole day as one record, whichever hours are secret: it does not follow the choice of"
    " hours."
)
WORDS = {
    "hour": (
        "Ana is either **at home** or **out**, hour by hour. Differential privacy protects each hour of her"
        " day as one entry: a release changes little whether that hour says home or out. But her hours are"
        " linked — if she is home at 2 pm, she is probably home at 3 pm. Someone who knows the other hours"
        " learns about 3 pm without the release saying anything about it. Set how sticky Ana's days are:"
    ),
    "curve": (
        "The fix is to hide more than the one hour: a window of **b** hours around it. The attacker then only"
        " sees hours further away, which say less. **a(b)** is the most they can still learn about the hour"
        " (in nats: their odds move by at most a factor e^a(b)). It falls as the window grows, and is 0 once it"
        " covers the whole day."
    ),
    "target": (
        "Choose how much one release may reveal about any hour: **ε_puffer**. The release then adds noise as if"
        " each hour had the budget ε_DP, chosen so that the window's share (b · ε_DP) and what leaks past it"
        " (a(b)) add up to the target. The best window gives the most budget — the least noise."
    ),
    "compose": (
        "Ana's town publishes these statistics every month. Each release reveals a little; how much do they"
        " reveal together? Because each release is calibrated through the same curve, the part that leaks"
        " past the window counts once, not every month."
    ),
    "collapse": (
        "Not every privacy guarantee adds up like that. For a general Pufferfish mechanism — one that relies"
        " on what the attacker does not know about the links — a few releases together can reveal the secret"
        " completely, although each one alone looks safe. The Classroom page shows it run by run, and audits a"
        " tiny chain exactly, every sequence enumerated."
    ),
}


def odds(a: float) -> str:
    """e^a as a factor in words."""
    if math.isinf(a):
        return "without limit (some hours rule others out)"
    return f"×{math.exp(a):.3g}"


def hour_words(curve: InfluenceCurve, p: float, q: float) -> str:
    a1 = float(curve.a[0])
    return (
        f"Ana stays home with probability {p:g} and stays out with probability {q:g} from one hour to the next."
        f" Knowing every other hour of her day, an attacker's odds about 3 pm move by up to {odds(a1)}"
        f" (a(1) = {fmt(a1)} nats) — from the links alone."
    )


def curve_figure(curve: InfluenceCurve, every: InfluenceCurve | None = None) -> tuple[go.Figure, list[str]]:
    """The a(b) curve; with ``every`` (the every-hour curve, when only some hours are secret) drawn under it."""
    traces = [curve_trace(curve, "a(b), the secret hours" if every is not None else "a(b)")]
    if every is not None:
        traces.append(Trace("a(b), every hour secret", np.asarray(every.b, dtype=float), every.a, dash="dot"))
    return line_figure(
        traces,
        "b — hours hidden around the hour",
        "a(b) — what still leaks (nats)",
        integer_x=True,
        height=340,
    )


def _group_note(curve: InfluenceCurve) -> str:
    """Beside numbers for chosen hours: the group-DP figure does not follow them ("" for every hour)."""
    return "" if getattr(curve.secrets, "is_all", True) else GROUP_NOTE


def _gained(eps_dp: float, every: InfluenceCurve | None, eps: float) -> str:
    """The budget the chosen hours gain over every hour secret ("" without a comparison)."""
    if every is None:
        return ""
    whole = calibrate(every, eps).eps_dp
    return f" With every hour secret it would be {fmt(whole)}: the chosen hours give ×{eps_dp / whole:.3g} the budget."


def target_words(curve: InfluenceCurve, eps: float, every: InfluenceCurve | None = None) -> str:
    """The calibration at ``eps`` in words; ``every``: the every-hour curve to compare with (chosen hours only)."""
    cal = calibrate(curve, eps)
    group = group_dp(curve, eps)
    if cal.group_dp:
        return (
            f"At ε_puffer = {eps:g} no window short of the whole day works: each hour gets ε_DP = {fmt(cal.eps_dp)},"
            " the whole day protected as one record."
        )
    return (
        f"At ε_puffer = {eps:g}: hide b = {cal.b} hours around each one (a(b) = {fmt(cal.a)} still leaks) and give"
        f" each hour ε_DP = **{fmt(cal.eps_dp)}** — {cal.eps_dp / group.eps_dp:.3g} times the {fmt(group.eps_dp)}"
        f" that protecting the whole day as one record would allow." + _group_note(curve)
        + _gained(cal.eps_dp, every, eps)
    )


def compose_figure(curve: InfluenceCurve, eps: float, releases: int) -> tuple[go.Figure, list[str], str]:
    # the accountant composes the month's releases: Theorem 6.2, the naive sum and group DP (docs/math.md §4)
    event = CurveEvent(curve_mechanisms()[0], calibrate(curve, eps))
    ledger = Accountant(curve.length).ledger([event] * releases)
    x = np.arange(1, releases + 1, dtype=float)
    traces = [
        Trace("together (Theorem 6.2)", x, ledger.eps_puffer),
        Trace("adding up each release", x, ledger.naive_sum, dash="dash"),
        Trace("the whole day as one record", x, ledger.group_dp, dash="dot"),
    ]
    figure, notes = ledger_figure(traces, log_y=True, height=340)
    words = (
        f"After {releases} releases at ε_puffer = {eps:g}: **{fmt(float(ledger.eps_puffer[-1]))}** together, against"
        f" {fmt(float(ledger.naive_sum[-1]))} if each release were added up and {fmt(float(ledger.group_dp[-1]))}"
        " if the whole day were protected as one record."
    )
    if _group_note(curve):
        words += (" The whole-day line counts these releases' per-hour budget over all the day's hours: group DP does"
                  " not look at which hours are secret.")
    return figure, notes, words
