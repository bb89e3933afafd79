"""End to end on the Synthesize page: the plan, a synthetic table drawn and downloaded, fidelity over ε, and the
page at a phone's width.

With ``SCREENSHOTS=1``, screenshots at 1400 px and 390 px go to ``screenshots/`` (ignored by git).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.e2e.pages import MAIN, PATIENCE, alerts, download, expect, open_page, sideways_at, snap_widths, wait_idle

pytestmark = pytest.mark.e2e


def test_a_synthetic_table_is_drawn_downloaded_and_compared(page: Any, app_url: str, screenshot_dir: Path) -> None:
    open_page(page, app_url, "synthesize")
    main = page.locator(MAIN)
    expect(main).to_contain_text("How ε_puffer = 1 is spent")
    snap_widths(page, screenshot_dir, "synthesize-plan")
    page.get_by_role("button", name="Generate the synthetic dataset").click()
    page.get_by_text("Download the synthetic data (CSV)").wait_for(timeout=PATIENCE)
    wait_idle(page)
    assert not page.locator('[data-testid="stException"]').count()
    assert not alerts(page)
    table = pd.read_csv(download(page, "Download the synthetic data (CSV)"))
    assert list(table.columns) == ["user", "time", "state", "country"]
    assert len(table) == 71_861
    main.get_by_text("Compare over ε (a few seconds)").click()
    page.get_by_text("sampling alone").first.wait_for(timeout=PATIENCE)
    wait_idle(page)
    assert not alerts(page)
    assert not sideways_at(page, 390)
    snap_widths(page, screenshot_dir, "synthesize-results")
