"""End to end on the Simulate page: the real Seattle weather from the picker, and a data-repair flow.

With ``SCREENSHOTS=1``, screenshots at 1400 px and 390 px go to ``screenshots/`` (ignored by git).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.pages import MAIN, PATIENCE, SIDEBAR, alerts, open_page, snap_widths, wait_idle, wide_tables
from tests.support.uploads import DIRTY

pytestmark = pytest.mark.e2e

SEATTLE = "Seattle weather (real, NOAA 2012–2015)"


def test_seattle_weather_in_one_click_explains_why_pufferfish_loses(
    page: Any, app_url: str, screenshot_dir: Path
) -> None:
    open_page(page, app_url, "simulate")
    page.locator(MAIN).get_by_text(SEATTLE).click()
    wait_idle(page)
    main = page.locator(MAIN)
    main.get_by_text("Public domain: NOAA data").wait_for(state="visible")
    main.get_by_text("month (48 users)").wait_for(state="visible")
    assert "one sequence per month (48 users)" in page.locator(SIDEBAR).inner_text()
    page.get_by_role("button", name="Run the simulation").click()
    page.get_by_role("heading", name="Results").wait_for(timeout=PATIENCE)
    wait_idle(page)
    assert not page.locator('[data-testid="stException"]').count()
    assert not alerts(page)
    note = main.locator(".st-key-sim_note")
    note.wait_for(state="visible")
    assert "falls back to group DP" in note.inner_text()
    assert "Best mechanism per ε_puffer on these data" in main.inner_text()
    assert not wide_tables(page)
    snap_widths(page, screenshot_dir, "simulate-seattle")

    # twelve monthly releases: the ledger chart, on a log scale at a click
    releases = page.get_by_role("spinbutton", name="Releases")
    releases.fill("12")
    releases.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name="Run the simulation").click()
    page.get_by_text("After 12 releases").wait_for(timeout=PATIENCE)
    wait_idle(page)
    chart = main.locator(".stPlotlyChart").last
    chart.scroll_into_view_if_needed()
    assert page.evaluate("() => Array.from(document.querySelectorAll('.js-plotly-plot')).pop().layout.yaxis.type") in (
        "linear",
        "-",
    )
    main.get_by_text("Log scale (y)").last.click()
    wait_idle(page)
    assert page.evaluate("() => Array.from(document.querySelectorAll('.js-plotly-plot')).pop().layout.yaxis.type") == (
        "log"
    )
    assert not wide_tables(page)
    snap_widths(page, screenshot_dir, "simulate-seattle-ledger")


def test_repairing_an_upload_and_a_failed_upload_in_the_sidebar(
    page: Any, app_url: str, screenshot_dir: Path
) -> None:
    open_page(page, app_url, "simulate")
    main = page.locator(MAIN)
    main.get_by_text("Upload a CSV or Parquet file").click()
    wait_idle(page)
    uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    uploader.set_input_files({"name": "dirty.csv", "mimeType": "text/csv", "buffer": DIRTY})
    page.locator('[data-testid="stAlertContentError"]').first.wait_for(timeout=PATIENCE)
    wait_idle(page)
    assert any("missing values" in m for m in alerts(page)), alerts(page)
    hint = main.get_by_text("To load the rest of the file")
    hint.wait_for(state="visible")
    assert "2 row(s) have an empty cell" in hint.inner_text()
    assert "could not be used" in page.locator(SIDEBAR).inner_text()
    main.locator("label").filter(has_text="Drop rows with an empty cell").click()
    wait_idle(page)
    assert any("repeat a (user, time) pair" in m for m in alerts(page)), alerts(page)
    main.locator("label").filter(has_text="Drop rows that repeat an earlier row exactly").click()
    page.get_by_text("2. What to release").wait_for(timeout=PATIENCE)
    wait_idle(page)
    assert not alerts(page)
    assert "Dropped 2 row(s) with an empty cell and 2 repeated row(s): 11 of 15 rows kept." in main.inner_text()
    # the group is suggested from the text column 'zone', and used once confirmed
    main.get_by_role("button", name="Use 'zone' as the group").click()
    wait_idle(page)
    groups = page.locator('[data-testid="stMetric"]').filter(has_text="Groups")
    assert "2" in groups.inner_text()
    assert "dirty.csv (3 users)" in page.locator(SIDEBAR).inner_text()
    main.get_by_text("Preview of dirty.csv").click()
    wait_idle(page)
    snap_widths(page, screenshot_dir, "simulate-repair")

    uploader.set_input_files({"name": "broken.csv", "mimeType": "text/csv", "buffer": b"user,time,state\nu1,x,A\n"})
    page.locator('[data-testid="stAlertContentError"]').first.wait_for(timeout=PATIENCE)
    wait_idle(page)
    sidebar = page.locator(SIDEBAR).inner_text()
    assert "none loaded; the file 'broken.csv' could not be used" in sidebar
    assert "dirty.csv" not in sidebar
