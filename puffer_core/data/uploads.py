"""Uploads parsed in memory with pyarrow (never written to disk), and Arrow sources for the engines."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ..errors import DataError, DataTypeError
from .readers import csv_format
from .sequences import preview_names
from .sql import NULL_STRINGS, PARQUET_SUFFIXES, first_line


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
        raise DataTypeError(
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
            raise DataError(f"{label} could not be read as Parquet: {first_line(exc)[:300]}") from None
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
        raise DataError(f"{label} could not be read as CSV: {first_line(exc)[:300]}") from None
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


