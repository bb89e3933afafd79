"""The prior the user chose on the Influence curves page, and its a(b) curve (docs/math.md §2).

The kinds of prior, their parameters, descriptions, builders and checks are the records of
:data:`puffer_core.priors.kinds.PRIOR_KINDS`; this module keeps the chosen one in the settings,
computes its curve through one cached call, and shows it on the pages that use it.

A chain fitted to data (docs/math.md §6) remembers the data it came from, so that the pages can
offer its *prior uncertainty* (§12): Θ = the fit ∪ M posterior draws, its robust curve and the
rows that drive the spread (:func:`fitted_data`, :func:`uncertainty`).  :func:`prior_source`
writes a prior as Python, for the scripts every page exports (one home: the scripts agree).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import streamlit as st

from puffer_core import InfluenceCurve, MarkovChainPrior, PriorSpread, binary_chain_curve, influence_curve, prior_spread
from puffer_core.data.sequences import Sequences
from puffer_core.engine.gaussian import JITTER
from puffer_core.priors.kinds import MATRIX, PRIOR_KINDS, Matrix, PriorKind

from . import long_work, page_path
from .state import CONCENTRATION, DRAW_SEED, DRAWS, number_input, settings

if TYPE_CHECKING:
    from .data_picker import LoadedData

Params = tuple[tuple[str, Any], ...]  # a kind's parameters, as a hashable key (see parameters_of)

JITTER_NOTE = (
    "Gaussian prior: as in [C] Example 4, a(b) ignores how the truncation to [−γ, γ] reshapes the"
    " conditional distribution (docs/math.md §2.3).  Each a(b) is an upper bound for the exact kernel:"
    f" the solver's nugget of {JITTER:g} is certified away, r is bounded between grid points, and a(b) is ∞"
    " where double precision cannot certify the conditional variance (very long length scales)."
)


@dataclass(frozen=True)
class CurrentCurve:
    """The curve of the prior the user chose, with a one-line description of that prior."""

    curve: InfluenceCurve
    description: str


def parameters_of(kind: PriorKind, values: dict[str, Any]) -> Params:
    """The kind's parameters out of the settings, as a hashable key for the cached curve."""
    return tuple((p.key, values[p.key] if p.key in values else p.default) for p in kind.parameters)


@st.cache_data(show_spinner=False, max_entries=512)
def kind_curve(kind: str, parameters: Params) -> InfluenceCurve:
    """The exact a(b) curve of the prior of ``kind`` with these parameters (docs/math.md §2)."""
    done = long_work.finished_curve(kind, parameters)  # computed under a progress bar (current_curve)
    return done if done is not None else influence_curve(PRIOR_KINDS[kind].prior(dict(parameters)))


@st.cache_data(show_spinner=False, max_entries=128)
def closed_form_curve(p: float, q: float, max_b: int, length: int) -> InfluenceCurve:
    """[C]'s closed form for the binary chain with sequences of ``length`` entries (docs/math.md §2.2)."""
    return binary_chain_curve(p, q, max_b, length)


def describe_prior(values: dict[str, Any]) -> str:
    return PRIOR_KINDS[values["prior_kind"]].description(values)


def current_curve() -> CurrentCurve:
    """The a(b) curve of the prior in the settings; ValueError with the library's message."""
    values = settings()
    kind = PRIOR_KINDS[values["prior_kind"]]
    problems = kind.problems(values)
    if problems:
        raise ValueError("; ".join(problems))
    long_work.prepare_curve(kind.name, parameters_of(kind, values))  # a long curve: estimate, progress, Cancel
    return CurrentCurve(kind_curve(kind.name, parameters_of(kind, values)), kind.description(values))


def prior_summary() -> CurrentCurve | None:
    """Show which prior the page uses (set on the curves page); its curve, or None after st.error."""
    values = settings()
    cols = st.columns([4, 1])
    cols[0].markdown(f"**Prior:** {describe_prior(values)}")
    cols[1].page_link(page_path("curves"), label="Change the prior", icon=":material/tune:")
    try:
        with st.spinner("Computing the a(b) curve…"):
            curve = current_curve()
    except ValueError as exc:
        st.error(f"The prior chosen on the Influence curves page cannot be used: {exc}")
        return None
    return curve


def set_matrix(matrix: Matrix, labels: tuple[str, ...], initial: tuple[float, ...] | None = None) -> None:
    """Make ``matrix`` the K-state chain of the settings (with ``initial``, None: the stationary
    distribution) and restart its editor from it."""
    values = settings()
    values.update(matrix=matrix, matrix_base=matrix, labels=labels, initial=initial)
    values["matrix_version"] += 1


