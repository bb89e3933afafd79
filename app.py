"""Pufferfish Lab: the Streamlit app (run with ``streamlit run app.py``).

Page configuration, navigation and the shared sidebar; each page under ``pages/`` is a thin
view over :mod:`puffer_core`.
"""

from __future__ import annotations

import streamlit as st

from pages import common

st.set_page_config(page_title="Pufferfish Lab", page_icon="🐡", layout="wide")
st.logo(str(common.ASSETS / "logo.svg"), size="large")

pages = {
    name: st.Page(f"pages/{name}.py", title=title, icon=icon, url_path=name, default=name == "home")
    for name, (title, icon) in common.PAGES.items()
}
st.session_state[common.NAVIGATION_FLAG] = True
navigation = st.navigation(list(pages.values()))
link = st.session_state.pop(common.DEEP_LINK, None)
if link is not None and link["page"] in pages:
    # a link opened before this server ran app.py (see common.enter_page): go back to its page
    st.switch_page(pages[link["page"]], query_params=link["query"])

sidebar = st.sidebar.container()
navigation.run()

with sidebar:  # filled after the page ran, so it shows what the page just set
    values = common.settings()
    st.caption(f"**Prior in use:** {common.describe_prior(values)}")
    data = st.session_state.get("dataset")
    if isinstance(data, common.LoadedData):
        st.caption(f"**Data loaded:** {data.name} ({data.sequences.n_users:,} users)")
