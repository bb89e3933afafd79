"""Tests for puffer_core.data: loading sequences and rejecting bad inputs (docs/math.md §1)."""

from __future__ import annotations

import dataclasses
import gzip
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from puffer_core.data.readers import load_sequences, read_columns, read_table
from puffer_core.data.sequences import Sequences
from puffer_core.errors import DataError

ASSETS = Path(__file__).resolve().parent.parent / "assets"

SMALL_CSV = (
    b"user,time,state,country\n"
    b"bob,2020-01-03,walk,FR\n"
    b"ann,2020-01-01 10:00,sit,DE\n"
    b"bob,2020-01-01,sit,FR\n"
    b"ann,2020-01-01 09:00,walk,DE\n"
    b"bob,2020-01-02,run,FR\n"
)


class Upload(io.BytesIO):
    """Stands in for Streamlit's UploadedFile: a BytesIO with a name."""

    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data)
        self.name = name


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def check_invariants(seqs: Sequences) -> None:
    """Properties every loaded Sequences has, checked independently of the loader."""
    frame = seqs.frame
    assert len(frame) == seqs.n_entries == seqs.codes.size == seqs.user_index.size
    assert seqs.offsets[0] == 0 and seqs.offsets[-1] == seqs.n_entries
    assert np.all(np.diff(seqs.offsets) >= 1)
    assert np.all(np.diff(seqs.user_index) >= 0)
    assert list(frame["code"]) == list(seqs.codes)
    assert [seqs.states[c] for c in seqs.codes] == [str(s) for s in frame["state"]]
    assert len(set(seqs.states)) == seqs.n_states >= 2
    for i in range(seqs.n_users):
        block = frame.iloc[seqs.offsets[i] : seqs.offsets[i + 1]]
        assert (block["user"] == seqs.users[i]).all()
        assert block["time"].is_monotonic_increasing
        assert block["time"].is_unique


# --- reading ------------------------------------------------------------------------------------------


def test_small_csv_is_sorted_by_user_then_time() -> None:
    seqs = load_sequences(SMALL_CSV, group="country")
    assert seqs.states == ("run", "sit", "walk")
    assert seqs.groups == ("DE", "FR")
    assert list(seqs.users) == ["ann", "bob"]
    # ann: walk (09:00), sit (10:00); bob: sit (01-01), run (01-02), walk (01-03)
    assert seqs.sequence(0).tolist() == [2, 1]
    assert seqs.sequence(1).tolist() == [1, 0, 2]
    assert seqs.lengths.tolist() == [2, 3]
    assert (seqs.n_users, seqs.n_entries, seqs.n_states, seqs.max_length) == (2, 5, 3, 3)
    assert seqs.frame["group"].tolist() == ["DE", "DE", "FR", "FR", "FR"]
    assert seqs.group_column == "country"
    assert seqs.user_groups.tolist() == [0, 1]
    assert seqs.state_counts().tolist() == [1, 2, 2]
    assert seqs.state_counts(by_group=True).tolist() == [[0, 1, 1], [1, 1, 1]]
    check_invariants(seqs)


def test_every_kind_of_source_gives_the_same_sequences(tmp_path: Path) -> None:
    frame = pd.read_csv(io.BytesIO(SMALL_CSV))
    path = tmp_path / "small.csv"
    path.write_bytes(SMALL_CSV)
    ppath = tmp_path / "small.parquet"
    ppath.write_bytes(parquet_bytes(frame))
    sources = [
        SMALL_CSV,
        io.BytesIO(SMALL_CSV),
        io.StringIO(SMALL_CSV.decode()),
        Upload(SMALL_CSV, "upload.csv"),
        Upload(parquet_bytes(frame), "upload.bin"),  # Parquet recognised by its magic bytes
        str(path),
        path,
        ppath,
        frame,
        gzip.compress(SMALL_CSV),
        SMALL_CSV.replace(b",", b";"),
        SMALL_CSV.replace(b",", b"\t"),
        b"\xef\xbb\xbf" + SMALL_CSV,  # UTF-8 byte-order mark, as Excel writes
        SMALL_CSV.replace(b",", b", "),  # spaces after commas
    ]
    for source in sources:
        seqs = load_sequences(source, group="country")
        assert seqs.codes.tolist() == [2, 1, 1, 0, 2], source
        assert seqs.groups == ("DE", "FR")


