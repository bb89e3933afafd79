"""Reading tables of entries from files, uploads, bytes and DataFrames (docs/math.md §1).

:func:`load_sequences` reads a long table with one row per entry (columns *user*, *time*,
*state* and optionally a *group* such as a country or an age band) from a CSV or Parquet file,
an uploaded file held in memory, raw bytes, or a pandas DataFrame, and builds a frozen
:class:`~puffer_core.data.sequences.Sequences` with :func:`~puffer_core.data.sequences.build_sequences`.
:func:`read_columns` lists the columns of the same sources from their header, and
:func:`read_table` parses a source once into a :class:`Table` that :func:`load_sequences` takes
as it is, so that an app can offer the columns and then load them without reading twice.

CSV may be comma-, semicolon- or tab-separated, gzip-compressed, and encoded in UTF-8 (with or
without a byte-order mark), UTF-16 or Latin-1.  Everything that can be wrong with an input
raises :class:`~puffer_core.errors.DataError` with a message that says what is wrong and what
was found.  Uploaded data is read from memory only; nothing is written to disk.

Repair is explicit and counted.  By default one empty cell or one repeated row in the chosen
columns rejects the input.  ``drop_missing`` drops the rows with an empty cell in the user, time,
state or group column; ``drop_duplicates`` drops the rows that repeat an earlier row exactly in
those columns (the same entry recorded twice).  :func:`load_with_repair` returns the sequences
with a :class:`Repair` that says how many rows were read, found and dropped, and
:func:`find_repairs` counts what the options would drop without loading.  Rows that repeat a
(user, time) pair with another state are a conflict, not a copy, and are still refused.
"""

from __future__ import annotations

import gzip
import io
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import DataError, DataTypeError
from ..validation import InvalidParameter, check_whole
from .columns import likely_hint
from .sequences import MAX_STATES, Sequences, blanks_as_missing, build_sequences, preview_names

MAX_ROWS = 10_000_000
PARQUET_SUFFIXES = (".parquet", ".pq")
SAMPLE_BYTES = 65536  # what the encoding and the separator are guessed from
MAX_BYTES = 1 << 30  # read into memory at most 1 GiB (larger data: load_stats aggregates it with DuckDB)
# what pandas and pyarrow raise on malformed content (parser errors are ValueErrors)
_READ_ERRORS = (ValueError, UnicodeError, OSError, EOFError, OverflowError, pa.ArrowException)
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


@dataclass(frozen=True, eq=False)
class Table:
    """A source parsed once: its rows, its column names in file order, and how messages name it.

    ``frame``'s columns are the positions 0..n-1, so that repeated names in a header are kept
    apart (and refused only when one of them is asked for).
    """

    frame: pd.DataFrame
    columns: tuple[str, ...]
    label: str

    @property
    def n_rows(self) -> int:
        return len(self.frame)


def _capped(content: bytes, label: str, size: int | None = None) -> bytes:
    """``content`` unless it (or ``size``) is over :data:`MAX_BYTES`; callers read at most one byte more, so an
    endless stream such as /dev/zero stops there."""
    if (len(content) if size is None else size) > MAX_BYTES:
        raise DataError(
            f"{label} is larger than {MAX_BYTES / 2**30:g} GiB, more than is read into memory at once; aggregate it"
            " without loading it: puffer_core.load_stats (DuckDB, or Spark on a cluster) or `puffer prior --data …`"
        )
    return content


