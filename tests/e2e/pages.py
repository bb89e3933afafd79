"""What the end-to-end tests do with a page in headless Chromium: open it, wait, read it, download, screenshot.

Every test module imports these (the fixtures are in ``conftest.py``).  With ``SCREENSHOTS=1`` in the
environment, screenshots go to ``screenshots/`` (ignored by git): ``<name>.png`` at 1400 px and
``<name>-390.png`` at 390 px, a phone, where Streamlit stacks the columns and hides the sidebar.  They are
for people to look at; no test reads them, so a plain run skips them (they cost about a minute).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

try:  # the tests are skipped without Playwright (conftest.py); this module is imported either way
    from playwright.sync_api import expect
except ImportError:  # pragma: no cover
    expect = None

T = TypeVar("T")
SCREENSHOTS = os.environ.get("SCREENSHOTS", "") not in ("", "0")
WIDTHS = (1400, 390)  # a laptop and a phone: every page is looked at at both
HEIGHT = 1000
MAX_HEIGHT = 16_000  # a phone stacks the columns: its pages are long
# How long a condition may take before a test fails: a ceiling, never a wait (every wait returns as soon as its
# condition holds).  Two busy cores (the suite beside two CPU-bound processes) make a page several times slower.
PATIENCE = 240_000
SETTLE_SECONDS = 15  # how long a page at a new width may take to stop sticking out before it counts as overflow
MAIN = '[data-testid="stMain"]'
SIDEBAR = '[data-testid="stSidebarUserContent"]'
EXCEPTION = '[data-testid="stException"]'
ERROR = '[data-testid="stAlertContentError"]'
IDLE = (
    "() => { const app = document.querySelector('[data-testid=\"stApp\"]');"
    " return app !== null && app.getAttribute('data-test-script-state') === 'notRunning'; }"
)
# the main area's top block fits it: the page has been laid out again for the viewport's width
REFLOWED = (
    "() => { const main = document.querySelector('[data-testid=\"stMain\"]');"
    " const block = main && main.querySelector('[data-testid=\"stVerticalBlock\"]');"
    " return block !== null && block.getBoundingClientRect().right <= main.getBoundingClientRect().right + 1; }"
)
# the charts' series that carry their values as text: [name, [value, …]] for each
TRACES = (
    "() => Array.from(document.querySelector('.js-plotly-plot').data)"
    ".filter(t => t.customdata).map(t => [t.name, Array.from(t.customdata)])"
)


def until(read: Callable[[], T], holds: Callable[[T], bool], what: str, seconds: float = PATIENCE / 1000) -> T:
    """``read()`` again until ``holds`` its value (a condition waited on, never read once); the value.

    After ``seconds`` the assertion fails with ``what`` and the last value read.
    """
    deadline = time.monotonic() + seconds
    while True:
        value = read()
        if holds(value):
            return value
        assert time.monotonic() < deadline, f"{what}: {value!r}"
        time.sleep(0.2)


def wait_idle(page: Any, settle: float = 0.4) -> None:
    """Wait until the script run has finished and the page had a moment to draw."""
    page.wait_for_function(IDLE, timeout=PATIENCE)
    time.sleep(settle)
    page.wait_for_function(IDLE, timeout=PATIENCE)


def open_page(page: Any, app_url: str, path: str = "") -> None:
    """Go to ``app_url/path`` (a page's url path, with a query string if any) and wait for its first run."""
    page.goto(f"{app_url}/{path}")
    page.wait_for_selector('[data-testid="stApp"]')
    wait_idle(page)


FRAMED = ("stDataFrame", "stElementToolbar", "stTooltipHoverTarget", "stBaseButton-elementToolbar", "stExpanderDetails")


def clean(page: Any) -> None:
    """No traceback, no error, and nothing that scrolls the page sideways on a phone (an st.dataframe scrolls
    inside its own frame; a collapsed expander's keeps its desktop width, so those are left out)."""
    assert not page.locator(EXCEPTION).count()
    assert not alerts(page)
    sideways = sideways_at(page, 390, ignore=FRAMED)
    assert not sideways, sideways


def alerts(page: Any) -> list[str]:
    """The text of every st.error on the page."""
    return [text.strip() for text in page.locator('[data-testid="stAlertContentError"]').all_inner_texts()]


def traces(page: Any) -> dict[str, list[str]]:
    """The first chart's series by name: the values it shows (as text)."""
    return dict(page.evaluate(TRACES))


def download(page: Any, label: str) -> Path:
    """Click the download button ``label`` and return the downloaded file."""
    with page.expect_download() as info:
        page.get_by_role("button", name=label).click()
    return Path(info.value.path())


def cells(page: Any, index: int) -> list[str]:
    """The cells of the index-th st.dataframe on the page, row by row (read from the grid's accessible table)."""
    table = page.locator('[data-testid="stDataFrame"]').nth(index)
    table.locator("td").first.wait_for(state="attached")
    return [text.strip() for text in table.locator("td").all_inner_texts()]


def horizontal_overflow(page: Any) -> list[str]:
    """What sticks out to the right of the main area at the current width (test ids), if anything.

    Tables and a row of tabs scroll inside their own frame and charts resize, so anything listed
    makes the whole page scroll sideways (what a frame of its own clips is not listed).
    """
    return page.evaluate(
        """() => {
            const main = document.querySelector('[data-testid="stMain"]');
            if (!main) return [];
            const right = main.getBoundingClientRect().right + 1;
            const clipped = (el) => {
                for (let up = el.parentElement; up && up !== main; up = up.parentElement) {
                    const x = getComputedStyle(up).overflowX;
                    if (x !== 'visible' && up.getBoundingClientRect().right <= right) return true;
                }
                return false;
            };
            const out = [];
            for (const el of main.querySelectorAll('[data-testid]')) {
                const box = el.getBoundingClientRect();
                if (box.width > 0 && box.right > right && !clipped(el))
                    out.push(`${el.getAttribute('data-testid')} (to ${Math.round(box.right)} px;`
                             + ` the page ends at ${Math.round(right)})`);
            }
            return [...new Set(out)];
        }"""
    )


def grid_overflow(page: Any) -> list[int]:
    """How far each visible st.dataframe scrolls sideways, in pixels (0 when it fits the page)."""
    return page.evaluate(
        "() => Array.from(document.querySelectorAll('[data-testid=\"stDataFrame\"]'))"
        ".filter(e => e.offsetParent !== null)"
        ".map(e => { const s = e.querySelector('.dvn-scroller'); return s ? s.scrollWidth - s.clientWidth : 0; })"
    )


def wide_tables(page: Any) -> list[str]:
    """The visible st.table tables wider than the space they have (they would scroll sideways)."""
    return page.evaluate(
        "() => Array.from(document.querySelectorAll('[data-testid=\"stTable\"]'))"
        ".filter(t => t.offsetParent !== null)"
        # the table scrolls inside a frame of its own, so compare the table itself with the room it has
        ".filter(t => { const inner = t.querySelector('table') || t;"
        " return inner.getBoundingClientRect().width > t.clientWidth + 1 || t.scrollWidth > t.clientWidth + 1; })"
        ".map(t => t.innerText.slice(0, 60))"
    )


def sideways_at(page: Any, width: int, ignore: tuple[str, ...] = ()) -> list[str]:
    """What would scroll sideways with the page ``width`` px wide: elements past the main area, wide static tables.

    Items whose test id starts with one of ``ignore`` are left out (and not waited for: they may stay).
    """
    page.set_viewport_size({"width": width, "height": HEIGHT})
    try:
        page.wait_for_function(f"() => window.innerWidth === {width}", timeout=PATIENCE)
        # the page lays itself out again for the new width a moment later (seconds on a busy machine): wait
        # until its top block fits the main area (a ceiling: if it never does, the readings below say so)
        try:
            page.wait_for_function(REFLOWED, timeout=SETTLE_SECONDS * 1000)
        except Exception:  # noqa: BLE001 - Playwright's TimeoutError; the readings report the overflow
            pass
        # the charts and the blocks inside follow the width after it, each when its resize observer fires
        # (seconds apart on a busy machine): read until nothing sticks out, for at most SETTLE_SECONDS — a
        # real overflow stays and is returned
        now = _settled_overflow(page, ignore)
        if now:
            # a page drawn wide sometimes misses its first resize (Streamlit measures the width before the
            # re-render lands, only in this harness: a phone loads the page at its own width); a second resize,
            # as a phone's rotation would, lays it out again — what still sticks out after it is real
            page.set_viewport_size({"width": width + 1, "height": HEIGHT})
            page.set_viewport_size({"width": width, "height": HEIGHT})
            now = _settled_overflow(page, ignore)
        return now
    finally:
        page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})


