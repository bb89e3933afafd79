"""Charts drawn the same way on every page: a colour-blind-safe palette, a dash and a marker per series.

+inf is a legitimate value of a(b) and of a leakage: charts draw it at the top edge as ▲ (and
tables print ∞, :mod:`app_ui.core.tables`).  Building a figure costs milliseconds (plotly validates
every property), so the pages build theirs in views cached by their inputs and never change a
figure they were given.
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

from app_ui.core.tables import fmt
from puffer_core import InfluenceCurve

# Okabe & Ito's palette ("Color Universal Design", 2008): told apart with every common colour-vision
# deficiency (their yellow is left out: it cannot be read on white).  Every series also gets its own
# dash and marker, so that no two lines differ by colour alone.
PALETTE: tuple[str, ...] = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
GREY = "#7f7f7f"  # reference lines and points (group DP, a bound)
DASHES: tuple[str, ...] = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
MARKERS: tuple[str, ...] = ("circle", "square", "diamond", "triangle-down", "x", "cross", "pentagon", "star")
MAX_MARKERS = 24  # markers drawn per line (spread over it): enough to tell lines apart, not a smear
ZOOM_SHARE = 0.01  # "zoom" shows b up to where every curve is below 1% of its largest value …
ZOOM_FLOOR = 0.01  # … and below 0.01 nats


class Note(str):
    """A sentence printed under a chart; ``action`` (part of the text on the page) says what to do with the
    app's controls, and a static report, which has none, prints the ``fact`` alone."""

    fact: str
    action: str

    def __new__(cls, fact: str, action: str = "") -> Note:
        note = super().__new__(cls, f"{fact} {action}".strip())
        note.fact, note.action = fact, action
        return note


@dataclass(frozen=True)
class Style:
    """How one series is drawn: its colour, dash and marker."""

    color: str
    dash: str
    marker: str


def series_styles(labels: Sequence[str]) -> dict[str, Style]:
    """A colour, a dash and a marker per series label, in order, so that a series looks the same on
    every chart of a page and no two series differ by colour alone."""
    return {
        label: Style(PALETTE[i % len(PALETTE)], DASHES[i % len(DASHES)], MARKERS[i % len(MARKERS)])
        for i, label in enumerate(labels)
    }


@dataclass(frozen=True)
class Trace:
    """One line of a chart: x values, y values (may hold +inf) and how to draw it.

    ``color``, ``dash`` and ``marker`` left as None are chosen per series (:data:`PALETTE`,
    :data:`DASHES`, :data:`MARKERS`), avoiding the ones other series set explicitly.  With a
    ``symbol`` (e.g. "star") the points are drawn alone, as that symbol of ``size``.
    """

    label: str
    x: np.ndarray
    y: np.ndarray
    dash: str | None = None
    width: float = 2.5
    markers: bool = True
    color: str | None = None
    symbol: str | None = None
    size: float = 16
    marker: str | None = None


@dataclass(frozen=True)
class Band:
    """A shaded band between ``low`` and ``high`` over ``x`` (e.g. the 5%–95% range of many curves)."""

    label: str
    x: np.ndarray
    low: np.ndarray
    high: np.ndarray
    color: str = GREY


def curve_trace(curve: InfluenceCurve, label: str, dash: str | None = None, width: float = 2.5) -> Trace:
    """The plotted points of a curve: b = 1..B (a(b) = 0 from b = T on)."""
    return Trace(label, np.asarray(curve.b, dtype=float), np.asarray(curve.a, dtype=float), dash, width)


def traces_frame(traces: Sequence[Trace], x_name: str, y_name: str) -> pd.DataFrame:
    """Long table of what is plotted (one row per point), for the CSV download."""
    frames = [pd.DataFrame({"curve": t.label, x_name: t.x, y_name: t.y}) for t in traces]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["curve", x_name, y_name])


def _styles(traces: Sequence[Trace]) -> list[tuple[str, str, str]]:
    """(colour, dash, marker) of each trace: the ones set, then the next unused ones in turn."""
    lines = [t for t in traces if t.symbol is None]
    free_colors = [c for c in PALETTE if c not in {t.color for t in traces}] or list(PALETTE)
    free_dashes = [d for d in DASHES if d not in {t.dash for t in lines}] or list(DASHES)
    free_markers = [m for m in MARKERS if m not in {t.marker for t in lines}] or list(MARKERS)
    out = []
    n = 0
    for trace in traces:
        if trace.symbol is not None:
            out.append((trace.color or GREY, "solid", trace.symbol))
            continue
        out.append(
            (
                trace.color or free_colors[n % len(free_colors)],
                trace.dash or free_dashes[n % len(free_dashes)],
                trace.marker or free_markers[n % len(free_markers)],
            )
        )
        n += 1
    return out