def use_prior(prior: MarkovChainPrior, origin: LoadedData | None = None) -> None:
    """Make ``prior`` (e.g. fitted to data, docs/math.md §6) the K-state chain of the settings, with its T.

    ``origin``: the data ``prior`` was fitted to; while the chain stays as fitted, the pages
    offer its prior uncertainty (:func:`fitted_data`).
    """
    values = settings()
    params = MATRIX.read(prior)
    values["length"] = params["length"]
    set_matrix(params["matrix"], tuple(params["labels"]), params["initial"])
    values["fitted"] = None
    if origin is not None:
        values["fitted"] = {
            "fingerprint": origin.fingerprint,
            "columns": tuple(origin.columns.items()),
            "name": origin.name,
            "matrix": params["matrix"],
            "labels": tuple(params["labels"]),
        }


def fitted_data() -> LoadedData | None:
    """The data the chain in the settings was fitted to, while it is still as fitted and loaded; else None."""
    values = settings()
    fitted = values.get("fitted")
    data = st.session_state.get("dataset")
    if (
        fitted is None
        or values["prior_kind"] != "matrix"
        or values["matrix"] != fitted["matrix"]
        or tuple(values["labels"]) != fitted["labels"]
        or values["initial"] is not None
        or data is None
        or getattr(data, "fingerprint", None) != fitted["fingerprint"]
        or tuple(data.columns.items()) != fitted["columns"]
    ):
        return None
    return data


def why_no_uncertainty() -> str:
    """Why :func:`fitted_data` is None, in a sentence for a caption."""
    values = settings()
    fitted = values.get("fitted")
    if fitted is None or values["prior_kind"] != "matrix":
        return (
            "Prior uncertainty is offered for a chain fitted to data: choose the K-state chain, the preset"
            " 'Fitted from data' and load it into the editor."
        )
    if values["matrix"] != fitted["matrix"] or tuple(values["labels"]) != fitted["labels"]:
        return "The matrix was edited after it was fitted to data, so its prior uncertainty no longer applies."
    if values["initial"] is not None:
        return "A fitted chain starts in its stationary distribution: with an initial distribution it is not the fit."
    return f"The data this chain was fitted to ({fitted['name']}) is no longer loaded; load it again to see its spread."


@st.cache_resource(show_spinner=False, max_entries=16)
def _spread(
    fingerprint: str,
    columns: tuple[tuple[str, str | None], ...],
    length: int,
    draws: int,
    seed: int,
    concentration: float | None,
    _sequences: Sequences,
) -> PriorSpread:
    """:func:`puffer_core.prior_spread` once per data, T, M, seed and α₀ (the sequences are keyed by fingerprint).

    Shared, not copied (it holds every draw's curve): callers must not change it.
    """
    return prior_spread(_sequences, draws=draws, seed=seed, concentration=concentration, length=length)


@dataclass(frozen=True)
class Uncertainty:
    """The prior uncertainty of a fitted chain as the settings ask for it: the spread and its settings."""

    spread: PriorSpread
    draws: int
    seed: int
    concentration: float
    data_name: str
    key: tuple[Any, ...]  # what the spread was computed from (the data's fingerprint, T, M, seed, α₀): hashable

    @property
    def label(self) -> str:
        return f"robust Θ (fit + {self.draws} draws)"

    def description(self) -> str:
        return (
            f"Θ = the chain fitted to {self.data_name} and {self.draws} draws from its Dirichlet posterior"
            f" (α₀ = {self.concentration:.4g}, seed {self.seed}), T = {self.spread.robust.length}"
        )


def uncertainty(data: LoadedData) -> Uncertainty:
    """The spread of the fit to ``data`` with the settings' M, seed and α₀ (cached); ValueError if refused."""
    values = settings()
    with st.spinner(
        f"Drawing {values['draws']} priors from the posterior and computing the curve of Θ"
        " (a few seconds at K = 20; cached afterwards)…"
    ):
        key = (
            data.fingerprint,
            tuple(data.columns.items()),
            int(values["length"]),
            int(values["draws"]),
            int(values["draw_seed"]),
            values["concentration"],
        )
        spread = _spread(*key, data.sequences)
    return Uncertainty(spread, int(values["draws"]), int(values["draw_seed"]), spread.concentration, data.name, key)


