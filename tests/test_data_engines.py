"""Conformance: every count of SequenceStats, every refusal and every missing-value count is the same from
numpy, DuckDB, Spark (local) and Spark Connect, for files, globs and in-memory tables.

The reference is :func:`load_with_repair` (:meth:`Sequences.stats` and the :class:`Repair` counts), the reading
path the library has always had, which shares no code with the SQL text.  Each case is written to Parquet (or
CSV) — and for Parquet also split into a glob of three files and given as an in-memory Arrow table — and read by
each engine; the outcome must be equal: the labels, every count, the time range, the summary, the rows read and
the rows with an empty cell, or the same refusal with the same numbers (:func:`_refusal`).  Float columns keep
their NaN values (written with pyarrow, which pandas' conversion would turn into nulls): a NaN is a missing value
everywhere.  DuckDB reads every case from every source; Spark's reads are split between its two modes
(SPARK_LOADS), which run the same SQL text.  One local Spark JVM serves the module in both modes — a classic
session, and a Spark Connect server on loopback (the plugin in the same JVM) whose client this process is; without
Java, pyspark or the Connect client the Spark tests are skipped locally and fail in CI (CI=true).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from puffer_core.data import engines
from puffer_core.data.duckdb_engine import DuckDBEngine
from puffer_core.data.engines import load_stats
from puffer_core.data.readers import load_sequences, load_with_repair
from puffer_core.data.stats import MAX_SLOT_CELLS, SequenceStats
from puffer_core.errors import DataError
from puffer_core.priors.fitting import fit_markov_chain
from puffer_core.priors.robust import fit_prior_set
from puffer_core.simulation.run import simulate
from puffer_core.synthesis.counts import ChainCounts, chain_counts
from puffer_core.synthesis.sources import load_chain_counts
from puffer_core.synthesis.synthesize import synthesize
from tests.support.servers import free_port
from tests.support.spark import connect_client, local_session

WINDOWS = (1, 3, 7)
NAN = float("nan")


def _random(seed: int, users: int = 40, states: int = 6) -> pd.DataFrame:
    """Random sequences: string users, string states, a group, tz-aware µs times, rows shuffled."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 30, users)
    user = np.repeat([f"user {i:03d}" for i in range(users)], lengths)
    first = np.repeat(rng.integers(0, 10**6, users), lengths)
    seconds = pd.Series(rng.integers(1, 10**5, lengths.sum())).groupby(user).cumsum().to_numpy() + first
    time = pd.Timestamp("2024-03-01", tz="UTC") + pd.to_timedelta(seconds * 10**6 + rng.integers(0, 10**6), unit="us")
    frame = pd.DataFrame(
        {
            "user": user,
            "time": pd.DatetimeIndex(time).as_unit("us"),
            "state": [f"s{v}" for v in rng.integers(0, states, lengths.sum())],
            "country": np.repeat(rng.choice(["fr", "de", "it", "es"], users), lengths),
        }
    )
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def _awkward_labels() -> pd.DataFrame:
    """Text states that sort differently as text and as numbers, with a quote, accents, a space and case: DuckDB codes
    text states before sorting (an ENUM), and its counts and their order must be numpy's."""
    frame = _random(11, users=30)
    labels = np.array(["B", "a", "o'k", "é", "10", "9", "Zz", "a b", "ÿ"])
    frame["state"] = labels[np.random.default_rng(11).integers(0, len(labels), len(frame))]
    return frame


def _integers() -> pd.DataFrame:
    """Integer users and integer states (2 sorts before 10), integer times."""
    rng = np.random.default_rng(7)
    n = 300
    return pd.DataFrame(
        {
            "user": rng.integers(100, 130, n),
            "time": rng.permutation(n) * 3,
            "state": rng.choice([2, 10, 1, 33], n),
            "country": rng.choice([5, 40], n),
        }
    )


def _nanoseconds() -> pd.DataFrame:
    frame = _random(3)
    frame["time"] = frame["time"].dt.tz_localize(None).dt.as_unit("ns") + pd.to_timedelta(
        np.arange(len(frame)) % 7, unit="ns"
    )
    return frame


def _text_dates() -> pd.DataFrame:
    """Day-first dates with times as text (13/05 decides the order), as in a CSV export."""
    frame = _random(5, users=15)
    text = frame["time"].dt.strftime("%d/%m/%Y %H:%M:%S")
    text[::3] = frame["time"][::3].dt.strftime("%Y/%m/%d %H:%M:%S.%f")  # year first: never ambiguous
    text[1::5] = frame["time"][1::5].dt.strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")  # ISO 8601
    frame["time"] = text
    frame.loc[0, "time"] = "13/05/2024 10:00:00"
    return frame


