"""What the user set: one settings dict per session, shareable through the link in the address bar.

Every setting is a :class:`~puffer_core.priors.codecs.Parameter` — its key in the settings, its
default, its short name in the link and how it is written there, within its range (its codec).
The prior kinds' parameters and view options come from
:data:`puffer_core.priors.kinds.PRIOR_KINDS`; the shared ones are below; a page declares its own
as a :class:`ParameterGroup` in its ``app_ui`` room and ``streamlit_app.py`` registers the group
(:func:`register`) before any page runs, so that a link opened on any page reads them all.

The settings live in ``st.session_state["settings"]`` so that they survive page switches; they
are read from the link once, when a session starts (what a link held that could not be used is
said on the page, :func:`show_ignored_link_settings`), and each page writes the ones it uses back
with :func:`share`, which also fills the page's "Share" button (:func:`share_button`).  Nothing
reads or writes them by a key typed as text: a page reads its settings as one typed record
(:mod:`app_ui.core.records`: e.g. ``CalibrateSettings.from_session()``, whose ``link()`` is what it
shares), and a control reads and writes one setting by its Parameter (:func:`get`, :func:`put`,
checked by :func:`conform`; a table editor restarts from a new value with :func:`restart_editor`).  A link
carries the prior exactly — a large matrix compressed — as long as it stays under
:data:`LINK_BUDGET` characters; beyond that it names what it left out, and whoever opens it is
told.  Number boxes bound to settings are :func:`number_input` (see :mod:`app_ui.core.inputs`: a value
out of range is said on the page and nothing is computed with another one).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from app_ui.core import inputs
from puffer_core.priors.codecs import Choice, Flag, Matrix, Number, Parameter
from puffer_core.priors.kinds import KIND_CODEC, MATRIX, PRIOR_KINDS
from puffer_core.validation import check_choice, check_flag, check_number

# A link longer than this is not written: nginx refuses request lines over 8 KB by default and
# HAProxy (deploy/) holds a request in 16 KB with its headers.  A fitted 30-state chain, exact, is ~4,500.
LINK_BUDGET = 8_000
EPS_RANGE = Number(0.01, 1000.0)  # every ε_puffer a page asks for
KIND = Parameter(
    "prior_kind", "binary", "prior", KIND_CODEC, label="Prior (the attacker's belief about one user's sequence)"
)
EPS_PUFFER = Parameter("eps_puffer", 1.0, "eps", EPS_RANGE, label="Target ε_puffer", step=0.1)
EPS_DP = Parameter("eps_dp", 0.1, "epsdp", Number(0.0001, 100.0), label="Per-entry ε_DP", step=0.01, format="%.4f")
PLAN_TOTAL = Parameter("plan_total", 6.0, "E", EPS_RANGE, label="Total budget ε_puffer for the series", step=0.5)
PLAN_RELEASES = Parameter(
    "plan_releases", 12, "releases", Number(1, 365, whole=True), label="Number of releases", step=1, aliases=("k",)
)
LOG_Y = Parameter("log_y", False, "log", Flag(), label="Log scale for a(b)")
# how the b axis of a curve chart is drawn: up to where the curves fade (zoom), on a log scale, or all of it
B_AXES: dict[str, str] = {"zoom": "Zoom to the signal", "log": "Log b", "all": "All b"}
B_AXIS = Parameter("b_axis", "zoom", "bx", Choice(tuple(B_AXES), labels=B_AXES), label="b axis")
B_AXIS_HELP = (
    "Zoom: b up to where every curve has faded (below 1% of its largest value and below 0.01 nats)."
    " Log: all b, on a log scale."
)
# prior uncertainty of a chain fitted to data (docs/math.md §12): Θ = the fit ∪ M posterior draws; in the
# link with the name of the data (the receiver loads a built-in dataset at once, or is asked for the file)
UNCERTAINTY = Parameter("uncertainty", False, "unc", Flag(), label="Prior uncertainty")
DRAWS = Parameter("draws", 20, "M", Number(2, 200, whole=True), label="Draws M", step=5)
DRAW_SEED = Parameter("draw_seed", 0, "dseed", Number(0, 1_000_000, whole=True), label="Seed", step=1)
CONCENTRATION = Parameter("concentration", None, "alpha", Number(0.001, 100.0), label="Dirichlet α₀")  # None: 1/K


@dataclass(frozen=True)
class DataText:
    """Where a fitted chain came from: a built-in dataset and its user column, or the name of an uploaded file.

    Written ``builtin:<dataset>:<user column>`` or ``upload:<file name>``; read back as a tuple of the same.
    """

    def parse(self, text: str) -> tuple[str, ...]:
        parts = tuple(text.split(":", 2)) if text.startswith("builtin:") else tuple(text.split(":", 1))
        if parts[0] == "builtin" and len(parts) == 3 and all(parts) or parts[0] == "upload" and len(parts) == 2:
            return parts
        raise ValueError("builtin:<dataset>:<user column> or upload:<file name>")

    def encode(self, value: Sequence[str]) -> str:
        return ":".join(value)


FITTED_DATA = Parameter("fitted_data", None, "data", DataText(), label="The data the chain was fitted to")


@dataclass(frozen=True)
class LeftOut:
    """Reads ``matrix-300-812345``: the kind of value, its number of states and the characters it needed."""

    def parse(self, text: str) -> tuple[str, int, int]:
        what, _, rest = text.partition("-")
        states, _, chars = rest.partition("-")
        if what != "matrix" or not states.isdigit() or not chars.isdigit():
            raise ValueError("matrix-<states>-<characters>")
        return what, int(states), int(chars)

    def encode(self, value: tuple[str, int, int]) -> str:
        return "-".join(str(v) for v in value)


# what a link could not carry: "matrix-<states>-<characters>" (see link and show_ignored_link_settings)
LEFT_OUT = Parameter("left_out", None, "lost", LeftOut(), label="What the link left out")
UNCERTAINTY_PARAMETERS = (UNCERTAINTY, DRAWS, DRAW_SEED, CONCENTRATION, FITTED_DATA)


@dataclass(frozen=True)
class FittedOrigin:
    """Where the K-state chain in the settings came from when it was fitted to data (docs/math.md §6).

    ``fingerprint`` and ``columns`` name the loaded data (None: a file a link named, not loaded yet), ``name``
    says it in words; ``matrix`` and ``labels`` are the fit, so that an edit of the chain is seen; ``smoothing``
    is the fit's τ.  Kept for the session only, never in a link (the link names the data: :data:`FITTED_DATA`).
    """

    fingerprint: str | None
    columns: tuple[tuple[str, str | None], ...] | None
    name: str
    matrix: Matrix
    labels: tuple[str, ...]
    smoothing: float


def _matrix_parameter(key: str) -> Parameter:
    """The K-state chain's parameter ``key`` (KeyError at import when the record has none of that name)."""
    found = {p.key: p for p in MATRIX.parameters}
    return found[key]


