"""Users' sequences of categorical states: the data model (docs/math.md §1).

A dataset holds ``m`` users; user ``u`` has a sequence ``X_{u,1..T_u}`` of states in
``{0..K-1}`` ordered by time (docs/math.md §1).  :class:`Sequences` is that dataset, frozen;
:func:`build_sequences` makes one from a table with one row per entry (columns user, time,
state and optionally group), checking everything that can be wrong with the values.  Reading
files, uploads and bytes into such a table is :mod:`puffer_core.data.readers`.

Everything that can be wrong with the values raises :class:`~puffer_core.errors.DataError`
with a message that says what is wrong and what was found.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataError
from ..validation import check_whole
from .stats import SequenceStats, check_windows, stats_from_codes
from .times import check_time_format, parse_text_times

MAX_STATES = 500
SHOWN_NAMES = 30  # how many names a message lists before "… (n in all)"
# A text value that is empty or only blanks (spaces, tabs, line breaks) is a missing value, like an empty CSV cell:
# one rule for the user, time, state and group columns of every source, on numpy and on every SQL engine
# (docs/data.md, "Missing values"); the SQL engines match the same pattern.
BLANK_PATTERN = "^[ \\t\\n\\r\\f]*$"
_BLANK = re.compile(BLANK_PATTERN)


def blanks_as_missing(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text value that is empty or only blanks (:data:`BLANK_PATTERN`) made missing."""
    out = frame
    for name in frame.columns:
        column = frame[name]
        if not (pd.api.types.is_object_dtype(column) or pd.api.types.is_string_dtype(column)):
            continue
        try:  # all text (or missing): pyarrow's regular expressions, in C++
            array = pa.array(column, from_pandas=True)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):  # e.g. an integer beyond 64 bits
            array = None
        if array is not None and (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
            blank = pc.match_substring_regex(array, BLANK_PATTERN).fill_null(False).to_numpy(zero_copy_only=False)
        else:  # mixed values (or none of them text): only the strings can be blank
            blank = np.fromiter(
                (isinstance(v, str) and _BLANK.fullmatch(v) is not None for v in column), dtype=bool, count=len(column)
            )
        if blank.any():
            if out is frame:
                out = frame.copy()
            out[name] = column.mask(blank)
    return out


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
            raise DataError(f"unknown group(s) {unknown}; the groups are {preview_names(self.groups)}")
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

    def stats(self, windows: tuple[int, ...] | int = ()) -> SequenceStats:
        """The counts the library uses (:class:`~puffer_core.data.stats.SequenceStats`), computed with numpy.

        ``windows``: the numbers of equal-width time windows to count entries in (the simulator's
        ``release_mode="windows"`` with that many releases needs them).
        """
        wanted = check_windows(windows)
        time = self.frame["time"]
        unit, utc = time_unit(time)
        counts = stats_from_codes(
            self.codes,
            self.offsets,
            self.group_codes,
            self.time_key,
            self.n_states,
            None if self.groups is None else len(self.groups),
            wanted,
        )
        return SequenceStats(
            states=self.states,
            groups=self.groups,
            time_unit=unit,
            time_first=str(time.min()),
            time_last=str(time.max()),
            rows_read=self.n_entries,
            group_column=self.group_column,
            **counts,
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


def preview_names(names: tuple[str, ...] | list[str]) -> str:
    shown = ", ".join(repr(str(n)) for n in names[:SHOWN_NAMES])
    if len(names) > SHOWN_NAMES:
        shown += f", … ({len(names)} in all)"
    return shown


def build_sequences(
    frame: pd.DataFrame,
    names: dict[str, str],
    label: str,
    max_states: int = MAX_STATES,
    time_format: str | None = None,
) -> Sequences:
    """Every user's state sequence from a table with one row per entry (docs/math.md §1).

    ``frame`` has the columns ``user``, ``time``, ``state`` and optionally ``group`` (the roles);
    ``names`` maps each role to the name the column had in the source and ``label`` names the
    source (e.g. "the file 'x.csv'"), both for the messages.  Times may be numbers or date/time
    strings (only their order within a user matters), read one way for the whole column
    (:mod:`puffer_core.data.times`) or with ``time_format``.

    Raises DataError when values are missing, times cannot be parsed, a user has two entries at
    the same time, or there are fewer than 2 or more than ``max_states`` states.
    """
    max_states = check_whole("max_states", max_states, minimum=2)
    time_format = check_time_format(time_format)
    state, group = names["state"], names.get("group")
    frame = blanks_as_missing(frame)
    missing = frame.isna()
    if missing.to_numpy().any():
        rows = missing.any(axis=1).to_numpy()
        per_column = ", ".join(f"'{names[role]}': {int(n):,}" for role, n in missing.sum().items() if n > 0)
        raise DataError(
            f"{int(rows.sum()):,} row(s) of {label} have missing values (first at data row"
            f" {int(np.flatnonzero(rows)[0]) + 1}; empty cells per column: {per_column})."
            " Remove or fill those rows."
        )

    state_codes, states = label_codes(frame["state"])
    if len(states) < 2:
        raise DataError(
            f"the state column '{state}' has only {len(states)} distinct value"
            f" ({preview_names(list(states))}); at least 2 states are needed, otherwise there is no secret"
        )
    if len(states) > max_states:
        raise DataError(
            f"the state column '{state}' has {len(states):,} distinct values; the limit is {max_states:,}"
            f" (first few: {preview_names(list(states[:5]))}). Is '{state}' really the category column?"
        )
    time_parsed, time_key = _time_key(frame["time"], names["time"], time_format)
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
        raw_group_codes, groups = label_codes(frame["group"])
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


def _show(value: object) -> str:
    """A value as it would be typed: numpy scalars unwrapped, strings quoted."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def _time_key(column: pd.Series, name: str, time_format: str | None = None) -> tuple[pd.Series, np.ndarray]:
    """The parsed time column and an exact sort key (int64 or float64) for it.

    Text is read as :mod:`puffer_core.data.times` says: one way for the whole column, or with ``time_format``.
    """
    if isinstance(column.dtype, pd.DatetimeTZDtype):
        parsed = column.dt.tz_convert("UTC")
        return parsed, parsed.astype("int64").to_numpy()
    if pd.api.types.is_datetime64_dtype(column) or pd.api.types.is_timedelta64_dtype(column):
        return column, column.astype("int64").to_numpy()
    if time_format is None and pd.api.types.is_bool_dtype(column):
        return column, column.to_numpy(dtype=np.int64)
    if time_format is None and pd.api.types.is_integer_dtype(column):
        return column, column.to_numpy(dtype=np.int64)
    if time_format is None and pd.api.types.is_numeric_dtype(column):
        values = column.to_numpy(dtype=np.float64)
        _reject_bad_times(column, ~np.isfinite(values), name, "is not a finite number")
        return column, values
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = column.astype(str).str.strip()
        numbers = pd.to_numeric(text, errors="coerce")
        if time_format is None and numbers.notna().all():
            return _time_key(numbers, name)
    parsed = parse_text_times(text, name, time_format)
    bad = parsed.isna().to_numpy()
    if time_format is not None:
        why = f"does not fit time_format={time_format!r}"
    elif bool(numbers.notna().any()) and bool(parsed.notna().any()):
        why = "is not a date/time (the column mixes numbers and dates)"
    else:
        why = "is neither a number nor a date/time"
    _reject_bad_times(column, bad, name, why)
    return parsed, parsed.astype("int64").to_numpy()


def _reject_bad_times(column: pd.Series, bad: np.ndarray, name: str, why: str) -> None:
    if bad.any():
        example = column.iloc[int(np.flatnonzero(bad)[0])]
        raise DataError(
            f"{int(bad.sum()):,} value(s) in the time column '{name}' cannot be read as times;"
            f" for example {_show(example)} (data row {int(np.flatnonzero(bad)[0]) + 1}) {why}."
            " Times must be numbers or dates such as 2024-05-01 13:45 (one way for the whole column, or pass"
            " time_format, e.g. '%d/%m/%Y %H:%M'); only their order matters."
        )


def _factorize(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes ``0..n-1`` of a column's values in sorted order, and the sorted values."""
    try:
        codes, uniques = pd.factorize(column, sort=True)
    except TypeError:
        codes, uniques = pd.factorize(column.astype(str), sort=True)
    return np.asarray(codes, dtype=np.int64), np.asarray(uniques)


def time_unit(column: pd.Series) -> tuple[str | None, bool]:
    """The unit of :attr:`Sequences.time_key` for a parsed time column ("us", "ns", … or None for numbers),
    and whether the times are UTC (time-zone aware)."""
    if isinstance(column.dtype, pd.DatetimeTZDtype):
        return column.dtype.unit, True
    if pd.api.types.is_datetime64_dtype(column):
        return np.datetime_data(column.dtype)[0], False
    return None, False


def label_codes(column: pd.Series) -> tuple[np.ndarray, tuple[str, ...]]:
    """Integer codes and sorted, distinct string labels of a categorical column (numbers sorted as numbers)."""
    codes, uniques = _factorize(column)
    labels = tuple(str(u) for u in uniques)
    if len(set(labels)) != len(labels):
        codes, uniques = _factorize(column.astype(str))
        labels = tuple(str(u) for u in uniques)
    return codes, labels
