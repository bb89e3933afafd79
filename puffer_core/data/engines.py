"""Statistics of event logs of any size, as SQL: one query text, two engines (docs/math.md §1, §6, §7).

:func:`load_stats` computes the :class:`~puffer_core.data.stats.SequenceStats` of a table with one row
per entry — the same numbers as :meth:`Sequences.stats <puffer_core.data.Sequences.stats>`, but
without ever holding the rows: every count is a SQL aggregation over a view
``events(uid, ts, st, grp, tkey)`` (user, time as stored, state, group, exact time key).

- **DuckDB** (the default, embedded): Parquet and CSV files, folders and globs, Arrow tables,
  pandas DataFrames and in-memory uploads (parsed with pyarrow, never written to disk).  A memory
  limit (``memory_limit``, default 2 GB) and a temporary folder: what does not fit spills to disk.
- **Spark SQL** (a cluster): pass ``engine=spark_session`` and, as the source, a table name, a
  path or glob, or a Spark DataFrame; the results come back with ``toArrow()``.

An engine's ``register(source, columns)`` holds everything dialect-specific (reading files, types,
reading times written as text one way per column, :mod:`puffer_core.data.times`); the queries
(:data:`PROFILE_SQL`, :data:`COUNTS_SQL`, :data:`TIE_SQL`) are the same text for both.  The work is
two scans: one that counts rows, empty cells, the time range and the entries per group and state (no
sort), and one that sorts each user's entries by time (``LAG``/``LEAD``/``ROW_NUMBER``) and aggregates
the moves and the steps at once (``GROUPING SETS``).  Only aggregates come back, within the bound
docs/data.md states; what the engine spilled and held is in the result.  Both engines parallelise on
their own; this module adds no threads of work (DuckDB's memory is sampled by one idle thread).

"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ..errors import DataError
from ..validation import InvalidParameter, check_whole
from .duckdb_engine import DuckDBEngine
from .sequences import MAX_STATES, label_codes, preview_names
from .spark_engine import SparkEngine
from .sql import (
    CLEAN_SQL,
    DEFAULT_MEMORY_LIMIT,
    DUPLICATES_SQL,
    PROFILE_SQL,
    PROFILE_TOTAL_SQL,
    TIE_SQL,
    Columns,
    Progress,
    SqlEngine,
    counts_sql,
    slot_sql,
)
from .stats import MAX_SLOT_CELLS, SequenceStats, check_window_range, check_windows, time_text, window_edges
from .times import (
    check_time_format,
)


def make_engine(engine: object = "duckdb", memory_limit: str = DEFAULT_MEMORY_LIMIT,
                temp_directory: str | None = None) -> SqlEngine:
    """An engine from ``"duckdb"`` (with ``memory_limit`` and ``temp_directory``), a SparkSession, or an engine."""
    if isinstance(engine, SqlEngine):
        return engine
    if engine == "duckdb":
        return DuckDBEngine(memory_limit, temp_directory)
    if type(engine).__name__ == "SparkSession":
        return SparkEngine(engine)
    raise ValueError(f"engine must be 'duckdb' or a pyspark SparkSession; got {engine!r}")


class _Reporter:
    """Progress of a long query: polls the engine's progress (DuckDB) in a daemon thread and reports it."""

    def __init__(self, engine: SqlEngine, progress: Progress | None, start: float, stop: float, what: str) -> None:
        self.engine, self.progress, self.start, self.stop, self.what = engine, progress, start, stop, what
        self.done = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> _Reporter:
        if self.progress is not None:
            self.progress(self.start, self.what)
            if isinstance(self.engine, DuckDBEngine):
                self.thread = threading.Thread(target=self._poll, daemon=True)
                self.thread.start()
        return self

    def _poll(self) -> None:
        """Report when the query has moved by 5 points of the whole, or every 30 s (DuckDB's own estimate)."""
        shown, last = self.start, time.monotonic()
        while not self.done.wait(2.0):
            share = self.engine.query_progress()
            if share <= 0 or self.progress is None:
                continue
            fraction = self.start + (self.stop - self.start) * min(share, 100.0) / 100.0
            if fraction >= shown + 0.05 or time.monotonic() - last >= 30:
                self.progress(fraction, self.what)
                shown, last = fraction, time.monotonic()

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        if self.thread is not None:
            self.thread.join()


