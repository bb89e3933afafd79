"""Users' sequences of categorical states, loaded and checked (docs/math.md §1).

A dataset holds ``m`` users; user ``u`` has a sequence ``X_{u,1..T_u}`` of states in
``{0..K-1}`` ordered by time (docs/math.md §1).  :func:`load_sequences` reads a long table with
one row per entry (columns *user*, *time*, *state* and optionally a *group* such as a
country or an age band) from a CSV or Parquet file, an uploaded file held in memory, raw
bytes, or a pandas DataFrame, and returns a frozen :class:`Sequences`; :func:`read_columns`
lists the columns of the same sources from their header, so that a user can pick them.

Everything that can be wrong with an input raises :class:`~puffer_core.errors.DataError`
with a message that says what is wrong and what was found.  Uploaded data is read from
memory only; nothing is written to disk.
"""

from __future__ import annotations

import gzip
import io
import warnings
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from puffer_core.errors import DataError

MAX_ROWS = 10_000_000
MAX_STATES = 500
PARQUET_SUFFIXES = (".parquet", ".pq")
_SHOWN_COLUMNS = 30
# what pandas and pyarrow raise on malformed content (parser errors are ValueErrors)
_READ_ERRORS = (ValueError, UnicodeError, OSError, EOFError, OverflowError, pa.ArrowException)


