"""End to end: `streamlit run app.py` in real headless Chromium (see conftest.py).

With ``SCREENSHOTS=1`` every test saves PNG screenshots of what it saw to ``screenshots/`` (ignored by
git); the Influence curves and Calibrate pages are saved at 1400 px and at 390 px width.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from puffer_core import MarkovChainPrior, influence_curve
from tests.e2e.pages import (
    ERROR,
    EXCEPTION,
    MAIN,
    PATIENCE,
    SIDEBAR,
    alerts,
    clean,
    download,
    expect,
    horizontal_overflow,
    open_page,
    snap,
    snap_widths,
    until,
    wait_idle,
)
from tests.support.servers import ROOT

DEMO_CSV = ROOT / "assets" / "checkins.csv"
PLOT_VALUES = "() => Array.from(document.querySelector('.js-plotly-plot').data[0].customdata)"

pytestmark = pytest.mark.e2e


def test_home_and_the_about_page(page: Any, app_url: str, screenshot_dir: Path) -> None:
    """Home links every page and the About page; the About page's links stay on the page."""
    open_page(page, app_url)
    page.get_by_role("heading", name="Pufferfish Lab").wait_for(state="visible")
    main = page.locator(MAIN)
    for title in ("Influence curves", "Calibrate", "Plan & compose", "Simulate", "Classroom"):
        main.get_by_role("link", name=title).wait_for(state="visible")
    assert not page.locator(EXCEPTION).count()
    expect(main).not_to_contain_text("MATH" + ".md")
    snap_widths(page, screenshot_dir, "home")
    main.get_by_role("link", name="About the math", exact=True).first.click()
    page.get_by_role("heading", name="About the math").wait_for(state="visible")
    wait_idle(page)
    for heading in ("About the math", "Glossary", "The mathematics", "References"):
        main.get_by_role("heading", name=heading, exact=True).first.wait_for(state="visible")
    hrefs = main.locator("a[href]").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert hrefs
    for href in hrefs:  # nothing points at a file the app cannot serve
        assert ".md" not in href.split("#")[0], href
    main.get_by_role("link", name="References", exact=True).first.click()
    references = main.get_by_role("heading", name="References", exact=True).first
    until(references.bounding_box, lambda box: box is not None and 0 <= box["y"] < 1000, "scrolled to References")
    expect(page).to_have_url(re.compile("/about"))  # still the About page
    assert len(page.context.pages) == 1  # no new tab
    main.get_by_text("§4. Composition").click()
    main.get_by_text("Theorem 6.2", exact=False).first.wait_for(state="visible")
    assert not page.locator(EXCEPTION).count()
    snap_widths(page, screenshot_dir, "about")


def test_moving_a_slider_changes_the_plotted_values(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "curves")
    page.wait_for_selector(".js-plotly-plot")
    before = page.evaluate(PLOT_VALUES)
    slider = page.get_by_role("slider", name="p = Pr(stay in state 0)")
    slider.focus()
    for _ in range(10):
        page.keyboard.press("ArrowLeft")
    expected = influence_curve(MarkovChainPrior([[0.8, 0.2], [0.2, 0.8]], length=100))
    page.wait_for_function(
        "(want) => { const gd = document.querySelector('.js-plotly-plot');"
        " return gd && gd.data[0].customdata[0] === want; }",
        arg=f"{expected.a[0]:.4g}",
    )
    wait_idle(page)
    after = page.evaluate(PLOT_VALUES)
    assert after != before
    assert after == [f"{a:.4g}" if a else "0" for a in expected.a]
    expect(slider).to_have_value("0.8")
    expect(page).to_have_url(re.compile("p=0.8"))
    # the sidebar is filled after the page ran: it names the prior just drawn, not the previous one
    expect(page.locator(SIDEBAR)).to_contain_text("p = 0.8, q = 0.8")
    snap_widths(page, screenshot_dir, "curves")


def test_curves_page_other_priors(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "curves?prior=gaussian&n=30&overlay=0.5,1,2,3,5&log=1")
    page.wait_for_selector(".js-plotly-plot")
    traces = page.evaluate("() => document.querySelector('.js-plotly-plot').data.map(t => t.name)")
    assert traces == ["ℓ = 1", "ℓ = 0.5", "ℓ = 2", "ℓ = 3", "ℓ = 5"]
    snap_widths(page, screenshot_dir, "curves-gaussian")
    open_page(page, app_url, "curves?prior=matrix&P=0.5,0.6;0.2,0.8")
    expect(page.locator(ERROR).filter(has_text="Row '0' sums to 1.1").first).to_be_visible()
    assert not page.locator(EXCEPTION).count()
    snap_widths(page, screenshot_dir, "curves-bad-matrix")