def print_progress(fraction: float, message: str) -> None:
    """A progress line on standard error, as the command line shows it."""
    print(f"[{fraction:5.0%}] {message}", file=sys.stderr, flush=True)


def load_stats(
    source: object,
    user: str = "user",
    time: str = "time",
    state: str = "state",
    group: str | None = None,
    engine: object = "duckdb",
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    windows: Sequence[int] | int = (),
    time_format: str | None = None,
    drop_missing: bool = False,
    drop_duplicates: bool = False,
    max_states: int = MAX_STATES,
    progress: Progress | bool | None = None,
    temp_directory: str | None = None,
) -> SequenceStats:
    """The :class:`~puffer_core.data.stats.SequenceStats` of a table of entries of any size, computed as SQL.

    ``source``: with DuckDB (``engine="duckdb"``, the default), a path, folder or glob of Parquet
    or CSV files (or a list of them), an Arrow table, a pandas DataFrame, bytes or an uploaded file
    (parsed in memory); with Spark (``engine=spark_session``), a table name, a path or glob, or a
    Spark DataFrame.  ``user``, ``time``, ``state``, ``group``, ``time_format``, ``drop_missing``,
    ``drop_duplicates`` and ``max_states`` as in :func:`~puffer_core.data.readers.load_sequences`; the
    same refusals (empty cells, a (user, time) pair twice, fewer than 2 or too many states, times
    that cannot be read).  ``windows``: numbers of time windows to count (for
    ``simulate(..., release_mode="windows", releases=r)``).  ``memory_limit`` and
    ``temp_directory``: DuckDB's, where what does not fit in memory spills.  ``progress``: True
    prints progress lines on standard error; a function ``progress(fraction, message)`` is called.
    The result's ``spilled_bytes`` and ``peak_memory_bytes`` say what the engine spilled to disk and
    held in memory (docs/data.md).  Missing values, times and bad files are handled the same way on
    every engine (docs/data.md).
    """
    wanted = check_windows(windows)
    max_states = check_whole("max_states", max_states, minimum=2)
    for flag, value in (("drop_missing", drop_missing), ("drop_duplicates", drop_duplicates)):
        if not isinstance(value, bool):
            raise InvalidParameter(f"{flag} must be True or False; got {value!r}")
    report: Progress | None = print_progress if progress is True else (progress or None)
    if report is not None and not callable(report):
        raise ValueError("progress must be True, False, None or a function progress(fraction, message)")
    sql = make_engine(engine, memory_limit, temp_directory)
    columns = Columns(user, time, state, group, check_time_format(time_format))
    with _Reporter(sql, report, 0.0, 0.05, "reading the columns and the time format"):
        sql.register(source, columns)
    with _Reporter(sql, report, 0.05, 0.3, f"counting the rows of {sql.label} ({sql.name})"):
        profile, by_group = _profile(sql)
    _check_profile(profile, columns, sql.label, drop_missing, max_states, sql.bad_time)
    time_min, time_max = profile["time_min"], profile["time_max"]
    check_window_range(time_min, time_max, wanted)
    edges = {r: window_edges(time_min, time_max, r) for r in wanted}
    slot_limit = slot_steps(profile["states_about"])
    if drop_duplicates:  # entries per group and state are counted after the repeated rows are dropped
        by_group = None
    with _Reporter(sql, report, 0.3, 0.98, f"sorting each user's entries by time and counting ({sql.name})"):
        table = _plain(sql.query(counts_sql(sql, edges, slot_limit, drop_duplicates, MAX_SLOT_CELLS, by_group is None,
                                            complete=not profile["missing_rows"], states=profile.get("texts"))))
    duplicates = 0
    if drop_duplicates:
        clean = CLEAN_SQL.format(distinct="", events=sql.events)
        duplicates = int(sql.query(DUPLICATES_SQL.format(clean=clean)).to_pylist()[0]["duplicates"])
    stats = _assemble(table, sql, columns, profile, wanted, drop_missing, drop_duplicates, duplicates, max_states,
                      slot_limit, by_group)
    if report is not None:
        report(1.0, f"done: {stats.n_entries:,} entries of {stats.n_users:,} users, {stats.n_states} states"
                    + engine_use(stats.spilled_bytes, stats.peak_memory_bytes))
    return stats


