"""What the app's pages use, one room per concern (the pages themselves are in ``app_pages/``).

Rooms every page may use:

- :mod:`app_ui.core` — settings and the shareable link (``state``), number boxes that say when a value is out of
  range (``inputs``), charts, tables, the HTML report, exported scripts (``templates``, filled from the real Python
  files in ``core/scripts/``), what one session keeps (``memo``), docs/ in the app (``docs``), long work with its
  estimate and Cancel (``long_work``) and warming the server (``warm``);
- :mod:`app_ui.prior` — the prior in use and its cached curve (``current``), its controls, the matrix editor and
  presets, the fit's smoothing;
- :mod:`app_ui.data` — the data picker: built-in datasets, the deployer's large datasets, uploads;
- :mod:`app_ui.accuracy` — accuracy first and attacker risk, shown on several pages.

One room per page family, each with its settings, views (figures and tables built once per input), words and
exports: :mod:`app_ui.curves`, :mod:`app_ui.calibrate`, :mod:`app_ui.plan`, :mod:`app_ui.simulate`,
:mod:`app_ui.synthesize`, :mod:`app_ui.streams`, :mod:`app_ui.attack`, :mod:`app_ui.classroom`, the best possible
mechanism in :mod:`app_ui.optimal` and the two guided paths in :mod:`app_ui.guided`; Gaussian noise under Rényi
Pufferfish, shown on Calibrate, Plan and Simulate, is :mod:`app_ui.gaussian`.  A shared room never imports a page
family's room.

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
            "synthesize",
            "Synthesize",
            ":material/dataset:",
            "Publish a synthetic dataset with an ε_puffer guarantee: the plan, the download, its fidelity, the script.",
            "Tools",
            "fitted",
        ),
        Page(
            "optimal",
            "Best possible mechanism",
            ":material/military_tech:",
            "The error no ε-Pufferfish mechanism can beat, every mechanism beside it, and the optimum run twice.",
            "Tools",
            "chosen",
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
