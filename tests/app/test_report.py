"""The shared report builder: self-contained, escaped, real colours (not Streamlit's placeholders)."""

import pandas as pd
import plotly.graph_objects as go

from app_ui.report import Section, html_report


def test_report_is_self_contained_escaped_and_coloured() -> None:
    figures = [go.Figure(go.Scatter(x=[1, 2], y=[3, 4])) for _ in range(2)]
    table = pd.DataFrame({"b": [1, 2], "a(b)": [float("inf"), 0.5]})
    page = html_report(
        "Calibration <test>",
        "ε_puffer = 1 & more",
        {"eps_puffer": 1.0, "grid": [0.5, 1.0]},
        [Section("Curve", "text", figures[0], table, ("a note",)), Section("Again", figure=figures[1])],
    )
    assert page.count("plotly.js v") == 1  # inlined once, however many charts
    assert "Calibration &lt;test&gt;" in page and "ε_puffer = 1 &amp; more" in page
    assert "<td>∞</td>" in page and "eps_puffer" in page and "[0.5, 1.0]" in page
    assert "#000001" not in page  # Streamlit's template placeholders would draw every line black
    assert "<script src=" not in page and "<link " not in page  # nothing fetched: readable offline
