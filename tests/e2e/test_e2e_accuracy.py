"""End to end: Calibrate's accuracy first and ε as attacker risk, with its out-of-range and share checks (Simulate's
smoothing control and post-processing with the prior are checked with its Seattle data in test_e2e_simulate.py).

Each view is opened in headless Chromium, checked for errors and for anything that would scroll
sideways on a phone, and (with ``SCREENSHOTS=1``) photographed at 1400 px and 390 px.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.pages import ERROR, EXCEPTION, MAIN, alerts, clean, expect, open_page, snap_widths, wait_idle

pytestmark = pytest.mark.e2e

def test_calibrate_out_of_range_share_accuracy_first_and_attacker_risk(
    page: Any, app_url: str, screenshot_dir: Path
) -> None:
    open_page(page, app_url, "calibrate")
    page.wait_for_selector(".js-plotly-plot")
    assert not page.locator(EXCEPTION).count() and not alerts(page)
    snap_widths(page, screenshot_dir, "calibrate")

    # a value out of range is said on the page, and no stale result stays on screen
    box = page.get_by_label("Target ε_puffer (the Pufferfish guarantee you want)")
    box.fill("-1")
    box.press("Enter")
    error = page.locator(ERROR)
    error.get_by_text("Target ε_puffer must be between 0.01 and 1,000; −1 is not.").wait_for()  # under the box
    wait_idle(page)
    main = page.locator(MAIN)
    expect(main).to_contain_text("The results are hidden while a value is out of range")
    expect(page.locator(".js-plotly-plot")).to_have_count(0)  # no chart of the previous value
    expect(page.locator('[data-testid="stMetric"]')).to_have_count(0)  # no number of the previous value
    expect(box).to_have_value("-1.00")  # the box shows what was typed, and nothing else is computed
    snap_widths(page, screenshot_dir, "calibrate-out-of-range")
    box.fill("2")
    box.press("Enter")
    page.wait_for_selector(".js-plotly-plot")
    wait_idle(page)
    expect(page).to_have_url(re.compile("eps=2"))
    assert not alerts(page)

    # the share button gives the link of these settings
    page.get_by_role("button", name="Share these settings").click()
    code = page.locator('[data-testid="stPopoverBody"] code').first
    code.wait_for()
    shared = code.inner_text().replace("\n", "")
    assert shared.startswith(app_url + "/calibrate?") and "p=0.9" in shared and "eps=2" in shared
    page.keyboard.press("Escape")

    main.get_by_role("tab", name="Accuracy → ε").click()
    wait_idle(page)
    main.get_by_text("needs the least privacy").first.wait_for(state="visible")
    clean(page)
    snap_widths(page, screenshot_dir, "calibrate-accuracy")
    main.get_by_text("The top-k states").click()
    wait_idle(page)
    main.get_by_text("Pufferfish exponential needs the least privacy").first.wait_for(state="visible")
    clean(page)
    snap_widths(page, screenshot_dir, "calibrate-accuracy-topk")
    main.get_by_role("tab", name="ε as attacker risk").click()
    wait_idle(page)
    main.get_by_text("What ε_puffer = 2 means").first.wait_for(state="visible")  # the target typed above
    clean(page)
    snap_widths(page, screenshot_dir, "calibrate-risk")
