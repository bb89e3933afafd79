"""Every record through every consumer in the app: the Plan ledger, the accuracy cells and words, the exported
scripts (run in a subprocess), the links, the notebook's widgets and the load benchmark's pages.

Parametrised over the registries (:data:`~puffer_core.mechanisms.MECHANISMS`,
:data:`~puffer_core.priors.kinds.PRIOR_KINDS`, ``app_ui.PAGES``); what each test expects is read from the record
(what a mechanism releases, its noise's own law), never from a list of names, so a record added to a registry
is checked everywhere at once.  The library's consumers are in ``tests/test_every_record.py``.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from app_ui import PAGES
from app_ui.accuracy.views import accuracy_table, grid_accuracy, ledger_accuracy, release_accuracy, short_accuracy
from app_ui.calibrate.settings import CalibrateSettings
from app_ui.calibrate.views import script as calibrate_script
from app_ui.core.state import KIND
from app_ui.core.templates import Code, fill
from app_ui.plan.exports import ledger_table
from app_ui.plan.exports import script as plan_script
from app_ui.plan.ledger import BY_CODE, CODES, LABELS, LEDGER_QUERIES, LedgerText
from app_ui.plan.settings import PlanSettings
from app_ui.prior.current import parameters_of
from benchmarks.bench_load import PAGE_CASES
from puffer_core import (
    MECHANISMS,
    CountTarget,
    MarkovChainPrior,
    TopKTarget,
    influence_curve,
    make_mechanism,
    simulate,
)
from puffer_core.accounting.events import Composition
from puffer_core.data.readers import load_sequences
from puffer_core.mechanisms.base import Refused
from puffer_core.mechanisms.registry import MechanismSpec, Output
from puffer_core.priors.kinds import LENGTH, PRIOR_KINDS
from puffer_core.widgets import KINDS
from tests.app.conftest import errors, open_page, problems
from tests.support.scripts import run_script

ROOT = Path(__file__).resolve().parents[2]
CHAIN = MarkovChainPrior([[0.5, 0.3, 0.2], [0.25, 0.5, 0.25], [0.2, 0.3, 0.5]], None, 6)
NAMES = list(MECHANISMS)
SPECS = [MECHANISMS[name] for name in NAMES]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _in_ledger(spec: MechanismSpec) -> bool:
    """What the record says about the Plan ledger: it composes by Theorem 6.2 and needs only the curve."""
    return spec.composition is Composition.THEOREM_6_2 and not spec.needs_chains


# --------------------------------------------------------------------------- mechanisms: ledger and accuracy


@pytest.mark.parametrize("spec", SPECS, ids=NAMES)
def test_every_ledger_mechanism_makes_a_ledger_row_and_a_link(spec: MechanismSpec) -> None:
    assert (spec.name in LEDGER_QUERIES) == _in_ledger(spec)
    if not _in_ledger(spec):
        return
    assert LEDGER_QUERIES[spec.name] == spec.queries[0] and spec.label in LABELS[spec.name]
    assert BY_CODE[CODES[spec.name]] == spec.name
    rows = (("Jan", spec.name, 1.0), ("Feb", spec.name, 2.0))
    assert LedgerText().parse(LedgerText().encode(rows)) == rows
    table = ledger_table(influence_curve(CHAIN), rows, 2, CHAIN.n_states)
    for i, (_, _, eps) in enumerate(rows):
        mechanism = make_mechanism(spec.name, eps, influence_curve(CHAIN), [], spec.queries[0], k=2)
        assert table["noise"].iloc[i].startswith(f"{spec.noise.symbol}({mechanism.noise_scale:.3g}) per count")
        ranks = spec.releases is Output.RANKING
        assert (", top 2" in table["noise"].iloc[i]) == ranks
        assert pd.isna(table["k"].iloc[i]) != ranks
        cell = table["accuracy (95%)"].iloc[i]
        assert ("lead" in cell) == ranks and cell.startswith("±") != ranks


def _accuracy_checked(spec: MechanismSpec, mechanism: object, n_states: int) -> None:
    """The words follow what the mechanism releases; the numbers are its noise's own law."""
    scale = float(mechanism.noise_scale)
    words, cell, short = release_accuracy(mechanism, n_states), ledger_accuracy(mechanism, n_states), None
    short = short_accuracy(mechanism, 2, n_states)
    if spec.releases is Output.COUNTS:
        alpha = spec.noise.interval(scale, 0.05)
        assert spec.noise.failure(alpha, scale) <= 0.05
        assert words.endswith("per count (95%)") and cell.startswith("±") and short.startswith("±")
        assert "lead" not in words + cell + short
    else:
        gap = spec.noise.topk_gap(min(mechanism.k, n_states - 1), n_states, 0.95, scale)
        assert spec.noise.topk_hit(min(mechanism.k, n_states - 1), n_states, gap, scale) >= 0.95
        assert "leads by" in words and "lead" in cell and short.startswith("lead")
        assert "±" not in words + cell + short


