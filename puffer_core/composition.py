"""Composition of releases and the budget planner (docs/math.md §4, [C] Theorem 6.2)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction

import numpy as np

from .calibration import Calibration, _usable_points
from .curve import InfluenceCurve
from .validation import check_eps


def compose(calibrations: Iterable[Calibration]) -> float:
    """Joint ε_puffer of releases built by §3: max_l a_l + Σ_l (ε_puffer_l − a_l) (docs/math.md §4).

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


def group_dp_cumulative(length: int, eps_dps: Sequence[float]) -> np.ndarray:
    """What group-DP accounting certifies after each release: T·Σ_{l ≤ j} ε_DP_l for j = 1..k.

    A per-entry ε_DP mechanism is T·ε_DP-DP for a whole sequence of ``length`` = T entries by
    group privacy (docs/math.md §1), and group-DP releases add up (docs/math.md §4): the baseline that
    the curve's composition (:func:`cumulative`) is compared with.  Each value is T times the
    exact sum, rounded once, so k equal releases give exactly the float ``k * T * eps_dp``.
    ε_DP = +inf (a release with no noise) is allowed and makes every later total +inf.
    """
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
        raise ValueError(f"length must be a whole number ≥ 1 (the entries in a sequence); got {length!r}")
    if isinstance(eps_dps, (str, bytes)) or not isinstance(eps_dps, Iterable):
        raise ValueError(f"eps_dps must be a sequence of per-release ε_DP values; got {type(eps_dps).__name__}")
    values = list(eps_dps)
    out = np.empty(len(values))
    exact = Fraction(0)
    infinite = False
    for j, eps in enumerate(values):
        if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating)):
            raise ValueError(f"ε_DP of release {j + 1} must be a number; got {eps!r}")
        eps = float(eps)
        if math.isnan(eps) or eps < 0:
            raise ValueError(f"ε_DP of release {j + 1} must be ≥ 0 (+inf is allowed); got {eps}")
        infinite = infinite or math.isinf(eps)
        if not infinite:
            exact += Fraction(eps)
        out[j] = math.inf if infinite else _rounded(int(length) * exact)
    return out


def _rounded(value: Fraction) -> float:
    """The float nearest ``value``; +inf beyond the float range, as float arithmetic would give."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def plan(curve: InfluenceCurve, total_eps_puffer: float, releases: int) -> Calibration:
    """Spend ``total_eps_puffer`` over ``releases`` releases with one common point (a, b).

    ε_DP per release = (E − a(b)) / (k·b), b chosen to maximise it (docs/math.md §4 planner).
    Each release then has ε_puffer = b·ε_DP + a and compose() of the k releases is E.
    """
    total = check_eps("total_eps_puffer", total_eps_puffer)
    if isinstance(releases, bool) or not isinstance(releases, (int, np.integer)) or releases < 1:
        raise ValueError(f"releases must be a whole number ≥ 1; got {releases!r}")
    b, a, _ = _usable_points(curve, total)
    per = (total - a) / (releases * b)
    i = int(np.argmax(per))  # first maximum: smallest b
    eps_dp = float(per[i])
    return Calibration(float(b[i] * eps_dp + a[i]), eps_dp, int(b[i]), float(a[i]), bool(b[i] >= curve.length))
