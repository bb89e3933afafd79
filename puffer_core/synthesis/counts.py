"""The sufficient statistics of a first-order chain, per group: :class:`ChainCounts` (docs/math.md §19).

A first-order Markov chain model of users' sequences needs, per group of users: the transition counts
``N_g[i, j]`` (how often a user of group g in state i is next in state j), the first-state counts
``F_g[i]`` (how many users of group g start in state i) and the length histogram (how many users of group g
have exactly T entries).  The synthesizer releases the first two with noise and treats the lengths as
public (docs/math.md §19.1); nothing else about the data is used.

A user's group is one value for the whole sequence (a country of residence, an age band): a user whose
entries carry two groups is refused, since a synthetic user is drawn from one group's chain.  Without a
group column everyone is one group (``groups`` is None).

Two more counts, ``runs`` (how many runs — maximal stays in one state — of each length) and ``visits``
(how many users visit each state at least once), are for the fidelity report only: they are never
released, and real data's are shown to its owner beside the synthetic data's (docs/math.md §19.5).

:func:`chain_counts` builds the value from :class:`~puffer_core.data.Sequences` (numpy, the reference) or
from :class:`~puffer_core.data.SequenceStats` (one pooled chain); :mod:`puffer_core.synthesis.sources`
computes the same value from event logs of any size in DuckDB or Spark.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..data.sequences import Sequences, preview_names
from ..data.stats import SequenceStats
from ..errors import DataError

RUN_BINS = 100  # dwell-time histograms: runs of 1..99 entries, and the last bin for 100 or more
ROLES = ("user", "time", "state", "group")


def _frozen(array: object, ndim: int, what: str) -> np.ndarray:
    out = np.array(array, dtype=np.int64)
    if out.ndim != ndim:
        raise ValueError(f"{what} must have {ndim} dimension(s); got shape {out.shape}")
    if out.size and out.min() < 0:
        raise ValueError(f"{what} are counts and cannot be negative")
    out.setflags(write=False)
    return out


def default_columns(group_column: str | None) -> dict[str, str | None]:
    """The column names of a synthetic table when the source's are not known: user, time, state (and the group's)."""
    return {"user": "user", "time": "time", "state": "state", "group": group_column}


@dataclass(frozen=True)
class ColumnNames(Mapping):
    """The source's column names by role (``user``, ``time``, ``state``, ``group``): a read-only mapping."""

    user: str
    time: str
    state: str
    group: str | None = None

    @classmethod
    def of(cls, names: Mapping[str, str | None]) -> ColumnNames:
        missing = [role for role in ("user", "time", "state") if not names.get(role)]
        if missing:
            raise ValueError(f"columns must name the user, time and state columns; got {dict(names)}")
        group = names.get("group")
        return cls(str(names["user"]), str(names["time"]), str(names["state"]), None if group is None else str(group))

    def __getitem__(self, role: str) -> str | None:
        if role not in ROLES:
            raise KeyError(role)
        return getattr(self, role)

    def __iter__(self) -> Iterator[str]:
        return iter(ROLES)

    def __len__(self) -> int:
        return len(ROLES)


class ChainShape:
    """The sizes every table of chain counts shares (true counts here, the noisy release in
    :mod:`puffer_core.synthesis.release`): K, G, users and transitions per group."""

    states: tuple[str, ...]
    groups: tuple[str, ...] | None
    length_values: np.ndarray
    length_users: np.ndarray

    @property
    def n_states(self) -> int:
        return len(self.states)

    @property
    def n_groups(self) -> int:
        return 1 if self.groups is None else len(self.groups)

    @property
    def users_per_group(self) -> np.ndarray:
        """``(G,)`` users in each group."""
        return self.length_users.sum(axis=1)

    @property
    def transitions_per_group(self) -> np.ndarray:
        """``(G,)`` transitions in each group: Σ over its users of (T − 1)."""
        return self.length_users @ (self.length_values - 1)


