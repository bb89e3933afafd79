"""Two students on one server process: neither ever sees the other's upload, prior or values.

A real ``streamlit run app.py`` (all sessions are threads of one process, sharing its caches),
driven over the websocket like two browser tabs.  Student A fits a 2-state chain to the file
they uploaded; student B uploads another file and studies a binary chain.  Both then visit
every page the app's navigation lists at the same time (different pages, then the same page),
and every run is checked for their own markers and for the absence of the other's.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import pytest

from app_ui import PAGES
from tests.support.streamlit_ws import SIDEBAR, Run, Session, run_async

pytestmark = pytest.mark.deploy
KNOWN_PAGES = {"", "curves", "calibrate", "plan", "simulate", "classroom"}  # "" is the default page (home)


@dataclass(frozen=True)
class Student:
    file_name: str
    users: int
    length: int
    states: tuple[str, ...]
    prior_line: str  # the sidebar's "Prior in use" once the student has set their prior

    def csv(self) -> bytes:
        rows = ["user,time,state"]
        for u in range(self.users):
            rows += [
                f"{self.file_name[:3]}{u},{t},{self.states[(u + t * (u % 3 + 1)) % len(self.states)]}"
                for t in range(self.length)
            ]
        return ("\n".join(rows) + "\n").encode()

    @property
    def data_line(self) -> str:
        return f"**Data loaded:** {self.file_name} ({self.users} users)"

    @property
    def markers(self) -> tuple[str, ...]:
        """Text that only this student's pages may show."""
        return (self.file_name, self.prior_line, *self.states)


A = Student(
    "alpha_weather.csv",
    7,
    13,
    ("sunny", "rainy"),
    "**Prior in use:** 2-state Markov chain fitted to alpha_weather.csv, T = 13",
)
B = Student(
    "beta_commute.csv",
    11,
    17,
    ("walking", "cycling", "driving"),
    "**Prior in use:** binary chain p = 0.55, q = 0.65, T = 17",
)


async def _upload(session: Session, student: Student) -> Run:
    await session.rerun({"w_kind": "K-state Markov chain"})
    await session.rerun({"w_preset": "Fitted from data"})
    await session.rerun({"curves_source": "Upload a CSV or Parquet file"})
    run = await session.upload("curves_upload", student.file_name, student.csv())
    assert student.data_line in run.texts(SIDEBAR)
    return run


async def _set_up_a(session: Session) -> None:
    await _upload(session, A)
    run = await session.rerun({"w_load_preset": True})  # the chain fitted to A's file becomes A's prior
    assert A.prior_line in run.texts(SIDEBAR)


async def _set_up_b(session: Session) -> None:
    await _upload(session, B)
    run = await session.rerun({"w_kind": "Binary chain (p, q)"})
    run = await session.rerun({"w_p": 0.55, "w_q": 0.65, "w_length": B.length})
    assert B.prior_line in run.texts(SIDEBAR)


def _everything(run: Run) -> str:
    """All text the run showed, with the charts' data and the widgets' labels and options."""
    parts = run.texts()
    for element in run.elements:
        if element.kind == "plotly_chart":
            parts.append(json.dumps(json.loads(element.proto.spec), ensure_ascii=False))
        for name in ("label", "options", "default", "value"):
            value = getattr(element.proto, name, None)
            if value is not None and not callable(value):
                parts.append(str(list(value) if not isinstance(value, (str, int, float)) else value))
    return "\n".join(parts)


def _check(run: Run, own: Student, other: Student, page: str) -> None:
    assert not run.exceptions, f"{page}: {run.exceptions}"
    sidebar = run.texts(SIDEBAR)
    # the sidebar names the prior on the pages that use the one chosen on Influence curves (app_ui.PAGES)
    uses_prior = PAGES[page or "home"].prior == "chosen"
    assert (own.prior_line in sidebar) == uses_prior and own.data_line in sidebar, f"{page}: sidebar {sidebar}"
    shown = _everything(run)
    leaked = [m for m in other.markers if m in shown]
    assert not leaked, f"{page} shows the other session's {leaked}"


def test_two_sessions_never_see_each_others_upload_or_prior(app_url: str) -> None:
    async def scenario() -> None:
        async with Session(app_url, "curves") as a, Session(app_url, "curves") as b:
            await asyncio.gather(_set_up_a(a), _set_up_b(b))
            pages = a.pages
            assert KNOWN_PAGES <= set(pages), f"the navigation lists {pages}"
            for page_a, page_b in zip(pages, reversed(pages)):  # different pages at the same time
                run_a, run_b = await asyncio.gather(a.rerun(page=page_a), b.rerun(page=page_b))
                _check(run_a, A, B, page_a)
                _check(run_b, B, A, page_b)
            for page in pages:  # the same page at the same time
                run_a, run_b = await asyncio.gather(a.rerun(page=page), b.rerun(page=page))
                _check(run_a, A, B, page)
                _check(run_b, B, A, page)
                for run, student in ((run_a, A), (run_b, B)):
                    if page == "simulate":  # each student's own data, computed from their own file
                        assert run.metrics()["Users"] == str(student.users)
                        assert run.metrics()["States"] == str(len(student.states))
                        assert all(state in _everything(run) for state in student.states)
                    if page == "curves":
                        assert run.metrics()["Sequence length T"] == str(student.length)

    run_async(scenario())
