"""Kinds of attacker prior, one record each: what the app and the widgets offer (docs/math.md §1, §2).

A :class:`PriorKind` says everything a front end needs about one kind of prior: its name and
label, its parameters (each with a default, a short name for links and a :class:`Codec` that
writes it as text and reads it back within its range), how to build the prior from them, how
to describe it, what can be wrong with a half-edited value (:meth:`PriorKind.problems`) and how
to read the parameters back from a prior.  :data:`PRIOR_KINDS` is the registry; adding a kind of
prior is adding one record (and its controls in each front end).

The transition-matrix helpers the editors use — :func:`normalise_rows` and the presets
:func:`sticky_matrix`, :func:`cyclic_matrix`, :func:`random_matrix` — are here too; the row
check is :func:`puffer_core.validation.row_problems`, the same one the prior applies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..validation import row_problems
from .models import (
    KERNELS,
    ROW_TOLERANCE,
    GaussianProcessPrior,
    MarkovChainPrior,
    stationary_distribution,
)

Prior = MarkovChainPrior | list[MarkovChainPrior] | GaussianProcessPrior
Matrix = tuple[tuple[float, ...], ...]

MAX_STATES = 20  # states of a matrix in a link
MAX_THETA = 20  # priors in a set Θ in a link
MAX_CHAIN_LENGTH = 10_000
MAX_GP_N = 200

KERNEL_LABELS: dict[str, str] = {
    "squared_exponential": "squared exponential  exp(−(j−k)²/ℓ)",
    "exponential": "exponential  exp(−|j−k|/ℓ)",
}


# --------------------------------------------------------------------------- codecs: values as text


class Codec(Protocol):
    """How one parameter is written as text (e.g. in a link) and read back, checked."""

    def parse(self, text: str) -> Any:
        """The value; ValueError with a short reason ("between 0 and 1") when the text is not usable."""
        ...

    def encode(self, value: Any) -> str: ...


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError("not a number") from None
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _number_text(value: float) -> str:
    """The shortest text that reads back to exactly ``value``."""
    return f"{value:g}" if float(f"{value:g}") == value else repr(float(value))


@dataclass(frozen=True)
class Number:
    """A real number in [low, high]; a whole one with ``whole``."""

    low: float
    high: float
    whole: bool = False

    def parse(self, text: str) -> float | int:
        value = _finite(text.strip())
        if self.whole and value != int(value):
            raise ValueError("a whole number")
        if not self.low <= value <= self.high:
            raise ValueError(f"between {self.low:g} and {self.high:g}")
        return int(value) if self.whole else value

    def encode(self, value: float) -> str:
        return str(int(value)) if self.whole else _number_text(float(value))


PROBABILITY = Number(0.0, 1.0)


@dataclass(frozen=True)
class Flag:
    """True or False, written 1 or 0."""

    def parse(self, text: str) -> bool:
        text = text.strip()
        if text not in ("0", "1", "true", "false"):
            raise ValueError("0 or 1")
        return text in ("1", "true")

    def encode(self, value: bool) -> str:
        return "1" if value else "0"


@dataclass(frozen=True)
class Choice:
    """One of ``options``; ``aliases`` are other spellings accepted when reading."""

    options: tuple[str, ...]
    aliases: Mapping[str, str] = field(default_factory=dict)

    def parse(self, text: str) -> str:
        value = self.aliases.get(text.strip(), text.strip())
        if value not in self.options:
            raise ValueError(f"one of {', '.join(self.options)}")
        return value

    def encode(self, value: str) -> str:
        return value


@dataclass(frozen=True)
class PositiveNumbers:
    """A set of positive numbers, written 0.5,1,2 and read back sorted."""

    def parse(self, text: str) -> tuple[float, ...]:
        if not text.strip():
            return ()
        values = {_finite(x) for x in text.split(",")}
        if any(v <= 0 for v in values):
            raise ValueError("positive numbers")
        return tuple(sorted(values))

    def encode(self, value: Sequence[float]) -> str:
        return ",".join(f"{x:g}" for x in value)


@dataclass(frozen=True)
class MatrixText:
    """A square matrix of 2 to ``max_states`` states, rows separated by ; and entries by ,.

    The entries are only required to be finite numbers: whether the rows are probabilities is
    the prior's check (:meth:`PriorKind.problems`), so that an editor can show it row by row.
    """

    max_states: int = MAX_STATES

    def parse(self, text: str) -> Matrix:
        rows = tuple(tuple(_finite(x) for x in row.split(",")) for row in text.strip().split(";"))
        if not 2 <= len(rows) <= self.max_states or any(len(r) != len(rows) for r in rows):
            raise ValueError(f"a square matrix with 2 to {self.max_states} states, rows separated by ;")
        return rows

    def encode(self, value: Matrix) -> str:
        return ";".join(",".join(repr(float(x)) for x in row) for row in value)


@dataclass(frozen=True)
class LabelsText:
    """Distinct, non-empty state labels separated by |."""

    def parse(self, text: str) -> tuple[str, ...]:
        labels = tuple(s.strip() for s in text.strip().split("|"))
        if len(set(labels)) != len(labels) or any(not s for s in labels):
            raise ValueError("distinct, non-empty labels separated by |")
        return labels

    def encode(self, value: Sequence[str]) -> str:
        return "|".join(value)


@dataclass(frozen=True)
class DistributionText:
    """A probability vector written 0.5,0.25,0.25 (the empty text: none, i.e. the stationary one).

    The entries are only required to be finite numbers: whether they form a distribution over
    the chain's states is the prior's check (:meth:`PriorKind.problems`), with the states' names.
    """

    max_states: int = MAX_STATES

    def parse(self, text: str) -> tuple[float, ...] | None:
        if not text.strip():
            return None
        values = tuple(_finite(x) for x in text.strip().split(","))
        if not 2 <= len(values) <= self.max_states:
            raise ValueError(f"2 to {self.max_states} numbers separated by ,")
        return values

    def encode(self, value: Sequence[float] | None) -> str:
        return "" if value is None else ",".join(_number_text(float(x)) for x in value)


@dataclass(frozen=True)
class PairsText:
    """1 to ``max_pairs`` pairs of probabilities p,q separated by ;."""

    max_pairs: int = MAX_THETA

    def parse(self, text: str) -> tuple[tuple[float, float], ...]:
        pairs = []
        for item in text.strip().split(";"):
            parts = item.split(",")
            if len(parts) != 2:
                raise ValueError("pairs p,q separated by ;")
            pairs.append((PROBABILITY.parse(parts[0]), PROBABILITY.parse(parts[1])))
        if not 1 <= len(pairs) <= self.max_pairs:
            raise ValueError(f"1 to {self.max_pairs} pairs")
        return tuple(pairs)

    def encode(self, value: Sequence[tuple[float, float]]) -> str:
        return ";".join(f"{p!r},{q!r}" for p, q in value)


@dataclass(frozen=True)
class Parameter:
    """One setting: its key (the keyword the builder takes), its default, and — when it can be
    shared in a link — its short name there and how it is written as text."""

    key: str
    default: Any
    url: str | None = None
    codec: Codec | None = None


# --------------------------------------------------------------------------- transition matrices


def binary_transition(p: float, q: float) -> Matrix:
    """P = [[p, 1−p], [1−q, q]] of [C] Example 3 (docs/math.md §2.2): p, q are the chances to stay."""
    return ((p, 1.0 - p), (1.0 - q, q))


@dataclass(frozen=True)
class Normalised:
    """What :func:`normalise_matrix` did, row by row (rows counted from 0, as the states are).

    ``scaled``: row → the sum it had before it was divided by it; ``filled``: (row, column) of
    empty or non-numeric cells that were set to 0; ``skipped``: row → why it was left as it was.
    """

    matrix: Matrix
    scaled: dict[int, float]
    filled: list[tuple[int, int]]
    skipped: dict[int, str]


def normalise_matrix(matrix: Sequence[Sequence[object]]) -> Normalised:
    """Each row divided by its sum, saying what changed (nothing is changed silently).

    Empty or non-numeric cells count as 0 and are listed in ``filled``; a row that sums to 0 or
    holds a negative number is left as it is and listed in ``skipped`` with the reason; a row
    already summing to 1 is not listed.  Every normalised row sums to 1 within 1e-15.
    """
    out = []
    scaled: dict[int, float] = {}
    filled: list[tuple[int, int]] = []
    skipped: dict[int, str] = {}
    for i, row in enumerate(matrix):
        values = []
        for j, x in enumerate(row):
            try:
                value = float(x)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                value = math.nan
            if math.isnan(value):
                filled.append((i, j))
                value = 0.0
            values.append(value)
        total = math.fsum(values)
        if any(v < 0 for v in values):
            skipped[i] = "it holds a negative number"
        elif not math.isfinite(total):
            skipped[i] = "it holds a number that is not finite"
        elif total <= 0:
            skipped[i] = "it sums to 0"
        if i in skipped:
            out.append(tuple(values))
            continue
        scaled_row = [v / total for v in values]
        # put the rounding residue on the largest entry so the row sums to 1 within 1e-15
        k = int(np.argmax(scaled_row))
        scaled_row[k] = 1.0 - math.fsum(scaled_row[:k] + scaled_row[k + 1 :])
        if tuple(scaled_row) != tuple(values):
            scaled[i] = total
        out.append(tuple(scaled_row))
    return Normalised(tuple(out), scaled, filled, skipped)


def normalise_rows(matrix: Sequence[Sequence[object]]) -> tuple[Matrix, list[int]]:
    """:func:`normalise_matrix`'s matrix and the 1-based numbers of the rows it could not normalise."""
    done = normalise_matrix(matrix)
    return done.matrix, [i + 1 for i in sorted(done.skipped)]


