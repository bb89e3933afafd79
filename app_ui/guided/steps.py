"""A guided path, one step at a time: where the user is, and Back and Next (dp-wizard's linear flow).

:func:`step_header` shows the path's steps with the current one marked and returns it;
:func:`step_buttons` ends a step with Back and Next, Next only when the step is done (and saying
what is missing when it is not).  The current step of each path is kept in the session.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st


def _key(path: str) -> str:
    return f"path_{path}_step"


def current_step(path: str) -> int:
    """The step (0-based) the user is at on guided path ``path``."""
    return int(st.session_state.get(_key(path), 0))


def go_to(path: str, step: int) -> None:
    st.session_state[_key(path)] = step


def step_header(path: str, titles: Sequence[str]) -> int:
    """The path's steps in one line (the current one in bold) and a progress bar; the current step."""
    step = min(current_step(path), len(titles) - 1)
    # "1\." so that markdown does not read the line as a numbered list
    trail = " → ".join(f"**{i + 1}\\. {t}**" if i == step else f"{i + 1}\\. {t}" for i, t in enumerate(titles))
    st.caption(trail)
    st.progress((step + 1) / len(titles), text=f"Step {step + 1} of {len(titles)}")
    st.subheader(f"{step + 1}. {titles[step]}")
    return step


def step_buttons(
    path: str, step: int, last: int, ready: bool = True, missing: str = "", on_next: Callable[[], None] | None = None
) -> None:
    """Back and Next under a step; Next only once the step is ``ready`` (else ``missing`` says what to do)."""
    if not ready and missing:
        st.info(missing, icon=":material/arrow_upward:")

    def forward() -> None:
        if on_next is not None:
            on_next()
        go_to(path, step + 1)

    with st.container(horizontal=True):
        if step > 0:
            st.button("Back", icon=":material/arrow_back:", on_click=go_to, args=(path, step - 1), key=f"{path}_back")
        if step < last:
            st.button(
                "Next",
                icon=":material/arrow_forward:",
                type="primary",
                disabled=not ready,
                on_click=forward,
                key=f"{path}_next",
            )
