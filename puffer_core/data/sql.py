"""The SQL both engines run, and the engine base class that holds everything dialect-specific
(docs/math.md §1, §6, §7).

The queries (:data:`PROFILE_SQL`, :data:`COUNTS_SQL`, :data:`TIE_SQL`) are the same text for both engines;
an engine's ``register(source, columns)`` reads files, types and times written as text one way per column
(:mod:`puffer_core.data.times`) into a view ``events(uid, ts, st, grp, tkey)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ..errors import DataError
from .columns import likely_hint
from .sequences import BLANK_PATTERN, preview_names
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

# One scan before the sort, grouped by (group, state): rows, cells, times that cannot be read and the time range
# per pair, summed on the driver (a pair with an empty group or state is all missing rows); the pairs are the
# entries per group and state and give the number of states.  More than {group_rows} pairs (a column that is no
# category) come back as nothing: PROFILE_TOTAL_SQL then.
PROFILE_SQL = """
SELECT * FROM (
  SELECT grp AS p_grp, st AS p_st,
    count(*) AS n_rows, count(uid) AS n_user, count(ts) AS n_time,
    sum(CASE WHEN uid IS NULL OR ts IS NULL THEN 1 ELSE 0 END) AS n_gaps,
    sum(CASE WHEN ts IS NOT NULL AND tkey IS NULL THEN 1 ELSE 0 END) AS bad_times,
    min(CASE WHEN ts IS NOT NULL AND tkey IS NULL THEN CAST(ts AS STRING) END) AS bad_time_example,
    min(CASE WHEN uid IS NOT NULL THEN tkey END) AS time_min,
    max(CASE WHEN uid IS NOT NULL THEN tkey END) AS time_max,
    count(*) OVER () AS profile_rows
  FROM {events}
  GROUP BY grp, st
) AS profile
WHERE profile_rows <= {group_rows}
"""

# the same totals in one row, with an estimate of the number of states (HyperLogLog), when there are too many pairs
PROFILE_TOTAL_SQL = """
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
  SELECT st, {grp}tkey,
    LAG(st) OVER w AS prev_st,
    LEAD(tkey) OVER w AS next_tkey,
    ROW_NUMBER() OVER w AS pos
  FROM clean
  WINDOW w AS (PARTITION BY uid ORDER BY tkey)
),
marked AS (
  SELECT st, {grp}
    CASE WHEN pos > 1 THEN prev_st END AS from_st,
    CASE WHEN next_tkey IS NULL THEN pos END AS seq_length,
    CASE WHEN pos <= {slot_limit} THEN pos END AS slot,
    CASE WHEN next_tkey = tkey THEN 1 ELSE 0 END AS tie{windows}
  FROM ordered
),
counted AS (
  SELECT from_st, st, {grp}seq_length, slot{window_names},
    count(*) AS n, sum(tie) AS ties,
    GROUPING(from_st) AS g_from, {g_grp} AS g_grp, GROUPING(slot) AS g_slot{window_groupings}
  FROM marked
  GROUP BY GROUPING SETS ((from_st, st), (slot, st, seq_length){group_sets})
),
sized AS (
  SELECT *, max(seq_length) OVER () AS longest, {n_states} AS n_states,
    ROW_NUMBER() OVER (PARTITION BY g_slot, seq_length ORDER BY st, slot) AS length_rank,
    CAST(sum(n) OVER (PARTITION BY g_slot, seq_length) AS BIGINT) AS length_users
  FROM counted
)
SELECT * FROM sized
WHERE g_slot = 1 OR longest * n_states <= {slot_cells} OR (seq_length IS NOT NULL AND length_rank = 1)
"""

# the per-step histograms alone, when COUNTS_SQL's slot_limit turned out too small (SLOT_SQL's rows ≤ slot_cells)
SLOT_SQL = """
SELECT slot, st, count(*) AS n FROM (
  SELECT st, ROW_NUMBER() OVER (PARTITION BY uid ORDER BY tkey) AS slot FROM ({clean}) AS clean
) AS ordered
GROUP BY slot, st
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
        # what the queries so far spilled to disk and the most memory they held (None: the engine does not say)
        self.spilled_bytes: int | None = None
        self.peak_memory_bytes: int | None = None

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

    def _iso_text(self, expr: str) -> str:
        """ISO 8601 text as this engine's cast reads it (the same instant as numpy reads it): as it is by default."""
        return expr

    def _distinct_count(self, expr: str) -> str:
        """The number of distinct non-null values of ``expr`` over the whole (small) result, as a window."""
        return f"count(DISTINCT {expr}) OVER ()"

    def _prepare(self, found: dict[str, Column]) -> None:
        """Settings the chosen columns need before the view is made (none by default)."""

    def _state_type(self, labels: Sequence[str]) -> str | None:
        """A compact type holding exactly these text states (an enumeration), for the counting query's sort and
        groupings; None: the states stay as they are (the default)."""
        return None

    # --- shared --------------------------------------------------------------------------------------------------

    def register(self, source: object, columns: Columns) -> None:
        """Read ``source`` and create the view ``events(uid, ts, st, grp, tkey)`` of the chosen ``columns``.

        One probing scan (only when a column is CSV text or times are text) decides the types.
        """
        check_time_format(columns.time_format)
        present = self._open(source)
        found = match_columns(present, columns.roles(), self.label)
        self._prepare(found)
        probe = self._probe(found, columns)
        uid = self._value(found["user"], probe, "user")
        st = self._value(found["state"], probe, "state")
        grp = self._value(found["group"], probe, "group") if "group" in found else "'all'"
        ts, tkey = self._time(found["time"], columns, probe)
        self.columns = columns
        self._create_view(f"SELECT {uid} AS uid, {ts} AS ts, {st} AS st, {grp} AS grp, {tkey} AS tkey FROM {self.raw}")

    def _time_text(self, column: Column) -> str:
        return self._blank_null(f"trim(CAST({self._quote(column.name)} AS {self.string_type}))")

    def _blank_null(self, expr: str) -> str:
        """``expr`` (text), NULL where it is empty or only blanks: a missing value (BLANK_PATTERN)."""
        # only text that is empty or starts with a blank can be blank: the pattern is matched on those alone
        blank = f"{expr} = '' OR (ascii({expr}) <= 32 AND {self._matches(expr, BLANK_PATTERN)})"
        return f"CASE WHEN {blank} THEN NULL ELSE {expr} END"

    def _probe(self, found: dict[str, Column], columns: Columns) -> dict[str, Any]:
        """Counts that decide the types: for CSV text, how many values are integers or numbers; for text
        times, the same and the order-deciding counts of numeric dates (puffer_core.data.times)."""
        parts = []
        for role, column in found.items():
            text_time = role == "time" and columns.time_format is None and column.kind in ("text", "csv")
            if column.kind != "csv" and not text_time:
                continue
            text = self._time_text(column) if role == "time" else self._blank_null(f"ltrim({self._quote(column.name)})")
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
        """A user, state or group column: CSV text typed like pandas (integers, numbers, else text); NaN and blank
        text are missing values."""
        name = self._quote(column.name)
        if column.kind == "float":
            return f"CASE WHEN isnan({name}) THEN NULL ELSE {name} END"
        if column.kind == "text":
            return self._blank_null(name)
        if column.kind != "csv":
            return name
        text = self._blank_null(f"ltrim({name})")
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
        stored = self._blank_null(name) if column.kind in ("text", "csv") else name
        self.time_unit, self.time_utc = "us", True
        if fmt is not None and fmt not in (DAY_FIRST, MONTH_FIRST):
            return stored, self._iso_key(self._iso_text(text)) if fmt == ISO8601 else self._format_key(text, fmt)
        if fmt is None:
            n = probe["time_n"] or 0
            if n and probe["time_numbers"] == n:
                self.time_unit, self.time_utc = None, False
                if probe["time_ints"] == n:
                    return stored, f"try_cast({text} AS BIGINT)"
                self.bad_time = "is not a finite number"
                return stored, self._finite(f"try_cast({text} AS DOUBLE)")
            dates = NumericDates(
                **{key[6:]: (value or 0) if "example" not in key else value
                   for key, value in probe.items() if key.startswith("dates_")}
            )
            fmt = numeric_order(dates, columns.time)
        return stored, self._text_key(text, fmt)

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
        branches = [f"WHEN {self._matches(text, ISO_PATTERN)} THEN {self._iso_key(self._iso_text(text))}"]
        if order is not None:
            day, month = (1, 2) if order == DAY_FIRST else (2, 1)
            canonical = self._canonical(text, NUMERIC_PATTERN, 3, month, day)
            branches.append(f"WHEN {self._matches(text, NUMERIC_PATTERN)} THEN {self._iso_key(canonical)}")
        canonical = self._canonical(text, YEAR_FIRST_PATTERN, 1, 2, 3)
        branches.append(f"WHEN {self._matches(text, YEAR_FIRST_PATTERN)} THEN {self._iso_key(canonical)}")
        named = ", ".join(self._format_key(text, f) for f in MONTH_NAME_FORMATS)
        branches.append(f"WHEN {self._matches(text, MONTH_NAME_PATTERN)} THEN coalesce({named})")
        return "CASE " + " ".join(branches) + " END"


