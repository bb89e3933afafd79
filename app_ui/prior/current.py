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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from app_ui import page_path
from app_ui.core import inputs, long_work
from app_ui.core.report import Section
from app_ui.core.state import (
    CONCENTRATION,
    DRAW_SEED,
    DRAWS,
    FITTED,
    FITTED_DATA,
    INITIAL,
    KIND,
    LABELS,
    TRANSITIONS,
    UNCERTAINTY,
    FittedOrigin,
    get,
    number_input,
    put,
    restart_editor,
    toggle,
)
from app_ui.prior.settings import PriorChoice
from puffer_core import InfluenceCurve, MarkovChainPrior, PriorSpread, binary_chain_curve, influence_curve, prior_spread
from puffer_core.data.sequences import Sequences
from puffer_core.data.stats import SequenceStats
from puffer_core.display import fmt
from puffer_core.engine.gaussian import JITTER
from puffer_core.priors.codecs import (
    Choice,
    DistributionText,
    LabelsText,
    Matrix,
    MatrixText,
    PairsText,
    default_labels,
)
from puffer_core.priors.fitting import DEFAULT_SMOOTHING
from puffer_core.priors.kinds import (
    GAUSSIAN,
    LENGTH,
    MATRIX,
    PRIOR_KINDS,
    Params,
    PriorKind,
    chains_source,
    params_key,
)
from puffer_core.priors.models import theta_or_none

if TYPE_CHECKING:
    from app_ui.data.picker import LoadedData

JITTER_NOTE = GAUSSIAN.note.replace("the solver's nugget", f"the solver's nugget of {JITTER:g}")
CURVE_SOURCES = {"closed_form": "[C]'s closed form"}  # overlay curves that are not a prior kind's


@dataclass(frozen=True)
class CurrentCurve:
    """The curve of the prior the user chose, with a one-line description of that prior."""

    curve: InfluenceCurve
    description: str


def parameters_of(kind: PriorKind, values: dict[str, Any]) -> Params:
    """The kind's parameters out of the settings, as a hashable key for the cached curve."""
    return params_key(kind, values)


@st.cache_data(show_spinner=False, max_entries=512)
def kind_curve(kind: str, parameters: Params) -> InfluenceCurve:
    """The exact a(b) curve of the prior of ``kind`` with these parameters (docs/math.md §2)."""
    done = long_work.finished_curve(kind, parameters)  # computed under a progress bar (current_curve)
    return done if done is not None else influence_curve(PRIOR_KINDS[kind].prior(dict(parameters)))


@st.cache_data(show_spinner=False, max_entries=128)
def closed_form_curve(p: float, q: float, max_b: int, length: int) -> InfluenceCurve:
    """[C]'s closed form for the binary chain with sequences of ``length`` entries (docs/math.md §2.2)."""
    return binary_chain_curve(p, q, max_b, length)


@st.cache_data(show_spinner=False, max_entries=128)
def overlay_curve(source: str, parameters: Params) -> InfluenceCurve:
    """A curve drawn beside a prior's (:meth:`~puffer_core.priors.kinds.PriorKind.overlay_curves`): another
    prior kind's curve, or [C]'s closed form for a binary chain."""
    if source == "closed_form":
        return closed_form_curve(**dict(parameters))
    return kind_curve(source, parameters)


def describe_prior() -> str:
    """One line naming the prior in the settings, with the data it was fitted to while it is still the fit, and its
    prior uncertainty when it is switched on (the pages then calibrate against Θ).  A link's fitted data is
    read first, so that a page and its sidebar name the prior alike however the page was opened."""
    _from_link()
    prior = PriorChoice.from_session()
    chosen = prior.uncertainty
    if prior.as_fitted and chosen.on:
        return f"{prior.description}, with its prior uncertainty (Θ: the fit and {chosen.draws} posterior draws)"
    return prior.description


def current_curve() -> CurrentCurve:
    """The a(b) curve of the prior in the settings; ValueError with the library's message."""
    prior = PriorChoice.from_session()
    problems = prior.problems()
    if problems:
        raise ValueError("; ".join(problems))
    long_work.prepare_curve(prior.kind, prior.params)  # a long curve: estimate, progress, Cancel
    return CurrentCurve(kind_curve(prior.kind, prior.params), prior.description)