def _choose_upload(page: Any, app_url: str) -> None:
    open_page(page, app_url, "simulate")
    page.get_by_text("Upload a CSV or Parquet file").click()
    wait_idle(page)


def test_uploading_the_demo_csv_yields_results(page: Any, app_url: str, screenshot_dir: Path) -> None:
    _choose_upload(page, app_url)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(DEMO_CSV))
    page.get_by_text("2. What to release").wait_for(timeout=PATIENCE)
    wait_idle(page)
    expect(page.locator('[data-testid="stMetric"]').filter(has_text="Users")).to_contain_text("2,000")
    page.get_by_role("button", name="Run the simulation").click()
    page.get_by_role("heading", name="Results").wait_for(timeout=PATIENCE)
    wait_idle(page)
    assert not page.locator(EXCEPTION).count()
    assert not alerts(page)
    until(page.locator(".js-plotly-plot").count, lambda n: n >= 5, "charts drawn")  # heatmap, four metrics, ledger
    page.get_by_role("button", name="Download the results (CSV)").wait_for(state="visible")
    report = json.loads(download(page, "Download the report (JSON)").read_text())
    assert report["data_source"] == "checkins.csv"
    assert report["simulation"]["trials"] == 200
    results = download(page, "Download the results (CSV)").read_bytes()
    assert results.startswith(b"\xef\xbb\xbf")  # UTF-8 with its mark: Excel reads ε as ε
    assert results.decode("utf-8-sig").startswith("mechanism,label,eps_puffer,release,metric,mean,ci_low,ci_high")
    snap_widths(page, screenshot_dir, "simulate-upload-results")


PLOT_LAYOUT = "(i) => { const gd = document.querySelectorAll('.js-plotly-plot')[i]; return gd.layout; }"


def test_log_axes_on_a_long_chain(page: Any, app_url: str, screenshot_dir: Path) -> None:
    """T = 1,000: on a linear b axis the curve would sit in the left 5%; log b and log a(b) spread it out."""
    open_page(page, app_url, "curves?p=0.9&q=0.8&T=1000&bx=log&log=1")
    page.wait_for_selector(".js-plotly-plot")
    layout = page.evaluate(PLOT_LAYOUT, 0)
    assert layout["xaxis"]["type"] == "log" and layout["yaxis"]["type"] == "log"
    ticks = layout["xaxis"]["tickvals"]
    assert ticks[:4] == [1, 2, 5, 10] and all(float(t).is_integer() for t in ticks)  # whole b only
    expect(page.get_by_role("radio", name="Log b")).to_be_checked()
    snap_widths(page, screenshot_dir, "curves-log-axes")
    page.get_by_text("Zoom to the signal").click()
    wait_idle(page)
    layout = until(lambda: page.evaluate(PLOT_LAYOUT, 0), lambda lay: lay["xaxis"]["type"] == "linear", "linear b")
    assert layout["xaxis"]["range"][1] < 200  # zoomed to where a(b) is above 1% of a(1)
    until(lambda: page.url, lambda url: "bx=zoom" in url or "bx=" not in url, "the link's b axis")
    page.locator('[data-testid="stCaptionContainer"]').filter(has_text="Showing b ≤").first.wait_for(state="visible")


