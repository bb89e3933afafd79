"""What releasing a chain's counts costs: sensitivity, calibration through a(b), the noise (docs/math.md §19.2–§19.3).

**One entry** (replace-one, per-entry DP, docs/math.md §1).  Changing X_t of one user moves the transition
into t (t > 1), the transition out of t (t < T) and the first-state count (t = 1): each moves one unit from
one count to another, so the released vector (all transition counts and first-state counts of every group)
changes by at most :data:`ENTRY_L1` = 4 in L1 and √6 in L2 (:data:`ENTRY_L2`: three entries in a row equal to
x, the middle one changed, take two from N[x, x]).  The lengths do not change: they are public.

**A window of h consecutive entries** of one user touches at most h + 1 transitions, or h transitions and the
first state: L1 ≤ 2h + 2, and 2T for a whole sequence of T entries (:func:`block_l1`) — less than the 4h of
group privacy.  Translation ([C] Theorem 2, docs/math.md §3) and composition ([C] Theorem 6.2, §4) bound the
leakage through a high-influence set H by what changing all of H can do to the output; the H of every
a(b) split is such a window (docs/math.md §2.1), so with discrete Laplace noise of scale s on every count

    ε_puffer = min over curve points (b, a(b)) of  c_b / s + a(b),   c_b = 2b + 2 (b < T_max),  c_T_max = 2·T_max,

and the release enters the ledger as a :class:`~puffer_core.synthesis.release.SynthesisEvent`, a
:class:`~puffer_core.accounting.events.CurveEvent` whose calibration holds c_b / (b·s) as its ε_DP (so that
b·ε_DP + a(b) is this ε_puffer and Theorem 6.2 composes it exactly) and whose ``eps_dp`` is the noise's own
per-entry level 4/s (docs/math.md §19.3).

**The noise**: discrete Laplace (two-sided geometric) on the integers, Pr[Z = z] ∝ e^(−|z|/s): OpenDP's sampler
for a real release, numpy's Generator for a reproducible one.  It is (L1/s)-DP for any change of L1 norm L1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..accounting.calibration import Calibration, check_curve
from ..engine.curve import InfluenceCurve
from ..mechanisms.noise import laplace_failure, laplace_scale_for, per_count_failure
from ..validation import check_choice, check_eps, check_positive, check_probability

ENTRY_L1 = 4  # one entry's change: the transitions into and out of it, or the first state and the way out
ENTRY_L2 = math.sqrt(6.0)  # N[x, x] − 2, N[x, y] + 1, N[y, x] + 1
GUARANTEES = ("pufferfish", "group_dp", "user_dp")
GUARANTEE_WORDS = {
    "pufferfish": "Pufferfish: per-entry noise translated through a(b)",
    "group_dp": "group DP: ε_DP = ε_puffer / T_max per entry (the usual baseline)",
    "user_dp": "user-level DP: the whole sequence's L1 sensitivity 2·T_max",
}


def block_l1(h: int, length: int | None = None) -> int:
    """The L1 sensitivity of the released counts to a window of ``h`` consecutive entries of one user.

    2h + 2, or 2h when the window covers a whole sequence of ``length`` = h entries (module docstring).
    """
    if h < 1:
        raise ValueError(f"a window holds at least one entry; got {h}")
    return 2 * h if length is not None and h >= length else 2 * h + 2


def block_costs(curve: InfluenceCurve) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The curve's points (b, a(b)) and the L1 sensitivity c_b of the window H of each (:func:`block_l1`)."""
    points = curve.points()
    b = np.array([p[0] for p in points], dtype=np.int64)
    a = np.array([p[1] for p in points], dtype=float)
    c = np.array([block_l1(int(x), curve.length) for x in b], dtype=float)
    return b, a, c


def _calibration(eps_puffer: float, b: int, a: float, c: float, scale: float, length: int) -> Calibration:
    return Calibration(eps_puffer, c / (b * scale), b, a, b >= length)


def calibrate_scale(curve: InfluenceCurve, eps_puffer: float) -> tuple[Calibration, float]:
    """The largest noise-free share: the smallest scale s with min_b c_b/s + a(b) ≤ ``eps_puffer``.

    1/s = max over points with a(b) < ε_puffer of (ε_puffer − a(b)) / c_b; the point (T_max, 0) always
    qualifies.  Ties go to the smaller b.  Returns the calibration (module docstring) and s.
    """
    curve = check_curve(curve, "calibrate_scale")
    eps = check_eps("eps_puffer", eps_puffer)
    b, a, c = block_costs(curve)
    usable = a < eps
    allowed = np.where(usable, (eps - np.where(usable, a, 0.0)) / c, -np.inf)
    i = int(np.argmax(allowed))
    scale = 1.0 / float(allowed[i])
    return _calibration(eps, int(b[i]), float(a[i]), float(c[i]), scale, curve.length), scale