def _mixed_dates() -> pd.DataFrame:
    """One value per way of writing a date that is never ambiguous, and integer users."""
    times = ["Feb 1 2020", "3 March 2020", "2020-01-20", "2020/01/25 07:30", "1-Apr-2020", "2020.04.02",
             "April 3, 2020 10:00", "2020-04-03T09:00:00Z"]
    return pd.DataFrame({"user": [1] * 4 + [2] * 4, "time": times, "state": list("abcabcab")})


def _with_missing() -> pd.DataFrame:
    """Missing cells, and a group ("empty") whose every row lacks its state: it disappears when they are dropped."""
    frame = _random(9, users=20)
    frame.loc[[3, 8], "state"] = None
    frame.loc[5, "user"] = None
    frame.loc[frame["country"] == "it", "state"] = None
    frame.loc[frame["country"] == "it", "country"] = "empty"
    return frame


def _with_nan(column: str) -> Callable[[], pd.DataFrame]:
    """Float users, times and states, with NaN (not null) in ``column`` in two rows."""

    def build() -> pd.DataFrame:
        rng = np.random.default_rng(17)
        n = 120
        frame = pd.DataFrame({"user": (rng.integers(0, 9, n)).astype(float), "time": rng.permutation(n) * 1.5,
                              "state": rng.choice([1.0, 2.0, 4.0], n), "country": rng.choice(["fr", "de"], n)})
        frame.loc[[5, 77], column] = NAN
        return frame

    return build


def _blanks() -> pd.DataFrame:
    """Empty and blank text in the user, state and group columns, and a blank time written as text."""
    frame = _random(13, users=12)
    frame["time"] = frame["time"].dt.strftime("%Y-%m-%d %H:%M:%S.%f")
    frame.loc[2, "user"] = ""
    frame.loc[4, "state"] = "   "
    frame.loc[6, "country"] = "\t"
    frame.loc[8, "time"] = " "
    return frame


def _offset_times() -> pd.DataFrame:
    """ISO 8601 times without seconds, with offsets written +HH:MM, +HHMM, +HH and Z: the offset decides the order."""
    times = ["2024-01-01T10:00+02:00", "2024-01-01 09:30Z", "2024-01-01T09:45+0200", "2024-01-01T11:00+02",
             "2024-01-01T08:59:59.5+01", "2024-01-01T10:00", "2024-01-01T07:15-0100", "2024-01-01"]
    return pd.DataFrame({"user": [1] * 5 + [2] * 3, "time": times, "state": list("abcdeabc")})


def _with_copies() -> pd.DataFrame:
    """Rows recorded twice (exact copies), and a missing cell."""
    frame = _random(19, users=15)
    frame = pd.concat([frame, frame.iloc[[0, 4, 4, 9]]], ignore_index=True)
    frame.loc[11, "state"] = None
    return frame


def _arrow(frame: pd.DataFrame) -> pa.Table:
    """The frame as Arrow, float columns with their NaN kept (pandas' conversion makes them nulls)."""
    return pa.table({name: pa.array(frame[name].to_numpy()) if frame[name].dtype == float else
                     pa.array(frame[name], from_pandas=True) for name in frame.columns})


