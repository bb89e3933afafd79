"""Speed of the Streamlit app: server time per interaction, and cold start.

Run: python benchmarks/bench_app.py   — prints a table; exits with status 1 if a budget is missed.

- Interactions are timed with ``streamlit.testing.v1.AppTest`` (the whole script run on the
  server: widgets, the cached library call, the plotly figure and the tables), each with a
  value not seen before so the curve is really recomputed (a cache miss).  Median of
  ``--repeats`` runs (at least 5).  Budget: ≤ 150 ms for an interaction that only recomputes
  a curve (the binary chain's p slider, the K-state chain's length, the Gaussian ℓ).
- Cold start: ``streamlit run app.py`` in a fresh process until ``/_stcore/health`` answers.
  Budget: ≤ 5 s.  Median of 3 starts.  Also shown, for information, when Chromium is installed:
  from ``streamlit run`` until the curves page's chart is drawn in a fresh headless browser —
  this includes the first script run (imports, about 1 s) and the browser fetching and parsing
  Streamlit's and plotly.js's JavaScript with an empty cache, shown on its own as the second
  line (a new browser context against the then warm server; outside the app's control).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from tests.e2e.conftest import CHROMIUM_ARGS, chromium  # noqa: E402
from tests.support.servers import free_port, start_streamlit, stop, wait_for_health  # noqa: E402

CURVE_BUDGET_MS = 150.0
COLD_START_BUDGET_S = 5.0


def _open(page: str, query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    at.run()
    at.switch_page(page).run()
    return at


def _timed_runs(at: AppTest, set_value, values: list) -> list[float]:
    times = []
    for value in values:
        set_value(at, value)
        start = time.perf_counter()
        at.run()
        times.append(1000 * (time.perf_counter() - start))
        if at.exception:
            raise RuntimeError(at.exception[0].message)
    return times


def interactions(repeats: int) -> list[tuple[str, float, float | None]]:
    """(what, median ms, budget ms or None) for each interaction."""
    rows: list[tuple[str, float, float | None]] = []
    at = _open("app_pages/curves.py")
    values = [round(0.5 + 0.01 * i, 2) for i in range(repeats)]
    times = _timed_runs(at, lambda a, v: a.slider(key="w_p").set_value(v), values)
    rows.append(("curves: move the p slider (binary chain, T = 100)", statistics.median(times), CURVE_BUDGET_MS))

    at = _open("app_pages/curves.py", {"prior": "matrix"})
    lengths = [60 + i for i in range(repeats)]
    times = _timed_runs(at, lambda a, v: a.number_input(key="w_length").set_value(v), lengths)
    rows.append(("curves: change T (3-state chain)", statistics.median(times), CURVE_BUDGET_MS))

    at = _open("app_pages/curves.py", {"prior": "gaussian"})
    scales = [round(1.05 + 0.05 * i, 2) for i in range(repeats)]
    times = _timed_runs(at, lambda a, v: a.number_input(key="w_ell").set_value(v), scales)
    rows.append(("curves: change ℓ (Gaussian process, n = 50)", statistics.median(times), CURVE_BUDGET_MS))

    at = _open("app_pages/curves.py")
    cached = [0.9 if i % 2 else 0.8 for i in range(repeats + 2)]
    times = _timed_runs(at, lambda a, v: a.slider(key="w_p").set_value(v), cached)[2:]
    rows.append(("curves: move p back and forth (cached curve)", statistics.median(times), CURVE_BUDGET_MS))

    at = _open("app_pages/calibrate.py")
    targets = [round(1.1 + 0.1 * i, 2) for i in range(repeats)]
    times = _timed_runs(at, lambda a, v: a.number_input(key="w_eps").set_value(v), targets)
    rows.append(("calibrate: change the target ε_puffer", statistics.median(times), None))
    return rows


def cold_starts(count: int) -> list[float]:
    times = []
    for _ in range(count):
        port = free_port()
        with open("/dev/null", "wb") as log:
            process = start_streamlit(port, log)
            try:
                times.append(wait_for_health(f"http://127.0.0.1:{port}", process))
            finally:
                stop(process)
    return times


def first_render() -> tuple[float, float] | None:
    """Seconds until the curves page's chart is drawn in a fresh headless Chromium (None without it).

    Returns (from `streamlit run`, on a fresh server; from the request, on the now warm server
    with a new browser context — the browser's own share: fetching and parsing the JavaScript).
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    path = chromium()
    if path is None:
        return None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            port = free_port()
            url = f"http://127.0.0.1:{port}/curves"
            with open("/dev/null", "wb") as log:
                start = time.perf_counter()
                process = start_streamlit(port, log)
                try:
                    wait_for_health(f"http://127.0.0.1:{port}", process)
                    page = browser.new_context().new_page()
                    page.goto(url)
                    page.wait_for_selector(".js-plotly-plot", timeout=60_000)
                    cold = time.perf_counter() - start
                    page = browser.new_context().new_page()
                    start = time.perf_counter()
                    page.goto(url)
                    page.wait_for_selector(".js-plotly-plot", timeout=60_000)
                    return cold, time.perf_counter() - start
                finally:
                    stop(process)
        finally:
            browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9, help="timed runs per interaction (≥ 5)")
    args = parser.parse_args()
    repeats = max(5, args.repeats)
    ok = True
    print(f"{'measurement':<58} {'median':>10} {'budget':>9}  result")
    for what, median, budget in interactions(repeats):
        verdict = "" if budget is None else ("ok" if median <= budget else "OVER")
        ok &= verdict != "OVER"
        shown = "—" if budget is None else f"{budget:.0f} ms"
        print(f"{what:<58} {median:>7.1f} ms {shown:>9}  {verdict}")
    starts = cold_starts(3)
    median = statistics.median(starts)
    verdict = "ok" if median <= COLD_START_BUDGET_S else "OVER"
    ok &= verdict == "ok"
    print(f"{'cold start: streamlit run app.py until /_stcore/health':<58} {median:>8.2f} s {'5 s':>9}  {verdict}")
    rendered = first_render()
    if rendered is not None:
        what = "cold start: until the curves page is drawn in Chromium"
        print(f"{what:<58} {rendered[0]:>8.2f} s {'—':>9}")
        what = "  of which the browser alone (warm server, new context)"
        print(f"{what:<58} {rendered[1]:>8.2f} s {'—':>9}")
    print(
        f"(median of {repeats} interactions each; cold start: median of {len(starts)}:"
        f" {', '.join(f'{s:.2f}' for s in starts)} s)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
