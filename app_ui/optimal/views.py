"""The best possible mechanism as a yardstick, as the page shows it (docs/math.md §18).

For the count of one state over a chain prior, :func:`puffer_core.optimal.compare.compare_with_floor` solves the
linear programme of the error-optimal ε-Pufferfish mechanism (its certified floor) and lists every shipped
mechanism's exact expected error beside it; :func:`puffer_core.optimal.repeat.repeated_leakage` gives the exact
leakage of k independent runs of the table the programme returned ([C]'s point: the optimum run twice may stop
being private), beside k·ε and [C] Theorem 6.2's bound for the a(b) route.  Work beyond what a page should wait
for is refused before it starts, with the estimate (:func:`refusal`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_ui.core.charts import GREY, PALETTE, Trace, line_figure
from app_ui.core.tables import fmt
from app_ui.gaussian.views import state_labels
from puffer_core import influence_curve
from puffer_core.optimal.compare import FloorComparison, compare_with_floor
from puffer_core.optimal.lp import programme_estimate
from puffer_core.optimal.repeat import RepeatedLeakage, repeated_estimate, repeated_leakage
from puffer_core.priors.models import MarkovChainPrior

PAGE_LIMIT_SECONDS = 15.0  # the page refuses a programme (or an enumeration) estimated beyond this
COMPARABLE = PALETTE[0]
RENYI = PALETTE[4]


def shortened(chains: Sequence[MarkovChainPrior], length: int) -> list[MarkovChainPrior]:
    """The prior's chains over ``length`` entries (same transitions, initial laws and labels)."""
    return [MarkovChainPrior(p.transition, p.initial, length=length, labels=p.labels) for p in chains]


def refusal(chains: Sequence[MarkovChainPrior], runs: int) -> str | None:
    """Why the page will not compute (the programme's or the k runs' estimate over the page's limit), or None."""
    t_max, k_states = max(p.length for p in chains), chains[0].n_states
    pairs = t_max * k_states * (k_states - 1) * len(chains)
    estimates = [programme_estimate(t_max + 1, t_max + 1, pairs)]
    estimates.append(repeated_estimate(t_max + 1, runs, t_max + 1, 2 * pairs))
    for estimate in estimates:
        bounded = dataclasses.replace(estimate, limit=min(estimate.limit, PAGE_LIMIT_SECONDS))
        if not bounded.fits:
            return bounded.message
    return None


def odds(leakage: float) -> str:
    """A leakage as a likelihood ratio a reader can picture ("about 1.6e+15 times")."""
    return "infinitely" if math.isinf(leakage) else f"about {math.exp(min(leakage, 700.0)):.2g} times"


@dataclass(frozen=True, eq=False)
class Yardstick:
    """The floor, every mechanism's error, and the leakage of 1..k runs of the returned optimum."""

    comparison: FloorComparison
    runs: tuple[RepeatedLeakage, ...]
    state_label: str
    length: int

    def errors(self) -> pd.DataFrame:
        """Every mechanism's exact expected error beside the floor (the page's table and CSV)."""
        rows = [{"mechanism": "Best possible (LP floor)", "expected error": self.comparison.floor, "× floor": 1.0,
                 "guarantee": f"ε-Pufferfish, ε = {self.comparison.eps:g}", "note": "certified by the duals"}]
        for row in self.comparison.rows:
            rows.append({
                "mechanism": row.label,
                "expected error": row.error,
                "× floor": self.comparison.ratio(row.name) if row.comparable else None,
                "guarantee": (f"ε-Pufferfish, ε = {self.comparison.eps:g}" if row.comparable
                              else f"(α, ε = {self.comparison.eps:g})-Rényi only: not comparable"),
                "note": row.note,
            })
        return pd.DataFrame(rows)

    def leakage(self) -> pd.DataFrame:
        """The exact leakage of k runs of the returned optimum, beside k·ε and Theorem 6.2 (the page's table)."""
        return pd.DataFrame({
            "runs k": [r.k for r in self.runs],
            "exact leakage of the optimum": [r.leakage for r in self.runs],
            "k·ε": [r.k_eps for r in self.runs],
            "Theorem 6.2, Laplace via a(b)": [r.theorem_6_2 if r.theorem_6_2 is not None else math.nan
                                              for r in self.runs],
            "attained at": [f"{r.pair}, outputs {', '.join(str(y) for y in r.outputs)}" for r in self.runs],
        })

    def best_shipped(self) -> tuple[str, float]:
        """The comparable shipped mechanism with the least error, and how many times the floor it is."""
        rows = [r for r in self.comparison.rows if r.comparable and math.isfinite(r.error)]
        best = min(rows, key=lambda r: r.error)
        return best.label, self.comparison.ratio(best.name)

    def collapse(self) -> RepeatedLeakage | None:
        """The first number of runs whose exact leakage exceeds k·ε (None: none of those computed)."""
        return next((r for r in self.runs if r.leakage > r.k_eps * (1 + 1e-9)), None)

    def summary(self) -> str:
        """The findings in words (the page's and the report's)."""
        c = self.comparison
        name, ratio = self.best_shipped()
        laplace = c.ratio("pufferfish_laplace")
        text = (
            f"For the count of state {self.state_label} over T = {self.length} at ε = {c.eps:g}, no ε-Pufferfish"
            f" mechanism that sees the data only through the count has expected error below {fmt(c.floor)}."
            f" Laplace via a(b) is {fmt(laplace, 3)}× that floor; the best shipped mechanism, {name}, is"
            f" {fmt(ratio, 3)}×."
        )
        broken = self.collapse()
        if broken is None:
            return text + f" Run up to {len(self.runs)} times, the optimum returned stays within k·ε."
        return text + (
            f" But the optimum returned, run {broken.k} times on the same data, leaks {fmt(broken.leakage)}"
            f" (k·ε = {fmt(broken.k_eps)}; some outputs are {odds(broken.leakage)} likelier under one secret than the"
            " other): the best mechanism for one release need not compose ([C] §4)."
            " Optimal mechanisms are not unique; this is the leakage of the one the programme returned."
        )


