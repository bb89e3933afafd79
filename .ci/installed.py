"""What users receive: the wheel, installed with its declared dependencies only, used from outside the repository.

Run by ``.ci/run`` after the test suite (``python .ci/installed.py``).  It builds the wheel, installs it into a
clean virtual environment (no ``requirements*.txt``: a dependency that ``pyproject.toml`` forgets fails here),
and from a folder outside the repository runs

- ``puffer --help`` and every command's help, then each command on a small file, comparing what it prints and
  writes with the same command run from the repository (the library's own numbers);
- the README's library snippet (the ``python`` block that calls ``load_stats``), on event logs written there;
- every exported script of every page (``tests/support/exported.py`` fills the templates with a fitted prior, a
  set Θ and a Gaussian process; a page's own script and its views', e.g. Calibrate's whole-population view),
  comparing each script's printed numbers with the same script run from the repository;
- with the ``app`` extra: the app started from that folder (``streamlit run <repo>/app.py``) answers its health
  check and its home page runs without an exception;
- with the ``notebook`` extra: the guided tour executed headless.

Any difference or failure prints what was run and what it said, and exits with status 1.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FAILURES: list[str] = []


def run(
    cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    print("$", " ".join(str(c) for c in cmd), f"  (in {cwd})", flush=True)
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def must(result: subprocess.CompletedProcess, what: str) -> subprocess.CompletedProcess:
    if result.returncode != 0:
        FAILURES.append(f"{what} failed (exit {result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        print(f"  FAILED: {what}", flush=True)
    return result


def same(expected: str, got: str, what: str) -> None:
    if expected != got:
        diff = "\n".join(
            difflib.unified_diff(expected.splitlines(), got.splitlines(), "repository", "installed", lineterm="", n=1)
        )
        FAILURES.append(f"{what}: the installed package printed other numbers than the repository:\n{diff[:4000]}")
        print(f"  DIFFERS: {what}", flush=True)


def pins_file(folder: Path) -> Path:
    """requirements-dev.txt (and the files it includes) as a pip constraints file: the versions the tests ran
    with, each ``name==version`` line without its extras (a constraints file pins versions, it adds no package,
    and pip refuses extras in it: ``pyspark[connect]==…`` becomes ``pyspark==…``)."""
    lines: list[str] = []

    def read(path: Path) -> None:
        for raw in path.read_text(encoding="utf-8").splitlines():
            line = raw.split("#", 1)[0].strip()
            if line.startswith("-r "):
                read(path.parent / line[3:].strip())
            elif line and not line.startswith("-"):
                lines.append(re.sub(r"\[[^\]]*\]", "", line))

    read(ROOT / "requirements-dev.txt")
    out = folder / "constraints.txt"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def clean_env() -> dict[str, str]:
    """The environment without the repository on PYTHONPATH (the installed package must stand alone)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONHASHSEED"] = "0"
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def readme_snippet() -> str:
    """The README's library snippet: the python block that calls load_stats."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    found = [b for b in blocks if "load_stats(" in b]
    if not found:
        raise SystemExit("the README has no python block calling load_stats: update .ci/installed.py")
    return found[0]


def write_logs(folder: Path) -> Path:
    """Event logs for the snippet and the commands: the built-in check-ins as two Parquet files and one CSV."""
    import pandas as pd

    from puffer_core.data.datasets import get_dataset

    table = pd.read_csv(get_dataset("checkins").path)
    logs = folder / "logs"
    logs.mkdir()
    half = len(table) // 2
    table.iloc[:half].to_parquet(logs / "part-0.parquet", index=False)
    table.iloc[half:].to_parquet(logs / "part-1.parquet", index=False)
    small = table[table[table.columns[0]].isin(table[table.columns[0]].unique()[:60])]
    small.to_csv(folder / "small.csv", index=False)
    return folder / "small.csv"


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="puffer_installed_"))
    try:
        return check(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check(work: Path) -> int:
    dist, venv, outside = work / "dist", work / "venv", work / "elsewhere"
    outside.mkdir()
    must(
        run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist), str(ROOT)], work),
        "building the wheel",
    )
    wheels = sorted(dist.glob("*.whl"))
    if not wheels:
        print("\n".join(FAILURES))
        return 1
    wheel = wheels[0]
    must(run([sys.executable, "-m", "venv", str(venv)], work), "creating a clean virtual environment")
    py = venv / "bin" / "python"
    puffer = venv / "bin" / "puffer"
    env = clean_env()
    # the versions the tests ran with (a constraints file pins versions, it adds no package)
    pins = ["-c", str(pins_file(work))]
    installed = must(
        run(
            [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *pins, str(wheel)],
            outside,
            env,
            timeout=1800,
        ),
        "pip install <wheel> (declared dependencies only)",
    )
    if installed.returncode != 0:  # nothing below can run without the package
        print("\n\n".join(FAILURES))
        return 1

    # the command line
    for args in (["--help"], ["simulate", "--help"], ["prior", "--help"], ["ladder", "--help"]):
        must(run([str(puffer), *args], outside, env), f"puffer {' '.join(args)}")
    small = write_logs(outside)
    user, time_col, state, group = _columns(small)
    commands = {
        "prior": [
            "prior",
            "--data",
            str(small),
            "--user",
            user,
            "--time",
            time_col,
            "--state",
            state,
            "--group",
            group,
            "--out",
            "{out}/transition.csv",
            "--quiet",
        ],
        "simulate": [
            "simulate",
            "--data",
            str(small),
            "--user",
            user,
            "--time",
            time_col,
            "--state",
            state,
            "--group",
            group,
            "--eps",
            "0.5,2",
            "--trials",
            "20",
            "--seed",
            "3",
            "--out",
            "{out}/results.csv",
            "--ledger",
            "{out}/ledger.csv",
            "--quiet",
        ],
        "ladder": [
            "ladder",
            "--matrix",
            "0.9,0.1;0.2,0.8",
            "--length",
            "6",
            "--eps",
            "1",
            "--seed",
            "1",
            "--draws",
            "200",
        ],
    }
    for name, args in commands.items():
        mine, theirs = work / f"repo_{name}", work / f"inst_{name}"
        mine.mkdir()
        theirs.mkdir()
        expected = must(
            run([sys.executable, "-m", "puffer_core", *[a.format(out=mine) for a in args]], ROOT),
            f"python -m puffer_core {name} (repository)",
        )
        got = must(run([str(puffer), *[a.format(out=theirs) for a in args]], outside, env), f"puffer {name}")
        same(expected.stdout.replace(str(mine), "OUT"), got.stdout.replace(str(theirs), "OUT"), f"puffer {name}")
        for file in sorted(mine.iterdir()):
            other = theirs / file.name
            same(
                file.read_text(),
                other.read_text() if other.exists() else "(not written)",
                f"puffer {name}: {file.name}",
            )

    # the README's library snippet, from a folder that holds logs/
    snippet = outside / "snippet.py"
    snippet.write_text(readme_snippet() + "\nprint(prior.transition.round(6).tolist())\nprint(result)\n")
    expected = must(
        run([sys.executable, str(snippet)], outside, {**env, "PYTHONPATH": str(ROOT)}),
        "the README snippet (repository)",
    )
    got = must(run([str(py), str(snippet)], outside, env), "the README snippet (installed)")
    same(expected.stdout, got.stdout, "the README snippet")

    # every exported script of every page
    scripts = work / "scripts"
    scripts.mkdir()
    from tests.support.exported import export_scripts

    for path in export_scripts(scripts):
        expected = must(
            run([sys.executable, str(path)], outside, {**env, "PYTHONPATH": str(ROOT)}),
            f"exported {path.name} (repository)",
        )
        got = must(run([str(py), str(path)], outside, env), f"exported {path.name} (installed)")
        same(expected.stdout, got.stdout, f"exported {path.name}")

    # the app extra: the app from another folder
    must(
        run(
            [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *pins, f"{wheel}[app]"],
            outside,
            env,
            timeout=1800,
        ),
        "pip install <wheel>[app]",
    )
    _check_app(py, outside, env)

    # the notebook extra: the guided tour, headless
    must(
        run(
            [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *pins, f"{wheel}[notebook]"],
            outside,
            env,
            timeout=1800,
        ),
        "pip install <wheel>[notebook]",
    )
    shutil.copy(ROOT / "notebooks" / "tour.ipynb", outside / "tour.ipynb")
    must(
        run(
            [
                str(venv / "bin" / "jupyter"),
                "nbconvert",
                "--to",
                "notebook",
                "--execute",
                "tour.ipynb",
                "--output",
                "tour_run.ipynb",
                "--ExecutePreprocessor.timeout=600",
            ],
            outside,
            env,
            timeout=1200,
        ),
        "the notebook tour (installed, [notebook] extra)",
    )

    if FAILURES:
        print("\n\nWHAT USERS RECEIVE IS BROKEN:\n\n" + "\n\n".join(FAILURES), flush=True)
        return 1
    print(
        "the installed package, its command, the README snippet, every exported script, the app and the tour work"
        " from outside the repository",
        flush=True,
    )
    return 0


def _columns(csv: Path) -> tuple[str, str, str, str]:
    import pandas as pd

    columns = list(pd.read_csv(csv, nrows=1).columns)
    wanted = {"user": None, "time": None, "state": None, "group": None}
    for role, names in {
        "user": ("user", "user_id"),
        "time": ("time", "timestamp", "date"),
        "state": ("state", "category", "venue_category"),
        "group": ("country", "group"),
    }.items():
        wanted[role] = next((c for c in columns if c.lower() in names), None)
    if None in wanted.values():
        raise SystemExit(f"unexpected columns in the check-ins: {columns}")
    return wanted["user"], wanted["time"], wanted["state"], wanted["group"]  # type: ignore[return-value]


def _check_app(py: Path, outside: Path, env: dict[str, str]) -> None:
    port = free_port()
    log = outside / "app.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [
                str(py),
                "-m",
                "streamlit",
                "run",
                str(ROOT / "app.py"),
                "--server.headless",
                "true",
                "--server.port",
                str(port),
                "--browser.gatherUsageStats",
                "false",
            ],
            cwd=outside,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 180
        healthy = False
        while time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as answer:
                    healthy = answer.status == 200
                    break
            except OSError:
                time.sleep(1)
        if not healthy:
            FAILURES.append(
                f"the app (installed, [app] extra) did not answer its health check:\n{log.read_text()[-3000:]}"
            )
            return
    finally:
        server.terminate()
        server.wait(30)
    probe = (
        "from streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({str(ROOT / 'streamlit_app.py')!r}, default_timeout=120).run()\n"
        "assert not at.exception, [e.value for e in at.exception]\n"
        "print('home page ran:', len(at.markdown), 'markdown blocks')\n"
    )
    must(run([str(py), "-c", probe], outside, env), "the app's home page (installed, [app] extra)")


if __name__ == "__main__":
    sys.exit(main())
