"""Translating ε_DP and ε_puffer through an a(b) curve (docs/math.md §3, [C] Theorem "Translation").

If a mechanism is per-entry ε_DP-DP and (a, b) is a curve point with a < ε_puffer and
ε_DP ≤ (ε_puffer − a)/b, it is ε_puffer-Pufferfish.  The point (length, 0) — group DP over
the whole sequence — is always a candidate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..engine.curve import InfluenceCurve
from ..secrets.values import ALL_SECRETS
from ..secrets.words import protected_words
from ..validation import InvalidParameter, check_eps, check_whole


@dataclass(frozen=True)
class Calibration:
    """A per-entry ε_DP mechanism used at curve point (b, a): ε_puffer = b·ε_DP + a.

    ``group_dp`` is True when the point chosen is (length, 0): group DP over the whole sequence.
    ``secrets`` is what the guarantee protects: the secrets of the curve it came from (docs/math.md §16).
    """

    eps_puffer: float
    eps_dp: float
    b: int
    a: float
    group_dp: bool = False
    secrets: object = ALL_SECRETS

    def __post_init__(self) -> None:
        # a usable point has a(b) < ε_puffer, so all three are finite and ≥ 0; anything else
        # (NaN, ±inf) would make compose() report NaN or a meaningless total
        for name in ("eps_puffer", "eps_dp", "a"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number ≥ 0; got {value}")
        check_whole("b", self.b)

    def describe(self) -> str:
        how = "group DP over the whole sequence" if self.group_dp else f"curve point b = {self.b}"
        chosen = "" if self.secrets == ALL_SECRETS else f"; for the chosen secrets: {protected_words(self.secrets)}"
        return (
            f"ε_puffer = {self.eps_puffer:.4g} from a per-entry ε_DP = {self.eps_dp:.4g} mechanism"
            f" ({how}, a(b) = {self.a:.4g}{chosen})"
        )


def check_curve(curve: object, caller: str) -> InfluenceCurve:
    """An :class:`InfluenceCurve`; anything else (a prior, None) is refused with what to pass instead."""
    if not isinstance(curve, InfluenceCurve):
        raise InvalidParameter(
            f"{caller} takes an InfluenceCurve, the a(b) curve of a prior: curve = influence_curve(prior);"
            f" got {type(curve).__name__}"
        )
    return curve


def _candidates(curve: InfluenceCurve) -> tuple[np.ndarray, np.ndarray]:
    pts = curve.points()
    b = np.array([p[0] for p in pts], dtype=np.int64)
    a = np.array([p[1] for p in pts], dtype=float)
    return b, a


def _calibration_points(curve: InfluenceCurve, eps_puffer: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """b, a(b) and (ε_puffer − a(b)) / b over the points with a(b) < ε_puffer (ε_puffer already checked)."""
    b, a = _candidates(curve)
    usable = a < eps_puffer
    b, a = b[usable], a[usable]
    return b, a, (eps_puffer - a) / b


def usable_points(curve: InfluenceCurve, eps_puffer: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """b, a(b) and (ε_puffer − a(b)) / b over the points with a(b) < ε_puffer (docs/math.md §3).

    ``curve`` and ``eps_puffer`` are already checked; a curve with no such point is refused.
    The calibration (:func:`calibrate`) and the planner (:func:`puffer_core.accounting.composition.plan`)
    both choose among these points.
    """
    b, a, allowed = _calibration_points(curve, eps_puffer)
    if b.size == 0:
        raise ValueError(
            f"no point of the curve has a(b) < ε_puffer = {eps_puffer:g}; a curve must reach a(b) = 0"
            f" at b = length ({curve.length})"
        )
    return b, a, allowed


def _certify_points(curve: InfluenceCurve, eps_dp: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """b, a(b) and b·ε_DP + a(b) over every point (ε_DP already checked)."""
    b, a = _candidates(curve)
    return b, a, b * eps_dp + a


def calibration_objective(curve: InfluenceCurve, eps_puffer: float) -> tuple[np.ndarray, np.ndarray]:
    """The per-entry ε_DP each usable curve point allows: (b, (ε_puffer − a(b)) / b) (docs/math.md §3).

    The points are those of ``curve.points()`` — including (length, 0), group DP over the
    whole sequence — with a(b) < ε_puffer; the others allow no ε_DP and are left out, so every
    value is positive and none is NaN.  ``b`` is increasing.  :func:`calibrate` takes the maximum.
    """
    curve = check_curve(curve, "calibration_objective")
    b, _, allowed = _calibration_points(curve, check_eps("eps_puffer", eps_puffer))
    return b, allowed


def certify_objective(curve: InfluenceCurve, eps_dp: float) -> tuple[np.ndarray, np.ndarray]:
    """The ε_puffer a per-entry ε_DP mechanism gets through each curve point: (b, b·ε_DP + a(b)) (docs/math.md §3).

    Every point of ``curve.points()``, including (length, 0); +inf where a(b) = +inf.
    ``b`` is increasing.  :func:`certify` takes the minimum.
    """
    curve = check_curve(curve, "certify_objective")
    b, _, total = _certify_points(curve, check_eps("eps_dp", eps_dp))
    return b, total


def calibrate(curve: InfluenceCurve, eps_puffer: float) -> Calibration:
    """The largest ε_DP that guarantees ``eps_puffer`` (docs/math.md §3, [C] Algorithm 1).

    ε_DP* = max_b (ε_puffer − a(b)) / b over points with a(b) < ε_puffer, including (length, 0)
    (:func:`calibration_objective`).  Ties go to the smaller b.
    """
    curve = check_curve(curve, "calibrate")
    eps_puffer = check_eps("eps_puffer", eps_puffer)
    b, a, allowed = usable_points(curve, eps_puffer)
    i = int(np.argmax(allowed))  # first maximum: smallest b
    return Calibration(eps_puffer, float(allowed[i]), int(b[i]), float(a[i]), bool(b[i] >= curve.length),
                       curve.secrets)


def certify(curve: InfluenceCurve, eps_dp: float) -> Calibration:
    """The smallest ε_puffer a per-entry ε_DP mechanism gets: min_b (b·ε_DP + a(b)) (docs/math.md §3).

    (:func:`certify_objective`.)  Ties go to the smaller b.
    """
    curve = check_curve(curve, "certify")
    eps_dp = check_eps("eps_dp", eps_dp)
    b, a, total = _certify_points(curve, eps_dp)
    i = int(np.argmin(total))  # first minimum: smallest b
    return Calibration(float(total[i]), eps_dp, int(b[i]), float(a[i]), bool(b[i] >= curve.length),
                       curve.secrets)


def group_dp(curve: InfluenceCurve, eps_puffer: float) -> Calibration:
    """The group-DP baseline: ε_DP = ε_puffer / T_max (docs/math.md §3, §5)."""
    curve = check_curve(curve, "group_dp")
    eps_puffer = check_eps("eps_puffer", eps_puffer)
    return Calibration(eps_puffer, eps_puffer / curve.length, curve.length, 0.0, True, curve.secrets)
