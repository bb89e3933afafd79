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
two scans: one that counts rows, empty cells and the time range (no sort), and one that sorts each
user's entries by time (``LAG``/``LEAD``/``ROW_NUMBER``) and aggregates every count at once
(``GROUPING SETS``).  Both engines parallelise on their own; this module adds no threads of work.
"""

from __future__ import annotations

import contextlib
import glob
import io
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ..errors import DataError
from ..validation import check_whole
from .readers import csv_format
from .sequences import MAX_STATES, label_codes, preview_names
from .stats import MAX_SLOT_CELLS, SequenceStats, check_window_range, check_windows, time_text, window_edges
from .times import (
    DAY_FIRST,
    ISO8601,
    ISO_PATTERN,
    MONTH_FIRST,
    MONTH_NAME_FORMATS,
    MONTH_NAME_PATTERN,
    NUMERIC_PATTERN,
    YEAR_FIRST_PATTERN,
    NumericDates,
    check_time_format,
    java_pattern,
    numeric_order,
)

DEFAULT_MEMORY_LIMIT = "2GB"
PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz", ".txt", ".txt.gz")
# empty cells, as pandas and pyarrow read them by default
NULL_STRINGS = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null")
Progress = Callable[[float, str], object]

# --- the shared SQL text: {events} is the engine's view, {windows} the window columns -------------

PROFILE_SQL = """
SELECT
  count(*) AS n_rows,
  sum(CASE WHEN uid IS NULL THEN 1 ELSE 0 END) AS missing_user,
  sum(CASE WHEN ts IS NULL THEN 1 ELSE 0 END) AS missing_time,
  sum(CASE WHEN st IS NULL THEN 1 ELSE 0 END) AS missing_state,
  sum(CASE WHEN grp IS NULL THEN 1 ELSE 0 END) AS missing_group,
  sum(CASE WHEN uid IS NULL OR ts IS NULL OR st IS NULL OR grp IS NULL THEN 1 ELSE 0 END) AS missing_rows,
  sum(CASE WHEN ts IS NOT NULL AND tkey IS NULL THEN 1 ELSE 0 END) AS bad_times,
  min(CASE WHEN ts IS NOT NULL AND tkey IS NULL THEN CAST(ts AS STRING) END) AS bad_time_example,
  min(CASE WHEN uid IS NOT NULL AND st IS NOT NULL AND grp IS NOT NULL THEN tkey END) AS time_min,
  max(CASE WHEN uid IS NOT NULL AND st IS NOT NULL AND grp IS NOT NULL THEN tkey END) AS time_max,
  approx_count_distinct(st) AS states_about
FROM {events}
"""

CLEAN_SQL = """
SELECT {distinct} uid, ts, st, grp, tkey FROM {events}
WHERE uid IS NOT NULL AND ts IS NOT NULL AND st IS NOT NULL AND grp IS NOT NULL
"""

COUNTS_SQL = """
WITH clean AS ({clean}),
ordered AS (
  SELECT st, grp, tkey,
    LAG(st) OVER w AS prev_st,
    LAG(tkey) OVER w AS prev_tkey,
    LEAD(tkey) OVER w AS next_tkey,
    ROW_NUMBER() OVER w AS pos
  FROM clean
  WINDOW w AS (PARTITION BY uid ORDER BY tkey)
),
marked AS (
  SELECT st, grp,
    CASE WHEN pos > 1 THEN prev_st END AS from_st,
    CASE WHEN pos = 1 THEN st END AS first_st,
    CASE WHEN next_tkey IS NULL THEN pos END AS seq_length,
    CASE WHEN pos <= {slot_limit} THEN pos END AS slot,
    CASE WHEN prev_tkey = tkey THEN 1 ELSE 0 END AS tie{windows}
  FROM ordered
)
SELECT from_st, st, first_st, grp, seq_length, slot{window_names},
  count(*) AS n, sum(tie) AS ties,
  GROUPING(from_st) AS g_from, GROUPING(st) AS g_st, GROUPING(first_st) AS g_first, GROUPING(grp) AS g_grp,
  GROUPING(seq_length) AS g_length, GROUPING(slot) AS g_slot{window_groupings}