# the K-state chain's parameters that its editor writes one by one (the kind's record holds them all)
TRANSITIONS, LABELS, INITIAL = (_matrix_parameter(key) for key in ("matrix", "labels", "initial"))
# session-only settings (no link name): where a fitted chain came from, what the link that opened the session
# held that could not be used
FITTED = Parameter("fitted", None, label="Where the chain was fitted to data")  # a FittedOrigin, or None
LINK_IGNORED = Parameter("link_ignored", (), label="What the opening link held that could not be used")


@dataclass(frozen=True)
class ParameterGroup:
    """The settings one page keeps (e.g. the Plan page's ledger): in the session, in the link, checked by codecs."""

    name: str
    parameters: tuple[Parameter, ...]


CORE = ParameterGroup(
    "core",
    (
        KIND,
        *(p for kind in PRIOR_KINDS.values() for p in (*kind.parameters, *kind.options)),
        EPS_PUFFER,
        EPS_DP,
        PLAN_TOTAL,
        PLAN_RELEASES,
        LOG_Y,
        B_AXIS,
        *UNCERTAINTY_PARAMETERS,
        LEFT_OUT,
        FITTED,
        LINK_IGNORED,
    ),
)
SETTINGS: dict[str, Parameter] = {}
IN_LINKS: dict[str, Parameter] = {}  # by short name and by every older alias
GROUPS: dict[str, ParameterGroup] = {}


def register(*groups: ParameterGroup) -> None:
    """Make these groups' settings part of every session and every link (idempotent; ``app.py`` calls it).

    ValueError when a key or a short name is taken by another setting (two settings cannot share a name).
    """
    for group in groups:
        if GROUPS.get(group.name) is group:
            continue
        for parameter in group.parameters:
            known = SETTINGS.get(parameter.key)
            if known is not None and known is not parameter:
                raise ValueError(f"the setting {parameter.key!r} of {group.name!r} is declared twice")
            for name in (parameter.url, *parameter.aliases) if parameter.url else ():
                other = IN_LINKS.get(name)
                if other is not None and other is not parameter:
                    raise ValueError(f"the link name {name!r} of {parameter.key!r} is taken by {other.key!r}")
        for parameter in group.parameters:
            SETTINGS[parameter.key] = parameter
            for name in (parameter.url, *parameter.aliases) if parameter.url else ():
                IN_LINKS[name] = parameter
        GROUPS[group.name] = group


register(CORE)


