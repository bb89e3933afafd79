"""Spark SQL in the user's SparkSession, classic or Spark Connect: a table name, a path or glob (Parquet or
CSV), or a DataFrame; the results come back with ``toArrow()`` (docs/math.md §1, docs/data.md)."""

from __future__ import annotations

import contextlib
import glob
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ..errors import DataError
from .sql import CSV_SUFFIXES, PARQUET_SUFFIXES, Column, SqlEngine, first_line, read_error
from .times import java_pattern

# ISO 8601 text in parts (date, hours and minutes, seconds, fraction, offset), as ISO_PATTERN reads it: Spark's
# cast wants the seconds and an offset written +HH:MM, so the text is rewritten so before it is cast
_ISO_PARTS = (
    "^([0-9]{4}-[0-9]{2}-[0-9]{2})(?:[T ]([0-9]{2}:[0-9]{2})(?::([0-9]{2})([.][0-9]{1,6})?)?"
    "(Z|[+-][0-9]{2}(?::?[0-9]{2})?)?)?$"
)
# what a Spark message says when a file cannot be read (the rest are failures of the query itself)
_FILE_ERRORS = ("FAILED_READ_FILE", "PATH_NOT_FOUND", "UNABLE_TO_INFER_SCHEMA", "CANNOT_READ_FILE",
                "is not a Parquet file", "SchemaColumnConvertNotSupported", "FileNotFoundException",
                "Could not read footer")


def _errors() -> tuple[type[BaseException], ...]:
    """The exceptions a Spark call raises: pyspark's own, and Py4J's for Java errors pyspark does not convert."""
    from pyspark.errors import PySparkException

    try:
        from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]
    except ImportError:  # a Spark Connect client without the classic driver
        return (PySparkException,)
    return (PySparkException, Py4JJavaError)


def _message(exc: BaseException) -> str:
    """The informative line of a Spark error (a Py4JJavaError's first line only names the Java call)."""
    lines = [line.strip().removeprefix(": ") for line in str(exc).splitlines()]
    for wanted in (lambda line: any(word in line for word in _FILE_ERRORS), lambda line: "Exception:" in line):
        found = next((line for line in lines if wanted(line)), None)
        if found:
            return found
    return first_line(exc)


class SparkEngine(SqlEngine):
    """Spark SQL in the user's SparkSession (classic or Connect): a table name, a path or glob (Parquet or CSV),
    or a DataFrame.

    Queries run with the session time zone set to UTC (restored afterwards), so that text and
    naive times are read as UTC, as numpy and DuckDB read them.  After each query the plan's
    metrics give the bytes spilled and the peak execution memory (:attr:`spilled_bytes`,
    :attr:`peak_memory_bytes`).
    """

    name = "spark"
    string_type = "STRING"

    def __init__(self, spark: Any) -> None:
        super().__init__()
        self.spark = spark
        self.events = f"puffer_events_{id(self):x}"
        self.raw = f"puffer_raw_{id(self):x}"
        self.connect = type(spark).__module__.startswith("pyspark.sql.connect")
        if self.connect:
            self.name = "spark connect"

    def query(self, sql: str) -> pa.Table:
        with self._utc():
            try:
                frame = self.spark.sql(sql)
                table = frame.toArrow()
            except _errors() as exc:
                message = _message(exc)
                if any(word in message for word in _FILE_ERRORS):
                    raise read_error(self.label, message) from None
                raise DataError(f"the Spark query on {self.label} failed: {message[:400]}") from None
        self._measure(frame)
        return table

    def _measure(self, frame: Any) -> None:
        """Spill and peak memory from the executed plan's metrics (sums over tasks, as Spark's UI shows them)."""
        try:
            metrics = _connect_metrics(frame) if self.connect else _classic_metrics(frame)
        except _errors() + (AttributeError, TypeError, ValueError):
            return  # a session that does not expose its plan's metrics: the figures stay unknown
        spill = sum(value for name, value in metrics if name == "spillSize")
        peak = max((value for name, value in metrics if name == "peakMemory"), default=0)
        self.spilled_bytes = (self.spilled_bytes or 0) + spill
        self.peak_memory_bytes = max(self.peak_memory_bytes or 0, peak)

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
        return f"({expr} RLIKE '{pattern.replace(chr(92), chr(92) * 2)}')"  # a backslash is an escape in Spark SQL

    def _iso_key(self, expr: str) -> str:
        return f"unix_micros(try_cast({expr} AS TIMESTAMP))"

    def _iso_text(self, expr: str) -> str:
        """``2024-01-01T10:00+02``, ``…10:00+0200``, ``…10:00Z`` as ``2024-01-01 10:00:00+02:00`` (Spark's cast
        refuses a time without seconds or an offset without a colon); other text unchanged."""

        def part(i: int) -> str:
            return f"regexp_extract({expr}, '{_ISO_PARTS}', {i})"

        offset = part(5)
        minutes = f"regexp_replace(substr({offset}, 4), ':', '')"
        zone = (f"CASE WHEN {offset} IN ('', 'Z') THEN '' ELSE concat(substr({offset}, 1, 3), ':',"
                f" CASE WHEN {minutes} = '' THEN '00' ELSE {minutes} END) END")
        clock = (f"CASE WHEN {part(2)} = '' THEN '' ELSE concat(' ', {part(2)}, ':',"
                 f" CASE WHEN {part(3)} = '' THEN '00' ELSE {part(3)} END, {part(4)}, {zone}) END")
        return f"CASE WHEN {self._matches(expr, _ISO_PARTS)} THEN concat({part(1)}, {clock}) ELSE {expr} END"

    def _distinct_count(self, expr: str) -> str:
        return f"size(collect_set({expr}) OVER ())"  # Spark has no DISTINCT in a window

    def _format_key(self, expr: str, fmt: str) -> str:
        return f"unix_micros(try_to_timestamp({expr}, '{java_pattern(fmt)}'))"

    def _epoch(self, expr: str, column: Column) -> str:
        return f"unix_micros(CAST({expr} AS TIMESTAMP))"

    def _create_view(self, select: str) -> None:
        with self._utc():
            try:
                self.spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {self.events} AS {select}")
            except _errors() as exc:
                raise DataError(f"the Spark query on {self.label} failed: {_message(exc)[:400]}") from None

    def _open(self, source: object) -> list[Column]:
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
                    _no_empty_files(text)
                    frame = self.spark.read.parquet(text)
            else:
                raise DataError(
                    "with a Spark session, the source must be a table name, a path or glob, or a Spark DataFrame;"
                    f" got {type(source).__name__}"
                )
            # Spark Connect reads lazily: the schema and the view are where a bad path or file shows
            fields = frame.schema.fields
            frame.createOrReplaceTempView(self.raw)
        except _errors() as exc:
            message = _message(exc)
            if "TIMESTAMP(NANOS" in message:
                raise DataError(
                    f"Spark cannot read the nanosecond timestamps of {self.label} ({message[:200]}). Convert the time"
                    " column to microseconds (e.g. pyarrow: table.set_column(i, 'time', table['time'].cast("
                    "pa.timestamp('us'))), or in DuckDB: COPY (SELECT * REPLACE (CAST(time AS TIMESTAMP) AS time)"
                    " FROM 'in.parquet') TO 'out.parquet'), or read it with engine='duckdb'"
                ) from None
            raise read_error(self.label, message) from None
        return [_spark_column(field.name, field.dataType.typeName(), csv) for field in fields]


