"""Pufferfish Lab: the Streamlit app (run with ``streamlit run app.py``).

Page configuration, navigation and the shared sidebar.  Each page in ``app_pages/`` is a thin
view over :mod:`puffer_core`; what the pages share is in ``app_ui/``.  ``app_pages/`` is not
Streamlit's auto-discovered ``pages/`` folder, so every request — a link to ``/calibrate``
opened on a fresh server too — runs this script and its navigation first.
"""

from __future__ import annotations

import streamlit as st

from app_ui import ASSETS, PAGES, page_path
from app_ui.data_picker import LoadedData
from app_ui.priors import describe_prior
from app_ui.state import settings

st.set_page_config(page_title="Pufferfish Lab", page_icon="🐡", layout="wide")
st.logo(str(ASSETS / "logo.svg"), size="large")

navigation = st.navigation(
    [
        st.Page(page_path(name), title=title, icon=icon, url_path=name, default=name == "home")
        for name, (title, icon) in PAGES.items()
    ]
)
sidebar = st.sidebar.container()
navigation.run()

with sidebar:  # filled after the page ran, so it shows what the page just set
    st.caption(f"**Prior in use:** {describe_prior(settings())}")
    data = st.session_state.get("dataset")
    failed = st.session_state.get("dataset_failed")
    if failed is not None:  # the last upload was refused: no data is loaded, whatever was loaded before
        st.caption(f"**Data:** none loaded; the file '{failed}' could not be used.")
    elif isinstance(data, LoadedData):
        st.caption(f"**Data loaded:** {data.description} ({data.stats.n_users:,} users)")
