"""Fixtures for the deployment tests: deploy/run.sh with two app processes behind HAProxy.

The tests of one plain process use the server every end-to-end test shares (``app_url``, tests/conftest.py).

HAProxy is Debian's package (``apt-get install -y haproxy``).  Without it the proxy tests are
skipped locally but fail when the environment variable CI is "true" (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.servers import ROOT, free_port, free_ports, healthy, unavailable

START_TIMEOUT = 90.0


@dataclass
class Deployment:
    """deploy/run.sh with two app processes: the proxy's URL and each process's own URL and pid."""

    url: str
    apps: dict[str, str]  # the proxy's cookie value (app1, app2) → that process's own URL
    pids: dict[str, int]  # the same → its pid
    log: Path

    def other(self, name: str) -> str:
        return next(n for n in self.apps if n != name)


def _app_pids(launcher: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if ppid == launcher and b"streamlit" in cmdline:
                pids.append(int(entry.name))
    return pids


def _port_of(pid: int) -> int:
    args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return int(args[args.index(b"--server.port") + 1])


@pytest.fixture(scope="session")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    if shutil.which("haproxy", path=f"{os.environ.get('PATH', '')}:/usr/sbin:/usr/local/sbin") is None:
        unavailable("deployment tests", "HAProxy is not installed (apt-get install -y haproxy)")
    proxy_port = free_port()
    first = free_ports(2)
    while first <= proxy_port <= first + 1:
        first = free_ports(2)
    log_path = tmp_path_factory.mktemp("deploy") / "run.log"
    env = {
        **os.environ,
        "PUFFER_PORT": str(proxy_port),
        "PUFFER_APP_PORT": str(first),
        "PUFFER_BIND": "127.0.0.1",
        "PYTHON": sys.executable,
    }
    env.pop("STREAMLIT_SERVER_COOKIE_SECRET", None)  # run.sh must generate one shared secret itself
    with open(log_path, "wb") as log:
        launcher = subprocess.Popen(
            ["bash", str(ROOT / "deploy" / "run.sh"), "2"], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        url = f"http://127.0.0.1:{proxy_port}"
        apps = {f"app{i + 1}": f"http://127.0.0.1:{first + i}" for i in range(2)}
        deadline = time.monotonic() + START_TIMEOUT
        try:
            while not (healthy(url) and all(healthy(u) for u in apps.values())):
                if launcher.poll() is not None:
                    raise RuntimeError(f"deploy/run.sh exited with status {launcher.returncode}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"deploy/run.sh was not ready within {START_TIMEOUT:.0f} s")
                time.sleep(0.2)
            pids = sorted(_app_pids(launcher.pid))
            ports = {_port_of(p): p for p in pids}
        except (RuntimeError, OSError, ValueError) as exc:
            launcher.send_signal(signal.SIGTERM)
            launcher.wait(timeout=30)
            pytest.fail(f"{exc}\n{log_path.read_text(errors='replace')[-3000:]}")
        try:
            yield Deployment(url, apps, {f"app{i + 1}": ports[first + i] for i in range(2)}, log_path)
        finally:
            launcher.send_signal(signal.SIGTERM)
            try:
                launcher.wait(timeout=30)
            except subprocess.TimeoutExpired:
                launcher.kill()
                launcher.wait(timeout=10)