def _no_empty_files(path: str) -> None:
    """A 0-byte Parquet file in a local folder or glob (an interrupted export) is refused, as DuckDB refuses it;
    Spark itself would skip it.  Paths this process cannot see (another file system, a remote cluster's disks)
    are left to Spark."""
    local = path.removeprefix("file:")
    if "://" in local:
        return
    found = [Path(p) for p in glob.glob(local)] if any(ch in local for ch in "*?[") else [Path(local)]
    files = [f for p in found for f in ([q for q in p.rglob("*") if q.is_file()] if p.is_dir() else [p])]
    empty = sorted(str(f) for f in files if f.is_file() and f.name.lower().endswith(PARQUET_SUFFIXES)
                   and f.stat().st_size == 0)
    if empty:
        raise DataError(
            f"the file '{empty[0]}' is empty (0 bytes){f' (and {len(empty) - 1} more)' if len(empty) > 1 else ''}:"
            " it is not a Parquet file. Export it again, or remove it from the folder or glob"
        )


def _connect_metrics(frame: Any) -> list[tuple[str, int]]:
    """(name, value) of every metric of the plan a Spark Connect query ran (sent back with its results)."""
    info = frame.executionInfo
    if info is None or info.metrics is None:
        return []
    _, graph = info.metrics.extract_graph()
    return [(metric.name, int(metric.value)) for node in graph.values() for metric in node.metrics]


def _classic_metrics(frame: Any) -> list[tuple[str, int]]:
    """(name, value) of every metric of the executed physical plan (adaptive stages and reused exchanges once)."""
    out: list[tuple[str, int]] = []
    stack = [frame._jdf.queryExecution().executedPlan()]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        kind = node.getClass().getSimpleName()
        if node.hashCode() in seen or kind == "ReusedExchangeExec":
            continue
        seen.add(node.hashCode())
        iterator = node.metrics().iterator()
        while iterator.hasNext():
            pair = iterator.next()
            out.append((pair._1(), int(pair._2().value())))
        children = node.children()
        stack += [children.apply(i) for i in range(children.size())]
        if kind == "AdaptiveSparkPlanExec":
            stack.append(node.executedPlan())
        elif kind.endswith("QueryStageExec"):
            stack.append(node.plan())
    return out


def _is_table(spark: Any, name: str) -> bool:
    """Whether ``name`` is a table of the session's catalog (a path never is)."""
    if "/" in name or "*" in name or name.lower().endswith(PARQUET_SUFFIXES + CSV_SUFFIXES):
        return False
    try:
        return bool(spark.catalog.tableExists(name))
    except _errors():
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
