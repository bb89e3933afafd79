"""Chain counts per group from event logs of any size, as SQL on DuckDB or Spark (docs/math.md §19.1).

:func:`load_chain_counts` first runs :func:`puffer_core.data.engines.load_stats` (which reads the source, checks
every value and counts everything the library needs, pooled over groups), then, on the same engine and its
``events`` view, one more query that counts the transitions, first states and lengths per group
(:data:`GROUP_COUNTS_SQL`) and checks that every user has one group.  With ``detail=True`` a third query counts
the runs and visits fidelity shows (:data:`DETAIL_SQL`); it sorts the data again, so it is off by default.

The same counts as :func:`puffer_core.synthesis.counts.chain_counts` of the rows, count for count
(``tests/test_data_engines.py``), so one seed gives one synthetic table from numpy, DuckDB or Spark.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ..data.engines import load_stats, make_engine
from ..data.sequences import MAX_STATES, label_codes
from ..data.sql import CLEAN_SQL, DEFAULT_MEMORY_LIMIT, Progress
from ..errors import DataError
from .counts import RUN_BINS, ChainCounts

GROUP_COUNTS_SQL = """
WITH clean AS ({clean}),
ordered AS (
  SELECT grp, st,
    LAG(st) OVER w AS prev_st,
    ROW_NUMBER() OVER w AS pos,
    LEAD(tkey) OVER w AS next_tkey
  FROM clean
  WINDOW w AS (PARTITION BY uid ORDER BY tkey)
),
marked AS (
  SELECT grp, st,
    CASE WHEN pos > 1 THEN prev_st END AS from_st,
    CASE WHEN pos = 1 THEN st END AS first_st,
    CASE WHEN next_tkey IS NULL THEN pos END AS seq_length
  FROM ordered
)
SELECT grp, from_st, st, first_st, seq_length, count(*) AS n,
  GROUPING(from_st) AS g_from, GROUPING(first_st) AS g_first, GROUPING(seq_length) AS g_length
