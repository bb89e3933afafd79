"""Starting and stopping app servers for the tests and the benchmarks: `streamlit run app.py` on a free port.

Used by the end-to-end and deployment fixtures (one server for both: ``app_url`` in
``tests/conftest.py``) and by ``benchmarks/bench_app.py`` and ``benchmarks/bench_load.py``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 300.0  # a ceiling: the server warms itself (a fresh clone compiles its kernels) on a busy machine


def unavailable(what: str, reason: str) -> None:
    """Skip a test that needs something this machine lacks; in CI (CI=true) that is a failure instead."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} cannot run in CI: {reason}")
    pytest.skip(reason)


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive free ports (deploy/run.sh numbers its processes' ports so)."""
    first = free_port()
    while not all(port_is_free(first + i) for i in range(count)):
        first = first + count if first + 2 * count < 65000 else 20000
    return first


def healthy(url: str) -> bool:
    """Whether the server at ``url`` answers "ok" on its health endpoint now."""
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response:
            return response.status == 200 and response.read().strip() == b"ok"
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


def wait_for_health(base_url: str, process: subprocess.Popen[bytes], timeout: float = START_TIMEOUT) -> float:
    """Seconds until the server's health endpoint answers "ok"; RuntimeError if it exits or times out."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {process.returncode} before answering")
        if healthy(base_url):
            return time.perf_counter() - start
        time.sleep(0.05)
    raise RuntimeError(f"streamlit did not answer on {base_url} within {timeout:.0f} s")


def start_streamlit(port: int, log: Any, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """`streamlit run app.py` headless on ``port``, from the repository root (``env``: added variables)."""
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
    environment = {**os.environ, **env} if env else None
    return subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=environment)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
