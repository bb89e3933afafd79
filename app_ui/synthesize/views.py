"""What the Synthesize page shows, built from the library's results (docs/math.md §19): the plan as a table, the
fidelity scores, the real and synthetic matrices side by side, dwell-time histograms overlaid, and how fidelity
changes with ε.  Nothing here computes a formula: every number is read from :mod:`puffer_core.synthesis`.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from app_ui.core.charts import GREY, PALETTE, transition_heatmap
from puffer_core.display import fmt
from puffer_core.synthesis.counts import ChainCounts
from puffer_core.synthesis.fidelity import ALL, METRIC_WORDS, QUERY_WORDS, Fidelity
from puffer_core.synthesis.privacy import ENTRY_L1
from puffer_core.synthesis.synthesize import SynthesisPlan

# the grid of ε_puffer over which fidelity is compared (the page's own ε is added), and the runs per point
EPS_GRID = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0)
SWEEP_RUNS = 3
# how fidelity_over_eps's parts and guarantees read on the chart
SERIES = {
    ("pufferfish", "total"): "Pufferfish synthetic table",
    ("group_dp", "total"): "group-DP synthetic table (baseline)",
    ("pufferfish", "noise"): "Pufferfish: the released chain alone (noise, no sampling)",
}
SAMPLING = "sampling alone (the real chain, no noise)"
SWEEP_METRICS = ("stationary_tv", "dwell_error", "transition_error", "query_error")
HEATMAP_TEXT_STATES = 8  # up to this many states each half-width heatmap prints its values in the cells
DWELL_SHARE = 0.001  # the dwell-time histogram stops at the last stay length holding this share of stays


def n_counts(plan: SynthesisPlan) -> int:
    """How many counts the release adds noise to: every group's K² transition counts and K first-state counts."""
    k = plan.counts.n_states
    return plan.counts.n_groups * (k * k + k)


def plan_frame(plan: SynthesisPlan) -> pd.DataFrame:
    """The plan in words: what is released, the noise, the window and how ε_puffer is spent (docs/math.md §19.3)."""
    counts, calibration, event = plan.counts, plan.calibration, plan.event
    noise_part = calibration.b * calibration.eps_dp  # c_b / s: what the noise on the window costs
    groups = "one chain for everyone" if counts.groups is None else f"{counts.n_groups} groups, one chain each"
    rows = [
        ("Released with noise", f"{n_counts(plan):,} counts ({groups}: K² = {counts.n_states ** 2:,} transition"
                                f" counts and K = {counts.n_states} first-state counts each)"),
        ("Released as they are (public)", f"the lengths of {counts.n_users:,} users' sequences"
                                          f" ({counts.n_rows:,} entries, the longest T = {counts.max_length})"),
        ("Noise on every count", f"discrete Laplace, scale s = {fmt(plan.scale)}"
                                 f" (E|noise| = {fmt(plan.expected_abs_noise)})"),
        ("One entry moves the counts by", f"at most Δ₁ = {ENTRY_L1} in L1"
                                          f" (per-entry ε_DP of the noise = {fmt(event.eps_dp)})"),
        ("The window b", f"b = {calibration.b} entries: the curve point that leaves the most budget to the counts"),
        ("The window's sensitivity", f"c_b = {event.window_l1} in L1 (2b + 2 for a window inside a sequence,"
                                     " 2T for a whole one; group privacy would charge 4b)"),
        ("ε_puffer spent on the noise", f"c_b / s = {fmt(noise_part)}"),
        ("ε_puffer spent on the correlation", f"a(b) = {fmt(calibration.a)}"),
        ("ε_puffer of the release", f"{fmt(plan.eps_puffer)} = c_b / s + a(b)"),
    ]
    return pd.DataFrame(rows, columns=["What", "How much"])