def _source_bytes(source: object) -> tuple[bytes, str | None, str]:
    """The raw content of a path, a file-like object or bytes; its name; a label for messages."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), None, "the data"
    if isinstance(source, (str, Path)):
        path = Path(source)
        label = f"the file '{path.name}'"
        try:
            if path.is_file():
                _capped(b"", label, path.stat().st_size)  # a big regular file is refused before it is read
            with path.open("rb") as handle:
                return _capped(handle.read(MAX_BYTES + 1), label), path.name, label
        except FileNotFoundError:
            raise DataError(f"the file '{path}' does not exist") from None
        except IsADirectoryError:
            raise DataError(f"'{path}' is a folder, not a data file") from None
        except OSError as exc:
            raise DataError(f"the file '{path}' could not be opened ({exc.strerror or exc})") from None
    if hasattr(source, "getvalue") or hasattr(source, "read"):
        name = getattr(source, "name", None)
        name = str(name) if name is not None else None
        label = f"the file '{name}'" if name else "the uploaded file"
        try:
            if hasattr(source, "getvalue"):
                content = source.getvalue()
            else:
                if hasattr(source, "seek"):
                    source.seek(0)
                content = source.read(MAX_BYTES + 1)
        except _READ_ERRORS as exc:
            raise DataError(f"{label} could not be read ({exc})") from None
        if isinstance(content, str):
            content = content.encode("utf-8")
        if not isinstance(content, (bytes, bytearray, memoryview)):
            raise DataError(f"{label} did not give bytes or text when read; got {type(content).__name__}")
        return _capped(bytes(content), label), name, label
    raise DataTypeError(
        "the data source must be a file path, an uploaded file, bytes or a pandas DataFrame;"
        f" got {type(source).__name__}"
    )


def _match_columns(present: tuple[str, ...], wanted: dict[str, str], label: str) -> dict[str, int]:
    """The position in ``present`` of the column named ``wanted[role]``, for each role (user, time, …).

    Header names are compared after stripping surrounding spaces.  A name asked for that the
    header repeats is refused: which of the columns is meant cannot be told.
    """
    names = [str(c).strip() for c in present]
    found: dict[str, int] = {}
    missing: list[str] = []
    for role, name in wanted.items():
        if str(name).strip() in names:
            found[role] = names.index(str(name).strip())
        else:
            missing.append(f"{role} column '{name}'")
    repeated = sorted({names[i] for i in found.values() if names.count(names[i]) > 1})
    if repeated:
        raise DataError(
            f"{label} has several columns named {', '.join(repr(n) for n in repeated)}; rename them so that"
            " each name is used once"
        )
    if missing:
        hints = []
        cased = []  # roles whose name the file has in other letter case: that hint says it
        lower = {n.lower(): str(c) for n, c in zip(names, present)}
        for role, name in wanted.items():
            if role not in found and str(name).strip().lower() in lower:
                hints.append(f"'{lower[str(name).strip().lower()]}' for '{name}'")
                cased.append(role)
        hint = f" (did you mean {', '.join(hints)}? names are case-sensitive)" if hints else ""
        columns = preview_names([str(c) for c in present]) if present else "none"
        raise DataError(
            f"{label} has no {' and no '.join(missing)}{hint}; the columns found are: {columns}."
            f"{likely_hint(names, wanted, skip=cased)} Pick the right columns, or rename them."
        )
    return found


def _text_encoding(sample: bytes, label: str) -> str:
    """The text encoding to read ``sample`` with; rejects binary content."""
    if sample[:2] in _UTF16_BOMS:
        return "utf-16"
    if len(sample) >= 4:
        # UTF-16 without a byte-order mark: ASCII text has a zero byte in every other position
        even, odd = sample[0::2], sample[1::2]
        if not even.count(0) and odd.count(0) >= 0.9 * len(odd):
            return "utf-16-le"
        if not odd.count(0) and even.count(0) >= 0.9 * len(even):
            return "utf-16-be"
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 13))
    if b"\x00" in sample or controls > len(sample) // 100:
        # checked before decoding: control bytes are valid UTF-8 but no CSV contains them
        raise DataError(
            f"{label} is not a text (CSV) file or a Parquet file: it contains binary data"
            f" (first bytes: {sample[:16]!r})"
        )
    try:
        sample.decode("utf-8-sig")
        return "utf-8-sig"
    except UnicodeDecodeError as exc:
        # a multi-byte character cut at the end of the sample is fine
        if exc.start >= len(sample) - 3 and len(sample) == SAMPLE_BYTES:
            return "utf-8-sig"
    return "latin-1"


def _sniff_separator(data: bytes, encoding: str) -> str:
    first = data[:SAMPLE_BYTES].decode(encoding, errors="replace").splitlines()
    header = first[0] if first else ""
    if "," in header:
        return ","
    if ";" in header:
        return ";"
    if "\t" in header:
        return "\t"
    return ","


def _csv_options(data: bytes, label: str) -> dict[str, Any]:
    """How pandas should read ``data`` as CSV (gzip, encoding, separator); rejects empty and binary content."""
    compression = None
    if data[:2] == b"\x1f\x8b":
        compression = "gzip"
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as handle:
                sample = handle.read(SAMPLE_BYTES)
        except (OSError, EOFError) as exc:
            raise DataError(f"{label} looks gzip-compressed but could not be decompressed ({exc})") from None
    else:
        sample = data[:SAMPLE_BYTES]
    if data[:4] == b"PK\x03\x04":
        raise DataError(
            f"{label} is a zip archive or an Excel workbook; save the table as CSV (comma-separated)"
            " or Parquet and upload that"
        )
    encoding = _text_encoding(sample, label) if sample else "utf-8-sig"
    if not sample.decode(encoding, errors="replace").strip():
        raise DataError(f"{label} is empty: it has no header and no rows")
    sep = _sniff_separator(sample, encoding)
    return {"sep": sep, "encoding": encoding, "compression": compression, "skipinitialspace": True}


def csv_format(data: bytes, label: str) -> dict[str, Any]:
    """How the CSV bytes ``data`` are written: ``sep``, ``encoding`` and ``compression`` (gzip or None), as read here.

    Raises DataError for empty content, binary data or a zip archive (the messages of :func:`load_sequences`).
    """
    return _csv_options(data, label)


def _csv_header(data: bytes, options: dict[str, Any], label: str) -> tuple[str, ...]:
    """The column names in the CSV header exactly as written (repeated names kept), spaces stripped."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            first = pd.read_csv(io.BytesIO(data), header=None, nrows=1, dtype=str, keep_default_na=False, **options)
    except pd.errors.EmptyDataError:
        raise DataError(f"{label} is empty: it has no header and no rows") from None
    except _READ_ERRORS as exc:
        raise DataError(f"{label} could not be read as CSV: {_short(exc)}") from None
    if first.empty:
        raise DataError(f"{label} is empty: it has no header and no rows")
    return tuple(name.strip() or f"Unnamed: {i}" for i, name in enumerate(first.iloc[0].tolist()))