def sticky_matrix(k: int, stay: float) -> Matrix:
    """Stay in the current state with probability ``stay``, otherwise move to any other state."""
    move = (1.0 - stay) / (k - 1)
    return tuple(tuple(stay if i == j else move for j in range(k)) for i in range(k))


def cyclic_matrix(k: int, stay: float) -> Matrix:
    """Stay with probability ``stay``, otherwise move on to the next state (k−1 wraps to 0)."""
    return tuple(
        tuple(stay if j == i else (1.0 - stay if j == (i + 1) % k else 0.0) for j in range(k)) for i in range(k)
    )


def random_matrix(k: int, seed: int) -> Matrix:
    """Rows drawn from a flat Dirichlet distribution (seeded, so the same seed gives the same matrix)."""
    rows = np.random.default_rng(int(seed)).dirichlet(np.ones(k), size=k)
    normalised, _ = normalise_rows(rows.tolist())
    return normalised


def _as_rows(matrix: object) -> Matrix:
    return tuple(tuple(float(x) for x in row) for row in np.asarray(matrix, dtype=float))


# --------------------------------------------------------------------------- the kinds


@dataclass(frozen=True)
class PriorKind:
    """One kind of prior: see the module docstring.  ``build``, ``describe`` and ``legend`` take the
    parameters as keywords; ``read`` gives the parameters of a prior of this kind, or None."""

    name: str
    label: str
    parameters: tuple[Parameter, ...]
    build: Callable[..., Prior]
    describe: Callable[..., str]
    legend: Callable[..., str]
    read: Callable[[object], dict[str, Any] | None]
    check: Callable[..., list[str]] = lambda **_: []

    @property
    def defaults(self) -> dict[str, Any]:
        return {p.key: p.default for p in self.parameters}

    def problems(self, params: Mapping[str, Any]) -> list[str]:
        """What makes these parameters unusable, one message each (empty: they build a prior)."""
        return self.check(**self._own(params))

    def prior(self, params: Mapping[str, Any]) -> Prior:
        """The prior these parameters describe; ValueError with the first problem when there is one."""
        own = self._own(params)
        problems = self.check(**own)
        if problems:
            more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
            raise ValueError(problems[0] + more)
        return self.build(**own)

    def description(self, params: Mapping[str, Any]) -> str:
        """One line naming the prior, e.g. "binary chain p = 0.9, q = 0.8, T = 100"."""
        return self.describe(**self._own(params))

    def short_label(self, params: Mapping[str, Any]) -> str:
        """A short name for a legend, e.g. "p = 0.9, q = 0.8"."""
        return self.legend(**self._own(params))

    def _own(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """This kind's parameters out of ``params`` (which may hold other settings too), defaults filled in."""
        return {p.key: params.get(p.key, p.default) for p in self.parameters}


LENGTH = Parameter("length", 100, "T", Number(2, MAX_CHAIN_LENGTH, whole=True))


def _read_binary(prior: object) -> dict[str, Any] | None:
    if not isinstance(prior, MarkovChainPrior) or prior.n_states != 2 or not prior.stationary_initial:
        return None
    return {"p": float(prior.transition[0, 0]), "q": float(prior.transition[1, 1]), "length": prior.length}


def _read_matrix(prior: object) -> dict[str, Any] | None:
    if not isinstance(prior, MarkovChainPrior):
        return None
    initial = None if prior.stationary_initial else tuple(float(v) for v in prior.initial)
    return {"matrix": _as_rows(prior.transition), "labels": prior.labels, "length": prior.length, "initial": initial}


def _read_gaussian(prior: object) -> dict[str, Any] | None:
    if not isinstance(prior, GaussianProcessPrior):
        return None
    return {
        "kernel": prior.kernel,
        "length_scale": prior.length_scale,
        "n": prior.n,
        "gamma": prior.gamma,
        "delta": prior.delta,
    }


def _read_theta(prior: object) -> dict[str, Any] | None:
    if not isinstance(prior, (list, tuple)) or not prior:
        return None
    members = [_read_binary(p) for p in prior]
    if any(m is None for m in members) or len({m["length"] for m in members}) != 1:
        return None
    return {"theta": tuple((m["p"], m["q"]) for m in members), "length": members[0]["length"]}


def initial_problems(initial: Sequence[object], labels: Sequence[str] | None = None) -> list[str]:
    """What keeps ``initial`` from being a distribution over the chain's states (empty: nothing).

    States are named by ``labels`` when given, counted from 1 otherwise (as in
    :func:`~puffer_core.validation.row_problems`); ``labels`` also gives the number of states.
    """
    if labels is not None and len(initial) != len(labels):
        return [f"the initial distribution needs {len(labels)} entries (one per state); got {len(initial)}"]
    values = []
    for x in initial:
        try:
            values.append(float(x))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            values.append(math.nan)

    def states(positions: list[int]) -> str:
        if labels is None:
            return ("entry " if len(positions) == 1 else "entries ") + ", ".join(str(j + 1) for j in positions)
        return ("state " if len(positions) == 1 else "states ") + ", ".join(f"'{labels[j]}'" for j in positions)

    bad = [j for j, v in enumerate(values) if not math.isfinite(v)]
    if bad:
        return [f"the initial distribution is empty or not a finite number for {states(bad)}"]
    negative = [j for j, v in enumerate(values) if v < 0]
    if negative:
        return [f"the initial distribution is negative for {states(negative)}; probabilities cannot be negative"]
    total = math.fsum(values)
    if abs(total - 1.0) > ROW_TOLERANCE:
        return [f"the initial distribution sums to {total:.6g}; it must sum to 1"]
    return []


def _matrix_problems(
    matrix: Matrix, labels: Sequence[str] | None, length: int, initial: Sequence[float] | None
) -> list[str]:
    names = [str(x) for x in labels] if labels is not None and len(labels) == len(matrix) else None
    rows = row_problems(matrix, names)
    if rows:
        return rows
    if initial is not None:
        if len(initial) != len(matrix):
            return [f"the initial distribution needs {len(matrix)} entries (one per state); got {len(initial)}"]
        return initial_problems(initial, names)
    try:
        stationary_distribution(np.array(matrix, dtype=float), names)
    except ValueError as exc:
        return [str(exc)]
    return []


def _theta_problems(theta: Sequence[tuple[float, float]], length: int) -> list[str]:
    return [] if theta else ["the set Θ is empty; add at least one prior (a row p, q)"]


BINARY = PriorKind(
    name="binary",
    label="Binary chain (p, q)",
    parameters=(Parameter("p", 0.9, "p", PROBABILITY), Parameter("q", 0.8, "q", PROBABILITY), LENGTH),
    build=lambda p, q, length: MarkovChainPrior(binary_transition(p, q), length=length),
    describe=lambda p, q, length: f"binary chain p = {p:g}, q = {q:g}, T = {length}",
    legend=lambda p, q, length: f"p = {p:g}, q = {q:g}",
    read=_read_binary,
)
MATRIX = PriorKind(
    name="matrix",
    label="K-state Markov chain",
    parameters=(
        Parameter("matrix", ((0.8, 0.1, 0.1), (0.1, 0.8, 0.1), (0.1, 0.1, 0.8)), "P", MatrixText()),
        Parameter("labels", None, "labels", LabelsText()),  # None: "0", "1", …
        LENGTH,
        Parameter("initial", None, "init", DistributionText()),  # None: the stationary distribution
    ),
    build=lambda matrix, labels, length, initial: MarkovChainPrior(matrix, initial, length, labels),
    describe=lambda matrix, labels, length, initial: f"{len(matrix)}-state Markov chain, T = {length}",
    legend=lambda matrix, labels, length, initial: f"{len(matrix)}-state chain",
    read=_read_matrix,
    check=_matrix_problems,
)
THETA = PriorKind(
    name="theta",
    label="Set of priors Θ",
    parameters=(Parameter("theta", ((0.8, 0.8), (0.9, 0.7), (0.7, 0.9)), "theta", PairsText()), LENGTH),
    build=lambda theta, length: [MarkovChainPrior(binary_transition(p, q), length=length) for p, q in theta],
    describe=lambda theta, length: (
        f"Θ of {len(theta)} binary chains (p, q) ∈ {{{', '.join(f'({p:g}, {q:g})' for p, q in theta)}}},"
        f" T = {length}"
    ),
    legend=lambda theta, length: "Θ (worst prior for each H)",
    read=_read_theta,
    check=_theta_problems,
)
GAUSSIAN = PriorKind(
    name="gaussian",
    label="Gaussian process",
    parameters=(
        Parameter("kernel", "squared_exponential", "kernel", Choice(KERNELS)),
        Parameter("length_scale", 1.0, "ell", Number(0.1, 20.0)),
        Parameter("n", 50, "n", Number(3, MAX_GP_N, whole=True)),
        Parameter("gamma", 5.0, "gamma", Number(0.5, 20.0)),
        Parameter("delta", 0.1, "delta", Number(0.01, 5.0)),
    ),
    build=lambda kernel, length_scale, n, gamma, delta: GaussianProcessPrior(n, length_scale, kernel, gamma, delta),
    describe=lambda kernel, length_scale, n, gamma, delta: (
        f"Gaussian process, {kernel.replace('_', ' ')} kernel, ℓ = {length_scale:g}, n = {n}, γ = {gamma:g},"
        f" δ = {delta:g}"
    ),
    legend=lambda kernel, length_scale, n, gamma, delta: f"ℓ = {length_scale:g}",
    read=_read_gaussian,
)

PRIOR_KINDS: dict[str, PriorKind] = {kind.name: kind for kind in (BINARY, MATRIX, THETA, GAUSSIAN)}
KIND_CODEC = Choice(tuple(PRIOR_KINDS), {"gp": "gaussian"})  # how the kind itself is written in a link
# the editors' presets for a K-state matrix: name → (k, stay probability or seed) → matrix
MATRIX_PRESETS: dict[str, Callable[[int, float], Matrix]] = {
    "Sticky": sticky_matrix,
    "Cyclic": cyclic_matrix,
    "Random": lambda k, seed: random_matrix(k, int(seed)),
}


def prior_kind(name: object) -> PriorKind:
    """The record of kind ``name``; ValueError naming the known kinds otherwise."""
    if not isinstance(name, str) or name not in PRIOR_KINDS:
        raise ValueError(f"unknown kind of prior {name!r}; choose from {', '.join(PRIOR_KINDS)}")
    return PRIOR_KINDS[name]


def kind_of(prior: object, kinds: Sequence[str] = tuple(PRIOR_KINDS)) -> tuple[PriorKind, dict[str, Any]]:
    """The first of ``kinds`` that describes ``prior``, with its parameters (ValueError if none does)."""
    for name in kinds:
        params = PRIOR_KINDS[name].read(prior)
        if params is not None:
            return PRIOR_KINDS[name], params
    raise ValueError(f"no kind of prior among {', '.join(kinds)} describes a {type(prior).__name__}")
