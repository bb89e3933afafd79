"""Post-processing with the prior, measured: the error before and after, on the demo data, Seattle weather and a
misspecified prior (docs/math.md §14).  Prints one table per kind of release; seeded, so the numbers repeat.

    python benchmarks/bench_postprocess.py [--trials N]

1. One histogram per group (the Simulate page's query), Pufferfish Laplace at several ε_puffer, the chain
   fitted to the data: mean L1 error Σ_j |c̃_j − c_j| as released and after the linear MMSE + projection.
2. A stream of counts (the counts of every user's t-th entry, t = 1..T, each with Lap(2/ε) noise):
   mean squared error per step as released and after the Kalman smoother under the fitted chain
   (the expected error under the prior beside it: exact).
3. One user's stream of randomized responses (each step ε-DP): the share of steps named right, from the
   release alone and from the posterior's most probable state, on the real sequences.
The misspecified case: data drawn from a chain that keeps returning to one state, smoothed with a chain that
stays in the other two.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from puffer_core import (  # noqa: E402
    MarkovChainPrior,
    fit_markov_chain,
    load_dataset,
    load_sequences,
    posterior_states,
    simulate,
    smooth_count_stream,
)
from puffer_core.inference.posterior import sample_states  # noqa: E402
from puffer_core.mechanisms.laws import randomized_response_emission  # noqa: E402

EPS = (0.1, 0.5, 1.0, 2.0, 5.0)


def _misspecified(n_users: int = 150, length: int = 30, seed: int = 3):
    """Data from a chain that keeps returning to state a; the prior the analyst believes stays in b or c."""
    truth = MarkovChainPrior([[0.9, 0.05, 0.05], [0.6, 0.3, 0.1], [0.6, 0.1, 0.3]], length=length)
    believed = MarkovChainPrior([[0.3, 0.35, 0.35], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]], length=length)
    states = sample_states(truth, n_users, length, np.random.default_rng(seed))
    rows = [(u, t, "abc"[states[u, t]]) for u in range(n_users) for t in range(length)]
    return load_sequences(pd.DataFrame(rows, columns=["user", "time", "state"])), believed


def datasets():
    checkins = load_dataset("checkins")
    seattle = load_dataset("seattle-weather")
    data, believed = _misspecified()
    return [
        ("check-ins (demo)", checkins, fit_markov_chain(checkins)),
        ("Seattle weather", seattle, fit_markov_chain(seattle)),
        ("misspecified prior", data, believed),
    ]


def histogram_table(trials: int) -> pd.DataFrame:
    rows = []
    for name, data, prior in datasets():
        result = simulate(data, prior, query="histogram", mechanisms=["pufferfish_laplace"], eps_grid=EPS,
                          trials=trials, rng=0, postprocess=True)
        table = result.table("L1")
        for eps in EPS:
            before, after = table.loc[eps, "Pufferfish Laplace"], table.loc[eps, "Pufferfish Laplace + prior"]
            rows.append({"data": name, "ε_puffer": eps, "L1 released": before, "L1 + prior": after,
                         "after / before": after / before})
    return pd.DataFrame(rows)


def _panel(data) -> tuple[np.ndarray, np.ndarray]:
    """Counts of the users' t-th entries (T, K), for the users present at t (nested: users stop, never start)."""
    k = data.n_states
    position = np.arange(data.n_entries) - data.offsets[:-1][data.user_index]
    counts = np.zeros((int(position.max()) + 1, k))
    np.add.at(counts, (position, data.codes), 1.0)
    return counts, counts.sum(axis=1).astype(np.int64)


def stream_table(trials: int) -> pd.DataFrame:
    rows = []
    rng = np.random.default_rng(1)
    for name, data, prior in datasets():
        counts, users = _panel(data)
        for eps in EPS:
            scale = 2.0 / eps  # the histogram of one step has L1 sensitivity 2
            before = after = 0.0
            expected = None
            for _ in range(trials):
                noisy = counts + rng.laplace(0.0, scale, size=counts.shape)
                smoothed = smooth_count_stream(prior, noisy, 2 * scale**2, users)
                before += ((noisy - counts) ** 2).sum(axis=1).mean()
                after += ((smoothed.estimates - counts) ** 2).sum(axis=1).mean()
                expected = smoothed.expected_mse.mean()
            rows.append({"data": name, "ε per step": eps, "MSE released": before / trials,
                         "MSE + prior": after / trials, "after / before": after / before,
                         "expected under the prior": expected})
    return pd.DataFrame(rows)


def randomized_response_table(max_users: int = 60) -> pd.DataFrame:
    rows = []
    rng = np.random.default_rng(2)
    for name, data, prior in datasets():
        for eps in (0.5, 1.0, 2.0):
            law = randomized_response_emission(data.n_states, eps)
            right_raw = right_post = steps = 0
            for u in range(min(data.n_users, max_users)):
                seq = data.codes[data.offsets[u] : data.offsets[u + 1]]
                outputs = np.array([rng.choice(data.n_states, p=law[x]) for x in seq])
                post = posterior_states(prior.with_length(seq.size), law, outputs)
                right_raw += int((outputs == seq).sum())
                right_post += int((post.argmax(axis=1) == seq).sum())
                steps += seq.size
            rows.append({"data": name, "ε per step": eps, "right, release alone": right_raw / steps,
                         "right, with the prior": right_post / steps})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=100)
    args = parser.parse_args()
    pd.set_option("display.width", 160)
    for title, build in (
        ("1. One histogram per group: mean L1 error (Pufferfish Laplace)", lambda: histogram_table(args.trials)),
        ("2. A stream of counts: mean squared error per step", lambda: stream_table(max(10, args.trials // 5))),
        ("3. One user's randomized responses: share of steps named right", randomized_response_table),
    ):
        start = time.process_time()
        table = build()
        print(f"\n{title}  (CPU {time.process_time() - start:.1f} s)")
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main()
