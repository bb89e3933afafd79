"""End to end: accuracy beside every ε, post-processing with the prior, the smoothing control, ε as attacker risk.

Each view is opened in headless Chromium, checked for errors and for anything that would scroll
sideways on a phone, and (with ``SCREENSHOTS=1``) photographed at 1400 px and 390 px.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.pages import EXCEPTION, MAIN, alerts, open_page, sideways_at, snap_widths, wait_idle

pytestmark = pytest.mark.e2e

SEATTLE = "Seattle weather (real, NOAA 2012–2015)"


FRAMED = ("stDataFrame", "stElementToolbar", "stTooltipHoverTarget", "stBaseButton-elementToolbar", "stExpanderDetails")


def _clean(page: Any) -> None:
    """No traceback, no error, and nothing that scrolls the page sideways on a phone (an st.dataframe scrolls
    inside its own frame; a collapsed expander's keeps its desktop width, so those are left out)."""
    assert not page.locator(EXCEPTION).count()
    assert not alerts(page)
    sideways = [item for item in sideways_at(page, 390) if not item.startswith(FRAMED)]
    assert not sideways, sideways


def test_calibrate_accuracy_first_and_attacker_risk(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "calibrate")
    main = page.locator(MAIN)
    main.get_by_role("tab", name="Accuracy → ε").click()
    wait_idle(page)
    main.get_by_text("needs the least privacy").first.wait_for(state="visible")
    _clean(page)
    snap_widths(page, screenshot_dir, "calibrate-accuracy")
    main.get_by_text("The top-k states").click()
    wait_idle(page)
    main.get_by_text("Pufferfish exponential needs the least privacy").first.wait_for(state="visible")
    _clean(page)
    snap_widths(page, screenshot_dir, "calibrate-accuracy-topk")
    main.get_by_role("tab", name="ε as attacker risk").click()
    wait_idle(page)
    main.get_by_text("What ε_puffer = 1 means").first.wait_for(state="visible")
    _clean(page)
    snap_widths(page, screenshot_dir, "calibrate-risk")


def test_simulate_smoothing_and_post_processing(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "simulate")
    main = page.locator(MAIN)
    main.get_by_text(SEATTLE).click()
    wait_idle(page)
    main.get_by_text("comes from transitions never observed in the data").first.wait_for(state="visible")
    main.get_by_text("Compare smoothing values").click()
    main.get_by_text("The Dirichlet posterior instead of one τ").first.wait_for(timeout=120_000)
    wait_idle(page)
    _clean(page)
    snap_widths(page, screenshot_dir, "simulate-smoothing")
    main.get_by_text("Also post-process the released counts with the prior").click()
    wait_idle(page)
    page.get_by_role("button", name="Run the simulation").click()
    page.get_by_role("heading", name="Results").wait_for(timeout=120_000)
    wait_idle(page)
    main.get_by_text("before and after post-processing with the prior").first.wait_for(state="visible")
    _clean(page)
    snap_widths(page, screenshot_dir, "simulate-postprocess")


def test_plan_streams_and_attack(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "plan")
    main = page.locator(MAIN)
    page.locator('[data-testid="stDataFrame"] .dvn-scroller').first.wait_for()
    _clean(page)
    snap_widths(page, screenshot_dir, "plan-accuracy")
    main.get_by_role("tab", name="Planner: split a total budget").click()
    wait_idle(page)
    main.get_by_text("A histogram released with it").first.wait_for(state="visible")

    open_page(page, app_url, "stream")
    main = page.locator(MAIN)
    main.get_by_text("Accuracy per step, and post-processing the releases with the prior").click()
    wait_idle(page)
    main.get_by_text("Accuracy per step").first.wait_for(state="visible")
    _clean(page)
    snap_widths(page, screenshot_dir, "stream-accuracy")

    open_page(page, app_url, "attack")
    main = page.locator(MAIN)
    page.get_by_role("button", name="Run the attack").click()
    page.get_by_text("the attack's test against the region").wait_for(timeout=120_000)
    wait_idle(page)
    _clean(page)
    snap_widths(page, screenshot_dir, "attack-region")


def test_the_fitted_preset_smoothing(page: Any, app_url: str, screenshot_dir: Path) -> None:
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
    _clean(page)
    snap_widths(page, screenshot_dir, "curves-fitted-smoothing")
