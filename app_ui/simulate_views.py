"""The Simulate page's charts and tables of a result: the accuracy per ε_puffer, the ledger, what Θ changed.

Each is built from a :class:`~puffer_core.simulation.run.SimulationResult` (or the
:class:`~puffer_core.priors.robust.PriorSpread` it was calibrated with) by a pure function here; the page
keeps what it built for the session (:func:`app_ui.memo.session_memo`, keyed by the run's
settings and the choices that shape the view), so that a rerun sends them again without building
them.  Words are in :mod:`app_ui.simulate_text`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from puffer_core.accounting.events import Composition
from puffer_core.data.sequences import Sequences
from puffer_core.data.stats import SequenceStats
from puffer_core.engine.spread import PriorSpread
from puffer_core.priors.models import MarkovChainPrior
from puffer_core.simulation.run import SimulationResult

from .charts import Style, Trace, interval_figure, ledger_figure, line_figure, transition_heatmap
from .tables import fmt

COMPOSITION_NAMES = {Composition.THEOREM_6_2: "[C] Theorem 6.2", Composition.ADDITIVE: "additive ([S] Thm III.7)"}


def facts_table(sequences: Sequences | SequenceStats) -> pd.DataFrame:
    """Everything the data model says about the sequences, one row per fact (values as text)."""
    summary = sequences.summary()
    return pd.DataFrame({"": list(summary), "value": [str(v) for v in summary.values()]})


def matrix_view(prior: MarkovChainPrior) -> tuple[go.Figure, pd.DataFrame]:
    """The fitted transition matrix as a heatmap, and as a table (a row per current state) for its CSV."""
    labels = list(prior.labels)
    matrix = np.asarray(prior.transition)
    frame = pd.DataFrame(matrix, index=labels, columns=labels).reset_index(names="from")
    return transition_heatmap(matrix, labels), frame


def accuracy_figure(rows: pd.DataFrame, metric: str, styles: dict[str, Style]) -> go.Figure:
    """One metric's means and 95% intervals over ε_puffer, one line per mechanism in its page-wide style."""
    return interval_figure(rows[rows["metric"] == metric], metric, "ε_puffer per release", styles)


def by_eps_table(result: SimulationResult, metric: str, release: int) -> pd.DataFrame:
    """One metric's means: a row per ε_puffer, a column per mechanism (like [C] Tables 2–5)."""
    frame = result.table(metric, release).reset_index().rename(columns={"eps_puffer": "ε_puffer"})
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
