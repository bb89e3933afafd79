"""The Calibrate page's settings: the prior (shared), the target ε_puffer, the ε_DP to certify, the b axis."""

from __future__ import annotations

from dataclasses import dataclass

from app_ui.calibrate.accuracy_link import AccuracyTargetChoice
from app_ui.core.records import SettingsRecord, holds, setting
from app_ui.core.state import B_AXIS, EPS_DP, EPS_PUFFER
from app_ui.gaussian.settings import GaussianChoice
from app_ui.population.settings import PopulationChoice
from app_ui.prior.settings import PriorChoice
from app_ui.secrets.settings import SecretsChoice


@dataclass(frozen=True)
class CalibrateSettings(SettingsRecord):
    """What the Calibrate page computes from, and what its link, report and script carry."""

    prior: PriorChoice = holds(PriorChoice)
    secrets: SecretsChoice = holds(SecretsChoice)
    eps_puffer: float = setting(EPS_PUFFER)
    eps_dp: float = setting(EPS_DP)
    b_axis: str = setting(B_AXIS)
    gaussian: GaussianChoice = holds(GaussianChoice)  # Gaussian noise (Rényi Pufferfish), when shown
    accuracy: AccuracyTargetChoice = holds(AccuracyTargetChoice)  # the accuracy-first tab's target
    population: PopulationChoice = holds(PopulationChoice)  # the whole-population view (docs/math.md §16)