def test_uploaded_file_is_read_without_moving_or_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    upload = Upload(SMALL_CSV, "data.csv")
    upload.seek(7)
    load_sequences(upload)
    load_sequences(upload)  # read twice: getvalue() does not depend on the position
    assert list(tmp_path.iterdir()) == []


def test_demo_datasets_load() -> None:
    checkins = load_sequences(ASSETS / "checkins.csv", group="country")
    assert checkins.n_users == 2000 and checkins.n_states == 12 and len(checkins.groups) == 20
    assert 20 <= checkins.lengths.min() and checkins.max_length <= 60
    activities = load_sequences(ASSETS / "activities.csv", group="age_group")
    assert activities.n_users == 150 and activities.n_states == 11
    assert activities.groups == ("18-29", "30-37", "38-52", "53+")
    assert set(activities.lengths.tolist()) == {288}
    assert "sitstand+lowactivity" in activities.states


def test_times_sort_chronologically_not_alphabetically() -> None:
    frame = pd.DataFrame(
        {
            "user": [1, 1, 1, 1],
            "time": ["Feb 1 2020", "Jan 5 2020", "2020-01-20", "3 March 2020"],
            "state": ["b", "a", "c", "d"],
        }
    )
    seqs = load_sequences(frame)
    assert [seqs.states[c] for c in seqs.sequence(0)] == ["a", "c", "b", "d"]


def test_numeric_times_and_numeric_states() -> None:
    frame = pd.DataFrame({"user": [7, 7, 7, 3], "time": [2.5, -1.0, 10.0, 0.0], "state": [10, 2, 1, 2]})
    seqs = load_sequences(frame)
    assert seqs.states == ("1", "2", "10")  # numeric labels sort as numbers
    assert list(seqs.users) == [3, 7]
    assert seqs.sequence(1).tolist() == [1, 2, 0]


def test_datetime_columns_and_time_zones() -> None:
    naive = pd.DataFrame(
        {"user": ["a"] * 3, "time": pd.to_datetime(["2021-03-02", "2021-03-01", "2021-03-03"]), "state": list("xyx")}
    )
    assert load_sequences(naive).sequence(0).tolist() == [1, 0, 0]
    # 10:00+02:00 is 08:00 UTC, before 09:00 UTC
    zoned = b"user,time,state\na,2021-03-01T09:00:00+00:00,x\na,2021-03-01T10:00:00+02:00,y\n"
    assert load_sequences(zoned).sequence(0).tolist() == [1, 0]


def test_other_column_names_and_header_spaces() -> None:
    data = b"id , when,category,age band\n1,1,a,old\n1,2,b,old\n2,1,a,young\n"
    seqs = load_sequences(data, user="id", time="when", state="category", group="age band")
    assert seqs.groups == ("old", "young") and seqs.n_entries == 3
    assert list(seqs.frame.columns) == ["user", "time", "state", "code", "group"]


def test_sequences_is_frozen_and_read_only() -> None:
    seqs = load_sequences(SMALL_CSV)
    with pytest.raises(dataclasses.FrozenInstanceError):
        seqs.states = ("x",)  # type: ignore[misc]
    with pytest.raises(ValueError):
        seqs.codes[0] = 1
    with pytest.raises(IndexError):
        seqs.sequence(2)


def test_subset_keeps_coding_and_renumbers_users() -> None:
    seqs = load_sequences(SMALL_CSV, group="country")
    part = seqs.subset(seqs.frame["user"].to_numpy() == "bob")
    assert part.states == seqs.states and part.groups == seqs.groups
    assert part.n_users == 1 and part.sequence(0).tolist() == [1, 0, 2]
    assert part.user_index.tolist() == [0, 0, 0]
    france = seqs.select_groups("FR")
    assert france.codes.tolist() == [1, 0, 2]
    with pytest.raises(DataError, match="unknown group"):
        seqs.select_groups(["XX"])
    with pytest.raises(DataError, match="no entries"):
        seqs.subset(np.zeros(seqs.n_entries, dtype=bool))


def test_user_group_is_the_majority_group() -> None:
    frame = pd.DataFrame(
        {
            "user": ["a"] * 3 + ["b"] * 2,
            "time": [1, 2, 3, 1, 2],
            "state": list("xyxyx"),
            "g": ["p", "q", "q", "q", "p"],
        }
    )
    seqs = load_sequences(frame, group="g")
    assert seqs.user_groups.tolist() == [1, 0]  # a: q twice; b: a tie, lower code (p) wins


