"""The best-possible page's settings: the prior (shared), ε, the yardstick's sequence length, the runs k, and the
state counted and α (shared with the Gaussian noise of :mod:`app_ui.gaussian`).

Declared as Parameters (in every link; ``streamlit_app.py`` registers OPTIMAL_GROUP) and read as one record.
"""

from __future__ import annotations

from dataclasses import dataclass

from app_ui.core.records import SettingsRecord, holds, setting
from app_ui.core.state import ParameterGroup
from app_ui.gaussian.settings import COUNT_STATE, GAUSS_ALPHA
from app_ui.prior.settings import PriorChoice
from puffer_core.priors.codecs import Number, Parameter

OPT_EPS = Parameter("opt_eps", 1.0, "oeps", Number(0.05, 10.0), label="ε_puffer", step=0.1)
OPT_LENGTH = Parameter(
    "opt_length", 10, "olen", Number(1, 100, whole=True), label="Sequence length T (the yardstick's)", step=1,
    help="The chain of your prior over this many entries: the programme grows with T² outputs and pairs.",
)
OPT_RUNS = Parameter("opt_runs", 3, "oruns", Number(1, 6, whole=True), label="Runs k of the optimum", step=1)
OPTIMAL_PARAMETERS: tuple[Parameter, ...] = (OPT_EPS, OPT_LENGTH, OPT_RUNS)
OPTIMAL_GROUP = ParameterGroup("optimal", OPTIMAL_PARAMETERS)  # registered by streamlit_app.py: in every link


@dataclass(frozen=True)
class OptimalSettings(SettingsRecord):
    """What the best-possible page computes from."""

    prior: PriorChoice = holds(PriorChoice)
    eps: float = setting(OPT_EPS)
    length: int = setting(OPT_LENGTH)
    runs: int = setting(OPT_RUNS)
    state: int = setting(COUNT_STATE)
    alpha: float = setting(GAUSS_ALPHA)
