"""The output laws of the releases the audits and the attacker check (docs/math.md §10, §11).

One class per law, in the manner of diffprivlib's mechanisms: each holds its ε, gives its
output law (log-probabilities, exact in log space; probabilities where a double can hold them)
and draws from it.

- :class:`RandomizedResponse` — report the state, or another one uniformly (per step of a stream);
- :class:`ClampedDiscreteLaplace` — two-sided geometric noise on counts, clamped to a range
  (a noisy histogram per step of a stream, or one user's histogram of the whole sequence);
- :class:`ExponentialRanking` — the top-k states by count, k rounds of the exponential mechanism.

Row x of an *emission* is the law of the release r_t given X_t = x.  The exact audit
(:mod:`puffer_core.audit.stream`) and the attacker (:mod:`puffer_core.attacks`) read these laws;
neither imports the bounds they check, and nothing here imports a bound.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.special import logsumexp

from ..priors.models import TINY
from ..validation import InvalidParameter, check_eps, check_rng, check_rows, check_whole, is_whole

MAX_EMISSION_OUTPUTS = 1_000_000  # outputs of one per-step emission
_CHUNK_CELLS = 4_000_000  # rankings × count cells × states held at once
LOG_TINY = math.log(TINY)  # a probability below e^this is refused where probabilities (not logs) are asked for


def _exp_or_refuse(logs: np.ndarray, what: str) -> np.ndarray:
    """Probabilities from log-probabilities; refuses a positive probability a double cannot hold.

    A probability rounded to 0 would make a possible output impossible under some state, and the
    leakage computed from it infinite or wrong (docs/math.md §9): refuse instead.
    """
    tiny = np.isfinite(logs) & (logs < LOG_TINY)
    if np.any(tiny):
        raise ValueError(
            f"{what} has probabilities as small as e^{float(logs[tiny].min()):.4g}, below the {TINY:g} a double can"
            " hold; as probabilities they would round to 0 and the release would look infinitely leaky. Use a"
            " smaller ε, or the law's log-probabilities (log_emission), which the attacker uses"
        )
    return np.exp(logs)


@dataclass(frozen=True)
class RandomizedResponse:
    """Randomized response on K states: Pr[r = x | X = x] = e^ε / (e^ε + K − 1), else 1 / (e^ε + K − 1).

    The release is ε-DP per entry (the ratio of any output's probability under two states is at
    most e^ε).  Log-probabilities are exact for every finite ε: log Pr[r ≠ x | x] =
    −ε − log(1 + (K − 1)e^{−ε}).
    """

    n_states: int
    epsilon: float
    name: ClassVar[str] = "randomized_response"

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_states", check_whole("n_states", self.n_states, minimum=2))
        object.__setattr__(self, "epsilon", check_eps("eps", self.epsilon, allow_zero=True))

    @property
    def outputs(self) -> int:
        return self.n_states

    def log_emission(self) -> np.ndarray:
        """log Pr[r | X = x], a K×K matrix (row x: the state, column r: the output)."""
        k, eps = self.n_states, self.epsilon
        norm = math.log1p((k - 1) * math.exp(-eps))  # log((e^ε + K − 1)/e^ε)
        out = np.full((k, k), -eps - norm)
        np.fill_diagonal(out, -norm)
        return out

    def emission(self) -> np.ndarray:
        """Pr[r | X = x]; refused when the probability of lying is below what a double can hold (ε ≳ 690)."""
        return _exp_or_refuse(self.log_emission(), f"randomized response with ε = {self.epsilon:g}")

    def sample(self, states: object, rng: np.random.Generator) -> np.ndarray:
        """One output per state in ``states`` (an array of state indices)."""
        rng = check_rng(rng)
        x = np.asarray(states, dtype=np.int64)
        k = self.n_states
        keep = np.log(rng.random(x.shape)) < self.log_emission()[0, 0]
        other = (x + rng.integers(1, k, size=x.shape)) % k
        return np.where(keep, x, other)


@dataclass(frozen=True)
class ClampedDiscreteLaplace:
    """Two-sided geometric noise on each count, clamped to ``low..high`` (docs/math.md §10, §11).

    Pr[Z = z] ∝ e^{−ε|z|/2}: the discretised Laplace of scale 2/ε, so a histogram (L1 sensitivity
    2 to one entry) released with it is ε-DP per entry.  Clamping is post-processing: a noisy
    count below ``low`` is reported as ``low``, above ``high`` as ``high``.  Every count must lie in
    ``low..high`` (``low < high``).  For a count c and r = e^{−ε/2}:

        Pr[v | c] = (1 − r)/(1 + r) · r^{|v − c|}     for low < v < high,
        Pr[low | c] = r^{c − low}/(1 + r),   Pr[high | c] = r^{high − c}/(1 + r),

    computed in log space (exact for any ε > 0).
    """

    epsilon: float
    low: int
    high: int
    name: ClassVar[str] = "clamped_discrete_laplace"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_eps("eps", self.epsilon))
        if not (is_whole(self.low) and is_whole(self.high)):
            raise ValueError(f"low and high must be whole numbers; got {self.low!r} and {self.high!r}")
        if not self.low < self.high:
            raise ValueError(f"the clamping range needs low < high; got {self.low}..{self.high}")
        object.__setattr__(self, "low", int(self.low))
        object.__setattr__(self, "high", int(self.high))

    @property
    def values(self) -> np.ndarray:
        """The possible noisy counts low..high."""
        return np.arange(self.low, self.high + 1)

    def log_law(self, counts: object) -> np.ndarray:
        """log Pr[noisy count = v | count] for every count given and every v in low..high: (counts, values)."""
        c = np.asarray(counts, dtype=np.int64).reshape(-1)
        if c.size and (c.min() < self.low or c.max() > self.high):
            raise ValueError(f"counts must lie in the clamping range {self.low}..{self.high}")
        half = self.epsilon / 2.0
        r = math.exp(-half)
        log_edge = -math.log1p(r)
        log_inner = math.log(-math.expm1(-half)) + log_edge  # log((1 − r)/(1 + r))
        v = self.values[None, :]
        out = log_inner - half * np.abs(v - c[:, None]).astype(float)
        out[:, 0] = log_edge - half * (c - self.low)
        out[:, -1] = log_edge - half * (self.high - c)
        return out

    def log_likelihood(self, outputs: object, counts: object) -> np.ndarray:
        """log Pr[noisy count vector | count vector], shape (outputs, count vectors); both (n, K) arrays."""
        out = np.asarray(outputs, dtype=np.int64)
        cnt = np.asarray(counts, dtype=np.int64)
        if out.ndim != 2 or cnt.ndim != 2 or out.shape[1] != cnt.shape[1]:
            raise ValueError("outputs and counts must be (n, K) arrays with the same K")
        if out.size and (out.min() < self.low or out.max() > self.high):
            raise ValueError(f"noisy counts lie in {self.low}..{self.high}")
        table = self.log_law(np.arange(self.low, self.high + 1))  # table[count − low, value − low]
        total = np.zeros((out.shape[0], cnt.shape[0]))
        for j in range(out.shape[1]):
            total += table[(cnt[:, j] - self.low)[None, :], (out[:, j] - self.low)[:, None]]
        return total

    def log_emission(self, n_states: int) -> np.ndarray:
        """One user's entry as a noisy histogram over K states: row x adds 1 to count x (the rest are 0).

        Outputs are the (high − low + 1)^K clamped count vectors in C order (the first count varies
        slowest).  Counts of the other users are known to the attacker (the DP neighbour) and left out.
        """
        k = check_whole("n_states", n_states, minimum=2)
        if not self.low <= 0 < 1 <= self.high:
            raise ValueError(
                f"the clamping range must contain 0 and 1 (low ≤ 0, high ≥ 1); got {self.low}..{self.high}"
            )
        n_values = self.high - self.low + 1
        if n_values**k > MAX_EMISSION_OUTPUTS:
            raise ValueError(
                f"{n_values} values per count for {k} states give {n_values**k:,} outputs; at most"
                f" {MAX_EMISSION_OUTPUTS:,} (narrow the clamping range)"
            )
        per_count = self.log_law([0, 1])  # [mean 0, mean 1] × values
        out = np.empty((k, n_values**k))
        for x in range(k):
            joint = np.zeros(1)
            for state in range(k):
                joint = (joint[:, None] + per_count[int(state == x)][None, :]).reshape(-1)
            out[x] = joint
        return out

    def emission(self, n_states: int) -> np.ndarray:
        """Probabilities of :meth:`log_emission`; refused when one is below what a double holds (ε ≳ 1,380)."""
        return _exp_or_refuse(self.log_emission(n_states), f"the noisy histogram with ε = {self.epsilon:g}")

    def probabilities(self, counts: object) -> np.ndarray:
        """Pr[noisy count vector | counts] for every clamped vector (C order), for one vector of counts."""
        law = _exp_or_refuse(self.log_law(counts), f"the noisy counts with ε = {self.epsilon:g}")
        joint = np.ones(1)
        for row in law:
            joint = np.outer(joint, row).reshape(-1)
        return joint

    def sample(self, counts: object, rng: np.random.Generator) -> np.ndarray:
        """Noisy clamped counts, same shape as ``counts``: Z = G₁ − G₂ with G geometric on {0, 1, …}."""
        rng = check_rng(rng)
        c = np.asarray(counts, dtype=np.int64)
        p = -math.expm1(-self.epsilon / 2.0)
        noise = (rng.geometric(p, size=c.shape) - 1) - (rng.geometric(p, size=c.shape) - 1)
        return np.clip(c + noise, self.low, self.high)


@dataclass(frozen=True)
class ExponentialRanking:
    """The top-k states by count: k rounds without replacement, each with ε/k (docs/math.md §5).

    Round j picks a state r not yet picked with Pr ∝ exp((ε/k)·count(r)/2) (utility = count, Δu = 1);
    the output is the ranking of the k picks.  The release is ε-DP per entry.
    """

    epsilon: float
    k: int = 1
    name: ClassVar[str] = "exponential_ranking"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_eps("eps", self.epsilon))
        object.__setattr__(self, "k", check_whole("k", self.k))

    def rankings(self, n_states: int, limit: int = MAX_EMISSION_OUTPUTS) -> np.ndarray:
        """Every ranking (ordered k-tuples of distinct states), shape (K!/(K−k)!, k)."""
        n_states = check_whole("n_states", n_states)
        if self.k > n_states:
            raise ValueError(f"k = {self.k} is larger than the number of states ({n_states})")
        n = math.perm(n_states, self.k)
        if n > limit:
            raise ValueError(f"{n:,} rankings of the top {self.k} of {n_states} states; at most {limit:,}")
        return np.array(list(itertools.permutations(range(n_states), self.k)), dtype=np.int64).reshape(n, self.k)

    def log_probabilities(self, rankings: object, counts: object) -> np.ndarray:
        """log Pr[ranking | counts], shape (rankings, count vectors); ``counts`` is (n, K) (or one vector K)."""
        ranks = np.asarray(rankings, dtype=np.int64)
        cnt = np.atleast_2d(np.asarray(counts, dtype=float))
        if ranks.ndim != 2 or ranks.shape[1] != self.k:
            raise ValueError(f"rankings must be an (n, {self.k}) array of states")
        n_states = cnt.shape[1]
        if ranks.size and (ranks.min() < 0 or ranks.max() >= n_states):
            raise ValueError(f"rankings name states 0..{n_states - 1}")
        half = self.epsilon / self.k / 2.0
        out = np.empty((ranks.shape[0], cnt.shape[0]))
        step = max(1, _CHUNK_CELLS // max(1, cnt.size))
        for start in range(0, ranks.shape[0], step):
            chunk = ranks[start : start + step]
            left = np.ones((chunk.shape[0], n_states), dtype=bool)
            rows = np.arange(chunk.shape[0])
            total = np.zeros((chunk.shape[0], cnt.shape[0]))
            for j in range(self.k):
                picked = chunk[:, j]
                counts_left = np.where(left[:, None, :], cnt[None, :, :], -np.inf)  # (chunk, cells, K)
                # scores relative to the largest count still left (the law does not change): huge counts or ε
                # give −inf for what a double cannot hold, never inf − inf
                best = counts_left.max(axis=2, keepdims=True)
                with np.errstate(over="ignore", invalid="ignore"):
                    scores = np.where(left[:, None, :], half * (counts_left - best), -np.inf)
                total += scores[rows, :, picked] - logsumexp(scores, axis=2)
                left[rows, picked] = False
            out[start : start + step] = total
        return out

    def probabilities(self, counts: object) -> np.ndarray:
        """Pr[ranking] for every ranking of :meth:`rankings` (one vector of counts); tiny ones are 0."""
        values = np.asarray(counts, dtype=float).reshape(-1)
        return np.exp(self.log_probabilities(self.rankings(values.size), values[None, :])[:, 0])

    def sample(self, counts: object, rng: np.random.Generator) -> np.ndarray:
        """Rankings drawn for each row of ``counts`` (..., K) → (..., k): Gumbel(2k/ε) noise, the k largest."""
        rng = check_rng(rng)
        values = np.asarray(counts, dtype=float)
        noisy = values + rng.gumbel(0.0, 2.0 * self.k / self.epsilon, size=values.shape)
        return np.argsort(-noisy, axis=-1, kind="stable")[..., : self.k]


# --------------------------------------------------------------------------------------------
# one user's histogram of the whole sequence: the laws by name


HistogramLaw = ClampedDiscreteLaplace | ExponentialRanking
HISTOGRAM_LAWS: dict[str, Callable[[float, int, int], HistogramLaw]] = {
    # every count + Lap(2/ε), read at whole numbers 0..T (docs/math.md §11): the discretised law clamped to 0..T
    "laplace": lambda eps, length, k: ClampedDiscreteLaplace(eps, 0, length),
    # the top-k states by count
    "exponential": lambda eps, length, k: ExponentialRanking(eps, k),
}


def histogram_law(mechanism: object, eps: float, length: int, k: int = 1) -> HistogramLaw:
    """The law of one user's whole-sequence histogram release ``mechanism`` (a key of :data:`HISTOGRAM_LAWS`)."""
    if not isinstance(mechanism, str) or mechanism not in HISTOGRAM_LAWS:
        raise ValueError(f"mechanism must be one of {tuple(HISTOGRAM_LAWS)}; got {mechanism!r}")
    return HISTOGRAM_LAWS[mechanism](eps, check_whole("length", length), check_whole("k", k))