def _nice_step(span: float, ticks: int = 12) -> int:
    """A whole tick step of 1, 2 or 5 times a power of ten giving at most about ``ticks`` ticks."""
    raw = max(span / ticks, 1.0)
    power = 10 ** math.floor(math.log10(raw))
    return int(next(m * power for m in (1, 2, 5, 10) if m * power >= raw))


def _integer_log_ticks(low: float, high: float) -> list[int]:
    """1, 2, 5, 10, 20, 50, … between ``low`` and ``high``."""
    ticks = []
    power = 1
    while power <= high:
        ticks += [m * power for m in (1, 2, 5) if low <= m * power <= high]
        power *= 10
    return ticks


def signal_end(traces: Sequence[Trace], share: float = ZOOM_SHARE, floor: float = ZOOM_FLOOR) -> float:
    """The largest x at which some trace is ∞, above ``share`` of its largest finite value, or above ``floor``.

    The floor keeps a curve in view while it is still large in absolute terms: a Gaussian prior's
    a(1) can be 10⁶ nats, and 1% of that is no fade at all.
    """
    end = 0.0
    for trace in traces:
        y = np.asarray(trace.y, dtype=float)
        finite = y[np.isfinite(y)]
        peak = float(finite.max()) if finite.size and finite.max() > 0 else 0.0
        strong = np.isposinf(y) | ((y > min(share * peak, floor)) & (peak > 0))
        if strong.any():
            end = max(end, float(np.asarray(trace.x, dtype=float)[strong].max()))
    return end


def zoom_limit(traces: Sequence[Trace], also: Iterable[float] = ()) -> float | None:
    """Where a zoomed b axis should end, or None when the signal already fills most of the axis.

    The end is a little past :func:`signal_end` (and past every value in ``also``, e.g. an
    optimum that must stay in view); None when that is more than half of the whole axis.
    """
    xs = [np.asarray(t.x, dtype=float) for t in traces if len(t.x)]
    if not xs:
        return None
    full = max(float(x.max()) for x in xs)
    end = max([signal_end(traces), *also])
    end = math.ceil(end * 1.15 + 1)
    return None if end >= 0.5 * full else float(end)


ZOOM_NOTE = (
    "beyond it every curve is below 1% of its largest value and below {floor:g} nats. Choose *All b* or"
    " *Log b* to see the rest"
)


