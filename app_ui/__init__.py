"""What the app's pages use, one concern per module (the pages themselves are in ``app_pages/``).

Shared by every page:

- :mod:`app_ui.state` — the user's settings for the session, read from and written to the link.
- :mod:`app_ui.priors` — the prior chosen on the Influence curves page, its cached a(b) curve, its
  prior uncertainty, and the prior as Python for every exported script.
- :mod:`app_ui.data_picker` — built-in datasets, the deployer's large datasets, uploads: pick, map, repair, aggregate.
- :mod:`app_ui.charts` — the palette, a dash and a marker per series; line, ledger, interval and heatmap charts.
- :mod:`app_ui.tables` — numbers as text, tables that scroll or wrap, CSV downloads, problem messages.
- :mod:`app_ui.report` — the HTML report, the script frame and the two download buttons.
- :mod:`app_ui.memo` — what one session keeps so that a rerun does not build it again.
- :mod:`app_ui.docs` — docs/ in the app: the About page and every page's papers.

One page each (its views: figures and tables built once per input; its words; its exports):
:mod:`~app_ui.matrix_editor` and :mod:`~app_ui.curve_views` (Influence curves),
:mod:`~app_ui.calibration_views` (Calibrate), :mod:`~app_ui.ledger` and :mod:`~app_ui.plan_exports`
(Plan & compose), :mod:`~app_ui.simulate_settings`, :mod:`~app_ui.simulate_views` and
:mod:`~app_ui.simulate_text` (Simulate), :mod:`~app_ui.classroom_views` (Classroom),
:mod:`~app_ui.streams` (Streams), :mod:`~app_ui.attacks` (How tight is my bound?).

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
