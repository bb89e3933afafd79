"""Attacker priors (docs/math.md §1, §2.3).

A :class:`MarkovChainPrior` describes one user's sequence of categorical states as a Markov
chain ``(initial, transition)``; a list of them is the set Θ.  A
:class:`GaussianProcessPrior` describes one real-valued record ``x ∈ R^n`` with a stationary
kernel, truncated to ``[-γ, γ]^n``.  Both are frozen: build a new one to change a parameter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy.sparse.csgraph import connected_components

from ..validation import (
    PROBABILITY_TOLERANCE,
    InvalidParameter,
    check_distribution,
    check_positive,
    check_rows,
    check_whole,
    human_seconds,
    is_whole,
)

ROW_TOLERANCE = PROBABILITY_TOLERANCE
MAX_LENGTH = 1_000_000
MAX_STATIONARY_STATES = 1_000  # GTH elimination costs ~K³ (K = 1,000: about 1 s)
TINY = 1e-300  # below this a probability loses precision or underflows in float64


def check_no_underflow(values: np.ndarray, support: np.ndarray, what: str) -> None:
    """Refuse when a structurally positive probability is below TINY (or underflowed to 0).

    A positive probability rounded to 0 would drop a secret pair or an output and make the
    reported ε too small, so this is an error rather than a silent approximation.
    """
    bad = support & ~(values >= TINY)
    if np.any(bad):
        raise ValueError(
            f"{what} has positive probabilities below {TINY:g} that double precision cannot hold;"
            " the exact computation would be wrong — set such tiny transition probabilities to 0"
            " or raise them"
        )


def _as_matrix(transition: object, labels: Sequence[object] | None = None) -> np.ndarray:
    """A checked transition matrix (docs/math.md §1): square, K ≥ 2 states, rows that are probability
    distributions (messages name the rows by ``labels``, as an editor shows them)."""
    return check_rows(transition, "the transition matrix", None if labels is None else list(labels), name_rows=False)


def stationary_distribution(transition: object, labels: Sequence[object] | None = None) -> np.ndarray:
    """The unique stationary distribution π of a row-stochastic matrix (π P = π).

    The matrix is checked first (square, finite, non-negative, rows summing to 1).  Raises ValueError
    when π is not unique (more than one closed class of states); the message names the states by
    ``labels`` (without, counts them from 1).
    """
    transition = _as_matrix(transition, labels)
    k = transition.shape[0]
    if k > MAX_STATIONARY_STATES:
        raise ValueError(
            f"the stationary distribution of {k:,} states needs about {human_seconds(k**3 * 1e-9)} of elimination"
            f" (at most {MAX_STATIONARY_STATES:,} states are solved); give an initial distribution, or merge rarely"
            " used states"
        )
    n_comp, comp = connected_components(transition > 0, directed=True, connection="strong")
    closed = []
    for c in range(n_comp):
        members = comp == c
        leaves = transition[np.ix_(members, ~members)].sum() > 0
        if not leaves:
            closed.append(c)
    if len(closed) != 1:
        named = labels is not None and len(labels) == k
        sets = [
            "{" + ", ".join(f"'{labels[i]}'" if named else str(i + 1) for i in np.flatnonzero(comp == c)) + "}"
            for c in closed
        ]
        groups = ", ".join(sets[:-1]) + " and " + sets[-1]
        raise ValueError(
            "this chain has no unique stationary distribution: it has "
            f"{len(closed)} closed groups of states that never leave each other ({groups});"
            " give an initial distribution, or add transitions that connect them"
        )
    members = np.flatnonzero(comp == closed[0])
    pi = np.zeros(k)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        pi[members] = _gth(transition[np.ix_(members, members)])
    check_no_underflow(pi, comp == closed[0], "the stationary distribution")
    return pi  # states outside the closed class are transient: exactly zero mass


def _gth(transition: np.ndarray) -> np.ndarray:
    """Stationary distribution of an irreducible chain by Grassmann–Taksar–Heyman elimination.

    GTH uses no subtractions, so every component keeps full relative accuracy — a state whose
    mass is 1e-222 keeps it instead of being rounded to 0 (which would drop its secrets).
    """
    a = np.array(transition, dtype=float)
    n = a.shape[0]
    for k in range(n - 1, 0, -1):
        s = a[k, :k].sum()
        a[:k, k] /= s
        a[:k, :k] += np.outer(a[:k, k], a[k, :k])
    pi = np.zeros(n)
    pi[0] = 1.0
    for k in range(1, n):
        pi[k] = pi[:k] @ a[:k, k]
    return pi / pi.sum()


@dataclass(frozen=True, eq=False)
class MarkovChainPrior:
    """A Markov chain prior θ = (initial, transition) over sequences of ``length`` states.

    ``initial=None`` means the stationary distribution (docs/math.md §1).  ``labels`` name the
    states (default "0", "1", …).
    """

    transition: np.ndarray
    initial: np.ndarray | None = None
    length: int = 100
    labels: tuple[str, ...] | None = None
    stationary_initial: bool = field(init=False)

    def __init__(
        self,
        transition: object,
        initial: object | None = None,
        length: int = 100,
        labels: Sequence[object] | None = None,
    ) -> None:
        if labels is not None and (isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__")):
            raise InvalidParameter(f"labels must be a list of state names, one per state; got {labels!r}")
        matrix = _as_matrix(transition, labels)
        k = matrix.shape[0]
        if not is_whole(length):
            raise InvalidParameter(f"length must be a whole number of entries; got {length!r}")
        if length < 1:
            raise ValueError(f"length must be at least 1; got {length}")
        length = int(length)
        if length > MAX_LENGTH:
            raise ValueError(f"length {length} is over the limit of {MAX_LENGTH} entries per user")
        if labels is None:
            names = tuple(str(i) for i in range(k))
        else:
            names = tuple(str(x) for x in labels)
            if len(names) != k:
                raise ValueError(f"{len(names)} labels given for {k} states")
            if len(set(names)) != k:
                raise ValueError("state labels must be distinct")
        if initial is None:
            init = stationary_distribution(matrix, None if labels is None else names)
            stationary_initial = True
        else:
            init = check_distribution(initial, "the initial distribution")
            if init.shape != (k,):
                raise ValueError(
                    f"the initial distribution needs {k} entries (a flat list, one per state); got shape {init.shape}"
                )
            init = init / init.sum()
            stationary_initial = False
        matrix.setflags(write=False)
        init.setflags(write=False)
        object.__setattr__(self, "transition", matrix)
        object.__setattr__(self, "initial", init)
        object.__setattr__(self, "length", length)
        object.__setattr__(self, "labels", names)
        object.__setattr__(self, "stationary_initial", stationary_initial)

    @property
    def n_states(self) -> int:
        return self.transition.shape[0]

    @property
    def stationary(self) -> np.ndarray:
        """The stationary distribution π of the transition matrix (raises if not unique)."""
        if self.stationary_initial:
            return self.initial
        pi = self.stationary_or_none
        if pi is None:
            return stationary_distribution(self.transition, self.labels)  # raises, naming the closed groups
        return pi

    @cached_property
    def stationary_or_none(self) -> np.ndarray | None:
        """π when the chain has a unique stationary distribution, else None (computed once per prior)."""
        if self.stationary_initial:
            return self.initial
        try:
            pi = stationary_distribution(self.transition)
        except ValueError:
            return None
        pi.setflags(write=False)
        return pi

    def marginals(self, length: int | None = None) -> np.ndarray:
        """``p_t = initial · P^(t-1)`` for t = 1..length, shape (length, K).

        Raises ValueError if a marginal that is positive in exact arithmetic underflows.
        """
        n = self.length if length is None else length
        out = np.empty((n, self.n_states))
        p = np.asarray(self.initial, dtype=float)
        structure = (self.transition > 0).astype(float)
        support = p > 0
        for t in range(n):
            out[t] = p
            check_no_underflow(p, support, f"the distribution of entry {t + 1}")
            p = p @ self.transition
            support = (support.astype(float) @ structure) > 0
        return out

    def with_length(self, length: int) -> MarkovChainPrior:
        return MarkovChainPrior(
            self.transition, None if self.stationary_initial else self.initial, length, self.labels
        )

    def __repr__(self) -> str:
        init = "stationary" if self.stationary_initial else np.array2string(self.initial, precision=3)
        return f"MarkovChainPrior(K={self.n_states}, length={self.length}, initial={init})"


KERNELS = ("squared_exponential", "exponential")
MAX_COORDINATES = 5000
MAX_SCALE = 1e6  # largest length scale and γ: beyond, Σ is all ones to double precision or r·r overflows
MIN_DELTA = 1e-200  # smallest secret width: interval probabilities stay above the double-precision range


@dataclass(frozen=True)
class GaussianProcessPrior:
    """One record x ∈ R^n ~ N(0, Σ) truncated to [−γ, γ]^n (docs/math.md §2.3).

    ``Σ_jk = k(|j − k|)``; the squared-exponential kernel is the paper's
    ``exp(−(j−k)²/ℓ)`` (no factor 2, ℓ not squared); the exponential kernel is
    ``exp(−|j−k|/ℓ)``.  Secrets are intervals of width ``delta``.
    """

    n: int
    length_scale: float
    kernel: str = "squared_exponential"
    gamma: float = 5.0
    delta: float = 0.1

    def __post_init__(self) -> None:
        check_whole("n (the number of coordinates)", self.n)
        if self.n > MAX_COORDINATES:
            raise ValueError(f"n = {self.n} is too large; at most {MAX_COORDINATES} coordinates are supported")
        for name in ("length_scale", "gamma", "delta"):
            check_positive(name, getattr(self, name))
        if self.length_scale > MAX_SCALE:
            raise ValueError(
                f"length_scale = {self.length_scale:g} is too large: every coordinate is then a copy of the others"
                f" (Σ is all ones in double precision); use length_scale ≤ {MAX_SCALE:g}"
            )
        if self.gamma > MAX_SCALE:
            raise ValueError(
                f"gamma = {self.gamma:g} is too large: the range [−γ, γ] is in units of the prior's standard"
                f" deviation, and beyond {MAX_SCALE:g} of them double precision cannot hold the tail probabilities;"
                f" use gamma ≤ {MAX_SCALE:g}"
            )
        if self.delta < MIN_DELTA:
            raise ValueError(
                f"delta = {self.delta:g} is too small: the secrets' interval probabilities would leave the range of"
                f" double precision; use delta ≥ {MIN_DELTA:g}"
            )
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}; got {self.kernel!r}")
        if self.delta >= 2 * self.gamma:
            raise ValueError(
                f"delta = {self.delta} must be smaller than the range 2·gamma = {2 * self.gamma}"
            )
        object.__setattr__(self, "n", int(self.n))

    @property
    def length(self) -> int:
        return self.n

    def covariance(self) -> np.ndarray:
        idx = np.arange(self.n)
        lag = np.abs(idx[:, None] - idx[None, :]).astype(float)
        if self.kernel == "squared_exponential":
            return np.exp(-(lag**2) / self.length_scale)
        return np.exp(-lag / self.length_scale)


class Theta(tuple):
    """The set Θ of the attacker's Markov chain priors (docs/math.md §1): one or more chains over the same K states.

    An immutable tuple of :class:`MarkovChainPrior` (built by :func:`as_theta`, which checks it), so every
    function that takes "a prior or a list of priors" also takes a Θ; the priors may describe sequences of
    different lengths unless a caller asks for one length.
    """

    __slots__ = ()

    @property
    def n_states(self) -> int:
        return self[0].n_states

    @property
    def lengths(self) -> tuple[int, ...]:
        return tuple(p.length for p in self)

    @property
    def max_length(self) -> int:
        return max(self.lengths)


def as_theta(prior_or_priors: object, caller: str, same_length: bool = False) -> Theta:
    """One :class:`MarkovChainPrior` or a set Θ of them (a non-empty list or tuple, one number of states), as a Θ.

    ``caller`` names the function in the message when something else is given; ``same_length``: every
    prior must describe sequences of the same length (a stream, an attack).
    """
    if isinstance(prior_or_priors, Theta):
        priors = list(prior_or_priors)
    elif isinstance(prior_or_priors, MarkovChainPrior):
        priors = [prior_or_priors]
    else:
        wanted = f"{caller}: expected a MarkovChainPrior or a non-empty list of them (the set Θ)"
        if not isinstance(prior_or_priors, (list, tuple)):
            raise InvalidParameter(f"{wanted}; got {type(prior_or_priors).__name__}")
        priors = list(prior_or_priors)
        if not priors:
            raise ValueError(f"{wanted}; got an empty list")
        for prior in priors:
            if not isinstance(prior, MarkovChainPrior):
                raise InvalidParameter(
                    f"{caller} works with Markov chain priors: every prior in Θ must be a MarkovChainPrior;"
                    f" got {type(prior).__name__}"
                )
    states = sorted({p.n_states for p in priors})
    if len(states) != 1:
        raise ValueError(f"all priors in Θ must have the same number of states; got {states}")
    if same_length and len({p.length for p in priors}) != 1:
        lengths = sorted({p.length for p in priors})
        raise ValueError(f"all priors in Θ must describe the same stream length (T); got lengths {lengths}")
    return Theta(priors)


def theta_or_none(prior: object, caller: str, same_length: bool = False) -> Theta | None:
    """The Θ of ``prior`` when it is a :class:`MarkovChainPrior` or a non-empty list of them (checked by
    :func:`as_theta`); None for anything else (a Gaussian-process prior, None, a list of other things)."""
    if isinstance(prior, MarkovChainPrior) or (
        isinstance(prior, (list, tuple)) and prior and all(isinstance(p, MarkovChainPrior) for p in prior)
    ):
        return as_theta(prior, caller, same_length)
    return None