# --------------------------------------------------------------------------------------------
# the emission matrices of a stream, and their ε


def randomized_response_emission(n_states: int, eps: float) -> np.ndarray:
    """Randomized response on K states as a K×K emission (:class:`RandomizedResponse`); ε-DP per entry.

    Refused (ValueError) when the probability of lying is too small for a double (ε ≳ 690): the
    matrix would be the identity, an infinitely leaky release labelled ε.
    """
    return RandomizedResponse(n_states, eps).emission()


def laplace_histogram_emission(n_states: int, eps: float, low: int = 0, high: int = 1) -> np.ndarray:
    """A noisy histogram of one entry (:class:`ClampedDiscreteLaplace`, clamped to ``low..high``), ε-DP per entry.

    With low ≤ 0 and high ≥ 1 the clamping loses nothing an attacker could use: for count k,
    every value v ≤ 0 is e^{ε/2} times less likely when the entry is in state k than when it is
    not, and every v ≥ 1 e^{ε/2} times more likely, so the likelihood of x depends on v only
    through [v ≥ 1] and the leakage equals that of the unclamped release (and of continuous
    Laplace noise, docs/math.md §11).
    """
    if is_whole(low) and is_whole(high) and not low <= 0 < 1 <= high:
        raise ValueError(f"the clamping range must contain 0 and 1 (low ≤ 0, high ≥ 1); got {low}..{high}")
    return ClampedDiscreteLaplace(eps, low, high).emission(n_states)