def test_summary_for_display() -> None:
    summary = load_sequences(SMALL_CSV, group="country").summary()
    assert summary["users"] == 2 and summary["entries"] == 5 and summary["states"] == 3
    assert summary["longest sequence"] == 3 and summary["transitions"] == 3
    assert summary["group column"] == "country" and summary["groups"] == 2
    assert all(isinstance(v, (int, float, str)) for v in summary.values())


# --- each error, with what it must say -------------------------------------------------------------------


def error_of(source: object, **kwargs: object) -> str:
    with pytest.raises(DataError) as info:
        load_sequences(source, **kwargs)
    return str(info.value)


def test_missing_column_lists_the_columns_found() -> None:
    message = error_of(b"id,time,state\n1,1,a\n1,2,b\n")
    assert "user column 'user'" in message and "'id', 'time', 'state'" in message
    message = error_of(b"User,time,state\n1,1,a\n1,2,b\n")
    assert "did you mean 'User'" in message
    message = error_of(SMALL_CSV, group="age")
    assert "group column 'age'" in message and "'country'" in message
    message = error_of(pd.DataFrame({"a": [1], "b": [2]}))
    assert "user column" in message and "time column" in message and "'a', 'b'" in message


def test_repeated_column_names() -> None:
    frame = pd.DataFrame([[1, 1, 1, "a"], [1, 2, 2, "b"]], columns=["user", "user", "time", "state"])
    assert "several columns named 'user'" in error_of(frame)


def test_empty_inputs() -> None:
    assert "empty (0 bytes)" in error_of(b"")
    assert "empty" in error_of(b"\n\n  \n")
    message = error_of(b"user,time,state\n")
    assert "no rows" in message and "'user', 'time', 'state'" in message
    assert "no rows" in error_of(pd.DataFrame({"user": [], "time": [], "state": []}))


def test_binary_and_unparseable_files() -> None:
    message = error_of(bytes(range(256)) * 4)
    assert "binary data" in message and "first bytes" in message
    assert "could not be read as Parquet" in error_of(b"PAR1 this is not parquet at all")
    assert "could not be read as Parquet" in error_of(Upload(SMALL_CSV, "fake.parquet"))
    assert "Excel" in error_of(b"PK\x03\x04" + b"\x00" * 60)
    message = error_of(b"user,time,state\n1,1,a\n1,2,b,extra,fields\n")
    assert "could not be read as CSV" in message and "Expected 3 fields" in message
    assert "gzip" in error_of(b"\x1f\x8b\x08\x00broken")


def test_unparseable_times_give_an_example() -> None:
    message = error_of(b"user,time,state\n1,2020-01-01,a\n1,yesterday,b\n1,2020-01-03,a\n")
    assert "'yesterday'" in message and "data row 2" in message and "1 value(s)" in message
    message = error_of(b"user,time,state\n1,2020-01-01,a\n1,5,b\n")
    assert "'5'" in message and "mixes numbers and dates" in message
    message = error_of(pd.DataFrame({"user": [1, 1], "time": [1.0, np.inf], "state": ["a", "b"]}))
    assert "inf" in message and "finite" in message


def test_fewer_than_two_states() -> None:
    message = error_of(b"user,time,state\n1,1,a\n1,2,a\n2,1,a\n")
    assert "only 1 distinct value ('a')" in message and "at least 2 states" in message


def test_missing_values_say_how_many_rows() -> None:
    message = error_of(b"user,time,state\n1,1,a\n1,,b\n2,1,\n2,2,b\n,3,a\n")
    assert "3 row(s)" in message and "data row 2" in message
    assert "'time': 1" in message and "'state': 1" in message and "'user': 1" in message
    frame = pd.DataFrame({"user": [1, 1, None], "time": [1, 2, 3], "state": ["a", np.nan, "b"]})
    assert "2 row(s)" in error_of(frame)


def test_duplicate_user_time_pairs() -> None:
    message = error_of(b"user,time,state\nann,1,a\nann,1,b\nbob,1,a\nbob,2,b\nbob,2,a\nbob,2,b\n")
    assert "3 row(s)" in message and "user 'ann' at time 1" in message
    dates = b"user,time,state\n1,2020-01-01,a\n1,2020-01-01 00:00,b\n"
    assert "user 1 at time '2020-01-01" in error_of(dates)