def prior_summary() -> CurrentCurve | None:
    """Show which prior the page uses (set on the curves page); its curve, or None after st.error."""
    cols = st.columns([4, 1])
    cols[0].markdown(f"**Prior:** {describe_prior()}")
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
    put(LABELS, labels)
    put(INITIAL, initial)
    restart_editor(TRANSITIONS, matrix)


def use_prior(prior: MarkovChainPrior, origin: LoadedData | None = None, smoothing: float = DEFAULT_SMOOTHING) -> None:
    """Make ``prior`` (e.g. fitted to data, docs/math.md §6) the K-state chain of the settings, with its T,
    and the prior in use on every page.

    ``origin``: the data ``prior`` was fitted to (with ``smoothing``); while the chain stays as fitted, the
    pages offer its prior uncertainty (:func:`fitted_data`), drawn around the same fit, and the link names
    the data.
    """
    params = MATRIX.read(prior)
    if params is None:
        raise ValueError(f"a Markov chain prior is needed here; got a {type(prior).__name__}")
    put(LENGTH, params[LENGTH.key])
    put(KIND, MATRIX.name)
    set_matrix(params[TRANSITIONS.key], tuple(params[LABELS.key]), params[INITIAL.key])
    put(FITTED, None)
    put(FITTED_DATA, None)
    if origin is not None:
        put(FITTED, _origin(origin, params[TRANSITIONS.key], tuple(params[LABELS.key]), smoothing))
        user = origin.columns.get("user")
        named = ("builtin", origin.dataset, str(user)) if origin.dataset is not None else ("upload", origin.name)
        put(FITTED_DATA, named)


def keep_uncertainty(draws: int, seed: int, concentration: float | None) -> None:
    """Show the prior uncertainty of the fitted chain in the settings with these draws (e.g. Simulate's)."""
    put(UNCERTAINTY, True)
    put(DRAWS, draws)
    put(DRAW_SEED, seed)
    put(CONCENTRATION, concentration)


def _origin(
    data: LoadedData, matrix: Matrix, labels: tuple[str, ...], smoothing: float = DEFAULT_SMOOTHING
) -> FittedOrigin:
    columns = tuple(data.columns.items())
    return FittedOrigin(data.fingerprint, columns, data.description, matrix, labels, float(smoothing))


def _from_link() -> None:
    """A link named the data its chain was fitted to: a built-in dataset is loaded (once) and, when the chain in
    the link is its fit, becomes the chain's origin; an uploaded file is waited for under its name."""
    named = get(FITTED_DATA)
    if named is None or get(FITTED) is not None or get(KIND) != MATRIX.name:
        return
    from app_ui.data.picker import builtin_data, fitted_prior  # the data picker is only needed here

    matrix, labels = get(TRANSITIONS), tuple(get(LABELS))
    if named[0] == "upload":
        put(FITTED, FittedOrigin(None, None, named[1], matrix, labels, DEFAULT_SMOOTHING))
        return
    try:
        data = builtin_data(named[1], named[2])
    except (KeyError, ValueError):
        put(FITTED_DATA, None)
        return
    fit = MATRIX.read(fitted_prior(data))
    if fit is not None and fit[TRANSITIONS.key] == matrix and tuple(fit[LABELS.key]) == labels:
        put(FITTED, _origin(data, matrix, labels))
        st.session_state.setdefault("dataset", data)


def fitted_data() -> LoadedData | None:
    """The data the chain in the settings was fitted to, while it is still as fitted and loaded; else None."""
    _from_link()
    fitted = get(FITTED)
    data = st.session_state.get("dataset")
    if fitted is not None and fitted.fingerprint is None and data is not None:  # the file a link named
        fitted = _adopt(fitted, data)
    if (
        fitted is None
        or not _is_the_fit(PriorChoice.from_session(), fitted)
        or data is None
        or getattr(data, "fingerprint", None) != fitted.fingerprint
        or tuple(data.columns.items()) != fitted.columns
    ):
        return None
    return data