@pytest.mark.parametrize("spec", SPECS, ids=NAMES)
def test_every_mechanism_s_accuracy_is_worded_by_what_it_releases(spec: MechanismSpec) -> None:
    curve = influence_curve(CHAIN)
    for query in spec.queries:
        try:
            mechanism = make_mechanism(spec.name, 2.0, curve, CHAIN, query, k=2, n_states=CHAIN.n_states)
        except Refused:
            continue
        _accuracy_checked(spec, mechanism, CHAIN.n_states)
    grid = grid_accuracy(curve, [CHAIN], (spec.name,), (1.0, 2.0), spec.queries[0], 2, CHAIN.n_states, "split")
    assert list(grid["mechanism"]) == [spec.label]
    for query, target in (("histogram", CountTarget(5.0, 0.1, counts=3)), ("topk", TopKTarget(1, 0.8, 3, gap=5.0))):
        if spec.answers(query) and spec.eps_for_scale is not None:
            table = accuracy_table(("every record", spec.name, query), target, 2.0, curve, [CHAIN])
            shown = table[table["mechanism"].str.startswith(spec.label)]
            if not spec.pure:  # a Rényi level is never set beside ε_puffer values unasked
                assert shown.empty
                continue
            assert len(shown) == 1 and shown["noise per count"].iloc[0].startswith(f"{spec.noise.label}(")


# --------------------------------------------------------------------------- mechanisms: the exported scripts


def _csv_block(text: str, heading: str) -> list[list[str]]:
    lines = text.split("\n")
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
    return list(csv.reader(io.StringIO("\n".join(lines[start:end]))))


def test_the_plan_script_prints_every_ledger_mechanism_as_the_page_does(tmp_path: Path) -> None:
    names = [spec.name for spec in SPECS if _in_ledger(spec)]
    rows = tuple((f"r{i}", name, 0.5 + i) for i, name in enumerate(names))
    kind = "binary"
    settings = PlanSettings.from_values({KIND.key: kind, LENGTH.key: 12})
    settings = replace(settings, ledger=rows, ledger_k=2, plan_total=6.0, plan_releases=4)
    printed = _csv_block(run_script(plan_script(settings, "a prior"), tmp_path, "plan.py"), "# ledger")
    page = ledger_table(influence_curve(PRIOR_KINDS[kind].prior(dict(settings.prior.params))), rows, 2)
    assert printed[0][-1] == "noise" and len(printed) == len(rows) + 1
    assert [row[-1] for row in printed[1:]] == list(page["noise"])


SIMULATION = {"k": 1, "eps_grid": [1.0], "releases": 1, "release_mode": "repeat", "trials": 20, "rng": 0}


