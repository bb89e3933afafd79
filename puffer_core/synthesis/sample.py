"""Synthetic users drawn from the released chain, in chunks, written as CSV or Parquet (docs/math.md §19.4).

A :class:`SyntheticSample` is a recipe: the synthetic chain of every group, the public lengths, the column
names and a seed.  Each group's users have exactly the released lengths, in an order shuffled by the seed;
user u of length T is X_1 ~ initial, X_t ~ transition[X_{t−1}] — a compiled loop (numba) over
uniform numbers drawn by numpy in order, so one seed gives one table, whatever the chunk size.  Chunks end
at user boundaries (at least one whole user), so the table is never in memory at once: :meth:`SyntheticSample.write`
streams it to a file, :meth:`SyntheticSample.to_frame` collects a small one, and both also count what was
drawn (:class:`~puffer_core.synthesis.counts.ChainCounts` of the synthetic table, for fidelity) without a
second pass.

The columns are the input's own: user (``"synthetic-0000001"``…: never a real user's id), time (the
position 1..T in the sequence: the release holds no clock times), state and group (their labels, as integers
again when every label was an integer).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
from numba import njit

from ..validation import check_whole
from ..work import Progress, ProgressCallback
from .counts import RUN_BINS, ChainCounts, ColumnNames, run_and_visit_counts
from .model import SyntheticChain

DEFAULT_CHUNK_ROWS = 1_000_000
MAX_FRAME_ROWS = 5_000_000  # to_frame collects at most this many rows; write() streams any number
USER_PREFIX = "synthetic-"
FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".csv.gz": "csv.gz"}
_INTEGER = re.compile(r"^-?[0-9]+$")


@njit(cache=True, nogil=True)
def _draw(initial_cdf: np.ndarray, transition_cdf: np.ndarray, starts: np.ndarray, uniform: np.ndarray,
          out: np.ndarray) -> None:  # pragma: no cover - compiled
    """One chunk: row r starts a user when ``starts[r]`` (drawn from ``initial_cdf``), else follows the row before.

    A draw is the first state j with cdf[j] > u (the inverse of the cumulative distribution).
    """
    k = initial_cdf.size
    previous = 0
    for r in range(uniform.size):
        u = uniform[r]
        lo = 0
        hi = k - 1
        if starts[r]:
            while lo < hi:
                mid = (lo + hi) // 2
                if initial_cdf[mid] > u:
                    hi = mid
                else:
                    lo = mid + 1
        else:
            while lo < hi:
                mid = (lo + hi) // 2
                if transition_cdf[previous, mid] > u:
                    hi = mid
                else:
                    lo = mid + 1
        out[r] = lo
        previous = lo


def cumulative_rows(rows: np.ndarray) -> np.ndarray:
    """Cumulative sums along the last axis, exactly 1 from each row's last positive entry on (zeros never drawn)."""
    cdf = np.cumsum(rows, axis=-1)
    positive = rows > 0
    last = rows.shape[-1] - 1 - np.argmax(positive[..., ::-1], axis=-1)
    after = np.arange(rows.shape[-1]) >= last[..., None]
    return np.where(after, 1.0, cdf)


def typed_labels(labels: tuple[str, ...]) -> pa.Array:
    """Labels as the values a table holds: whole numbers again when every label is one, else text."""
    if all(_INTEGER.match(x) and str(int(x)) == x for x in labels):
        return pa.array([int(x) for x in labels], pa.int64())
    return pa.array(list(labels), pa.string())


@dataclass(frozen=True)
class Block:
    """One chunk of drawn users: their group, first synthetic id, lengths and states (entries in user order)."""

    group: int
    first_user: int
    lengths: np.ndarray
    codes: np.ndarray


