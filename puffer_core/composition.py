"""Composition of releases and the budget planner (MATH.md §4, [C] Theorem 6.2)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .calibration import Calibration, _check_eps
from .influence import InfluenceCurve


def compose(calibrations: Iterable[Calibration]) -> float:
    """Joint ε_puffer of releases built by §3: max_l a_l + Σ_l (ε_puffer_l − a_l) (MATH.md §4).

    Each release's ε_puffer_l − a_l equals b_l·ε_DP_l when it was calibrated exactly; the
    larger of the two is used so a hand-made Calibration can never understate the total.
    """
    cals = list(calibrations)
    if not cals:
        return 0.0
    for c in cals:
        if not isinstance(c, Calibration):
            raise ValueError(f"compose takes Calibration objects; got {type(c).__name__}")
    a = np.array([c.a for c in cals])
    spend = np.array([max(c.eps_puffer - c.a, c.b * c.eps_dp) for c in cals])
    return float(a.max() + spend.sum())


def naive_sum(calibrations: Iterable[Calibration]) -> float:
    """Σ ε_puffer_l: what a user who adds up the releases would report."""
    return float(sum(c.eps_puffer for c in calibrations))


def cumulative(calibrations: Iterable[Calibration]) -> np.ndarray:
    """compose() of the first l releases, for l = 1..k (the ledger's running total)."""
    cals = list(calibrations)
    return np.array([compose(cals[: i + 1]) for i in range(len(cals))])


def plan(curve: InfluenceCurve, total_eps_puffer: float, releases: int) -> Calibration:
    """Spend ``total_eps_puffer`` over ``releases`` releases with one common point (a, b).

    ε_DP per release = (E − a(b)) / (k·b), b chosen to maximise it (MATH.md §4 planner).
    Each release then has ε_puffer = b·ε_DP + a and compose() of the k releases is E.
    """
    total = _check_eps("total_eps_puffer", total_eps_puffer)
    if isinstance(releases, bool) or not isinstance(releases, (int, np.integer)) or releases < 1:
        raise ValueError(f"releases must be a whole number ≥ 1; got {releases!r}")
    pts = curve.points()
    b = np.array([p[0] for p in pts], dtype=float)
    a = np.array([p[1] for p in pts], dtype=float)
    ok = a < total
    per = np.where(ok, (total - np.where(ok, a, 0.0)) / (releases * b), -np.inf)
    i = int(np.argmax(per))
    eps_dp = float(per[i])
    return Calibration(float(b[i] * eps_dp + a[i]), eps_dp, int(b[i]), float(a[i]), bool(b[i] >= curve.length))
