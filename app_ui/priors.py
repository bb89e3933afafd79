"""The prior the user chose on the Influence curves page, and its a(b) curve (docs/math.md §2).

The kinds of prior, their parameters, descriptions, builders and checks are the records of
:data:`puffer_core.prior_kinds.PRIOR_KINDS`; this module keeps the chosen one in the settings,
computes its curve through one cached call, and shows it on the pages that use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from puffer_core import InfluenceCurve, MarkovChainPrior, binary_chain_curve, influence_curve
from puffer_core.gaussian import JITTER
from puffer_core.prior_kinds import MATRIX, PRIOR_KINDS, Matrix, PriorKind

from . import page_path
from .state import settings

JITTER_NOTE = (
    "Gaussian prior: as in [C] Example 4, a(b) ignores how the truncation to [−γ, γ] reshapes the"
    f" conditional distribution (docs/math.md §2.3); the covariance gets a nugget of {JITTER:g} on its"
    " diagonal, and r and μ are searched on fixed grids, refined around the optimum."
)


@dataclass(frozen=True)
class CurrentCurve:
    """The curve of the prior the user chose, with a one-line description of that prior."""

    curve: InfluenceCurve
    description: str


def parameters_of(kind: PriorKind, values: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The kind's parameters out of the settings, as a hashable key for the cached curve."""
    return tuple((p.key, values[p.key] if p.key in values else p.default) for p in kind.parameters)


@st.cache_data(show_spinner=False, max_entries=512)
def kind_curve(kind: str, parameters: tuple[tuple[str, Any], ...]) -> InfluenceCurve:
    """The exact a(b) curve of the prior of ``kind`` with these parameters (docs/math.md §2)."""
    return influence_curve(PRIOR_KINDS[kind].prior(dict(parameters)))


@st.cache_data(show_spinner=False, max_entries=128)
def closed_form_curve(p: float, q: float, max_b: int) -> InfluenceCurve:
    """[C]'s closed form for the binary chain (docs/math.md §2.2)."""
    return binary_chain_curve(p, q, max_b)


def describe_prior(values: dict[str, Any]) -> str:
    return PRIOR_KINDS[values["prior_kind"]].description(values)


def current_curve() -> CurrentCurve:
    """The a(b) curve of the prior in the settings; ValueError with the library's message."""
    values = settings()
    kind = PRIOR_KINDS[values["prior_kind"]]
    problems = kind.problems(values)
    if problems:
        raise ValueError("; ".join(problems))
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


def set_matrix(matrix: Matrix, labels: tuple[str, ...]) -> None:
    """Make ``matrix`` the K-state chain of the settings and restart its editor from it."""
    values = settings()
    values.update(matrix=matrix, matrix_base=matrix, labels=labels)
    values["matrix_version"] += 1


def use_prior(prior: MarkovChainPrior) -> None:
    """Make ``prior`` (e.g. fitted to data, docs/math.md §6) the K-state chain of the settings, with its T."""
    params = MATRIX.read(prior)
    settings()["length"] = params["length"]
    set_matrix(params["matrix"], tuple(params["labels"]))
