"""What the user set: one settings dict per session, shareable through the link in the address bar.

Every setting is a :class:`~puffer_core.priors.kinds.Parameter` — its key in the settings, its
default, its short name in the link and how it is written there, within its range.  The prior
kinds' parameters come from :data:`puffer_core.priors.kinds.PRIOR_KINDS`; the pages' own ones are
below.  The settings live in ``st.session_state["settings"]`` so that they survive page switches;
they are read from the link once, when a session starts, and each page writes the ones it uses
back with :func:`share`.  Widgets take their ranges from the same parameters (:func:`number_input`),
so a link can never set what a widget cannot show.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import streamlit as st

from app_ui.ledger import LEDGER_PARAMETERS
from app_ui.stream_settings import ATTACK_PARAMETERS, STREAM_PARAMETERS
from puffer_core.priors.kinds import (
    KIND_CODEC,
    MAX_STATES,
    PRIOR_KINDS,
    Choice,
    Flag,
    Number,
    Parameter,
    PositiveNumbers,
    prior_kind,
)

EPS_RANGE = Number(0.01, 1000.0)  # every ε_puffer a page asks for
KIND = Parameter("prior_kind", "binary", "prior", KIND_CODEC)
EPS_PUFFER = Parameter("eps_puffer", 1.0, "eps", EPS_RANGE)
EPS_DP = Parameter("eps_dp", 0.1, "epsdp", Number(0.0001, 100.0))
PLAN_TOTAL = Parameter("plan_total", 6.0, "E", EPS_RANGE)
PLAN_RELEASES = Parameter("plan_releases", 12, "k", Number(1, 365, whole=True))
LOG_Y = Parameter("log_y", False, "log", Flag())
# how the b axis of a curve chart is drawn: up to where the curves fade (zoom), on a log scale, or all of it
B_AXES: dict[str, str] = {"zoom": "Zoom to the signal", "log": "Log b", "all": "All b"}
B_AXIS = Parameter("b_axis", "zoom", "bx", Choice(tuple(B_AXES)))
B_AXIS_HELP = (
    "Zoom: b up to where every curve has faded (below 1% of its largest value and below 0.01 nats)."
    " Log: all b, on a log scale."
)
# prior uncertainty of a chain fitted to data (docs/math.md §12): Θ = the fit ∪ M posterior draws.
# Not in the link: the data they are drawn from is not in it either.
UNCERTAINTY = Parameter("uncertainty", False, None, Flag())
DRAWS = Parameter("draws", 20, None, Number(2, 200, whole=True))
DRAW_SEED = Parameter("draw_seed", 0, None, Number(0, 1_000_000, whole=True))
CONCENTRATION = Parameter("concentration", None, None, Number(0.001, 100.0))  # None: α₀ = 1/K
CLOSED_FORM = Parameter("closed_form", False, "cf", Flag())  # the binary chain's closed form, overlaid
OVERLAY = Parameter("overlay", (), "overlay", PositiveNumbers())  # more Gaussian length scales, overlaid
# what the curves page draws along with a kind of prior: shared in the link with the prior
VIEW_OPTIONS: dict[str, tuple[Parameter, ...]] = {"binary": (CLOSED_FORM,), "gaussian": (OVERLAY,)}

SETTINGS: dict[str, Parameter] = {
    p.key: p
    for p in (
        KIND,
        *(p for kind in PRIOR_KINDS.values() for p in kind.parameters),
        EPS_PUFFER,
        EPS_DP,
        PLAN_TOTAL,
        PLAN_RELEASES,
        LOG_Y,
        B_AXIS,
        UNCERTAINTY,
        DRAWS,
        DRAW_SEED,
        CONCENTRATION,
        *(p for options in VIEW_OPTIONS.values() for p in options),
        *LEDGER_PARAMETERS,  # the Plan & compose page's ledger (app_ui/ledger.py)
        *STREAM_PARAMETERS,  # the Streams page (app_ui/stream_settings.py)
        *ATTACK_PARAMETERS,  # the attack page (app_ui/stream_settings.py)
    )
}
IN_LINKS: dict[str, Parameter] = {p.url: p for p in SETTINGS.values() if p.url is not None}


def default_labels(n_states: int) -> tuple[str, ...]:
    return tuple(str(i) for i in range(n_states))


def settings() -> dict[str, Any]:
    """The user's settings for this session; on the first run, read from the link."""
    if "settings" not in st.session_state:
        values = {key: p.default for key, p in SETTINGS.items()}
        ignored = []
        for name, raw in st.query_params.to_dict().items():
            if name not in IN_LINKS:
                continue
            parameter = IN_LINKS[name]
            try:
                values[parameter.key] = parameter.codec.parse(raw)
            except ValueError as exc:
                ignored.append(f"`{name}={raw[:40]}` ({exc})")
        if values["labels"] is not None and len(values["labels"]) != len(values["matrix"]):
            ignored.append(f"`labels` ({len(values['labels'])} labels for {len(values['matrix'])} states)")
            values["labels"] = None
        if values["labels"] is None:
            values["labels"] = default_labels(len(values["matrix"]))
        if values["initial"] is not None and len(values["initial"]) != len(values["matrix"]):
            ignored.append(f"`init` ({len(values['initial'])} numbers for {len(values['matrix'])} states)")
            values["initial"] = None
        # fitted: where the matrix came from when it was fitted to data (see app_ui.priors.use_prior)
        values.update(pinned=[], link_ignored=ignored, fitted=None)
        for name in ("matrix", "theta", "initial"):  # the data editors start from <name>_base (see editor_state)
            values[f"{name}_base"] = values[name]
            values[f"{name}_version"] = 0
        st.session_state["settings"] = values
    return st.session_state["settings"]


