"""End to end, in headless Chromium: the guided paths, as a new user walks them.

The analyst's path goes from an upload to a report: the data → the attacker's belief (the chain fitted to it)
→ a target ε_puffer → a plan of releases → a trial run → the report, whose numbers are checked against
puffer_core called here.  With ``SCREENSHOTS=1`` every step is saved at 1400 px and 390 px.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from puffer_core import calibrate, compose, fit_markov_chain, influence_curve, load_sequences
from puffer_core.display import fmt
from puffer_core.priors.fitting import DEFAULT_SMOOTHING
from tests.e2e.pages import EXCEPTION, MAIN, SIDEBAR, alerts, download, expect, open_page, snap_widths, until, wait_idle
from tests.support.servers import ROOT

pytestmark = pytest.mark.e2e
DEMO_CSV = ROOT / "assets" / "checkins.csv"


def _next(page: Any, heading: str) -> None:
    page.get_by_role("button", name="Next").click()
    page.get_by_role("heading", name=heading).wait_for()
    wait_idle(page)
    assert not page.locator(EXCEPTION).count() and not alerts(page), heading


def _number(page: Any, label: str, value: str) -> None:
    box = page.get_by_label(label, exact=True).and_(page.locator("input"))
    box.fill(value)
    box.press("Enter")
    wait_idle(page)


def test_the_analyst_path_from_upload_to_report(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "analyst")
    main = page.locator(MAIN)
    main.get_by_text("Upload a CSV or Parquet file").click()
    wait_idle(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(DEMO_CSV))
    main.get_by_text("checkins.csv: 2,000 users").wait_for()
    wait_idle(page)
    snap_widths(page, screenshot_dir, "guided-1-data")

    _next(page, "2. The attacker's belief")
    expect(page.locator(".js-plotly-plot")).to_have_count(1)  # the fitted chain, as a heatmap
    expect(page.locator(SIDEBAR)).to_contain_text("12-state Markov chain fitted to checkins.csv")
    snap_widths(page, screenshot_dir, "guided-2-belief")

    _next(page, "3. Your target")
    _number(page, "ε_puffer of one release", "2")
    main.get_by_role("button", name="Calibrate: from the accuracy").wait_for(state="visible")  # the other route
    data = load_sequences(DEMO_CSV, user="user", time="time", state="state")
    curve = influence_curve(fit_markov_chain(data, smoothing=DEFAULT_SMOOTHING))
    each = calibrate(curve, 2.0)
    expect(main).to_contain_text(f"ε_DP = {fmt(each.eps_dp)}")
    snap_widths(page, screenshot_dir, "guided-3-target")

    _next(page, "4. Your plan")
    _number(page, "Releases planned (e.g. 12 for a year of months)", "6")
    expect(main).to_contain_text(f"spend ε_puffer = {fmt(compose([each] * 6))} together")
    snap_widths(page, screenshot_dir, "guided-4-plan")

    _next(page, "5. A trial run")
    _number(page, "Trials", "30")
    page.get_by_role("button", name="Run the trial").click()
    page.locator('[data-testid="stTable"]').wait_for()
    wait_idle(page)
    trial = page.locator('[data-testid="stTable"]')
    expect(trial).to_contain_text("Pufferfish exponential")
    expect(trial).to_contain_text("Group DP exponential")
    snap_widths(page, screenshot_dir, "guided-5-trial")

    _next(page, "6. Your report")
    report = download(page, "Download report (HTML)").read_text(encoding="utf-8")
    script = download(page, "Download script (Python)").read_text(encoding="utf-8")
    assert "EPS = 2.0" in script and "RELEASES = 6" in script and "TRIALS = 30" in script
    words = re.sub(r"<script.*?</script>", "", report, flags=re.S)
    for text in (
        "checkins.csv",
        "The attacker&#x27;s belief",
        "A trial run",
        "Pufferfish exponential",
        f"per-entry budget of ε_DP = {fmt(each.eps_dp)}",
        f"spend ε_puffer = {fmt(compose([each] * 6))}",
    ):
        assert text in words, text
    assert "**" not in words
    snap_widths(page, screenshot_dir, "guided-6-report")
    page.get_by_role("button", name="Share these settings").click()
    link = page.locator('[data-testid="stCode"]').first
    link.wait_for()
    expect(link).to_contain_text("gstep=5")
    expect(link).to_contain_text("eps=2")
    snap_widths(page, screenshot_dir, "guided-6-share")


def test_the_lesson_path(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "lesson")
    expect(page.locator(MAIN)).to_contain_text("odds about 3 pm move by up to")
    snap_widths(page, screenshot_dir, "lesson-1")
    for heading in (
        "2. Hide more, leak less",
        "3. From a target to noise",
        "4. Many releases",
        "5. When privacy collapses",
    ):
        _next(page, heading)
    page.get_by_text("The mathematics: docs/math.md §8").click()
    page.get_by_text("Privacy collapse", exact=False).first.wait_for()
    snap_widths(page, screenshot_dir, "lesson-5")


def test_the_path_carries_its_plan_and_trial_to_the_pages(page: Any, app_url: str, screenshot_dir: Path) -> None:
    """The guided plan opens in Plan & compose and its trial in Simulate, with the same numbers (issue 29)."""
    open_page(page, app_url, "analyst")
    main = page.locator(MAIN)
    main.get_by_text("2,000 users, 71,861 entries").wait_for()  # the first built-in dataset, Check-ins
    _next(page, "2. The attacker's belief")
    _next(page, "3. Your target")
    page.get_by_role("button", name="Calibrate: from the accuracy").click()
    page.get_by_role("heading", name="Calibrate").wait_for()
    wait_idle(page)
    page.get_by_role("button", name="Use this ε_puffer").wait_for()
    snap_widths(page, screenshot_dir, "guided-calibrate-accuracy")
    page.get_by_role("button", name="Use this ε_puffer").click()
    wait_idle(page)
    page.get_by_role("link", name="Back to the guided path").click()
    page.get_by_role("heading", name="3. Your target").wait_for()
    wait_idle(page)
    expect(main).to_contain_text("Exactly ε_puffer = ")
    _next(page, "4. Your plan")
    expect(main).to_contain_text(re.compile(r"spend ε_puffer = [0-9.e+]+"))
    together = re.search(r"spend ε_puffer = ([0-9.e+]+)", main.inner_text())
    assert together is not None
    page.get_by_role("button", name="Open this plan in Plan & compose").click()
    page.get_by_role("heading", name="Plan & compose").wait_for()
    wait_idle(page)
    expect(main).to_contain_text(f"ε_puffer = {together.group(1)} by Theorem 6.2")
    assert not page.locator(EXCEPTION).count() and not alerts(page)
    snap_widths(page, screenshot_dir, "guided-to-plan")
    page.get_by_role("link", name="Guided: publish your data").click()  # the path kept its step
    page.get_by_role("heading", name="4. Your plan").wait_for()
    wait_idle(page)
    _next(page, "5. A trial run")
    _number(page, "Trials", "20")
    page.get_by_role("button", name="Run the trial").click()
    page.locator('[data-testid="stTable"]').wait_for()
    wait_idle(page)
    trial = page.locator('[data-testid="stTable"]')
    expect(trial).to_contain_text("Pufferfish exponential")
    expect(trial).to_contain_text("Group DP exponential")
    page.get_by_role("button", name="Open this trial in Simulate").click()
    page.get_by_role("heading", name="Simulate").wait_for()
    wait_idle(page)
    page.get_by_role("button", name="Run the simulation").click()
    page.get_by_text("Take it with you").wait_for(timeout=300_000)
    wait_idle(page)
    assert not page.locator(EXCEPTION).count() and not alerts(page)
    # the form as the trial left it (its numbers are compared bit for bit in tests/app/test_app_guided_carry.py)
    for setting in ("simq=topk", "simk=3", "simtrials=20", "simseed=0", "simmech=pufferfish_exponential"):
        until(lambda: page.url, lambda url, setting=setting: setting in url, setting)
    snap_widths(page, screenshot_dir, "guided-to-simulate")
