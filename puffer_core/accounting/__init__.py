"""Accounting: from a curve to ε_DP and back, privacy events and their composition (docs/math.md §3, §4).

- :mod:`.calibration`: ``calibrate`` (ε_puffer → the best b and ε_DP), ``certify`` (ε_DP → ε_puffer), group DP;
- :mod:`.events`: a release's privacy event, as a plain frozen record;
- :mod:`.composition`: the accountant, the ledger and the planner.
"""

from .calibration import Calibration, calibrate, calibration_objective, certify, certify_objective, group_dp
from .composition import (
    Accountant,
    Ledger,
    compose,
    cumulative,
    cumulative_eps_puffer,
    group_dp_cumulative,
    naive_sum,
    plan,
)
from .events import Composition, CurveEvent, MQMEvent, PrivacyEvent

__all__ = [
    "Accountant",
    "Calibration",
    "Composition",
    "CurveEvent",
    "Ledger",
    "MQMEvent",
    "PrivacyEvent",
    "calibrate",
    "calibration_objective",
    "certify",
    "certify_objective",
    "compose",
    "cumulative",
    "cumulative_eps_puffer",
    "group_dp",
    "group_dp_cumulative",
    "naive_sum",
    "plan",
]
