"""What drives a(1): the transitions behind the leakage of one entry (docs/math.md §2.1, §6).

With b = 1 the high-influence set is the secret's own entry, H = {t}, and by the Markov
property the rest of the sequence leaks about X_t through its two neighbours only (§2.1):

    interior t:  a_t(x, x') = left_t(x, x') + right(x, x')
    left_t(x, x')  = max_{l: p_{t−1}(l) > 0} log P[l, x] / P[l, x'] + log p_t(x') − log p_t(x)
    right(x, x')   = max_r log P[x, r] / P[x', r]

(the first entry has the right term only, the last the left term only; 0/0 terms are skipped
and a positive probability over 0 is +inf), and a(1) is the largest a_t over entries t and
pairs of states with prior mass.  :func:`influence_drivers` returns where that maximum is
attained: the pair (x, x'), the transition pair l→x against l→x' of the left term, x→r against
x'→r of the right term, and — given the transition counts of the data the chain was fitted
to — which of those transitions were never observed.  A fitted chain gives an unseen
transition the smoothing τ (§6), so a term log(P/τ) grows like log(1/τ): a large a(1) then says
more about the smoothing than about the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..priors.models import MarkovChainPrior
from ..validation import InvalidParameter

MAX_NODES = 100_000  # entries examined one by one (a stationary prior needs three)


@dataclass(frozen=True)
class Transition:
    """One transition of a driving term: ``source`` → ``target``, its probability and (if known) its count."""

    source: int
    target: int
    probability: float
    count: int | None

    @property
    def unseen(self) -> bool:
        return self.count == 0


@dataclass(frozen=True)
class DrivingTerm:
    """One side's term of a(1): log(numerator.probability / denominator.probability)."""

    side: str  # "left" (the entry before the secret) or "right" (the entry after it)
    numerator: Transition
    denominator: Transition
    value: float


@dataclass(frozen=True)
class InfluenceDrivers:
    """Where a(1) is attained (module docstring); ``entry`` is 1-based, ``where`` is "interior", "first" or "last".

    ``marginal`` is log p_t(x') − log p_t(x) (part of the left term).  ``labels`` name the states.
    """

    a1: float
    entry: int
    where: str
    pair: tuple[int, int]
    terms: tuple[DrivingTerm, ...]
    marginal: float
    labels: tuple[str, ...]

    @property
    def unseen(self) -> tuple[Transition, ...]:
        """The driving transitions never observed in the data (empty without counts)."""
        return tuple(t for term in self.terms for t in (term.numerator, term.denominator) if t.unseen)

    @property
    def unseen_share(self) -> float:
        """The share of a(1) carried by the terms that involve an unseen transition (0 without counts)."""
        if not math.isfinite(self.a1) or self.a1 <= 0:
            return 0.0
        part = sum(t.value for t in self.terms if t.numerator.unseen or t.denominator.unseen)
        return max(0.0, min(1.0, part / self.a1))

    def name(self, transition: Transition) -> str:
        return f"{self.labels[transition.source]} → {self.labels[transition.target]}"


def _log_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """log(num/den) with 0/0 → −inf (skipped by the max) and positive/0 → +inf."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(num) - np.log(den)
    return np.where((num == 0) & (den == 0), -np.inf, np.where(den == 0, np.where(num > 0, np.inf, -np.inf), out))


def influence_drivers(prior: MarkovChainPrior, counts: np.ndarray | None = None) -> InfluenceDrivers:
    """a(1) of one Markov chain prior and the transitions that drive it (module docstring).

    ``counts``: the K×K transition counts of the data the chain was fitted to
    (:func:`puffer_core.priors.fitting.transition_counts`), to tell which driving transitions
    were never observed.  A prior of length 1 has a(1) = 0 (no other entry).
    """
    if not isinstance(prior, MarkovChainPrior):
        raise InvalidParameter(f"influence_drivers takes a MarkovChainPrior; got {type(prior).__name__}")
    k, T = prior.n_states, prior.length
    n = None
    if counts is not None:
        n = np.asarray(counts)
        if n.shape != (k, k) or np.any(n < 0):
            raise ValueError(f"counts must be the {k}×{k} transition counts of the data (non-negative)")
    if T == 1:
        return InfluenceDrivers(0.0, 1, "only", (0, 0), (), 0.0, prior.labels)
    P = np.asarray(prior.transition, dtype=float)
    # right[x, x', r] = log P[x, r]/P[x', r]; left_core[l, x, x'] = log P[l, x]/P[l, x']
    right_all = _log_ratio(P[:, None, :], P[None, :, :])
    right = right_all.max(axis=2)
    right_arg = right_all.argmax(axis=2)
    left_all = _log_ratio(P[:, :, None], P[:, None, :])
    if T > MAX_NODES and not prior.stationary_initial:
        raise ValueError(f"a chain of {T:,} entries with a given initial distribution is too long to examine here")
    nodes = [1, 2, T] if prior.stationary_initial else list(range(1, T + 1))
    marg = prior.marginals(max(nodes))
    best: tuple[float, int, int, int, str] | None = None
    with np.errstate(divide="ignore", invalid="ignore"):
        log_marg = np.log(marg)
    for t in nodes:
        p_t = marg[t - 1]
        valid = (p_t[:, None] > 0) & (p_t[None, :] > 0) & ~np.eye(k, dtype=bool)
        if not valid.any():
            continue
        if t > 1:
            support = marg[t - 2] > 0
            left_masked = np.where(support[:, None, None], left_all, -np.inf)
            with np.errstate(invalid="ignore"):  # states without mass give NaN here; they hold no secret
                left = left_masked.max(axis=0) + log_marg[t - 1][None, :] - log_marg[t - 1][:, None]
        if t == 1:
            value, where = right, "first"
        elif t == T:
            value, where = left, "last"
        else:
            value, where = left + right, "interior"
        value = np.where(valid, np.nan_to_num(value, nan=-np.inf, posinf=np.inf), -np.inf)
        i = int(np.argmax(value))
        x, y = divmod(i, k)
        if best is None or value[x, y] > best[0]:
            best = (float(value[x, y]), t, x, y, where)
    if best is None:
        return InfluenceDrivers(0.0, 1, "no secret", (0, 0), (), 0.0, prior.labels)
    a1, t, x, y, where = best

    def transition(i: int, j: int) -> Transition:
        return Transition(i, j, float(P[i, j]), None if n is None else int(n[i, j]))

    terms = []
    marginal = 0.0
    if where in ("interior", "last"):
        support = marg[t - 2] > 0
        candidates = np.where(support, left_all[:, x, y], -np.inf)
        source = int(np.argmax(candidates))
        terms.append(DrivingTerm("left", transition(source, x), transition(source, y), float(candidates[source])))
        marginal = float(log_marg[t - 1][y] - log_marg[t - 1][x])
    if where in ("interior", "first"):
        r = int(right_arg[x, y])
        terms.append(DrivingTerm("right", transition(x, r), transition(y, r), float(right[x, y])))
    return InfluenceDrivers(a1, t, where, (x, y), tuple(terms), marginal, prior.labels)
