"""Value pairs and protected positions: the :class:`Secrets` value (docs/math.md §16).

For a sequence X_1..X_T of states in {0..K−1}, the discriminative pairs are
Q = {(X_t = x, X_t = x') : t ∈ I, (x, x') ∈ E}: a set I of protected positions and a set E of value pairs.
Restricting Q only restricts the outer maximum of every a(b) computation (over t, x, x'); the splits, the
supremum over Θ and the minimum over splits are unchanged, so a smaller Q can only lower a(b).  Unprotected
entries are still data: they carry correlation.

Positions are 0-based indices into the sequence (entry t = 1 of docs/math.md is index 0).  States are the
prior's state indices.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import pandas as pd

from ..validation import InvalidParameter, check_choice, check_flag, is_whole
from .rules import TimeRule

PAIR_KINDS = ("all", "sensitive", "groups", "list")


MAX_INDEX = 1_000_000  # no prior has more states, no sequence more entries (priors.models.MAX_LENGTH)


def _states(name: str, values: object) -> tuple[int, ...]:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a list of state indices; got {values!r}")
    out = []
    for v in values:
        if not is_whole(v):
            raise InvalidParameter(f"{name} must hold state indices (whole numbers ≥ 0); got {v!r}")
        if not 0 <= int(v) <= MAX_INDEX:
            raise ValueError(f"{name} must hold indices 0..{MAX_INDEX:,} (whole numbers); got {v!r}")
        out.append(int(v))
    return tuple(out)


@dataclass(frozen=True)
class Secrets:
    """Which entries are secret and which pairs of their values must stay indistinguishable.

    ``pairs`` says which value pairs E are protected at every protected position:

    - ``"all"`` (default): every pair of distinct states;
    - ``"sensitive"``: each state of ``states`` against every other state ("at the clinic rather than
      anywhere else"), both ways;
    - ``"groups"``: pairs of distinct states inside each group of ``groups`` (e.g. which disease, among
      diseases), both ways;
    - ``"list"``: the pairs of ``listed``, both ways unless ``ordered`` (then (x, x') protects only
      "x rather than x'").

    ``positions``: the protected entries as 0-based indices into the sequence; ``None`` (default) protects
    every entry.  ``rule``: a :class:`~puffer_core.secrets.rules.TimeRule` on the time column (night hours,
    weekends, dates); it is turned into positions by :meth:`resolve` (on data) or :meth:`on_grid` (a regular
    time grid), which keep the rule for the words.  Until then :meth:`position_mask` refuses it.
    """

    pairs: str = "all"
    states: tuple[int, ...] = ()
    groups: tuple[tuple[int, ...], ...] = ()
    listed: tuple[tuple[int, int], ...] = ()
    ordered: bool = False
    positions: tuple[int, ...] | None = None
    rule: TimeRule | None = None

    def __post_init__(self) -> None:
        check_choice("pairs", self.pairs, PAIR_KINDS)
        object.__setattr__(self, "states", tuple(sorted(set(_states("states", self.states)))))
        groups = tuple(tuple(sorted(set(_states("each group", g)))) for g in self.groups) \
            if isinstance(self.groups, Iterable) and not isinstance(self.groups, (str, bytes)) else None
        if groups is None:
            raise TypeError(f"groups must be a list of lists of state indices; got {self.groups!r}")
        object.__setattr__(self, "groups", groups)
        if isinstance(self.listed, (str, bytes)) or not isinstance(self.listed, Iterable):
            raise TypeError(f"listed must be a list of pairs (x, y) of state indices; got {self.listed!r}")
        listed: list[tuple[int, ...]] = []
        for given in self.listed:
            pair = _states("each listed pair", given)
            if len(pair) != 2 or pair[0] == pair[1]:
                raise ValueError(f"each listed pair must be two different states; got {pair!r}")
            if pair not in listed:
                listed.append(pair)
        object.__setattr__(self, "listed", tuple(listed))
        object.__setattr__(self, "ordered", check_flag("ordered", self.ordered))
        if self.positions is not None:
            positions = tuple(sorted(set(_states("positions", self.positions))))
            if not positions:
                raise ValueError("positions must name at least one protected entry (None protects every entry)")
            object.__setattr__(self, "positions", positions)
        if self.rule is not None and not isinstance(self.rule, TimeRule):
            raise TypeError(f"rule must be a TimeRule (puffer_core.secrets.TimeRule); got {self.rule!r}")
        if self.pairs == "sensitive" and not self.states:
            raise ValueError("pairs='sensitive' needs the sensitive states (states=[...])")
        if self.pairs == "groups" and not any(len(set(g)) >= 2 for g in self.groups):
            raise ValueError("pairs='groups' needs at least one group of two or more states (groups=[[...], ...])")
        if self.pairs == "list" and not self.listed:
            raise ValueError("pairs='list' needs at least one pair of states (listed=[(x, y), ...])")

    @property
    def is_all(self) -> bool:
        """Every entry and every pair of distinct states (the default, the most pessimistic choice)."""
        return self.pairs == "all" and self.positions is None and self.rule is None

    @property
    def resolved(self) -> bool:
        """False while a time rule still waits for the times it applies to (:meth:`resolve`, :meth:`on_grid`)."""
        return self.rule is None or self.positions is not None

    def resolve(self, data: object) -> Secrets:
        """These secrets with the time rule applied to ``data`` (:class:`~puffer_core.data.sequences.Sequences`).

        Position t is protected when the rule matches the time of some user's entry t (the union over
        users: docs/math.md §16); positions already given are kept only where the rule matches too.
        Without a rule, the secrets themselves.
        """
        if self.rule is None:
            return self
        frame = getattr(data, "frame", None)
        offsets, user_index = getattr(data, "offsets", None), getattr(data, "user_index", None)
        if frame is None or offsets is None or user_index is None or "time" not in frame:
            raise TypeError(
                f"resolve takes the data as Sequences (load_sequences, load_dataset); got {type(data).__name__}")
        hit = self.rule.matches(frame["time"].to_numpy())
        position = np.arange(hit.size) - np.asarray(offsets)[:-1][np.asarray(user_index)]
        found = set(np.unique(position[hit]).tolist())
        return self._with_positions(found, "no entry of the data")

    def on_grid(self, start: object, step: object, length: int) -> Secrets:
        """These secrets with the time rule applied to a regular grid: entry t (0-based) at ``start`` + t·``step``.

        ``start``: the first entry's date and time (text or a timestamp); ``step``: the time between entries
        (a pandas offset such as ``"1h"``, ``"5min"``, ``"1D"``, or a timedelta).
        """
        from ..validation import check_whole

        length = check_whole("length", length)
        if self.rule is None:
            return self
        try:
            times = pd.date_range(pd.Timestamp(start), periods=length, freq=pd.Timedelta(step))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"start must be a date and time and step a duration such as '1h'; {exc}") from None
        found = set(np.flatnonzero(self.rule.matches(times)).tolist())
        return self._with_positions(found, f"no entry of the grid from {times[0]} every {step}")

    def _with_positions(self, found: set[int], where: str) -> Secrets:
        if self.positions is not None:
            found &= set(self.positions)
        if not found:
            raise ValueError(f"{where} matches the rule ({self.rule.words() if self.rule else ''}): nothing would be"
                             " protected; widen the rule or protect every entry")
        return replace(self, positions=tuple(sorted(found)))

    def check(self, n_states: int) -> Secrets:
        """The secrets, after checking that every state they name exists among ``n_states`` (ValueError)."""
        self.pair_matrix(n_states)
        return self

    def sentence(self, labels: Sequence[str] | None = None, eps: float | None = None,
                 prior_words: str | None = None) -> str:
        """What is protected, in one plain sentence (docs/math.md §16): "An attacker who believes … cannot
        tell whether a user was at the clinic rather than anywhere else at night-time hours (22:00–05:59) by
        more than a factor e^1." ``labels``: the state names; ``eps``: the guarantee (ε_puffer)."""
        from .words import secrets_sentence

        return secrets_sentence(self, labels, eps, prior_words)

    def words(self, labels: Sequence[str] | None = None) -> str:
        """What is protected, as the middle of :meth:`sentence` ("whether a user was at … at any entry")."""
        from .words import protected_words

        return protected_words(self, labels)

    def to_text(self) -> str:
        """A compact text form for links ("" for every pair at every entry); :func:`~puffer_core.secrets.read_secrets`
        reads it back to an equal value."""
        from .words import secrets_text

        return secrets_text(self)

    def source(self) -> str:
        """These secrets as a Python expression (for exported scripts; names from ``puffer_core.secrets``)."""
        from .words import secrets_source

        return secrets_source(self)

    def pair_matrix(self, n_states: int) -> np.ndarray:
        """A K×K boolean matrix: ``[x, x']`` is True when (X_t = x, X_t = x') is a protected ordered pair.

        The diagonal is False.  States named here must exist: a state index ≥ K is refused.
        """
        k = int(n_states)
        named = set(self.states) | {s for g in self.groups for s in g} | {s for p in self.listed for s in p}
        if self.pairs != "all" and named and max(named) >= k:
            raise ValueError(f"the secrets name state {max(named)}, but the prior has {k} states (0..{k - 1})")
        if self.pairs == "all":
            out = np.ones((k, k), dtype=bool)
        else:
            out = np.zeros((k, k), dtype=bool)
            if self.pairs == "sensitive":
                for s in self.states:
                    out[s, :] = out[:, s] = True
            elif self.pairs == "groups":
                for g in self.groups:
                    idx = np.array(sorted(set(g)), dtype=int)
                    out[np.ix_(idx, idx)] = True
            else:
                for x, y in self.listed:
                    out[x, y] = True
                    if not self.ordered:
                        out[y, x] = True
        np.fill_diagonal(out, False)
        return out

    def position_mask(self, length: int) -> np.ndarray:
        """A boolean vector of ``length``: True at the protected entries (positions beyond the sequence are
        ignored: a shorter sequence of Θ simply has fewer protected entries)."""
        n = int(length)
        if not self.resolved:
            raise ValueError(
                f"these secrets choose entries by a rule on the time column ({self.rule.words()});"  # type: ignore[union-attr]
                " apply it first: secrets.resolve(data) on the data, or secrets.on_grid(start, step, length)"
            )
        if self.positions is None:
            return np.ones(n, dtype=bool)
        out = np.zeros(n, dtype=bool)
        array = self._position_array
        out[array[array < n]] = True
        return out

    @cached_property
    def _position_array(self) -> np.ndarray:
        """The protected positions as an integer array (computed once: a rule on a long grid protects many)."""
        return np.fromiter(self.positions or (), dtype=np.int64)

    def pair_mask(self, n_states: int, length: int) -> np.ndarray:
        """A T×K×K boolean array: ``[t, x, x']`` True when (X_t = x, X_t = x') is a protected ordered pair."""
        return self.position_mask(length)[:, None, None] & self.pair_matrix(n_states)[None, :, :]

    def check_within(self, length: int) -> None:
        """Refuse positions that all lie beyond a sequence of ``length`` entries: nothing would be protected, and
        a release calibrated to protect nothing would be reported as private."""
        if self.positions is not None and not self.position_mask(length).any():
            raise ValueError(f"every protected position ({self.positions[0] + 1}…, 1-based) lies beyond the"
                             f" sequences' {int(length)} entries: nothing would be protected")


ALL_SECRETS = Secrets()


def as_secrets(secrets: object) -> Secrets:
    """``None`` → :data:`ALL_SECRETS`; a :class:`Secrets` as it is; anything else is refused (TypeError)."""
    if secrets is None:
        return ALL_SECRETS
    if isinstance(secrets, Secrets):
        return secrets
    raise TypeError(f"secrets must be a Secrets value (puffer_core.secrets.Secrets) or None; got {secrets!r}")
