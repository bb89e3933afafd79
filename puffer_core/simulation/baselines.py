"""Why a published baseline wins or loses here: findings for the mechanisms of docs/math.md §15.

A small table beside :func:`puffer_core.simulation.explain.explain_simulation`, which it extends
with these codes (numbers only; the app chooses the words):

  ``baseline_refused``        a baseline could not run for this prior: ``reason`` (e.g. the
                              influence-matrix translation gives no guarantee on a sticky chain, the
                              exact Wasserstein distance is out of reach for many states);
  ``wasserstein_scale``       per ε_puffer: the noise per count of the Wasserstein mechanism, W/ε,
                              beside MQM's 2σ_max and group DP's 2T/ε when they ran — W is how far one
                              entry can move the user's whole histogram in the best coupling, so it wins
                              where the chain forgets fast relative to ε and loses to MQM's small quilts
                              at large ε (no order between them is proven);
  ``mqm_approx_looser``       per ε_puffer: MQMApprox's σ_max over exact MQM's (≥ 1: the eigen-gap bound
                              is above every exact influence, and near quilts are not bounded at all);
  ``influence_factor``        the influence-matrix factor c (ε_puffer = c·ε_DP) against group DP's T.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..mechanisms.registry import MECHANISMS, Calibrated
from .explain import Finding
from .run import SimulationResult


def _accounting(result: SimulationResult, name: str) -> dict[float, dict[str, Any]]:
    return {
        float(acc.get("eps_puffer_grid", acc.get("eps_puffer"))): acc
        for acc in result.settings.get("accounting", [])
        if acc.get("mechanism") == name
    }


def _number(value: object) -> float:
    return float(value) if value is not None else float("nan")


def _calibrated(kind: Calibrated) -> list[str]:
    """The names of the mechanisms whose record says they are calibrated this way, in registry order."""
    return [name for name, spec in MECHANISMS.items() if spec.calibrated is kind]


def _sigma(first: pd.DataFrame, name: str) -> dict[float, float]:
    return {float(r.eps_puffer): _number(r.sigma_max) for r in first[first["mechanism"] == name].itertuples()}


def baseline_findings(result: SimulationResult) -> list[Finding]:
    """The findings of the module docstring for one simulation (nothing is re-simulated).

    Which mechanism each finding is about is read from the records (:data:`MECHANISMS`): how it is calibrated
    (:class:`~puffer_core.mechanisms.registry.Calibrated`), never its name.
    """
    if not isinstance(result, SimulationResult):
        raise ValueError(f"result must be a SimulationResult from simulate(); got {type(result).__name__}")
    t_max = int(result.settings["t_max"])
    findings = [
        Finding("baseline_refused", None, name, {"reason": reason})
        for name, reason in (result.settings.get("refused") or {}).items()
    ]
    ledger: pd.DataFrame = result.ledger
    first = ledger[ledger["release"] == 1]
    exact = _calibrated(Calibrated.MQM)
    mqm = {name: _sigma(first, name) for name in exact}
    for name in _calibrated(Calibrated.WASSERSTEIN):
        for eps, acc in _accounting(result, name).items():
            w = _number(acc.get("scale"))
            numbers = {"w": w, "noise": w / eps, "group_dp_noise": 2.0 * t_max / eps, "t_max": t_max}
            for other in exact:  # MQM's noise per count: 2σ on the histogram, σ(ε/m) on each of m split counts
                if eps in mqm[other]:
                    split = int(_accounting(result, other)[eps].get("queries", 1)) > 1
                    numbers["mqm_noise"] = mqm[other][eps] if split else 2.0 * mqm[other][eps]
                    break
            findings.append(Finding("wasserstein_scale", eps, name, numbers))
    for name in _calibrated(Calibrated.MQM_APPROX):
        for eps, sigma in _sigma(first, name).items():
            for other in exact:
                if eps in mqm[other] and mqm[other][eps] > 0:
                    numbers = {"ratio": sigma / mqm[other][eps], "sigma": sigma}
                    findings.append(Finding("mqm_approx_looser", eps, name, numbers))
                    break
    for name in _calibrated(Calibrated.INFLUENCE_MATRIX):
        for eps, acc in _accounting(result, name).items():
            factor = _number(acc.get("scale"))
            findings.append(Finding("influence_factor", eps, name, {"factor": factor, "t_max": t_max}))
    return findings