def test_limits_on_rows_and_states() -> None:
    rows = b"user,time,state\n" + b"".join(b"1,%d,%s\n" % (t, b"ab"[t % 2 : t % 2 + 1]) for t in range(50))
    message = error_of(rows, max_rows=20)
    assert "more than 20 rows" in message
    frame = pd.read_csv(io.BytesIO(rows))
    assert "more than 20 rows" in error_of(frame, max_rows=20)
    assert "has 50 rows; the limit is 20" in error_of(parquet_bytes(frame), max_rows=20)
    assert load_sequences(rows, max_rows=50).n_entries == 50
    many = pd.DataFrame({"user": np.arange(600) // 10, "time": np.arange(600), "state": np.arange(600)})
    message = error_of(many)
    assert "600 distinct values" in message and "limit is 500" in message
    assert "limit is 5" in error_of(SMALL_CSV, max_states=2).replace("limit is 2", "limit is 5")


def test_source_and_column_arguments() -> None:
    assert "file path, an uploaded file" in error_of(12345)
    assert "does not exist" in error_of("/nonexistent/file.csv")
    assert "must be different" in error_of(SMALL_CSV, time="user")


# --- fuzzing: bad inputs raise DataError and nothing else ------------------------------------------------

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def load_or_data_error(source: object, **kwargs: object) -> None:
    """Either a valid Sequences or a DataError with a message; any other exception fails the test."""
    try:
        seqs = load_sequences(source, **kwargs)
    except DataError as exc:
        assert str(exc).strip()
        return
    check_invariants(seqs)


@FUZZ
@given(st.binary(max_size=400))
def test_fuzz_random_bytes(data: bytes) -> None:
    load_or_data_error(data)
    load_or_data_error(b"PAR1" + data)
    load_or_data_error(Upload(data, "x.parquet"))


@FUZZ
@given(st.text(max_size=300))
def test_fuzz_random_text(text: str) -> None:
    load_or_data_error(text.encode("utf-8", errors="surrogatepass"))
    load_or_data_error(b"user,time,state\n" + text.encode("utf-8", errors="surrogatepass"))


@FUZZ
@given(st.data())
def test_fuzz_mutated_csv(data: st.DataObject) -> None:
    raw = bytearray(SMALL_CSV)
    for _ in range(data.draw(st.integers(1, 6))):
        action = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        position = data.draw(st.integers(0, len(raw)))
        if action == "flip" and position < len(raw):
            raw[position] = data.draw(st.integers(0, 255))
        elif action == "cut":
            del raw[position : position + data.draw(st.integers(1, 10))]
        else:
            raw[position:position] = data.draw(st.sampled_from([b",", b"\n", b'"', b"\x00", b"nan", b";"]))
    load_or_data_error(bytes(raw), group="country")


SCALARS = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.integers(min_value=2**62, max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.booleans(),
    st.sampled_from(["2020-01-01", "2020-13-45", "12:00", "NaT", "1e400", "", " "]),
)


@FUZZ
@given(
    st.integers(0, 8).flatmap(
        lambda n: st.fixed_dictionaries(
            {
                "user": st.lists(SCALARS, min_size=n, max_size=n),
                "time": st.lists(SCALARS, min_size=n, max_size=n),
                "state": st.lists(SCALARS, min_size=n, max_size=n),
            }
        )
    ),
    st.sampled_from(["user", "time", "state", None]),
)
def test_fuzz_messy_tables(columns: dict[str, list[object]], drop: str | None) -> None:
    frame = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in columns.items()})
    if drop is not None:
        frame = frame.drop(columns=drop)
    load_or_data_error(frame)
    load_or_data_error(frame.to_csv(index=False).encode())
    try:
        as_parquet = parquet_bytes(frame)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        return  # pyarrow cannot store this mix of types; a real Parquet file cannot hold it either
    load_or_data_error(Upload(as_parquet, "messy.parquet"))


@FUZZ
@given(st.integers(2, 40), st.data())
def test_fuzz_nans_always_rejected_with_a_count(n: int, data: st.DataObject) -> None:
    frame = pd.DataFrame({"user": np.arange(n) % 3, "time": np.arange(n), "state": np.arange(n) % 2})
    rows = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    column = data.draw(st.sampled_from(["user", "time", "state"]))
    frame[column] = frame[column].astype(float)
    frame.loc[rows, column] = np.nan
    message = error_of(frame)
    assert f"{len(rows)} row(s)" in message and "missing values" in message


