"""The Simulate page's charts and tables of a result: the accuracy per ε_puffer, the ledger, what Θ changed.

Each is built from a :class:`~puffer_core.simulation.run.SimulationResult` (or the
:class:`~puffer_core.priors.robust.PriorSpread` it was calibrated with) by a pure function here; the page
keeps what it built for the session (:func:`app_ui.core.memo.session_memo`, keyed by the run's
settings and the choices that shape the view), so that a rerun sends them again without building
them.  Words are in :mod:`app_ui.simulate.words`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_ui.accuracy.views import grid_accuracy
from app_ui.core.charts import Style, Trace, interval_figure, ledger_figure, line_figure, transition_heatmap
from app_ui.core.report import Section
from app_ui.core.tables import fmt, right_aligned, static_table
from app_ui.simulate.settings import SimulateSettings
from puffer_core.accounting.events import Composition
from puffer_core.data.sequences import Sequences
from puffer_core.data.stats import SequenceStats
from puffer_core.engine.curve import InfluenceCurve
from puffer_core.engine.spread import PriorSpread
from puffer_core.priors.models import MarkovChainPrior
from puffer_core.simulation.explain import base_name
from puffer_core.simulation.run import POSTPROCESSED, SimulationResult

COMPOSITION_NAMES = {Composition.THEOREM_6_2: "[C] Theorem 6.2", Composition.ADDITIVE: "additive ([S] Thm III.7)"}


def facts_table(sequences: Sequences | SequenceStats) -> pd.DataFrame:
    """Everything the data model says about the sequences, one row per fact (values as text)."""
    summary = sequences.summary()
    return pd.DataFrame({"": list(summary), "value": [str(v) for v in summary.values()]})


HEATMAP_TEXT_STATES = 6  # up to this many states the numbers fit in the cells at 390 px; beyond, hover only


def matrix_view(prior: MarkovChainPrior) -> tuple[go.Figure, pd.DataFrame]:
    """The fitted transition matrix as a heatmap, and as a table (a row per current state) for its CSV."""
    labels = list(prior.labels)
    matrix = np.asarray(prior.transition)
    frame = pd.DataFrame(matrix, index=labels, columns=labels).reset_index(names="from")
    figure = transition_heatmap(matrix, labels)
    if len(labels) > HEATMAP_TEXT_STATES:  # at 390 px the cells' numbers overlap: hover shows each value
        figure.update_traces(text=None, texttemplate="")
    return figure, frame


def accuracy_figure(rows: pd.DataFrame, metric: str, styles: dict[str, Style]) -> go.Figure:
    """One metric's means and 95% intervals over ε_puffer, one line per mechanism in its page-wide style."""
    return interval_figure(rows[rows["metric"] == metric], metric, "ε_puffer per release", styles)


def by_eps_table(result: SimulationResult, metric: str, release: int) -> pd.DataFrame:
    """One metric's means: a row per ε_puffer, a column per mechanism (like [C] Tables 2–5).

    Mechanisms post-processed with the prior are left out: their own table sets them beside the
    counts as released (:func:`before_after`), and this one stays narrow enough for a phone.
    """
    frame = result.table(metric, release).reset_index().rename(columns={"eps_puffer": "ε_puffer"})
    frame = frame[[c for c in frame.columns if not str(c).endswith(" + prior")]]
    frame.columns.name = None
    return frame


def calibration_table(ledger: pd.DataFrame, t_max: int) -> pd.DataFrame:
    """Release 1 of each mechanism and ε_puffer: ε_DP per entry, where it is calibrated, how releases compose."""
    rows = ledger[ledger["release"] == 1]

    def where(row: pd.Series) -> str:
        if not pd.isna(row["sigma_max"]):
            return f"σ_max = {fmt(float(row['sigma_max']))}"
        if int(row["b"]) >= t_max:
            return f"b = T = {int(row['b'])} (group DP)"
        return f"b = {int(row['b'])}, a(b) = {fmt(float(row['a']))}"

    return pd.DataFrame(
        {
            "mechanism": rows["label"].to_numpy(),
            "ε_puffer": [f"{e:g}" for e in rows["eps_puffer"]],
            "ε_DP per entry": rows["eps_dp"].to_numpy(dtype=float),
            "calibrated at": [where(row) for _, row in rows.iterrows()],
            "releases compose by": [COMPOSITION_NAMES.get(c, str(c)) for c in rows["composition"]],
        }
    )


