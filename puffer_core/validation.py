"""Shared checks at the library's boundary, with one message style.

Every public function validates what it is given with these helpers, so a student sees the
same words everywhere: what is wrong, what was found, and what to pass instead.  ``name``
is how the message names the argument; it may carry a short explanation, e.g.
``"k (how many top states to release)"``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

PROBABILITY_TOLERANCE = 1e-9  # how far from 1 a list of probabilities may sum


def is_whole(value: object) -> bool:
    """True for an integer (Python or numpy); False for bools, floats and everything else."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """True for a real number (Python or numpy int/float); False for bools and everything else."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def check_number(name: str, value: object) -> float:
    """A finite real number."""
    if not is_number(value):
        raise ValueError(f"{name} must be a number; got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite; got {number}")
    return number


def check_eps(name: str, value: object, allow_zero: bool = False) -> float:
    """A finite, positive privacy parameter (ε); 0 too when ``allow_zero``."""
    if not allow_zero:
        return check_positive(name, value)
    value = check_number(name, value)
    if value < 0:
        raise ValueError(f"{name} must be positive or 0; got {value}")
    return value


def check_positive(name: str, value: object) -> float:
    """A finite number > 0 (a sensitivity, a scale, a length scale)."""
    value = check_number(name, value)
    if value <= 0:
        raise ValueError(f"{name} must be positive; got {value}")
    return value


def check_probability(name: str, value: object, open_interval: bool = False) -> float:
    """A probability in [0, 1], or in (0, 1) with ``open_interval``."""
    if not is_number(value):
        raise ValueError(f"{name} must be a probability between 0 and 1; got {value!r}")
    number = float(value)
    if open_interval and not 0.0 < number < 1.0:
        raise ValueError(f"{name} must be a probability strictly between 0 and 1; got {value!r}")
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be a probability between 0 and 1; got {value!r}")
    return number


def check_whole(name: str, value: object, minimum: int = 1, maximum: int | None = None) -> int:
    """A whole number ≥ ``minimum`` (and ≤ ``maximum``); bools are refused: ``True`` is not a count."""
    if maximum is not None:
        if not is_whole(value) or not minimum <= value <= maximum:
            raise ValueError(f"{name} must be between {minimum} and {maximum} (a whole number); got {value!r}")
    elif not is_whole(value) or value < minimum:
        raise ValueError(f"{name} must be a whole number ≥ {minimum}; got {value!r}")
    return int(value)


def check_rng(rng: object) -> np.random.Generator:
    """A numpy random Generator (never the global numpy state)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"rng must be a numpy random Generator, e.g. numpy.random.default_rng(0); got {type(rng).__name__}"
        )
    return rng


def check_choice(name: str, value: object, choices: Iterable[str]) -> str:
    """One of ``choices`` (compared as given: names are case-sensitive)."""
    options = tuple(choices)
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {', '.join(options)}; got {value!r}")
    return value


def check_distribution(values: object, what: str, tolerance: float = PROBABILITY_TOLERANCE) -> np.ndarray:
    """Probabilities that are finite, non-negative and sum to 1 (within ``tolerance``), as a float array."""
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must contain numbers only") from None
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{what} contains a value that is not a finite number")
    if np.any(array < 0):
        raise ValueError(f"{what} contains a negative probability ({array.min():g})")
    total = float(array.sum())
    if abs(total - 1.0) > tolerance:
        raise ValueError(f"{what} sums to {total:.6g}; probabilities must sum to 1")
    return array


WORK_LIMIT_SECONDS = 120.0  # work estimated to take longer is refused up front, with the estimate


def human_seconds(seconds: float) -> str:
    """A duration as people say it in a refusal: "40 s", "3.4 min", "12 min", "3.5 h"."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 600:  # near the 2-minute limits, a decimal: "2.1 min", never a bare "2 min" over a 120 s limit
        return f"{seconds / 60:.1f} min"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
