"""What every exported script shares: the prior written as Python, and the script's frame.

The prior's code (app_ui.prior.current.prior_source) is checked against the registry's own builder
(puffer_core.priors.kinds), which shares no code with it: the same matrices, initial distribution,
length and labels, or the same Gaussian process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import puffer_core
from app_ui.core.report import python_script
from app_ui.prior.current import parameters_of, prior_source
from puffer_core import GaussianProcessPrior, MarkovChainPrior, load_dataset
from puffer_core.priors.kinds import PRIOR_KINDS
from puffer_core.priors.robust import fit_prior_set

ROOT = Path(__file__).resolve().parents[2]

CASES = [
    ("binary", {"p": 0.73, "q": 0.1 + 0.2, "length": 17}),
    ("matrix", {}),
    (
        "matrix",
        {
            "matrix": ((0.5, 0.5, 0.0), (0.2, 0.3, 0.5), (1 / 3, 1 / 3, 1 / 3)),
            "labels": ("a", "b", "c"),
            "initial": (0.2, 0.3, 0.5),
            "length": 9,
        },
    ),
    ("theta", {"theta": ((0.8, 0.7), (0.95, 0.6)), "length": 12}),
    ("gaussian", {"kernel": "exponential", "length_scale": 2.5, "n": 12, "gamma": 3.0, "delta": 0.2}),
]


def _built(code: str, names: str) -> object:
    scope: dict[str, object] = {names: getattr(puffer_core, names)}
    exec(code, scope)  # noqa: S102 - the code the page writes into a script
    return scope["prior"]


def _same(a: object, b: object, ulp: float = 0.0) -> None:
    """The same prior; ``ulp``: how far an entry may move (a chain normalises its rows again when built)."""
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y, ulp)
    elif isinstance(a, MarkovChainPrior):
        assert isinstance(b, MarkovChainPrior)
        assert np.allclose(a.transition, b.transition, rtol=0, atol=ulp) and np.allclose(a.initial, b.initial, 0, ulp)
        assert (a.length, tuple(a.labels), a.stationary_initial) == (b.length, tuple(b.labels), b.stationary_initial)
    else:
        assert isinstance(a, GaussianProcessPrior) and isinstance(b, GaussianProcessPrior)
        assert (a.n, a.length_scale, a.kernel, a.gamma, a.delta) == (b.n, b.length_scale, b.kernel, b.gamma, b.delta)


@pytest.mark.parametrize(("kind", "values"), CASES)
def test_the_prior_in_a_script_is_the_prior_the_page_uses(kind: str, values: dict[str, object]) -> None:
    record = PRIOR_KINDS[kind]
    params = parameters_of(record, values)
    names, code = prior_source(kind, params)
    _same(_built(code, names), record.prior(dict(params)))


def test_a_robust_set_is_written_member_by_member() -> None:
    members = fit_prior_set(load_dataset("checkins"), draws=3, seed=1)
    names, code = prior_source("matrix", parameters_of(PRIOR_KINDS["matrix"], {}), members)
    _same(_built(code, names), list(members), ulp=1e-15)  # each entry written in full: at most one unit apart


def test_a_script_without_puffer_core_says_what_to_do(tmp_path: Path) -> None:
    script = python_script("A title", ["What it prints."], "demo", ["from puffer_core import influence_curve"], "x = 1")
    path = tmp_path / "demo.py"
    path.write_text(script, encoding="utf-8")
    run = subprocess.run([sys.executable, "-I", str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    expected = (
        "puffer_core was not found: install it (python -m pip install <the Pufferfish Lab folder>),"
        " or run this script from the Pufferfish Lab repository's folder"
    )
    assert run.stderr.strip() == expected
    assert script.startswith('"""A title\n\nWhat it prints.\nRun it anywhere once puffer_core is installed')


# --------------------------------------------------------------------------- scripts from templates

