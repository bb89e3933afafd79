"""The exact audit of a synthetic-sequence release (docs/math.md §9, §19): the truth never exceeds the reported ε.

For tiny chains (K ≤ 3, T ≤ 6) and datasets of one or two users, tests/support/brute_synthesis.py enumerates
every dataset under the prior and computes the exact leakage of the noisy counts the synthesizer releases
(the supremum over all outputs, made finite by clamping).  The synthetic chain and table are computed from
those counts alone (tests/test_synthesis.py shows the table is a function of the release and a seed), so their
leakage is at most this one: it must be ≤ the ε_puffer the library reports, for the Pufferfish calibration
(whose window rule charges 2b + 2 instead of 4b) and for the two DP baselines.
"""

from __future__ import annotations

import numpy as np
import pytest

from puffer_core.priors.models import MarkovChainPrior
from puffer_core.synthesis.counts import ChainCounts
from puffer_core.synthesis.synthesize import plan_synthesis
from tests.support.brute_synthesis import counts_of, exact_release_leakage


def _counts(k: int, lengths: list[int], groups: list[int], n_groups: int) -> ChainCounts:
    """Counts of some dataset with these lengths and groups (the plan depends on lengths and groups only)."""
    vector = counts_of([(0,) * t for t in lengths], groups, k, n_groups)
    values = sorted(set(lengths))
    users = np.zeros((n_groups, len(values)), dtype=int)
    for t, g in zip(lengths, groups):
        users[g, values.index(t)] += 1
    names = tuple(f"g{i}" for i in range(n_groups)) if n_groups > 1 else None
    return ChainCounts(
        tuple(str(i) for i in range(k)), names, np.reshape(vector[: n_groups * k * k], (n_groups, k, k)),
        np.reshape(vector[n_groups * k * k:], (n_groups, k)), values, users,
        {"user": "u", "time": "t", "state": "s", "group": "g" if names else None},
    )


def _binary(stay0: float, stay1: float) -> np.ndarray:
    return np.array([[stay0, 1 - stay0], [1 - stay1, stay1]])


PRIORS = {
    "near iid": (_binary(0.55, 0.4), None),
    "mild": (_binary(0.65, 0.5), None),
    "sticky": (_binary(0.9, 0.8), None),
    "alternating": (_binary(0.2, 0.3), None),
    "zero transition": (_binary(1.0, 0.4), [0.5, 0.5]),  # a(b) = ∞ for small b: only wide windows qualify
    "first state known": (_binary(0.6, 0.45), [1.0, 0.0]),
}
# (K, lengths of the users, their groups, number of groups)
DATASETS = [(2, [1], [0], 1), (2, [2], [0], 1), (2, [4], [0], 1), (2, [6], [0], 1), (2, [3, 5], [0, 0], 1),
            (2, [3, 3], [0, 1], 2)]
EPS = (0.3, 1.0, 3.0)


@pytest.mark.parametrize("dataset", DATASETS, ids=lambda d: f"K{d[0]}-T{'+'.join(map(str, d[1]))}-G{d[3]}")
def test_the_exact_leakage_of_the_release_is_at_most_the_reported_eps(dataset: tuple) -> None:
    k, lengths, groups, n_groups = dataset
    counts = _counts(k, lengths, groups, n_groups)
    windows = 0
    priors = list(PRIORS.values())[: 3 if n_groups > 1 else None]  # two groups: the slowest enumeration
    for transition, initial in priors:
        prior = MarkovChainPrior(transition, initial, max(lengths))
        for eps in EPS:
            for guarantee in ("pufferfish", "group_dp", "user_dp"):
                plan = plan_synthesis(counts, prior, eps, guarantee=guarantee, if_no_signal="allow",
                                      min_group_users=1)
                leak = exact_release_leakage(transition.tolist(), list(prior.initial), lengths, groups, n_groups,
                                             plan.scale)
                assert leak <= plan.eps_puffer * (1 + 1e-9), (guarantee, eps, plan.calibration, leak)
                windows += guarantee == "pufferfish" and 1 < plan.calibration.b < max(lengths)
    if max(lengths) >= 5:
        assert windows  # the window rule (2b + 2, not 4b) was exercised, not only b = 1 or the whole sequence


def test_three_states() -> None:
    transitions = [np.array([[0.5, 0.3, 0.2], [0.25, 0.5, 0.25], [0.3, 0.3, 0.4]]),
                   np.array([[0.8, 0.2, 0.0], [0.1, 0.8, 0.1], [0.0, 0.3, 0.7]])]
    for lengths in ([3], [1, 2], [1, 3]):
        counts = _counts(3, lengths, [0] * len(lengths), 1)
        for transition in transitions:
            prior = MarkovChainPrior(transition, None, max(lengths))
            for eps in (0.5, 2.0):
                plan = plan_synthesis(counts, prior, eps, if_no_signal="allow", min_group_users=1)
                leak = exact_release_leakage(transition.tolist(), list(prior.initial), lengths, [0] * len(lengths),
                                             1, plan.scale)
                assert leak <= plan.eps_puffer * (1 + 1e-9)


def test_the_audit_is_not_vacuous() -> None:
    """The reference finds a leakage near the bound where the bound is tight: one entry, whole-sequence noise."""
    transition = _binary(0.6, 0.45)
    prior = MarkovChainPrior(transition, None, 1)
    plan = plan_synthesis(_counts(2, [1], [0], 1), prior, 2.0, if_no_signal="allow", min_group_users=1)
    # T = 1: the release is the first-state count pair; changing the entry moves it by 2 in L1, c_1 = 2
    leak = exact_release_leakage(transition.tolist(), list(prior.initial), [1], [0], 1, plan.scale)
    assert leak == pytest.approx(2.0, rel=1e-9)
    wider = exact_release_leakage(transition.tolist(), list(prior.initial), [1], [0], 1, plan.scale / 2)
    assert wider == pytest.approx(4.0, rel=1e-9)
