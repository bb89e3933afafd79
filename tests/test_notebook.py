"""notebooks/tour.ipynb: stored without outputs, explains each step, and runs top to bottom.

It runs by the README's route — the ``jupyter`` command that
``pip install -r requirements-notebook.txt`` installs (``requirements-dev.txt`` includes it, so
CI has it; locally the Jupyter tests are skipped without it and fail when CI is "true").
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sysconfig
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

# Checked, not imported, when the suite is collected: importing nbformat builds jsonschema's format checkers
# (dozens of grammars, ~4 s of CPU in every pytest process); the tests import it when they run.
for _needed in ("ipykernel", "ipywidgets", "nbclient", "nbformat"):
    if importlib.util.find_spec(_needed) is None:
        pytest.skip(f"{_needed} is not installed (pip install -r requirements-notebook.txt)", allow_module_level=True)

REPO = Path(__file__).resolve().parents[1]
TOUR = REPO / "notebooks" / "tour.ipynb"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
NOTEBOOK_REQUIREMENTS = REPO / "requirements-notebook.txt"
INSTALL_LINE = "python -m pip install -r requirements-notebook.txt"


@functools.cache
def read_tour() -> Any:
    """The stored tour, validated against the notebook format once per process (its schema check takes seconds)."""
    import nbformat

    notebook = nbformat.read(TOUR, as_version=4)
    nbformat.validate(notebook)
    return notebook


def test_tour_is_stored_without_outputs() -> None:
    notebook = read_tour()
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code
    for cell in code:
        assert cell.outputs == []
        assert cell.execution_count is None
    assert notebook.metadata.kernelspec.name == "python3"


def test_tour_explains_every_step_in_markdown() -> None:
    markdown = "\n".join(cell.source for cell in read_tour().cells if cell.cell_type == "markdown")
    for topic in (
        "Priors",
        "a(b)-influence curve",
        "Closed form versus the exact algorithm",
        "Calibration",
        "Certify",
        "privacy collapse",
        "Theorem 6.2",
        "Planning a budget",
        "Gaussian-process prior",
        "InfluenceExplorer",
        "CompositionPlanner",
    ):
        assert topic in markdown, topic


def pins(path: Path) -> dict[str, str]:
    """name → version of the ``name==version`` lines of a requirements file."""
    found = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", path.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {name.lower(): version for name, version in found}


def test_the_readme_installs_what_the_notebook_needs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert INSTALL_LINE in readme and "jupyter lab notebooks/tour.ipynb" in readme
    assert "jupyter nbconvert --to notebook --execute notebooks/tour.ipynb" in readme  # what the test runs
    assert "-r requirements-notebook.txt" in (REPO / "requirements-dev.txt").read_text(encoding="utf-8")
    notebook = NOTEBOOK_REQUIREMENTS.read_text(encoding="utf-8")
    assert "-r requirements.txt" in notebook and "-r requirements-widgets.txt" in notebook
    assert {"jupyterlab", "nbconvert", "ipykernel"} <= set(pins(NOTEBOOK_REQUIREMENTS))


def _jupyter() -> str:
    """The ``jupyter`` command of this interpreter's environment (what a venv's pip install put there)."""
    if importlib.util.find_spec("jupyterlab") is None or importlib.util.find_spec("nbconvert") is None:
        reason = f"Jupyter is not installed ({INSTALL_LINE})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"the notebook route cannot be tested in CI: {reason}")
        pytest.skip(reason)
    local = Path(sysconfig.get_path("scripts")) / ("jupyter.exe" if os.name == "nt" else "jupyter")
    command = str(local) if local.exists() else shutil.which("jupyter")
    assert command, "jupyterlab is installed but there is no `jupyter` command on PATH"
    return command


def _run(*args: str, **kwargs: object) -> subprocess.CompletedProcess:
    return subprocess.run([_jupyter(), *args], capture_output=True, text=True, timeout=300, **kwargs)


def test_jupyter_lab_and_a_python_kernel_are_installed() -> None:
    wanted = pins(NOTEBOOK_REQUIREMENTS)
    version = _run("lab", "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == wanted["jupyterlab"] == metadata.version("jupyterlab")
    assert metadata.version("nbconvert") == wanted["nbconvert"]
    specs = _run("kernelspec", "list", "--json")
    assert specs.returncode == 0, specs.stderr
    assert "python3" in json.loads(specs.stdout)["kernelspecs"]


@pytest.fixture(scope="module")
def executed_by_jupyter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's `jupyter nbconvert --to notebook --execute notebooks/tour.ipynb`, run from the
    repository root with nothing else set up (the tour's first cell finds the library)."""
    out = tmp_path_factory.mktemp("tour")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = _run(
        "nbconvert", "--to", "notebook", "--execute", "notebooks/tour.ipynb",
        "--ExecutePreprocessor.timeout=300", "--output-dir", str(out), "--output", "tour-executed",
        cwd=REPO, env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out / "tour-executed.ipynb"


def test_jupyter_runs_the_tour(executed_by_jupyter: Path) -> None:
    import nbformat

    notebook = nbformat.read(executed_by_jupyter, as_version=4)
    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    assert not [out for out in outputs if out.output_type == "stream" and out.name == "stderr"]
    assert len([out for out in outputs if WIDGET_MIME in out.get("data", {})]) == 2  # the explorer and the planner
    assert all(cell.execution_count for cell in notebook.cells if cell.cell_type == "code")


def test_the_executed_tour_does_not_embed_plotly_js(executed_by_jupyter: Path) -> None:
    """Figures are stored as plotly JSON (tens of kB), never with a copy of plotly.js (~5 MB each)."""
    text = executed_by_jupyter.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) < 1_000_000
    assert "plotly.js v" not in text and "_esm" not in text
    state = json.loads(text)["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    plots = [m for m in state.values() if m["model_name"] == "OutputModel"]
    assert len(plots) == 2  # the explorer's a(b) figure and the planner's ledger figure
    for model in plots:
        (shown,) = model["state"]["outputs"]
        assert "application/vnd.plotly.v1+json" in shown["data"]
