"""The binary chain's closed-form a(b) (docs/math.md §2.2, [C] Example 3) — a cross-check."""

from __future__ import annotations

import math

import numpy as np

from ..priors.models import MAX_LENGTH, check_no_underflow
from ..validation import check_probability, check_whole
from .curve import InfluenceCurve


def _log_ratio(num: float, den: float) -> float:
    """log(num / den) for probabilities, skipping 0/0 (−inf) and giving +inf for positive/0."""
    if num <= 0.0:
        return -math.inf
    if den <= 0.0:
        return math.inf
    return math.log(num) - math.log(den)


def binary_chain_curve(p: float, q: float, max_b: int, length: int) -> InfluenceCurve:
    """[C]'s closed form for P = [[p, 1−p], [1−q, q]] with a stationary prior and sequences of ``length`` T.

    The paper writes, with λ = p + q − 1, dL = ⌊(b+1)/2⌋, dR = ⌈(b+1)/2⌉ and π the smaller
    stationary mass, ``a(b) = |log((π + λ^dL(1−π)) / (π − λ^dL π))| + |log((π + λ^dR(1−π)) / (π − λ^dR π))|``:
    the left and right terms of docs/math.md §2.1 at the balanced split of the middle node.
    Those terms are computed here from P^d itself (a product of non-negative 2×2 matrices, so
    every entry keeps its relative accuracy and a zero stays exactly zero) rather than from
    the differences π − λ^d π, which lose all precision when p or q is 0 or tiny.  The value
    is the paper's when λ > 0 and T ≥ 2b+1, where it is exact; otherwise (λ ≤ 0, zeros,
    shorter chains) the balanced split of the middle node is one admissible split of every
    node, so the value is an upper bound on the exact curve; a(b) = 0 for b ≥ T exactly.

    The length is required: a curve carries the point (T, 0) (group DP over the whole
    sequence), which calibration may pick, so a curve built for a shorter T than the data's
    would under-state the leakage.  :func:`puffer_core.influence_curve` is authoritative (§2.1).
    """
    p = check_probability("p", p)
    q = check_probability("q", q)
    max_b = check_whole("max_b", max_b, 1, MAX_LENGTH)
    length = check_whole("length (the number of entries per sequence)", length, 1, MAX_LENGTH)
    if p + q >= 2.0:
        raise ValueError("p = q = 1 never leaves its first state: the stationary distribution is not unique")
    pi = np.array([1.0 - q, 1.0 - p]) / (2.0 - p - q)  # no subtraction between probabilities
    if np.any(pi == 0.0):  # p or q is 1: one state holds all the mass, so there is no secret pair
        return InfluenceCurve(np.arange(1, max_b + 1), np.zeros(max_b), int(length), "binary chain (closed form)")
    log_pi = np.log(pi)
    step = np.array([[p, 1.0 - p], [1.0 - q, q]])
    n = (min(max_b, length - 1) + 2) // 2 + 1  # the largest distance a balanced split uses
    left = np.zeros((n + 1, 2))  # left[d, x]: pair (x, 1 − x)
    right = np.zeros((n + 1, 2))
    power = np.eye(2)
    structure = np.eye(2, dtype=bool)
    for d in range(1, n + 1):
        power = power @ step
        structure = (structure.astype(float) @ (step > 0)) > 0
        check_no_underflow(power, structure, f"the {d}-step transition matrix")
        for x in (0, 1):
            y = 1 - x
            right[d, x] = max(_log_ratio(power[x, r], power[y, r]) for r in (0, 1))
            h = max(_log_ratio(power[r, x], power[r, y]) for r in (0, 1))
            left[d, x] = h + log_pi[y] - log_pi[x]
    a = np.zeros(max_b)
    for b in range(1, min(max_b, length - 1) + 1):
        d_left, d_right = (b + 1) // 2, b + 1 - (b + 1) // 2
        a[b - 1] = max(0.0, max(left[d_left, x] + right[d_right, x] for x in (0, 1)))
    return InfluenceCurve(np.arange(1, max_b + 1), a, int(length), "binary chain (closed form)")
