"""Gaussian noise under Rényi Pufferfish: the mechanism, for a count and for a histogram (docs/math.md §17).

:class:`GaussianCounts` adds N(0, σ²) noise to every released count and carries a
:class:`~puffer_core.accounting.renyi.RenyiEvent`.  Its σ comes from :mod:`.gaussian_calibration`:

- :func:`gaussian_count` — the count of a set of states over a user's sequence: σ_GWM (the General Wasserstein
  Mechanism, W∞ of the count's laws) or the exact σ\\* (the certified Rényi divergence of the two Gaussian
  mixtures, smallest σ meeting ε), whichever is asked; its event carries the exact account, so k releases
  are accounted exactly (:func:`puffer_core.accounting.renyi.renyi_ledger`).
- :func:`gaussian_histogram` — every count of the histogram at once, Gaussian noise on each: the GWM in the L2
  norm.  For two states the histogram is one count (n₁; n₀ = T − n₁) and the release of both counts with σ
  equals the release of n₁ with σ/√2 (the difference of the two outputs is sufficient, their sum carries no
  information), so σ\\* is exact; for more states W∞ in L2 is bounded by the exact W∞ in L1 (of
  :mod:`.wasserstein`) over √2 — count vectors with equal sums have ‖d‖₂ ≤ ‖d‖₁/√2 — and only the GWM is used.

Accuracy on its own rows: a count's error is N(0, σ²): E|Z| = σ·√(2/π), Pr[|Z| > α] = erfc(α/(σ√2))
(:func:`.noise.gaussian_failure`), and the interval ±σ·√2·erfc⁻¹(1 − confidence) holds the truth with that
confidence.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..accounting.renyi import RenyiEvent
from ..priors.models import MarkovChainPrior, as_theta
from ..secrets.values import Secrets, as_secrets
from ..validation import as_numbers, check_eps, check_flag, check_probability, check_rng, check_whole
from .base import Refused, check_counts, check_trials, opendp_prelude, top_k_indices
from .gaussian_calibration import (
    Divergences,
    GaussianCalibration,
    calibrate_gaussian_count,
    check_order,
    gwm_eps,
    gwm_sigma,
    pure_level,
)
from .noise import gaussian_alpha_for, gaussian_failure
from .wasserstein import wasserstein_scale

DEFAULT_ORDER = 2.0  # the Rényi order the registry's Gaussian mechanism is calibrated at


def query_key(priors: Sequence[MarkovChainPrior], what: str, secrets: Secrets | None) -> str:
    """A name for a query on a prior: the same name exactly when the same query, prior Θ and secrets."""
    digest = hashlib.sha256()
    for p in priors:
        digest.update(np.ascontiguousarray(p.transition).tobytes())
        digest.update(np.ascontiguousarray(p.initial).tobytes())
        digest.update(str(p.length).encode())
    digest.update(repr(as_secrets(secrets)).encode())
    return f"{what} · prior {digest.hexdigest()[:10]}"


@dataclass(eq=False)
class CountAccount:
    """The exact account of one count's Gaussian releases (a :class:`~puffer_core.accounting.renyi.RenyiAccount`).

    ``scale`` multiplies the release's σ before the count's divergence is read: 1 for the count itself, 1/√2 for
    a two-state histogram (module docstring).  Divergences are certified upper bounds, cached per (σ, α).
    """

    query: str
    w: float
    divergences: Divergences
    scale: float = 1.0
    _cache: dict = field(default_factory=dict, repr=False)

    def divergence(self, sigma: float, alpha: float) -> float:
        key = ("renyi", float(sigma), float(alpha))
        if key not in self._cache:
            at = self.divergences.renyi(sigma * self.scale, check_order(alpha), tolerance=1e-7)
            self._cache[key] = float(at.high.max()) if at.high.size else 0.0
        return self._cache[key]

    def pure(self, sigma: float) -> tuple[float, str]:
        key = ("pure", float(sigma))
        if key not in self._cache:
            self._cache[key] = pure_level(self.divergences, sigma * self.scale)
        return self._cache[key]


@dataclass(frozen=True)
class GaussianCounts:
    """Counts + independent N(0, σ²) noise on every count, accounted as Rényi Pufferfish (module docstring).

    ``query`` is ``"count"`` (one count per row: a count of a set of states, per group) or ``"histogram"``
    (one count per state, per group).  ``calibration`` is the count's calibration when there is one.
    """

    accounting: RenyiEvent
    sigma: float
    query: str = "histogram"
    calibration: GaussianCalibration | None = field(default=None, compare=False)
    noise: ClassVar[str] = "gaussian"

    def __post_init__(self) -> None:
        if not isinstance(self.accounting, RenyiEvent):
            raise ValueError(f"a Gaussian mechanism carries a RenyiEvent; got {type(self.accounting).__name__}")
        if self.sigma != self.accounting.sigma:
            raise ValueError(f"σ = {self.sigma} differs from the accounting's σ = {self.accounting.sigma}")
        if self.query not in ("count", "histogram"):
            raise ValueError(f"query must be 'count' or 'histogram'; got {self.query!r}")

    @property
    def name(self) -> str:
        return self.accounting.mechanism

    @property
    def noise_scale(self) -> float:
        """σ, the standard deviation of the noise on each count."""
        return self.sigma

    @property
    def variance(self) -> float:
        return self.sigma**2

    @property
    def std(self) -> float:
        return self.sigma

    @property
    def expected_abs_error(self) -> float:
        """E|noise| = σ·√(2/π), per count."""
        return self.sigma * math.sqrt(2.0 / math.pi)

    def expected_l1_error(self, n_counts: int) -> float:
        """E Σ_j |noisy_j − c_j| = n_counts·σ·√(2/π)."""
        return check_whole("n_counts", n_counts) * self.expected_abs_error

    def failure(self, alpha: float) -> float:
        """Pr[|noise| > α] for one count."""
        return 0.0 if self.sigma == 0 else gaussian_failure(alpha, self.sigma)

    def alpha_for(self, beta: float) -> float:
        """The smallest α with Pr[|noise| > α] ≤ β for one count (α-accuracy at failure probability β)."""
        if self.sigma == 0:
            check_probability("β (the failure probability)", beta, open_interval=True)
            return 0.0
        return gaussian_alpha_for(self.sigma, beta)

    def interval_halfwidth(self, confidence: float = 0.95) -> float:
        """w with Pr[|noise| ≤ w] = confidence for one count: the interval release ± w holds the truth."""
        confidence = check_probability("confidence", confidence, open_interval=True)
        return self.alpha_for(1.0 - confidence)

    def _values(self, counts: object) -> np.ndarray:
        if self.query == "histogram":
            return check_counts(counts)
        values = np.atleast_1d(as_numbers(counts, "counts (one count per row)"))
        if values.ndim > 2 or not np.all(np.isfinite(values)) or np.any(values < 0):
            raise ValueError("counts must be finite numbers ≥ 0: one count, or one per group")
        return values

    def release(self, counts: object, rng: np.random.Generator | None = None) -> np.ndarray:
        """One release of noisy counts (same shape as ``counts``).

        With ``rng=None`` (a real release) the noise comes from OpenDP's ``make_gaussian`` (its own secure
        generator); a Generator draws with numpy instead, for teaching.
        """
        values = self._values(counts)
        if rng is not None:
            return self.simulate(values, 1, check_rng(rng))[0]
        if self.sigma == 0:
            return values.astype(float).copy()
        flat = values.reshape(-1)
        measurement = self.opendp_measurement(flat.size)
        return np.array(measurement([float(v) for v in flat]), dtype=float).reshape(values.shape)

    def opendp_measurement(self, n_counts: int) -> Any:
        """OpenDP's ``make_gaussian`` (σ = scale) on ``n_counts`` float counts — used as the sampler only: its
        zero-concentrated DP map is about neighbouring datasets, not the Pufferfish account above."""
        n_counts = check_whole("n_counts", n_counts)
        dp = opendp_prelude()
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n_counts), dp.l2_distance(T=float)
        return dp.m.make_gaussian(*space, scale=self.sigma)

    def simulate(self, counts: object, trials: int, rng: np.random.Generator) -> np.ndarray:
        """``trials`` independent noisy copies, shape ``(trials,) + counts.shape``."""
        values = self._values(counts)
        trials = check_trials(trials, values)
        rng = check_rng(rng)
        return values[None, ...] + rng.normal(0.0, self.sigma, size=(trials,) + values.shape)

    @staticmethod
    def rank(noisy: np.ndarray, k: int) -> np.ndarray:
        """The top-k ranking of noisy counts along the last axis (post-processing)."""
        return top_k_indices(noisy, check_whole("k (how many top states to release)", k))

    def ranking(self, draws: np.ndarray, k: int) -> np.ndarray:
        return self.rank(draws, k)


def _event(name: str, alpha: float, eps: float, sigma: float, w: float, query: str,
           account: CountAccount | None, pure: tuple[float, str], secrets: Secrets | None) -> RenyiEvent:
    return RenyiEvent(name, alpha, eps, sigma, w, query, pure[0], pure[1], account, secrets=as_secrets(secrets))


def gaussian_count(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    states: object,
    eps: float,
    alpha: float = DEFAULT_ORDER,
    secrets: Secrets | None = None,
    exact: bool = True,
) -> GaussianCounts:
    """Gaussian noise on the count of ``states``, (α, ε)-Rényi Pufferfish for ``secrets`` (docs/math.md §17).

    ``exact=True``: the exact σ\\* (never above σ_GWM); ``exact=False``: σ_GWM.  The calibration (both σ, the
    variance saved, the certified divergence, the pure ε where one exists) is the mechanism's ``calibration``.
    """
    priors = as_theta(prior_or_priors, "the Gaussian mechanism")
    cal, div = calibrate_gaussian_count(priors, states, eps, alpha, secrets, exact)
    name = f"count of states {{{', '.join(str(s) for s in div.laws.states)}}}"
    account = CountAccount(query_key(priors, name, secrets), cal.w, div)
    spent = cal.divergence if cal.sigma > 0 else gwm_eps(cal.w, cal.alpha, 0.0)
    event = _event("gaussian_count", cal.alpha, spent, cal.sigma, cal.w, account.query, account,
                   (cal.pure_eps, cal.pure_note), secrets)
    return GaussianCounts(event, cal.sigma, "count", cal)


def gaussian_histogram(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    eps: float,
    alpha: float = DEFAULT_ORDER,
    secrets: Secrets | None = None,
    exact: bool = True,
) -> GaussianCounts:
    """Gaussian noise on every count of the histogram, (α, ε)-Rényi Pufferfish (module docstring).

    Two states: σ\\* exact (or σ_GWM with ``exact=False``).  More states: σ_GWM with W∞ in L2 bounded by the
    exact L1 W∞/√2 of :func:`.wasserstein.wasserstein_scale` (refused, with the estimate, beyond its limit).
    """
    priors = as_theta(prior_or_priors, "the Gaussian mechanism")
    alpha, eps = check_order(alpha), check_eps("ε (the Rényi Pufferfish level)", eps)
    exact = check_flag("exact", exact)
    key = query_key(priors, "histogram", secrets)
    if priors.n_states == 2:
        cal, div = calibrate_gaussian_count(priors, [1], eps, alpha, secrets, exact)
        sigma = math.sqrt(2.0) * cal.sigma
        account = CountAccount(key, math.sqrt(2.0) * cal.w, div, 1.0 / math.sqrt(2.0))
        spent = cal.divergence if sigma > 0 else 0.0
        event = _event("gaussian", alpha, spent, sigma, account.w, key, account, (cal.pure_eps, cal.pure_note), secrets)
        return GaussianCounts(event, sigma, "histogram", cal)
    try:
        scale = wasserstein_scale(priors, secrets)
    except Refused as exc:
        raise Refused(exc.code, f"the Gaussian mechanism's W∞ of the histogram (exact, in L1): {exc}") from None
    w1 = 0 if scale.pair[0] == scale.pair[1] else scale.w  # no protected pair with positive probability
    w2 = w1 / math.sqrt(2.0)
    sigma = gwm_sigma(w2, alpha, eps)
    if w1 > 0 and not math.isfinite(sigma):
        raise Refused("out_of_reach", f"ε = {eps:g} is too small for a finite σ")
    note = "not computed for more than two states (only the GWM's Rényi bound is used)"
    event = _event("gaussian", alpha, gwm_eps(w2, alpha, sigma), sigma, w2, key, None,
                   (0.0, "") if w1 == 0 else (math.inf, note), secrets)
    return GaussianCounts(event, sigma, "histogram", None)