def engine_use(spilled: int | None, peak: int | None) -> str:
    """"; spilled 3.2 GB to disk, peak memory 1.9 GB" (what is known), for progress lines."""
    parts = []
    if spilled:
        parts.append(f"spilled {spilled / 1e9:.2f} GB to disk")
    if peak:
        parts.append(f"peak engine memory {peak / 1e9:.2f} GB")
    return "; " + ", ".join(parts) if parts else ""


# The profile's count of distinct states is an estimate (HyperLogLog); the per-step counts are computed on the engine
# for the first MAX_SLOT_CELLS // (estimate / STATES_SLACK) steps only, which covers every step whenever they are
# kept (T_max · K ≤ MAX_SLOT_CELLS) unless the estimate is STATES_SLACK times too large — then SLOT_SQL counts them.
STATES_SLACK = 2


def slot_steps(states_about: int | None) -> int:
    """How many steps of each sequence the counting query histograms (module comment above STATES_SLACK)."""
    return MAX_SLOT_CELLS // max(2, int(states_about or 0) // STATES_SLACK)


PROFILE_GROUP_ROWS = 250_000  # the most (group, state) rows the profile returns; past that the sort counts them


def _plain(table: pa.Table) -> pa.Table:
    """``table`` with its dictionary columns (coded states) as plain values."""
    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(field.type.value_type))
    return table


def _profile(sql: SqlEngine) -> tuple[dict[str, Any], pa.Table | None]:
    """The profile's totals, and the complete rows per (group, state) — None when there were too many pairs."""
    table = sql.query(PROFILE_SQL.format(events=sql.events, group_rows=PROFILE_GROUP_ROWS))
    if table.num_rows == 0:  # too many pairs (or no rows at all): the totals alone, the states estimated
        return sql.query(PROFILE_TOTAL_SQL.format(events=sql.events)).to_pylist()[0], None
    total = pa.compute

    def summed(column: pa.ChunkedArray) -> int:
        return int(total.sum(column).as_py() or 0)

    named = total.and_(total.is_valid(table.column("p_grp")), total.is_valid(table.column("p_st")))
    rows, empty = table.filter(named), table.filter(total.invert(named))  # empty: every row has a missing cell
    n_rows = table.column("n_rows")
    complete = total.subtract(rows.column("n_rows"), rows.column("n_gaps").cast(pa.int64()))
    profile: dict[str, Any] = {
        "n_rows": summed(n_rows),
        "missing_user": summed(n_rows) - summed(table.column("n_user")),
        "missing_time": summed(n_rows) - summed(table.column("n_time")),
        "missing_state": summed(table.filter(total.is_null(table.column("p_st"))).column("n_rows")),
        "missing_group": summed(table.filter(total.is_null(table.column("p_grp"))).column("n_rows")),
        "missing_rows": summed(empty.column("n_rows")) + summed(rows.column("n_gaps")),
        "bad_times": summed(table.column("bad_times")),
        "bad_time_example": total.min(table.column("bad_time_example")).as_py(),
        "time_min": total.min(rows.column("time_min")).as_py(),
        "time_max": total.max(rows.column("time_max")).as_py(),
    }
    named_states = table.column("p_st")
    if pa.types.is_string(named_states.type) or pa.types.is_large_string(named_states.type):  # every text state seen
        profile["texts"] = total.unique(named_states.drop_null()).to_pylist()
    pairs = pa.table({"grp": rows.column("p_grp"), "st": rows.column("p_st"), "n": complete})
    pairs = pairs.filter(total.greater(complete, 0))
    profile["states_about"] = len(total.unique(pairs.column("st")))
    return profile, pairs