@pytest.mark.parametrize("query", ["topk", "histogram"])
def test_the_simulate_script_runs_every_mechanism_that_answers_a_query(query: str, tmp_path: Path) -> None:
    """The simulate template filled with every mechanism whose record answers ``query``, on tiny data: the
    script's metrics are those of the same simulation run here (the same seed), mechanism by mechanism."""
    names = [spec.name for spec in SPECS if spec.answers(query)]
    data_code = (
        "import pandas as pd\n"
        "rows = [(f'u{u}', t, 'abc'[(u * 7 + t * (u % 3 + 1)) % 3]) for u in range(24) for t in range(6)]\n"
        "data = load_sequences(pd.DataFrame(rows, columns=['user', 'time', 'state']))\n"
    )
    prior_code = (
        "prior = MarkovChainPrior([[0.5, 0.3, 0.2], [0.25, 0.5, 0.25], [0.2, 0.3, 0.5]], None, 6,"
        " labels=('a', 'b', 'c'))\n"
    )
    settings = {"query": query, "mechanisms": names, **SIMULATION, "topk_laplace": "split"}
    lines = "".join(f"    {key}={value!r},\n" for key, value in settings.items())
    metric = "Acc@1" if query == "topk" else "L1"
    text = fill(
        "simulate",
        values={"SETTINGS": Code(f"dict(\n{lines})"), "METRIC": metric, "RELEASE": 1, "COMPARE": False},
        blocks={"data": data_code, "prior": prior_code},
        imports=["load_sequences", "MarkovChainPrior"],
    )
    out = run_script(text, tmp_path, "simulate.py")
    scope: dict[str, object] = {}
    exec(data_code, {"load_sequences": load_sequences}, scope)  # noqa: S102 - the same data as the script
    prior = MarkovChainPrior(CHAIN.transition, None, 6, labels=("a", "b", "c"))
    here = simulate(scope["data"], prior=prior, **settings)
    printed = pd.read_csv(io.StringIO("\n".join(out.split("\n")[1 : out.split("\n").index("## ledger")])))
    refused = set(here.settings.get("refused") or {})
    for name in names:
        mine = printed[printed["mechanism"] == name]
        theirs = here.metrics[here.metrics["mechanism"] == name]
        assert len(mine) == len(theirs) and (len(mine) > 0) != (name in refused), name
        assert mine["mean"].to_numpy() == pytest.approx(theirs["mean"].to_numpy(), rel=1e-12)


# --------------------------------------------------------------------------- prior kinds: links, scripts, widgets

KIND_NAMES = list(PRIOR_KINDS)


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_every_prior_kind_travels_in_a_link(kind: str) -> None:
    """A link naming the kind and its parameters opens it; the link the page then writes carries it back."""
    record = PRIOR_KINDS[kind]
    linked = [p for p in record.parameters if p.url is not None and p.codec is not None and p.default is not None]
    query = {"prior": kind, **{p.url: p.codec.encode(p.default) for p in linked}}
    at = open_page("app_pages/calibrate.py", query)
    assert not problems(at) and not errors(at)
    settings = at.session_state["settings"]
    assert settings["prior_kind"] == kind
    for parameter in linked:
        assert parameter.codec.encode(settings[parameter.key]) == parameter.codec.encode(parameter.default)
        if parameter.url in at.query_params:
            again = parameter.codec.parse(at.query_params[parameter.url])
            assert parameter.codec.encode(again) == parameter.codec.encode(parameter.default)


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_every_prior_kind_s_calibrate_script_runs_and_prints_the_page_s_numbers(kind: str, tmp_path: Path) -> None:
    record = PRIOR_KINDS[kind]
    params = parameters_of(record, {})
    settings = replace(CalibrateSettings.from_values({KIND.key: kind}), eps_puffer=1.0, eps_dp=0.1)
    assert settings.prior.params == params
    out = run_script(calibrate_script(settings, "a prior", None), tmp_path, "calibrate.py")
    shown = dict(line.split(" = ", 1) for line in out.strip().split("\n") if " = " in line)
    curve = influence_curve(record.prior(dict(params)))
    from puffer_core import calibrate
    from puffer_core.display import fmt

    assert shown["Per-entry ε_DP"] == fmt(calibrate(curve, 1.0).eps_dp)


def test_the_notebook_offers_every_kind_of_single_prior() -> None:
    single = {name for name, record in PRIOR_KINDS.items() if not isinstance(record.prior(record.defaults), list)}
    assert set(KINDS) == single


# --------------------------------------------------------------------------- pages


def test_every_page_has_a_cached_rerun_case_in_the_load_benchmark() -> None:
    assert set(PAGES) == {case.page or "home" for case in PAGE_CASES}