def _readonly(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class Sequences:
    """Users' state sequences, sorted by (user, time) (docs/math.md §1).

    Attributes
    ----------
    frame:
        The tidy table, one row per entry, sorted by user then time, with columns
        ``user``, ``time`` (parsed: numbers or UTC timestamps), ``state`` (label, categorical),
        ``code`` (the state's integer code ``0..K-1``, the index into ``states``) and, when a
        group column was given, ``group`` (categorical).
    states:
        The state labels as strings, sorted (numerically when the state column holds numbers);
        code ``k`` means ``states[k]``.
    groups:
        The group labels as strings, sorted, or None when there is no group column.
    users:
        The user ids in sorted order; user number ``i`` is ``users[i]``.
    user_index, codes, group_codes:
        Per-entry arrays aligned with ``frame``: the user number, the state code and the group
        code (None without groups).
    offsets:
        ``n_users + 1`` positions: user ``i``'s entries are ``codes[offsets[i]:offsets[i+1]]``.
    group_column:
        The name the group column had in the source (e.g. ``"country"``), for display.
    """

    frame: pd.DataFrame
    states: tuple[str, ...]
    groups: tuple[str, ...] | None
    users: np.ndarray
    user_index: np.ndarray
    codes: np.ndarray
    group_codes: np.ndarray | None
    offsets: np.ndarray
    group_column: str | None = None

    @property
    def n_users(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def n_entries(self) -> int:
        return int(self.codes.size)

    @property
    def n_states(self) -> int:
        return len(self.states)

    @property
    def lengths(self) -> np.ndarray:
        """The sequence length ``T_u`` of every user, in user order."""
        return np.diff(self.offsets)

    @property
    def max_length(self) -> int:
        return int(self.lengths.max()) if self.n_users else 0

    def sequence(self, i: int) -> np.ndarray:
        """The state codes of user number ``i`` in time order (a read-only view)."""
        if not 0 <= i < self.n_users:
            raise IndexError(f"user number {i} is out of range: there are {self.n_users} users")
        return self.codes[self.offsets[i] : self.offsets[i + 1]]

    @cached_property
    def same_user_as_next(self) -> np.ndarray:
        """Boolean array of length ``n_entries - 1``: entry ``j`` and ``j+1`` belong to one user.

        These consecutive pairs are the transitions counted in docs/math.md §6.
        """
        return _readonly(self.user_index[1:] == self.user_index[:-1])

    @cached_property
    def time_key(self) -> np.ndarray:
        """The entries' times as exact numbers (int64 µs since 1970 for dates), aligned with ``frame``."""
        return _readonly(np.array(_time_key(self.frame["time"], "time")[1]))

    @cached_property
    def user_groups(self) -> np.ndarray | None:
        """Each user's group code: the group of most of the user's entries (ties → lower code).

        Groups are stored per entry; when a user's entries all have one group (a country of
        residence, an age band) this is simply that group.  None without groups.
        """
        if self.group_codes is None:
            return None
        n_groups = len(self.groups or ())
        pair = self.user_index.astype(np.int64) * n_groups + self.group_codes
        keys, counts = np.unique(pair, return_counts=True)
        user = keys // n_groups
        group = keys % n_groups
        order = np.lexsort((group, -counts, user))
        first = np.ones(order.size, dtype=bool)
        first[1:] = user[order][1:] != user[order][:-1]
        chosen = np.empty(self.n_users, dtype=np.int64)
        chosen[user[order][first]] = group[order][first]
        return _readonly(chosen)

    def state_counts(self, by_group: bool = False) -> np.ndarray:
        """How many entries have each state: shape (K,), or (n_groups, K) with ``by_group``."""
        k = self.n_states
        if not by_group:
            return np.bincount(self.codes, minlength=k)
        if self.group_codes is None:
            raise DataError("these sequences have no group column, so they cannot be counted by group")
        n_groups = len(self.groups or ())
        flat = np.bincount(self.group_codes.astype(np.int64) * k + self.codes, minlength=n_groups * k)
        return flat.reshape(n_groups, k)

    def select_groups(self, labels: str | tuple[str, ...] | list[str]) -> Sequences:
        """The entries whose group is one of ``labels`` (state and group coding kept)."""
        if self.groups is None or self.group_codes is None:
            raise DataError("these sequences have no group column to select from")
        wanted = (labels,) if isinstance(labels, str) else tuple(labels)
        unknown = [g for g in wanted if g not in self.groups]
        if unknown:
            raise DataError(f"unknown group(s) {unknown}; the groups are {_preview(self.groups)}")
        codes = np.array([self.groups.index(g) for g in wanted], dtype=np.int64)
        return self.subset(np.isin(self.group_codes, codes))

    def subset(self, keep: np.ndarray) -> Sequences:
        """The entries where the boolean array ``keep`` is True, same state and group coding.

        Users left with no entries are dropped.  Raises DataError when nothing is kept.
        """
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (self.n_entries,):
            raise ValueError(f"keep must have one value per entry ({self.n_entries}); got shape {keep.shape}")
        if not keep.any():
            raise DataError("no entries are left after this selection")
        old_users = self.user_index[keep]
        present = np.zeros(self.n_users, dtype=bool)
        present[old_users] = True
        renumber = np.cumsum(present) - 1
        user_index = renumber[old_users]
        offsets = np.concatenate([[0], np.cumsum(np.bincount(user_index, minlength=int(present.sum())))])
        return Sequences(
            frame=self.frame.loc[keep].reset_index(drop=True),
            states=self.states,
            groups=self.groups,
            users=_readonly(self.users[present]),
            user_index=_readonly(user_index),
            codes=_readonly(self.codes[keep]),
            group_codes=None if self.group_codes is None else _readonly(self.group_codes[keep]),
            offsets=_readonly(offsets),
            group_column=self.group_column,
        )

    def summary(self) -> dict[str, Any]:
        """Plain numbers and strings describing the data, for display."""
        lengths = self.lengths
        out: dict[str, Any] = {
            "users": self.n_users,
            "entries": self.n_entries,
            "states": self.n_states,
            "state labels": ", ".join(self.states[:12]) + (" …" if self.n_states > 12 else ""),
            "shortest sequence": int(lengths.min()),
            "median sequence": float(np.median(lengths)),
            "longest sequence": self.max_length,
            "transitions": int(self.same_user_as_next.sum()),
        }
        if self.groups is not None:
            out["group column"] = self.group_column
            out["groups"] = len(self.groups)
            out["group labels"] = ", ".join(self.groups[:12]) + (" …" if len(self.groups) > 12 else "")
        out["first time"] = str(self.frame["time"].min())
        out["last time"] = str(self.frame["time"].max())
        return out

    def __repr__(self) -> str:
        groups = "" if self.groups is None else f", groups={len(self.groups)}"
        return (
            f"Sequences(users={self.n_users}, entries={self.n_entries}, states={self.n_states}"
            f", max_length={self.max_length}{groups})"
        )


def _preview(names: tuple[str, ...] | list[str]) -> str:
    shown = ", ".join(repr(str(n)) for n in names[:_SHOWN_COLUMNS])
    if len(names) > _SHOWN_COLUMNS:
        shown += f", … ({len(names)} in all)"
    return shown


def _source_bytes(source: object) -> tuple[bytes, str | None, str]:
    """The raw content of a path, a file-like object or bytes; its name; a label for messages."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), None, "the data"
    if isinstance(source, (str, Path)):
        path = Path(source)
        try:
            return path.read_bytes(), path.name, f"the file '{path.name}'"
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
                content = source.read()
        except _READ_ERRORS as exc:
            raise DataError(f"{label} could not be read ({exc})") from None
        if isinstance(content, str):
            content = content.encode("utf-8")
        if not isinstance(content, (bytes, bytearray, memoryview)):
            raise DataError(f"{label} did not give bytes or text when read; got {type(content).__name__}")
        return bytes(content), name, label
    raise DataError(
        "the data source must be a file path, an uploaded file, bytes or a pandas DataFrame;"
        f" got {type(source).__name__}"
    )


def _match_columns(present: list[str], wanted: dict[str, str], label: str) -> dict[str, str]:
    """Map each role (user, time, …) to the column of ``present`` named ``wanted[role]``.

    Header names are compared after stripping surrounding spaces.
    """
    stripped = {str(c).strip(): c for c in present}
    found: dict[str, str] = {}
    missing: list[str] = []
    for role, name in wanted.items():
        if name in stripped:
            found[role] = stripped[name]
        elif str(name).strip() in stripped:
            found[role] = stripped[str(name).strip()]
        else:
            missing.append(f"{role} column '{name}'")
    names = [str(c).strip() for c in present]
    repeated = sorted({str(found[role]).strip() for role in found if names.count(str(found[role]).strip()) > 1})
    if repeated:
        raise DataError(
            f"{label} has several columns named {', '.join(repr(n) for n in repeated)}; rename them so that"
            " each name is used once"
        )
    if missing:
        hints = []
        lower = {str(c).strip().lower(): str(c) for c in present}
        for role, name in wanted.items():
            if role not in found and str(name).strip().lower() in lower:
                hints.append(f"'{lower[str(name).strip().lower()]}' for '{name}'")
        hint = f" (did you mean {', '.join(hints)}? names are case-sensitive)" if hints else ""
        columns = _preview([str(c) for c in present]) if present else "none"
        raise DataError(
            f"{label} has no {' and no '.join(missing)}{hint}; the columns found are: {columns}."
            " Pick the right columns, or rename them."
        )
    return found


def _decode_check(data: bytes, label: str) -> str:
    """The text encoding to read ``data`` with; rejects binary content."""
    head = data[:65536]
    controls = sum(1 for b in head if b < 32 and b not in (9, 10, 13))
    if b"\x00" in head or controls > len(head) // 100:
        # checked before decoding: control bytes are valid UTF-8 but no CSV contains them
        raise DataError(
            f"{label} is not a text (CSV) file or a Parquet file: it contains binary data (first bytes: {data[:16]!r})"
        )
    try:
        head.decode("utf-8-sig")
        return "utf-8-sig"
    except UnicodeDecodeError as exc:
        # a multi-byte character cut at the end of the sample is fine
        if exc.start >= len(head) - 3 and len(data) > len(head):
            return "utf-8-sig"
    return "latin-1"


def _sniff_separator(data: bytes, encoding: str) -> str:
    first = data[:65536].decode(encoding, errors="replace").splitlines()
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
                sample = handle.read(65536)
        except (OSError, EOFError) as exc:
            raise DataError(f"{label} looks gzip-compressed but could not be decompressed ({exc})") from None
    else:
        sample = data
    if data[:4] == b"PK\x03\x04":
        raise DataError(
            f"{label} is a zip archive or an Excel workbook; save the table as CSV (comma-separated)"
            " or Parquet and upload that"
        )
    if not sample.strip():
        raise DataError(f"{label} is empty: it has no header and no rows")
    encoding = _decode_check(sample, label)
    sep = _sniff_separator(sample, encoding)
    return {"sep": sep, "encoding": encoding, "compression": compression, "skipinitialspace": True}


def _csv_header(data: bytes, options: dict[str, Any], label: str) -> list[str]:
    """The column names in the CSV header, as pandas reads them with ``options``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            header = pd.read_csv(io.BytesIO(data), nrows=0, **options)
    except pd.errors.EmptyDataError:
        raise DataError(f"{label} is empty: it has no header and no rows") from None
    except _READ_ERRORS as exc:
        raise DataError(f"{label} could not be read as CSV: {_short(exc)}") from None
    return [str(c) for c in header.columns]


def _read_csv(data: bytes, wanted: dict[str, str], max_rows: int, label: str) -> tuple[pd.DataFrame, list[str]]:
    options = _csv_options(data, label)
    present = _csv_header(data, options, label)
    found = _match_columns(present, wanted, label)
    # all columns are read (not usecols) so that rows with too many fields are caught, and
    # index_col=False so that pandas never silently turns a first column into an index
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(io.BytesIO(data), index_col=False, nrows=max_rows + 1, **options)
    except (*_READ_ERRORS, pd.errors.ParserWarning) as exc:
        raise DataError(f"{label} could not be read as CSV: {_short(exc)}") from None
    return _by_role(frame, found), present


def _open_parquet(data: bytes, label: str) -> tuple[pq.ParquetFile, list[str], int]:
    """The Parquet file in ``data``, its column names and its number of rows."""
    try:
        handle = pq.ParquetFile(io.BytesIO(data))
        return handle, [str(n) for n in handle.schema_arrow.names], handle.metadata.num_rows
    except _READ_ERRORS as exc:
        raise DataError(f"{label} could not be read as Parquet: {_short(exc)}") from None


def _read_parquet(data: bytes, wanted: dict[str, str], max_rows: int, label: str) -> tuple[pd.DataFrame, list[str]]:
    handle, present, n_rows = _open_parquet(data, label)
    found = _match_columns(present, wanted, label)
    if n_rows > max_rows:
        raise DataError(f"{label} has {n_rows:,} rows; the limit is {max_rows:,} rows")
    try:
        frame = handle.read(columns=list(dict.fromkeys(found.values()))).to_pandas()
    except _READ_ERRORS as exc:
        raise DataError(f"{label} could not be read as Parquet: {_short(exc)}") from None
    return _by_role(frame, found), present


def _by_role(frame: pd.DataFrame, found: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame({role: frame[column].reset_index(drop=True) for role, column in found.items()})


def _show(value: object) -> str:
    """A value as it would be typed: numpy scalars unwrapped, strings quoted."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n", " ")
    return text[:300] if text else type(exc).__name__


def _time_key(column: pd.Series, name: str) -> tuple[pd.Series, np.ndarray]:
    """The parsed time column and an exact sort key (int64 or float64) for it."""
    if isinstance(column.dtype, pd.DatetimeTZDtype):
        parsed = column.dt.tz_convert("UTC")
        return parsed, parsed.astype("int64").to_numpy()
    if pd.api.types.is_datetime64_dtype(column) or pd.api.types.is_timedelta64_dtype(column):
        return column, column.astype("int64").to_numpy()
    if pd.api.types.is_bool_dtype(column):
        return column, column.to_numpy(dtype=np.int64)
    if pd.api.types.is_integer_dtype(column):
        return column, column.to_numpy(dtype=np.int64)
    if pd.api.types.is_numeric_dtype(column):
        values = column.to_numpy(dtype=np.float64)
        _reject_bad_times(column, ~np.isfinite(values), name, "is not a finite number")
        return column, values
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = column.astype(str).str.strip()
        numbers = pd.to_numeric(text, errors="coerce")
        if numbers.notna().all():
            return _time_key(numbers, name)
        parsed = _to_datetime(text, None)
        if parsed.isna().any():
            parsed = _to_datetime(text, "mixed")
    bad = parsed.isna().to_numpy()
    mixed = bool(numbers.notna().any()) and bool(parsed.notna().any())
    why = "is not a date/time (the column mixes numbers and dates)" if mixed else "is neither a number nor a date/time"
    _reject_bad_times(column, bad, name, why)
    return parsed, parsed.astype("int64").to_numpy()


def _to_datetime(text: pd.Series, fmt: str | None) -> pd.Series:
    try:
        return pd.to_datetime(text, errors="coerce", utc=True, format=fmt)
    except (ValueError, TypeError, OverflowError):
        return pd.Series(pd.NaT, index=text.index, dtype="datetime64[us, UTC]")


def _reject_bad_times(column: pd.Series, bad: np.ndarray, name: str, why: str) -> None:
    if bad.any():
        example = column.iloc[int(np.flatnonzero(bad)[0])]
        raise DataError(
            f"{int(bad.sum()):,} value(s) in the time column '{name}' cannot be read as times;"
            f" for example {_show(example)} (data row {int(np.flatnonzero(bad)[0]) + 1}) {why}."
            " Times must be numbers or dates such as 2024-05-01 13:45; only their order matters."
        )


def _raw_source(source: object) -> tuple[bytes, str, bool]:
    """The bytes of a non-DataFrame source, its label for messages, and whether it is Parquet."""
    data, name, label = _source_bytes(source)
    if not data:
        raise DataError(f"{label} is empty (0 bytes)")
    is_parquet = data[:4] == b"PAR1" or (name is not None and name.lower().endswith(PARQUET_SUFFIXES))
    return data, label, is_parquet


def _read_any(source: object, wanted: dict[str, str], max_rows: int) -> tuple[pd.DataFrame, list[str], str]:
    if isinstance(source, pd.DataFrame):
        present = [str(c) for c in source.columns]
        found = _match_columns(present, wanted, "the table")
        renamed = {str(c): c for c in source.columns}
        frame = pd.DataFrame({role: source[renamed[column]].reset_index(drop=True) for role, column in found.items()})
        return frame, present, "the table"
    data, label, is_parquet = _raw_source(source)
    if is_parquet:
        frame, present = _read_parquet(data, wanted, max_rows, label)
    else:
        frame, present = _read_csv(data, wanted, max_rows, label)
    return frame, present, label


def read_columns(source: object) -> list[str]:
    """The column names of a table, read from its header only — to choose the columns (docs/math.md §1).

    ``source`` is anything :func:`load_sequences` reads: a path to a CSV or Parquet file, a
    file-like object such as Streamlit's ``UploadedFile``, raw bytes, or a pandas DataFrame; CSV
    may be comma-, semicolon- or tab-separated and gzip-compressed.  Names are strings with
    surrounding spaces stripped, in file order; :func:`load_sequences` accepts them as they are.

    Raises DataError, with the messages of :func:`load_sequences`, when the source is empty,
    binary, a zip archive, or cannot be parsed as CSV or Parquet.
    """
    if isinstance(source, pd.DataFrame):
        return [str(c).strip() for c in source.columns]
    data, label, is_parquet = _raw_source(source)
    if is_parquet:
        present = _open_parquet(data, label)[1]
    else:
        present = _csv_header(data, _csv_options(data, label), label)
    return [name.strip() for name in present]


def load_sequences(
    source: object,
    user: str = "user",
    time: str = "time",
    state: str = "state",
    group: str | None = None,
    max_rows: int = MAX_ROWS,
    max_states: int = MAX_STATES,
) -> Sequences:
    """Read one row per entry and build every user's state sequence (docs/math.md §1).

    ``source`` is a path to a ``.csv`` or ``.parquet`` file, a file-like object such as
    Streamlit's ``UploadedFile`` (CSV or Parquet; Parquet is recognised by its ``PAR1``
    magic bytes or a ``.parquet``/``.pq`` name), raw bytes, or a pandas DataFrame.  CSV may be
    comma-, semicolon- or tab-separated and gzip-compressed.  ``user``, ``time``, ``state`` and
    ``group`` name the columns; times may be numbers or date/time strings (only their order
    within a user matters).

    Raises DataError when a column is missing, the input is empty or unreadable, times cannot
    be parsed, values are missing, a user has two entries at the same time, there are fewer
    than 2 states, or the input exceeds ``max_rows`` rows or ``max_states`` states.
    """
    wanted = {"user": user, "time": time, "state": state}
    if group is not None:
        wanted["group"] = group
    names = list(wanted.values())
    if len(set(names)) != len(names):
        raise DataError(f"the user, time, state and group columns must be different; got {names}")
    frame, present, label = _read_any(source, wanted, max_rows)
    if len(frame) == 0:
        raise DataError(f"{label} has a header but no rows of data (columns: {_preview(present)})")
    if len(frame) > max_rows:
        raise DataError(f"{label} has more than {max_rows:,} rows; the limit is {max_rows:,} rows")

    missing = frame.isna()
    if missing.to_numpy().any():
        rows = missing.any(axis=1).to_numpy()
        per_column = ", ".join(f"'{wanted[role]}': {int(n):,}" for role, n in missing.sum().items() if n > 0)
        raise DataError(
            f"{int(rows.sum()):,} row(s) of {label} have missing values (first at data row"
            f" {int(np.flatnonzero(rows)[0]) + 1}; empty cells per column: {per_column})."
            " Remove or fill those rows."
        )

    state_codes, states = _labels(frame["state"])
    if len(states) < 2:
        raise DataError(
            f"the state column '{state}' has only {len(states)} distinct value"
            f" ({_preview(list(states))}); at least 2 states are needed, otherwise there is no secret"
        )
    if len(states) > max_states:
        raise DataError(
            f"the state column '{state}' has {len(states):,} distinct values; the limit is {max_states:,}"
            f" (first few: {_preview(list(states[:5]))}). Is '{state}' really the category column?"
        )
    time_parsed, time_key = _time_key(frame["time"], time)
    user_codes, users = _factorize(frame["user"])
    order = np.lexsort((time_key, user_codes))
    user_sorted = user_codes[order]
    key_sorted = time_key[order]
    duplicate = (user_sorted[1:] == user_sorted[:-1]) & (key_sorted[1:] == key_sorted[:-1])
    if duplicate.any():
        first = order[int(np.flatnonzero(duplicate)[0])]
        raise DataError(
            f"{int(duplicate.sum()):,} row(s) repeat a (user, time) pair already present; for example user"
            f" {_show(frame['user'].iloc[first])} at time {_show(frame['time'].iloc[first])}."
            " Each user can be in only one state at a time: remove the duplicates or make the times distinct."
        )

    offsets = np.concatenate([[0], np.cumsum(np.bincount(user_sorted, minlength=users.size))])
    codes = state_codes[order]
    columns: dict[str, Any] = {
        "user": frame["user"].iloc[order].reset_index(drop=True),
        "time": time_parsed.iloc[order].reset_index(drop=True),
        "state": pd.Categorical.from_codes(codes, categories=list(states)),
        "code": codes,
    }
    groups: tuple[str, ...] | None = None
    group_codes = None
    if group is not None:
        raw_group_codes, groups = _labels(frame["group"])
        group_codes = _readonly(raw_group_codes[order])
        columns["group"] = pd.Categorical.from_codes(group_codes, categories=list(groups))
    return Sequences(
        frame=pd.DataFrame(columns),
        states=states,
        groups=groups,
        users=_readonly(users),
        user_index=_readonly(user_sorted),
        codes=_readonly(codes),
        group_codes=group_codes,
        offsets=_readonly(offsets),
        group_column=group,
    )


def _factorize(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes ``0..n-1`` of a column's values in sorted order, and the sorted values."""
    try:
        codes, uniques = pd.factorize(column, sort=True)
    except TypeError:
        codes, uniques = pd.factorize(column.astype(str), sort=True)
    return np.asarray(codes, dtype=np.int64), np.asarray(uniques)


def _labels(column: pd.Series) -> tuple[np.ndarray, tuple[str, ...]]:
    """Integer codes and sorted, distinct string labels of a categorical column."""
    codes, uniques = _factorize(column)
    labels = tuple(str(u) for u in uniques)
    if len(set(labels)) != len(labels):
        codes, uniques = _factorize(column.astype(str))
        labels = tuple(str(u) for u in uniques)
    return codes, labels
