"""Conformance: every count of SequenceStats is exactly the same from numpy, DuckDB and Spark (local).

The reference is :meth:`Sequences.stats`, built from the rows with numpy by the reading path the
library has always had (``load_sequences``), which shares no code with the SQL text.  Each case is
written to Parquet (or CSV) and read by each engine; the labels, every count, the time range and
the summary must be equal, and the refusals (a (user, time) tie, missing cells, an ambiguous date
column) must be the same.  Spark runs once per test session, in one test, on every case: without
Java or pyspark the Spark test is skipped locally and fails in CI (CI=true).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from puffer_core.data.duckdb_engine import DuckDBEngine
from puffer_core.data.engines import load_stats
from puffer_core.data.readers import load_sequences
from puffer_core.data.stats import SequenceStats
from puffer_core.errors import DataError
from puffer_core.priors.fitting import fit_markov_chain
from puffer_core.priors.robust import fit_prior_set
from puffer_core.simulation.run import simulate
from puffer_core.synthesis.counts import ChainCounts, chain_counts
from puffer_core.synthesis.sources import load_chain_counts
from puffer_core.synthesis.synthesize import synthesize
from tests.support.servers import unavailable

WINDOWS = (1, 3, 7)


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


def _write(frame: pd.DataFrame, folder: Path, name: str, kind: str) -> Path:
    if kind == "parquet":
        path = folder / f"{name}.parquet"
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    else:
        path = folder / f"{name}.csv"
        frame.to_csv(path, index=False)
    return path


# name, frame builder, file kind, load options
CASES: list[tuple[str, Callable[[], pd.DataFrame], str, dict[str, Any]]] = [
    ("random", lambda: _random(1), "parquet", {"group": "country"}),
    ("random-csv", lambda: _random(2), "csv", {"group": "country"}),
    ("integers", _integers, "parquet", {"group": "country"}),
    ("integers-csv", _integers, "csv", {}),
    ("nanoseconds", _nanoseconds, "parquet", {"group": "country"}),
    ("text-dates", _text_dates, "csv", {"group": "country"}),
    ("mixed-dates", _mixed_dates, "csv", {}),
    ("missing-dropped", _with_missing, "parquet", {"group": "country", "drop_missing": True}),
]


def _reference(path: Path, options: dict[str, Any]) -> SequenceStats:
    return load_sequences(path, **options).stats(windows=WINDOWS)


def _assert_same(got: SequenceStats, want: SequenceStats) -> None:
    assert got.states == want.states and got.groups == want.groups
    assert got.same_counts(want), (got, want)
    assert got.summary() == want.summary()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("engines")
    return {name: _write(build(), folder, name, kind) for name, build, kind, _ in CASES}


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_duckdb_counts_equal_numpy(files: dict[str, Path], name: str) -> None:
    options = next(c[3] for c in CASES if c[0] == name)
    _assert_same(load_stats(files[name], windows=WINDOWS, **options), _reference(files[name], options))


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


def test_fit_and_simulate_from_stats_equal_from_sequences(files: dict[str, Path]) -> None:
    seqs = load_sequences(files["random"], group="country")
    stats = load_stats(files["random"], group="country", windows=(3,))
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
def test_duckdb_chain_counts_per_group_equal_numpy(files: dict[str, Path], name: str) -> None:
    """The synthesizer's counts per group (docs/math.md §19.1): DuckDB's SQL against numpy's rows."""
    options = next(c[3] for c in CASES if c[0] == name)
    columns = {"user": "user", "time": "time", "state": "state", "group": "country"}
    want = chain_counts(load_sequences(files[name], **options), columns=columns)
    _same_chain_counts(load_chain_counts(files[name], detail=True, **options), want)
    pooled = load_chain_counts(files[name], **{**options, "group": None})
    assert np.array_equal(pooled.transitions[0], want.transitions.sum(axis=0)) and pooled.runs is None
    with pytest.raises(DataError, match="more than one group of 'country'"):
        load_chain_counts(files["integers"], group="country")  # its users change country from row to row


REFUSALS = [
    ("tie", b"user,time,state\nann,1,a\nann,1,b\nbob,1,a\nbob,2,b\n", {}, "repeat a \\(user, time\\) pair"),
    ("missing", b"user,time,state\nann,1,a\nann,2,\nbob,1,a\nbob,2,b\n", {}, "missing values"),
    ("ambiguous", b"user,time,state\nu,01/05/2024,a\nu,02/05/2024,b\n", {}, "ambiguous"),
    ("two orders", b"user,time,state\nu,13/05/2024,a\nu,05/13/2024,b\n", {}, "two orders"),
    ("one state", b"user,time,state\nu,1,a\nu,2,a\n", {}, "at least 2 states"),
    ("bad time", b"user,time,state\nu,2024-05-01,a\nu,yesterday,b\n", {}, "cannot be read as times"),
]


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