@dataclass(frozen=True, eq=False)
class SyntheticSample:
    """The synthetic table as a recipe that draws it chunk by chunk (module docstring)."""

    chain: SyntheticChain
    length_values: np.ndarray
    length_users: np.ndarray
    columns: Mapping[str, str | None]
    seed: int
    chunk_rows: int = DEFAULT_CHUNK_ROWS

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", ColumnNames.of(self.columns))
        check_whole("chunk_rows", self.chunk_rows)
        for name in ("length_values", "length_users"):
            array = np.array(getattr(self, name), dtype=np.int64)
            array.setflags(write=False)
            object.__setattr__(self, name, array)

    @property
    def n_rows(self) -> int:
        return int((self.length_users @ self.length_values).sum())

    @property
    def n_users(self) -> int:
        return int(self.length_users.sum())

    def blocks(self) -> Iterator[Block]:
        """The drawn users, group by group, in chunks of about ``chunk_rows`` rows ending at user boundaries."""
        chain = self.chain
        initial_cdf = cumulative_rows(chain.initial)
        transition_cdf = cumulative_rows(chain.transition)
        streams = np.random.default_rng(np.random.SeedSequence(self.seed)).spawn(chain.n_groups)
        first_user = 1
        for g, rng in enumerate(streams):
            lengths = rng.permutation(np.repeat(self.length_values, self.length_users[g]))
            ends = np.cumsum(lengths)
            start = 0
            while start < lengths.size:
                rows_before = ends[start - 1] if start else 0
                stop = max(start + 1, int(np.searchsorted(ends, rows_before + self.chunk_rows, side="right")))
                part = lengths[start:stop]
                n = int(part.sum())
                starts = np.zeros(n, dtype=np.bool_)
                starts[np.concatenate([[0], np.cumsum(part)[:-1]])] = True
                codes = np.empty(n, dtype=np.int32)
                _draw(initial_cdf[g], transition_cdf[g], starts, rng.random(n), codes)
                yield Block(g, first_user + start, part, codes)
                start = stop
            first_user += lengths.size

    def table(self, block: Block) -> pa.Table:
        """One block as an Arrow table in the input's columns (module docstring)."""
        n_users = block.lengths.size
        width = max(7, len(str(self.n_users)))
        names = [f"{USER_PREFIX}{block.first_user + i:0{width}d}" for i in range(n_users)]
        local = np.repeat(np.arange(n_users, dtype=np.int32), block.lengths)
        starts = np.repeat(np.cumsum(block.lengths) - block.lengths, block.lengths)
        columns = {
            self.columns["user"]: pa.DictionaryArray.from_arrays(pa.array(local), pa.array(names, pa.string())),
            self.columns["time"]: pa.array(np.arange(local.size, dtype=np.int64) - starts + 1),
            self.columns["state"]: pa.DictionaryArray.from_arrays(pa.array(block.codes),
                                                                  typed_labels(self.chain.states)),
        }
        if self.chain.groups is not None:
            columns[self.columns["group"]] = pa.DictionaryArray.from_arrays(
                pa.array(np.full(local.size, block.group, dtype=np.int32)), typed_labels(self.chain.groups)
            )
        return pa.table(columns)

    def _each(self, visit: Callable[[pa.Table], None], progress: ProgressCallback | None) -> ChainCounts:
        counter = _Counter(self)
        report = Progress(progress, self.n_rows)
        report.report("drawing the synthetic users", force=True)
        for block in self.blocks():
            counter.add(block)
            visit(self.table(block))
            report.advance(f"drew {counter.rows:,} of {self.n_rows:,} rows", block.codes.size)
        report.finish()
        return counter.counts()

    def summary(self) -> ChainCounts:
        """The counts of the synthetic table (drawn again from the seed, nothing written)."""
        counter = _Counter(self)
        for block in self.blocks():
            counter.add(block)
        return counter.counts()

    def to_frame(self, progress: ProgressCallback | None = None) -> tuple[pd.DataFrame, ChainCounts]:
        """The whole synthetic table as a pandas DataFrame (at most :data:`MAX_FRAME_ROWS` rows), and its counts.

        ``progress(stage, fraction)`` as :class:`puffer_core.work.Progress` says (it may raise to stop).
        """
        if self.n_rows > MAX_FRAME_ROWS:
            raise ValueError(
                f"the synthetic table has {self.n_rows:,} rows, more than the {MAX_FRAME_ROWS:,} collected in memory;"
                " write it to a file instead (out='synthetic.parquet'), which streams it in chunks"
            )
        tables: list[pa.Table] = []
        counts = self._each(tables.append, progress)
        frame = pa.concat_tables(tables, promote_options="permissive").to_pandas() if tables else pd.DataFrame()
        return frame, counts

    def write(self, path: str | Path, progress: ProgressCallback | None = None) -> ChainCounts:
        """Stream the synthetic table to ``path`` (.parquet, .pq, .csv, .csv.gz) chunk by chunk; returns its counts.

        ``progress`` as in :meth:`to_frame`; a stopped write leaves a partial file behind, which is removed.
        """
        target = Path(path)
        kind = next((v for k, v in FORMATS.items() if target.name.lower().endswith(k)), None)
        if kind is None:
            raise ValueError(f"write the synthetic table as .parquet, .pq, .csv or .csv.gz; got '{target.name}'")
        if not target.parent.is_dir():
            raise ValueError(f"cannot write '{target}': the folder '{target.parent}' does not exist")
        try:
            if kind == "parquet":
                return self._stream(pa.OSFile(str(target), "wb"), kind, progress)
            sink = pa.CompressedOutputStream(str(target), "gzip") if kind == "csv.gz" else pa.OSFile(str(target), "wb")
            return self._stream(sink, kind, progress)
        except OSError as exc:
            target.unlink(missing_ok=True)
            raise ValueError(f"cannot write '{target}': {exc.strerror or exc}") from None
        except BaseException:
            target.unlink(missing_ok=True)
            raise


    def to_bytes(self, kind: str = "parquet", progress: ProgressCallback | None = None) -> tuple[bytes, ChainCounts]:
        """The synthetic table as the bytes of a ``"parquet"``, ``"csv"`` or ``"csv.gz"`` file (a download), and its
        counts; at most :data:`MAX_FRAME_ROWS` rows, like :meth:`to_frame`."""
        if kind not in ("parquet", "csv", "csv.gz"):
            raise ValueError(f"kind must be parquet, csv or csv.gz; got {kind!r}")
        if self.n_rows > MAX_FRAME_ROWS:
            raise ValueError(
                f"the synthetic table has {self.n_rows:,} rows, more than the {MAX_FRAME_ROWS:,} held in memory;"
                " write it to a file instead (out='synthetic.parquet'), which streams it in chunks"
            )
        buffer = pa.BufferOutputStream()
        sink = pa.CompressedOutputStream(buffer, "gzip") if kind == "csv.gz" else buffer
        counts = self._stream(sink, kind, progress, close=kind == "csv.gz")
        return buffer.getvalue().to_pybytes(), counts

    def _stream(self, sink: pa.NativeFile, kind: str, progress: ProgressCallback | None,
                close: bool = True) -> ChainCounts:
        """Write every block to ``sink`` as Parquet or CSV (dictionary columns as plain values in CSV)."""
        schema = self.table(Block(0, 1, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32))).schema
        try:
            if kind == "parquet":
                with pq.ParquetWriter(sink, schema) as writer:
                    return self._each(writer.write_table, progress)
            plain = pa.schema([pa.field(f.name, f.type.value_type if pa.types.is_dictionary(f.type) else f.type)
                               for f in schema])
            with pa_csv.CSVWriter(sink, plain) as writer:
                return self._each(lambda table: writer.write_table(table.cast(plain)), progress)
        finally:
            if close:
                sink.close()