def certify_scale(curve: InfluenceCurve, scale: float) -> Calibration:
    """The ε_puffer of discrete Laplace noise of ``scale`` on every count: min_b c_b/s + a(b) (module docstring)."""
    curve = check_curve(curve, "certify_scale")
    scale = check_positive("the noise scale", scale)
    b, a, c = block_costs(curve)
    total = c / scale + a
    i = int(np.argmin(total))
    return _calibration(float(total[i]), int(b[i]), float(a[i]), float(c[i]), scale, curve.length)


def baseline_scale(guarantee: str, eps_puffer: float, length: int) -> tuple[Calibration, float]:
    """The scale and calibration of a DP synthesizer the analyst would otherwise use, at ``eps_puffer``.

    ``"group_dp"``: ε_DP = ε / T_max per entry, s = 4/ε_DP (docs/math.md §3's group-DP baseline);
    ``"user_dp"``: the whole sequence of T_max entries at once, s = 2·T_max/ε.
    """
    check_choice("guarantee", guarantee, GUARANTEES[1:])
    eps = check_eps("eps_puffer", eps_puffer)
    if guarantee == "group_dp":
        eps_dp = eps / length
        return Calibration(eps, eps_dp, length, 0.0, True), ENTRY_L1 / eps_dp
    scale = 2.0 * length / eps
    return Calibration(eps, 2.0 / scale, length, 0.0, True), scale


# --- the discrete Laplace law -----------------------------------------------------------------------------------


def noise_ratio(scale: float) -> float:
    """α = e^(−1/s): Pr[Z = z] = (1 − α)/(1 + α)·α^|z|."""
    return math.exp(-1.0 / scale)


def expected_abs_noise(scale: float) -> float:
    """E|Z| = 2α / (1 − α²) for discrete Laplace of ``scale``."""
    alpha = noise_ratio(scale)
    return 2.0 * alpha / -math.expm1(math.log(alpha) * 2.0) if alpha > 0 else 0.0


def noise_variance(scale: float) -> float:
    """Var Z = 2α / (1 − α)² for discrete Laplace of ``scale``."""
    alpha = noise_ratio(scale)
    return 2.0 * alpha / math.expm1(-1.0 / scale) ** 2 if alpha > 0 else 0.0


def scale_for_abs_noise(mean_abs: float) -> float:
    """The scale whose E|Z| is ``mean_abs`` = y: α = (√(1 + y²) − 1)/y (inverts :func:`expected_abs_noise`)."""
    y = check_positive("the mean absolute noise", mean_abs)
    alpha = (math.sqrt(1.0 + y * y) - 1.0) / y
    return -1.0 / math.log(alpha)


@dataclass(frozen=True)
class CountAccuracy:
    """A target accuracy: every released count within ±``alpha`` with probability ≥ 1 − ``beta``.

    ``joint``: ``"each"`` (each count on its own), ``"union"`` or ``"all"`` (all ``counts`` at once, by the union
    bound or exactly), as in :class:`puffer_core.mechanisms.accuracy.CountTarget`.  The noise is discrete Laplace
    on the integers.
    """

    alpha: float
    beta: float = 0.05
    joint: str = "each"

    def __post_init__(self) -> None:
        check_positive("α (the error bound, ± counts)", self.alpha)
        check_probability("β (the failure probability)", self.beta, open_interval=True)
        check_choice("joint", self.joint, ("each", "union", "all"))

    def scale(self, counts: int) -> float:
        """The largest discrete Laplace scale that meets the target for ``counts`` released counts."""
        return laplace_scale_for(self.alpha, per_count_failure(self.beta, counts, self.joint), "integer")

    def failure(self, scale: float) -> float:
        """Pr[one count is off by more than α] at ``scale``."""
        return laplace_failure(self.alpha, scale, "integer")

    def describe(self, counts: int) -> str:
        which = {"each": "each count on its own", "union": f"all {counts:,} counts at once (union bound)",
                 "all": f"all {counts:,} counts at once"}[self.joint]
        return f"counts within ±{self.alpha:g} with probability ≥ {1 - self.beta:g}, {which}"