def uncertainty_controls(container: Any, key: str, label: str) -> bool:
    """The prior-uncertainty switch with M, α₀ and the seed (shared by the pages); whether it is on."""
    values = settings()
    values["uncertainty"] = container.toggle(
        label,
        value=bool(values["uncertainty"]),
        key=f"{key}_on",
        help=(
            "The fit is an estimate: each row of the transition matrix was seen a finite number of times."
            " Θ adds M draws from the Dirichlet posterior of every row (docs/math.md §12); the robust curve"
            " takes the worst member for every window H, so it holds whichever of them is right."
        ),
    )
    if not values["uncertainty"]:
        return False
    cols = container.columns(3)
    number_input(cols[0], "Draws M", DRAWS, step=5, key=f"{key}_draws", help="More draws: a wider Θ, slower.")
    k = len(values["matrix"])
    current = values["concentration"] if values["concentration"] is not None else 1.0 / k
    low, high = CONCENTRATION.codec.low, CONCENTRATION.codec.high
    alpha = cols[1].number_input(
        "Dirichlet α₀",
        low,
        high,
        float(min(max(current, low), high)),
        step=0.05,
        format="%.4g",
        key=f"{key}_alpha",
        help=f"Added to every transition count before drawing; the default is 1/K = {1 / k:.4g}.",
    )
    values["concentration"] = None if math.isclose(alpha, 1.0 / k, rel_tol=1e-9) else float(alpha)
    number_input(cols[2], "Seed", DRAW_SEED, step=1, key=f"{key}_seed", help="The same seed gives the same draws.")
    return True


# --------------------------------------------------------------------------- the prior as Python


def _rows(matrix: Any) -> str:
    """A matrix as a Python literal that reads back to exactly the same floats, one row per line."""
    lines = ",\n".join("    [" + ", ".join(repr(float(x)) for x in row) + "]" for row in matrix)
    return "[\n" + lines + ",\n]"


def prior_source(
    kind: str, params: Params, members: Sequence[MarkovChainPrior] | None = None, name: str = "prior"
) -> tuple[str, str]:
    """A prior as Python building it with puffer_core, for the scripts every page exports: (names to import, code).

    ``params`` are the kind's parameters (:func:`parameters_of`); the code assigns ``name`` — one
    prior, or the list Θ — exactly as :data:`~puffer_core.priors.kinds.PRIOR_KINDS` builds it, with
    every float written as ``repr`` (it reads back to the same float).  ``members``: the priors of a
    robust Θ (a fitted chain and its posterior draws), written out entry by entry (a chain normalises
    its rows again when it is built, which can move an entry by one unit in the last place).
    """
    values = PRIOR_KINDS[kind].defaults | dict(params)
    length = int(values.get("length", 0))
    if members is not None:
        blocks = ",\n".join(_rows(m.transition) for m in members)
        code = (
            f"LABELS = {list(members[0].labels)!r}\n"
            f"# Θ: the fitted chain first, then {len(members) - 1} draws from its posterior (docs/math.md §12)\n"
            f"THETA = [\n{blocks},\n]\n"
            f"{name} = [MarkovChainPrior(matrix, length={members[0].length}, labels=LABELS) for matrix in THETA]\n"
        )
        return "MarkovChainPrior", code
    if kind == "binary":
        code = (
            f"p, q = {float(values['p'])!r}, {float(values['q'])!r}  # chances to stay in state 0 and in state 1\n"
            f"{name} = MarkovChainPrior([[p, 1.0 - p], [1.0 - q, q]], length={length})\n"
        )
        return "MarkovChainPrior", code
    if kind == "theta":
        pairs = ", ".join(f"({float(p)!r}, {float(q)!r})" for p, q in values["theta"])
        code = (
            f"THETA = [{pairs}]  # (p, q) of each binary chain in Θ\n"
            f"{name} = [MarkovChainPrior([[p, 1.0 - p], [1.0 - q, q]], length={length}) for p, q in THETA]\n"
        )
        return "MarkovChainPrior", code
    if kind == "matrix":
        labels = values["labels"]
        initial = None if values["initial"] is None else [float(x) for x in values["initial"]]
        code = (
            f"LABELS = {None if labels is None else list(labels)!r}  # None: 0, 1, …\n"
            f"MATRIX = {_rows(values['matrix'])}\n"
            f"INITIAL = {initial!r}  # None: the stationary distribution\n"
            f"{name} = MarkovChainPrior(MATRIX, initial=INITIAL, length={length}, labels=LABELS)\n"
        )
        return "MarkovChainPrior", code
    code = (
        f"{name} = GaussianProcessPrior(n={int(values['n'])}, length_scale={float(values['length_scale'])!r},"
        f" kernel={values['kernel']!r}, gamma={float(values['gamma'])!r}, delta={float(values['delta'])!r})\n"
    )
    return "GaussianProcessPrior", code