def ledger_traces(part: pd.DataFrame, styles: dict[str, Style]) -> list[Trace]:
    """Cumulative ε_puffer per release for one ε_puffer: one trace per mechanism, the naive sum and group DP."""
    traces = []
    for label, rows in part.groupby("label", sort=False):
        x = rows["release"].to_numpy(dtype=float)
        y = rows["cumulative_eps_puffer"].to_numpy(dtype=float)
        style = styles.get(str(label))
        if style is None:
            traces.append(Trace(str(label), x, y))
        else:
            traces.append(Trace(str(label), x, y, dash=style.dash, color=style.color, marker=style.marker))
    first = part[part["mechanism"] == part["mechanism"].iloc[0]]
    x = first["release"].to_numpy(dtype=float)
    traces.append(Trace("naive sum", x, first["naive_sum"].to_numpy(dtype=float), dash="dash", width=1.5))
    pufferfish = part[part["composition"] == Composition.THEOREM_6_2]
    if not pufferfish.empty:
        ref = pufferfish[pufferfish["mechanism"] == pufferfish["mechanism"].iloc[0]]
        name = f"group DP accounting of {ref['label'].iloc[0]}"
        traces.append(Trace(name, x, ref["group_dp"].to_numpy(dtype=float), dash="dot", width=1.5))
    return traces


def coinciding(traces: list[Trace]) -> list[str]:
    """Groups of traces with the same values at every release (drawn on top of each other), as text."""
    groups: list[list[Trace]] = []
    for trace in traces:
        home = next((g for g in groups if np.allclose(g[0].y, trace.y, rtol=1e-9, atol=0)), None)
        if home is None:
            groups.append([trace])
        else:
            home.append(trace)
    return [", ".join(t.label for t in g) for g in groups if len(g) > 1]


def ledger_view(part: pd.DataFrame, styles: dict[str, Style], log_y: bool) -> tuple[go.Figure, list[str], list[str]]:
    """The ledger chart of one ε_puffer, its notes, and the groups of lines drawn on top of each other."""
    traces = ledger_traces(part, styles)
    fig, notes = ledger_figure(traces, log_y=log_y, height=360)
    return fig, notes, coinciding(traces)


def totals_table(part: pd.DataFrame) -> pd.DataFrame:
    """After the last release, per mechanism: the composed ε_puffer, the naive sum and group DP's accounting."""
    last = part[part["release"] == part["release"].max()]
    return pd.DataFrame(
        {
            "mechanism": last["label"].to_numpy(),
            "composed ε_puffer": last["cumulative_eps_puffer"].to_numpy(dtype=float),
            "naive sum": last["naive_sum"].to_numpy(dtype=float),
            "group DP accounting": last["group_dp"].to_numpy(dtype=float),
        }
    )


def smaller_bound_note(totals: pd.DataFrame) -> str:
    """A sentence when group DP's accounting is below a mechanism's own total (else ""): both hold."""
    own = totals["composed ε_puffer"].to_numpy(dtype=float)
    group = totals["group DP accounting"].to_numpy(dtype=float)
    names = [str(m) for m, o, g in zip(totals["mechanism"], own, group) if g < o * (1 - 1e-9)]
    if not names:
        return ""
    return (
        f" For {', '.join(names)}, group DP's accounting is the smaller number: every column is an upper bound"
        " for the same noise, so the smallest holds. (MQM adds up its m counts one by one, ε/m each; group DP"
        " charges the same noise as one histogram.)"
    )


def theta_figure(spread: PriorSpread, log_y: bool) -> tuple[go.Figure, list[str]]:
    """a(b) of the fitted prior, of Θ (calibrated with) and the draws' 5%–95% band."""
    b = np.asarray(spread.robust.b, dtype=float)
    low, high = spread.band()
    traces = [
        Trace("fitted prior", b, spread.fit, dash="solid"),
        Trace("robust Θ (calibrated with)", b, np.asarray(spread.robust.a, dtype=float), dash="dash"),
        Trace("draws: 5% quantile", b, low, dash="dot", width=1.5, markers=False),
        Trace("draws: 95% quantile", b, high, dash="dot", width=1.5, markers=False),
    ]
    return line_figure(traces, "b (entries hidden around the secret)", "a(b)", log_y=log_y, height=320)


def spread_rows_note(spread: PriorSpread) -> str:
    """The rows of the fitted chain that drive the spread of a(b) most, in a sentence."""
    rows = spread.rows().head(3)
    named = ", ".join(f"{r.state} ({int(r.visits):,} transitions seen)" for r in rows.itertuples(index=False))
    return (
        f"Rows that drive the spread of a({spread.row_b}) most (one row drawn at a time): {named}."
        " Rows seen rarely are guesses; more data on them narrows Θ."
    )


