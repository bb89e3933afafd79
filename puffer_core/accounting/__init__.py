"""Accounting: from a curve to ε_DP and back, privacy events and their composition (docs/math.md §3, §4).

- :mod:`.calibration`: ``calibrate`` (ε_puffer → the best b and ε_DP), ``certify`` (ε_DP → ε_puffer), group DP;
- :mod:`.events`: a release's privacy event, as a plain frozen record;
- :mod:`.composition`: the accountant, the ledger and the planner;
- :mod:`.risk`: ε as attacker risk — the largest posterior, the (FPR, TPR) region;
- :mod:`.renyi`: (α, ε)-Rényi Pufferfish — its event, its (ε, δ) conversion and its ledger (docs/math.md §17).

Accuracy first (an error target → the ε each mechanism needs) is :mod:`puffer_core.mechanisms.accuracy`.
"""

from .calibration import Calibration, calibrate, calibration_objective, certify, certify_objective, group_dp
from .composition import (
    Accountant,
    Ledger,
    common_secrets,
    compose,
    cumulative,
    cumulative_eps_puffer,
    group_dp_cumulative,
    naive_sum,
    plan,
)
from .events import Composition, CurveEvent, MQMEvent, PrivacyEvent
from .renyi import RenyiEvent, RenyiLedger, renyi_ledger, renyi_to_approx
from .risk import attacker_table, max_posterior, min_posterior, pair_table, tradeoff_curve

__all__ = [
    "Accountant",
    "Calibration",
    "Composition",
    "CurveEvent",
    "Ledger",
    "MQMEvent",
    "PrivacyEvent",
    "RenyiEvent",
    "RenyiLedger",
    "attacker_table",
    "calibrate",
    "calibration_objective",
    "certify",
    "certify_objective",
    "common_secrets",
    "compose",
    "cumulative",
    "cumulative_eps_puffer",
    "group_dp",
    "group_dp_cumulative",
    "max_posterior",
    "min_posterior",
    "naive_sum",
    "pair_table",
    "plan",
    "renyi_ledger",
    "renyi_to_approx",
    "tradeoff_curve",
]