def _metric(page: Any, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_calibrate_report_and_script_downloads(page: Any, app_url: str, screenshot_dir: Path, tmp_path: Path) -> None:
    open_page(page, app_url, "calibrate?p=0.85&q=0.75&T=60&eps=2&epsdp=0.2")
    page.wait_for_selector(".js-plotly-plot")
    shown = {label: _metric(page, label) for label in ("Optimal window b*", "Per-entry ε_DP", "Guaranteed ε_puffer")}
    report = download(page, "Download report (HTML)").read_text(encoding="utf-8")
    assert report.count("plotly.js v") == 1 and "<script src=" not in report  # opens offline
    assert "binary chain p = 0.85, q = 0.75, T = 60" in report
    assert f"per-entry ε_DP = {shown['Per-entry ε_DP']} at b* = {shown['Optimal window b*']}" in report
    assert f"ε_puffer = {shown['Guaranteed ε_puffer']} Pufferfish private" in report
    script = download(page, "Download script (Python)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # puffer_core as if installed
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    printed = dict(line.split(" = ", 1) for line in run.stdout.splitlines())
    assert {label: printed[label] for label in shown} == shown  # exactly what the page shows
    report_page = page.context.new_page()  # the report itself renders its charts without a server
    try:
        report_page.goto(f"file://{_saved(report, tmp_path)}")
        report_page.wait_for_selector(".js-plotly-plot")
        expect(report_page.locator(".js-plotly-plot")).to_have_count(3)  # both curves' charts, accuracy-first bars
        snap(report_page, screenshot_dir, "calibrate-report-html")
    finally:
        report_page.close()
    assert not horizontal_overflow(page)
    snap_widths(page, screenshot_dir, "calibrate-exports")


def _saved(text: str, folder: Path) -> Path:
    path = folder / "calibrate-report.html"
    path.write_text(text, encoding="utf-8")
    return path


EDITOR_SCROLLS = (
    "() => Array.from(document.querySelectorAll('[data-testid=\"stDataFrame\"] .dvn-scroller'))"
    ".map(el => el.scrollWidth - el.clientWidth)"
)


def test_a_twenty_state_matrix_shows_every_column(page: Any, app_url: str, screenshot_dir: Path) -> None:
    stay, move = 0.81, 0.01
    rows = ";".join(",".join(str(stay if i == j else move) for j in range(20)) for i in range(20))
    open_page(page, app_url, f"curves?prior=matrix&T=30&P={rows}")
    page.wait_for_selector(".js-plotly-plot")
    assert not alerts(page)
    page.locator('[data-testid="stDataFrame"] .dvn-scroller').first.wait_for()
    assert max(page.evaluate(EDITOR_SCROLLS)) <= 1  # every grid (both parts of the matrix too) fits: no sideways scroll
    assert not horizontal_overflow(page)
    snap_widths(page, screenshot_dir, "curves-twenty-states")


def test_the_fitted_preset_its_smoothing_and_its_prior_uncertainty(
    page: Any, app_url: str, screenshot_dir: Path
) -> None:
    open_page(page, app_url, "curves?prior=matrix")
    main = page.locator(MAIN)
    page.get_by_role("combobox", name="Preset").click()
    page.get_by_role("option", name="Fitted from data").click()
    wait_idle(page)
    page.get_by_text("Smoothing of the fit").first.wait_for(state="visible")
    page.get_by_text("Compare smoothing values").first.click()
    page.get_by_text("The Dirichlet posterior instead of one τ").first.wait_for(timeout=120_000)
    wait_idle(page)
    main.get_by_text("τ changes nothing here").first.wait_for(state="visible")  # the check-ins saw every transition
    clean(page)
    snap_widths(page, screenshot_dir, "curves-fitted-smoothing")

    page.get_by_role("button", name="Load into the editor").click()
    wait_idle(page)
    page.get_by_text("Show the spread of the fit to").click()
    page.get_by_text("The rows that drive the spread").wait_for(timeout=PATIENCE)
    wait_idle(page)
    names = until(
        lambda: page.evaluate("() => document.querySelector('.js-plotly-plot').data.map(t => t.name)"),
        lambda shown: "robust Θ (fit + 20 draws)" in shown,
        "the robust Θ's curve",
    )
    assert "5%–95% of the 20 draws' curves" in names
    assert not alerts(page)
    assert not horizontal_overflow(page)
    snap_widths(page, screenshot_dir, "curves-uncertainty")
    page.get_by_role("link", name="Calibrate").first.click()
    page.wait_for_selector(".js-plotly-plot")
    wait_idle(page)
    page.get_by_text("Robust Θ against the fitted chain alone").wait_for(state="visible")
    snap_widths(page, screenshot_dir, "calibrate-uncertainty")


def test_a_negative_number_typed_in_the_matrix_is_kept_and_reported(page: Any, app_url: str) -> None:
    """Typed in the real grid: −0.3 used to be stored as 0.3 (the column clipped to [0, 1]); now it is kept."""
    open_page(page, app_url, "curves?prior=matrix")
    grid = page.locator('[data-testid="stDataFrame"]').first
    grid.locator("canvas").first.wait_for()
    time.sleep(0.5)  # the grid takes clicks once it has drawn
    error = page.locator('[data-testid="stAlertContentError"]').first
    for attempt in range(3):  # a busy machine can swallow a click before the grid takes input: try again
        wait_idle(page)
        box = grid.bounding_box()  # measured again each time: the page may have moved since
        x, y = box["x"] + box["width"] - 12, box["y"] + 35 + 17  # row '0', last column '2'
        if attempt == 1:  # the other way a user opens a cell
            page.mouse.dblclick(x, y)
        else:  # select the cell, then open its editor with Enter
            page.mouse.click(x, y)
            page.keyboard.press("Enter")
        try:
            page.wait_for_selector(".gdg-input", state="attached", timeout=20_000)  # the cell's editor is open
        except Exception:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
            wait_idle(page)
            continue
        page.keyboard.press("Control+A")
        page.keyboard.type("-0.3", delay=80)
        page.keyboard.press("Enter")
        error.wait_for(timeout=PATIENCE)
        break
    wait_idle(page)
    expected = "Row '0' has negative entries in column '2'; probabilities cannot be negative."
    until(lambda: alerts(page), lambda said: expected in said, "the message under the grid")
    until(lambda: page.url.replace("%2C", ",").replace("%3B", ";"), lambda url: "P=0.8,0.1,-0.3" in url, "the link")