def line_figure(
    traces: Sequence[Trace],
    x_title: str,
    y_title: str,
    log_y: bool = False,
    y_name: str = "a(b)",
    x_name: str = "b",
    height: int = 430,
    y_range: tuple[float, float] | None = None,
    *,
    log_x: bool = False,
    integer_x: bool = False,
    x_max: float | None = None,
    bands: Sequence[Band] = (),
) -> tuple[go.Figure, list[str]]:
    """A plotly line chart with hover values; +inf is drawn at the top edge as ▲.

    ``log_x``: a log x axis; ``integer_x``: ticks on whole numbers only (b, releases, runs);
    ``x_max``: show x up to there (the rest stays one double-click away, and the y axis fits
    what is shown); ``bands``: shaded ranges drawn under the lines.  Returns the figure and
    notes to print under it (what was clipped or left out).
    """
    in_view = [t.y[t.x <= x_max] if x_max is not None else t.y for t in traces]
    in_view += [b.high[b.x <= x_max] if x_max is not None else b.high for b in bands]
    finite = np.concatenate([y[np.isfinite(y)] for y in in_view]) if in_view else np.array([])
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
    for band in bands:
        low, high = np.asarray(band.low, dtype=float), np.asarray(band.high, dtype=float)
        if log_y:
            low, high = np.where(low > 0, low, np.nan), np.where(high > 0, high, np.nan)
        common = {"x": band.x, "mode": "lines", "line": {"width": 0, "color": band.color}, "legendgroup": band.label}
        fig.add_trace(go.Scatter(y=high, showlegend=False, hoverinfo="skip", **common))
        fig.add_trace(
            go.Scatter(
                y=low,
                name=band.label,
                fill="tonexty",
                fillcolor=_transparent(band.color, 0.22),
                customdata=np.stack([[fmt(v) for v in band.low], [fmt(v) for v in band.high]], axis=1),
                hovertemplate=f"{band.label}<br>{x_name} = %{{x}}<br>{y_name} from %{{customdata[0]}}"
                " to %{customdata[1]}<extra></extra>",
                **common,
            )
        )
    inf_points = []
    for trace, (color, dash, marker) in zip(traces, _styles(traces)):
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
            mode, style = "markers", {"size": trace.size, "symbol": trace.symbol, "color": color}
        else:
            mode = "lines+markers" if trace.markers else "lines"
            style = {"symbol": marker, "size": 7, "color": color, "maxdisplayed": MAX_MARKERS}
            if inf.any():
                inf_points.append((trace.label, np.asarray(trace.x)[inf], color))
        fig.add_trace(
            go.Scatter(
                x=trace.x,
                y=shown,
                mode=mode,
                name=trace.label,
                legendgroup=trace.label,
                line={"dash": dash, "width": trace.width, "color": color},
                marker=style,
                customdata=text,
                hovertemplate=f"%{{fullData.name}}<br>{x_name} = %{{x}}<br>{y_name} = %{{customdata}}<extra></extra>",
            )
        )
    for label, x, color in inf_points:  # every ∞ as ▲, whatever markers the line shows
        fig.add_trace(
            go.Scatter(
                x=x,
                y=np.full(x.shape, top),
                mode="markers",
                name=label,
                legendgroup=label,
                showlegend=False,
                marker={"symbol": "triangle-up", "size": 11, "color": color},
                hovertemplate=f"{label}<br>{x_name} = %{{x}}<br>{y_name} = ∞<extra></extra>",
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
        fig.update_yaxes(type="log", range=[math.log10(bottom), math.log10(top * 1.5)], **_log_ticks(bottom, top * 1.5))
    else:
        fig.update_yaxes(range=[bottom, top * 1.04])
    _x_axis(fig, traces, bands, log_x, integer_x, x_max)
    return fig, notes


def _log_ticks(low: float, high: float) -> dict[str, Any]:
    """Tick settings for a log axis from ``low`` to ``high`` (both > 0)."""
    if math.log10(high) - math.log10(low) <= 4:
        return {"tickformat": ".3~g", "dtick": "D2"}  # 1, 2, 5 in every decade
    # powers of ten, as 10⁻⁶ … 10⁶, at most about eight of them
    lowest, highest = math.floor(math.log10(low)), math.ceil(math.log10(high))
    step = max(1, math.ceil((highest - lowest) / 8))
    powers = list(range(lowest, highest + 1, step))
    return {"tickvals": [10.0**e for e in powers], "ticktext": [_power_of_ten(e) for e in powers]}


def _x_axis(
    fig: go.Figure, traces: Sequence[Trace], bands: Sequence[Band], log_x: bool, integer_x: bool, x_max: float | None
) -> None:
    xs = [np.asarray(t.x, dtype=float) for t in traces if len(t.x)] + [np.asarray(b.x, dtype=float) for b in bands]
    if not xs:
        return
    low = min(float(x.min()) for x in xs)
    high = max(float(x.max()) for x in xs)
    if x_max is not None:
        high = min(high, x_max)
    if log_x:
        low = max(low, 1e-12)
        fig.update_xaxes(type="log", range=[math.log10(low) - 0.05, math.log10(max(high, low)) + 0.05])
        if integer_x and low >= 1:
            ticks = _integer_log_ticks(low, high) or [int(low)]
            fig.update_xaxes(tickvals=ticks, ticktext=[f"{t:,}" for t in ticks])
        else:
            fig.update_xaxes(**_log_ticks(low, max(high, low * 10)))
        return
    if integer_x:
        pad = max(0.5, 0.02 * (high - low))
        step = _nice_step(high - low)
        fig.update_xaxes(range=[low - pad, high + pad], tick0=0, dtick=step, tickformat=",d")
    elif x_max is not None:
        fig.update_xaxes(range=[low, high])


def _transparent(color: str, alpha: float) -> str:
    """``#rrggbb`` as rgba with the given opacity."""
    red, green, blue = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, {alpha})"


def ledger_figure(traces: Sequence[Trace], log_y: bool = False, height: int = 430) -> tuple[go.Figure, list[str]]:
    """Cumulative ε_puffer after each release: :func:`line_figure` with whole-number release ticks.

    Give every ledger chart a log-y toggle: one line (group DP, say) can be a hundred times the others.
    """
    return line_figure(
        traces,
        x_title="releases so far",
        y_title="cumulative ε_puffer",
        y_name="ε_puffer",
        x_name="release",
        log_y=log_y,
        height=height,
        integer_x=True,
    )


SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_of_ten(exponent: int) -> str:
    """10 to the exponent as text: 1, 10, 100, then 10³, 10⁻⁶ …"""
    if 0 <= exponent <= 2:
        return str(10**exponent)
    return "10" + str(exponent).translate(SUPERSCRIPTS)


def show_figure(fig: go.Figure, notes: Sequence[str], key: str) -> None:
    """The chart (not changed: it may be a cached one), then its notes as captions."""
    st.plotly_chart(fig, key=key, config={"displaylogo": False})
    for note in notes:
        st.caption(note)


HEATMAP_TEXT_STATES = 16  # up to this many states a heatmap prints each cell's value in it
HEATMAP_MAX_HEIGHT = 900  # pixels: a larger matrix gets smaller cells (every value stays on hover)


def probability_text(value: float) -> str:
    """A probability as a heatmap cell prints it: 0.12, 0.012, 0.0098, then 1e-5 below 0.001; 0 and 1."""
    if value == 0 or value == 1:
        return f"{value:g}"
    return f"{value:.2g}" if value >= 0.001 else f"{value:.0e}".replace("e-0", "e-")


def transition_heatmap(matrix: np.ndarray, labels: Sequence[str]) -> go.Figure:
    """A transition matrix as a heatmap: rows are the current state, columns the next one.

    Every cell shows its value on hover (4 significant digits); up to :data:`HEATMAP_TEXT_STATES`
    states the value is printed in the cell too, in a colour that reads on its shade.
    """
    matrix = np.asarray(matrix, dtype=float)
    k = len(labels)
    hover = np.vectorize(lambda v: fmt(float(v)))(matrix) if k else matrix
    top = float(np.max(matrix)) if matrix.size else 1.0
    trace: dict[str, Any] = {
        "z": matrix,
        "x": list(labels),
        "y": list(labels),
        "colorscale": "Blues",
        "zmin": 0.0,
        "zmax": top,
        "colorbar": {"title": "Pr"},
        "customdata": hover,
        "hovertemplate": "from %{y} to %{x}: %{customdata}<extra></extra>",
        "xgap": 1 if k <= 40 else 0,
        "ygap": 1 if k <= 40 else 0,
    }
    if k <= HEATMAP_TEXT_STATES:
        trace["text"] = np.vectorize(lambda v: probability_text(float(v)))(matrix)
        trace["texttemplate"] = "%{text}"
        trace["textfont"] = {"size": 12 if k <= 10 else 10}
    fig = go.Figure(go.Heatmap(**trace))
    fig.update_layout(
        height=min(HEATMAP_MAX_HEIGHT, max(320, 30 * k + 140)),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis_title="next state",
        yaxis_title="current state",
        yaxis={"autorange": "reversed"},
    )
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category")
    return fig


def interval_figure(
    rows: pd.DataFrame, metric: str, x_title: str, styles: dict[str, Style] | None = None
) -> go.Figure:
    """Means with their 95% intervals over ε_puffer, one line per label (rows of a simulation's metrics).

    ``styles``: each label's style (:func:`series_styles` of every label the page shows, so that a
    series keeps its look from chart to chart); by default the labels in ``rows``, in order.
    """
    parts = list(rows.groupby("label", sort=False))
    styles = styles or series_styles([str(label) for label, _ in parts])
    fig = go.Figure()
    for label, part in parts:
        part = part.sort_values("eps_puffer")
        style = styles[str(label)]
        fig.add_trace(
            go.Scatter(
                x=part["eps_puffer"],
                y=part["mean"],
                mode="lines+markers",
                name=str(label),
                line={"color": style.color, "dash": style.dash},
                marker={"color": style.color, "symbol": style.marker, "size": 8},
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