# name, frame builder, file kind, load options, whether the case is also read as a glob and as a table
CASES: list[tuple[str, Callable[[], pd.DataFrame], str, dict[str, Any], bool]] = [
    ("random", lambda: _random(1), "parquet", {"group": "country"}, True),
    ("random-csv", lambda: _random(2), "csv", {"group": "country"}, False),
    ("awkward-labels", _awkward_labels, "parquet", {"group": "country"}, True),
    ("awkward-labels-csv", _awkward_labels, "csv", {}, False),
    ("integers", _integers, "parquet", {"group": "country"}, False),
    ("integers-csv", _integers, "csv", {}, False),
    ("nanoseconds", _nanoseconds, "parquet", {"group": "country"}, False),
    ("text-dates", _text_dates, "csv", {"group": "country"}, False),
    ("mixed-dates", _mixed_dates, "csv", {}, False),
    ("missing-refused", _with_missing, "parquet", {"group": "country"}, False),
    ("missing-dropped", _with_missing, "parquet", {"group": "country", "drop_missing": True}, True),
    *((f"nan-{c}", _with_nan(c), "parquet", {"group": "country"}, True) for c in ("user", "time", "state")),
    *((f"nan-{c}-dropped", _with_nan(c), "parquet", {"group": "country", "drop_missing": True}, True)
      for c in ("user", "time", "state")),
    ("copies-dropped", _with_copies, "parquet", {"group": "country", "drop_missing": True, "drop_duplicates": True},
     True),
    ("blanks", _blanks, "parquet", {"group": "country"}, True),
    ("blanks-dropped", _blanks, "parquet", {"group": "country", "drop_missing": True}, True),
    ("blanks-csv-dropped", _blanks, "csv", {"group": "country", "drop_missing": True}, False),
    ("offset-times", _offset_times, "csv", {}, False),
    ("offset-times-parquet", _offset_times, "parquet", {}, True),
]
REFUSALS = [
    ("tie", b"user,time,state\nann,1,a\nann,1,b\nbob,1,a\nbob,2,b\n", {}, "repeat a \\(user, time\\) pair"),
    ("missing", b"user,time,state\nann,1,a\nann,2,\nbob,1,a\nbob,2,b\n", {}, "missing values"),
    ("blank", b"user,time,state\nann,1,a\nann,2, \nbob,1,a\nbob,2,b\n", {}, "missing values"),
    ("ambiguous", b"user,time,state\nu,01/05/2024,a\nu,02/05/2024,b\n", {}, "ambiguous"),
    ("two orders", b"user,time,state\nu,13/05/2024,a\nu,05/13/2024,b\n", {}, "two orders"),
    ("one state", b"user,time,state\nu,1,a\nu,2,a\n", {}, "at least 2 states"),
    ("bad time", b"user,time,state\nu,2024-05-01,a\nu,yesterday,b\n", {}, "cannot be read as times"),
]
CASE_NAMES = [c[0] for c in CASES] + [f"refusal {r[0]}" for r in REFUSALS]
SPARK_REFUSES = {"nanoseconds": "nanosecond timestamps"}  # Spark cannot read ns Parquet: refused by name

# What Spark reads, split between its two modes.  Both run the same SQL text; what differs is how a source reaches
# it (a path read by the server, an Arrow table sent by the client) and how errors and rows come back.  So every
# case is read once from its file, and the glob and in-memory kinds are read where they matter: tables for the
# NaN cases (an Arrow table's NaN reaches Spark through createDataFrame, not a file reader), copies and blanks, globs
# for a plain, a dropped and an offset case.
# The loads alternate between classic and Connect, so each mode reads every kind of source and refusal; DuckDB
# reads every case from every source (test_duckdb_outcome_equals_numpy).
SPARK_TABLES = {"random", "copies-dropped", "blanks", *(f"nan-{c}{d}" for c in ("user", "time", "state")
                                                          for d in ("", "-dropped"))}
SPARK_GLOBS = {"random", "missing-dropped", "offset-times-parquet"}
SPARK_READS = [(name, "file") for name in CASE_NAMES] + [(n, "table") for n in sorted(SPARK_TABLES)] + [
    (n, "glob") for n in sorted(SPARK_GLOBS)]
