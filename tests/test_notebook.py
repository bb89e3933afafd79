"""notebooks/tour.ipynb: stored without outputs, explains each step, and runs top to bottom (nbclient)."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("ipykernel")
pytest.importorskip("ipywidgets")
nbclient = pytest.importorskip("nbclient")

REPO = Path(__file__).resolve().parents[1]
TOUR = REPO / "notebooks" / "tour.ipynb"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def read_tour() -> nbformat.NotebookNode:
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


def test_tour_executes_top_to_bottom(monkeypatch: pytest.MonkeyPatch) -> None:
    # the kernel is a child process: make the repository importable whatever its working directory
    paths = [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    notebook = read_tour()
    client = nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}
    )
    client.execute()  # raises CellExecutionError at the first cell that fails

    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    assert not [out for out in outputs if out.output_type == "stream" and out.name == "stderr"]
    widgets_shown = [out for out in outputs if WIDGET_MIME in out.get("data", {})]
    assert len(widgets_shown) == 2  # the InfluenceExplorer and the CompositionPlanner
