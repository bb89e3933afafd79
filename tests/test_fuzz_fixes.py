"""One test per fix the fuzz table of tests/test_fuzz_new_apis.py found (each checks the fixed behaviour
against a value computed here, not by the library)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import puffer_core as pc
from puffer_core.accounting.renyi import renyi_ledger
from puffer_core.mechanisms.count_laws import count_laws
from puffer_core.mechanisms.gaussian import gaussian_histogram
from puffer_core.mechanisms.gaussian_calibration import gwm_eps, gwm_sigma
from puffer_core.mechanisms.mixtures import make_grid
from puffer_core.mechanisms.wasserstein import wasserstein_scale
from puffer_core.optimal import optimal_histogram_mechanism
from puffer_core.optimal.compare import compare_with_floor
from puffer_core.optimal.repeat import repeated_estimate, repeated_leakage
from puffer_core.secrets import EventSecrets, Secrets, read_secrets
from puffer_core.synthesis import synthesis_source
from puffer_core.validation import InvalidParameter

PRIOR = pc.MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=5)


def test_secrets_texts_refuse_unknown_or_repeated_parts_and_endless_ranges():
    """A typo ("q=") used to be read as every secret; a range of 10^11 positions ran out of memory."""
    assert read_secrets("p=all;t=1-3").positions == (1, 2, 3)
    for text, words in (("p=all;q=1", "unknown part 'q'"), ("p=sensitive;s=0;s=1", "given twice"),
                        ("p=all;t=0-99999999999", "no sequence is longer"), ("p=all;o=2", "o=1")):
        with pytest.raises(ValueError, match=words):
            read_secrets(text)


def test_wrong_types_in_secrets_are_invalid_parameters_and_indices_are_bounded():
    for make in (lambda: Secrets(positions=(1.5,)), lambda: Secrets(pairs="sensitive", states=(True,)),
                 lambda: EventSecrets((0.5,), ((1, 2),)), lambda: EventSecrets((0,), ("1-2",)),
                 lambda: Secrets(positions={1: 2})):
        with pytest.raises(TypeError):
            make()
    with pytest.raises(ValueError, match="0..1,000,000"):
        Secrets(positions=(10**400,))  # np.fromiter of the positions used to overflow


def test_positions_beyond_every_sequence_are_refused_by_the_count_and_histogram_mechanisms():
    """Nothing protected used to give laws with no pair: a release 'private' about nothing."""
    beyond = Secrets(positions=(99,))
    for call in (lambda: count_laws(PRIOR, [0], beyond), lambda: optimal_histogram_mechanism(PRIOR, 1.0, beyond),
                 lambda: wasserstein_scale(PRIOR, beyond), lambda: gaussian_histogram(PRIOR, 1.0, secrets=beyond)):
        with pytest.raises(ValueError, match="beyond the sequences' 5 entries"):
            call()
    assert count_laws(PRIOR, [0], Secrets(positions=(4, 99))).pairs.size > 0  # one inside is enough


def test_gwm_formulas_validate_and_never_overflow():
    """σ = W·√(α/(2ε)) and ε = αW²/(2σ²), checked by hand; extreme σ give ∞ or 0, never an exception."""
    assert gwm_sigma(3, 2.0, 0.5) == pytest.approx(3 * math.sqrt(2.0 / 1.0))
    assert gwm_eps(3, 4.0, 2.0) == pytest.approx(4.0 * 9 / 8)
    assert gwm_eps(1, 2.0, 5e-324) == math.inf and gwm_eps(1, 2.0, 1e200) == 0.0
    assert gwm_eps(1, 2.0, 0.0) == math.inf and gwm_eps(0, 2.0, 0.0) == 0.0
    assert gwm_sigma(1, 2.0, math.inf) == 0.0 and gwm_sigma(0, 2.0, 5e-300) == 0.0
    for bad in (math.nan, -1.0, "1", None):
        with pytest.raises(ValueError):
            gwm_sigma(1, 2.0, bad)
        with pytest.raises(ValueError):
            gwm_eps(1, 2.0, bad)
    with pytest.raises(ValueError, match="Rényi order"):
        gwm_sigma(1, 1.0, 1.0)


def test_epsilon_too_large_is_refused_clearly_not_looped_on_or_overflowed():
    """ε = 1e308: 2ε overflowed to σ_GWM = 0 and the exact search never ended; the LP's e^ε overflowed."""
    with pytest.raises(ValueError, match="too large"):
        gaussian_histogram(PRIOR, 1e308)
    assert gaussian_histogram(PRIOR, 1e30).sigma == pytest.approx(math.sqrt(2.0) * math.sqrt(2.0 / 2e30), rel=1e-3)
    with pytest.raises(ValueError, match="ε_puffer ≤ 700"):
        optimal_histogram_mechanism(PRIOR, 1e308)