def repair_counts(
    source: object,
    user: str = "user",
    time: str = "time",
    state: str = "state",
    group: str | None = None,
    engine: object = "duckdb",
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
) -> tuple[int, int, int]:
    """(rows, rows with an empty cell in a chosen column, complete rows repeating an earlier one exactly),
    as :func:`~puffer_core.data.readers.find_repairs` counts them, in SQL."""
    sql = make_engine(engine, memory_limit)
    sql.register(source, Columns(user, time, state, group))
    profile, _ = _profile(sql)
    clean = CLEAN_SQL.format(distinct="", events=sql.events)
    duplicates = int(sql.query(DUPLICATES_SQL.format(clean=clean)).to_pylist()[0]["duplicates"] or 0)
    return int(profile["n_rows"] or 0), int(profile["missing_rows"] or 0), duplicates


def _check_profile(
    profile: dict[str, Any], columns: Columns, label: str, drop_missing: bool, max_states: int, why: str
) -> None:
    n_rows = profile["n_rows"] or 0
    if n_rows == 0:
        raise DataError(f"{label} has no rows of data")
    if profile["bad_times"]:
        fmt = f"does not fit time_format={columns.time_format!r}" if columns.time_format else why
        raise DataError(
            f"{profile['bad_times']:,} value(s) in the time column '{columns.time}' cannot be read as times; for"
            f" example {profile['bad_time_example']!r} {fmt}. Times must be numbers or dates such as 2024-05-01"
            " 13:45 (one way for the whole column, or pass time_format, e.g. '%d/%m/%Y %H:%M'); only their order"
            " matters."
        )
    missing = profile["missing_rows"] or 0
    if missing and not drop_missing:
        per_column = ", ".join(
            f"'{name}': {profile['missing_' + role]:,}"
            for role, name in columns.roles().items()
            if profile["missing_" + role]
        )
        raise DataError(
            f"{missing:,} row(s) of {label} have missing values (empty cells per column: {per_column})."
            " Remove or fill those rows, or drop them (drop_missing=True)."
        )
    if missing == n_rows:
        raise DataError(f"every row of {label} has an empty cell in a chosen column; no data is left to load")
    about = profile["states_about"] or 0
    if about > 1.2 * max_states + 10:
        raise DataError(
            f"the state column '{columns.state}' has about {about:,} distinct values; the limit is {max_states:,}."
            f" Is '{columns.state}' really the category column?"
        )


class _Coder:
    """Sorted labels of a column's distinct raw values (as Sequences sorts them) and the code of any raw value."""

    def __init__(self, column: pa.ChunkedArray) -> None:
        distinct = pa.compute.unique(column).to_pandas()
        codes, self.labels = label_codes(distinct)
        self.index = pd.Index(distinct)
        self.by_position = np.asarray(codes, dtype=np.int64)

    def codes(self, column: pa.ChunkedArray) -> np.ndarray:
        return self.by_position[self.index.get_indexer(column.to_pandas())]


