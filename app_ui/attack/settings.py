"""The attack page's settings: the release under attack, its ε (and k), the attack's seed and draws.

Declared as Parameters (in the link, checked by their codecs; ``streamlit_app.py`` registers ATTACK_GROUP) and
read as one record (:class:`AttackSettings`) with the prior in use.
"""

from __future__ import annotations

from dataclasses import dataclass

from app_ui.core.records import SettingsRecord, holds, setting
from app_ui.core.state import ParameterGroup
from app_ui.prior.settings import PriorChoice
from app_ui.secrets.settings import SecretsChoice
from puffer_core.priors.codecs import Choice, Number, Parameter
from puffer_core.tightness.releases import RELEASES

ATTACK_RELEASE = Parameter("attack_release", "stream_rr", "arel", Choice(tuple(RELEASES)))
ATTACK_EPS = Parameter("attack_eps", 0.5, "aeps", Number(0.01, 10.0))
ATTACK_K = Parameter("attack_k", 1, "ak", Number(1, 20, whole=True))
ATTACK_SEED = Parameter("attack_seed", 0, "aseed", Number(0, 2**31 - 1, whole=True))
ATTACK_DRAWS = Parameter("attack_draws", 200, "adraws", Number(10, 5_000, whole=True))

ATTACK_PARAMETERS: tuple[Parameter, ...] = (ATTACK_RELEASE, ATTACK_EPS, ATTACK_K, ATTACK_SEED, ATTACK_DRAWS)
ATTACK_GROUP = ParameterGroup("attack", ATTACK_PARAMETERS)  # registered by streamlit_app.py: in every link


@dataclass(frozen=True)
class AttackSettings(SettingsRecord):
    """What the attack page runs: the prior in use (one of the priors it offers), the release, ε, k, seed, draws."""

    prior: PriorChoice = holds(PriorChoice)
    secrets: SecretsChoice = holds(SecretsChoice)  # what is secret for your prior (docs/math.md §16)
    release: str = setting(ATTACK_RELEASE)
    eps: float = setting(ATTACK_EPS)
    k: int = setting(ATTACK_K)
    seed: int = setting(ATTACK_SEED)
    draws: int = setting(ATTACK_DRAWS)
