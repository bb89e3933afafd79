"""Pufferfish Lab: ``streamlit run app.py`` serves the app.

The app itself is ``streamlit_app.py`` (navigation, sidebar) and ``app_pages/``; this file serves it
and warms the server process before its first request (``app_ui/core/warm.py``: imports, compiled kernels),
so that the first page view on a fresh server is as quick as the next.
"""

import streamlit as st

from app_ui.core.warm import lifespan

app = st.App("streamlit_app.py", lifespan=lifespan)
