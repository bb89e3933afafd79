"""Data repair on the reading path: empty cells and repeated rows dropped on request, and counted (docs/math.md §1).

The expected results are built independently of the reader: the clean table is written by hand
(or by a plain Python loop over the rows), loaded without any repair, and compared with the
repaired load of the dirty table.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from puffer_core.data.readers import Repair, find_repairs, load_sequences, load_with_repair, read_table
from puffer_core.errors import DataError

DIRTY = (
    b"user,time,state,note\n"
    b"ann,1,a,x\n"
    b"ann,2,b,\n"  # an empty cell in a column that is not used: kept
    b"ann,2,b,y\n"  # repeats the row above in the chosen columns: a duplicate
    b"ann,3,,z\n"  # empty state
    b"bob,1,b,x\n"
    b"bob,1,b,x\n"  # exact duplicate
    b",2,a,x\n"  # empty user
    b"bob,2,a,x\n"
)
CLEAN = b"user,time,state\nann,1,a\nann,2,b\nbob,1,b\nbob,2,a\n"


def same_sequences(left, right) -> None:
    assert left.states == right.states
    assert list(left.users) == list(right.users)
    assert list(left.codes) == list(right.codes)
    assert list(left.offsets) == list(right.offsets)


def test_without_repair_the_dirty_file_is_refused_as_before() -> None:
    with pytest.raises(DataError, match="2 row\\(s\\) of the data have missing values"):
        load_sequences(DIRTY)
    with pytest.raises(DataError, match="repeat a \\(user, time\\) pair"):
        load_sequences(DIRTY, drop_missing=True)


def test_both_repairs_give_the_hand_cleaned_table_and_the_counts() -> None:
    loaded = load_with_repair(DIRTY, drop_missing=True, drop_duplicates=True)
    same_sequences(loaded.sequences, load_sequences(CLEAN))
    assert loaded.repair == Repair(rows_read=8, missing=2, duplicates=2, drop_missing=True, drop_duplicates=True)
    assert (loaded.repair.missing_dropped, loaded.repair.duplicates_dropped) == (2, 2)
    assert loaded.repair.dropped == 4 and loaded.repair.rows_kept == 4
    assert loaded.repair.describe() == "2 row(s) with an empty cell and 2 repeated row(s)"
    assert find_repairs(DIRTY).describe() == ""
    assert load_sequences(DIRTY, drop_missing=True, drop_duplicates=True).n_entries == 4


def test_find_repairs_counts_without_dropping() -> None:
    assert find_repairs(DIRTY) == Repair(8, 2, 2)
    assert find_repairs(DIRTY).dropped == 0
    # the unused 'note' column is not looked at; as a group column its empty cell counts
    assert find_repairs(DIRTY, group="note").missing == 3
    assert find_repairs(CLEAN) == Repair(4, 0, 0)


def test_one_repair_alone_counts_only_what_it_dropped() -> None:
    only_missing = b"user,time,state\nu,1,a\nu,2,\nu,3,b\n"
    loaded = load_with_repair(only_missing, drop_missing=True)
    assert loaded.repair.dropped == 1 and loaded.sequences.n_entries == 2
    only_copies = b"user,time,state\nu,1,a\nu,1,a\nu,2,b\nu,2,b\nu,2,b\n"
    loaded = load_with_repair(only_copies, drop_duplicates=True)
    assert (loaded.repair.duplicates_dropped, loaded.repair.missing_dropped) == (3, 0)
    assert loaded.sequences.n_entries == 2


def test_a_conflict_is_not_a_duplicate() -> None:
    conflict = b"user,time,state\nu,1,a\nu,1,b\nu,2,a\n"
    assert find_repairs(conflict).duplicates == 0
    with pytest.raises(DataError, match="repeat a \\(user, time\\) pair"):
        load_with_repair(conflict, drop_duplicates=True)


def test_nothing_left_and_shifted_rows_are_said() -> None:
    with pytest.raises(DataError, match="every row of the data was dropped \\(2 row\\(s\\) with an empty cell\\)"):
        load_with_repair(b"user,time,state\nu,,a\n,1,b\n", drop_missing=True)
    with pytest.raises(DataError, match="counted after the 1 row\\(s\\) with an empty cell were dropped"):
        load_with_repair(b"user,time,state\nu,,a\nu,1,a\nu,soon,b\n", drop_missing=True)


def test_every_source_kind_and_a_parsed_table_repair_alike() -> None:
    frame = pd.read_csv(io.BytesIO(DIRTY))
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    expected = load_sequences(CLEAN)
    for source in (DIRTY, frame, buffer.getvalue(), read_table(DIRTY)):
        loaded = load_with_repair(source, drop_missing=True, drop_duplicates=True)
        same_sequences(loaded.sequences, expected)
        assert (loaded.repair.missing, loaded.repair.duplicates) == (2, 2)


def test_flags_must_be_booleans() -> None:
    with pytest.raises(ValueError, match="drop_missing must be True or False"):
        load_with_repair(CLEAN, drop_missing="yes")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["u", "v", "w", None]), st.integers(0, 6), st.sampled_from(["a", "b", None])),
        min_size=1,
        max_size=40,
    )
)
def test_repair_matches_a_plain_loop(rows: list[tuple[object, int, object]]) -> None:
    """Counts and kept rows equal those of a loop that keeps the first complete copy of each row."""
    seen: set[tuple[object, int, object]] = set()
    kept: list[tuple[object, int, object]] = []
    missing = duplicates = 0
    for row in rows:
        if None in row:
            missing += 1
        elif row in seen:
            duplicates += 1
        else:
            seen.add(row)
            kept.append(row)
    frame = pd.DataFrame(rows, columns=["user", "time", "state"])
    assert find_repairs(frame) == Repair(len(rows), missing, duplicates)
    pairs = [(u, t) for u, t, _ in kept]
    loadable = kept and len(set(pairs)) == len(pairs) and len({s for *_, s in kept}) >= 2
    if not loadable:
        with pytest.raises(DataError):
            load_with_repair(frame, drop_missing=True, drop_duplicates=True)
        return
    loaded = load_with_repair(frame, drop_missing=True, drop_duplicates=True)
    assert loaded.repair.rows_kept == len(kept)
    same_sequences(loaded.sequences, load_sequences(pd.DataFrame(kept, columns=["user", "time", "state"])))
    assert np.all(np.diff(loaded.sequences.offsets) >= 1)


def test_an_endless_stream_is_refused_after_the_cap_not_read_to_the_end() -> None:
    """/dev/zero (or a pipe that never ends) stops at MAX_BYTES + 1 bytes with a message, never a MemoryError."""
    import os

    import pytest

    from puffer_core.data import readers
    from puffer_core.errors import DataError

    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero on this system")
    original = readers.MAX_BYTES
    readers.MAX_BYTES = 1 << 20
    try:
        with pytest.raises(DataError, match="larger than .*load_stats"):
            readers.load_sequences("/dev/zero")
    finally:
        readers.MAX_BYTES = original


def test_blank_text_is_missing_on_every_route() -> None:
    """Empty or blank text (spaces, a tab) in a chosen column is a missing value, counted like an empty CSV cell:
    in a DataFrame, a Parquet file and a CSV file, by numpy and by the SQL engine alike (docs/data.md)."""
    from puffer_core.data.engines import repair_counts

    frame = pd.DataFrame({"user": ["u", "u", " ", "v", "v"], "time": [1, 2, 3, 1, 2],
                          "state": ["a", "\t", "b", "", "b"], "note": ["", "x", "y", "z", "w"]})
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    csv = frame.to_csv(index=False).encode()
    for source in (frame, buffer.getvalue(), csv):
        assert find_repairs(source) == Repair(5, 3, 0)
        assert repair_counts(source) == (5, 3, 0)
        loaded = load_with_repair(source, drop_missing=True)
        assert loaded.sequences.n_entries == 2 and loaded.sequences.states == ("a", "b")
        with pytest.raises(DataError, match="3 row\\(s\\) of .* have missing values"):
            load_sequences(source)
