"""A classroom on one server: many browser sessions clicking at once, timed at the server.

Each simulated student is a client speaking Streamlit's browser protocol (tests/support/streamlit_ws.py:
the websocket /_stcore/stream, BackMsg/ForwardMsg protobufs), so the browsers' own CPU is not
counted: a click is timed from sending the rerun to receiving ``script_finished``.  A first
page load is timed from the health check (which sets the cookies) through the websocket to the
end of the first script run; the browser's download of Streamlit's JavaScript is not included.
Every rerun is checked: no exception, no error, and the page shows the value this session just
set and its own scenario setting (never another session's).

One command per table (each starts its own servers on free ports, and stops them):

    python benchmarks/bench_load.py                 # N = 1, 10, 30; distinct/same values; no pause/3 s pause
    python benchmarks/bench_load.py --processes 2   # the same through deploy/run.sh: 2 processes behind HAProxy
    python benchmarks/bench_load.py --scaling       # throughput of 1 vs 2 processes (30 sessions, no pause)
    python benchmarks/bench_load.py --soak 200      # memory: 200 sessions opened and closed in turn
    python benchmarks/bench_load.py --steady 300    # one session, cached reruns: server CPU per rerun
    python benchmarks/bench_load.py --pages 40      # the same on every page (each in the state named below)
    python benchmarks/bench_load.py --url http://host:8501 --pid 1234   # a server that is already running

``--steady`` prints the server's pid first, so a profiler can be attached while it runs
(e.g. ``py-spy record --pid PID --format raw``).

Columns: p50/p95/max seconds per click (nearest rank); server CPU per rerun = CPU seconds of the
server processes (/proc/<pid>/stat; the proxy included) during the clicks / number of clicks;
server cores = the same CPU seconds / wall seconds; client ms = this script's own CPU per click;
others = cores busy with processes that are neither the server nor this script (/proc/stat),
i.e. the noise from other users of a shared machine; RSS = resident memory of the server
processes after the scenario.  The "same values" scenarios are warmed up first (cache hits).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.servers import free_port, healthy, port_is_free, start_streamlit, stop, wait_for_health  # noqa: E402
from tests.support.streamlit_ws import SIDEBAR, Run, Session  # noqa: E402

# ---------------------------------------------------------------------------- what a student does
# Update this block when pages or widget keys change; nothing below names a page or a widget.
PAGE = "curves"  # url path of the page under load
CLICK = "w_length"  # the widget each click changes: T, the sequence length (a number input)
CLICKS = 5  # clicks per session in every scenario
SETTING = "w_q"  # set once per session before the clicks (untimed): q of the binary chain (a slider)
SHOWN_CLICK = "Sequence length T"  # the metric that must show the session's own T after each click
SHOWN_SETTING = "q = {:g}"  # the sidebar text that must show the session's own q
SOAK_VALUES = 40  # the soak's sessions cycle through this many values of CLICK (so the caches fill, then stop)


def click_value(session: int, click: int, same: bool) -> int:
    """T for this click: the same five values for everyone, or a value no other click uses."""
    return 101 + click if same else 100 + session * CLICKS + click + 1


def setting_value(scenario: int, same: bool) -> float:
    """q for a scenario: the default for "same"; a q of its own otherwise, so its curves are new to the cache."""
    return 0.8 if same else round(0.30 + 0.01 * (scenario % 60), 2)



@dataclass(frozen=True)
class PageCase:
    """A page in a state worth measuring (``setup``: widget settings applied in turn, untimed) and the two
    widget settings a cached rerun alternates between (both computed once before the timing starts)."""

    name: str
    page: str
    query: str = ""
    setup: tuple[dict[str, Any], ...] = ()
    first: dict[str, Any] = field(default_factory=dict)
    second: dict[str, Any] = field(default_factory=dict)


PAGE_CASES: tuple[PageCase, ...] = (
    PageCase("Home", ""),
    PageCase("Influence curves: binary chain, T", "curves", first={"w_length": 101}, second={"w_length": 102}),
    PageCase("Influence curves: 3-state matrix, T", "curves", "prior=matrix", (), {"w_length": 101}, {"w_length": 102}),
    PageCase("Influence curves: Gaussian, ℓ", "curves", "prior=gaussian", first={"w_ell": 1.0}, second={"w_ell": 1.1}),
    PageCase("Calibrate: target ε_puffer", "calibrate", first={"w_eps": 1.0}, second={"w_eps": 1.1}),
    PageCase("Plan & compose: releases k", "plan", first={"w_plan_releases": 12}, second={"w_plan_releases": 13}),
    PageCase(
        "Simulate, results shown: rank",
        "simulate",
        setup=({"w_sim_trials": 50}, {"w_sim_run": True}),
        first={"w_sim_acc": "Acc@1"},
        second={"w_sim_acc": "Acc@2"},
    ),
    PageCase(
        "Synthesize, table drawn: top-k",
        "synthesize",
        setup=({"w_synth_run": True},),
        first={"w_synth_top_k": 3},
        second={"w_synth_top_k": 4},
    ),
    PageCase("Best possible mechanism: ε", "optimal", first={"w_opt_eps": 1.0}, second={"w_opt_eps": 1.1}),
    PageCase("Streams: ε per step", "stream", first={"w_stream_eps": 0.3}, second={"w_stream_eps": 0.35}),
    PageCase(
        "How tight is my bound?, results shown: seed",
        "attack",
        setup=({"w_attack_run": True}, {"w_attack_seed": 1}, {"w_attack_run": True}),
        first={"w_attack_seed": 0},
        second={"w_attack_seed": 1},
    ),
    PageCase("Classroom: ε of the randomized response", "classroom", "", (), {"w_rr_eps": 0.5}, {"w_rr_eps": 0.55}),
    PageCase("About the math (a rerun)", "about"),
    PageCase("Guided: publish your data (a rerun)", "analyst"),
    PageCase("Guided: a lesson, p", "lesson", first={"w_lesson_p": 0.9}, second={"w_lesson_p": 0.91}),
)

# ---------------------------------------------------------------------------- servers under test

HZ = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def rss_mb(pid: int, field_name: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1]) / 1024
    return math.nan


def machine_busy_seconds() -> float:
    """CPU seconds spent by all processes of the machine so far (/proc/stat, all but idle and iowait)."""
    values = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(values[:8]) - values[3] - values[4]) / HZ


def _children(pid: int) -> list[tuple[int, str]]:
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append((int(entry.name), cmdline))
    return out


@dataclass
class Servers:
    """The server processes under test: their URL, the pids whose CPU and memory count."""

    url: str
    pids: list[int]
    label: str
    _stop: list = field(default_factory=list)
    processes: list[str] = field(default_factory=list)  # each app process's own URL (to warm them up)

    def cpu(self) -> float:
        return sum(cpu_seconds(p) for p in self.pids)

    def rss(self, field_name: str = "VmRSS") -> float:
        return sum(rss_mb(p, field_name) for p in self.pids)

    def close(self) -> None:
        for action in self._stop:
            action()


def one_process(env: dict[str, str]) -> Servers:
    """`streamlit run app.py` on a free port, as the end-to-end tests start it."""
    port = free_port()
    log = open(os.devnull, "wb")
    process = start_streamlit(port, log, env)
    url = f"http://127.0.0.1:{port}"
    wait_for_health(url, process)
    return Servers(url, [process.pid], "1 process (streamlit run app.py)", [lambda: stop(process), log.close], [url])


def behind_proxy(count: int, env: dict[str, str]) -> Servers:
    """deploy/run.sh ``count``: that many app processes behind HAProxy, on free ports."""
    proxy_port = free_port()
    app_ports = [free_port() for _ in range(count)]
    first = min(app_ports)  # run.sh uses consecutive ports from the first: find a free run of them
    while not all(port_is_free(first + i) for i in range(count)):
        first += count
    environment = {
        **os.environ,
        **env,
        "PUFFER_PORT": str(proxy_port),
        "PUFFER_APP_PORT": str(first),
        "PUFFER_BIND": "127.0.0.1",
        "PYTHON": sys.executable,
    }
    log = open(os.devnull, "wb")
    launcher = subprocess.Popen(
        ["bash", str(ROOT / "deploy" / "run.sh"), str(count)], env=environment, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{proxy_port}"
    deadline = time.monotonic() + 120
    pids: list[int] = []
    while time.monotonic() < deadline:
        if launcher.poll() is not None:
            raise RuntimeError(f"deploy/run.sh exited with status {launcher.returncode}")
        children = _children(launcher.pid)
        pids = [p for p, cmd in children if "streamlit run" in cmd or cmd.startswith("haproxy")]
        if any(cmd.startswith("haproxy") for _, cmd in children) and healthy(url):
            break
        time.sleep(0.2)
    else:
        launcher.send_signal(signal.SIGTERM)
        raise RuntimeError("deploy/run.sh did not become ready within 120 s")

    def _stop() -> None:
        launcher.send_signal(signal.SIGTERM)
        launcher.wait(timeout=30)
        log.close()

    label = f"{count} processes behind HAProxy (deploy/run.sh {count})"
    return Servers(url, pids, label, [_stop], [f"http://127.0.0.1:{first + i}" for i in range(count)])


# ---------------------------------------------------------------------------- scenarios


@dataclass
class Result:
    name: str
    sessions: int
    times: list[float]
    wall: float
    server_cpu: float
    client_cpu: float
    others: float
    rss: float
    wrong: list[str]

    def row(self) -> str:
        t = sorted(self.times)
        n = len(t)

        def pct(p: float) -> float:
            return t[max(0, math.ceil(p * n) - 1)]

        cores = self.server_cpu / self.wall if self.wall > 0 else math.nan
        return (
            f"| {self.name} | {self.sessions} | {n} | {pct(0.5):.2f} | {pct(0.95):.2f} | {t[-1]:.2f} |"
            f" {1000 * self.server_cpu / n:.0f} | {cores:.2f} | {1000 * self.client_cpu / n:.1f} |"
            f" {self.others / self.wall if self.wall > 0 else math.nan:.2f} | {self.rss:.0f} | {len(self.wrong)} |"
        )


HEADER = (
    "| scenario | sessions | runs | p50 s | p95 s | max s | server CPU/run ms | server cores |"
    " client CPU/run ms | others' cores | server RSS MB | wrong |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def check(run: Run, clicked: int | None, q: float | None) -> list[str]:
    """What is wrong with a run: exceptions, errors, or values that are not this session's."""
    wrong = [f"exception: {e}" for e in run.exceptions] + [f"error: {e}" for e in run.errors]
    if clicked is not None and run.metrics().get(SHOWN_CLICK) != str(clicked):
        wrong.append(f"{SHOWN_CLICK} shows {run.metrics().get(SHOWN_CLICK)!r}, not {clicked}")
    if q is not None and not any(SHOWN_SETTING.format(q) in text for text in run.texts(SIDEBAR)):
        wrong.append(f"the sidebar does not show {SHOWN_SETTING.format(q)!r}: {run.texts(SIDEBAR)}")
    return wrong


