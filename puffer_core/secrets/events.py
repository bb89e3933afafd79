"""Event secrets: "at some time in window W the user was in a state of A" against "never in A during W"
(docs/math.md §16; [ST]: PriSTE, Cao, Xiao, Xiong & Bai, ICDE 2019).

One pair of secrets per window: s = "X_t ∈ A for some t ∈ W" and s' = "X_t ∉ A for every t ∈ W", both ways
(the odds of having visited the clinic last week against not having visited it).  Windows are runs of
consecutive positions, 0-based and inclusive, like :class:`~puffer_core.secrets.values.Secrets` positions.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..validation import InvalidParameter, is_whole
from .values import MAX_INDEX


def _whole(name: str, value: object) -> int:
    if not is_whole(value):
        raise InvalidParameter(f"{name} must be a whole number ≥ 0; got {value!r}")
    number = operator.index(value)  # is_whole: an integer of some kind
    if not 0 <= number <= MAX_INDEX:
        raise ValueError(f"{name} must be a whole number 0..{MAX_INDEX:,}; got {value!r}")
    return number


@dataclass(frozen=True)
class EventSecrets:
    """Event secrets: for each window (first, last) of ``windows``, "the user was in a state of ``states``
    at some entry first..last" against "at none of them" (docs/math.md §16).

    ``states`` (the set A) are state indices; ``windows`` are (first, last) pairs of 0-based positions,
    inclusive (one window: ``windows=((0, 6),)`` for the first week of daily entries).
    """

    states: tuple[int, ...]
    windows: tuple[tuple[int, int], ...]

    def __post_init__(self) -> None:
        if isinstance(self.states, (str, bytes, Mapping)) or not isinstance(self.states, Iterable):
            raise TypeError(f"states must be a list of state indices (the set A); got {self.states!r}")
        states = tuple(sorted({_whole("each state of A", s) for s in self.states}))
        if not states:
            raise ValueError("an event secret needs the states A (states=[...]) whose visit is secret")
        if isinstance(self.windows, (str, bytes)) or not isinstance(self.windows, Iterable):
            raise TypeError(f"windows must be a list of (first, last) positions; got {self.windows!r}")
        windows = []
        for w in self.windows:
            if isinstance(w, (str, bytes)) or not isinstance(w, Iterable):
                raise InvalidParameter(f"each window must be a pair (first, last) of 0-based positions; got {w!r}")
            if len(tuple(w)) != 2:
                raise ValueError(f"each window must be a pair (first, last) of 0-based positions; got {w!r}")
            first, last = (_whole("a window's first position", w[0]), _whole("a window's last position", w[1]))
            if last < first:
                raise ValueError(f"the window ({first}, {last}) ends before it starts")
            windows.append((first, last))
        if not windows:
            raise ValueError("an event secret needs at least one window (windows=[(first, last)])")
        object.__setattr__(self, "states", states)
        object.__setattr__(self, "windows", tuple(sorted(set(windows))))

    @property
    def longest(self) -> int:
        """|W| of the longest window: a(b) = ∞ for b below it (H must hold the whole window)."""
        return max(last - first + 1 for first, last in self.windows)

    def state_mask(self, n_states: int) -> np.ndarray:
        """A boolean vector over the K states: True on A.  A must name existing states and leave one out."""
        k = int(n_states)
        if max(self.states) >= k:
            raise ValueError(f"the event names state {max(self.states)}, but the prior has {k} states (0..{k - 1})")
        if len(self.states) == k:
            raise ValueError("the event's states A are every state: 'never in A' is impossible, so there is no"
                             " secret; leave at least one state out of A")
        out = np.zeros(k, dtype=bool)
        out[list(self.states)] = True
        return out

    def check(self, n_states: int, length: int) -> EventSecrets:
        """The event secrets after checking them against K states and sequences of ``length`` entries."""
        self.state_mask(n_states)
        for first, last in self.windows:
            if last >= length:
                raise ValueError(f"the window {first + 1}..{last + 1} (1-based entries) runs past the sequence's"
                                 f" {length} entries; every window must lie inside every sequence")
        return self

    def sentence(self, labels: Sequence[str] | None = None, eps: float | None = None,
                 prior_words: str | None = None) -> str:
        """What is protected, in one plain sentence (see :meth:`Secrets.sentence`)."""
        from .words import secrets_sentence

        return secrets_sentence(self, labels, eps, prior_words)

    def words(self, labels: Sequence[str] | None = None) -> str:
        from .words import protected_words

        return protected_words(self, labels)

    def to_text(self) -> str:
        from .words import secrets_text

        return secrets_text(self)

    def source(self) -> str:
        from .words import secrets_source

        return secrets_source(self)
