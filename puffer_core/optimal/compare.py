"""Every shipped mechanism's exact expected error beside the best possible (docs/math.md §18).

For the count of a set of states (L1 sensitivity 1 to one entry) or the whole histogram (L1 sensitivity 2),
each shipped mechanism adds noise whose expected absolute error is exact and does not depend on the data:
Laplace of scale b gives E|Z| = b per count; Gaussian noise σ gives σ·√(2/π).  Beside the floor of
:mod:`.lp` (the error no ε-Pufferfish mechanism that sees the data only through the query can go below):

- **Laplace via a(b)** ([C], docs/math.md §3), **group DP**, **MQM** ([S]), **MQMApprox**, the
  **influence-matrix** translation and the **Wasserstein mechanism** (for a count: W∞ of the count's laws,
  :mod:`puffer_core.mechanisms.count_laws`) — all ε-Pufferfish at the same ε: comparable, never below the floor.
- **Gaussian noise**: comparable only through a pure ε-Pufferfish bound, the release's own certified
  likelihood ratio (:func:`puffer_core.mechanisms.gaussian_calibration.pure_sigma`), when one exists — when the
  count's laws end at different counts under the two secrets of a pair, no σ gives one, and the row says so.
  The Rényi calibrations (σ_GWM and σ\\* at (α, ε)) are shown for information: (α, ε)-Rényi Pufferfish is a
  weaker guarantee than ε-Pufferfish (it bounds an average of the likelihood ratio, not its worst case), so
  they may lie below the floor without contradicting it.

The a(b) curve and MQM are computed over every pair and position (they do not take secrets yet): a
guarantee for every secret holds for the chosen ones, so these rows stay comparable (if pessimistic).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..accounting.calibration import calibrate
from ..engine.influence import influence_curve
from ..mechanisms.base import HISTOGRAM_SENSITIVITY, Refused
from ..mechanisms.count_laws import count_laws, count_wasserstein
from ..mechanisms.gaussian import gaussian_count, gaussian_histogram
from ..mechanisms.gaussian_calibration import Divergences, check_order, gwm_sigma, pure_sigma
from ..mechanisms.influence_matrix import influence_laplace
from ..mechanisms.laplace import group_dp_laplace, mqm_laplace, pufferfish_laplace
from ..mechanisms.mqm_approx import mqm_approx_laplace
from ..mechanisms.wasserstein import wasserstein_scale
from ..priors.models import MarkovChainPrior, as_theta
from ..secrets.values import Secrets
from ..validation import InvalidParameter, check_eps
from .lp import OptimalMechanism, optimal_count_mechanism, optimal_histogram_mechanism

_HALF_GAUSS = math.sqrt(2.0 / math.pi)  # E|Z| / σ for Z ~ N(0, σ²)


@dataclass(frozen=True)
class MechanismError:
    """One mechanism's exact expected error (per release of the query) and whether it may be compared.

    ``error`` is E|noise| summed over the released counts (+inf when the mechanism is refused here);
    ``comparable``: an ε-Pufferfish mechanism at the same ε; ``note`` says how it was calibrated or why not.
    """

    name: str
    label: str
    error: float
    comparable: bool
    note: str = ""


@dataclass(frozen=True, eq=False)
class FloorComparison:
    """The floor and every mechanism's error at one ε (module docstring)."""

    query: str
    eps: float
    floor: float
    optimal: OptimalMechanism
    rows: tuple[MechanismError, ...]

    def ratio(self, name: str) -> float:
        """How many times the floor the mechanism ``name``'s error is."""
        row = next(r for r in self.rows if r.name == name)
        return math.inf if self.floor == 0 else row.error / self.floor

    def table(self) -> list[dict]:
        return [
            {"mechanism": r.label, "expected error": r.error, "× floor": self.ratio(r.name) if r.comparable else None,
             "comparable": r.comparable, "note": r.note}
            for r in self.rows
        ]


def _row(name: str, label: str, build: Callable[[], float], comparable: bool = True, note: str = "") -> MechanismError:
    try:
        return MechanismError(name, label, float(build()), comparable, note)
    except (Refused, ValueError) as exc:  # no guarantee for this prior, or out of its reach: said as such
        return MechanismError(name, label, math.inf, comparable, f"refused: {exc}")