class _Counter:
    """The ChainCounts of what was drawn, block by block (the same counts :func:`chain_counts` takes of data)."""

    def __init__(self, sample: SyntheticSample) -> None:
        chain = sample.chain
        self.sample = sample
        self.k = len(chain.states)
        self.g = chain.n_groups
        self.transitions = np.zeros((self.g, self.k, self.k), dtype=np.int64)
        self.first = np.zeros((self.g, self.k), dtype=np.int64)
        self.runs = np.zeros((self.g, self.k, RUN_BINS), dtype=np.int64)
        self.visits = np.zeros((self.g, self.k), dtype=np.int64)
        self.rows = 0

    def add(self, block: Block) -> None:
        k = self.k
        codes = block.codes.astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(block.lengths)])
        follows = np.ones(codes.size, dtype=bool)
        follows[offsets[:-1]] = False
        pairs = codes[np.flatnonzero(follows) - 1] * k + codes[follows]
        self.transitions[block.group] += np.bincount(pairs, minlength=k * k).reshape(k, k)
        self.first[block.group] += np.bincount(codes[offsets[:-1]], minlength=k)
        runs, visits = run_and_visit_counts(codes, offsets, np.zeros(block.lengths.size, dtype=np.int64), k, 1)
        self.runs[block.group] += runs[0]
        self.visits[block.group] += visits[0]
        self.rows += codes.size

    def counts(self) -> ChainCounts:
        sample = self.sample
        return ChainCounts(
            sample.chain.states, sample.chain.groups, self.transitions, self.first, sample.length_values,
            sample.length_users, sample.columns, self.runs, self.visits,
        )
