"""Each secret pair as two sets of sequences, for the exact audits that enumerate sequences (docs/math.md §9, §16).

A secret pair (s, s') of one user's sequence is a pair of disjoint events; over an enumeration of every
sequence of a chain each is a boolean mask.  Value pairs: X_t = x against X_t = x' at a protected entry t.
Event secrets: "some entry of the window in A" against "none", both ways.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .events import EventSecrets
from .values import Secrets


def secret_masks(secrets: Secrets | EventSecrets, sequences: np.ndarray, n_states: int
                 ) -> Iterator[tuple[str, int | None, tuple[int, int] | None, np.ndarray, np.ndarray]]:
    """(label, entry, pair, mask of s, mask of s') for every ordered secret pair over ``sequences`` (rows).

    ``entry`` is the 0-based entry (the window's first for an event), ``pair`` the two states of a value
    pair (None for an event).  Entries beyond the sequences' length are skipped.
    """
    length = sequences.shape[1]
    if isinstance(secrets, EventSecrets):
        in_a = secrets.state_mask(n_states)
        for first, last in secrets.windows:
            if last >= length:
                continue
            some = in_a[sequences[:, first : last + 1]].any(axis=1)
            label = f"in {list(secrets.states)} during entries {first + 1}–{last + 1}"
            yield f"{label} vs never", first, None, some, ~some
            yield f"never vs {label}", first, None, ~some, some
        return
    pairs = secrets.pair_matrix(n_states)
    protected = secrets.position_mask(length)
    for t in np.flatnonzero(protected):
        values = sequences[:, t]
        for x, xp in zip(*np.nonzero(pairs)):
            yield f"X_{t + 1} = {x} vs {xp}", int(t), (int(x), int(xp)), values == x, values == xp