TEMPLATES = ("attack", "calibrate", "optimal", "plan", "population", "simulate", "stream", "synthesize")


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_template_runs_as_it_is(name: str, tmp_path: Path) -> None:
    """A template is a script: with its default settings it runs and prints (the pages fill it with theirs)."""
    from app_ui.core.templates import SCRIPTS

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, str(SCRIPTS / f"{name}.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip()


@pytest.mark.parametrize(("kind", "values"), CASES)
def test_filled_scripts_are_clean_python_for_every_kind_of_prior(kind: str, values: dict[str, object]) -> None:
    """ruff checks what a user downloads as it checks the repository (imports sorted and used, lines ≤ 120)."""
    from app_ui.calibrate.settings import CalibrateSettings
    from app_ui.calibrate.views import script as calibrate_script
    from app_ui.core.state import KIND
    from app_ui.plan.exports import script as plan_script
    from app_ui.plan.settings import PlanSettings

    chosen = {KIND.key: kind, **values}
    calibrate = replace(CalibrateSettings.from_values(chosen), eps_puffer=1.5, eps_dp=0.2)
    ledger = (("Jan", "pufferfish_exponential", 0.5),)
    plan = replace(PlanSettings.from_values(chosen), ledger=ledger, ledger_k=3, plan_total=6.0, plan_releases=12)
    assert calibrate.prior.params == plan.prior.params == parameters_of(PRIOR_KINDS[kind], values)
    scripts = {
        "calibrate.py": calibrate_script(calibrate, "a prior", None),
        "plan.py": plan_script(plan, "a prior"),
    }
    for file_name, text in scripts.items():
        check = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--stdin-filename", file_name, "-"],
            input=text,
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
        )
        assert check.returncode == 0, f"{file_name} for {kind}:\n{check.stdout}"


def test_a_fitted_twelve_state_chain_s_script_is_ruff_clean_and_reads_back_exactly() -> None:
    """The chain fitted to the built-in check-ins (12 labelled states, 17-digit entries): Calibrate's and Plan's scripts
    pass ruff (each matrix row wrapped at 120 characters), and the script's MATRIX is the fitted matrix, bit for bit."""
    from app_ui.calibrate.settings import CalibrateSettings
    from app_ui.calibrate.views import script as calibrate_script
    from app_ui.core.state import KIND
    from app_ui.plan.exports import script as plan_script
    from app_ui.plan.settings import PlanSettings
    from tests.support.exported import prior_cases

    kind, values = prior_cases()["fitted"]
    assert len(values["matrix"]) == 12
    chosen = {KIND.key: kind, **values}
    scripts = {
        "calibrate.py": calibrate_script(CalibrateSettings.from_values(chosen), "the fitted check-ins", None),
        "plan.py": plan_script(PlanSettings.from_values(chosen), "the fitted check-ins"),
    }
    for file_name, text in scripts.items():
        assert max(len(line) for line in text.splitlines()) <= 120, file_name
        check = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--stdin-filename", file_name, "-"],
            input=text,
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
        )
        assert check.returncode == 0, f"{file_name} for the fitted chain:\n{check.stdout}"
        lines = text.splitlines()
        start = lines.index("MATRIX = [")
        literal = "\n".join(lines[start: lines.index("]", start) + 1])[len("MATRIX = "):]
        read = np.array(eval(literal), dtype=float)  # noqa: S307  # a literal the test itself cut out
        assert np.array_equal(read, np.array(values["matrix"], dtype=float)), file_name


def test_a_template_refuses_what_it_cannot_fill() -> None:
    from app_ui.core.templates import fill

    with pytest.raises(ValueError, match="assigns no \\['NOT_THERE'\\]"):
        fill("calibrate", values={"NOT_THERE": 1})
    with pytest.raises(ValueError, match="one block '# <nowhere>'"):
        fill("calibrate", blocks={"nowhere": "x = 1"})
    with pytest.raises(ValueError, match="no line for \\['Colour'\\]"):
        fill("calibrate", doc={"Colour": "blue"})
    filled = fill("calibrate", values={"EPS_PUFFER": 0.1 + 0.2}, doc={"Prior": "mine."})
    assert "EPS_PUFFER = 0.30000000000000004  # the Pufferfish guarantee wanted" in filled  # repr: the same float
    assert "\nPrior: mine.\n" in filled
