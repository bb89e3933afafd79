"""Fixtures for the end-to-end tests: `streamlit run app.py` on a free port, driven by headless Chromium.

Chromium is the system one (Playwright's own browser download is not used).  When it is
missing the tests are skipped locally but fail when the environment variable CI is "true".
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
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
START_TIMEOUT = 60.0
WIDTHS = (1400, 390)  # a laptop and a phone: every page is looked at at both
HEIGHT = 1000
MAX_HEIGHT = 16_000  # a phone stacks the columns: its pages are long


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"end-to-end tests cannot run in CI: {reason}")
    pytest.skip(reason)


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_health(base_url: str, process: subprocess.Popen[bytes], timeout: float = START_TIMEOUT) -> float:
    """Seconds until the server's health endpoint answers "ok"; fails if it exits or times out."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {process.returncode} before answering")
        try:
            with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=1) as response:
                if response.status == 200 and response.read().strip() == b"ok":
                    return time.perf_counter() - start
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.05)
    raise RuntimeError(f"streamlit did not answer on {base_url} within {timeout:.0f} s")


def start_streamlit(port: int, log: Any) -> subprocess.Popen[bytes]:
    """`streamlit run app.py` headless on ``port``, from the repository root."""
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    return subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = _chromium()
    if path is None:
        _unavailable("chromium is not installed (apt-get install chromium)")
    return str(path)


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
    with open(log_path, "wb") as log:
        process = start_streamlit(port, log)
        base_url = f"http://127.0.0.1:{port}"
        try:
            wait_for_health(base_url, process)
        except RuntimeError as exc:
            stop(process)
            pytest.fail(f"{exc}\n{log_path.read_text(errors='replace')[-3000:]}")
        try:
            yield base_url
        finally:
            stop(process)


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is not installed")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def page(browser: Any, app_url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    tab = context.new_page()
    try:
        yield tab
    finally:
        context.close()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS


def snap(page: Any, folder: Path, name: str, width: int = WIDTHS[0]) -> Path:
    """A PNG of the whole page at ``width`` px, saved as ``<name>.png`` (``<name>-<width>.png`` below 1400 px).

    The viewport is set to ``width`` and stretched to the content's height first, then put back to
    1400 × 1000.  Streamlit lays the page out again for the new width (a phone stacks the columns
    and hides the sidebar) without rerunning the script, so what it shows is the same state.
    """
    page.set_viewport_size({"width": width, "height": HEIGHT})
    time.sleep(0.6)
    height = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
        " return m ? m.scrollHeight : document.body.scrollHeight; }"
    )
    page.set_viewport_size({"width": width, "height": int(min(max(HEIGHT, height + 40), MAX_HEIGHT))})
    time.sleep(0.8)
    path = folder / (f"{name}.png" if width == WIDTHS[0] else f"{name}-{width}.png")
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
    return path


def snap_widths(page: Any, folder: Path, name: str, widths: Sequence[int] = WIDTHS) -> list[Path]:
    """:func:`snap` at every width in ``widths`` (default: 1400 and 390 px)."""
    return [snap(page, folder, name, width) for width in widths]


def horizontal_overflow(page: Any) -> list[str]:
    """What sticks out to the right of the main area at the current width (test ids or tags), if anything.

    Tables scroll inside their own frame and charts resize, so anything listed makes the whole page
    scroll sideways.
    """
    return page.evaluate(
        """() => {
            const main = document.querySelector('[data-testid="stMain"]');
            if (!main) return [];
            const right = main.getBoundingClientRect().right + 1;
            const out = [];
            for (const el of main.querySelectorAll('[data-testid]')) {
                const box = el.getBoundingClientRect();
                if (box.width > 0 && box.right > right) out.push(el.getAttribute('data-testid'));
            }
            return [...new Set(out)];
        }"""
    )


@pytest.fixture
def screenshots(screenshot_dir: Path) -> Callable[[Any, str], list[Path]]:
    """``screenshots(page, name)``: the page at 1400 and at 390 px width, saved to ``screenshots/``."""
    return lambda page, name: snap_widths(page, screenshot_dir, name)
