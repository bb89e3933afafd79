"""Numbers as Pufferfish Lab prints them: the app's pages, their reports and the scripts they export.

One function, so that a script recomputing a page prints exactly what the page showed: ∞ for +inf,
4 significant digits otherwise (``fmt(29.999999999999996) == "30"``).
"""

from __future__ import annotations

import math


def fmt(value: float, digits: int = 4) -> str:
    """A number for a table or a metric: ∞ for +inf, −∞ for −inf, ``digits`` significant digits otherwise."""
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if value == 0:
        return "0"
    return f"{value:.{digits}g}"