def _read_csv(data: bytes, max_rows: int, label: str) -> Table:
    options = _csv_options(data, label)
    present = _csv_header(data, options, label)
    # every column is read (so that rows with too many fields are caught) under its position (so that
    # repeated names stay apart), and index_col=False so that pandas never turns a first column into an index
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.simplefilter("error", pd.errors.ParserWarning)
            positions = list(range(len(present)))
            frame = pd.read_csv(
                io.BytesIO(data), header=0, names=positions, index_col=False, nrows=max_rows + 1, **options
            )
    except (*_READ_ERRORS, pd.errors.ParserWarning) as exc:
        raise DataError(f"{label} could not be read as CSV: {_short(exc)}") from None
    return Table(frame, present, label)


def _open_parquet(data: bytes, label: str) -> tuple[pq.ParquetFile, tuple[str, ...], int]:
    """The Parquet file in ``data``, its column names as stored and its number of rows."""
    try:
        handle = pq.ParquetFile(io.BytesIO(data))
        return handle, tuple(str(n) for n in handle.schema_arrow.names), handle.metadata.num_rows
    except _READ_ERRORS as exc:
        raise DataError(f"{label} could not be read as Parquet: {_short(exc)}") from None


def _read_parquet(data: bytes, max_rows: int, label: str, wanted: dict[str, str] | None) -> Table:
    """All columns, or only the ``wanted`` ones (matched against the schema before anything is read)."""
    handle, stored, n_rows = _open_parquet(data, label)
    present = tuple(name.strip() for name in stored)
    positions = list(range(len(present)))
    if wanted is not None:
        positions = sorted(set(_match_columns(present, wanted, label).values()))
    if n_rows > max_rows:
        raise DataError(f"{label} has {n_rows:,} rows; the limit is {max_rows:,} rows")
    try:
        # wanted names are unique (repeated ones were refused above); else every column, by position
        arrow = handle.read(columns=[stored[i] for i in positions] if wanted is not None else None)
        frame = pd.DataFrame({j: arrow.column(j).to_pandas() for j in range(arrow.num_columns)})
    except _READ_ERRORS as exc:
        raise DataError(f"{label} could not be read as Parquet: {_short(exc)}") from None
    return Table(frame, tuple(present[i] for i in positions), label)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n", " ")
    return text[:300] if text else type(exc).__name__


def _raw_source(source: object) -> tuple[bytes, str, bool]:
    """The bytes of a non-DataFrame source, its label for messages, and whether it is Parquet."""
    data, name, label = _source_bytes(source)
    if not data:
        raise DataError(f"{label} is empty (0 bytes)")
    is_parquet = data[:4] == b"PAR1" or (name is not None and name.lower().endswith(PARQUET_SUFFIXES))
    return data, label, is_parquet


def _read(source: object, max_rows: int, wanted: dict[str, str] | None = None) -> Table:
    if isinstance(source, Table):
        return source
    if isinstance(source, pd.DataFrame):
        frame = source.reset_index(drop=True)
        present = tuple(str(c) for c in frame.columns)
        frame.columns = range(len(present))
        return Table(frame, present, "the table")
    data, label, is_parquet = _raw_source(source)
    if is_parquet:
        return _read_parquet(data, max_rows, label, wanted)
    return _read_csv(data, max_rows, label)