@st.cache_data(show_spinner=False, max_entries=16)
def yardstick(key: Hashable, _chains: Sequence[MarkovChainPrior], eps: float, state: int, alpha: float,
              runs: int) -> Yardstick:
    """:class:`Yardstick` for these chains (``key`` names them and their length), once per input."""
    chains = list(_chains)
    comparison = compare_with_floor(chains, eps, [state], alpha=alpha)
    curve = influence_curve(chains if len(chains) > 1 else chains[0])
    repeated = tuple(repeated_leakage(comparison.optimal, k, curve) for k in range(1, runs + 1))
    label = state_labels(chains)[state]
    return Yardstick(comparison, repeated, label, max(p.length for p in chains))


def errors_figure(stick: Yardstick) -> tuple[go.Figure, list[str]]:
    """Horizontal bars: each mechanism's expected error, the floor as a line; Rényi rows in another colour."""
    table = stick.errors().iloc[1:]
    shown = table[np.isfinite(table["expected error"].astype(float))]
    refused = table[~np.isfinite(table["expected error"].astype(float))]
    comparable = shown["× floor"].notna()
    fig = go.Figure()
    for flag, colour, name in ((True, COMPARABLE, "ε-Pufferfish (comparable)"),
                               (False, RENYI, "Rényi Pufferfish (a weaker guarantee)")):
        part = shown[comparable == flag]
        if len(part):
            fig.add_bar(y=part["mechanism"], x=part["expected error"], orientation="h", name=name,
                        marker_color=colour, marker_pattern_shape="" if flag else "/",
                        hovertemplate="%{y}: %{x:.4g}<extra></extra>")
    floor = stick.comparison.floor
    fig.add_vline(x=floor, line_color="#000000", line_dash="dash", line_width=2)
    fig.add_annotation(x=floor, y=1.0, yref="paper", text=f"best possible {fmt(floor)}", showarrow=False,
                       xanchor="left", yanchor="bottom", font={"size": 12})
    fig.update_layout(height=80 + 34 * len(shown), margin={"l": 10, "r": 10, "t": 40, "b": 40},
                      xaxis_title="expected absolute error of one release", yaxis={"autorange": "reversed"},
                      legend={"orientation": "h", "y": -0.25, "x": 0}, barmode="overlay")
    notes = [f"{row['mechanism']} is not drawn: {row['note']}" for _, row in refused.iterrows()]
    return fig, notes


def leakage_figure(stick: Yardstick) -> tuple[go.Figure, list[str]]:
    """The exact leakage of k runs of the optimum beside k·ε and Theorem 6.2 (+inf at the top edge, as ▲)."""
    frame = stick.leakage()
    k = frame["runs k"].to_numpy(dtype=float)
    traces = [
        Trace("exact leakage of the optimum", k, frame["exact leakage of the optimum"].to_numpy(dtype=float),
              color=PALETTE[1]),
        Trace("k·ε (adding up)", k, frame["k·ε"].to_numpy(dtype=float), color=GREY, dash="dash"),
    ]
    bound = frame["Theorem 6.2, Laplace via a(b)"].to_numpy(dtype=float)
    same = False
    if np.all(np.isfinite(bound)):
        traces.append(Trace("Theorem 6.2 for Laplace via a(b)", k, bound, color=PALETTE[0], dash="dot"))
        same = bool(np.allclose(bound, frame["k·ε"].to_numpy(dtype=float)))
    fig, notes = line_figure(traces, "runs k of the same release", "leakage (ε)", y_name="leakage", x_name="k",
                             integer_x=True, height=380)
    if same:
        notes.append("Theorem 6.2's bound equals k·ε here (the a(b) route is group DP for this chain): the two lines"
                     " are drawn on top of each other.")
    return fig, notes
