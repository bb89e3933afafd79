"""Numbers, line charts, tables and downloads, drawn the same way on every page.

+inf is a legitimate value of a(b) and of a leakage: charts draw it at the top edge as ▲ and
tables print ∞.  Downloads never rerun the page.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from puffer_core import InfluenceCurve


def fmt(value: float, digits: int = 4) -> str:
    """A number for a table or a metric: ∞ for +inf, 4 significant digits otherwise."""
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if value == 0:
        return "0"
    return f"{value:.{digits}g}"


@dataclass(frozen=True)
class Trace:
    """One line of a chart: x values, y values (may hold +inf) and how to draw it.

    With a ``symbol`` (e.g. "star") the points are drawn alone, as that symbol of ``size``.
    """

    label: str
    x: np.ndarray
    y: np.ndarray
    dash: str = "solid"
    width: float = 2.5
    markers: bool = True
    color: str | None = None
    symbol: str | None = None
    size: float = 16


def curve_trace(curve: InfluenceCurve, label: str, dash: str = "solid", width: float = 2.5) -> Trace:
    """The plotted points of a curve: b = 1..B (a(b) = 0 from b = T on)."""
    return Trace(label, np.asarray(curve.b, dtype=float), np.asarray(curve.a, dtype=float), dash, width)


def traces_frame(traces: Sequence[Trace], x_name: str, y_name: str) -> pd.DataFrame:
    """Long table of what is plotted (one row per point), for the CSV download."""
    frames = [pd.DataFrame({"curve": t.label, x_name: t.x, y_name: t.y}) for t in traces]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["curve", x_name, y_name])


def line_figure(
    traces: Sequence[Trace],
    x_title: str,
    y_title: str,
    log_y: bool = False,
    y_name: str = "a(b)",
    x_name: str = "b",
    height: int = 430,
    y_range: tuple[float, float] | None = None,
) -> tuple[go.Figure, list[str]]:
    """A plotly line chart with hover values; +inf is drawn at the top edge as ▲.

    Returns the figure and notes to print under it (what was clipped or left out).
    """
    finite = np.concatenate([t.y[np.isfinite(t.y)] for t in traces]) if traces else np.array([])
    positive = finite[finite > 0]
    notes = []
    if y_range is not None:
        bottom, top = y_range
    elif log_y:
        top = float(positive.max()) * 3 if positive.size else 10.0
        bottom = float(positive.min()) / 3 if positive.size else 0.1
    else:
        top = float(finite.max()) * 1.12 if finite.size and finite.max() > 0 else 1.0
        bottom = 0.0
    any_inf = False
    any_zero_hidden = False
    fig = go.Figure()
    for trace in traces:
        y = trace.y.astype(float)
        inf = np.isposinf(y)
        any_inf |= bool(inf.any())
        shown = np.where(inf, top, y)
        if log_y:
            zero = shown <= 0
            any_zero_hidden |= bool(zero.any())
            shown = np.where(zero, np.nan, shown)
        text = [fmt(v) for v in y]
        if trace.symbol is not None:
            mode, marker = "markers", {"size": trace.size, "symbol": trace.symbol, "color": trace.color}
        else:
            mode = "lines+markers" if trace.markers else "lines"
            marker = {"size": [11 if i else 5 for i in inf], "symbol": ["triangle-up" if i else "circle" for i in inf]}
        fig.add_trace(
            go.Scatter(
                x=trace.x,
                y=shown,
                mode=mode,
                name=trace.label,
                line={"dash": trace.dash, "width": trace.width, "color": trace.color},
                marker=marker,
                customdata=text,
                hovertemplate=f"%{{fullData.name}}<br>{x_name} = %{{x}}<br>{y_name} = %{{customdata}}<extra></extra>",
            )
        )
    if any_inf:
        notes.append(f"▲ marks {y_name} = ∞ (drawn at the top edge of the plot; the table shows ∞).")
    if any_zero_hidden:
        notes.append(f"Points with {y_name} = 0 cannot be drawn on a log scale and are left out.")
    fig.update_layout(
        height=height,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
        hovermode="closest",
        xaxis_title=x_title,
        yaxis_title=y_title,
    )
    if y_range is not None:
        fig.update_yaxes(range=list(y_range))
    elif log_y:
        decades = math.log10(top * 1.5) - math.log10(bottom)
        fig.update_yaxes(type="log", range=[math.log10(bottom), math.log10(top * 1.5)])
        if decades <= 4:
            fig.update_yaxes(tickformat=".3~g", dtick="D2")  # 1, 2, 5 in every decade
        else:  # powers of ten, as 10⁻⁶ … 10⁶, at most about eight of them
            low, high = math.floor(math.log10(bottom)), math.ceil(math.log10(top * 1.5))
            step = max(1, math.ceil((high - low) / 8))
            powers = list(range(low, high + 1, step))
            fig.update_yaxes(tickvals=[10.0**e for e in powers], ticktext=[_power_of_ten(e) for e in powers])
    else:
        fig.update_yaxes(range=[bottom, top * 1.04])
    return fig, notes


def ledger_figure(traces: Sequence[Trace], log_y: bool = False, height: int = 430) -> tuple[go.Figure, list[str]]:
    """Cumulative ε_puffer after each release: :func:`line_figure` with one tick per release."""
    fig, notes = line_figure(
        traces,
        x_title="releases so far",
        y_title="cumulative ε_puffer",
        y_name="ε_puffer",
        x_name="release",
        log_y=log_y,
        height=height,
    )
    fig.update_xaxes(dtick=1)
    return fig, notes


SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_of_ten(exponent: int) -> str:
    """10 to the exponent as text: 1, 10, 100, then 10³, 10⁻⁶ …"""
    if 0 <= exponent <= 2:
        return str(10**exponent)
    return "10" + str(exponent).translate(SUPERSCRIPTS)


def show_figure(fig: go.Figure, notes: Sequence[str], key: str) -> None:
    st.plotly_chart(fig, key=key, config={"displaylogo": False})
    for note in notes:
        st.caption(note)


def display_table(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with every float column as text: ∞ shown as ∞, 4 significant digits."""
    out = frame.copy()
    for column in out.columns:
        if pd.api.types.is_float_dtype(out[column]):
            out[column] = [fmt(float(v)) if not pd.isna(v) else "" for v in out[column]]
    return out


