"""Long work on the pages (AppTest): a large fitted chain's curve shows its estimate, and Cancel is honoured.

The chain is fitted, with the app's smoothing, to 300 walks of 400 steps on a road of 150 places
(tests/support/road_walks.py): its curve is estimated at more than LONG_SECONDS, so it is long work, and it is
computed in a few seconds.  That the computation really stops when Cancel is clicked during it is checked in a
browser on the 300-place road, the benchmarks' "fitted K = 300, T = 400" (tests/e2e/test_e2e_long_work.py); here
the page is run to the end, and once with the cancellation recorded.
"""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

import numpy as np

from app_ui.core.long_work import CANCELLED, LONG_SECONDS, curve_key, finished_curve
from app_ui.data.picker import DEFAULT_SMOOTHING
from puffer_core import MarkovChainPrior
from puffer_core.data.readers import load_sequences
from puffer_core.engine.influence import influence_estimate
from puffer_core.priors.fitting import fit_markov_chain
from puffer_core.priors.kinds import MATRIX
from tests.app.conftest import APP, errors, metric, problems
from tests.support.apptest import AppTest
from tests.support.road_walks import road_walks

CURVES = "app_pages/curves.py"
LONG_TIMEOUT = 240.0  # the curve takes ~2 CPU-s; a busy shared machine stretches that
PLACES = 150


@cache
def fitted_road() -> MarkovChainPrior:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "road.csv"
        path.write_bytes(road_walks(places=PLACES))
        sequences = load_sequences(path, user="user", time="time", state="state")
    return fit_markov_chain(sequences, smoothing=DEFAULT_SMOOTHING)


def _with_chain(prior: MarkovChainPrior) -> tuple[AppTest, tuple]:
    """The Influence curves page with ``prior`` as its K-state chain (as "Fitted from data" leaves it)."""
    at = AppTest.from_file(str(APP), default_timeout=LONG_TIMEOUT)
    at.run()
    at.switch_page(CURVES).run()
    at.radio(key="w_kind").set_value("matrix").run()
    values = at.session_state["settings"]
    read = MATRIX.read(prior)
    values.update(matrix=read["matrix"], matrix_base=read["matrix"], labels=read["labels"], initial=None,
                  length=read["length"])
    values["matrix_version"] += 1
    at.session_state["settings"] = values
    at.session_state["w_length"] = read["length"]
    parameters = tuple((p.key, values[p.key]) for p in MATRIX.parameters)
    return at, parameters


def test_the_fitted_chain_is_the_long_work_case():
    prior = fitted_road()
    assert prior.n_states == PLACES and prior.length == 400
    assert np.min(prior.transition) < 1e-4  # unseen transitions hold the smoothing
    assert influence_estimate(prior).seconds > LONG_SECONDS  # long enough for the estimate and a progress bar


def test_a_150_state_fitted_chain_shows_its_estimate_honours_cancel_and_computes_its_curve():
    prior = fitted_road()
    at, parameters = _with_chain(prior)
    # as after a click on Cancel during the computation: the rerun says so, computes nothing, offers it again
    at.session_state[CANCELLED] = {curve_key("matrix", parameters)}
    at.run()
    assert not problems(at)
    assert any("was cancelled" in m for m in errors(at))
    assert any("was cancelled" in m.value and "needs about" in m.value for m in at.markdown)
    assert not any(m.label == "a(1)" for m in at.metric)
    next(b for b in at.button if b.label == "Compute it").click().run()
    # computed under the bar: the estimate and the time taken are said, the curve is the library's
    assert not problems(at) and not errors(at)
    said = [c.value for c in at.caption if "The a(b) curve of this prior took" in c.value]
    assert said and "(estimated: " in said[0]
    computed = finished_curve("matrix", parameters)
    assert computed is not None and computed.length == 400
    assert metric(at, "a(1)") == f"{computed.a[0]:.4g}"
    at.run()  # the next run takes it from what was computed: no estimate, no bar
    assert not [c for c in at.caption if "took" in c.value]
    assert metric(at, "a(1)") == f"{computed.a[0]:.4g}"
