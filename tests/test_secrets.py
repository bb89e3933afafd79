"""The secrets as values: which pairs and entries, time rules, events, whole-population pairs; their words,
their link text and their Python (docs/math.md §16)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puffer_core import MarkovChainPrior
from puffer_core.data.datasets import load_dataset
from puffer_core.secrets import (
    ALL_SECRETS,
    EventSecrets,
    PopulationSecrets,
    Secrets,
    TimeRule,
    as_secrets,
    read_secrets,
)
from tests.support.brute import secret_pairs

LABELS = ["home", "work", "gym", "clinic", "bar"]


def test_all_secrets_is_every_pair_at_every_entry():
    assert ALL_SECRETS.is_all and as_secrets(None) is ALL_SECRETS
    assert ALL_SECRETS.pair_mask(3, 4).sum() == 4 * 6
    assert ALL_SECRETS.to_text() == "" and read_secrets("") == ALL_SECRETS and read_secrets("all") == ALL_SECRETS
    assert ALL_SECRETS.source() == "ALL_SECRETS"


@pytest.mark.parametrize(("secrets", "kind", "extra"), [
    (Secrets(pairs="sensitive", states=(3,)), "sensitive", {"states": (3,)}),
    (Secrets(pairs="sensitive", states=(0, 3)), "sensitive", {"states": (0, 3)}),
    (Secrets(pairs="groups", groups=((1, 2, 3),)), "groups", {"groups": ((1, 2, 3),)}),
    (Secrets(pairs="list", listed=((0, 1), (2, 4))), "list", {"listed": ((0, 1), (2, 4))}),
    (Secrets(pairs="list", listed=((0, 1),), ordered=True), "list", {"listed": ((0, 1),), "ordered": True}),
])
def test_pair_matrix_is_the_pairs_written_from_the_definition(secrets, kind, extra):
    """The library's matrix against a plain set written independently (tests/support/brute.py)."""
    matrix = secrets.pair_matrix(5)
    assert {(x, y) for x, y in zip(*np.nonzero(matrix))} == secret_pairs(5, kind, **extra)


def test_states_beyond_the_prior_and_empty_choices_are_refused():
    with pytest.raises(ValueError, match="name state 7, but the prior has 5"):
        Secrets(pairs="sensitive", states=(7,)).pair_matrix(5)
    with pytest.raises(ValueError, match="needs the sensitive states"):
        Secrets(pairs="sensitive")
    with pytest.raises(ValueError, match="at least one protected entry"):
        Secrets(positions=())
    with pytest.raises(TypeError, match="TimeRule"):
        Secrets(rule="night")  # type: ignore[arg-type]


def test_sentence_says_what_is_protected_in_plain_words():
    night = Secrets(pairs="sensitive", states=(3,), rule=TimeRule.night())
    text = night.sentence(LABELS, 1.0, "the chain fitted to the check-ins")
    assert text == ("An attacker who believes the chain fitted to the check-ins cannot tell whether a user was in"
                    " clinic rather than in any other state at night-time hours (22:00–05:59) by more than a"
                    " factor e^1.")
    assert "at entries 1–3 and 8 of each sequence" in Secrets(positions=(0, 1, 2, 7)).sentence(LABELS, 2.0)
    assert "among home, work and gym" in Secrets(pairs="groups", groups=((0, 1, 2),)).sentence(LABELS)
    assert "in home rather than in work (either way)" in Secrets(pairs="list", listed=((0, 1),)).sentence(LABELS)
    assert "on weekends" in Secrets(rule=TimeRule.weekends()).sentence(LABELS)
    event = EventSecrets(states=(3,), windows=((0, 6),)).sentence(LABELS, 0.5)
    assert "in clinic at some of entries 1–7 rather than at none of them by more than a factor e^0.5" in event
    assert "no guarantee" in ALL_SECRETS.sentence(LABELS, float("inf"))


secrets_values = st.one_of(
    st.builds(lambda s, pos: Secrets(pairs="sensitive", states=tuple(s), positions=pos),
              st.lists(st.integers(0, 9), min_size=1, max_size=3),
              st.none() | st.lists(st.integers(0, 400), min_size=1, max_size=30).map(tuple)),
    st.builds(lambda g, o: Secrets(pairs="groups", groups=(tuple(g), (7, 8)), ordered=o),
              st.lists(st.integers(0, 6), min_size=2, max_size=4, unique=True), st.booleans()),
    st.builds(lambda pairs, o: Secrets(pairs="list", listed=tuple(pairs), ordered=o),
              st.lists(st.tuples(st.integers(0, 4), st.integers(5, 9)), min_size=1, max_size=4), st.booleans()),
    st.builds(lambda h, w: Secrets(rule=TimeRule(hours=tuple(h), weekdays=tuple(w), name="shift")),
              st.lists(st.integers(0, 23), min_size=1, max_size=10), st.lists(st.integers(0, 6), max_size=3)),
    st.builds(lambda a, b: Secrets(positions=(1, 2), rule=TimeRule(start=a, end=b)),
              st.sampled_from(["2024-01-01", "2023-06-30"]), st.sampled_from(["2024-02-29", "2024-12-31"])),
    st.builds(lambda a, w: EventSecrets(states=tuple(a), windows=tuple(w)),
              st.lists(st.integers(0, 9), min_size=1, max_size=3),
              st.lists(st.tuples(st.integers(0, 5), st.integers(5, 20)), min_size=1, max_size=3)),
)


