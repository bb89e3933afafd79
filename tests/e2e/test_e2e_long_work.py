"""End to end on a server of this module's own: a deep link as its very first request, then a 300-state chain fitted
to an upload that shows its estimate, a progress bar, and a Cancel that stops it.

The server is a `streamlit run app.py` of this module's own (fresh for the deep link), so that its CPU time can be
read from /proc: while the curve is computed the server keeps a core busy; after Cancel it is idle again within a
second (the computation stopped, not only its display), the page says what was cancelled and stays usable, and
"Compute it" starts the work again.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.pages import EXCEPTION, PATIENCE, expect, snap_widths, wait_idle
from tests.support.road_walks import road_walks
from tests.support.servers import free_port, start_streamlit, stop, wait_for_health

pytestmark = pytest.mark.e2e


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cpu_rate(pid: int, seconds: float) -> float:
    """CPU seconds per second the process used over the next ``seconds``."""
    before, start = _cpu_seconds(pid), time.perf_counter()
    time.sleep(seconds)
    return (_cpu_seconds(pid) - before) / (time.perf_counter() - start)


@pytest.fixture(scope="module")
def own_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A `streamlit run app.py` of this module's own (not the shared one): its url and process id."""
    port = free_port()
    with open(tmp_path_factory.mktemp("own_server") / "server.log", "wb") as log:
        process = start_streamlit(port, log)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for_health(base, process)
            yield base, process.pid
        finally:
            stop(process)


def test_a_shared_link_opened_first_on_a_fresh_server(browser: Any, own_server: tuple[str, int]) -> None:
    """The first request a new server gets is a deep link: it still runs under app.py's navigation.

    The first test of this module: the server has not served a page yet.
    """
    base, _ = own_server
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(PATIENCE)
    page = context.new_page()
    try:
        page.goto(f"{base}/calibrate?p=0.7&eps=2")
        page.wait_for_selector(".js-plotly-plot", timeout=PATIENCE)
        wait_idle(page)
        expect(page.locator('[data-testid="stSidebarNav"]')).to_contain_text("Influence curves")
        expect(page.locator('[data-testid="stMain"]')).to_contain_text("p = 0.7")
        box = page.get_by_label("Target ε_puffer (the Pufferfish guarantee you want)")
        expect(box).to_have_value("2.00")
        expect(page).to_have_url(re.compile("/calibrate"))
    finally:
        context.close()


def test_a_300_state_fitted_chain_shows_its_estimate_and_cancel_stops_the_work(
    browser: Any, own_server: tuple[str, int], screenshot_dir: Path
) -> None:
    base, pid = own_server
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    try:
        _cancel_and_resume(page, base, pid, screenshot_dir)
    finally:
        context.close()


def _cancel_and_resume(page: Any, base: str, pid: int, screenshot_dir: Path) -> None:
    page.goto(f"{base}/curves?prior=matrix")
    page.wait_for_selector(".js-plotly-plot")
    wait_idle(page)
    page.get_by_role("combobox", name="Preset").click()
    page.get_by_role("option", name="Fitted from data").click()
    wait_idle(page)
    page.get_by_text("Upload a CSV or Parquet file").click()
    wait_idle(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        {"name": "road.csv", "mimeType": "text/csv", "buffer": road_walks()}
    )
    wait_idle(page)
    page.get_by_role("button", name="Load into the editor").click()

    # the estimate and a progress bar with the stage, while the server works
    box = page.get_by_text("The a(b) curve of this prior needs about")
    box.wait_for(timeout=120_000)
    page.locator('[data-testid="stProgress"]').wait_for()
    busy = _cpu_rate(pid, 1.5)
    assert busy > 0.15  # the computation keeps a core busy (as much of it as a busy machine leaves)
    bars = "document.querySelectorAll('[data-testid=\"stProgress\"] p')"
    stage = f"() => Array.from({bars}).some(p => /%/.test(p.innerText))"
    page.wait_for_function(stage, timeout=30_000)  # the stage is shown ("left and right terms, distance … — n%")
    snap_widths(page, screenshot_dir, "curves-long-work")

    # Cancel: the page says so at once, and the server stops working
    clicked = time.perf_counter()
    page.get_by_role("button", name="Cancel").click()
    page.get_by_text("was cancelled").first.wait_for(timeout=30_000)
    said_after = time.perf_counter() - clicked
    wait_idle(page)
    time.sleep(0.5)
    idle_rate = _cpu_rate(pid, 2.0)
    assert idle_rate < max(0.05, busy / 4), f"the server still works after Cancel ({idle_rate:.2f} vs {busy:.2f})"
    assert said_after < 20
    assert not page.locator(EXCEPTION).count()

    # the page stays usable: the curve can be asked for after all, and its work starts again (that it then
    # finishes with the library's curve is tests/app/test_app_long_work.py's; here it is cancelled once more)
    page.get_by_role("button", name="Compute it").click()
    page.locator('[data-testid="stProgress"]').wait_for()
    assert _cpu_rate(pid, 1.0) > 0.15
    page.get_by_role("button", name="Cancel").click()
    page.get_by_role("button", name="Compute it").wait_for(timeout=30_000)  # offered again: the work stopped
    expect(page.get_by_text("was cancelled").first).to_be_visible()
    wait_idle(page)
    assert not page.locator(EXCEPTION).count()
    print(f"server at {busy:.2f} CPU-s/s while computing; cancel said after {said_after:.1f} s; server at"
          f" {idle_rate:.2f} CPU-s/s after it")
