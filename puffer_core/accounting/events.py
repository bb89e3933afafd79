"""Privacy events: what one release spends, as plain frozen records (docs/math.md §3–§5).

An event describes the privacy cost of one release and nothing else: no noise is drawn, so it
can be inspected and tested on its own (like the DpEvents of Google's ``dp_accounting``).  Every
mechanism carries the event of one of its releases as ``mechanism.accounting``, and
:class:`puffer_core.accounting.composition.Accountant` composes a sequence of them into a ledger.

Two kinds, told apart by their ``composition`` code:

- :class:`CurveEvent` — a per-entry ε_DP-DP release used through a point (b, a(b)) of an
  a(b) curve, or through (T, 0) for group DP (docs/math.md §3).  Such releases compose by
  [C] Theorem 6.2 (:data:`Composition.THEOREM_6_2`).
- :class:`MQMEvent` — an MQM release ([S] Algorithm 1) of ε_puffer with noise scale σ_max;
  MQM releases add up ([S] Theorem III.7, :data:`Composition.ADDITIVE`).
- :class:`NoiseEvent` — a release whose ε_puffer follows from its own noise rule (the Wasserstein
  mechanism, the influence-matrix translation), composed by the rule it names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from ..secrets.values import ALL_SECRETS
from ..validation import check_eps, check_number, check_whole, is_number
from .calibration import Calibration


class Composition(StrEnum):
    """How the releases of one kind of event compose (docs/math.md §4); the value is the typed code."""

    THEOREM_6_2 = "theorem_6_2"  # [C] Theorem 6.2: max_l a_l + Σ_l (ε_puffer_l − a_l)
    ADDITIVE = "additive"  # [S] Theorem III.7: Σ_l ε_puffer_l
    SAME_QUERY = "same_query"  # the Wasserstein mechanism: repeated releases of one query add up (one coupling)
    DP_TRANSLATION = "dp_translation"  # the influence-matrix translation: c·Σ_l ε_DP_l = Σ_l ε_puffer_l
    RENYI = "renyi"  # Gaussian noise, (α, ε)-Rényi Pufferfish: the same query again only (accounting/renyi.py)


def secrets_text(secrets: object) -> str:
    """The secrets' link text ("" for every pair at every entry), for JSON records."""
    to_text = getattr(secrets, "to_text", None)
    return to_text() if callable(to_text) else ""


def _chosen(secrets: object) -> str:
    """", for the chosen secrets: …" when the secrets are not every pair at every entry."""
    if secrets == ALL_SECRETS:
        return ""
    words = getattr(secrets, "words", None)
    return f"; protects {words()}" if callable(words) else ""


def _finite_or_text(value: float | None) -> float | str | None:
    if value is None:
        return None
    return float(value) if math.isfinite(value) else str(value)


