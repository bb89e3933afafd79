"""The binary chain's closed-form a(b) (docs/math.md §2.2, [C] Example 3) — a cross-check."""

from __future__ import annotations

import math

import numpy as np

from .curve import InfluenceCurve


def _check_probability(name: str, value: float) -> float:
    if not isinstance(value, (int, float, np.integer, np.floating)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a probability between 0 and 1; got {value!r}")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability between 0 and 1; got {value}")
    return float(value)


def binary_chain_curve(p: float, q: float, max_b: int, length: int) -> InfluenceCurve:
    """[C]'s closed form for P = [[p, 1−p], [1−q, q]] with a stationary prior and sequences of ``length`` T.

    ``a(b) = |log((π + λ^dL(1−π)) / (π − λ^dL π))| + |log((π + λ^dR(1−π)) / (π − λ^dR π))|``
    with λ = p + q − 1, dL = ⌊(b+1)/2⌋, dR = ⌈(b+1)/2⌉ and π the smaller stationary mass.
    It is exact when λ > 0 and T ≥ 2b+1, and an upper bound for shorter chains (the middle
    node bounds every node) and for λ < 0 (tested); a(b) = 0 for b ≥ T exactly.

    The length is required: a curve carries the point (T, 0) (group DP over the whole
    sequence), which calibration may pick, so a curve built for a shorter T than the data's
    would under-state the leakage.  :func:`puffer_core.influence_curve` is authoritative (§2.1).
    """
    p = _check_probability("p", p)
    q = _check_probability("q", q)
    if isinstance(max_b, bool) or not isinstance(max_b, (int, np.integer)) or max_b < 1:
        raise ValueError(f"max_b must be a whole number ≥ 1; got {max_b!r}")
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
        raise ValueError(
            f"length must be the number of entries per sequence, a whole number ≥ 1; got {length!r}"
        )
    if p + q >= 2.0:
        raise ValueError("p = q = 1 never leaves its first state: the stationary distribution is not unique")
    lam = p + q - 1.0
    pi0 = (1.0 - q) / (2.0 - p - q)
    pi1 = (1.0 - p) / (2.0 - p - q)
    pi = pi0 if q > p else pi1

    def term(d: int) -> float:
        ld = lam**d
        num = pi + ld * (1.0 - pi)
        den = pi - ld * pi
        if den <= 0.0 or num <= 0.0:
            return math.inf
        return abs(math.log(num / den))

    a = np.array([term((b + 1) // 2) + term(-(-(b + 1) // 2)) if b < length else 0.0 for b in range(1, max_b + 1)])
    return InfluenceCurve(np.arange(1, max_b + 1), a, int(length), "binary chain (closed form)")
