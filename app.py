"""Pufferfish Lab: the Streamlit app (run with ``streamlit run app.py``).

Page configuration, navigation and the shared sidebar; each page under ``pages/`` is a thin
view over :mod:`puffer_core`.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from pages import common

HERE = Path(__file__).resolve().parent

st.set_page_config(page_title="Pufferfish Lab", page_icon="🐡", layout="wide")
st.logo(str(HERE / "assets" / "logo.svg"), size="large")

pages = {
    "home": st.Page("pages/home.py", title="Home", icon=":material/home:", url_path="home", default=True),
    "curves": st.Page("pages/curves.py", title="Influence curves", icon=":material/show_chart:", url_path="curves"),
    "calibrate": st.Page("pages/calibrate.py", title="Calibrate", icon=":material/tune:", url_path="calibrate"),
    "plan": st.Page("pages/plan.py", title="Plan & compose", icon=":material/event_note:", url_path="plan"),
    "simulate": st.Page("pages/simulate.py", title="Simulate", icon=":material/science:", url_path="simulate"),
    "classroom": st.Page("pages/classroom.py", title="Classroom", icon=":material/school:", url_path="classroom"),
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
