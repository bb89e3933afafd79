"""Home: what Pufferfish Lab is for, and where each page leads."""

from __future__ import annotations

import streamlit as st

from app_ui import PAGES, page_path
from app_ui.docs import show_sources

st.title("Pufferfish Lab")
st.markdown(
    "Differential privacy protects one entry at a time, but a user's entries are correlated, so"
    " an attacker who knows how they are correlated can learn more than a per-entry guarantee"
    " suggests. Pufferfish Lab measures that leakage with **a(b)-influence curves**, turns a"
    " target Pufferfish budget ε_puffer into the per-entry ε_DP a mechanism may use, and adds up"
    " what a series of releases spends. Use it to teach how correlation erodes privacy, or to"
    " plan and test releases on your own sequential data before you publish them."
)

BLURBS = {
    "curves": "Pick a prior (binary chain, K-state matrix, a set Θ, a Gaussian process) and see its a(b) curve.",
    "calibrate": "Target ε_puffer → the best window b, a(b) and the per-entry ε_DP; or ε_DP → ε_puffer.",
    "plan": "A ledger of releases: what the whole series spends, and how to split a total budget.",
    "simulate": "Upload sequences (or use a demo), run the mechanisms, and measure their accuracy.",
    "classroom": "Watch privacy collapse run by run, and audit a tiny chain exactly.",
    "stream": "A release at every time step: TPL beside the [C] bound, group DP and the exact truth, and a planner.",
    "attack": "Attack a release: a lower bound from an attacker ≤ the truth ≤ the reported bound, with the seed.",
    "about": "The glossary (ε_DP, ε_puffer, a(b), Θ, MQM, …), every formula the app uses, and the papers.",
}

for name, blurb in BLURBS.items():
    title, icon = PAGES[name]
    with st.container(border=True):
        st.page_link(page_path(name), label=f"**{title}**", icon=icon)
        st.caption(blurb)

show_sources(["C", "S", "P"], lead="The papers Pufferfish Lab implements")
