"""Shared checks at the library's boundary, with one message style.

Every public function validates what it is given with these helpers, so a student sees the
same words everywhere: what is wrong, what was found, and what to pass instead.
"""

from __future__ import annotations

import math

import numpy as np


def check_eps(name: str, value: object, allow_zero: bool = False) -> float:
    """A finite, positive privacy parameter (ε); 0 too when ``allow_zero``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number; got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be positive; got {value}")
    return value


def check_whole(name: str, value: object, minimum: int = 1) -> int:
    """A whole number ≥ ``minimum`` (bools are refused: ``True`` is not a count)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be a whole number ≥ {minimum}; got {value!r}")
    return int(value)


def check_rng(rng: object) -> np.random.Generator:
    """A numpy random Generator (never the global numpy state)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError("pass a numpy random Generator, e.g. numpy.random.default_rng(0)")
    return rng
