"""The best-possible page's report and script (docs/math.md §18): the same settings it computed with."""

from __future__ import annotations

from app_ui.core.report import Section, html_report
from app_ui.core.templates import fill
from app_ui.optimal.settings import OptimalSettings
from app_ui.optimal.views import Yardstick, errors_figure, leakage_figure
from app_ui.prior.current import prior_sections, prior_source


def optimal_script(settings: OptimalSettings) -> str:
    """The page as a Python program (``app_ui/core/scripts/optimal.py`` filled in), printing its numbers."""
    prior = settings.prior
    names, code = prior_source(prior.kind, prior.params)
    return fill(
        "optimal",
        doc={"Prior": f"{prior.description}."},
        values={"EPS": settings.eps, "LENGTH": settings.length, "STATE": settings.state, "ALPHA": settings.alpha,
                "RUNS": settings.runs},
        blocks={"prior": code},
        imports=names.split(", "),
    )


def optimal_report(stick: Yardstick, settings: OptimalSettings) -> str:
    """The report: every setting, the findings, both charts and both tables."""
    shown = {
        "prior": settings.prior.description,
        "ε_puffer": settings.eps,
        "sequence length T (the yardstick's)": settings.length,
        "state counted": stick.state_label,
        "Rényi order α (Gaussian rows)": settings.alpha,
        "runs k": settings.runs,
    }
    errors, error_notes = errors_figure(stick)
    runs, run_notes = leakage_figure(stick)
    sections = [
        Section("Every mechanism beside the best possible", figure=errors, table=stick.errors(), notes=error_notes),
        Section("The optimum run k times", "Optimal mechanisms are not unique: this is the leakage of the one the"
                " programme returned.", runs, stick.leakage(), run_notes),
        *prior_sections(settings.prior.kind, settings.prior.params),
    ]
    return html_report("Pufferfish Lab — the best possible mechanism", stick.summary(), shown, sections)
