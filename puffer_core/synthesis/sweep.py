"""How fidelity changes with ε: total, noise alone and sampling alone, over a grid (docs/math.md §19.5)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..secrets.values import Secrets
from ..validation import check_whole
from .counts import ChainCounts
from .fidelity import fidelity, noise_scores, reference_counts
from .synthesize import draw_synthesis, plan_synthesis


def fidelity_over_eps(
    real: ChainCounts,
    prior: object,
    eps_grid: Sequence[float],
    *,
    guarantees: Sequence[str] = ("pufferfish", "group_dp"),
    runs: int = 3,
    rng: int = 0,
    top_k: int = 3,
    query: str = "visits",
    method: str = "projection",
    if_no_signal: str = "allow",
    secrets: Secrets | None = None,
) -> pd.DataFrame:
    """How fidelity changes with ε: a tidy frame (guarantee, eps_puffer, run, part, group, metric, value).

    ``part`` is ``"total"`` (the synthetic table against the real counts), ``"noise"`` (the released chain against
    the real chain, :func:`noise_scores`) or ``"sampling"`` (a table drawn from the real chain without noise,
    :func:`reference_counts`; eps_puffer = inf).  ``runs`` independent releases per point, seeded from ``rng``
    (numpy noise: reproducible, for a what-if, not for publishing).  ``secrets``: what every point protects
    (:func:`plan_synthesis`'s, docs/math.md §16; default every pair of states at every entry).
    """
    runs = check_whole("runs", runs)
    seeds = np.random.SeedSequence(int(rng)).spawn(runs * len(eps_grid) * len(guarantees) + 1)
    frames = []

    def tidy(scores: pd.DataFrame, **keys: object) -> None:
        long = scores.melt(id_vars="group", var_name="metric", value_name="value")
        frames.append(long.assign(**keys))

    reference = fidelity(real, reference_counts(real, int(seeds[-1].generate_state(1)[0])), top_k, query)
    tidy(reference.scores(), guarantee="none", eps_puffer=np.inf, run=0, part="sampling")
    i = 0
    for guarantee in guarantees:
        for eps in eps_grid:
            plan = plan_synthesis(real, prior, eps, guarantee=guarantee, if_no_signal=if_no_signal,
                                  min_group_users=1, secrets=secrets)
            for run in range(runs):
                _, chain, sample = draw_synthesis(plan, np.random.default_rng(seeds[i]), method=method)
                i += 1
                keys = {"guarantee": guarantee, "eps_puffer": float(eps), "run": run}
                tidy(fidelity(real, sample.summary(), top_k, query).scores(), part="total", **keys)
                tidy(noise_scores(real, chain), part="noise", **keys)
    out = pd.concat(frames, ignore_index=True)
    return out[["guarantee", "eps_puffer", "run", "part", "group", "metric", "value"]]
