"""Helpers for AppTest: open the app on a page, list what went wrong."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tests.support.apptest import AppTest

# A condition's ceiling, not a duration: AppTest returns as soon as the script run ends.  A busy two-core
# machine (the suite beside two CPU-bound processes) can take several times as long as a quiet one.
TIMEOUT = 300.0
APP = Path(__file__).resolve().parents[2] / "streamlit_app.py"


def open_page(path: str | None = None, query: dict[str, str] | None = None) -> AppTest:
    """Run streamlit_app.py (navigation and sidebar included) on page ``path`` (the home page if None), as a
    link to that page opens it: its first run is the page's, with the link's query."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    if query:
        for name, value in query.items():
            at.query_params[name] = value
    if path is not None:
        at.switch_page(path)  # before the first run, the page is found by its file's name: every page's url path
    at.run()
    return at


def problems(at: AppTest) -> list[str]:
    """Exceptions shown by the app (tracebacks), as text: must be empty."""
    return [e.message for e in at.exception]


def errors(at: AppTest) -> list[str]:
    """The st.error messages on the page."""
    return [e.value for e in at.error]


def metric(at: AppTest, label: str) -> str:
    """The value shown by the first st.metric with this label."""
    return next(m.value for m in at.metric if m.label == label)


def tables(at: AppTest) -> list[pd.DataFrame]:
    """The read-only tables on the page (st.dataframe, not st.data_editor), in order."""
    return [d.value for d in at.dataframe if d.editing_mode == "read_only"]


def static_tables(at: AppTest) -> list[pd.DataFrame]:
    """The static tables on the page (st.table: they wrap to the page's width), in order, as the page prints them."""
    return [t.value for t in at.table]


class Built:
    """What a page handed to its report/script download pair on one run.

    Each is built when the test first reads it, as a click on its button builds it; the earlier runs' pairs are
    never built (a report embeds plotly.js: building both on every run was 17 % of the CPU samples of the
    population-secrets and Simulate page tests).  Each stem's last pair is built when the test ends, read or not
    (``_last_downloads_build``): a page whose download fails still fails its test.
    """

    def __init__(self, report: object, script: object, stem: str) -> None:
        self._parts, self.stem = [report, script], stem
        _CAUGHT.append(self)

    def __getitem__(self, index: int) -> str:
        part = self._parts[index]
        if callable(part):
            part = self._parts[index] = part()
        return str(part)

    def __iter__(self) -> Iterator[str]:
        return iter((self[0], self[1]))

    def __len__(self) -> int:
        return 2

    @property
    def report(self) -> str:
        return self[0]

    @property
    def script(self) -> str:
        return self[1]


_CAUGHT: list[Built] = []


@pytest.fixture(autouse=True)
def _last_downloads_build() -> Iterator[None]:
    """After each test, the last report and script of every stem it caught are built (a click's work)."""
    _CAUGHT.clear()
    yield
    last = {built.stem: built for built in _CAUGHT}
    _CAUGHT.clear()
    for built in last.values():
        assert built.report and built.script, built.stem


def capture_exports(monkeypatch: pytest.MonkeyPatch) -> list[Built]:
    """Every run's report/script pair, in order (``html, script = captured[-1]``); the real buttons still draw."""
    import app_ui.core.report as report

    captured: list[Built] = []
    original = report.offer_exports

    def capture(html: object, script: object, stem: str, key: str) -> None:
        captured.append(Built(html, script, stem))
        original(html, script, stem, key)  # type: ignore[arg-type]

    monkeypatch.setattr(report, "offer_exports", capture)
    return captured


class LastExports(dict):
    """The last run's pair as ``{"report": the function a click calls, "script": the text, "stem": ...}``."""

    def __init__(self, captured: list[Built]) -> None:
        super().__init__()
        self._captured = captured

    def __getitem__(self, key: str) -> object:
        last = self._captured[-1]
        if key == "report":
            return lambda: last.report
        if key == "script":
            return last.script
        if key == "stem":
            return last.stem
        raise KeyError(key)


@pytest.fixture
def exports(monkeypatch: pytest.MonkeyPatch) -> LastExports:
    """What the page handed to the report/script download pair on its last run."""
    return LastExports(capture_exports(monkeypatch))
