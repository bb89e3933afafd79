"""Composition of releases, the accountant and the budget planner (docs/math.md §4, [C] Theorem 6.2).

:func:`compose`, :func:`cumulative` and :func:`naive_sum` work on
:class:`~puffer_core.accounting.calibration.Calibration` values; :func:`group_dp_cumulative` is what
group-DP accounting certifies.  :class:`Accountant` applies them to a sequence of privacy
events (:mod:`puffer_core.accounting.events`), the one place that knows which rule composes which kind of
event; :func:`plan` spends a total budget over k releases.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..engine.curve import InfluenceCurve
from ..secrets.events import EventSecrets
from ..secrets.population import PopulationSecrets
from ..secrets.values import ALL_SECRETS, Secrets
from ..validation import InvalidParameter, as_double, check_eps, check_whole, is_number
from .calibration import Calibration, check_curve, usable_points
from .events import Composition, CurveEvent, MQMEvent, NoiseEvent, PrivacyEvent
from .renyi import RenyiEvent, renyi_pure_cumulative


def _calibrations(calibrations: object, caller: str) -> list[Calibration]:
    """The releases as a list of :class:`Calibration` (a list or tuple of them; one alone is refused with the fix)."""
    if isinstance(calibrations, Calibration):
        raise ValueError(f"{caller} takes a list of Calibration objects, one per release; wrap a single one: [cal]")
    if not isinstance(calibrations, Iterable) or isinstance(calibrations, (str, bytes, Mapping)):
        kind = type(calibrations).__name__
        raise ValueError(f"{caller} takes a list of Calibration objects, one per release; got {kind}")
    cals = list(calibrations)
    for c in cals:
        if not isinstance(c, Calibration):
            raise ValueError(f"{caller} takes Calibration objects; got {type(c).__name__}")
    return cals


def compose(calibrations: Iterable[Calibration]) -> float:
    """Joint ε_puffer of releases built by §3: max_l a_l + Σ_l (ε_puffer_l − a_l) (docs/math.md §4).

    Each release's ε_puffer_l − a_l equals b_l·ε_DP_l when it was calibrated exactly; the
    larger of the two is used so a hand-made Calibration can never understate the total.
    """
    cals = _calibrations(calibrations, "compose")
    if not cals:
        return 0.0
    a = np.array([c.a for c in cals])
    spend = np.array([max(c.eps_puffer - c.a, c.b * c.eps_dp) for c in cals])
    return float(a.max() + spend.sum())


def naive_sum(calibrations: Iterable[Calibration]) -> float:
    """Σ ε_puffer_l: what a user who adds up the releases would report."""
    return float(sum(c.eps_puffer for c in _calibrations(calibrations, "naive_sum")))


def cumulative(calibrations: Iterable[Calibration]) -> np.ndarray:
    """compose() of the first l releases, for l = 1..k (the ledger's running total)."""
    cals = _calibrations(calibrations, "cumulative")
    return np.array([compose(cals[: i + 1]) for i in range(len(cals))])


def group_dp_cumulative(length: int, eps_dps: Sequence[float]) -> np.ndarray:
    """What group-DP accounting certifies after each release: T·Σ_{l ≤ j} ε_DP_l for j = 1..k.

    A per-entry ε_DP mechanism is T·ε_DP-DP for a whole sequence of ``length`` = T entries by
    group privacy (docs/math.md §1), and group-DP releases add up (docs/math.md §4): the baseline that
    the curve's composition (:func:`cumulative`) is compared with.  Each value is T times the
    exact sum, rounded once, so k equal releases give exactly the float ``k * T * eps_dp``.
    ε_DP = +inf (a release with no noise) is allowed and makes every later total +inf.
    """
    length = check_whole("length (the entries in a sequence)", length)
    if isinstance(eps_dps, (str, bytes)) or not isinstance(eps_dps, Iterable):
        raise InvalidParameter(f"eps_dps must be a sequence of per-release ε_DP values; got {type(eps_dps).__name__}")
    values = list(eps_dps)
    out = np.empty(len(values))
    exact = Fraction(0)
    infinite = False
    for j, eps in enumerate(values):
        if not is_number(eps):
            raise InvalidParameter(f"ε_DP of release {j + 1} must be a number; got {eps!r}")
        eps = as_double(f"ε_DP of release {j + 1}", eps)
        if math.isnan(eps) or eps < 0:
            raise ValueError(f"ε_DP of release {j + 1} must be ≥ 0 (+inf is allowed); got {eps}")
        infinite = infinite or math.isinf(eps)
        if not infinite:
            exact += Fraction(eps)
        out[j] = math.inf if infinite else _rounded(length * exact)
    return out


def _rounded(value: Fraction | int) -> float:
    """The float nearest ``value``; +inf beyond the float range, as float arithmetic would give."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


# --------------------------------------------------------------------------- the accountant

# the running ε_puffer of a sequence of events of one kind: the only place the rules are dispatched
_RULES: dict[Composition, Callable[[list], np.ndarray]] = {
    Composition.THEOREM_6_2: lambda events: cumulative([e.calibration for e in events]),
    Composition.ADDITIVE: lambda events: np.cumsum([e.eps_puffer for e in events], dtype=float),
    Composition.SAME_QUERY: lambda events: np.cumsum([e.eps_puffer for e in events], dtype=float),
    Composition.DP_TRANSLATION: lambda events: np.cumsum([e.eps_puffer for e in events], dtype=float),
    Composition.RENYI: renyi_pure_cumulative,  # the pure ε of the combined Gaussian release (+inf: none)
}


@dataclass(frozen=True, eq=False)
class Ledger:
    """Running totals after each of k releases (docs/math.md §4): entry l covers releases 1..l.

    ``eps_puffer`` is the guarantee by the events' own rule (``composition``: [C] Theorem 6.2
    for curve-calibrated releases, the plain sum for MQM); ``naive_sum`` adds up every release's
    ε_puffer; ``group_dp`` is T·Σ ε_DP, what group-DP accounting certifies for the same releases.
    ``secrets``: what every total protects — the releases' common secrets, or ``None`` when they protect
    different secrets: the totals then hold for the secrets that *every* release protects (docs/math.md §16:
    Theorem 6.2 holds for any fixed set of secret pairs, and each release's point bounds the curve of a
    smaller set too), which :func:`common_secrets` writes out for K states.
    """

    composition: Composition | None
    eps_puffer: np.ndarray
    naive_sum: np.ndarray
    group_dp: np.ndarray
    secrets: object = ALL_SECRETS


class Accountant:
    """Composes privacy events into a :class:`Ledger` (docs/math.md §4), in the spirit of dp_accounting.

    ``length`` is T_max, the longest sequence: group DP charges T_max·ε_DP per release.  A
    ledger holds events of one kind only — curve-calibrated releases compose by Theorem 6.2,
    MQM releases add up, and no theorem covers a mix — :meth:`supports` says whether it can.
    """

    def __init__(self, length: int) -> None:
        self.length = check_whole("length (the entries in a sequence)", length)

    def __repr__(self) -> str:
        return f"Accountant(length={self.length})"

    @staticmethod
    def supports(events: Iterable[PrivacyEvent | RenyiEvent]) -> bool:
        """True when the events can be composed in one ledger (all of one kind)."""
        return len({_checked(e).composition for e in events}) <= 1

    def ledger(self, events: Iterable[PrivacyEvent | RenyiEvent]) -> Ledger:
        """The running totals of ``events`` (released in this order)."""
        items = list(events)
        eps = np.array([_checked(e).eps_puffer for e in items], dtype=float)
        kinds = {_secrets_key(e.secrets) for e in items}
        return Ledger(
            _composition(items),
            cumulative_eps_puffer(items),
            np.cumsum(eps),
            group_dp_cumulative(self.length, [e.eps_dp for e in items]),
            items[0].secrets if len(kinds) == 1 else (ALL_SECRETS if not items else None),
        )


def _secrets_key(secrets: object) -> str:
    """A key that is equal for equal secrets (population pairs compare by their text)."""
    to_text = getattr(secrets, "to_text", None)
    return to_text() if callable(to_text) else repr(secrets)


def common_secrets(
    events: Iterable[PrivacyEvent | RenyiEvent], n_states: int
) -> Secrets | EventSecrets | PopulationSecrets:
    """The value-pair secrets that every release of ``events`` protects, written out for K = ``n_states``
    states (an explicit list of ordered pairs and the common positions; docs/math.md §16).

    Releases that protect events or whole-population pairs have no common value pairs with the others:
    refused with what to do instead.
    """
    items = list(events)
    chosen = [_checked(e).secrets for e in items]
    if not chosen:
        return ALL_SECRETS
    values = [s for s in chosen if isinstance(s, Secrets)]
    if len(values) < len(chosen):
        first = chosen[0]
        if len({_secrets_key(s) for s in chosen}) == 1 and isinstance(first, (EventSecrets, PopulationSecrets)):
            return first
        raise ValueError("these releases protect different kinds of secrets (events or whole-population pairs"
                         " beside value pairs); no total holds for all of them: keep them in separate ledgers")
    if len({_secrets_key(s) for s in values}) == 1:
        return values[0]
    pairs = np.ones((n_states, n_states), dtype=bool)
    positions: set[int] | None = None
    for s in values:
        pairs &= s.pair_matrix(n_states)
        if s.positions is not None:
            positions = set(s.positions) if positions is None else positions & set(s.positions)
        elif s.rule is not None:
            raise ValueError("a release's secrets wait for their time rule to be resolved (secrets.resolve(data))")
    if not pairs.any() or (positions is not None and not positions):
        raise ValueError("no secret is protected by every release (their pairs or positions do not overlap);"
                         " no total holds for all of them")
    listed = tuple((int(x), int(y)) for x, y in zip(*np.nonzero(pairs)))
    return Secrets(pairs="list", listed=listed, ordered=True,
                   positions=None if positions is None else tuple(sorted(positions)))


def _checked(event: object) -> PrivacyEvent | RenyiEvent:
    if not isinstance(event, (CurveEvent, MQMEvent, NoiseEvent, RenyiEvent)):
        raise ValueError(
            f"the accountant composes privacy events (a mechanism's .accounting); got {type(event).__name__}"
        )
    return event


def _composition(events: list[PrivacyEvent | RenyiEvent]) -> Composition | None:
    kinds = {_checked(e).composition for e in events}
    if len(kinds) > 1:
        raise ValueError(
            "cannot compose releases of different kinds in one ledger (curve-based, MQM, Wasserstein,"
            " influence-matrix, Gaussian); keep them apart"
        )
    return kinds.pop() if kinds else None


def cumulative_eps_puffer(events: Iterable[PrivacyEvent | RenyiEvent]) -> np.ndarray:
    """Running total ε_puffer after each of a sequence of releases of one kind (docs/math.md §4).

    Curve-calibrated releases: [C] Theorem 6.2, ``max_l a_l + Σ_l (ε_puffer_l − a_l)``.  MQM
    releases: the plain sum ([S] Theorem III.7).  Mixing the two kinds is refused.
    """
    items = list(events)
    rule = _composition(items)
    return np.zeros(0) if rule is None else _RULES[rule](items)


def plan(curve: InfluenceCurve, total_eps_puffer: float, releases: int) -> Calibration:
    """Spend ``total_eps_puffer`` over ``releases`` releases with one common point (a, b).

    ε_DP per release = (E − a(b)) / (k·b), b chosen to maximise it (docs/math.md §4 planner).
    Each release then has ε_puffer = b·ε_DP + a and compose() of the k releases is E.
    """
    curve = check_curve(curve, "plan")
    total = check_eps("total_eps_puffer", total_eps_puffer)
    releases = check_whole("releases", releases)
    b, a, allowed = usable_points(curve, total)
    count = _rounded(releases)  # in floats: k may be far beyond int64
    per = allowed / count  # (E − a(b)) / (k·b)
    i = int(np.argmax(per))  # first maximum: smallest b
    eps_dp = float(per[i])
    if eps_dp == 0.0:
        shown = f"{count:.3g}" if math.isfinite(count) else "more than 1e308"
        raise ValueError(
            f"{shown} releases leave each one a per-entry ε_DP too small for a float (it rounds to 0);"
            " plan fewer releases"
        )
    return Calibration(float(b[i] * eps_dp + a[i]), eps_dp, int(b[i]), float(a[i]), bool(b[i] >= curve.length),
                       curve.secrets)