def show_problems(problems: Iterable[str]) -> None:
    """One ``st.error`` per problem, as a sentence."""
    for problem in problems:
        st.error(problem[0].upper() + problem[1:] + ".")


def show_table(frame: pd.DataFrame, key: str, **kwargs: Any) -> None:
    """``st.dataframe`` of :func:`display_table`, with the number columns right-aligned."""
    shown = display_table(frame)
    config = {
        str(c): st.column_config.TextColumn(str(c), alignment="right")
        for c in frame.columns
        if pd.api.types.is_float_dtype(frame[c])
    }
    st.dataframe(shown, hide_index=True, key=key, column_config=config, **kwargs)


def csv_download(frame: pd.DataFrame, file_name: str, label: str, key: str) -> None:
    """A download button for a table (``inf`` written as inf), without rerunning the page."""
    st.download_button(
        label,
        frame.to_csv(index=False).encode("utf-8"),
        file_name=file_name,
        mime="text/csv",
        key=key,
        on_click="ignore",
        icon=":material/download:",
    )


def transition_heatmap(matrix: np.ndarray, labels: Sequence[str]) -> go.Figure:
    """A transition matrix as a heatmap: rows are the current state, columns the next one."""
    fig = go.Figure(
        go.Heatmap(
            z=matrix,
            x=list(labels),
            y=list(labels),
            colorscale="Blues",
            zmin=0.0,
            zmax=float(np.max(matrix)),
            colorbar={"title": "Pr"},
            hovertemplate="from %{y} to %{x}: %{z:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        height=max(320, 28 * len(labels) + 120),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis_title="next state",
        yaxis_title="current state",
        yaxis={"autorange": "reversed"},
    )
    return fig


def interval_figure(rows: pd.DataFrame, metric: str, x_title: str) -> go.Figure:
    """Means with their 95% intervals over ε_puffer, one line per label (rows of a simulation's metrics)."""
    fig = go.Figure()
    for label, part in rows.groupby("label", sort=False):
        part = part.sort_values("eps_puffer")
        fig.add_trace(
            go.Scatter(
                x=part["eps_puffer"],
                y=part["mean"],
                mode="lines+markers",
                name=str(label),
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": (part["ci_high"] - part["mean"]).to_numpy(),
                    "arrayminus": (part["mean"] - part["ci_low"]).to_numpy(),
                },
                customdata=np.stack([part["ci_low"], part["ci_high"]], axis=1),
                hovertemplate=(
                    f"%{{fullData.name}}<br>ε_puffer = %{{x}}<br>{metric} = %{{y:.4g}}"
                    "<br>95% interval %{customdata[0]:.4g} – %{customdata[1]:.4g}<extra></extra>"
                ),
            )
        )
    fig.update_layout(
        height=340,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        title={"text": metric, "x": 0.01},
        xaxis_title=x_title,
        yaxis_title=metric,
        legend={"orientation": "h", "yanchor": "top", "y": -0.25, "x": 0},
    )
    return fig
