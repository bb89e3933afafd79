"""The Influence curves page's chart and table: the prior's a(b) curve and everything drawn beside it.

Beside the prior's curve the chart draws what the settings ask for — the members of a set Θ, the
binary chain's closed form ([C] Example 3), other Gaussian length scales ([C] Figure 3), pinned
curves, and for a chain fitted to data the robust curve of Θ with the band of its draws
(docs/math.md §12).  :func:`curve_view` builds the chart, the table (one row per b, one column per
curve) and the CSV once per input and shares them between sessions (``st.cache_resource``: nobody
changes what they get), so that a rerun whose numbers are cached only sends them again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_ui.core.charts import (
    PALETTE,
    ZOOM_FLOOR,
    ZOOM_NOTE,
    Band,
    Trace,
    curve_trace,
    line_figure,
    traces_frame,
    zoom_limit,
)
from app_ui.core.tables import Shown, shown
from app_ui.curves.settings import Pin
from app_ui.prior.current import Uncertainty, kind_curve, overlay_curve
from puffer_core.priors.kinds import PRIOR_KINDS, Params

BAND = (0.05, 0.95)  # the band drawn around the draws' curves
# how an overlay curve is drawn, by its style (puffer_core.priors.kinds.OverlayCurve): dash and width
OVERLAY_STYLES: dict[str, tuple[str | None, float]] = {"member": ("dot", 1.5), "reference": ("dash", 2.0)}
Pinned = tuple[Pin, ...]  # (label, b, a) of each pinned curve


@dataclass(frozen=True, eq=False)
class CurveView:
    """What the page draws for one input: the chart and its notes, the table, the CSV and the table's columns."""

    figure: go.Figure
    notes: tuple[str, ...]
    table: Shown
    long: pd.DataFrame  # one row per plotted point, for the CSV download
    columns: dict[str, Any]  # the table's column settings: narrow, the full curve name as each header's tooltip


def traces(
    kind: str, params: Params, options: dict[str, Any], pinned: Pinned, spread: Uncertainty | None
) -> list[Trace]:
    """The prior's curve, the curves the settings add beside it, and the pinned ones."""
    record = PRIOR_KINDS[kind]
    values = dict(params)
    label = "fitted chain" if spread is not None else record.short_label(values)
    out = [curve_trace(kind_curve(kind, params), label)]
    if spread is not None:
        out.append(curve_trace(spread.spread.robust, spread.label, width=3))
    for overlay in record.overlay_curves(values, options):
        dash, width = OVERLAY_STYLES.get(overlay.style, (None, 1.8))
        out.append(curve_trace(overlay_curve(overlay.source, overlay.params), overlay.label, dash=dash, width=width))
    for name, b, a in pinned:
        out.append(Trace(f"pinned: {name}", np.array(b, float), np.array(a, float), "dot", 1.5))
    return out


def band(spread: Uncertainty) -> Band:
    """Where the middle of the draws' own curves lie."""
    low, high = spread.spread.band(*BAND)
    share = f"{BAND[0]:.0%}–{BAND[1]:.0%}"
    b = spread.spread.robust.b.astype(float)
    return Band(f"{share} of the {spread.draws} draws' curves", b, low, high, color=PALETTE[5])


def curve_table(lines: list[Trace], drawn: Band | None) -> pd.DataFrame:
    """One row per b, one column per curve (and the band's edges)."""
    b = np.unique(np.concatenate([np.asarray(t.x, dtype=float) for t in lines]))
    columns: dict[str, np.ndarray] = {"b": b}
    for trace in lines:  # a curve's a(b) where it has a value at b, empty elsewhere (a shorter curve)
        if trace.label not in columns:
            columns[trace.label] = pd.Series(np.asarray(trace.y, dtype=float), index=trace.x).reindex(b).to_numpy()
    if drawn is not None:
        for name, edge in ((f"draws {BAND[0]:.0%}", drawn.low), (f"draws {BAND[1]:.0%}", drawn.high)):
            columns[name] = pd.Series(np.asarray(edge, dtype=float), index=drawn.x).reindex(b).to_numpy()
    wide = pd.DataFrame(columns)
    wide["b"] = wide["b"].astype(int)
    return wide


def table_columns(frame: pd.DataFrame) -> dict[str, Any]:
    """Narrow columns with the full curve name as the header's tooltip, so the table fits its column."""
    width = "small" if frame.shape[1] > 4 else None
    return {
        str(c): st.column_config.TextColumn(str(c), help=str(c), alignment="right", width=width)
        for c in frame.columns
        if c != "b"
    }


@st.cache_resource(show_spinner=False, max_entries=128)
def curve_view(
    kind: str,
    params: Params,
    options: tuple[tuple[str, Any], ...],
    pinned: Pinned,
    spread_key: tuple[Any, ...] | None,
    log_y: bool,
    b_axis: str,
    _spread: Uncertainty | None = None,
) -> CurveView:
    """The chart, the table and the CSV of the curves for these settings, built once (shared: do not change them).

    ``spread_key`` identifies ``_spread`` (the prior uncertainty, or None): the view is cached on it.
    """
    lines = traces(kind, params, dict(options), pinned, _spread)
    drawn = band(_spread) if _spread is not None else None
    zoom = zoom_limit(lines) if b_axis == "zoom" else None
    fig, notes = line_figure(
        lines,
        x_title="b — entries in the high-influence window H",
        y_title="a(b) — leakage through the rest (nats)",
        log_y=log_y,
        log_x=b_axis == "log",
        integer_x=True,
        x_max=zoom,
        bands=() if drawn is None else (drawn,),
    )
    if zoom is not None:
        length = kind_curve(kind, params).length
        notes.append(f"Showing b ≤ {zoom:,.0f} of {int(length):,}: {ZOOM_NOTE.format(floor=ZOOM_FLOOR)}.")
    wide = curve_table(lines, drawn)
    return CurveView(fig, tuple(notes), shown(wide), traces_frame(lines, "b", "a(b)"), table_columns(wide))
