"""(α, ε)-Rényi Pufferfish: its privacy event, its conversions and its ledger (docs/math.md §17).

**The notion** (Pierquin, Bellet, Tommasi, Boussard, ICML 2024): a mechanism M is (α, ε)-Rényi Pufferfish
private when, for every protected pair (s_i, s_j) and every θ ∈ Θ,

    D_α( law(M | s_i, θ) ‖ law(M | s_j, θ) ) ≤ ε,     D_α(P ‖ Q) = 1/(α − 1) · log ∫ p^α q^(1−α),  α > 1.

**Conversions.**  (α, ε)-Rényi Pufferfish ⇒ (ε + log(1/δ)/(α − 1), δ)-Pufferfish for every δ ∈ (0, 1): for every
set S of outputs, Pr[M ∈ S | s_i, θ] ≤ e^(ε_δ)·Pr[M ∈ S | s_j, θ] + δ (Hölder's inequality on the two laws, as
for Rényi DP; proof in docs/math.md §17.1).  A Rényi guarantee of finite order bounds **no** worst-case
likelihood ratio: a plain ε-Pufferfish bound exists only when the mechanism's own likelihood ratios are
bounded, and then it is computed from the mechanism, not from (α, ε) — an event carries it as
``eps_puffer`` (+inf when none exists).

**Composition: only what is proven.**  k releases of the **same** count with independent Gaussian noise
σ_1..σ_k are exactly one release with noise σ = (Σ σ_l^−2)^(−1/2): given the count, the precision-weighted mean
of the outputs is sufficient (the joint density factors into a function of the outputs alone times a normal
density of that mean), so the k outputs and the mean have the same divergences.  The GWM's bound α·W∞²/(2σ²)
therefore adds up over such releases, and the exact divergence is the one at the combined σ — which can be
**more** than the sum of the releases' exact divergences (a mixture's divergence need not scale like 1/σ²).
For releases of **different** queries nothing is proven for Rényi Pufferfish: Pierquin et al. prove
post-processing, the conversion above, the General Wasserstein Mechanism and amplification by iteration for
one contractive noisy iteration — not the composition of separate releases (their abstract: the framework
"does not provide the composition guarantees needed"); Rényi DP's additive rule does not carry over, because
every release depends on the same correlated sequence.  Such a ledger is refused, with that reason.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

from ..secrets.values import ALL_SECRETS
from ..validation import InvalidParameter, as_double, check_number, check_positive, check_probability, is_number
from .events import Composition, secrets_text

DIFFERENT_QUERIES = (
    "Rényi Pufferfish has no composition theorem for releases of different queries: Pierquin et al. (ICML 2024)"
    " prove post-processing, the conversion to (ε, δ)-Pufferfish, the General Wasserstein Mechanism and"
    " amplification by iteration for one contractive noisy iteration, not the composition of separate"
    " releases, and Rényi DP's additive rule does not carry over because every release depends on the same"
    " correlated sequence. Account for them as one release of the joint query (all counts at once), or use"
    " ε-Pufferfish mechanisms, which compose by [C] Theorem 6.2"
)


class RenyiAccount(Protocol):
    """What the exact account of repeated releases of one query needs: certified divergences at any noise.

    ``query`` names the query and the prior (equal names: the same query); ``w`` is its W∞ in the release's
    norm.  :meth:`divergence` returns a certified upper bound on D_α of one release with noise ``sigma``;
    :meth:`pure` a certified upper bound on its pure ε-Pufferfish level and, when that is +inf, why.
    """

    query: str
    w: float

    def divergence(self, sigma: float, alpha: float) -> float: ...

    def pure(self, sigma: float) -> tuple[float, str]: ...


def check_renyi_order(alpha: object) -> float:
    """A Rényi order α > 1 (finite)."""
    value = check_number("α (the Rényi order)", alpha)
    if value <= 1.0:
        raise ValueError(
            f"α (the Rényi order) must be above 1; got {value:g} (α = 1 is the KL divergence, which gives no"
            " (ε, δ) guarantee on its own)"
        )
    return value


def renyi_to_approx(alpha: float, eps: float, delta: float) -> float:
    """ε_δ = ε + log(1/δ)/(α − 1): (α, ε)-Rényi Pufferfish ⇒ (ε_δ, δ)-Pufferfish (module docstring)."""
    alpha = check_renyi_order(alpha)
    if not is_number(eps):
        raise InvalidParameter(f"ε (the Rényi level) must be a number ≥ 0; got {eps!r}")
    eps = as_double("ε (the Rényi level)", eps)
    if not eps >= 0:
        raise ValueError(f"ε (the Rényi level) must be a number ≥ 0; got {eps!r}")
    delta = check_probability("δ (the probability allowed to go unprotected)", delta, open_interval=True)
    return float(eps) + math.log(1.0 / delta) / (alpha - 1.0)


def approx_meaning(eps_delta: float, delta: float) -> str:
    """What an (ε, δ)-Pufferfish guarantee means for a reader, in one sentence."""
    return (
        f"except on outcomes that together have probability at most δ = {delta:g}, seeing the release changes an"
        f" attacker's odds between the two secrets of a protected pair by at most a factor e^{eps_delta:.3g}"
        f" = {math.exp(min(eps_delta, 700.0)):.3g}"
    )


@dataclass(frozen=True)
class RenyiEvent:
    """One release of Gaussian noise σ on a query, accounted as (α, ε)-Rényi Pufferfish (docs/math.md §17).

    ``eps`` is the certified D_α of one release: the exact divergence when ``account`` is known, else the
    GWM's bound α·w²/(2σ²).  ``w`` is the query's W∞ in the release's norm; ``query`` names the query and
    its prior (releases compose only when it is the same).  ``eps_puffer`` is a certified pure ε-Pufferfish
    level of the release (+inf when none exists; ``pure_note`` says why).  ``account`` recomputes divergences
    at any noise (for k releases); it is not part of the record's value.
    """

    mechanism: str
    alpha: float
    eps: float
    sigma: float
    w: float
    query: str
    eps_puffer: float = math.inf
    pure_note: str = ""
    account: RenyiAccount | None = field(default=None, compare=False, repr=False)
    queries: int = 1
    secrets: object = ALL_SECRETS  # what the release protects (docs/math.md §16)
    composition: ClassVar[Composition] = Composition.RENYI
    eps_dp: ClassVar[float] = math.inf  # Gaussian noise is not pure per-entry DP at any level

    def __post_init__(self) -> None:
        check_renyi_order(self.alpha)
        if check_number("ε (the Rényi level)", self.eps) < 0:
            raise ValueError(f"ε (the Rényi level) must be ≥ 0; got {self.eps}")
        if check_number("σ (the noise)", self.sigma) < 0 or check_number("W∞", self.w) < 0:
            raise ValueError(f"σ and W∞ must be ≥ 0; got σ = {self.sigma}, W∞ = {self.w}")
        if self.sigma == 0 and self.w > 0:
            raise ValueError("a release without noise of a query whose laws differ has no Rényi guarantee")
        if not isinstance(self.eps_puffer, (int, float)) or math.isnan(self.eps_puffer) or self.eps_puffer < 0:
            raise ValueError(f"eps_puffer must be ≥ 0 (+inf: none); got {self.eps_puffer!r}")
        if self.eps < self.eps_gwm * (1 - 1e-12) and self.account is None:
            raise ValueError("without an exact account, a release is charged the GWM's bound α·W∞²/(2σ²)")

    @property
    def eps_gwm(self) -> float:
        """The GWM's bound α·W∞²/(2σ²) on the divergence of this release."""
        return 0.0 if self.w == 0 else self.alpha * self.w**2 / (2.0 * self.sigma**2)

    @property
    def exact(self) -> bool:
        """True when ``eps`` is the certified exact divergence (not only the GWM's bound)."""
        return self.account is not None

    def approximate(self, delta: float) -> float:
        """ε_δ of the (ε_δ, δ)-Pufferfish guarantee this release gives (module docstring)."""
        return renyi_to_approx(self.alpha, self.eps, delta)

    def describe(self) -> str:
        how = "exact" if self.exact else "GWM bound"
        pure = f"; pure ε-Pufferfish ≤ {self.eps_puffer:.4g}" if math.isfinite(self.eps_puffer) else ""
        return (
            f"{self.mechanism}: (α = {self.alpha:g}, ε = {self.eps:.4g})-Rényi Pufferfish ({how}) with Gaussian"
            f" noise σ = {self.sigma:.4g}, W∞ = {self.w:g}{pure}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-safe values: the keys every event has (None where one does not apply) and the Rényi ones."""
        return {
            "mechanism": self.mechanism,
            "eps_puffer": self.eps_puffer if math.isfinite(self.eps_puffer) else "inf",
            "eps_dp": "inf",
            "b": None,
            "a": None,
            "group_dp": False,
            "composition": str(self.composition),
            "sigma_max": None,
            "queries": self.queries,
            "secrets": secrets_text(self.secrets),
            "alpha": self.alpha,
            "eps_renyi": self.eps,
            "eps_gwm": self.eps_gwm,
            "sigma": self.sigma,
            "w": self.w,
            "exact": self.exact,
        }


def _events(events: Iterable[RenyiEvent]) -> list[RenyiEvent]:
    if isinstance(events, (str, bytes)) or not isinstance(events, Iterable):
        raise InvalidParameter(f"a Rényi ledger takes a list of RenyiEvents; got {type(events).__name__}")
    items = list(events)
    for e in items:
        if not isinstance(e, RenyiEvent):
            raise InvalidParameter(
                f"a Rényi ledger composes RenyiEvents (a Gaussian mechanism's .accounting); got {e!r}")
    if len({e.query for e in items}) > 1:
        raise ValueError(DIFFERENT_QUERIES)
    if len({e.w for e in items}) > 1:
        raise ValueError(f"these releases name the same query but different W∞ ({sorted({e.w for e in items})})")
    return items


def combined_sigma(sigmas: Iterable[float]) -> float:
    """(Σ σ_l^−2)^(−1/2): the one release equivalent to independent Gaussian releases of one count."""
    if isinstance(sigmas, (str, bytes)) or not isinstance(sigmas, Iterable):
        raise InvalidParameter(f"sigmas must be a list of noise scales σ; got {type(sigmas).__name__}")
    values = [check_positive("σ", s) for s in sigmas]
    if not values:
        raise ValueError("no releases")
    return float(sum(s**-2 for s in values) ** -0.5)


@dataclass(frozen=True, eq=False)
class RenyiLedger:
    """Running totals after each of k releases of one query (module docstring): entry l covers releases 1..l.

    ``sigma``: the one release they equal; ``eps``: its certified D_α (exact when the releases carry an
    account, else the GWM's bound); ``eps_gwm``: the GWM's bound (the sum of the releases' bounds);
    ``naive_sum``: the sum of the releases' own ε — what Rényi DP's rule would say, **not** a guarantee here;
    ``eps_delta``: ε of the (ε, δ)-Pufferfish guarantee from ``eps`` (+inf when no δ was given: δ = 0);
    ``eps_puffer``: the pure ε-Pufferfish level of the combined release (+inf: none, ``pure_note`` says why).
    """

    alpha: float
    query: str
    sigma: np.ndarray
    eps: np.ndarray
    eps_gwm: np.ndarray
    naive_sum: np.ndarray
    eps_puffer: np.ndarray
    delta: float | None
    eps_delta: np.ndarray
    exact: bool
    pure_note: str

    def rows(self) -> list[dict[str, Any]]:
        """One plain dict per release."""
        return [
            {
                "release": n + 1,
                "alpha": self.alpha,
                "sigma_combined": float(self.sigma[n]),
                "eps_renyi": float(self.eps[n]),
                "eps_gwm": float(self.eps_gwm[n]),
                "naive_sum": float(self.naive_sum[n]),
                "eps_puffer": float(self.eps_puffer[n]),
                "delta": self.delta,
                "eps_delta": float(self.eps_delta[n]) if self.delta is not None else None,
                "exact": self.exact,
            }
            for n in range(self.sigma.size)
        ]


def _own(event: RenyiEvent, order: float, account: RenyiAccount | None) -> float:
    """One release's certified D_α at ``order`` (its own ε when that is its order)."""
    if event.alpha == order:
        return event.eps
    bound = 0.0 if event.w == 0 else order * event.w**2 / (2.0 * event.sigma**2)
    return bound if account is None else min(bound, account.divergence(event.sigma, order))


def renyi_ledger(events: Iterable[RenyiEvent], delta: float | None = None, alpha: float | None = None) -> RenyiLedger:
    """The ledger of k releases of one query (module docstring); releases of different queries are refused.

    ``alpha`` (default: the first release's order) is the order of the account; ``delta`` adds the
    (ε_δ, δ)-Pufferfish column.
    """
    items = _events(events)
    if not items:
        raise ValueError("a ledger needs at least one release")
    order = check_renyi_order(items[0].alpha if alpha is None else alpha)
    if delta is not None:
        delta = check_probability("δ (the probability allowed to go unprotected)", delta, open_interval=True)
    account = next((e.account for e in items if e.account is not None), None)
    exact = account is not None and all(e.account is not None for e in items)
    w = items[0].w
    sigma, eps, gwm, naive, pure = [], [], [], [], []
    note = ""
    for n in range(1, len(items) + 1):
        noisy = [e.sigma for e in items[:n] if e.sigma > 0]
        s = combined_sigma(noisy) if len(noisy) == n else 0.0
        bound = 0.0 if w == 0 else (math.inf if s == 0 else order * w**2 / (2.0 * s**2))
        sigma.append(s)
        gwm.append(bound)
        naive.append(sum(_own(e, order, account) for e in items[:n]))
        if exact and account is not None and s > 0:
            eps.append(min(bound, account.divergence(s, order)))
            value, why = account.pure(s)
            pure.append(value)
            note = note or why
        else:
            eps.append(bound)
            pure.append(0.0 if w == 0 else math.inf)
            note = note or ("" if w == 0 else "no exact account of the query: only the GWM's Rényi bound is known")
    eps_arr = np.array(eps)
    approx = (
        np.array([renyi_to_approx(order, v, delta) if math.isfinite(v) else math.inf for v in eps])
        if delta is not None
        else np.full(len(items), np.inf)  # δ = 0: log(1/δ) = ∞, no finite ε_δ (never NaN)
    )
    return RenyiLedger(
        order, items[0].query, np.array(sigma), eps_arr, np.array(gwm), np.array(naive), np.array(pure), delta,
        approx, exact, note,
    )


def renyi_pure_cumulative(events: Iterable[RenyiEvent]) -> np.ndarray:
    """The pure ε-Pufferfish level after each of k releases of one query (+inf where none exists): the column
    the general :class:`~puffer_core.accounting.composition.Accountant` shows for Gaussian releases."""
    items = list(events)
    if not items:
        return np.zeros(0)
    return renyi_ledger(items).eps_puffer
