"""The Streams page's schedules, chains from the correlation knob and the attacker's P^B and P^F; settings in the link.

Every number is compared with puffer_core called directly.
"""

from __future__ import annotations

import numpy as np

from app_ui.core.tables import fmt
from puffer_core import MarkovChainPrior
from puffer_core.priors.strength import strength_prior
from puffer_core.stream.schedule import optimal_schedule
from puffer_core.stream.supremum import max_eps_for_tpl
from puffer_core.stream.tpl import temporal_privacy_leakage
from tests.app.conftest import errors, metric, open_page, problems, static_tables
from tests.app.test_app_attack import ATTACK
from tests.app.test_app_stream import STREAM, chart

DEFAULT = MarkovChainPrior([[0.9, 0.1], [0.2, 0.8]], length=100)


def test_the_optimal_schedule_holds_tpl_at_the_target_and_spends_more_than_a_constant_eps() -> None:
    at = open_page(STREAM, {"smode": "optimal", "starget": "2"})
    assert not problems(at) and not errors(at)
    schedule = optimal_schedule(DEFAULT, 2.0, 100)
    expected = temporal_privacy_leakage(DEFAULT, schedule.eps)
    assert chart(at)["TPL (temporal leakage)"] == [fmt(v) for v in expected.tpl]
    assert metric(at, "Max TPL over t") == fmt(expected.max_tpl) == "2"
    totals = next(t for t in static_tables(at) if "schedule" in t.columns)
    assert list(totals["schedule"]) == ["optimal", "three-value (Cao et al.)", "constant"]
    assert totals["total ε over the stream"].iloc[0] == fmt(schedule.total)
    assert totals["total ε over the stream"].iloc[2] == fmt(100 * max_eps_for_tpl(DEFAULT, 2.0))
    assert schedule.total > schedule.constant_total
    schedules = chart(at, 1)  # ε_t of each schedule, beside one another
    assert schedules["optimal"] == [fmt(v) for v in schedule.eps]
    assert set(schedules["constant"]) == {fmt(schedule.constant_eps)}


def test_a_chain_from_the_correlation_knob() -> None:
    at = open_page(STREAM, {"ssrc": "strength", "sstr": "0.9", "sk": "2", "T": "40"})
    assert not problems(at) and not errors(at)
    expected = temporal_privacy_leakage(strength_prior(2, 0.9, 40), 0.3)
    assert metric(at, "Max TPL over t") == fmt(expected.max_tpl)
    at.slider(key="w_stream_strength").set_value(0.0).run()  # independent entries: TPL is ε itself
    assert not errors(at)
    assert metric(at, "Max TPL over t") == fmt(0.3)


def test_an_attacker_who_knows_only_the_future() -> None:
    at = open_page(STREAM, {"pbsrc": "none"})
    assert not problems(at) and not errors(at)
    shown = chart(at)
    assert set(shown["BPL (from the past)"]) == {fmt(0.3)}  # P^B with equal rows: the past adds nothing
    expected = temporal_privacy_leakage(DEFAULT, 0.3, backward=np.full((2, 2), 0.5))
    assert shown["TPL (temporal leakage)"] == [fmt(v) for v in expected.tpl]
    assert any("bounds an attacker who knows those correlations" in c.value for c in at.caption)


def test_stream_and_attack_settings_travel_in_the_link_and_bad_values_are_ignored() -> None:
    at = open_page(STREAM, {"seps": "0.5", "srel": "stream_histogram", "slog": "0", "sched": "1-10:0.2;11-end:0.4"})
    assert not problems(at) and not errors(at)
    assert at.number_input(key="w_stream_eps").value == 0.5
    assert at.radio(key="w_stream_mechanism").value == "stream_histogram"
    assert at.query_params["seps"] == ["0.5"] or at.query_params["seps"] == "0.5"
    at.radio(key="w_stream_mode").set_value("table").run()
    assert not errors(at)
    assert at.session_state["settings"]["stream_segments"][0][:2] == (1, "10")
    bad = open_page(STREAM, {"seps": "50", "srel": "rr"})
    assert not problems(bad)
    assert any("`seps=50`" in w.value and "`srel=rr`" in w.value for w in bad.warning)
    attack = open_page(ATTACK, {"arel": "laplace", "aeps": "1.5", "adraws": "40", "aseed": "7"})
    assert not problems(attack) and not errors(attack)
    assert attack.radio(key="w_attack_release").value == "laplace"
    assert attack.number_input(key="w_attack_eps").value == 1.5
    assert attack.number_input(key="w_attack_draws").value == 40
    assert attack.number_input(key="w_attack_seed").value == 7