FROM marked
GROUP BY GROUPING SETS ((from_st, st), (first_st), (grp, st), (seq_length), (slot, st){window_sets}, ())
"""

TIE_SQL = """
SELECT uid, min(ts) AS ts, count(*) AS n FROM ({clean}) AS clean
GROUP BY uid, tkey HAVING count(*) > 1 ORDER BY uid, tkey LIMIT 1
"""

DUPLICATES_SQL = """
SELECT count(*) - (SELECT count(*) FROM (SELECT DISTINCT uid, ts, st, grp FROM ({clean}) AS c) AS d) AS duplicates
FROM ({clean}) AS clean
"""


@dataclass(frozen=True)
class Columns:
    """Which source columns are the user, the time, the state and (optionally) the group, and how times are read."""

    user: str = "user"
    time: str = "time"
    state: str = "state"
    group: str | None = None
    time_format: str | None = None

    def roles(self) -> dict[str, str]:
        out = {"user": self.user, "time": self.time, "state": self.state}
        if self.group is not None:
            out["group"] = self.group
        return out


@dataclass(frozen=True)
class Column:
    """A source column: its name as stored and its kind (int, float, bool, text, csv, timestamp, date, other)."""

    name: str
    kind: str
    unit: str | None = None  # timestamps: "s", "ms", "us" or "ns"
    utc: bool = False  # timestamps: time-zone aware


class SqlEngine:
    """What DuckDB and Spark share: building the ``events`` view from typed columns, running the queries.

    A subclass reads the source (``_open``), says how to quote a name, match a regular expression,
    turn ISO or formatted text into µs since 1970 (``_iso_key``, ``_format_key``), typed times into
    keys (``_epoch``) and how to create the view and run a query.
    """

    name = "sql"
    events = "events"
    raw = "raw"
    string_type = "VARCHAR"

    def __init__(self) -> None:
        self.label = "the data"
        self.time_unit: str | None = None
        self.time_utc = False
        self.bad_time = "is not a date/time"  # why a time that cannot be read is refused
        self.columns: Columns | None = None

    # --- dialect hooks -------------------------------------------------------------------------------------------

    def query(self, sql: str) -> pa.Table:
        raise NotImplementedError

    def _open(self, source: object) -> list[Column]:
        raise NotImplementedError

    def _create_view(self, select: str) -> None:
        raise NotImplementedError

    def _quote(self, name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    def _matches(self, expr: str, pattern: str) -> str:
        raise NotImplementedError

    def _iso_key(self, expr: str) -> str:
        raise NotImplementedError

    def _format_key(self, expr: str, fmt: str) -> str:
        raise NotImplementedError

    def _epoch(self, expr: str, column: Column) -> str:
        raise NotImplementedError

    # --- shared --------------------------------------------------------------------------------------------------

    def register(self, source: object, columns: Columns) -> None:
        """Read ``source`` and create the view ``events(uid, ts, st, grp, tkey)`` of the chosen ``columns``.

        One probing scan (only when a column is CSV text or times are text) decides the types.
        """
        check_time_format(columns.time_format)
        present = self._open(source)
        found = _match_columns(present, columns.roles(), self.label)
        probe = self._probe(found, columns)
        uid = self._value(found["user"], probe, "user")
        st = self._value(found["state"], probe, "state")
        grp = self._value(found["group"], probe, "group") if "group" in found else "'all'"
        ts, tkey = self._time(found["time"], columns, probe)
        self.columns = columns
        self._create_view(f"SELECT {uid} AS uid, {ts} AS ts, {st} AS st, {grp} AS grp, {tkey} AS tkey FROM {self.raw}")

    def _time_text(self, column: Column) -> str:
        return f"trim(CAST({self._quote(column.name)} AS {self.string_type}))"

    def _probe(self, found: dict[str, Column], columns: Columns) -> dict[str, Any]:
        """Counts that decide the types: for CSV text, how many values are integers or numbers; for text
        times, the same and the order-deciding counts of numeric dates (puffer_core.data.times)."""
        parts = []
        for role, column in found.items():
            text_time = role == "time" and columns.time_format is None and column.kind in ("text", "csv")
            if column.kind != "csv" and not text_time:
                continue
            text = self._time_text(column) if role == "time" else f"ltrim({self._quote(column.name)})"
            parts += [
                f"count({text}) AS {role}_n",
                f"sum(CASE WHEN {self._matches(text, '^[+-]?[0-9]+$')} THEN 1 ELSE 0 END) AS {role}_ints",
                f"count(try_cast({text} AS DOUBLE)) AS {role}_numbers",
            ]
        time = found["time"]
        if columns.time_format is None and time.kind in ("text", "csv"):
            text = self._time_text(time)
            numeric = self._matches(text, NUMERIC_PATTERN)
            first = f"try_cast(regexp_extract({text}, '{NUMERIC_PATTERN}', 1) AS INT)"
            second = f"try_cast(regexp_extract({text}, '{NUMERIC_PATTERN}', 2) AS INT)"
            conditions = {
                "count": numeric,
                "first_big": f"{numeric} AND {first} > 12",
                "second_big": f"{numeric} AND {second} > 12",
                "different": f"{numeric} AND {first} <> {second}",
            }
            for key, condition in conditions.items():
                parts.append(f"sum(CASE WHEN {condition} THEN 1 ELSE 0 END) AS dates_{key}")
                if key != "count":
                    parts.append(f"min(CASE WHEN {condition} THEN {text} END) AS dates_example_{key}")
        if not parts:
            return {}
        return self.query(f"SELECT {', '.join(parts)} FROM {self.raw}").to_pylist()[0]

    def _value(self, column: Column, probe: dict[str, Any], role: str) -> str:
        """A user, state or group column: CSV text typed like pandas (integers, numbers, else text), NaN as empty."""
        name = self._quote(column.name)
        if column.kind == "float":
            return f"CASE WHEN isnan({name}) THEN NULL ELSE {name} END"
        if column.kind != "csv":
            return name
        text = f"ltrim({name})"
        n = probe[f"{role}_n"] or 0
        if n and probe[f"{role}_ints"] == n:
            return f"try_cast({text} AS BIGINT)"
        if n and probe[f"{role}_numbers"] == n:
            double = f"try_cast({text} AS DOUBLE)"
            return f"CASE WHEN isnan({double}) THEN NULL ELSE {double} END"
        return text

    def _time(self, column: Column, columns: Columns, probe: dict[str, Any]) -> tuple[str, str]:
        """The time as stored (for messages) and its exact key: numbers, timestamps in their unit, or text read once."""
        name = self._quote(column.name)
        fmt = columns.time_format
        if column.kind == "timestamp" and fmt is None:
            self.time_unit, self.time_utc = column.unit, column.utc
            return name, self._epoch(name, column)
        if column.kind == "date" and fmt is None:
            self.time_unit, self.time_utc = "us", True
            return name, self._epoch(name, column)
        if column.kind in ("int", "bool") and fmt is None:
            return name, f"CAST({name} AS BIGINT)"
        if column.kind == "float" and fmt is None:
            value = f"CASE WHEN isnan({name}) THEN NULL ELSE {name} END"
            self.bad_time = "is not a finite number"
            return value, self._finite(value)
        if column.kind not in ("text", "csv", "int", "float"):
            raise DataError(f"the time column '{columns.time}' of {self.label} holds {column.kind} values, not times")
        text = self._time_text(column)
        self.time_unit, self.time_utc = "us", True
        if fmt is not None and fmt not in (DAY_FIRST, MONTH_FIRST):
            return name, self._iso_key(text) if fmt == ISO8601 else self._format_key(text, fmt)
        if fmt is None:
            n = probe["time_n"] or 0
            if n and probe["time_numbers"] == n:
                self.time_unit, self.time_utc = None, False
                if probe["time_ints"] == n:
                    return name, f"try_cast({text} AS BIGINT)"
                self.bad_time = "is not a finite number"
                return name, self._finite(f"try_cast({text} AS DOUBLE)")
            dates = NumericDates(
                **{key[6:]: (value or 0) if "example" not in key else value
                   for key, value in probe.items() if key.startswith("dates_")}
            )
            fmt = numeric_order(dates, columns.time)
        return name, self._text_key(text, fmt)

    def _finite(self, expr: str) -> str:
        infinite = "(CAST('Infinity' AS DOUBLE), CAST('-Infinity' AS DOUBLE))"
        return f"CASE WHEN {expr} IN {infinite} THEN NULL ELSE {expr} END"

    def _canonical(self, text: str, pattern: str, year: int, month: int, day: int) -> str:
        """``YYYY-MM-DD HH:MM:SS.ffffff`` from the groups of ``pattern`` (NUMERIC_PATTERN's layout), as SQL."""

        def part(i: int, default: str) -> str:
            got = f"regexp_extract({text}, '{pattern}', {i})"
            return f"CASE WHEN {got} = '' THEN '{default}' ELSE {got} END"

        fraction = f"rpad(substr({part(9, '.')}, 2), 6, '0')"
        return (
            f"concat({part(year, '')}, '-', lpad({part(month, '')}, 2, '0'), '-', lpad({part(day, '')}, 2, '0'),"
            f" ' ', lpad({part(5, '0')}, 2, '0'), ':', {part(6, '00')}, ':', {part(8, '00')}, '.', {fraction})"
        )

    def _text_key(self, text: str, order: str | None) -> str:
        """µs key of text times read as puffer_core.data.times says (ISO, numeric dates in ``order``, month names)."""
        branches = [f"WHEN {self._matches(text, ISO_PATTERN)} THEN {self._iso_key(text)}"]
        if order is not None:
            day, month = (1, 2) if order == DAY_FIRST else (2, 1)
            canonical = self._canonical(text, NUMERIC_PATTERN, 3, month, day)
            branches.append(f"WHEN {self._matches(text, NUMERIC_PATTERN)} THEN {self._iso_key(canonical)}")
        canonical = self._canonical(text, YEAR_FIRST_PATTERN, 1, 2, 3)
        branches.append(f"WHEN {self._matches(text, YEAR_FIRST_PATTERN)} THEN {self._iso_key(canonical)}")
        named = ", ".join(self._format_key(text, f) for f in MONTH_NAME_FORMATS)
        branches.append(f"WHEN {self._matches(text, MONTH_NAME_PATTERN)} THEN coalesce({named})")
        return "CASE " + " ".join(branches) + " END"


def _match_columns(present: list[Column], wanted: dict[str, str], label: str) -> dict[str, Column]:
    names = [c.name.strip() for c in present]
    found: dict[str, Column] = {}
    missing = []
    for role, name in wanted.items():
        key = str(name).strip()
        if names.count(key) > 1:
            raise DataError(f"{label} has more than one column named '{key}'; rename them so that each name is unique")
        if key in names:
            found[role] = present[names.index(key)]
        else:
            missing.append(f"{role} column '{name}'")
    if missing:
        raise DataError(
            f"{label} has no {' and no '.join(missing)}; its columns are {preview_names(names)}."
            " Choose the columns with user=…, time=…, state=… (and group=…)"
        )
    values = list(wanted.values())
    if len(set(values)) != len(values):
        raise DataError(f"the user, time, state and group columns must be different; got {values}")
    return found


# --- DuckDB ---------------------------------------------------------------------------------------


class DuckDBEngine(SqlEngine):
    """The embedded engine: one DuckDB connection with a memory limit and a temporary folder to spill to."""

    name = "duckdb"

    def __init__(self, memory_limit: str = DEFAULT_MEMORY_LIMIT, temp_directory: str | None = None,
                 threads: int | None = None) -> None:
        super().__init__()
        import duckdb

        self.temp_directory = temp_directory or os.path.join(tempfile.gettempdir(), f"puffer_duckdb_{os.getpid()}")
        config: dict[str, Any] = {
            "memory_limit": memory_limit,
            "temp_directory": self.temp_directory,
            "preserve_insertion_order": False,
        }
        if threads is not None:
            config["threads"] = check_whole("threads", threads, 1)
        try:
            self.con = duckdb.connect(":memory:", config=config)
        except duckdb.Error as exc:
            raise ValueError(f"DuckDB could not start with memory_limit={memory_limit!r}: {exc}") from None
        # query_progress() reports only with the progress bar on; DuckDB does not print it itself
        self.con.execute("SET enable_progress_bar = true")
        self.con.execute("SET enable_progress_bar_print = false")
        try:  # text and naive times are UTC (without the ICU extension DuckDB has no other time zone)
            self.con.execute("SET TimeZone = 'UTC'")
        except duckdb.Error:
            pass
        self._error = duckdb.Error

    def query(self, sql: str) -> pa.Table:
        try:
            return self.con.sql(sql).to_arrow_table()
        except self._error as exc:
            raise DataError(f"the query on {self.label} failed: {_first_line(exc)[:400]}") from None

    def query_progress(self) -> float:
        return float(self.con.query_progress())

    def _create_view(self, select: str) -> None:
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW {self.events} AS {select}")

    def _matches(self, expr: str, pattern: str) -> str:
        return f"regexp_matches({expr}, '{pattern}')"

    def _iso_key(self, expr: str) -> str:
        return f"epoch_us(try_cast({expr} AS TIMESTAMPTZ))"

    def _format_key(self, expr: str, fmt: str) -> str:
        return f"epoch_us(try_strptime({expr}, '{fmt.replace(chr(39), chr(39) * 2)}'))"

    def _epoch(self, expr: str, column: Column) -> str:
        if column.kind == "date":
            return f"epoch_us(CAST({expr} AS TIMESTAMP))"
        return {"s": f"CAST(epoch({expr}) AS BIGINT)", "ms": f"epoch_ms({expr})", "ns": f"epoch_ns({expr})"}.get(
            column.unit or "us", f"epoch_us({expr})"
        )

    def _open(self, source: object) -> list[Column]:
        if isinstance(source, (str, Path)) or (
            isinstance(source, (list, tuple)) and source and all(isinstance(s, (str, Path)) for s in source)
        ):
            files = _expand(source)
            self.label = _files_label(source, files)
            listed = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"
            if all(f.lower().endswith(PARQUET_SUFFIXES) for f in files):
                relation = f"read_parquet({listed})"
                csv = False
            elif all(f.lower().endswith(CSV_SUFFIXES) for f in files):
                nulls = "[" + ", ".join("'" + n.replace("'", "''") + "'" for n in NULL_STRINGS) + "]"
                relation = f"read_csv({listed}, all_varchar = true, header = true, nullstr = {nulls})"
                csv = True
            else:
                raise DataError(
                    f"{self.label}: give Parquet (.parquet, .pq) or CSV (.csv, .tsv, .txt, optionally .gz) files,"
                    " all of one kind"
                )
            self.con.execute(f"CREATE OR REPLACE TEMP VIEW {self.raw} AS SELECT * FROM {relation}")
        else:
            table, csv, self.label = arrow_source(source)
            self.con.register("puffer_source", table)
            self.con.execute(f"CREATE OR REPLACE TEMP VIEW {self.raw} AS SELECT * FROM puffer_source")
        described = self.query(f"DESCRIBE SELECT * FROM {self.raw}").to_pylist()
        return [_duckdb_column(row["column_name"], row["column_type"], csv) for row in described]


def _duckdb_column(name: str, type_name: str, csv: bool) -> Column:
    kind = type_name.upper()
    if csv and kind == "VARCHAR":
        return Column(name, "csv")
    if kind.startswith("TIMESTAMP"):
        unit = {"TIMESTAMP_S": "s", "TIMESTAMP_MS": "ms", "TIMESTAMP_NS": "ns"}.get(kind, "us")
        return Column(name, "timestamp", unit, "TIME ZONE" in kind)
    if kind == "DATE":
        return Column(name, "date")
    if kind in ("BIGINT", "INTEGER", "SMALLINT", "TINYINT", "UBIGINT", "UINTEGER", "USMALLINT", "UTINYINT", "HUGEINT"):
        return Column(name, "int")
    if kind in ("DOUBLE", "FLOAT", "REAL") or kind.startswith("DECIMAL"):
        return Column(name, "float")
    if kind == "BOOLEAN":
        return Column(name, "bool")
    if kind == "VARCHAR":
        return Column(name, "text")
    return Column(name, kind.lower())


def _expand(source: str | Path | Sequence[str | Path]) -> list[str]:
    """The files a path, folder (its Parquet/CSV files, recursively) or glob names, sorted; DataError if none."""
    items = [source] if isinstance(source, (str, Path)) else list(source)
    files: list[str] = []
    for item in items:
        text = str(item)
        path = Path(text)
        if path.is_dir():
            suffixes = PARQUET_SUFFIXES + CSV_SUFFIXES
            found = sorted(str(p) for p in path.rglob("*") if p.is_file() and p.name.lower().endswith(suffixes))
            if not found:
                raise DataError(f"the folder '{text}' has no Parquet or CSV files")
            files += found
        elif any(ch in text for ch in "*?["):
            found = sorted(glob.glob(text, recursive=True))
            if not found:
                raise DataError(f"no file matches '{text}'")
            files += found
        elif path.is_file():
            files.append(text)
        else:
            raise DataError(f"the file '{text}' does not exist")
    return files


def _files_label(source: object, files: list[str]) -> str:
    if len(files) == 1:
        return f"the file '{Path(files[0]).name}'"
    return f"the {len(files):,} files of '{source}'" if isinstance(source, (str, Path)) else f"{len(files):,} files"


@dataclass(frozen=True, eq=False)
class ParsedTable:
    """A source parsed in memory: the Arrow table, whether its columns are CSV text (typed like pandas when
    loaded), and how messages name it."""

    table: pa.Table
    csv: bool
    label: str

    @property
    def columns(self) -> list[str]:
        return [name.strip() for name in self.table.column_names]


def parsed_size(data: bytes, name: str | None = None) -> int:
    """An estimate, before parsing, of the bytes the Arrow table of ``data`` will take (Parquet: its
    uncompressed size; CSV: the text plus offsets and validity per cell)."""
    import pyarrow.parquet as pq

    if data[:4] == b"PAR1" or (name and name.lower().endswith(PARQUET_SUFFIXES)):
        try:
            meta = pq.ParquetFile(io.BytesIO(data)).metadata
        except (pa.ArrowException, OSError, ValueError):
            return len(data)
        return sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    factor = 4 if data[:2] == b"\x1f\x8b" else 1  # gzip: text is about four times larger
    return int(factor * len(data) * 1.6)


def parse_upload(source: object) -> ParsedTable:
    """Bytes or a file-like object (an upload) parsed in memory with pyarrow, never written to disk.

    Parquet, or CSV read as text (any separator, gzip, UTF-8/UTF-16/Latin-1, as
    :func:`~puffer_core.data.readers.load_sequences` reads it; empty cells and NA-like words are missing).
    """
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    if isinstance(source, (bytes, bytearray, memoryview)):
        data, name = bytes(source), None
    elif hasattr(source, "getvalue") or hasattr(source, "read"):
        name = getattr(source, "name", None)
        raw = source.getvalue() if hasattr(source, "getvalue") else source.read()
        data = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    else:
        raise DataError(
            "the data source must be a path or glob, a list of paths, an Arrow table, a pandas DataFrame, bytes or"
            f" an uploaded file; got {type(source).__name__}"
        )
    label = f"the file '{name}'" if name else "the data"
    if not data:
        raise DataError(f"{label} is empty (0 bytes)")
    if data[:4] == b"PAR1" or (name and str(name).lower().endswith(PARQUET_SUFFIXES)):
        try:
            return ParsedTable(pq.read_table(io.BytesIO(data)), False, label)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise DataError(f"{label} could not be read as Parquet: {_first_line(exc)[:300]}") from None
    options = csv_format(data, label)

    def stream() -> Any:
        buffer = pa.BufferReader(data)
        return pa.CompressedInputStream(buffer, "gzip") if options["compression"] == "gzip" else buffer

    encoding = "utf8" if options["encoding"] in ("utf-8", "utf-8-sig") else options["encoding"]
    read = pacsv.ReadOptions(encoding=encoding, block_size=1 << 22)
    parse = pacsv.ParseOptions(delimiter=options["sep"])
    try:
        header = pacsv.open_csv(stream(), read_options=read, parse_options=parse).schema.names
        convert = pacsv.ConvertOptions(
            column_types={n: pa.string() for n in header}, null_values=list(NULL_STRINGS), strings_can_be_null=True
        )
        table = pacsv.read_csv(stream(), read_options=read, parse_options=parse, convert_options=convert)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise DataError(f"{label} could not be read as CSV: {_first_line(exc)[:300]}") from None
    if table.num_rows == 0:
        raise DataError(f"{label} has a header but no rows of data (columns: {preview_names(header)})")
    return ParsedTable(table, True, label)


def arrow_source(source: object) -> tuple[pa.Table, bool, str]:
    """An in-memory source as (Arrow table, whether its columns are CSV text, label for messages).

    Arrow tables and pandas DataFrames are used as they are; bytes and file-like objects are
    parsed with :func:`parse_upload`; a :class:`ParsedTable` is used as parsed.
    """
    if isinstance(source, ParsedTable):
        return source.table, source.csv, source.label
    if isinstance(source, pa.Table):
        return source, False, "the table"
    if isinstance(source, pd.DataFrame):
        try:
            return pa.Table.from_pandas(source, preserve_index=False), False, "the table"
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise DataError(f"the table could not be converted for the SQL engine: {exc}") from None
    parsed = parse_upload(source)
    return parsed.table, parsed.csv, parsed.label


# --- Spark ----------------------------------------------------------------------------------------


class SparkEngine(SqlEngine):
    """Spark SQL in the user's SparkSession: a table name, a path or glob (Parquet or CSV), or a DataFrame.

    Queries run with the session time zone set to UTC (restored afterwards), so that text and
    naive times are read as UTC, as numpy and DuckDB read them.
    """

    name = "spark"
    string_type = "STRING"

    def __init__(self, spark: Any) -> None:
        super().__init__()
        self.spark = spark
        self.events = f"puffer_events_{id(self):x}"
        self.raw = f"puffer_raw_{id(self):x}"

    def query(self, sql: str) -> pa.Table:
        from pyspark.errors import PySparkException

        with self._utc():
            try:
                return self.spark.sql(sql).toArrow()
            except PySparkException as exc:
                raise DataError(f"the Spark query on {self.label} failed: {_first_line(exc)[:400]}") from None

    @contextlib.contextmanager
    def _utc(self) -> Iterator[None]:
        conf = self.spark.conf
        zone = conf.get("spark.sql.session.timeZone")
        conf.set("spark.sql.session.timeZone", "UTC")
        try:
            yield
        finally:
            conf.set("spark.sql.session.timeZone", zone)

    def _quote(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def _matches(self, expr: str, pattern: str) -> str:
        return f"({expr} RLIKE '{pattern}')"

    def _iso_key(self, expr: str) -> str:
        return f"unix_micros(try_cast({expr} AS TIMESTAMP))"

    def _format_key(self, expr: str, fmt: str) -> str:
        return f"unix_micros(try_to_timestamp({expr}, '{java_pattern(fmt)}'))"

    def _epoch(self, expr: str, column: Column) -> str:
        return f"unix_micros(CAST({expr} AS TIMESTAMP))"

    def _create_view(self, select: str) -> None:
        with self._utc():
            self.spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {self.events} AS {select}")

    def _open(self, source: object) -> list[Column]:
        from pyspark.errors import PySparkException
        from pyspark.sql import DataFrame

        csv = False
        try:
            if isinstance(source, DataFrame):
                frame, self.label = source, "the Spark DataFrame"
            elif isinstance(source, str) and _is_table(self.spark, source):
                frame, self.label = self.spark.table(source), f"the table '{source}'"
            elif isinstance(source, (str, Path)):
                text = str(source)
                self.label = f"'{text}'"
                if text.lower().rstrip("/*").endswith(CSV_SUFFIXES):
                    frame, csv = self.spark.read.csv(text, header=True, inferSchema=False), True
                else:
                    frame = self.spark.read.parquet(text)
            else:
                raise DataError(
                    "with a Spark session, the source must be a table name, a path or glob, or a Spark DataFrame;"
                    f" got {type(source).__name__}"
                )
        except PySparkException as exc:
            message = _first_line(exc)
            if "TIMESTAMP(NANOS" in message:
                raise DataError(
                    f"Spark cannot read the nanosecond timestamps of {self.label} ({message[:200]}). Convert the time"
                    " column to microseconds (e.g. pyarrow: table.set_column(i, 'time', table['time'].cast("
                    "pa.timestamp('us'))), or in DuckDB: COPY (SELECT * REPLACE (CAST(time AS TIMESTAMP) AS time)"
                    " FROM 'in.parquet') TO 'out.parquet'), or read it with engine='duckdb'"
                ) from None
            raise DataError(f"Spark could not read {self.label}: {message[:400]}") from None
        frame.createOrReplaceTempView(self.raw)
        return [_spark_column(field.name, field.dataType.typeName(), csv) for field in frame.schema.fields]


def _first_line(exc: BaseException) -> str:
    return next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)


def _is_table(spark: Any, name: str) -> bool:
    """Whether ``name`` is a table of the session's catalog (a path never is)."""
    from pyspark.errors import PySparkException

    if "/" in name or "*" in name or name.lower().endswith(PARQUET_SUFFIXES + CSV_SUFFIXES):
        return False
    try:
        return bool(spark.catalog.tableExists(name))
    except PySparkException:
        return False


def _spark_column(name: str, type_name: str, csv: bool) -> Column:
    if type_name == "string":
        return Column(name, "csv" if csv else "text")
    if type_name in ("timestamp", "timestamp_ntz"):
        return Column(name, "timestamp", "us", type_name == "timestamp")
    if type_name == "date":
        return Column(name, "date")
    if type_name in ("long", "integer", "short", "byte"):
        return Column(name, "int")
    if type_name in ("double", "float", "decimal"):
        return Column(name, "float")
    if type_name == "boolean":
        return Column(name, "bool")
    return Column(name, type_name)


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


# --- load_stats -----------------------------------------------------------------------------------


def _window_column(r: int, edges: np.ndarray) -> str:
    """The window (0..r−1) of CAST(tkey AS DOUBLE): a balanced CASE tree over the inner edges (window_of)."""
    key = "CAST(tkey AS DOUBLE)"

    def tree(lo: int, hi: int) -> str:
        if lo == hi:
            return str(lo)
        mid = (lo + hi + 1) // 2
        edge = f"CAST('{float(edges[mid])!r}' AS DOUBLE)"
        return f"CASE WHEN {key} >= {edge} THEN {tree(mid, hi)} ELSE {tree(lo, mid - 1)} END"

    return tree(0, r - 1)


def counts_sql(engine: SqlEngine, windows: dict[int, np.ndarray], slot_limit: int, drop_duplicates: bool) -> str:
    """The one query that counts everything (COUNTS_SQL filled for ``engine``'s view and the windows asked for)."""
    clean = CLEAN_SQL.format(distinct="DISTINCT" if drop_duplicates else "", events=engine.events)
    return COUNTS_SQL.format(
        clean=clean,
        slot_limit=slot_limit,
        windows="".join(f",\n    {_window_column(r, e)} AS win_{r}" for r, e in windows.items()),
        window_names="".join(f", win_{r}" for r in windows),
        window_groupings="".join(f", GROUPING(win_{r}) AS g_win_{r}" for r in windows),
        window_sets="".join(f", (win_{r}, grp, st)" for r in windows),
    )


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
    """
    wanted = check_windows(windows)
    max_states = check_whole("max_states", max_states, minimum=2)
    for flag, value in (("drop_missing", drop_missing), ("drop_duplicates", drop_duplicates)):
        if not isinstance(value, bool):
            raise ValueError(f"{flag} must be True or False; got {value!r}")
    report: Progress | None = print_progress if progress is True else (progress or None)
    if report is not None and not callable(report):
        raise ValueError("progress must be True, False, None or a function progress(fraction, message)")
    sql = make_engine(engine, memory_limit, temp_directory)
    columns = Columns(user, time, state, group, check_time_format(time_format))
    with _Reporter(sql, report, 0.0, 0.05, "reading the columns and the time format"):
        sql.register(source, columns)
    with _Reporter(sql, report, 0.05, 0.3, f"counting the rows of {sql.label} ({sql.name})"):
        profile = sql.query(PROFILE_SQL.format(events=sql.events)).to_pylist()[0]
    _check_profile(profile, columns, sql.label, drop_missing, max_states, sql.bad_time)
    time_min, time_max = profile["time_min"], profile["time_max"]
    check_window_range(time_min, time_max, wanted)
    edges = {r: window_edges(time_min, time_max, r) for r in wanted}
    slot_limit = MAX_SLOT_CELLS // 2  # every step is counted whenever T_max · K ≤ MAX_SLOT_CELLS (K ≥ 2)
    with _Reporter(sql, report, 0.3, 0.98, f"sorting each user's entries by time and counting ({sql.name})"):
        table = sql.query(counts_sql(sql, edges, slot_limit, drop_duplicates))
    duplicates = 0
    if drop_duplicates:
        clean = CLEAN_SQL.format(distinct="", events=sql.events)
        duplicates = int(sql.query(DUPLICATES_SQL.format(clean=clean)).to_pylist()[0]["duplicates"])
    stats = _assemble(table, sql, columns, profile, wanted, drop_missing, drop_duplicates, duplicates, max_states)
    if report is not None:
        report(1.0, f"done: {stats.n_entries:,} entries of {stats.n_users:,} users, {stats.n_states} states")
    return stats


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
    profile = sql.query(PROFILE_SQL.format(events=sql.events)).to_pylist()[0]
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
) -> SequenceStats:
    def part(*grouped: str) -> pa.Table:
        flags = ["g_from", "g_st", "g_first", "g_grp", "g_length", "g_slot", *(f"g_win_{r}" for r in windows)]
        mask = np.ones(table.num_rows, dtype=bool)
        for flag in flags:
            want = 0 if flag in grouped else 1
            mask &= table.column(flag).to_numpy() == want
        return table.filter(pa.array(mask))

    total = part()
    ties = int(total.column("ties")[0].as_py() or 0)
    if ties:
        clean = CLEAN_SQL.format(distinct="DISTINCT" if drop_duplicates else "", events=sql.events)
        example = sql.query(TIE_SQL.format(clean=clean)).to_pandas().iloc[0]
        raise DataError(
            f"{ties:,} row(s) repeat a (user, time) pair already present; for example user {_show(example['uid'])} at"
            f" time {_show(example['ts'])}. Each user can be in only one state at a time: remove the duplicates or make"
            " the times distinct."
        )
    by_group = part("g_grp", "g_st")
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

    moves = part("g_from", "g_st")
    moves = moves.filter(pa.compute.is_valid(moves.column("from_st")))
    transitions = np.zeros((k, k), dtype=np.int64)
    np.add.at(
        transitions,
        (state_coder.codes(moves.column("from_st")), state_coder.codes(moves.column("st"))),
        moves.column("n").to_numpy(),
    )
    firsts = part("g_first")
    firsts = firsts.filter(pa.compute.is_valid(firsts.column("first_st")))
    first_states = np.zeros(k, dtype=np.int64)
    np.add.at(first_states, state_coder.codes(firsts.column("first_st")), firsts.column("n").to_numpy())
    lengths = part("g_length")
    lengths = lengths.filter(pa.compute.is_valid(lengths.column("seq_length")))
    order = np.argsort(lengths.column("seq_length").to_numpy())
    length_values = lengths.column("seq_length").to_numpy()[order]
    length_users = lengths.column("n").to_numpy()[order]
    longest = int(length_values[-1])
    slot_counts = None
    if longest * k <= MAX_SLOT_CELLS:
        slots = part("g_slot", "g_st")
        slots = slots.filter(pa.compute.is_valid(slots.column("slot")))
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
    )


def _show(value: object) -> str:
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)
