"""Fixtures for the end-to-end tests: the shared app server (``app_url``, tests/conftest.py), headless Chromium.

Chromium is the system one (Playwright's own browser download is not used).  When it is
missing the tests are skipped locally but fail when the environment variable CI is "true".
What the tests do with a page is in ``pages.py``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.pages import HEIGHT, PATIENCE, WIDTHS, snap_widths
from tests.support.servers import ROOT, unavailable

SCREENSHOTS = ROOT / "screenshots"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]


def chromium() -> str | None:
    """The system's Chromium (or Chrome), if installed."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = chromium()
    if path is None:
        unavailable("end-to-end tests", "chromium is not installed (apt-get install chromium)")
    return str(path)


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[Any]:
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        unavailable("end-to-end tests", "the playwright Python package is not installed")
    expect.set_options(timeout=PATIENCE)  # every expect(...) waits for its condition, up to this ceiling
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def page(browser: Any, app_url: str) -> Iterator[Any]:
    """A new tab in a new browser context (no cookies, nothing shared with other tests), 1400 × 1000."""
    context = browser.new_context(viewport={"width": WIDTHS[0], "height": HEIGHT})
    context.set_default_timeout(PATIENCE)  # a ceiling for every wait on a condition
    tab = context.new_page()
    try:
        yield tab
    finally:
        context.close()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS


@pytest.fixture
def screenshots(screenshot_dir: Path) -> Callable[[Any, str], list[Path | None]]:
    """``screenshots(page, name)``: the page at 1400 and at 390 px width, saved to ``screenshots/``."""
    return lambda page, name: snap_widths(page, screenshot_dir, name)