def budget_figure(plan: SynthesisPlan) -> go.Figure:
    """ε_puffer as one bar: the noise's share c_b/s and the correlation's a(b)."""
    calibration = plan.calibration
    parts = (("noise on the window, c_b / s", calibration.b * calibration.eps_dp, PALETTE[0]),
             ("correlation, a(b)", calibration.a, PALETTE[1]))
    fig = go.Figure()
    for name, value, color in parts:
        fig.add_trace(go.Bar(
            x=[value], y=["ε_puffer"], orientation="h", name=name, marker_color=color,
            text=[fmt(value)], textposition="inside", hovertemplate=f"{name}: %{{x:.4g}}<extra></extra>",
        ))
    fig.update_layout(
        barmode="stack", height=150, margin={"l": 10, "r": 10, "t": 10, "b": 10}, xaxis_title="ε_puffer",
        legend={"orientation": "h", "yanchor": "top", "y": -0.6, "x": 0, "traceorder": "normal"},
    )
    return fig


def drawn_words(synthetic: ChainCounts, plan: SynthesisPlan) -> str:
    """What was drawn, in one sentence: users, rows and the guarantee."""
    return (
        f"{synthetic.n_users:,} synthetic users, {synthetic.n_rows:,} rows, released at ε_puffer ="
        f" {fmt(plan.eps_puffer)}: discrete Laplace noise of scale {fmt(plan.scale)} on each of {n_counts(plan):,}"
        " counts, everything after it drawn from the noisy counts only."
    )


def scores_frame(fidelity: Fidelity) -> pd.DataFrame:
    """The fidelity scores, one row per group (everyone first), the columns in words."""
    scores = fidelity.scores()
    names = {**METRIC_WORDS, "dwell_real": "mean dwell time of the data (steps)"}
    names["topk_hit"] = f"top-{fidelity.top_k} states found (hit rate)"
    names["query_error"] = f"error of the {QUERY_WORDS[fidelity.query]} (mean |Δ|)"
    frame = scores.rename(columns=names)
    frame["group"] = frame["group"].replace({ALL: "everyone"})
    return frame


def matrix_figures(fidelity: Fidelity, group: str) -> tuple[go.Figure, go.Figure]:
    """The real and the synthetic transition matrices of ``group`` (``"all"``: everyone), as two heatmaps."""
    frame = fidelity.transition_frame()
    part = frame[frame["group"] == group]
    k = fidelity.real.n_states
    labels = list(fidelity.real.states)
    figures = []
    top = float(max(part["real"].max(), part["synthetic"].max()))
    for column in ("real", "synthetic"):
        fig = transition_heatmap(part[column].to_numpy().reshape(k, k), labels)
        fig.update_traces(zmax=top)  # one colour scale for both: the same shade is the same probability
        if k > HEATMAP_TEXT_STATES:  # two matrices side by side: numbers in the cells only when they fit
            fig.update_traces(texttemplate="")
        figures.append(fig)
    return figures[0], figures[1]


def dwell_figure(fidelity: Fidelity, group: str, state: str) -> go.Figure | None:
    """The dwell-time histograms of ``state`` in ``group``, real and synthetic overlaid (None: runs not counted)."""
    frame = fidelity.dwell_frame()
    if frame.empty:
        return None
    part = frame[(frame["group"] == group) & (frame["state"] == state)].reset_index(drop=True)
    seen = part.index[(part["real"] >= DWELL_SHARE) | (part["synthetic"] >= DWELL_SHARE)]
    cut = max(int(seen.max()) + 1 if len(seen) else 1, 5)
    if cut < len(part):  # the longer stays in one last bar
        tail = part.iloc[cut - 1:]
        part = pd.concat([part.iloc[: cut - 1], pd.DataFrame({
            "dwell": [int(tail["dwell"].iloc[0])], "real": [tail["real"].sum()], "synthetic": [tail["synthetic"].sum()],
        })], ignore_index=True)
    last = int(part["dwell"].iloc[-1])
    ticks = [str(int(d)) for d in part["dwell"]]
    ticks[-1] = f"≥ {last}"  # the library's last bin holds the longer stays too, as does a cut one
    fig = go.Figure()
    for column, color, name in (("real", PALETTE[0], "the data"), ("synthetic", PALETTE[1], "synthetic")):
        fig.add_trace(go.Bar(
            x=ticks, y=part[column], name=name, marker_color=color,
            hovertemplate=f"{name}: %{{y:.3f}} of the stays last %{{x}} steps<extra></extra>",
        ))
    fig.update_layout(
        barmode="group", height=320, margin={"l": 10, "r": 10, "t": 40, "b": 10},
        title={"text": f"How long a stay in {state} lasts", "x": 0.01},
        xaxis_title="steps in a row", yaxis_title="share of the stays",
        legend={"orientation": "h", "yanchor": "top", "y": -0.25, "x": 0},
    )
    fig.update_xaxes(type="category")
    return fig


