"""The a(b)-influence curve as a value: what every prior kind produces (docs/math.md §2).

:func:`puffer_core.engine.influence.influence_curve` computes it for Markov chains,
:func:`puffer_core.engine.gaussian.gaussian_influence_curve` for Gaussian processes, and
:func:`puffer_core.engine.closed_form.binary_chain_curve` in closed form; calibration and composition
only read it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..secrets.values import ALL_SECRETS
from ..validation import as_numbers, check_whole


@dataclass(frozen=True, eq=False)
class InfluenceCurve:
    """An a(b)-influence curve: ``a[i]`` is a(b) at ``b[i]`` (b = 1..B).

    ``length`` is the longest sequence: a(b) = 0 for b ≥ length.  Values may be +inf,
    never NaN.  Immutable.  ``secrets`` is what the curve protects (docs/math.md §16: a
    :class:`~puffer_core.secrets.Secrets` or :class:`~puffer_core.secrets.EventSecrets`; default every
    pair at every entry), carried on to calibrations, privacy events and ledgers so they can say it;
    ``note`` says what a reader must know about the values (exact or an upper bound, where ∞ comes from).
    """

    b: np.ndarray
    a: np.ndarray
    length: int
    label: str = ""
    secrets: object = ALL_SECRETS
    note: str = ""

    def __post_init__(self) -> None:
        b = as_numbers(self.b, "b (the curve's points)")
        a = as_numbers(self.a, "a (the curve's values a(b))").copy()
        if b.shape != a.shape or b.ndim != 1 or b.size == 0:
            raise ValueError("an influence curve needs matching, non-empty b and a arrays")
        if np.any(np.isnan(a)):
            raise ValueError("an influence curve cannot contain NaN")
        if not np.array_equal(b, np.arange(1, b.size + 1)):
            raise ValueError("b must be the integers 1..B")
        b = b.astype(int)
        length = self.length
        check_whole("length (the longest sequence)", length)
        if np.any(a < 0):
            raise ValueError("a(b) is a log-ratio bound and cannot be negative")
        if np.any(a[b >= length] != 0):
            raise ValueError(f"a(b) must be 0 for b ≥ length = {length} (H then holds the whole sequence)")
        b.setflags(write=False)
        a.setflags(write=False)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "length", int(self.length))

    @property
    def max_b(self) -> int:
        return int(self.b[-1])

    def at(self, b: int) -> float:
        """a(b); beyond the computed range the last value (a valid upper bound), 0 from ``length`` on."""
        check_whole("b", b)
        if b >= self.length:
            return 0.0
        if b > self.max_b:
            return float(self.a[-1])
        return float(self.a[b - 1])

    def points(self) -> list[tuple[int, float]]:
        """Every (b, a(b)) point, plus (length, 0) — group DP over the whole sequence."""
        pts = [(int(b), float(a)) for b, a in zip(self.b, self.a)]
        if self.length > self.max_b:
            pts.append((self.length, 0.0))
        return pts

    def __repr__(self) -> str:
        head = ", ".join(f"{v:.4g}" for v in self.a[:5])
        return f"InfluenceCurve(B={self.max_b}, length={self.length}, a=[{head}{', …' if self.a.size > 5 else ''}])"
