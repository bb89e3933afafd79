"""Kinds of attacker prior, one record each: what the app and the widgets offer (docs/math.md §1, §2).

A :class:`PriorKind` says everything a front end needs about one kind of prior: its name and
label, its parameters (each a :class:`~puffer_core.priors.codecs.Parameter`: a default, a short
name for links, a codec that writes it as text and reads it back within its range, and the hints
for drawing its control), how to build the prior from them, how to describe it, how to write it
as Python (:meth:`PriorKind.code`, for every exported script), what can be wrong with a
half-edited value (:meth:`PriorKind.problems`), what to draw beside its curve
(:attr:`PriorKind.overlays`) and how to read the parameters back from a prior.
:data:`PRIOR_KINDS` is the registry: adding a kind of prior is adding one record, and the app's
controls, link, description, cached curve, overlays and scripts, and the notebook's controls,
follow from it.

The transition-matrix helpers the editors use — :func:`normalise_rows` and the presets
:func:`sticky_matrix`, :func:`cyclic_matrix`, :func:`random_matrix` — are here too; the row
check is :func:`puffer_core.validation.row_problems`, the same one the prior applies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..validation import check_distribution, check_probability, row_problems
from .codecs import (
    PROBABILITY,
    Choice,
    DistributionText,
    Flag,
    LabelsText,
    Matrix,
    MatrixText,
    Number,
    PairsText,
    Parameter,
    PositiveNumbers,
    default_labels,
)
from .models import (
    KERNELS,
    ROW_TOLERANCE,
    GaussianProcessPrior,
    MarkovChainPrior,
    stationary_distribution,
)

Prior = MarkovChainPrior | list[MarkovChainPrior] | GaussianProcessPrior
Params = tuple[tuple[str, Any], ...]  # a kind's parameters as a hashable key: ((key, value), …)

MAX_CHAIN_LENGTH = 10_000
MAX_GP_N = 200

KERNEL_LABELS: dict[str, str] = {
    "squared_exponential": "squared exponential  exp(−(j−k)²/ℓ)",
    "exponential": "exponential  exp(−|j−k|/ℓ)",
}
FIGURE3_LENGTH_SCALES: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 5.0)  # [C] Figure 3(b)


# --------------------------------------------------------------------------- transition matrices


def binary_transition(p: float, q: float) -> Matrix:
    """P = [[p, 1−p], [1−q, q]] of [C] Example 3 (docs/math.md §2.2): p, q are the chances to stay."""
    p, q = check_probability("p", p), check_probability("q", q)
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
class OverlayCurve:
    """A curve drawn beside a prior's own: its label, where it comes from and how it is drawn.

    ``source`` is the name of a prior kind (``params`` are then that kind's parameters) or
    ``"closed_form"`` ([C]'s closed form for a binary chain, ``params`` its p, q, max_b and length);
    ``style``: "member" (a member of a set Θ), "reference" (a formula to compare with) or
    "alternative" (the same prior with another parameter).
    """

    label: str
    source: str
    params: Params
    style: str


@dataclass(frozen=True)
class Overlay:
    """Something drawn beside a kind's curve: always (``parameter`` None) or when a view option asks for it.

    ``curves(params, option)`` gives the curves to draw for the kind's parameters and the option's value;
    ``note`` says what they are, under the chart.
    """

    parameter: Parameter | None
    curves: Callable[[Mapping[str, Any], Any], list[OverlayCurve]]
    note: str = ""


@dataclass(frozen=True)
class PriorKind:
    """One kind of prior: see the module docstring.  ``build``, ``describe``, ``legend``, ``check`` and
    ``source`` take the parameters as keywords (``source`` also ``name``, the variable it assigns); ``read``
    gives the parameters of a prior of this kind, or None; ``tidy`` mends parameters read from a link that
    do not fit together, saying what it dropped."""

    name: str
    label: str
    parameters: tuple[Parameter, ...]
    build: Callable[..., Prior]
    describe: Callable[..., str]
    legend: Callable[..., str]
    read: Callable[[object], dict[str, Any] | None]
    source: Callable[..., tuple[tuple[str, ...], str]]
    check: Callable[..., list[str]] = lambda **_: []
    tidy: Callable[[dict[str, Any]], list[str]] = lambda params: []
    formula: str = ""  # the prior in LaTeX, shown above its controls
    note: str = ""  # what a reader of its curve should know, shown under its controls
    overlays: tuple[Overlay, ...] = ()

    @property
    def defaults(self) -> dict[str, Any]:
        return {p.key: p.default for p in self.parameters}

    @property
    def options(self) -> tuple[Parameter, ...]:
        """The view options its overlays take (e.g. the binary chain's closed form), shared in links with it."""
        return tuple(o.parameter for o in self.overlays if o.parameter is not None)

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

    def code(self, params: Mapping[str, Any], name: str = "prior") -> tuple[tuple[str, ...], str]:
        """The prior as Python building it with puffer_core: (names to import from puffer_core, code).

        The code assigns ``name`` — one prior, or the list Θ — exactly as :meth:`prior` builds it,
        every float written as ``repr`` (it reads back to the same float).
        """
        return self.source(**self._own(params), name=name)

    def overlay_curves(self, params: Mapping[str, Any], options: Mapping[str, Any]) -> list[OverlayCurve]:
        """The curves to draw beside this prior's, for its parameters and the view options' values."""
        own = self._own(params)
        out = []
        for overlay in self.overlays:
            value = None if overlay.parameter is None else options.get(overlay.parameter.key, overlay.parameter.default)
            out += overlay.curves(own, value)
        return out

    def notes(self, options: Mapping[str, Any]) -> list[str]:
        """What the overlays drawn for these options are, one sentence each."""
        out = []
        for overlay in self.overlays:
            on = overlay.parameter is None or options.get(overlay.parameter.key, overlay.parameter.default)
            if overlay.note and on:
                out.append(overlay.note)
        return out

    def _own(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """This kind's parameters out of ``params`` (which may hold other settings too), defaults filled in."""
        return {p.key: params.get(p.key, p.default) for p in self.parameters}


def params_key(kind: PriorKind, values: Mapping[str, Any]) -> Params:
    """The kind's parameters out of ``values`` (defaults filled in), as a hashable key."""
    return tuple((p.key, values[p.key] if p.key in values else p.default) for p in kind.parameters)


LENGTH = Parameter(
    "length",
    100,
    "T",
    Number(2, MAX_CHAIN_LENGTH, whole=True),
    label="Sequence length T (entries per user)",
    help="a(b) = 0 once b ≥ T: the window H then covers the whole sequence (group DP).",
    step=1,
)


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

    The check is :func:`puffer_core.validation.check_distribution`; what it finds is said with the
    states' names (``labels``; counted from 1 without them, as in :func:`~puffer_core.validation.row_problems`),
    and ``labels`` also gives the number of states.
    """
    if labels is not None and len(initial) != len(labels):
        return [f"the initial distribution needs {len(labels)} entries (one per state); got {len(initial)}"]
    values = []
    for x in initial:
        try:
            values.append(float(x))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            values.append(math.nan)
    try:
        check_distribution(values, "the initial distribution", ROW_TOLERANCE)
    except ValueError as exc:
        message = str(exc)
    else:
        return []

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
    return [message.replace("probabilities must sum to 1", "it must sum to 1")]


def _matrix_problems(
    matrix: Matrix, labels: Sequence[str] | None, length: int, initial: Sequence[float] | None
) -> list[str]:
    rows_types = (list, tuple, np.ndarray)
    if not isinstance(matrix, rows_types) or not all(isinstance(row, rows_types) for row in matrix):
        return [f"the transition matrix must be a list of rows of numbers; got {matrix!r}"]
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


def _tidy_matrix(params: dict[str, Any]) -> list[str]:
    """Labels and an initial distribution that do not fit the matrix's size are dropped, and said so."""
    notes = []
    states = len(params["matrix"])
    if params.get("labels") is not None and len(params["labels"]) != states:
        notes.append(f"`labels` ({len(params['labels'])} labels for {states} states)")
        params["labels"] = None
    if params.get("labels") is None:
        params["labels"] = default_labels(states)
    if params.get("initial") is not None and len(params["initial"]) != states:
        notes.append(f"`init` ({len(params['initial'])} numbers for {states} states)")
        params["initial"] = None
    return notes


def _theta_problems(theta: Sequence[tuple[float, float]], length: int) -> list[str]:
    return [] if theta else ["the set Θ is empty; add at least one prior (a row p, q)"]


def matrix_literal(matrix: Any, width: int = 120) -> str:
    """A matrix as a Python literal that reads back to exactly the same floats, one row per line; a row longer than
    ``width`` characters (ruff's line length) goes on over the next lines, one column in from its bracket."""
    out = ["["]
    for row in matrix:
        cells = [repr(float(x)) for x in row]
        line = "    ["
        for i, cell in enumerate(cells):
            text = cell + ("]," if i == len(cells) - 1 else ",")
            if i > 0 and len(line) + 1 + len(text) > width:
                out.append(line)
                line = "     " + text
            else:
                line += (" " if i > 0 else "") + text
        out.append(line)
    return "\n".join([*out, "]"])


def list_literal(items: Sequence[Any] | None, beside: int = 0, width: int = 120) -> str:
    """A list as a Python literal (``repr`` of each item; None as None): on one line when it fits in ``width``
    characters with ``beside`` more on its line (the name before it, a comment after), else one item group per
    line, wrapped at ``width``."""
    if items is None:
        return "None"
    cells = [repr(x) for x in items]
    one = "[" + ", ".join(cells) + "]"
    if len(one) + beside <= width:
        return one
    out, line = ["["], "   "
    for cell in cells:
        if line != "   " and len(line) + 1 + len(cell) + 1 > width:
            out.append(line)
            line = "   "
        line += " " + cell + ","
    return "\n".join([*out, line, "]"])


def _binary_source(p: float, q: float, length: int, name: str) -> tuple[tuple[str, ...], str]:
    code = (
        f"p, q = {float(p)!r}, {float(q)!r}  # chances to stay in state 0 and in state 1\n"
        f"{name} = MarkovChainPrior([[p, 1.0 - p], [1.0 - q, q]], length={int(length)})\n"
    )
    return ("MarkovChainPrior",), code


def _matrix_source(
    matrix: Matrix, labels: Sequence[str] | None, length: int, initial: Sequence[float] | None, name: str
) -> tuple[tuple[str, ...], str]:
    labels = None if labels is None or tuple(labels) == default_labels(len(matrix)) else list(labels)
    start = None if initial is None else [float(x) for x in initial]
    code = (
        f"LABELS = {list_literal(labels, 26)}  # None: 0, 1, …\n"
        f"MATRIX = {matrix_literal(matrix)}\n"
        f"INITIAL = {list_literal(start, 47)}  # None: the stationary distribution\n"
        f"{name} = MarkovChainPrior(MATRIX, initial=INITIAL, length={int(length)}, labels=LABELS)\n"
    )
    return ("MarkovChainPrior",), code


def _theta_source(theta: Sequence[tuple[float, float]], length: int, name: str) -> tuple[tuple[str, ...], str]:
    pairs = ", ".join(f"({float(p)!r}, {float(q)!r})" for p, q in theta)
    code = (
        f"THETA = [{pairs}]  # (p, q) of each binary chain in Θ\n"
        f"{name} = [MarkovChainPrior([[p, 1.0 - p], [1.0 - q, q]], length={int(length)}) for p, q in THETA]\n"
    )
    return ("MarkovChainPrior",), code


def _gaussian_source(
    kernel: str, length_scale: float, n: int, gamma: float, delta: float, name: str
) -> tuple[tuple[str, ...], str]:
    code = (
        f"{name} = GaussianProcessPrior(n={int(n)}, length_scale={float(length_scale)!r},"
        f" kernel={kernel!r}, gamma={float(gamma)!r}, delta={float(delta)!r})\n"
    )
    return ("GaussianProcessPrior",), code


def chains_source(members: Sequence[MarkovChainPrior], name: str = "prior") -> tuple[tuple[str, ...], str]:
    """A set Θ of chains (a fitted chain and its posterior draws, say) as Python, entry by entry.

    Each matrix is written out in full (a chain normalises its rows again when it is built, which can
    move an entry by one unit in the last place).
    """
    blocks = ",\n".join(matrix_literal(m.transition) for m in members)
    code = (
        f"LABELS = {list_literal(list(members[0].labels), 9)}\n"
        f"# Θ: the fitted chain first, then {len(members) - 1} draws from its posterior (docs/math.md §12)\n"
        f"THETA = [\n{blocks},\n]\n"
        f"{name} = [MarkovChainPrior(matrix, length={members[0].length}, labels=LABELS) for matrix in THETA]\n"
    )
    return ("MarkovChainPrior",), code


def _members(params: Mapping[str, Any], _: object) -> list[OverlayCurve]:
    return [
        OverlayCurve(f"θ: p = {p:g}, q = {q:g}", "binary", (("p", p), ("q", q), ("length", params["length"])), "member")
        for p, q in params["theta"]
    ]


def _closed_form(params: Mapping[str, Any], on: object) -> list[OverlayCurve]:
    max_b = (params["length"] - 1) // 2
    if not on or max_b < 1 or params["p"] + params["q"] >= 2:
        return []
    source = (
        ("p", float(params["p"])),
        ("q", float(params["q"])),
        ("max_b", int(max_b)),
        ("length", int(params["length"])),
    )
    return [OverlayCurve("closed form [C] Ex. 3", "closed_form", source, "reference")]


def _length_scales(params: Mapping[str, Any], scales: object) -> list[OverlayCurve]:
    return [
        OverlayCurve(f"ℓ = {ell:g}", "gaussian", tuple({**params, "length_scale": float(ell)}.items()), "alternative")
        for ell in scales or ()
        if ell != params["length_scale"]
    ]


CLOSED_FORM = Parameter(
    "closed_form",
    False,
    "cf",
    Flag(),
    label="Overlay the closed form ([C] Ex. 3)",
    help="Exact when p + q > 1 and T ≥ 2b + 1 (docs/math.md §2.2); drawn for b ≤ (T − 1)/2.",
)
OVERLAY = Parameter(
    "overlay",
    (),
    "overlay",
    PositiveNumbers(options=FIGURE3_LENGTH_SCALES),
    label="Also draw these length scales",
    help="Pick all five to redraw [C] Figure 3(b) (γ = 5, δ = 0.1).",
)
JITTER_NOTE = (
    "Gaussian prior: as in [C] Example 4, a(b) ignores how the truncation to [−γ, γ] reshapes the"
    " conditional distribution (docs/math.md §2.3).  Each a(b) is an upper bound for the exact kernel:"
    " the solver's nugget is certified away, r is bounded between grid points, and a(b) is ∞"
    " where double precision cannot certify the conditional variance (very long length scales).  Every"
    " coordinate is evaluated and the largest a(b) kept: [C]'s centre coordinate alone can leak less than"
    " coordinates off the centre."
)

BINARY = PriorKind(
    name="binary",
    label="Binary chain (p, q)",
    parameters=(
        Parameter("p", 0.9, "p", PROBABILITY, label="p = Pr(stay in state 0)", step=0.01, slider=True),
        Parameter("q", 0.8, "q", PROBABILITY, label="q = Pr(stay in state 1)", step=0.01, slider=True),
        LENGTH,
    ),
    build=lambda p, q, length: MarkovChainPrior(binary_transition(p, q), length=length),
    describe=lambda p, q, length: f"binary chain p = {p:g}, q = {q:g}, T = {length}",
    legend=lambda p, q, length: f"p = {p:g}, q = {q:g}",
    read=_read_binary,
    source=_binary_source,
    formula=r"P = \begin{pmatrix} p & 1-p \\ 1-q & q \end{pmatrix}",
    overlays=(Overlay(CLOSED_FORM, _closed_form),),
)
MATRIX = PriorKind(
    name="matrix",
    label="K-state Markov chain",
    parameters=(
        Parameter(
            "matrix",
            ((0.8, 0.1, 0.1), (0.1, 0.8, 0.1), (0.1, 0.1, 0.8)),
            "P",
            MatrixText(),
            label="Transition matrix",
            help="Rows are the current state, columns the next one; every row sums to 1.",
        ),
        Parameter("labels", None, "labels", LabelsText(), label="State names", with_="matrix"),  # None: 0, 1, …
        LENGTH,
        Parameter(  # None: the stationary distribution
            "initial", None, "init", DistributionText(), label="Initial distribution", with_="matrix"
        ),
    ),
    build=lambda matrix, labels, length, initial: MarkovChainPrior(matrix, initial, length, labels),
    describe=lambda matrix, labels, length, initial: f"{len(matrix)}-state Markov chain, T = {length}",
    legend=lambda matrix, labels, length, initial: f"{len(matrix)}-state chain",
    read=_read_matrix,
    source=_matrix_source,
    check=_matrix_problems,
    tidy=_tidy_matrix,
)
THETA = PriorKind(
    name="theta",
    label="Set of priors Θ",
    parameters=(
        Parameter(
            "theta",
            ((0.8, 0.8), (0.9, 0.7), (0.7, 0.9)),
            "theta",
            PairsText(),
            label="The binary chains (p, q) in Θ",
            help=(
                "Each row is one binary chain P = [[p, 1−p], [1−q, q]] the attacker may believe. Θ's curve takes"
                " the worst prior for every window H (the sup over θ is inside the min over H, docs/math.md §2.1)."
            ),
        ),
        LENGTH,
    ),
    build=lambda theta, length: [MarkovChainPrior(binary_transition(p, q), length=length) for p, q in theta],
    describe=lambda theta, length: (
        f"Θ of {len(theta)} binary chains (p, q) ∈ {{{', '.join(f'({p:g}, {q:g})' for p, q in theta)}}}, T = {length}"
    ),
    legend=lambda theta, length: "Θ (worst prior for each H)",
    read=_read_theta,
    source=_theta_source,
    check=_theta_problems,
    overlays=(
        Overlay(None, _members, "Dotted: the members of Θ on their own. Θ's curve is at least as high as each."),
    ),
)
GAUSSIAN = PriorKind(
    name="gaussian",
    label="Gaussian process",
    parameters=(
        Parameter("kernel", "squared_exponential", "kernel", Choice(KERNELS, labels=KERNEL_LABELS), label="Kernel"),
        Parameter("length_scale", 1.0, "ell", Number(0.1, 20.0), label="Length scale ℓ", step=0.1, format="%.2f"),
        Parameter("n", 50, "n", Number(3, MAX_GP_N, whole=True), label="Coordinates n", slider=True),
        Parameter("gamma", 5.0, "gamma", Number(0.5, 20.0), label="Truncation γ", step=0.5),
        Parameter("delta", 0.1, "delta", Number(0.01, 5.0), label="Secret width δ", step=0.01),
    ),
    build=lambda kernel, length_scale, n, gamma, delta: GaussianProcessPrior(n, length_scale, kernel, gamma, delta),
    describe=lambda kernel, length_scale, n, gamma, delta: (
        f"Gaussian process, {kernel.replace('_', ' ')} kernel, ℓ = {length_scale:g}, n = {n}, γ = {gamma:g},"
        f" δ = {delta:g}"
    ),
    legend=lambda kernel, length_scale, n, gamma, delta: f"ℓ = {length_scale:g}",
    read=_read_gaussian,
    source=_gaussian_source,
    note=JITTER_NOTE,
    overlays=(Overlay(OVERLAY, _length_scales),),
)

PRIOR_KINDS: dict[str, PriorKind] = {kind.name: kind for kind in (BINARY, MATRIX, THETA, GAUSSIAN)}
KIND_CODEC = Choice(  # how the kind itself is written in a link
    tuple(PRIOR_KINDS), {"gp": "gaussian"}, {name: kind.label for name, kind in PRIOR_KINDS.items()}
)
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