class Meter:
    """CPU of the server, of this client and of everybody else, between start() and stop()."""

    def __init__(self, servers: Servers) -> None:
        self.servers = servers

    def start(self) -> None:
        self.t0, self.s0 = time.perf_counter(), self.servers.cpu()
        self.c0, self.m0 = time.process_time(), machine_busy_seconds()

    def stop(self) -> tuple[float, float, float, float]:
        wall = time.perf_counter() - self.t0
        server = self.servers.cpu() - self.s0
        client = time.process_time() - self.c0
        others = max(0.0, machine_busy_seconds() - self.m0 - server - client)
        return wall, server, client, others


async def first_load(servers: Servers, count: int) -> Result:
    meter = Meter(servers)
    sessions = [Session(servers.url, PAGE) for _ in range(count)]
    meter.start()
    runs = await asyncio.gather(*(s.open() for s in sessions))
    wall, server, client, others = meter.stop()
    await asyncio.gather(*(s.close() for s in sessions))
    wrong = [w for r in runs for w in check(r, None, None)]
    times = [r.seconds for r in runs]
    return Result("first page load", count, times, wall, server, client, others, servers.rss(), wrong)


async def clicks(servers: Servers, count: int, same: bool, pause: float, scenario: int) -> Result:
    q = setting_value(scenario, same)
    if same:  # warm the cache: every value the sessions will set is computed once, untimed
        async with Session(servers.url, PAGE) as warm:
            await warm.rerun({SETTING: q})
            for click in range(CLICKS):
                await warm.rerun({CLICK: click_value(0, click, True)})
    sessions = [Session(servers.url, PAGE) for _ in range(count)]
    await asyncio.gather(*(s.open() for s in sessions))
    setup = await asyncio.gather(*(s.rerun({SETTING: q}) for s in sessions))
    wrong = [w for r in setup for w in check(r, None, q)]
    times: list[float] = []

    async def student(index: int, session: Session) -> None:
        if pause:
            await asyncio.sleep(pause * index / count)  # a real class does not click in lockstep
        for click in range(CLICKS):
            value = click_value(index, click, same)
            run = await session.rerun({CLICK: value})
            times.append(run.seconds)
            wrong.extend(check(run, value, q))
            if pause and click < CLICKS - 1:
                await asyncio.sleep(pause)

    meter = Meter(servers)
    meter.start()
    await asyncio.gather(*(student(i, s) for i, s in enumerate(sessions)))
    wall, server, client, others = meter.stop()
    await asyncio.gather(*(s.close() for s in sessions))
    name = "same values (cache hits)" if same else "distinct values"
    name += f", {pause:g} s pause" if pause else ", no pause"
    return Result(name, count, times, wall, server, client, others, servers.rss(), wrong)


