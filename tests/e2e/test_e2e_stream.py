"""End to end: the Streams page's chart over t, its accuracy per step, and the attack ladder, in headless Chromium.

With ``SCREENSHOTS=1``, screenshots at 1400 px and 390 px go to ``screenshots/`` (ignored by git).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app_ui.core.tables import fmt
from puffer_core import MarkovChainPrior
from puffer_core.stream.tpl import temporal_privacy_leakage
from tests.e2e.pages import (
    EXCEPTION,
    MAIN,
    PATIENCE,
    alerts,
    clean,
    open_page,
    sideways_at,
    snap_widths,
    traces,
    vertical_gaps_at,
    wait_idle,
)

pytestmark = pytest.mark.e2e


def test_stream_chart_shows_the_library_numbers(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "stream")
    page.wait_for_selector(".js-plotly-plot")
    assert not page.locator(EXCEPTION).count() and not alerts(page)
    shown = traces(page)
    expected = temporal_privacy_leakage(MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=100), 0.3)
    assert shown["TPL (temporal leakage)"] == [fmt(v) for v in expected.tpl]
    assert shown["BPL (from the past)"] == [fmt(v) for v in expected.bpl]
    assert {"[C] bound", "group DP (Σ ε_t)", "FPL (from the future)"} <= set(shown)
    assert not vertical_gaps_at(page, 390)  # no blank band on a phone (the controls' columns once left 64 px)
    snap_widths(page, screenshot_dir, "stream")
    main = page.locator(MAIN)
    main.get_by_text("Accuracy per step, and post-processing the releases with the prior").click()
    wait_idle(page)
    main.get_by_text("Accuracy per step").first.wait_for(state="visible")
    clean(page)
    snap_widths(page, screenshot_dir, "stream-accuracy")


def test_stream_of_a_tiny_chain_shows_the_exact_leakage(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "stream?p=0.9&q=0.8&T=6")
    page.wait_for_selector(".js-plotly-plot")
    shown = traces(page)
    exact = [float(v) for v in shown["exact (every sequence)"]]
    tpl = [float(v) for v in shown["TPL (temporal leakage)"]]
    assert len(exact) == 6 and all(e <= t * (1 + 1e-3) for e, t in zip(exact, tpl))
    page.get_by_text("ε by time steps (a table)").click()
    wait_idle(page)
    assert not page.locator(EXCEPTION).count() and not alerts(page)
    snap_widths(page, screenshot_dir, "stream-tiny-chain-table")


def test_attack_ladder(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "attack")
    page.get_by_role("button", name="Run the attack").click()
    page.wait_for_selector(".js-plotly-plot", timeout=PATIENCE)
    wait_idle(page)
    assert not page.locator(EXCEPTION).count() and not alerts(page)
    shown = traces(page)
    lower = [float(v) for v in shown["attack (lower bound)"]]
    bound = [float(v) for v in shown["[C] bound"]]
    assert len(lower) == 6 and all(lo <= b * (1 + 1e-3) for lo, b in zip(lower, bound))
    page.get_by_text("attack (seed 0)").first.wait_for(state="visible")
    page.get_by_text("the attack's test against the region").wait_for(timeout=120_000)
    wait_idle(page)
    assert not page.locator(EXCEPTION).count() and not alerts(page)
    assert not sideways_at(page, 390)  # the ladder's table wraps on a phone (and the region's view fits)
    snap_widths(page, screenshot_dir, "attack")  # the ladder and the attack's test against the region


def test_the_optimal_schedule_beside_the_constant_one(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "stream?smode=optimal&starget=2")
    page.wait_for_selector(".js-plotly-plot")
    wait_idle(page)
    assert not page.locator(EXCEPTION).count() and not alerts(page)
    tpl = [float(v) for v in traces(page)["TPL (temporal leakage)"]]
    assert len(tpl) == 100 and max(tpl) <= 2.0 and min(tpl) > 1.99  # the target at every step
    page.get_by_text("three-value (Cao et al.)").first.wait_for(state="visible")
    assert not vertical_gaps_at(page, 390)  # the schedule's caption and the release's radio once stood 48 px apart
    snap_widths(page, screenshot_dir, "stream-optimal-schedule")


def test_the_correlation_knob_and_the_attacker_s_directions(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "stream?ssrc=strength&sstr=0.9&sk=3&T=30&pbsrc=none")
    page.wait_for_selector(".js-plotly-plot")
    page.get_by_text("What the attacker knows about the correlations").click()
    wait_idle(page)
    assert not page.locator(EXCEPTION).count() and not alerts(page)
    assert set(traces(page)["BPL (from the past)"]) == {fmt(0.3)}  # the past is not known to this attacker
    snap_widths(page, screenshot_dir, "stream-knob-directions")
