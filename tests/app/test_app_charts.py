"""The charts under AppTest and by themselves: the b axis (zoom, log, all), a colour, dash and marker per
series, ∞ drawn as triangles, and the chart helpers (app_ui/core/charts.py)."""

from __future__ import annotations

import base64
import json
import math

import numpy as np

from app_ui.core.charts import PALETTE, Band, Trace, ledger_figure, line_figure, signal_end, zoom_limit
from tests.app.conftest import open_page, problems

CURVES = "app_pages/curves.py"


def chart_layout(at, index: int = 0) -> dict:
    return json.loads(at.get("plotly_chart")[index].proto.spec)["layout"]


def chart_data(at, index: int = 0) -> list[dict]:
    return json.loads(at.get("plotly_chart")[index].proto.spec)["data"]


def plotly_array(value: object) -> np.ndarray:
    """A plotly array from a chart's JSON (plain, or base64 ``bdata`` with its dtype)."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return np.asarray(value)


def test_b_axis_zoom_log_and_all() -> None:
    at = open_page(CURVES, {"T": "1000"})
    assert not problems(at)
    layout = chart_layout(at)
    assert layout["xaxis"]["range"][1] < 100 and layout["xaxis"]["tickformat"] == ",d"  # zoomed; whole b ticks
    assert float(layout["xaxis"]["dtick"]).is_integer()
    assert any("Showing b ≤" in c.value and "of 1,000" in c.value for c in at.caption)
    at.radio(key="w_b_axis").set_value("log").run()
    at.toggle(key="w_log").set_value(True).run()
    layout = chart_layout(at)
    assert layout["xaxis"]["type"] == "log" and layout["yaxis"]["type"] == "log"
    assert layout["xaxis"]["tickvals"][:4] == [1, 2, 5, 10]
    assert at.query_params["bx"] == "log" and at.query_params["log"] == "1"
    at.radio(key="w_b_axis").set_value("all").run()
    layout = chart_layout(at)
    assert layout["xaxis"].get("type", "linear") == "linear" and layout["xaxis"]["range"][1] > 1000
    assert not any("Showing b ≤" in c.value for c in at.caption)


def test_every_series_has_its_own_colour_dash_and_marker() -> None:
    at = open_page(CURVES, {"prior": "gaussian", "n": "12", "overlay": "0.5,2,3"})
    assert not problems(at)
    lines = [t for t in chart_data(at) if t.get("mode") == "lines+markers"]
    assert len(lines) == 4
    styles = [(t["line"]["color"], t["line"]["dash"], t["marker"]["symbol"]) for t in lines]
    for part in range(3):
        assert len({s[part] for s in styles}) == 4, styles
    assert {s[0] for s in styles} <= set(PALETTE)


def test_infinite_values_keep_their_triangles_whatever_markers_show() -> None:
    at = open_page(CURVES, {"p": "0", "q": "0", "T": "300", "bx": "all"})
    assert not problems(at)
    triangles = [t for t in chart_data(at) if t.get("marker", {}).get("symbol") == "triangle-up"]
    assert len(triangles) == 1 and plotly_array(triangles[0]["x"]).tolist() == list(range(1, 300))  # every b < T is ∞


def test_chart_helpers_zoom_ticks_and_ledger_log_scale() -> None:
    b = np.arange(1, 1001, dtype=float)
    fading = Trace("fading", b, 5 * 0.5 ** (b - 1))
    assert signal_end([fading]) == 9  # 5·0.5^8 ≈ 0.0195 > 0.01 nats ≥ 5·0.5^9 (and both below 1% of 5)
    assert zoom_limit([fading]) == math.ceil(9 * 1.15 + 1)
    huge = Trace("huge", b, 1e6 * 0.5 ** (b - 1))  # 1% of a(1) is 10⁴ nats: still far from faded
    assert signal_end([huge]) == max(x for x in range(1, 1001) if 1e6 * 0.5 ** (x - 1) > 0.01) == 27
    assert zoom_limit([Trace("flat", b, np.ones_like(b))]) is None  # the signal fills the axis: no zoom
    assert zoom_limit([fading], also=[40]) == math.ceil(40 * 1.15 + 1)  # an optimum stays in view
    single, _ = line_figure([Trace("one", np.array([100.0]), np.array([0.01]))], "b", "ε", integer_x=True)
    assert single.layout.xaxis.dtick == 1 and list(single.layout.xaxis.range) == [99.5, 100.5]
    releases = np.arange(1, 366, dtype=float)
    fig, _ = ledger_figure([Trace("group DP", releases, 400 * releases), Trace("Thm", releases, releases)], log_y=True)
    assert fig.layout.yaxis.type == "log" and fig.layout.xaxis.dtick == 50  # not 365 ticks
    band, _ = line_figure([fading], "b", "a", bands=[Band("band", b, 0 * b, b)])
    assert band.data[1].fill == "tonexty" and band.data[2].name == "fading"  # the band is drawn under the lines