def read_table(source: object, max_rows: int = MAX_ROWS) -> Table:
    """Parse a source once, every column: what :func:`load_sequences` reads, as a :class:`Table`.

    ``source`` is anything :func:`load_sequences` takes.  Pass the result to
    :func:`load_sequences` to build sequences from chosen columns without reading again.
    Raises DataError like :func:`load_sequences` when the source cannot be read.
    """
    return _read(source, check_whole("max_rows", max_rows))


def read_columns(source: object) -> list[str]:
    """The column names of a table, read from its header only — to choose the columns (docs/math.md §1).

    ``source`` is anything :func:`load_sequences` reads: a path to a CSV or Parquet file, a
    file-like object such as Streamlit's ``UploadedFile``, raw bytes, a pandas DataFrame or a
    :class:`Table`; CSV may be comma-, semicolon- or tab-separated and gzip-compressed.  Names are
    strings with surrounding spaces stripped, in file order (a repeated name is listed each time
    it appears); :func:`load_sequences` accepts them as they are.

    Raises DataError, with the messages of :func:`load_sequences`, when the source is empty,
    binary, a zip archive, or cannot be parsed as CSV or Parquet.
    """
    if isinstance(source, (Table, pd.DataFrame)):
        return [name.strip() for name in _read(source, MAX_ROWS).columns]
    data, label, is_parquet = _raw_source(source)
    if is_parquet:
        return [name.strip() for name in _open_parquet(data, label)[1]]
    return list(_csv_header(data, _csv_options(data, label), label))


@dataclass(frozen=True)
class Repair:
    """What the reading path found and dropped before building the sequences (module docstring).

    ``missing``: rows with an empty cell in a chosen column.  ``duplicates``: rows without an
    empty cell that repeat an earlier row exactly in the chosen columns.  ``drop_missing`` and
    ``drop_duplicates`` say which of them were dropped.
    """

    rows_read: int
    missing: int
    duplicates: int
    drop_missing: bool = False
    drop_duplicates: bool = False

    @property
    def missing_dropped(self) -> int:
        return self.missing if self.drop_missing else 0

    @property
    def duplicates_dropped(self) -> int:
        return self.duplicates if self.drop_duplicates else 0

    @property
    def dropped(self) -> int:
        return self.missing_dropped + self.duplicates_dropped

    @property
    def rows_kept(self) -> int:
        return self.rows_read - self.dropped

    def describe(self) -> str:
        """What was dropped, in words ("2 row(s) with an empty cell and 1 repeated row(s)"); "" when nothing."""
        parts = []
        if self.missing_dropped:
            parts.append(f"{self.missing_dropped:,} row(s) with an empty cell")
        if self.duplicates_dropped:
            parts.append(f"{self.duplicates_dropped:,} repeated row(s)")
        return " and ".join(parts)


@dataclass(frozen=True)
class Loaded:
    """Sequences read by :func:`load_with_repair`, and what the repair dropped on the way."""

    sequences: Sequences
    repair: Repair


def _check_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidParameter(f"{name} must be True or False; got {value!r}")
    return value


def _chosen_rows(
    source: object, user: str, time: str, state: str, group: str | None, max_rows: int
) -> tuple[pd.DataFrame, dict[str, str], str]:
    """The chosen columns of ``source`` under their roles, the roles' names, and the label for messages."""
    wanted = {"user": user, "time": time, "state": state}
    if group is not None:
        wanted["group"] = group
    names = list(wanted.values())
    if len(set(names)) != len(names):
        raise DataError(f"the user, time, state and group columns must be different; got {names}")
    table = _read(source, max_rows, wanted)
    found = _match_columns(table.columns, wanted, table.label)
    if table.n_rows == 0:
        raise DataError(f"{table.label} has a header but no rows of data (columns: {preview_names(table.columns)})")
    if table.n_rows > max_rows:
        raise DataError(f"{table.label} has more than {max_rows:,} rows; the limit is {max_rows:,} rows")
    frame = blanks_as_missing(pd.DataFrame({role: table.frame[position] for role, position in found.items()}))
    return frame, wanted, table.label