def sweep_frame(sweep: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One metric of :func:`~puffer_core.synthesis.sweep.fidelity_over_eps` for everyone, its mean over the runs:
    a row per series and ε_puffer (the sampling reference: ε_puffer = ∞)."""
    rows = sweep[(sweep["group"] == ALL) & (sweep["metric"] == metric)]
    means = rows.groupby(["guarantee", "part", "eps_puffer"], sort=False)["value"].agg(["mean", "min", "max"])
    out = means.reset_index()
    out["series"] = [SERIES.get((g, p), SAMPLING) for g, p in zip(out["guarantee"], out["part"])]
    return out[["series", "eps_puffer", "mean", "min", "max"]]


def sweep_figure(frame: pd.DataFrame, metric: str) -> go.Figure:
    """How one fidelity metric changes with ε_puffer: the synthetic tables (Pufferfish, group DP), the released
    chain alone, and the sampling reference as a horizontal line; the bars span the runs (lowest to highest)."""
    fig = go.Figure()
    grid = sorted(float(e) for e in frame["eps_puffer"] if math.isfinite(e))
    for i, (series, part) in enumerate(frame.groupby("series", sort=False)):
        if series == SAMPLING:  # no noise, no ε: a level line across the grid
            value = float(part["mean"].iloc[0])
            fig.add_trace(go.Scatter(
                x=[grid[0], grid[-1]], y=[value, value], mode="lines", name=f"{SAMPLING}: {fmt(value)}",
                line={"color": GREY, "dash": "dot"}, hovertemplate=f"{SAMPLING}: {fmt(value)}<extra></extra>",
            ))
            continue
        part = part.sort_values("eps_puffer")
        fig.add_trace(go.Scatter(
            x=part["eps_puffer"], y=part["mean"], mode="lines+markers", name=str(series),
            line={"color": PALETTE[i % len(PALETTE)], "dash": "dash" if "alone" in str(series) else "solid"},
            error_y={"type": "data", "symmetric": False, "array": (part["max"] - part["mean"]).to_numpy(),
                     "arrayminus": (part["mean"] - part["min"]).to_numpy()},
            hovertemplate=f"%{{fullData.name}}<br>ε_puffer = %{{x}}<br>{METRIC_WORDS[metric]} = %{{y:.4g}}"
                          "<extra></extra>",
        ))
    fig.update_layout(
        height=380, margin={"l": 10, "r": 10, "t": 40, "b": 10},
        title={"text": METRIC_WORDS[metric], "x": 0.01},
        xaxis={"type": "log", "title": "ε_puffer (log scale)", "tickvals": grid, "ticktext": [f"{e:g}" for e in grid]},
        yaxis_title=METRIC_WORDS[metric],
        legend={"orientation": "h", "yanchor": "top", "y": -0.25, "x": 0},
    )
    return fig


def sweep_grid(eps: float) -> tuple[float, ...]:
    """The ε grid of the comparison, with the page's own ε in it."""
    return tuple(sorted({*EPS_GRID, float(eps)}))


def csv_size_words(rows: int) -> str:
    """What a synthetic CSV of ``rows`` rows will weigh, roughly (~40 bytes a row), in words."""
    megabytes = rows * 40 / 1e6
    return f"~{megabytes:,.0f} MB" if megabytes >= 1 else f"~{max(1, math.ceil(rows * 40 / 1e3))} kB"


def group_options(fidelity: Fidelity) -> list[str]:
    """The parts a chart can show: everyone, then each group."""
    groups = fidelity.real.groups
    return [ALL, *([] if groups is None else list(groups))]
