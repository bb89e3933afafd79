"""End to end, in headless Chromium: the Plan page, its ledger through a link, the Classroom tabs.

What only a browser shows: that a link copied from the address bar rebuilds the same ledger in a fresh browser (a
new session, nothing shared), and that the tables fit the page.  With ``SCREENSHOTS=1`` every test saves
screenshots at 1400 px and at 390 px (a phone) to ``screenshots/``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.pages import (
    EXCEPTION,
    MAIN,
    alerts,
    cells,
    clean,
    download,
    expect,
    grid_overflow,
    open_page,
    sideways_at,
    snap_widths,
    until,
    wait_idle,
)

pytestmark = pytest.mark.e2e


def download_bytes(page: Any, label: str) -> bytes:
    return download(page, label).read_bytes()


def _summary(page: Any) -> str:
    return next(t for t in page.locator('[data-testid="stMarkdownContainer"]').all_inner_texts() if "After all" in t)


def test_the_plan_page_its_accuracy_and_its_planner(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "plan")
    page.wait_for_selector(".js-plotly-plot")
    assert not page.locator(EXCEPTION).count() and not alerts(page)
    snap_widths(page, screenshot_dir, "plan")
    page.locator('[data-testid="stDataFrame"] .dvn-scroller').first.wait_for()
    clean(page)
    snap_widths(page, screenshot_dir, "plan-accuracy")
    page.locator(MAIN).get_by_role("tab", name="Planner: split a total budget").click()
    wait_idle(page)
    page.locator(MAIN).get_by_text("A histogram released with it").first.wait_for(state="visible")


NAME = "Q1+Q2 & 50%, #1; ε=½"  # every character a link or its escapes could break


def _type_into(page: Any, row: int, text: str, right: int = 0) -> None:
    """Type ``text`` into the ledger editor's release cell of ``row`` (from 1), ``right`` columns further right, as a
    user would."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    def editor_opens() -> bool:
        """Click the cell and press Enter: whether its editor opened (a click on a grid still drawing is lost,
        as a user's would be, and the user clicks again)."""
        page.keyboard.press("Escape")
        box = page.locator('[data-testid="stDataFrame"]').first.bounding_box()  # where the grid is now
        page.mouse.click(box["x"] + 80, box["y"] + 35 * row + 17)
        time.sleep(0.3)
        for _ in range(right):
            page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
        try:
            page.wait_for_selector(".gdg-input", state="attached", timeout=10_000)
        except PlaywrightTimeout:
            return False
        return True

    until(editor_opens, bool, "the cell's editor opens")
    page.keyboard.press("Control+a")
    page.keyboard.type(text, delay=40)
    page.keyboard.press("Enter")
    wait_idle(page)


def _edit_ledger(page: Any) -> None:
    """Rename Jan, set Feb's ε_puffer to 0.25 in the ledger editor and k to 4."""
    _type_into(page, 1, NAME)  # the release cell of row 1
    _type_into(page, 2, "0.25", right=1)  # ε_puffer of row 2
    k = page.get_by_label("k for the top-k rankings")
    k.fill("4")
    k.press("Enter")
    wait_idle(page)
    until(lambda: cells(page, 1), lambda shown: any("top 4" in cell for cell in shown), "the results for k = 4")


def test_the_ledger_link_rebuilds_the_ledger_in_a_fresh_browser(
    browser: Any, app_url: str, screenshot_dir: Path
) -> None:
    first = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = first.new_page()
    open_page(tab, app_url, "plan")
    _edit_ledger(tab)
    link = tab.url
    assert "ledger=" in link and "topk=4" in link
    editor, table, summary = cells(tab, 0), cells(tab, 1), _summary(tab)
    assert editor[0] == NAME and editor[3:5] == ["Feb", "0.25"]
    assert grid_overflow(tab)[1] <= 1  # the results table fits the page: no horizontal scrolling
    csv = download_bytes(tab, "Download the ledger (CSV)")
    first.close()

    fresh = browser.new_context(viewport={"width": 1400, "height": 1000})  # nothing shared with the first
    again = fresh.new_page()
    again.goto(link)
    again.wait_for_selector('[data-testid="stApp"]')
    wait_idle(again)
    assert not again.locator('[data-testid="stAlertContentWarning"]').count()
    assert cells(again, 0) == editor and cells(again, 1) == table and _summary(again) == summary
    expect(again.get_by_label("k for the top-k rankings")).to_have_value("4")
    assert download_bytes(again, "Download the ledger (CSV)") == csv
    snap_widths(again, screenshot_dir, "plan-ledger-from-link")
    again.get_by_role("tab", name="Planner: split a total budget").click()
    wait_idle(again)
    snap_widths(again, screenshot_dir, "plan-planner")
    fresh.close()


def test_classroom_tabs_and_their_tables_fit(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "classroom")
    page.wait_for_selector(".js-plotly-plot")
    assert not page.locator(EXCEPTION).count() and not alerts(page)
    snap_widths(page, screenshot_dir, "classroom")
    page.get_by_role("button", name="Run 5 more").click()
    wait_idle(page)
    warning = page.locator('[data-testid="stAlertContentWarning"]')
    expect(warning).to_contain_text("Since run 2 (of the 5 so far) the attacker is certain of the secret")
    assert "'" not in cells(page, 0)[1]  # the outputs read (A1, B2), not ('A1', 'B2')
    assert all(overflow <= 1 for overflow in grid_overflow(page))
    snap_widths(page, screenshot_dir, "classroom-collapse")
    page.get_by_role("tab", name="Laplace on a two-node chain").click()
    wait_idle(page)
    page.get_by_text("2 releases leak 0.0123 nats more than 2 × one release", exact=False).wait_for(state="visible")
    assert all(overflow <= 1 for overflow in grid_overflow(page))
    assert not sideways_at(page, 390)  # the table wraps on a phone
    snap_widths(page, screenshot_dir, "classroom-laplace")
    page.get_by_role("tab", name="A tiny chain, audited exactly").click()
    wait_idle(page)
    page.get_by_text("Correlation strength s").first.wait_for(state="visible")  # the correlation preset
    assert all(overflow <= 1 for overflow in grid_overflow(page))
    assert not sideways_at(page, 390)
    assert not page.locator(EXCEPTION).count() and not alerts(page)
    snap_widths(page, screenshot_dir, "classroom-tiny-chain")  # with the correlation preset