@settings(max_examples=150, deadline=None)
@given(secrets_values)
def test_link_text_and_python_read_back_to_an_equal_value(secrets):
    assert read_secrets(secrets.to_text()) == secrets
    namespace = {"Secrets": Secrets, "EventSecrets": EventSecrets, "TimeRule": TimeRule, "ALL_SECRETS": ALL_SECRETS}
    assert eval(secrets.source(), namespace) == secrets  # noqa: S307 — the exported script's own expression


def test_population_secrets_read_back_exactly_and_say_their_names():
    rng = np.random.default_rng(3)
    first = MarkovChainPrior(rng.dirichlet(np.ones(3), 3), None, 12, ["a", "b", "c"])
    second = MarkovChainPrior(rng.dirichlet(np.ones(3), 3), rng.dirichlet(np.ones(3)), 12, ["a", "b", "c"])
    secrets = PopulationSecrets(((first, second),), (("the 2019 habits", "the 2024 habits"),))
    back = read_secrets(secrets.to_text())
    assert isinstance(back, PopulationSecrets)
    (a, b), = back.pairs
    assert np.array_equal(a.transition, first.transition) and np.array_equal(b.initial, second.initial)
    assert b.labels == ("a", "b", "c") and back.names == secrets.names
    assert "come from the 2019 habits rather than the 2024 habits" in secrets.sentence(None, 1.0)
    with pytest.raises(ValueError, match="same states"):
        PopulationSecrets(((first, MarkovChainPrior(np.eye(2) * 0.5 + 0.25, None, 12)),))


def test_damaged_link_text_is_refused_with_what_is_wrong():
    with pytest.raises(ValueError, match="cannot read the secrets"):
        read_secrets("p=sensitive;s=x")
    with pytest.raises(ValueError, match="cannot read the secrets"):
        read_secrets("p=sensitive;q")


def test_time_rules_match_hours_days_and_dates():
    times = pd.to_datetime(["2024-01-05 23:30", "2024-01-06 03:00", "2024-01-06 12:00", "2024-02-01 05:59",
                            "2024-02-01 06:00"])
    assert TimeRule.night().matches(times).tolist() == [True, True, False, True, False]
    assert TimeRule.weekends().matches(times).tolist() == [False, True, True, False, False]  # 6 January: Saturday
    assert TimeRule(start="2024-01-06", end="2024-01-31").matches(times).tolist() == [False, True, True, False, False]
    assert TimeRule.night(1, 3).hours == (1, 2, 3)
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        TimeRule(start="5 Jan")
    with pytest.raises(ValueError, match="ends .* before it starts"):
        TimeRule(start="2024-02-01", end="2024-01-01")
    with pytest.raises(ValueError, match="not dates"):
        TimeRule.night().matches(np.array([1.5, 2.5]))


def test_a_rule_waits_for_its_times_then_protects_the_union_over_users():
    rule_secrets = Secrets(pairs="sensitive", states=(0,), rule=TimeRule.night())
    with pytest.raises(ValueError, match="apply it first"):
        rule_secrets.position_mask(10)
    data = load_dataset("activities")  # one day at 5-minute steps from midnight, the same grid for every user
    resolved = rule_secrets.resolve(data)
    assert resolved.rule == rule_secrets.rule and resolved.resolved
    expected = [i for i in range(288) if i < 72 or i >= 264]  # 00:00–05:55 and 22:00–23:55
    assert list(resolved.positions) == expected
    grid = rule_secrets.on_grid("2015-02-23 00:00", "5min", 288)
    assert grid.positions == resolved.positions
    assert read_secrets(resolved.to_text()) == resolved
    with pytest.raises(ValueError, match="matches the rule"):
        Secrets(rule=TimeRule(start="1999-01-01", end="1999-01-02")).resolve(data)


def test_event_secrets_check_their_states_and_windows():
    events = EventSecrets(states=(1,), windows=((2, 4), (0, 0)))
    assert events.windows == ((0, 0), (2, 4)) and events.longest == 3
    with pytest.raises(ValueError, match="every state"):
        EventSecrets(states=(0, 1), windows=((0, 1),)).state_mask(2)
    with pytest.raises(ValueError, match="runs past"):
        events.check(3, 4)
    with pytest.raises(ValueError, match="ends before it starts"):
        EventSecrets(states=(1,), windows=((3, 2),))