@dataclass(frozen=True)
class CurveEvent:
    """One release of a per-entry ε_DP-DP mechanism, calibrated through an a(b) curve (docs/math.md §3).

    ``calibration`` is the curve point used: ε_puffer = b·ε_DP + a(b); ``group_dp`` marks the
    point (T, 0), group DP over the whole sequence.  ``queries`` > 1 means the release answers
    that many separately budgeted counts, each with ε_DP/queries ([C] §7.1.3).
    """

    mechanism: str
    calibration: Calibration
    queries: int = 1
    composition: ClassVar[Composition] = Composition.THEOREM_6_2

    def __post_init__(self) -> None:
        if not isinstance(self.calibration, Calibration):
            raise ValueError(f"calibration must be a Calibration; got {type(self.calibration).__name__}")
        check_whole("queries", self.queries)

    @property
    def eps_puffer(self) -> float:
        return self.calibration.eps_puffer

    @property
    def eps_dp(self) -> float:
        return self.calibration.eps_dp

    @property
    def b(self) -> int:
        return self.calibration.b

    @property
    def a(self) -> float:
        return self.calibration.a

    @property
    def group_dp(self) -> bool:
        return self.calibration.group_dp

    @property
    def secrets(self) -> object:
        """What the release protects: its calibration's (its curve's) secrets (docs/math.md §16)."""
        return self.calibration.secrets

    def describe(self) -> str:
        how = "group DP over the whole sequence" if self.group_dp else f"curve point b = {self.b}"
        split = f", split over {self.queries} counts (ε_DP/{self.queries} each)" if self.queries > 1 else ""
        return (
            f"{self.mechanism}: ε_puffer = {self.eps_puffer:.4g} from per-entry ε_DP = {self.eps_dp:.4g}"
            f" ({how}, a(b) = {self.a:.4g}){split}{_chosen(self.secrets)}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-safe values (the same keys for every kind of event; None where one does not apply)."""
        return {
            "mechanism": self.mechanism,
            "eps_puffer": _finite_or_text(self.eps_puffer),
            "eps_dp": _finite_or_text(self.eps_dp),
            "b": self.b,
            "a": _finite_or_text(self.a),
            "group_dp": self.group_dp,
            "composition": str(self.composition),
            "sigma_max": None,
            "queries": self.queries,
            "secrets": secrets_text(self.secrets),
        }


@dataclass(frozen=True)
class MQMEvent:
    """One MQM release of ``eps_puffer`` with Laplace noise scaled by σ_max (docs/math.md §5, [S] Algorithm 1).

    ``eps_dp`` is the per-entry DP parameter of the same noise (L1 sensitivity / scale; +inf
    without noise), which group-DP accounting charges T times.  ``queries`` > 1: the counts are
    that many MQM queries with ε_puffer/queries each ([C] §7.1.3).
    """

    mechanism: str
    eps_puffer: float
    eps_dp: float
    sigma_max: float
    queries: int = 1
    secrets: object = ALL_SECRETS
    composition: ClassVar[Composition] = Composition.ADDITIVE

    def __post_init__(self) -> None:
        check_eps("eps_puffer", self.eps_puffer)
        if check_number("sigma_max", self.sigma_max) < 0:
            raise ValueError(f"sigma_max must be ≥ 0; got {self.sigma_max}")
        if not is_number(self.eps_dp) or math.isnan(self.eps_dp) or self.eps_dp <= 0:
            raise ValueError(f"eps_dp must be positive (+inf without noise); got {self.eps_dp!r}")
        check_whole("queries", self.queries)

    def describe(self) -> str:
        split = f", split over {self.queries} counts (ε/{self.queries} each)" if self.queries > 1 else ""
        return (
            f"{self.mechanism}: ε_puffer = {self.eps_puffer:.4g} with σ_max = {self.sigma_max:.4g}{split};"
            f" releases add up ([S] Theorem III.7){_chosen(self.secrets)}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-safe values (infinite numbers become the string 'inf')."""
        return {
            "mechanism": self.mechanism,
            "eps_puffer": _finite_or_text(self.eps_puffer),
            "eps_dp": _finite_or_text(self.eps_dp),
            "b": None,
            "a": None,
            "group_dp": False,
            "composition": str(self.composition),
            "sigma_max": _finite_or_text(self.sigma_max),
            "queries": self.queries,
            "secrets": secrets_text(self.secrets),
        }


@dataclass(frozen=True)
class NoiseEvent:
    """One release of ``eps_puffer`` whose noise follows a rule of its own (docs/math.md §15).

    ``scale`` is the number that rule sets the noise by: the worst ∞-Wasserstein distance W of the
    Wasserstein mechanism (noise Lap(W/ε)), or the influence-matrix factor c (ε_puffer = c·ε_DP).
    ``eps_dp`` is the per-entry DP level of the same noise (group-DP accounting charges it T times);
    ``composition`` says how repeated releases compose: :data:`Composition.SAME_QUERY` (the same query
    again, through the same coupling) or :data:`Composition.DP_TRANSLATION` (per-entry DP releases add
    up, and so does c·ε_DP).
    """

    mechanism: str
    eps_puffer: float
    eps_dp: float
    scale: float
    composition: Composition
    queries: int = 1
    secrets: object = ALL_SECRETS

    def __post_init__(self) -> None:
        check_eps("eps_puffer", self.eps_puffer)
        if check_number("scale", self.scale) <= 0:
            raise ValueError(f"scale must be positive; got {self.scale}")
        if not is_number(self.eps_dp) or math.isnan(self.eps_dp) or self.eps_dp <= 0:
            raise ValueError(f"eps_dp must be positive; got {self.eps_dp!r}")
        if self.composition not in (Composition.SAME_QUERY, Composition.DP_TRANSLATION):
            raise ValueError(f"a noise event composes by same_query or dp_translation; got {self.composition!r}")
        check_whole("queries", self.queries)

    def describe(self) -> str:
        what = "W" if self.composition is Composition.SAME_QUERY else "factor c"
        chosen = _chosen(self.secrets)
        return f"{self.mechanism}: ε_puffer = {self.eps_puffer:.4g} with {what} = {self.scale:.4g}{chosen}"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-safe values (the same keys as the other events, and ``scale``)."""
        return {
            "mechanism": self.mechanism,
            "eps_puffer": _finite_or_text(self.eps_puffer),
            "eps_dp": _finite_or_text(self.eps_dp),
            "b": None,
            "a": None,
            "group_dp": False,
            "composition": str(self.composition),
            "sigma_max": None,
            "queries": self.queries,
            "scale": _finite_or_text(self.scale),
            "secrets": secrets_text(self.secrets),
        }


PrivacyEvent = CurveEvent | MQMEvent | NoiseEvent