@dataclass(frozen=True, eq=False)
class ChainCounts(ChainShape):
    """Per-group counts of users' sequences: what the synthesizer needs, and what fidelity compares (module docstring).

    Attributes
    ----------
    states, groups:
        The state labels (code k is ``states[k]``) and the group labels (None: one group, no group column).
    transitions:
        ``(G, K, K)``: ``[g, i, j]`` counts the entries of users of group g in state i followed by j.
    first_states:
        ``(G, K)``: users of group g whose first entry is in state i.
    length_values, length_users:
        The distinct sequence lengths, ascending, and ``(G, L)`` how many users of group g have each.
    columns:
        The source's column names by role (``user``, ``time``, ``state``, ``group``): a synthetic table uses them.
    runs:
        ``(G, K, RUN_BINS)`` or None: runs of state i lasting d entries (``[.., d − 1]``; the last bin: ≥ RUN_BINS).
    visits:
        ``(G, K)`` or None: users of group g with at least one entry in state i.
    """

    states: tuple[str, ...]
    groups: tuple[str, ...] | None
    transitions: np.ndarray
    first_states: np.ndarray
    length_values: np.ndarray
    length_users: np.ndarray
    columns: Mapping[str, str | None] = field(default_factory=lambda: ColumnNames("user", "time", "state"))
    runs: np.ndarray | None = None
    visits: np.ndarray | None = None

    def __post_init__(self) -> None:
        k = len(self.states)
        g = 1 if self.groups is None else len(self.groups)
        if k < 2:
            raise ValueError(f"a chain needs at least 2 states; got {k}")
        object.__setattr__(self, "states", tuple(str(s) for s in self.states))
        if self.groups is not None:
            object.__setattr__(self, "groups", tuple(str(s) for s in self.groups))
        for name, ndim in (("transitions", 3), ("first_states", 2), ("length_values", 1), ("length_users", 2)):
            object.__setattr__(self, name, _frozen(getattr(self, name), ndim, name))
        for name, ndim in (("runs", 3), ("visits", 2)):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _frozen(getattr(self, name), ndim, name))
        want = {
            "transitions": (g, k, k),
            "first_states": (g, k),
            "length_users": (g, self.length_values.size),
            "runs": (g, k, RUN_BINS),
            "visits": (g, k),
        }
        wrong = {
            name: getattr(self, name).shape
            for name, shape in want.items()
            if getattr(self, name) is not None and getattr(self, name).shape != shape
        }
        if wrong:
            raise ValueError(f"inconsistent ChainCounts for {k} states and {g} group(s): shapes {wrong}")
        if self.length_values.size and (self.length_values.min() < 1 or np.any(np.diff(self.length_values) <= 0)):
            raise ValueError("length_values must be distinct whole numbers ≥ 1, ascending")
        columns = ColumnNames.of(self.columns)
        if (columns.group is None) != (self.groups is None):
            raise ValueError("columns must name a group column exactly when there are groups")
        object.__setattr__(self, "columns", columns)
        users = self.users_per_group
        wrong_first = np.flatnonzero(self.first_states.sum(axis=1) != users)
        wrong_moves = np.flatnonzero(self.transitions.sum(axis=(1, 2)) != self.transitions_per_group)
        if wrong_first.size or wrong_moves.size:
            raise ValueError(
                "inconsistent ChainCounts: every user has one first state and a user of length T makes T − 1"
                f" transitions, but group(s) {self.group_names(np.union1d(wrong_first, wrong_moves))} disagree"
            )

    # --- sizes ---------------------------------------------------------------------------------------------------

    @property
    def rows_per_group(self) -> np.ndarray:
        """``(G,)`` entries in each group."""
        return self.length_users @ self.length_values

    @property
    def n_users(self) -> int:
        return int(self.length_users.sum())

    @property
    def n_rows(self) -> int:
        return int(self.rows_per_group.sum())

    @property
    def max_length(self) -> int:
        return int(self.length_values[-1]) if self.length_values.size else 0

    def entries(self) -> np.ndarray:
        """``(G, K)`` entries per group and state: the first entries plus the transitions into each state."""
        return self.first_states + self.transitions.sum(axis=1)

    def group_names(self, indices: object) -> str:
        """Group labels for messages (``'all users'`` without groups)."""
        if self.groups is None:
            return "'all users'"
        return preview_names([self.groups[int(i)] for i in np.atleast_1d(np.asarray(indices))])

    def pooled(self) -> ChainCounts:
        """The same counts with every group merged into one (the fidelity of a whole table)."""
        if self.groups is None:
            return self
        columns = dict(self.columns) | {"group": None}
        return ChainCounts(
            self.states, None, self.transitions.sum(axis=0, keepdims=True),
            self.first_states.sum(axis=0, keepdims=True), self.length_values,
            self.length_users.sum(axis=0, keepdims=True), columns,
            None if self.runs is None else self.runs.sum(axis=0, keepdims=True),
            None if self.visits is None else self.visits.sum(axis=0, keepdims=True),
        )

    def __repr__(self) -> str:
        groups = "" if self.groups is None else f", groups={self.n_groups}"
        return f"ChainCounts(users={self.n_users}, rows={self.n_rows}, states={self.n_states}{groups})"