def first_line(exc: BaseException) -> str:
    return next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)


# how engines name the file they failed on: DuckDB "... file '/x/y.parquet' ...", Spark "... reading file file:/x/y ..."
_FILE_IN_MESSAGE = (
    r"reading file (?:file:)?/*(/\S+?)[.]?(?:\s|$)",
    r"[Ff]ile '([^']+)'",
    r"[Ff]ile \"([^\"]+)\"",
    r"(?:file:)(/\S+?)[.,]?(?:\s|$)",
)
# words of the engines' messages about files whose columns or types differ
_SCHEMA_WORDS = ("schema", "mismatch", "cannot be converted", "PARQUET_COLUMN_DATA_TYPE_MISMATCH", "Could not convert",
                 "different types", "column count")


def read_error(label: str, message: str) -> DataError:
    """The one error for a file an engine cannot read: which file, what the engine said, and what to do."""
    named, file = label, label
    for pattern in _FILE_IN_MESSAGE:
        found = re.search(pattern, message)
        if found:
            path = found.group(1)
            file = f"the file '{path}'"
            named = file + (f" (of {label})" if Path(path).name not in label else "")
            break
    said = message.strip()[:300]
    if "PATH_NOT_FOUND" in message or "does not exist" in message or "No files found" in message:
        return DataError(f"{named} does not exist, or no file matches it ({said}). Check the path or the glob")
    if "UNABLE_TO_INFER_SCHEMA" in message:
        return DataError(
            f"{named} has no readable data: it is empty (0 bytes) or holds no rows ({said}). Give a complete Parquet"
            " or CSV file, or remove it"
        )
    if any(word.lower() in message.lower() for word in _SCHEMA_WORDS):
        return DataError(
            f"the files of {label} do not all have the same columns and types; {file} differs ({said}). Give files"
            " of one schema (or read them separately)"
        )
    return DataError(
        f"{named} could not be read: it is empty, damaged or not of the format its name says ({said}). Export it"
        " again, or remove it from the folder or glob"
    )