@pytest.mark.parametrize("name", [r[0] for r in REFUSALS])
def test_refusals_are_the_same(tmp_path: Path, name: str) -> None:
    _, content, options, message = next(r for r in REFUSALS if r[0] == name)
    path = tmp_path / "data.csv"
    path.write_bytes(content)
    with pytest.raises(DataError, match=message):
        load_sequences(path, **options)
    with pytest.raises(DataError, match=message):
        load_stats(path, **options)
    with pytest.raises(DataError, match=message):
        load_stats(content, **options)  # an upload: parsed in memory with pyarrow


def test_time_format_chooses_the_order(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_bytes(b"user,time,state\nu,01/05/2024,a\nu,02/05/2024 10:30,b\nu,03/05/2024,a\n")
    for fmt in ("%d/%m/%Y", "%m/%d/%Y"):
        _assert_same(load_stats(path, time_format=fmt), load_sequences(path, time_format=fmt).stats())
    got = load_stats(path, time_format="%m/%d/%Y")
    assert got.time_first.startswith("2024-01-05") and got.time_last.startswith("2024-03-05")


def test_uploads_and_tables_are_read_in_memory(files: dict[str, Path]) -> None:
    path = files["random-csv"]
    want = _reference(path, {"group": "country"})
    _assert_same(load_stats(path.read_bytes(), group="country", windows=WINDOWS), want)
    frame = pd.read_parquet(files["random"])
    _assert_same(load_stats(frame, group="country", windows=WINDOWS), _reference(files["random"], {"group": "country"}))


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


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """One local Spark session for the module (the JVM starts once)."""
    if shutil.which("java") is None:
        unavailable("Spark conformance test", "Java is not installed (apt-get install openjdk-17-jre-headless)")
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        unavailable("Spark conformance test", "pyspark is not installed (pip install -r requirements-dev.txt)")
    session = (
        SparkSession.builder.master("local[1]")
        .appName("puffer-conformance")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        .config("spark.driver.memory", "512m")
        .config("spark.sql.adaptive.enabled", "false")  # tiny inputs: planning once is faster
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.sql.session.timeZone", "America/New_York")  # queries must not depend on it
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")
    try:
        yield session
    finally:
        session.stop()


def test_spark_counts_equal_numpy(spark: Any, files: dict[str, Path]) -> None:
    """Every case on Spark (local): the same counts as numpy, the same refusals; ns Parquet is refused by name."""
    for name, _, _, options in CASES:
        if name == "nanoseconds":
            with pytest.raises(DataError, match="nanosecond timestamps"):
                load_stats(str(files[name]), engine=spark, **options)
            continue
        _assert_same(load_stats(str(files[name]), engine=spark, windows=WINDOWS, **options),
                     _reference(files[name], options))
    frame = spark.createDataFrame(pd.read_parquet(files["integers"]))
    want = _reference(files["integers"], {"group": "country"})
    _assert_same(load_stats(frame, engine=spark, group="country", windows=WINDOWS), want)
    frame.createOrReplaceTempView("conformance_events")  # a table of the session, by name
    _assert_same(load_stats("conformance_events", engine=spark, group="country", windows=WINDOWS), want)
    assert spark.conf.get("spark.sql.session.timeZone") == "America/New_York"


def test_spark_synthesizes_the_same_table(spark: Any, files: dict[str, Path]) -> None:
    """One seed, one synthetic table: the counts from numpy, DuckDB and Spark are equal, so is everything after."""
    columns = {"user": "user", "time": "time", "state": "state", "group": "country"}
    tables = []
    for name in ("random", "text-dates"):
        options = next(c[3] for c in CASES if c[0] == name)
        want = chain_counts(load_sequences(files[name], **options), columns=columns)
        from_spark = load_chain_counts(str(files[name]), engine=spark, detail=True, **options)
        _same_chain_counts(from_spark, want)
        sources = (want, load_chain_counts(files[name], **options), from_spark)
        tables = [synthesize(c, None, 8.0, rng=3, if_no_signal="allow", min_group_users=1).table for c in sources]
        for table in tables[1:]:
            pd.testing.assert_frame_equal(table, tables[0])
    assert len(tables[0]) == load_sequences(files["text-dates"], group="country").n_entries