@FUZZ
@given(st.integers(1, 1200))
def test_fuzz_state_counts(k: int) -> None:
    frame = pd.DataFrame({"user": np.zeros(k, dtype=int), "time": np.arange(k), "state": np.arange(k)})
    if k < 2:
        assert "at least 2 states" in error_of(frame)
    elif k > 500:
        assert f"{k:,} distinct values" in error_of(frame)
    else:
        assert load_sequences(frame).n_states == k


def test_binary_bytes_that_are_valid_utf8_are_reported_as_binary():
    with pytest.raises(DataError, match="binary data"):
        load_sequences(b"\x00\x01\x02binary")


# ---------------------------------------------------------------- read_columns: the header only


def test_read_columns_of_a_csv_from_bytes_a_path_and_an_upload(tmp_path: Path) -> None:
    expected = ["user", "time", "state", "country"]
    assert read_columns(SMALL_CSV) == expected
    path = tmp_path / "small.csv"
    path.write_bytes(SMALL_CSV)
    assert read_columns(path) == expected and read_columns(str(path)) == expected
    assert read_columns(Upload(SMALL_CSV, "small.csv")) == expected
    demo = ASSETS / "checkins.csv"
    assert read_columns(demo) == [str(c).strip() for c in pd.read_csv(demo, nrows=0).columns]


@pytest.mark.parametrize("sep", [";", "\t"])
def test_read_columns_of_a_semicolon_or_tab_separated_csv(sep: str) -> None:
    content = sep.join(["user", "time", "state"]).encode() + b"\n" + sep.join(["u1", "1", "A"]).encode() + b"\n"
    assert read_columns(content) == ["user", "time", "state"]
    assert read_columns(Upload(content, "semi.csv")) == ["user", "time", "state"]


def test_read_columns_strips_names_and_load_sequences_takes_them() -> None:
    content = b"  user , time ,state \nu1,1,A\nu1,2,B\n"
    columns = read_columns(content)
    assert columns == ["user", "time", "state"]
    data = load_sequences(content, user=columns[0], time=columns[1], state=columns[2])
    assert data.n_entries == 2 and data.states == ("A", "B")


def test_read_columns_of_a_single_column_and_a_header_without_rows() -> None:
    assert read_columns(b"user\nu1\nu2\n") == ["user"]
    assert read_columns(b"user,time,state\n") == ["user", "time", "state"]
    assert read_columns("caf\u00e9,b\n1,2\n".encode("latin-1")) == ["caf\u00e9", "b"]


def test_read_columns_of_parquet_by_magic_bytes_name_and_path(tmp_path: Path) -> None:
    frame = pd.DataFrame({"participant": ["a", "b"], "ts": [1, 2], "activity": ["x", "y"], 7: [0.5, 0.5]})
    content = parquet_bytes(frame)
    expected = ["participant", "ts", "activity", "7"]
    assert read_columns(content) == expected
    assert read_columns(Upload(content, "activities.parquet")) == expected
    path = tmp_path / "activities.pq"
    path.write_bytes(content)
    assert read_columns(path) == expected


def test_read_columns_of_gzip_csv() -> None:
    content = gzip.compress(b"user;time;state\nu1;1;A\nu1;2;B\nu2;1;B\nu2;2;A\n")
    assert read_columns(content) == ["user", "time", "state"]
    assert read_columns(Upload(content, "small.csv.gz")) == ["user", "time", "state"]


