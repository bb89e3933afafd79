"""What the app's pages use, one concern per module (the pages themselves are in ``app_pages/``).

Shared by every page:

- :mod:`app_ui.state` — the user's settings for the session, read from and written to the link.
- :mod:`app_ui.inputs` — number boxes that say in the page when a value is out of range (no stale answer).
- :mod:`app_ui.priors` — the prior chosen on the Influence curves page, its cached a(b) curve, its
  prior uncertainty, and the prior as Python for every exported script.
- :mod:`app_ui.data_picker` — built-in datasets, the deployer's large datasets, uploads: pick, map, repair, aggregate.
- :mod:`app_ui.charts` — the palette, a dash and a marker per series; line, ledger, interval and heatmap charts.
- :mod:`app_ui.tables` — numbers as text, tables that scroll or wrap, CSV downloads, problem messages.
- :mod:`app_ui.report` — the HTML report and the two download buttons.
- :mod:`app_ui.templates` — exported scripts: real Python files in ``app_ui/scripts/``, filled with a page's settings.
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

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"


@dataclass(frozen=True)
class Page:
    """One page of the app: ``app_pages/<name>.py``, its title and icon in the navigation, its line on the
    home page, its section of the navigation, and which prior it uses — the one chosen on the Influence
    curves page ("chosen"), one it fits to its own data ("fitted"), or none ("")."""

    name: str
    title: str
    icon: str
    blurb: str
    section: str
    prior: str = ""


PAGES: dict[str, Page] = {
    page.name: page
    for page in (
        Page("home", "Home", ":material/home:", "What Pufferfish Lab is for, and where to start.", "Start here"),
        Page(
            "analyst",
            "Guided: publish your data",
            ":material/route:",
            "Step by step, in plain words: your data → the attacker's belief → a target → a plan → a trial run"
            " → a report.",
            "Start here",
            "chosen",
        ),
        Page(
            "lesson",
            "Guided: a lesson",
            ":material/school:",
            "Five short steps for a classroom: why correlated entries leak, how much, and what to do about it.",
            "Start here",
        ),
        Page(
            "curves",
            "Influence curves",
            ":material/show_chart:",
            "Pick a prior (binary chain, K-state matrix, a set Θ, a Gaussian process) and see its a(b) curve.",
            "Tools",
            "chosen",
        ),
        Page(
            "calibrate",
            "Calibrate",
            ":material/tune:",
            "Target ε_puffer → the best window b, a(b) and the per-entry ε_DP; or ε_DP → ε_puffer.",
            "Tools",
            "chosen",
        ),
        Page(
            "plan",
            "Plan & compose",
            ":material/event_note:",
            "A ledger of releases: what the whole series spends, and how to split a total budget.",
            "Tools",
            "chosen",
        ),
        Page(
            "simulate",
            "Simulate",
            ":material/science:",
            "Upload sequences (or use a demo), run the mechanisms, and measure their accuracy.",
            "Tools",
            "fitted",
        ),
        Page(
            "stream",
            "Streams",
            ":material/timeline:",
            "A release at every time step: TPL beside the [C] bound, group DP and the exact truth, and a planner.",
            "Tools",
            "chosen",
        ),
        Page(
            "attack",
            "How tight is my bound?",
            ":material/target:",
            "Attack a release: a lower bound from an attacker ≤ the truth ≤ the reported bound, with the seed.",
            "Tools",
            "chosen",
        ),
        Page(
            "classroom",
            "Classroom",
            ":material/co_present:",
            "Watch privacy collapse run by run, and audit a tiny chain exactly.",
            "Learn",
        ),
        Page(
            "about",
            "About the math",
            ":material/menu_book:",
            "The glossary (ε_DP, ε_puffer, a(b), Θ, MQM, …), every formula the app uses, and the papers.",
            "Learn",
        ),
    )
}


def page_path(name: str) -> str:
    """The file of page ``name``, as st.page_link and st.switch_page want it."""
    return f"app_pages/{name}.py"