def _assemble(
    table: pa.Table,
    sql: SqlEngine,
    columns: Columns,
    profile: dict[str, Any],
    windows: tuple[int, ...],
    drop_missing: bool,
    drop_duplicates: bool,
    duplicates: int,
    max_states: int,
    slot_limit: int,
    by_group: pa.Table | None,
) -> SequenceStats:
    def part(*grouped: str) -> pa.Table:
        flags = ["g_from", "g_grp", "g_slot", *(f"g_win_{r}" for r in windows)]
        mask = np.ones(table.num_rows, dtype=bool)
        for flag in flags:
            want = 0 if flag in grouped else 1
            mask &= table.column(flag).to_numpy() == want
        return table.filter(pa.array(mask))

    moves = part("g_from")  # (from_st, st)
    if by_group is None:  # counted by the sort, not by the profile
        by_group = part("g_grp")
    ties = int(pa.compute.sum(moves.column("ties")).as_py() or 0)
    if ties:
        clean = CLEAN_SQL.format(distinct="DISTINCT" if drop_duplicates else "", events=sql.events)
        example = sql.query(TIE_SQL.format(clean=clean)).to_pandas().iloc[0]
        raise DataError(
            f"{ties:,} row(s) repeat a (user, time) pair already present; for example user {_show(example['uid'])} at"
            f" time {_show(example['ts'])}. Each user can be in only one state at a time: remove the duplicates or make"
            " the times distinct."
        )
    state_coder = _Coder(by_group.column("st"))
    states = state_coder.labels
    if len(states) < 2:
        raise DataError(
            f"the state column '{columns.state}' has only {len(states)} distinct value"
            f" ({preview_names(list(states))}); at least 2 states are needed, otherwise there is no secret"
        )
    if len(states) > max_states:
        raise DataError(
            f"the state column '{columns.state}' has {len(states):,} distinct values; the limit is {max_states:,}"
            f" (first few: {preview_names(list(states[:5]))}). Is '{columns.state}' really the category column?"
        )
    k = len(states)
    group_coder = _Coder(by_group.column("grp"))
    groups = None if columns.group is None else group_coder.labels
    g = len(group_coder.labels)
    n = by_group.column("n").to_numpy()
    group_counts = np.zeros((g, k), dtype=np.int64)
    np.add.at(group_counts, (group_coder.codes(by_group.column("grp")), state_coder.codes(by_group.column("st"))), n)

    transitions = np.zeros((k, k), dtype=np.int64)
    first_states = np.zeros(k, dtype=np.int64)
    moved = pa.compute.is_valid(moves.column("from_st"))
    into, starts = moves.filter(moved), moves.filter(pa.compute.invert(moved))
    np.add.at(
        transitions,
        (state_coder.codes(into.column("from_st")), state_coder.codes(into.column("st"))),
        into.column("n").to_numpy(),
    )
    np.add.at(first_states, state_coder.codes(starts.column("st")), starts.column("n").to_numpy())
    steps = part("g_slot")  # (slot, st, seq_length): every step, or one row per length
    ends = steps.filter(pa.compute.and_(pa.compute.is_valid(steps.column("seq_length")),
                                        pa.compute.equal(steps.column("length_rank"), 1)))
    order = np.argsort(ends.column("seq_length").to_numpy())
    length_values = ends.column("seq_length").to_numpy()[order]
    length_users = ends.column("length_users").to_numpy()[order]
    longest = int(length_values[-1])
    slot_counts = None
    if longest * k <= MAX_SLOT_CELLS:
        if longest <= slot_limit:
            slots = steps.filter(pa.compute.is_valid(steps.column("slot")))
        else:  # the estimate of the number of states was too large: the steps past slot_limit were not counted
            slots = sql.query(slot_sql(sql, drop_duplicates))
        slot_counts = np.zeros((longest, k), dtype=np.int64)
        np.add.at(
            slot_counts,
            (slots.column("slot").to_numpy() - 1, state_coder.codes(slots.column("st"))),
            slots.column("n").to_numpy(),
        )
    window_counts = {}
    for r in windows:
        rows = part(f"g_win_{r}", "g_grp", "g_st")
        counts = np.zeros((r, g, k), dtype=np.int64)
        np.add.at(
            counts,
            (
                rows.column(f"win_{r}").to_numpy(),
                group_coder.codes(rows.column("grp")),
                state_coder.codes(rows.column("st")),
            ),
            rows.column("n").to_numpy(),
        )
        window_counts[r] = counts
    time_min, time_max = profile["time_min"], profile["time_max"]
    return SequenceStats(
        states=states,
        groups=groups,
        transitions=transitions,
        first_states=first_states,
        length_values=length_values,
        length_users=length_users,
        group_counts=group_counts,
        time_min=time_min,
        time_max=time_max,
        time_unit=sql.time_unit,
        time_first=time_text(time_min, sql.time_unit, sql.time_utc),
        time_last=time_text(time_max, sql.time_unit, sql.time_utc),
        window_counts=window_counts,
        slot_counts=slot_counts,
        rows_read=int(profile["n_rows"]),
        missing=int(profile["missing_rows"] or 0),
        duplicates=duplicates,
        drop_missing=drop_missing,
        drop_duplicates=drop_duplicates,
        group_column=columns.group,
        spilled_bytes=sql.spilled_bytes,
        peak_memory_bytes=sql.peak_memory_bytes,
    )


def _show(value: object) -> str:
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)
