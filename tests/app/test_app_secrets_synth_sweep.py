"""Synthesize's "compare over ε" for the chosen secrets (docs/math.md §16, §19.5): the chart is the library's
fidelity_over_eps called here with the secrets written by hand (not every pair's), and the note says so."""

from __future__ import annotations

import json

import pytest

from puffer_core import load_dataset
from puffer_core.secrets import Secrets
from tests.app.conftest import errors, open_page, problems
from tests.app.test_app_synthesize import SYNTHESIZE, _generate, _values


def test_the_sweep_is_for_the_chosen_secrets() -> None:
    from app_ui.synthesize.views import SERIES, SWEEP_RUNS, sweep_grid
    from puffer_core.synthesis import chain_counts, fidelity_over_eps

    at = open_page(SYNTHESIZE, {"sec": "p=sensitive;s=3"})
    _generate(at)
    at.toggle(key="w_synth_sweep").set_value(True).run()
    assert not problems(at) and not errors(at)
    chart = next(c for c in at.get("plotly_chart") if "ε_puffer (log scale)" in c.proto.spec)
    figure = json.loads(chart.proto.spec)
    counts = chain_counts(load_dataset("checkins"))
    gym = Secrets(pairs="sensitive", states=(3,))
    expected = fidelity_over_eps(counts, None, sweep_grid(1.0), runs=SWEEP_RUNS, rng=0, secrets=gym)
    every = fidelity_over_eps(counts, None, sweep_grid(1.0), runs=SWEEP_RUNS, rng=0)
    rows = expected[(expected["group"] == "all") & (expected["metric"] == "stationary_tv")]
    other = every[(every["group"] == "all") & (every["metric"] == "stationary_tv")]
    for (guarantee, part), name in SERIES.items():
        trace = next(t for t in figure["data"] if t["name"] == name)
        means = rows[(rows["guarantee"] == guarantee) & (rows["part"] == part)].groupby("eps_puffer")["value"].mean()
        assert _values(trace["y"]) == pytest.approx(list(means), rel=1e-12)
    puffer = (rows["guarantee"] == "pufferfish") & (rows["part"] == "total")
    assert list(rows[puffer]["value"]) != list(other[(other["guarantee"] == "pufferfish")
                                                     & (other["part"] == "total")]["value"])
    assert "calibrated for the chosen secrets" in chart.proto.spec or any(
        "calibrated for the chosen secrets" in c.value for c in at.caption)