def chain_counts(data: Sequences | SequenceStats, by_group: bool | None = None,
                 columns: Mapping[str, str | None] | None = None) -> ChainCounts:
    """The :class:`ChainCounts` of ``data`` (docs/math.md §19.1).

    ``data``: :class:`~puffer_core.data.Sequences` (every count, per group when it has a group column, with the
    runs and visits fidelity shows) or :class:`~puffer_core.data.SequenceStats` (one chain for everyone: their
    transitions are pooled over groups; use :func:`puffer_core.synthesis.sources.load_chain_counts` for one chain
    per group from data of any size).  ``by_group``: one chain per group (default: when the data has groups),
    or False for one chain for everyone.  ``columns``: the source's column names by role (default: user, time,
    state and the group column's name).
    """
    if not isinstance(data, (Sequences, SequenceStats)):
        raise TypeError(
            f"data must be Sequences (load_sequences) or SequenceStats (load_stats); got {type(data).__name__}"
        )
    grouped = data.groups is not None if by_group is None else bool(by_group)
    if grouped and data.groups is None:
        raise DataError("these sequences have no group column, so they cannot be synthesized group by group")
    names = dict(default_columns(data.group_column if grouped else None))
    if columns is not None:
        names |= {role: columns[role] for role in ROLES if role in columns}
        if not grouped:
            names["group"] = None
    if isinstance(data, SequenceStats):
        if grouped:
            raise DataError(
                "SequenceStats hold the transitions of all groups pooled together, so they give one chain for"
                " everyone: pass by_group=False, or give the rows (Sequences), or count per group with"
                " puffer_core.synthesis.load_chain_counts(...) (DuckDB or Spark, data of any size)"
            )
        return ChainCounts(
            data.states, None, data.transitions[None], data.first_states[None], data.length_values,
            data.length_users[None], names,
        )
    return _from_sequences(data, grouped, names)


def _from_sequences(data: Sequences, grouped: bool, names: dict[str, str | None]) -> ChainCounts:
    k = data.n_states
    codes = np.asarray(data.codes, dtype=np.int64)
    offsets = np.asarray(data.offsets, dtype=np.int64)
    users = np.asarray(data.user_index, dtype=np.int64)
    starts = offsets[:-1]
    if grouped:
        entry_group = np.asarray(data.group_codes, dtype=np.int64)
        user_group = entry_group[starts]
        mixed = np.flatnonzero(entry_group != user_group[users])
        if mixed.size:
            example = data.users[users[mixed[0]]]
            n_mixed = np.unique(users[mixed]).size
            raise DataError(
                f"{n_mixed:,} user(s) have entries in more than one group of '{data.group_column}' (for example user"
                f" {example!r}); a synthetic user is drawn from one group's chain, so the group must be the same for"
                " all of a user's entries (a country of residence, an age band). Synthesize without a group column,"
                " or choose a group column that is constant per user"
            )
        n_groups = len(data.groups or ())
    else:
        user_group = np.zeros(offsets.size - 1, dtype=np.int64)
        n_groups = 1
    group_of_entry = user_group[users]
    same = users[1:] == users[:-1]
    pair = (group_of_entry[1:][same] * k + codes[:-1][same]) * k + codes[1:][same]
    transitions = np.bincount(pair, minlength=n_groups * k * k).reshape(n_groups, k, k)
    first_states = np.bincount(user_group * k + codes[starts], minlength=n_groups * k).reshape(n_groups, k)
    lengths = np.diff(offsets)
    length_values, length_index = np.unique(lengths, return_inverse=True)
    n_lengths = length_values.size
    length_users = np.bincount(user_group * n_lengths + length_index, minlength=n_groups * n_lengths)
    runs, visits = run_and_visit_counts(codes, offsets, user_group, k, n_groups)
    return ChainCounts(
        data.states, data.groups if grouped else None, transitions, first_states, length_values,
        length_users.reshape(n_groups, n_lengths), names, runs, visits,
    )


def run_and_visit_counts(codes: np.ndarray, offsets: np.ndarray, user_group: np.ndarray, k: int,
                         n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Runs of each state by length (capped at :data:`RUN_BINS`) and users visiting each state, per group.

    ``codes``: state codes of entries sorted by (user, time); user ``u``'s entries are ``offsets[u]:offsets[u+1]``;
    ``user_group``: each user's group code.  Returns ``(G, K, RUN_BINS)`` and ``(G, K)``.
    """
    n = codes.size
    lengths = np.diff(offsets)
    user_of = np.repeat(np.arange(lengths.size), lengths)
    begins = np.ones(n, dtype=bool)
    if n > 1:
        begins[1:] = (codes[1:] != codes[:-1]) | (user_of[1:] != user_of[:-1])
    run_start = np.flatnonzero(begins)
    run_length = np.diff(np.append(run_start, n))
    run_group = user_group[user_of[run_start]]
    run_state = codes[run_start]
    cell = (run_group * k + run_state) * RUN_BINS + np.minimum(run_length, RUN_BINS) - 1
    runs = np.bincount(cell, minlength=n_groups * k * RUN_BINS).reshape(n_groups, k, RUN_BINS)
    seen = np.unique(user_of.astype(np.int64) * k + codes)
    visit_user, visit_state = seen // k, seen % k
    visits = np.bincount(user_group[visit_user] * k + visit_state, minlength=n_groups * k).reshape(n_groups, k)
    return runs, visits
