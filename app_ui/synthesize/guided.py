"""The guided path's way to the Synthesize page: "publish a synthetic dataset" with the data and the target the
path chose (docs/math.md §19), and the data a link or the path names chosen in the page's data picker."""

from __future__ import annotations

import streamlit as st

from app_ui import page_path
from app_ui.core import state
from app_ui.data.picker import UPLOAD, LoadedData
from app_ui.synthesize.exports import data_name
from app_ui.synthesize.settings import SYNTH_DATA
from puffer_core.data.datasets import DATASETS
from puffer_core.display import fmt

PREFIX = "syn"  # the Synthesize page's data picker


def choose_data(named: tuple[str, ...] | None, replace: bool) -> None:
    """Select the data ``named`` (``("builtin", dataset, user column)`` or ``("upload", file name)``) in the page's
    picker; ``replace``: over what the picker holds (the guided path), else only where it holds nothing (a link).
    A file is asked for on the page: it is never kept."""
    put = st.session_state.__setitem__ if replace else st.session_state.setdefault
    if named and named[0] == "builtin" and named[1] in DATASETS:
        dataset = DATASETS[named[1]]
        put(f"{PREFIX}_last_source", dataset.title)
        if replace:
            st.session_state[f"{PREFIX}_source"] = dataset.title
        if named[2] in dataset.user_choices:
            put(f"{PREFIX}_user_{dataset.name}", named[2])
    elif named and named[0] == "upload":
        if replace:
            st.session_state[f"{PREFIX}_source"] = UPLOAD
        st.session_state[f"{PREFIX}_ask_for"] = named[1]


def _prepare(data: LoadedData) -> None:
    named = data_name(data)
    state.put(SYNTH_DATA, named)
    choose_data(named, replace=True)
    st.session_state[f"{PREFIX}_link_read"] = True


def offer_synthesis(data: LoadedData, eps: float) -> None:
    """A box on the guided path: publish a synthetic dataset of ``data`` at ε_puffer = ``eps``."""
    with st.container(border=True, key="guide_synthesize"):
        st.markdown(
            f"**Publish a synthetic dataset** of {data.description}: a file of synthetic users' sequences in your"
            f" columns that anyone can explore, at ε_puffer = {fmt(eps)} (one more release: in a ledger it composes"
            " with the others). The Synthesize page shows the plan, the fidelity and the download."
        )
        if st.button("Synthesize these data", icon=":material/dataset:", key="w_guide_synthesize",
                     on_click=_prepare, args=(data,)):
            st.switch_page(page_path("synthesize"))