def _problem_rows(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the rows with an empty cell, and of the complete rows repeating an earlier complete row."""
    missing = frame.isna().any(axis=1).to_numpy()
    duplicate = np.zeros(len(frame), dtype=bool)
    complete = ~missing
    duplicate[complete] = frame[complete].duplicated(keep="first").to_numpy()
    return missing, duplicate


def find_repairs(
    source: object,
    user: str = "user",
    time: str = "time",
    state: str = "state",
    group: str | None = None,
    max_rows: int = MAX_ROWS,
) -> Repair:
    """How many rows of ``source`` have an empty cell, and how many repeat an earlier row, in the chosen columns.

    Arguments as in :func:`load_sequences`; nothing is dropped (the returned :class:`Repair`
    has both options off) and the sequences are not built.  Raises DataError when the source
    cannot be read or a column is missing.
    """
    frame, _, _ = _chosen_rows(source, user, time, state, group, check_whole("max_rows", max_rows))
    missing, duplicate = _problem_rows(frame)
    return Repair(len(frame), int(missing.sum()), int(duplicate.sum()))


def load_with_repair(
    source: object,
    user: str = "user",
    time: str = "time",
    state: str = "state",
    group: str | None = None,
    drop_missing: bool = False,
    drop_duplicates: bool = False,
    max_rows: int = MAX_ROWS,
    max_states: int = MAX_STATES,
    time_format: str | None = None,
) -> Loaded:
    """:func:`load_sequences` with the repair options, returning the sequences and the :class:`Repair` counts.

    ``drop_missing``: drop the rows with an empty cell in a chosen column (else they are
    refused).  ``drop_duplicates``: drop the rows that repeat an earlier row exactly in the
    chosen columns (else the repeated (user, time) pair is refused).  ``time_format``: as in
    :func:`load_sequences`.  Raises DataError like
    :func:`load_sequences`, and when the repair leaves no row.
    """
    max_rows = check_whole("max_rows", max_rows)
    max_states = check_whole("max_states", max_states, minimum=2)
    drop_missing = _check_flag("drop_missing", drop_missing)
    drop_duplicates = _check_flag("drop_duplicates", drop_duplicates)
    frame, wanted, label = _chosen_rows(source, user, time, state, group, max_rows)
    missing, duplicate = _problem_rows(frame)
    repair = Repair(len(frame), int(missing.sum()), int(duplicate.sum()), drop_missing, drop_duplicates)
    if repair.dropped:
        drop = (missing & drop_missing) | (duplicate & drop_duplicates)
        frame = frame[~drop].reset_index(drop=True)
        if frame.empty:
            raise DataError(
                f"every row of {label} was dropped ({repair.describe()}); no data is left to load"
            )
    try:
        sequences = build_sequences(frame, wanted, label, max_states, time_format)
    except DataError as exc:
        if not repair.dropped:
            raise
        raise DataError(f"{exc} (Data rows are counted after the {repair.describe()} were dropped.)") from None
    return Loaded(sequences, repair)


def load_sequences(
    source: object,
    user: str = "user",
    time: str = "time",
    state: str = "state",
    group: str | None = None,
    max_rows: int = MAX_ROWS,
    max_states: int = MAX_STATES,
    drop_missing: bool = False,
    drop_duplicates: bool = False,
    time_format: str | None = None,
) -> Sequences:
    """Read one row per entry and build every user's state sequence (docs/math.md §1).

    ``source`` is a path to a ``.csv`` or ``.parquet`` file, a file-like object such as
    Streamlit's ``UploadedFile`` (CSV or Parquet; Parquet is recognised by its ``PAR1``
    magic bytes or a ``.parquet``/``.pq`` name), raw bytes, a pandas DataFrame, or a
    :class:`Table` from :func:`read_table` (not read again).  CSV may be comma-, semicolon- or
    tab-separated, gzip-compressed, UTF-8, UTF-16 or Latin-1.  ``user``, ``time``, ``state`` and
    ``group`` name the columns; times may be numbers or date/time strings (only their order
    within a user matters), text read one way for the whole column: ISO 8601, day/month/year or
    month/day/year chosen once from all the values (an ambiguous column is refused), month names
    (:mod:`puffer_core.data.times`); ``time_format`` (e.g. ``"%d/%m/%Y %H:%M"``) reads every value with
    that one format instead.  ``drop_missing`` and ``drop_duplicates`` repair the input as in
    :func:`load_with_repair` (which also says how many rows were dropped).

    Raises DataError when a column is missing or named twice, the input is empty or unreadable,
    times cannot be parsed, values are missing, a user has two entries at the same time, there
    are fewer than 2 states, or the input exceeds ``max_rows`` rows or ``max_states`` states.
    """
    return load_with_repair(
        source, user, time, state, group, drop_missing, drop_duplicates, max_rows, max_states, time_format
    ).sequences
