"""End to end, in headless Chromium: links that never lose a prior (the share button's link and a value out of range
on Calibrate are checked with Calibrate's other views, in test_e2e_accuracy.py).

A link is opened in a fresh browser context (no cookies, nothing shared with the tab that made it): what the
second browser draws must be what the first drew, number for number.  With ``SCREENSHOTS=1`` the pages are
saved at 1400 px and 390 px to ``screenshots/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from tests.e2e.pages import MAIN, PATIENCE, SIDEBAR, alerts, expect, open_page, snap_widths, traces, wait_idle
from tests.support.uploads import many_states

pytestmark = pytest.mark.e2e


def _curve(page: Any) -> list[str]:
    """The prior's own curve as the chart shows it (its first series)."""
    page.wait_for_selector(".js-plotly-plot")
    return next(iter(traces(page).values()))


def test_a_thirty_state_fitted_prior_travels_in_its_link(browser: Any, app_url: str, screenshot_dir: Path) -> None:
    first = browser.new_context(viewport={"width": 1400, "height": 1000})
    first.set_default_timeout(PATIENCE)
    tab = first.new_page()
    open_page(tab, app_url, "curves?prior=matrix")
    tab.get_by_role("combobox", name="Preset").click()
    tab.get_by_role("option", name="Fitted from data").click()
    wait_idle(tab)
    picker = tab.locator(".st-key-fitted_picker")
    picker.get_by_text("Upload a CSV or Parquet file").click()
    wait_idle(tab)
    picker.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        {"name": "places.csv", "mimeType": "text/csv", "buffer": many_states(30)}
    )
    tab.get_by_role("button", name="Load into the editor").wait_for()
    wait_idle(tab)
    tab.get_by_role("button", name="Load into the editor").click()
    tab.get_by_text("Transition matrix (30 states").wait_for()
    wait_idle(tab)
    assert not alerts(tab)
    sent = _curve(tab)
    link = tab.url
    query = parse_qs(urlparse(link).query)
    assert query["prior"] == ["matrix"] and query["P"][0].startswith("z")  # compressed: exact, 30 × 30 floats
    assert query["data"] == ["upload:places.csv"] and len(link) < 8_000
    expect(tab.locator(SIDEBAR)).to_contain_text("30-state Markov chain fitted to places.csv")
    snap_widths(tab, screenshot_dir, "curves-thirty-states-fitted")
    first.close()

    fresh = browser.new_context(viewport={"width": 1400, "height": 1000})  # nothing shared with the first
    fresh.set_default_timeout(PATIENCE)
    again = fresh.new_page()
    again.goto(link)
    again.wait_for_selector('[data-testid="stApp"]')
    wait_idle(again)
    assert _curve(again) == sent  # the same prior, so the same curve, value for value
    assert not again.locator('[data-testid="stAlertContentWarning"]').count()  # nothing was left out
    expect(again.locator(SIDEBAR)).to_contain_text("30-state Markov chain fitted to places.csv")
    # the file itself is not in a link: the page says which one to load for the prior uncertainty
    expect(again.locator(MAIN)).to_contain_text("fitted to the file places.csv")
    snap_widths(again, screenshot_dir, "curves-thirty-states-from-link")
    fresh.close()
