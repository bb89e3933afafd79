"""fidelity_over_eps with chosen secrets (docs/math.md §16, §19.5): every point of the sweep is the release planned
by plan_synthesis with the same secrets, drawn with the sweep's seed, and its scores are those fidelity gives for that
draw (recomputed here point by point, the seeds spawned as the sweep documents); the secrets change the Pufferfish
points (less noise for fewer secrets) and leave the group-DP baseline alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from puffer_core.data.datasets import load_dataset
from puffer_core.secrets import Secrets
from puffer_core.synthesis.counts import chain_counts
from puffer_core.synthesis.fidelity import fidelity, noise_scores
from puffer_core.synthesis.sweep import fidelity_over_eps
from puffer_core.synthesis.synthesize import draw_synthesis, plan_synthesis

GRID = (1.0, 4.0)
RUNS = 2
GYM = Secrets(pairs="sensitive", states=(3,))  # Gym against every other place
FIRST = Secrets(positions=(0, 1, 2))  # the first three check-ins of every user


@pytest.fixture(scope="module")
def real():  # noqa: ANN201 - ChainCounts of the check-ins
    return chain_counts(load_dataset("checkins"))


def _scores(frame: pd.DataFrame, guarantee: str, eps: float, run: int, part: str) -> pd.Series:
    rows = frame[(frame.guarantee == guarantee) & (frame.eps_puffer == eps) & (frame.run == run) & (frame.part == part)]
    return rows.set_index(["group", "metric"])["value"].sort_index()


@pytest.mark.parametrize("secrets", [GYM, FIRST])
def test_every_point_is_plan_synthesis_with_the_secrets(real, secrets: Secrets) -> None:  # noqa: ANN001
    guarantees = ("pufferfish", "group_dp")
    sweep = fidelity_over_eps(real, None, GRID, guarantees=guarantees, runs=RUNS, rng=5, secrets=secrets)
    seeds = np.random.SeedSequence(5).spawn(RUNS * len(GRID) * len(guarantees) + 1)
    i = 0
    for guarantee in guarantees:
        for eps in GRID:
            plan = plan_synthesis(real, None, eps, guarantee=guarantee, if_no_signal="allow", min_group_users=1,
                                  secrets=secrets)
            assert plan.secrets == secrets
            for run in range(RUNS):
                _, chain, sample = draw_synthesis(plan, np.random.default_rng(seeds[i]), method="projection")
                i += 1
                total = fidelity(real, sample.summary(), 3, "visits").scores()
                expected = total.melt(id_vars="group", var_name="metric", value_name="value")
                expected = expected.set_index(["group", "metric"])["value"].sort_index()
                got = _scores(sweep, guarantee, eps, run, "total")
                assert got.index.equals(expected.index)
                assert np.allclose(got.to_numpy(), expected.to_numpy(), rtol=0, atol=0, equal_nan=True)
                noise = noise_scores(real, chain).melt(id_vars="group", var_name="metric", value_name="value")
                noise = noise.set_index(["group", "metric"])["value"].sort_index()
                assert np.allclose(_scores(sweep, guarantee, eps, run, "noise").to_numpy(), noise.to_numpy(),
                                   rtol=0, atol=0, equal_nan=True)


def test_the_secrets_change_the_pufferfish_points_only(real) -> None:  # noqa: ANN001
    for eps in GRID:
        chosen = plan_synthesis(real, None, eps, if_no_signal="allow", min_group_users=1, secrets=GYM)
        every = plan_synthesis(real, None, eps, if_no_signal="allow", min_group_users=1)
        assert chosen.scale < every.scale  # fewer secrets: less noise
        dp = [plan_synthesis(real, None, eps, guarantee="group_dp", if_no_signal="allow", min_group_users=1,
                             secrets=s).scale for s in (GYM, None)]
        assert dp[0] == dp[1]  # group DP protects whole sequences whatever the secrets
    with_gym = fidelity_over_eps(real, None, GRID, runs=1, rng=0, secrets=GYM)
    without = fidelity_over_eps(real, None, GRID, runs=1, rng=0)
    dp = (with_gym.guarantee != "pufferfish")
    pd.testing.assert_frame_equal(with_gym[dp].reset_index(drop=True), without[dp].reset_index(drop=True))
    puffer = with_gym.guarantee == "pufferfish"
    assert not with_gym[puffer].reset_index(drop=True).equals(without[puffer].reset_index(drop=True))
