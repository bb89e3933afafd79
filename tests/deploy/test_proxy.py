"""Two app processes behind HAProxy (deploy/run.sh 2), driven through the proxy like browsers.

What must hold for a classroom: the affinity cookie spreads new browsers over both processes;
each session keeps getting its own values; an upload reaches the process that holds its
websocket's session (and fails on the other one, which is why the affinity is needed); XSRF
protection stays on behind the proxy and its cookie is accepted by every process.
"""

from __future__ import annotations

import asyncio
import binascii
from pathlib import Path

import pytest

from puffer_core import InfluenceCurve, MarkovChainPrior, influence_curve
from tests.deploy.conftest import Deployment
from tests.support.streamlit_ws import SIDEBAR, XSRF_COOKIE, Session, run_async

AFFINITY_COOKIE = "PUFFER_PROCESS"
SESSIONS = 4
pytestmark = pytest.mark.deploy


def _a1(p: float, q: float, length: int) -> str:
    """a(1) as the curves page prints it (4 significant digits), computed here without the app."""
    curve: InfluenceCurve = influence_curve(MarkovChainPrior([[p, 1 - p], [1 - q, q]], length=length))
    return f"{float(curve.a[0]):.4g}"


def _csv(users: int, length: int, states: tuple[str, ...]) -> bytes:
    rows = ["user,time,state"]
    for u in range(users):
        rows += [f"u{u},{t},{states[(u + t * (u % 3 + 1)) % len(states)]}" for t in range(length)]
    return ("\n".join(rows) + "\n").encode()


async def _open_in_turn(url: str, count: int) -> list[Session]:
    """New browsers (no cookie yet), one after the other, each keeping its tab open."""
    sessions = []
    for _ in range(count):
        session = Session(url, "curves")
        run = await session.open()
        assert not run.exceptions and not run.errors
        sessions.append(session)
    return sessions


def test_the_cookie_spreads_browsers_and_each_session_keeps_its_own_values(deployment: Deployment) -> None:
    async def scenario() -> None:
        sessions = await _open_in_turn(deployment.url, SESSIONS)
        try:
            placed = [s.cookies.get(AFFINITY_COOKIE) for s in sessions]
            assert set(placed) == set(deployment.apps), f"browsers were placed on {placed}"
            for round_ in range(2):  # everyone clicks at once, twice, with values of their own
                chosen = [
                    (round(0.55 + 0.05 * i, 2), round(0.9 - 0.02 * round_, 2), 20 + 7 * i + round_)
                    for i in range(SESSIONS)
                ]
                runs = await asyncio.gather(
                    *(s.rerun({"w_p": p, "w_q": q, "w_length": t}) for s, (p, q, t) in zip(sessions, chosen))
                )
                for run, (p, q, t) in zip(runs, chosen):
                    assert not run.exceptions and not run.errors
                    assert run.metrics()["Sequence length T"] == str(t)
                    assert run.metrics()["a(1)"] == _a1(p, q, t)
                    assert f"**Prior in use:** binary chain p = {p:g}, q = {q:g}, T = {t}" in run.texts(SIDEBAR)
            # the cookie is what a session's process is: each session is known there and only there
            for session, name in zip(sessions, placed):
                urls = await session.file_urls("probe.csv")
                other = deployment.other(name)
                own_status = session.put_file(urls, "probe.csv", b"a,b\n", base_url=deployment.apps[name])
                other_status = session.put_file(urls, "probe.csv", b"a,b\n", base_url=deployment.apps[other])
                assert (own_status, other_status) == (204, 400)
        finally:
            await asyncio.gather(*(s.close() for s in sessions))

    run_async(scenario())


def test_an_upload_reaches_the_process_of_its_websocket(deployment: Deployment) -> None:
    content = _csv(users=7, length=13, states=("sun", "rain"))

    async def scenario() -> None:
        async with Session(deployment.url, "curves") as session:
            name = session.cookies[AFFINITY_COOKIE]
            await session.rerun({"w_kind": "K-state Markov chain"})
            await session.rerun({"w_preset": "Fitted from data"})
            await session.rerun({"curves_source": "Upload a CSV or Parquet file"})

            # the same upload sent with the other process's cookie: that process has no such session
            urls = await session.file_urls("weather.csv")
            elsewhere = {**session.cookies, AFFINITY_COOKIE: deployment.other(name)}
            assert session.put_file(urls, "weather.csv", content, cookies=elsewhere) == 400
            # and without the XSRF token (the proxy keeps Streamlit's protection working)
            assert session.put_file(urls, "weather.csv", content, xsrf=False) == 403

            run = await session.upload("curves_upload", "weather.csv", content)
            assert session.cookies[AFFINITY_COOKIE] == name  # still on the same process
            assert not run.exceptions and not run.errors
            assert "**Data loaded:** weather.csv (7 users)" in run.texts(SIDEBAR)
            run = await session.rerun({"w_load_preset": True})
            assert not run.exceptions and not run.errors
            assert run.metrics()["Sequence length T"] == "13"
            assert "**Prior in use:** 2-state Markov chain fitted to weather.csv, T = 13" in run.texts(SIDEBAR)

    run_async(scenario())


def _xsrf_token(cookie: str) -> bytes:
    """The token inside Streamlit's XSRF cookie "2|mask|masked token|time" (the mask is random per response)."""
    _, mask_hex, masked_hex, _ = cookie.strip('"').split("|")
    mask, masked = binascii.a2b_hex(mask_hex), binascii.a2b_hex(masked_hex)
    return bytes(b ^ mask[i % 4] for i, b in enumerate(masked))


def test_the_xsrf_cookie_of_one_process_is_accepted_by_the_other(deployment: Deployment) -> None:
    """A browser sent to the other process (its process restarted, or went down) keeps its XSRF cookie."""
    content = _csv(users=4, length=6, states=("x", "y"))

    async def scenario() -> None:
        first = Session(deployment.apps["app1"], "curves")
        assert first.request("GET", "/_stcore/health") == 200
        token = _xsrf_token(first.cookies[XSRF_COOKIE])
        session = Session(deployment.apps["app2"], "curves")
        session.cookies = dict(first.cookies)
        async with session:
            assert _xsrf_token(session.cookies[XSRF_COOKIE]) == token  # app2 kept app1's token
            await session.rerun({"w_kind": "K-state Markov chain"})
            await session.rerun({"w_preset": "Fitted from data"})
            await session.rerun({"curves_source": "Upload a CSV or Parquet file"})
            run = await session.upload("curves_upload", "small.csv", content)
            assert "**Data loaded:** small.csv (4 users)" in run.texts(SIDEBAR)

    run_async(scenario())


def test_every_process_shares_one_cookie_secret(deployment: Deployment) -> None:
    """Signed cookies (Streamlit's login cookies) must verify on whichever process a browser reaches."""
    secrets = set()
    for pid in deployment.pids.values():
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        values = [e.split(b"=", 1)[1] for e in environ if e.startswith(b"STREAMLIT_SERVER_COOKIE_SECRET=")]
        assert values and len(values[0]) >= 32
        secrets.add(values[0])
    assert len(secrets) == 1
