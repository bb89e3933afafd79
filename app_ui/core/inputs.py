"""Number boxes that never leave a stale answer on screen.

Streamlit's own number box, given a range, turns red on a value outside it, says why only in a
tooltip, and keeps running the page with the previous value — so the results on screen, and
a button pressed next, belong to a number that is no longer in the box.  :func:`number` takes any
number, checks it against the setting's range (a :class:`~puffer_core.priors.codecs.Number`),
and when it is out of range says so in the page, right under the box; the page then calls
:func:`stop_if_invalid` before it computes anything, so the results wait until the box holds a
value they can be computed for.  Nothing is ever computed or run with a value other than the one
shown.

:func:`run_state` is what one script run keeps (reset by ``app.py`` at the start of every run):
the boxes out of range, and the page's Share button (:func:`app_ui.core.state.share_button`).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from app_ui.core.tables import join_words
from puffer_core.priors.codecs import Number

RUN = "_run"  # st.session_state key of what this script run keeps
SYNCED = "_synced"  # st.session_state key: each box's value as last given to it


def begin_run() -> None:
    """Forget what the previous run kept (``app.py`` calls this first, on every run)."""
    st.session_state[RUN] = {"invalid": {}}


def run_state() -> dict[str, Any]:
    """What this script run keeps: ``invalid`` (box key → its name) and the page's share slot."""
    return st.session_state.setdefault(RUN, {"invalid": {}})


def _number_words(value: float) -> str:
    return f"{value:,.10g}".replace("-", "−")


def number(
    container: Any,
    label: str,
    allowed: Number,
    value: float | None,
    *,
    key: str,
    follow: bool = False,
    optional: bool = False,
    **kwargs: Any,
) -> Any:
    """A number box starting at ``value``: the number typed, or None when it is outside ``allowed``.

    The box itself takes any number (Streamlit's own would silently keep the old one); a value out of
    range is said under it ("… must be between 2 and 10,000; 10,000,000 is not") and recorded for
    :func:`stop_if_invalid`.  ``follow``: ``value`` is a setting that may change elsewhere (another page,
    a callback), and the box moves to it when it does (through its session state, so Streamlit never
    sees a default and a session value at once).  ``optional``: the box may be left empty (None).
    """
    cast = int if allowed.whole else float
    synced = st.session_state.setdefault(SYNCED, {})
    if key not in st.session_state or (follow and synced.get(key) != value):
        st.session_state[key] = None if value is None else cast(value)
        synced[key] = value
    if allowed.whole:  # a box of whole numbers: Streamlit tells them from the step's type
        kwargs["step"] = int(kwargs.get("step") or 1)
    typed = container.number_input(label, key=key, **kwargs)
    invalid = run_state()["invalid"]
    if typed is None:
        problem = "" if optional else "cannot be empty"
    else:
        reason = allowed.problem(float(typed))
        problem = f"must be {reason}; {_number_words(float(typed))} is not" if reason else ""
    if problem:
        name = label.split(" (")[0]
        message = f"{name} {problem}. Nothing below is computed until it is."
        container.error(message, icon=":material/error:")
        invalid[key] = name
        return None
    invalid.pop(key, None)
    synced[key] = None if typed is None else cast(typed)
    return None if typed is None else cast(typed)


def is_invalid(key: str) -> bool:
    """Whether the box ``key`` holds a value out of range in this run."""
    return key in run_state()["invalid"]


def invalid_inputs() -> list[str]:
    """The names of the boxes that hold a value out of range in this run (each says why under it)."""
    return list(run_state()["invalid"].values())


class Halt(Exception):  # noqa: N818 - not an error: the page ends here on purpose
    """Ends a page's run early (:func:`stop_if_invalid`); ``streamlit_app.py`` catches it and draws the sidebar."""


def stop_if_invalid() -> None:
    """End the page's run here when a box holds a value out of range: no result is computed with another value.

    Call it after the page's controls and before its results (and before any button that runs something),
    not inside a fragment.  Unlike ``st.stop()`` it lets ``streamlit_app.py`` finish the run (the sidebar).
    """
    names = invalid_inputs()
    if names:
        listed = join_words(names)
        st.warning(
            f"The results are hidden while a value is out of range: {listed} (the reason is under the box).",
            icon=":material/pending:",
        )
        raise Halt