def prior_parameters() -> tuple[Parameter, ...]:
    """What the link carries about the prior in use: its kind, its parameters and the curves page's options."""
    kind = settings()["prior_kind"]
    own = tuple(p for p in prior_kind(kind).parameters if p.url is not None)
    return (KIND, *own, *VIEW_OPTIONS.get(kind, ()))


def share(parameters: Iterable[Parameter]) -> None:
    """Write these settings to the address bar so that the page can be shared."""
    values = settings()
    too_large = len(values["matrix"]) > MAX_STATES  # such a matrix is not in the link (see link_note)
    params = {}
    for parameter in parameters:
        if parameter.key in ("matrix", "labels", "initial") and too_large:
            continue
        if values[parameter.key] is None:  # e.g. no initial distribution: the stationary one
            continue
        if parameter.key == "labels" and values["labels"] == default_labels(len(values["matrix"])):
            continue
        params[parameter.url] = parameter.codec.encode(values[parameter.key])
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)


def link_note() -> str:
    """What the link in the address bar leaves out, if anything."""
    values = settings()
    if values["prior_kind"] == "matrix" and len(values["matrix"]) > MAX_STATES:
        return (
            f" A matrix with more than {MAX_STATES} states is too large for a link: the link carries the"
            " other settings only."
        )
    return ""


def show_ignored_link_settings() -> None:
    """Tell the user which parts of the link they opened could not be used (once)."""
    values = settings()
    if values["link_ignored"]:
        st.warning("Some settings in the link were ignored: " + "; ".join(values["link_ignored"]) + ".")
        values["link_ignored"] = []


def number_input(container: Any, label: str, parameter: Parameter, **kwargs: Any) -> Any:
    """A number input for a setting, within its range; the value the user sets is kept in the settings.

    The range is widened to hold the current value when that came from elsewhere (a chain fitted
    to one-entry sequences has T = 1).
    """
    values = settings()
    cast = int if parameter.codec.whole else float
    current = cast(values[parameter.key])
    low, high = min(cast(parameter.codec.low), current), max(cast(parameter.codec.high), current)
    values[parameter.key] = cast(container.number_input(label, low, high, current, **kwargs))
    return values[parameter.key]


def radio(container: Any, label: str, parameter: Parameter, names: dict[str, str], **kwargs: Any) -> Any:
    """A radio for a setting with a few choices (``names``: each choice's words); the choice is kept in the settings."""
    values = settings()
    options = list(names)
    values[parameter.key] = container.radio(
        label, options, index=options.index(values[parameter.key]), format_func=names.get, **kwargs
    )
    return values[parameter.key]


def editor_state(name: str) -> tuple[str, Any]:
    """The key of the ``st.data_editor`` for setting ``name``, and the value it starts from.

    The editor starts from ``<name>_base``; when the setting was changed while its editor was
    not on screen (another page, a callback), it restarts from the current value under a new key.
    """
    values = settings()
    key = f"w_{name}_{values[f'{name}_version']}"
    if key not in st.session_state and values[name] != values[f"{name}_base"]:
        values[f"{name}_base"] = values[name]
        values[f"{name}_version"] += 1
        key = f"w_{name}_{values[f'{name}_version']}"
    return key, values[f"{name}_base"]
