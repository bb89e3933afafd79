"""What the app's pages share, one concern per module (the pages themselves are in ``app_pages/``).

- :mod:`app_ui.state` — the user's settings for the session, read from and written to the link.
- :mod:`app_ui.priors` — the prior chosen on the Influence curves page and its cached a(b) curve.
- :mod:`app_ui.data_picker` — the demo datasets and uploads: pick, map the columns, load once.
- :mod:`app_ui.charts` — number formatting, line charts, tables and downloads.
- :mod:`app_ui.simulate_text` — the Simulate page's words for its findings, its report settings and its script.

Nothing here computes a formula: every number comes from :mod:`puffer_core`.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"

# url_path (app_pages/<url_path>.py) → (title, icon): app.py's navigation and the home page's links
PAGES: dict[str, tuple[str, str]] = {
    "home": ("Home", ":material/home:"),
    "curves": ("Influence curves", ":material/show_chart:"),
    "calibrate": ("Calibrate", ":material/tune:"),
    "plan": ("Plan & compose", ":material/event_note:"),
    "simulate": ("Simulate", ":material/science:"),
    "classroom": ("Classroom", ":material/school:"),
    "stream": ("Streams", ":material/timeline:"),
    "attack": ("How tight is my bound?", ":material/target:"),
    "about": ("About the math", ":material/menu_book:"),
}


def page_path(name: str) -> str:
    """The file of page ``name``, as st.page_link and st.switch_page want it."""
    return f"app_pages/{name}.py"
