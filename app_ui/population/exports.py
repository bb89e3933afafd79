"""The whole-population view's downloads: the figures as CSV, a script that prints them with puffer_core
(``app_ui/core/scripts/population.py`` filled in) and a report (docs/math.md "Whole-population secrets")."""

from __future__ import annotations

from app_ui.core.report import Section, html_report
from app_ui.core.templates import Code, fill
from app_ui.population.views import NAMES, PopulationView
from app_ui.prior.current import prior_source
from app_ui.prior.settings import PriorChoice
from puffer_core.priors.kinds import matrix_literal


def population_script(view: PopulationView, prior: PriorChoice) -> str:
    """The view as a Python program printing its numbers, one ``label = value`` per line."""
    case = view.case
    names, code = prior_source(prior.kind, prior.params)
    return fill(
        "population",
        doc={"Prior": f"{prior.description} ({NAMES[0]}).", "Alternative": f"{case.change} ({NAMES[1]})."},
        values={"ALTERNATIVE": Code(matrix_literal(case.second)), "COUNTED": list(case.counted), "USERS": case.users,
                "EPS": case.eps, "EPS_DP": case.eps_dp},
        blocks={"prior": code},
        imports=names.split(", "),
    )


def population_section(view: PopulationView) -> Section:
    """The report's part: the sentence, the figures, the honest note, the chart and the table."""
    case = view.case
    text = (f"{view.sentence} Query: the number of entries, over all {case.users} users, in {{{case.counted_words}}}."
            f" {NAMES[1]}: {case.change}. " + "; ".join(f"{label} = {value}" for label, value in view.figures())
            + ". " + view.honest_note())
    return Section("Whole-population secrets: which habit generated the data", text, view.figure, view.table,
                   view.notes)


def population_sections(view: PopulationView | None) -> list[Section]:
    """The view's part of Calibrate's main report: its section when the view is on and computed, else nothing."""
    return [] if view is None else [population_section(view)]


def population_report(view: PopulationView, prior: PriorChoice) -> str:
    """A report of its own: the settings, the figures, the chart and the table."""
    case = view.case
    shown = {
        f"prior {NAMES[0]}": prior.description,
        f"alternative {NAMES[1]}": case.change,
        "states counted (B)": case.counted_words,
        "users n": case.users,
        "entries per user T": case.length,
        "ε": case.eps,
        "per-entry ε_DP (Calibrate's, for comparison)": case.eps_dp,
    }
    return html_report("Pufferfish Lab — whole-population secrets", view.sentence, shown, [population_section(view)])
