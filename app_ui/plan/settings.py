"""The Plan & compose page's settings: the prior (shared), the planner's total and releases, the ledger and its k."""

from __future__ import annotations

from dataclasses import dataclass

from app_ui.core.records import SettingsRecord, holds, setting
from app_ui.core.state import PLAN_RELEASES, PLAN_TOTAL
from app_ui.gaussian.settings import GaussianChoice
from app_ui.plan.ledger import DEFAULT_LEDGER, LEDGER, LEDGER_K, Row
from app_ui.prior.settings import PriorChoice
from app_ui.secrets.settings import SecretsChoice
from puffer_core.priors.codecs import Parameter


@dataclass(frozen=True)
class PlanSettings(SettingsRecord):
    """What the Plan & compose page computes from, and what its link, report and script carry."""

    prior: PriorChoice = holds(PriorChoice)
    secrets: SecretsChoice = holds(SecretsChoice)
    plan_total: float = setting(PLAN_TOTAL)
    plan_releases: int = setting(PLAN_RELEASES)
    ledger_k: int = setting(LEDGER_K)
    ledger: tuple[Row, ...] = setting(LEDGER)
    gaussian: GaussianChoice = holds(GaussianChoice)  # releases of one count with Gaussian noise (Rényi), when on

    def link(self) -> tuple[Parameter, ...]:
        """The default ledger stays out of the link (it is what a link without one opens)."""
        shared = super().link()
        return shared if self.ledger != DEFAULT_LEDGER else tuple(p for p in shared if p is not LEDGER)
