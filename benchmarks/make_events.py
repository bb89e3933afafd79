"""Synthetic event logs for the data benchmarks: users' Markov chains written as a glob of Parquet files.

Run: python benchmarks/make_events.py /tmp/events --users 1000000 --rows 100000000 --states 50

Writes ``part-000.parquet``, ``part-001.parquet``, … (about 5M rows each) under the folder:
columns ``user`` (int64), ``time`` (timestamp, µs, UTC), ``state`` (string, ``s00``..``s49``)
and ``country`` (string, 20 values, one per user).  Each user's sequence is a K-state Markov
chain (a sticky random transition matrix, seed 2026) with a length drawn around rows/users; the
rows of every file are shuffled, so the engines must sort by (user, time) themselves.  The data
is generated, never committed: put it under /tmp.  The first two files are the 10M-row case.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

USERS_PER_FILE = 50_000
COUNTRIES = 20
START_US = 1_704_067_200_000_000  # 2024-01-01 00:00 UTC, in µs


def transition_matrix(k: int, rng: np.random.Generator) -> np.ndarray:
    """A sticky chain: stay with probability 0.5, else jump along a Dirichlet(0.3) row."""
    jump = rng.dirichlet(np.full(k, 0.3), size=k)
    return 0.5 * np.eye(k) + 0.5 * jump


def one_file(first_user: int, n_users: int, mean_length: int, cumulative: np.ndarray,
             rng: np.random.Generator) -> pa.Table:
    k = cumulative.shape[0]
    lengths = rng.integers(max(1, mean_length // 2), mean_length + mean_length // 2 + 1, n_users)
    longest = int(lengths.max())
    states = np.empty((n_users, longest), dtype=np.int16)
    states[:, 0] = rng.integers(0, k, n_users)
    for t in range(1, longest):
        u = rng.random((n_users, 1))
        states[:, t] = (u > cumulative[states[:, t - 1]]).sum(axis=1).clip(0, k - 1)
    keep = np.arange(longest)[None, :] < lengths[:, None]
    user = np.broadcast_to(np.arange(first_user, first_user + n_users)[:, None], keep.shape)[keep]
    gaps = rng.integers(60_000_000, 3_600_000_000, size=keep.shape)  # 1 min .. 1 h, in µs
    times = (START_US + rng.integers(0, 86_400_000_000, n_users)[:, None] + np.cumsum(gaps, axis=1))[keep]
    codes = states[keep]
    country = rng.integers(0, COUNTRIES, n_users)[user - first_user]
    order = rng.permutation(user.size)
    labels = pa.array([f"s{i:02d}" for i in range(k)])
    countries = pa.array([f"c{i:02d}" for i in range(COUNTRIES)])
    return pa.table(
        {
            "user": pa.array(user[order].astype(np.int64)),
            "time": pa.array(times[order], pa.timestamp("us", tz="UTC")),
            "state": pa.DictionaryArray.from_arrays(pa.array(codes[order].astype(np.int32)), labels).cast(pa.string()),
            "country": pa.DictionaryArray.from_arrays(pa.array(country[order].astype(np.int32)), countries).cast(
                pa.string()
            ),
        }
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--states", type=int, default=50)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    args.folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    cumulative = np.cumsum(transition_matrix(args.states, rng), axis=1)
    mean_length = max(1, round(args.rows / args.users))
    start = time.perf_counter()
    written = 0
    for i, first in enumerate(range(0, args.users, USERS_PER_FILE)):
        n = min(USERS_PER_FILE, args.users - first)
        table = one_file(first, n, mean_length, cumulative, rng)
        pq.write_table(table, args.folder / f"part-{i:03d}.parquet", row_group_size=1_000_000)
        written += table.num_rows
        print(f"part-{i:03d}.parquet: {table.num_rows:,} rows ({written:,} in all,"
              f" {time.perf_counter() - start:.0f} s)", file=sys.stderr)
    print(f"wrote {written:,} rows of {args.users:,} users to {args.folder}/part-*.parquet")
    return 0


if __name__ == "__main__":
    sys.exit(main())
