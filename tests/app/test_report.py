"""The shared report builder: self-contained, escaped, real colours (not Streamlit's placeholders)."""

import pandas as pd
import plotly.graph_objects as go

from app_ui.core.report import Section, html_report


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
    assert "<td>∞</td>" in page and "eps_puffer" in page and "<td>0.5, 1</td>" in page  # words, not a JSON list
    assert "#000001" not in page  # Streamlit's template placeholders would draw every line black
    assert "<script src=" not in page and "<link " not in page  # nothing fetched: readable offline


def test_a_report_prints_no_instruction_for_the_app_s_controls() -> None:
    from app_ui.core.charts import Note

    note = Note("Showing b ≤ 22 of 55.", "Choose *All b* or *Log b* to see the rest.")
    assert str(note) == "Showing b ≤ 22 of 55. Choose *All b* or *Log b* to see the rest."  # the page
    page = html_report(
        "T",
        "b* = 7, **bold**",
        {"matrix": ((0.5, 0.5), (0.25, 0.75)), "on": True},
        [Section("S", "*All b*", notes=(note,))],
    )
    assert "Choose" not in page and "Showing b ≤ 22 of 55." in page  # the report: the fact alone
    assert "b* = 7, bold" in page and "<p>All b</p>" in page  # emphasis gone, b* kept
    assert "<td>0.5, 0.5; 0.25, 0.75</td>" in page and "<td>yes</td>" in page