async def warm_up(servers: Servers) -> None:
    """The first script run of a fresh process imports the app (about a second): not a student's load."""
    for url in servers.processes or [servers.url]:
        async with Session(url, PAGE):
            pass


async def table(servers: Servers, sizes: Sequence[int], pauses: Sequence[float], scenario0: int = 0) -> list[Result]:
    await warm_up(servers)
    results = []
    for count in (1, max(sizes)):
        results.append(await first_load(servers, count))
        print(results[-1].row(), flush=True)
    scenario = scenario0
    for pause in pauses:
        for count in sizes:
            for same in (False, True):
                results.append(await clicks(servers, count, same, pause, scenario))
                scenario += 1
                print(results[-1].row(), flush=True)
    return results


async def soak(servers: Servers, count: int, settle: float) -> None:
    """Sessions opened, clicked once and closed, one after the other.

    The clicks cycle through SOAK_VALUES values: the first sessions fill the app's caches (bounded),
    the later ones show whether memory keeps growing.  Streamlit keeps a closed session's state
    for reconnection (at most 128 sessions, 2 minutes: ``server.disconnectedSessionTTL``);
    ``settle`` waits past that.
    """
    await warm_up(servers)
    print("| moment | server RSS MB | peak RSS MB |\n|---|---:|---:|")
    print(f"| after one session (warm) | {servers.rss():.0f} | {servers.rss('VmHWM'):.0f} |", flush=True)
    start = time.perf_counter()
    wrong = []
    for i in range(count):
        async with Session(servers.url, PAGE) as session:
            value = click_value(i % SOAK_VALUES, 0, False)
            wrong += check(await session.rerun({CLICK: value}), value, None)
        if (i + 1) % max(1, count // 4) == 0 or i + 1 == count:
            print(f"| after {i + 1} sessions | {servers.rss():.0f} | {servers.rss('VmHWM'):.0f} |", flush=True)
    if settle > 0:
        await asyncio.sleep(settle)
        async with Session(servers.url, PAGE):  # storing a closed session expires the stale ones
            pass
        print(f"| {settle:.0f} s later, after one more session | {servers.rss():.0f} | {servers.rss('VmHWM'):.0f} |")
    print(
        f"\n{count} sessions opened, clicked once ({SOAK_VALUES} values in turn) and closed, one after the other,"
        f" in {time.perf_counter() - start:.0f} s; wrong: {len(wrong)}"
    )
    for w in wrong[:5]:
        print("  ", w)


async def steady(servers: Servers, count: int) -> None:
    """One session alternating between two cached values: the server's own cost of a rerun."""
    print(f"server pids: {' '.join(map(str, servers.pids))}", flush=True)
    async with Session(servers.url, PAGE) as session:
        for click in range(2):
            await session.rerun({CLICK: click_value(0, click, True)})
        meter = Meter(servers)
        meter.start()
        times, wrong = [], []
        for i in range(count):
            value = click_value(0, i % 2, True)
            run = await session.rerun({CLICK: value})
            times.append(run.seconds)
            wrong += check(run, value, None)
        wall, server, client, others = meter.stop()
    times.sort()
    print("| cached reruns | median s | server CPU/rerun ms | client CPU/rerun ms | others' cores | wrong |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {count} | {times[len(times) // 2]:.3f} | {1000 * server / count:.1f} | {1000 * client / count:.1f} |"
        f" {others / wall:.2f} | {len(wrong)} |"
    )


async def pages(servers: Servers, count: int, cases: Sequence[PageCase]) -> None:
    """Every page in its state: one session each, ``count`` reruns alternating between two cached settings."""
    await warm_up(servers)
    print(
        "| page: what changes | reruns | median s | server CPU/rerun ms | fragment | kB sent/rerun |"
        " client CPU/rerun ms | others' cores | wrong |\n|---|---:|---:|---:|---|---:|---:|---:|---:|"
    )
    for case in cases:
        async with Session(servers.url, case.page, case.query) as session:
            wrong: list[str] = []
            for values in case.setup:
                wrong += check(await session.rerun(values), None, None)
            for _ in range(2):  # both settings computed once: the timed reruns are cache hits
                for values in (case.first, case.second):
                    wrong += check(await session.rerun(values), None, None)
            meter = Meter(servers)
            meter.start()
            times, sent, fragment = [], 0, False
            for i in range(count):
                run = await session.rerun(case.first if i % 2 == 0 else case.second)
                times.append(run.seconds)
                sent += run.received
                fragment |= run.fragment_only
                wrong += check(run, None, None)
            wall, server, client, others = meter.stop()
        times.sort()
        print(
            f"| {case.name} | {count} | {times[len(times) // 2]:.3f} | {1000 * server / count:.1f} |"
            f" {'yes' if fragment else 'no'} | {sent / count / 1000:.0f} | {1000 * client / count:.1f} |"
            f" {others / wall:.2f} | {len(wrong)} |",
            flush=True,
        )
        for w in wrong[:3]:
            print("  ", w)


async def scaling(counts: Sequence[int], env: dict[str, str], rounds: int) -> None:
    print(
        "| processes | round | distinct: clicks/s | p50 s | p95 s | same: clicks/s | p50 s | p95 s |"
        " server cores | others' cores | wrong |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    rates: dict[int, list[tuple[float, float]]] = {c: [] for c in counts}
    scenario = 0
    for r in range(rounds):
        for count in counts if r % 2 == 0 else list(reversed(counts)):
            servers = behind_proxy(count, env)
            try:
                await warm_up(servers)
                distinct = await clicks(servers, 30, False, 0.0, scenario)
                same = await clicks(servers, 30, True, 0.0, scenario + 1)
                scenario += 2
            finally:
                servers.close()
            rate = [len(x.times) / x.wall for x in (distinct, same)]
            rates[count].append((rate[0], rate[1]))

            def p(x: Result, q: float) -> float:
                t = sorted(x.times)
                return t[max(0, math.ceil(q * len(t)) - 1)]

            wall = distinct.wall + same.wall
            cores, others = (distinct.server_cpu + same.server_cpu) / wall, (distinct.others + same.others) / wall
            print(
                f"| {count} | {r + 1} | {rate[0]:.1f} | {p(distinct, 0.5):.2f} | {p(distinct, 0.95):.2f} |"
                f" {rate[1]:.1f} | {p(same, 0.5):.2f} | {p(same, 0.95):.2f} | {cores:.2f} | {others:.2f} |"
                f" {len(distinct.wrong) + len(same.wrong)} |",
                flush=True,
            )
    base = counts[0]
    for count in counts[1:]:
        for k, name in ((0, "distinct values"), (1, "same values")):
            ratio = sum(x[k] for x in rates[count]) / sum(x[k] for x in rates[base])
            print(f"\nthroughput {name}, {count} vs {base} processes: × {ratio:.2f}")


def _describe_machine() -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{os.cpu_count()} cores; load average (1, 5, 15 min) {load}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=0, help="app processes behind HAProxy (0: one plain process)")
    parser.add_argument("--url", help="a running server (or proxy) instead of starting one")
    parser.add_argument("--pid", type=int, action="append", default=[], help="with --url: server pids to measure")
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 10, 30], help="session counts")
    parser.add_argument("--pauses", type=float, nargs="+", default=[0.0, 3.0], help="seconds between clicks")
    parser.add_argument("--scaling", action="store_true", help="throughput: 1 vs 2 processes behind HAProxy")
    parser.add_argument("--rounds", type=int, default=1, help="with --scaling: alternate 1, 2, 2, 1 … this many rounds")
    parser.add_argument("--soak", type=int, default=0, help="open and close this many sessions in turn; report RSS")
    parser.add_argument("--settle", type=float, default=0.0, help="with --soak: wait this long, then measure again")
    parser.add_argument("--steady", type=int, default=0, help="one session, this many cached reruns")
    parser.add_argument("--pages", type=int, default=0, help="every page: this many cached reruns each")
    parser.add_argument("--only", nargs="+", default=[], help="with --pages: the cases whose name starts so")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server processes")
    parser.add_argument("--scenario", type=int, default=0, help="first scenario number (new q values for --url)")
    args = parser.parse_args()
    env = dict(item.split("=", 1) for item in args.env)
    print(f"Machine: {_describe_machine()} (shared with other users: see the others' cores column)")
    if args.scaling:
        asyncio.run(scaling([1, 2], env, max(1, args.rounds)))
        print(f"\nMachine after: {_describe_machine()}")
        return 0
    if args.url:
        servers = Servers(args.url, args.pid, f"running server at {args.url}")
    elif args.processes:
        servers = behind_proxy(args.processes, env)
    else:
        servers = one_process(env)
    if not servers.pids:
        print("(no --pid given: server CPU and RSS are not measured)")
    try:
        print(f"Server: {servers.label}; page /{PAGE}, each click sets {CLICK}; env {env or '—'}\n")
        if args.soak:
            asyncio.run(soak(servers, args.soak, args.settle))
        elif args.steady:
            asyncio.run(steady(servers, args.steady))
        elif args.pages:
            cases = [c for c in PAGE_CASES if not args.only or any(c.name.startswith(o) for o in args.only)]
            asyncio.run(pages(servers, args.pages, cases))
        else:
            print(HEADER)
            results = asyncio.run(table(servers, args.sessions, args.pauses, args.scenario))
            wrong = [w for r in results for w in r.wrong]
            checked = sum(len(r.times) for r in results)
            print(f"\n{checked} page loads and clicks checked; wrong: {len(wrong)}")
            for w in wrong[:5]:
                print("  ", w)
    finally:
        servers.close()
    print(f"Machine after: {_describe_machine()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
