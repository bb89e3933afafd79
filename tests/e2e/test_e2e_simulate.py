"""End to end on the Simulate page: the real Seattle weather from the picker, a data-repair flow and bad files.

With ``SCREENSHOTS=1``, screenshots at 1400 px and 390 px go to ``screenshots/`` (ignored by git).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.pages import (
    ERROR,
    EXCEPTION,
    MAIN,
    PATIENCE,
    SIDEBAR,
    alerts,
    clean,
    expect,
    open_page,
    snap_widths,
    wait_idle,
    wide_tables,
)
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
    expect(page.locator(SIDEBAR)).to_contain_text("one sequence per month (48 users)")
    # the smoothing control: a(1) of these data comes from transitions never seen, and τ's effect compared
    main.get_by_text("comes from transitions never observed in the data").first.wait_for(state="visible")
    main.get_by_text("Compare smoothing values").click()
    main.get_by_text("The Dirichlet posterior instead of one τ").first.wait_for(timeout=120_000)
    wait_idle(page)
    clean(page)
    snap_widths(page, screenshot_dir, "simulate-smoothing")
    page.get_by_role("button", name="Run the simulation").click()
    page.get_by_role("heading", name="Results").wait_for(timeout=PATIENCE)
    wait_idle(page)
    assert not page.locator('[data-testid="stException"]').count()
    assert not alerts(page)
    note = main.locator(".st-key-sim_note")
    expect(note).to_contain_text("falls back to group DP")
    expect(main).to_contain_text("Best mechanism per ε_puffer on these data")
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
    page.wait_for_function("() => Array.from(document.querySelectorAll('.js-plotly-plot')).pop().layout.yaxis.type"
                           " === 'log'")
    assert not wide_tables(page)
    snap_widths(page, screenshot_dir, "simulate-seattle-ledger")

    # one release again, post-processed with the prior
    releases.fill("1")
    releases.press("Enter")
    wait_idle(page)
    main.get_by_text("Also post-process the released counts with the prior").click()
    wait_idle(page)
    page.get_by_role("button", name="Run the simulation").click()
    main.get_by_text("before and after post-processing with the prior").first.wait_for(timeout=120_000)
    wait_idle(page)
    clean(page)
    snap_widths(page, screenshot_dir, "simulate-postprocess")


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
    page.locator(ERROR).filter(has_text="missing values").first.wait_for()
    expect(main.get_by_text("To load the rest of the file")).to_contain_text("2 row(s) have an empty cell")
    expect(page.locator(SIDEBAR)).to_contain_text("could not be used")
    main.locator("label").filter(has_text="Drop rows with an empty cell").click()
    wait_idle(page)
    page.locator(ERROR).filter(has_text="repeat a (user, time) pair").first.wait_for()
    main.locator("label").filter(has_text="Drop rows that repeat an earlier row exactly").click()
    page.get_by_text("2. What to release").wait_for(timeout=PATIENCE)
    wait_idle(page)
    assert not alerts(page)
    expect(main).to_contain_text("Dropped 2 row(s) with an empty cell and 2 repeated row(s): 11 of 15 rows kept.")
    # the group is suggested from the text column 'zone', and used once confirmed
    main.get_by_role("button", name="Use 'zone' as the group").click()
    wait_idle(page)
    expect(page.locator('[data-testid="stMetric"]').filter(has_text="Groups")).to_contain_text("2")
    expect(page.locator(SIDEBAR)).to_contain_text("dirty.csv (3 users)")
    main.get_by_text("Preview of dirty.csv").click()
    wait_idle(page)
    snap_widths(page, screenshot_dir, "simulate-repair")

    uploader.set_input_files({"name": "broken.csv", "mimeType": "text/csv", "buffer": b"user,time,state\nu1,x,A\n"})
    page.locator(ERROR).first.wait_for(timeout=PATIENCE)
    wait_idle(page)
    sidebar = page.locator(SIDEBAR)
    expect(sidebar).to_contain_text("none loaded; the file 'broken.csv' could not be used")
    expect(sidebar).not_to_contain_text("dirty.csv")

    # a time that cannot be read: the message says so, no traceback
    uploader.set_input_files(
        {"name": "broken.csv", "mimeType": "text/csv", "buffer": b"user,time,state\nu1,2024-01-01,A\nu1,not a time,B\n"}
    )
    page.locator(ERROR).filter(has_text="cannot be read as times").first.wait_for(timeout=PATIENCE)
    wait_idle(page)
    assert not page.locator(EXCEPTION).count()
    snap_widths(page, screenshot_dir, "simulate-bad-csv")
