"""Speed of loading sequences and fitting the Markov chain prior (docs/math.md §1, §6).

Run: python benchmarks/bench_fitting.py   — prints a table (median of 7 runs each).
"""

from __future__ import annotations

import dataclasses
import io
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import print_budget_table  # noqa: E402

from puffer_core.data.readers import load_sequences  # noqa: E402
from puffer_core.priors.fitting import fit_markov_chain, split_by_time, split_by_users  # noqa: E402

RUNS = 7
N_ROWS = 1_000_000
N_STATES = 78
N_USERS = 20_000



def million_rows(rng: np.random.Generator) -> pd.DataFrame:
    """1M check-ins of 20,000 users over 78 categories, shuffled, with timestamp strings."""
    stay = 0.6
    jump = rng.dirichlet(np.full(N_STATES, 0.5), size=N_STATES)
    cumulative = np.cumsum(jump, axis=1)
    per_user = N_ROWS // N_USERS
    states = np.empty((N_USERS, per_user), dtype=np.int64)
    states[:, 0] = rng.integers(0, N_STATES, N_USERS)
    for t in range(1, per_user):
        moved = (rng.random((N_USERS, 1)) > cumulative[states[:, t - 1]]).sum(axis=1)
        states[:, t] = np.where(rng.random(N_USERS) < stay, states[:, t - 1], moved)
    seconds = np.cumsum(rng.integers(60, 86_400, size=(N_USERS, per_user)), axis=1).ravel()
    frame = pd.DataFrame(
        {
            "user": np.repeat(np.arange(N_USERS), per_user),
            "time": pd.Timestamp("2012-04-03") + pd.to_timedelta(seconds, unit="s"),
            "state": np.array([f"category {i:02d}" for i in range(N_STATES)])[states.ravel()],
        }
    )
    return frame.sample(frac=1.0, random_state=1).reset_index(drop=True)


def main() -> None:
    rng = np.random.default_rng(2026)
    frame = million_rows(rng)
    buffer = io.StringIO()
    frame.assign(time=frame["time"].dt.strftime("%Y-%m-%d %H:%M:%S")).to_csv(buffer, index=False)
    csv_bytes = buffer.getvalue().encode()
    seqs = load_sequences(frame)
    checkins = ROOT / "assets" / "checkins.csv"
    activities = ROOT / "assets" / "activities.csv"
    cases = [
        (
            f"fit_markov_chain, {N_ROWS:,} rows, {N_STATES} states (fresh Sequences each run)",
            2000,
            lambda: fit_markov_chain(dataclasses.replace(seqs)),
        ),
        (f"load_sequences, {N_ROWS:,}-row DataFrame (datetime column)", None, lambda: load_sequences(frame)),
        (
            f"load_sequences, {N_ROWS:,}-row CSV in memory ({len(csv_bytes) / 1e6:.0f} MB, date strings)",
            None,
            lambda: load_sequences(csv_bytes),
        ),
        (
            f"load CSV + fit, {N_ROWS:,} rows",
            None,
            lambda: fit_markov_chain(load_sequences(csv_bytes)),
        ),
        (f"split_by_time per user, {N_ROWS:,} rows", None, lambda: split_by_time(seqs, 0.8)),
        (f"split_by_users, {N_ROWS:,} rows", None, lambda: split_by_users(seqs, 0.2, rng=0)),
        (
            f"load_sequences assets/checkins.csv ({checkins.stat().st_size / 1e6:.1f} MB)",
            None,
            lambda: load_sequences(checkins, group="country"),
        ),
        (
            f"load_sequences assets/activities.csv ({activities.stat().st_size / 1e6:.1f} MB)",
            None,
            lambda: load_sequences(activities, group="age_group"),
        ),
    ]
    print_budget_table(cases, RUNS)


if __name__ == "__main__":
    main()