def test_flags_are_flags():
    """exact='no' used to be truthy, i.e. the exact search was run when the caller asked for the GWM."""
    for flag in ("no", 0, None):
        with pytest.raises(TypeError, match="exact must be True or False"):
            gaussian_histogram(PRIOR, 1.0, exact=flag)


def test_a_ledger_without_delta_gives_an_infinite_epsilon_delta_not_nan():
    """δ = 0: log(1/δ) = ∞; NaN is never a value."""
    ledger = renyi_ledger([gaussian_histogram(PRIOR, 1.0).accounting])
    assert np.all(ledger.eps_delta == math.inf)
    with_delta = renyi_ledger([gaussian_histogram(PRIOR, 1.0).accounting], delta=1e-5)
    np.testing.assert_allclose(with_delta.eps_delta, with_delta.eps + math.log(1e5) / (2.0 - 1.0))


def test_compare_and_repeat_check_the_mechanism_they_are_given():
    other = optimal_histogram_mechanism(PRIOR, 2.0)
    with pytest.raises(ValueError, match="solved for a histogram at ε = 2"):
        compare_with_floor(PRIOR, 1.0, optimal=other)
    with pytest.raises(TypeError, match="OptimalMechanism"):
        compare_with_floor(PRIOR, 1.0, optimal="x")
    with pytest.raises(TypeError, match="OptimalMechanism"):
        repeated_leakage("x", 2)


def test_estimates_and_grids_validate_their_sizes():
    with pytest.raises(InvalidParameter):
        repeated_estimate(4, 2.5, 3, 2)
    with pytest.raises(ValueError, match="k must be a whole number ≥ 1"):
        repeated_estimate(4, 0, 3, 2)
    with pytest.raises(ValueError, match="low ≤ high"):
        make_grid(1.0, 5.0, 0.0, 0.5)
    assert make_grid(1.0, 0.0, 5.0, 0.5).edges.size == 11


def test_exported_synthesis_scripts_refuse_values_they_would_print():
    """ε = NaN or a name like '1x; import os' used to be written into the script."""
    with pytest.raises(ValueError):
        synthesis_source(eps_puffer=math.nan)
    with pytest.raises(TypeError, match="Python variable"):
        synthesis_source(eps_puffer=1.0, data="1x; import os")
    imports, code = synthesis_source(eps_puffer=1.0, seed=3)
    assert "synthesize" in imports and "1.0" in code


def test_compare_with_floor_reads_a_b_about_the_chosen_secrets():
    """The Laplace row via a(b) uses the curve about the same secrets as the floor (it used every secret)."""
    from puffer_core.mechanisms.laplace import pufferfish_laplace

    prior = pc.MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=4)
    chosen = Secrets(positions=(0,))
    rows = {r.name: r for r in compare_with_floor(prior, 1.0, states=[1], secrets=chosen).rows}
    every = {r.name: r for r in compare_with_floor(prior, 1.0, states=[1]).rows}
    want = pufferfish_laplace(pc.influence_curve(prior, secrets=chosen), 1.0, sensitivity=1.0).scale
    assert rows["pufferfish_laplace"].error == pytest.approx(want)
    assert rows["pufferfish_laplace"].error <= every["pufferfish_laplace"].error