def _settled_overflow(page: Any, ignore: tuple[str, ...] = ()) -> list[str]:
    """What sticks out (but ``ignore``), read until nothing does or for at most SETTLE_SECONDS (a real overflow
    stays)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        time.sleep(0.25)
        now = [item for item in horizontal_overflow(page) + wide_tables(page) if not item.startswith(ignore)]
        if not now or time.monotonic() > deadline:
            return now


GAP = 40  # pixels: more empty height than this between two consecutive blocks of the main area is a blank band
# the empty vertical bands of the main area wider than GAP px: [height, block above, block below] (every visible
# element with a test id counts, but for the layout containers that span the others)
GAPS = (
    """(limit) => {
        const main = document.querySelector('[data-testid="stMain"]');
        if (!main) return [];
        const layout = new Set(['stVerticalBlock', 'stHorizontalBlock', 'stColumn', 'stMainBlockContainer',
            'stLayoutWrapper', 'stVerticalBlockBorderWrapper', 'stElementContainer']);
        const boxes = [];
        for (const el of main.querySelectorAll('[data-testid]')) {
            const id = el.getAttribute('data-testid');
            const box = el.getBoundingClientRect();
            if (layout.has(id) || box.height <= 0 || box.width <= 0) continue;
            if (getComputedStyle(el).visibility === 'hidden') continue;
            boxes.push([box.top, box.bottom, `${id} “${(el.innerText || '').trim().slice(0, 40)}”`]);
        }
        boxes.sort((a, b) => a[0] - b[0]);
        const out = [];
        let [, bottom, above] = boxes.length ? boxes[0] : [0, 0, ''];
        for (const [top, end, name] of boxes.slice(1)) {
            if (top - bottom > limit) out.push(`${Math.round(top - bottom)} px between ${above} and ${name}`);
            if (end > bottom) [bottom, above] = [end, name];
        }
        return out;
    }"""
)


def vertical_gaps_at(page: Any, width: int, limit: int = GAP) -> list[str]:
    """The empty vertical bands higher than ``limit`` px in the main area with the page ``width`` px wide.

    Read until there is none or for at most SETTLE_SECONDS after the page has reflowed (a real band stays).
    """
    page.set_viewport_size({"width": width, "height": HEIGHT})
    try:
        page.wait_for_function(f"() => window.innerWidth === {width}", timeout=PATIENCE)
        try:
            page.wait_for_function(REFLOWED, timeout=SETTLE_SECONDS * 1000)
        except Exception:  # noqa: BLE001 - Playwright's TimeoutError; the readings report the bands
            pass
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            time.sleep(0.25)
            now: list[str] = page.evaluate(GAPS, limit)
            if not now or time.monotonic() > deadline:
                return now
    finally:
        page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})


def snap(page: Any, folder: Path, name: str, width: int = WIDTHS[0]) -> Path | None:
    """A PNG of the whole page at ``width`` px, saved as ``<name>.png`` (``<name>-<width>.png`` below 1400 px).

    Only with ``SCREENSHOTS=1`` in the environment (returns None otherwise).

    The viewport is set to ``width`` and stretched to the content's height first, then put back to
    1400 × 1000.  Streamlit lays the page out again for the new width (a phone stacks the columns
    and hides the sidebar) without rerunning the script, so what it shows is the same state.
    """
    if not SCREENSHOTS:
        return None
    page.set_viewport_size({"width": width, "height": HEIGHT})
    time.sleep(0.4)
    height = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
        " return m ? m.scrollHeight : document.body.scrollHeight; }"
    )
    page.set_viewport_size({"width": width, "height": int(min(max(HEIGHT, height + 40), MAX_HEIGHT))})
    time.sleep(0.5)  # the charts redraw for the new width
    path = folder / (f"{name}.png" if width == WIDTHS[0] else f"{name}-{width}.png")
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
    return path


def snap_widths(page: Any, folder: Path, name: str, widths: Sequence[int] = WIDTHS) -> list[Path | None]:
    """:func:`snap` at every width in ``widths`` (default: 1400 and 390 px)."""
    return [snap(page, folder, name, width) for width in widths]
