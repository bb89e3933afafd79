"""What is secret on the Streams page (docs/math.md §16): the shared section for the page's chain, read into the
text of value secrets every cached number of the page takes ("" for every pair of values at every entry).

TPL, the [C] bound, the planner, the optimal schedule, the supremum and the exact audit all take value pairs and
protected positions; an event secret ("in A at some entry of W") is not one of them, so the page keeps every pair
and says so, as Calibrate's Gaussian tab does.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from app_ui.prior.current import Params
from app_ui.secrets.controls import prior_shape, secrets_controls
from puffer_core.secrets import Secrets

EVENT_NOTE = (
    "Every number on this page protects every pair of values at every entry, not the chosen event secret: the"
    " stream bounds (TPL, the [C] bound, the exact audit) take value pairs and protected positions only."
)


@dataclass(frozen=True)
class StreamSecrets:
    """The chosen value secrets resolved on the chain's entries (``text``: "" for every pair at every entry) and
    the sentence of what is protected."""

    text: str
    protected: str


def stream_secrets_section(kind: str, params: Params, description: str) -> StreamSecrets | None:
    """Draw the "What is secret" section for the stream's chain; the secrets every number takes, or None after an
    ``st.error`` (recorded for :func:`~app_ui.core.inputs.stop_if_invalid`)."""
    try:
        labels, length = prior_shape(kind, params)
    except ValueError:
        return None  # the prior's own controls say what is wrong with it
    choice = secrets_controls(labels, length, None, description)
    if choice is None:
        return None
    if choice.is_all:
        return StreamSecrets("", choice.secrets.sentence(labels, None, description))
    if not isinstance(choice.secrets, Secrets):
        st.info(EVENT_NOTE, icon=":material/lock_open:")
        return StreamSecrets("", f"{EVENT_NOTE} {Secrets().sentence(labels, None, description)}")
    try:
        resolved = choice.resolved(length)
    except ValueError as exc:
        st.error(f"What is secret: {exc}", icon=":material/error:")
        return None
    assert isinstance(resolved, Secrets)  # value secrets resolve to value secrets
    return StreamSecrets(resolved.to_text(), resolved.sentence(labels, None, description))