def compare_with_floor(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps_puffer: float,
    states: object | None = None,
    secrets: Secrets | None = None,
    alpha: float = 2.0,
    optimal: OptimalMechanism | None = None,
) -> FloorComparison:
    """The floor and every shipped mechanism's exact expected error at ε (module docstring, docs/math.md §18).

    ``states``: the count of these states (None: the whole histogram, small K only).  ``optimal``: a
    programme already solved at this ε for the same query (else it is solved here).  ``secrets``: the floor,
    the Laplace mechanism via a(b), the Wasserstein and the Gaussian mechanisms protect these; MQM, MQMApprox
    and the influence matrix protect every pair at every entry (they take no secrets, so their error can only
    be larger than with them).
    """
    priors = as_theta(prior_or_priors, "the comparison with the best possible mechanism")
    eps = check_eps("ε_puffer", eps_puffer)
    alpha = check_order(alpha)
    histogram = states is None
    if optimal is not None and not isinstance(optimal, OptimalMechanism):
        raise InvalidParameter(f"optimal must be an OptimalMechanism solved for this query, or None; got"
                               f" {type(optimal).__name__}")
    if optimal is not None and (optimal.eps != eps or (optimal.programme.what == "histogram") != histogram):
        raise ValueError(
            f"optimal was solved for a {optimal.programme.what} at ε = {optimal.eps:g}; this comparison is of a"
            f" {'histogram' if histogram else 'count'} at ε = {eps:g} (give optimal=None to solve it here)"
        )
    if optimal is None:
        optimal = (optimal_histogram_mechanism(priors, eps, secrets) if histogram
                   else optimal_count_mechanism(priors, states, eps, secrets))
    counts = priors.n_states if histogram else 1
    sens = HISTOGRAM_SENSITIVITY if histogram else 1.0
    curve = influence_curve(priors, secrets=secrets)  # a(b) about the chosen secrets, like the floor's
    cal = calibrate(curve, eps)
    route = "group DP over the whole sequence" if cal.group_dp else f"b = {cal.b}, a(b) = {cal.a:.3g}"
    rows = [
        _row("pufferfish_laplace", "Laplace via a(b)",
             lambda: counts * pufferfish_laplace(curve, eps, sensitivity=sens).scale, note=route),
        _row("group_dp_laplace", "Group DP Laplace",
             lambda: counts * group_dp_laplace(curve, eps, sensitivity=sens).scale),
        _row("mqm", "MQM", lambda: counts * mqm_laplace(priors, eps, sensitivity=sens).scale),
        _row("mqm_approx", "MQMApprox", lambda: counts * mqm_approx_laplace(priors, eps, sensitivity=sens).scale),
        _row("influence_matrix", "Influence matrix",
             lambda: counts * influence_laplace(priors, eps, sensitivity=sens).scale),
    ]
    if histogram:
        rows.append(_row("wasserstein", "Wasserstein", lambda: counts * wasserstein_scale(priors, secrets).w / eps))
        rows.extend(_gaussian_histogram_rows(priors, eps, alpha, secrets))
    else:
        laws = count_laws(priors, states, secrets)
        scale = count_wasserstein(laws, priors)
        rows.append(MechanismError("wasserstein", "Wasserstein", scale.w / eps, True, f"W∞ = {scale.w}"))
        rows.extend(_gaussian_count_rows(priors, states, eps, alpha, secrets, Divergences(laws, scale.w)))
    return FloorComparison("histogram" if histogram else "count", eps, optimal.floor, optimal, tuple(rows))


def _gaussian_count_rows(priors, states, eps: float, alpha: float, secrets, div: Divergences) -> list[MechanismError]:
    sigma = pure_sigma(div, eps)
    if math.isfinite(sigma):
        pure = MechanismError("gaussian_pure", "Gaussian at pure ε", sigma * _HALF_GAUSS, True,
                              f"σ = {sigma:.4g}: its own likelihood ratio is ≤ e^ε")
    else:
        pure = MechanismError("gaussian_pure", "Gaussian at pure ε", math.inf, False,
                              "no σ gives a pure ε-Pufferfish bound: the count's laws end at different counts")
    renyi = gaussian_count(priors, states, eps, alpha, secrets, exact=True).calibration
    if renyi is None:
        raise RuntimeError("the exact Gaussian calibration was asked for and not returned")
    weaker = f"(α = {alpha:g}, ε)-Rényi Pufferfish: a weaker guarantee, not comparable with the floor"
    return [
        pure,
        MechanismError("gaussian_gwm", f"Gaussian GWM (α = {alpha:g})", renyi.sigma_gwm * _HALF_GAUSS, False,
                       f"σ_GWM = {renyi.sigma_gwm:.4g}; {weaker}"),
        MechanismError("gaussian_exact", f"Gaussian σ* (α = {alpha:g})", renyi.sigma * _HALF_GAUSS, False,
                       f"σ* = {renyi.sigma:.4g}; {weaker}"),
    ]


def _gaussian_histogram_rows(priors, eps: float, alpha: float, secrets) -> list[MechanismError]:
    k = priors.n_states
    weaker = f"(α = {alpha:g}, ε)-Rényi Pufferfish: a weaker guarantee, not comparable with the floor"
    try:
        mech = gaussian_histogram(priors, eps, alpha, secrets)
    except Refused as exc:
        return [MechanismError("gaussian", f"Gaussian (α = {alpha:g})", math.inf, False, f"refused: {exc}")]
    rows = [MechanismError("gaussian", f"Gaussian (α = {alpha:g})", k * mech.sigma * _HALF_GAUSS, False,
                           f"σ = {mech.sigma:.4g}; {weaker}")]
    if mech.calibration is not None:
        rows.append(MechanismError("gaussian_gwm", f"Gaussian GWM (α = {alpha:g})",
                                   k * math.sqrt(2.0) * gwm_sigma(mech.calibration.w, alpha, eps) * _HALF_GAUSS,
                                   False, weaker))
    return rows