def _is_the_fit(prior: PriorChoice, fitted: FittedOrigin) -> bool:
    """Whether the prior is the K-state chain exactly as fitted: its matrix and labels, the stationary start."""
    return (
        prior.kind == MATRIX.name
        and prior.value(TRANSITIONS) == fitted.matrix
        and tuple(prior.value(LABELS)) == fitted.labels
        and prior.value(INITIAL) is None
    )


def _adopt(fitted: FittedOrigin, data: LoadedData) -> FittedOrigin:
    """A file loaded under the name a link gave becomes the chain's origin when the chain is its fit."""
    from app_ui.data.picker import fitted_prior

    fit = MATRIX.read(fitted_prior(data)) if data.name == fitted.name else None
    if fit is None or fit[TRANSITIONS.key] != fitted.matrix or tuple(fit[LABELS.key]) != fitted.labels:
        return fitted
    adopted = replace(fitted, fingerprint=data.fingerprint, columns=tuple(data.columns.items()), name=data.description)
    put(FITTED, adopted)
    return adopted


def why_no_uncertainty() -> str:
    """Why :func:`fitted_data` is None, in a sentence for a caption."""
    prior = PriorChoice.from_session()
    fitted = prior.fitted
    if fitted is None or prior.kind != MATRIX.name:
        return (
            "Prior uncertainty is offered for a chain fitted to data: choose the K-state chain, the preset"
            " 'Fitted from data' and load it into the editor."
        )
    if prior.value(TRANSITIONS) != fitted.matrix or tuple(prior.value(LABELS)) != fitted.labels:
        return "The matrix was edited after it was fitted to data, so its prior uncertainty no longer applies."
    if prior.value(INITIAL) is not None:
        return "A fitted chain starts in its stationary distribution: with an initial distribution it is not the fit."
    if fitted.fingerprint is None:
        return (
            f"This chain was fitted to the file {fitted.name}, which came with the link only by its name: load"
            " that file (preset 'Fitted from data', then upload it) to see its prior uncertainty."
        )
    return f"The data this chain was fitted to ({fitted.name}) is no longer loaded; load it again to see its spread."


@st.cache_resource(show_spinner=False, max_entries=16)
def _spread(
    fingerprint: str,
    columns: tuple[tuple[str, str | None], ...],
    length: int,
    draws: int,
    seed: int,
    concentration: float | None,
    smoothing: float,
    _sequences: Sequences | SequenceStats,
) -> PriorSpread:
    """:func:`puffer_core.prior_spread` once per data, T, M, seed and α₀ (the sequences are keyed by fingerprint).

    Shared, not copied (it holds every draw's curve): callers must not change it.
    """
    return prior_spread(
        _sequences, draws=draws, seed=seed, concentration=concentration, length=length, smoothing=smoothing
    )


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
    prior = PriorChoice.from_session()
    chosen = prior.uncertainty
    with st.spinner(
        f"Drawing {chosen.draws} priors from the posterior and computing the curve of Θ"
        " (a few seconds at K = 20; cached afterwards)…"
    ):
        key = (
            data.fingerprint,
            tuple(data.columns.items()),
            int(prior.value(LENGTH)),
            chosen.draws,
            chosen.seed,
            chosen.concentration,
            float(prior.fitted.smoothing if prior.fitted is not None else DEFAULT_SMOOTHING),
        )
        spread = _spread(*key, data.stats)
    return Uncertainty(spread, chosen.draws, chosen.seed, spread.concentration, data.name, key)