def emission_epsilon(emission: object) -> float:
    """The per-entry DP level of a release with output law ``emission[x, r] = Pr[r | X_t = x]``.

    ε = max over outputs r and states x, x' of log emission[x, r] / emission[x', r]
    (+inf when some output is possible from one state and impossible from another).
    """
    matrix = _check_emission(emission)
    positive = matrix > 0
    if np.any(positive.any(axis=0) & ~positive.all(axis=0)):
        return math.inf
    cols = positive.all(axis=0)
    logs = np.log(matrix[:, cols])
    return float((logs.max(axis=0) - logs.min(axis=0)).max(initial=0.0))


def _check_emission(emission: object, n_states: int | None = None) -> np.ndarray:
    """A K×O output law: row x is Pr[output | X_t = x] (:func:`puffer_core.validation.check_rows`)."""
    matrix = check_rows(emission, "the emission", square=False)
    if n_states is not None and matrix.shape[0] != n_states:
        raise ValueError(f"the emission has {matrix.shape[0]} rows but the chain has {n_states} states")
    return matrix


def _steps(emissions: object, length: int) -> list[object] | None:
    """The per-step items of a list of emissions (None: one item for every step)."""
    if isinstance(emissions, (RandomizedResponse, ClampedDiscreteLaplace)):
        return None
    try:
        array = np.asarray(emissions, dtype=float)
    except (TypeError, ValueError, OverflowError):
        try:  # a table with text or too large numbers is a matrix, refused by the matrix's own checks
            array = np.asarray(emissions, dtype=object)
        except ValueError:
            array = None  # matrices of different shapes, or laws: one per step
        if array is not None and (array.ndim != 2 or any(isinstance(x, (list, tuple, np.ndarray)) for x in array.flat)):
            array = None
    if array is not None and array.ndim == 2:
        return None
    if not isinstance(emissions, (list, tuple)) and (array is None or array.ndim != 3):
        raise InvalidParameter("emissions must be a K×O matrix or a list of one K×O_t matrix per time step")
    steps = list(emissions)  # type: ignore[call-overload]
    if len(steps) != length:
        raise ValueError(f"{len(steps)} emissions for a chain of length T = {length}; give one per time step")
    return steps


