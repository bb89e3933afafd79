"""The embedded engine: DuckDB with a memory limit and a folder to spill to; files, folders, globs,
Arrow tables, pandas DataFrames and in-memory uploads (docs/math.md §1)."""

from __future__ import annotations

import glob
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ..errors import DataError
from ..validation import check_whole
from .sql import (
    CSV_SUFFIXES,
    DEFAULT_MEMORY_LIMIT,
    NULL_STRINGS,
    PARQUET_SUFFIXES,
    Column,
    SqlEngine,
    first_line,
    read_error,
)
from .uploads import arrow_source

SAMPLE_SECONDS = 0.25  # how often the memory and the temporary files of a running query are sampled


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
        self._duckdb = duckdb
        self.files: list[str] = []

    def query(self, sql: str) -> pa.Table:
        with _Monitor(self):
            try:
                return self.con.sql(sql).to_arrow_table()
            except self._error as exc:
                raise self._failure(exc) from None

    def _failure(self, exc: Exception) -> DataError:
        """A file that turns out unreadable while it is scanned is named; anything else is the query's failure."""
        message = first_line(exc)
        if self.files and isinstance(exc, (self._duckdb.IOException, self._duckdb.InvalidInputException)):
            return read_error(self.label, message)
        return DataError(f"the query on {self.label} failed: {message[:400]}")

    def _prepare(self, found: dict[str, Column]) -> None:
        """A float column may hold NaN, which Parquet's min/max statistics leave out: DuckDB's statistics
        propagation, trusting them, would fold ``isnan`` to false and count NaN as a value. Off for such columns."""
        if any(column.kind == "float" for column in found.values()):
            self.con.execute("SET disabled_optimizers = 'statistics_propagation'")
        if len(self.files) > 1 and all(f.lower().endswith(PARQUET_SUFFIXES) for f in self.files):
            self._same_types([column.name for column in found.values()])

    def _same_types(self, names: list[str]) -> None:
        """Parquet files whose chosen columns differ in type are refused (DuckDB would cast them to the first
        file's types without a word); a column missing from a file fails when the file is scanned."""
        listed = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in self.files) + "]"
        wanted = ", ".join("'" + n.replace("'", "''") + "'" for n in names)
        rows = self.query(
            "SELECT name, file_name, concat_ws('/', type, converted_type, logical_type) AS kind"
            f" FROM parquet_schema({listed}) WHERE name IN ({wanted}) ORDER BY name, file_name"
        ).to_pylist()
        first: dict[str, tuple[str, str]] = {}
        for row in rows:
            file, kind = first.setdefault(row["name"], (row["file_name"], row["kind"]))
            if row["kind"] != kind:
                raise DataError(
                    f"the files of {self.label} do not all have the same columns and types: the column"
                    f" '{row['name']}' is {row['kind']} in the file '{row['file_name']}' but {kind} in '{file}'."
                    " Give files of one schema (or read them separately)"
                )

    def query_progress(self) -> float:
        return float(self.con.query_progress())

    def _state_type(self, labels: Sequence[str]) -> str | None:
        """Text states as an ENUM of exactly these labels (sorted as text sorts): the sort carries one small code per
        entry instead of a string, and the groupings hash codes (benchmarks/bench_data.py measures it)."""
        if not labels or not all(isinstance(label, str) for label in labels):
            return None
        return "ENUM(" + ", ".join("'" + label.replace("'", "''") + "'" for label in sorted(labels)) + ")"

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
            files = expand_files(source)
            self.label = files_label(source, files)
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
            self.files = files
            try:  # the files' metadata are read here: an empty or damaged file fails now
                self.con.execute(f"CREATE OR REPLACE TEMP VIEW {self.raw} AS SELECT * FROM {relation}")
                described = self.con.sql(f"DESCRIBE SELECT * FROM {self.raw}").fetchall()
            except self._error as exc:
                raise read_error(self.label, first_line(exc)) from None
            return [_duckdb_column(name, type_name, csv) for name, type_name, *_ in described]
        else:
            table, csv, self.label = arrow_source(source)
            self.con.register("puffer_source", table)
            self.con.execute(f"CREATE OR REPLACE TEMP VIEW {self.raw} AS SELECT * FROM puffer_source")
        described = self.query(f"DESCRIBE SELECT * FROM {self.raw}").to_pylist()
        return [_duckdb_column(row["column_name"], row["column_type"], csv) for row in described]


class _Monitor:
    """Samples DuckDB's memory and temporary files every :data:`SAMPLE_SECONDS` while a query runs (through a
    second cursor of the same database) and keeps the largest: the engine's peak memory and bytes spilled."""

    def __init__(self, engine: DuckDBEngine) -> None:
        self.engine = engine
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _sample(self, cursor: Any) -> None:
        memory, spilled = cursor.execute(
            "SELECT sum(memory_usage_bytes), sum(temporary_storage_bytes) FROM duckdb_memory()"
        ).fetchone()
        engine = self.engine
        engine.peak_memory_bytes = max(engine.peak_memory_bytes or 0, int(memory or 0))
        engine.spilled_bytes = max(engine.spilled_bytes or 0, int(spilled or 0))

    def _poll(self) -> None:
        cursor = self.engine.con.cursor()
        try:
            while True:
                self._sample(cursor)
                if self.done.wait(SAMPLE_SECONDS):
                    break
        except self.engine._error:
            pass  # the connection was closed: the figures keep what was seen
        finally:
            cursor.close()

    def __enter__(self) -> _Monitor:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


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


def expand_files(source: str | Path | Sequence[str | Path]) -> list[str]:
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


def files_label(source: object, files: list[str]) -> str:
    if len(files) == 1:
        return f"the file '{Path(files[0]).name}'"
    return f"the {len(files):,} files of '{source}'" if isinstance(source, (str, Path)) else f"{len(files):,} files"