def uncertainty_controls(container: Any, key: str, label: str) -> bool:
    """The prior-uncertainty switch with M, α₀ and the seed (shared by the pages); whether it is on."""
    on = toggle(
        container,
        label,
        UNCERTAINTY,
        key=f"{key}_on",
        help=(
            "The fit is an estimate: each row of the transition matrix was seen a finite number of times."
            " Θ adds M draws from the Dirichlet posterior of every row (docs/math.md §12); the robust curve"
            " takes the worst member for every window H, so it holds whichever of them is right."
        ),
    )
    if not on:
        return False
    cols = container.columns(3)
    number_input(cols[0], "Draws M", DRAWS, key=f"{key}_draws", help="More draws: a wider Θ, slower.")
    k = len(get(TRANSITIONS))
    concentration = get(CONCENTRATION)
    current = concentration if concentration is not None else 1.0 / k
    alpha = inputs.number(
        cols[1],
        "Dirichlet α₀",
        CONCENTRATION.codec,
        current,
        follow=True,
        step=0.05,
        format="%.4g",
        key=f"{key}_alpha",
        help=f"Added to every transition count before drawing; the default is 1/K = {1 / k:.4g}.",
    )
    if alpha is not None:
        put(CONCENTRATION, None if math.isclose(alpha, 1.0 / k, rel_tol=1e-9) else float(alpha))
    number_input(cols[2], "Seed", DRAW_SEED, key=f"{key}_seed", help="The same seed gives the same draws.")
    return True


# --------------------------------------------------------------------------- the prior in a report

REPORT_MATRIX_STATES = 60  # a larger matrix is in the script, not in the report's table


def prior_settings(kind: str, params: Params) -> dict[str, str]:
    """The prior's parameters in words, for a report's settings: the controls' labels, numbers as the page
    prints them, the matrix by its size (its entries are a table of their own: :func:`prior_sections`)."""
    record = PRIOR_KINDS[kind]
    values = record.defaults | dict(params)
    out = {"kind of prior": record.label}
    for parameter in record.parameters:
        value, codec, name = values[parameter.key], parameter.codec, parameter.label or parameter.key
        if isinstance(codec, MatrixText):
            where = "below" if len(value) <= REPORT_MATRIX_STATES else "in the script"
            out[name] = f"{len(value)} × {len(value)}, the table “Transition matrix” {where}"
        elif isinstance(codec, LabelsText):
            if value is not None and tuple(value) != default_labels(len(value)):
                out[name] = ", ".join(value)
        elif isinstance(codec, DistributionText):
            out[name] = "the stationary distribution" if value is None else ", ".join(fmt(float(x)) for x in value)
        elif isinstance(codec, PairsText):
            out[name] = "; ".join(f"({p:g}, {q:g})" for p, q in value)
        elif isinstance(codec, Choice):
            out[name] = codec.label(value)
        else:
            out[name] = str(int(value)) if getattr(codec, "whole", False) else f"{float(value):g}"
    return out


def prior_sections(kind: str, params: Params) -> list[Section]:
    """A report's section with the prior's transition matrix (a K-state chain up to 60 states), else none."""
    values = PRIOR_KINDS[kind].defaults | dict(params)
    matrix = values.get(TRANSITIONS.key)
    if kind != MATRIX.name or matrix is None or len(matrix) > REPORT_MATRIX_STATES:
        return []
    labels = list(values[LABELS.key] or default_labels(len(matrix)))
    frame = pd.DataFrame(matrix, columns=labels)
    frame.insert(0, "from \\ to", labels)
    return [Section("Transition matrix", "Rows are the current state, columns the next one.", table=frame)]


# --------------------------------------------------------------------------- the prior as Python


def prior_source(
    kind: str, params: Params, members: Sequence[MarkovChainPrior] | None = None, name: str = "prior"
) -> tuple[str, str]:
    """A prior as Python building it with puffer_core, for the scripts every page exports: (names to import, code).

    ``params`` are the kind's parameters (:func:`parameters_of`); the code is the kind's own
    (:meth:`~puffer_core.priors.kinds.PriorKind.code`).  ``members``: the priors of a robust Θ (a
    fitted chain and its posterior draws), written out entry by entry.
    """
    names, code = chains_source(members, name) if members is not None else PRIOR_KINDS[kind].code(dict(params), name)
    return ", ".join(names), code


def build_prior(kind: str, params: Params) -> Any:
    """The prior of ``kind`` with these parameters (a MarkovChainPrior, a list of them, or a Gaussian one)."""
    return PRIOR_KINDS[kind].prior(dict(params))


def chain_priors(prior: Any) -> list[MarkovChainPrior] | None:
    """The Markov chain priors of a prior (Θ: all of them), or None for a Gaussian-process prior."""
    chains = theta_or_none(prior, "a stream")
    return None if chains is None else list(chains)
