"""Home: what Pufferfish Lab is for, and where each page leads."""

from __future__ import annotations

import streamlit as st

from app_ui import PAGES, page_path
from app_ui.core.docs import show_sources

st.title("Pufferfish Lab")
st.markdown(
    "Differential privacy protects one entry at a time, but a user's entries are correlated, so"
    " an attacker who knows how they are correlated can learn more than a per-entry guarantee"
    " suggests. Pufferfish Lab measures that leakage with **a(b)-influence curves**, turns a"
    " target Pufferfish budget ε_puffer into the per-entry ε_DP a mechanism may use, and adds up"
    " what a series of releases spends. Use it to teach how correlation erodes privacy, or to"
    " plan and test releases on your own sequential data before you publish them."
)

section = None
for page in PAGES.values():
    if page.name == "home":
        continue
    if page.section != section:  # the navigation's sections: start here, the tools, learning
        section = page.section
        st.subheader(section)
    with st.container(border=True):
        st.page_link(page_path(page.name), label=f"**{page.title}**", icon=page.icon)
        st.caption(page.blurb)

show_sources(["C", "S", "P"], lead="The papers Pufferfish Lab implements")
