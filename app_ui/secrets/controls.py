"""The "What is secret" section (docs/math.md §16): the controls every curve page draws, and the sentence the
product stands behind.

:func:`secrets_section` draws the controls (in plain words: state names, 1-based entries, hours), reads them with
:func:`app_ui.secrets.form.build`, keeps the result in the settings (:data:`~app_ui.secrets.settings.SECRETS`,
:data:`~app_ui.secrets.settings.GRID`) and says what is protected.  What it cannot use is said in an
``st.error`` under the controls and recorded like a number box out of range, so that the page computes nothing
with other secrets than the ones shown (:func:`app_ui.core.inputs.stop_if_invalid`).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from app_ui.core import inputs, state
from app_ui.prior.current import build_prior, chain_priors
from app_ui.prior.settings import PriorChoice
from app_ui.secrets.form import PAIRS, WHERE, Form, build, form_of
from app_ui.secrets.settings import GRID, NAMES, SECRETS, SecretsChoice, names_of
from puffer_core.priors.codecs import default_labels
from puffer_core.priors.kinds import Params
from puffer_core.secrets import EventSecrets
from puffer_core.secrets.rules import WEEKDAYS

KEY = "w_sec"  # the widgets' keys start with it; the section's name among the invalid inputs
NAME = "What is secret"


@st.cache_data(show_spinner=False, max_entries=256)
def prior_shape(kind: str, params: Params) -> tuple[tuple[str, ...] | None, int]:
    """The prior's state names (None for a Gaussian process, which has none) and its longest sequence length."""
    prior = build_prior(kind, params)
    chains = chain_priors(prior)
    if chains is None:
        return None, int(prior.n)
    first = chains[0]
    labels = tuple(str(x) for x in (first.labels if first.labels is not None else default_labels(first.n_states)))
    return labels, max(int(c.length) for c in chains)


def _key(name: str) -> str:
    return f"{KEY}_{name}"


def _kw(name: str) -> dict[str, Any]:
    """A control's key, its value kept for the session: it survives a page that does not draw the section (where
    Streamlit would otherwise forget it, and the next page start from an empty choice)."""
    return {"key": _key(name), "persist_state": "session"}


def _start_widgets(form: Form) -> None:
    """Give every control that has no value yet the value of the settings (a link), and keep the values of the
    others: written back through the session state, they survive a change of page (Streamlit would otherwise
    start another page's control of the same key from its default)."""
    for name, value in form.__dict__.items():
        key = _key(name)
        st.session_state[key] = st.session_state[key] if key in st.session_state else (
            list(value) if isinstance(value, tuple) else value)


def _multiselect(container: Any, label: str, name: str, labels: tuple[str, ...], **kwargs: Any) -> list[str]:
    chosen = list(st.session_state.get(_key(name), []))
    options = list(labels) + [n for n in chosen if n not in labels]  # a name the prior lacks is said, not dropped
    return list(container.multiselect(label, options, **_kw(name), **kwargs))


