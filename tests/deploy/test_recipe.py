"""The deployment recipe's files agree with each other (Docker is not run here: deploy/run.sh is what is tested)."""

from __future__ import annotations

import fnmatch
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def _ignored(path: str, patterns: list[str]) -> bool:
    parts = path.split("/")
    for pattern in patterns:
        bare = pattern.removeprefix("**/")
        if fnmatch.fnmatch(path, pattern) or any(fnmatch.fnmatch(part, bare) for part in parts):
            return True
        if path.startswith(pattern.rstrip("/") + "/"):
            return True
    return False


def test_the_image_holds_every_file_the_app_runs_on() -> None:
    patterns = [
        line.strip()
        for line in (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    needed = [
        path
        for path in tracked
        if path.endswith((".py", ".csv", ".svg", ".txt", ".cfg", ".sh", ".toml"))
        and path.split("/")[0] not in {"tests", "benchmarks", "notebooks", ".ci"}
    ]
    assert {"app.py", "deploy/run.sh", "requirements.txt", ".streamlit/config.toml"} <= set(needed)
    assert any(p.startswith("puffer_core/") for p in needed) and any(p.startswith("assets/") for p in needed)
    left_out = [path for path in needed if _ignored(path, patterns)]
    assert not left_out, f"the image would lack {left_out}"
    assert _ignored("tests/test_audit.py", patterns) and _ignored(".git", patterns)


def test_the_image_runs_the_launcher_that_the_tests_run() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "apt-get install -y --no-install-recommends haproxy" in dockerfile
    assert "pip install --no-cache-dir -r requirements.txt" in dockerfile
    assert 'CMD ["bash", "deploy/run.sh"]' in dockerfile
    compose = [line.strip() for line in (DEPLOY / "compose.yaml").read_text().splitlines()]
    assert {"context: ..", "dockerfile: deploy/Dockerfile", '- "${PUFFER_PORT:-8501}:8501"'} <= set(compose)
    assert any(line.startswith("PUFFER_PROCESSES:") for line in compose)


@pytest.mark.parametrize("argument", ["0", "two", "-1"])
def test_the_launcher_refuses_a_bad_process_count(argument: str) -> None:
    done = subprocess.run(["bash", str(DEPLOY / "run.sh"), argument], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "N = number of app processes" in done.stderr and f"got '{argument}'" in done.stderr
