"""Spark SQL in the user's SparkSession: a table name, a path or glob (Parquet or CSV), or a DataFrame;
the results come back with ``toArrow()`` (docs/math.md §1)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ..errors import DataError
from .sql import CSV_SUFFIXES, PARQUET_SUFFIXES, Column, SqlEngine, first_line
from .times import (
    java_pattern,
)

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
                raise DataError(f"the Spark query on {self.label} failed: {first_line(exc)[:400]}") from None

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
            message = first_line(exc)
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