FROM marked
GROUP BY GROUPING SETS ((grp, from_st, st), (grp, first_st), (grp, seq_length))
"""

MIXED_SQL = """
SELECT count(*) AS mixed, min(uid) AS example FROM (
  SELECT uid FROM ({clean}) AS c GROUP BY uid HAVING count(DISTINCT grp) > 1
) AS m
"""

DETAIL_SQL = """
WITH clean AS ({clean}),
ordered AS (
  SELECT uid, grp, st,
    ROW_NUMBER() OVER (PARTITION BY uid ORDER BY tkey)
      - ROW_NUMBER() OVER (PARTITION BY uid, st ORDER BY tkey) AS island
  FROM clean
),
runs AS (
  SELECT grp, st, count(*) AS run_length FROM ordered GROUP BY uid, grp, st, island
),
visits AS (
  SELECT DISTINCT uid, grp, st FROM clean
)
SELECT grp, st, CASE WHEN run_length >= {bins} THEN {bins} ELSE run_length END AS bin, count(*) AS n, 0 AS visit
FROM runs GROUP BY grp, st, CASE WHEN run_length >= {bins} THEN {bins} ELSE run_length END
UNION ALL
SELECT grp, st, 0 AS bin, count(*) AS n, 1 AS visit FROM visits GROUP BY grp, st
"""


class _Labels:
    """The code of a raw value of a column whose labels are ``labels`` (as Sequences and load_stats label them)."""

    def __init__(self, distinct: pa.Array, labels: tuple[str, ...]) -> None:
        values = distinct.to_pandas()
        codes, found = label_codes(values)
        position = {label: i for i, label in enumerate(labels)}
        unknown = [label for label in found if label not in position]
        if unknown:
            raise DataError(f"the counts found values {unknown[:5]} that the first pass did not; was the data changed?")
        self.index = pd.Index(values)
        self.lookup = np.array([position[found[c]] for c in codes], dtype=np.int64)

    def codes(self, column: pa.ChunkedArray | pa.Array) -> np.ndarray:
        return self.lookup[self.index.get_indexer(column.to_pandas())]


def _rows(table: pa.Table, keep: str, column: str) -> pa.Table:
    rows = table.filter(pa.compute.equal(table.column(keep), 0))
    return rows.filter(pa.compute.is_valid(rows.column(column)))


def _example(value: Any) -> str:
    return repr(value.item() if isinstance(value, np.generic) else value)


def load_chain_counts(
    source: object,
    user: str = "user",
    time: str = "time",
    state: str = "state",
    group: str | None = None,
    engine: object = "duckdb",
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    time_format: str | None = None,
    drop_missing: bool = False,
    drop_duplicates: bool = False,
    max_states: int = MAX_STATES,
    progress: Progress | bool | None = None,
    temp_directory: str | None = None,
    detail: bool = False,
) -> ChainCounts:
    """The :class:`~puffer_core.synthesis.counts.ChainCounts` of a table of entries of any size (module docstring).

    The arguments are :func:`~puffer_core.data.engines.load_stats`'s (the same refusals); ``group`` makes one chain
    per group (every user's entries must carry one group).  ``detail``: also count runs and visits (a second
    sort of the data) for the fidelity report.
    """
    sql = make_engine(engine, memory_limit, temp_directory)
    stats = load_stats(
        source, user=user, time=time, state=state, group=group, engine=sql, time_format=time_format,
        drop_missing=drop_missing, drop_duplicates=drop_duplicates, max_states=max_states, progress=progress,
    )
    columns = {"user": user, "time": time, "state": state, "group": group}
    clean = CLEAN_SQL.format(distinct="DISTINCT" if drop_duplicates else "", events=sql.events)
    k = stats.n_states
    if group is None or stats.groups is None:
        counts = ChainCounts(stats.states, None, stats.transitions[None], stats.first_states[None],
                             stats.length_values, stats.length_users[None], columns)
        if not detail:
            return counts
        distinct = sql.query(f"SELECT DISTINCT st FROM ({clean}) AS c").column("st")
        return _with_detail(counts, sql, clean, _Labels(pa.compute.unique(distinct), stats.states), None)
    mixed = sql.query(MIXED_SQL.format(clean=clean)).to_pylist()[0]
    if mixed["mixed"]:
        raise DataError(
            f"{mixed['mixed']:,} user(s) have entries in more than one group of '{group}' (for example user"
            f" {_example(mixed['example'])}); a synthetic user is drawn from one group's chain, so the group must"
            " be the same for all of a user's entries (a country of residence, an age band). Synthesize"
            " without a group column, or choose a group column that is constant per user"
        )
    table = sql.query(GROUP_COUNTS_SQL.format(clean=clean))
    groups = _Labels(pa.compute.unique(table.column("grp")), stats.groups)
    # every entry is a first entry or the end of a transition: both columns hold every state
    every = pa.concat_arrays([pa.compute.unique(table.column("st")).drop_null(),
                              pa.compute.unique(table.column("first_st")).drop_null()])
    states = _Labels(pa.compute.unique(every), stats.states)
    g = len(stats.groups)
    moves = _rows(table, "g_from", "from_st")
    transitions = np.zeros((g, k, k), dtype=np.int64)
    np.add.at(transitions, (groups.codes(moves.column("grp")), states.codes(moves.column("from_st")),
                            states.codes(moves.column("st"))), moves.column("n").to_numpy())
    firsts = _rows(table, "g_first", "first_st")
    first_states = np.zeros((g, k), dtype=np.int64)
    np.add.at(first_states, (groups.codes(firsts.column("grp")), states.codes(firsts.column("first_st"))),
              firsts.column("n").to_numpy())
    lengths = _rows(table, "g_length", "seq_length")
    length_at = {int(v): i for i, v in enumerate(stats.length_values.tolist())}
    length_users = np.zeros((g, stats.length_values.size), dtype=np.int64)
    np.add.at(length_users, (groups.codes(lengths.column("grp")),
                             np.array([length_at[int(v)] for v in lengths.column("seq_length").to_pylist()],
                                      dtype=np.int64)), lengths.column("n").to_numpy())
    counts = ChainCounts(stats.states, stats.groups, transitions, first_states, stats.length_values,
                         length_users, columns)
    if not detail:
        return counts
    return _with_detail(counts, sql, clean, states, groups)


def _with_detail(counts: ChainCounts, sql: Any, clean: str, states: _Labels, groups: _Labels | None) -> ChainCounts:
    table = sql.query(DETAIL_SQL.format(clean=clean, bins=RUN_BINS))
    g, k = counts.n_groups, counts.n_states
    group_codes = np.zeros(table.num_rows, dtype=np.int64) if groups is None else groups.codes(table.column("grp"))
    state_codes = states.codes(table.column("st"))
    n = table.column("n").to_numpy()
    visit = table.column("visit").to_numpy() == 1
    runs = np.zeros((g, k, RUN_BINS), dtype=np.int64)
    bins = table.column("bin").to_numpy().astype(np.int64)
    np.add.at(runs, (group_codes[~visit], state_codes[~visit], bins[~visit] - 1), n[~visit])
    visits = np.zeros((g, k), dtype=np.int64)
    np.add.at(visits, (group_codes[visit], state_codes[visit]), n[visit])
    return ChainCounts(counts.states, counts.groups, counts.transitions, counts.first_states, counts.length_values,
                       counts.length_users, counts.columns, runs, visits)
