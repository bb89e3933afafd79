"""The accountant: privacy events composed into a ledger (docs/math.md §4), checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from puffer_core.accounting.calibration import Calibration
from puffer_core.accounting.composition import Accountant, cumulative_eps_puffer
from puffer_core.accounting.events import Composition, CurveEvent, MQMEvent


def _curve_event(eps_puffer, eps_dp, b, a):
    return CurveEvent("pufferfish_exponential", Calibration(eps_puffer, eps_dp, b, a))


def test_curve_events_compose_by_theorem_6_2():
    # releases (a, b, ε_DP): (0.5, 2, 0.25), (0.2, 4, 0.1), (0.5, 2, 0.25); each ε_puffer = b·ε_DP + a
    events = [_curve_event(1.0, 0.25, 2, 0.5), _curve_event(0.6, 0.1, 4, 0.2), _curve_event(1.0, 0.25, 2, 0.5)]
    ledger = Accountant(length=10).ledger(events)
    assert ledger.composition is Composition.THEOREM_6_2
    # max a + Σ b·ε_DP after each release: 0.5 + 0.5; 0.5 + 0.9; 0.5 + 1.4
    np.testing.assert_allclose(ledger.eps_puffer, [1.0, 1.4, 1.9])
    np.testing.assert_allclose(ledger.naive_sum, [1.0, 1.6, 2.6])
    np.testing.assert_allclose(ledger.group_dp, [2.5, 3.5, 6.0])  # T·Σ ε_DP, T = 10


def test_mqm_events_add_up():
    events = [MQMEvent("mqm", 0.5, 2.0, 1.0), MQMEvent("mqm", 1.5, 0.5, 4.0, queries=3)]
    ledger = Accountant(length=4).ledger(events)
    assert ledger.composition is Composition.ADDITIVE
    np.testing.assert_allclose(ledger.eps_puffer, [0.5, 2.0])
    np.testing.assert_allclose(ledger.naive_sum, [0.5, 2.0])
    np.testing.assert_allclose(ledger.group_dp, [8.0, 10.0])


def test_the_accountant_says_what_it_supports():
    curve, mqm = _curve_event(1.0, 0.25, 2, 0.5), MQMEvent("mqm", 1.0, 2.0, 1.0)
    assert Accountant.supports([curve, curve]) and Accountant.supports([mqm]) and Accountant.supports([])
    assert not Accountant.supports([curve, mqm])
    with pytest.raises(ValueError, match="cannot compose"):
        Accountant(length=4).ledger([curve, mqm])
    with pytest.raises(ValueError, match="privacy events"):
        Accountant(length=4).ledger([Calibration(1.0, 0.25, 2, 0.5)])
    with pytest.raises(ValueError, match="length"):
        Accountant(length=0)
    empty = Accountant(length=4).ledger([])
    assert empty.composition is None and empty.eps_puffer.size == empty.group_dp.size == 0
    assert cumulative_eps_puffer([]).size == 0


def test_events_are_plain_records_with_typed_codes():
    event = _curve_event(1.0, 0.25, 2, 0.5)
    assert (event.eps_puffer, event.eps_dp, event.b, event.a, event.group_dp) == (1.0, 0.25, 2, 0.5, False)
    assert event.to_dict()["composition"] == "theorem_6_2" and event.to_dict()["sigma_max"] is None
    mqm = MQMEvent("mqm", 1.0, float("inf"), 0.0)
    assert mqm.to_dict()["eps_dp"] == "inf" and mqm.to_dict()["composition"] == "additive"
    with pytest.raises(ValueError, match="Calibration"):
        CurveEvent("pufferfish_exponential", 1.0)
    with pytest.raises(ValueError, match="eps_puffer"):
        MQMEvent("mqm", -1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="queries"):
        MQMEvent("mqm", 1.0, 1.0, 1.0, queries=0)