def match_columns(present: list[Column], wanted: dict[str, str], label: str) -> dict[str, Column]:
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
            f"{likely_hint(names, wanted)} Choose the columns with user=…, time=…, state=… (and group=…)"
        )
    values = list(wanted.values())
    if len(set(values)) != len(values):
        raise DataError(f"the user, time, state and group columns must be different; got {values}")
    return found


# --- DuckDB ---------------------------------------------------------------------------------------


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


def counts_sql(engine: SqlEngine, windows: dict[int, np.ndarray], slot_limit: int, drop_duplicates: bool,
               slot_cells: int, groups: bool, complete: bool = False, states: Sequence[str] | None = None) -> str:
    """The one query that sorts each user's entries and counts (COUNTS_SQL filled for ``engine``'s view).

    Its grouping sets: the moves ``(from_st, st)`` — transitions, and first states where ``from_st`` is NULL; the
    steps ``(slot, st, seq_length)`` — the per-step histograms and the sequence lengths at once; with ``groups``
    the entries per group and state ``(grp, st)`` (otherwise the profile counted them); one ``(win_r, grp, st)``
    per number of windows.  The per-step rows are returned only when the longest sequence times the number of
    states is at most ``slot_cells`` (only then are they kept, SequenceStats.slot_counts); otherwise one row per
    distinct length, carrying its number of users.  ``complete``: the profile found no missing value, so the
    rows are not filtered (and the group column is not even read unless it is counted).  ``states``: every text
    state the profile saw, which the engine may code compactly (``_state_type``) before sorting and grouping; the
    result then holds them as a dictionary column.
    """
    carry = groups or bool(windows)
    events = engine.events
    coded = engine._state_type(states) if states else None
    if coded is not None:
        events = f"(SELECT uid, ts, CAST(st AS {coded}) AS st, grp, tkey FROM {engine.events}) AS coded"
    if complete and not drop_duplicates:
        clean = f"SELECT uid, st, {'grp, ' if carry else ''}tkey FROM {events}"
    else:
        clean = CLEAN_SQL.format(distinct="DISTINCT" if drop_duplicates else "", events=events)
    return COUNTS_SQL.format(
        clean=clean,
        slot_limit=slot_limit,
        slot_cells=slot_cells,
        grp="grp, " if carry else "",
        g_grp="GROUPING(grp)" if carry else "1",
        group_sets=(", (grp, st)" if groups else "") + "".join(f", (win_{r}, grp, st)" for r in windows),
        n_states=engine._distinct_count("st"),
        windows="".join(f",\n    {_window_column(r, e)} AS win_{r}" for r, e in windows.items()),
        window_names="".join(f", win_{r}" for r in windows),
        window_groupings="".join(f", GROUPING(win_{r}) AS g_win_{r}" for r in windows),
    )


def slot_sql(engine: SqlEngine, drop_duplicates: bool) -> str:
    return SLOT_SQL.format(clean=CLEAN_SQL.format(distinct="DISTINCT" if drop_duplicates else "", events=engine.events))
