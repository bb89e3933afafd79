"""What is secret on "How tight is my bound?" (docs/math.md §16): the shared section for your prior, read into the
text of value secrets its ladder takes ("" for every pair of values at every entry).

Every rung of the library's ladder (the attack, the exact truth, TPL, the [C] bound, group DP) takes value pairs
and protected entries, so the chosen secrets apply to the whole ladder of your prior.  The demo priors have other
states and lengths than the ones the secrets name: their ladders protect every pair at every entry, said on the
page.  Event secrets are not value pairs: the ladder then protects every pair, said too.
"""

from __future__ import annotations

import streamlit as st

from app_ui.prior.settings import PriorChoice
from app_ui.secrets.controls import secrets_section
from app_ui.secrets.page import value_secrets
from app_ui.secrets.views import value_secrets_of
from puffer_core.secrets import Secrets

APPLIED = (
    "The chosen secrets apply to every rung of **your prior**'s ladder (the attack, the exact truth, TPL, the"
    " [C] bound and group DP). The demo priors, whose states and lengths differ, protect every pair of values at"
    " every entry."
)


def attack_secrets_section(prior: PriorChoice, offered: bool) -> str | None:
    """Draw the "What is secret" section for your prior (when ``offered``: it is a Markov chain); the resolved value
    secrets' text ("" for every pair at every entry), or None after an ``st.error``."""
    if not offered:
        return ""
    choice = secrets_section(prior)
    if choice is None:
        return None
    try:
        chosen, note = value_secrets(choice, prior, "The ladder of your prior")
    except ValueError as exc:
        st.error(f"What is secret: {exc}", icon=":material/error:")
        return None
    if note:
        st.info(note, icon=":material/lock_open:")
    if chosen is None:
        return ""
    st.caption(APPLIED)
    return chosen.to_text()


def secrets_of(text: str) -> Secrets | None:
    """The value secrets written ``text`` (None for "", every pair at every entry)."""
    return value_secrets_of(text, "the ladder takes value pairs and protected entries, not event secrets")