def settings() -> dict[str, Any]:
    """The user's settings for this session; on the first run, read from the link.

    Pages read them as a typed record (:mod:`app_ui.core.records`); controls read and write one setting by its
    :class:`Parameter` (:func:`get`, :func:`put`), never by a key typed as text.
    """
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
                ignored.append(f"`{name}={raw[:40]}{'…' if len(raw) > 40 else ''}` ({exc})")
        for kind in PRIOR_KINDS.values():
            ignored += kind.tidy(values)
        values[LINK_IGNORED.key] = tuple(ignored)
        for parameter in SETTINGS.values():  # table editors start from <key>_base (see editor_state)
            if parameter.table:
                values[f"{parameter.key}_base"] = values[parameter.key]
                values[f"{parameter.key}_version"] = 0
        st.session_state["settings"] = values
    values = st.session_state["settings"]
    if len(values) < len(SETTINGS):  # a group registered after the session started (a page's module reloaded)
        for key, parameter in SETTINGS.items():
            values.setdefault(key, parameter.default)
    return values


def conform(parameter: Parameter, value: Any) -> Any:
    """``value`` as the setting ``parameter`` holds it, checked by its codec's kind: a whole number is an int, a
    real number a float, a flag a bool, a choice one of its options; other values (tables, records) as they are.

    None is kept for a setting whose default is None (an optional one).  ValueError naming the setting for a
    value of the wrong kind: a bug in the app, never something a user typed (links and boxes check their text
    and ranges before anything is stored; a range is not checked here, since a value may come from elsewhere —
    a chain fitted to one-entry sequences has T = 1).
    """
    if value is None and parameter.default is None:
        return None
    codec = parameter.codec
    name = f"the setting {parameter.key!r}"
    if isinstance(codec, Number):
        number = check_number(name, value)
        if not codec.whole:
            return number
        if number != int(number):
            raise ValueError(f"{name} must be a whole number; got {value!r}")
        return int(number)
    if isinstance(codec, Flag):
        return check_flag(name, value)
    if isinstance(codec, Choice):
        return check_choice(name, value, codec.options)
    return value


def get(parameter: Parameter) -> Any:
    """The value of one setting in this session (its default when it was never set), checked by :func:`conform`."""
    return conform(parameter, settings().get(parameter.key, parameter.default))


def put(parameter: Parameter, value: Any) -> Any:
    """Set one setting for this session (checked by :func:`conform`); the value stored."""
    stored = conform(parameter, value)
    settings()[parameter.key] = stored
    return stored


def restart_editor(parameter: Parameter, value: Any) -> None:
    """Set a setting that a table editor shows and restart its editor from the new value (a preset, a file)."""
    values = settings()
    values[parameter.key] = values[f"{parameter.key}_base"] = conform(parameter, value)
    values[f"{parameter.key}_version"] = values.get(f"{parameter.key}_version", 0) + 1


def editor_version(parameter: Parameter) -> int:
    """How many times the editor of ``parameter`` was restarted (widgets drawn with it take it in their key)."""
    return int(settings().get(f"{parameter.key}_version", 0))


@dataclass(frozen=True)
class Link:
    """The query string of a page's settings, and what it leaves out (a sentence, "" when nothing)."""

    query: dict[str, str]
    left_out: str


def link(parameters: Iterable[Parameter]) -> Link:
    """The link's query for these settings: every one that has a value, within :data:`LINK_BUDGET` characters.

    A matrix too large for the budget is left out (with its labels and initial distribution) and the
    link says so (``lost=matrix-<states>-<characters>``), so that whoever opens it is told.
    """
    values = settings()
    query = {}
    for parameter in parameters:
        if values[parameter.key] is None or parameter is LEFT_OUT:
            continue
        text = parameter.codec.encode(values[parameter.key])
        if text or not _missing_is_the_same(parameter):
            query[parameter.url] = text
    size = len(urlencode(query))
    if size <= LINK_BUDGET or "P" not in query:
        return Link(query, "")
    states = len(values[TRANSITIONS.key])
    for name in ("P", "labels", "init", "data", "unc", "M", "dseed", "alpha"):
        query.pop(name, None)
    query[LEFT_OUT.url] = LEFT_OUT.codec.encode(("matrix", states, size))
    return Link(
        query,
        f"The {states}-state matrix is not in this link: written exactly it takes {size:,} characters and a link"
        f" stays under {LINK_BUDGET:,} (longer ones are refused by common web servers). Whoever opens the link"
        " is told and sees the default chain; share the report or the script instead, or the data.",
    )


def _missing_is_the_same(parameter: Parameter) -> bool:
    """Whether leaving an empty value out of the link reads back the same (default labels, no initial distribution)."""
    return parameter.default is None or parameter.codec.encode(parameter.default) == ""


