"""Helpers for AppTest: open the app on a page, list what went wrong."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

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
