"""Translating ε_DP and ε_puffer through an a(b) curve (MATH.md §3, [C] Theorem "Translation").

If a mechanism is per-entry ε_DP-DP and (a, b) is a curve point with a < ε_puffer and
ε_DP ≤ (ε_puffer − a)/b, it is ε_puffer-Pufferfish.  The point (length, 0) — group DP over
the whole sequence — is always a candidate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .influence import InfluenceCurve


@dataclass(frozen=True)
class Calibration:
    """A per-entry ε_DP mechanism used at curve point (b, a): ε_puffer = b·ε_DP + a.

    ``group_dp`` is True when the point chosen is (length, 0): group DP over the whole sequence.
    """

    eps_puffer: float
    eps_dp: float
    b: int
    a: float
    group_dp: bool = False

    def __post_init__(self) -> None:
        for name in ("eps_puffer", "eps_dp", "a"):
            if math.isnan(getattr(self, name)):
                raise ValueError(f"{name} cannot be NaN")

    def describe(self) -> str:
        how = "group DP over the whole sequence" if self.group_dp else f"curve point b = {self.b}"
        return (
            f"ε_puffer = {self.eps_puffer:.4g} from a per-entry ε_DP = {self.eps_dp:.4g} mechanism"
            f" ({how}, a(b) = {self.a:.4g})"
        )


def _check_eps(name: str, value: float, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number; got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be positive; got {value}")
    return value


def _candidates(curve: InfluenceCurve) -> tuple[np.ndarray, np.ndarray]:
    pts = curve.points()
    b = np.array([p[0] for p in pts], dtype=float)
    a = np.array([p[1] for p in pts], dtype=float)
    return b, a


def calibrate(curve: InfluenceCurve, eps_puffer: float) -> Calibration:
    """The largest ε_DP that guarantees ``eps_puffer`` (MATH.md §3, [C] Algorithm 1).

    ε_DP* = max_b (ε_puffer − a(b)) / b over points with a(b) < ε_puffer, including (length, 0).
    Ties go to the smaller b.
    """
    eps_puffer = _check_eps("eps_puffer", eps_puffer)
    b, a = _candidates(curve)
    ok = a < eps_puffer
    with np.errstate(invalid="ignore"):
        slope = np.where(ok, (eps_puffer - np.where(ok, a, 0.0)) / b, -np.inf)
    i = int(np.argmax(slope))  # first maximum: smallest b
    return Calibration(eps_puffer, float(slope[i]), int(b[i]), float(a[i]), bool(b[i] >= curve.length))


def certify(curve: InfluenceCurve, eps_dp: float) -> Calibration:
    """The smallest ε_puffer a per-entry ε_DP mechanism gets: min_b (b·ε_DP + a(b)) (MATH.md §3)."""
    eps_dp = _check_eps("eps_dp", eps_dp)
    b, a = _candidates(curve)
    total = b * eps_dp + a
    i = int(np.argmin(total))
    return Calibration(float(total[i]), eps_dp, int(b[i]), float(a[i]), bool(b[i] >= curve.length))


def group_dp(curve: InfluenceCurve, eps_puffer: float) -> Calibration:
    """The group-DP baseline: ε_DP = ε_puffer / T_max (MATH.md §3, §5)."""
    eps_puffer = _check_eps("eps_puffer", eps_puffer)
    return Calibration(eps_puffer, eps_puffer / curve.length, curve.length, 0.0, True)
