"""Pufferfish Lab: the Streamlit app (served by ``streamlit run app.py``, which warms the server first).

Page configuration, the settings every link may carry, navigation and the shared sidebar.  Each
page in ``app_pages/`` is a thin view over :mod:`puffer_core`; what the pages share is in
``app_ui/``.  ``app_pages/`` is not Streamlit's auto-discovered ``pages/`` folder, so every
request — a link to ``/calibrate`` opened on a fresh server too — runs this script and its
navigation first.
"""

from __future__ import annotations

import streamlit as st

from app_ui import ASSETS, PAGES, page_path
from app_ui.attack.settings import ATTACK_GROUP
from app_ui.calibrate.accuracy_link import ACCURACY_GROUP
from app_ui.core import inputs, state
from app_ui.curves.settings import CURVES_GROUP
from app_ui.data.picker import LoadedData
from app_ui.gaussian.settings import GAUSSIAN_GROUP
from app_ui.guided.settings import GUIDE_GROUP, LESSON_GROUP
from app_ui.optimal.settings import OPTIMAL_GROUP
from app_ui.plan.ledger import LEDGER_GROUP
from app_ui.population.settings import POPULATION_GROUP
from app_ui.prior.current import describe_prior
from app_ui.secrets.settings import SECRETS_GROUP
from app_ui.simulate.link import SIMULATE_GROUP
from app_ui.streams.settings import STREAM_GROUP
from app_ui.synthesize.settings import SYNTH_GROUP

st.set_page_config(page_title="Pufferfish Lab", page_icon="🐡", layout="wide")
st.logo(str(ASSETS / "logo.svg"), size="large")
inputs.begin_run()
# the pages' own settings: read from every link, whichever page it opens
state.register(CURVES_GROUP, LEDGER_GROUP, STREAM_GROUP, ATTACK_GROUP, SYNTH_GROUP, GAUSSIAN_GROUP, OPTIMAL_GROUP)
state.register(SECRETS_GROUP)
state.register(POPULATION_GROUP)
state.register(GUIDE_GROUP, SIMULATE_GROUP, ACCURACY_GROUP)
state.register(LESSON_GROUP)  # the lesson's secret hours

sections: dict[str, list[st.Page]] = {}
for page in PAGES.values():
    sections.setdefault(page.section, []).append(
        st.Page(page_path(page.name), title=page.title, icon=page.icon, url_path=page.name, default=page.name == "home")
    )
navigation = st.navigation(sections)
shown = next((p for p in PAGES.values() if p.title == navigation.title), PAGES["home"])
sidebar = st.sidebar.container()
try:
    navigation.run()
except inputs.Halt:  # the page stopped early (a value out of range): the sidebar still says what it uses
    pass
with sidebar:
    if shown.prior == "chosen":
        st.caption(f"**Prior in use:** {describe_prior()}")
    elif shown.prior == "fitted":
        st.caption("**Prior in use:** this page fits a Markov chain to the data it loads (section 1).")
    data = st.session_state.get("dataset")
    failed = st.session_state.get("dataset_failed")
    if failed is not None:  # the last upload was refused: no data is loaded, whatever was loaded before
        st.caption(f"**Data:** none loaded; the file '{failed}' could not be used.")
    elif isinstance(data, LoadedData):
        st.caption(f"**Data loaded:** {data.description} ({data.stats.n_users:,} users)")
