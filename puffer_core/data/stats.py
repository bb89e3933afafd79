"""What the library needs from users' sequences, and nothing more: :class:`SequenceStats` (docs/math.md §1, §6, §7).

Fitting a chain (docs/math.md §6), its posterior draws (§12) and the simulator's releases (§7)
never look at single entries: they need K×K transition counts, the users' first states, the
sequence lengths, entries per group and state, per time window and per step.  All of these are
small (at most a few hundred by a few hundred numbers) whatever the size of the data, so a big
table only ever has to be *aggregated*.  :class:`SequenceStats` holds exactly those counts, in the
state and group order :class:`~puffer_core.data.Sequences` uses (labels sorted by their typed
value: the state 2 before the state 10).

Two paths build the same value: :meth:`Sequences.stats <puffer_core.data.Sequences.stats>` with
numpy (small data, and the reference the tests compare with), and
:func:`puffer_core.data.engines.load_stats`, which runs the aggregations as SQL in DuckDB or Spark.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError
from ..validation import is_whole

MAX_SLOT_CELLS = 250_000  # steps × states of the per-step histograms (500 × 500)


def _frozen(array: np.ndarray) -> np.ndarray:
    out = np.array(array, dtype=np.int64)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class SequenceStats:
    """The counts of users' state sequences the library uses (module docstring).

    Attributes
    ----------
    states, groups:
        The state labels (code ``k`` is ``states[k]``) and the group labels (None without a group
        column), as :class:`~puffer_core.data.Sequences` orders them.
    transitions:
        ``(K, K)``: entry ``(i, j)`` counts how often a user's entry in state ``i`` is followed,
        next in time, by one in state ``j`` (docs/math.md §6).
    first_states:
        ``(K,)``: how many users start in each state.
    length_values, length_users:
        The length histogram: ``length_users[i]`` users have exactly ``length_values[i]`` entries
        (lengths ascending, only those that occur).
    group_counts:
        ``(G, K)`` entries per group and state (``G = 1`` without groups).
    window_counts:
        For each number of time windows ``r`` asked for: ``(r, G, K)`` entries per window, group
        and state, the windows cutting ``[time_min, time_max]`` into ``r`` equal parts
        (:func:`window_of`).
    slot_counts:
        ``(T_max, K)``: row ``t − 1`` counts the users whose ``t``-th entry is in each state (the
        histogram a stream releases at step ``t``, docs/math.md §10); None when ``T_max · K`` is
        over :data:`MAX_SLOT_CELLS` (:meth:`slots` then says so).
    time_min, time_max:
        The earliest and latest time as exact keys: a number, or an integer count of
        ``time_unit`` since 1970-01-01 UTC for dates and times.
    time_unit:
        ``"us"`` or ``"ns"`` for dates and times (the key's unit), None for numeric times.
    time_first, time_last:
        The earliest and latest time as text, for display.
    rows_read, missing, duplicates:
        Rows read, rows with an empty cell in a chosen column, and complete rows repeating an
        earlier row exactly; ``drop_missing``/``drop_duplicates`` say whether those were dropped
        (otherwise there were none: the data would have been refused).
    group_column:
        The group column's name in the source, for display.
    spilled_bytes, peak_memory_bytes:
        What the SQL engine spilled to disk and the most memory it held while counting (None when
        the counts were not made by an engine, or the engine does not say): DuckDB's largest
        temporary files and largest memory in use, sampled while the queries run; Spark's spill
        size summed over the plan's operators and the largest operator's peak execution memory
        (summed over its tasks).  They say why a scan was slow; they are no count.
    """

    states: tuple[str, ...]
    groups: tuple[str, ...] | None
    transitions: np.ndarray
    first_states: np.ndarray
    length_values: np.ndarray
    length_users: np.ndarray
    group_counts: np.ndarray
    time_min: float | int
    time_max: float | int
    time_unit: str | None
    time_first: str
    time_last: str
    window_counts: Mapping[int, np.ndarray] = field(default_factory=dict)
    slot_counts: np.ndarray | None = None
    rows_read: int = 0
    missing: int = 0
    duplicates: int = 0
    drop_missing: bool = False
    drop_duplicates: bool = False
    group_column: str | None = None
    spilled_bytes: int | None = None
    peak_memory_bytes: int | None = None

    def __post_init__(self) -> None:
        k = len(self.states)
        g = 1 if self.groups is None else len(self.groups)
        for name in ("transitions", "first_states", "length_values", "length_users", "group_counts"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        if self.slot_counts is not None:
            object.__setattr__(self, "slot_counts", _frozen(self.slot_counts))
        windows = {int(r): _frozen(c) for r, c in self.window_counts.items()}
        object.__setattr__(self, "window_counts", MappingProxyType(windows))
        shapes = {
            "transitions": (self.transitions.shape, (k, k)),
            "first_states": (self.first_states.shape, (k,)),
            "group_counts": (self.group_counts.shape, (g, k)),
            **{f"window_counts[{r}]": (c.shape, (r, g, k)) for r, c in windows.items()},
        }
        wrong = {name: got for name, (got, want) in shapes.items() if got != want}
        if wrong or self.length_values.shape != self.length_users.shape:
            raise ValueError(f"inconsistent SequenceStats for {k} states and {g} groups: shapes {wrong}")

    def __getstate__(self) -> dict[str, Any]:  # pickling (caches copy values): the read-only mapping as a dict
        state = dict(self.__dict__)
        state["window_counts"] = dict(self.window_counts)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, MappingProxyType(value) if name == "window_counts" else value)

    @property
    def n_states(self) -> int:
        return len(self.states)

    @property
    def n_users(self) -> int:
        return int(self.length_users.sum())

    @property
    def n_entries(self) -> int:
        return int((self.length_values * self.length_users).sum())

    @property
    def max_length(self) -> int:
        return int(self.length_values[-1]) if self.length_values.size else 0

    @property
    def n_transitions(self) -> int:
        return int(self.transitions.sum())

    def state_counts(self, by_group: bool = False) -> np.ndarray:
        """How many entries have each state: shape (K,), or (n_groups, K) with ``by_group``."""
        if not by_group:
            return self.group_counts.sum(axis=0)
        if self.groups is None:
            raise DataError("these sequences have no group column, so they cannot be counted by group")
        return self.group_counts

    def windows(self, releases: int) -> np.ndarray:
        """``(releases, G, K)`` entries per time window, group and state (:func:`window_of`).

        Raises ValueError when these statistics were computed without that number of windows.
        """
        if releases not in self.window_counts:
            have = ", ".join(str(r) for r in sorted(self.window_counts)) or "none"
            raise ValueError(
                f"these statistics have no counts for {releases} time windows (they have: {have}); compute them"
                f" with windows=({releases},), e.g. load_stats(..., windows=({releases},)) or data.stats(windows="
                f"({releases},))"
            )
        return self.window_counts[releases]

    def window_edges(self, releases: int) -> np.ndarray:
        """The ``releases + 1`` edges of the time windows (keys as floats)."""
        return window_edges(self.time_min, self.time_max, releases)

    def slots(self) -> np.ndarray:
        """The per-step histograms ``(T_max, K)``; DataError when they were too large to keep."""
        if self.slot_counts is None:
            raise DataError(
                f"the per-step histograms of {self.max_length:,} steps × {self.n_states} states are over the limit"
                f" of {MAX_SLOT_CELLS:,} numbers; they are not kept for sequences this long"
            )
        return self.slot_counts

    def summary(self) -> dict[str, Any]:
        """Plain numbers and strings describing the data, for display (as :meth:`Sequences.summary`)."""
        out: dict[str, Any] = {
            "users": self.n_users,
            "entries": self.n_entries,
            "states": self.n_states,
            "state labels": ", ".join(self.states[:12]) + (" …" if self.n_states > 12 else ""),
            "shortest sequence": int(self.length_values[0]),
            "median sequence": _histogram_median(self.length_values, self.length_users),
            "longest sequence": self.max_length,
            "transitions": self.n_transitions,
        }
        if self.groups is not None:
            out["group column"] = self.group_column
            out["groups"] = len(self.groups)
            out["group labels"] = ", ".join(self.groups[:12]) + (" …" if len(self.groups) > 12 else "")
        out["first time"] = self.time_first
        out["last time"] = self.time_last
        return out

    def same_counts(self, other: SequenceStats) -> bool:
        """Whether ``other`` holds exactly the same labels and counts (every field but how it was read)."""
        if not isinstance(other, SequenceStats):
            return False
        arrays = ("transitions", "first_states", "length_values", "length_users", "group_counts")
        same = (
            self.states == other.states
            and self.groups == other.groups
            and all(np.array_equal(getattr(self, a), getattr(other, a)) for a in arrays)
            and (self.time_min, self.time_max, self.time_unit) == (other.time_min, other.time_max, other.time_unit)
            and set(self.window_counts) == set(other.window_counts)
            and all(np.array_equal(c, other.window_counts[r]) for r, c in self.window_counts.items())
        )
        slots = (self.slot_counts is None) == (other.slot_counts is None) and (
            self.slot_counts is None or np.array_equal(self.slot_counts, other.slot_counts)
        )
        return bool(same and slots)

    def __repr__(self) -> str:
        groups = "" if self.groups is None else f", groups={len(self.groups)}"
        return (
            f"SequenceStats(users={self.n_users}, entries={self.n_entries}, states={self.n_states}"
            f", max_length={self.max_length}{groups})"
        )


def _histogram_median(values: np.ndarray, counts: np.ndarray) -> float:
    """The median of the multiset where ``values[i]`` appears ``counts[i]`` times (as np.median would give)."""
    total = int(counts.sum())
    cumulative = np.cumsum(counts)
    lower = values[int(np.searchsorted(cumulative, (total - 1) // 2, side="right"))]
    upper = values[int(np.searchsorted(cumulative, total // 2, side="right"))]
    return float((float(lower) + float(upper)) / 2)


def window_edges(time_min: float, time_max: float, releases: int) -> np.ndarray:
    """Edges of ``releases`` equal-width windows over ``[time_min, time_max]``: np.linspace on the keys as floats."""
    return np.linspace(float(time_min), float(time_max), releases + 1)


def window_of(keys: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The window of each time key: the number of inner edges ``edges[1:-1]`` at or below it (0..r−1).

    An entry exactly on an inner edge opens the later window; the last time falls in the last
    window.  Compared as float64, the same way in numpy and in SQL.
    """
    releases = edges.size - 1
    return np.clip(np.searchsorted(edges, np.asarray(keys).astype(float), side="right") - 1, 0, releases - 1)


def check_windows(windows: Iterable[int] | int) -> tuple[int, ...]:
    """The numbers of time windows asked for, as a sorted tuple of distinct whole numbers ≥ 1."""
    items = (windows,) if isinstance(windows, (int, np.integer)) else tuple(windows)
    out = []
    for r in items:
        if not is_whole(r) or r < 1:
            raise ValueError(f"windows must be whole numbers ≥ 1 (how many time windows); got {r!r}")
        out.append(int(r))
    return tuple(sorted(set(out)))


def check_window_range(time_min: float, time_max: float, windows: tuple[int, ...]) -> None:
    if any(r > 1 for r in windows) and float(time_max) <= float(time_min):
        raise ValueError("all entries have the same time, so they cannot be cut into time windows")


def time_text(key: float | int, unit: str | None, utc: bool) -> str:
    """A time key as :class:`~puffer_core.data.Sequences` shows it (a pandas Timestamp, or the number)."""
    if unit is None:
        return str(key)
    return str(pd.Timestamp(int(key), unit=unit, tz="UTC" if utc else None))


def stats_from_codes(
    codes: np.ndarray,
    offsets: np.ndarray,
    group_codes: np.ndarray | None,
    time_key: np.ndarray,
    n_states: int,
    n_groups: int | None,
    windows: tuple[int, ...] = (),
) -> dict[str, Any]:
    """The counts of :class:`SequenceStats` from entries sorted by (user, time) (numpy; the reference).

    ``codes``: state codes; ``offsets``: user ``i``'s entries are ``offsets[i]:offsets[i+1]``;
    ``group_codes``: per entry, or None; ``time_key``: exact time keys.  Returns the fields as a dict.
    """
    k = n_states
    n = codes.size
    lengths = np.diff(offsets)
    user_index = np.repeat(np.arange(lengths.size), lengths)
    same = user_index[1:] == user_index[:-1]
    transitions = np.bincount(codes[:-1][same] * k + codes[1:][same], minlength=k * k).reshape(k, k)
    first_states = np.bincount(codes[offsets[:-1]], minlength=k)
    length_values, length_users = np.unique(lengths, return_counts=True)
    g = 1 if n_groups is None else n_groups
    group = np.zeros(n, dtype=np.int64) if group_codes is None else group_codes.astype(np.int64)
    group_counts = np.bincount(group * k + codes, minlength=g * k).reshape(g, k)
    time_min, time_max = (time_key.min(), time_key.max()) if n else (0, 0)
    check_window_range(time_min, time_max, windows)
    window_counts = {}
    for r in windows:
        window = window_of(time_key, window_edges(time_min, time_max, r))
        window_counts[r] = np.bincount((window * g + group) * k + codes, minlength=r * g * k).reshape(r, g, k)
    longest = int(lengths.max()) if lengths.size else 0
    slot_counts = None
    if longest * k <= MAX_SLOT_CELLS:
        position = np.arange(n) - offsets[:-1][user_index]
        slot_counts = np.bincount(position * k + codes, minlength=longest * k).reshape(longest, k)
    return {
        "transitions": transitions,
        "first_states": first_states,
        "length_values": length_values,
        "length_users": length_users,
        "group_counts": group_counts,
        "window_counts": window_counts,
        "slot_counts": slot_counts,
        "time_min": time_min.item() if isinstance(time_min, np.generic) else time_min,
        "time_max": time_max.item() if isinstance(time_max, np.generic) else time_max,
    }