def _controls(labels: tuple[str, ...] | None, values_only: bool = False) -> Form:
    """Draw the controls; the values they hold (``values_only``: value pairs at every entry or chosen entries)."""
    kinds = PAIRS if labels is not None else {"all": PAIRS["all"]}
    if values_only:
        kinds = {k: v for k, v in kinds.items() if k != "event"}
    if st.session_state.get(_key("kind")) not in kinds:
        st.session_state[_key("kind")] = "all"
    wheres = {k: v for k, v in WHERE.items() if k != "rule"} if values_only else WHERE
    if st.session_state.get(_key("where")) not in wheres:
        st.session_state[_key("where")] = "every"
    kind = st.radio("Which values are secret", list(kinds), format_func=kinds.get, **_kw("kind"))
    names = labels or ()
    values: dict[str, Any] = {"kind": kind}
    if kind == "sensitive":
        values["sensitive"] = tuple(_multiselect(st, "Sensitive states", "sensitive", names,
                                                 help="Each against every other state: where the user was is"
                                                      " secret only when it was one of these."))
    elif kind == "groups":
        values["groups"] = st.text_input("Groups of states (commas inside a group, semicolons between groups)",
                                         **_kw("groups"), placeholder="flu, cold; asthma, diabetes",
                                         help="Which state among a group is secret, not whether it was in the group.")
    elif kind == "list":
        values["listed"] = st.text_area("Pairs of states, one per line (clinic > home)", **_kw("listed"),
                                        placeholder="clinic > home\nclinic > work", height=90)
        values["ordered"] = st.toggle("One way only (clinic rather than home, not home rather than clinic)",
                                      **_kw("ordered"))
    elif kind == "event":
        values["event_states"] = tuple(_multiselect(st, "Visited states A", "event_states", names))
        values["windows"] = st.text_input("Windows of entries (1-based, e.g. 1-7; 20-26)", **_kw("windows"),
                                          help="In A at some entry of a window, against at none of them.")
    if kind != "event":
        where = st.radio("At which entries", list(wheres), format_func=wheres.get, **_kw("where"), horizontal=True)
        values["where"] = where
        if where == "entries":
            values["entries"] = st.text_input("Protected entries (1-based, e.g. 1-6; 20)", **_kw("entries"))
        elif where == "rule":
            values["hours"] = st.text_input("Hours (e.g. 22-5 for 22:00–05:59; empty: every hour)", **_kw("hours"))
            values["weekdays"] = tuple(st.multiselect("Days of the week (none: every day)", list(WEEKDAYS),
                                                      **_kw("weekdays")))
            first, last = st.columns(2)
            values["date_from"] = first.text_input("From date (YYYY-MM-DD, optional)", **_kw("date_from"))
            values["date_to"] = last.text_input("To date (optional)", **_kw("date_to"))
            st.caption("A prior has entries 1..T but no clock: say when entry 1 is and the time between entries.")
            start, step = st.columns(2)
            values["grid_start"] = start.text_input("Entry 1 is at", **_kw("grid_start"))
            values["grid_step"] = step.text_input("Time between entries", **_kw("grid_step"),
                                                  help="A duration: 1h, 30min, 1D.")
    return Form(**{**Form(grid_start=state.get(GRID)[0], grid_step=state.get(GRID)[1]).__dict__, **values})


def secrets_section(prior: PriorChoice, eps: float | None = None) -> SecretsChoice | None:
    """The "What is secret" section for ``prior``: its controls in an expander, then the sentence of what is
    protected (at ``eps`` if given).  The chosen secrets (kept in the settings), or None after an ``st.error``
    (recorded for :func:`~app_ui.core.inputs.stop_if_invalid`) or when the prior itself cannot be built."""
    try:
        labels, length = prior_shape(prior.kind, prior.params)
    except ValueError:
        return None  # the prior's own controls say what is wrong with it
    return secrets_controls(labels, length, eps, prior.description if eps is not None else None)


def data_secrets_section(labels: tuple[str, ...], length: int, eps: float | None = None) -> SecretsChoice | None:
    """The "What is secret" section for data with states ``labels`` and sequences of at most ``length`` entries
    (Synthesize): value pairs, at every entry or at chosen entries (no events, no rule on a time grid)."""
    return secrets_controls(labels, length, eps, None, values_only=True)


def secrets_controls(labels: tuple[str, ...] | None, length: int, eps: float | None, belief: str | None,
                     values_only: bool = False) -> SecretsChoice | None:
    """The section's controls and sentence for states ``labels`` and ``length`` entries (:func:`secrets_section`);
    ``belief``: the attacker's belief in the sentence."""
    current = SecretsChoice.from_session()
    untaken = values_only and (isinstance(current.secrets, EventSecrets) or current.secrets.rule is not None)
    if untaken:  # said before the controls put what they can take in its place (docs/math.md §16)
        st.info(f"The secrets chosen on another page ({current.secrets.sentence(labels, None, None)}) are"
                f" {'an event' if isinstance(current.secrets, EventSecrets) else 'entries chosen by their time'},"
                " which this page cannot take: it starts from every pair of values at every entry. Choose value"
                f" pairs and entries under *{NAME}*.", icon=":material/info:")
    _start_widgets(form_of(current.secrets, current.grid, current.labels_for(labels)))  # states by name
    with st.expander(NAME, icon=":material/lock:"):  # one label: a changing one would close it on every edit
        form = _controls(labels, values_only)
    try:
        chosen, grid = build(form, labels, length)
    except ValueError as exc:  # said under the expander, so that it is seen with the expander closed too
        st.error(f"{NAME}: {exc}. Nothing below is computed until it is fixed (open *{NAME}* above).",
                 icon=":material/error:")
        inputs.run_state()["invalid"][KEY] = NAME
        return None
    inputs.run_state()["invalid"].pop(KEY, None)
    state.put(SECRETS, chosen)
    state.put(GRID, grid)
    state.put(NAMES, names_of(chosen, labels))  # the states by name: another page reads the same ones
    choice = SecretsChoice.from_session()
    words = choice.secrets.sentence(labels, eps, belief)
    st.caption(f"**What is protected.** {words}")
    return choice
