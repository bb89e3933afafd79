"""The tightness ladder: attack (lower bound) ≤ exact truth ≤ every reported bound (docs/math.md §11).

For one prior (or Θ) and one release (:data:`puffer_core.tightness.releases.RELEASES`) at one ε,
:func:`ladder_row` runs the seeded attack, enumerates the exact leakage when the chain is small
enough, and evaluates every stream bound of :data:`puffer_core.stream.registry.STREAM_BOUNDS` that
applies (TPL only to a stream).  The rungs are ordered: a bound below the exact truth, or an attack
above a bound, would mean a bug — :attr:`LadderRow.in_order` says whether the order holds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..engine.curve import InfluenceCurve
from ..priors.models import MarkovChainPrior, as_theta
from ..secrets.values import Secrets, as_secrets
from ..stream.registry import STREAM_BOUNDS, stream_setting
from ..validation import check_eps, check_whole
from .releases import release_spec

ROUNDING = 1e-9  # the attack and the enumeration may differ in the last bits when the attack finds the truth


@dataclass(frozen=True)
class LadderRow:
    """One prior's ladder: lower bound (attack) ≤ truth (exact, when small enough) ≤ the reported bounds.

    ``bounds`` holds (name, value) for every registered stream bound in registry order; the value is
    None where the bound does not apply (TPL for a whole-sequence release) or was refused.  ``lower``
    is None when the attack was not run (``attack_note`` says why), ``exact`` None when the chain is
    too large to enumerate (``exact_note``).  ``entry`` is 0-based; ``pair`` names the two states.
    """

    label: str
    short: str
    release: str
    eps: float
    k: int
    seed: int
    draws: int
    length: int
    lower: float | None
    entry: int | None
    pair: tuple[str, str] | None
    exact: float | None
    bounds: tuple[tuple[str, float | None], ...]
    attack_note: str = ""
    exact_note: str = ""

    def value(self, name: str) -> float | None:
        """The value of bound ``name`` (None: it does not apply)."""
        return dict(self.bounds).get(name)

    @property
    def bound(self) -> float:
        """The tightest reported bound."""
        return min(v for _, v in self.bounds if v is not None)

    @property
    def bound_name(self) -> str:
        """The label of the tightest reported bound."""
        value, name = min((v, n) for n, v in self.bounds if v is not None)
        return STREAM_BOUNDS[name].short

    @property
    def in_order(self) -> bool:
        """lower ≤ truth ≤ every bound (up to rounding) — False would mean a wrong bound."""
        high = self.bound * (1 + ROUNDING) + ROUNDING
        ok = self.exact is None or self.exact <= high
        if self.lower is not None:
            ok = ok and self.lower <= high and (self.exact is None or self.lower <= self.exact + ROUNDING)
        return ok

    def describe(self) -> str:
        """"lower ≤ truth ≤ bound" in words, with the seed ("" when not attacked)."""
        if self.lower is None:
            return ""
        text = f"attack (seed {self.seed}): ε ≥ {self.lower:.4g}"
        if self.exact is not None:
            text += f" ≤ exact {self.exact:.4g}"
        return text + f" ≤ reported bound {self.bound:.4g} ({self.bound_name})"


def ladder_row(
    prior_or_priors: MarkovChainPrior | Sequence[MarkovChainPrior],
    release: str,
    eps: float,
    k: int = 1,
    seed: int = 0,
    draws: int = 200,
    curve: InfluenceCurve | None = None,
    label: str = "",
    short: str = "",
    secrets: Secrets | None = None,
) -> LadderRow:
    """Attack one prior (seeded), with its exact leakage when small enough and every bound that applies.

    ``eps`` is the ε per step of a stream release, or per entry of a whole-sequence release; ``curve``
    defaults to the priors' a(b) curve.  The attack and the enumeration run within the budgets of
    :mod:`puffer_core.tightness.releases` (their notes say why one was not run).  ``secrets``: every rung for
    the chosen value pairs and entries (docs/math.md §16; a given curve must be for the same secrets).
    """
    spec = release_spec(release)
    priors = as_theta(prior_or_priors, "the tightness ladder", same_length=True)
    eps = check_eps("eps", eps)
    k = check_whole("k", k)
    n_states, length = priors.n_states, priors.max_length
    chosen = as_secrets(secrets).check(n_states)
    if curve is not None and curve.secrets != chosen:
        raise ValueError("the curve was computed for other secrets than the ladder's; compute it with secrets=")
    setting = stream_setting(list(priors), curve, secrets=chosen)
    attack_note = spec.attack_refusal(n_states, length, k) or ""
    attack = None if attack_note else spec.attack(priors, eps, k=k, seed=seed, draws=draws, secrets=chosen)
    exact_note = spec.exact_refusal(n_states, length, len(priors), k) or ""
    exact = None if exact_note else spec.exact(priors, eps, k, chosen)
    bounds = []
    for name, bound in STREAM_BOUNDS.items():
        if not (spec.stream or bound.whole_sequence):
            bounds.append((name, None))
            continue
        values = bound.values(setting, [eps] * length)
        bounds.append((name, None if values.values is None else values.max))
    pair = None
    if attack is not None and attack.pair is not None:
        labels = priors[attack.prior_index or 0].labels
        pair = (str(labels[attack.pair[0]]), str(labels[attack.pair[1]]))
    return LadderRow(
        label=label,
        short=short or label,
        release=release,
        eps=eps,
        k=k,
        seed=seed,
        draws=draws,
        length=length,
        lower=None if attack is None else attack.lower,
        entry=None if attack is None else attack.entry,
        pair=pair,
        exact=exact,
        bounds=tuple(bounds),
        attack_note=attack_note,
        exact_note=exact_note,
    )


def ladder_order() -> tuple[str, ...]:
    """The rungs from below: the attack, the exact truth, then every registered bound."""
    return ("attack", "exact", *STREAM_BOUNDS)


def ratio_text(row: LadderRow) -> str:
    """How close the attack came to the tightest bound, as a percentage ("" when not attacked)."""
    if row.lower is None or row.bound == 0 or not math.isfinite(row.bound):
        return ""
    return f"{row.lower / row.bound:.0%}"
