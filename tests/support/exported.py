"""Every exported script of every page, as a user downloads it: the pages run in AppTest with a fitted prior,
a set Θ and a Gaussian process in their links, and every script the page hands to a download button is kept (its
own, and those of the views it holds: Calibrate's whole-population view).

``.ci/installed.py`` runs these scripts with the installed wheel from outside the repository and compares
what they print with the same scripts run from the repository.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "streamlit_app.py"

# the pages that offer a script, and the priors each can take
PAGES = {
    "calibrate": "chain gp",
    "plan": "chain gp",
    "stream": "chain gp",
    "attack": "chain",
    "simulate": "",
    "synthesize": "",
    "optimal": "chain",
    "analyst": "guided",
}
# pages that compute only when asked
RUN_BUTTONS = {"attack": "w_attack_run", "simulate": "w_sim_run", "synthesize": "w_synth_run"}
# what is secret (docs/math.md §16): the fitted chain's first state against the rest at its first six entries, and a
# rule on the time column; the pages that take them rebuild the same Secrets in their scripts
SECRETS_CASES = {
    "secrets": {"sec": "p=sensitive;s=0;t=0-5"},
    "night": {"sec": "p=all;r=h0-5.22-23,nnight-time", "sgrid": "2024-03-01 20:00|1h"},
}
SECRETS_PAGES = ("calibrate", "plan", "stream")
# Gaussian releases of one count (Rényi Pufferfish, docs/math.md §17) on Plan, over the set Θ: the script prints the
# Gaussian tab's Rényi rows
GAUSSIAN_CASES = {"renyi": {"gauss": "1", "geps": "0.7", "grel": "3", "galpha": "2.5", "cstate": "1"}}
GAUSSIAN_PAGES = ("plan",)
# whole-population secrets (docs/math.md "Whole-population secrets") on Calibrate, over the fitted chain: θ₂ is its
# first state's stay probability changed (the view's default), B the first two states, 20 users; the view offers its
# own script beside the page's
POPULATION_CASES = {"population": {"pop": "1", "popB": "0,1", "popn": "20"}}
POPULATION_PAGES = ("calibrate",)


def prior_cases() -> dict[str, tuple[str, dict[str, Any]]]:
    """name → (prior kind, its parameter values): a chain fitted to the built-in check-ins, a set Θ, a GP."""
    from puffer_core import fit_markov_chain, load_dataset

    fitted = fit_markov_chain(load_dataset("checkins"))
    matrix = tuple(tuple(float(v) for v in row) for row in fitted.transition)
    return {
        "fitted": ("matrix", {"matrix": matrix, "labels": tuple(str(s) for s in fitted.labels), "length": 12}),
        "theta": ("theta", {"theta": ((0.8, 0.7), (0.95, 0.6), (0.6, 0.9)), "length": 10}),
        "gaussian": (
            "gaussian",
            {"kernel": "squared_exponential", "length_scale": 2.0, "n": 12, "gamma": 3.0, "delta": 0.2},
        ),
    }


def guided_query() -> dict[str, str]:
    """The guided path's share link at its report step: the chain fitted to the built-in check-ins (the link names
    the data, so the page loads it), a target, a plan and a trial of 20 trials."""
    from puffer_core import fit_markov_chain, load_dataset

    fitted = fit_markov_chain(load_dataset("checkins"))
    matrix = tuple(tuple(float(v) for v in row) for row in fitted.transition)
    values = {"matrix": matrix, "labels": tuple(str(s) for s in fitted.labels), "length": fitted.length}
    return {
        **link_query("matrix", values),
        "data": "builtin:checkins:user",
        "eps": "0.8",
        "releases": "6",
        "gtrials": "20",
        "gseed": "3",
        "gstep": "5",
    }


def link_query(kind: str, values: dict[str, Any]) -> dict[str, str]:
    """The share link's query for this prior (the same codecs the app's links use)."""
    from app_ui.core.state import KIND
    from puffer_core.priors.kinds import PRIOR_KINDS

    query = {KIND.url: KIND.codec.encode(kind)}
    for parameter in PRIOR_KINDS[kind].parameters:
        if parameter.key in values:
            query[parameter.url] = parameter.codec.encode(values[parameter.key])
    return query


def page_scripts(page: str, query: dict[str, str]) -> list[tuple[str, str]]:
    """Every script the page offers for download when opened with this link, as (stem, script), in the order the
    page offers them (a view's before the page's own, which comes last)."""
    import app_ui.core.report as report
    from tests.support.apptest import AppTest

    seen: list[tuple[str, str]] = []
    original: Callable[..., None] = report.offer_exports

    def spy(report_html: object, script: object, stem: str, key: str) -> None:
        seen.append((stem, script() if callable(script) else str(script)))
        original(report_html, script, stem, key)

    report.offer_exports = spy
    try:
        at = AppTest.from_file(str(APP), default_timeout=300)
        for name, value in query.items():
            at.query_params[name] = value
        at.run()
        at.switch_page(f"app_pages/{page}.py").run()
        if page in RUN_BUTTONS:
            at.button(key=RUN_BUTTONS[page]).click().run()
        if at.exception:
            raise RuntimeError(f"{page} raised: {[e.message for e in at.exception]}")
    finally:
        report.offer_exports = original
    if not seen:
        raise RuntimeError(f"{page} offered no script for {query}")
    return seen


def page_script(page: str, query: dict[str, str]) -> str:
    """The page's own script when opened with this link (the last one it offers)."""
    return page_scripts(page, query)[-1][1]


def export_scripts(folder: Path) -> list[Path]:
    """Write every page's script for every prior it takes into ``folder``; the paths written."""
    import logging
    import sys

    logging.getLogger("streamlit").setLevel(logging.ERROR)  # AppTest's "missing ScriptRunContext" warnings
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    cases = prior_cases()
    written = []
    for page, takes in PAGES.items():
        runs = (
            {"default": {}}
            if not takes
            else {"default": guided_query()}
            if takes == "guided"
            else {
                name: link_query(kind, values)
                for name, (kind, values) in cases.items()
                if ("gp" if kind == "gaussian" else "chain") in takes.split()
            }
        )
        if page in SECRETS_PAGES:
            fitted = link_query(*cases["fitted"])
            runs |= {name: fitted | extra for name, extra in SECRETS_CASES.items()}
        if page in GAUSSIAN_PAGES:
            theta = link_query(*cases["theta"])
            runs |= {name: theta | extra for name, extra in GAUSSIAN_CASES.items()}
        if page in POPULATION_PAGES:
            fitted = link_query(*cases["fitted"])
            runs |= {name: fitted | extra for name, extra in POPULATION_CASES.items()}
        for name, query in runs.items():
            offered = page_scripts(page, query)
            for i, (stem, script) in enumerate(offered):  # the page's own script last, named as before
                path = folder / (f"{page}_{name}.py" if i == len(offered) - 1 else f"{page}_{name}_{stem}.py")
                path.write_text(script, encoding="utf-8")
                written.append(path)
    return written