def _one_log_emission(item: object, n_states: int) -> np.ndarray:
    if isinstance(item, RandomizedResponse):
        if item.n_states != n_states:
            raise ValueError(f"the emission has {item.n_states} rows but the chain has {n_states} states")
        return item.log_emission()
    if isinstance(item, ClampedDiscreteLaplace):
        return item.log_emission(n_states)
    with np.errstate(divide="ignore"):
        return np.log(_check_emission(item, n_states))


def _one_emission(item: object, n_states: int) -> np.ndarray:
    if isinstance(item, RandomizedResponse):
        if item.n_states != n_states:
            raise ValueError(f"the emission has {item.n_states} rows but the chain has {n_states} states")
        return item.emission()
    if isinstance(item, ClampedDiscreteLaplace):
        return item.emission(n_states)
    return _check_emission(item, n_states)


def check_emissions(emissions: object, n_states: int, length: int) -> list[np.ndarray]:
    """One K×O_t output law per time step: a matrix or a law (used at every step), or a list of T of them."""
    steps = _steps(emissions, length)
    if steps is None:
        return [_one_emission(emissions, n_states)] * length
    return [_one_emission(e, n_states) for e in steps]


def log_emissions(emissions: object, n_states: int, length: int) -> list[np.ndarray]:
    """As :func:`check_emissions`, in log space: laws give their exact log-probabilities (no underflow)."""
    steps = _steps(emissions, length)
    if steps is None:
        return [_one_log_emission(emissions, n_states)] * length
    return [_one_log_emission(e, n_states) for e in steps]
