"""Links never lose a prior silently: they carry it exactly (compressed), or say on arrival what they left out.

The references: the matrix and the fit rebuilt here with puffer_core (``fit_markov_chain`` on the built-in
data, a seeded Dirichlet matrix), compared with what the page holds after opening the link.
"""

from __future__ import annotations

from urllib.parse import urlencode

import numpy as np
import pytest

from app_ui.core import state
from app_ui.core.state import LINK_BUDGET, ParameterGroup, register
from puffer_core import fit_markov_chain, load_dataset
from puffer_core.priors.codecs import LabelsText, MatrixText, Number, Parameter
from puffer_core.priors.fitting import DEFAULT_SMOOTHING
from puffer_core.priors.kinds import MATRIX
from tests.app.conftest import errors, open_page, problems

CURVES = "app_pages/curves.py"
CALIBRATE = "app_pages/calibrate.py"


def _chain_link(matrix: np.ndarray, **extra: str) -> dict[str, str]:
    return {"prior": "matrix", "P": MatrixText().encode(tuple(map(tuple, matrix))), "T": "30", **extra}


def test_a_large_matrix_travels_exactly_while_the_link_is_short_enough() -> None:
    matrix = np.random.default_rng(5).dirichlet(np.ones(25), size=25)
    at = open_page(CURVES, _chain_link(matrix))
    assert not problems(at) and not errors(at) and not at.warning
    assert np.array_equal(np.array(at.session_state["settings"]["matrix"]), matrix)  # bit for bit
    assert at.query_params["P"].startswith("z") and len(urlencode(dict(at.query_params))) <= LINK_BUDGET


def test_a_matrix_too_large_for_a_link_is_named_in_it_and_the_receiver_is_told() -> None:
    matrix = np.random.default_rng(5).dirichlet(np.ones(60), size=60)  # 60 × 60 exact floats: ~40,000 characters
    at = open_page(CURVES, _chain_link(matrix))
    assert not problems(at)
    shared = dict(at.query_params)
    assert "P" not in shared and shared["lost"].startswith("matrix-60-")
    assert len(urlencode(shared)) <= LINK_BUDGET
    received = open_page(CALIBRATE, shared)
    warnings = [w.value for w in received.warning]
    assert any("made for a 60-state Markov chain" in w and "too large for a link" in w for w in warnings), warnings
    assert received.session_state["settings"]["matrix"] == MATRIX.defaults["matrix"]  # and sees what it says


def test_prior_uncertainty_travels_with_the_name_of_built_in_data() -> None:
    fit = MATRIX.read(fit_markov_chain(load_dataset("checkins"), smoothing=DEFAULT_SMOOTHING))
    query = {
        "prior": "matrix",
        "P": MatrixText().encode(fit["matrix"]),
        "labels": LabelsText().encode(fit["labels"]),
        "T": str(fit["length"]),
        "data": "builtin:checkins:user",
        "unc": "1",
        "M": "5",
        "dseed": "3",
    }
    at = open_page(CALIBRATE, query)
    assert not problems(at) and not errors(at)
    assert at.toggle(key="w_cal_unc_on").value  # offered and on: no need to pick the data again
    assert at.number_input(key="w_cal_unc_draws").value == 5 and at.number_input(key="w_cal_unc_seed").value == 3
    assert any("Θ = the chain fitted to Check-ins" in c.value for c in at.caption)
    assert "fitted to Check-ins" in " ".join(c.value for c in at.sidebar.caption)
    assert dict(at.query_params)["data"] == "builtin:checkins:user" and at.query_params["M"] == "5"


def test_an_older_link_name_still_reads() -> None:
    at = open_page("app_pages/plan.py", {"k": "7"})
    assert at.number_input(key="w_plan_releases").value == 7
    assert "k" not in at.query_params and at.query_params["releases"] == "7"


def test_two_settings_cannot_share_a_name() -> None:
    clash = ParameterGroup("clash", (Parameter("another_eps", 1.0, "eps", Number(0, 1)),))
    with pytest.raises(ValueError, match="the link name 'eps' of 'another_eps' is taken by 'eps_puffer'"):
        register(clash)
    assert "another_eps" not in state.SETTINGS