SPARK_LOADS = {mode: [read for i, read in enumerate(SPARK_READS) if (i + i // 2) % 2 == side]  # CSV and Parquet each
               for side, mode in enumerate(("classic", "connect"))}


def _write(frame: pd.DataFrame, folder: Path, name: str, kind: str) -> Path:
    if kind == "parquet":
        path = folder / f"{name}.parquet"
        pq.write_table(_arrow(frame), path)
    else:
        path = folder / f"{name}.csv"
        frame.to_csv(path, index=False)
    return path


def _write_glob(frame: pd.DataFrame, folder: Path, name: str) -> str:
    table = _arrow(frame)
    for i in range(3):
        start, stop = i * table.num_rows // 3, (i + 1) * table.num_rows // 3
        pq.write_table(table.slice(start, stop - start), folder / f"{name}-part-{i}.parquet")
    return str(folder / f"{name}-part-*.parquet")


def _refusal(message: str) -> tuple[Any, ...]:
    """What a refusal says, in numbers: the kind, and the counts it gives (the wording around them may differ)."""
    patterns = {
        "missing": r"([\d,]+) row\(s\) of .* have missing values \((?:first at data row \d+; )?empty cells per"
                   r" column: ([^)]*)\)",
        "tie": r"([\d,]+) row\(s\) repeat a \(user, time\) pair",
        "bad time": r"([\d,]+) value\(s\) in the time column '([^']*)' cannot be read as times",
        "one state": r"has only (\d+) distinct value",
        "ambiguous": r"is (ambiguous)",
        "two orders": r"writes dates in (two orders)",
        "nanoseconds": r"(nanosecond timestamps)",
    }
    for kind, pattern in patterns.items():
        found = re.search(pattern, message)
        if found:
            return ("refused", kind, *found.groups())
    return ("refused", "other", message)


def _outcome(load: Callable[[], SequenceStats]) -> tuple[Any, ...]:
    try:
        stats = load()
    except DataError as exc:
        return _refusal(str(exc))
    return ("counts", stats)


def _reference(source: object, options: dict[str, Any]) -> tuple[Any, ...]:
    """numpy's outcome: the sequences' counts with the repair's rows read and rows with an empty cell."""
    try:
        loaded = load_with_repair(source, **options)
    except DataError as exc:
        return _refusal(str(exc))
    stats = loaded.sequences.stats(windows=WINDOWS)
    return ("counts", stats, loaded.repair.rows_read, loaded.repair.missing, loaded.repair.duplicates)


def _assert_same(got: SequenceStats, want: SequenceStats) -> None:
    assert got.states == want.states and got.groups == want.groups
    assert got.same_counts(want), (got, want)
    assert got.summary() == want.summary()


def _assert_outcome(got: tuple[Any, ...], want: tuple[Any, ...], where: str) -> None:
    assert got[0] == want[0], f"{where}: {got} but numpy: {want}"
    if got[0] == "refused":
        assert got == want, f"{where}: refused otherwise than numpy"
        return
    _assert_same(got[1], want[1])
    assert (got[1].rows_read, got[1].missing) == want[2:4], f"{where}: rows read and rows with an empty cell"
    if got[1].drop_duplicates:
        assert got[1].duplicates == want[4], f"{where}: repeated rows"


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Per case: the options, numpy's outcome, and the sources by kind (file, glob, table)."""
    folder = tmp_path_factory.mktemp("engines")
    out = {}
    for name, build, kind, options, more in CASES:
        frame = build()
        path = _write(frame, folder, name, kind)
        sources: dict[str, Any] = {"file": path}
        if more:
            sources["glob"] = _write_glob(frame, folder, name)
            sources["table"] = _arrow(frame)
        out[name] = {"options": options, "want": _reference(path, options), "sources": sources, "frame": frame}
    for name, content, options, _ in REFUSALS:
        path = folder / f"refusal-{name.replace(' ', '-')}.csv"
        path.write_bytes(content)
        out[f"refusal {name}"] = {"options": options, "want": _reference(path, options), "sources": {"file": path}}
    return out




def test_the_reference_refuses_nan_and_blanks_and_reads_offsets(cases: dict[str, dict[str, Any]]) -> None:
    """The numpy outcomes the engines are held to, checked by hand: NaN and blank text are missing values, each
    counted in its column; offsets order the times."""
    for column in ("user", "time", "state"):
        assert cases[f"nan-{column}"]["want"] == ("refused", "missing", "2", f"'{column}': 2")
        assert cases[f"nan-{column}-dropped"]["want"][3] == 2
    assert cases["blanks"]["want"] == ("refused", "missing", "4", "'user': 1, 'time': 1, 'state': 1, 'country': 1")
    stats = cases["offset-times"]["want"][1]
    # user 1 in UTC: c 07:45, e 07:59:59.5, a 08:00, d 09:00, b 09:30; user 2: c 00:00, b 08:15, a 10:00
    first = {label: int(n) for label, n in zip(stats.states, stats.first_states)}
    assert first == {"a": 0, "b": 0, "c": 2, "d": 0, "e": 0}
    assert stats.time_first == "2024-01-01 00:00:00+00:00" and stats.time_last == "2024-01-01 10:00:00+00:00"
    codes = {label: i for i, label in enumerate(stats.states)}
    moves = {(a, b) for a in stats.states for b in stats.states if stats.transitions[codes[a], codes[b]]}
    assert moves == {("c", "e"), ("e", "a"), ("a", "d"), ("d", "b"), ("c", "b"), ("b", "a")}


@pytest.mark.parametrize("name", CASE_NAMES)
def test_duckdb_outcome_equals_numpy(cases: dict[str, dict[str, Any]], name: str) -> None:
    case = cases[name]
    for kind, source in case["sources"].items():
        got = _outcome(lambda: load_stats(source, windows=WINDOWS, **case["options"]))  # noqa: B023
        _assert_outcome(got, case["want"], f"duckdb, {name}, {kind}")
    if "table" in case["sources"]:  # a pandas DataFrame too (its NaN become nulls on the way to Arrow)
        got = _outcome(lambda: load_stats(case["frame"], windows=WINDOWS, **case["options"]))
        _assert_outcome(got, _reference(case["frame"], case["options"]), f"duckdb, {name}, pandas")


def test_the_reference_itself_counts_what_it_should() -> None:
    """Sequences.stats against brute-force loops over users (no bincount, no SQL)."""
    frame = _integers()
    seqs = load_sequences(frame, group="country")
    stats = seqs.stats(windows=(3,))
    k = seqs.n_states
    transitions = np.zeros((k, k), dtype=int)
    first = np.zeros(k, dtype=int)
    lengths: dict[int, int] = {}
    for i in range(seqs.n_users):
        codes = list(seqs.sequence(i))
        first[codes[0]] += 1
        lengths[len(codes)] = lengths.get(len(codes), 0) + 1
        for a, b in zip(codes, codes[1:]):
            transitions[a, b] += 1
    assert stats.states == ("1", "2", "10", "33")
    assert np.array_equal(stats.transitions, transitions) and np.array_equal(stats.first_states, first)
    assert dict(zip(stats.length_values.tolist(), stats.length_users.tolist())) == lengths
    lo, hi = frame["time"].min(), frame["time"].max()
    edges = [lo + (hi - lo) * j / 3 for j in range(4)]
    window = np.zeros((3, 2, k), dtype=int)
    for _, row in frame.iterrows():
        w = min(sum(row["time"] >= e for e in edges[1:3]), 2)
        window[w, [5, 40].index(row["country"]), seqs.states.index(str(row["state"]))] += 1
    assert np.array_equal(stats.windows(3), window)


def test_fit_and_simulate_from_stats_equal_from_sequences(cases: dict[str, dict[str, Any]]) -> None:
    path = cases["random"]["sources"]["file"]
    seqs = load_sequences(path, group="country")
    stats = load_stats(path, group="country", windows=(3,))
    fit_a, fit_b = fit_markov_chain(seqs), fit_markov_chain(stats)
    assert np.array_equal(fit_a.transition, fit_b.transition) and fit_a.labels == fit_b.labels
    assert fit_a.length == fit_b.length
    theta_a, theta_b = fit_prior_set(seqs, draws=3), fit_prior_set(stats, draws=3)
    assert all(np.array_equal(a.transition, b.transition) for a, b in zip(theta_a, theta_b))
    for mode, releases in (("repeat", 2), ("windows", 3)):
        options = {"eps_grid": (1.0,), "trials": 20, "rng": 4, "releases": releases, "release_mode": mode}
        a, b = simulate(seqs, **options), simulate(stats, **options)
        pd.testing.assert_frame_equal(a.metrics, b.metrics)
        pd.testing.assert_frame_equal(a.ledger, b.ledger)
        assert a.settings == b.settings
    with pytest.raises(ValueError, match="no counts for 5 time windows"):
        simulate(stats, releases=5, release_mode="windows", rng=0)


def _same_chain_counts(got: ChainCounts, want: ChainCounts) -> None:
    assert (got.states, got.groups, dict(got.columns)) == (want.states, want.groups, dict(want.columns))
    for field in ("transitions", "first_states", "length_values", "length_users", "runs", "visits"):
        assert np.array_equal(getattr(got, field), getattr(want, field)), field


SYNTH_CASES = ["random", "random-csv", "text-dates", "missing-dropped"]


@pytest.mark.parametrize("name", SYNTH_CASES)
def test_duckdb_chain_counts_per_group_equal_numpy(cases: dict[str, dict[str, Any]], name: str) -> None:
    """The synthesizer's counts per group (docs/math.md §19.1): DuckDB's SQL against numpy's rows."""
    options, path = cases[name]["options"], cases[name]["sources"]["file"]
    columns = {"user": "user", "time": "time", "state": "state", "group": "country"}
    want = chain_counts(load_sequences(path, **options), columns=columns)
    _same_chain_counts(load_chain_counts(path, detail=True, **options), want)
    pooled = load_chain_counts(path, **{**options, "group": None})
    assert np.array_equal(pooled.transitions[0], want.transitions.sum(axis=0)) and pooled.runs is None
    with pytest.raises(DataError, match="more than one group of 'country'"):
        load_chain_counts(cases["integers"]["sources"]["file"], group="country")  # users change country by row


def test_numeric_times_infinite_or_missing() -> None:
    frame = pd.DataFrame({"user": [1, 1, 2, 2], "time": [0.5, np.inf, 1.0, 2.0], "state": ["a", "b", "a", "b"]})
    for load in (load_sequences, load_stats):
        with pytest.raises(DataError, match="is not a finite number"):
            load(frame)
    frame.loc[1, "time"] = np.nan
    for load in (load_sequences, load_stats):
        with pytest.raises(DataError, match="missing values"):
            load(frame)
    _assert_same(load_stats(frame, drop_missing=True), load_sequences(frame, drop_missing=True).stats())


def test_uploads_are_refused_like_files(cases: dict[str, dict[str, Any]]) -> None:
    for name, content, options, _ in REFUSALS:
        got = _outcome(lambda: load_stats(content, **options))  # noqa: B023  (an upload, parsed in memory)
        _assert_outcome(got, cases[f"refusal {name}"]["want"], f"upload, {name}")


def test_time_format_chooses_the_order(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_bytes(b"user,time,state\nu,01/05/2024,a\nu,02/05/2024 10:30,b\nu,03/05/2024,a\n")
    for fmt in ("%d/%m/%Y", "%m/%d/%Y"):
        _assert_same(load_stats(path, time_format=fmt), load_sequences(path, time_format=fmt).stats())
    got = load_stats(path, time_format="%m/%d/%Y")
    assert got.time_first.startswith("2024-01-05") and got.time_last.startswith("2024-03-05")


def test_globs_and_folders(tmp_path: Path) -> None:
    frame = _random(11)
    for i in range(3):
        part = frame.iloc[i * len(frame) // 3 : (i + 1) * len(frame) // 3]
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False), tmp_path / f"part-{i}.parquet")
    want = load_sequences(frame, group="country").stats(windows=WINDOWS)
    listed = [tmp_path / f"part-{i}.parquet" for i in range(3)]
    for source in (str(tmp_path / "part-*.parquet"), tmp_path, listed):
        _assert_same(load_stats(source, group="country", windows=WINDOWS), want)
    with pytest.raises(DataError, match="no file matches"):
        load_stats(str(tmp_path / "nothing-*.parquet"))
    with pytest.raises(DataError, match="no group column 'region'"):
        load_stats(tmp_path, group="region")


def test_duckdb_memory_limit_and_spill_folder(tmp_path: Path) -> None:
    engine = DuckDBEngine(memory_limit="300MB", temp_directory=str(tmp_path / "spill"))
    setting = engine.query("SELECT current_setting('memory_limit') AS m").to_pylist()[0]["m"]
    assert setting.startswith("286") or "MiB" in setting or "MB" in setting
    with pytest.raises(ValueError, match="memory_limit"):
        DuckDBEngine(memory_limit="lots")


def _bad_files(folder: Path) -> dict[str, tuple[str, str]]:
    """Bad sources, each with the file the message must name: (source, file named)."""
    good = _arrow(_random(21, users=5))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "empty.parquet").write_bytes(b"")
    (folder / "corrupt.parquet").write_bytes(b"PAR1" + bytes(range(256)) * 4 + b"PAR1")
    for name in ("with-empty", "with-corrupt", "mixed"):
        (folder / name).mkdir()
        pq.write_table(good, folder / name / "a.parquet")
    (folder / "with-empty" / "b.parquet").write_bytes(b"")
    (folder / "with-corrupt" / "b.parquet").write_bytes(b"PAR1" + bytes(range(256)) * 4 + b"PAR1")
    pq.write_table(good.set_column(2, "state", pa.array(np.arange(good.num_rows))), folder / "mixed" / "b.parquet")
    return {
        "0-byte file": (str(folder / "empty.parquet"), "empty.parquet"),
        "corrupt file": (str(folder / "corrupt.parquet"), "corrupt.parquet"),
        "glob matching nothing": (str(folder / "nothing-*.parquet"), "nothing-*.parquet"),
        "missing path": (str(folder / "missing.parquet"), "missing.parquet"),
        "0-byte file in a glob": (str(folder / "with-empty" / "*.parquet"), "b.parquet"),
        "corrupt file in a folder": (str(folder / "with-corrupt"), "b.parquet"),
        "mixed schemas": (str(folder / "mixed" / "*.parquet"), "same columns and types"),
    }


def test_duckdb_names_every_bad_file(tmp_path: Path) -> None:
    for what, (source, named) in _bad_files(tmp_path / "bad").items():
        with pytest.raises(DataError, match=re.escape(named)) as caught:
            load_stats(source)
        assert "\n" not in str(caught.value), what
    with pytest.raises(DataError, match="is empty \\(0 bytes\\)"):
        load_sequences(tmp_path / "bad" / "empty.parquet")  # numpy names it too
    with pytest.raises(DataError, match="could not be read as Parquet"):
        load_sequences(tmp_path / "bad" / "corrupt.parquet")


def _long_sequences(users: int, length: int, states: int) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame({"user": np.repeat(np.arange(users), length), "time": np.tile(np.arange(length), users),
                         "state": rng.integers(0, states, users * length)})


def _row_bound(stats: SequenceStats, entries: int) -> int:
    """The stated bound on the rows a counting query returns (docs/data.md): (K + 1)·K·G moves (or K² + K + G·K),
    one row per distinct length (≤ √(2N)), 2·T_max·K per-step rows only when kept (T_max·K ≤ MAX_SLOT_CELLS),
    and r·G·K per number of windows r."""
    k, g = stats.n_states, 1 if stats.groups is None else len(stats.groups)
    slots = 2 * stats.max_length * k if stats.slot_counts is not None else 0
    windows = sum(r * g * k for r in stats.window_counts)
    return max((k + 1) * k * g, k * k + k + g * k) + int(np.sqrt(2 * entries)) + slots + windows


def _count_rows(monkeypatch: pytest.MonkeyPatch, engine_class: type) -> list[int]:
    returned: list[int] = []
    query = engine_class.query

    def counting(self: Any, sql: str) -> pa.Table:
        table = query(self, sql)
        returned.append(table.num_rows)
        return table

    monkeypatch.setattr(engine_class, "query", counting)
    return returned


def test_long_sequences_return_only_what_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """20 users × 6,000 entries × 50 states: the per-step histograms (6,000 × 50 > MAX_SLOT_CELLS) are not kept, so
    they do not come back; 30 × 400 × 12: they are kept, and equal numpy's."""
    returned = _count_rows(monkeypatch, DuckDBEngine)
    for users, length, states in ((20, 6000, 50), (30, 400, 12)):
        frame = _long_sequences(users, length, states)
        returned.clear()
        got = load_stats(frame, windows=(4,))
        want = load_sequences(frame).stats(windows=(4,))
        _assert_same(got, want)
        assert (got.slot_counts is None) == (length * states > MAX_SLOT_CELLS)
        assert max(returned) <= _row_bound(got, len(frame)), returned


def test_per_step_counts_when_the_state_estimate_was_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    """The counting query histograms the first slot_steps(estimate) steps; when that is too few for steps that are
    kept, they are counted on their own (SLOT_SQL) and equal numpy's."""
    monkeypatch.setattr(engines, "slot_steps", lambda about: 7)
    frame = _long_sequences(10, 40, 5)
    got = load_stats(frame)
    assert got.slot_counts is not None and got.slot_counts.shape == (40, 5)
    _assert_same(got, load_sequences(frame).stats())


@pytest.mark.parametrize("name", ["random", "missing-dropped", "text-dates"])
def test_groups_counted_by_the_sort_equal_numpy(cases: dict[str, dict[str, Any]], name: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """With more (group, state) pairs than the profile returns, the sort counts them: the same counts."""
    monkeypatch.setattr(engines, "PROFILE_GROUP_ROWS", 1)
    case = cases[name]
    _assert_outcome(_outcome(lambda: load_stats(case["sources"]["file"], windows=WINDOWS, **case["options"])),
                    case["want"], f"duckdb, groups by the sort, {name}")


def test_duckdb_reports_spill_and_peak_memory(tmp_path: Path) -> None:
    """A sort larger than the memory limit spills: the stats say how much, and how much memory DuckDB held."""
    rng = np.random.default_rng(3)
    n = 3_000_000
    frame = pa.table({"user": rng.integers(0, 200_000, n), "time": rng.permutation(n),
                      "state": pa.array(rng.integers(0, 4, n)).cast(pa.string())})
    stats = load_stats(frame, memory_limit="64MB", temp_directory=str(tmp_path / "spill"))
    assert stats.spilled_bytes is not None and stats.spilled_bytes > 0
    assert stats.peak_memory_bytes is not None and 0 < stats.peak_memory_bytes <= 64 * 2**20 * 1.1
    assert stats.n_entries == n
    lines: list[str] = []
    load_stats(frame.slice(0, 1000), progress=lambda fraction, message: lines.append(message))
    assert lines[-1].startswith("done: 1,000 entries")
    assert load_sequences(frame.slice(0, 1000).to_pandas()).stats().spilled_bytes is None


@pytest.fixture(scope="module")
def spark_jvm() -> Iterator[tuple[Any, int]]:
    """One local JVM for the module: a classic session, which also serves Spark Connect on a free loopback port."""
    port = free_port()
    with local_session(connect_port=port) as session:
        yield session, port


@pytest.fixture(scope="module", params=["classic", "connect"])
def spark(request: pytest.FixtureRequest, spark_jvm: tuple[Any, int]) -> Iterator[Any]:
    """Each Spark mode in turn: the classic session itself, then a Spark Connect client of the same JVM (this
    process talks to it over gRPC, as a user's notebook talks to a cluster)."""
    session, port = spark_jvm
    if request.param == "classic":
        yield session
    else:
        with connect_client(port) as client:
            yield client


def _spark_source(spark: Any, kind: str, source: Any) -> Any:
    return spark.createDataFrame(source) if kind == "table" else str(source)


def test_spark_equals_numpy(spark: Any, cases: dict[str, dict[str, Any]], tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """One test per Spark mode (the suite's workers start one JVM each at most): its share of the reads
    (SPARK_LOADS) gives numpy's counts, refusals and missing counts; every bad file is named; long sequences return
    only what is kept; spill and peak memory come from the plan's metrics."""
    mode = "connect" if ".connect." in type(spark).__module__ else "classic"
    for name, kind in SPARK_LOADS[mode]:
        case, where = cases[name], f"{mode}, {name}, {kind}"
        got = _outcome(lambda: load_stats(_spark_source(spark, kind, case["sources"][kind]),  # noqa: B023
                                          engine=spark, windows=WINDOWS, **case["options"]))  # noqa: B023
        if name in SPARK_REFUSES:
            assert got == ("refused", "nanoseconds", SPARK_REFUSES[name]), where
            continue
        _assert_outcome(got, case["want"], where)
    frame = spark.createDataFrame(_arrow(cases["integers"]["frame"]))
    frame.createOrReplaceTempView("conformance_events")  # a table of the session, by name
    got = load_stats("conformance_events", engine=spark, group="country", windows=WINDOWS)
    _assert_same(got, cases["integers"]["want"][1])
    assert spark.conf.get("spark.sql.session.timeZone") == "America/New_York"
    assert got.spilled_bytes == 0 and got.peak_memory_bytes is not None and got.peak_memory_bytes > 0

    for what, (source, named) in _bad_files(tmp_path / "bad").items():
        with pytest.raises(DataError, match=re.escape(named)) as caught:
            load_stats(source, engine=spark)
        assert "\n" not in str(caught.value), what

    from puffer_core.data.spark_engine import SparkEngine

    returned = _count_rows(monkeypatch, SparkEngine)
    frame = _long_sequences(20, 6000, 50)
    got = load_stats(spark.createDataFrame(pa.Table.from_pandas(frame, preserve_index=False)), engine=spark)
    _assert_same(got, load_sequences(frame).stats())
    assert got.slot_counts is None and max(returned) <= _row_bound(got, len(frame)), returned


def test_spark_synthesizes_the_same_table(spark: Any, cases: dict[str, dict[str, Any]]) -> None:
    """One seed, one synthetic table: the counts from numpy, DuckDB and Spark are equal, so is everything after.
    Classic Spark reads the day-first CSV, Connect the Parquet file."""
    columns = {"user": "user", "time": "time", "state": "state", "group": "country"}
    name = "random" if ".connect." in type(spark).__module__ else "text-dates"
    options, path = cases[name]["options"], cases[name]["sources"]["file"]
    want = chain_counts(load_sequences(path, **options), columns=columns)
    from_spark = load_chain_counts(str(path), engine=spark, detail=True, **options)
    _same_chain_counts(from_spark, want)
    sources = (want, load_chain_counts(path, **options), from_spark)
    tables = [synthesize(c, None, 8.0, rng=3, if_no_signal="allow", min_group_users=1).table for c in sources]
    for table in tables[1:]:
        pd.testing.assert_frame_equal(table, tables[0])
    assert len(tables[0]) == load_sequences(path, **options).n_entries