def test_read_columns_of_a_dataframe() -> None:
    frame = pd.DataFrame({"user": [1], " time ": [2], 3: ["A"]})
    assert read_columns(frame) == ["user", "time", "3"]
    assert read_columns(pd.DataFrame()) == []


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (b"", "the data is empty (0 bytes)"),
        (Upload(b"", "empty.csv"), "the file 'empty.csv' is empty (0 bytes)"),
        (b" \n\n  \n", "is empty: it has no header and no rows"),
        (gzip.compress(b""), "is empty: it has no header and no rows"),
        (b"\x00\x01\x02garbage\x00" * 20, "it contains binary data"),
        (Upload(b"\x01\x02\x03\x04binary\x05\x06\x07", "binary.csv"), "the file 'binary.csv' is not a text (CSV) file"),
        (b"PK\x03\x04rest of a zip", "zip archive or an Excel workbook"),
        (b"\x1f\x8bnot really gzip", "could not be decompressed"),
        (b'user,"time\n', "could not be read as CSV"),
        (Upload(b"PAR1 this is not parquet", "fake.parquet"), "could not be read as Parquet"),
        (Upload(b"user,time,state\n", "named.parquet"), "could not be read as Parquet"),
        (42, "must be a file path, an uploaded file, bytes or a pandas DataFrame"),
    ],
    ids=[
        "empty bytes",
        "empty upload",
        "blank lines",
        "empty gzip",
        "NUL bytes",
        "control bytes",
        "zip",
        "broken gzip",
        "open quote",
        "fake parquet",
        "CSV named .parquet",
        "not a source",
    ],
)
def test_read_columns_rejects_what_load_sequences_rejects_with_the_same_message(source: object, message: str) -> None:
    with pytest.raises(DataError, match=re.escape(message)) as from_header:
        read_columns(source)
    with pytest.raises(DataError) as from_loader:
        load_sequences(source)
    assert str(from_header.value) == str(from_loader.value)


def test_read_columns_of_a_missing_file_or_a_folder(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="does not exist"):
        read_columns(tmp_path / "nowhere.csv")
    with pytest.raises(DataError, match="is a folder"):
        read_columns(tmp_path)


# ---------------------------------------------------------------- arguments, encodings, repeated names


@pytest.mark.parametrize(("value", "message"), [("x", "max_rows must be a whole number ≥ 1; got 'x'"),
                                                (-1, "max_rows must be a whole number ≥ 1; got -1"),
                                                (2.5, "max_rows must be a whole number"),
                                                (True, "max_rows must be a whole number")])
def test_a_bad_max_rows_is_named(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        load_sequences(SMALL_CSV, max_rows=value)


def test_a_bad_max_states_is_named() -> None:
    with pytest.raises(ValueError, match="max_states must be a whole number ≥ 2"):
        load_sequences(SMALL_CSV, max_states=1)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_csv_is_decoded(encoding: str) -> None:
    """Excel's "Unicode text" export: UTF-16 with or without a byte-order mark, here with a non-ASCII state."""
    text = SMALL_CSV.decode().replace("walk", "marché")
    content = text.encode(encoding)
    assert read_columns(content) == ["user", "time", "state", "country"]
    seqs = load_sequences(Upload(content, "excel.csv"), group="country")
    assert seqs.states == ("marché", "run", "sit")
    assert seqs.codes.tolist() == [0, 2, 2, 1, 0]
    assert load_sequences(gzip.compress(content), group="country").states == seqs.states


def test_a_repeated_header_name_is_refused_when_it_is_asked_for() -> None:
    content = b"user,user,time,state\nu1,x,1,A\nu1,y,2,B\n"
    assert read_columns(content) == ["user", "user", "time", "state"]
    with pytest.raises(DataError, match="several columns named 'user'"):
        load_sequences(content)
    columns = [pa.array(["u1", "u1"]), pa.array(["x", "y"]), pa.array([1, 2]), pa.array(["A", "B"])]
    buffer = io.BytesIO()
    pq.write_table(pa.table(columns, names=["user", "user", "time", "state"]), buffer)
    assert read_columns(buffer.getvalue()) == ["user", "user", "time", "state"]
    with pytest.raises(DataError, match="several columns named 'user'"):
        load_sequences(buffer.getvalue())
    # a repeated name nobody asks for is harmless
    seqs = load_sequences(b"user,note,note,time,state\nu1,a,b,1,A\nu1,c,d,2,B\n")
    assert seqs.n_entries == 2


def test_a_table_read_once_loads_like_its_source(tmp_path: Path) -> None:
    for source in (SMALL_CSV, Upload(parquet_bytes(pd.read_csv(io.BytesIO(SMALL_CSV))), "x.parquet")):
        table = read_table(source)
        assert table.columns == ("user", "time", "state", "country")
        assert read_columns(table) == list(table.columns)
        from_table = load_sequences(table, group="country")
        direct = load_sequences(source, group="country")
        assert from_table.codes.tolist() == direct.codes.tolist() == [2, 1, 1, 0, 2]
        assert from_table.users.tolist() == direct.users.tolist()
    with pytest.raises(DataError, match="no time column 'when'"):
        load_sequences(read_table(SMALL_CSV), time="when")
    with pytest.raises(DataError, match="more than 2 rows"):
        load_sequences(read_table(SMALL_CSV), max_rows=2)