def share(parameters: Iterable[Parameter]) -> None:
    """Write these settings to the address bar so that the page can be shared, and fill its Share button."""
    made = link(parameters)
    if st.query_params.to_dict() != made.query:
        st.query_params.from_dict(made.query)
    slot = inputs.run_state().get("share_slot")
    if slot is not None:
        _fill_share(slot, made)


def share_button(container: Any = None) -> None:
    """A "Share" button for this page (filled with the link by :func:`share` at the end of the run)."""
    where = container if container is not None else st
    with where.popover("Share these settings", icon=":material/link:"):
        slot = st.empty()
        slot.caption("The link appears once the page has its results (a value above is out of range).")
    inputs.run_state()["share_slot"] = slot


def _fill_share(slot: Any, made: Link) -> None:
    base = st.context.url or ""
    address = base + ("?" + urlencode(made.query) if made.query else "")
    with slot.container():
        st.markdown("**A link to this page with these settings.** Copy it with the button at its right:")
        st.code(address, language=None, wrap_lines=True)
        notes = ["Pinned curves and uploaded files are never in a link."]
        if made.left_out:
            notes.insert(0, made.left_out)
        elif (get(FITTED_DATA) or ("",))[0] == "upload":
            notes.insert(0, "The file this chain was fitted to is not in the link: the matrix is, and its name.")
        st.caption(" ".join(notes))


def show_ignored_link_settings() -> None:
    """Tell the user which parts of the link they opened could not be used, and what it left out (once)."""
    ignored = get(LINK_IGNORED)
    if ignored:
        st.warning("Some settings in the link were ignored: " + "; ".join(ignored) + ".")
        put(LINK_IGNORED, ())
    left_out = get(LEFT_OUT)
    if left_out is not None:
        _, states, chars = left_out
        st.warning(
            f"The link was made for a {states}-state Markov chain whose matrix was too large for a link"
            f" ({chars:,} characters), so it is not here: you see the default {len(get(TRANSITIONS))}-state chain"
            " instead. Ask for the report or the script of that page, or for the data to fit the chain again."
        )
        put(LEFT_OUT, None)


def number_input(container: Any, label: str, parameter: Parameter, **kwargs: Any) -> Any:
    """A number box for a setting, checked against its codec's range (:func:`app_ui.core.inputs.number`).

    A value out of range is said under the box and the setting keeps its last good value; pages call
    :func:`app_ui.core.inputs.stop_if_invalid` before computing, so that nothing is shown for a value other
    than the one in the box.  The range is widened to hold the current value when that came from
    elsewhere (a chain fitted to one-entry sequences has T = 1).
    """
    values = settings()
    codec = parameter.codec
    current = values[parameter.key]
    allowed = Number(min(codec.low, current), max(codec.high, current), codec.whole)
    kwargs.setdefault("key", f"w_{parameter.key}")
    kwargs.setdefault("step", parameter.step)
    if parameter.format:
        kwargs.setdefault("format", parameter.format)
    if parameter.help:
        kwargs.setdefault("help", parameter.help)
    value = inputs.number(container, label, allowed, current, follow=True, **kwargs)
    if value is not None:
        put(parameter, value)
    return get(parameter)


def radio(container: Any, label: str, parameter: Parameter, names: dict[str, str], **kwargs: Any) -> Any:
    """A radio for a setting with a few choices (``names``: each choice's words); the choice is kept in the settings."""
    options = list(names)
    chosen = container.radio(label, options, index=options.index(get(parameter)), format_func=names.get, **kwargs)
    return put(parameter, chosen)


def toggle(container: Any, label: str, parameter: Parameter, **kwargs: Any) -> bool:
    """A toggle for a yes-or-no setting (a :class:`Flag`); the choice is kept in the settings."""
    return bool(put(parameter, bool(container.toggle(label, value=bool(get(parameter)), **kwargs))))


def editor_state(parameter: Parameter) -> tuple[str, Any]:
    """The key of the ``st.data_editor`` for setting ``parameter``, and the value it starts from.

    The editor starts from ``<key>_base``; when the setting was changed while its editor was
    not on screen (another page, a callback), it restarts from the current value under a new key.
    """
    values = settings()
    name = parameter.key
    values.setdefault(f"{name}_base", values[name])
    values.setdefault(f"{name}_version", 0)
    key = f"w_{name}_{values[f'{name}_version']}"
    if key not in st.session_state and values[name] != values[f"{name}_base"]:
        values[f"{name}_base"] = values[name]
        values[f"{name}_version"] += 1
        key = f"w_{name}_{values[f'{name}_version']}"
    return key, values[f"{name}_base"]
