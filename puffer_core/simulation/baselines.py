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


def baseline_findings(result: SimulationResult) -> list[Finding]:
    """The findings of the module docstring for one simulation (nothing is re-simulated)."""
    if not isinstance(result, SimulationResult):
        raise ValueError(f"result must be a SimulationResult from simulate(); got {type(result).__name__}")
    t_max = int(result.settings["t_max"])
    findings = [
        Finding("baseline_refused", None, name, {"reason": reason})
        for name, reason in (result.settings.get("refused") or {}).items()
    ]
    ledger: pd.DataFrame = result.ledger
    first = ledger[ledger["release"] == 1]
    mqm = {float(r.eps_puffer): _number(r.sigma_max) for r in first[first["mechanism"] == "mqm"].itertuples()}
    rows = first[first["mechanism"] == "mqm_approx"]
    approx = {float(r.eps_puffer): _number(r.sigma_max) for r in rows.itertuples()}
    for eps, acc in _accounting(result, "wasserstein").items():
        w = _number(acc.get("scale"))
        numbers = {"w": w, "noise": w / eps, "group_dp_noise": 2.0 * t_max / eps, "t_max": t_max}
        if eps in mqm:  # MQM's noise per count: 2σ on the histogram, σ(ε/m) on each of m split counts
            split = int(_accounting(result, "mqm")[eps].get("queries", 1)) > 1
            numbers["mqm_noise"] = mqm[eps] if split else 2.0 * mqm[eps]
        findings.append(Finding("wasserstein_scale", eps, "wasserstein", numbers))
    for eps, sigma in approx.items():
        if eps in mqm and mqm[eps] > 0:
            findings.append(
                Finding("mqm_approx_looser", eps, "mqm_approx", {"ratio": sigma / mqm[eps], "sigma": sigma})
            )
    for eps, acc in _accounting(result, "influence_matrix").items():
        factor = _number(acc.get("scale"))
        findings.append(Finding("influence_factor", eps, "influence_matrix", {"factor": factor, "t_max": t_max}))
    return findings