# --------------------------------------------------------------------------------------------
# accuracy beside the ε grid, and the error before and after post-processing (docs/math.md §13, §14)


def result_curve(result: SimulationResult) -> InfluenceCurve:
    """The a(b) curve the simulation calibrated with, as its settings recorded it."""
    points = result.settings["curve"]
    b = np.array([int(p[0]) for p in points])
    a = np.array([float(p[1]) for p in points])
    t_max = int(result.settings["t_max"])
    keep = b < t_max
    return InfluenceCurve(b[keep], a[keep], t_max) if keep.any() else InfluenceCurve(np.array([1]), np.zeros(1), 1)


def accuracy_grid(result: SimulationResult, chosen: SimulateSettings, priors: list[MarkovChainPrior] | None,
                  n_states: int) -> pd.DataFrame:
    """What each mechanism's noise buys at each ε_puffer of the grid (analytic, data-free); refused ones left out."""
    refused = result.settings.get("refused") or {}
    names = tuple(name for name in chosen.mechanisms if name not in refused)
    return grid_accuracy(result_curve(result), priors, names, tuple(chosen.eps_grid), chosen.query,
                         int(chosen.k), n_states, chosen.topk_laplace)


def before_after(result: SimulationResult, metric: str, release: int) -> pd.DataFrame:
    """Each count mechanism's metric before and after post-processing with the prior, per ε_puffer."""
    rows = result.metrics[(result.metrics["metric"] == metric) & (result.metrics["release"] == release)]
    smoothed = rows[rows["mechanism"].str.endswith(POSTPROCESSED)]
    out = []
    for row in smoothed.itertuples(index=False):
        raw = rows[(rows["mechanism"] == base_name(row.mechanism)) & (rows["eps_puffer"] == row.eps_puffer)].iloc[0]
        better = (row.mean > raw["mean"]) if not metric.startswith("L1") else (row.mean < raw["mean"])
        apart = row.ci_low > raw["ci_high"] or row.ci_high < raw["ci_low"]
        out.append(
            {
                "mechanism": f"{raw['label']} at ε = {row.eps_puffer:g}",
                "released": f"{fmt(float(raw['mean']), 3)} ({fmt(float(raw['ci_low']), 3)}–"
                f"{fmt(float(raw['ci_high']), 3)})",
                "with the prior": f"{fmt(row.mean, 3)} ({fmt(row.ci_low, 3)}–{fmt(row.ci_high, 3)})",
                "smoothing": ("helps" if better else "hurts") if apart else "no difference",
            }
        )
    return pd.DataFrame(out)


def accuracy_sections(
    result: SimulationResult,
    chosen: SimulateSettings,
    signature: tuple[Any, ...],
    metric: str,
    release: int,
    memo: Callable[[tuple[Any, ...], Callable[[], Any]], Any],
    priors: Callable[[], list[MarkovChainPrior] | MarkovChainPrior],
    n_states: int,
) -> list[Section]:
    """The Simulate results' accuracy views: beside the ε grid, and before/after post-processing."""
    st.markdown("**What each ε buys** (analytic, before any data: docs/math.md §13)")

    def grid() -> pd.DataFrame:
        chains = priors()
        return accuracy_grid(result, chosen, chains if isinstance(chains, list) else [chains], n_states)

    table = memo((signature, "accuracy grid"), grid)
    static_table(memo((signature, "accuracy grid styled"), lambda: right_aligned(table)))
    caption = (
        "With 95% probability: ±α, the error each noisy count keeps (Laplace counts, MQM); lead g, how far the"
        " k-th count must lead the next for the released top-k set to be the true one (exponential top-k, in the"
        " worst data for that lead)."
    )
    st.caption(caption)
    sections = [Section("What each ε buys (docs/math.md §13)", caption, table=table)]
    if not chosen.postprocess:
        return sections
    heading = f"{metric} before and after post-processing with the prior (release {release}, 95% intervals)"
    st.markdown(f"**{heading}**")
    compare = memo((signature, "before after", metric, release), lambda: before_after(result, metric, release))
    if compare.empty:
        st.caption("No mechanism that releases counts was run: post-processing applies to noisy counts only.")
        return sections
    static_table(memo((signature, "before after styled", metric, release), lambda: right_aligned(compare)))
    note = (
        "The same noisy counts, scored as released and after smoothing with the prior (docs/math.md §14):"
        " it never costs privacy; it helps when the noise is large and the data follow the prior, and can hurt"
        " where the prior is wrong for a group (every group shares one fitted chain)."
    )
    st.caption(note)
    return [*sections, Section(heading, note, table=compare)]
