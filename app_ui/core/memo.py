"""What one session keeps so that a rerun does not build it again (nothing here is shared between sessions).

``st.cache_data`` and ``st.cache_resource`` share their values between every session of the server,
keyed by the arguments' values.  Some things belong to one session only — a result computed from
the data this session uploaded, a prior fitted to it — and are keyed by what the session knows
about them (a fingerprint of the data, a run's settings).  :func:`session_memo` keeps them in the
session's state under a name, each name with its own bound on how many it keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

import streamlit as st

T = TypeVar("T")


def session_memo(name: str, key: Hashable, build: Callable[[], T], max_entries: int = 64) -> T:
    """What ``build()`` returns, built once per ``key`` in this session and kept under ``name``.

    When ``name`` holds ``max_entries`` values and a new key comes, the oldest one is dropped.
    """
    memo: dict[Hashable, object] = st.session_state.setdefault(f"memo_{name}", {})
    if key in memo:
        return memo[key]  # type: ignore[return-value]
    value = build()
    while len(memo) >= max_entries:
        memo.pop(next(iter(memo)))
    memo[key] = value
    return value
